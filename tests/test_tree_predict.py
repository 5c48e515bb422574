"""A forest's prediction: its trees summed in one fixed order, whatever the rows (a few in
the caller's thread, many on the process's pool), on one thread as scikit-learn sums them,
and in a forked child too."""

import multiprocessing

import numpy as np
import pytest
from sklearn.ensemble import ExtraTreesRegressor

from batchrl.forests import FEW_ROWS, SMALL_WORK, alone_if_small, predict
from batchrl.learners.fqi import model as fqi_model
from batchrl.learners.fqi.leaves import leaves_of
from batchrl.learners.fqi.model import DISTINCT_ROWS, QFunction, distinct_rows


def _forest() -> tuple[ExtraTreesRegressor, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 5)).astype(np.float32)
    y = x[:, 0] * 3 + np.sin(x[:, 1]) + rng.normal(scale=0.1, size=400)
    return ExtraTreesRegressor(n_estimators=9, min_samples_split=4, n_jobs=2,
                               random_state=0).fit(x, y), x


def test_the_trees_are_summed_in_their_order_for_a_few_rows_or_many() -> None:
    model, x = _forest()
    total = model.estimators_[0].predict(x).astype(np.float64)
    for tree in model.estimators_[1:]:
        total = total + tree.predict(x)
    many = predict(model, x)
    assert len(x) >= FEW_ROWS and np.array_equal(many, total / len(model.estimators_))
    for start in range(0, 40, 7):  # a few rows, in the caller's thread
        assert np.array_equal(predict(model, x[start:start + 3]), many[start:start + 3])
    assert np.array_equal(predict(model, x[:FEW_ROWS]), many[:FEW_ROWS])


def test_one_thread_s_prediction_is_scikit_learn_s_without_its_checks_per_tree(
        monkeypatch) -> None:
    """On one thread (n_jobs 1 or None) the sum is scikit-learn's own, bit for bit, walked
    without the forest's predict (its checks and hand-offs for each tree cost ten times
    a few rows' walk); rows that are not float32 still go through it (it converts them)."""
    model, x = _forest()
    calls: list[int] = []
    forest_predict = ExtraTreesRegressor.predict

    def counted(forest: ExtraTreesRegressor, rows: np.ndarray) -> np.ndarray:
        calls.append(len(rows))
        return forest_predict(forest, rows)

    two = ExtraTreesRegressor(n_estimators=5, min_samples_split=4, random_state=1).fit(
        x, np.stack([x[:, 0], -x[:, 1]], axis=1))  # two outputs
    for forest, jobs in ((model, 1), (model, None), (two, 1)):
        forest.set_params(n_jobs=jobs)
        expected, few = forest.predict(x), forest.predict(x[:3])
        calls.clear()
        monkeypatch.setattr(ExtraTreesRegressor, "predict", counted)
        assert predict(forest, x).tobytes() == expected.tobytes()  # bit for bit
        assert predict(forest, x[:3]).tobytes() == few.tobytes()
        assert calls == []
        assert predict(forest, x.astype(np.float64)).tobytes() == expected.tobytes()
        assert calls == [len(x)]
        monkeypatch.undo()
    for tree in model.estimators_:  # every leaf -0.0: scikit-learn's sum from 0 gives 0.0
        tree.tree_.value[:] = -0.0
    assert predict(model, x[:3]).tobytes() == model.predict(x[:3]).tobytes() == \
        np.zeros(3).tobytes()


def _child(queue) -> None:  # type: ignore[no-untyped-def]
    model, x = _forest()
    queue.put(predict(model, x).tolist())


def test_a_forked_child_predicts_on_its_own_threads() -> None:
    model, x = _forest()
    here = predict(model, x)  # the parent's pool exists before the fork
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child, args=(queue,))
    child.start()
    child.join(timeout=60)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive, "the child waited on threads it does not have"
    assert np.array_equal(np.asarray(queue.get(timeout=5)), here)


@pytest.mark.parametrize("one_call", [1 << 16, 10])
def test_q_values_of_repeated_rows_are_each_rows_own(one_call, monkeypatch) -> None:
    """A Q-function predicts each distinct (state, legal mask) once and gives every row
    its own: the same numbers as row by row, whatever repeats, for a forest on (state,
    action) and per action, with and without pessimism."""
    # one call for every action's rows, or (past ONE_CALL_ROWS states) an action at a time
    monkeypatch.setattr(fqi_model, "ONE_CALL_ROWS", one_call)
    model, x = _forest()
    rng = np.random.default_rng(1)
    states = x[rng.integers(0, 30, size=200), :4]  # 200 rows, at most 30 distinct
    only = rng.random((200, 3)) < 0.7  # the same state with other masks, too
    only[:, 1] = True
    per_action = [ExtraTreesRegressor(n_estimators=5, n_jobs=2, random_state=a)
                  .fit(x[:, :4], x[:, a]) for a in range(3)]
    for function in (QFunction([model], per_action=False, n_actions=3),
                     QFunction(per_action, per_action=True, n_actions=3),
                     QFunction(per_action, per_action=True, n_actions=3, pessimism=1.0)):
        many = function.q_values(states, only=only)
        alone = np.concatenate([function.q_values(states[i:i + 1], only=only[i:i + 1])
                                for i in range(len(states))])
        assert len(states) >= DISTINCT_ROWS
        assert np.array_equal(many, alone, equal_nan=True)
        assert np.isnan(many[~only]).all() and not np.isnan(many[only]).any()
        assert np.array_equal(function.q_values(states), np.concatenate(
            [function.q_values(states[i:i + 1]) for i in range(len(states))]))
    first, where = distinct_rows(states, only)
    assert len(first) < len(states) and np.array_equal(states[first][where], states)
    assert np.array_equal(only[first][where], only)


