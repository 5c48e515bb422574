"""Learners as a family: one protocol from store to play.

A learner that is not a forest (``tests/linearq.py``, linear fitted Q-iteration) is
registered through the public API and runs ``learn -> evaluate -> policy show`` through
the command line on every game, with no file of the package changed; ``bc`` does the
same; any learner's model file plays Hanabi; a model file says its kind and one loader
hands it to its learner.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Optional

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from locations import ROOT

from batchrl import modelfile
from batchrl.cli import main
from batchrl.learners import (
    LEARNERS,
    LearnerError,
    get_learner,
    register_learner,
    unregister_learner,
)
from batchrl.policy import ModelError, Policy, load_policy, policy_meta
from batchrl.store import Store, Transitions

GAMES = {  # game: generate's options, and who the learned policy plays in evaluate
    "holdem": (["--hands", "150"], lambda m: ["--model", m]),
    "sette-mezzo": (["--games", "150"], lambda m: ["--model", m]),
    "tressette": (["--games", "12"], lambda m: ["--model", m]),
    "president": (["--games", "8"], lambda m: ["--players", f"model:{m},random,random,random"]),
    "hanabi": (["--games", "6"], lambda m: ["--players", f"model:{m},bot2"]),
    "leduc": (["--hands", "200"], lambda m: ["--players", f"model:{m},random"]),
}


def invoke(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict[str, Path]:
    """A small store of every game, generated and ingested by batchrl itself."""
    root = tmp_path_factory.mktemp("stores")
    made = {}
    for game, (args, _) in GAMES.items():
        log = root / f"{game}.log" if game == "holdem" else root / (
            "hanabi-games" if game == "hanabi" else f"{game}.jsonl")
        result = invoke("generate", "--game", game, *args, "--seed", 5, "-o", log)
        assert result.exit_code == 0, result.output
        result = invoke("ingest", log, "--store", root / game)
        assert result.exit_code == 0, result.output
        made[game] = root / game
    return made


@pytest.fixture
def linear():
    from linearq import LEARNER

    register_learner(LEARNER)
    yield LEARNER
    unregister_learner(LEARNER.name)


def _model(output: str) -> str:
    (path,) = [w for w in output.split() if w.endswith(".npz")][:1]
    return path


def test_every_registered_game_is_covered():
    from batchrl.games import GAMES as REGISTERED

    assert sorted(GAMES) == sorted(n for n in REGISTERED if n != "kuhn")


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_learner_registered_from_outside_learns_plays_and_shows(stores, linear, game):
    result = invoke("learn", "--help")
    assert result.exit_code == 0 and "linear" in result.output and "bc" in result.output
    result = invoke("learn", "linear", "--help")
    assert "The ridge penalty" in result.output and "--iters" in result.output

    result = invoke("learn", "linear", "--store", stores[game], "--iters", 2)
    assert result.exit_code == 0, result.output
    assert "settings: ridge=1.0, iters=2 (linear's defaults, with iters as given)" in \
        result.output
    model = _model(result.output)
    assert Path(model).name == "linear-iters2.npz"
    assert isinstance(load_policy(model), Policy)

    result = invoke("evaluate", *GAMES[game][1](model), "--games", 20, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)  # a report, in the game's own terms

    result = invoke("policy", "show", model)
    assert result.exit_code == 0, result.output
    assert "learner   linear (a linear-q file)" in result.output
    assert f"data      {stores[game]}" in result.output
    shown = json.loads(invoke("policy", "show", model, "--json").output)
    assert shown["kind"] == "linear-q" and shown["params"]["iters"] == 2
    assert shown["feature_names"] == list(Store.open(stores[game]).schema.feature_names)

    # ablate: a hero without one feature, scored by the game against its opponents
    dropped = shown["feature_names"][0]
    out = stores[game].parent / f"ablation-{game}"
    result = invoke("ablate", "--store", stores[game], "--learner", "linear", "--set",
                    "iters=2", "--features", dropped, "--hands", 4, "--out", out)
    assert result.exit_code == 0, result.output
    table = pd.read_csv(next(out.glob("ablation-*.csv")))
    assert list(table["dropped"]) == ["(none)", dropped]  # no seed: no retrained control
    assert set(table["learner"]) == {"linear"} and table["change"].notna().all()
    assert np.isfinite(table[table["score"][0]]).all()


@pytest.mark.parametrize("game", sorted(GAMES))
def test_behaviour_cloning_learns_and_plays_every_game(stores, game):
    result = invoke("learn", "bc", "--store", stores[game], "--trees", 4)
    assert result.exit_code == 0, result.output
    model = _model(result.output)
    meta = policy_meta(model)
    assert meta["learner"] == "bc" and meta["params"]["trees"] == 4
    assert meta["rows"] == len(Store.open(stores[game]).arrays(
        features=meta["params"]["features"], drop=meta["params"]["drop"]))
    result = invoke("evaluate", *GAMES[game][1](model), "--games", 20)
    assert result.exit_code == 0, result.output
    assert "learner   bc (a bc file)" in invoke("policy", "show", model).output


def test_a_game_recommends_settings_to_each_learner(stores):
    # sette e mezzo reads two features whatever the learner
    result = invoke("learn", "bc", "--store", stores["sette-mezzo"], "--trees", 3)
    assert "features total,opponent_card (sette-mezzo's recommended settings, with trees " \
        "as given)" in result.output
    assert policy_meta(_model(result.output))["feature_names"] == ["total", "opponent_card"]
    # given features win, and name the file
    result = invoke("learn", "bc", "--store", stores["sette-mezzo"], "--trees", 3,
                    "--features", "total")
    assert result.exit_code == 0, result.output
    assert policy_meta(_model(result.output))["feature_names"] == ["total"]
    assert "-features-total" in _model(result.output)


def test_hanabi_plays_an_fqi_model(stores):
    """``fqi`` trains on a Hanabi store; its model plays beside the bots (it was read as a
    network before)."""
    out = stores["hanabi"] / "models" / "f.npz"
    result = invoke("fqi", "--store", stores["hanabi"], "--trees", 3, "--iters", 2,
                    "--out", out)
    assert result.exit_code == 0, result.output
    result = invoke("evaluate", "--game", "hanabi", "--players", f"model:{out},bot2",
                    "--games", 10, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["pairs"][0]["games"] == 10
    # learn fqi is the fqi command
    assert invoke("learn", "fqi", "--help").output == invoke("fqi", "--help").output.replace(
        "Usage: main fqi", "Usage: main learn fqi")


def _data(n: int = 400, seed: int = 0) -> Transitions:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, size=(n, 2)).astype(np.float32)
    action = (x[:, 0] + x[:, 1]).astype(np.int64) % 3  # a function of the state
    return Transitions(
        state=x, action=action, reward=np.zeros(n), next_state=np.zeros_like(x),
        next_legal=np.zeros((n, 3), bool), terminal=np.ones(n, bool),
        truncated=np.zeros(n, bool), episode=np.arange(n),
        episode_ids=np.array([str(i) for i in range(n)], object),
        step=np.zeros(n, np.int32), player=np.zeros(n, np.int8),
        feature_names=("a", "b"), action_names=("x", "y", "z"))


def test_bc_imitates_a_deterministic_player_among_the_legal_moves(tmp_path):
    bc = get_learner("bc")
    data = _data()
    policy = bc.fit(bc.config(trees=5, nmin=2), data, jobs=1)
    assert (policy.act(data.state) == data.action).all()
    legal = np.ones((len(data), 3), bool)
    legal[np.arange(len(data)), data.action] = False  # the logged move forbidden
    chosen = policy.act(data.state, legal)
    assert legal[np.arange(len(data)), chosen].all()
    path = policy.save(tmp_path / "bc.npz")
    back = load_policy(path)
    np.testing.assert_array_equal(back.act(data.state, legal), chosen)


def test_the_support_constraints_behaviour_model_is_bc():
    from batchrl.learners.bc import behaviour_model
    from batchrl.learners.fqi.support import behaviour_model as support_model

    data = _data(seed=1)
    bc = get_learner("bc").fit(get_learner("bc").config(trees=4, nmin=5, seed=3), data,
                               jobs=1)
    direct = support_model(data.state, data.action, 3, trees=4, nmin=5, seed=3, jobs=1)
    assert support_model is behaviour_model
    np.testing.assert_array_equal(bc.probabilities(data.state), direct.predict(data.state))


def test_the_fqi_learner_is_the_fqi_iterations():
    from batchrl.learners.fqi import extra_trees
    from batchrl.learners.fqi.iterations import FQI

    data = _data(seed=2)
    data.reward[:] = (data.action == 1).astype(float)
    fqi = get_learner("fqi")
    policy = fqi.fit(fqi.config(trees=5, nmin=2, iters=3, seed=4), data, jobs=1)
    direct = FQI(extra_trees(5, 2, None, 1), n_iterations=3, random_state=4).fit(data)
    np.testing.assert_array_equal(policy.values(data.state), direct.q_values(data.state))


def test_a_model_of_an_unknown_kind_or_a_bad_setting_is_one_line(stores, tmp_path):
    odd = modelfile.write(tmp_path / "odd.npz", "mystery", {"meta": {}}, {})
    with pytest.raises(ModelError, match="'mystery' model, which no registered learner"):
        load_policy(odd)
    result = invoke("evaluate", "--model", odd)
    assert result.exit_code == 1 and "no registered learner reads" in result.output
    result = invoke("learn", "bc", "--store", stores["holdem"], "--nmin", 1)
    assert result.exit_code == 1 and "nmin 1" in result.output
    with pytest.raises(LearnerError, match="no learner 'sarsa'"):
        get_learner("sarsa")
    assert invoke("learn", "sarsa").exit_code == 2


def test_a_policy_that_chooses_an_illegal_move_is_refused(stores, linear, tmp_path):
    from batchrl.games import get_game

    result = invoke("learn", "linear", "--store", stores["sette-mezzo"], "--out",
                    tmp_path / "l.npz")
    assert result.exit_code == 0, result.output
    model = get_game("sette-mezzo").load_model(tmp_path / "l.npz")
    states = np.zeros((2, int(model.columns.max()) + 1), np.float32)
    assert model.act_batch(states, np.ones((2, 2), bool)).shape == (2,)
    model.policy.act = lambda states, legal=None: np.full(len(states), 7)  # type: ignore
    with pytest.raises(ModelError, match="chose action 7, not one of its 2"):
        model.act_batch(states, np.ones((2, 2), bool))
    model.policy.act = lambda states, legal=None: np.ones(len(states), np.int64)  # type: ignore
    with pytest.raises(ModelError, match="chose an illegal action"):
        model.act_batch(states, np.array([[True, False], [True, True]]))


def test_no_file_of_the_package_names_the_test_learner():
    named = [p for folder in ("batchrl", "parsers") for p in (ROOT / folder).rglob("*.py")
             if "linear-q" in p.read_text() or "linearq" in p.read_text()]
    assert named == [] and "linear" not in LEARNERS


def test_the_registry_keeps_kinds_apart_and_says_why_it_cannot_read(tmp_path, monkeypatch):
    from batchrl.learners.bc import BehaviourCloning
    from batchrl.registry import Registry

    class Impostor(BehaviourCloning):
        name = "impostor"
        kind = "model"  # fqi's files

    with pytest.raises(LearnerError, match="kind 'model' is registered already"):
        register_learner(Impostor(), replace=True)
    assert get_learner("fqi").kind == "model" and "impostor" not in LEARNERS

    package = tmp_path / "brokenparts"
    (package / "one").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "one" / "__init__.py").write_text("import no_such_module_at_all\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import brokenparts

    parts = Registry(object, "PART", "brokenparts", brokenparts.__path__, "part", ValueError)
    for _ in range(2):  # every read fails, not only the first
        with pytest.raises(ModuleNotFoundError):
            list(parts)


@dataclass(frozen=True)
class Old:
    ridge: Optional[float] = None  # noqa: UP045 (the spelling a user may have)


@dataclass(frozen=True)
class Bad:
    sizes: list = None  # type: ignore[assignment]


def test_a_config_no_command_line_can_give_is_refused_when_registered():
    from linearq import LinearQ

    class OldStyle(LinearQ):
        name, kind = "old-style", "old-style"
        Config: ClassVar[type] = Old

    class Unusable(LinearQ):
        name, kind = "unusable", "unusable"
        Config: ClassVar[type] = Bad

    assert OldStyle().settings()[0][:2] == ("ridge", float)
    with pytest.raises(LearnerError, match="setting sizes is a <class 'list'>"):
        register_learner(Unusable())
    assert "unusable" not in LEARNERS


def test_learn_alone_lists_the_learners_without_recursing():
    from batchrl.cli.learn import learn

    result = CliRunner().invoke(learn, ["--help"])
    assert result.exit_code == 0 and "bc" in result.output
    alone = CliRunner().invoke(learn, ["fqi", "--help"])  # the learner's own command
    assert alone.exit_code == 0 and "--trees" in alone.output and "--resume" in alone.output


def test_fqi_from_python_takes_the_games_fast_mode(stores):
    from batchrl.learning import settings

    chosen = settings(get_learner("fqi"), stores["tressette"], {})
    assert chosen.config.freeze_after == 0 and chosen.config.per_action
    assert chosen.drop == ("played_*", "table_*")
    given = settings(get_learner("fqi"), stores["tressette"], {"freeze_after": 2})
    assert given.config.freeze_after == 2


def test_the_fqi_learner_lets_the_rows_go_before_its_trees_come_back(monkeypatch):
    import gc
    import weakref

    from batchrl.learners.fqi.iterations import FQI

    data = _data(seed=5)
    seen = weakref.ref(data.state)
    alive: list[bool] = []
    original = FQI.q_function

    def spy(self):
        gc.collect()
        alive.append(seen() is not None)
        return original(self)

    monkeypatch.setattr(FQI, "q_function", spy)
    held = [data]
    del data
    fqi = get_learner("fqi")
    fqi.fit(fqi.config(trees=3, nmin=2, iters=2), held.pop, jobs=1)
    assert alive == [False]


def test_a_learned_policys_own_metadata_is_kept(stores, linear, monkeypatch, tmp_path):
    from types import MappingProxyType

    from linearq import LinearPolicy

    made = LinearPolicy.__init__

    def with_notes(self, weights, meta):
        made(self, weights, {**meta, "notes": "mine"})

    monkeypatch.setattr(LinearPolicy, "__init__", with_notes)
    result = invoke("learn", "linear", "--store", stores["holdem"], "--out", tmp_path / "n.npz")
    assert result.exit_code == 0, result.output
    meta = policy_meta(tmp_path / "n.npz")
    assert meta["notes"] == "mine" and meta["learner"] == "linear"

    def frozen(self, weights, meta):
        made(self, weights, meta)
        self.meta = MappingProxyType(dict(meta))

    monkeypatch.setattr(LinearPolicy, "__init__", frozen)
    result = invoke("learn", "linear", "--store", stores["holdem"], "--out", tmp_path / "f.npz")
    assert result.exit_code == 1 and "its policy's meta is a mappingproxy" in result.output


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_games_scores_pair_up_on_one_seed(stores, game):
    """Two measurements on one seed are the same deals: the same player scores the same,
    game by game, and the scores say what they count."""
    from batchrl.games import get_game

    result = invoke("learn", "bc", "--store", stores[game], "--trees", 3)
    model = f"model:{_model(result.output)}"
    g = get_game(game)
    players = (model, *g.play.ablation_opponents)
    one, two = (g.play.score(players, 8, 11, {}) for _ in range(2))
    np.testing.assert_array_equal(one.values, two.values)
    assert one.name and one.unit and (one.exact or len(one.values) >= 8)
    assert len(one.values) % one.per_unit == 0


def test_policy_show_on_an_old_torch_network_says_what_it_is(tmp_path):
    torch = pytest.importorskip("torch")
    network = tmp_path / "imitation.pt"
    torch.save({"state_dict": {}, "meta": "{}"}, network)
    result = invoke("policy", "show", network)
    assert result.exit_code == 1 and "a torch file (a network from an older batchrl " \
        "imitate?)" in result.output and "batchrl learn network" in result.output


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_network_learns_plays_and_shows_on_every_game(stores, game):
    """The network is a learner like the others: the same command, model files and
    players on every game."""
    pytest.importorskip("torch", reason="the network needs torch to train (the test extra)")
    result = invoke("learn", "network", "--store", stores[game], "--epochs", 1, "--hidden", 8,
                    "--jobs", 1)
    assert result.exit_code == 0, result.output
    model = _model(result.output)
    from batchrl.games import get_game

    g = get_game(game)
    scores = g.play.score((f"model:{model}", *g.play.ablation_opponents), 4, 3, {})
    assert len(scores.values) >= 1 and np.isfinite(scores.values).all()
    shown = invoke("policy", "show", model)
    assert shown.exit_code == 0 and "learner   network (a network file)" in shown.output
    assert "held-out episodes" in shown.output


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_games_store_records_each_rows_legal_actions(stores, game):
    """Each row's own legal actions, the first decision of a seat's included: the action
    taken among them, and each the same as the row before's next_legal where a row before
    leads to it (two records of one thing, made apart, that agree)."""
    from batchrl.store import Store
    from batchrl.store.rows import following_rows

    store = Store.open(stores[game])
    assert store.schema.legal
    t = store.arrays()
    assert t.legal is not None and t.legal[np.arange(len(t)), t.action].all()
    if store.schema.next_state == "following":  # a row's next state: its seat's next
        after = following_rows(t.episode, t.player)
    else:  # Hanabi's: the next move's, the partner's
        after = np.where(np.r_[t.episode[1:] == t.episode[:-1], False],
                         np.arange(1, len(t) + 1), -1)
    led = after >= 0
    np.testing.assert_array_equal(t.legal[after[led]], t.next_legal[led])
    firsts = np.ones(len(t), bool)
    firsts[after[led]] = False
    assert firsts.sum() >= 2  # first decisions, whose legal actions no row before says
