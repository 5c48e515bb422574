"""A search player's decisions as the tests compare them: its moves on a batch of states,
every rollout's returns in the order they were played, and the player (its counters),
so two searches that must agree can be held to each other move by move and rollout by
rollout."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from batchrl.games import Game
from batchrl.games.play import make_player
from batchrl.games.search import SearchPlayer


def recorded_search(game: Game, spec: str, params: Any, states: Sequence[Any],
                    seats: Sequence[int], seed: int = 0
                    ) -> tuple[list[int], list[np.ndarray], SearchPlayer]:
    """The moves of the search player ``spec`` (its worlds drawn from ``seed``) on
    ``states``, each rollout's returns, and the player."""
    player = make_player(game, spec, params, np.random.default_rng(seed))
    assert isinstance(player, SearchPlayer), spec
    returns: list[np.ndarray] = []
    rollout = player.rollout

    def recorded(roots: Sequence[Any], searcher: Sequence[int]) -> np.ndarray:
        returns.append(rollout(roots, searcher))
        return returns[-1]

    player.rollout = recorded  # type: ignore[method-assign]
    return player.act(states, seats).tolist(), returns, player
