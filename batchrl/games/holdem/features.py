"""The thesis's state features (Vilella 2011, ch. 4.1, Fig. 4.4), from one seat's view.

One function encodes a state: the parser calls it when it writes rows and a
learned policy calls it when it acts, so there is never a second copy of a
feature. Only what the acting seat may know enters the vector: its own cards,
the board it can see and the public betting; the opponent's cards never do.

| feature | meaning |
|---|---|
| ``stage`` | betting round: 0 pre-flop, 1 flop, 2 turn, 3 river |
| ``raises`` | raises (bets included) by both seats so far this hand |
| ``raises_sb`` | of those, raises by the small blind |
| ``facing_raise`` | 1 when the seat owes chips to stay in (a bet, a raise, the SB's blind) |
| ``to_act`` | the acting seat: 0 big blind, 1 small blind (the thesis's *turno*) |
| ``pv`` | probability of victory against one random hand, ties half (see ``pv.py``) |
| ``pot`` | chips in the pot, blinds included, before this action |
| ``bet_<round>`` | that round's betting sequence as one integer (below) |

The betting code. The thesis numbered each round's sequences by hand (Appendix
B), with gaps and one number used twice. Here a round's sequence of checks/calls
``c`` and bets/raises ``r`` is read as a number in bijective base 2 (c = 1,
r = 2) and shifted by one, so every sequence has its own code and a longer
sequence always has a larger one:

* 0: the round has not been reached;
* 1: reached, nobody has acted yet;
* ``c`` 2, ``r`` 3, ``cc`` 4, ``cr`` 5, ``rc`` 6, ``rr`` 7, ``ccc`` 8 …;
  in general ``1 + sum(d_i * 2**(k-1-i))`` with d = 1 for ``c`` and 2 for ``r``.

A fold never appears in a code: it ends the hand, so no later decision sees it.

>>> betting_code("rc"), betting_code(""), betting_code(None)
(6, 1, 0)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from batchrl.games.holdem.gamedef import GameDef
from batchrl.games.holdem.rules import ACTION_NAMES, HandState

_STANDARD_ROUNDS = ("preflop", "flop", "turn", "river")

# Indices into the vector, for the code that fills pv in afterwards.
PV_INDEX = 5


def feature_names(game: GameDef, pv: bool = True) -> tuple[str, ...]:
    """The feature names for ``game``; rounds are named pre-flop..river when it has four.

    ``pv=False`` leaves out the probability of victory, the one costly feature.
    """
    rounds: tuple[str, ...]
    if game.num_rounds == 4 and game.num_board_cards == (0, 3, 1, 1):
        rounds = _STANDARD_ROUNDS
    else:
        rounds = tuple(f"round{r}" for r in range(game.num_rounds))
    base = ("stage", "raises", "raises_sb", "facing_raise", "to_act", "pv", "pot")
    names = base + tuple(f"bet_{r}" for r in rounds)
    return names if pv else names[:PV_INDEX] + names[PV_INDEX + 1 :]


def action_names() -> tuple[str, ...]:
    return ACTION_NAMES


def betting_code(sequence: str | None) -> int:
    """One round's betting as an integer; ``None`` for a round not reached."""
    if sequence is None:
        return 0
    code = 0
    for ch in sequence:
        code = 2 * code + (1 if ch == "c" else 2)
    return code + 1


def public_features(state: HandState, seat: int) -> list[float]:
    """Every feature but ``pv``, whose slot holds NaN (it is filled in batches)."""
    game = state.game
    sb = game.small_blind_player
    history = state.history
    codes = [
        float(betting_code(history[r])) if r < len(history) else 0.0
        for r in range(game.num_rounds)
    ]
    return [
        float(state.round),
        float(sum(state.raises)),
        float(state.raises[sb]),
        1.0 if state.spent[seat] < state.max_spent else 0.0,
        1.0 if seat == sb else 0.0,
        float("nan"),
        float(sum(state.spent)),
        *codes,
    ]


def pv_request(state: HandState, seat: int) -> tuple[tuple[int, int], tuple[int, ...]]:
    """The (hole cards, visible board) whose PV this seat's features need."""
    hole = state.hole[seat]
    if len(hole) != 2:
        raise ValueError(f"seat {seat}'s hole cards are not known: PV needs them")
    return (hole[0], hole[1]), state.visible_board()


def encode(state: HandState, seat: int, pv: bool = True) -> NDArray[np.float32]:
    """The feature vector ``seat`` sees in ``state`` (what a policy acts on)."""
    row: NDArray[np.float32] = encode_many([state], [seat], pv)[0]
    return row


def encode_many(
    states: Sequence[HandState], seats: Sequence[int], pv: bool = True
) -> NDArray[np.float32]:
    """Feature vectors for many (state, seat) pairs, with the PVs computed in one batch."""
    rows: NDArray[np.float32] = np.array(
        [public_features(s, p) for s, p in zip(states, seats, strict=True)], dtype=np.float32
    ).reshape(len(states), -1)
    return fill_pv(rows, [pv_request(s, p) for s, p in zip(states, seats, strict=True)]) \
        if pv else np.delete(rows, PV_INDEX, axis=1)


def fill_pv(
    rows: NDArray[np.float32], requests: Sequence[tuple[tuple[int, int], tuple[int, ...]]]
) -> NDArray[np.float32]:
    """Put the PVs of ``requests`` (one per row) in the pv column, in one batched call."""
    from batchrl.games.holdem.pv import pv_many

    if len(requests):
        rows[:, PV_INDEX] = pv_many(requests)
    return rows
