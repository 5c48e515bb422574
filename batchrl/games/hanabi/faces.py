"""Hanabi's faces beside its rules core: its logs into store rows (`HanabiLog`), its players,
logs written and scores (`HanabiPlay`), and its views of the stored features for the
learners (`HanabiLearn`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from batchrl.forked import jobs_refused
from batchrl.games.base import (
    GameError,
    LearnFace,
    LogFace,
    PlayFace,
    Scores,
    SourceContext,
    SourceError,
    SourcePlan,
)
from batchrl.games.hanabi import rules, transitions
from batchrl.games.hanabi.bots import make_bot
from batchrl.games.hanabi.evaluate import PairsReport, evaluate_pairs, evaluate_players
from batchrl.games.hanabi.game import HanabiParams
from batchrl.games.hanabi.logs import generate
from batchrl.games.hanabi.view import HanabiView, hanabi_view
from batchrl.games.play import OneAtATime
from batchrl.records import BadLine
from batchrl.store import Rows, RowsBatch, StoreSchema

if TYPE_CHECKING:
    from batchrl.blocks import Tasks


class HanabiLog(LogFace):
    """Hanabi's logs (the report's JSON, Eger's, hanab.live exports) into rows."""

    def reward_unit(self, params: HanabiParams) -> str:
        return ("cards played: 1 for a move that adds a card to the fireworks, else 0; a "
                "game's rewards add up to its score in cards played (the research "
                "convention's 0 after the third fuse is not applied)")

    def schema(self, params: HanabiParams) -> StoreSchema:
        return transitions.schema(params.players)

    def prepare(self, command: str, options: Mapping[str, Any]) -> Mapping[str, Any]:
        if command == "ingest" and (why := jobs_refused(options)):
            raise GameError(why)
        return options

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

        return SourcePlan(self.schema(self.rules.params(players=players)), counted(), rows,
                          unit=self.rules.unit, finish=finish,
                          variant="" if players == 2 else f"{players} players")


class HanabiPlay(PlayFace):
    """The bots, model players in any seat, the report's games written and scored."""

    bots = ("random", "simple", "convention", "bot1", "bot2")
    default_players = ("bot2", "bot2")
    default_count = 1000
    log_formats = ("hanabi-json",)

    def encode_batch(self, states: Sequence[rules.State], players: Sequence[int],
                     params: HanabiParams) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
        """The states' knowledge computed for the whole batch at once (a model in play)."""
        x = transitions.encode_many(states, players).reshape(
            len(states), len(self.rules.feature_names(params)))
        legal = np.asarray([transitions.mask(s) for s in states], dtype=bool).reshape(
            len(states), len(self.rules.action_names(params)))
        return x, legal

    def bot(self, name: str, params: HanabiParams, rng: np.random.Generator) -> Any:
        bot: Any = make_bot(name, rng, params.players)
        return OneAtATime(name, lambda state: int(bot.act(state)))

    def generate(self, out: Path, players: Sequence[str], count: int, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None) -> str:
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
        if not 2 <= len(players) <= 5:
            raise GameError(f"hanabi scores a group of 2 to 5, not {len(players)}")
        try:
            report = evaluate_players(tuple(players), count, seed, progress)
        except ValueError as exc:  # a ModelError too
            raise GameError(str(exc)) from None
        return Scores(report.scores.astype(np.float64), "cards_played", "cards played")

    score_rotates_seats = False  # the group's first player sits first

    def return_of_score(self, params: HanabiParams) -> tuple[float, float]:
        return 1.0, 0.0  # cards played: the rows' rewards add up to the score

    def evaluate(self, groups: Sequence[Sequence[str]], count: int | None, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None,
                 tasks: Tasks | None = None) -> Any:
        games = count or self.default_count
        return PairsReport(games, seed, evaluate_pairs(groups, games, seed, progress,
                                                       tasks=tasks))


class HanabiLearn(LearnFace):
    """Hanabi's views of its features: the colour order, the convention's facts."""

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
        players = 2 if params is None else params.players
        made = hanabi_view(options, players)
        return None if made == HanabiView(players=players) else made
