"""The same commands on a Dask cluster give the local run's results: a LocalCluster of two
worker processes on loopback, started once for these tests and closed after them."""

import logging
import threading

import numpy as np
import pytest
from click.testing import CliRunner

from batchrl.cli import main
from batchrl.cluster import connect, scheduler_address
from batchrl.learners.fqi import extra_trees
from batchrl.learners.fqi.cluster import forest_seeds
from batchrl.learners.fqi.iterations import FQI
from batchrl.learners.fqi.model import GreedyPolicy
from batchrl.store import Store

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
# a two-worker LocalCluster for the module and the commands on it: CI's run, not the loop
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None,
                                  silence_logs=logging.ERROR) as local:
        yield local.scheduler_address


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def chain_data():
    from test_fqi import noisy

    return noisy()


@pytest.mark.parametrize("per_action, freeze_after", [(False, None), (True, 0), (False, 1)])
def test_fqi_on_the_cluster_is_the_local_fqi(cluster, per_action, freeze_after):
    data = chain_data()
    probe = np.random.default_rng(9).random((200, 3)).astype(np.float32)

    def fit(client):
        return FQI(extra_trees(trees=9, nmin=10), n_iterations=3, per_action=per_action,
                   freeze_after=freeze_after, random_state=5).fit(data, client=client)

    local = fit(None)
    with connect(cluster) as client:
        remote = fit(client)
    np.testing.assert_array_equal(remote.q_values(probe), local.q_values(probe))
    for mine, theirs in zip(local.models_, remote.models_, strict=True):
        if mine is not None:
            assert [t.random_state for t in theirs.estimators_] == \
                forest_seeds(mine).tolist()


def test_one_fqi_fitted_twice_on_the_cluster_learns_the_second_data(cluster):
    from test_fqi import noisy

    first, second = noisy(seed=1), noisy(n=2000, seed=2)
    probe = np.random.default_rng(9).random((100, 3)).astype(np.float32)

    def fqi():
        return FQI(extra_trees(trees=4, nmin=10), n_iterations=2, random_state=5)

    with connect(cluster) as client:
        reused = fqi()
        reused.fit(first, client=client)
        reused.fit(second, client=client)  # its inputs are scattered again, not the first's
    np.testing.assert_array_equal(reused.q_values(probe), fqi().fit(second).q_values(probe))


def test_fqi_command_with_a_scheduler(cluster, sample_log, tmp_path, monkeypatch):
    store = tmp_path / "s"
    assert invoke("ingest", sample_log, "--store", store).exit_code == 0
    args = ("fqi", "--store", store, "--trees", 6, "--iters", 3)
    assert invoke(*args, "--out", tmp_path / "local.npz").exit_code == 0
    result = invoke(*args, "--out", tmp_path / "remote.npz", "--scheduler", cluster)
    assert result.exit_code == 0, result.output
    monkeypatch.setenv("BATCHRL_SCHEDULER", cluster)
    assert scheduler_address(None) == cluster
    assert invoke(*args, "--fast", "--out", tmp_path / "env.npz").exit_code == 0
    states = Store.open(store).arrays().state
    local, remote = (GreedyPolicy.load(tmp_path / f"{n}.npz") for n in ("local", "remote"))
    np.testing.assert_array_equal(remote.q_values(states), local.q_values(states))


def test_a_scheduler_that_does_not_answer_is_one_line(sample_log, tmp_path, monkeypatch):
    monkeypatch.setattr("batchrl.cluster.CONNECT_SECONDS", 2.0)  # nothing listens: no 20 s wait
    store = tmp_path / "s"
    assert invoke("ingest", sample_log, "--store", store).exit_code == 0
    result = invoke("fqi", "--store", store, "--trees", 2, "--iters", 1, "--scheduler",
                    "tcp://127.0.0.1:9")
    assert result.exit_code != 0
    assert "no Dask scheduler answers there" in result.output
    assert "dask worker tcp://127.0.0.1:9" in result.output


