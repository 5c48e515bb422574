"""Model files without pickles: a zip of ``.npy`` arrays and one JSON document.

Every model and every FQI checkpoint batchrl writes is such a file, read back with
``json`` and ``numpy.lib.format.read_array(allow_pickle=False)``: loading one builds
arrays and plain values and never runs code the file carries, so a model file is
safe to share. A pickle (joblib's files, batchrl's models before version 2) runs
whatever it holds when loaded: batchrl refuses one, saying how to retrain.

The zip holds ``model.json`` (``format``, ``kind``, and the rest of the document) and
the arrays as ``NAME.npy`` (``numpy.load`` reads them too). A fitted regressor is
described in the JSON — its class, its parameters, its fitted scalars — and its trees
are node arrays: for model ``i``, ``model{i}.nodes`` (scikit-learn's node records of
every tree, end to end: children, feature, threshold, …), ``model{i}.values`` (each
node's value) and ``model{i}.node_count`` (each tree's size). Read back, the nodes are
checked — every child inside its tree and after its parent, every node reached once,
every split on an input the model has — and become scikit-learn's own ``Tree``: a
loaded model predicts exactly what the original did, at the same speed.

The regressors a file holds are those FQI fits: scikit-learn's ``ExtraTreesRegressor``
(FQI's), ``RandomForestRegressor``, ``ExtraTreeRegressor``, ``DecisionTreeRegressor``
and ``DummyRegressor``; ``None`` for a model never fitted. Another is refused when the
file is written.

>>> import tempfile
>>> from sklearn.ensemble import ExtraTreesRegressor
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

import functools
import json
import os
import re
import shlex
import zipfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

FORMAT = "batchrl-model"
HEADER = "model.json"
SUFFIX = ".npz"  # a model file's name: fqi-M…-nmin…-N….npz
PICKLE_SUFFIX = ".joblib"  # batchrl's models before version 2: pickles, refused
TREE_LEAF = -1  # scikit-learn's child index of a leaf
# Bounds on what a file may make a reader allocate, checked before anything is: the
# arrays are stored (not compressed), so they take no more than the file's bytes; the
# JSON, compressed, may inflate this much and no more (a "zip bomb" is refused).
MAX_HEADER = 64 << 20
MAX_INFLATION = 200
MAX_ACTIONS = 127  # as a store's (batchrl.store.schema)
MAX_FEATURES = 100_000
MAX_NAME = 1_000


class ModelError(ValueError):
    """A model file that cannot be used; the message says why and what to do."""


# ---- the file ------------------------------------------------------------------------


def write(path: str | Path, kind: str, document: Mapping[str, Any],
          arrays: Mapping[str, NDArray[Any] | Callable[[], NDArray[Any]]]) -> Path:
    """Write ``document`` (JSON values, numpy scalars and arrays, paths: `to_json`) and
    ``arrays`` (numbers, no objects; an array, or a function that makes it when it is
    written, so a model's trees are held in arrays one forest at a time) as one file,
    atomically (a temporary name, then a rename). `ModelError` if something cannot be
    stored."""
    from batchrl.filenames import clear_leftovers

    path = Path(path)
    text = json.dumps({"format": FORMAT, "kind": kind, **to_json(document, kind)}, indent=1)
    path.parent.mkdir(parents=True, exist_ok=True)
    clear_leftovers(path.parent, path.name)  # a killed save's half-written file
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
            zf.writestr(HEADER, text, compress_type=zipfile.ZIP_DEFLATED)
            for name, given in arrays.items():
                array = np.asarray(given() if callable(given) else given)
                if array.dtype.hasobject:
                    raise ModelError(f"{path}: {name} holds Python objects, which a model "
                                     "file cannot")
                with zf.open(f"{name}.npy", "w", force_zip64=True) as f:
                    np.lib.format.write_array(f, np.ascontiguousarray(array),
                                              allow_pickle=False)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def read(path: str | Path, kind: str | None, *, with_arrays: bool = True
         ) -> tuple[dict[str, Any], dict[str, NDArray[Any]]]:
    """The JSON document and the arrays of a file `write` wrote as ``kind`` (None: of any
    kind, which the document's ``kind`` says; ``with_arrays`` False: the document alone,
    no array read); nothing in the file is run (no pickle is read), and nothing is
    allocated that the file's size does not bound. `ModelError` names the file and what
    is wrong; `FileNotFoundError` if there is none."""
    from batchrl.records import regular_file

    if not os.path.lexists(path):
        raise FileNotFoundError(path)
    if (why := regular_file(Path(path))) and why != "a directory":
        raise ModelError(f"{path} is {why.removesuffix(': not opened')}, not a model file")
    try:
        with open(path, "rb") as f:
            head = f.read(4)
        size = os.stat(path).st_size
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ModelError(f"{path} cannot be read ({exc.strerror or exc})") from None
    if not head.startswith(b"PK"):
        if is_pickle(path, head):
            raise ModelError(pickle_refusal(path))
        raise ModelError(f"{path} is not a batchrl model file (not a zip of arrays and JSON)")
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
            if HEADER not in names:
                if any(n.endswith("/data.pkl") for n in names):  # torch's archive
                    raise ModelError(
                        f"{path} is a torch file (a network from an older batchrl "
                        "imitate?), not a batchrl model file: networks are model files "
                        "now; train it again with batchrl learn network (or imitate)")
                raise ModelError(f"{path} is not a batchrl model file (a zip without "
                                 f"{HEADER})")
            _check_sizes(path, zf, size)
            document = json.loads(zf.read(HEADER).decode("utf-8"))
            if not isinstance(document, dict) or document.get("format") != FORMAT:
                raise ModelError(f"{path} is not a batchrl model file ({HEADER} does not "
                                 f"say format {FORMAT!r})")
            if kind is not None and document.get("kind") != kind:
                raise ModelError(f"{path} is a {document.get('kind')!s} file, not a {kind}")
            arrays: dict[str, NDArray[Any]] = {}
            for name in names if with_arrays else ():
                if not name.endswith(".npy"):
                    continue
                with zf.open(name) as member:
                    try:
                        _check_array_header(path, name, member, zf.getinfo(name).file_size)
                    except ModelError:
                        raise
                    except Exception as exc:  # numpy parses the header with tokenize:
                        raise ModelError(       # any of its errors, on a crafted one
                            f"{path}: {name} is not a plain array ({type(exc).__name__}: "
                            f"{str(exc)[:200]})") from None
                with zf.open(name) as member:
                    try:
                        arrays[name[:-4]] = np.lib.format.read_array(member,
                                                                     allow_pickle=False)
                    except ValueError as exc:
                        what = ("holds Python objects (a pickle), which batchrl never loads"
                                if "pickle" in str(exc) else f"is not a plain array ({exc})")
                        raise ModelError(f"{path}: {name} {what}") from None
    except ModelError:
        raise
    except RecursionError:
        raise ModelError(f"{path}: its {HEADER} nests deeper than any model's does") from None
    except (OSError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile, ValueError,
            KeyError, RuntimeError, NotImplementedError, MemoryError, zlib.error) as exc:
        shown = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise ModelError(f"{path} is not a readable batchrl model file "
                         f"({exc.__class__.__name__}: {shown})") from None
    return document, arrays


def _check_sizes(path: str | Path, zf: zipfile.ZipFile, size: int) -> None:
    """Refuse a file whose members would inflate past what it holds: the arrays
    together no larger than the file, the JSON at most ``MAX_INFLATION`` times its
    compressed bytes and ``MAX_HEADER``."""
    arrays = 0
    for info in zf.infolist():
        if info.filename == HEADER:
            if info.file_size > min(MAX_HEADER, MAX_INFLATION * info.compress_size + 4096):
                raise ModelError(f"{path}: its {HEADER} inflates to {info.file_size:,} bytes "
                                 f"from {info.compress_size:,}: no model's does")
        else:
            arrays += info.file_size
    if arrays > size:
        raise ModelError(f"{path}: its members inflate to {arrays:,} bytes, more than the "
                         f"file's {size:,}: batchrl stores arrays uncompressed, so this "
                         "file is not one it wrote")


def _check_array_header(path: str | Path, name: str, member: Any, stored: int) -> None:
    """Refuse an array whose header declares more data than its member holds (a shape of
    petabytes, say) before numpy allocates for it."""
    version = np.lib.format.read_magic(member)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(member)
    elif version in ((2, 0), (3, 0)):
        shape, _, dtype = np.lib.format.read_array_header_2_0(member)
    else:
        raise ModelError(f"{path}: {name} is a .npy of version {version}, which numpy's "
                         "format does not define")
    if dtype.hasobject:
        raise ModelError(f"{path}: {name} holds Python objects (a pickle), which batchrl "
                         "never loads")
    count = 1
    for dim in shape:
        count *= int(dim)
    if count * dtype.itemsize > stored:
        raise ModelError(f"{path}: {name} declares {shape} of {dtype} ({count * dtype.itemsize:,} "
                         f"bytes), more than its {stored:,} bytes hold")


def check_meta(path: str | Path, meta: Any) -> dict[str, Any]:
    """A model's metadata, checked before anything uses it: names of features (at most
    ``MAX_FEATURES``) and actions (1 to ``MAX_ACTIONS``), distinct short strings; the
    game, a short name; its params and the learner's params, objects; the history, a
    list. `ModelError` names the file and the field."""
    if not isinstance(meta, dict):
        raise ModelError(f"{path} has no metadata (its meta is not a JSON object)")
    for key, most in (("feature_names", MAX_FEATURES), ("action_names", MAX_ACTIONS)):
        names = meta.get(key)
        if not isinstance(names, list) or not 0 < len(names) <= most or not all(
                isinstance(n, str) and 0 < len(n) <= MAX_NAME for n in names) or \
                len(set(names)) < len(names):
            raise ModelError(f"{path}: its {key} are not 1 to {most:,} distinct names")
    game = meta.get("game", "")  # a custom .game file names its game (its file's stem):
    if not isinstance(game, str) or len(game) > 200 or not game.isprintable() or \
            "/" in game or "\\" in game:  # any printable name that is not a path
        raise ModelError(f"{path}: its game is {str(game)[:40]!r}, not a game's name")
    for key, kind, what in (("game_params", dict, "an object"), ("params", dict, "an object"),
                            ("history", list, "a list")):
        if key in meta and not isinstance(meta[key], kind):
            raise ModelError(f"{path}: its {key} is {type(meta[key]).__name__}, not {what}")
    return meta


def read_learned(path: str | Path, kind: str, version: int, what: str, again: str
                 ) -> tuple[dict[str, Any], dict[str, NDArray[Any]], dict[str, Any]]:
    """A learner's model file of ``kind``: its document, its arrays and its checked
    metadata; `ModelError` for another version than ``version`` (``what`` names the
    model, ``again`` the command that trains it again)."""
    document, arrays = read(path, kind)
    if document.get("version") != version:
        raise ModelError(f"{path} is a version {document.get('version')!r} {what}; this "
                         f"batchrl reads version {version}: {again}")
    return document, arrays, check_meta(path, document.get("meta"))


def finite_array(path: str | Path, arrays: Mapping[str, NDArray[Any]], name: str,
                 shape: tuple[int, ...]) -> NDArray[np.float32]:
    """The array ``name`` of a model file as float32, refused (`ModelError`) unless it is
    there, of ``shape``, of floats and finite."""
    got = arrays.get(name)
    if got is None or got.shape != shape or got.dtype.kind != "f" or \
            not np.isfinite(got).all():
        raise ModelError(f"{path}: {name} is not {shape} finite numbers")
    return np.asarray(got, dtype=np.float32)


def kind_of(path: str | Path) -> str:
    """The ``kind`` a model file's document says it is (``model`` for FQI's, a learner's
    own name for the others'), read from its JSON alone. `ModelError` for a file that is
    not a batchrl model file; `FileNotFoundError` if there is none."""
    kind = read(path, None, with_arrays=False)[0].get("kind")
    if not isinstance(kind, str) or not kind:
        raise ModelError(f"{path} does not say what kind of model it is")
    return kind


def is_model_file(path: str | Path) -> bool:
    """Whether ``path`` is a batchrl model file (a zip holding our JSON header), as opposed
    to another library's (a torch network, say) or none."""
    try:
        with zipfile.ZipFile(path) as zf:
            return HEADER in zf.namelist()
    except (OSError, zipfile.BadZipFile, zipfile.LargeZipFile, ValueError):
        return False


