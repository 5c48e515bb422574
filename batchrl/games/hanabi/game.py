"""Hanabi as ``batchrl.games`` knows it: cooperative, 2 to 5 players, the report's state.

Every seat shares the score, so ``returns`` gives the cards played to all, and each
move's reward is the score it adds. The store's state is the report's 195 numbers and
15 public hint facts, defined for two players (the report's game); with more players
the rules and the bots play, but ``encode`` refuses.

>>> params = GAME.params()
>>> s = GAME.new_game(np.random.default_rng(0), params)
>>> GAME.current_player(s), len(GAME.encode(s, 0, params)), GAME.action_names(params)[10]
(0, 210, 'hint_value_1')
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
    FQISettings,
    Game,
    GameError,
    Option,
    Scores,
    SourceContext,
    SourceError,
    SourcePlan,
)
from batchrl.games.hanabi import knowledge, rules, transitions
from batchrl.records import BadLine
from batchrl.store import Rows, RowsBatch, StoreSchema

if TYPE_CHECKING:
    from batchrl.cluster import Tasks


@dataclass(frozen=True)
class HanabiParams:
    players: int = 2

    def __post_init__(self) -> None:
        rules.hand_size(self.players)  # a ValueError names the range


class Hanabi(Game):
    name = "hanabi"
    title = "Hanabi"
    player_counts = (2, 3, 4, 5)
    zero_sum = False
    teams = ((0, 1, 2, 3, 4),)  # every seat shares the score (a search's partners)
    unit = "games"
    Params = HanabiParams
    # fast mode, one forest per move class, 30 trees: the 2,036 Eger games (102,901 rows,
    # 210 features) train in 20 s (the thesis's full refits showed nothing for 11 minutes);
    # 60 iterations look as far ahead as a two-player game is long (60 moves cost 9 s)
    recommended: ClassVar[Mapping[str, Any]] = {
        "fqi": FQISettings(trees=30, nmin=50, k=30, iters=60, per_action=True, fast=True),
        "bc": {"k": 30},
        # the report's network (its Figure 3) on the colour-ordered states and the focus
        # convention's facts: 99.7% of the teacher's moves, 1.00x its score (docs/games/hanabi.md)
        "network": {"hidden": "195,128,64,32", "epochs": 30,
                    "view": {"colour_order": True, "features": "convention"}}}
    options = (
        Option("jobs", {"generate": "--jobs"}, type=int, short="-j",
               help="processes playing games (-1: one per core); the games do not depend "
                    "on it."),
        Option("colour_order", {"imitate": "--colour-order/--no-colour-order",
                                "learn": "--colour-order/--no-colour-order"}, type=bool,
               help="learn on colour-ordered states (colours sorted per state, hint moves "
                    "renamed); the model renames its moves back when it plays "
                    "[default: the game's view for the learner: the network's is "
                    "colour-ordered]."),
        Option("features", {"imitate": "--features", "learn": "--inputs"},
               choices=("report", "hints", "convention"),
               help="report: the report's 195 numbers; hints: those and 15 public facts "
                    "about hints (which cards hints touched, the focus of the hint just "
                    "before); convention: those and 78 facts the bots' focus convention "
                    "reads, computed from them (which card a hint would focus, chops, "
                    "critical cards) [default: the game's view for the learner: the "
                    "network's reads convention, the others the stored features]."),
    )
    bots = ("random", "simple", "convention", "bot1", "bot2")
    default_players = ("bot2", "bot2")
    default_count = 1000
    log_formats = ("hanabi-json",)
    # mixed: the best bot beside a weaker one (its partner plays as the simple bot)
    datasets = (Dataset("random", ("random", "random"), 2_000, 1, 60),
                Dataset("mixed", ("simple", "bot2"), 2_000, 2, 60),
                Dataset("expert", ("bot2", "bot2"), 2_000, 3, 60))
    reference = "bot2"
    bench_games = (1_000, 60)
    examples: ClassVar[Mapping[str, str]] = {
        "generate": "a directory of games, two files each (the report's format):\n"
                    "  batchrl generate --game hanabi --players bot2,bot2 --games 36000 \\\n"
                    "      -o hanabi-games",
        "evaluate": "groups of 2 to 5 players on the same deals, the report's Table 2\n"
                    "(mean, sd, max, min) in both score conventions; model:PATH is any\n"
                    "learner's model (two players; batchrl learn network, bc, fqi;\n"
                    "batchrl imitate):\n"
                    "  batchrl evaluate --game hanabi --players model:net.npz,bot2 \\\n"
                    "      --players bot2,bot2 --players bot2,bot2,bot2 --games 1000",
    }

    def num_players(self, params: HanabiParams) -> int:
        return params.players

    def action_names(self, params: HanabiParams) -> tuple[str, ...]:
        if params.players == 2:
            return transitions.ACTION_NAMES
        kinds = ([f"play_{i}" for i in range(5)] + [f"discard_{i}" for i in range(5)])
        for offset in range(1, params.players):
            kinds += [f"+{offset}_hint_value_{r}" for r in range(1, 6)]
            kinds += [f"+{offset}_hint_{c}" for c in rules.COLOURS]
        return tuple(kinds)

    def reward_unit(self, params: HanabiParams) -> str:
        return ("cards played: 1 for a move that adds a card to the fireworks, else 0; a "
                "game's rewards add up to its score in cards played (the research "
                "convention's 0 after the third fuse is not applied)")

    def feature_names(self, params: HanabiParams) -> tuple[str, ...]:
        self._two(params)
        return transitions.FEATURE_NAMES

    def _two(self, params: HanabiParams) -> None:
        if params.players != 2:
            raise GameError(f"the Hanabi state (the report's 195 numbers) is of two-player "
                            f"games, not {params.players}")

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
        from batchrl.games.hanabi.worlds import sample

        return sample(state, seat, n, rng)

    def encode(self, state: rules.State, player: int, params: HanabiParams
               ) -> NDArray[np.float32]:
        self._two(params)
        return np.concatenate([knowledge.encode(state, player),
                               knowledge.hint_features(state, player)]).astype(np.float32)

    # ---- store side ----------------------------------------------------------------

    def schema(self, params: HanabiParams) -> StoreSchema:
        return transitions.schema(params.players)

    def open_source(self, records: Iterator[Any], context: SourceContext) -> SourcePlan:
        if context.format.name == "hanabi-eger":
            context.notes.append("Eger et al.'s house rule: a discard with all 8 hints left "
                                 "is legal (the legal masks follow it)")
        games: list[int] = [0]
        refused: dict[str, list[Any]] = {}  # kind: [count, first example]

        def counted() -> Iterator[Any]:
            for record in records:
                games[0] += 1
                if isinstance(record, BadLine):
                    seen = refused.setdefault(record.kind, [0, Path(record.source).name])
                    seen[0] += 1
                yield record

        def rows(chunk: list[Any]) -> RowsBatch:
            made = transitions.rows(chunk, context.prefix)
            return RowsBatch(Rows.from_columns(made), len(chunk))

        def finish(stored: int) -> None:
            if stored:
                return
            if not games[0]:
                raise SourceError(f"{context.path}: no {context.format.name} game in this "
                                  "directory")
            why = "; ".join(f"{n:,} {kind} (e.g. {first})"
                            for kind, (n, first) in sorted(refused.items(),
                                                           key=lambda kv: -kv[1][0]))
            raise SourceError(f"{context.path}: none of its {games[0]:,} games could be "
                              f"read: {why or '?'}")

        return SourcePlan(self.schema(self.params()), counted(), rows, unit=self.unit,
                          finish=finish)

    # ---- play side -----------------------------------------------------------------

    def bot(self, name: str, params: HanabiParams, rng: np.random.Generator) -> Any:
        from batchrl.games.hanabi.bots import make_bot
        from batchrl.games.play import OneAtATime

        bot: Any = make_bot(name, rng)
        return OneAtATime(name, lambda state: int(bot.act(state)))

    def generate(self, out: Path, players: Sequence[str], count: int, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None) -> str:
        from batchrl.games.hanabi.logs import generate

        scores = generate(out, list(players), count, seed, progress, options.get("jobs", 1))
        return (f"{count:,} games written to {out}/ (mean score {np.mean(scores):.2f} cards "
                "played)")

    ablation_opponents = ("bot2",)

    def score(self, players: Sequence[str], count: int, seed: int,
              options: Mapping[str, Any],
              progress: Callable[[int], None] | None = None, params: Any = None) -> Scores:
        """Cards played in each game by the pair (the first player and its partner), on
        the deals of ``seed``."""
        from batchrl.games.hanabi.evaluate import evaluate_players

        if len(players) != 2:
            raise GameError(f"hanabi scores a pair: give two players, not {len(players)}")
        try:
            report = evaluate_players(tuple(players), count, seed, progress)
        except ValueError as exc:  # a ModelError too
            raise GameError(str(exc)) from None
        return Scores(report.scores.astype(np.float64), "cards_played", "cards played")

    def evaluate(self, groups: Sequence[Sequence[str]], count: int | None, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None,
                 tasks: Tasks | None = None) -> Any:
        from batchrl.games.hanabi.evaluate import PairsReport, evaluate_pairs

        games = count or self.default_count
        return PairsReport(games, seed, evaluate_pairs(groups, games, seed, progress,
                                                       tasks=tasks))

    def view(self, options: Mapping[str, Any]) -> Any:
        """Hanabi's view of its stored features that ``options`` (``colour_order``,
        ``features``) ask for: `batchrl.games.hanabi.view.HanabiView`; None for none, or
        for the stored features as they are (no colour order, ``hints``)."""
        if not options:
            return None
        self._two(self.params())
        from batchrl.games.hanabi.view import HanabiView, hanabi_view

        made = hanabi_view(options)
        return None if made == HanabiView() else made


GAME = Hanabi()
