"""``batchrl bench --ope``: every policy also valued from its dataset's logs alone, and
each estimator held to the measured scores by DOPE's yardsticks (rank correlation,
regret@1, mean absolute error), per dataset and pooled."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from batchrl.cli import main
from batchrl.games import GAMES
from batchrl.play.bench import Row
from batchrl.play.bench.outputs import _digest, load_rows, row_line
from batchrl.play.bench.report import ope_summary


def invoke(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _row(dataset: str, learner: str, measured: float, **estimates: float) -> Row:
    ope = {"estimates": {k: [0.0, 0.0, 0.0, v] for k, v in estimates.items()},
           "unsupported": 0.0, "ess": 10.0, "logs": "held-out"}
    return Row("leduc", dataset, learner, 0, 0.0, 0.0, measured, 0.0, 1.0, "u", 2, True,
               ope=ope)


def test_the_yardsticks_are_their_definitions() -> None:
    """On one dataset FQE ranks three learners as measured (correlation 1, regret 0, error
    the mean distance), WIS backwards (correlation -1, regret the best less the worst);
    pooled over two datasets, the share of datasets whose regret@1 is at most 5."""
    rows = [_row("a", "x", 10, fqe=20, wis=90), _row("a", "y", 50, fqe=40, wis=50),
            _row("a", "z", 90, fqe=95, wis=10),
            _row("b", "x", 30, fqe=60, wis=30), _row("b", "y", 60, fqe=50, wis=60),
            _row("b", "z", 70, fqe=55, wis=70)]
    got = ope_summary(rows)
    a = next(d for d in got["datasets"] if d["dataset"] == "a")
    assert a["fqe"]["rank_correlation"] == pytest.approx(1.0)
    assert a["fqe"]["regret_at_1"] == 0.0
    assert a["fqe"]["mean_abs_error"] == pytest.approx((10 + 10 + 5) / 3)
    assert a["wis"]["rank_correlation"] == pytest.approx(-1.0)
    assert a["wis"]["regret_at_1"] == 80.0
    b = next(d for d in got["datasets"] if d["dataset"] == "b")
    assert b["fqe"]["regret_at_1"] == 40.0  # it puts x (30) first, where z made 70
    assert got["pooled"]["fqe"]["regret_within"] == 0.5
    assert got["pooled"]["wis"]["regret_within"] == 0.5
    assert got["pooled"]["fqe"]["pairs"] == 6
    assert ope_summary([dataclasses.replace(r, ope=None) for r in rows]) == {}
    # a learner one estimator could not value leaves the comparison for all of them, and
    # a dataset with one learner left has nothing to choose between: no regret counted
    unvalued = dataclasses.replace(rows[4], ope={**(rows[4].ope or {}), "estimates": {
        "fqe": [None] * 4, "wis": [0.0, 0.0, 0.0, 60.0]}})
    lone = ope_summary([*rows[:3], rows[3], unvalued])
    assert [d["dataset"] for d in lone["datasets"]] == ["a"]
    assert lone["pooled"]["fqe"]["pairs"] == 3 and lone["pooled"]["fqe"]["regret_within"] == 1


def test_a_row_without_values_from_the_logs_keeps_the_digest_it_had(tmp_path: Path) -> None:
    """Rows written before --ope existed (no "ope" field) still load; one with a damaged
    ope field is refused."""
    row = Row("leduc", "random", "fqi", 0, 1.0, 0.0, 50.0, 0.0, 1.0, "u", 2, True)
    before = {k: v for k, v in dataclasses.asdict(row).items() if k != "ope"}
    damaged = dataclasses.asdict(row) | {"ope": {"estimates": {"fqe": [1, 2, 3]},
                                                 "unsupported": 0, "ess": 1, "logs": "x"}}
    results = tmp_path / "results.jsonl"
    results.write_text(json.dumps(before | {"digest": _digest(before)}) + "\n"
                       + row_line(row)
                       + json.dumps(damaged | {"digest": _digest(damaged)}) + "\n")
    said: list[str] = []
    rows, cut = load_rows(results, said.append)
    assert rows == [row, row] and cut
    assert "results.jsonl:3: not a result (its ope is" in said[0]


@pytest.mark.slow
def test_bench_ope_values_each_policy_from_its_logs_and_keeps_the_rows(tmp_path: Path
                                                                       ) -> None:
    """Sette e mezzo, quick: rows made without --ope are made again with it (said why),
    each learner's row then holds every estimator's value on held-out logs (the
    dataset's recipe from another seed: not the hands it learned from), normalized as
    the scores are, and the document the yardsticks; a rerun reuses them."""
    out, cache = tmp_path / "out", tmp_path / "cache"
    common = ("bench", "--quick", "--games", "sette-mezzo", "--learners", "fqi,bc",
              "--seeds", "1", "-o", out, "--cache", cache, "-j", "1")
    assert invoke(*common).exit_code == 0
    again = invoke(*common, "--ope", "--json")
    assert again.exit_code == 0, again.output
    assert "has no value from the logs (--ope): trained and scored again" in again.stderr
    document = json.loads(again.stdout)
    learned = [r for r in document["rows"] if r["seed"] is not None]
    assert len(learned) == 4 and all(r["ope"] is not None for r in learned)
    folders = {p.name for p in (cache / "bench" / "sette-mezzo").iterdir()}
    for r in learned:
        assert r["ope"]["logs"] in folders and r["ope"]["logs"] not in r["setup"]
    for r in learned:
        for name in ("fqe", "wis", "dr"):
            value, low, high, norm = r["ope"]["estimates"][name]
            assert low <= value <= high
            random, reference = (next(b["score"] for b in document["rows"] if
                                      b["dataset"] == r["dataset"] and b["learner"] == who)
                                 for who in ("random", "optimal"))
            assert norm == pytest.approx(100 * (value - random) / (reference - random))
    pooled = document["ope"]["pooled"]
    assert set(pooled) == {"fqe", "wis", "dr"} and pooled["fqe"]["pairs"] == 4
    third = invoke(*common, "--ope")
    assert "trained and scored again" not in third.output
    assert "values from the logs alone (--ope)" in third.output


def test_hanabi_is_valued_from_the_seat_its_score_is_measured_from(tmp_path: Path) -> None:
    """Hanabi scores a learner in the first seat only (no rotation), so --ope takes seat
    0 of its one-player tiers; Leduc, whose score averages both seats, takes every seat;
    a tier that mixes players takes the first by name."""
    from batchrl.play.bench.offline import takers

    named = type("Schema", (), {"audit_columns": ("name",)})()
    for game, tier, taken in (("hanabi", "expert", ("seat 0",)), ("leduc", "random", ()),
                              ("leduc", "mixed", ("rule",))):
        g = GAMES[game]
        dataset = next(d for d in g.bench.datasets if d.tier == tier)
        assert takers(g, dataset, g.rules.params(), named, print) == taken, game


def test_a_game_whose_score_is_not_its_return_is_left_out() -> None:
    """Tressette's score (hands won) is not what its rewards (points) add up to: --ope
    cannot compare the two; hold'em's big blinds are its chips over the big blind."""
    tressette, holdem = GAMES["tressette"], GAMES["holdem"]
    assert tressette.play.return_of_score(tressette.rules.params()) is None
    params = holdem.rules.params()
    assert holdem.play.return_of_score(params) == (params.gamedef.big_blind, 0.0)
