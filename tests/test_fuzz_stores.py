"""Hostile copies of a store's files are refused in one line naming the store, or read:
never a traceback, a hang or gigabytes (``tests/store_fuzzing.py``; by the thousand:
``python benchmarks/fuzz_models.py --stores``)."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from store_fuzzing import MUTATIONS, mutate_store, run_store_case, seed_store


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory):
    return seed_store(tmp_path_factory.mktemp("stores"))


def test_the_seed_reads(seed) -> None:
    store, read = seed
    assert run_store_case(store, read).loaded


def test_hostile_store_files_are_refused_in_one_line_or_read(seed, tmp_path: Path) -> None:
    store, read = seed
    rng = random.Random("stores-ci")
    escapes, refused = [], 0
    for i in range(3 * len(MUTATIONS)):
        mutation = MUTATIONS[i % len(MUTATIONS)]
        case = tmp_path / f"s{i}"
        mutate_store(store, case, mutation, rng)
        outcome = run_store_case(case, read)
        refused += bool(outcome.error)
        if outcome.escape:
            escapes.append((mutation, outcome.escape, outcome.error[:700]))
        shutil.rmtree(case)
    assert not escapes, escapes
    assert refused >= len(MUTATIONS)
