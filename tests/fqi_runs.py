"""FQI runs as the tests make them: the store, the settings (the learner's defaults where
not given, not the game's recommendation), where the model goes and whether it goes on
from a checkpoint, in one frozen record (``replace`` makes the next run), trained through
the one path every learner takes, `batchrl.learning.learn`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from batchrl.learners.fqi import LEARNER, FQIConfig
from batchrl.learners.fqi.model import ModelArtifact
from batchrl.learning import Settings, default_out, learn


@dataclass(frozen=True)
class FQIRun:
    store: Path | str
    trees: int = 100
    nmin: int = 20
    k: int | None = None
    iters: int = 11
    gamma: float = 1.0
    features: tuple[str, ...] | None = None
    drop: tuple[str, ...] = ()
    players: tuple[str, ...] = ()
    per_action: bool = False
    freeze_after: int | None = None
    jobs: int = -1
    seed: int = 0
    out: Path | None = None
    resume: bool = False
    support: float | None = None
    scheduler: str | None = None

    @property
    def config(self) -> FQIConfig:
        return FQIConfig(trees=self.trees, nmin=self.nmin, k=self.k, iters=self.iters,
                         gamma=self.gamma, per_action=self.per_action,
                         freeze_after=self.freeze_after, support=self.support, seed=self.seed)


def model_path(run: FQIRun) -> Path:
    """Where the run's model goes by default."""
    return default_out(run.store, LEARNER, run.config, run.features, run.drop, run.players)


def run_fqi(run: FQIRun, on_iteration: Callable[[dict[str, Any]], None] | None = None,
            on_step: Callable[[str, int, int], None] | None = None
            ) -> tuple[Path, ModelArtifact]:
    """Train the run; where its model went, and the model."""
    options: dict[str, Any] = {"resume": True} if run.resume else {}
    if run.scheduler:
        options["scheduler"] = run.scheduler
    path, policy = learn(LEARNER, run.store, Settings(run.config, run.features, run.drop, ""),
                         players=run.players, jobs=run.jobs, out=run.out, progress=on_step,
                         on_iteration=on_iteration, **options)
    return path, policy.artifact
