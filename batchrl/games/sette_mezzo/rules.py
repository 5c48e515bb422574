"""Sette e mezzo, one player against a dealer that draws to a fixed limit: pure functions.

A 40-card deck: ace to seven of four suits at their pip value, and twelve face cards
worth half a point. Suits never matter, so a card is its *kind*: ``0`` for a face,
``1`` to ``7`` for the pips (the kind is the value, except the face's 0.5). Each side
is dealt one card face up; the player hits or sticks, and busts (-1) over 7.5. After a
stick the opponent draws from the same deck until its total reaches ``limit`` (it
busts over 7.5: +1 to the player); the higher total wins, equal totals tie.

The deck is shuffled once, in ``new_game``, and lives in the state, so ``step`` is
pure and a game is fixed by its seed; the opponent's draws happen inside ``step``.
An illegal action raises ``IllegalAction``.

>>> s = deal(3, 3, deck=(0, 1, 7))          # player 3, the opponent shows a 3
>>> legal_actions(s), s.total
((0, 1), 3.0)
>>> s = step(s, HIT)                        # draws the face: 3.5
>>> s = step(s, STICK)                      # the opponent draws 1 (4 < 5), then 7: bust
>>> s.opponent, returns(s)
((3, 1, 7), 1.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

STICK, HIT = 0, 1
ACTION_NAMES = ("stick", "hit")

KINDS = 8  # face, then ace..seven
VALUES = (0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0)
# Totals are kept in half points so they compare exactly: 7.5 is 15.
HALVES = (1, 2, 4, 6, 8, 10, 12, 14)
COPIES = (12, 4, 4, 4, 4, 4, 4, 4)  # of each kind in the 40-card deck
DECK_SIZE = sum(COPIES)
BUST = 15  # a total above this many half points loses
DEFAULT_LIMIT = 5.0
# what a stick earns in a store: the game's result, or its expectation (``transitions``)
REWARDS = ("result", "expected")
CARD_CHARS = "F1234567"

FEATURE_NAMES = (
    "total", "opponent_card", "num_cards",
    "n_faces", "n_aces", "n_twos", "n_threes", "n_fours", "n_fives", "n_sixes", "n_sevens",
)
COUNTS = slice(3, 3 + KINDS)  # the per-kind counts within a feature vector


class IllegalAction(ValueError):
    """An action the rules refuse in this state."""


class GameState(NamedTuple):
    """One game at one moment; build it with ``deal`` or ``new_game``.

    A tuple, like the hold'em state: immutable and cheap to rebuild at each step.
    """

    player: tuple[int, ...]  # kinds of the player's cards, in the order drawn
    opponent: tuple[int, ...]  # the opponent's up card, then its draws
    deck: tuple[int, ...]  # the undrawn cards, top first (a replay may hold fewer)
    limit: int  # the opponent stops at this total, in half points
    stuck: bool  # the player has stuck (so the opponent has played)

    @property
    def total(self) -> float:
        """The player's total in points."""
        return half_points(self.player) / 2

    @property
    def busted(self) -> bool:
        return half_points(self.player) > BUST


def half_points(cards: Sequence[int]) -> int:
    return sum(HALVES[k] for k in cards)


def kind_of(value: float) -> int:
    """The kind of a card worth ``value`` points (0.5 -> 0, 1..7 -> itself).

    >>> kind_of(0.5), kind_of(7)
    (0, 7)
    """
    for kind, v in enumerate(VALUES):
        if v == value:
            return kind
    raise ValueError(f"{value!r} is not a card value (0.5 or 1..7)")


def limit_halves(limit: float) -> int:
    """``limit`` in half points, refusing values the game cannot use."""
    halves = float(limit) * 2
    if not halves.is_integer() or not 1 <= halves <= BUST:
        raise ValueError(f"the opponent's limit must be a multiple of 0.5 from 0.5 to 7.5, "
                         f"not {limit!r}")
    return int(halves)


