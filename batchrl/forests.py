"""Forests at run time: scikit-learn's regression forests fitted on threads where the
work pays for them (`fit`, `alone_if_small`), and predicted with their trees summed in one
fixed order whatever the threads (`predict`, `lower_bound`); and a regressor read from a
model file (`StoredRegressor`, made by `batchrl.modeltrees.decode_models`), which walks a
few rows with numpy, every tree at once, so a short run needs no scikit-learn (2–3 s to
import: most of a short evaluation's time), and goes over to the scikit-learn regressor it
builds for many rows, a long run or anything else asked of it."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from numpy.typing import NDArray

TREE_LEAF = -1  # scikit-learn's child index of a leaf
# a stored forest walks its trees with numpy (`StoredRegressor`) up to this many rows times
# trees at a call, and this many in all: scikit-learn's walk is up to 3 times faster, so a
# long run is better off importing it (2–3 s) than walking on (this is a second or so)
WALK_WORK = 16_384
WALK_BUDGET = 1_000_000


class StoredRegressor:
    """A regressor read from a model file (`batchrl.modeltrees.decode_models`): its class's
    ``n_features_in_``, ``n_outputs_`` and ``n_jobs``, and its ``predict``, exactly
    scikit-learn's (a forest's trees summed in their order, as `predict` sums them).
    Until scikit-learn is needed,
    a few rows at a time (`WALK_WORK` rows times trees, `WALK_BUDGET` in all) walk every
    tree at once in numpy; the rest go to the scikit-learn regressor
    (`StoredRegressor.scikit_learn`), built the first time anything needs it, which also
    answers every other attribute (``estimators_``, ``feature_importances_``, …): a
    parameter scikit-learn refuses is refused then, with one error naming the file."""

    def __init__(self, spec: dict[str, Any], where: str, kind: str,
                 build: Callable[[StoredRegressor], Any], n_features: int, n_outputs: int,
                 jobs: int | None, constant: NDArray[np.float64] | None = None,
                 trees: tuple[NDArray[Any], NDArray[np.float64], NDArray[np.int64],
                              NDArray[np.int64]] | None = None) -> None:
        """``spec``: its description in the file (``where``); ``kind``: "forest", "tree" or
        "constant"; ``build`` makes its scikit-learn regressor. ``constant`` for a constant;
        else ``trees``: its checked node records, node values, tree sizes and depths."""
        self.spec, self.where, self.kind, self._build = spec, where, kind, build
        self._shape = n_features, n_outputs, jobs
        self.constant = constant
        none = np.zeros(0, np.int64)
        self.nodes: NDArray[Any]
        self.values: NDArray[np.float64]
        self.counts: NDArray[np.int64]
        self.depths: NDArray[np.int64]
        self.nodes, self.values, self.counts, self.depths = trees or (
            none, np.zeros((0, n_outputs, 1)), none, none)
        self._built: Any = None
        self._walk: _Walk | None = None
        self._walked = 0  # rows times trees walked with numpy
        self._lock = threading.Lock()

    # the built regressor's, once it is built (a refit may change them)
    @property
    def n_features_in_(self) -> int:
        return int(self._built.n_features_in_) if self._built is not None else self._shape[0]

    @property
    def n_outputs_(self) -> int:
        return int(self._built.n_outputs_) if self._built is not None else self._shape[1]

    @property
    def n_jobs(self) -> int | None:
        return getattr(self._built, "n_jobs", None) if self._built is not None \
            else self._shape[2]

    def __repr__(self) -> str:
        return f"StoredRegressor({self.spec['class']}, {len(self.counts)} trees, {self.where})"

    def scikit_learn(self) -> Any:
        """The scikit-learn regressor (built once; the first call imports scikit-learn).
        `ModelError`, naming the file, where scikit-learn refuses its parameters or
        nodes."""
        with self._lock:
            if self._built is None:
                self._built = self._build(self)
                # its trees hold their own copies, and walk from now on
                self.nodes, self.values, self._walk = \
                    self.nodes[:0].copy(), self.values[:0].copy(), None
            return self._built

    def __getattr__(self, name: str) -> Any:
        # only for what the instance does not hold: the scikit-learn regressor's own
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.scikit_learn(), name)

    def walks(self, x: Any) -> bool:
        """Whether numpy walks ``x``: float32 rows, while no scikit-learn tree is loaded
        (the walk is there to spare importing it), `WALK_WORK` rows times trees at most,
        and no more than `WALK_BUDGET` in all."""
        if self.kind == "constant" or not _ready(x) or x.ndim != 2 or \
                x.shape[1] != self._shape[0] or self._built is not None or _trees_loaded():
            return False
        work = len(x) * len(self.counts)
        return work <= WALK_WORK and self._walked + work <= WALK_BUDGET

    def predict(self, x: Any) -> NDArray[np.float64]:
        """The prediction for each row of ``x``: (rows,) for one output, else (rows,
        outputs). float32 rows go through the trees unchecked but for their width (as
        `predict` walks a forest's trees); others through scikit-learn's ``predict``,
        which checks and converts them."""
        outputs = self.n_outputs_
        if self.kind == "constant":
            assert self.constant is not None
            out = np.full((len(x), outputs), self.constant)
            return out.ravel() if outputs == 1 else out
        if _ready(x):
            _check_width(x, self.n_features_in_)
        if _ready(x) and not len(x):  # (scikit-learn's checks refuse no rows)
            return np.zeros((0,) if outputs == 1 else (0, outputs))
        leaves = self.leaf_values(x)  # (trees, rows, outputs)
        if leaves is None:
            built = self.scikit_learn()
            if self.kind == "tree" and _ready(x):  # its own walk, as a forest's trees
                return np.asarray(_walker(built, x)(built), dtype=np.float64)
            return predict(built, x)
        if self.kind == "tree":
            tree: NDArray[np.float64] = leaves[0, :, 0] if outputs == 1 else leaves[0]
            return tree
        total = leaves[0] + 0.0  # from 0, as scikit-learn sums: -0.0 from every tree is 0.0
        for part in leaves[1:]:
            total += part
        total /= len(leaves)
        mean: NDArray[np.float64] = total[:, 0] if outputs == 1 else total
        return mean

    def leaf_values(self, x: NDArray[np.float32]) -> NDArray[np.float64] | None:
        """Each tree's value for each row of ``x`` (trees, rows, outputs), where numpy
        walks them (`walks`); else None."""
        with self._lock:  # (`scikit_learn` lets the nodes and values go under it)
            if not self.walks(x):
                return None
            if self._walk is None:
                self._walk = _Walk(self.nodes, self.counts)
            walk, values = self._walk, self.values
            self._walked += len(x) * len(self.counts)
        leaves = walk.leaves(x)
        return values[leaves, :, 0].reshape(len(self.counts), len(x), self._shape[1])


def _trees_loaded() -> bool:
    """Whether scikit-learn's trees are imported (then a stored model's are cheap to
    build, and faster)."""
    return "sklearn.tree._tree" in sys.modules


class _Walk:
    """A model's trees, end to end, as arrays a batch of rows walks every tree of at
    once, level by level: each node's children (a leaf its own), input and threshold."""

    def __init__(self, nodes: NDArray[Any], counts: NDArray[np.int64]) -> None:
        starts = np.cumsum(counts) - counts
        base = np.repeat(starts, counts)
        here = np.arange(len(nodes))
        # each field cast as scikit-learn's node records hold it (`_trees`)
        left, right = nodes["left_child"].astype(np.intp), nodes["right_child"].astype(np.intp)
        self.leaf = left == TREE_LEAF
        self.left = np.where(self.leaf, here, left + base)
        self.right = np.where(self.leaf, here, right + base)
        self.feature = np.where(self.leaf, 0, nodes["feature"].astype(np.intp))
        self.threshold = nodes["threshold"].astype(np.float64)
        self.missing_left = nodes["missing_go_to_left"].astype(np.uint8).astype(bool)
        self.roots = starts.astype(np.intp)

    def leaves(self, x: NDArray[np.float32]) -> NDArray[np.intp]:
        """The leaf each row of ``x`` (rows, inputs) reaches in each tree, tree by tree:
        scikit-learn's walk (``x <= threshold`` goes left, in doubles; a missing input
        where the split sends missing inputs)."""
        m, inputs = x.shape
        flat = np.ascontiguousarray(x).reshape(-1)
        out = np.repeat(self.roots, m)
        offset = np.tile(np.arange(m, dtype=np.intp) * inputs, len(self.roots))
        going = np.flatnonzero(~self.leaf[out])
        node, offset = out[going], offset[going]
        missing = bool(np.isnan(flat).any())
        while len(going):
            value = flat[offset + self.feature[node]]
            left = value <= self.threshold[node]
            if missing:
                left |= np.isnan(value) & self.missing_left[node]
            node = np.where(left, self.left[node], self.right[node])
            done = self.leaf[node]
            if done.any():
                out[going[done]] = node[done]
                kept = ~done
                going, node, offset = going[kept], node[kept], offset[kept]
        return out


