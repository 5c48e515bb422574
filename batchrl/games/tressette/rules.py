"""Tressette rules: pure functions over a frozen state, four players in two teams.

As the seed project plays it (``../shared/seeds/tressette-ai-slides.txt``):
seats 0 and 2 against 1 and 3, 40 cards, 10 each, no trumps. The leader may
play any card; the others must follow the led suit when they can, and the
strongest card of the led suit wins the trick (3 > 2 > A > R > C > F > 7 > 6 >
5 > 4); the winner leads the next. Points are counted in thirds: an ace is 3,
a 2, 3, Re (10), Cavallo (9) or Fante (8) is 1, the rest 0; a team scores
floor(thirds / 3), plus 1 for the last trick, so every hand totals 11 (32
thirds make 10 points however they split). No declarations (accusi): the
seed has none.

Cards are ints ``suit * 10 + rank``: the rank index is the strength (0 = the
4, 9 = the 3) and suits are D C S B (denari, coppe, spade, bastoni) = 0..3.
Names print rank then suit letter, as the seed's viewer does: ``"AD"``,
``"10S"``, ``"3B"``.

The seed's signals: when a seat leads, the cards of the led suit left in its
hand decide one word, public to all, kept per seat until that seat leads
again: ``"busso"`` if a 2 or a 3 is among them, ``"volo"`` if none is left,
else ``"striscio"``.

An illegal card raises ``IllegalCard`` (a ``ValueError``); nothing is repaired.

>>> s = deal_hands([range(0, 10), range(10, 20), range(20, 30), range(30, 40)], leader=0)
>>> [card_name(c) for c in s.hands[1][:3]], [card_name(c) for c in legal_cards(s)[-3:]]
(['4C', '5C', '6C'], ['AD', '2D', '3D'])
>>> s = step(s, parse_card("AD"))     # the ace of denari; 2D and 3D stay in hand
>>> s.signals[0]
(0, 'busso')
>>> step(s, parse_card("9D"))
Traceback (most recent call last):
...
batchrl.games.tressette.rules.IllegalCard: seat 1 cannot play 9D: not in its hand
>>> for name in ("4C", "4S", "4B"):
...     s = step(s, parse_card(name))
>>> s.last_winner, s.current, s.tricks_played, thirds(s.captured[0])
(0, 0, 1, 3)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from batchrl.records import shown

RANKS = ("4", "5", "6", "7", "8", "9", "10", "A", "2", "3")  # weakest to strongest
SUITS = "DCSB"
SUIT_NAMES = ("denari", "coppe", "spade", "bastoni")
FANTE, CAVALLO, RE, ACE, TWO, THREE = 4, 5, 6, 7, 8, 9  # rank indices
RANK_THIRDS = (0, 0, 0, 0, 1, 1, 1, 3, 1, 1)
CARD_THIRDS = tuple(RANK_THIRDS[c % 10] for c in range(40))
HAND_POINTS = 11
SEATS, TRICKS, CARDS = 4, 10, 40
BUSSO, VOLO, STRISCIO = "busso", "volo", "striscio"
# Other spellings ``parse_card`` takes for a rank: the figures' initials.
_RANK_ALIASES = {"F": FANTE, "C": CAVALLO, "R": RE}

Signal = tuple[int, str]  # (suit, kind)
Play = tuple[int, int]  # (seat, card)


class IllegalCard(ValueError):
    """A card the rules do not let the seat to act play in this state."""


def card_id(rank: int, suit: int) -> int:
    return suit * 10 + rank


def suit_of(card: int) -> int:
    return card // 10


def rank_of(card: int) -> int:
    """The rank index, which is the strength: 0 is the 4, 9 is the 3."""
    return card % 10


def team_of(seat: int) -> int:
    return seat % 2


def card_name(card: int) -> str:
    """Rank then suit letter.

    >>> card_name(7), card_name(26), card_name(39), card_name(14)
    ('AD', '10S', '3B', '8C')
    """
    if not 0 <= card < CARDS:
        raise ValueError(f"card {card}: want 0..{CARDS - 1}")
    return RANKS[card % 10] + SUITS[card // 10]


def parse_card(text: str) -> int:
    """The card named ``text``: rank (``4``..``10``, ``A``, ``2``, ``3``, or ``F``/``C``/``R``
    for 8/9/10) then suit letter; case and surrounding spaces do not matter.

    >>> parse_card("AD"), parse_card("10S"), parse_card(" 3b "), parse_card("RS")
    (7, 26, 39, 26)
    """
    t = text.strip().upper()
    suit = SUITS.find(t[-1:]) if t else -1
    rank_text = t[:-1]
    rank = RANKS.index(rank_text) if rank_text in RANKS else _RANK_ALIASES.get(rank_text, -1)
    if suit < 0 or rank < 0:
        raise ValueError(f"not a card: {shown(text)} (want rank 4..10, A, 2, 3 then suit D C "
                         f"S B)")
    return card_id(rank, suit)


def thirds(cards: Iterable[int]) -> int:
    """The thirds of a point in ``cards``."""
    return sum(CARD_THIRDS[c] for c in cards)


def hand_text(cards: Iterable[int]) -> str:
    return " ".join(card_name(c) for c in cards) or "nothing"


@dataclass(frozen=True, slots=True)
class State:
    """One moment of a hand.

    ``hands``: four sorted tuples. ``plays``: every (seat, card) so far, in order;
    the current trick is the tail after the last complete one. ``leader``: the seat
    that leads (or led) the current trick. ``captured``: the cards each team took,
    in the order taken. ``signals[s]``: seat s's latest signal, (suit, kind), or
    None before it has led."""

    hands: tuple[tuple[int, ...], ...]
    leader: int
    current: int
    plays: tuple[Play, ...] = ()
    captured: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    last_winner: int | None = None
    signals: tuple[Signal | None, ...] = (None, None, None, None)

    @property
    def tricks_played(self) -> int:
        return len(self.plays) // 4

    @property
    def trick(self) -> tuple[Play, ...]:
        """The plays of the trick under way (empty before its lead)."""
        return self.plays[len(self.plays) - len(self.plays) % 4:]

    @property
    def lead_suit(self) -> int:
        """The suit of the current trick, -1 before its lead."""
        n = len(self.plays) % 4
        return suit_of(self.plays[-n][1]) if n else -1


_EVERY_CARD = frozenset(range(CARDS))


def deal_hands(hands: Sequence[Iterable[int]], leader: int) -> State:
    """The state before the first card, ``hands[s]`` held by seat s."""
    held = tuple(tuple(sorted(map(int, h))) for h in hands)
    if len(held) != SEATS or any(len(h) != TRICKS for h in held):
        raise ValueError(f"a deal needs 4 hands of 10 cards, not {[len(h) for h in held]}")
    if set().union(*held) != _EVERY_CARD:  # 40 cards, so each once
        raise ValueError("a deal needs each of the 40 cards (ids 0..39) exactly once")
    if not 0 <= leader < SEATS:
        raise ValueError(f"leader {leader}: want a seat 0..3")
    return State(hands=held, leader=leader, current=leader)


def deal(rng: np.random.Generator, leader: int = 0) -> State:
    """A shuffled deal, ten cards each; ``rng`` is the only randomness."""
    order = rng.permutation(CARDS).tolist()
    return deal_hands([order[s * TRICKS:(s + 1) * TRICKS] for s in range(SEATS)], leader)


def is_terminal(state: State) -> bool:
    return len(state.plays) == CARDS


def legal_cards(state: State) -> tuple[int, ...]:
    """The cards the seat to act may play, in id order (empty once the hand is over)."""
    hand = state.hands[state.current]
    lead = state.lead_suit
    if lead >= 0:
        same = tuple(c for c in hand if c // 10 == lead)
        if same:
            return same
    return hand


def trick_winner(trick: Sequence[Play]) -> int:
    """The seat whose card wins a trick: the strongest of the led suit."""
    if not trick:
        raise ValueError("an empty trick has no winner")
    best_seat, best = trick[0]
    for seat, c in trick[1:]:
        if c // 10 == best // 10 and c > best:
            best_seat, best = seat, c
    return best_seat


def signal_of(hand_after: Iterable[int], led: int) -> str:
    """The seed's signal of a lead: from the leader's cards left in the led suit."""
    suit = led // 10
    rest = [c % 10 for c in hand_after if c // 10 == suit]
    if TWO in rest or THREE in rest:
        return BUSSO
    return STRISCIO if rest else VOLO


def step(state: State, card: int) -> State:
    """The state after the seat to act plays ``card``."""
    played = state.plays
    n = len(played)
    if n == CARDS:
        raise IllegalCard("the hand is over: all 40 cards are played")
    p = state.current
    hand = state.hands[p]
    if not 0 <= card < CARDS:
        raise IllegalCard(f"seat {p} cannot play card {card}: ids are 0..{CARDS - 1}")
    try:
        at = hand.index(card)
    except ValueError:
        raise IllegalCard(f"seat {p} cannot play {card_name(card)}: not in its hand") from None
    on_table = n % 4
    lead = played[n - on_table][1] // 10 if on_table else -1
    if lead >= 0 and card // 10 != lead and any(c // 10 == lead for c in hand):
        raise IllegalCard(
            f"seat {p} cannot play {card_name(card)}: it must follow {SUIT_NAMES[lead]} "
            f"(holds {hand_text(c for c in hand if c // 10 == lead)})")
    rest = hand[:at] + hand[at + 1:]
    hands = (*state.hands[:p], rest, *state.hands[p + 1:])
    plays = (*played, (p, card))
    signals = state.signals
    if lead < 0:
        signals = (*signals[:p], (card // 10, signal_of(rest, card)), *signals[p + 1:])
    leader, current, captured, last_winner = state.leader, (p + 1) % SEATS, state.captured, \
        state.last_winner
    if on_table == 3:  # the trick's last card
        trick = plays[-4:]
        winner = trick_winner(trick)
        taken = (trick[0][1], trick[1][1], trick[2][1], trick[3][1])
        captured = ((*captured[0], *taken), captured[1]) if winner % 2 == 0 else \
            (captured[0], (*captured[1], *taken))
        leader = current = last_winner = winner
    return State(hands=hands, leader=leader, current=current, plays=plays, captured=captured,
                 last_winner=last_winner, signals=signals)


def team_points(state: State) -> tuple[int, int]:
    """Each team's points so far: whole points of its thirds, plus 1 for the last trick
    once the hand is over."""
    t0, t1 = thirds(state.captured[0]) // 3, thirds(state.captured[1]) // 3
    if is_terminal(state) and state.last_winner is not None:
        if state.last_winner % 2 == 0:
            t0 += 1
        else:
            t1 += 1
    return t0, t1


def hand_winner(state: State) -> int:
    """The team with more points in a finished hand (11 is odd: never a tie)."""
    if not is_terminal(state):
        raise ValueError(f"the hand is not over: {len(state.plays)} of 40 cards played")
    t0, t1 = team_points(state)
    return 0 if t0 > t1 else 1


def returns(state: State) -> tuple[float, float, float, float]:
    """Each seat's return: its team's points minus the other team's (zero-sum)."""
    t0, t1 = team_points(state)
    d = float(t0 - t1)
    return d, -d, d, -d