def test_the_trees_walked_in_chunks_are_summed_in_their_order(monkeypatch) -> None:
    """Several outputs, float64 rows (scikit-learn's own predict), and the trees handed
    to the threads one at a time or all at once: the same sum as tree by tree."""
    import batchrl.forests as forests  # (the module itself: its chunk bound is patched)

    rng = np.random.default_rng(2)
    x = rng.normal(size=(300, 4)).astype(np.float32)
    y = np.column_stack([x[:, 0], x[:, 1] * x[:, 2], np.cos(x[:, 3])])
    several = ExtraTreesRegressor(n_estimators=7, n_jobs=2, random_state=0).fit(x, y)
    for model, rows in ((several, x), (_forest()[0], _forest()[1].astype(np.float64))):
        total = model.estimators_[0].predict(rows).astype(np.float64)
        for tree in model.estimators_[1:]:
            total = total + tree.predict(rows)
        expected = total / len(model.estimators_)
        for limit in (1, 1 << 30):  # a tree a task, or each thread's share in one
            monkeypatch.setattr(forests, "CHUNK_BYTES", limit)
            assert np.array_equal(predict(model, rows), expected)
        assert np.array_equal(predict(model, rows[:5]), expected[:5])
    assert predict(several, x).shape == (300, 3)


def test_a_small_forest_is_grown_and_applied_on_one_thread_the_same(monkeypatch) -> None:
    """Few rows times trees (`SMALL_WORK`): the fit and the leaves in the caller's thread
    (joblib's threads hand each call back no sooner than 10 ms), the same trees and leaves
    as on two threads, and the forest's own n_jobs as it was; more, on its threads."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(300, 4)).astype(np.float32)
    y = x[:, 0] - x[:, 2] + rng.normal(scale=0.1, size=300)
    threaded = ExtraTreesRegressor(n_estimators=6, min_samples_split=4, n_jobs=2,
                                   random_state=5).fit(x, y)
    seen: list[object] = []
    grow = ExtraTreesRegressor.fit

    def counted(forest: ExtraTreesRegressor, *args: object, **kwargs: object) -> object:
        seen.append(forest.n_jobs)
        return grow(forest, *args, **kwargs)

    monkeypatch.setattr(ExtraTreesRegressor, "fit", counted)
    alone = ExtraTreesRegressor(n_estimators=6, min_samples_split=4, n_jobs=2, random_state=5)
    assert len(x) * alone.n_estimators < SMALL_WORK
    with alone_if_small(alone, len(x)):
        alone.fit(x, y)
    assert seen == [1] and alone.n_jobs == 2
    offsets = np.cumsum([0, *(t.tree_.node_count for t in alone.estimators_)])
    assert np.array_equal(leaves_of(alone, x, offsets), threaded.apply(x))
    assert np.array_equal(predict(alone, x), predict(threaded, x))
    many = np.repeat(x, 20, axis=0)
    with alone_if_small(alone, len(many)):
        alone.fit(many, np.repeat(y, 20))
    assert seen == [1, 2]


def test_other_ensembles_are_predicted_by_their_own_predict() -> None:
    """Only a forest of regression trees is walked tree by tree: a bagging of trees grown
    on some of the inputs, or boosting, sum differently, on any number of threads; and
    a lower bound on Q wants a forest's trees."""
    from sklearn.ensemble import BaggingRegressor, GradientBoostingRegressor  # the others
    from sklearn.tree import DecisionTreeRegressor

    from batchrl.forests import lower_bound

    _, x = _forest()
    y = x[:, 0] * 3 + np.sin(x[:, 1])
    boosted = GradientBoostingRegressor(n_estimators=5, random_state=0).fit(x, y)
    for jobs in (1, 2):
        bagged = BaggingRegressor(DecisionTreeRegressor(), n_estimators=4, max_features=0.5,
                                  n_jobs=jobs, random_state=0).fit(x, y)
        for model in (bagged, boosted):
            assert predict(model, x).tobytes() == model.predict(x).tobytes(), (model, jobs)
    with pytest.raises(ValueError, match="takes a scikit-learn forest of regression trees, "
                                         "not BaggingRegressor"):
        lower_bound(bagged, x, 1.0)
    forest, rows = _forest()
    with pytest.raises(ValueError, match=r"rows of 5 inputs, not an array of shape \(5,\)"):
        predict(forest, rows[0])
