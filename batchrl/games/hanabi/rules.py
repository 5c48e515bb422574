"""Hanabi rules: pure functions over a frozen state, for 2 to 5 players.

The standard game: five colours, each with three 1s, two 2s, 3s and 4s and one
5 (50 cards); 8 hint tokens and 3 fuses; hands of 5 cards (4 with 4 or 5
players). A move plays a card, discards one (not at 8 hints) or gives a hint
(not at 0 hints, and never an empty one: it must touch a card). After the
last card is drawn every player, the drawer included, has one more turn. An
illegal move raises ``IllegalMove``; nothing is repaired.

Scores, both conventions, because tables disagree:

* ``score_played``: the cards played (the sum of the fireworks), what Eger et
  al.'s logs and the report count;
* ``score_research``: the same, but 0 when the third fuse burns (the research
  convention of the Hanabi Learning Environment).

Cards are ints ``colour * 5 + rank - 1``. Actions are ints, the report's 20
classes for two players: 0–4 play slot i, 5–9 discard slot i, 10–14 hint rank
1–5, 15–19 hint colour. With more players the hints repeat per target, the
next player first: ``10 + 10 * (offset - 1) + k`` with k 0–4 a rank and 5–9 a
colour (``n_actions(p)`` = 10 + 10 * (p - 1)). A hand's slot 0 is its oldest
card; a drawn card goes to the end.

>>> s = deal(full_deck(), players=2)     # unshuffled: w1 w1 w1 w2 w2 | w3 w3 w4 w4 w5
>>> [card_name(c) for c in s.hands[1]], len(s.deck), s.hints, s.fuses
(['w3', 'w3', 'w4', 'w4', 'w5'], 40, 8, 3)
>>> s = step(s, 10)                      # hint ones to the partner: it holds none
Traceback (most recent call last):
...
batchrl.games.hanabi.rules.IllegalMove: player 0: hint rank 1 to player 1 touches no card
>>> s = step(step(s, 0), 11)             # play w1 (b1 drawn); the partner hints twos
>>> [card_name(c) for c in s.hands[0]], s.fireworks[0], s.hints
(['w1', 'w1', 'w2', 'w2', 'b1'], 1, 7)
>>> s.known[0][:3]                       # (colours, ranks): slot 2 is a 2, slot 0 is not
((31, 29), (31, 29), (31, 2))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

COLOURS = ("white", "blue", "red", "yellow", "green")  # the report's order
RANK_COUNTS = (3, 2, 2, 2, 1)  # copies of ranks 1..5 in each colour
MAX_HINTS, MAX_FUSES = 8, 3
ALL = 0b11111  # every colour (or rank) still possible


class IllegalMove(ValueError):
    """A move the rules do not allow in this state."""


def card(colour: int, rank: int) -> int:
    return colour * 5 + rank - 1


def colour_of(c: int) -> int:
    return c // 5


def rank_of(c: int) -> int:
    return c % 5 + 1


def card_name(c: int) -> str:
    """``"r3"``: the colour's initial and the rank.

    >>> card_name(card(2, 3)), card_name(card(0, 5))
    ('r3', 'w5')
    """
    return f"{COLOURS[colour_of(c)][0]}{rank_of(c)}"


def full_deck() -> tuple[int, ...]:
    """The 50 cards in a fixed order (colour, then rank)."""
    return _FULL_DECK


_FULL_DECK = tuple(card(c, r) for c in range(5) for r in range(1, 6)
                   for _ in range(RANK_COUNTS[r - 1]))
_SORTED_DECK = sorted(_FULL_DECK)


def hand_size(players: int) -> int:
    if not 2 <= players <= 5:
        raise ValueError(f"Hanabi is for 2 to 5 players, not {players}")
    return 5 if players <= 3 else 4


def n_actions(players: int) -> int:
    return 10 + 10 * (players - 1)


@dataclass(frozen=True, slots=True)
class State:
    """One moment of a game. ``known[p][i]`` is what seat p has been told of its
    slot i: (colour mask, rank mask), bit k set while colour k / rank k+1 is possible."""

    hands: tuple[tuple[int, ...], ...]
    known: tuple[tuple[tuple[int, int], ...], ...]
    deck: tuple[int, ...]  # drawn from the front
    fireworks: tuple[int, ...]  # highest rank played per colour, 0 for none
    discards: tuple[int, ...]  # in order, misplays included
    hints: int = MAX_HINTS
    fuses: int = MAX_FUSES
    current: int = 0
    turns_left: int = -1  # -1 until the deck runs out; then turns before the end
    moves: int = 0
    # A house rule some programs play (Eger et al.'s): discarding with all 8 hints
    # left is allowed and gains nothing. Off in the standard game.
    discard_at_max_hints: bool = False
    # Public facts about hints, for conventions: which slots a hint has ever touched,
    # and the previous move if it was a hint (its target, and the slots it touched
    # for the first time, else every slot it touched).
    clued: tuple[tuple[bool, ...], ...] = ()
    hint_target: int = -1
    hint_focus: tuple[int, ...] = ()
    # The latest moves, newest first, one per other seat at most (what the seat to act
    # has seen since its own last move): (seat, action, card, info) with ``card`` the
    # card played or discarded (-1 for a hint) and ``info`` 1 for a play that went up
    # (else 0), or for a hint the slots it touched (bit i: slot i of its target).
    last: tuple[tuple[int, int, int, int], ...] = ()

    @property
    def players(self) -> int:
        return len(self.hands)

    @property
    def score_played(self) -> int:
        return sum(self.fireworks)

    @property
    def score_research(self) -> int:
        return 0 if self.fuses == 0 else sum(self.fireworks)

    @property
    def over(self) -> bool:
        return self.fuses == 0 or self.turns_left == 0 or self.score_played == 25


def deal(deck: tuple[int, ...], players: int, first: int = 0,
         discard_at_max_hints: bool = False) -> State:
    """The state after dealing ``deck`` from the front, each seat's whole hand in turn
    (as hanab.live deals)."""
    size = hand_size(players)
    if sorted(deck) != _SORTED_DECK:
        raise ValueError("a deal needs the 50 cards of the standard deck")
    hands = tuple(tuple(deck[p * size:(p + 1) * size]) for p in range(players))
    return State(hands=hands, known=tuple(((ALL, ALL),) * size for _ in range(players)),
                 deck=tuple(deck[players * size:]), fireworks=(0,) * 5, discards=(),
                 current=first, discard_at_max_hints=discard_at_max_hints,
                 clued=tuple((False,) * size for _ in range(players)))


def new_game(rng: np.random.Generator, players: int = 2) -> State:
    """A shuffled deal; ``rng`` is the only randomness."""
    deck = full_deck()
    return deal(tuple([deck[i] for i in rng.permutation(len(deck)).tolist()]), players)


def decode(action: int, players: int) -> tuple[str, int, int]:
    """(kind, slot or target seat offset, rank or colour): ``("play", 2, -1)``,
    ``("hint_rank", 1, 3)`` (offset 1: the next player; rank 3), ``("hint_colour", 1, 0)``.

    >>> decode(3, 2), decode(12, 2), decode(15, 2), decode(26, 3)
    (('play', 3, -1), ('hint_rank', 1, 3), ('hint_colour', 1, 0), ('hint_colour', 2, 1))
    """
    if not 0 <= action < n_actions(players):
        raise IllegalMove(f"action {action}: want 0..{n_actions(players) - 1}")
    if action < 5:
        return "play", action, -1
    if action < 10:
        return "discard", action - 5, -1
    offset, k = divmod(action - 10, 10)
    return ("hint_rank", offset + 1, k + 1) if k < 5 else ("hint_colour", offset + 1, k - 5)


def encode_hint(kind: str, offset: int, value: int) -> int:
    """The action of a hint (``offset`` seats ahead; a rank 1–5 or a colour 0–4)."""
    return 10 + 10 * (offset - 1) + (value - 1 if kind == "hint_rank" else 5 + value)


def _touches(hand: tuple[int, ...], kind: str, value: int) -> list[bool]:
    if kind == "hint_rank":
        return [rank_of(c) == value for c in hand]
    return [colour_of(c) == value for c in hand]


def legal_actions(state: State) -> tuple[int, ...]:
    """Every legal move of the seat to act (empty once the game is over)."""
    if state.over:
        return ()
    others = [state.hands[(state.current + offset) % state.players]
              for offset in range(1, state.players)]
    return legal_moves(len(state.hands[state.current]), state.hints, others,
                       state.discard_at_max_hints)


def legal_moves(held: int, hints: int, others: Sequence[Sequence[int]],
                discard_at_max_hints: bool = False) -> tuple[int, ...]:
    """The legal moves of a seat holding ``held`` cards, with ``hints`` tokens left, the
    other hands (next seat first) being ``others``: what ``legal_actions`` gives.

    >>> legal_moves(5, 8, [(card(0, 3), card(2, 3))])
    (0, 1, 2, 3, 4, 12, 15, 17)
    """
    actions = list(range(held))
    if hints < MAX_HINTS or discard_at_max_hints:
        actions += [5 + i for i in range(held)]
    if hints > 0:
        for offset, target in enumerate(others, 1):
            base = 10 + 10 * (offset - 1)  # a hint touching rank r: base + r - 1; colour k: + 5
            actions += {base + c % 5 for c in target} | {base + 5 + c // 5 for c in target}
    return tuple(sorted(actions))


def tell(state: State, seat: int, kind: str, value: int
         ) -> tuple[tuple[tuple[int, int], ...], tuple[bool, ...], tuple[int, ...]]:
    """What a hint of ``kind`` ("hint_rank" or "hint_colour") and ``value`` tells ``seat``
    of its cards: the new (colour mask, rank mask) of each, which are now clued, and the
    hint's focus (the cards it touches for the first time, else all it touches)."""
    touched = _touches(state.hands[seat], kind, value)
    bit = 1 << (value - 1 if kind == "hint_rank" else value)
    told = tuple(
        ((cm, rm & bit if hit else rm & ~bit) if kind == "hint_rank"
         else (cm & bit if hit else cm & ~bit, rm))
        for (cm, rm), hit in zip(state.known[seat], touched, strict=True))
    before = state.clued[seat]
    new = tuple(i for i, hit in enumerate(touched) if hit and not before[i])
    focus = new or tuple(i for i, hit in enumerate(touched) if hit)
    return told, tuple(c or t for c, t in zip(before, touched, strict=True)), focus


