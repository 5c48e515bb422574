"""Reading one game from a JSON Lines log line, for the games whose logs are JSON Lines."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def game_object(text: str, fields: Sequence[str]) -> dict[str, Any]:
    """The JSON object on ``text``, which must hold ``fields``; ``ValueError`` says what is
    wrong otherwise.

    >>> game_object('{"a": 1, "b": 2}', ["a"])
    {'a': 1, 'b': 2}
    >>> game_object('[1]', ["a"])
    Traceback (most recent call last):
    ...
    ValueError: a game line is a JSON object
    """
    try:
        data = json.loads(text)
    except ValueError as e:
        raise ValueError(f"not JSON ({e})") from None
    if not isinstance(data, dict):
        raise ValueError("a game line is a JSON object")
    if missing := [k for k in fields if k not in data]:
        raise ValueError(f"missing fields {missing}")
    return data
