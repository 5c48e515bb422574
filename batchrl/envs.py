"""Every registered game as a PettingZoo AEC environment, and one seat of it as a
Gymnasium environment: built from the `batchrl.games.Game` protocol once, for any game.

Observations are the store's features from the acting player's view (what
``game.rules.encode`` gives, named ``game.rules.feature_names(params)``) with an ``action_mask``
(the legal actions, ``game.legal_mask``); rewards are the game's per-decision rewards
(``game.rules.rewards``); seeds go through ``reset(seed=...)``, the same seed giving the same
game. pettingzoo and gymnasium are the ``envs`` extra (``pip install -e '.[envs]'``),
imported only here.

>>> env = make("sette-mezzo")                                   # doctest: +SKIP
>>> env.reset(seed=1)                                           # doctest: +SKIP
>>> observation, reward, terminated, truncated, info = env.last()  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from batchrl.games import Game, get_game, legal_mask
from batchrl.games.play import make_player


def _libraries() -> tuple[Any, Any]:
    try:
        import gymnasium  # the envs extra, loaded only for an environment
        import pettingzoo  # the envs extra
    except ImportError:
        raise ImportError("batchrl.env needs pettingzoo and gymnasium: pip install -e "
                          "'.[envs]'") from None
    return pettingzoo, gymnasium


def make(name: str, opponents: Sequence[str] | None = None, seat: int = 0,
         render_mode: str | None = None, illegal_reward: float | None = -1.0,
         gym: bool = False, **params: Any) -> Any:
    """The game ``name`` with ``params`` as a PettingZoo AEC environment (an illegal
    action raises, as the rules do); with ``opponents`` (a named player for each other
    seat: ``random``, ``model:PATH``), a Gymnasium environment for ``seat``. A one-player
    game (sette e mezzo) has no opponents to name: ``gym=True`` (or ``opponents=[]``)
    gives its Gymnasium environment.

    In the Gymnasium environment an illegal action ends the episode with
    ``illegal_reward`` and ``info["illegal_action"]`` (PettingZoo's classic games end
    so too): agents that sample the action space unmasked get a signal, not a crash.
    ``illegal_reward=None`` raises instead."""
    game = get_game(name)
    chosen = game.rules.params(**params)
    if gym and opponents is None:
        seats = game.rules.num_players(chosen)
        if seats > 1:
            raise ValueError(f"{name} has {seats} seats: name the other {seats - 1} "
                             f"players for its Gymnasium environment (opponents=[...])")
        opponents = []
    if opponents is None:
        return _aec_class()(game, chosen, render_mode)
    return _seat_class()(game, chosen, tuple(opponents), seat, render_mode, illegal_reward)


def _spaces(game: Game, params: Any) -> tuple[Any, Any]:
    _, gymnasium = _libraries()
    spaces = gymnasium.spaces
    features, actions = len(game.rules.feature_names(params)), len(game.rules.action_names(params))
    observation = spaces.Dict({
        "observation": spaces.Box(-np.inf, np.inf, (features,), np.float32),
        "action_mask": spaces.Box(0, 1, (actions,), np.int8)})
    return observation, spaces.Discrete(actions)


def _observe(game: Game, params: Any, state: Any, seat: int, acting: bool
             ) -> dict[str, np.ndarray]:
    """The seat's view: its features and, when it is to act, the legal actions."""
    rules = game.rules
    n_features, n_actions = len(rules.feature_names(params)), len(rules.action_names(params))
    if rules.is_terminal(state):  # nothing left to see or do
        return {"observation": np.zeros(n_features, np.float32),
                "action_mask": np.zeros(n_actions, np.int8)}
    mask = legal_mask(rules, state, params) if acting else np.zeros(n_actions, bool)
    return {"observation": np.asarray(rules.encode(state, seat, params), dtype=np.float32),
            "action_mask": mask.astype(np.int8)}


_CLASSES: dict[str, type] = {}


