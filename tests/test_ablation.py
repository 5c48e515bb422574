"""batchrl ablate: one hero per dropped feature, paired against the full hero."""

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from batchrl.cli import main
from batchrl.play.ablation import (
    FULL,
    RETRAINED,
    AblationConfig,
    load_groups,
    permutation_importances,
    run_ablation,
)
from batchrl.play.experiments import make_store
from batchrl.store import Store, StoreError


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("abl"), ["random", "rule"], 500, seed=5)


def test_one_hero_per_dropped_feature_on_common_deals(store, tmp_path):
    config = AblationConfig(store=store, opponent="rule", trees=4, nmin=20, iters=4,
                            fast=True, hands=400, features=("pv", "pot"), players=("random",),
                            out=tmp_path)
    result = run_ablation(config)
    t = result.table
    assert list(t["dropped"]) == [FULL, RETRAINED, "pv", "pot"]
    full, control = t.iloc[0], t.iloc[1]
    assert full["change"] == 0 and np.isnan(full["impurity"])
    # the control is the full hero from the next FQI seed: nothing dropped, its own change
    assert control["features"] == "" and control["hero"].replace("-seed1", "") == full["hero"]
    assert control["change"] == pytest.approx(control["bb_per_hand"] - full["bb_per_hand"])
    for _, row in t.iloc[2:].iterrows():
        assert row["change"] == pytest.approx(row["bb_per_hand"] - full["bb_per_hand"])
        # common deals: the paired interval is tighter than the two intervals combined
        unpaired = np.hypot(full["ci_high"] - full["ci_low"], row["ci_high"] - row["ci_low"]) / 2
        assert 0 < row["change_half_width"] < unpaired
        assert 0 <= row["impurity"] <= 1 and np.isfinite(row["permutation"])
        assert f"drop-{row['features']}" in row["hero"]
    assert pd.read_csv(result.path).shape == t.shape
    assert set(result.seconds) == {"training", "evaluation", "importances"}
    # a rerun reuses every hero and every result
    models = sorted((tmp_path / "models").glob("*.npz"))
    stamps = [m.stat().st_mtime_ns for m in models]
    again = run_ablation(config)
    assert [m.stat().st_mtime_ns for m in models] == stamps
    pd.testing.assert_frame_equal(again.table, t)
    assert again.seconds["training"] < result.seconds["training"]


def test_shuffling_a_feature_the_targets_ignore_costs_nothing():
    from sklearn.ensemble import ExtraTreesRegressor

    from batchrl.learners.fqi.model import QFunction
    from batchrl.store import Transitions

    rng = np.random.default_rng(0)
    n = 3000
    state = rng.random((n, 2)).astype(np.float32)
    reward = 10 * state[:, 0].astype(np.float64)  # only the first feature matters
    data = Transitions(
        state=state, action=np.zeros(n, dtype=np.int64), reward=reward,
        next_state=np.zeros_like(state), next_legal=np.ones((n, 1), dtype=bool),
        terminal=np.ones(n, dtype=bool), truncated=np.zeros(n, dtype=bool),
        episode=np.arange(n), episode_ids=np.arange(n).astype(object),
        step=np.zeros(n, dtype=np.int32), player=np.zeros(n, dtype=np.int8),
        feature_names=("signal", "noise"), action_names=("only",))
    forest = ExtraTreesRegressor(20, min_samples_split=20, random_state=0).fit(state, reward)
    q = QFunction([forest], per_action=True, n_actions=1)
    out = permutation_importances(q, data, {"signal": ("signal",), "noise": ("noise",)}, rng)
    assert out["signal"][0] > 5  # shuffling the signal destroys the fit (variance 100/12)
    assert abs(out["noise"][0]) < 0.05 * out["signal"][0]


def test_groups_are_checked_by_name(tmp_path):
    good = tmp_path / "g.json"
    good.write_text(json.dumps({"betting": ["bet_flop", "bet_turn"]}))
    assert load_groups(good, ("bet_flop", "bet_turn", "pv")) == {
        "betting": ("bet_flop", "bet_turn")}
    bad = tmp_path / "b.json"
    bad.write_text(json.dumps({"betting": ["bet_flopp"]}))
    with pytest.raises(StoreError, match="bet_flopp"):
        load_groups(bad, ("bet_flop",))
    bad.write_text("[1, 2]")
    with pytest.raises(StoreError, match="JSON object"):
        load_groups(bad, ("bet_flop",))


