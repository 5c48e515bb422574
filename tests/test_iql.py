"""``batchrl learn iql``: expectile fitted Q-iteration on frozen trees and
advantage-weighted cloning (and ``lcb``, FQI's lower bound), held to the exact games'
known values (sette e mezzo's optimum, Leduc's best response), its expectiles to their
definition, its model file to arrays and JSON."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from exact_games import bench_store, learned

from batchrl.cli import main
from batchrl.games import GAMES
from batchrl.learners import get_learner
from batchrl.learners.iql.fit import awr_weights, leaf_expectiles
from batchrl.modelfile import ModelError


def _exact(game: str, path: Path, *opponents: str) -> float:
    return float(GAMES[game].play.score((f"model:{path}", *opponents), 1, 0, {})
                 .values.mean())


def _optimum() -> float:
    """Sette e mezzo's exact optimum (its solver's expected stake per game)."""
    return float(GAMES["sette-mezzo"].play.score(("optimal",), 1, 0, {}).values[0])


@pytest.fixture(scope="module")
def sette(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    tmp = tmp_path_factory.mktemp("sette")
    return (tmp, bench_store(tmp, "sette-mezzo", ("random",), 20_000, 0, {"reward": "expected"}),
            bench_store(tmp, "sette-mezzo", ("optimal",), 5_000, 1, {"reward": "expected"}))


@pytest.mark.slow
def test_sette_e_mezzo_from_random_games_comes_near_the_optimum(sette) -> None:
    """Random play's logs try every move: the expectile's V goes to the best logged
    move's value, and the policy near the exact optimum (cloning stays random)."""
    tmp, random_logs, _ = sette
    optimum = _optimum()
    iql = _exact("sette-mezzo", learned(random_logs, tmp / "iql.npz", "iql"))
    bc = _exact("sette-mezzo", learned(random_logs, tmp / "bc.npz", "bc"))
    assert optimum - 0.03 < iql <= optimum + 1e-12, (iql, optimum)
    assert iql - bc > 0.3, (iql, bc)


def test_lcb_from_random_games_is_as_near_the_optimum_as_fqi(sette) -> None:
    """The lower bound keeps FQI's reach where the logs try every move: within 0.01 of
    sette e mezzo's exact optimum from 20,000 random games."""
    tmp, random_logs, _ = sette
    optimum = _optimum()
    lcb = _exact("sette-mezzo", learned(random_logs, tmp / "lcb.npz", "lcb"))
    assert optimum - 0.01 < lcb <= optimum + 1e-12, (lcb, optimum)


def test_sette_e_mezzo_from_the_optimum_s_games_plays_the_optimum(sette) -> None:
    """The optimum's logs show one move a state: no max over moves it never made, so
    nothing pulls the policy off them (plain FQI's 64.9 on the benchmark's expert tier)."""
    tmp, _, optimal_logs = sette
    optimum = _optimum()
    iql = _exact("sette-mezzo", learned(optimal_logs, tmp / "iql-opt.npz", "iql"))
    assert abs(iql - optimum) < 0.002, (iql, optimum)


@pytest.mark.slow
def test_leduc_from_random_hands_takes_most_of_the_best_response(tmp_path: Path) -> None:
    """Leduc's exact best response to random play is the known value to reach: from
    20,000 random hands IQL takes most of it (cloning random play takes none)."""
    store = bench_store(tmp_path, "leduc", ("random", "random"), 20_000, 1)
    best = float(np.mean(GAMES["leduc"].play.exact(("best-response", "random"))))
    path = learned(store, tmp_path / "iql.npz", "iql")
    got = _exact("leduc", path, "random")
    assert 0.85 * best < got <= best + 1e-12, (got, best)
    worth = GAMES["leduc"].play.exploitability(f"model:{path}")
    assert worth is not None and worth > 0  # a deterministic policy is exploitable


def test_leaf_expectiles_are_the_asymmetric_least_squares_minimum() -> None:
    """Each leaf's value minimizes sum |tau - 1(y < m)| (y - m)^2 over its rows: the
    first-order condition holds at every leaf of every tree; tau 0.5 is the mean."""
    rng = np.random.default_rng(3)
    leaves = rng.integers(0, 5, size=(500, 3)).astype(np.uint16)
    offsets = np.array([0, 5, 10, 15])
    y = rng.normal(size=500) ** 3
    got = leaf_expectiles(leaves, offsets, y, 0.8, np.zeros(15), rounds=60)
    for t in range(3):
        for leaf in range(5):
            rows = y[leaves[:, t] == leaf]
            m = got[offsets[t] + leaf]
            w = np.where(rows > m, 0.8, 0.2)
            assert abs(np.sum(w * (rows - m))) < 1e-8, (t, leaf)
    mean = leaf_expectiles(leaves, offsets, y, 0.5, np.zeros(15), rounds=2)
    assert mean[offsets[0] + 2] == pytest.approx(y[leaves[:, 0] == 2].mean())


def test_advantage_weights_are_capped_and_scale_free() -> None:
    a = np.array([-2.0, 0.0, 1.0, 5.0])
    w = awr_weights(a, beta=0.5, clip=20.0)
    assert w.max() == 20.0 and np.all(np.diff(w) >= 0) and w[1] == 1.0
    assert np.allclose(awr_weights(a * 1000, beta=0.5, clip=20.0), w)  # chips or big blinds
    assert np.all(awr_weights(np.zeros(3), 1.0, 5.0) == 1.0)


def test_the_model_file_reads_back_and_refuses_another_kind(tmp_path: Path) -> None:
    store = bench_store(tmp_path, "leduc", ("rule", "random"), 2_000, 2)
    path = learned(store, tmp_path / "m.npz", "iql", iters=2)
    learner = get_learner("iql")
    back = learner.read(path)
    assert back.meta["learner"] == "iql" and len(back.meta["history"]) == 2
    assert learner.meta_of(path)["params"]["expectile"] == 0.9
    policy = learned(store, tmp_path / "bc.npz", "bc")
    with pytest.raises(ModelError):
        learner.read(policy)  # a bc file is no iql model, though both hold one forest
    result = CliRunner().invoke(main, ["learn", "iql", "--store", str(store), "--trees", "5",
                                       "--iters", "2", "--expectile", "1.0"])
    assert result.exit_code == 2 and "--expectile" in result.output
