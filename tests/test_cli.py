import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from locations import ROOT

from batchrl.cli import main
from batchrl.store import Store


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.mark.parametrize("command", [[], ["ingest"], ["info"], ["fqi"], ["generate"],
                                     ["evaluate"], ["solve"]])
def test_every_command_explains_itself(command):
    result = invoke(*command, "--help")
    assert result.exit_code == 0
    assert "Usage: main" in result.output or "Usage: batchrl" in result.output
    assert len(result.output.splitlines()) > 5


def test_ingest_then_info(sample_log: Path, tmp_path: Path):
    store = tmp_path / "store"
    result = invoke("ingest", str(sample_log), "--store", str(store))
    assert result.exit_code == 0, result.output
    assert "500 hands" in result.output and "hands/s" in result.output
    result = invoke("info", str(store))
    assert result.exit_code == 0
    for needle in ("rows", "episodes", "500", "stage, raises", "fold, call, raise",
                   sample_log.name):
        assert needle in result.output


def test_default_store_comes_from_the_environment(sample_log, tmp_path, monkeypatch):
    monkeypatch.setenv("BATCHRL_STORE", str(tmp_path / "env_store"))
    assert invoke("ingest", str(sample_log), "--no-pv").exit_code == 0
    result = invoke("info")
    assert "pv" not in result.output.split("features", 1)[1].split("\n", 1)[0].split(", ")


