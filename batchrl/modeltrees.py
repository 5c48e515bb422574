"""Fitted regressors in a model file without pickles (`batchrl.modelfile`): described in
its JSON document, their trees as node arrays.

A fitted regressor is described in the JSON — its class, its parameters, its fitted
scalars — and its trees are node arrays: for model ``i``, ``model{i}.nodes``
(scikit-learn's node records of every tree, end to end: children, feature, threshold,
…), ``model{i}.values`` (each node's value) and ``model{i}.node_count`` (each tree's
size). Read back, the nodes are checked — every child inside its tree and after its
parent, every node reached once, every split on an input the model has — and become
scikit-learn's own ``Tree``: a loaded model predicts exactly what the original did, at
the same speed.

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
>>> bool((back[0].predict(x) == forest.predict(x)).all()), back[1]
(True, None)
"""

from __future__ import annotations

import contextlib
import functools
import os
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


def decode_models(specs: Any, arrays: Mapping[str, NDArray[Any]], path: str | Path
                  ) -> list[Any]:
    """The regressors `encode_models` described, checked and rebuilt; `ModelError` (naming
    ``path``) for anything that is not a well-formed regressor of the classes it holds."""
    if not isinstance(specs, list):
        raise ModelError(f"{path}: its regressors are not a list")
    return [None if spec is None else _decode(spec, arrays, f"model{i}", f"{path}: model {i}")
            for i, spec in enumerate(specs)]


def _count(spec: Mapping[str, Any], key: str, where: str) -> int:
    value = spec.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ModelError(f"{where}: {key} is {value!r}, not a count")
    return value


def _params(cls: Any, given: Any, where: str) -> dict[str, Any]:
    """The constructor parameters ``cls`` knows among ``given`` (JSON values): a parameter
    of another scikit-learn version is left out (it changes no prediction)."""
    if not isinstance(given, dict):
        raise ModelError(f"{where}: its parameters are not a JSON object")
    known = cls().get_params(deep=False)
    return {k: v for k, v in given.items() if k in known}


def _decode(spec: Any, arrays: Mapping[str, NDArray[Any]], prefix: str, where: str) -> Any:
    classes = _classes()
    if not isinstance(spec, dict) or spec.get("class") not in classes:
        name = spec.get("class") if isinstance(spec, dict) else spec
        raise ModelError(f"{where} is a {name!r}, not a regressor batchrl reads "
                         f"({', '.join(classes)})")
    what, cls, tree_cls = classes[spec["class"]]
    n_features = _count(spec, "n_features_in_", where)
    n_outputs = _count(spec, "n_outputs_", where)
    params = _params(cls, spec.get("params"), where)
    if not isinstance(params.get("n_jobs"), int | None) or \
            isinstance(params.get("n_jobs"), bool) or params.get("n_jobs") == 0:
        raise ModelError(f"{where}: n_jobs is {params['n_jobs']!r}, not a count")
    model = _checked(cls(**params), where)
    model.n_features_in_, model.n_outputs_ = n_features, n_outputs
    if what == "constant":
        constant = _array(arrays, f"{prefix}.constant", where)
        if constant.dtype.kind not in "fiu" or constant.shape != (1, n_outputs):
            raise ModelError(f"{where}: its constant is {constant.dtype} {constant.shape}, "
                             f"not (1, {n_outputs}) numbers")
        model.constant_ = constant.astype(np.float64)
        return model
    max_features = _count(spec, "max_features_", where)
    if what == "tree":
        tree_cls, tree_params, seeds = cls, _params(cls, spec.get("params"), where), None
    else:
        about = spec.get("trees")
        if not isinstance(about, dict) or about.get("class") != tree_cls.__name__:
            raise ModelError(f"{where}: a {spec['class']} whose trees are not "
                             f"{tree_cls.__name__}s")
        tree_params = _params(tree_cls, about.get("params"), where)
        tree_params.pop("random_state", None)
        seeds = about.get("random_state")
        if not isinstance(seeds, list) or not all(
                s is None or (isinstance(s, int) and not isinstance(s, bool)) for s in seeds):
            raise ModelError(f"{where}: its trees' random states are not integers")
    trees = _trees(arrays, prefix, n_features, n_outputs, where)
    if seeds is not None and len(seeds) != len(trees):
        raise ModelError(f"{where}: {len(seeds)} random states for {len(trees)} trees")
    built = []
    for t, tree_ in enumerate(trees):
        tree = _checked(tree_cls(**tree_params) if seeds is None else
                        tree_cls(**tree_params, random_state=seeds[t]), where)
        tree.n_features_in_, tree.n_outputs_ = n_features, n_outputs
        tree.max_features_ = max_features
        tree.tree_ = tree_
        built.append(tree)
    if what == "tree":
        if len(built) != 1:
            raise ModelError(f"{where}: a single tree stored as {len(built)}")
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