@dataclass(frozen=True, slots=True)
class Match:
    """A game of several hands to ``target`` points (21, or 31 in some circles); the
    leader rotates one seat per hand from ``first_leader``. It ends after the first
    hand that leaves a team at ``target`` or more with scores unequal; the higher
    score wins (equal scores past the target play another hand).

    >>> m = Match(target=21).add((6, 5)).add((7, 4))
    >>> m.scores, m.hands, m.next_leader, m.over
    ((13, 9), 2, 2, False)
    >>> m = m.add((9, 2)); m.over, m.winner
    (True, 0)
    """

    target: int = 21
    scores: tuple[int, int] = (0, 0)
    hands: int = 0
    first_leader: int = 0

    @property
    def next_leader(self) -> int:
        return (self.first_leader + self.hands) % SEATS

    @property
    def over(self) -> bool:
        return max(self.scores) >= self.target and self.scores[0] != self.scores[1]

    @property
    def winner(self) -> int | None:
        if not self.over:
            return None
        return 0 if self.scores[0] > self.scores[1] else 1

    def add(self, points: tuple[int, int]) -> Match:
        if self.over:
            raise ValueError(f"the match is over: {self.scores}")
        return Match(target=self.target, hands=self.hands + 1, first_leader=self.first_leader,
                     scores=(self.scores[0] + points[0], self.scores[1] + points[1]))
