"""Files of a store on disk: flushing them and the time stamps written beside them."""

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
