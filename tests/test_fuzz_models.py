"""Crafted model files of every kind are refused with one line, or play: never a
traceback, a hang or gigabytes (``tests/model_fuzzing.py``; by the thousand:
``python benchmarks/fuzz_models.py``)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from model_fuzzing import MUTATIONS, mutate, run_case, seed_models

from batchrl import forests
from batchrl.store import StoreError

CASES_PER_KIND = 28  # two of each mutation; the benchmark runs 1,000


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory):
    return seed_models(tmp_path_factory.mktemp("models"))


def test_the_seeds_load_and_play(seeds) -> None:
    models, play = seeds
    for path in models.values():
        outcome = run_case(path, play)
        assert outcome.loaded, (path, outcome)


@pytest.mark.parametrize("walked", [False, True], ids=["scikit-learn", "numpy-walk"])
@pytest.mark.parametrize("kind", ["fqi", "fqi-per-action", "fqi-support", "bc", "network"])
def test_crafted_model_files_are_refused_in_one_line_or_play(seeds, kind: str, walked: bool,
                                                             tmp_path: Path,
                                                             monkeypatch) -> None:
    """Played by scikit-learn's trees (this process has it loaded) or, as in a fresh
    process, a few states by the numpy walk (`batchrl.forests.StoredRegressor`)."""
    models, play = seeds
    if kind not in models:
        pytest.skip("the network needs torch to train its seed (the test extra)")
    if walked and kind == "network":
        pytest.skip("a network has no trees")
    monkeypatch.setattr(forests, "_trees_loaded", lambda: not walked)
    rng = random.Random(f"{kind}-ci")
    escapes, refused = [], 0
    for i in range(CASES_PER_KIND):
        mutation = MUTATIONS[i % len(MUTATIONS)]
        case = tmp_path / f"{i}.npz"
        mutate(models[kind], case, mutation, rng)
        outcome = run_case(case, play)
        refused += bool(outcome.error)
        if outcome.escape:
            escapes.append((mutation, outcome.escape))
        case.unlink()
    assert not escapes, escapes
    assert refused >= CASES_PER_KIND // 2  # the cases reach the checks: they can fail


def test_an_escape_is_caught(seeds, tmp_path: Path) -> None:
    """The judge itself: an error that is not the project's is an escape."""
    models, _ = seeds

    def crash(path: Path) -> None:
        raise KeyError("feature_names")

    assert run_case(models["bc"], crash).escape == "KeyError: 'feature_names'"


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory):
    from model_fuzzing import seed_checkpoints

    return seed_checkpoints(tmp_path_factory.mktemp("checkpoints"))


@pytest.mark.parametrize("kind", ["joint", "fast"])
def test_crafted_checkpoints_are_refused_in_one_line_or_resume(checkpoints, kind: str,
                                                               tmp_path: Path) -> None:
    from model_fuzzing import mutate_checkpoint

    seeds, resume = checkpoints
    rng = random.Random(f"{kind}-checkpoint-ci")
    escapes, refused = [], 0
    for i in range(14):
        mutation = MUTATIONS[i % len(MUTATIONS)]
        case = tmp_path / f"c{i}-{kind}.npz.ckpt"
        mutate_checkpoint(seeds[kind], case, mutation, rng)
        outcome = run_case(case, resume, clean=(ValueError, StoreError))
        refused += bool(outcome.error)
        if outcome.escape:
            escapes.append((mutation, outcome.escape))
    assert not escapes, escapes
    assert refused >= 7
