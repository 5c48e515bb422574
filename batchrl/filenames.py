"""Names from logs in file names: a player's name in a log can hold anything, even a path.

Every default file name that holds a player's (or a feature's) name goes through
`safe_name`, and is joined to its folder by `inside`, which refuses a name that would
lead out of it: what a command writes stays under the store or the ``--out`` given.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
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


STALE_SECONDS = 3600.0


def clear_leftovers(folder: Path, name: str) -> None:
    """Remove what a killed run left of ``name`` in ``folder``: its temporary files and
    directories, ``.NAME.tmp-PID`` (and ``.NAME.tmp-PID-…``), whose process ``PID`` is
    gone from this machine and which nothing touched for ``STALE_SECONDS`` (a writer on
    another machine sharing the folder has PIDs this one cannot see); a live writer's are
    left alone.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> (folder / ".m.npz.tmp-999999999").write_text("half")
    4
    >>> (folder / f".m.npz.tmp-{os.getpid()}").write_text("mine")
    4
    >>> clear_leftovers(folder, "m.npz")  # the dead one is too new yet
    >>> len(list(folder.iterdir()))
    2
    >>> os.utime(folder / ".m.npz.tmp-999999999", (0, 0))
    >>> clear_leftovers(folder, "m.npz")
    >>> sorted(p.name for p in folder.iterdir()) == [f".m.npz.tmp-{os.getpid()}"]
    True
    """
    prefix = f".{name}.tmp-"
    try:
        entries = list(folder.iterdir())
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        pid = entry.name[len(prefix):].split("-")[0]
        try:
            touched = entry.lstat().st_mtime
        except OSError:
            continue
        if not pid.isdigit() or _alive(int(pid)) or time.time() - touched < STALE_SECONDS:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # someone else's, or not a pid this machine has: left alone
    return True