def is_pickle(path: str | Path, head: bytes) -> bool:
    """Whether a file that starts with ``head`` looks like a pickle: joblib's name, or
    pickle's protocol byte."""
    return Path(path).suffix == PICKLE_SUFFIX or head[:1] == b"\x80"


# An FQI model's default name (batchrl.training.default_out), without its suffix.
_DEFAULT_NAME = re.compile(r"fqi-M(?P<trees>\d+)-nmin(?P<nmin>\d+)(?:-K(?P<k>\d+))?"
                           r"-N(?P<iters>\d+)(?:-fast(?P<fast>\d+))?(?P<per>-peraction)?"
                           r"(?P<players>(?:-player-.+)?)")


def retrain_command(path: str | Path) -> str:
    """The ``batchrl fqi`` command that trains the model at ``path`` again, as far as its
    name says (a default name carries the settings; the store is the folder above
    ``models/``)."""
    path = Path(path)
    new = path.with_suffix(SUFFIX)
    store = path.parent.parent if path.parent.name == "models" else None
    words = ["batchrl", "fqi", "--store", shlex.quote(str(store)) if store else "STORE"]
    named = _DEFAULT_NAME.fullmatch(path.stem)
    if named is None:
        return " ".join([*words, "[its settings]", "--out", shlex.quote(str(new))])
    words += ["--trees", named["trees"], "--nmin", named["nmin"]]
    if named["k"]:
        words += ["--k", named["k"]]
    words += ["--iters", named["iters"]]
    fast = named["fast"]
    words += ["--no-fast"] if fast is None else ["--fast"] if fast == "0" else \
        ["--freeze-after", fast]
    words += ["--per-action" if named["per"] else "--joint"]
    for player in named["players"].split("-player-")[1:]:
        words += ["--player", shlex.quote(player)]
    if store is None:
        words += ["--out", shlex.quote(str(new))]
    return " ".join(words)


