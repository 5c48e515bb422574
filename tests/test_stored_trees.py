"""A regressor read from a model file (`batchrl.forests.StoredRegressor`): a few rows
walked with numpy, every tree at once, with no scikit-learn; more rows, or anything else,
through the scikit-learn regressor it builds; the same numbers, bit for bit, either way."""

import subprocess
import sys
import threading

import numpy as np
import pytest
from locations import ROOT
from sklearn.dummy import DummyRegressor
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor
from sklearn.tree import DecisionTreeRegressor, ExtraTreeRegressor

from batchrl import forests, modeltrees
from batchrl.forests import WALK_WORK, StoredRegressor
from batchrl.modelfile import ModelError
from batchrl.modeltrees import decode_models, encode_models

RNG = np.random.default_rng(0)
X = RNG.normal(size=(600, 5)).astype(np.float32)
Y = X[:, 0] * 3 + np.sin(X[:, 1]) + RNG.normal(scale=0.1, size=600)


def _arrays(model) -> tuple[list, dict]:
    specs, arrays = encode_models([model])
    return specs, {k: v() if callable(v) else v for k, v in arrays.items()}


def _stored(model, change=None) -> StoredRegressor:
    specs, arrays = _arrays(model)
    if change is not None:
        change(specs, arrays)
    (back,) = decode_models(specs, arrays, "m.npz")
    return back


def _walked(tree, x) -> np.ndarray:
    """A scikit-learn tree's own walk of ``x`` (what its predict runs after its checks,
    which refuse infinities): its leaves' values."""
    values = tree.tree_.predict(x)
    return values[:, 0] if tree.n_outputs_ == 1 else values[:, :, 0]


def _in_order(model, x) -> np.ndarray:
    """scikit-learn's trees' own predictions, summed from 0 in their order."""
    if not hasattr(model, "estimators_"):
        return _walked(model, x)
    total = np.zeros(1)
    for tree in model.estimators_:
        total = total + _walked(tree, x)
    return total / len(model.estimators_)


def _rows(model, n: int) -> np.ndarray:
    """``n`` rows, among them rows on the trees' thresholds (ties go left), missing
    inputs (each split sends them its own way) and infinities."""
    rows = RNG.normal(size=(n, 5)).astype(np.float32)
    trees = getattr(model, "estimators_", [model])
    inner = [(t.tree_.feature[i], t.tree_.threshold[i]) for t in trees
             for i in range(t.tree_.node_count) if t.tree_.children_left[i] != -1]
    for row in range(0, n, 3):
        feature, threshold = inner[RNG.integers(len(inner))]
        rows[row, feature] = threshold
    rows[1::7, 2] = np.nan
    rows[2::11, 0] = np.inf
    rows[3::13, 1] = -np.inf
    return rows


def _on_float32_thresholds(model):
    """``model`` with every threshold a float32 number, so rows can sit on them; and its
    splits sending missing inputs left or right at random."""
    for tree in getattr(model, "estimators_", [model]):
        state = tree.tree_.__getstate__()
        nodes = state["nodes"].copy()
        nodes["threshold"] = nodes["threshold"].astype(np.float32)
        nodes["missing_go_to_left"] = RNG.integers(0, 2, len(nodes))
        state["nodes"] = nodes
        tree.tree_.__setstate__(state)
    return model


@pytest.mark.parametrize("model", [
    ExtraTreesRegressor(12, min_samples_split=4, n_jobs=2, random_state=0),
    ExtraTreesRegressor(7, min_samples_split=4, n_jobs=1, random_state=1),
    RandomForestRegressor(5, min_samples_split=5, random_state=0),
    ExtraTreeRegressor(min_samples_split=5, random_state=0),
    DecisionTreeRegressor(max_depth=6)], ids=lambda m: type(m).__name__)
