"""Policies from elsewhere: ``python:MODULE:CALLABLE`` players, and d3rlpy's algorithms.

Anything that plays a model plays a foreign policy too: ``batchrl evaluate --model
python:MODULE:CALLABLE``, or ``python:…`` among ``--players``, in ``generate`` and in the
environments. ``MODULE`` is a module importable from the current directory (or a
``.py`` file's path); ``CALLABLE`` is called with no arguments and returns either a
policy of the protocol (`batchrl.policy.Policy`: ``feature_names``, ``action_names``,
``meta`` naming its ``game`` and ``game_params``, ``act(states, legal)``) or a
`D3rlpyPolicy`. A ``python:`` spec runs the code it names, as ``python -m`` would: it
is the user's own code, never something read from a model file.

A d3rlpy algorithm (``predict_value`` / ``predict``) knows nothing of batchrl's legal
actions or feature names: `d3rlpy_policy` wraps it with the metadata of the export it
was trained on (``batchrl export --to d3rlpy``: the game, its params, the features in
the observation's order, the actions) and masks it at play time: the best legal action
by its Q-values (one ``predict_value`` call per action), or, for a behaviour-cloning
algorithm without values (``DiscreteBC``), by its logits. So it never makes an illegal
move, and ``evaluate`` gives it the duplicate deals, seat rotation and intervals it gives
batchrl's own learners.

>>> import numpy as np
>>> class Table:  # a d3rlpy-like algorithm: Q = the observation's first column per action
...     def predict_value(self, x, action):
...         return x[:, 0] * (action == 1) + 0.5 * (action == 0)
>>> p = D3rlpyPolicy(Table(), {"feature_names": ["x"], "action_names": ["fold", "call"]})
>>> p.act(np.array([[0.], [1.], [1.]]), np.array([[1, 1], [1, 1], [1, 0]], bool)).tolist()
[0, 1, 0]
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import json
import logging
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.modelfile import ModelError

# a python:MODULE:CALLABLE player names a module of the user's, never one of ours
__lazy_imports__: tuple[str, ...] = ()

PREFIX = "python:"


def is_foreign(spec: str | Path) -> bool:
    """Whether ``spec`` names a foreign policy (``python:MODULE:CALLABLE``)."""
    return str(spec).startswith(PREFIX)


def load_foreign(spec: str | Path) -> Any:
    """The policy ``python:MODULE:CALLABLE`` names (see the module doc); `ModelError` says
    what is wrong with the spec or with what it returned."""
    target = str(spec).removeprefix(PREFIX)
    module_name, sep, attribute = target.rpartition(":")
    if not sep or not module_name or not attribute:
        raise ModelError(f"{spec!r}: want python:MODULE:CALLABLE (a module importable from "
                         "here, or a .py file, and a function in it that returns a policy)")
    module = _module(module_name, str(spec))
    made = getattr(module, attribute, None)
    if made is None:
        raise ModelError(f"{spec}: {module_name} has no {attribute}")
    try:
        policy = made() if isinstance(made, type) or (callable(made) and not _is_policy(made)) \
            else made
    except (Exception, SystemExit) as exc:  # the user's code: where it failed, in one line
        raise ModelError(f"{spec}: {attribute}() failed: {_said(exc)}") from None
    return Guarded(as_policy(policy, str(spec)), str(spec))


def _module(name: str, spec: str) -> Any:
    try:
        if name.endswith(".py"):
            path = Path(name)
            if not path.is_file():
                raise ModelError(f"{spec}: no file {name}")
            found = importlib.util.spec_from_file_location(f"batchrl_foreign_{path.stem}", path)
            if found is None or found.loader is None:
                raise ModelError(f"{spec}: {name} cannot be imported")
            module = importlib.util.module_from_spec(found)
            sys.modules[found.name] = module  # as an import does (dataclasses look it up)
            try:
                found.loader.exec_module(module)
            except BaseException:
                sys.modules.pop(found.name, None)
                raise
            return module
        here = str(Path.cwd())
        added = "" not in sys.path and here not in sys.path
        if added:
            sys.path.insert(0, here)  # as python -m: the current directory, for this import
        try:
            return importlib.import_module(name)
        finally:
            if added and here in sys.path:  # later imports find our modules, not the user's
                sys.path.remove(here)
    except ModelError:
        raise
    except (Exception, SystemExit) as exc:  # SystemExit too: the user's code ends no run
        raise ModelError(f"{spec}: importing {name} failed: {_said(exc)}") from None


def _said(exc: BaseException) -> str:
    """An error of the user's code in one line: its type and its message's first line."""
    return f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"


def _is_policy(value: Any) -> bool:
    return all(hasattr(value, n) for n in ("feature_names", "action_names", "meta", "act"))


def as_policy(value: Any, where: str) -> Any:
    """``value`` if it is a policy of the protocol, checked; `ModelError` otherwise."""
    if not _is_policy(value):
        hint = ("; wrap a d3rlpy algorithm with batchrl.foreign.d3rlpy_policy(algo, "
                "EXPORT_DIR), which names its features and masks it"
                if hasattr(value, "predict") else "")
        raise ModelError(f"{where} gave a {type(value).__name__}, not a policy "
                         f"(feature_names, action_names, meta, act){hint}")
    meta = value.meta
    if not isinstance(meta, Mapping) or not isinstance(meta.get("game"), str):
        raise ModelError(f"{where}: its policy's meta does not name the game it plays")
    for names in ("feature_names", "action_names"):
        given = getattr(value, names)
        if not given or not all(isinstance(n, str) for n in given):
            raise ModelError(f"{where}: its policy has no {names}")
    return value


class Guarded:
    """A user's policy with its ``act`` (and ``values``, where it has them) in a guard: an
    exception or a ``SystemExit`` in the user's code becomes a `ModelError` naming the
    spec and the call, in one line; everything else is the policy's own."""

    def __init__(self, policy: Any, where: str) -> None:
        self._policy, self._where = policy, where

    @property
    def wrapped(self) -> Any:
        """The user's policy itself."""
        return self._policy

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # not set yet (a copy being made): no policy to ask
            raise AttributeError(name)
        attribute = getattr(self._policy, name)
        if name not in ("act", "values") or not callable(attribute):
            return attribute

        def guarded(*args: Any, **kwargs: Any) -> Any:
            try:
                return attribute(*args, **kwargs)
            except ModelError:
                raise
            except (Exception, SystemExit) as exc:
                raise ModelError(f"{self._where}: {name}() failed: {_said(exc)}") from None

        return guarded


