"""Files of a store on disk: flushing them, telling a file from its replacement, and the time
stamps written beside them."""

from __future__ import annotations

import contextlib
import os
from datetime import UTC, datetime
from pathlib import Path


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def fsync(path: Path) -> None:
    """Flush a file or a directory entry to disk; skipped where directories can't be opened."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def file_key(path: Path | None) -> tuple[int, ...] | None:
    """What changes when a local file is replaced or written (a writer replaces a part by
    renaming a new file over it); None for no local path, or one that cannot be stat'ed."""
    if path is None:
        return None
    try:
        got = os.stat(path)
    except OSError:
        return None
    return got.st_dev, got.st_ino, got.st_size, got.st_mtime_ns, got.st_ctime_ns
