"""Hostile search names, network settings, crafted rows and damaged bench folders end in
a right result or one line: never a traceback, a hang, gigabytes or a wrong result with
exit 0 (``tests/surface_fuzzing.py``; by the thousand: ``python
benchmarks/fuzz_surfaces.py``)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import surface_fuzzing as sf

# a sample each: the benchmark runs 1,000
CASES = {"search": 12, "network": 10, "rows": 30, "bench": 8}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sf.leduc_store(tmp_path_factory.mktemp("leduc"))


def _judged(outcomes: list[tuple[str, sf.Outcome]]) -> None:
    escapes = [(what, o.escape) for what, o in outcomes if o.escape]
    assert not escapes, escapes
    assert any(o.error for _, o in outcomes), "no case reached a refusal: the cases are tame"


def test_search_names(tmp_path: Path) -> None:
    rng = random.Random("search-ci")
    outcomes = [(spec, sf.search_case(spec)) for spec in
                (sf.search_spec(rng) for _ in range(CASES["search"]))]
    _judged(outcomes)


@pytest.mark.skipif(not __import__("importlib.util").util.find_spec("torch"),
                    reason="learn network needs torch (the test extra)")
def test_network_settings(store: Path, tmp_path: Path) -> None:
    rng = random.Random("network-ci")
    outcomes = []
    for i in range(CASES["network"]):
        args = sf.network_args(rng)
        outcomes.append((" ".join(args), sf.network_case(store, args, tmp_path / f"{i}.npz")))
    _judged(outcomes)


def test_crafted_rows(store: Path, tmp_path: Path) -> None:
    rng = random.Random("rows-ci")
    outcomes = []
    for i in range(CASES["rows"]):
        what = sf.crafted_rows(store, tmp_path / f"{i}", rng)
        outcomes.append((what, sf.rows_case(tmp_path / f"{i}")))
        sf.clear(tmp_path / f"{i}")
    _judged(outcomes)


def test_damaged_bench_folders(tmp_path: Path) -> None:
    seed, table = sf.bench_seed(tmp_path / "seed")
    rng = random.Random("bench-ci")
    outcomes = []
    for i in range(CASES["bench"]):
        what = sf.damaged_bench(seed, tmp_path / f"{i}", rng)
        outcomes.append((what, sf.bench_case(tmp_path / f"{i}", table)))
        sf.clear(tmp_path / f"{i}")
    assert not [o.escape for _, o in outcomes if o.escape], outcomes
    assert any(o.ok for _, o in outcomes)  # a damaged bench mends itself: the same table


def test_the_judge_calls_a_wrong_result_an_escape(store: Path, tmp_path: Path) -> None:
    """A judge that cannot fail proves nothing: a run whose check finds it wrong, and a
    traceback, are escapes."""
    wrong = sf.run(["info", str(store)], check=lambda out: "a wrong table")
    assert wrong.escape == "wrong result with exit 0: a wrong table"
    crashed = sf.run(["info", str(tmp_path / "nowhere")])
    assert crashed.error and not crashed.escape
    assert sf.search_case("search+worlds=16:rule").ok or \
        pytest.fail("a search the bounds allow plays")