def _replace_at(items: tuple, index: int, value: object) -> tuple:  # type: ignore[type-arg]
    return (*items[:index], value, *items[index + 1:])


def step(state: State, action: int) -> State:
    """The state after the seat to act makes ``action``."""
    if state.over:
        raise IllegalMove("the game is over")
    p = state.current
    kind, a, b = decode(action, state.players)
    hand, known = state.hands[p], state.known[p]
    hints, fuses, fireworks, discards = state.hints, state.fuses, state.fireworks, state.discards
    deck, turns_left = state.deck, state.turns_left
    hands, knowns, clued = state.hands, state.known, state.clued
    hint_target, hint_focus = -1, cast(tuple[int, ...], ())
    card_moved, info = -1, 0
    if kind in ("play", "discard"):
        if a >= len(hand):
            raise IllegalMove(f"player {p}: no card in slot {a} (the hand has {len(hand)})")
        if kind == "discard" and hints == MAX_HINTS and not state.discard_at_max_hints:
            raise IllegalMove(f"player {p}: cannot discard with all {MAX_HINTS} hints left")
        c = card_moved = hand[a]
        hand, known = hand[:a] + hand[a + 1:], known[:a] + known[a + 1:]
        mine = clued[p][:a] + clued[p][a + 1:]
        if kind == "discard":
            discards, hints = (*discards, c), min(hints + 1, MAX_HINTS)
        elif fireworks[colour_of(c)] == rank_of(c) - 1:
            fireworks, info = _replace_at(fireworks, colour_of(c), rank_of(c)), 1
            if rank_of(c) == 5 and hints < MAX_HINTS:
                hints += 1
        else:
            discards, fuses = (*discards, c), fuses - 1
        if deck:
            hand, known, deck = (*hand, deck[0]), (*known, (ALL, ALL)), deck[1:]
            mine = (*mine, False)
            if not deck:
                turns_left = state.players + 1  # this turn's decrement leaves one each
        hands, knowns = _replace_at(hands, p, hand), _replace_at(knowns, p, known)
        clued = _replace_at(clued, p, mine)
    else:
        if hints == 0:
            raise IllegalMove(f"player {p}: no hint token left")
        target = (p + a) % state.players
        what = f"{'rank' if kind == 'hint_rank' else 'colour'} " \
               f"{b if kind == 'hint_rank' else COLOURS[b]}"
        touched = _touches(state.hands[target], kind, b)
        if not any(touched):
            raise IllegalMove(f"player {p}: hint {what} to player {target} touches no card")
        told, now_clued, hint_focus = tell(state, target, kind, b)
        knowns, hints = _replace_at(knowns, target, told), hints - 1
        hint_target = target
        clued = _replace_at(clued, target, now_clued)
        info = sum(1 << i for i, hit in enumerate(touched) if hit)
    if turns_left > 0:
        turns_left -= 1
    # every field passed, as ``dataclasses.replace`` would, without its overhead
    return type(state)(hands=hands, known=knowns, deck=deck, fireworks=fireworks,
                       discards=discards, hints=hints, fuses=fuses,
                       current=(p + 1) % state.players, turns_left=turns_left,
                       moves=state.moves + 1,
                       discard_at_max_hints=state.discard_at_max_hints, clued=clued,
                       hint_target=hint_target, hint_focus=hint_focus,
                       last=((p, action, card_moved, info), *state.last[:state.players - 2]))


def is_terminal(state: State) -> bool:
    return state.over


def returns(state: State, research: bool = False) -> tuple[float, ...]:
    """Every player's return: the shared score (``research``: 0 after the third fuse)."""
    score = state.score_research if research else state.score_played
    return (float(score),) * state.players
