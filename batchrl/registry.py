"""A registry of named parts found as packages: the games (``batchrl.games.GAMES``) and the
learners (``batchrl.learners.LEARNERS``).

Each package under the registry's folder that exports an object of the registry's type
under its attribute (``GAME``, ``LEARNER``) is registered by the object's ``name`` the first
time the registry is read, so adding a part adds no line anywhere else; anything else
(a notebook, a test, another package) adds one with ``add``.

>>> from types import SimpleNamespace
>>> parts = Registry(str, "PART", "batchrl.nothing", [], "part", ValueError)
>>> _ = parts.add(SimpleNamespace(name="x"))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
TypeError: register_part takes a str, not namespace(name='x')
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import numbers
import pkgutil
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar

import numpy as np

from batchrl.records import shown

# what a Registry imports is declared beside it (its package's __lazy_imports__)
__lazy_imports__: tuple[str, ...] = ()

T = TypeVar("T")


class Registry(Mapping[str, T], Generic[T]):
    """Parts of type ``kind`` by name: the packages of ``package`` (its ``path``) that export
    one as ``attribute`` are imported on first use. ``clash(held, new)`` may refuse a new
    part that conflicts with one held under another name (a message, or None)."""

    def __init__(self, kind: type[T], attribute: str, package: str, path: Sequence[str],
                 what: str, error: type[Exception],
                 clash: Callable[[T, T], str | None] | None = None) -> None:
        self._parts: dict[str, T] = {}
        self._found = False
        self._finding = False  # a package being imported may read the registry
        self._lock = threading.RLock()
        self._kind, self._attribute, self._package, self._path = kind, attribute, package, path
        self._what, self._error, self._clash = what, error, clash

    def _find(self) -> None:
        with self._lock:
            if self._found or self._finding:
                return
            self._finding = True
            try:  # a package that fails to import fails every read, not only the first
                for module in pkgutil.iter_modules(self._path):
                    if module.ispkg:
                        imported = importlib.import_module(f"{self._package}.{module.name}")
                        part = getattr(imported, self._attribute, None)
                        name = getattr(part, "name", None)
                        if isinstance(part, self._kind) and name not in self._parts:
                            self._parts[str(name)] = part
                self._found = True
            finally:
                self._finding = False

    def add(self, part: T, replace: bool = False) -> T:
        self._find()
        if not isinstance(part, self._kind):
            raise TypeError(f"register_{self._what} takes a {self._kind.__name__}, not "
                            f"{part!r}")
        name = str(getattr(part, "name", ""))
        held = self._parts.get(name)
        if held is not None and held is not part and not replace:
            raise self._error(f"a {self._what} named {name!r} is registered already")
        if self._clash is not None:  # replacing takes the place of one part, no other's
            for other_name, other in self._parts.items():
                if other_name != name and (why := self._clash(other, part)):
                    raise self._error(why)
        self._parts[name] = part
        return part

    def remove(self, name: str) -> None:
        self._find()
        self._parts.pop(name, None)

    def __getitem__(self, name: str) -> T:
        self._find()
        return self._parts[name]

    def __iter__(self) -> Iterator[str]:
        self._find()
        return iter(sorted(self._parts))

    def __len__(self) -> int:
        self._find()
        return len(self._parts)


def make_dataclass_of(kind: Any, values: Mapping[str, Any], owner: str, what: str,
                      error: type[Exception]) -> Any:
    """A part's frozen dataclass (a game's ``Params``, a learner's ``Config``) made from
    ``values``; ``error`` names the fields it has for one it lacks, or says what the
    dataclass refused.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class P:
    ...     size: int = 3
    >>> make_dataclass_of(P, {"colour": 1}, "chess", "option", ValueError)
    Traceback (most recent call last):
    ...
    ValueError: chess has no option colour: its options are size
    """
    fields = {f.name for f in dataclasses.fields(kind)}
    if unknown := sorted(set(values) - fields):
        raise error(f"{owner} has no {what} {', '.join(unknown)}: its {what}s are "
                    f"{', '.join(sorted(fields)) or 'none'}")
    try:
        made = kind(**values)
    except (TypeError, ValueError) as exc:
        raise error(f"{owner}: {exc}") from None
    for f in dataclasses.fields(kind):
        if f.name in values and not of_type(values[f.name], f.type):
            raise error(f"{owner}: {what} {f.name} is {shown(values[f.name], 40)}, not "
                        f"{_KINDS[str(f.type)]}")
        if why := out_of_bounds(getattr(made, f.name), f.metadata):
            raise error(f"{owner}: {what} {f.name} {why}")
    return made


# a field's plain type, as a message names it (other types are the dataclass's to check)
_KINDS = {"bool": "true or false", "int": "a whole number", "float": "a number",
          "str": "a string"}


def of_type(value: Any, annotation: Any) -> bool:
    """Whether ``value`` is of a field's plain type (``bool``, ``int``, ``float``, ``str``;
    True for any other): a bool is no number and a number no bool.

    >>> of_type(True, "int"), of_type(3, "float"), of_type(2, "bool"), of_type([], "tuple")
    (False, True, False, True)
    """
    kind = str(getattr(annotation, "__name__", annotation))
    if kind not in _KINDS:
        return True
    if kind == "bool" or isinstance(value, bool | np.bool_):
        return kind == "bool" and isinstance(value, bool | np.bool_)
    return isinstance(value, {"int": numbers.Integral, "float": numbers.Real,
                              "str": str}[kind])


def out_of_bounds(value: Any, metadata: Mapping[str, Any]) -> str:
    """Why a number is not one a field takes ("" if it is): never NaN or infinite, and
    within the field's ``min`` and ``max`` (``min_open``/``max_open``: the bound itself
    excluded), as its command-line option takes it.

    >>> out_of_bounds(float("nan"), {}), out_of_bounds(1.5, {"max": 1.0})
    ('nan: want a finite number', '1.5: want at most 1')
    """
    if not isinstance(value, int | float) or isinstance(value, bool):
        return ""
    if not math.isfinite(value):
        return f"{value}: want a finite number"
    low, high = metadata.get("min"), metadata.get("max")
    if low is not None and (value < low or (metadata.get("min_open") and value == low)):
        return f"{value:g}: want {'more than' if metadata.get('min_open') else 'at least'} " \
               f"{low:g}"
    if high is not None and (value > high or (metadata.get("max_open") and value == high)):
        return f"{value:g}: want {'less than' if metadata.get('max_open') else 'at most'} " \
               f"{high:g}"
    return ""
