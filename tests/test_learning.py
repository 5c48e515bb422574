"""Any learner on a store through the one path (`batchrl.learning`): the notebook's call
(`train`), the names models get, and the protocol a learner's run-time needs travel by
(run options, checkpoints) refused where a learner has none."""

from __future__ import annotations

from pathlib import Path

import pytest

from batchrl.ingest import IngestConfig, ingest
from batchrl.learners import LearnerError, get_learner
from batchrl.learning import Settings, default_out, learn, settings, settings_name, train
from batchrl.policy import load_policy


@pytest.fixture
def store(sample_log: Path, tmp_path: Path) -> Path:
    root = tmp_path / "store"
    ingest(IngestConfig(paths=(sample_log,), store=root))
    return root


def test_train_is_settings_then_learn(store: Path) -> None:
    path, policy = train("bc", store, trees=3, players=("random-1",), jobs=1)
    assert path == store / "models" / "bc-trees3-player-random-1.npz" and path.is_file()
    meta = load_policy(path).meta
    assert meta["params"]["trees"] == 3 and meta["params"]["players"] == ["random-1"]
    assert meta["learner"] == "bc" and policy.feature_names == tuple(meta["feature_names"])


def test_train_hands_a_learner_its_run_options(store: Path) -> None:
    """FQI's ``resume`` reaches it: a finished run is refused, saying how to train again;
    a learner that keeps no checkpoints refuses ``resume`` whatever the store."""
    path, _ = train("fqi", store, trees=2, iters=1, jobs=1)
    assert path.name == "fqi-M2-nmin20-N1.npz"
    assert not path.with_name(path.name + ".ckpt").exists()  # removed once saved
    with pytest.raises(ValueError, match="the run is finished"):
        train("fqi", store, trees=2, iters=1, jobs=1, resume=True)
    bc = get_learner("bc")
    with pytest.raises(LearnerError, match="keeps no checkpoints"):
        learn(bc, store, settings(bc, store, {}), resume=True)


def test_fqi_keeps_its_names_and_a_run_of_many_models_names_each(store: Path) -> None:
    """FQI's own names leave the features out (a run that would replace a model made
    with others is refused instead); a caller making many models at once names them by
    every setting, so an ablation's heroes never share a file."""
    fqi = get_learner("fqi")
    config = fqi.config(trees=3, fast=True)
    full = default_out(store, fqi, config, None, (), ())
    no_pv = default_out(store, fqi, config, None, ("pv",), ())
    assert full == no_pv == store / "models" / "fqi-M3-nmin20-N11-fast0.npz"
    names = {settings_name(fqi, config, None, drop, ()) for drop in ((), ("pv",), ("pot",))}
    assert names == {"fqi-trees3-freeze_after0", "fqi-trees3-freeze_after0-drop-pv",
                     "fqi-trees3-freeze_after0-drop-pot"}
    train("fqi", store, trees=2, iters=1, jobs=1)
    with pytest.raises(ValueError, match="other settings: drop"):
        learn(fqi, store, Settings(fqi.config(trees=2, iters=1), None, ("pv",), ""), jobs=1)


def test_a_library_call_runs_where_it_is_and_takes_a_path_as_text(store: Path, tmp_path: Path,
                                                                  monkeypatch) -> None:
    """Only the command line reads BATCHRL_SCHEDULER (into --scheduler): a library call,
    an ablation's hero or a benchmark task on a worker never connects by itself."""
    monkeypatch.setenv("BATCHRL_SCHEDULER", "tcp://127.0.0.1:1")  # nothing listens there
    fqi = get_learner("fqi")
    out = str(tmp_path / "m.npz")
    path, _ = learn(fqi, store, Settings(fqi.config(trees=2, iters=1), None, (), ""),
                    out=out, jobs=1)
    assert path == Path(out) and path.is_file()


def test_info_says_what_fqi_runs_with_no_flags(store: Path) -> None:
    import json

    from click.testing import CliRunner

    from batchrl.cli import main

    result = CliRunner().invoke(main, ["info", str(store), "--json"])
    assert result.exit_code == 0, result.output
    said = json.loads(result.output)["fqi"]
    assert said["trees"] == 100 and said["iters"] == 11 and said["freeze_after"] is None
    assert said["features"] is None and said["drop"] == []


def test_learn_with_no_learner_named_runs_the_game_s_recommended_one(
        store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``batchrl learn --store S``: the learner the store's game recommends (data on its
    LearnFace), said on the first line, with the game's settings and any flag given."""
    from click.testing import CliRunner

    from batchrl.cli import main
    from batchrl.games import GAMES

    def run(*args: object) -> object:
        return CliRunner().invoke(main, ["learn", *map(str, args)], catch_exceptions=False)

    result = run("--store", store, "--trees", 3, "--iters", 1)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("learner: iql (holdem's recommended learner")
    assert "beta=0.1" in result.output  # hold'em's recommended settings for it
    assert (store / "models" / "iql-M3-nmin20-N1-tau0.9-beta0.1-clip100.npz").is_file()
    helped = run("--store", store, "--help")  # the recommended learner's help
    assert helped.exit_code == 0 and "--expectile" in helped.output, helped.output
    monkeypatch.setattr(GAMES["holdem"].learn, "learner", "bc")
    result = run(f"--store={store}", "--trees", 3)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("learner: bc (holdem's recommended learner")
    assert (store / "models" / "bc-trees3.npz").is_file()
    result = run("--store", tmp_path / "nowhere")
    assert result.exit_code == 1 and "no batchrl store at" in result.output
    assert "learner" in run("--help").output  # the group's help, no store needed
    assert "Commands:" in run("--store", tmp_path / "nowhere", "--help").output


def test_a_game_recommending_another_learner_says_so_in_info_and_learn(tmp_path: Path) -> None:
    """Leduc recommends iql (the benchmark's best or level on each tier, at beta 3):
    ``info`` shows it beside FQI's settings, and ``learn`` with no name runs it."""
    from click.testing import CliRunner

    from batchrl.cli import main

    def run(*args: object) -> object:
        return CliRunner().invoke(main, [*map(str, args)], catch_exceptions=False)

    log, store = tmp_path / "l.log", tmp_path / "s"
    assert run("generate", "--game", "leduc", "--players", "rule,random", "--hands", 300,
               "-o", log).exit_code == 0
    assert run("ingest", log, "--store", store).exit_code == 0
    shown = run("info", store).output
    assert "\nlearn     iql, " in shown and "beta=3.0" in shown and "\nfqi       " in shown
    result = run("learn", "--store", store, "--trees", 3, "--iters", 1)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("learner: iql (leduc's recommended learner")
    assert "beta=3.0" in result.output and "iql-M3-" in result.output
