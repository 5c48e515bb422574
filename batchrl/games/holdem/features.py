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

Every other game (no-limit, three players) has the general features below, named
from the acting seat's view; chips are counted in big blinds, so one model reads
games of any units:

| feature | meaning |
|---|---|
| ``street`` | betting round: 0 pre-flop, 1 flop, 2 turn, 3 river |
| ``position`` | the seat's place in the post-flop order: 0 acts first, n - 1 last |
| ``players_in`` | players who have not folded |
| ``pot_bb`` | chips in the pot before this action |
| ``to_call_bb`` | chips the seat must add to stay in |
| ``pot_odds`` | to_call / (pot + to_call): the share of the pot a call buys |
| ``stack_bb`` | no-limit: the seat's chips behind, not yet in the pot |
| ``spr`` | no-limit: the effective stack over the pot (the stack-to-pot ratio) |
| ``bet_<round>_bb`` | chips put in by everyone in that round (0 before it is reached) |
| ``raises_round`` | raises (bets included) in the current round |
| ``raises_hand`` | raises in the hand |
| ``aggressor`` | 1 when the seat made the hand's last raise |
| ``pv`` | equity against one random hand, exactly (``pv.py``'s tables) |
| ``pv2`` | three players: equity against two random hands (``pv2.py``) |

The effective stack is the least of the seat's chips behind and the most any live
opponent has behind: what the seat can win or lose from here.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from batchrl.games.holdem.gamedef import GameDef
from batchrl.games.holdem.memo import ByBetting
from batchrl.games.holdem.pv import pv_many
from batchrl.games.holdem.pv2 import pv2_many
from batchrl.games.holdem.rules import ACTION_NAMES, HandState

_STANDARD_ROUNDS = ("preflop", "flop", "turn", "river")

# Indices into the vector, for the code that fills pv in afterwards.
PV_INDEX = 5


def thesis(game: GameDef) -> bool:
    """Whether ``game`` has the thesis's features: heads-up limit (any units or rounds)."""
    return game.is_limit and game.num_players == 2


def round_names(game: GameDef) -> tuple[str, ...]:
    """The rounds' names: pre-flop..river when the game has the standard four."""
    if game.num_rounds == 4 and game.num_board_cards == (0, 3, 1, 1):
        return _STANDARD_ROUNDS
    return tuple(f"round{r}" for r in range(game.num_rounds))


def pv_names(game: GameDef) -> tuple[str, ...]:
    """The equity features: against one random hand, and two in a three-player game."""
    return ("pv",) if thesis(game) or game.num_players == 2 else ("pv", "pv2")


def feature_names(game: GameDef, pv: bool = True) -> tuple[str, ...]:
    """The feature names for ``game``: the thesis's for heads-up limit, the general ones
    otherwise (see the module's tables).

    ``pv=False`` leaves out the equities, the one costly kind of feature.
    """
    rounds = round_names(game)
    if thesis(game):
        base = ("stage", "raises", "raises_sb", "facing_raise", "to_act", "pv", "pot")
        names = base + tuple(f"bet_{r}" for r in rounds)
        return names if pv else names[:PV_INDEX] + names[PV_INDEX + 1 :]
    stacks = () if game.is_limit else ("stack_bb", "spr")
    return ("street", "position", "players_in", "pot_bb", "to_call_bb", "pot_odds", *stacks,
            *(f"bet_{r}_bb" for r in rounds), "raises_round", "raises_hand", "aggressor",
            *(pv_names(game) if pv else ()))


def pv_columns(game: GameDef) -> tuple[int, ...]:
    """Where the equities sit in ``feature_names(game)`` (pv=True)."""
    names = feature_names(game)
    return tuple(names.index(n) for n in pv_names(game))


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


@functools.lru_cache(maxsize=1 << 16)
def history_codes(history: tuple[str, ...]) -> tuple[int, ...]:
    """`betting_code` of each round reached (a hand's ``history``), remembered: a search
    asks for the same few betting histories millions of times."""
    return tuple(betting_code(h) for h in history)


# A state's public features come from its game and its betting alone (`memo`): each
# game's (betting, seat) is worked out once (DeepStack's 56,381 decisions of distinct
# bettings are 18,357 distinct bettings so far; heads-up limit has ~10^4 in all).
_ROWS: ByBetting[tuple[float, ...]] = ByBetting(limit=1 << 16)


def public_features(state: HandState, seat: int) -> list[float]:
    """Every feature but the equities, whose slots hold NaN (they are filled in batches)."""
    game = state.game
    key = (state.history, seat)
    row = _ROWS.get(game, key)
    if row is None:
        row = _ROWS.put(game, key, tuple(_thesis_features(state, seat) if thesis(game)
                                         else _general(state, seat)))
    return list(row)


def _forget_bettings() -> None:
    _ROWS.clear()


def _thesis_features(state: HandState, seat: int) -> list[float]:
    game = state.game
    sb = game.small_blind_player
    reached = history_codes(state.history)
    codes = [float(c) for c in reached[:game.num_rounds]]
    codes += [0.0] * (game.num_rounds - len(codes))
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


def _general(state: HandState, seat: int) -> list[float]:
    game = state.game
    bb = float(game.big_blind or 1)
    n = game.num_players
    pot = float(state.pot)
    owed = float(state.to_call(seat))
    pots = (*state.round_pots, pot)
    bets = [(pots[r + 1] - pots[r]) / bb if r <= state.round else 0.0
            for r in range(game.num_rounds)]
    row = [float(state.round), float((seat - game.first_player[min(1, game.num_rounds - 1)]) % n),
           float(n - sum(state.folded)), pot / bb, owed / bb, owed / (pot + owed)]
    if not game.is_limit:
        behind = [state.stack[p] - state.spent[p] for p in range(n)]
        others = max(behind[p] for p in range(n) if p != seat and not state.folded[p])
        row += [behind[seat] / bb, min(behind[seat], others) / pot]
    row += bets
    row += [float(state.round_raises), float(sum(state.raises)),
            1.0 if state.aggressor == seat else 0.0]
    return row + [float("nan")] * len(pv_names(game))


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
    """Feature vectors for many (state, seat) pairs of one game, with the equities computed
    in one batch."""
    rows: NDArray[np.float32] = np.array(
        [public_features(s, p) for s, p in zip(states, seats, strict=True)], dtype=np.float32
    ).reshape(len(states), -1)
    if not states:
        return rows
    game = states[0].game
    if not pv:
        return np.delete(rows, pv_columns(game), axis=1)
    return fill_pv(rows, [pv_request(s, p) for s, p in zip(states, seats, strict=True)], game)


def fill_pv(
    rows: NDArray[np.float32], requests: Sequence[tuple[tuple[int, int], tuple[int, ...]]],
    game: GameDef,
) -> NDArray[np.float32]:
    """Put the equities of ``requests`` (one per row) in ``game``'s pv columns, each kind in
    one batched call."""
    if len(requests):
        columns = pv_columns(game)
        rows[:, columns[0]] = pv_many(requests)
        if len(columns) > 1:
            rows[:, columns[1]] = pv2_many(requests)
    return rows