def _aec_class() -> type:
    """The AEC environment class (made once pettingzoo is imported)."""
    if "aec" in _CLASSES:
        return _CLASSES["aec"]
    pettingzoo, _ = _libraries()

    class GameEnv(pettingzoo.AECEnv):  # type: ignore[misc, name-defined]
        """A registered game in PettingZoo's agent-environment-cycle API; agents
        ``player_0`` .. are the seats."""

        metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "is_parallelizable": False}

        def __init__(self, game: Game, params: Any, render_mode: str | None = None) -> None:
            super().__init__()
            self.game, self.params, self.render_mode = game, params, render_mode
            self.metadata = {**GameEnv.metadata, "name": f"batchrl_{game.name}"}  # type: ignore[misc]
            self.possible_agents = [f"player_{i}" for i in range(game.rules.num_players(params))]
            observation, action = _spaces(game, params)
            self.reward_unit = game.log.reward_unit(params)  # as the seat env's
            self.reward_scale = dict(game.log.reward_scale(params))
            self.observation_spaces = dict.fromkeys(self.possible_agents, observation)
            self.action_spaces = dict.fromkeys(self.possible_agents, action)
            self._rng = np.random.default_rng()
            self._state: Any = None

        def observation_space(self, agent: str) -> Any:
            return self.observation_spaces[agent]

        def action_space(self, agent: str) -> Any:
            return self.action_spaces[agent]

        def reset(self, seed: int | None = None, options: dict[str, Any] | None = None
                  ) -> None:
            if seed is not None:
                self._rng = np.random.default_rng(seed)
            self._state = self.game.rules.new_game(self._rng, self.params)
            self.agents = self.possible_agents[:]
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
            self.terminations = dict.fromkeys(self.agents, False)
            self.truncations = dict.fromkeys(self.agents, False)
            self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
            self._select()

        def _select(self) -> None:
            if self.game.rules.is_terminal(self._state):
                self.terminations = dict.fromkeys(self.agents, True)
                self.agent_selection = self.agents[0]
            else:
                self.agent_selection = self.possible_agents[
                    self.game.rules.current_player(self._state)]

        def observe(self, agent: str) -> dict[str, np.ndarray]:
            seat = self.possible_agents.index(agent)
            acting = not self.game.rules.is_terminal(self._state) and \
                self.game.rules.current_player(self._state) == seat
            return _observe(self.game, self.params, self._state, seat, acting)

        def step(self, action: Any) -> None:
            if self._state is None:
                raise RuntimeError(f"{self.game.name}: call reset() before step()")
            if not self.agents:
                raise RuntimeError(f"{self.game.name}: the game is over and every agent is "
                                   "done: call reset() to play another")
            agent = self.agent_selection
            if self.terminations[agent] or self.truncations[agent]:
                self._was_dead_step(action)
                return
            chosen = action_index(action, len(self.game.rules.action_names(self.params)))
            self._cumulative_rewards[agent] = 0.0
            before = self._state
            self._state = self.game.rules.step(before, chosen)
            earned = self.game.rules.rewards(before, self._state)
            self._clear_rewards()
            if earned is not None:
                for seat, value in enumerate(earned):
                    name = self.possible_agents[seat]
                    if name in self.rewards:
                        self.rewards[name] = float(value)
            self._select()
            self._accumulate_rewards()

        def render(self) -> str | None:
            if self.render_mode != "ansi":
                return None
            return repr(self._state)

        def close(self) -> None:
            pass

    _CLASSES["aec"] = GameEnv
    return GameEnv


