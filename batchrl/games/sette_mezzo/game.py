"""Sette e mezzo's rules core (`batchrl.games.Rules`): one player against a dealer that
draws to a limit (``limit``, 5 by default).

>>> params = RULES.params()
>>> s = RULES.new_game(np.random.default_rng(0), params)
>>> RULES.current_player(s), RULES.legal_actions(s), RULES.feature_names(params)[:2]
(0, (0, 1), ('total', 'opponent_card'))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games.core import Rules
from batchrl.games.sette_mezzo import rules


@dataclass(frozen=True)
class SetteMezzoParams:
    """The opponent draws until its total reaches ``limit`` (a multiple of 0.5); a store's
    stick earns ``reward``: the game's ``"result"`` or its ``"expected"`` value."""

    limit: float = rules.DEFAULT_LIMIT
    reward: str = "result"

    def __post_init__(self) -> None:
        rules.limit_halves(self.limit)  # a ValueError names what is wrong
        object.__setattr__(self, "limit", float(self.limit))
        if self.reward not in rules.REWARDS:
            raise ValueError(f"the reward is one of {', '.join(rules.REWARDS)}, not "
                             f"{self.reward!r}")


class SetteMezzoRules(Rules):
    """One player against a dealer that draws to ``limit``: hit or stick."""

    name = "sette-mezzo"
    player_counts = (1,)
    zero_sum = False
    unit = "games"
    Params = SetteMezzoParams

    def action_names(self, params: Any) -> tuple[str, ...]:
        return rules.ACTION_NAMES

    def feature_names(self, params: Any) -> tuple[str, ...]:
        return rules.FEATURE_NAMES

    def new_game(self, rng: np.random.Generator, params: SetteMezzoParams) -> rules.GameState:
        return rules.new_game(rng, params.limit)

    def current_player(self, state: rules.GameState) -> int:
        return -1 if rules.is_terminal(state) else 0

    def legal_actions(self, state: rules.GameState) -> tuple[int, ...]:
        return rules.legal_actions(state)

    def step(self, state: rules.GameState, action: int) -> rules.GameState:
        return rules.step(state, action)

    def is_terminal(self, state: rules.GameState) -> bool:
        return rules.is_terminal(state)

    def returns(self, state: rules.GameState) -> tuple[float]:
        return (rules.returns(state),)

    def encode(self, state: rules.GameState, player: int, params: Any) -> NDArray[np.float32]:
        return rules.encode(state)


RULES = SetteMezzoRules()
