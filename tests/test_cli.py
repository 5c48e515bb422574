from pathlib import Path

import pytest
from click.testing import CliRunner

from batchrl.cli import main


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.mark.parametrize("command", [[], ["ingest"], ["info"]])
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
