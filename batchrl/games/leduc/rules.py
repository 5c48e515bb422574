"""Leduc hold'em's rules, as OpenSpiel and RLCard play it (two players).

Six cards: the jack, queen and king of two suits. Each player antes 1 chip and is dealt
one private card. A betting round follows, then one public card, then a second betting
round; player 0 acts first in both. In a round a player may call (check, when nothing is
owed), raise (match what is owed, then put in 2 chips more in the first round, 4 in the
second; at most two raises a round) or fold (only when something is owed). A round ends
when both have checked, or when a raise was called. At the showdown a private card that
pairs the public card wins, else the higher rank; equal ranks split the pot.

A state is the deal (both private cards and the public card, dealt at the start: it is
hidden until the second round) and the betting so far as a string: ``c`` call or check,
``r`` raise, ``f`` fold, ``/`` between the rounds (``rc/cr``).

>>> s = LeducState((5, 2, 0))  # king of hearts, queen of spades; the jack of spades to come
>>> for a in "rc" "rc":
...     s = step(s, "fcr".index(a))
>>> s.history, is_terminal(s), returns(s), contributions(s.history)
('rc/rc', True, (7.0, -7.0), (7, 7))
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RANKS, SUITS = "JQK", "sh"
N_CARDS = len(RANKS) * len(SUITS)  # card c: rank c // 2, suit c % 2
FOLD, CALL, RAISE = 0, 1, 2
MOVES = "fcr"  # a move's letter in a history
ACTION_NAMES = ("fold", "call", "raise")
ANTE = 1
RAISE_SIZES = (2, 4)  # chips a raise adds, by round
MAX_RAISES = 2  # a round


@dataclass(frozen=True, slots=True)
class LeducState:
    """A deal (player 0's card, player 1's card, the public card: ids 0-5) and the
    betting so far (``rc/c``)."""

    cards: tuple[int, int, int]
    history: str = ""


def card_text(card: int) -> str:
    """``Ks``: the rank, then the suit."""
    return RANKS[card // 2] + SUITS[card % 2]


def cards_text(state: LeducState) -> str:
    """``Ks|Qh/Jh``: both private cards, then the public card if it was turned."""
    text = "|".join(card_text(c) for c in state.cards[:2])
    return text + (f"/{card_text(state.cards[2])}" if round_of(state.history) else "")


def card_of(text: str) -> int:
    """The card id of ``Ks``; ValueError for anything else."""
    if len(text) != 2 or text[0] not in RANKS or text[1] not in SUITS:
        raise ValueError(f"{text!r} is not a Leduc card: want a rank of {RANKS} and a suit "
                         f"of {SUITS}, e.g. Ks")
    return RANKS.index(text[0]) * 2 + SUITS.index(text[1])


def deal(rng: np.random.Generator) -> LeducState:
    first, second, public = rng.permutation(N_CARDS)[:3].tolist()
    return LeducState((first, second, public))


def round_of(history: str) -> int:
    return history.count("/")


def round_moves(history: str) -> str:
    """The moves of the round being played."""
    return history.rsplit("/", 1)[-1]


def round_over(moves: str) -> bool:
    """Whether a round of these moves is over: both checked, or a raise was called."""
    return moves == "cc" or (moves.endswith("c") and "r" in moves)


def is_terminal(state: LeducState) -> bool:
    h = state.history
    return h.endswith("f") or (round_of(h) == 1 and round_over(round_moves(h)))


def current_player(state: LeducState) -> int:
    """The player to act: player 0 opens each round; -1 once the hand is over."""
    return -1 if is_terminal(state) else len(round_moves(state.history)) % 2


def contributions(history: str) -> tuple[int, int]:
    """The chips each player has put in, the ante included, after ``history``."""
    put = [ANTE, ANTE]
    for r, moves in enumerate(history.split("/")):
        for i, move in enumerate(moves):
            p, other = i % 2, 1 - i % 2
            if move == "c":
                put[p] = put[other]
            elif move == "r":
                put[p] = put[other] + RAISE_SIZES[r]
    return put[0], put[1]


def legal_actions(state: LeducState) -> tuple[int, ...]:
    """Fold only when a raise is owed; call always; raise while the round has had fewer
    than two."""
    if is_terminal(state):
        return ()
    moves = round_moves(state.history)
    owed = moves.endswith("r")
    return (*((FOLD,) if owed else ()), CALL,
            *((RAISE,) if moves.count("r") < MAX_RAISES else ()))


def step(state: LeducState, action: int) -> LeducState:
    """The state after the player to act plays ``action`` (ValueError if illegal)."""
    if action not in legal_actions(state):
        raise ValueError(f"{ACTION_NAMES[action] if action in (0, 1, 2) else action!r} is "
                         f"not legal after {state.history!r}")
    history = state.history + MOVES[action]
    if action != FOLD and round_of(history) == 0 and round_over(round_moves(history)):
        history += "/"  # the public card is turned
    return LeducState(state.cards, history)


def hand_rank(card: int, public: int) -> int:
    """A private card's strength with the public card: a pair above any single rank."""
    return 10 + card // 2 if card // 2 == public // 2 else card // 2


def returns(state: LeducState) -> tuple[float, float]:
    """Each player's chips won (the other's contributions) or lost; 0 before the end."""
    if not is_terminal(state):
        return 0.0, 0.0
    put = contributions(state.history)
    if state.history.endswith("f"):
        folder = (len(round_moves(state.history)) - 1) % 2
        won = float(put[folder])
        return (-won, won) if folder == 0 else (won, -won)
    mine, theirs = (hand_rank(c, state.cards[2]) for c in state.cards[:2])
    if mine == theirs:
        return 0.0, 0.0
    won = float(put[1] if mine > theirs else put[0])
    return (won, -won) if mine > theirs else (-won, won)


def public_card(state: LeducState) -> int | None:
    """The public card once it is turned (the second round), else None."""
    return state.cards[2] if round_of(state.history) >= 1 else None


def histories() -> list[str]:
    """Every betting history at which a player is to act, in order of length."""
    out, frontier = [], [""]
    while frontier:
        nxt = []
        for h in frontier:
            s = LeducState((0, 2, 4), h)
            if is_terminal(s):
                continue
            out.append(h)
            nxt += [step(s, a).history for a in legal_actions(s)]
        frontier = nxt
    return out