def lower_bound(model: Any, x: NDArray[np.float32], kappa: float) -> NDArray[np.float64]:
    """The forest's prediction less ``kappa`` times the standard deviation of its trees'
    predictions (summed tree by tree in a fixed order): a lower confidence bound, low
    where the trees disagree, as they do where the rows are few."""
    if not _forest(model):
        raise ValueError(f"a lower bound on Q takes a scikit-learn forest of regression "
                         f"trees, not {type(model).__name__}")
    if _ready(x):  # walked unchecked
        _check_width(x, model.n_features_in_)
    parts: Iterator[NDArray[Any]]
    leaves = model.leaf_values(x) if isinstance(model, StoredRegressor) else None
    if leaves is not None:
        trees, parts = len(leaves), iter(leaves)
    else:
        forest = model.scikit_learn() if isinstance(model, StoredRegressor) else model
        walk = _walker(forest.estimators_[0], x)
        trees, parts = len(forest.estimators_), (walk(t) for t in forest.estimators_)
    total = np.zeros(len(x))
    squares = np.zeros(len(x))
    for tree in parts:
        part = tree.astype(np.float64).reshape(len(x))
        total += part
        squares += part * part
    mean = total / trees
    sd = np.sqrt(np.maximum(squares / trees - mean * mean, 0.0))
    out: NDArray[np.float64] = mean - kappa * sd
    return out


