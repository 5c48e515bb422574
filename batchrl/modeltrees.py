"""Fitted regressors in a model file without pickles (`batchrl.modelfile`): described in
its JSON document, their trees as node arrays.

A fitted regressor is described in the JSON — its class, its parameters, its fitted
scalars — and its trees are node arrays: for model ``i``, ``model{i}.nodes``
(scikit-learn's node records of every tree, end to end: children, feature, threshold,
…), ``model{i}.values`` (each node's value) and ``model{i}.node_count`` (each tree's
size). Read back, the nodes are checked — every child inside its tree and after its
parent, every node reached once, every split on an input the model has — and the model
is a `StoredRegressor`, which predicts exactly what the original did, bit for bit. A few
rows it walks with numpy, every tree at once, so a short run of a model needs no
scikit-learn (2–3 s to import: most of a short evaluation's time); many rows, a long run,
and anything else asked of it (its trees, ``feature_importances_``, a checkpoint's
refits) go to the scikit-learn regressor it builds, with scikit-learn's own ``Tree``
objects, the first time one is needed (`StoredRegressor.scikit_learn`).

The regressors a file holds are those FQI fits: scikit-learn's ``ExtraTreesRegressor``
(FQI's), ``RandomForestRegressor``, ``ExtraTreeRegressor``, ``DecisionTreeRegressor``
and ``DummyRegressor``; ``None`` for a model never fitted. Another is refused when the
file is written.

>>> import tempfile
>>> from pathlib import Path
>>> from sklearn.ensemble import ExtraTreesRegressor
>>> from batchrl.modelfile import read, write
>>> x, y = np.random.default_rng(0).random((200, 3)), np.arange(200.0)
>>> forest = ExtraTreesRegressor(5, random_state=0).fit(x, y)
>>> specs, arrays = encode_models([forest, None])
>>> path = Path(tempfile.mkdtemp()) / "m.npz"
>>> _ = write(path, "example", {"models": specs}, arrays)
>>> header, stored = read(path, "example")
>>> back = decode_models(header["models"], stored, path)
>>> bool((back[0].predict(x.astype(np.float32)) == forest.predict(x)).all()), back[1]
(True, None)
>>> type(back[0].scikit_learn()).__name__
'ExtraTreesRegressor'
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.modelfile import ModelError, to_json

TREE_LEAF = -1  # scikit-learn's child index of a leaf


def _classes() -> dict[str, tuple[str, Any, Any]]:
    """Class name -> (what it is, class, its trees' class)."""
    # here, not above: scikit-learn takes a second to load, and only a forest needs it
    from sklearn.dummy import DummyRegressor
    from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor
    from sklearn.tree import DecisionTreeRegressor, ExtraTreeRegressor

    return {"ExtraTreesRegressor": ("forest", ExtraTreesRegressor, ExtraTreeRegressor),
            "RandomForestRegressor": ("forest", RandomForestRegressor, DecisionTreeRegressor),
            "ExtraTreeRegressor": ("tree", ExtraTreeRegressor, None),
            "DecisionTreeRegressor": ("tree", DecisionTreeRegressor, None),
            "DummyRegressor": ("constant", DummyRegressor, None)}


def encode_models(models: Sequence[Any], where: str = "the model"
                  ) -> tuple[list[dict[str, Any] | None], dict[str, Any]]:
    """Each fitted regressor (or None) as a JSON description, and the arrays of all of
    them (``model{i}.…``; a forest's node arrays as functions that gather them when
    `write` writes them, so they are not all held at once). `ModelError` for a
    regressor a model file cannot hold."""
    classes = _classes()
    specs: list[dict[str, Any] | None] = []
    arrays: dict[str, Any] = {}
    for i, model in enumerate(models):
        if model is None:
            specs.append(None)
            continue
        if isinstance(model, StoredRegressor):
            model = model.scikit_learn()
        here = f"{where}'s regressor {i}"
        name = type(model).__name__
        if name not in classes or type(model) is not classes[name][1]:
            known = ", ".join(classes)
            raise ModelError(f"{here} is a {type(model).__module__}.{name}: a model file "
                             f"holds only scikit-learn's {known}")
        what = classes[name][0]
        try:
            spec: dict[str, Any] = {
                "class": name, "params": to_json(model.get_params(deep=False), here),
                "n_features_in_": int(model.n_features_in_),
                "n_outputs_": int(model.n_outputs_)}
            if what == "constant":
                arrays[f"model{i}.constant"] = np.asarray(model.constant_, dtype=np.float64)
            else:
                trees = list(model.estimators_) if what == "forest" else [model]
                if what == "forest":
                    spec["trees"] = {
                        "class": type(trees[0]).__name__,
                        "params": to_json({k: v for k, v in trees[0].get_params(deep=False)
                                           .items() if k != "random_state"}, here),
                        "random_state": [to_json(t.random_state, here) for t in trees]}
                spec["max_features_"] = int(trees[0].max_features_)
                arrays.update({f"model{i}.{k}": functools.partial(_tree_array, trees, k)
                               for k in ("nodes", "values", "node_count")})
        except AttributeError as exc:
            raise ModelError(f"{here} is not fitted ({exc})") from None
        specs.append(spec)
    return specs, arrays


def _tree_array(trees: Sequence[Any], key: str) -> NDArray[Any]:
    """One of a forest's arrays, its trees end to end: ``nodes`` (scikit-learn's node
    records), ``values`` or ``node_count``."""
    if key == "node_count":
        return np.array([t.tree_.node_count for t in trees], dtype=np.int64)
    return np.concatenate([t.tree_.__getstate__()[key] for t in trees])


# A regressor's class -> (what it is, its trees' class), known without scikit-learn
KINDS: dict[str, tuple[str, str | None]] = {
    "ExtraTreesRegressor": ("forest", "ExtraTreeRegressor"),
    "RandomForestRegressor": ("forest", "DecisionTreeRegressor"),
    "ExtraTreeRegressor": ("tree", None),
    "DecisionTreeRegressor": ("tree", None),
    "DummyRegressor": ("constant", None)}
# the fields of scikit-learn's node records (``sklearn.tree._tree.NODE_DTYPE``): a file's
# nodes must hold them all (checked again against scikit-learn's own when it builds trees)
NODE_FIELDS = ("left_child", "right_child", "feature", "threshold", "impurity",
               "n_node_samples", "weighted_n_node_samples", "missing_go_to_left")
# a stored forest walks its trees with numpy (`StoredRegressor`) up to this many rows times
# trees at a call, and this many in all: scikit-learn's walk is up to 3 times faster, so a
# long run is better off importing it (2–3 s) than walking on (this is a second or so)
WALK_WORK = 16_384
WALK_BUDGET = 1_000_000


def decode_models(specs: Any, arrays: Mapping[str, NDArray[Any]], path: str | Path,
                  scikit_learn: bool = False) -> list[Any]:
    """The regressors `encode_models` described, checked, as `StoredRegressor`s (or, with
    ``scikit_learn``, as the scikit-learn regressors they build: what a run that refits or
    changes them takes); `ModelError` (naming ``path``) for anything that is not a
    well-formed regressor of the classes it holds."""
    if not isinstance(specs, list):
        raise ModelError(f"{path}: its regressors are not a list")
    out = [None if spec is None else _decode(spec, arrays, f"model{i}", f"{path}: model {i}")
           for i, spec in enumerate(specs)]
    return [m.scikit_learn() if scikit_learn and m is not None else m for m in out]


def _count(spec: Mapping[str, Any], key: str, where: str) -> int:
    value = spec.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ModelError(f"{where}: {key} is {value!r}, not a count")
    return value


def _object(given: Any, where: str) -> dict[str, Any]:
    if not isinstance(given, dict):
        raise ModelError(f"{where}: its parameters are not a JSON object")
    return given


def _params(cls: Any, given: Any, where: str) -> dict[str, Any]:
    """The constructor parameters ``cls`` knows among ``given`` (JSON values): a parameter
    of another scikit-learn version is left out (it changes no prediction)."""
    known = cls().get_params(deep=False)
    return {k: v for k, v in _object(given, where).items() if k in known}


def _decode(spec: Any, arrays: Mapping[str, NDArray[Any]], prefix: str, where: str
            ) -> StoredRegressor:
    """A regressor's description and arrays, checked without scikit-learn."""
    if not isinstance(spec, dict) or spec.get("class") not in KINDS:
        name = spec.get("class") if isinstance(spec, dict) else spec
        raise ModelError(f"{where} is a {name!r}, not a regressor batchrl reads "
                         f"({', '.join(KINDS)})")
    what, tree_class = KINDS[spec["class"]]
    n_features = _count(spec, "n_features_in_", where)
    n_outputs = _count(spec, "n_outputs_", where)
    params = _object(spec.get("params"), where)
    jobs = params.get("n_jobs") if what == "forest" else None
    if not isinstance(jobs, int | None) or isinstance(jobs, bool) or jobs == 0:
        raise ModelError(f"{where}: n_jobs is {jobs!r}, not a count")
    shape = spec, where, n_features, n_outputs, jobs
    if what == "constant":
        constant = _array(arrays, f"{prefix}.constant", where)
        if constant.dtype.kind not in "fiu" or constant.shape != (1, n_outputs):
            raise ModelError(f"{where}: its constant is {constant.dtype} {constant.shape}, "
                             f"not (1, {n_outputs}) numbers")
        return StoredRegressor(*shape, constant=constant.astype(np.float64))
    _count(spec, "max_features_", where)
    seeds: list[Any] = []
    if what == "forest":
        about = spec.get("trees")
        if not isinstance(about, dict) or about.get("class") != tree_class:
            raise ModelError(f"{where}: a {spec['class']} whose trees are not "
                             f"{tree_class}s")
        _object(about.get("params"), where)
        given = about.get("random_state")
        if not isinstance(given, list) or not all(
                s is None or (isinstance(s, int) and not isinstance(s, bool)) for s in given):
            raise ModelError(f"{where}: its trees' random states are not integers")
        seeds = given
    nodes, values, counts, depths = _nodes(arrays, prefix, n_features, n_outputs, where)
    if what == "forest" and len(seeds) != len(counts):
        raise ModelError(f"{where}: {len(seeds)} random states for {len(counts)} trees")
    if what == "tree" and len(counts) != 1:
        raise ModelError(f"{where}: a single tree stored as {len(counts)}")
    return StoredRegressor(*shape, trees=(nodes, values, counts, depths))


def _scikit_learn(stored: StoredRegressor) -> Any:
    """The scikit-learn regressor ``stored`` describes, its parameters checked by
    scikit-learn and its trees scikit-learn's own."""
    spec, where = stored.spec, stored.where
    what, cls, tree_cls = _classes()[spec["class"]]
    params = _params(cls, spec.get("params"), where)
    model = _checked(cls(**params), where)
    model.n_features_in_, model.n_outputs_ = stored.n_features_in_, stored.n_outputs_
    if what == "constant":
        model.constant_ = stored.constant
        return model
    seeds: list[int | None] | None = None
    if what == "tree":
        tree_cls, tree_params = cls, params
    else:
        tree_params = _params(tree_cls, spec["trees"].get("params"), where)
        tree_params.pop("random_state", None)
        seeds = spec["trees"]["random_state"]
    built = []
    for t, tree_ in enumerate(_trees(stored, where)):
        tree = _checked(tree_cls(**tree_params) if seeds is None else
                        tree_cls(**tree_params, random_state=seeds[t]), where)
        tree.n_features_in_, tree.n_outputs_ = stored.n_features_in_, stored.n_outputs_
        tree.max_features_ = spec["max_features_"]
        tree.tree_ = tree_
        built.append(tree)
    if what == "tree":
        return built[0]
    model.estimators_ = built
    return model


def _checked(model: Any, where: str) -> Any:
    """``model`` once scikit-learn finds its parameters valid (a crafted ``verbose`` or
    ``pre_dispatch`` would fail deep inside a prediction)."""
    try:
        model._validate_params()
    except (ValueError, TypeError) as exc:  # scikit-learn's InvalidParameterError
        raise ModelError(f"{where}: {str(exc).splitlines()[0][:300]}") from None
    return model


def _array(arrays: Mapping[str, NDArray[Any]], name: str, where: str) -> NDArray[Any]:
    if name not in arrays:
        raise ModelError(f"{where}: the file has no {name}.npy")
    return arrays[name]


def _nodes(arrays: Mapping[str, NDArray[Any]], prefix: str, n_features: int, n_outputs: int,
           where: str) -> tuple[NDArray[Any], NDArray[np.float64], NDArray[np.int64],
                                NDArray[np.int64]]:
    """A model's node records, node values, tree sizes and tree depths, once they are
    checked to be trees."""
    nodes = _array(arrays, f"{prefix}.nodes", where)
    values = _array(arrays, f"{prefix}.values", where)
    counts = _array(arrays, f"{prefix}.node_count", where)
    if nodes.ndim != 1 or nodes.dtype.names is None:
        raise ModelError(f"{where}: its tree nodes are not records")
    missing = [n for n in NODE_FIELDS if n not in nodes.dtype.names]
    if missing:
        raise ModelError(f"{where}: its tree nodes lack {', '.join(missing)} (written with "
                         "another scikit-learn): retrain it with batchrl fqi")
    # scikit-learn's own kinds: a float child or a half-true flag would be cast one way
    # for its trees and could be read another way by the numpy walk
    kinds = {name: nodes.dtype[name].kind for name in NODE_FIELDS}
    if any(kinds[n] != "i" for n in ("left_child", "right_child", "feature")) or \
            kinds["missing_go_to_left"] not in "iub" or kinds["threshold"] != "f":
        raise ModelError(f"{where}: its tree nodes' children, inputs or missing-value "
                         "sides are not whole numbers, or its thresholds not numbers")
    if counts.ndim != 1 or counts.dtype.kind not in "iu" or not len(counts) or \
            counts.min() < 1 or counts.max() > len(nodes) or int(counts.sum()) != len(nodes):
        raise ModelError(f"{where}: its tree sizes do not add up to its {len(nodes)} nodes")
    if values.dtype.kind != "f" or values.shape != (len(nodes), n_outputs, 1):
        raise ModelError(f"{where}: its node values are {values.dtype} {values.shape}, not "
                         f"({len(nodes)}, {n_outputs}, 1) numbers")
    counts = counts.astype(np.int64)
    inner = nodes["left_child"] != TREE_LEAF
    if not np.isfinite(nodes["threshold"][inner]).all() or not np.isfinite(values).all():
        raise ModelError(f"{where}: a tree holds a threshold or a value that is not a "
                         "finite number")
    depths = _check_structure(nodes, counts, n_features, where)
    return nodes, np.ascontiguousarray(values, dtype=np.float64), counts, depths


def _trees(stored: StoredRegressor, where: str) -> list[Any]:
    """scikit-learn ``Tree`` objects of ``stored``'s checked nodes."""
    from sklearn.tree._tree import NODE_DTYPE, Tree  # scikit-learn (1 s): only to rebuild trees

    saved = stored.nodes
    missing = [n for n in NODE_DTYPE.names if n not in (saved.dtype.names or ())]
    if missing:
        raise ModelError(f"{where}: its tree nodes lack {', '.join(missing)} (written with "
                         "another scikit-learn): retrain it with batchrl fqi")
    if saved.dtype == NODE_DTYPE:
        nodes = np.ascontiguousarray(saved)
    else:  # another byte order or bitness: field by field
        nodes = np.zeros(len(saved), dtype=NODE_DTYPE)
        for name in NODE_DTYPE.names:
            nodes[name] = saved[name]
    n_features, n_outputs = stored.n_features_in_, stored.n_outputs_
    out = []
    start = 0
    for count, depth in zip(stored.counts.tolist(), stored.depths.tolist(), strict=True):
        tree = Tree(n_features, np.ones(n_outputs, dtype=np.intp), n_outputs)
        tree.__setstate__({"max_depth": depth, "node_count": count,
                           "nodes": nodes[start : start + count],
                           "values": stored.values[start : start + count]})
        out.append(tree)
        start += count
    return out


class StoredRegressor:
    """A regressor read from a model file (`decode_models`): its class's ``n_features_in_``,
    ``n_outputs_`` and ``n_jobs``, and its ``predict``, exactly scikit-learn's (a forest's
    trees summed in their order, as `predict` sums them). Until scikit-learn is needed,
    a few rows at a time (`WALK_WORK` rows times trees, `WALK_BUDGET` in all) walk every
    tree at once in numpy; the rest go to the scikit-learn regressor
    (`StoredRegressor.scikit_learn`), built the first time anything needs it, which also
    answers every other attribute (``estimators_``, ``feature_importances_``, …): a
    parameter scikit-learn refuses is refused then, with one error naming the file."""

    def __init__(self, spec: dict[str, Any], where: str, n_features: int, n_outputs: int,
                 jobs: int | None, constant: NDArray[np.float64] | None = None,
                 trees: tuple[NDArray[Any], NDArray[np.float64], NDArray[np.int64],
                              NDArray[np.int64]] | None = None) -> None:
        """``constant`` for a constant; else ``trees``: `_nodes`'s checked node records,
        node values, tree sizes and tree depths."""
        self.spec, self.where = spec, where
        self.kind = KINDS[spec["class"]][0]
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
                self._built = _scikit_learn(self)
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
        `batchrl.modeltrees.predict` walks a forest's trees); others through
        scikit-learn's ``predict``, which checks and converts them."""
        outputs = self.n_outputs_
        if self.kind == "constant":
            assert self.constant is not None
            out = np.full((len(x), outputs), self.constant)
            return out.ravel() if outputs == 1 else out
        if _ready(x) and (x.ndim != 2 or x.shape[1] != self.n_features_in_):
            raise ValueError(f"the model takes rows of {self.n_features_in_} inputs, not an "
                             f"array of shape {x.shape}")
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


def _check_structure(nodes: NDArray[Any], counts: NDArray[np.int64], n_features: int,
                     where: str) -> NDArray[np.int64]:
    """Each tree's depth, once every tree is checked to be one: scikit-learn follows the
    children without bounds checks, so a child outside its tree, a cycle or a split on
    a missing input must never reach it."""
    starts = np.cumsum(counts) - counts
    total = len(nodes)
    tree_of = np.repeat(np.arange(len(counts)), counts)
    local = np.arange(total) - starts[tree_of]
    left = nodes["left_child"].astype(np.int64)
    right = nodes["right_child"].astype(np.int64)
    leaf = left == TREE_LEAF
    if np.any(right[leaf] != TREE_LEAF):
        raise ModelError(f"{where}: a tree node with one child")
    inner = ~leaf
    size = counts[tree_of[inner]]
    for child in (left[inner], right[inner]):
        if np.any((child <= local[inner]) | (child >= size)):
            raise ModelError(f"{where}: a tree node's child lies outside its tree or "
                             "before it")
    feature = nodes["feature"][inner]
    if np.any((feature < 0) | (feature >= n_features)):
        raise ModelError(f"{where}: a split on an input the model does not have (it has "
                         f"{n_features})")
    base = starts[tree_of]
    to_left = np.where(inner, left + base, TREE_LEAF)
    to_right = np.where(inner, right + base, TREE_LEAF)
    parents = np.bincount(np.concatenate([to_left[inner], to_right[inner]]),
                          minlength=total)
    expected = np.ones(total, dtype=np.int64)
    expected[starts] = 0
    if not np.array_equal(parents, expected):
        raise ModelError(f"{where}: a tree node that is reached twice, or never")
    # Every node has one parent before it: the levels below the roots cover each once.
    depths = np.zeros(len(counts), dtype=np.int64)
    level, depth = starts, 0
    while True:
        level = level[inner[level]]
        if not len(level):
            return depths
        depth += 1
        level = np.concatenate([to_left[level], to_right[level]])
        depths[tree_of[level]] = depth


def lower_bound(model: Any, x: NDArray[np.float32], kappa: float) -> NDArray[np.float64]:
    """The forest's prediction less ``kappa`` times the standard deviation of its trees'
    predictions (summed tree by tree in a fixed order): a lower confidence bound, low
    where the trees disagree, as they do where the rows are few."""
    if not _forest(model):
        raise ValueError(f"a lower bound on Q takes a scikit-learn forest of regression "
                         f"trees, not {type(model).__name__}")
    if _ready(x) and (x.ndim != 2 or x.shape[1] != model.n_features_in_):  # walked unchecked
        raise ValueError(f"the model takes rows of {model.n_features_in_} inputs, not an "
                         f"array of shape {x.shape}")
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
    if x.ndim != 2 or x.shape[1] != model.n_features_in_:  # the trees check nothing
        raise ValueError(f"the model takes rows of {model.n_features_in_} inputs, not an "
                         f"array of shape {x.shape}")
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
