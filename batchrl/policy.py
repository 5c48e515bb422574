"""Policies: what every game plays (`Policy`), a game's views of its features
(`FeatureView`, `ViewedPolicy`), the one loader of model files (`load_policy`, by the
file's kind) and binding a model to a game's encoding (`load_model`, `LoadedModel`).

A `Policy` is what a learner (``batchrl.learners``) returns and what games play: the
names of the features it reads and of the actions it chooses among, the game and params
it was made for (in ``meta``), ``act(states, legal)`` on a batch, and ``values(states)``
where it has them. A model file says its ``kind``; `load_policy` hands it to the learner
that reads that kind. FQI's model (its Q-function and greedy policy) is the learner's
own: ``batchrl.learners.fqi.model``.

A model file is safe to share: it is a zip of numpy arrays and JSON
(``batchrl.modelfile``), read without unpickling anything, so loading one runs no code
it carries; a crafted file is refused with a `ModelError`.

>>> import numpy as np
>>> class Constant:  # any object with these members is a Policy
...     feature_names, action_names, meta = ("x",), ("a", "b"), {"game": "g"}
...     def act(self, states, legal=None):
...         return np.ones(len(states), dtype=np.int64)
>>> isinstance(Constant(), Policy)
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from batchrl import modelfile
from batchrl.foreign import is_foreign, load_foreign
from batchrl.learners import Learner, learner_for_kind
from batchrl.modelfile import ModelError as ModelError


@runtime_checkable
class Policy(Protocol):
    """What a game needs to play a learned (or another library's) policy.

    A policy with values (a Q-function's) also has ``values(states)``, shape (n,
    actions).

    Attributes:
        feature_names: the store features it reads, in the order of the columns of the
            ``states`` it is given (a game binds them by name, `load_model`).
        action_names: the game's actions, in order.
        meta: at least ``game`` and ``game_params``, what it was made for.
    """

    feature_names: tuple[str, ...]
    action_names: tuple[str, ...]

    @property
    def meta(self) -> Mapping[str, Any]: ...

    def act(self, states: NDArray[np.floating[Any]],
            legal: NDArray[np.bool_] | None = None) -> NDArray[np.int64]:
        """One action per state.

        Args:
            states: (n, features), the columns `feature_names` names.
            legal: (n, actions), the legal moves; None: any.

        Returns:
            (n,) action indices, never one ``legal`` masks out.
        """
        ...


class FeatureView(Protocol):
    """A game's own reading of its stored features for a learner (``LearnFace.view``): Hanabi's
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
    - ``record()``: the options that make it again (``LearnFace.view(record)``), kept in the
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
    """The policy in a model file, read by the learner of the kind its header says.

    Args:
        path: a model file of any learner (``batchrl.learners``), or
            ``python:MODULE:CALLABLE``, another library's policy (`batchrl.foreign`).

    Returns:
        The policy; nothing in the file is run (arrays and JSON only).

    Raises:
        ModelError: no file, a kind no learner reads, or a crafted or damaged file.
    """
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
    try:
        kind = modelfile.kind_of(path)
    except FileNotFoundError:
        raise ModelError(f"no model at {path}: train one with batchrl learn (or fqi)") from None
    return learner_for_kind(kind, path)


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