def _trees(arrays: Mapping[str, NDArray[Any]], prefix: str, n_features: int, n_outputs: int,
           where: str) -> list[Any]:
    """scikit-learn ``Tree`` objects from the node arrays, once they are checked."""
    from sklearn.tree._tree import NODE_DTYPE, Tree  # scikit-learn (1 s): only to rebuild trees

    saved = _array(arrays, f"{prefix}.nodes", where)
    values = _array(arrays, f"{prefix}.values", where)
    counts = _array(arrays, f"{prefix}.node_count", where)
    if saved.ndim != 1 or saved.dtype.names is None:
        raise ModelError(f"{where}: its tree nodes are not records")
    missing = [n for n in NODE_DTYPE.names if n not in saved.dtype.names]
    if missing:
        raise ModelError(f"{where}: its tree nodes lack {', '.join(missing)} (written with "
                         "another scikit-learn): retrain it with batchrl fqi")
    if saved.dtype == NODE_DTYPE:
        nodes = np.ascontiguousarray(saved)
    else:  # another byte order or bitness: field by field
        nodes = np.zeros(len(saved), dtype=NODE_DTYPE)
        for name in NODE_DTYPE.names:
            nodes[name] = saved[name]
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
    values = np.ascontiguousarray(values, dtype=np.float64)
    out = []
    start = 0
    for count, depth in zip(counts.tolist(), depths.tolist(), strict=True):
        tree = Tree(n_features, np.ones(n_outputs, dtype=np.intp), n_outputs)
        tree.__setstate__({"max_depth": depth, "node_count": count,
                           "nodes": nodes[start : start + count],
                           "values": values[start : start + count]})
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


def lower_bound(model: Any, x: NDArray[np.float32], kappa: float) -> NDArray[np.float64]:
    """The forest's prediction less ``kappa`` times the standard deviation of its trees'
    predictions (summed tree by tree in a fixed order): a lower confidence bound, low
    where the trees disagree, as they do where the rows are few."""
    if not _forest(model):
        raise ValueError(f"a lower bound on Q takes a scikit-learn forest of regression "
                         f"trees, not {type(model).__name__}")
    trees = model.estimators_
    total = np.zeros(len(x))
    squares = np.zeros(len(x))
    walk = _walker(trees[0], x)
    for tree in trees:
        part = walk(tree).astype(np.float64).reshape(len(x))
        total += part
        squares += part * part
    mean = total / len(trees)
    sd = np.sqrt(np.maximum(squares / len(trees) - mean * mean, 0.0))
    out: NDArray[np.float64] = mean - kappa * sd
    return out


def predict(model: Any, x: NDArray[np.float32]) -> NDArray[np.float64]:
    """``model.predict(x)``, summed tree by tree in a fixed order: scikit-learn sums a
    forest's trees as its threads finish, so its last bits, and through FQI's ties every
    later split, would change from run to run. On one thread the sum is scikit-learn's, bit
    for bit, without its checks and hand-offs for each tree (about 0.2 ms a tree: what a
    search's or an evaluation's one state at a time mostly cost)."""
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
