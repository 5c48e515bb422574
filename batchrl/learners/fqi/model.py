"""FQI's model: the Q-function's regressors (`QFunction`), the file that holds them with
everything needed to trust and reuse them (`ModelArtifact`, kind ``model``), and the
greedy policy that plays it (`GreedyPolicy`).

The artifact is one file, ``fqi-M…-nmin…-N….npz``: the regressors plus the game, the
feature and action names (a policy acts on states encoded with exactly these features),
the store and its digest, the parameters, and the per-iteration diagnostics. Its trees
are node arrays and the rest JSON (``batchrl.modelfile``, ``batchrl.modeltrees``): read
without unpickling anything. The pickles (``.joblib``) of batchrl before artifact
version 2 are refused, with the command that retrains them.

>>> import numpy as np
>>> from sklearn.dummy import DummyRegressor
>>> models = [DummyRegressor(strategy="constant", constant=c).fit([[0]], [0]) for c in (1, 3)]
>>> q = QFunction(models, per_action=True, n_actions=2)
>>> policy = GreedyPolicy(ModelArtifact(q, {"feature_names": ["x"], "action_names": ["a", "b"]}))
>>> policy.act(np.zeros((2, 1)), np.array([[True, True], [True, False]])).tolist()
[1, 0]
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl import modelfile, modeltrees
from batchrl.forests import lower_bound, predict
from batchrl.learners.fqi.support import supported
from batchrl.modelfile import ModelError

# 2: arrays and JSON (batchrl.modelfile); 1 was a joblib pickle, no longer read.
ARTIFACT_VERSION = 2
KIND = "model"  # FQI's model files (written before model files had other kinds)


# from this many rows on, q_values looks for repeated rows first (a search's rollouts
# ask about the same state in many worlds: a third of their rows repeat)
DISTINCT_ROWS = 64
# up to this many states, a (state, action) regressor predicts every action's rows in one
# call (a call's hand-off to the threads costs as much as a walk of a few hundred rows);
# beyond, an action at a time, so the rows are not all copied at once
ONE_CALL_ROWS = 1 << 16


def distinct_rows(states: NDArray[np.float32], only: NDArray[np.bool_] | None = None
                  ) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """The first of each distinct row of ``states`` (with its row of ``only``, where
    given), byte for byte, and the index into those of each row: ``states[first][where]``
    is ``states``.

    >>> x = np.array([[1, 2], [3, 4], [1, 2]], np.float32)
    >>> first, where = distinct_rows(x)
    >>> len(first), x[first][where].tolist() == x.tolist(), bool(where[0] == where[2])
    (2, True, True)
    """
    parts = [np.ascontiguousarray(states).view(np.uint8).reshape(len(states), -1)]
    if only is not None:
        parts.append(np.ascontiguousarray(only, dtype=bool).view(np.uint8)
                     .reshape(len(states), -1))
    rows = np.ascontiguousarray(np.hstack(parts) if len(parts) > 1 else parts[0])
    keys = rows.view(np.dtype((np.void, rows.shape[1]))).ravel()
    _, first, where = np.unique(keys, return_index=True, return_inverse=True)
    return first, where.reshape(len(states))


@dataclass
class QFunction:
    """Q(s, a) from fitted regressors: one on (state, action), or one per action."""

    models: list[Any]  # None for an action no row ever took (per-action only)
    per_action: bool
    n_actions: int
    # the support constraint (``batchrl.learners.fqi.support``): the logged players' action
    # frequencies, and the share of the likeliest an action needs to be chosen
    behaviour: Any = None
    support: float | None = None
    # kappa: Q is the lower confidence bound, the forest's prediction less kappa times
    # its trees' spread (``batchrl learn lcb``); 0: the prediction
    pessimism: float = 0.0

    def _predict(self, model: Any, x: NDArray[np.float32]) -> NDArray[np.float64]:
        return lower_bound(model, x, self.pessimism) if self.pessimism else predict(model, x)

    def q_values(self, states: NDArray[np.floating[Any]],
                 only: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
        """Q of every action in each state, shape (n, actions); NaN where no model knows.
        With ``only`` (n, actions), just those (the legal actions: a state's values do
        not depend on the other rows', so they are the same), NaN elsewhere. A row that
        repeats (with its ``only``) is predicted once."""
        states = np.asarray(states, dtype=np.float32).reshape(len(states), -1)
        if len(states) >= DISTINCT_ROWS and states.shape[1]:
            first, where = distinct_rows(states, only)
            if len(first) < len(states):  # each distinct row once: a row's Q is its own
                q = self._q_values(states[first], None if only is None else only[first])
                return q[where]
        return self._q_values(states, only)

    def _q_values(self, states: NDArray[np.float32], only: NDArray[np.bool_] | None
                  ) -> NDArray[np.float64]:
        q = np.full((len(states), self.n_actions), np.nan)
        asked: list[tuple[NDArray[np.intp], int]] = []  # one regressor: (rows, action)s
        for a in range(self.n_actions):
            rows = np.arange(len(states)) if only is None else np.flatnonzero(only[:, a])
            if not len(rows):
                continue
            if not self.per_action:
                asked.append((rows, a))
            elif self.models[a] is not None:
                q[rows, a] = self._predict(self.models[a], states[rows])
        # every (state, action) row in one prediction (a row's is its own), or past
        # ONE_CALL_ROWS states an action at a time
        calls = [asked] if len(states) <= ONE_CALL_ROWS else [[one] for one in asked]
        for call in calls:
            if not call:
                continue
            x = np.concatenate([np.column_stack([states[rows],
                                                 np.full(len(rows), a, dtype=np.float32)])
                                for rows, a in call])
            values = self._predict(self.models[0], x)
            start = 0
            for rows, a in call:
                q[rows, a] = values[start:start + len(rows)]
                start += len(rows)
        return q


@dataclass
class ModelArtifact:
    """A Q-function and its metadata (``game``, ``feature_names``, ``action_names``,
    ``store``, ``store_digest``, ``params``, ``history``, …)."""

    q: QFunction
    meta: dict[str, Any]
    version: int = ARTIFACT_VERSION
    kind: str = KIND  # what the file says it is (a pessimistic FQI's: its learner's own)

    def save(self, path: str | Path) -> Path:
        """Write as arrays and JSON (`batchrl.modelfile`), atomically (a temporary name,
        then a rename). `ModelError` for a regressor or a meta value the file cannot hold
        (JSON values, numpy numbers and arrays, paths)."""
        extra = [self.q.behaviour] if self.q.behaviour is not None else []
        models, arrays = modeltrees.encode_models([*self.q.models, *extra], f"{Path(path)}")
        document: dict[str, Any] = {
            "version": self.version,
            "q": {"per_action": self.q.per_action, "n_actions": self.q.n_actions,
                  "models": models[: len(self.q.models)]},
            "meta": modelfile.to_json(self.meta, f"{path}: meta")}
        if extra:
            document["support"] = {"tau": self.q.support, "behaviour": models[-1]}
        if self.q.pessimism:
            document["q"]["pessimism"] = self.q.pessimism
        return modelfile.write(path, self.kind, document, arrays)

    @classmethod
    def load(cls, path: str | Path, kind: str = KIND) -> ModelArtifact:
        """The model at ``path``; a file read before, unchanged since, is not read again
        (a command that checks a model's game and then plays it reads it once)."""
        try:
            stat = os.stat(path)
        except OSError:
            stat = None
        key = (str(Path(path).resolve()), stat.st_mtime_ns, stat.st_size, kind) \
            if stat else None
        if key is not None and key in _LOADED:
            return _LOADED[key]
        artifact = cls._read(path, kind)
        if key is not None:
            _LOADED.clear()  # one model held: a sweep loads many, one after another
            _LOADED[key] = artifact
        return artifact

    @classmethod
    def meta_of(cls, path: str | Path, kind: str = KIND) -> dict[str, Any]:
        """The metadata of the model at ``path`` (its game, features, store...), read
        from the file's JSON alone: milliseconds, where `load` reads every tree."""
        return cls._document(path, kind, with_arrays=False)[0]["meta"]  # type: ignore[no-any-return]

    @classmethod
    def _document(cls, path: str | Path, kind: str = KIND, with_arrays: bool = True
                  ) -> tuple[dict[str, Any], dict[str, NDArray[Any]]]:
        """A model file's document, checked, and its arrays (`batchrl.modelfile.read`)."""
        try:
            document, arrays = modelfile.read(path, kind, with_arrays=with_arrays)
        except FileNotFoundError:
            raise ModelError(f"no model at {path}: train one with batchrl fqi") from None
        version = document.get("version")
        if version != ARTIFACT_VERSION:
            raise ModelError(f"{path} is a version {version} model; this batchrl reads "
                             f"version {ARTIFACT_VERSION}: retrain it with "
                             f"{modelfile.retrain_command(path)}")
        if not isinstance(document.get("q"), dict) or not isinstance(document.get("meta"),
                                                                     dict):
            raise ModelError(f"{path} is not a batchrl model (no Q-function and metadata)")
        modelfile.check_meta(path, document["meta"])
        return document, arrays

    @classmethod
    def _read(cls, path: str | Path, kind: str = KIND) -> ModelArtifact:
        """Arrays and JSON only: nothing in the file is run (`batchrl.modelfile.read`)."""
        document, arrays = cls._document(path, kind)
        q, meta, version = document["q"], document["meta"], document["version"]
        pessimism = q.get("pessimism", 0.0)
        if type(pessimism) not in (int, float) or not 0 <= pessimism < float("inf"):
            raise ModelError(f"{path}: its pessimism is not a number of 0 or more")
        params = meta.get("params") if isinstance(meta, dict) else None
        kappa = params.get("kappa", 0.0) if isinstance(params, dict) else 0.0
        if pessimism != (kappa if kind != KIND else 0.0):
            raise ModelError(f"{path}: its Q-function's pessimism ({pessimism}) is not the "
                             f"kappa its settings record ({kappa}) for a {kind!r} model")
        per_action, n_actions = q.get("per_action"), q.get("n_actions")
        specs = q.get("models")
        support = document.get("support")
        behaviour, tau = None, None
        if support is not None:
            if not isinstance(support, dict) or not isinstance(specs, list) or \
                    not isinstance(support.get("tau"), float) or \
                    not 0 <= support["tau"] <= 1:
                raise ModelError(f"{path}: its support constraint is not a share and a "
                                 "behaviour model")
            *models, behaviour = modeltrees.decode_models([*specs, support.get("behaviour")],
                                                         arrays, path)
            tau = support["tau"]
            if behaviour is None or behaviour.n_outputs_ != n_actions:
                raise ModelError(f"{path}: its behaviour model does not give one "
                                 f"frequency per action")
        else:
            models = modeltrees.decode_models(specs, arrays, path)
        if not isinstance(per_action, bool) or type(n_actions) is not int or \
                n_actions != len(meta["action_names"]) or \
                len(models) != (n_actions if per_action else 1) or \
                all(m is None for m in models) or \
                any(m is not None and m.n_outputs_ != 1 for m in models):
            raise ModelError(f"{path}: its Q-function has {len(models)} regressors for "
                             f"{str(n_actions)[:20]} actions (per action: "
                             f"{str(per_action)[:20]}; its action names: "
                             f"{len(meta['action_names'])})")
        features = meta.get("feature_names")
        if isinstance(features, list):
            inputs = len(features) + (0 if per_action else 1)
            if any(m.n_features_in_ != inputs for m in models if m is not None):
                raise ModelError(f"{path}: its regressors do not take the {inputs} inputs "
                                 "its feature names say")
            if behaviour is not None and behaviour.n_features_in_ != len(features):
                raise ModelError(f"{path}: its behaviour model does not take the "
                                 f"{len(features)} features its names say")
        return cls(QFunction(models, per_action, n_actions, behaviour, tau, float(pessimism)),
                   meta, version, kind)


_LOADED: dict[tuple[str, int, int, str], ModelArtifact] = {}


class GreedyPolicy:
    """Acts greedily on Q among the legal actions (ties go to the lowest action index)."""

    def __init__(self, artifact: ModelArtifact) -> None:
        self.artifact = artifact
        self.feature_names: tuple[str, ...] = tuple(artifact.meta["feature_names"])
        self.action_names: tuple[str, ...] = tuple(artifact.meta["action_names"])

    @classmethod
    def load(cls, path: str | Path, kind: str = KIND) -> GreedyPolicy:
        return cls(ModelArtifact.load(path, kind))

    @property
    def meta(self) -> dict[str, Any]:
        return self.artifact.meta

    def save(self, path: str | Path) -> Path:
        return self.artifact.save(path)

    def q_values(self, states: NDArray[np.floating[Any]]) -> NDArray[np.float64]:
        return self.artifact.q.q_values(states)

    def values(self, states: NDArray[np.floating[Any]]) -> NDArray[np.float64]:
        """Q of every action in each state (the `Policy` protocol's values)."""
        return self.q_values(states)

    def act(self, states: NDArray[np.floating[Any]],
            legal: NDArray[np.bool_] | None = None) -> NDArray[np.int64]:
        """The greedy action in each state (`act_batch`)."""
        return self.act_batch(states, legal)

    def act_batch(self, states: NDArray[np.floating[Any]],
                  legal: NDArray[np.bool_] | None = None) -> NDArray[np.int64]:
        """The greedy action in each state; ``legal`` (n, actions) masks the rest, and a
        model learned with a support constraint also the actions the logged players
        rarely took there (``batchrl.learners.fqi.support``)."""
        function = self.artifact.q
        n = len(states)
        if legal is None:
            legal = np.ones((n, function.n_actions), dtype=bool)
        legal = np.asarray(legal, dtype=bool)
        if legal.shape != (n, function.n_actions):
            raise ValueError(f"legal is {legal.shape}: want one mask of {function.n_actions} "
                             f"actions per state, ({n}, {function.n_actions})")
        if not legal.any(axis=1).all():
            raise ValueError("a state with no legal action has nothing to choose")
        if function.behaviour is not None and function.support is not None:
            legal = supported(function.behaviour, np.asarray(states, dtype=np.float32)
                              .reshape(n, -1), legal, function.support)
        # only the choosable actions' values: the rest are never chosen
        q = function.q_values(states, only=legal)
        # An action no model knows ranks below every known one, but stays choosable;
        # an illegal one is never chosen.
        scored = np.where(np.isnan(q), np.finfo(np.float64).min, q)
        scored = np.where(legal, scored, -np.inf)
        choice: NDArray[np.int64] = np.argmax(scored, axis=1).astype(np.int64)
        return choice

    def act_one(self, state: Sequence[float] | NDArray[Any],
                legal: Sequence[bool] | NDArray[np.bool_] | None = None) -> int:
        """The greedy action in one state."""
        mask = None if legal is None else np.asarray(legal, dtype=bool)[None, :]
        return int(self.act_batch(np.asarray(state, dtype=np.float32)[None, :], mask)[0])