def test_errors_are_one_clear_line_not_a_traceback(tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\nworld\n")
    result = invoke("ingest", str(bad), "--store", str(tmp_path / "s"))
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert "notes.txt" in result.output and "neither an ACPC dealer log" in result.output
    result = invoke("info", str(tmp_path / "nothing"))
    assert result.exit_code == 1 and "Traceback" not in result.output


def test_skipped_lines_are_reported(sample_log, tmp_path):
    lines = sample_log.read_text().splitlines()
    lines.insert(7, "STATE:1:zz:5d5c|9hQd:5|-5:a|b")
    log = tmp_path / "with_bad_line.log"
    log.write_text("\n".join(lines) + "\n")
    result = invoke("ingest", str(log), "--store", str(tmp_path / "s"), "--on-error", "skip")
    assert result.exit_code == 0
    assert "skipped 1 (malformed line)" in result.output
    assert "with_bad_line.log, line 8" in result.output
    result = invoke("ingest", str(log), "--store", str(tmp_path / "s2"))
    assert result.exit_code == 1 and "line 8" in result.output and "--on-error skip" in \
        result.output


def test_files_stored_before_a_failure_are_reported(sample_log, tmp_path):
    bad = tmp_path / "bad.log"
    bad.write_text("STATE:0:cc/cc/cc/cc/:5d5c|9hQd/8dAs8s/4h/6d:0|0:a|b\n")
    result = invoke("ingest", str(sample_log), str(bad), "--store", str(tmp_path / "s"))
    assert result.exit_code == 1
    assert f"{sample_log}: acpc, holdem.limit.2p.reverse_blinds: 500 hands" in result.output
    assert "bad.log, line 1" in result.output
    assert "500" in invoke("info", str(tmp_path / "s")).output


def test_unwritable_store_is_a_clean_error(sample_log, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = invoke("ingest", str(sample_log), "--store", str(blocker / "store"))
    assert result.exit_code != 0 and "Traceback" not in result.output


@pytest.fixture
def sample_store(sample_log, tmp_path):
    store = tmp_path / "store"
    assert invoke("ingest", str(sample_log), "--store", str(store)).exit_code == 0
    return store


def test_fqi_as_the_user_writes_it_then_policy_show(sample_store, monkeypatch):
    monkeypatch.setenv("BATCHRL_STORE", str(sample_store))
    result = invoke("fqi", "--trees", "5", "--nmin", "20", "--iters", "3")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    # what it runs first: the game's recommended settings, with the flags given winning
    assert lines[0] == ("settings: trees=5, nmin=20, k=None, iters=3, gamma=1.0, "
                        "per_action=False, freeze_after=None, support=None, seed=0 (holdem's "
                        "recommended settings, with iters, nmin, trees as given)")
    assert lines[1].split()[:3] == ["iter", "bellman", "residual"]
    assert [line.split()[0] for line in lines[2:5]] == ["1", "2", "3"]
    model = sample_store / "models" / "fqi-M5-nmin20-N3.npz"
    assert f"model in {model}" in lines[-2] and model.exists()
    assert lines[-1] == f"play it: batchrl evaluate --model {model}"
    shown = invoke("policy", "show", str(model)).output
    assert "holdem.limit.2p.reverse_blinds" in shown and "fold, call, raise" in shown
    rows = Store.open(sample_store).info().rows
    assert "trees=5" in shown and f"{rows:,} rows" in shown


def test_a_second_seed_or_other_features_never_replace_a_model_silently(sample_store):
    args = ["fqi", "--store", str(sample_store), "--trees", "2", "--iters", "1"]
    models = sample_store / "models"
    assert invoke(*args).exit_code == 0
    first = (models / "fqi-M2-nmin20-N1.npz").read_bytes()
    seeded = invoke(*args, "--seed", "1")
    assert seeded.exit_code == 0 and (models / "fqi-M2-nmin20-N1-seed1.npz").exists()
    assert (models / "fqi-M2-nmin20-N1.npz").read_bytes() == first
    other = invoke(*args, "--drop", "pv")  # the same default name: refused, model kept
    assert other.exit_code == 1 and "Traceback" not in other.output
    assert "holds a model made with other settings: drop [] (this run: ['pv'])" in \
        other.output and "Give --out" in other.output
    assert (models / "fqi-M2-nmin20-N1.npz").read_bytes() == first
    assert invoke(*args).exit_code == 0  # the same settings again: replaced, as asked


def test_fqi_selects_features_by_name(sample_store, tmp_path):
    out = tmp_path / "m.npz"
    result = invoke("fqi", "--store", str(sample_store), "--trees", "3", "--iters", "2",
                    "--drop", "pv,pot", "--fast", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "frozen" in result.output
    shown = invoke("policy", "show", str(out)).output
    features = shown.split("\nfeatures", 1)[1].split("\n", 1)[0]
    assert "pv" not in features.split(", ") and "stage" in features
    bad = invoke("fqi", "--store", str(sample_store), "--features", "stage,nonsense")
    assert bad.exit_code == 1 and "nonsense" in bad.output and "Traceback" not in bad.output


@pytest.mark.slow
def test_killed_fqi_resumes_to_the_same_model(sample_store, tmp_path):
    import numpy as np

    from batchrl.learners.fqi.model import GreedyPolicy
    from batchrl.modelfile import read
    from batchrl.store import Store

    args = ["--store", str(sample_store), "--trees", "10", "--nmin", "5", "--iters", "60",
            "--seed", "3"]
    whole = tmp_path / "whole.npz"
    assert invoke("fqi", *args, "--out", str(whole)).exit_code == 0
    killed = tmp_path / "killed.npz"
    ckpt = tmp_path / "killed.npz.ckpt" / "checkpoint.npz"
    proc = subprocess.Popen([sys.executable, "-m", "batchrl", "fqi", *args, "--out",
                             str(killed)], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not (ckpt.exists() and read(ckpt, "fqi-checkpoint")[0]["done"] >= 3):
        assert proc.poll() is None, "fqi finished before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not killed.exists()
    result = invoke("fqi", *args, "--out", str(killed), "--resume")
    assert result.exit_code == 0, result.output
    said = result.output.splitlines()[1]
    assert said.startswith("--resume: going on from iteration ") and "killed.npz.ckpt" in said
    resumed = int(said.split("iteration ")[1].split()[0])
    first = int(result.output.splitlines()[3].split()[0])
    assert first == resumed > 3  # it went on from the checkpoint, as it said
    states = Store.open(sample_store).arrays().state
    np.testing.assert_array_equal(GreedyPolicy.load(killed).q_values(states),
                                  GreedyPolicy.load(whole).q_values(states))


def test_hanabi_from_the_command_line(tmp_path: Path):
    pytest.importorskip("torch", reason="batchrl imitate needs torch (the test extra)")
    games, store = tmp_path / "games", tmp_path / "store"
    result = invoke("generate", "--game", "hanabi", "--players", "bot2,bot1", "--games", "20",
                    "-o", str(games))
    assert result.exit_code == 0 and "20 games written" in result.output
    result = invoke("ingest", str(games), "--store", str(store))
    assert result.exit_code == 0 and "hanabi-json, hanabi: 20 games" in result.output
    result = invoke("imitate", "--store", str(store), "--epochs", "2", "--threads", "1")
    assert result.exit_code == 0, result.output
    assert "view colour_order=True,features=convention (hanabi's recommended settings, " \
        "with epochs as given)" in result.output  # the game's view with no flags
    name = "network-hidden195x128x64x32-epochs2-colour-convention"
    assert "precision" in result.output and (store / "models" / f"{name}.png").exists()
    net = store / "models" / f"{name}.npz"
    figures = json.loads((store / "models" / f"{name}.json").read_text())
    assert len(figures["history"]) == 2 and len(figures["report"]) == 20
    result = invoke("evaluate", "--game", "hanabi", "--players", f"model:{net},bot2",
                    "--players", "bot2,bot2", "--games", "5")
    assert result.exit_code == 0, result.output
    assert f"model:{name}.npz + bot2" in result.output and "bot2 + bot2" in result.output
    result = invoke("learn", "network", "--store", str(store), "--epochs", "1", "--inputs",
                    "report", "--no-colour-order", "--jobs", "1", "--player", "bot*")
    assert result.exit_code == 0 and "network-hidden195x128x64x32-epochs1-report-player-" \
        "botany.npz" in result.output, result.output  # a pattern picks players here too
    result = invoke("learn", "bc", "--store", str(store), "--no-colour-order", "--trees", "2")
    assert result.exit_code == 0 and "bc-trees2-k30.npz" in result.output  # no view at all
    result = invoke("learn", "bc", "--store", str(store), "--inputs", "hints", "--features",
                    "hints")
    assert result.exit_code == 1 and "give either its options or --features" in result.output
    result = invoke("evaluate", "--game", "hanabi", "--players", "nobody,bot2", "--games", "5")
    assert result.exit_code != 0 and "unknown Hanabi player 'nobody'" in result.output


@pytest.mark.slow
@pytest.mark.parametrize("suits", ["dealt", "canonical"])
def test_tressette_from_the_command_line(tmp_path: Path, suits: str):
    log, store = tmp_path / "hands.txt", tmp_path / "store"
    result = invoke("generate", "--game", "tressette", "--players", "seed-heuristic,random",
                    "--games", "40", "-o", str(log))
    assert result.exit_code == 0 and "(transcript)" in result.output
    result = invoke("ingest", str(log), "--store", str(store), "--suits", suits)
    assert result.exit_code == 0 and "tressette-transcript, tressette: 40 hands" in result.output
    result = invoke("fqi", "--store", str(store), "--per-action", "--fast", "--trees", "5",
                    "--iters", "2", "--out", str(tmp_path / "m.npz"))
    assert result.exit_code == 0, result.output
    result = invoke("evaluate", "--game", "tressette", "--team", f"model:{tmp_path / 'm.npz'}",
                    "--vs", "random", "--games", "40")
    assert result.exit_code == 0 and "hands won" in result.output, result.output
    assert ("hand_Aa" in Store.open(store).schema.feature_names) == (suits == "canonical")


def test_ctrl_c_says_what_was_kept_and_how_to_go_on_and_exits_130(sample_log, sample_store,
                                                                  monkeypatch):
    from batchrl.games.holdem.faces import HoldemPlay

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("batchrl.cli.learn.fit", interrupted)
    result = invoke("fqi", "--store", str(sample_store), "--trees", "2", "--iters", "1")
    assert result.exit_code == 130 and "Aborted" not in result.output
    assert "stopped (Ctrl-C): every finished iteration is checkpointed" in result.output
    assert "--resume" in result.output
    monkeypatch.setattr(sys.modules["batchrl.cli.main"], "run_ingest", interrupted)
    result = invoke("ingest", str(sample_log), "--store", str(sample_store))
    assert result.exit_code == 130 and "the logs read to the end are in the store" in \
        result.output
    monkeypatch.setattr(HoldemPlay, "evaluate", interrupted)  # a command without a note
    result = invoke("evaluate", "--game", "holdem", "--players", "random,random")
    assert result.exit_code == 130 and "stopped (Ctrl-C) before evaluate finished" in \
        result.output


def test_piped_progress_says_how_far_it_is_every_so_often(monkeypatch, capsys):
    """Where no bar shows (stderr piped), a long command prints a line every PIPED_EVERY
    seconds (30 by default), so it is never silent."""
    import time

    from batchrl.cli import common

    monkeypatch.setattr(common, "PIPED_EVERY", 0.05)
    said = ""
    with common.progress(200, "playing") as advance:
        advance(50)
        for _ in range(100):  # up to 5 s for two lines, however loaded the machine
            time.sleep(0.05)
            said += capsys.readouterr().err
            if said.count("\n") >= 2:
                break
    lines = [x for x in said.splitlines() if x]
    assert len(lines) >= 2 and lines[0].startswith("playing: 25%, 50 of 200 after")
    capsys.readouterr()  # a line the heartbeat wrote after the loop's last read, before its join
    with common.progress(200, "playing", lines=False) as advance:  # a command printing JSON
        advance(50)
        time.sleep(0.3)
    assert capsys.readouterr().err == ""


def test_fqi_draws_its_curves_and_warns_when_q_passes_every_logged_return(sample_store):
    from batchrl.learners.fqi.curves import out_of_range
    from batchrl.policy import policy_meta

    result = invoke("fqi", "--store", str(sample_store), "--trees", "3", "--iters", "2")
    assert result.exit_code == 0, result.output
    model = sample_store / "models" / "fqi-M3-nmin20-N2.npz"
    assert f"curves: {model.with_suffix('.png')}" in result.output
    assert model.with_suffix(".png").stat().st_size > 1000
    meta = policy_meta(model)
    largest = meta["max_abs_return"]
    assert largest > 0 and meta["history"][-1]["max_abs_q"] <= largest  # no warning here
    assert "warning" not in result.output
    said = out_of_range(meta["history"], meta["history"][-1]["max_abs_q"] / 2)
    assert said is not None and "past the largest |return| of any logged decision" in said


@pytest.mark.parametrize("args", [
    ["--game", "holdem", "--players", "rule,random", "--hands", "200"],
    ["--game", "tressette", "--team", "rule", "--vs", "random", "--games", "20"],
    ["--game", "hanabi", "--players", "bot2,bot2", "--players", "simple,simple",
     "--games", "10"],
    ["--game", "president", "--players", "rule,random,random,random", "--games", "40"],
    ["--game", "leduc", "--players", "rule,random"],
], ids=lambda a: a[1])
def test_evaluate_draws_its_intervals(args, tmp_path):
    pytest.importorskip("matplotlib", reason="--plot draws with matplotlib")
    chart = tmp_path / "chart.png"
    result = invoke("evaluate", *args, "--plot", str(chart))
    assert result.exit_code == 0, result.output
    assert f"chart: {chart}" in result.output and chart.stat().st_size > 2000
    bad = invoke("evaluate", *args, "--plot", str(tmp_path / "chart.txt"))
    assert bad.exit_code == 1 and "name a .png, .svg or .pdf file" in bad.output
