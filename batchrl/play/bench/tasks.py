"""The benchmark's tasks: what runs here one after the other, or on a Dask cluster's
workers (`batchrl.blocks.Tasks`): a dataset built, a player scored, a learner trained
and scored. A task takes names, paths and settings, so a worker makes the rest itself."""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from batchrl.games import Dataset, GameError, Scores, get_game
from batchrl.learners import Learner
from batchrl.learning import Settings, learn
from batchrl.play.bench import offline
from batchrl.play.bench.datasets import BenchError, build_dataset
from batchrl.play.bench.outputs import load_scores, replaceable, scores_digest

# the deals every player of a dataset is scored on: one seed, apart from the data's
EVAL_SEED = 2_000_003


def _cpu() -> float:
    """CPU seconds of this process and its reaped children, user and system."""
    own, children = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                     resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@dataclass(frozen=True)
class Job:
    """One learner's training seed on one dataset, as a task carries it: names, paths and
    settings, so that a Dask worker makes everything else itself."""

    game: str
    tier: str
    spec: str
    learner: Learner  # the object: a learner registered here needs no registry there
    seed: int
    store: str
    settings: Settings
    model: str
    # each (scores file, opponents) the policy is scored against
    evaluations: tuple[tuple[str, tuple[str, ...]], ...]
    count: int
    params: tuple[str, dict[str, Any]]  # the store's game and game_params
    exact: bool
    jobs: int
    keep_model: bool = False  # the model file left under OUT/models after its scoring
    # the policy also valued from the logs alone (`batchrl.play.ope`), taking these
    # players' decisions by name ("seat N": that seat's; () every seat's); None: not
    ope: tuple[str, ...] | None = None
    ope_store: str = ""  # the logs it is valued on: the dataset's held-out logs
    ope_boot: int = 50
    ope_trees: int = 50


def built(game: str, dataset: Dataset, quick: bool, cache: Path,
           say: Callable[[str], None] | None, progress: Any = None) -> str:
    """A task: the dataset's store, built into the cache once."""
    return str(build_dataset(get_game(game), dataset, quick, cache, say or (lambda _: None)))


def score(path: str, game_name: str, player: str, opponents: tuple[str, ...], count: int,
           stored: tuple[str, Mapping[str, Any]], say: Callable[[str], None] | None = None,
           progress: Any = None) -> dict[str, Any]:
    """A task: ``player`` scored on the evaluation deals against ``opponents`` in the game
    of the store (``stored``: its game and game_params), kept at ``path`` for a rerun (a
    model's scores are made again when its file is newer)."""
    game = get_game(game_name)
    params = game.log.params_from_store(*stored)
    held = Path(path)
    model = Path(player.removeprefix("model:")) if player.startswith("model:") else None
    if held.exists() and (model is None or held.stat().st_mtime_ns >=
                          model.stat().st_mtime_ns):
        if (kept := load_scores(held)) is not None:
            return kept
        if say is not None:  # a file no scoring wrote, or one cut short: replaced
            say(f"{held} is not a sound scores file: scoring {player} again")
    if say is not None and model is None:
        say(f"{game.name}: scoring {player} against {','.join(opponents) or 'the dealer'}")
    try:
        got = game.play.score((player, *opponents), count, EVAL_SEED, {}, params=params)
    except GameError as exc:
        raise BenchError(f"{game.name}: {exc}") from None
    replaceable(held)
    tmp = held.with_name(f".{held.name}.tmp-{os.getpid()}.npz")
    made: dict[str, Any] = {"values": got.values, "name": got.name, "unit": got.unit,
                            "per_unit": got.per_unit, "exact": got.exact}
    np.savez(tmp, **made, digest=scores_digest(made))
    os.replace(tmp, held)
    return made


def as_scores(got: Mapping[str, Any]) -> Scores:
    return Scores(np.asarray(got["values"], dtype=np.float64), got["name"], got["unit"],
                  int(got["per_unit"]), bool(got["exact"]))


def train_and_score(job: Job, say: Callable[[str], None] | None,
                     progress: Any = None) -> dict[str, Any]:
    """A task: the learner trained on the dataset (its CPU seconds: this process's
    threads and reaped children, so give a cluster's workers one thread each for figures
    of one task alone), then its policy scored; the model file is then removed unless
    the job keeps it (``keep_model``: a full grid's forests run to tens of gigabytes)."""
    where = f"{job.game}/{job.tier}"
    tell = say or (lambda _: None)
    tell(f"{where} {job.spec} seed {job.seed}: {job.settings.said}")
    out = Path(job.model)
    out.parent.mkdir(parents=True, exist_ok=True)
    started, clock = _cpu(), time.perf_counter()
    try:
        path, _ = learn(job.learner, job.store, job.settings, jobs=job.jobs, out=out)
    except ValueError as exc:  # settings the learner takes but cannot fit with
        raise BenchError(f"{job.spec} on {where}: {str(exc)[:400]}") from None
    cpu, wall = _cpu() - started, time.perf_counter() - clock
    game = get_game(job.game)
    against = "; ".join(",".join(o) or "the dealer" for _, o in job.evaluations)
    how = "exactly" if job.exact else f"on {job.count:,} {game.rules.unit}"
    tell(f"{where} {job.spec} seed {job.seed}: trained in {wall:.1f} s ({cpu:.1f} CPU s); "
         f"scoring {how} against {against}")
    player = f"model:{Path(path).resolve()}"
    scores = [score(held, job.game, player, opponents, job.count, job.params)
              for held, opponents in job.evaluations]
    try:
        worth = game.play.exploitability(player, game.log.params_from_store(*job.params))
    except GameError as exc:
        raise BenchError(f"{job.spec} on {where}: {exc}") from None
    valued = None if job.ope is None else offline.value(
        Path(path), job.ope_store or job.store, job.ope, job.ope_boot, job.ope_trees, job.jobs)
    if not job.keep_model:  # the row keeps its scores; a grid's models fill a disk
        Path(path).unlink(missing_ok=True)
    return {"scores": scores, "cpu": cpu, "wall": wall, "exploitability": worth,
            "model": str(path) if job.keep_model else "", "ope": valued}

