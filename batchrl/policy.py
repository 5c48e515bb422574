"""Policies: what every game plays (`Policy`), the one loader of model files
(`load_policy`, by the file's kind), binding a model to a game's encoding (`load_model`),
and FQI's model artifact and greedy policy.

A `Policy` is what a learner (``batchrl.learners``) returns and what games play: the
names of the features it reads and of the actions it chooses among, the game and params
it was made for (in ``meta``), ``act(states, legal)`` on a batch, and ``values(states)``
where it has them. A model file says its ``kind``; `load_policy` hands it to the learner
that reads that kind.

FQI's artifact is one file, ``fqi-M…-nmin…-N….npz`` (kind ``model``): the Q-function's
regressors plus everything needed to trust and reuse them — game, feature and action
names (a policy acts on states encoded with exactly these features), the store and its
digest, the parameters, and the per-iteration diagnostics.

A model file is safe to share: it is a zip of numpy arrays (each tree's nodes) and JSON
(``batchrl.modelfile``), read without unpickling anything, so loading one runs no code
it carries; a crafted file is refused with a `ModelError`. The pickles (``.joblib``)
of batchrl before artifact version 2 are refused too, with the command that retrains
them.

>>> import numpy as np
>>> from sklearn.dummy import DummyRegressor
>>> models = [DummyRegressor(strategy="constant", constant=c).fit([[0]], [0]) for c in (1, 3)]
>>> q = QFunction(models, per_action=True, n_actions=2)
>>> policy = GreedyPolicy(ModelArtifact(q, {"feature_names": ["x"], "action_names": ["a", "b"]}))
>>> policy.act(np.zeros((2, 1)), np.array([[True, True], [True, False]])).tolist()
[1, 0]
>>> isinstance(policy, Policy)
True
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from batchrl import modelfile, modeltrees
from batchrl.foreign import is_foreign, load_foreign
from batchrl.modelfile import ModelError as ModelError

if TYPE_CHECKING:
    from batchrl.learners import Learner

# 2: arrays and JSON (batchrl.modelfile); 1 was a joblib pickle, no longer read.
ARTIFACT_VERSION = 2
KIND = "model"  # FQI's model files (written before model files had other kinds)


@runtime_checkable
class Policy(Protocol):
    """What a game needs to play a learned (or another library's) policy.

    ``feature_names``: the store features it reads, in the order of the columns of the
    ``states`` it is given (a game binds them by name, `load_model`); ``action_names``: the
    game's actions, in order; ``meta``: at least ``game`` and ``game_params``, what it was
    made for. ``act(states, legal)``: one action per row of ``states`` (n, features),
    never one that ``legal`` (n, actions) masks out. A policy with values (a
    Q-function's) has ``values(states)``, shape (n, actions).
    """

    feature_names: tuple[str, ...]
    action_names: tuple[str, ...]

    @property
    def meta(self) -> Mapping[str, Any]: ...

    def act(self, states: NDArray[np.floating[Any]],
            legal: NDArray[np.bool_] | None = None) -> NDArray[np.int64]: ...


class FeatureView(Protocol):
    """A game's own reading of its stored features for a learner (``Game.view``): Hanabi's
    colour order and the convention's facts. The learner is fitted on what the view makes
    of the store's rows, and its model plays through the same view (`ViewedPolicy`), so
    no learner holds a game's code.

    - ``columns``: the stored features it reads, in order; ``input_names``: the names of
      the numbers ``inputs`` makes of them (the features the learner's model records);
    - ``read(states)``: (n, len(columns)) stored states to the learner's inputs, (n,
      len(input_names)), and the order of the moves: (n, actions) ints, ``order[i, a]``
      the learner's number for the stored action ``a`` in state ``i`` (a permutation in
      each row), or None when the view renames no move (one pass over the states for
      both: Hanabi's colour order is found once);
    - ``possible(states)``: the moves each stored state could allow, read off its features
      (n, actions) in the stored numbering, or None: what a learner may mask in training
      (at play the game's exact legal moves mask);
    - ``record()``: the options that make it again (``Game.view(record)``), kept in the
      model file; ``tag``: a file-name suffix (``colour-convention``).
    """

    @property
    def columns(self) -> tuple[str, ...]: ...
    @property
    def input_names(self) -> tuple[str, ...]: ...
    @property
    def tag(self) -> str: ...

    def read(self, states: NDArray[np.float32]
             ) -> tuple[NDArray[np.float32], NDArray[np.intp] | None]: ...
    def possible(self, states: NDArray[np.float32]) -> NDArray[np.bool_] | None: ...
    def record(self) -> dict[str, Any]: ...


def renamed(per_action: NDArray[Any], order: NDArray[np.intp] | None) -> NDArray[Any]:
    """Per-action columns (a legal mask, say) moved to a view's numbering: column
    ``order[i, a]`` of row ``i`` gets column ``a``.

    >>> renamed(np.array([[1, 2, 3]]), np.array([[2, 0, 1]])).tolist()
    [[2, 3, 1]]
    """
    if order is None:
        return per_action
    out = np.empty_like(per_action)
    np.put_along_axis(out, order, per_action, axis=1)
    return out


class ViewedPolicy:
    """A policy fitted on a game's view of the store (`FeatureView`), playing on the
    stored states: each batch goes through the view, the legal moves are renamed into its
    numbering and the chosen ones back. ``feature_names`` are the stored columns the view
    reads; ``save`` writes the inner policy (its meta records the view)."""

    def __init__(self, policy: Policy, view: FeatureView) -> None:
        self.policy, self.view = policy, view
        self.feature_names: tuple[str, ...] = tuple(view.columns)
        self.action_names: tuple[str, ...] = tuple(policy.action_names)

    @property
    def meta(self) -> Mapping[str, Any]:
        return self.policy.meta

    def save(self, path: str | Path) -> Path:
        saved: Path = self.policy.save(path)  # type: ignore[attr-defined]
        return saved

    def _through(self, states: NDArray[np.floating[Any]]
                 ) -> tuple[NDArray[np.float32], NDArray[np.intp] | None]:
        inputs, order = self.view.read(np.asarray(states, dtype=np.float32))
        return inputs, None if order is None else np.asarray(order, np.intp)

    def act(self, states: NDArray[np.floating[Any]],
            legal: NDArray[np.bool_] | None = None) -> NDArray[np.int64]:
        x, order = self._through(states)
        mask = None if legal is None else renamed(np.asarray(legal, dtype=bool), order)
        chosen = np.asarray(self.policy.act(x, mask))
        if order is None or chosen.shape != (len(x),) or chosen.dtype.kind not in "iu":
            return chosen  # LoadedModel says what is wrong with a bad answer
        inside = (chosen >= 0) & (chosen < order.shape[1])
        back = np.argsort(order, axis=1)  # back[i, j]: the stored action numbered j
        out = chosen.astype(np.int64)
        out[inside] = back[np.flatnonzero(inside), chosen[inside]]
        return out

    @property
    def values(self) -> Callable[[NDArray[np.floating[Any]]], NDArray[np.float64]] | None:
        """The inner policy's values, each in its stored action's column (None where the
        inner policy has none)."""
        inner = getattr(self.policy, "values", None)
        if inner is None:
            return None

        def values(states: NDArray[np.floating[Any]]) -> NDArray[np.float64]:
            x, order = self._through(states)
            v = np.asarray(inner(x), dtype=np.float64)
            return v if order is None else np.take_along_axis(v, order, axis=1)

        return values


def load_policy(path: str | Path) -> Policy:
    """The policy in the model file at ``path``, read by the learner of the kind its header
    says (``batchrl.learners``), or the one ``python:MODULE:CALLABLE`` gives
    (`batchrl.foreign`); a crafted file is a `ModelError`."""
    if is_foreign(path):  # python:MODULE:CALLABLE, another library's policy
        foreign: Policy = load_foreign(path)
        return foreign
    policy: Policy = _reader(path).read(path)
    return policy


def policy_meta(path: str | Path) -> dict[str, Any]:
    """The metadata of the model file at ``path`` (its game, features, data...), of any
    kind, from its JSON alone: milliseconds, where `load_policy` reads every array."""
    if is_foreign(path):  # its code must run to say
        return dict(load_foreign(path).meta)
    return _reader(path).meta_of(path)


def _reader(path: str | Path) -> Learner:
    """The learner (``batchrl.learners``) that reads the model file at ``path``: the one of
    the kind its header says."""
    from batchrl.learners import learner_for_kind

    try:
        kind = modelfile.kind_of(path)
    except FileNotFoundError:
        raise ModelError(f"no model at {path}: train one with batchrl learn (or fqi)") from None
    return learner_for_kind(kind, path)


def predict(model: Any, x: NDArray[np.float32]) -> NDArray[np.float64]:
    """``model.predict(x)``, but for a forest on several threads the trees' outputs are
    summed in a fixed order: scikit-learn sums them as threads finish, so its last bits,
    and through FQI's ties every later split, would change from run to run."""
    trees = getattr(model, "estimators_", None)
    jobs = getattr(model, "n_jobs", None)
    if trees is None or jobs in (None, 1) or len(x) == 0:
        return np.asarray(model.predict(x), dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != model.n_features_in_:  # the trees check nothing
        raise ValueError(f"the model takes {model.n_features_in_} inputs, not {x.shape[1:]}")
    workers = min(len(trees), os.cpu_count() or 1) if jobs < 0 else jobs
    total: NDArray[np.float64] | None = None
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for part in pool.map(lambda tree: tree.predict(x, check_input=False), trees):
            total = part.astype(np.float64) if total is None else total + part
    assert total is not None
    return total / len(trees)


SUPPORT_CHUNK = 65_536  # rows whose action frequencies are predicted at a time


def probabilities(behaviour: Any, states: Any) -> NDArray[np.float64]:
    """The behaviour model's action frequencies for ``states`` (an array, or anything that
    slices to one), a chunk at a time."""
    n = len(states)
    out = np.empty((n, behaviour.n_outputs_), dtype=np.float64)
    for lo in range(0, n, SUPPORT_CHUNK):
        part = np.asarray(states[lo : lo + SUPPORT_CHUNK], dtype=np.float32)
        out[lo : lo + SUPPORT_CHUNK] = predict(behaviour, part).reshape(len(part), -1)
    return out


def supported(behaviour: Any, states: Any, legal: NDArray[np.bool_],
              tau: float) -> NDArray[np.bool_]:
    """The legal actions the logged players took often enough: probability at least
    ``tau`` times the likeliest legal action's. A state keeps at least its likeliest
    legal action, and a state with no legal action keeps none."""
    legal = np.asarray(legal, dtype=bool)
    p = np.where(legal, probabilities(behaviour, states), -1.0)
    best = p.max(axis=1, keepdims=True)
    mask: NDArray[np.bool_] = legal & (p >= tau * best)
    empty = legal.any(axis=1) & ~mask.any(axis=1)  # every legal action unseen there
    mask[empty] = legal[empty]
    return mask


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

    def q_values(self, states: NDArray[np.floating[Any]],
                 only: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
        """Q of every action in each state, shape (n, actions); NaN where no model knows.
        With ``only`` (n, actions), just those (the legal actions: a state's values do
        not depend on the other rows', so they are the same), NaN elsewhere."""
        states = np.asarray(states, dtype=np.float32).reshape(len(states), -1)
        q = np.full((len(states), self.n_actions), np.nan)
        for a in range(self.n_actions):
            rows = slice(None) if only is None else np.flatnonzero(only[:, a])
            part = states[rows]
            if not len(part):
                continue
            if self.per_action:
                if self.models[a] is not None:
                    q[rows, a] = predict(self.models[a], part)
            else:
                x = np.column_stack([part, np.full(len(part), a, dtype=np.float32)])
                q[rows, a] = predict(self.models[0], x)
        return q


@dataclass
class ModelArtifact:
    """A Q-function and its metadata (``game``, ``feature_names``, ``action_names``,
    ``store``, ``store_digest``, ``params``, ``history``, …)."""

    q: QFunction
    meta: dict[str, Any]
    version: int = ARTIFACT_VERSION

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
        return modelfile.write(path, KIND, document, arrays)

    @classmethod
    def load(cls, path: str | Path) -> ModelArtifact:
        """The model at ``path``; a file read before, unchanged since, is not read again
        (a command that checks a model's game and then plays it reads it once)."""
        try:
            stat = os.stat(path)
        except OSError:
            stat = None
        key = (str(Path(path).resolve()), stat.st_mtime_ns, stat.st_size) if stat else None
        if key is not None and key in _LOADED:
            return _LOADED[key]
        artifact = cls._read(path)
        if key is not None:
            _LOADED.clear()  # one model held: a sweep loads many, one after another
            _LOADED[key] = artifact
        return artifact

    @classmethod
    def meta_of(cls, path: str | Path) -> dict[str, Any]:
        """The metadata of the model at ``path`` (its game, features, store...), read
        from the file's JSON alone: milliseconds, where `load` reads every tree."""
        return cls._document(path, with_arrays=False)[0]["meta"]  # type: ignore[no-any-return]

    @classmethod
    def _document(cls, path: str | Path, with_arrays: bool = True
                  ) -> tuple[dict[str, Any], dict[str, NDArray[Any]]]:
        """A model file's document, checked, and its arrays (`batchrl.modelfile.read`)."""
        try:
            document, arrays = modelfile.read(path, KIND, with_arrays=with_arrays)
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
    def _read(cls, path: str | Path) -> ModelArtifact:
        """Arrays and JSON only: nothing in the file is run (`batchrl.modelfile.read`)."""
        document, arrays = cls._document(path)
        q, meta, version = document["q"], document["meta"], document["version"]
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
        return cls(QFunction(models, per_action, n_actions, behaviour, tau), meta, version)


_LOADED: dict[tuple[str, int, int], ModelArtifact] = {}


class GreedyPolicy:
    """Acts greedily on Q among the legal actions (ties go to the lowest action index)."""

    def __init__(self, artifact: ModelArtifact) -> None:
        self.artifact = artifact
        self.feature_names: tuple[str, ...] = tuple(artifact.meta["feature_names"])
        self.action_names: tuple[str, ...] = tuple(artifact.meta["action_names"])

    @classmethod
    def load(cls, path: str | Path) -> GreedyPolicy:
        return cls(ModelArtifact.load(path))

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


@dataclass
class LoadedModel:
    """A model file (any learner's `Policy`) bound to a game's encoding: it acts on the
    game's whole feature vectors (``encode``'s), taking the columns it was trained on by
    name.

    ``params`` are the game params its states are encoded with; ``name`` the file's stem.
    """

    path: Path
    policy: Policy
    params: Any
    columns: NDArray[np.intp]

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def meta(self) -> Mapping[str, Any]:
        return self.policy.meta

    def q_values(self, states: NDArray[np.floating[Any]]) -> NDArray[np.float64]:
        """The policy's values of every action (a policy without values: `ModelError`)."""
        values = getattr(self.policy, "values", None)
        if values is None:
            raise ModelError(f"{self.path} is a policy without values (a "
                             f"{self.meta.get('learner', 'learned')} policy)")
        out: NDArray[np.float64] = values(np.asarray(states)[:, self.columns])
        return out

    def played_values(self, states: NDArray[np.floating[Any]],
                      legal: NDArray[np.bool_]) -> NDArray[np.float64]:
        """The policy's value of each row of the game's encoded ``states``: the Q of the
        move it plays there (`act_batch`, so a support constraint's masked moves never
        lend their value). `ModelError` for a policy without values, or where the move
        it plays has none."""
        q = self.q_values(states)
        out: NDArray[np.float64] = q[np.arange(len(q)), self.act_batch(states, legal)]
        if not np.isfinite(out).all():
            raise ModelError(f"{self.path} has no value for the move it plays in some "
                             "state")
        return out

    def act_batch(self, states: NDArray[np.floating[Any]],
                  legal: NDArray[np.bool_] | None = None) -> NDArray[np.int64]:
        """The policy's legal action for each row of the game's encoded ``states``."""
        legal = None if legal is None else np.asarray(legal, dtype=bool)
        if legal is not None and not legal.any(axis=1).all():
            raise ValueError("a state with no legal action has nothing to choose")
        given = self.policy.act(np.asarray(states)[:, self.columns], legal)
        chosen = np.asarray(given) if given is not None else np.zeros(0)
        if chosen.shape != (len(states),) or (len(chosen) and chosen.dtype.kind not in "iu"):
            raise ModelError(f"{self.path} answered {type(given).__name__} "
                             f"{getattr(chosen, 'dtype', '')} {chosen.shape} for "
                             f"{len(states)} states: a policy's act gives one whole action "
                             "index per state")
        chosen = chosen.astype(np.int64)
        actions = len(self.policy.action_names)
        outside = (chosen < 0) | (chosen >= actions)
        if outside.any():
            raise ModelError(f"{self.path} chose action {int(chosen[outside][0])}, not one of "
                             f"its {actions}")
        if legal is not None and not legal[np.arange(len(chosen)), chosen].all():
            raise ModelError(f"{self.path} chose an illegal action: a policy must act "
                             "among the legal ones")
        return chosen


def load_model(path: str | Path, check: Callable[[str, Mapping[str, Any]], Any],
               feature_names: Callable[[Any], Sequence[str]],
               action_names: Callable[[Any], Sequence[str]],
               policy: Policy | None = None,
               view: Callable[[Mapping[str, Any], Any], FeatureView | None] | None = None
               ) -> LoadedModel:
    """The one model loader every game's players use (through ``Game.load_model``): a
    model file of any kind (`load_policy`), bound to the game's states.

    ``check(game, game_params)`` gets what the model was trained on and returns the
    params to play with (or raises, saying why the model does not fit the game being
    played); ``feature_names(params)`` and ``action_names(params)`` are the game's. The
    model's features are found among the game's by name. ``policy``: the model already
    loaded from ``path``. ``view(record, params)``: the game's `FeatureView` for a model
    fitted on one (its meta's ``view``), which it then plays through (`ViewedPolicy`).
    """
    policy = policy if policy is not None else load_policy(path)
    meta = policy.meta
    params = check(str(meta.get("game", "?")), meta.get("game_params") or {})
    if (record := meta.get("view")) is not None and not isinstance(policy, ViewedPolicy):
        policy = viewed(path, policy, record,
                        None if view is None else lambda options: view(options, params))
    names = tuple(feature_names(params))
    if unknown := [n for n in policy.feature_names if n not in names]:
        shown = ", ".join(unknown[:5]) + (" ..." if len(unknown) > 5 else "")
        raise ModelError(f"{path} uses features ({shown}) that the game's states do not have "
                         f"with {params}: it was trained on other data")
    actions = tuple(action_names(params))
    if tuple(policy.action_names) != actions:
        raise ModelError(f"{path} has the actions {list(policy.action_names)[:6]}, not the "
                         f"game's {list(actions)[:6]}: it was trained on another game")
    index = {n: i for i, n in enumerate(names)}
    columns = np.asarray([index[n] for n in policy.feature_names], dtype=np.intp)
    return LoadedModel(Path(path), policy, params, columns)


def viewed(path: str | Path, policy: Policy, record: Any,
           view: Callable[[Mapping[str, Any]], FeatureView | None] | None) -> ViewedPolicy:
    """``policy`` (fitted on the view ``record`` names) playing through that view, made by
    the game's ``view``; `ModelError` when the game has no such view or the view's inputs
    are not the features the model reads."""
    try:
        made = view(record) if view is not None and isinstance(record, Mapping) else None
    except ValueError as exc:  # a GameError: the game has no such view
        raise ModelError(f"{path} was fitted on the view {record}: {exc}") from None
    if made is None:
        raise ModelError(f"{path} was fitted on a view of the features ({record}) that the "
                         "game does not make")
    if tuple(made.input_names) != tuple(policy.feature_names):
        raise ModelError(f"{path} reads {len(policy.feature_names)} features, not the "
                         f"{len(made.input_names)} its view {record} makes")
    return ViewedPolicy(policy, made)
