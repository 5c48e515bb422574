"""Logged games to store rows: one row per decision of the player.

The reward models (``REWARDS``): a hit that does not bust earns 0, a hit that busts -1,
and a stick, with ``"result"``, the game's result (+1, 0, -1), so that a game's rewards
add up to its logged reward; with ``"expected"``, as the seed's solver rewards a stick,
the result's expectation over the opponent's draws given what the player knows (its
cards and the up card), exact from the rules: the stick's reward then carries none of the
draws' noise. The
next state is the player's next decision (zeros, with an all-False mask, after the last).

The won game's stick at 3.5 against an up 3 earns +1 as logged, and its expectation,
+0.099, as the seed's model has it:

>>> from batchrl.games.sette_mezzo.logs import Game
>>> game = Game(7, 5.0, player=(3, 0), opponent=(3, 1, 7), actions=(1, 0), reward=1.0)
>>> cols = rows([Logged(game)], "0123456789abcdef:")
>>> cols["reward"].tolist(), cols["terminal"].tolist(), cols["cards"][0]
([0.0, 1.0], [False, True], '3F|317')
>>> rows([Logged(game)], "0123456789abcdef:", "expected")["reward"].round(3).tolist()
[0.0, 0.099]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from batchrl.games.sette_mezzo.logs import Game
from batchrl.games.sette_mezzo.rules import (
    ACTION_NAMES,
    FEATURE_NAMES,
    REWARDS,
    STICK,
    cards_str,
    encode,
    legal_mask,
    limit_halves,
    returns,
)
from batchrl.games.sette_mezzo.tree import stick_values
from batchrl.store import StoreSchema

GAME_NAME = "sette-mezzo"
AUDIT_COLUMNS = ("cards",)
class LoggedGameLike(Protocol):
    """What the rows need from a parsed game (``parsers.sette_mezzo.LoggedGame`` has it)."""

    @property
    def line(self) -> int: ...
    @property
    def index(self) -> int: ...
    @property
    def game(self) -> Game: ...


@dataclass(frozen=True, slots=True)
class Logged:
    """A game with the place a log would give it, for games that come from ``play``."""

    game: Game
    index: int = 0
    line: int = 1


def schema(limit: float, reward: str = "result") -> StoreSchema:
    """The store schema of games against an opponent that stops at ``limit``, with the
    reward model ``reward`` (recorded only when it is not the logged result, so the
    stores made before the choice existed take more games)."""
    params: dict[str, Any] = {"limit": float(limit)}
    if reward != "result":
        params["reward"] = reward
    return StoreSchema(game=GAME_NAME, feature_names=FEATURE_NAMES, action_names=ACTION_NAMES,
                       audit_columns=AUDIT_COLUMNS, game_params=params,
                       next_state="following", legal=True)


def rows(games: Sequence[LoggedGameLike], episode_prefix: str,
         reward_model: str = "result") -> dict[str, Any]:
    """Store columns for ``games``; the episode id is ``episode_prefix`` + the game's index.

    Each game is replayed (``logs.ReplayError`` if the rules disagree with it); the
    rewards follow ``reward_model`` (one of ``REWARDS``).
    """
    if reward_model not in REWARDS:
        raise ValueError(f"reward model {reward_model!r}: one of {', '.join(REWARDS)}")
    width = len(FEATURE_NAMES)
    state: list[np.ndarray[Any, Any]] = []
    next_state: list[np.ndarray[Any, Any]] = []
    reward: list[float] = []
    next_legal: list[tuple[bool, bool]] = []
    legal: list[tuple[bool, bool]] = []
    steps: list[int] = []
    per_game: list[int] = []
    for logged in games:
        states = logged.game.replay()
        decisions = len(states) - 1
        per_game.append(decisions)
        features = [encode(s) for s in states[:-1]]
        state += features
        next_state += [*features[1:], np.zeros(width, dtype=np.float32)]
        next_legal += [legal_mask(s) for s in states[1:]]
        legal += [legal_mask(s) for s in states[:-1]]
        reward += [0.0] * (decisions - 1) + [returns(states[-1])]
        steps += range(decisions)
    counts = np.asarray(per_game, dtype=np.int64)
    n = int(counts.sum())
    last = np.zeros(n, dtype=bool)
    last[np.cumsum(counts) - 1] = True
    actions = np.concatenate([np.asarray(g.game.actions, dtype=np.int8) for g in games]
                             or [np.zeros(0, dtype=np.int8)])
    encoded = np.asarray(state, dtype=np.float32).reshape(n, width)
    rewards = np.asarray(reward, dtype=np.float64)
    if reward_model == "expected" and n:
        sticks = np.flatnonzero(actions == STICK)
        halves = np.repeat([limit_halves(g.game.limit) for g in games], counts)[sticks]
        for limit in np.unique(halves):
            at = sticks[halves == limit]
            rewards[at] = stick_values(encoded[at], int(limit))

    def repeat(values: list[Any], dtype: Any) -> np.ndarray[Any, Any]:
        return np.repeat(np.asarray(values, dtype=dtype), counts)

    return {
        "episode": repeat([f"{episode_prefix}{g.index}" for g in games], object),
        "step": np.asarray(steps, dtype=np.int32),
        "player": np.zeros(n, dtype=np.int8),
        "state": encoded,
        "action": actions,
        "reward": rewards,
        "next_state": np.asarray(next_state, dtype=np.float32).reshape(n, width),
        "next_legal": np.asarray(next_legal, dtype=bool).reshape(n, len(ACTION_NAMES)),
        "legal": np.asarray(legal, dtype=bool).reshape(n, len(ACTION_NAMES)),
        "terminal": last,
        "truncated": np.zeros(n, dtype=bool),
        "line": repeat([g.line for g in games], np.int64),
        "cards": repeat([f"{cards_str(g.game.player)}|{cards_str(g.game.opponent)}"
                         for g in games], object),
    }
