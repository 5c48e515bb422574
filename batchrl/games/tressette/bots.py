"""Tressette bots: ``act(state) -> card`` for the seat to act, and a ``name``.

A bot reads its own hand, the plays so far and the signals; never another seat's
hand.

* ``RandomBot``: a uniformly random legal card.
* ``SeedHeuristicBot``: the seed project's ``choose_action``, rule for rule, its
  quirks kept (see the class).
* ``RuleBot``: our own, playing as a club player would from the cards played and
  the signals (see the class).

>>> import numpy as np
>>> from batchrl.games.tressette.rules import deal, is_terminal, step, team_points
>>> s = deal(np.random.default_rng(1), leader=0)
>>> bots = (RuleBot(), SeedHeuristicBot(), RuleBot(), RandomBot(np.random.default_rng(2)))
>>> while not is_terminal(s):
...     s = step(s, bots[s.current].act(s))
>>> sum(team_points(s))
11
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from batchrl.games.tressette.rules import (
    ACE,
    BUSSO,
    CARD_THIRDS,
    STRISCIO,
    THREE,
    TWO,
    VOLO,
    State,
    legal_cards,
    rank_of,
    suit_of,
)


class Bot(Protocol):
    """A player: the card the seat to act plays."""

    name: str

    def act(self, state: State) -> int: ...


class RandomBot:
    """A uniformly random legal card."""

    name = "random"

    def __init__(self, rng: np.random.Generator | None = None) -> None:
        self.rng = rng if rng is not None else np.random.default_rng()

    def act(self, state: State) -> int:
        legal = legal_cards(state)
        return legal[int(self.rng.integers(len(legal)))]


def seed_signal_order(state: State) -> list[int]:
    """The seats with a signal, in the order the seed's ``state.signals`` dict yields them:
    a dict keeps the order of first insertion, so a seat comes where it first led,
    however often it led since.

    >>> from batchrl.games.tressette.rules import deal_hands, step
    >>> s = deal_hands([range(0, 10), range(10, 20), range(20, 30), range(30, 40)], leader=2)
    >>> for c in (20, 30, 0, 10):       # seat 2 leads 4S; seat 2 wins and leads again
    ...     s = step(s, c)
    >>> seed_signal_order(step(s, 21))
    [2]
    """
    order: list[int] = []
    for i in range(0, len(state.plays), 4):
        seat = state.plays[i][0]
        if seat not in order:
            order.append(seat)
    return order


class SeedHeuristicBot:
    """The seed's ``HeuristicAgent.choose_action``, reproduced with its quirks.

    The seed's rules, in order, over ``legal`` (the legal cards in id order, as
    its ``legal_actions`` sorts them and as its mask's ``nonzero`` lists them):

    1. *Follow the signals.* For each seat with a signal, in the order the seed's
       dict yields them (the order in which seats *first* led this hand: see
       ``seed_signal_order``), if that seat's latest signal is busso or striscio,
       play the first legal card of the signalled suit, if any. Quirks: it
       follows ANY seat's signal, the opponents' and its own included, not only
       the partner's; a signal from long ago counts as long as it is the seat's
       latest; the first legal card of a suit is its weakest (a 3 if that is
       all it holds there).
    2. *The strongest suit.* Among the suits of the legal cards, the one with
       the highest sum of ``RANK_TO_STRENGTH`` over its legal cards; ties go to
       the lowest suit id (Python's ``max`` over a ``set`` of small ints meets
       them in increasing order and keeps the first maximum). In that suit it
       plays the first (weakest) legal card that is not an ace; an ace only if
       the ranks of its WHOLE hand, any suit, include a 2 and a 3 (the seed's
       ``hand_ranks_strong``: not the 2 and 3 of the ace's suit). Since an ace
       comes before the 2 and 3 of its suit in id order, the ace is played
       whenever it is the suit's weakest legal card and that hand test passes;
       otherwise the suit's next card. Rule 2 finds nothing only when the
       strongest suit's legal cards are a lone ace and the test fails.
    3. *A 2 with exactly two legal cards of its suit*: the first such 2. Never
       reached, though the seed does not say so: rule 3 runs only when the
       strongest suit holds a lone ace (strength 7) and the hand lacks a 2 or a
       3, but a suit with a legal 2 and another card sums to at least 8 (2 + 4)
       and would have been the strongest. (With 1..10: 8 against 10.)
    4. *The first legal card* ("cambiare gioco" in the seed's comment, but
       simply ``legal[0]``), reached when rule 2 skips a lone ace: the lowest
       suit's weakest card, which may be that very ace.
    5. (*The highest card for the last trick*: unreachable, rule 4 always
       returns.)

    ``decide(state)`` gives the rule that chose as well as the card.

    ``RANK_TO_STRENGTH`` is not in the slides. We take the rank index 0..9
    (4 = 0 ... 3 = 9, the seed's ``enumerate`` over its rank list is the likely
    source); ``strength_base=1`` gives 1..10. The choice matters only in rule
    2's comparison of suits with different numbers of legal cards (a sum over
    n cards moves by n): e.g. a lone ace of denari (7 or 8) against 8 and 7 of
    coppe (4 + 3 = 7, or 9): a tie won by denari with 0..9, coppe with 1..10.
    """

    name = "seed-heuristic"

    def __init__(self, strength_base: int = 0) -> None:
        self.strength_base = strength_base

    def act(self, state: State) -> int:
        return self.decide(state)[1]

    def decide(self, state: State) -> tuple[int, int]:
        """(the seed's rule that chose, the card): rule 1 to 4, as numbered above."""
        legal = legal_cards(state)
        # 1. the signals (anyone's, in first-signal order)
        for seat in seed_signal_order(state):
            signal = state.signals[seat]
            if signal is not None and signal[1] in (BUSSO, STRISCIO):
                for c in legal:
                    if suit_of(c) == signal[0]:
                        return 1, c
        # 2. the strongest suit, aces held back unless the hand has a 2 and a 3
        sums: dict[int, int] = {}
        for c in legal:
            sums[suit_of(c)] = sums.get(suit_of(c), 0) + rank_of(c) + self.strength_base
        strongest = max(sorted(sums), key=lambda s: sums[s])
        ranks_in_hand = {rank_of(c) for c in state.hands[state.current]}
        for c in legal:
            if suit_of(c) != strongest:
                continue
            if rank_of(c) == ACE and not (TWO in ranks_in_hand and THREE in ranks_in_hand):
                continue
            return 2, c
        # 3. a 2 with exactly two legal cards of its suit (never reached: see the class)
        for c in legal:
            if rank_of(c) == TWO and sum(suit_of(d) == suit_of(c) for d in legal) == 2:
                return 3, c
        # 4. the first legal card (the seed's rule 5 is never reached)
        return 4, legal[0]


@dataclass(frozen=True, slots=True)
class _Knowledge:
    """What the seat to act knows: the cards no one has shown it yet (not played, not
    its own), per seat the suits it is known to lack and the suits where it is known
    to hold neither the 2 nor the 3, and its own suit lengths."""

    me: int
    unseen: frozenset[int]
    void: tuple[frozenset[int], ...]
    no_two_three: tuple[frozenset[int], ...]
    count: tuple[int, ...]

    @classmethod
    def of(cls, state: State) -> _Knowledge:
        me = state.current
        played = {c for _, c in state.plays}
        unseen = frozenset(range(40)) - played - set(state.hands[me])
        void: list[set[int]] = [set() for _ in range(4)]
        no23: list[set[int]] = [set() for _ in range(4)]
        plays = state.plays
        for i in range(0, len(plays), 4):
            lead = suit_of(plays[i][1])
            for seat, c in plays[i + 1:i + 4]:
                if suit_of(c) != lead:
                    void[seat].add(lead)
        for seat, signal in enumerate(state.signals):
            if signal is None:
                continue
            suit, kind = signal
            if kind == VOLO:
                void[seat].add(suit)
            elif kind == STRISCIO:
                no23[seat].add(suit)
        count = [0, 0, 0, 0]
        for c in state.hands[me]:
            count[suit_of(c)] += 1
        return cls(me, unseen, tuple(frozenset(v) for v in void),
                   tuple(frozenset(n) for n in no23), tuple(count))

    @property
    def partner(self) -> int:
        return (self.me + 2) % 4

    @property
    def opponents(self) -> list[int]:
        return [(self.me + 1) % 4, (self.me + 3) % 4]

    def may_hold(self, seat: int, card: int) -> bool:
        suit = suit_of(card)
        if card not in self.unseen or suit in self.void[seat]:
            return False
        return not (rank_of(card) >= TWO and suit in self.no_two_three[seat])

    def beaten_by(self, card: int, seats: list[int]) -> bool:
        """Whether one of ``seats`` may hold a stronger card of ``card``'s suit."""
        top = (suit_of(card) + 1) * 10
        return any(self.may_hold(s, d) for d in range(card + 1, top) for s in seats)

    def master(self, card: int) -> bool:
        """No opponent may hold a stronger card of its suit."""
        return not self.beaten_by(card, self.opponents)

    def cost(self, card: int) -> tuple[float, int, int]:
        """What playing ``card`` to a lost trick gives away: its thirds, plus 3 for a
        master and 0.5 for a 2 or 3 (they win tricks later); then the shorter suit,
        then the weaker card."""
        keep = 3.0 if self.master(card) else 0.5 if rank_of(card) >= TWO else 0.0
        return CARD_THIRDS[card] + keep, self.count[suit_of(card)], card

    def carico(self, card: int) -> float:
        """What ``card`` is worth thrown on the partner's trick: its thirds, less what
        keeping it is worth (a master wins a trick of its own; a 2 or 3 may)."""
        keep = 3.0 if self.master(card) else 0.5 if rank_of(card) >= TWO else 0.0
        return CARD_THIRDS[card] - keep


class RuleBot:
    """Our rule-based player: counts the cards and reads the signals. Deterministic.

    It knows the cards not yet seen (neither played nor its own) and, per seat, the
    suits it lacks (it failed to follow, or signalled volo) and the suits where it
    holds no 2 or 3 (it signalled striscio). A card is *safe* when no opponent
    still to play may hold a stronger card of its suit; a *master* is a card safe
    against both opponents.

    Leading:

    1. cash a master, preferring a suit where the partner is void (it will throw
       a point card on it), then one where an opponent is not (it must give a card
       of the suit), then the suit with more unseen cards, then the strongest; a master
       alone in its suit waits for the second half (tricks 6 to 10), as it may yet
       catch an ace played under it;
    2. answer the partner's busso: while a 2 or 3 of that suit is unseen, lead the
       suit's cheapest card so the partner can take with it;
    3. else lead from the longest suit (a suit holding a 2 or 3 first among equals,
       which also signals busso), its cheapest card: no points, nothing that wins.

    Following, the trick won so far by the partner:

    4. if that is safe (no opponent still to play may beat it), throw a *carico*:
       the card worth most that is not a master (an ace first, then a figure or a
       2, then a low card), from the led suit if it must follow, else any suit;
    5. else, with a whole point (3 thirds) or more in the trick, take it over with
       the weakest safe winner if it holds one; else play the cheapest card.

    Following, the trick won so far by an opponent:

    6. take it with the weakest safe winner that is not a master (one that is safe
       only because the opponents still to play lack the suit); with masters only,
       take it if the trick holds a point card or the bot plays last, else duck
       (rule 7): a master wins later just as well;
    7. else play (or discard, when void) the cheapest card: fewest thirds, keeping
       masters and 2s and 3s; among equals from the shortest suit (to get void, for
       caricos later), then the weakest.

    The last trick (a point, as much as an ace) is fought for by keeping winners
    to the end: masters are never thrown or discarded while a cheaper card will
    do (rules 4 and 7), and a lone master waits for the second half (rule 1).
    """

    name = "rule"

    def act(self, state: State) -> int:
        legal = legal_cards(state)
        if len(legal) == 1:
            return legal[0]
        k = _Knowledge.of(state)
        trick = state.trick
        if not trick:
            return self._lead(state, legal, k)
        lead = suit_of(trick[0][1])
        best_seat, best = trick[0]
        for seat, c in trick[1:]:
            if suit_of(c) == lead and c > best:
                best_seat, best = seat, c
        me = state.current
        later_opps = [(me + i) % 4 for i in range(1, 4 - len(trick)) if (me + i) % 2 != me % 2]
        safe_winners = [c for c in legal if suit_of(c) == lead and c > best
                        and not k.beaten_by(c, later_opps)]
        if best_seat == k.partner:
            if not k.beaten_by(best, later_opps):
                return max(legal, key=lambda c: (k.carico(c), -c))
            if safe_winners and sum(CARD_THIRDS[c] for _, c in trick) >= 3:
                return safe_winners[0]
            return min(legal, key=k.cost)
        if safe_winners:
            cheap = [c for c in safe_winners if not k.master(c)]
            if cheap:
                return cheap[0]
            if len(trick) < 3 and not any(CARD_THIRDS[c] for _, c in trick):
                return min(legal, key=k.cost)  # a master keeps: no point in this trick yet
            return safe_winners[0]
        return min(legal, key=k.cost)

    @staticmethod
    def _lead(state: State, legal: tuple[int, ...], k: _Knowledge) -> int:
        # a lone master waits for the second half: it may yet catch an ace
        masters = [c for c in legal if k.master(c)
                   and (k.count[suit_of(c)] >= 2 or len(state.plays) >= 20)]
        if masters:
            def cash(c: int) -> tuple[bool, bool, int, int]:
                s = suit_of(c)
                opp_follow = any(s not in k.void[o] for o in k.opponents)
                unseen_in_suit = sum(1 for d in k.unseen if suit_of(d) == s)
                return s in k.void[k.partner], opp_follow, unseen_in_suit, rank_of(c)
            return max(masters, key=cash)
        signal = state.signals[k.partner]
        if signal is not None and signal[1] == BUSSO:
            suit = signal[0]
            live = any(suit_of(d) == suit and rank_of(d) >= TWO for d in k.unseen)
            mine = [c for c in legal if suit_of(c) == suit]
            if live and mine and suit not in k.void[k.partner]:
                return min(mine, key=k.cost)

        def suit_key(s: int) -> tuple[int, bool, int]:
            has23 = any(suit_of(c) == s and rank_of(c) >= TWO for c in legal)
            return k.count[s], has23, -s
        suit = max({suit_of(c) for c in legal}, key=suit_key)
        return min((c for c in legal if suit_of(c) == suit), key=k.cost)


BOT_NAMES = ("random", "seed-heuristic", "rule")


class NoisyBot:
    """``base`` with a uniformly random legal card instead, with probability ``eps``
    (name ``NAME~EPS``, say ``rule~0.2``): logs of good play that still try every move
    now and then, which an offline learner needs to weigh the moves the bot never makes.
    """

    def __init__(self, base: Bot, eps: float, rng: np.random.Generator | None = None) -> None:
        self.base, self.eps = base, eps
        self.rng = rng if rng is not None else np.random.default_rng()
        self.name = f"{base.name}~{eps:g}"

    def act(self, state: State) -> int:
        if self.rng.random() < self.eps:
            legal = legal_cards(state)
            return legal[int(self.rng.integers(len(legal)))]
        return self.base.act(state)


def is_bot_name(name: str) -> bool:
    """A name ``make_bot`` knows: one of ``BOT_NAMES``, or one with ``~EPS`` noise.

    >>> is_bot_name("rule~0.2"), is_bot_name("rule~2"), is_bot_name("rules")
    (True, False, False)
    """
    base, sep, eps = name.partition("~")
    if base not in BOT_NAMES:
        return False
    if not sep:
        return True
    try:
        return 0.0 <= float(eps) <= 1.0
    except ValueError:
        return False


def make_bot(name: str, rng: np.random.Generator | None = None) -> Bot:
    """The bot called ``name`` (one of ``BOT_NAMES``, or ``NAME~EPS`` for that bot playing a
    random legal card with probability EPS); ``rng`` feeds the randomness."""
    base, sep, eps = name.partition("~")
    if sep:
        if not is_bot_name(name):
            raise ValueError(f"unknown Tressette bot {name!r}: want NAME~EPS with NAME one of "
                             f"{', '.join(BOT_NAMES)} and EPS between 0 and 1, say rule~0.2")
        return NoisyBot(make_bot(base, rng), float(eps), rng)
    if name == "random":
        return RandomBot(rng)
    if name == "seed-heuristic":
        return SeedHeuristicBot()
    if name == "rule":
        return RuleBot()
    raise ValueError(f"unknown Tressette bot {name!r}: want one of {', '.join(BOT_NAMES)}, "
                     f"or NAME~EPS (say rule~0.2)")
