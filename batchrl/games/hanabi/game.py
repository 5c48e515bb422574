"""Hanabi as ``batchrl.games`` knows it: cooperative, 2 to 5 players, the report's state.

Every seat shares the score, so ``returns`` gives the cards played to all, and each
move's reward is the score it adds. A two-player store's state is the report's 195
numbers and 15 public hint facts (the report's game); with three to five players it is
`batchrl.games.hanabi.observation`'s, the same pieces for every other seat and the last
moves. A store holds one player count (``game_params["players"]``).

>>> params = GAME.params()
>>> s = GAME.new_game(np.random.default_rng(0), params)
>>> GAME.current_player(s), len(GAME.encode(s, 0, params)), GAME.action_names(params)[10]
(0, 210, 'hint_value_1')
>>> len(GAME.feature_names(GAME.params(players=3))), GAME.action_names(GAME.params(players=3))[20]
(357, '+2_hint_value_1')
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from batchrl.games.base import (
    Dataset,
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
    from batchrl.blocks import Tasks


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
        "fqi": {"trees": 30, "nmin": 50, "k": 30, "iters": 60, "per_action": True, "fast": True},
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
                    "before), with 3-5 players the whole stored state; convention: those "
                    "and 78 facts the bots' focus convention reads, computed from them "
                    "(which card a hint would focus, chops, critical cards; with 3-5 "
                    "players, of the next seat) [default: the game's view for the learner: "
                    "the network's reads convention, the others the stored features]."),
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
        "generate": "a directory of games, two files each (the report's format); with 3\n"
                    "to 5 players, one hanab.live export each (game000000.json):\n"
                    "  batchrl generate --game hanabi --players bot2,bot2 --games 36000 \\\n"
                    "      -o hanabi-games\n"
                    "  batchrl generate --game hanabi --players bot2,bot2,bot2 \\\n"
                    "      --games 10000 -o hanabi-3p",
        "evaluate": "groups of 2 to 5 players on the same deals, the report's Table 2\n"
                    "(mean, sd, max, min) in both score conventions; model:PATH is any\n"
                    "learner's model (batchrl learn network, bc, fqi; batchrl imitate),\n"
                    "seated among as many players as its store's games had:\n"
                    "  batchrl evaluate --game hanabi --players model:net.npz,bot2 \\\n"
                    "      --players bot2,bot2 --players bot2,bot2,bot2 --games 1000",
    }

    def num_players(self, params: HanabiParams) -> int:
        return params.players

    def action_names(self, params: HanabiParams) -> tuple[str, ...]:
        return transitions.action_names(params.players)

    def reward_unit(self, params: HanabiParams) -> str:
        return ("cards played: 1 for a move that adds a card to the fireworks, else 0; a "
                "game's rewards add up to its score in cards played (the research "
                "convention's 0 after the third fuse is not applied)")

    def feature_names(self, params: HanabiParams) -> tuple[str, ...]:
        return transitions.feature_names(params.players)

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
        if params.players != 2:
            from batchrl.games.hanabi.observation import encode

            return encode(state, player)
        return np.concatenate([knowledge.encode(state, player),
                               knowledge.hint_features(state, player)]).astype(np.float32)

    def encode_batch(self, states: Sequence[rules.State], players: Sequence[int],
                     params: HanabiParams) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
        """The states' knowledge computed for the whole batch at once (a model in play)."""
        x = transitions.encode_many(states, players).reshape(
            len(states), len(self.feature_names(params)))
        legal = np.asarray([transitions.mask(s) for s in states], dtype=bool).reshape(
            len(states), len(self.action_names(params)))
        return x, legal

    # ---- store side ----------------------------------------------------------------

    def schema(self, params: HanabiParams) -> StoreSchema:
        return transitions.schema(params.players)

    def open_source(self, records: Iterator[Any], context: SourceContext) -> SourcePlan:
        """The source's games as rows; the first game read says how many play, and a game
        of another player count is left out, named (a store holds one count)."""
        if context.format.name == "hanabi-eger":
            context.notes.append("Eger et al.'s house rule: a discard with all 8 hints left "
                                 "is legal (the legal masks follow it)")
        games: list[int] = [0]
        refused: dict[str, list[Any]] = {}  # kind: [count, first example]
        ahead: list[Any] = []
        for record in records:  # the first game says how many play
            ahead.append(record)
            if isinstance(record, transitions.Episode):
                break
        players = next((r.players for r in ahead if isinstance(r, transitions.Episode)), 2)

        def checked(record: Any) -> Any:
            if isinstance(record, transitions.Episode) and record.players != players:
                return BadLine(str(context.path), -1,
                               f"{context.path}: {record.key}: {record.players} players "
                               f"among games of {players}: a store holds one player count; "
                               "ingest it into another store", "", "another player count")
            return record

        def counted() -> Iterator[Any]:
            for record in (checked(r) for r in chain(ahead, records)):
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

        return SourcePlan(self.schema(self.params(players=players)), counted(), rows,
                          unit=self.unit, finish=finish,
                          variant="" if players == 2 else f"{players} players")

    # ---- play side -----------------------------------------------------------------

    def bot(self, name: str, params: HanabiParams, rng: np.random.Generator) -> Any:
        from batchrl.games.hanabi.bots import make_bot
        from batchrl.games.play import OneAtATime

        bot: Any = make_bot(name, rng, params.players)
        return OneAtATime(name, lambda state: int(bot.act(state)))

    def generate(self, out: Path, players: Sequence[str], count: int, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None) -> str:
        from batchrl.games.hanabi.logs import generate

        scores = generate(out, list(players), count, seed, progress, options.get("jobs", 1))
        return (f"{count:,} games written to {out}/ (mean score {np.mean(scores):.2f} cards "
                "played)")

    ablation_opponents = ("bot2",)

    def ablation_players(self, params: HanabiParams) -> tuple[str, ...]:
        """A model's partners in scoring: ``bot2`` in every other seat."""
        return (self.ablation_opponents[0],) * (params.players - 1)

    def score(self, players: Sequence[str], count: int, seed: int,
              options: Mapping[str, Any],
              progress: Callable[[int], None] | None = None, params: Any = None) -> Scores:
        """Cards played in each game by the group (the first player and its partners, a
        seat each), on the deals of ``seed``."""
        from batchrl.games.hanabi.evaluate import evaluate_players

        if not 2 <= len(players) <= 5:
            raise GameError(f"hanabi scores a group of 2 to 5, not {len(players)}")
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

    def settings_for(self, learner: str, params: Any = None) -> dict[str, Any]:
        """The recommended settings; with more than two players the network's view has
        the convention's facts but no colour order (the report's symmetry is of the
        two-player numbers)."""
        out = super().settings_for(learner, params)
        if params is not None and params.players != 2 and isinstance(out.get("view"), Mapping):
            out["view"] = {**out["view"], "colour_order": False}
        return out

    def view(self, options: Mapping[str, Any], params: Any = None) -> Any:
        """Hanabi's view of its stored features that ``options`` (``colour_order``,
        ``features``) ask for, of a store of ``params``' player count:
        `batchrl.games.hanabi.view.HanabiView`; None for none, or for the stored features
        as they are (no colour order, ``hints``)."""
        if not options:
            return None
        from batchrl.games.hanabi.view import HanabiView, hanabi_view

        players = 2 if params is None else params.players
        made = hanabi_view(options, players)
        return None if made == HanabiView(players=players) else made


GAME = Hanabi()
