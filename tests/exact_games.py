"""Shared by the tests that hold learners and estimators to the exact games' values: a
benchmark-style store of generated logs, and a model learned on it with small forests."""

from __future__ import annotations

from pathlib import Path

from batchrl.games import GAMES, Dataset
from batchrl.learners import get_learner
from batchrl.learning import learn, settings
from batchrl.play.bench import build_dataset


def bench_store(tmp: Path, game: str, players: tuple[str, ...], count: int, seed: int,
                options: dict[str, str] | None = None) -> Path:
    """``count`` games of ``players`` from ``seed``, ingested with ``options``, under
    ``tmp``'s cache (as the benchmark builds a dataset)."""
    dataset = Dataset("t", players, count, seed, count, options or {})
    return build_dataset(GAMES[game], dataset, False, tmp / "cache", lambda _: None)


def learned(store: Path, out: Path, name: str, **given: object) -> Path:
    """``name``'s model of ``store`` at ``out``: the game's settings, 20 trees, one job."""
    learner = get_learner(name)
    path, _ = learn(learner, store, settings(learner, store, {"trees": 20, **given}), jobs=1,
                    out=out)
    return Path(path)
