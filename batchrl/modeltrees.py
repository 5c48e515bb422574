"""Fitted regressors in a model file without pickles (`batchrl.modelfile`): described in
its JSON document, their trees as node arrays.

A fitted regressor is described in the JSON — its class, its parameters, its fitted
scalars — and its trees are node arrays: for model ``i``, ``model{i}.nodes``
(scikit-learn's node records of every tree, end to end: children, feature, threshold,
…), ``model{i}.values`` (each node's value) and ``model{i}.node_count`` (each tree's
size). Read back, the nodes are checked — every child inside its tree and after its
parent, every node reached once, every split on an input the model has — and the model
is a `batchrl.forests.StoredRegressor`, which predicts exactly what the original did, bit
for bit: a few rows by numpy, so a short run needs no scikit-learn, the rest by the
scikit-learn regressor it builds here (`_scikit_learn`) the first time one is needed,
with scikit-learn's own ``Tree`` objects. (How forests are fitted and predicted at run
time is `batchrl.forests`.)

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

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.forests import TREE_LEAF, StoredRegressor
from batchrl.modelfile import ModelError, to_json


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
    shape = spec, where, what, _scikit_learn, n_features, n_outputs, jobs
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


