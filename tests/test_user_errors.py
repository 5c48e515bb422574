"""Every mistake a user makes at the command line gets one clear line that names the
option or the file, never a traceback, a table of NaN, or a store left half made."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from locations import ROOT, SAMPLES

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
    assert "bellman residual" not in result.output  # no table header before the error
    for k in ("3", "4"):
        result = invoke("fqi", "--store", str(store), "--k", k, "--trees", "2", "--iters", "1")
        assert result.exit_code == 0, result.output
        assert f"-K{k}-" in result.output.splitlines()[-2]
    models = sorted(p.name for p in (store / "models").glob("*.npz"))
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
    import batchrl.cli.learn
    import batchrl.learners.network.report

    games, store = tmp_path / "games", tmp_path / "store"
    assert invoke("generate", "--game", "hanabi", "--players", "bot2,bot1", "--games", "12",
                  "-o", str(games)).exit_code == 0
    assert invoke("ingest", str(games), "--store", str(store)).exit_code == 0
    for where in (batchrl.cli.learn, batchrl.learners.network.report):  # as if uninstalled
        monkeypatch.setattr(where, "can_plot", lambda: False)
    result = CliRunner().invoke(main, ["imitate", "--store", str(store), "--epochs", "1",
                                       "--threads", "1"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[1].startswith("matplotlib is not installed")
    assert "curves:  not drawn (no matplotlib)" in result.output
    name = "network-hidden195x128x64x32-epochs1-colour-convention"
    assert (store / "models" / f"{name}.npz").exists()
    assert (store / "models" / f"{name}.json").exists()
    assert not (store / "models" / f"{name}.png").exists()


# ---- hostile logs: each hole an attacker's fuzzing found, now one line that names the file,
# the line and the field, a value never shown whole, no traceback and no hang -------------

@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Small logs of the games, as ``batchrl generate`` writes them."""
    folder = tmp_path_factory.mktemp("logs")
    for game, name, extra in (("holdem", "h.log", ["--hands", "10"]),
                              ("sette-mezzo", "s.jsonl", ["--games", "10"]),
                              ("tressette", "t.jsonl", ["--games", "3"]),
                              ("tressette", "t.txt", ["--games", "3"]),
                              ("president", "p.jsonl", ["--games", "3"]),
                              ("hanabi", "hanabi", ["--games", "2"])):
        result = invoke("generate", "--game", game, *extra, "-o", str(folder / name))
        assert result.exit_code == 0, result.output
    return folder


def changed(logs: Path, tmp_path: Path, name: str, line: int,
            change: Callable[[str], str]) -> Path:
    """A copy of the log ``name`` with its line ``line`` (1-based) put through ``change``."""
    source = logs / name
    if source.is_dir():
        shutil.copytree(source, tmp_path / name)
    else:
        shutil.copyfile(source, tmp_path / name)
    path = tmp_path / name
    target = path / "game000000.states.jsonl" if path.is_dir() else path
    lines = target.read_text().splitlines()
    lines[line - 1] = change(lines[line - 1])
    target.write_text("\n".join(lines) + "\n")
    return path


def refused(path: Path, *words: str, fmt: str | None = None) -> str:
    """The one error line of ingesting ``path`` (naming it and ``words``); with
    ``--on-error skip`` the same line is skipped, and the rest stored."""
    given = ["--format", fmt] if fmt else []
    result = invoke("ingest", str(path), "--store", str(path.parent / "fail"), *given)
    assert result.exit_code == 1
    line = error_line(result)
    assert str(path) in line and all(w in line for w in words), line
    assert len(line) < 600, f"{len(line):,} characters"
    result = invoke("ingest", str(path), "--store", str(path.parent / "skip"), *given,
                    "--on-error", "skip")
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    assert "skipped 1 " in result.output
    return line


@pytest.mark.parametrize("number", ["3²", "٣", "9" * 5000, "-1", "1_0"])
def test_a_hand_number_is_ascii_digits_and_short(logs: Path, tmp_path: Path, number: str) -> None:
    # "²".isdigit() is True and int() refuses it; "٣" int() takes; 5,000 digits int() refuses
    path = changed(logs, tmp_path, "h.log", 8, lambda t: re.sub(r"^STATE:\d+:",
                                                                  f"STATE:{number}:", t))
    line = refused(path, "line 8: hand number")
    assert ("(5,000 characters)" in line) == (len(number) == 5000)


