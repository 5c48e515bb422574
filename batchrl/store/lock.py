"""One writer at a time: an OS lock on a store's directory.

Whatever changes a store (an ingest, creating it, landing or removing a part) holds
``ROOT/.lock`` with ``fcntl.flock``; the kernel lets it go when its process ends, killed
or not, so no stale lock is ever left to clear by hand. A second writer waits for the
first (told why, through ``on_wait``), or gives up after ``wait`` seconds. Readers take
no lock: parts land whole by ``os.replace`` (see ``batchrl.store``).

The lock is per process and re-entrant: an ingest holds it over all its sources, and
the `Store.create` and `SourceWriter` inside it take it again without waiting on
themselves. Where ``fcntl`` is missing (Windows) nothing is locked, and a warning says
so once.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

from batchrl.records import STORE_LOCK
from batchrl.store.files import now
from batchrl.store.schema import StoreError

try:
    import fcntl

    CAN_LOCK = True
except ImportError:  # pragma: no cover - Windows
    CAN_LOCK = False

LOCK_NAME = STORE_LOCK
# how often a writer given a time limit tries the lock again
POLL_SECONDS = 0.1

_held: dict[str, tuple[int, int]] = {}  # resolved root -> (file descriptor, depth)
_guard = threading.Lock()


def _forget_in_child() -> None:
    """A forked child (a reading process of the ingest, say) shares its parent's open
    files, and a ``flock`` lasts while any copy of the descriptor is open: the child
    closes its copies, so the lock still goes with the parent, killed or not. (The
    parent's descriptor keeps the lock; ``_guard`` is not taken here, as another thread
    may have held it at the fork.)"""
    for fd, _ in list(_held.values()):
        with contextlib.suppress(OSError):
            os.close(fd)
    _held.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


class StoreBusy(StoreError):
    """Another writer held the store for longer than the caller would wait."""


def holder(root: Path) -> str:
    """Who holds (or last held) the lock, as the holder wrote it: pid, command, since (its
    first line, at most 200 characters, control characters escaped; never through a link
    or from anything but a regular file)."""
    try:
        fd = _open_lock(Path(root) / LOCK_NAME, create=False)
    except (OSError, StoreError):
        return "another batchrl process"
    try:
        text = os.pread(fd, 400, 0).decode("utf-8", "replace")
    except OSError:
        text = ""
    finally:
        os.close(fd)
    line = (text.strip().splitlines() or [""])[0][:200]
    line = "".join(c if c.isprintable() else repr(c)[1:-1] for c in line)
    return line or "another batchrl process"


def _open_lock(path: Path, create: bool = True) -> int:
    """The lock file's descriptor: never through a symbolic link (a link planted in a
    shared store would have the next writer write where it points), and only a regular
    file (a FIFO would block, a device is no lock); `StoreError` naming it otherwise."""
    flags = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | (os.O_CREAT if create else 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise StoreError(f"{path} is a symbolic link, not the store's lock file: batchrl "
                             "never writes through one; remove it and run again") from None
        raise
    held = os.fstat(fd)
    if not stat.S_ISREG(held.st_mode):
        os.close(fd)
        raise StoreError(f"{path} is not a regular file, so not the store's lock file; "
                         "remove it and run again")
    if held.st_nlink != 1:  # a hard link to another file: writing would change that file
        os.close(fd)
        raise StoreError(f"{path} is a hard link to another file ({held.st_nlink} names), "
                         "not the store's lock file; remove it and run again")
    return fd


@contextlib.contextmanager
def store_lock(root: str | Path, wait: float | None = None,
               on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold the store at ``root`` for writing (made if missing, as an empty directory).

    ``wait``: seconds to wait for another writer (None: as long as it takes; 0: not at
    all), then `StoreBusy`; ``on_wait`` is told once, in words, that this one waits.
    """
    root = Path(root)
    _refuse_foreign(root)
    key = str(root.resolve())
    with _guard:
        if key in _held:
            fd, depth = _held[key]
            _held[key] = fd, depth + 1
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield
        finally:
            with _guard:
                fd, depth = _held[key]
                _held[key] = fd, depth - 1
        return
    if not CAN_LOCK:  # pragma: no cover - Windows
        warnings.warn("no fcntl on this platform: batchrl does not lock stores here; run "
                      "one writer (ingest) per store at a time", RuntimeWarning, stacklevel=3)
        yield
        return
    fd = _acquire(root, wait, on_wait)
    with _guard:
        _held[key] = fd, 1
    try:
        yield
    finally:
        with _guard:
            del _held[key]
        os.close(fd)  # the kernel drops the lock with the descriptor


def _refuse_foreign(root: Path) -> None:
    """A directory that holds other things than a store is not made one (no lock file
    left in it either)."""
    if root.exists() and not root.is_dir():
        raise StoreError(f"{root} is a file, not a batchrl store: use a new or empty --store "
                         "directory")
    if root.is_dir() and not (root / "store.json").exists():
        foreign = [p.name for p in root.iterdir()
                   if p.name not in (LOCK_NAME, "store.json")  # store.json: made meanwhile
                   and not p.name.startswith(".store.json.tmp-")
                   and not (p.name == "parts" and p.is_dir() and not any(p.glob("*.parquet")))]
        if foreign:
            raise StoreError(f"{root} exists and is not a batchrl store (no store.json; it "
                             f"holds {', '.join(sorted(foreign)[:3])}"
                             f"{', ...' if len(foreign) > 3 else ''}): use a new or empty "
                             "--store directory")


def _acquire(root: Path, wait: float | None, on_wait: Callable[[str], None] | None) -> int:
    """The descriptor of ``root``'s lock file, locked. A writer that gave up on an empty
    store removes the directory, lock file and all, under its lock: a waiter then holds
    a lock on a file no longer there, so it checks, and tries again on the new one."""
    deadline = None if wait is None else time.monotonic() + wait
    told = False
    while True:
        root.mkdir(parents=True, exist_ok=True)
        path = root / LOCK_NAME
        try:
            fd = _open_lock(path)
        except FileNotFoundError:  # the directory went between the two calls
            continue
        try:
            locked = _try(fd)
            if not locked:
                if not told and on_wait is not None:
                    limit = ("" if wait is None else
                             f" (for {wait:g} s at most)")
                    on_wait(f"store {root} is being written by {holder(root)}: waiting for "
                            f"it to finish{limit}")
                told = True
                locked = _wait(fd, deadline)
            if not locked:
                raise StoreBusy(f"store {root} is being written by {holder(root)}, and "
                                f"--wait {wait:g} s ran out: try again when it is done (a "
                                "store takes one writer at a time)")
            if _same_file(fd, path):
                _say_who(fd)
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # a lock on a removed file: take the new one


def _try(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        if e.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return False
        raise
    return True


def _wait(fd: int, deadline: float | None) -> bool:
    if deadline is None:
        fcntl.flock(fd, fcntl.LOCK_EX)  # until the other writer is done (or dies)
        return True
    while time.monotonic() < deadline:
        time.sleep(min(POLL_SECONDS, max(0.0, deadline - time.monotonic())))
        if _try(fd):
            return True
    return False


def _same_file(fd: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (on_disk.st_dev, on_disk.st_ino)


def _say_who(fd: int) -> None:
    """Write who holds the lock into the lock file, for a writer that waits on it."""
    program = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"
    if program in ("__main__.py", "batchrl"):
        program = "batchrl"
    command = " ".join([program, *sys.argv[1:6], *(["..."] if len(sys.argv) > 6 else [])])
    text = f"pid {os.getpid()} ({command}), since {now()}\n"
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, text.encode(), 0)