class D3rlpyPolicy:
    """A d3rlpy discrete-action algorithm as a `batchrl.policy.Policy`, masked to the legal
    actions; ``meta`` is the export's metadata (its ``feature_names``, ``action_names``,
    ``game`` and ``game_params``)."""

    def __init__(self, algo: Any, meta: Mapping[str, Any]) -> None:
        self.algo = algo
        self._meta = dict(meta)
        self.feature_names: tuple[str, ...] = tuple(meta["feature_names"])
        self.action_names: tuple[str, ...] = tuple(meta["action_names"])
        self._has_values: bool | None = None if hasattr(algo, "predict_value") else False

    @property
    def meta(self) -> dict[str, Any]:
        return self._meta

    def values(self, states: NDArray[np.floating[Any]]) -> NDArray[np.float64]:
        """Q of every action in each state: one ``predict_value`` call per action."""
        x = np.asarray(states, dtype=np.float32)
        out = np.empty((len(x), len(self.action_names)), dtype=np.float64)
        for a in range(len(self.action_names)):
            out[:, a] = np.asarray(self.algo.predict_value(x, np.full(len(x), a)),
                                   dtype=np.float64).reshape(len(x))
        return out

    def _scores(self, x: NDArray[np.float32]) -> NDArray[np.float64]:
        """Q-values where the algorithm has them, else its imitator's logits."""
        if self._has_values is not False:
            try:
                scores = self.values(x)
                self._has_values = True
                return scores
            except NotImplementedError:  # DiscreteBC: no values
                if self._has_values:
                    raise
                self._has_values = False
        return self._logits(x)

    def _logits(self, x: NDArray[np.float32]) -> NDArray[np.float64]:
        # d3rlpy's DiscreteBC predicts only its argmax; its logits, needed to mask it,
        # are its imitator module's output (d3rlpy 2.x).
        imitator = getattr(getattr(getattr(self.algo, "impl", None), "_modules", None),
                           "imitator", None)
        if imitator is None:
            raise ModelError(f"{type(self.algo).__name__} has neither values nor logits "
                             "batchrl can mask")
        import torch  # torch: an optional extra, loaded only for a foreign file

        with torch.no_grad():
            device = next(imitator.parameters()).device
            inputs = torch.as_tensor(x, device=device)
            scaler = getattr(getattr(self.algo, "config", None), "observation_scaler", None)
            if scaler:  # as d3rlpy's own predict does
                inputs = scaler.transform(inputs)
            logits = imitator(inputs).logits
        return np.asarray(logits.cpu().numpy(), dtype=np.float64)

    def act(self, states: NDArray[np.floating[Any]],
            legal: NDArray[np.bool_] | None = None) -> NDArray[np.int64]:
        x = np.asarray(states, dtype=np.float32)
        if not len(x):
            return np.zeros(0, dtype=np.int64)
        scores = self._scores(x)
        if legal is not None:
            scores = np.where(np.asarray(legal, dtype=bool), scores, -np.inf)
        chosen: NDArray[np.int64] = np.argmax(scores, axis=1).astype(np.int64)
        return chosen


def import_d3rlpy() -> Any:
    """d3rlpy, imported without the notice that gym (which d3rlpy imports) prints to
    stderr on import. Raises ImportError where it is not installed (the export extra)."""
    with contextlib.redirect_stderr(io.StringIO()):  # gym's "unmaintained" notice
        import d3rlpy  # d3rlpy: an optional extra, loaded only when asked for
    return d3rlpy


@contextlib.contextmanager
def d3rlpy_quietly() -> Iterator[None]:
    """d3rlpy's log without its info lines while under it (structlog, which d3rlpy's
    import sets to print every level to stdout): its warnings still print, and the log's
    configuration is as it was after."""
    import structlog  # d3rlpy's log, installed with d3rlpy

    config = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    try:
        yield
    finally:
        structlog.configure(**config)


def d3rlpy_policy(algo: Any, export: str | Path) -> D3rlpyPolicy:
    """``algo`` (a d3rlpy algorithm, or the path of one saved with ``save``) as a policy
    of the game of the export it was trained on (``batchrl export --to d3rlpy``: its
    directory, whose ``metadata.json`` names the game and the observation's features)."""
    folder = Path(export)
    try:
        meta = json.loads((folder / "metadata.json").read_text())
    except (OSError, ValueError) as exc:
        raise ModelError(f"{folder}: no export metadata ({exc}): give the directory "
                         "batchrl export --to d3rlpy wrote") from None
    if not isinstance(meta, dict) or not all(
            isinstance(meta.get(k), list) for k in ("feature_names", "action_names")):
        raise ModelError(f"{folder}/metadata.json does not name the features and actions")
    if isinstance(algo, str | Path):
        with d3rlpy_quietly():
            algo = import_d3rlpy().load_learnable(str(algo))
    return D3rlpyPolicy(algo, {**meta, "learner": f"d3rlpy {type(algo).__name__}"})
