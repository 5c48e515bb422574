"""How the benchmark names a learner: ``NAME`` or ``NAME:SETTING=VALUE,...``
(`LearnerSpec`), given comma-separated or repeated (`split_learners`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from batchrl.learners import EXPLICIT_NONE, LEARNERS, Learner, LearnerError, get_learner
from batchrl.play.bench.datasets import BenchError


@dataclass(frozen=True)
class LearnerSpec:
    """A learner as the benchmark names it: ``NAME`` or ``NAME:SETTING=VALUE,...``
    (``fqi:support=0.3``): the learner, the settings given over the game's recommended
    ones, and the label its rows carry."""

    label: str
    learner: Learner
    given: Mapping[str, Any]

    @classmethod
    def parse(cls, spec: str) -> LearnerSpec:
        name, _, rest = spec.partition(":")
        try:
            learner = get_learner(name.strip())
        except LearnerError as exc:
            raise BenchError(str(exc)) from None
        types = {s[0]: s[1] for s in learner.settings()}
        given: dict[str, Any] = {}
        items: list[str] = []
        for piece in filter(None, (p.strip() for p in rest.split(","))):
            if "=" not in piece and items:  # a value with commas (hidden=64,64)
                items[-1] += f",{piece}"
            else:
                items.append(piece)
        for item in items:
            key, eq, raw = item.partition("=")
            if not eq or key not in types:
                raise BenchError(f"{spec}: {item!r} is no SETTING=VALUE of {learner.name} (its "
                                 f"settings: {', '.join(sorted(types))})")
            given[key] = _parse_value(spec, key, raw, types[key])
        try:  # what its config refuses, refused before any dataset is built
            learner.config(**given)
        except LearnerError as exc:
            raise BenchError(f"{spec}: {exc}") from None
        return cls(spec.strip(), learner, given)


def split_learners(values: Sequence[str]) -> tuple[str, ...]:
    """Learner specs given comma-separated or repeated: a piece ``SETTING=VALUE`` with no
    ``:`` belongs to the spec before it.

    >>> split_learners(["fqi,bc", "fqi:support=0.3,trees=50"])
    ('fqi', 'bc', 'fqi:support=0.3,trees=50')
    """
    out: list[str] = []
    for value in values:
        for piece in filter(None, (p.strip() for p in value.split(","))):
            setting = "=" in piece and ":" not in piece  # NAME=VALUE of the spec before
            more = ":" not in piece and "=" not in piece and piece not in LEARNERS
            if (setting or more) and out and ":" in out[-1]:
                out[-1] += f",{piece}"  # more of a value with commas (hidden=64,64)
            else:
                out.append(piece)
    return tuple(out)


def _parse_value(spec: str, key: str, raw: str, kind: type) -> Any:
    if raw.lower() == "none":
        return EXPLICIT_NONE
    try:
        if kind is bool:
            if raw.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(raw)
            return raw.lower() in ("true", "1", "yes")
        return kind(raw)
    except ValueError:
        what = {int: "a whole number", float: "a number", bool: "true or false"}
        raise BenchError(f"{spec}: {key}={raw} is not {what.get(kind, kind.__name__)}") \
            from None
