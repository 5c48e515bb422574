"""Fitted Q-iteration's forests grown on a Dask cluster (``batchrl fqi --scheduler``).

The driver (the ``batchrl fqi`` process) reads the store, keeps the Bellman targets and
the iteration loop, and finds leaves and predictions; the workers grow the trees. Each
model's inputs are scattered to the workers once, each iteration's targets once per
model, and a task grows a share of one forest's trees from the seeds scikit-learn would
give them (``forest_seeds``), so the forest put together from the tasks' trees is the
forest one ``fit`` makes, tree for tree. The connection and the tasks every command
shares are ``batchrl.cluster``'s.

joblib's Dask backend was the other way: scikit-learn's forests would run each tree as
a joblib task on the cluster unchanged. It ships a forest's data with each batch of
tasks unless told what to scatter, and what it scatters by itself it hashes and sends
again on every ``fit`` (a forest per model, per iteration); tasks of our own scatter each
model's inputs once for the whole run and keep the trees' seeds, and so the result, in
our hands.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray


def clone(model: Any) -> Any:
    """scikit-learn's ``clone`` of ``model``, loaded when a model is at hand: scikit-learn
    takes seconds to load, which a command that only reads or plays a model never needs."""
    from sklearn.base import clone as unfitted  # see above

    return unfitted(model)


def forest_seeds(forest: Any) -> NDArray[np.int64]:
    """The random states scikit-learn's ``fit`` gives the trees of ``forest``, in order."""
    state = forest.random_state
    rng = state if isinstance(state, np.random.RandomState) else np.random.RandomState(state)
    seeds: NDArray[np.int64] = rng.randint(np.iinfo(np.int32).max, size=forest.n_estimators)
    return seeds


def can_split(forest: Any) -> bool:
    """Whether ``forest``'s trees can be grown as separate tasks to the same forest: a
    scikit-learn forest without bootstrap (ExtraTrees' default)."""
    return hasattr(forest, "estimator_params") and hasattr(forest, "n_estimators") and \
        not getattr(forest, "bootstrap", True)


def _grow(template: Any, seeds: Sequence[int], x: NDArray[np.float32],
          y: NDArray[np.float64]) -> list[Any]:
    """A worker's task: the trees of ``template`` (a forest) for ``seeds``."""
    params = {p: getattr(template, p) for p in template.estimator_params
              if p != "random_state"}
    trees = []
    for seed in seeds:
        tree = clone(template.estimator).set_params(**params, random_state=int(seed))
        trees.append(tree.fit(x, y))
    return trees


def _fit(model: Any, x: NDArray[np.float32], y: NDArray[np.float64]) -> Any:
    """A worker's task: ``model`` fitted whole (a regressor whose trees cannot be split)."""
    return model.fit(x, y)


class RemoteFits:
    """Models fitted on the cluster: each model's inputs scattered once, its trees grown
    in shares, the forests put together in the order asked."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._inputs: dict[int, Any] = {}

    def submit(self, model: Any, key: int, x: Callable[[], NDArray[np.float32]],
               y: NDArray[np.float64], shares: int) -> list[Any]:
        """Futures that fit ``model`` (a fresh estimator, its random state set) on the
        inputs ``x()`` makes (scattered once for ``key``: later fits reuse them) and
        ``y``, in up to ``shares`` tasks."""
        if key not in self._inputs:
            self._inputs[key] = self.client.scatter(x(), broadcast=False)
        xf = self._inputs[key]
        yf = self.client.scatter(y, broadcast=False)
        if not can_split(model):
            return [self.client.submit(_fit, model, xf, yf, pure=False)]
        seeds = forest_seeds(model)
        size = math.ceil(len(seeds) / max(1, min(shares, len(seeds))))
        return [self.client.submit(_grow, model, seeds[lo : lo + size].tolist(), xf, yf,
                                   pure=False)
                for lo in range(0, len(seeds), size)]

    def gather(self, model: Any, futures: list[Any], n_features: int) -> Any:
        """The fitted model from its tasks' results: the forest, tree for tree."""
        results = self.client.gather(futures)
        if not can_split(model):
            return results[0]
        forest = model
        forest.estimators_ = [tree for part in results for tree in part]
        forest.estimator_ = clone(forest.estimator)
        forest.n_features_in_ = n_features
        forest.n_outputs_ = 1
        return forest

    def forget(self) -> None:
        """Release the scattered inputs on the workers."""
        for future in self._inputs.values():
            future.release()
        self._inputs.clear()
