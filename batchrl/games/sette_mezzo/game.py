"""Sette e mezzo as ``batchrl.games`` knows it: one player against a dealer that draws to
a limit (``limit``, 5 by default), the game solved exactly.

>>> params = GAME.params()
>>> s = GAME.new_game(np.random.default_rng(0), params)
>>> GAME.current_player(s), GAME.legal_actions(s), GAME.feature_names(params)[:2]
(0, (0, 1), ('total', 'opponent_card'))
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from batchrl.games.base import (
    Dataset,
    Game,
    GameError,
    Option,
    Report,
    Scores,
    SourceContext,
    SourceError,
    SourcePlan,
    single_group,
)
from batchrl.games.sette_mezzo import rules, transitions
from batchrl.records import RejectedRecord
from batchrl.store import Rows, RowsBatch, StoreSchema

if TYPE_CHECKING:
    from batchrl.blocks import Tasks


@dataclass(frozen=True)
class SetteMezzoParams:
    """The opponent draws until its total reaches ``limit`` (a multiple of 0.5); a store's
    stick earns ``reward``: the game's ``"result"`` or its ``"expected"`` value."""

    limit: float = rules.DEFAULT_LIMIT
    reward: str = "result"

    def __post_init__(self) -> None:
        rules.limit_halves(self.limit)  # a ValueError names what is wrong
        object.__setattr__(self, "limit", float(self.limit))
        if self.reward not in transitions.REWARDS:
            raise ValueError(f"the reward is one of {', '.join(transitions.REWARDS)}, not "
                             f"{self.reward!r}")