@pytest.mark.parametrize("game, players, extra", [
    ("holdem", "rule,random", ()),
    ("holdem", "rule,random,random", ("--gamedef", "holdem.nolimit.3p")),
    ("tressette", "rule,random", ()),
    ("president", "rule,random,random,random", ()),
    ("sette-mezzo", "random", ()),
])
def test_ingest_on_the_cluster_stores_the_local_rows(cluster, tmp_path, game, players, extra):
    log = tmp_path / ("log.log" if game == "holdem" else "log.jsonl")
    result = invoke("generate", "--game", game, "--players", players, "--games", 300,
                    "--seed", 2, *extra, "-o", log)
    assert result.exit_code == 0, result.output
    for where in ("here", "there"):
        args = ["ingest", log, "--store", tmp_path / where]
        if where == "there":
            args += ["--scheduler", cluster]
        result = invoke(*args)
        assert result.exit_code == 0, result.output
    here, there = (Store.open(tmp_path / w).arrays() for w in ("here", "there"))
    assert len(here) > 0
    for name in ("state", "action", "reward", "next_legal", "terminal", "episode", "step",
                 "player"):
        np.testing.assert_array_equal(np.asarray(getattr(there, name)),
                                      np.asarray(getattr(here, name)), err_msg=name)
    assert list(there.episode_ids) == list(here.episode_ids)


def test_ablate_on_the_cluster_is_the_local_ablation(cluster, tmp_path):
    import pandas as pd

    from batchrl.play.ablation import AblationConfig, run_ablation
    from batchrl.play.experiments import make_store

    store = make_store(tmp_path / "abl", ["random", "rule"], 300, seed=5)

    def table(out, scheduler=None):
        config = AblationConfig(store=store, opponent="rule", trees=3, nmin=20, iters=3,
                                fast=True, hands=200, features=("pv", "pot"), players=("random",),
                                out=out, scheduler=scheduler, jobs=1)
        return run_ablation(config).table

    local = table(tmp_path / "local")
    remote = table(tmp_path / "remote", cluster)
    pd.testing.assert_frame_equal(remote.drop(columns="hero"), local.drop(columns="hero"))
    assert list(remote["hero"]) == list(local["hero"])
    # the workers wrote the heroes and their results where a local run does
    assert len(list((tmp_path / "remote" / "models").glob("*.npz"))) == 4
    assert len(list((tmp_path / "remote" / "results").glob("*.npz"))) == 4


def test_ablate_command_names_a_scheduler_that_does_not_answer(tmp_path, sample_log,
                                                              monkeypatch):
    monkeypatch.setattr("batchrl.cluster.CONNECT_SECONDS", 2.0)
    store = tmp_path / "s"
    assert invoke("ingest", sample_log, "--store", store).exit_code == 0
    result = invoke("ablate", "--store", store, "--features", "pv", "--hands", 20,
                    "--scheduler", "tcp://127.0.0.1:9")
    assert result.exit_code != 0 and "no Dask scheduler answers there" in result.output


# ---- evaluate: blocks of hands as tasks, the local report -------------------------------


@pytest.fixture(scope="module")
def holdem_model(tmp_path_factory):
    from locations import SAMPLES

    sample_log = SAMPLES / "random_vs_random.2p.limit.log"
    work = tmp_path_factory.mktemp("eval")
    assert invoke("ingest", sample_log, "--store", work / "s").exit_code == 0
    out = work / "m.npz"
    assert invoke("fqi", "--store", work / "s", "--trees", 4, "--iters", 2, "--fast",
                  "--out", out).exit_code == 0
    return out


def _without_time(report):
    out = report.as_dict()
    for timing in ("seconds", "hands_per_second"):
        out.pop(timing, None)
    return out


