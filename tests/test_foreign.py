"""Another library's policy plays as batchrl's own: ``python:MODULE:CALLABLE`` in
``evaluate``, and a d3rlpy algorithm trained on ``batchrl export --to d3rlpy``, masked to
the legal actions, with the duplicate deals and intervals every model gets."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from batchrl.cli import main
from batchrl.export import export, load_d3rlpy
from batchrl.foreign import D3rlpyPolicy, d3rlpy_policy
from batchrl.games import get_game
from batchrl.policy import ModelError, load_policy
from batchrl.store import Store


def invoke(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def holdem(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("foreign")
    assert invoke("generate", "--game", "holdem", "--hands", 400, "--players", "random,random",
                  "--seed", 4, "-o", root / "h.log").exit_code == 0
    assert invoke("ingest", root / "h.log", "--store", root / "store").exit_code == 0
    return root / "store"


POLICY = '''
import numpy as np
from batchrl.games import get_game

class Cautious:
    """Calls whatever happens (a rule written by hand, as a policy of the protocol)."""
    def __init__(self):
        game = get_game("holdem")
        params = game.rules.params()
        self.feature_names = game.rules.feature_names(params)
        self.action_names = game.rules.action_names(params)
        self.meta = {"game": "holdem", "game_params": {}}

    def act(self, states, legal=None):
        if LOG:
            with open(LOG, "a") as f:
                f.write(f"{len(states)} ")
        return np.where(legal[:, 1], 1, np.argmax(legal, axis=1))

LOG = None

def policy():
    return Cautious()

def nothing():
    return 42
'''


def test_a_policy_written_in_python_plays_in_evaluate(holdem, tmp_path):
    module = tmp_path / "mine.py"
    module.write_text(POLICY)
    result = invoke("evaluate", "--model", f"python:{module}:policy", "--hands", 400,
                    "--duplicate", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["hands"] == 400 and report["duplicate"]
    # a calling station against the random bot: its result is a number with an interval
    assert report["bb_per_hand"]["low"] <= report["bb_per_hand"]["mean"] <= \
        report["bb_per_hand"]["high"]

    result = invoke("evaluate", "--model", f"python:{module}:nothing")
    assert result.exit_code == 1 and "gave a int, not a policy" in result.output
    result = invoke("evaluate", "--model", "python:no_such_module_here:policy")
    assert result.exit_code == 1 and "importing no_such_module_here failed" in result.output
    result = invoke("evaluate", "--model", "python:nocolon")
    assert result.exit_code == 1 and "want python:MODULE:CALLABLE" in result.output


def test_a_d3rlpy_algorithm_plays_masked_with_duplicate_deals(holdem, tmp_path, monkeypatch):
    d3rlpy = pytest.importorskip("d3rlpy")
    monkeypatch.chdir(tmp_path)
    export(holdem, "d3rlpy", tmp_path / "exp")
    dataset, _ = load_d3rlpy(tmp_path / "exp")
    scaler = d3rlpy.preprocessing.StandardObservationScaler()
    for name, config in (("cql", d3rlpy.algos.DiscreteCQLConfig()),
                         ("bc", d3rlpy.algos.DiscreteBCConfig(observation_scaler=scaler))):
        algo = config.create(device="cpu")
        algo.fit(dataset, n_steps=20, n_steps_per_epoch=20, show_progress=False,
                 logger_adapter=d3rlpy.logging.NoopAdapterFactory())
        algo.save(str(tmp_path / f"{name}.d3"))
    (tmp_path / "play.py").write_text(
        "from batchrl.foreign import d3rlpy_policy\n"
        "def cql():\n    return d3rlpy_policy('cql.d3', 'exp')\n"
        "def bc():\n    return d3rlpy_policy('bc.d3', 'exp')\n")

    # never an illegal move: whatever the mask, the choice is inside it
    states = Store.open(holdem).arrays().state[:500]
    rng = np.random.default_rng(0)
    legal = rng.random((len(states), 3)) < 0.5
    legal[~legal.any(axis=1), 0] = True
    for name in ("cql", "bc"):
        policy = load_policy(f"python:play:{name}")
        assert isinstance(policy.wrapped, D3rlpyPolicy)  # in the guard for user code
        chosen = policy.act(states, legal)
        assert legal[np.arange(len(states)), chosen].all(), name
        unmasked = policy.act(states)
        # unmasked, it plays as the algorithm does (its scaler applied to BC's logits too)
        np.testing.assert_array_equal(unmasked, policy.algo.predict(states), err_msg=name)
        forbidden = np.ones((len(states), 3), bool)
        forbidden[np.arange(len(states)), unmasked] = False  # its own choice forbidden
        assert (policy.act(states, forbidden) != unmasked).all(), name

    result = invoke("evaluate", "--model", "python:play:cql", "--hands", 400, "--duplicate",
                    "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["duplicate"] and report["hands"] == 400
    assert report["game"] == Store.open(holdem).schema.game


def test_a_d3rlpy_policy_needs_the_exports_metadata(tmp_path):
    with pytest.raises(ModelError, match="no export metadata"):
        d3rlpy_policy(object(), tmp_path)
    game = get_game("sette-mezzo")
    params = game.rules.params()

    class Table:
        def predict_value(self, x, action):
            return np.where(action == 1, 1.0, 0.0)

    meta = {"game": "sette-mezzo", "game_params": {},
            "feature_names": list(game.rules.feature_names(params)),
            "action_names": list(game.rules.action_names(params))}
    model = game.load_model("python:x:y", None, D3rlpyPolicy(Table(), meta))
    x = np.zeros((3, len(meta["feature_names"])), np.float32)
    assert model.act_batch(x, np.array([[1, 1], [1, 0], [0, 1]], bool)).tolist() == [1, 0, 1]


ODD = '''
from __future__ import annotations
from dataclasses import dataclass, field
import numpy as np

@dataclass
class Answer:
    """A policy of the protocol, as a dataclass, whose act answers ``reply``."""
    reply: object = None
    feature_names: tuple = ("total", "opponent_card")
    action_names: tuple = ("stick", "hit")
    meta: dict = field(default_factory=lambda: {"game": "sette-mezzo", "game_params": {}})

    def act(self, states, legal=None):
        return self.reply(len(states)) if callable(self.reply) else self.reply

def none():
    return Answer(None)

def floats():
    return Answer(lambda n: np.full(n, 0.9))

def table():
    return Answer(lambda n: np.zeros((n, 2), np.int64))

def outside():
    return Answer(lambda n: np.full(n, 5))

class Always:
    """A class named as the callable: made with no arguments."""
    feature_names = ("total", "opponent_card")
    action_names = ("stick", "hit")
    meta = {"game": "sette-mezzo", "game_params": {}}

    def act(self, states, legal=None):
        return np.zeros(len(states), np.int64)
'''


def test_what_a_python_policy_answers_is_checked(tmp_path):
    module = tmp_path / "odd.py"
    module.write_text(ODD)
    # a .py file with a dataclass imports as a module would; a class is made
    assert invoke("evaluate", "--model", f"python:{module}:Always").exit_code == 0
    for name, said in (("none", "answered NoneType"), ("floats", "float64"),
                       ("table", ", 2) for "), ("outside", "chose action 5, not one of its 2")):
        result = invoke("evaluate", "--model", f"python:{module}:{name}")
        assert result.exit_code == 1 and "Traceback" not in result.output, name
        assert said in result.output, (name, result.output)


def test_a_python_policy_is_a_player_in_generate_and_the_environments(holdem, tmp_path):
    from batchrl.envs import make

    module = tmp_path / "mine.py"
    log = tmp_path / "calls.txt"
    module.write_text(POLICY.replace("LOG = None", f"LOG = {str(log)!r}"))
    spec = f"python:{module}:policy"
    result = invoke("generate", "--game", "holdem", "--hands", 20, "--players",
                    f"{spec},random", "--seed", 2, "-o", tmp_path / "g.log")
    assert result.exit_code == 0, result.output
    assert invoke("ingest", tmp_path / "g.log", "--store", tmp_path / "g").exit_code == 0
    # the calling station never folds (nor raises: it calls whenever it may)
    mine = Store.open(tmp_path / "g").arrays(players=["mine"])
    assert len(mine) and (mine.action == 1).all()

    env = make("holdem", opponents=[spec])  # the other seat is the python policy
    before = len(log.read_text().split())
    for seed in range(5):
        observation, _ = env.reset(seed=seed)
        done = not observation["action_mask"].any()
        while not done:
            legal = np.flatnonzero(observation["action_mask"])
            call = 1 if 1 in legal else int(legal[0])  # never fold: the other seat acts
            observation, _, done, _, _ = env.step(call)
    assert len(log.read_text().split()) > before  # the policy decided for the other seat
