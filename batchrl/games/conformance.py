"""The checks every game module must pass (in the spirit of pgx's api_test).

Random playouts: a move is always possible while the game is on, the same seed
gives the same game, and the returns of a zero-sum game add up to zero.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def check_game(
    new_game: Callable[[np.random.Generator], Any],
    legal_actions: Callable[[Any], Sequence[int]],
    step: Callable[[Any, int], Any],
    is_terminal: Callable[[Any], bool],
    returns: Callable[[Any], Sequence[float]],
    zero_sum: bool,
    playouts: int = 100,
    seed: int = 0,
    max_steps: int = 10_000,
) -> None:
    """Raise AssertionError on the first playout that breaks a rule of the game API."""
    for k in range(playouts):
        finals = [_playout(new_game, legal_actions, step, is_terminal, seed + k, max_steps)
                  for _ in range(2)]
        assert finals[0] == finals[1], f"playout {k}: the same seed gave two different games"
        if zero_sum:
            total = sum(returns(finals[0]))
            assert abs(total) < 1e-9, f"playout {k}: returns add up to {total}, not 0"


def _playout(
    new_game: Callable[[np.random.Generator], Any],
    legal_actions: Callable[[Any], Sequence[int]],
    step: Callable[[Any, int], Any],
    is_terminal: Callable[[Any], bool],
    seed: int,
    max_steps: int,
) -> Any:
    rng = np.random.default_rng(seed)
    state = new_game(rng)
    for _ in range(max_steps):
        if is_terminal(state):
            return state
        legal = legal_actions(state)
        assert legal, "no legal action while the game is not over"
        state = step(state, int(rng.choice(legal)))
    raise AssertionError(f"no end after {max_steps} steps")
