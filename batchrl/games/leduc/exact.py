"""Exact values in Leduc hold'em: any two fixed policies' expected returns, a best
response to any fixed policy and its value, and exploitability, all by walking the game
tree (120 deals; 936 information sets, 288 up to suits, which no player here tells apart).

A policy is a `Strategy`: the probability of each move at each information set of its
seat, keyed by ``(own rank, public rank or -1, betting history)``. `strategy` makes one of
any player batchrl plays (``random``: uniform over the legal moves; a bot or a model:
the move it picks, asked once for every information set in one batch).

>>> uniform = strategy("random", 0), strategy("random", 1)
>>> round(nash_conv(uniform), 4)  # OpenSpiel's NashConv of the uniform random policy
4.7472
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from itertools import permutations
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games.leduc.rules import (
    N_CARDS,
    LeducState,
    current_player,
    histories,
    is_terminal,
    legal_actions,
    returns,
    round_of,
    step,
)

Key = tuple[int, int, str]  # (own rank, public rank or -1, history)
Strategy = Mapping[Key, NDArray[np.float64]]
# a player of a batch of states: the move each state's player to act picks
Chooser = Callable[[Sequence[Any], Sequence[int]], Any]


@lru_cache(maxsize=1)
def infosets() -> tuple[tuple[Key, LeducState], ...]:
    """Every information set a seat can be in, up to suits, with a state that is in it
    (a representative: the seat's view of it is the set's): 144 a seat."""
    out = []
    for h in histories():
        seat = current_player(LeducState((0, 2, 4), h))
        for own in range(3):
            publics = range(3) if round_of(h) else (-1,)
            for public in publics:
                mine = 2 * own
                board = (2 * public + (1 if public == own else 0)) if public >= 0 else None
                taken = {mine, *(() if board is None else (board,))}
                free = [c for c in range(N_CARDS) if c not in taken]
                other, board = free[0], board if board is not None else free[1]
                cards = (mine, other, board) if seat == 0 else (other, mine, board)
                out.append(((own, public, h), LeducState(cards, h)))
    return tuple(out)


def strategy(player: str | Chooser, seat: int) -> dict[Key, NDArray[np.float64]]:
    """The strategy of ``player`` in ``seat``: ``random`` (uniform over the legal moves),
    or a chooser (a `batchrl.games.play.Player`'s ``act``) asked once for every
    information set of the seat: a deterministic player's strategy (a learned model's
    greedy play, a bot); one that draws its moves is scored by one draw at each set."""
    sets = [(k, s) for k, s in infosets() if current_player(s) == seat]
    out: dict[Key, NDArray[np.float64]] = {}
    if player == "random":
        for key, state in sets:
            probs = np.zeros(3)
            probs[list(legal_actions(state))] = 1.0 / len(legal_actions(state))
            out[key] = probs
        return out
    assert callable(player)
    picked = player([s for _, s in sets], [seat] * len(sets))
    for (key, state), move in zip(sets, picked, strict=True):
        if int(move) not in legal_actions(state):
            raise ValueError(f"the player chose {int(move)}, not a legal move, after "
                             f"{state.history!r}")
        out[key] = np.eye(3)[int(move)]
    return out


def _key(state: LeducState, seat: int) -> Key:
    public = state.cards[2] // 2 if round_of(state.history) else -1
    return state.cards[seat] // 2, public, state.history


def expected_returns(first: Strategy, second: Strategy) -> float:
    """Seat 0's exact expected return when seat 0 plays ``first`` and seat 1 ``second``
    (seat 1's is its negative)."""
    both = (first, second)

    def walk(state: LeducState) -> float:
        if is_terminal(state):
            return returns(state)[0]
        seat = current_player(state)
        probs = both[seat][_key(state, seat)]
        return sum(float(probs[a]) * walk(step(state, a)) for a in legal_actions(state)
                   if probs[a] > 0)

    deals = list(permutations(range(N_CARDS), 3))
    return sum(walk(LeducState(d)) for d in deals) / len(deals)


def best_response(seat: int, other: Strategy) -> tuple[float, dict[Key, int]]:
    """The best response of ``seat`` to the other seat's ``other``: its exact expected
    return, and its move at each of its information sets (the first best one)."""
    moves: dict[Key, int] = {}
    total = 0.0
    for mine in range(N_CARDS):
        weights = {o: 1.0 / (N_CARDS * (N_CARDS - 1)) for o in range(N_CARDS) if o != mine}
        total += _br(seat, other, mine, "", None, weights, moves)
    return total, moves


def _br(seat: int, other: Strategy, mine: int, history: str, public: int | None,
        weights: dict[int, float], moves: dict[Key, int]) -> float:
    """The best response's value below ``history``: the sum over the opponent's cards of
    their weight (chance and the opponent's reach) times the return."""
    if round_of(history) == 1 and public is None:  # the public card is turned
        total = 0.0
        for board in range(N_CARDS):
            if board == mine:
                continue
            w = {o: p / (N_CARDS - 2) for o, p in weights.items() if o != board}
            total += _br(seat, other, mine, history, board, w, moves)
        return total
    s = LeducState((0, 2, 4), history)  # whose turn and what is legal: the betting's alone
    if is_terminal(s):
        board = public if public is not None else mine  # a fold: no card is looked at
        return sum(p * returns(LeducState((mine, o, board) if seat == 0 else (o, mine, board),
                                          history))[seat] for o, p in weights.items())
    legal = legal_actions(s)
    if current_player(s) == seat:
        values = [_br(seat, other, mine, step(s, a).history, public, weights, moves)
                  for a in legal]
        best = int(np.argmax(values))
        moves[(mine // 2, -1 if public is None else public // 2, history)] = legal[best]
        return values[best]
    total = 0.0
    for a in legal:
        w = {o: p * float(other[(o // 2, -1 if public is None else public // 2, history)][a])
             for o, p in weights.items()}
        if any(v > 0 for v in w.values()):
            total += _br(seat, other, mine, step(s, a).history, public, w, moves)
    return total


def nash_conv(profile: tuple[Strategy, Strategy]) -> float:
    """The sum of what each seat's best response gains over the profile (0 at a Nash
    equilibrium); exploitability is half of it."""
    first, second = profile
    value = expected_returns(first, second)
    return best_response(0, second)[0] - value + best_response(1, first)[0] + value


def pure(moves: Mapping[Key, int]) -> dict[Key, NDArray[np.float64]]:
    """A strategy that plays ``moves`` (a best response's) for sure."""
    return {k: np.eye(3)[m] for k, m in moves.items()}


def describe(strategy_: Strategy) -> dict[str, Any]:
    """A strategy as JSON: each information set's probabilities."""
    return {f"{k[0]}|{k[1]}|{k[2]}": [round(float(p), 6) for p in v]
            for k, v in strategy_.items()}
