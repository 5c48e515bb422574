"""The ingest against mutated logs of every format it reads: bit flips, lines deleted,
doubled, swapped, files cut short, binary garbage, huge numbers, deep nesting, bytes
that are no UTF-8, huge fields. Whatever the input, the ingest stores rows or stops
with its own one-line error, in bounded time, its messages short, and every stored
episode adds up to its logged result (``fuzzing`` says how each case is judged;
``benchmarks/fuzz.py`` runs the same cases by the thousand)."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest
from fuzzing import FORMATS, MUTATIONS, Mutation, run_case, seed_logs
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

# Cases per format: about 0.02 s each, so the file stays within a minute on two cores;
# fewer of the formats whose cases take longer (``benchmarks/fuzz.py`` runs a thousand)
CASES = 150
SLOW = {"phh"}
SLOW_CASES = 40

mutations = st.lists(st.builds(
    Mutation, kind=st.sampled_from(MUTATIONS), at=st.floats(0, 1, exclude_max=True),
    size=st.sampled_from((1, 16, 1000, 1_100_000)), pick=st.integers(0, 1 << 30),
    file=st.integers(0, 7)), min_size=1, max_size=3)


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    return seed_logs(tmp_path_factory.mktemp("fuzz-seeds"))


@pytest.mark.slow
@pytest.mark.parametrize("fmt", [f for f in FORMATS if f not in SLOW])
@settings(max_examples=CASES, deadline=timedelta(seconds=20), database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_logs_give_rows_or_a_clean_error(fmt: str, seeds: dict[str, list[Path]],
                                                 tmp_path: Path, data: st.DataObject) -> None:
    _case(fmt, seeds, tmp_path, data)


def _case(fmt: str, seeds: dict[str, list[Path]], tmp_path: Path, data: st.DataObject
          ) -> None:
    seed = data.draw(st.sampled_from(seeds[fmt]), label="seed")
    changes = data.draw(mutations, label="mutations")
    forced = data.draw(st.booleans(), label="--format given")
    outcome = run_case(fmt, seed, changes, tmp_path / "case", forced=forced)
    note(f"rows {outcome.rows}, error {outcome.error[:300]!r}")
    assert not outcome.escape, outcome.escape
    assert not outcome.problems, outcome.problems


@pytest.mark.parametrize("fmt", sorted(SLOW))
@settings(max_examples=SLOW_CASES, deadline=timedelta(seconds=20), database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_hand_histories_too(fmt: str, seeds: dict[str, list[Path]], tmp_path: Path,
                                    data: st.DataObject) -> None:
    """The same, fewer cases: a PHH case ingests a folder of hands (0.1 s or so)."""
    _case(fmt, seeds, tmp_path, data)


def test_the_seeds_ingest_whole_and_add_up(seeds: dict[str, list[Path]], tmp_path: Path) -> None:
    """Unmutated, every seed stores rows and passes every check: a case that fails is
    the mutation's doing."""
    for fmt in FORMATS:
        for seed in seeds[fmt]:
            outcome = run_case(fmt, seed, [], tmp_path / "case")
            assert outcome.ok and outcome.rows > 0 and not outcome.error, (fmt, outcome)


def test_a_case_that_escapes_hangs_or_misadds_is_caught(
        seeds: dict[str, list[Path]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The judge itself: a reader's traceback, a reader that never returns, and rows that
    do not add up to the log are each reported."""
    from batchrl.games.sette_mezzo import rules, transitions
    from batchrl.games.sette_mezzo.logs import Game

    seed = seeds["sette-mezzo"][0]
    monkeypatch.setattr(Game, "replay", lambda self: 1 / 0)
    assert "ZeroDivisionError" in run_case("sette-mezzo", seed, [], tmp_path / "a").escape
    monkeypatch.undo()

    def forever(self: Game) -> None:
        while True:
            time.sleep(0.01)

    monkeypatch.setattr(Game, "replay", forever)
    outcome = run_case("sette-mezzo", seed, [], tmp_path / "b", seconds=0.5)
    assert "Hang: still running after 0.5 s" in outcome.escape
    monkeypatch.undo()
    # the rows' rewards twice the rules': no longer the logged result
    monkeypatch.setattr(transitions, "returns", lambda state: 2 * rules.returns(state))
    outcome = run_case("sette-mezzo", seed, [], tmp_path / "c")
    assert any("rewards add up to" in p for p in outcome.problems), outcome
