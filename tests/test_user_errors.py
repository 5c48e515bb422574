"""Every mistake a user makes at the command line gets one clear line that names the
option or the file, never a traceback, a table of NaN, or a store left half made."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from locations import SAMPLES

from batchrl.cli import main
from batchrl.store import Store

SAMPLE = SAMPLES / "random_vs_random.2p.limit.log"


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def error_line(result) -> str:
    """The one line that says what is wrong (click's usage lines aside)."""
    lines = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("errors") / "store"
    assert invoke("ingest", str(SAMPLE), "--store", str(root)).exit_code == 0
    return root


@pytest.mark.parametrize(("args", "option"), [
    (["fqi", "--trees", "0"], "--trees"), (["fqi", "--nmin", "1"], "--nmin"),
    (["fqi", "--k", "0"], "--k"), (["fqi", "--iters", "0"], "--iters"),
    (["fqi", "--jobs", "0"], "--jobs"), (["fqi", "--gamma", "0"], "--gamma"),
    (["ablate", "--hands", "1"], "--hands"), (["ablate", "--trees", "0"], "--trees"),
    (["imitate", "--epochs", "0"], "--epochs"), (["imitate", "--dropout", "1"], "--dropout"),
    (["imitate", "--batch-size", "0"], "--batch-size"), (["imitate", "--lr", "0"], "--lr"),
    (["evaluate", "--game", "holdem", "--hands", "-5"], "--hands"),
    (["evaluate", "--game", "holdem", "--hands", "0"], "--hands"),
    (["generate", "--game", "holdem", "--hands", "0", "-o", "x.log"], "--hands"),
])
def test_counts_out_of_range_name_the_option(args: list[str], option: str, store: Path) -> None:
    result = invoke(*args, *(["--store", str(store)] if args[0] in ("fqi", "ablate",
                                                                     "imitate") else []))
    assert result.exit_code == 2
    assert option in error_line(result)


def test_k_beyond_the_inputs_is_refused_and_k_is_in_the_model_name(store: Path) -> None:
    result = invoke("fqi", "--store", str(store), "--k", "50", "--trees", "2", "--iters", "1")
    assert result.exit_code == 1
    line = error_line(result)
    assert "--k 50" in line and "12 inputs here (11 features and the action)" in line
    assert "iter" not in result.output  # no table header before the error
    for k in ("3", "4"):
        result = invoke("fqi", "--store", str(store), "--k", k, "--trees", "2", "--iters", "1")
        assert result.exit_code == 0, result.output
        assert f"-K{k}-" in result.output.splitlines()[-1]
    models = sorted(p.name for p in (store / "models").iterdir() if p.is_file())
    assert len([m for m in models if "-K3-" in m]) == len([m for m in models if "-K4-" in m]) == 1


def test_resume_of_a_finished_run_says_so(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "m.model"
    args = ["fqi", "--store", str(store), "--trees", "2", "--iters", "1", "--out", str(out)]
    assert invoke(*args).exit_code == 0
    result = invoke(*args, "--resume")
    assert result.exit_code == 1
    assert "--resume: the run is finished" in error_line(result) and str(out) in result.output


def test_ingest_keeps_the_good_files_of_many_and_names_the_others(tmp_path: Path) -> None:
    foreign = tmp_path / "other.log"  # a log of a game batchrl does not know
    foreign.write_text("# name/game/hands/seed x ./custom.game 1 0\n"
                       + "\n".join(SAMPLE.read_text().splitlines()[1:]) + "\n")
    store = tmp_path / "store"
    result = invoke("ingest", str(foreign), str(SAMPLE), "--store", str(store),
                    "--on-error", "skip")
    assert result.exit_code == 0, result.output
    assert f"{foreign}: not ingested:" in result.output
    assert "2 sources" not in result.output and "1 not ingested" in result.output
    assert [s.path for s in Store.open(store).sources()] == [str(SAMPLE)]
    # without skip: the first bad file stops the ingest, naming it and the way out
    result = invoke("ingest", str(foreign), str(SAMPLE), "--store", str(tmp_path / "s2"))
    assert result.exit_code == 1 and "other.log" in result.output
    assert "--on-error skip" in result.output
    assert not (tmp_path / "s2").exists()  # a store it made, with nothing in it: not left


def test_a_directory_of_acpc_logs_is_its_logs(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(SAMPLE, logs / "a.log")
    (logs / "b.log").write_text(SAMPLE.read_text().replace("random", "other"))
    (logs / "README.md").write_text("# about these logs\n")
    result = invoke("ingest", str(logs), "--store", str(tmp_path / "store"))
    assert result.exit_code == 0, result.output
    assert "README.md: not ingested: no format batchrl reads" in result.output
    assert len(Store.open(tmp_path / "store").sources()) == 2


def test_a_failed_ingest_leaves_no_empty_store(tmp_path: Path) -> None:
    games = tmp_path / "games"
    assert invoke("generate", "--game", "hanabi", "--players", "bot2,bot2", "--games", "2",
                  "-o", str(games)).exit_code == 0
    first = sorted(games.iterdir())[0]
    first.write_text(first.read_text()[:-40] + "}\n")  # a game cut short: not JSON
    result = invoke("ingest", str(games), "--store", str(tmp_path / "store"))
    assert result.exit_code == 1 and first.name in result.output
    assert not (tmp_path / "store").exists()


def test_info_and_policy_show_speak_json(store: Path, tmp_path: Path) -> None:
    info = json.loads(invoke("info", str(store), "--json").output)
    assert info["rows"] == Store.open(store).info().rows and "pv" in info["features"]
    assert info["sources"][0]["path"] == str(SAMPLE) and info["schema_version"] == 3
    out = tmp_path / "m.model"
    assert invoke("fqi", "--store", str(store), "--trees", "2", "--iters", "2", "--out",
                  str(out)).exit_code == 0
    shown = json.loads(invoke("policy", "show", str(out), "--json").output)
    assert shown["feature_names"] == info["features"] and len(shown["history"]) == 2


def test_imitate_without_matplotlib_saves_the_network_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch", reason="batchrl imitate needs torch (the test extra)")
    import batchrl.imitation

    games, store = tmp_path / "games", tmp_path / "store"
    assert invoke("generate", "--game", "hanabi", "--players", "bot2,bot1", "--games", "12",
                  "-o", str(games)).exit_code == 0
    assert invoke("ingest", str(games), "--store", str(store)).exit_code == 0
    monkeypatch.setattr(batchrl.imitation, "can_plot", lambda: False)
    result = CliRunner().invoke(main, ["imitate", "--store", str(store), "--epochs", "1",
                                       "--threads", "1"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("matplotlib is not installed")
    assert "curves:  not drawn (no matplotlib)" in result.output
    assert (store / "models" / "imitation.pt").exists()
    assert not (store / "models" / "imitation.png").exists()
