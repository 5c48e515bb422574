"""What a learner is (`Learner`: its config, fit, model files and the rest of the
protocol), the error it raises, its run-time options and a policy that scores actions;
``batchrl.learners`` registers them by name. A learner's package imports this module,
never the registry above it.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from batchrl import modelfile
from batchrl.registry import make_dataclass_of
from batchrl.store import Transitions

__all__ = ["EXPLICIT_NONE", "Learner", "LearnerError", "RunOption", "ScoredPolicy"]


class _ExplicitNone:
    """A setting given as none (``--set k=none``, ``bench --learners fqi:k=none``): None
    itself means "not given". A learner's `Learner.config` reads it as None; until then
    it tells a config hook that the user chose None over the game's recommendation (FQI's
    ``freeze_after=none`` over a game's fast mode)."""

    def __repr__(self) -> str:
        return "none"


EXPLICIT_NONE: Any = _ExplicitNone()


class LearnerError(ValueError):
    """A learner that does not exist, or settings it cannot take; the message says what
    exists instead."""


@dataclasses.dataclass(frozen=True)
class RunOption:
    """A run-time option of a learner's command that is no hyperparameter: where or how a
    fit runs, never what it makes (FQI's ``--scheduler``, ``--resume``). Given, it reaches
    ``fit`` as the keyword argument ``name``.

    Args:
        name: the keyword ``fit`` takes (``--NAME`` on the command line, ``_`` as ``-``).
        type: str, int or float; bool is a flag (on, or not given).
        help: the option's help.
        envvar: an environment variable that gives it when the flag is absent.
        metavar: how the help names its value.
    """

    name: str
    type: type
    help: str
    envvar: str | None = None
    metavar: str | None = None