@pytest.mark.parametrize("outputs", [1, 3])
def test_a_stored_model_predicts_scikit_learn_s_numbers_by_numpy_or_by_its_trees(
        model, outputs, monkeypatch) -> None:
    monkeypatch.setattr(forests, "_trees_loaded", lambda: False)  # as in a fresh process
    y = Y if outputs == 1 else np.column_stack([Y, -X[:, 2], np.cos(X[:, 3])])
    model = _on_float32_thresholds(model.fit(X, y))
    stored = _stored(model)
    trees = len(getattr(model, "estimators_", [model]))
    few, many = WALK_WORK // trees, WALK_WORK // trees + 1
    rows = _rows(model, many + 40)
    assert np.isnan(rows).any() and np.isinf(rows).any()
    expected = _in_order(model, rows)
    for part in (rows[:1], rows[:7], rows[:few], rows[:many], rows):
        assert stored.walks(part) == (len(part) * trees <= WALK_WORK)
        got = stored.predict(part)
        assert got.dtype == np.float64 and got.shape == expected[: len(part)].shape
        assert got.tobytes() == expected[: len(part)].tobytes()
        assert forests.predict(stored, part).tobytes() == got.tobytes()
    assert stored.predict(rows[:0]).shape == expected[:0].shape
    if outputs == 1 and trees > 1:
        stored = _stored(model)
        walked = forests.lower_bound(stored, rows[:few], 1.5)
        assert stored.walks(rows[:few])
        built = stored.scikit_learn()
        assert not stored.walks(rows[:few])  # built: its trees from now on
        assert walked.tobytes() == forests.lower_bound(built, rows[:few], 1.5).tobytes()
        assert forests.lower_bound(stored, rows[:few], 1.5).tobytes() == walked.tobytes()
    for tree in getattr(model, "estimators_", [model]):  # every leaf -0.0: a forest's sum is 0.0
        tree.tree_.value[:] = -0.0
    zero = _stored(model).predict(rows[:5])
    assert zero.tobytes() == _in_order(model, rows[:5]).tobytes()
    for stored in (_stored(model), _stored(model)):  # walking, then built
        for narrow in (rows[:3, :2], rows[:0, :2], rows[0]):
            with pytest.raises(ValueError, match="takes rows of 5 inputs"):
                stored.predict(narrow)
            if outputs == 1 and trees > 1:  # a bound's trees are walked unchecked too
                for forest in (stored, model):
                    with pytest.raises(ValueError, match="takes rows of 5 inputs"):
                        forests.lower_bound(forest, narrow, 1.0)
        stored.scikit_learn()


def test_a_long_run_goes_over_to_scikit_learn_s_trees(monkeypatch) -> None:
    """Past `WALK_BUDGET` rows times trees, or once scikit-learn's trees are loaded, a
    stored forest predicts with them (faster): the same numbers."""
    loaded = False
    monkeypatch.setattr(forests, "_trees_loaded", lambda: loaded)
    monkeypatch.setattr(forests, "WALK_BUDGET", 10 * 60)
    forest = ExtraTreesRegressor(10, min_samples_split=4, random_state=0).fit(X, Y)
    stored = _stored(forest)
    expected = _in_order(forest, X[:60])
    walked = []
    for start in range(0, 60, 6):
        walked.append(stored.walks(X[start:start + 6]))
        assert stored.predict(X[start:start + 6]).tobytes() == \
            expected[start:start + 6].tobytes()
    assert walked == [True] * 10 and not stored.walks(X[:1])
    fresh = _stored(forest)
    assert fresh.walks(X[:1])
    loaded = True
    assert not fresh.walks(X[:1])
    assert fresh.predict(X[:6]).tobytes() == expected[:6].tobytes()


