"""Fuzzing the model files: models of every kind the project writes, mutated as an
attacker who hands one over would, each case loaded and played, and judged. Shared by
``tests/test_fuzz_models.py`` (a few dozen cases per kind, in CI) and
``benchmarks/fuzz_models.py`` (by the thousand).

A case passes when loading and playing it either works or stops with the project's own
one-line error (`ModelError`, `GameError`: what the CLI prints), within ``CASE_SECONDS``,
with its peak memory (numpy's and Python's allocations, through ``tracemalloc``) under
``MEMORY_BYTES``, and a message under ``MAX_SHOWN`` characters. Anything else is an
escape: a traceback, a hang, memory past the bound.

The mutations are those of a crafted file: a field of ``model.json`` deleted or given
a hostile value (null, a bool, a negative, 10**18, NaN, a long string, a path, an object,
nesting 100,000 deep); an array replaced (another dtype or shape, NaN and infinities, a
header declaring petabytes, Python objects, empty); the zip changed (a member that
inflates past the file, a member removed or renamed, bytes flipped, the file cut short).
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import tracemalloc
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from fuzzing import Hang, time_limit

CASE_SECONDS = 20.0
MEMORY_BYTES = 1_500 << 20
MAX_SHOWN = 1_500
HOSTILE: tuple[Any, ...] = (None, True, False, -1, 0, 2, 10 ** 18, 1.5, float("nan"),
                            float("inf"), "x" * 5000, "../../../etc/passwd", {"x": 1}, [],
                            [1, 2], "", "\x1b[31mred\u202e")
MUTATIONS = ("delete field", "hostile value", "deep nesting", "array dtype", "array shape",
             "array nan", "array huge header", "array objects", "array empty",
             "zip bomb", "remove member", "rename header", "flip bytes", "truncate")


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path into a JSON value (list indices included, the first 4 of a list)."""
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:4]):
            out += _paths(v, (*prefix, i))
    return out


def _set(document: Any, path: tuple[Any, ...], value: Any, delete: bool = False) -> None:
    target = document
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value


def _npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.lib.format.write_array(out, array, allow_pickle=True)
    return out.getvalue()


def _huge_header(dtype: str = "<f8") -> bytes:
    """A .npy whose header declares a petabyte-sized shape over a few bytes of data."""
    header = {"descr": dtype, "fortran_order": False, "shape": (1 << 25, 1 << 25)}
    text = repr(header).encode("latin1")
    pad = 64 - (10 + len(text) + 1) % 64
    text = text + b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text + b"\0" * 64


_BOMB: list[bytes] = []


def _bomb_member() -> bytes:
    """64 MB of zeros, which deflate to about 64 KB: inflated, far past the file (the
    check is of sizes, so a bigger bomb is refused the same way)."""
    if not _BOMB:
        _BOMB.append(b"\0" * (64 << 20))
    return _BOMB[0]


@dataclass(frozen=True)
class Case:
    kind: str  # the seed's name
    mutation: str
    seed: int