def deal(player_card: int, opponent_card: int, deck: Sequence[int],
         limit: float = DEFAULT_LIMIT) -> GameState:
    """The state before the first decision: one card each, ``deck`` to draw from.

    ``deck`` may be short (a replayed log lists only the cards that were drawn); the
    composition of all the cards must fit in one 40-card deck.
    """
    cards = (player_card, opponent_card, *deck)
    if any(not 0 <= k < KINDS for k in cards):
        raise ValueError(f"card kinds are 0 (face) to 7, not {cards}")
    counts = np.bincount(cards, minlength=KINDS)
    if (over := np.flatnonzero(counts > COPIES)).size:
        k = int(over[0])
        raise ValueError(f"{int(counts[k])} cards worth {VALUES[k]:g}: the deck has {COPIES[k]}")
    return GameState((player_card,), (opponent_card,), tuple(deck), limit_halves(limit), False)


def new_game(rng: np.random.Generator, limit: float = DEFAULT_LIMIT) -> GameState:
    """Shuffle a full deck with ``rng`` (the only randomness) and deal."""
    deck = np.repeat(np.arange(KINDS), COPIES)
    order = [int(k) for k in rng.permutation(deck)]
    return deal(order[0], order[1], order[2:], limit)


def is_terminal(state: GameState) -> bool:
    return state.stuck or state.busted


def legal_actions(state: GameState) -> tuple[int, ...]:
    """Both actions while the player decides (hitting on 7.5 is legal, and loses)."""
    return () if is_terminal(state) else (STICK, HIT)


def legal_mask(state: GameState) -> tuple[bool, bool]:
    on = not is_terminal(state)
    return (on, on)


def step(state: GameState, action: int) -> GameState:
    """The state after the player's ``action``; a stick plays the opponent's hand out."""
    if is_terminal(state):
        raise IllegalAction("the game is over: " + ("the player busted" if state.busted
                                                    else "the player has stuck"))
    if action not in (STICK, HIT):
        raise IllegalAction(f"{action!r} is not an action (0 stick, 1 hit)")
    if action == HIT:
        if not state.deck:
            raise IllegalAction("no card left to draw (a replayed log lists too few cards)")
        return state._replace(player=(*state.player, state.deck[0]), deck=state.deck[1:])
    opponent, deck = list(state.opponent), list(state.deck)
    while half_points(opponent) < state.limit:
        if not deck:
            raise IllegalAction("the opponent must draw, but no card is left "
                                "(a replayed log lists too few cards)")
        opponent.append(deck.pop(0))
    return state._replace(opponent=tuple(opponent), deck=tuple(deck), stuck=True)


def returns(state: GameState) -> float:
    """The player's reward: +1 win, 0 tie, -1 loss."""
    if not is_terminal(state):
        raise ValueError("the game is not over")
    if state.busted:
        return -1.0
    mine, theirs = half_points(state.player), half_points(state.opponent)
    if theirs > BUST or mine > theirs:
        return 1.0
    return 0.0 if mine == theirs else -1.0


def encode_counts(counts: ArrayLike, opponent_card: ArrayLike) -> NDArray[np.float32]:
    """Feature rows from per-kind counts ``(n, 8)`` and opponent up-card kinds ``(n,)``.

    The one place the features are computed: ``encode`` and the solver both call it.

    >>> encode_counts([[1, 0, 0, 1, 0, 0, 0, 0]], [6]).tolist()
    [[3.5, 6.0, 2.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]]
    """
    c = np.asarray(counts, dtype=np.float32).reshape(-1, KINDS)
    up = np.asarray(opponent_card, dtype=np.int64).reshape(-1)
    out = np.empty((len(c), len(FEATURE_NAMES)), dtype=np.float32)
    out[:, 0] = c @ np.asarray(VALUES, dtype=np.float32)
    out[:, 1] = np.asarray(VALUES, dtype=np.float32)[up]
    out[:, 2] = c.sum(axis=1)
    out[:, COUNTS] = c
    return out


def encode(state: GameState) -> NDArray[np.float32]:
    """What the player sees: its total, the opponent's up card, its cards by value.

    The counts fix the player's cards as a multiset, and with the up card they fix
    what is left in the deck: everything the optimal decision depends on.
    """
    counts = np.bincount(state.player, minlength=KINDS)
    row: NDArray[np.float32] = encode_counts(counts, state.opponent[0])[0]
    return row


def cards_str(cards: Sequence[int]) -> str:
    """Cards as letters: ``F`` a face, ``1``..``7`` the pips.

    >>> cards_str((3, 0, 7))
    '3F7'
    """
    return "".join(CARD_CHARS[k] for k in cards)
