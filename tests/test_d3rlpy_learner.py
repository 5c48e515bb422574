"""d3rlpy's discrete learners as a batchrl learner: trained by d3rlpy on a store's rows,
kept as arrays and JSON, played here in numpy masked to the legal moves, and
benchmarked beside batchrl's own (``bench --peers d3rlpy``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from batchrl.cli import main
from batchrl.learners import get_learner
from batchrl.learners.d3rlpy import ALGOS, episodes_of, read_policy
from batchrl.modelfile import ModelError, read, write
from batchrl.store import Store

pytest.importorskip("d3rlpy", reason="the d3rlpy learner trains with d3rlpy (export extra)")


def invoke(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("d3")
    log = root / "l.log"
    assert invoke("generate", "--game", "leduc", "--hands", 1500, "--seed", 3, "-o",
                  log).exit_code == 0
    assert invoke("ingest", log, "--store", root / "store").exit_code == 0
    return root / "store"


@pytest.mark.parametrize("algo", ALGOS)
def test_each_algorithm_learns_saves_and_plays_masked(store: Path, algo: str) -> None:
    from batchrl.learning import learn, settings

    learner = get_learner("d3rlpy")
    data = Store.open(store).arrays()
    chosen = settings(learner, store, {"algo": algo, "steps": 60, "batch_size": 64,
                                       "hidden": "32,16", "seed": 1})
    path, policy = learn(learner, store, chosen, jobs=1)
    back = read_policy(path)
    np.testing.assert_array_equal(back.values(data.state[:200]),
                                  policy.values(data.state[:200]))
    legal = data.legal[:200]
    chosen = back.act(data.state[:200], legal)
    assert legal[np.arange(200), chosen].all()  # never an illegal move
    result = invoke("evaluate", "--game", "leduc", "--players", f"model:{path},random")
    assert result.exit_code == 0 and "chips per hand" in result.output, result.output
    assert back.meta["params"]["algo"] == algo and back.meta["d3rlpy"]


def test_bcq_plays_only_moves_its_imitator_finds_likely_enough() -> None:
    from batchrl.learners.d3rlpy import D3rlpyPolicy

    eye = [(np.eye(1, dtype=np.float32), np.zeros(1, np.float32))]
    q = (eye, (np.array([[0.0], [0.0], [9.0]], np.float32), np.array([1, 0, 0], np.float32)))
    imitator = (eye, (np.zeros((3, 1), np.float32), np.log(np.array([0.6, 0.3, 0.1],
                                                                     np.float32))))
    meta = {"feature_names": ["x"], "action_names": ["a", "b", "c"]}
    bcq = D3rlpyPolicy("bcq", {"q": q, "imitator": imitator}, 0.3, meta)
    x = np.ones((2, 1), np.float32)
    # c has the best Q but a sixth of a's probability: not played; without a, b is likely
    assert bcq.act(x, np.array([[1, 1, 1], [0, 1, 1]], bool)).tolist() == [0, 2]
    assert D3rlpyPolicy("dqn", {"q": q}, 0.3, meta).act(x).tolist() == [2, 2]


def test_rows_become_episodes_as_their_next_states_say(store: Path) -> None:
    """A store whose next state is the seat's next decision gives one episode per seat and
    hand, each in order; rows whose next state is the next row's stay in their order."""
    t = Store.open(store).arrays()
    order, ends = episodes_of(t)
    inner = ~ends[:-1]
    np.testing.assert_array_equal(t.next_state[order[:-1][inner]], t.state[order[1:][inner]])
    assert ends.sum() == len(np.unique(np.c_[t.episode, t.player], axis=0))
    from dataclasses import replace

    chained = replace(t, next_state=np.r_[t.state[1:], np.zeros_like(t.state[:1])])
    order, ends = episodes_of(chained)
    assert order.tolist() == list(range(len(t)))


def test_a_crafted_model_file_is_refused_in_one_line(store: Path) -> None:
    learner = get_learner("d3rlpy")
    policy = learner.fit(learner.config(algo="dqn", steps=20, batch_size=32, hidden="8"),
                         Store.open(store).arrays(), jobs=1)
    path = policy.save(store / "models" / "crafted.npz")
    document, arrays = read(path, "d3rlpy")
    document.pop("format"), document.pop("kind")
    arrays = dict(arrays)
    arrays["q_head_weight"] = arrays["q_head_weight"][:2]
    write(path, "d3rlpy", document, arrays)
    with pytest.raises(ModelError, match="q_head_weight is not"):
        read_policy(path)
    write(path, "d3rlpy", {**document, "algo": "sac"}, arrays)
    with pytest.raises(ModelError, match="its algo"):
        read_policy(path)


@pytest.mark.slow
def test_bench_runs_d3rlpy_as_a_peer(tmp_path: Path) -> None:
    result = invoke("bench", "--quick", "--games", "leduc", "--tiers", "random", "--learners",
                    "fqi", "--peers", "d3rlpy", "--seeds", "1", "--json", "-o",
                    tmp_path / "out", "--cache", tmp_path / "cache", "-j", "1")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    learned = {r["learner"] for r in document["rows"] if r["seed"] is not None}
    assert learned == {"fqi", *(f"d3rlpy:algo={a}" for a in ("cql", "bcq", "dqn", "bc"))}
    assert all("steps=200" in r["settings"] for r in document["rows"]
               if r["learner"].startswith("d3rlpy"))
    assert {p["learner"] for p in document["paired"]} == learned - {"fqi"}
