"""A forest's prediction on several threads: its trees summed in one fixed order, whatever
the rows (a few in the caller's thread, many on the process's pool), and in a forked
child too."""

import multiprocessing

import numpy as np
from sklearn.ensemble import ExtraTreesRegressor

from batchrl.modeltrees import FEW_ROWS, predict


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
