"""The TOML that hand histories are written in, read fast: one ``key = value`` a line.

PHH files are TOML, and ``tomllib`` reads them right but slowly for ten thousand small
files (about 0.15 ms a hand here, half of a hand's whole reading). Nearly every hand
history uses a small part of the language: bare keys, one value a line (a string in
either quotes without escapes, a whole or decimal number, ``true``/``false``, or an
array of those on the same line), comments, and ``[N]`` table headers (``.phhs``).
`loads` reads that part and gives exactly what ``tomllib.loads`` gives; anything else
(a multi-line array, an escape, a date, a dotted key, a key twice, a control
character) makes it return None, and the caller reads the text with ``tomllib``, which
either reads it or says what is wrong where. A test holds the two readers to the same
results on real and mutated files.

>>> loads("variant = 'NT'  # a comment\\nantes = [0, 25]\\nx = 1.5\\nok = true\\n")
{'variant': 'NT', 'antes': [0, 25], 'x': 1.5, 'ok': True}
>>> loads('actions = ["a", \\n  "b"]\\n') is None   # a multi-line array: tomllib's
True
"""

from __future__ import annotations

import re
from typing import Any

_KEY = re.compile(r"[ \t]*([A-Za-z0-9_-]+)[ \t]*=[ \t]*")
_HEADER = re.compile(r"[ \t]*\[[ \t]*(?:([A-Za-z0-9_-]+)|'([^'\n]*)'|\"([^\"\\\n]*)\")[ \t]*\]"
                     r"[ \t]*(?:#.*)?")
# one scalar: a literal string, a basic string without escapes, a decimal number (no
# leading zeros, no exponent, no underscores: TOML's own rules for what it allows), a
# whole number, a boolean
_SCALAR = (r"'([^'\n]*)'|\"([^\"\\\n]*)\"|(-?(?:0|[1-9][0-9]*)\.[0-9]+)(?![0-9eE_.])"
           r"|(-?(?:0|[1-9][0-9]*))(?![0-9eE_.xob])|(true|false)(?![A-Za-z0-9_-])")
_VALUE = re.compile(_SCALAR)
_ITEM = re.compile(r"[ \t]*(?:" + _SCALAR + r")[ \t]*(,|\])")
_END = re.compile(r"[ \t]*(?:#[^\n]*)?")
_EMPTY = re.compile(r"\[[ \t]*\]")
# arrays of one kind, read whole: what nearly every hand history's arrays are
_WHOLE = r"-?(?:0|[1-9][0-9]*)"
_SEP = r"[ \t]*,[ \t]*"
_INTS = re.compile(rf"\[[ \t]*{_WHOLE}(?:{_SEP}{_WHOLE})*(?:[ \t]*,)?[ \t]*\]")
_LITERALS = re.compile(rf"\[[ \t]*'[^'\n]*'(?:{_SEP}'[^'\n]*')*(?:[ \t]*,)?[ \t]*\]")
_BASICS = re.compile(rf"\[[ \t]*\"[^\"\\\n]*\"(?:{_SEP}\"[^\"\\\n]*\")*(?:[ \t]*,)?[ \t]*\]")
_LITERAL = re.compile(r"'([^'\n]*)'")
_BASIC = re.compile(r"\"([^\"\\\n]*)\"")
# what TOML forbids in a file, or what this reader leaves to tomllib: control characters
# but the tab, and a carriage return (a CRLF file is tomllib's)
_UNUSUAL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _scalar(groups: tuple[str | None, ...]) -> Any:
    literal, basic, decimal, whole, boolean = groups
    if literal is not None:
        return literal
    if basic is not None:
        return basic
    if decimal is not None:
        return float(decimal)
    if whole is not None:
        return int(whole)
    return boolean == "true"


def loads(text: str) -> dict[str, Any] | None:
    """``text`` as ``tomllib.loads`` reads it, or None where it holds more of TOML than
    this reader reads (the caller then asks ``tomllib``)."""
    if _UNUSUAL.search(text):
        return None
    document: dict[str, Any] = {}
    table = document
    try:
        for line in text.split("\n"):
            stripped = line.strip(" \t")
            if not stripped or stripped[0] == "#":
                continue
            if stripped[0] == "[":
                header = _HEADER.fullmatch(line)
                if header is None:
                    return None
                name = next(g for g in header.groups() if g is not None)
                if name in document:
                    return None
                table = document[name] = {}
                continue
            key = _KEY.match(line)
            if key is None or key.group(1) in table:
                return None
            at = key.end()
            if line.startswith("[", at):
                values: list[Any] = []
                if (whole := _INTS.match(line, at)) is not None:
                    values = [int(v) for v in line[at + 1:whole.end() - 1].split(",")
                              if v.strip(" \t")]
                    at = whole.end()
                elif (whole := _LITERALS.match(line, at) or _BASICS.match(line, at)):
                    quoted = _LITERAL if line[whole.start():whole.end()].lstrip("[ \t")[0] \
                        == "'" else _BASIC
                    values = quoted.findall(line, at, whole.end())
                    at = whole.end()
                elif (empty := _EMPTY.match(line, at)) is not None:
                    at = empty.end()
                else:
                    at += 1
                    while True:
                        item = _ITEM.match(line, at)
                        if item is None:
                            return None
                        values.append(_scalar(item.groups()[:5]))
                        at = item.end()
                        if item.group(6) == "]":
                            break
                value: Any = values
            else:
                scalar = _VALUE.match(line, at)
                if scalar is None:
                    return None
                value, at = _scalar(scalar.groups()), scalar.end()
            if _END.fullmatch(line, at) is None:
                return None
            table[key.group(1)] = value
    except ValueError:  # a number of more digits than Python converts: tomllib says so
        return None
    return document