def test_threads_predicting_while_the_trees_are_built_get_the_same_numbers(
        monkeypatch) -> None:
    """`fitted` lets the numpy walk's nodes go: a thread walking meanwhile keeps its own."""
    monkeypatch.setattr(forests, "_trees_loaded", lambda: False)
    forest = ExtraTreesRegressor(20, min_samples_split=4, random_state=0).fit(X, Y)
    stored = _stored(forest)
    expected = _in_order(forest, X)
    wrong: list[int] = []

    def play(start: int) -> None:
        for i in range(start, start + 200):
            rows = X[i % 590 : i % 590 + 8]
            if stored.predict(rows).tobytes() != expected[i % 590 : i % 590 + 8].tobytes():
                wrong.append(i)

    play(0)  # walked
    threads = [threading.Thread(target=play, args=(100 * t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    stored.scikit_learn()
    for thread in threads:
        thread.join()
    assert not wrong and stored._walked > 0 and not len(stored.nodes)


def test_a_constant_is_its_constant_and_the_rest_is_scikit_learn_s() -> None:
    for outputs in (1, 2):
        y = Y if outputs == 1 else np.column_stack([Y, Y])
        model = DummyRegressor(strategy="constant", constant=[2.5] * outputs).fit(X, y)
        stored = _stored(model)
        assert stored.predict(X[:9]).tobytes() == model.predict(X[:9]).tobytes()
    forest = ExtraTreesRegressor(6, min_samples_split=4, random_state=0).fit(X, Y)
    stored = _stored(forest)
    assert np.array_equal(stored.feature_importances_, forest.feature_importances_)
    assert stored.get_params() == forest.get_params() and len(stored.estimators_) == 6
    built = stored.scikit_learn()
    assert type(built) is ExtraTreesRegressor and stored.scikit_learn() is built
    assert not len(stored.nodes) and not len(stored.values)  # its trees hold them now
    built.set_params(n_jobs=3)
    built.fit(X[:, :2], np.column_stack([Y, Y]))
    assert (stored.n_jobs, stored.n_features_in_, stored.n_outputs_) == (3, 2, 2)


def test_a_parameter_scikit_learn_refuses_is_one_line_naming_the_file_when_it_is_built(
        monkeypatch) -> None:
    """The numpy walk needs no parameter but the forest's n_jobs, checked as the file is
    read; scikit-learn checks the others when its regressor is built."""
    forest = ExtraTreesRegressor(6, min_samples_split=4, random_state=0).fit(X, Y)

    def loud(specs, arrays) -> None:
        specs[0]["params"]["verbose"] = "loud"

    stored = _stored(forest, loud)
    with monkeypatch.context() as fresh:
        fresh.setattr(forests, "_trees_loaded", lambda: False)
        assert stored.predict(X[:3]).tobytes() == _in_order(forest, X[:3]).tobytes()
    with pytest.raises(ModelError, match=r"^m\.npz: model 0: .*verbose"):
        stored.predict(np.repeat(X, 30, axis=0))

    def idle(specs, arrays) -> None:
        specs[0]["params"]["n_jobs"] = 0

    with pytest.raises(ModelError, match="n_jobs is 0, not a count"):
        _stored(forest, idle)


@pytest.mark.parametrize("field,dtype", [("left_child", np.float64), ("right_child", np.uint64),
                                         ("missing_go_to_left", np.float64),
                                         ("feature", np.float32), ("threshold", np.int64)])
def test_node_fields_of_another_kind_are_refused(field, dtype) -> None:
    """A float or unsigned child, or a half-true flag, would be cast one way for
    scikit-learn's trees and could be read another way by the numpy walk: none is what
    scikit-learn writes."""
    forest = ExtraTreesRegressor(3, min_samples_split=4, random_state=0).fit(X, Y)

    def retyped(specs, arrays) -> None:
        nodes = arrays["model0.nodes"]
        kinds = [(n, dtype if n == field else nodes.dtype[n]) for n in nodes.dtype.names]
        arrays["model0.nodes"] = nodes.astype(np.dtype(kinds))

    with pytest.raises(ModelError, match="not whole numbers, or its thresholds not numbers"):
        _stored(forest, retyped)


def test_the_node_fields_are_scikit_learn_s() -> None:
    from sklearn.tree._tree import NODE_DTYPE

    assert NODE_DTYPE.names == modeltrees.NODE_FIELDS


PLAY = """
import sys
import numpy as np
from batchrl.learners.fqi.model import ModelArtifact
states = np.load(sys.argv[2])
artifact = ModelArtifact.load(sys.argv[1])
few = artifact.q.q_values(states[:4])
print("scikit-learn after a few rows:", "sklearn" in sys.modules)
many = artifact.q.q_values(states)
print("scikit-learn after many:", "sklearn" in sys.modules)
np.save(sys.argv[3], np.concatenate([few, many]))
"""


def test_playing_a_few_states_of_a_loaded_model_imports_no_scikit_learn(tmp_path) -> None:
    """scikit-learn takes seconds to import: most of a short evaluation's time."""
    from test_modelfile import META, data

    from batchrl.learners.fqi import extra_trees
    from batchrl.learners.fqi.iterations import FQI
    from batchrl.learners.fqi.model import ModelArtifact

    fqi = FQI(extra_trees(trees=20, nmin=5), n_iterations=2, per_action=True,
              random_state=0).fit(data())
    path = ModelArtifact(fqi.q_function(), META).save(tmp_path / "m.npz")
    states = RNG.normal(size=(3000, 4)).astype(np.float32)
    np.save(tmp_path / "s.npy", states)
    done = subprocess.run([sys.executable, "-c", PLAY, str(path), str(tmp_path / "s.npy"),
                           str(tmp_path / "q.npy")], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["scikit-learn after a few rows: False",
                                        "scikit-learn after many: True"]
    q = np.load(tmp_path / "q.npy")
    expected = fqi.q_values(states)
    assert np.array_equal(q[:4], expected[:4], equal_nan=True)
    assert np.array_equal(q[4:], expected, equal_nan=True)