def predict(model: Any, x: NDArray[np.float32]) -> NDArray[np.float64]:
    """``model.predict(x)``, summed tree by tree in a fixed order: scikit-learn sums a
    forest's trees as its threads finish, so its last bits, and through FQI's ties every
    later split, would change from run to run. On one thread the sum is scikit-learn's, bit
    for bit, without its checks and hand-offs for each tree (about 0.2 ms a tree: what a
    search's or an evaluation's one state at a time mostly cost)."""
    if isinstance(model, StoredRegressor):
        return model.predict(x)
    trees = getattr(model, "estimators_", None)
    jobs: int = getattr(model, "n_jobs", None) or 1
    alone = jobs == 1
    if trees is None or not _forest(model) or (alone and not _ready(x)) or x.shape[0] == 0:
        return np.asarray(model.predict(x), dtype=np.float64)
    _check_width(x, model.n_features_in_)  # the trees check nothing
    walk = _walker(trees[0], x)
    if alone or len(x) < FEW_ROWS:
        parts: Iterator[NDArray[Any]] = (walk(tree) for tree in trees)
    else:
        # a few tasks of several trees each, not one a tree (a task's hand-off cost as
        # much as a tree's walk of a search's few hundred rows); each task's trees in
        # order, its outputs at most CHUNK_BYTES
        workers = min(len(trees), os.cpu_count() or 1) if jobs < 0 else jobs
        size = max(1, min(-(-len(trees) // workers),
                          CHUNK_BYTES // max(1, len(x) * _outputs(trees[0]) * 8)))
        chunks = [trees[i:i + size] for i in range(0, len(trees), size)]
        done = _pool(workers).map(lambda chunk: [walk(tree) for tree in chunk], chunks)
        parts = (part for chunk in done for part in chunk)
    total: NDArray[np.float64] | None = None
    for part in parts:  # from 0, as scikit-learn sums: -0.0 from every tree is 0.0
        total = part.astype(np.float64) + 0.0 if total is None else total + part
    assert total is not None
    return total / len(trees)


def _outputs(tree: Any) -> int:
    return int(getattr(tree, "n_outputs_", 1))


def _walker(tree: Any, x: NDArray[Any]) -> Any:
    """A tree's ``predict(x)`` for the trees of a forest like ``tree``: for a regression
    tree and float32 rows, its fitted structure's own walk (``tree_.predict``, what
    ``predict`` calls after its checks, which cost as much as a walk of a few hundred
    rows); otherwise ``predict``, with its input checks where the rows are not float32
    (they convert them)."""
    if not _ready(x):
        return lambda t: t.predict(x)
    if _outputs(tree) == 1:
        return lambda t: t.tree_.predict(x)[:, 0]
    return lambda t: t.tree_.predict(x)[:, :, 0]


# below this many rows times trees, a forest's fit or apply runs in the caller's thread:
# joblib's threads hand back each call's work no sooner than 10 ms (it polls), more than a
# few trees on a few hundred rows take to grow
SMALL_WORK = 20_000


@contextlib.contextmanager
def alone_if_small(model: Any, rows: int) -> Iterator[None]:
    """``model`` (a scikit-learn forest) on one thread while this holds, where ``rows``
    times its trees are few (`SMALL_WORK`); its trees are the same on any number (each
    grown from its own seed, drawn before they are handed out)."""
    jobs, trees = getattr(model, "n_jobs", None), getattr(model, "n_estimators", None)
    if jobs in (None, 1) or not isinstance(trees, int) or rows * trees >= SMALL_WORK:
        yield
        return
    model.set_params(n_jobs=1)
    try:
        yield
    finally:
        model.set_params(n_jobs=jobs)


def fit(model: Any, x: NDArray[Any], y: NDArray[Any], **given: Any) -> Any:
    """``model.fit(x, y, **given)``, on one thread where the work is small
    (`alone_if_small`)."""
    with alone_if_small(model, len(x)):
        return model.fit(x, y, **given)


def _forest(model: Any) -> bool:
    """A scikit-learn forest of regression trees (what the learners grow): its prediction
    is the mean of its trees', each on every input."""
    if isinstance(model, StoredRegressor):
        return model.kind == "forest"
    # loaded: a fitted forest is at hand
    from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor

    return isinstance(model, ExtraTreesRegressor | RandomForestRegressor)


def _check_width(x: NDArray[Any], inputs: int) -> None:
    """``ValueError`` unless ``x`` is rows of ``inputs`` inputs (scikit-learn's walk of a
    tree reads past a narrower row)."""
    if x.ndim != 2 or x.shape[1] != inputs:
        raise ValueError(f"the model takes rows of {inputs} inputs, not an array of shape "
                         f"{x.shape}")


def _ready(x: Any) -> bool:
    """Rows a tree walks as they are (what scikit-learn's checks turn them into)."""
    return isinstance(x, np.ndarray) and x.dtype == np.float32


# below this many rows a forest's trees predict in the caller's thread: a thread's hand-off
# costs more than a tree's walk of a few rows (the sum is the same, in the same order)
FEW_ROWS = 64
CHUNK_BYTES = 16 << 20  # the most one task's tree outputs hold before they are summed
_POOLS: dict[tuple[int, int], ThreadPoolExecutor] = {}


def _pool(workers: int) -> ThreadPoolExecutor:
    """The process's pool of ``workers`` threads for the trees, made once (a search asks
    a forest thousands of times; starting threads each time was a tenth of its time). By
    process id: a forked child has none of its parent's threads."""
    key = (os.getpid(), workers)
    pool = _POOLS.get(key)
    if pool is None:
        pool = _POOLS[key] = ThreadPoolExecutor(max_workers=workers,
                                                thread_name_prefix="batchrl-trees")
    return pool