def mutate(source: Path, target: Path, mutation: str, rng: random.Random) -> None:
    """``source`` copied to ``target`` with ``mutation`` applied."""
    with zipfile.ZipFile(source) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    document = json.loads(members["model.json"])
    arrays = [n for n in members if n.endswith(".npy")]
    raw: bytes | None = None
    if mutation in ("delete field", "hostile value"):
        path = rng.choice(_paths(document))
        if path[0] in ("format", "kind") and rng.random() < 0.7:
            path = rng.choice(_paths(document))  # the envelope less often: it is checked
        _set(document, path, rng.choice(HOSTILE), delete=mutation == "delete field")
    elif mutation == "deep nesting":
        path = rng.choice(_paths(document))
        _set(document, path, None)
        text = json.dumps(document).replace("null", "[" * 100_000 + "]" * 100_000, 1)
        members["model.json"] = text.encode()
        document = None
    elif mutation.startswith("array") and arrays:
        name = rng.choice(arrays)
        held = np.lib.format.read_array(io.BytesIO(members[name]), allow_pickle=False)
        if mutation == "array dtype":
            new: Any = held.astype(rng.choice(["<i1", "<f2", "<c16", "|b1", "<U3"])) \
                if held.dtype.names is None else np.zeros(3, "<f8")
        elif mutation == "array shape":
            new = np.resize(held, (max(1, held.size // 2 + rng.randrange(3)),))
        elif mutation == "array nan":
            new = held.copy()
            if new.dtype.names is not None:
                field = rng.choice([f for f in new.dtype.names
                                    if new.dtype[f].kind == "f"] or [new.dtype.names[0]])
                if new.dtype[field].kind == "f" and len(new):
                    new[field][rng.randrange(len(new))] = rng.choice([np.nan, np.inf])
            elif new.dtype.kind == "f" and new.size:
                new.flat[rng.randrange(new.size)] = rng.choice([np.nan, np.inf, -np.inf])
        elif mutation == "array objects":
            new = np.array([{"x": 1}, None], dtype=object)
        elif mutation == "array empty":
            new = held[:0]
        else:
            new = None
        members[name] = _huge_header() if mutation == "array huge header" else _npy(new)
    elif mutation == "zip bomb":
        pass
    elif mutation == "remove member":
        members.pop(rng.choice(arrays or ["model.json"]), None)
    elif mutation == "rename header":
        members["other.json"] = members.pop("model.json")
        document = None
    if document is not None and "model.json" in members:
        members["model.json"] = json.dumps(document).encode()
    with zipfile.ZipFile(target, "w") as out, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a duplicate member name is one of the cases
        for name, data in members.items():
            kind = zipfile.ZIP_DEFLATED if name.endswith(".json") else zipfile.ZIP_STORED
            out.writestr(name, data, compress_type=kind)
        if mutation == "zip bomb":
            out.writestr(rng.choice(arrays or ["x.npy"]) if rng.random() < 0.5 else
                         "unused.npy", _bomb_member(), compress_type=zipfile.ZIP_DEFLATED)
    if mutation in ("flip bytes", "truncate"):
        raw = bytearray(target.read_bytes())
        if mutation == "truncate":
            raw = raw[: rng.randrange(len(raw))]
        else:
            for _ in range(rng.randrange(1, 6)):
                raw[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
        target.write_bytes(bytes(raw))


@dataclass
class Outcome:
    loaded: bool = False
    error: str = ""
    escape: str = ""
    peak: int = 0


def run_case(path: Path, play: Callable[[Path], None],
             clean: tuple[type[BaseException], ...] | None = None) -> Outcome:
    """Load and play the model at ``path`` (``play``), timed and its memory measured. An
    error of the ``clean`` kinds (default: `ModelError`, `GameError`) that names ``path``
    is the project's one line; any other is an escape."""
    from batchrl.games import GameError
    from batchrl.modelfile import ModelError

    expected: tuple[type[BaseException], ...] = clean or (ModelError, GameError)
    outcome = Outcome()
    tracemalloc.start()
    try:
        with time_limit(CASE_SECONDS):
            play(path)
        outcome.loaded = True
    except expected as exc:
        outcome.error = str(exc)
        if len(outcome.error) > MAX_SHOWN:
            outcome.escape = f"a message of {len(outcome.error):,} characters"
        elif str(path) not in outcome.error:
            outcome.escape = f"{type(exc).__name__} not naming the file: {str(exc)[:300]}"
    except Hang as exc:
        outcome.escape = f"hang: {exc}"
    except BaseException as exc:
        outcome.escape = f"{type(exc).__name__}: {str(exc)[:300]}"
    finally:
        outcome.peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    if outcome.peak > MEMORY_BYTES and not outcome.escape:
        outcome.escape = f"peak memory {outcome.peak / 2**20:,.0f} MB"
    return outcome


def seed_models(folder: Path) -> tuple[dict[str, Path], Callable[[Path], None]]:
    """Small models of every kind on a hold'em store (fqi joint and per action, with the
    support constraint, bc, the network where torch is installed and d3rlpy's BCQ where
    d3rlpy is), and the function
    that loads and plays one as ``evaluate`` does."""
    import importlib.util

    from fqi_runs import FQIRun, run_fqi

    from batchrl.games import get_game
    from batchrl.games.holdem.logs import generate
    from batchrl.ingest import IngestConfig, ingest
    from batchrl.learners import get_learner
    from batchrl.learning import learn, settings
    from batchrl.store import Store

    log, store = folder / "h.log", folder / "store"
    generate(log, ["random", "random"], 200, 1, "acpc", None, None)
    ingest(IngestConfig(paths=(log,), store=store))
    models: dict[str, Path] = {}
    for name, extra in (("fqi", {}), ("fqi-per-action", {"per_action": True}),
                        ("fqi-support", {"support": 0.1})):
        models[name], _ = run_fqi(FQIRun(store=store, trees=3, iters=2, jobs=1,
                                            out=folder / f"{name}.npz", **extra))
    bc = get_learner("bc")
    models["bc"], _ = learn(bc, store, settings(bc, store, {"trees": 3}), jobs=1,
                            out=folder / "bc.npz")
    if importlib.util.find_spec("torch") is not None:
        net = get_learner("network")
        models["network"], _ = learn(net, store, settings(net, store, {"epochs": 1,
                                                                       "hidden": "8"}),
                                     jobs=1, out=folder / "network.npz")
    if importlib.util.find_spec("d3rlpy") is not None:
        d3 = get_learner("d3rlpy")
        models["d3rlpy-bcq"], _ = learn(d3, store, settings(d3, store, {
            "algo": "bcq", "steps": 20, "batch_size": 32, "hidden": "8,8"}), jobs=1,
            out=folder / "d3rlpy-bcq.npz")
    game = get_game("holdem")
    t = Store.open(store).arrays()
    states, legal = t.state[:64], t.legal[:64] if t.legal is not None else None
    width = len(game.rules.feature_names(game.log.params_from_store(
        Store.open(store).schema.game, Store.open(store).schema.game_params)))
    assert states.shape[1] == width

    def play(path: Path) -> None:
        from batchrl.policy import policy_meta

        policy_meta(path)
        model = game.load_model(path)
        model.act_batch(states, legal)

    return models, play


def seed_checkpoints(folder: Path) -> tuple[dict[str, Path], Callable[[Path], None]]:
    """Checkpoints of fqi runs stopped after their first iteration (joint, and per action
    in fast mode, whose trees are set aside), and the function that resumes one from a
    copy of its directory: what ``batchrl fqi --resume`` runs."""
    import shutil
    from dataclasses import replace

    from fqi_runs import FQIRun, run_fqi

    from batchrl.games.holdem.logs import generate
    from batchrl.ingest import IngestConfig, ingest

    log, store = folder / "h.log", folder / "store"
    generate(log, ["random", "random"], 200, 1, "acpc", None, None)
    ingest(IngestConfig(paths=(log,), store=store))

    class Stop(Exception):
        pass

    def stop(_: Any) -> None:
        raise Stop

    configs = {"joint": FQIRun(store=store, trees=3, iters=3, jobs=1),
               "fast": FQIRun(store=store, trees=3, iters=3, jobs=1, per_action=True,
                                 freeze_after=1)}
    seeds: dict[str, Path] = {}
    for name, config in configs.items():
        config = replace(config, out=folder / f"{name}.npz")
        with contextlib.suppress(Stop):
            run_fqi(config, on_iteration=stop)
        seeds[name] = folder / f"{name}.npz.ckpt"

    def resume(case: Path) -> None:
        """``case`` is a copy of a checkpoint directory, named NAME.npz.ckpt."""
        name = case.name.split(".")[0].split("-")[-1]
        out = case.with_name(case.name.removesuffix(".ckpt"))
        run_fqi(replace(configs[name], out=out, resume=True))
        shutil.rmtree(case, ignore_errors=True)

    return seeds, resume


def mutate_checkpoint(seed: Path, case: Path, mutation: str, rng: random.Random) -> None:
    """A copy of the checkpoint directory ``seed`` at ``case``, one of its files mutated
    (the checkpoint's own file or its trees')."""
    import shutil

    shutil.copytree(seed, case)
    files = sorted(p for p in case.iterdir() if p.suffix == ".npz")
    target = rng.choice(files)
    scratch = case / "scratch.zip"
    mutate(target, scratch, mutation, rng)
    scratch.replace(target)