def pickle_refusal(path: str | Path) -> str:
    """One line: the file is a pickle, batchrl will not load it, and how to retrain."""
    return (f"{path} is a pickle (a model from an earlier batchrl, or no model): "
            "batchrl does not load pickles, which can run any code they carry; retrain it "
            f"with: {retrain_command(path)}")


# ---- JSON ----------------------------------------------------------------------------


def to_json(value: Any, where: str) -> Any:
    """``value`` as JSON values: numpy scalars and arrays become numbers and lists, tuples
    lists, paths strings. `ModelError` names anything else (at ``where``)."""
    if isinstance(value, np.generic) and not isinstance(value, np.object_):
        return value.item()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ModelError(f"{where} has the key {key!r}: a model file's keys are "
                                 "strings")
            out[key] = to_json(item, f"{where}.{key}")
        return out
    if isinstance(value, list | tuple):
        return [to_json(item, f"{where}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, np.ndarray) and not value.dtype.hasobject:
        return value.tolist()
    raise ModelError(f"{where} is of type {type(value).__name__}, which a model file cannot "
                     "hold (JSON values, numbers and arrays only)")


# ---- regressors ----------------------------------------------------------------------


def _classes() -> dict[str, tuple[str, Any, Any]]:
    """Class name -> (what it is, class, its trees' class)."""
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
    from sklearn.tree._tree import NODE_DTYPE, Tree

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