class SetteMezzo(Game):
    name = "sette-mezzo"
    title = "Sette e mezzo against a dealer that draws to a limit"
    player_counts = (1,)
    zero_sum = False
    unit = "games"
    Params = SetteMezzoParams
    # the two features the optimum depends on (but for one cell): on 100,000 random
    # games, M=100 n_min=20 N=11 on them reach the optimum within 0.0012 (docs/games/sette-mezzo.md)
    recommended: ClassVar[Mapping[str, Any]] = {
        "fqi": {"features": ("total", "opponent_card")},
        "bc": {"features": ("total", "opponent_card")}}
    options = (Option("limit", {"generate": "--limit", "evaluate": "--limit",
                                "solve": "--limit"}, type=float,
                      help="the opponent draws until its total reaches this [default: 5; "
                           "evaluate: the limit the model's data was played at]."),
               Option("reward", {"ingest": "--reward"}, choices=transitions.REWARDS,
                      help="what a stick earns in the store: the game's "
                           "result as logged, or its expectation over the opponent's draws "
                           "given the player's cards and the up card, exact from the rules "
                           "(the seed's reward; the learner then sees none of the draws' "
                           "noise). [default: result]"))
    bots = ("random", "optimal")
    default_players = ("random",)
    default_count = 100_000
    log_formats = ("sette-mezzo",)
    # scored exactly (through the game tree): the reference is the optimum itself; the
    # stick's expected reward takes the dealer's draws' noise out of the data
    # (docs/games/sette-mezzo.md)
    datasets = (Dataset("random", ("random",), 100_000, 0, 3_000, {"reward": "expected"}),
                Dataset("expert", ("optimal",), 100_000, 1, 3_000, {"reward": "expected"}))
    reference = "optimal"
    bench_games = (1, 1)
    examples: ClassVar[Mapping[str, str]] = {
        "generate": "one player against the dealer:\n"
                    "  batchrl generate --game sette-mezzo --games 100000 --policy random \\\n"
                    "      -o random.jsonl",
        "evaluate": "exact, no sampling: the policy's expected reward per game, the optimal\n"
                    "one, the gap, and the share of decisions where it plays the optimal\n"
                    "action, weighted by how often it reaches each state.",
    }

    def action_names(self, params: Any) -> tuple[str, ...]:
        return rules.ACTION_NAMES

    def reward_unit(self, params: Any) -> str:
        if params.reward == "expected":
            return ("stakes: a stick earns the game's expected result (+1 won, 0 tied, -1 "
                    "lost) over the opponent's draws, given the player's cards and the up "
                    "card; a hit that busts -1, any other hit 0")
        return ("stakes: a stick earns the game's result (+1 won, 0 tied, -1 lost), a hit "
                "that busts -1, any other hit 0; a game's rewards add up to its result")

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

    def check_model_params(self, path: str | Path, trained: Any, playing: Any) -> None:
        """Any limit: the features do not depend on it (a model may be played at another
        limit than its data's)."""

    # ---- store side ----------------------------------------------------------------

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
        params = self.params(limit=limit, reward=reward)
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

        return SourcePlan(self.schema(params), _chain(pending, records),
                          rows, unit=self.unit)

    # ---- play side -----------------------------------------------------------------

    def bot(self, name: str, params: SetteMezzoParams, rng: np.random.Generator) -> Any:
        """``random`` (hit or stick, 50/50) or ``optimal`` (the exact solution)."""
        from batchrl.games.play import OneAtATime
        from batchrl.games.sette_mezzo.solver import solve

        if name == "optimal":
            return OneAtATime(name, solve(params.limit).act)
        return OneAtATime(name, lambda state: int(rng.integers(2)))

    def generate(self, out: Path, players: Sequence[str], count: int, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None) -> str:
        from batchrl.games.sette_mezzo.logs import play, write_log

        if len(players) != 1:
            raise GameError(f"sette e mezzo has one player, not {len(players)}: random, "
                            "optimal or a model file")
        limit = self.params(**{k: v for k, v in options.items() if k == "limit"}).limit
        chooser: Any = players[0]
        if chooser not in self.bots:
            chooser = self.load_model(chooser.removeprefix("model:")).act_batch
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
        from batchrl.games.sette_mezzo.evaluate import ModelReport, evaluate_model

        group = single_group(self, groups)
        if len(group) != 1:
            raise GameError("sette e mezzo evaluates one model exactly: give --model PATH")
        path = group[0].removeprefix("model:")
        model = self.load_model(path)
        limit = options.get("limit", model.params.limit)
        return ModelReport(path, evaluate_model(model, self.params(limit=limit).limit))

    ablation_opponents = ()

    def score_count(self, count: int, params: Any) -> str | None:
        return None  # exact: no game is played

    def score(self, players: Sequence[str], count: int, seed: int,
              options: Mapping[str, Any],
              progress: Callable[[int], None] | None = None, params: Any = None) -> Scores:
        """A player's exact expected stake per game (its policy through the game tree):
        one value, no sampling. The player is a model, ``random`` (a fair coin in every
        state) or ``optimal``."""
        from batchrl.games.sette_mezzo.evaluate import evaluate_model
        from batchrl.games.sette_mezzo.solver import random_value, solve

        if len(players) != 1:
            raise GameError("sette e mezzo scores one player, alone against the dealer")
        if players[0] in self.bots:
            limit = self.params(**({"limit": params.limit} if params is not None else
                                   {k: v for k, v in options.items() if k == "limit"})).limit
            worth = solve(limit).expected_reward if players[0] == "optimal" else \
                random_value(limit)
        else:
            model = self.load_model(players[0].removeprefix("model:"))
            limit = params.limit if params is not None else \
                options.get("limit", model.params.limit)
            worth = evaluate_model(model, self.params(limit=limit).limit).expected_reward
        return Scores(np.array([worth], dtype=np.float64), "expected_stake",
                      "expected stake per game", exact=True)

    def solve(self, options: Mapping[str, Any]) -> Report:
        from batchrl.games.sette_mezzo.evaluate import SolutionReport
        from batchrl.games.sette_mezzo.solver import solve

        return SolutionReport(solve(self.params(**options).limit))


def _chain(first: list[Any], rest: Iterator[Any]) -> Iterator[Any]:
    yield from first
    yield from rest


GAME = SetteMezzo()