@pytest.mark.parametrize("game, group, count, module, blocks", [
    ("holdem", ("model:{model}", "random"), 120, "batchrl.games.holdem.evaluate",
     {"BLOCK": 25}),
    ("holdem", ("rule", "random", "random"), 90, "batchrl.games.holdem.evaluate",
     {"BLOCK": 10}),
    ("tressette", ("rule~0.3", "random"), 60, "batchrl.games.tressette.evaluate",
     {"BLOCK": 8}),
    ("president", ("rule", "random", "random", "random"), 24,
     "batchrl.games.president.evaluate", {"BLOCK": 1, "CHUNK": 2}),
    ("hanabi", ("bot1", "bot2"), 9, "batchrl.games.hanabi.evaluate", {"BLOCK": 4}),
])
def test_evaluate_on_the_cluster_is_the_local_evaluation(cluster, holdem_model, monkeypatch,
                                                        game, group, count, module, blocks):
    """Small blocks, so the hands are several tasks (random bots among the players: their
    draws are the block's own) and the cluster's report must equal the one made here."""
    import importlib

    from batchrl.blocks import Tasks
    from batchrl.games import GAMES

    for name, value in blocks.items():
        monkeypatch.setattr(importlib.import_module(module), name, value)
    g = GAMES[game]
    group = tuple(p.format(model=holdem_model) for p in group)
    options = {"gamedef": "holdem.nolimit.3p"} if len(group) == 3 else {}
    advanced = []
    here = g.play.evaluate([group], count, 5, options, advanced.append)
    with connect(cluster) as client, distributed.get_task_stream(client) as stream:
        told = []
        there = g.play.evaluate([group], count, 5, options, tasks=Tasks(client, told.append))
    assert _without_time(there) == _without_time(here)
    ran = [t for t in stream.data if str(t["key"]).startswith("play_block")]
    assert len(ran) == len(told) > 1  # the blocks were tasks on the workers
    assert sum(told) == sum(advanced) > 0  # and each told the progress bar its hands


def test_a_run_of_one_block_is_the_first_block_of_a_longer_run(monkeypatch):
    """Block 0 plays the seed's own streams: a run within one block plays what a longer
    run plays first (so figures published from one block stand). The deals are the
    seed's whatever the blocks; only a random bot's draws are the block's own."""
    import batchrl.games.holdem.evaluate as holdem

    monkeypatch.setattr(holdem, "BLOCK", 50)
    short = holdem.play_bots("random", "random", 50, seed=3)
    long = holdem.play_bots("random", "random", 150, seed=3, keep_states=True)
    np.testing.assert_array_equal(long.payoffs[:50], short.payoffs)
    np.testing.assert_array_equal(long.deal, np.arange(150))
    monkeypatch.setattr(holdem, "BLOCK", 10_000)
    one = holdem.play_bots("random", "random", 150, seed=3, keep_states=True)
    assert [(s.hole, s.board) for s in one.states] == [(s.hole, s.board) for s in long.states]
    assert not np.array_equal(one.payoffs, long.payoffs)  # the bots drew otherwise


@pytest.mark.parametrize("module, blocks, group, count", [
    ("batchrl.games.tressette.evaluate", {"BLOCK": 7}, ("rule", "seed-heuristic"), 40),
    ("batchrl.games.president.evaluate", {"BLOCK": 1, "CHUNK": 1}, ("rule",) * 4, 20),
    ("batchrl.games.hanabi.evaluate", {"BLOCK": 3}, ("bot2", "bot2"), 6),
])
def test_players_that_draw_nothing_play_the_same_games_in_any_blocks(monkeypatch, module,
                                                                    blocks, group, count):
    """Deals are the seed's whatever the blocks: deterministic players give one report
    (Hanabi within its first block: its later blocks deal from their own seeds)."""
    import importlib

    from batchrl.games import GAMES

    game = GAMES[module.split(".")[2]]
    whole = game.play.evaluate([group], count, 3, {})
    for name, value in blocks.items():
        monkeypatch.setattr(importlib.import_module(module), name, value)
    parts = game.play.evaluate([group], count, 3, {})
    same = _without_time(parts) == _without_time(whole)
    assert same == (module != "batchrl.games.hanabi.evaluate" or count <= blocks["BLOCK"])