@pytest.mark.parametrize("field", ["hands", "seed"])
def test_the_headers_numbers_are_whole_numbers_in_range(logs: Path, tmp_path: Path,
                                                         field: str) -> None:
    def huge(text: str) -> str:
        head, hands, seed = text.rsplit(" ", 2)
        return f"{head} {'9' * 5000 if field == 'hands' else hands} " \
               f"{'9' * 5000 if field == 'seed' else seed}"

    path = changed(logs, tmp_path, "h.log", 1, huge)
    result = invoke("ingest", str(path), "--store", str(tmp_path / "fail"))
    line = error_line(result)
    assert f"{path}, line 1: the header's {field} '9999" in line and "(5,000 characters)" in line


DEEP = '{"opponent": ' + "[" * 100_000 + "]" * 100_000 + "}"


@pytest.mark.parametrize("name", ["s.jsonl", "t.jsonl", "p.jsonl"])
def test_json_nested_100000_deep_is_a_bad_line(logs: Path, tmp_path: Path, name: str) -> None:
    path = changed(logs, tmp_path, name, 2, lambda t: DEEP)
    refused(path, "line 2: not JSON (nested too deep")


def test_json_nested_deep_on_a_tressette_logs_first_line(logs: Path, tmp_path: Path) -> None:
    # the first line tells the format (json.loads): nested, it is no format, said cleanly
    path = changed(logs, tmp_path, "t.jsonl", 1, lambda t: DEEP.replace("opponent", "plays"))
    result = invoke("ingest", str(path), "--store", str(tmp_path / "auto"))
    assert "neither" in error_line(result)
    refused(path, "line 1: not JSON (nested too deep", fmt="tressette")


def test_json_nested_deep_in_a_hanabi_game(logs: Path, tmp_path: Path) -> None:
    path = changed(logs, tmp_path, "hanabi", 3, lambda t: DEEP)
    refused(path, "game000000.states.jsonl, line 3: not JSON (nested too deep")


@pytest.mark.parametrize(("name", "field", "words"), [
    ("s.jsonl", "limit", "limit 9999"), ("s.jsonl", "reward", "reward 9999"),
    ("s.jsonl", "seed", "seed 9999"), ("t.jsonl", "leader", "leader 9999"),
    ("t.jsonl", "seed", "seed 9999"), ("p.jsonl", "returns", "returns: the moves give"),
    ("hanabi", "hints", "'hints' is 9999"), ("hanabi", "handentropy_current",
                                         "'handentropy_current' is 9999"),
])
def test_a_400_digit_number_is_out_of_range(logs: Path, tmp_path: Path, name: str, field: str,
                                            words: str) -> None:
    def huge(text: str) -> str:
        record = json.loads(text)
        record[field] = [10 ** 400 - 1] * 4 if field == "returns" else 10 ** 400 - 1
        return json.dumps(record)

    line = refused(changed(logs, tmp_path, name, 2, huge), "line 2: ", words)
    assert "(400 digits)" in line or field == "returns"


def test_an_eger_seed_of_1e400_is_a_bad_game(tmp_path: Path) -> None:
    from fuzzing import write_eger

    folder = tmp_path / "eger"
    folder.mkdir()
    rng = np.random.default_rng(1)
    for k in range(2):
        write_eger(folder / f"game{k}.log", 100 + k, rng)
    text = (folder / "game1.log").read_text()
    (folder / "game1.log").write_text(text.replace("('full', 101)", "('full', 1e400)"))
    line = refused(folder, "game1.log:2: want Treatment: ('<ai>', <seed>), the seed a whole")
    assert "1e400" in line


