"""Model files without pickles: a zip of ``.npy`` arrays and one JSON document.

Every model and every FQI checkpoint batchrl writes is such a file, read back with
``json`` and ``numpy.lib.format.read_array(allow_pickle=False)``: loading one builds
arrays and plain values and never runs code the file carries, so a model file is
safe to share. A pickle (joblib's files, batchrl's models before version 2) runs
whatever it holds when loaded: batchrl refuses one, saying how to retrain.

The zip holds ``model.json`` (``format``, ``kind``, and the rest of the document) and
the arrays as ``NAME.npy`` (``numpy.load`` reads them too). The fitted regressors a
file holds (FQI's forests, a clone's) are described there by `batchrl.modeltrees`:
their parameters in the JSON, their trees as node arrays, checked when read back.

>>> import tempfile
>>> path = Path(tempfile.mkdtemp()) / "m.npz"
>>> _ = write(path, "example", {"answer": 42}, {"x": np.arange(3)})
>>> header, stored = read(path, "example")
>>> header["answer"], stored["x"].tolist()
(42, [0, 1, 2])
"""

from __future__ import annotations

import json
import os
import re
import shlex
import zipfile
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.filenames import clear_leftovers
from batchrl.records import regular_file, writable_file

FORMAT = "batchrl-model"
HEADER = "model.json"
SUFFIX = ".npz"  # a model file's name: fqi-M…-nmin…-N….npz
PICKLE_SUFFIX = ".joblib"  # batchrl's models before version 2: pickles, refused
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
    path = Path(path)
    if why := writable_file(path):  # before anything is written: a device is no model
        raise ModelError(f"{path}: {why}")
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


# An FQI model's default name (batchrl.learners.fqi, FittedQIteration.file_name).
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
