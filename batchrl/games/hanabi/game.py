"""Hanabi's rules core (`batchrl.games.Rules`): cooperative, 2 to 5 players, the report's
state; its faces are in ``faces``.

Every seat shares the score, so ``returns`` gives the cards played to all, and each
move's reward is the score it adds. A two-player store's state is the report's 195
numbers and 15 public hint facts (the report's game); with three to five players it is
`batchrl.games.hanabi.observation`'s, the same pieces for every other seat and the last
moves. A store holds one player count (``game_params["players"]``).

>>> params = RULES.params()
>>> s = RULES.new_game(np.random.default_rng(0), params)
>>> RULES.current_player(s), len(RULES.encode(s, 0, params)), RULES.action_names(params)[10]
(0, 210, 'hint_value_1')
>>> three = RULES.params(players=3)
>>> len(RULES.feature_names(three)), RULES.action_names(three)[20]
(357, '+2_hint_value_1')
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from batchrl.games.core import Rules
from batchrl.games.hanabi import knowledge, names, rules
from batchrl.games.hanabi.observation import encode as encode_more
from batchrl.games.hanabi.worlds import sample


@dataclass(frozen=True)
class HanabiParams:
    players: int = 2

    def __post_init__(self) -> None:
        rules.hand_size(self.players)  # a ValueError names the range


class HanabiRules(Rules):
    """Cooperative Hanabi for 2 to 5 players: every seat shares the score."""

    name = "hanabi"
    player_counts = (2, 3, 4, 5)
    zero_sum = False
    teams = ((0, 1, 2, 3, 4),)  # every seat shares the score (a search's partners)
    unit = "games"
    Params = HanabiParams

    def num_players(self, params: HanabiParams) -> int:
        return params.players

    def action_names(self, params: HanabiParams) -> tuple[str, ...]:
        return names.action_names(params.players)

    def feature_names(self, params: HanabiParams) -> tuple[str, ...]:
        return names.feature_names(params.players)

    def new_game(self, rng: np.random.Generator, params: HanabiParams) -> rules.State:
        return rules.new_game(rng, params.players)

    def current_player(self, state: rules.State) -> int:
        return -1 if rules.is_terminal(state) else state.current

    def legal_actions(self, state: rules.State) -> tuple[int, ...]:
        return rules.legal_actions(state)

    def step(self, state: rules.State, action: int) -> rules.State:
        return rules.step(state, action)

    def is_terminal(self, state: rules.State) -> bool:
        return rules.is_terminal(state)

    def returns(self, state: rules.State) -> tuple[float, ...]:
        return rules.returns(state)

    def rewards(self, before: rules.State, after: rules.State) -> tuple[float, ...]:
        """The cards a move plays, for every seat (the store's reward)."""
        return (float(after.score_played - before.score_played),) * after.players

    def sample_worlds(self, state: rules.State, seat: int, n: int,
                      rng: np.random.Generator) -> list[rules.State]:
        """``seat``'s own hand and the deck drawn uniformly among the deals of the cards it
        has not seen that fit every hint it received (`batchrl.games.hanabi.worlds`)."""
        return sample(state, seat, n, rng)

    def encode(self, state: rules.State, player: int, params: HanabiParams
               ) -> NDArray[np.float32]:
        if params.players != 2:
            return encode_more(state, player)
        return np.concatenate([knowledge.encode(state, player),
                               knowledge.hint_features(state, player)]).astype(np.float32)


RULES = HanabiRules()