class Learner:
    """One learner: its facts, its config and how it fits, saves and reads a policy.

    Subclasses set the class attributes and override `fit` and `read`. What the command
    line, the model file and a game's recommendation know of a learner's
    hyperparameters is read from its ``Config`` dataclass alone: each field's
    ``metadata`` may say its ``help``, a ``short`` flag (``-M``), a ``flag`` spelling
    (``--per-action/--joint``), a ``metavar``, the bounds ``min`` / ``max`` (with
    ``min_open`` / ``max_open``) and what a default of None means (``unset``: "all").
    """

    name: ClassVar[str]
    kind: ClassVar[str]  # the kind its model files record (batchrl.modelfile)
    title: ClassVar[str] = ""  # one line for --help
    Config: ClassVar[type]
    # run-time options of ``batchrl learn NAME`` beyond the config (`RunOption`)
    run_options: ClassVar[tuple[RunOption, ...]] = ()
    # ``fit`` keeps each finished step in a directory beside the model file
    # (``MODEL.npz.ckpt/``, its ``checkpoints`` argument) and goes on from there when
    # given ``resume``; the directory goes once the model is saved
    checkpoints: ClassVar[bool] = False
    # the columns of the learner's history (``meta["history"]``), one line per entry
    # (`history_row`): ``batchrl learn NAME`` prints each entry as ``fit`` reports it
    # (``on_iteration``) and ``batchrl policy show`` a model's; None: no table
    history_header: ClassVar[str | None] = None
    # what a learner reads beyond states and moves: the next states (False: a view of the
    # features leaves them out), and the groups of a held-out split (Transitions.group)
    uses_next_state: ClassVar[bool] = True
    holds_out: ClassVar[bool] = False
    # a learner whose settings are another's and more (lcb: fqi's and kappa) takes that
    # one's recommended settings where a game recommends none of its own
    settings_from: ClassVar[str | None] = None

    def config(self, **values: Any) -> Any:
        """The learner's config.

        Args:
            **values: settings by name (the others: the config's defaults;
                ``EXPLICIT_NONE``: None, chosen over a game's recommendation).

        Returns:
            An instance of ``Config``.

        Raises:
            LearnerError: a setting the learner does not have (naming those it has), or a
                value its config refuses.
        """
        values = {k: None if v is EXPLICIT_NONE else v for k, v in values.items()}
        return make_dataclass_of(self.Config, values, self.name, "setting", LearnerError)

    def settings(self) -> list[tuple[str, type, Any, str]]:
        """Each setting as (name, type, default, help), from the config's fields: the type
        is int, float, str or bool (``X | None`` and ``Optional[X]`` give X); a field of
        another type is a `LearnerError` (a command line could not give it)."""
        if not dataclasses.is_dataclass(self.Config):
            raise LearnerError(f"{self.name}: its Config is not a dataclass")
        try:
            hints = typing.get_type_hints(self.Config)
        except Exception as exc:  # an annotation that does not resolve
            raise LearnerError(f"{self.name}: its Config's types do not resolve ({exc})") \
                from None
        out = []
        for f in dataclasses.fields(self.Config):
            annotation = hints[f.name]
            if typing.get_origin(annotation) in (typing.Union, types.UnionType):
                args = [a for a in typing.get_args(annotation) if a is not type(None)]
                annotation = args[0] if len(args) == 1 else annotation
            if annotation not in (int, float, str, bool):
                raise LearnerError(f"{self.name}: setting {f.name} is a {hints[f.name]}; a "
                                   "learner's settings are int, float, str or bool (or None)")
            out.append((f.name, annotation, f.default, str(f.metadata.get("help", ""))))
        return out

    def takes(self, name: str) -> bool:
        """Whether ``name`` is a setting this learner takes (a game's recommendation of
        another is passed over)."""
        return name in {f.name for f in dataclasses.fields(self.Config)}

    def describe(self, config: Any) -> str:
        """The config in one line (``trees=50, nmin=20``)."""
        return ", ".join(f"{f.name}={getattr(config, f.name)}"
                         for f in dataclasses.fields(config))

    def file_name(self, config: Any, features: Sequence[str] | None, drop: Sequence[str],
                  players: Sequence[str], view: str) -> str | None:
        """The model file's name (no suffix) for ``config``, the features and players
        chosen and the view's tag; None: the learner's name, every setting that is not
        its default and what was chosen (``bc-trees10-player-alice``)."""
        return None

    def history_length(self, config: Any) -> int | None:
        """How many history entries a fit with ``config`` makes, where it is known (a
        terminal's progress bar shows how far it is)."""
        return None

    def history_row(self, entry: Mapping[str, Any]) -> str:
        """One entry of the learner's history as a row under `history_header`."""
        return "  ".join(f"{v}" for v in entry.values())

    def notes(self, path: Path, policy: Any) -> tuple[list[str], list[str]]:
        """What ``batchrl learn NAME`` says after saving ``policy`` at ``path``: lines, and
        warnings (FQI: where its curves were drawn; values far past the returns)."""
        return [], []

    def resume_note(self, checkpoints: Path, config: Any) -> str | None:
        """Where a resumed run goes on from, in words (a learner with `checkpoints`)."""
        return None

    def resumed(self, checkpoints: Path, config: Any) -> int:
        """How many history entries the checkpoint in ``checkpoints`` holds, that a resumed
        run goes on after (0: none to trust); its progress counts from there."""
        return 0

    def rows(self, data: Transitions | Callable[[], Transitions]) -> Transitions:
        """``data``'s rows (read now, if a function), refused when there are none."""
        rows = data() if callable(data) else data
        if not len(rows):
            raise LearnerError(f"{self.name}: no rows to learn from")
        return rows

    def fit(self, config: Any, data: Transitions | Callable[[], Transitions], *,
            progress: Callable[[str, int, int], None] | None = None, jobs: int = -1) -> Any:
        """The policy learned from ``data``.

        Args:
            config: the hyperparameters, an instance of ``Config``.
            data: the rows, or a function that reads them (so that the learner holds the
                only reference and can let the rows go once it no longer needs them).
            progress: hears how far it is, ``(what, done, of)``.
            jobs: worker threads (-1: every core); results do not depend on it.

        A learner with `run_options` takes each as a keyword argument too; one with
        `checkpoints` takes ``checkpoints`` (the directory), ``checkpoint_data`` (what the
        data is beyond its rows) and ``resume``; one with a `history_header` takes
        ``on_iteration`` (hears each history entry as a dict).

        Returns:
            The policy (`batchrl.policy.Policy`, with ``meta`` and ``save(path)``).
        """
        raise NotImplementedError

    def read(self, path: str | Path) -> Any:
        """A policy back from one of this learner's model files.

        Args:
            path: a model file of this learner's ``kind``.

        Returns:
            The policy, read from arrays and JSON alone (no pickles).

        Raises:
            ModelError: a file this learner did not write, or a damaged one.
        """
        raise NotImplementedError

    def meta_of(self, path: str | Path) -> dict[str, Any]:
        """The metadata of the model file at ``path`` (its game, features, data...), from
        its JSON alone."""
        meta = modelfile.read(path, self.kind, with_arrays=False)[0].get("meta")
        return modelfile.check_meta(path, meta)

    def __repr__(self) -> str:
        return f"<Learner {self.name}>"


class ScoredPolicy:
    """A learned policy that scores every action of a state and plays the best-scored legal
    one (ties: the lowest index): subclasses give `scores`. It keeps its metadata (the
    dict its file writes) and the feature and action names from it."""

    def __init__(self, meta: Mapping[str, Any]) -> None:
        self._meta = dict(meta)
        self.feature_names: tuple[str, ...] = tuple(meta["feature_names"])
        self.action_names: tuple[str, ...] = tuple(meta["action_names"])

    @property
    def meta(self) -> dict[str, Any]:
        return self._meta

    def scores(self, states: NDArray[np.floating[Any]]) -> NDArray[np.floating[Any]]:
        """How good each action looks in each state, (n, actions)."""
        raise NotImplementedError

    def act(self, states: NDArray[np.floating[Any]],
            legal: NDArray[np.bool_] | None = None) -> NDArray[np.int64]:
        scored = np.asarray(self.scores(states), dtype=np.float64)
        if legal is not None:
            scored = np.where(np.asarray(legal, dtype=bool), scored, -np.inf)
        chosen: NDArray[np.int64] = np.argmax(scored, axis=1).astype(np.int64)
        return chosen
