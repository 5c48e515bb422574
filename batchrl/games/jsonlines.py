"""Reading one game from a JSON Lines log line, for the games whose logs are JSON Lines."""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from batchrl.records import MAX_LINE


def game_object(text: str, fields: Sequence[str]) -> dict[str, Any]:
    """The JSON object on ``text``, which must hold ``fields``; ``ValueError`` says what is
    wrong otherwise: a line over ``batchrl.records.MAX_LINE`` characters is not parsed,
    and one nested deeper than Python's parser goes is refused, not a ``RecursionError``.

    >>> game_object('{"a": 1, "b": 2}', ["a"])
    {'a': 1, 'b': 2}
    >>> game_object('[1]', ["a"])
    Traceback (most recent call last):
    ...
    ValueError: a game line is a JSON object
    >>> game_object('{"a": ' + '[' * 100_000 + ']' * 100_000 + '}', ["a"])
    Traceback (most recent call last):
    ...
    ValueError: not JSON (nested too deep: a game line nests a few levels)
    """
    if len(text) > MAX_LINE:
        raise ValueError(f"a line of more than {MAX_LINE:,} characters: no game's line is "
                         f"near that long")
    data = parse_json(text)
    if not isinstance(data, dict):
        raise ValueError("a game line is a JSON object")
    if missing := [k for k in fields if k not in data]:
        raise ValueError(f"missing fields {missing}")
    return data


_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}|[\ud800-\udfff]")
MAX_DEPTH = 100  # a game's line or export nests a few levels
# possessive, its closing quote optional: each string is read once, even a line of
# unclosed ones (a backtracking match from each quote would take quadratic time)
_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"?', re.S)
_STEP = np.zeros(256, np.int64)  # a byte's change to the depth
_STEP[[ord("["), ord("{")]], _STEP[[ord("]"), ord("}")]] = 1, -1
_DEEP = "not JSON (nested too deep: a game line nests a few levels)"


def nesting(text: str) -> int:
    """How deep the arrays and objects of ``text`` nest (brackets inside strings aside),
    counted only where ``text`` opens more than ``MAX_DEPTH`` of them (else 0).

    >>> nesting('{"a": ' + "[" * 150 + '"]]"' + "]" * 150 + "}")
    151
    >>> nesting("[" + "[1], " * 150 + "[1]]")  # many arrays, shallow
    2
    >>> nesting("[[1]]")
    0
    >>> nesting("[" * 101 + '"' + '\\\\"' * 100_000)  # an unclosed string, read once
    101
    """
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return 0
    # the depth after each character, as a running sum (a bracket is one byte in UTF-8,
    # and no other character's bytes are one)
    outside = _STRING.sub('""', text).encode("utf-8", "surrogatepass")
    return int(np.cumsum(_STEP[np.frombuffer(outside, np.uint8)]).max(initial=0))


_UNREAD = object()
_DIGITS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))  # a digit "0", else " "
_LONG_NUMBER = b"0" * 19  # a whole number outside 64 bits has 19 digits or more


@functools.cache
def _compiled() -> Callable[[str], Any] | None:
    """orjson's ``loads`` where it is installed (``pip install 'batchrl[fast]'``: the same
    values as ``json.loads``, five times quicker on the Hanabi report's lines), else None."""
    try:
        # an optional extra: imported on the first line read, never required
        import orjson
    except ImportError:
        return None
    loads: Callable[[str], Any] = orjson.loads
    return loads


def line_parser(text: str) -> Callable[[str], Any]:
    """`parse_json` for the lines of ``text`` (a whole file): the same values and errors,
    with the checks that hold for the file as a whole made once for it. Where orjson is
    installed and the file is ASCII, with no escape and no whole number past 64 bits,
    every line goes to orjson and none needs the surrogate scan; a line keeps its own
    nesting check, and one orjson refuses goes to `parse_json`, which reads it as
    ``json`` does or words the error.

    >>> parse = line_parser('{"a": 1}\\n[2]\\n')
    >>> [parse(line) for line in ('{"a": 1}', '[2]')]
    [{'a': 1}, [2]]
    >>> line_parser('{"n": 123456789012345678901}') is parse_json  # orjson reads a float
    True
    """
    fast = _compiled()
    if fast is None or not text.isascii() or "\\u" in text or \
            _LONG_NUMBER in text.encode().translate(_DIGITS):
        return parse_json
    compiled = fast  # bound for the closure (mypy: not None)

    def parse(line: str) -> Any:
        if nesting(line) > MAX_DEPTH:
            raise ValueError(_DEEP)
        try:
            return compiled(line)
        except ValueError:  # NaN, which json reads, or no JSON: json's reading and words
            return parse_json(line)

    return parse


def parse_json(text: str) -> Any:
    """``json.loads`` (orjson's where installed, the same values), its errors all
    ``ValueError`` with a short message: not JSON, a number of thousands of digits,
    nesting deeper than the parser goes, a string with a lone surrogate (``"\\udc80"``:
    no character, so no text a store or a terminal takes).

    >>> parse_json('{"name": "ok \\\\ud83d\\\\ude00"}')["name"][-1] == "\\U0001f600"
    True
    >>> parse_json('{"name": "bad \\\\udc80"}')
    Traceback (most recent call last):
    ...
    ValueError: not text: a string holds a lone surrogate (\\udc80), which is no character
    """
    if nesting(text) > MAX_DEPTH:  # refused before the parser recurses: at its limit a
        raise ValueError(_DEEP)     # finalizer that runs fails, and says so on stderr
    try:
        fast = _compiled()
        data = _UNREAD
        ascii_only = text.isascii()
        # orjson reads a whole number past 64 bits as a float: such text, and any not
        # ASCII, is json's; what orjson refuses (NaN) json may read, and words its
        # errors as the users know them
        if fast is not None and ascii_only and \
                _LONG_NUMBER not in text.encode().translate(_DIGITS):
            with contextlib.suppress(ValueError):
                data = fast(text)
        if data is _UNREAD:
            data = json.loads(text)
        # a pair is one character; one alone is none (written as an escape, or a string
        # that is no text; an ASCII string without an escape holds neither)
        if ("\\u" in text or not ascii_only) and _SURROGATE.search(text):
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        return data
    except UnicodeEncodeError as e:
        bad = e.object[e.start:e.end].encode("unicode_escape", "backslashreplace").decode()
        raise ValueError(f"not text: a string holds a lone surrogate ({bad}), which is no "
                         "character") from None
    except RecursionError:  # a deep stack already: the parser's own limit comes first
        raise ValueError(_DEEP) from None
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON ({e})") from None
    except ValueError:  # int() of a number past 4,300 digits
        raise ValueError("not JSON (a number of thousands of digits)") from None
