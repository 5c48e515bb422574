"""What an outside red team tried (issue 45), each a case that once did harm: batchrl
writes only where asked and only files, bounds what a string or a file can make it
allocate or run, and runs a user's code in a guard."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from locations import SAMPLES

from batchrl import modelfile
from batchrl.cli import main
from batchrl.records import writable_file

SAMPLE = SAMPLES / "random_vs_random.2p.limit.log"


def invoke(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hostile") / "store"
    assert invoke("ingest", SAMPLE, "--store", root).exit_code == 0
    return root


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


def is_fifo(path: Path) -> bool:
    return stat.S_ISFIFO(os.lstat(path).st_mode)


# ---- write only where asked, and only files ------------------------------------------

def test_a_model_is_never_written_over_the_stores_own_files(store: Path):
    manifest = (store / "store.json").read_bytes()
    result = invoke("learn", "bc", "--store", store, "--out", store / "store.json")
    assert result.exit_code == 2
    assert "a file of the store" in result.output and "models" in result.output
    assert (store / "store.json").read_bytes() == manifest
    part = next((store / "parts").iterdir())
    assert invoke("fqi", "--store", store, "--trees", 2, "--iters", 1,
                  "--out", part).exit_code == 2


def test_a_device_a_pipe_or_a_link_at_out_is_refused_not_replaced(store: Path, fifo: Path,
                                                                  tmp_path: Path):
    for command in (("learn", "bc"), ("fqi",), ("imitate",)):
        result = invoke(*command, "--store", store, "--out", fifo)
        assert result.exit_code == 2, (command, result.output)
        assert "not a regular file" in result.output
        assert is_fifo(fifo)
    target = tmp_path / "elsewhere.npz"
    target.write_text("someone's file")
    link = tmp_path / "link.npz"
    link.symlink_to(target)
    result = invoke("learn", "bc", "--store", store, "--out", link)
    assert result.exit_code == 2 and "symbolic link" in result.output
    assert target.read_text() == "someone's file" and link.is_symlink()


def test_the_library_refuses_too(fifo: Path, store: Path):
    with pytest.raises(modelfile.ModelError, match="not a regular file"):
        modelfile.write(fifo, "example", {"answer": 42}, {"x": np.arange(3)})
    assert is_fifo(fifo)
    assert writable_file(store / "models" / "m.npz") == ""
    assert "a file of the store" in writable_file(store / "parts" / "m.npz")
    assert "a file of the store" in writable_file(store / ".lock")
    assert writable_file(store.parent / "m.npz") == ""


def test_evaluate_plot_export_and_bench_outputs_are_checked(store: Path, fifo: Path,
                                                            tmp_path: Path):
    result = invoke("evaluate", "--game", "holdem", "--players", "random,random",
                    "--hands", 10, "--plot", fifo)
    assert result.exit_code == 2 and "not a regular file" in result.output
    folder = tmp_path / "folder"
    folder.mkdir()
    link = tmp_path / "out"
    link.symlink_to(folder)
    result = invoke("export", store, "--to", "d3rlpy", "-o", link)
    assert result.exit_code == 2 and "symbolic link" in result.output
    assert list(folder.iterdir()) == []
    result = invoke("bench", "--quick", "-o", fifo)
    assert result.exit_code == 2 and "not a directory" in result.output


# ---- a user's python: policy runs in a guard ------------------------------------------

USER_CODE = '''
import sys
import numpy as np
from batchrl.games import get_game

class Raising:
    def __init__(self):
        game = get_game("holdem")
        params = game.rules.params()
        self.feature_names = game.rules.feature_names(params)
        self.action_names = game.rules.action_names(params)
        self.meta = {"game": "holdem", "game_params": {}}

    def act(self, states, legal=None):
        raise KeyError("the user's bug")

class Exiting(Raising):
    def act(self, states, legal=None):
        sys.exit(0)

def raising():
    return Raising()

def exiting():
    return Exiting()

def leaving():
    sys.exit(0)
'''


@pytest.mark.parametrize(("callable_", "said"), [
    ("raising", 'act() failed: KeyError: "the user\'s bug"'),
    ("exiting", "act() failed: SystemExit: 0"),
    ("leaving", "leaving() failed: SystemExit: 0")])
def test_a_users_policy_that_raises_or_exits_is_one_line_and_a_failure(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, callable_: str, said: str):
    (tmp_path / "users_policy.py").write_text(USER_CODE)
    monkeypatch.chdir(tmp_path)
    result = invoke("evaluate", "--model", f"python:users_policy:{callable_}",
                    "--opponent", "random", "--hands", 20)
    assert result.exit_code == 1, result.output
    assert said in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_the_current_directory_is_on_the_path_only_for_the_users_import(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import sys

    from batchrl.foreign import load_foreign

    (tmp_path / "users_policy2.py").write_text(USER_CODE)
    monkeypatch.chdir(tmp_path)
    before = list(sys.path)
    assert load_foreign("python:users_policy2:raising").action_names
    assert sys.path == before  # a matplotlib.py here is not what --plot then imports


# ---- bounds on what a string or a file can make batchrl allocate or run -------------

@pytest.mark.parametrize(("flags", "said"), [
    (("--hidden", "30000,30000"), "want widths from 1 to 4,096"),
    (("--hidden", "100000,100000"), "want widths from 1 to 4,096"),
    (("--hidden", "4096,4096,4096,4096"), "weights between its layers"),
    (("--learning-rate", "1e300"), "a rate in (0, 1]"),
    (("--batch-size", "100000000"), "batches of 2 to 16,384")])
def test_network_sizes_and_settings_are_bounded(store: Path, flags, said):
    result = invoke("learn", "network", "--store", store, *flags)
    assert result.exit_code != 0 and said in result.output, result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("args", [("d3rlpy", "--learning-rate", "inf"),
                                  ("d3rlpy", "--alpha", "nan"), ("fqi", "--gamma", "nan")])
def test_a_setting_that_is_not_a_finite_number_is_refused(store: Path, args):
    result = invoke("learn", args[0], "--store", store, *args[1:])
    assert result.exit_code != 0 and "want a finite number" in result.output, result.output


def test_fqi_support_nan_is_refused(store: Path):
    result = invoke("fqi", "--store", store, "--support", "nan")
    assert result.exit_code != 0 and "nan" in result.output.lower()
    assert "Traceback" not in result.output


def test_a_network_file_wider_than_any_layer_here_is_refused(tmp_path: Path):
    from batchrl.games import get_game
    from batchrl.learners.network.model import Layer, NetworkPolicy
    from batchrl.policy import ModelError, load_policy

    rules = get_game("holdem").rules
    params = rules.params()
    features, actions = rules.feature_names(params), rules.action_names(params)
    meta = {"game": "holdem", "game_params": {}, "learner": "network",
            "feature_names": list(features), "action_names": list(actions)}
    wide, zeros = 5_000, np.zeros
    layers = [Layer("linear", {"weight": zeros((0, len(features)), np.float32),
                               "bias": zeros(0, np.float32)}),
              Layer("linear", {"weight": zeros((wide, 0), np.float32),
                               "bias": zeros(wide, np.float32)}),
              Layer("linear", {"weight": zeros((len(actions), wide), np.float32),
                               "bias": zeros(len(actions), np.float32)})]
    path = NetworkPolicy(layers, zeros(len(features), np.float32),
                         np.ones(len(features), np.float32), meta).save(tmp_path / "w.npz")
    with pytest.raises(ModelError, match="layer 0 is 0 wide"):
        load_policy(path)


@pytest.mark.parametrize(("spec", "said"), [
    ("search+worlds=1000000000:rule", "worlds=1000000000: from 1 to 1,024"),
    ("search+more=1000000000:rule", "more=1000000000: from 0 to 1,024"),
    ("search:" * 50 + "rule", "at most 2 levels"),
    ("search:" * 2000 + "rule", "at most 2 levels"),
    ("search+worlds=1024:search+worlds=1024:rule", "1,048,576 rollouts a decision"),
    ("search+worlds=64:search+worlds=65:rule", "4,160 rollouts a decision")])
def test_a_search_players_budget_and_nesting_are_bounded(spec: str, said: str):
    result = invoke("evaluate", "--game", "leduc", "--players", f"{spec},random")
    assert result.exit_code != 0 and said in result.output, result.output[-300:]
    assert "Traceback" not in result.output and len(result.output.splitlines()) <= 3


def test_a_game_file_that_is_a_device_a_pipe_or_huge_is_not_read(tmp_path: Path, fifo: Path):
    for given, said in ((Path("/dev/zero"), "not a regular file"),
                        (fifo, "not a regular file")):
        result = invoke("ingest", SAMPLE, "--store", tmp_path / "s", "--game", given)
        assert result.exit_code != 0 and said in result.output, result.output
    big = tmp_path / "big.game"
    big.write_text("GAMEDEF\n" + "# padding\n" * 10_000)
    result = invoke("ingest", SAMPLE, "--store", tmp_path / "s", "--game", big)
    assert result.exit_code != 0 and "over 65,536 bytes" in result.output


# ---- tried as a new user would -----------------------------------------------------------

def test_a_mistyped_learner_names_the_learners_and_the_closest():
    result = invoke("learn", "bcc")
    assert result.exit_code == 2
    assert "no learner 'bcc': the learners are" in result.output
    assert "fqi" in result.output and "Did you mean 'bc'?" in result.output


def test_model_and_opponent_beside_players_are_refused_not_ignored(store: Path,
                                                                   tmp_path: Path):
    model = tmp_path / "bc.npz"
    assert invoke("learn", "bc", "--store", store, "--out", model).exit_code == 0
    result = invoke("evaluate", "--model", model, "--opponent", "rule",
                    "--players", f"model:{model},random", "--hands", 10)
    assert result.exit_code == 2
    assert "--model, --opponent would be ignored" in result.output