def _seat_class() -> type:
    """The Gymnasium environment class (made once gymnasium is imported)."""
    if "seat" in _CLASSES:
        return _CLASSES["seat"]
    _, gymnasium = _libraries()

    class SeatEnv(gymnasium.Env):  # type: ignore[misc, name-defined]
        """One seat of a registered game, the others played by named players; the reward
        is the seat's from its action up to its next decision."""

        metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"]}
        MAX_DEALS = 10_000  # games dealt in one reset before it gives up

        def __init__(self, game: Game, params: Any, opponents: tuple[str, ...], seat: int,
                     render_mode: str | None = None, illegal_reward: float | None = -1.0
                     ) -> None:
            n = game.rules.num_players(params)
            if len(opponents) != n - 1 or not 0 <= seat < n:
                raise ValueError(f"{game.name} with {n} seats: give {n - 1} opponents and a "
                                 f"seat from 0 to {n - 1}, not {len(opponents)} and {seat}")
            self.game, self.params, self.opponents, self.seat = game, params, opponents, seat
            self.render_mode, self.illegal_reward = render_mode, illegal_reward
            self.observation_space, self.action_space = _spaces(game, params)
            # what a reward counts, in words and as numbers (hold'em: chips, and
            # reward_scale["big_blind"] of them a big blind)
            self.reward_unit = game.log.reward_unit(params)
            self.reward_scale = dict(game.log.reward_scale(params))
            self._state: Any = None
            self._players: list[Any] = []
            self._over = True  # until reset

        def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
                  ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
            super().reset(seed=seed)
            streams = self.np_random.spawn(len(self.opponents) + 1)
            self._players = [make_player(self.game, spec, self.params, rng)
                             for spec, rng in zip(self.opponents, streams[1:], strict=True)]
            # A game that ends before this seat decides (a hold'em hand the small blind
            # folds) is no episode: it is dealt again, and what the seat won or lost in
            # those games is in the info, so that the chips add up.
            skipped, lost = 0, 0.0
            for _ in range(self.MAX_DEALS):
                self._state = self.game.rules.new_game(streams[0], self.params)
                reward = self._others()
                if not self.game.rules.is_terminal(self._state):
                    break
                skipped, lost = skipped + 1, lost + reward
            else:
                raise RuntimeError(f"{self.game.name}: seat {self.seat} had no decision in "
                                   f"{self.MAX_DEALS} games against {self.opponents}")
            self._over = False
            return self._observation(), {"reward_before_first_decision": reward,
                                         "games_without_a_decision": skipped,
                                         "reward_of_games_without_a_decision": lost}

        def _others(self) -> float:
            """Play the other seats until this one is to act or the game is over; what
            this seat earned meanwhile."""
            earned = 0.0
            while not self.game.rules.is_terminal(self._state):
                to_act = self.game.rules.current_player(self._state)
                if to_act == self.seat:
                    break
                player = self._players[to_act - (to_act > self.seat)]
                action = int(player.act([self._state], [to_act])[0])
                earned += self._step(action)
            return earned

        def _step(self, action: int) -> float:
            before = self._state
            self._state = self.game.rules.step(before, action)
            got = self.game.rules.rewards(before, self._state)
            return 0.0 if got is None else float(got[self.seat])

        def _observation(self) -> dict[str, np.ndarray]:
            return _observe(self.game, self.params, self._state, self.seat,
                            not self.game.rules.is_terminal(self._state))

        def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool,
                                              dict[str, Any]]:
            if self._state is None:
                raise RuntimeError(f"{self.game.name}: call reset() before step()")
            if self._over:
                raise RuntimeError(f"{self.game.name}: the episode is over: call reset() "
                                   "to play another")
            chosen = action_index(action, len(self.game.rules.action_names(self.params)))
            if self.illegal_reward is not None and \
                    chosen not in self.game.rules.legal_actions(self._state):
                self._over = True
                return (_observe(self.game, self.params, self._state, self.seat, False),
                        float(self.illegal_reward), True, False,
                        {"illegal_action": chosen})
            reward = self._step(chosen)
            reward += self._others()
            self._over = bool(self.game.rules.is_terminal(self._state))
            return (self._observation(), reward, self._over, False, {})

        def render(self) -> str | None:
            return repr(self._state) if self.render_mode == "ansi" else None

    _CLASSES["seat"] = SeatEnv
    return SeatEnv


def action_index(action: Any, n: int) -> int:
    """``action`` as an action index: a Python or numpy integer (a 0-d integer array too)
    from 0 to ``n - 1``; anything else (a float, a bool, a string, None, an array of
    several) is a ValueError naming it, never taken as the action it rounds to.

    >>> action_index(np.int64(2), 3), action_index(np.array(1), 3)
    (2, 1)
    >>> action_index(1.7, 3)
    Traceback (most recent call last):
    ...
    ValueError: action 1.7 (a float): want a whole number from 0 to 2
    """
    value = action.item() if isinstance(action, np.ndarray) and action.shape == () else action
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) \
            and 0 <= int(value) < n:
        return int(value)
    shown = repr(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    raise ValueError(f"action {shown} (a {type(value).__name__}): want a whole number from 0 "
                     f"to {n - 1}")