def test_evaluate_command_with_a_scheduler(cluster, holdem_model, monkeypatch):
    """Several blocks, and the model named relative to this directory: the workers,
    elsewhere, are handed its absolute path."""
    import batchrl.games.holdem.evaluate as holdem

    monkeypatch.setattr(holdem, "BLOCK", 10)
    monkeypatch.chdir(holdem_model.parent)
    args = ("evaluate", "--model", holdem_model.name, "--opponent", "random", "--hands", 60,
            "--duplicate", "--json")
    here = invoke(*args)
    import batchrl.games.holdem.bots as bots
    from batchrl.learners.fqi.model import ModelArtifact

    def unread(*args, **kwargs):
        raise AssertionError("the trees are read where they play: on the workers")

    with monkeypatch.context() as m:  # here, the model's header alone is read
        m.setattr(ModelArtifact, "load", unread)
        m.setattr(bots, "load_once", unread)
        there = invoke(*args, "--scheduler", cluster)
    assert here.exit_code == 0 and there.exit_code == 0, there.output
    import json

    a, b = json.loads(here.output), json.loads(there.output)
    for timing in ("seconds", "hands_per_second"):
        a.pop(timing), b.pop(timing)
    assert a == b and a["hands"] == 60
    bad = invoke(*args, "--scheduler", "tcp://127.0.0.1:9")
    assert bad.exit_code != 0 and "no Dask scheduler answers there" in bad.output


def test_a_bad_player_file_is_named_before_any_block_is_sent(cluster, holdem_model, tmp_path):
    """On a cluster the workers read the models; every file named is checked here first,
    from its header, so a bad one costs no task."""
    not_a_model = tmp_path / "notes.npz"
    not_a_model.write_text("not a model")
    for opponent, said in ((tmp_path / "missing.npz", "is neither a bot"),
                           (not_a_model, "is not a batchrl model file")):
        with connect(cluster) as client, distributed.get_task_stream(client) as stream:
            bad = invoke("evaluate", "--model", holdem_model, "--opponent", opponent,
                         "--hands", 40, "--scheduler", cluster)
        assert bad.exit_code == 1 and said in bad.output, bad.output
        assert not [t for t in stream.data if str(t["key"]).startswith("play_block")]


@pytest.mark.parametrize(("address", "message"), [
    ("garbage::://x", "'garbage' is not a scheme Dask takes"),
    ("tcp://[::1", "not an address"),
    ("tcp://host", "want SCHEME://HOST:PORT"),
    ("tcp://user:s3cretpw@127.0.0.1:8786", r"tcp://user:\*\*\*@127.0.0.1:8786: a Dask"),
])
def test_a_scheduler_address_is_parsed_here_and_shown_without_its_password(address, message):
    from batchrl.cluster import ClusterError, scheduler_address

    with pytest.raises(ClusterError, match=message) as caught:
        scheduler_address(address)
    assert "s3cretpw" not in str(caught.value)


def test_something_that_listens_but_is_no_scheduler_is_an_error_not_a_wait(monkeypatch):
    """A web server (or anything that takes the connection and never speaks Dask) at
    the address: the connection gives up with a message after its time."""
    import socket

    pytest.importorskip("distributed")
    import batchrl.cluster as cluster

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held = []
    threading.Thread(target=lambda: held.append(listener.accept()), daemon=True).start()
    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 1.0)
    address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    try:
        with pytest.raises(cluster.ClusterError, match=r"(did not answer as a Dask scheduler|"
                                                       r"no Dask scheduler answers there)"), \
                cluster.connect(address):
            pass
    finally:
        listener.close()


def test_bench_on_the_cluster_is_the_local_bench(cluster, tmp_path):
    """Each dataset's build, each baseline and each learner's training seed as a task:
    the rows land as the tasks do, with the scores the local run gives."""
    import json

    def bench(out, *extra):
        result = invoke("bench", "--quick", "--games", "sette-mezzo,leduc", "--tiers",
                        "random", "--learners", "fqi,bc", "--seeds", "2", "--json", "-o",
                        tmp_path / out, "--cache", tmp_path / f"cache-{out}", "-j", "1",
                        *extra)
        assert result.exit_code == 0, result.output
        return result, json.loads(result.stdout)["rows"]

    _, here = bench("here")
    said, there = bench("there", "--scheduler", cluster)
    assert "training seeds as tasks on the cluster" in said.output
    assert len(there) == len(here) == 2 * (2 + 2 + 2)  # baselines, fqi and bc 2 seeds each
    key = lambda r: (r["game"], r["learner"], r["seed"])  # noqa: E731
    for a, b in zip(sorted(here, key=key), sorted(there, key=key), strict=True):
        assert key(a) == key(b) and a["score"] == b["score"], (a, b)
    assert len((tmp_path / "there" / "results.jsonl").read_text().splitlines()) == 8