def test_a_transcript_win_of_no_team_is_a_bad_line(logs: Path, tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    text = (logs / "t.txt").read_text()
    path.write_text(re.sub(r"Vince TEAM [01]", "Vince TEAM x", text, count=1))
    number = path.read_text().splitlines().index("Vince TEAM x") + 1
    refused(path, f"line {number}: team 'x': want 0 or 1")


def test_a_huge_field_is_shown_as_an_excerpt_and_kept_so(logs: Path, tmp_path: Path) -> None:
    """A field of half a million characters: the error shows 80 of them and says how many;
    with --on-error skip the part's footer keeps the excerpt, not the field."""
    field = "s" + "x" * 499_999
    path = changed(logs, tmp_path, "s.jsonl", 2,
                   lambda t: re.sub(r'"actions": "\w+"', f'"actions": "{field}"', t))
    line = refused(path, "line 2: actions 'sxxx", "(500,000 characters)")
    assert len(line) < 400
    store = Store.open(tmp_path / "skip")
    (source,) = store.sources()
    assert all(len(e) < 500 for ex in source.extra["examples"].values() for e in ex)
    parts = sum(p.stat().st_size for p in (tmp_path / "skip" / "parts").glob("*.parquet"))
    assert parts < 100_000  # 500 KB of field in it otherwise


@pytest.mark.parametrize(("name", "line", "words"), [
    ("t.jsonl", 2, "a line of more than 1,048,576 characters"),
    ("h.log", 5, "a line of more than 10,000 characters"),
    ("t.txt", 43, "a line of more than 10,000 characters"),  # a team's points
])
def test_an_overlong_line_is_refused_unread(logs: Path, tmp_path: Path, name: str, line: int,
                                            words: str) -> None:
    path = changed(logs, tmp_path, name, line, lambda t: t + "x" * 2_000_000)
    refused(path, f"line {line}: ", words)


def ingest_in_a_process(*args: str) -> subprocess.CompletedProcess[str]:
    """``batchrl ingest`` in its own process, given a minute: a hang fails the test."""
    return subprocess.run([sys.executable, "-m", "batchrl", "ingest", *args],
                          capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_pipe_is_refused_before_it_is_opened(logs: Path, tmp_path: Path) -> None:
    pipe = tmp_path / "pipe.log"
    os.mkfifo(pipe)
    result = ingest_in_a_process(str(pipe), "--store", str(tmp_path / "s1"))
    assert result.returncode == 1 and "not a file (a pipe, a device?)" in result.stderr
    # the notebooks' reader too
    code = ("from pathlib import Path; from batchrl.ingest import IngestError, records_of\n"
            f"try: records_of(Path({str(pipe)!r}))\nexcept IngestError as e: print(e)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "pipe.log: not a regular file (a pipe" in result.stdout, result.stderr
    # in a directory of games (hanabi sniffing opened them) and of logs: passed over, said
    games = tmp_path / "games"
    shutil.copytree(logs / "hanabi", games)
    os.mkfifo(games / "game000009.states.jsonl")
    os.mkfifo(games / "game000001.actions.jsonl.tmp")
    os.mkfifo(games / "x.json")
    result = ingest_in_a_process(str(games), "--store", str(tmp_path / "s2"))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "game000009.states.jsonl: not a regular file (a pipe" in result.stderr
    result = ingest_in_a_process(str(games), "--store", str(tmp_path / "s3"), "--on-error",
                                 "skip")
    assert result.returncode == 0 and "2 games" in result.stdout, result.stderr
    assert "skipped 1 (file not read)" in result.stdout
    acpc = tmp_path / "acpc"
    acpc.mkdir()
    shutil.copy(logs / "h.log", acpc / "a.log")
    os.mkfifo(acpc / "b.log")
    result = ingest_in_a_process(str(acpc), "--store", str(tmp_path / "s4"))
    assert result.returncode == 0, result.stderr
    assert "b.log: not ingested: not a regular file (a pipe" in result.stdout


def test_a_link_out_of_a_directory_is_reported_not_followed(logs: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.states.jsonl"
    secret.write_text('{"SECRET-CONTENT": 1}\n')
    shutil.copy(logs / "hanabi" / "game000000.actions.jsonl", outside / "secret.actions.jsonl")
    games = tmp_path / "games"
    shutil.copytree(logs / "hanabi", games)
    (games / "game000009.states.jsonl").symlink_to(secret)
    (games / "game000009.actions.jsonl").symlink_to(outside / "secret.actions.jsonl")
    (games / "game000000.actions.jsonl").unlink()  # a pair whose actions file leaves too
    (games / "game000000.actions.jsonl").symlink_to(outside / "secret.actions.jsonl")
    inside = games / "game000001.states.jsonl"
    (games / "game000005.states.jsonl").symlink_to(inside.name)  # inside: read
    (games / "game000005.actions.jsonl").symlink_to("game000001.actions.jsonl")
    result = invoke("ingest", str(games), "--store", str(tmp_path / "s"), "--on-error", "skip")
    assert result.exit_code == 0, result.output
    assert "SECRET" not in result.output and "Traceback" not in result.output
    assert f"game000009.states.jsonl: a symbolic link to outside {games}: not followed" \
        in result.output
    assert "game000000.states.jsonl: its actions file game000000.actions.jsonl: a symbolic " \
        "link to outside" in result.output
    assert "2 games" in result.output and "skipped 2 (file not read)" in result.output
    line = error_line(invoke("ingest", str(games), "--store", str(tmp_path / "f")))
    assert "game000000.states.jsonl: its actions file" in line and "SECRET" not in line
    logs_dir = tmp_path / "acpc"
    logs_dir.mkdir()
    shutil.copy(logs / "h.log", logs_dir / "a.log")
    shutil.copy(logs / "h.log", outside / "b.log")
    (logs_dir / "b.log").symlink_to(outside / "b.log")
    result = invoke("ingest", str(logs_dir), "--store", str(tmp_path / "a"))
    assert result.exit_code == 0, result.output
    assert f"b.log: not ingested: a symbolic link to outside {logs_dir}: not followed" \
        in result.output
    assert [Path(s.path).name for s in Store.open(tmp_path / "a").sources()] == ["a.log"]
    # a directory of links alone says why nothing in it is read, not "no format"
    links = tmp_path / "links"
    links.mkdir()
    (links / "b.log").symlink_to(outside / "b.log")
    line = error_line(invoke("ingest", str(links), "--store", str(tmp_path / "l")))
    assert f"no file in it is read: b.log: a symbolic link to outside {links}: not " \
        "followed" in line and "give the log files themselves" in line


@pytest.mark.parametrize(("game", "key"), [("president", '"players":["random"'),
                                           ("tressette", '"players": ["random"')])
def test_a_lone_surrogate_in_a_name_is_a_bad_line_the_others_ingest(
        tmp_path: Path, game: str, key: str) -> None:
    log = tmp_path / f"{game}.jsonl"
    assert invoke("generate", "--game", game, "--games", "4", "-o", str(log)).exit_code == 0
    lines = log.read_text().splitlines()
    assert key in lines[1]
    lines[1] = lines[1].replace(key, key.replace('"random"', '"bad\\udc80name"'), 1)
    log.write_text("\n".join(lines) + "\n")
    store = tmp_path / "store"
    result = invoke("ingest", str(log), "--store", str(store), "--on-error", "skip")
    assert result.exit_code == 0, result.output
    assert "line 2: not text: a string holds a lone surrogate (\\udc80)" in result.output
    assert Store.open(store).info().episodes == 3  # the good lines all landed


@pytest.mark.parametrize(("name", "value", "takes"), [("t.jsonl", "expected", "points, shaped"),
                                                      ("s.jsonl", "points", "result, expected")])
def test_two_games_reward_choices_are_each_their_own(logs: Path, tmp_path: Path, name: str,
                                                     value: str, takes: str) -> None:
    """Tressette and sette e mezzo both take --reward, with other choices: a file of one
    with the other's choice is refused naming its game's, and the other files go in."""
    result = invoke("ingest", str(logs / name), str(logs / "h.log"), "--store",
                    str(tmp_path / "s"), "--reward", value, "--on-error", "skip")
    assert result.exit_code == 0 and "1 not ingested" in result.output
    assert f"{name}: not ingested: a " in result.output
    assert f"reward {value!r}: " in result.output and f"takes {takes}" in result.output
    assert Store.open(tmp_path / "s").sources()  # the hold'em log went in