def test_ablate_command(store, tmp_path):
    groups = tmp_path / "groups.json"
    groups.write_text(json.dumps({"strength": ["pv"], "betting": ["bet_flop", "bet_turn",
                                                                   "bet_river"]}))
    result = CliRunner().invoke(main, [
        "ablate", "--store", str(store), "--opponent", "random", "--trees", "3", "--iters", "3",
        "--hands", "200", "--groups", str(groups), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "strength" in result.output and "betting" in result.output
    assert "time: training" in result.output and "table:" in result.output
    assert len(Store.open(store).arrays()) > 0
    wrong = CliRunner().invoke(main, ["ablate", "--store", str(store), "--features", "nope"])
    assert wrong.exit_code != 0 and "nope" in wrong.output
    for args, says in ((["--hands", "7"], "even number"), (["--opponent", "rnadom"], "rnadom")):
        refused = CliRunner().invoke(main, ["ablate", "--store", str(store), *args,
                                            "--out", str(tmp_path / "refused")])
        assert refused.exit_code != 0 and says in refused.output, refused.output
        assert not (tmp_path / "refused" / "models").exists()  # refused before any training


def test_ablate_scores_sette_mezzo_exactly_with_any_learner(tmp_path):
    runner = CliRunner()
    log = tmp_path / "sm.jsonl"
    assert runner.invoke(main, ["generate", "--game", "sette-mezzo", "--games", "400",
                                "-o", str(log)]).exit_code == 0
    assert runner.invoke(main, ["ingest", str(log), "--store", str(tmp_path / "s")]).exit_code == 0
    result = runner.invoke(main, ["ablate", "--store", str(tmp_path / "s"), "--learner", "bc",
                                  "--set", "trees=3", "--hands", "4", "--out",
                                  str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    t = pd.read_csv(next((tmp_path / "out").glob("ablation-*.csv")))
    # the game's recommended features (two), each dropped once; the control, seed 1
    assert list(t["dropped"]) == [FULL, RETRAINED, "total", "opponent_card"]
    assert set(t["score"]) == {"expected_stake"} and set(t["learner"]) == {"bc"}
    # exact: no interval, the change is the difference of the exact values
    for _, row in t.iloc[1:].iterrows():
        assert row["change_low"] == row["change"] == row["change_high"]
        assert row["change"] == pytest.approx(row["expected_stake"] - t["expected_stake"][0])
    refused = runner.invoke(main, ["ablate", "--store", str(tmp_path / "s"), "--learner", "bc",
                                   "--set", "iters=3"])
    assert refused.exit_code == 1 and "iters" in refused.output and "trees" in refused.output


def test_a_too_wide_interval_says_how_many_hands_would_do():
    from batchrl.play.ablation import AblationResult

    t = pd.DataFrame({"dropped": [FULL, RETRAINED, "pv", "pot"], "hands": [20000] * 4,
                      "change_half_width": [0.0, 0.03, 0.07, 0.02]})
    note = AblationResult(t, max_half_width=0.05).too_wide()
    assert "pv" in note and "--hands 40,000" in note  # 20,000 * (0.07 / 0.05)**2 = 39,200
    assert AblationResult(t, max_half_width=0.1).too_wide() is None
    t["change_half_width"] = [0.0, np.nan, np.nan, np.nan]  # one deal: no interval
    assert "too few hands" in AblationResult(t).too_wide()


def test_a_store_without_names_refuses_a_player_filter_clearly(tmp_path):
    runner = CliRunner()
    log = tmp_path / "sm.jsonl"
    runner.invoke(main, ["generate", "--game", "sette-mezzo", "--games", "20", "-o", str(log)])
    runner.invoke(main, ["ingest", str(log), "--store", str(tmp_path / "s")])
    with pytest.raises(StoreError, match="does not record player names"):
        Store.open(tmp_path / "s").arrays(players=["x"])


def _store(tmp_path, game, *args):
    runner = CliRunner()
    log = tmp_path / f"{game}.log"
    result = runner.invoke(main, ["generate", "--game", game, *args, "-o", str(log)])
    assert result.exit_code == 0, result.output
    assert runner.invoke(main, ["ingest", str(log), "--store", str(tmp_path / game)]).exit_code == 0
    return tmp_path / game


def test_a_two_player_president_store_is_scored_at_its_own_table(tmp_path):
    store = _store(tmp_path, "president", "--players", "random,random", "--games", "60")
    result = run_ablation(AblationConfig(store=store, learner="bc", settings={"trees": 2},
                                         hands=8, features=("passes",), out=tmp_path / "a"))
    t = result.table
    assert list(t["dropped"]) == [FULL, RETRAINED, "passes"]
    assert set(t["opponent"]) == {"rule"} and set(t["score"]) == {"first_place"}


def test_a_retrained_opponent_is_not_served_from_the_cache(store, tmp_path):
    runner = CliRunner()
    opponent = tmp_path / "opp.npz"
    for trees in (2, 3):
        assert runner.invoke(main, ["learn", "bc", "--store", str(store), "--trees", str(trees),
                                    "--out", str(opponent)]).exit_code == 0
        config = AblationConfig(store=store, opponent=f"model:{opponent}", learner="bc",
                                settings={"trees": 2}, hands=40, features=("pv",),
                                out=tmp_path / "a")
        run_ablation(config)
    # each hero's result against each opponent model: the second was played, not read back
    played = list((tmp_path / "a" / "results").glob("*--opp.npz-*-40-33-crn.npz"))
    assert len(played) == 6  # full, retrained, no pv; twice
    assert len({p.name.split("--opp.npz-")[1] for p in played}) == 2


def test_settings_given_as_none_and_booleans_are_taken_exactly(store, tmp_path):
    from batchrl.cli.learn import settings_given
    from batchrl.learners import EXPLICIT_NONE, LearnerError, get_learner
    from batchrl.learning import settings
    from batchrl.play.bench import LearnerSpec

    given = settings_given("bc", ("k=none", "trees=3"))
    tressette = _store(tmp_path, "tressette", "--games", "8")
    chosen = settings(get_learner("bc"), tressette, given)
    assert chosen.config.k is None and chosen.config.trees == 3  # not the game's k=30
    assert settings(get_learner("bc"), tressette, {}).config.k == 30
    # the game recommends fast mode (freeze_after 0); none given means never freeze
    assert settings(get_learner("fqi"), tressette, {}).config.freeze_after == 0
    fqi = settings(get_learner("fqi"), tressette, settings_given("fqi", ("freeze_after=none",)))
    assert fqi.config.freeze_after is None and "freeze_after=None" in fqi.said
    assert LearnerSpec.parse("fqi:freeze_after=none").given["freeze_after"] is EXPLICIT_NONE
    with pytest.raises(LearnerError, match="true or false"):
        settings_given("fqi", ("per_action=ture",))


def test_too_few_episodes_to_hold_out_gives_no_permutation_importance(tmp_path):
    store = _store(tmp_path, "holdem", "--hands", "2", "--players", "random,random")
    config = AblationConfig(store=store, opponent="random", trees=2, nmin=2, iters=1,
                            hands=4, features=("pot",), out=tmp_path / "a")
    t = run_ablation(config).table
    assert t["permutation"].isna().all() and np.isfinite(t["bb_per_hand"]).all()


def test_a_three_player_hero_without_pv_still_plays(tmp_path):
    store = _store(tmp_path, "holdem", "--hands", "90", "--players", "random,random,random",
                   "--gamedef", "holdem.limit.3p")
    runner = CliRunner()
    result = runner.invoke(main, ["learn", "bc", "--store", str(store), "--trees", "2",
                                  "--drop", "pv", "--out", str(tmp_path / "m.npz")])
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, ["evaluate", "--model", str(tmp_path / "m.npz"),
                                  "--hands", "30"])
    assert result.exit_code == 0, result.output
