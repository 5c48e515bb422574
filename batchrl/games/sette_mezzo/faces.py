"""Sette e mezzo's faces beside its rules core: its logs into store rows (`SetteMezzoLog`) and
its players, logs written and exact scores (`SetteMezzoPlay`): every score is exact, through
the game tree."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from batchrl.games.base import (
    GameError,
    Report,
    Scores,
    SourceContext,
    SourceError,
    SourcePlan,
    single_group,
)
from batchrl.games.sette_mezzo import transitions
from batchrl.records import RejectedRecord
from batchrl.store import Rows, RowsBatch, StoreSchema

if TYPE_CHECKING:
    from batchrl.blocks import Tasks
from batchrl.games.base import (
    LogFace,
    PlayFace,
)
from batchrl.games.play import OneAtATime
from batchrl.games.sette_mezzo.evaluate import ModelReport, SolutionReport, evaluate_model
from batchrl.games.sette_mezzo.game import SetteMezzoParams
from batchrl.games.sette_mezzo.logs import play, write_log
from batchrl.games.sette_mezzo.solver import random_value, solve


class SetteMezzoLog(LogFace):
    """Logged games into rows, one store per opponent limit (read off the first game)."""

    def reward_unit(self, params: Any) -> str:
        if params.reward == "expected":
            return ("stakes: a stick earns the game's expected result (+1 won, 0 tied, -1 "
                    "lost) over the opponent's draws, given the player's cards and the up "
                    "card; a hit that busts -1, any other hit 0")
        return ("stakes: a stick earns the game's result (+1 won, 0 tied, -1 lost), a hit "
                "that busts -1, any other hit 0; a game's rewards add up to its result")


    def schema(self, params: SetteMezzoParams) -> StoreSchema:
        return transitions.schema(params.limit, params.reward)

    def open_source(self, records: Iterator[Any], context: SourceContext) -> SourcePlan:
        """One store per opponent limit, read off the source's first game."""
        pending: list[Any] = []
        limit = None
        for record in records:
            pending.append(record)
            if hasattr(record, "game"):
                limit = record.game.limit
                break
        if limit is None:
            raise SourceError(f"{context.path}: no game to ingest")
        reward = context.options.get("reward") or "result"
        params = self.rules.params(limit=limit, reward=reward)
        context.notes.append(f"the opponent draws to {limit:g}"
                             + ("; a stick earns its expected result" if reward == "expected"
                                else ""))
        prefix = context.prefix

        def rows(chunk: list[Any]) -> RowsBatch:
            same = [g for g in chunk if g.game.limit == limit]
            rejected = [(g, RejectedRecord(f"the opponent's limit is {g.game.limit:g}, not "
                                           f"{limit:g} as in the file's first game: a store "
                                           "holds one limit", "another limit"))
                        for g in chunk if g.game.limit != limit]
            return RowsBatch(Rows.from_columns(transitions.rows(same, prefix, reward)),
                             len(same), rejected)

        return SourcePlan(self.schema(params), chain(pending, records),
                          rows, unit=self.rules.unit)


class SetteMezzoPlay(PlayFace):
    """One player against the dealer: the optimal and random players, logs written, every
    score exact through the game tree."""

    bots = ("random", "optimal")
    default_players = ("random",)
    default_count = 100_000
    log_formats = ("sette-mezzo",)

    def check_model_params(self, path: str | Path, trained: Any, playing: Any) -> Any:
        """Any limit: the features do not depend on it (a model may be played at another
        limit than its data's)."""
        return playing


    def bot(self, name: str, params: SetteMezzoParams, rng: np.random.Generator) -> Any:
        """``random`` (hit or stick, 50/50) or ``optimal`` (the exact solution)."""
        if name == "optimal":
            return OneAtATime(name, solve(params.limit).act)
        return OneAtATime(name, lambda state: int(rng.integers(2)))

    def generate(self, out: Path, players: Sequence[str], count: int, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None) -> str:
        if len(players) != 1:
            raise GameError(f"sette e mezzo has one player, not {len(players)}: random, "
                            "optimal or a model file")
        limit = self.rules.params(**{k: v for k, v in options.items() if k == "limit"}).limit
        chooser: Any = players[0]
        if chooser not in self.bots:
            chooser = self.game.load_model(chooser.removeprefix("model:")).act_batch
        written = write_log(out, play(chooser, count, np.random.default_rng(seed), limit))
        if progress is not None:
            progress(count)
        return f"{written:,} games written to {out}"

    def evaluate(self, groups: Sequence[Sequence[str]], count: int | None, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None,
                 tasks: Tasks | None = None) -> Report:
        """Exact: the model's greedy policy through the game tree, no sampling (one walk,
        made here: ``tasks`` has nothing to share out)."""
        group = single_group(self.game, groups)
        if len(group) != 1:
            raise GameError("sette e mezzo evaluates one model exactly: give --model PATH")
        path = group[0].removeprefix("model:")
        model = self.game.load_model(path)
        limit = options.get("limit", model.params.limit)
        return ModelReport(path, evaluate_model(model, self.rules.params(limit=limit).limit))

    ablation_opponents = ()

    def return_of_score(self, params: Any) -> tuple[float, float]:
        return 1.0, 0.0  # stakes a game (the expected-result reward has the same mean)

    def score_count(self, count: int, params: Any) -> str | None:
        return None  # exact: no game is played

    def score(self, players: Sequence[str], count: int, seed: int,
              options: Mapping[str, Any],
              progress: Callable[[int], None] | None = None, params: Any = None) -> Scores:
        """A player's exact expected stake per game (its policy through the game tree):
        one value, no sampling. The player is a model, ``random`` (a fair coin in every
        state) or ``optimal``."""
        if len(players) != 1:
            raise GameError("sette e mezzo scores one player, alone against the dealer")
        if players[0] in self.bots:
            limit = self.rules.params(**({"limit": params.limit} if params is not None else
                                   {k: v for k, v in options.items() if k == "limit"})).limit
            worth = solve(limit).expected_reward if players[0] == "optimal" else \
                random_value(limit)
        else:
            model = self.game.load_model(players[0].removeprefix("model:"))
            limit = params.limit if params is not None else \
                options.get("limit", model.params.limit)
            worth = evaluate_model(model, self.rules.params(limit=limit).limit).expected_reward
        return Scores(np.array([worth], dtype=np.float64), "expected_stake",
                      "expected stake per game", exact=True)

    def solve(self, options: Mapping[str, Any]) -> Report:
        return SolutionReport(solve(self.rules.params(**options).limit))
