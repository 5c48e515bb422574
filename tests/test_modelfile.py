"""Model files are arrays and JSON: a loaded model predicts exactly what it did, loading
runs no code a file carries, and pickles (old models, crafted files) are refused."""

import io
import json
import pickle
import zipfile
from pathlib import Path

import joblib
import numpy as np
import pytest
from sklearn.dummy import DummyRegressor
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor
from sklearn.linear_model import LinearRegression
from sklearn.tree import DecisionTreeRegressor, ExtraTreeRegressor

from batchrl import modelfile, modeltrees
from batchrl.learners.fqi import extra_trees
from batchrl.learners.fqi.iterations import FQI
from batchrl.learners.fqi.model import ARTIFACT_VERSION, GreedyPolicy, ModelArtifact, QFunction
from batchrl.policy import ModelError
from batchrl.store import Transitions


def data(n=3000, actions=3, seed=0):
    rng = np.random.default_rng(seed)
    state = rng.random((n, 4)).astype(np.float32)
    action = rng.integers(0, actions - 1, n)  # the last action is never taken
    terminal = rng.random(n) < 0.3
    return Transitions(
        state=state, action=action, reward=state[:, 0] * (action + 1) + rng.normal(0, .1, n),
        next_state=rng.random((n, 4)).astype(np.float32),
        next_legal=rng.random((n, actions)) < 0.7, terminal=terminal,
        truncated=np.zeros(n, bool), episode=np.arange(n) // 4,
        episode_ids=np.array([str(i) for i in range(n // 4 + 1)], object),
        step=(np.arange(n) % 4).astype(np.int32), player=np.zeros(n, np.int8),
        feature_names=("a", "b", "c", "d"), action_names=tuple(f"x{i}" for i in range(actions)))


META = {"game": "toy", "feature_names": ["a", "b", "c", "d"],
        "action_names": ["x0", "x1", "x2"]}


@pytest.mark.parametrize("per_action,freeze_after", [(False, None), (True, None), (True, 0),
                                                     (False, 2)])
def test_a_loaded_fqi_model_predicts_exactly_what_it_did(tmp_path, per_action, freeze_after):
    fqi = FQI(extra_trees(trees=6, nmin=5, jobs=2), n_iterations=3, per_action=per_action,
              freeze_after=freeze_after, random_state=3).fit(data())
    meta = META | {"rows": np.int64(3000), "params": {"features": ("a", "b"), "gamma": 1.0,
                                                      "out": Path("m.npz")},
                   "history": [{"residual": np.float64(0.5), "frozen": np.bool_(True)}]}
    path = ModelArtifact(fqi.q_function(), meta).save(tmp_path / "m.npz")
    loaded = ModelArtifact.load(path)
    states = np.random.default_rng(1).random((5000, 4)).astype(np.float32)
    np.testing.assert_array_equal(loaded.q.q_values(states), fqi.q_values(states))
    assert loaded.version == ARTIFACT_VERSION and loaded.q.per_action == per_action
    assert loaded.meta["rows"] == 3000 and loaded.meta["params"]["features"] == ["a", "b"]
    assert loaded.meta["params"]["out"] == "m.npz" and loaded.meta["history"][0]["frozen"]
    if per_action:
        assert loaded.q.models[2] is None  # an action no row took
    x = states if per_action else np.column_stack([states, np.ones(len(states), np.float32)])
    for original, back in zip(fqi.models_, loaded.q.models, strict=True):
        if original is None:
            continue
        assert back.get_params() == original.get_params()
        for a, b in zip(original.estimators_, back.estimators_, strict=True):
            assert a.get_params() == b.get_params() and a.max_features_ == b.max_features_
            assert a.tree_.max_depth == b.tree_.max_depth
            np.testing.assert_array_equal(a.tree_.value, b.tree_.value)
            np.testing.assert_array_equal(a.apply(x), b.apply(x))
    # the file is a zip of arrays and JSON that numpy reads without pickles
    with zipfile.ZipFile(path) as zf:
        document = json.loads(zf.read("model.json"))
        assert document["meta"]["game"] == "toy"
    with np.load(path, allow_pickle=False) as arrays:
        assert arrays["model0.node_count"].dtype == np.int64


def test_a_models_meta_is_read_without_its_trees(tmp_path, monkeypatch):
    fqi = FQI(extra_trees(trees=3, nmin=5), n_iterations=1, random_state=3).fit(data())
    path = ModelArtifact(fqi.q_function(), META).save(tmp_path / "m.npz")
    meta = ModelArtifact.load(path).meta

    def unread(*args, **kwargs):
        raise AssertionError("an array was read")

    monkeypatch.setattr(np.lib.format, "read_array", unread)
    assert ModelArtifact.meta_of(path) == meta == META
    with pytest.raises(AssertionError, match="an array was read"):
        ModelArtifact._read(path)


@pytest.mark.parametrize("regressor", [
    RandomForestRegressor(4, min_samples_split=5, random_state=0),
    ExtraTreeRegressor(min_samples_split=5, random_state=0),
    DecisionTreeRegressor(max_depth=4),
    DummyRegressor(strategy="constant", constant=2.5)])
def test_every_regressor_fqi_can_hold_round_trips(tmp_path, regressor):
    rng = np.random.default_rng(0)
    x = rng.random((400, 3)).astype(np.float32)
    model = regressor.fit(x, x[:, 0] + rng.normal(0, 0.1, 400))
    specs, arrays = modeltrees.encode_models([model])
    modelfile.write(tmp_path / "m.npz", "test", {"models": specs}, arrays)
    document, stored = modelfile.read(tmp_path / "m.npz", "test")
    back = modeltrees.decode_models(document["models"], stored, tmp_path / "m.npz")[0]
    built = back.scikit_learn()
    assert type(built) is type(model) and built.get_params() == model.get_params()
    probe = rng.random((1000, 3)).astype(np.float32)
    np.testing.assert_array_equal(back.predict(probe), model.predict(probe))
    np.testing.assert_array_equal(built.predict(probe), model.predict(probe))


def test_what_a_model_file_cannot_hold_is_refused_when_it_is_written(tmp_path):
    linear = LinearRegression().fit([[0.0], [1.0]], [0.0, 1.0])
    q = QFunction([linear], per_action=True, n_actions=1)
    with pytest.raises(ModelError, match="LinearRegression: a model file holds only"):
        ModelArtifact(q, {"feature_names": ["x"], "action_names": ["a"]}).save(
            tmp_path / "m.npz")

    class Mine(ExtraTreesRegressor):
        pass

    q = QFunction([Mine(2).fit([[0.0], [1.0]], [0.0, 1.0])], per_action=True, n_actions=1)
    with pytest.raises(ModelError, match="Mine"):
        ModelArtifact(q, {}).save(tmp_path / "m.npz")
    q = QFunction([DummyRegressor().fit([[0.0]], [0.0])], per_action=True, n_actions=1)
    with pytest.raises(ModelError, match=r"m\.npz: meta\.when is of type object"):
        ModelArtifact(q, {"when": object()}).save(tmp_path / "m.npz")
    assert not list(tmp_path.iterdir())  # nothing half written


class Payload:
    """What a crafted pickle does when unpickled: here, create a marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return open, (str(self.marker), "w")


def test_a_crafted_pickle_is_refused_and_never_run(tmp_path):
    control = tmp_path / "control"
    pickle.loads(pickle.dumps(Payload(control)))
    assert control.exists()  # the payload does run when unpickled
    marker = tmp_path / "marker"
    evil = tmp_path / "fqi-M5-nmin20-N3.npz"
    evil.write_bytes(pickle.dumps(Payload(marker)))
    with pytest.raises(ModelError, match=rf"{evil.name} is a pickle .* does not load pickles"):
        GreedyPolicy.load(evil)
    old = tmp_path / "old.joblib"
    joblib.dump(Payload(marker), old)
    with pytest.raises(ModelError, match=r"old\.joblib is a pickle"):
        ModelArtifact.load(old)
    # a zip of arrays whose array is a pickle of objects
    objects = np.empty(1, dtype=object)
    objects[0] = Payload(marker)
    zipped = tmp_path / "zipped.npz"
    with zipfile.ZipFile(zipped, "w") as zf:
        zf.writestr("model.json", json.dumps({"format": "batchrl-model", "kind": "model",
                                              "version": ARTIFACT_VERSION}))
        with zf.open("model0.nodes.npy", "w") as f:
            np.lib.format.write_array(f, objects, allow_pickle=True)
    with pytest.raises(ModelError, match=r"zipped\.npz: model0\.nodes\.npy holds Python "
                                         r"objects \(a pickle\)"):
        ModelArtifact.load(zipped)
    np.savez(tmp_path / "plain.npz", x=objects)  # numpy's own zip, with no model.json
    with pytest.raises(ModelError, match=r"plain\.npz is not a batchrl model file"):
        ModelArtifact.load(tmp_path / "plain.npz")
    (tmp_path / "junk.npz").write_bytes(b"junk")
    with pytest.raises(ModelError, match=r"junk\.npz is not a batchrl model file"):
        ModelArtifact.load(tmp_path / "junk.npz")
    assert not marker.exists()


def test_an_old_model_is_refused_with_the_command_that_retrains_it(tmp_path):
    name = "fqi-M100-nmin20-K3-N11-fast0-peraction-player-random-1.joblib"
    old = tmp_path / "store" / "models" / name
    old.parent.mkdir(parents=True)
    joblib.dump({"a": 1}, old)
    with pytest.raises(ModelError) as caught:
        ModelArtifact.load(old)
    message = str(caught.value)
    assert "\n" not in message
    assert message.endswith(f"retrain it with: batchrl fqi --store {tmp_path / 'store'} --trees "
                            "100 --nmin 20 --k 3 --iters 11 --fast --per-action --player "
                            "random-1")
    assert modelfile.retrain_command("m.joblib") == \
        "batchrl fqi --store STORE [its settings] --out m.npz"
    assert modelfile.retrain_command("x/fqi-M5-nmin2-N3.joblib") == \
        "batchrl fqi --store STORE --trees 5 --nmin 2 --iters 3 --no-fast --joint --out " \
        "x/fqi-M5-nmin2-N3.npz"


def _tamper(path, change):
    document, arrays = modelfile.read(path, "model")
    change(arrays)
    document.pop("format"), document.pop("kind")
    out = path.with_name("tampered.npz")
    modelfile.write(out, "model", document, arrays)
    return out


def _child_outside(arrays):
    nodes = arrays["model0.nodes"].copy()
    inner = np.flatnonzero(nodes["left_child"] != -1)
    nodes["left_child"][inner[-1]] = 10**9
    arrays["model0.nodes"] = nodes


def _shared_child(arrays):
    nodes = arrays["model0.nodes"].copy()
    nodes["right_child"][0] = nodes["left_child"][0]
    arrays["model0.nodes"] = nodes


def _missing_input(arrays):
    nodes = arrays["model0.nodes"].copy()
    nodes["feature"][0] = 7
    arrays["model0.nodes"] = nodes


def _short_values(arrays):
    arrays["model0.values"] = arrays["model0.values"][:-1]


@pytest.mark.parametrize("change,said", [
    (_child_outside, "outside its tree"), (_shared_child, "reached twice"),
    (_missing_input, "an input the model does not have"), (_short_values, "node values")])
def test_trees_that_scikit_learn_would_walk_off_are_refused(tmp_path, change, said):
    fqi = FQI(extra_trees(trees=3, nmin=5), n_iterations=1, random_state=0).fit(data(500))
    path = ModelArtifact(fqi.q_function(), META).save(tmp_path / "m.npz")
    with pytest.raises(ModelError, match=said):
        ModelArtifact.load(_tamper(path, change))


def test_checkpoints_hold_no_pickle_and_an_old_one_is_not_resumed(tmp_path):
    FQI(extra_trees(trees=3, nmin=5), n_iterations=2, random_state=0).fit(
        data(500), checkpoints=tmp_path / "ckpt")
    files = sorted(p.name for p in (tmp_path / "ckpt").iterdir())
    assert files == ["checkpoint.npz", "models-2.npz"]
    for name in files:
        with zipfile.ZipFile(tmp_path / "ckpt" / name) as zf:
            assert all(m.endswith(".npy") or m == "model.json" for m in zf.namelist())
        with np.load(tmp_path / "ckpt" / name, allow_pickle=False) as arrays:
            for key in arrays.files:
                if key != "model.json":
                    assert not arrays[key].dtype.hasobject
    old = tmp_path / "old"
    old.mkdir()
    joblib.dump({"done": 1}, old / "checkpoint.joblib")
    with pytest.raises(ValueError, match="a pickle from an older batchrl"):
        FQI(extra_trees(trees=3, nmin=5), n_iterations=2).fit(
            data(500), resume=True, checkpoints=old)


def _crafted(source, target, edit=None, member=None, data=None):
    """A copy of the model file ``source`` with its JSON edited (``edit(document)``) or a
    member replaced by ``data``."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        for name in zin.namelist():
            raw = zin.read(name)
            if name == "model.json" and edit is not None:
                document = json.loads(raw)
                edit(document)
                raw = json.dumps(document).encode()
            if name == member:
                raw = data
            zout.writestr(name, raw, compress_type=zipfile.ZIP_DEFLATED
                          if name.endswith(".json") else zipfile.ZIP_STORED)
        if member is not None and member not in zin.namelist():
            zout.writestr(member, data, compress_type=zipfile.ZIP_DEFLATED)
    return target


def _npy_header(shape):
    text = repr({"descr": "<f8", "fortran_order": False, "shape": shape}).encode()
    text += b" " * (63 - (10 + len(text)) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text + b"\0" * 16


@pytest.mark.parametrize(("edit", "member", "raw", "message"), [
    (lambda d: d["meta"].pop("feature_names"), None, None, "feature_names are not 1 to"),
    (lambda d: d["meta"].pop("action_names"), None, None, "action_names are not 1 to"),
    (lambda d: d["meta"].update(history="x"), None, None, "its history is str, not a list"),
    (lambda d: d["meta"].update(params=None), None, None, "its params is NoneType, not an"),
    (lambda d: d["meta"].update(game={"x": 1}), None, None, "not a game's name"),
    (lambda d: d["meta"].update(game="../../../etc/passwd"), None, None, "not a game's name"),
    (lambda d: d["q"].update(n_actions=5_000_000), None, None, "5000000 actions"),
    (lambda d: d["q"].update(n_actions=True), None, None, "True actions"),
    (lambda d: d["q"].update(n_actions=2), None, None, "2 actions"),
    (lambda d: d["q"].update(n_actions=4), None, None, "4 actions"),
    (lambda d: d["q"].update(n_actions=0), None, None, "0 actions"),
    (lambda d: None, "model0.values.npy", _npy_header((1 << 40, 1 << 20)),
     r"model0.values.npy declares .* more than its 144 bytes hold"),
    (lambda d: None, "unused.npy", b"\0" * (40 << 20), "inflate to .* more than the file's"),
    (lambda d: None, "model.json", b"[" * 100_000 + b"]" * 100_000,
     "nests deeper than any model's does|its model.json inflates to 200,000 bytes"),
])
def test_a_crafted_model_header_is_one_line_naming_the_file(tmp_path, edit, member, raw,
                                                            message):
    """Each a traceback, a hang or gigabytes before: refused in one line naming the file
    and the field, with nothing allocated past the file's size."""
    fqi = FQI(extra_trees(trees=2, nmin=50, jobs=1), n_iterations=1, random_state=0).fit(
        data(n=400))
    good = ModelArtifact(fqi.q_function(), dict(META)).save(tmp_path / "good.npz")
    crafted = _crafted(good, tmp_path / "crafted.npz", edit, member, raw)
    with pytest.raises(ModelError, match=message) as caught:
        GreedyPolicy.load(crafted).act(np.zeros((2, 4), np.float32))
    assert str(crafted) in str(caught.value) and len(str(caught.value)) < 600


def test_nan_or_infinite_thresholds_and_values_are_refused(tmp_path):
    fqi = FQI(extra_trees(trees=2, nmin=50, jobs=1), n_iterations=1, random_state=0).fit(
        data(n=400))
    good = ModelArtifact(fqi.q_function(), dict(META)).save(tmp_path / "good.npz")
    with zipfile.ZipFile(good) as zf:
        nodes = np.lib.format.read_array(io.BytesIO(zf.read("model0.nodes.npy")))
    nodes["threshold"][0] = np.nan
    out = io.BytesIO()
    np.lib.format.write_array(out, nodes)
    crafted = _crafted(good, tmp_path / "nan.npz", member="model0.nodes.npy",
                       data=out.getvalue())
    with pytest.raises(ModelError, match="a threshold or a value that is not a finite"):
        GreedyPolicy.load(crafted)


def test_a_custom_games_name_is_a_game_name_and_a_control_character_is_not(tmp_path):
    meta = META | {"game": "my game (v2)"}  # a hold'em .game file of the user's names it
    assert modelfile.check_meta(tmp_path / "m.npz", meta)["game"] == "my game (v2)"
    with pytest.raises(ModelError, match="not a game's name"):
        modelfile.check_meta(tmp_path / "m.npz", META | {"game": "x\x1b[2J"})
