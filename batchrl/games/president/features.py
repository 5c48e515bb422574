"""President's features: what the seat to act sees, named, for any number of players.

The seed's state (its ``get_torch_state``: the opponents' hand sizes, the set on the
table, the cards already played per rank, the player's own cards per rank) plus what a
player would use: the cards of each rank still held by others, who played the set on the
table, how many passed on it, how many players still hold cards and how many are out
already (the placement the player would take by going out now), the player's own card
count and how many ranks it holds, the smallest opponent hand, and the cards out above
the set on the table. Opponents are counted from the player: ``hand_1`` is the next seat
to the left. Every value is a small integer (the store keeps them as int8).

>>> from batchrl.games.president.rules import Rules, deal
>>> state = deal(np.random.default_rng(1), Rules(players=4))
>>> x = encode(state, state.turn)
>>> names = feature_names(4)
>>> len(x) == len(names), int(x[names.index("hand_2")]), int(x[names.index("own")])
(True, 10, 10)
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numpy.typing import NDArray

from batchrl.games.president.rules import N_SUITS, RANKS, State


@cache
def feature_names(players: int, match: int = 1) -> tuple[str, ...]:
    """The features' names; a match adds the exchange phase, the game's number in the
    match and the player's place in the game before (0 before the first)."""
    return (*(f"own_{r}" for r in RANKS), *(f"played_{r}" for r in RANKS),
            *(f"out_{r}" for r in RANKS), "table_rank", "table_count", "leading",
            *(f"hand_{k}" for k in range(1, players)), "last_offset", "passes",
            "players_in", "placed", "own", "own_ranks", "min_opponent", "higher_out",
            *(("exchange", "game_no", "last_place") if match > 1 else ()))


def encode(state: State, player: int) -> NDArray[np.float32]:
    """``player``'s view of ``state`` (any seat; zeros for its hand once it is out)."""
    n = state.rules.players
    own = state.hands[player]
    played = state.played
    out = [N_SUITS - a - b for a, b in zip(own, played, strict=True)]
    rank, count = state.table
    sizes = [sum(state.hands[(player + k) % n]) for k in range(1, n)]
    holding = [s for s in sizes if s > 0]
    last = (state.last - player) % n if state.last >= 0 else 0
    passes = bin(state.passed).count("1")
    x = [*own, *played, *out, rank + 1, count, int(rank < 0), *sizes, last, passes,
         sum(1 for h in state.hands if any(h)), len(state.order), sum(own),
         sum(1 for c in own if c), min(holding) if holding else 0,
         sum(out[rank + 1:]) if rank >= 0 else sum(out)]
    if state.rules.match > 1:
        last_place = state.results[-1].index(player) + 1 if state.results else 0
        x += [int(state.exchange), state.game_no, last_place]
    return np.asarray(x, dtype=np.float32)

