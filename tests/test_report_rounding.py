"""A report's columns of one figure agree: bb/hand and mbb/hand are rounded once."""

from __future__ import annotations

import pytest

from batchrl.evaluation import Estimate
from batchrl.games.holdem.evaluate import HoldemReport


@pytest.mark.parametrize(("mean", "bb", "mbb"), [(0.5315, "+0.532", "+532"),
                                                 (0.5314999, "+0.531", "+531"),
                                                 (-0.0004, "+0.000", "+0"),
                                                 (-1.2345, "-1.234", "-1234")])
def test_bb_and_mbb_columns_round_alike(mean: float, bb: str, mbb: str) -> None:
    report = HoldemReport("fqi", "random", "holdem.limit.2p", 10, 2_000, False, 1, 0.0,
                          Estimate(mean, 0.1, 1.0, 2_000, 0.95))
    line = next(row for row in report.table().splitlines() if row.startswith("all"))
    assert line.split()[1:2] == [bb] and line.split()[5] == mbb, line
