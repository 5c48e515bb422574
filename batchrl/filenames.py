"""Names from logs in file names: a player's name in a log can hold anything, even a path.

Every default file name that holds a player's (or a feature's) name goes through
`safe_name`, and is joined to its folder by `inside`, which refuses a name that would
lead out of it: what a command writes stays under the store or the ``--out`` given.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

# a name kept whole when it is short and of these characters only
SAFE_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
LONGEST = 48


def safe_name(text: str) -> str:
    """``text`` for a file name: letters, digits, ``.``, ``_`` and ``-`` kept; a leading
    ``!`` (leave out) reads ``not-``, ``*`` ``any`` and ``?`` ``one``. Anything else, a
    leading dot or a name over 48 characters gives a slug of it and 8 hex digits of its
    sha256, so two names never share a file and no name is a path.

    >>> safe_name("!DeepStack"), safe_name("*.1"), safe_name("random-1")
    ('not-DeepStack', 'any.1', 'random-1')
    >>> safe_name("../../../../tmp/x"), safe_name("a/b"), safe_name("a_b")
    ('tmp_x-6e26be7d', 'a_b-c14cddc0', 'a_b')
    >>> safe_name(".."), len(safe_name("x" * 300))
    ('_-5ec1f7e7', 57)
    """
    spelled = text.replace("!", "not-", 1) if text.startswith("!") else text
    spelled = spelled.replace("*", "any").replace("?", "one")
    if spelled and len(spelled) <= LONGEST and set(spelled) <= SAFE_CHARACTERS \
            and not spelled.startswith("."):
        return spelled
    slug = "".join(c if c in SAFE_CHARACTERS else "_" for c in spelled).lstrip("._")
    return f"{slug[:LONGEST] or '_'}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def inside(folder: Path, name: str) -> Path:
    """``folder / name``, refused if ``name`` would lead out of ``folder`` (a guard behind
    `safe_name`: a name made of a log's content must never be a path)."""
    path = folder / name
    if Path(name).name != name or name in ("", ".", ".."):
        raise ValueError(f"{name!r} is not a file name of {folder}: a name from a log or a "
                         "store never becomes a path")
    return path
