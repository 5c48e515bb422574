"""Processes that read a log beside the ingest: forked, handed blocks of work, their
results taken back in order.

A reader that parses and checks in Python (Tressette's JSON lines, Hanabi's game files)
runs its blocks in these processes while the ingesting process makes and writes the
rows. They are forked, and only while this process runs no other Python thread (the
ingest's own start later) but those that take `FORK_LOCK` around anything they lock
(`fork_safe`: the command line's progress lines), so the copy holds no lock a thread
held at the fork (the threads of the BLAS and of Arrow's allocator are the C libraries'
own, and mind forks). The reading stays in the ingesting process where fork is missing
(Windows, macOS's default), where another thread runs (a notebook's kernel), or if the
processes cannot start. The blocks' results are the reader's own records, pickled
between a process and its fork: nothing another person hands us is unpickled.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import threading
import warnings
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from typing import Any, TypeVar

_B = TypeVar("_B")
_R = TypeVar("_R")

# blocks handed out beyond the one whose result is taken: enough to keep every process
# busy, few enough that the results waiting stay small
AHEAD = 4
# held while the readers fork, and by a `fork_safe` thread around whatever it locks
FORK_LOCK = threading.Lock()
# the longest the reading processes may take to start before the reading stays here
START_SECONDS = 60.0
_FORK_SAFE: weakref.WeakSet[threading.Thread] = weakref.WeakSet()


def fork_safe(thread: threading.Thread) -> threading.Thread:
    """``thread``, counted out of those that keep the readers from forking: it promises
    to hold `FORK_LOCK` around anything it does with a lock a reader could need (a line
    to stderr), and the readers fork only while holding it, so no copy finds such a
    lock held. (Its own locks, such as the event it waits on, no reader touches.)"""
    _FORK_SAFE.add(thread)
    return thread


def _alone() -> bool:
    """No Python thread runs here but this one and the `fork_safe` ones."""
    me = threading.current_thread()
    return all(t is me or t in _FORK_SAFE for t in threading.enumerate())


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the system tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1

def jobs_refused(options: Mapping[str, Any]) -> str:
    """Why an ingest's ``jobs`` option is no count of reading processes ("" where it is
    one, or not given).

    >>> jobs_refused({"jobs": 2}), jobs_refused({"jobs": -1}), jobs_refused({})
    ('', '', '')
    >>> jobs_refused({"jobs": -2})
    '--jobs -2: want 0 (read in this process), a number of processes, or -1 (one per core)'
    """
    jobs = options.get("jobs")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < -1):
        return (f"--jobs {jobs}: want 0 (read in this process), a number of processes, or -1 "
                f"(one per core)")
    return ""


def jobs_wanted(jobs: int | None, default: int) -> int:
    """The reading processes an ingest's ``jobs`` option asks for: ``default`` where it is
    not given, one per core for -1.

    >>> jobs_wanted(None, 1), jobs_wanted(3, 1), jobs_wanted(-1, 1) == usable_cores()
    (1, 3, True)
    """
    if jobs is None:
        return default
    return usable_cores() if jobs == -1 else jobs


@contextlib.contextmanager
def reading_processes(jobs: int) -> Iterator[Executor | None]:
    """``jobs`` forked processes that read, or None: read here (``jobs`` 0, no fork,
    another thread running, or processes that cannot start)."""
    pool = None
    if jobs > 0 and "fork" in multiprocessing.get_all_start_methods() and _alone():
        try:
            pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"),
                                       initializer=_reader_started)
            with FORK_LOCK, warnings.catch_warnings():
                # Python 3.12 warns of any fork beside a thread: the fork_safe ones are
                # why this one is safe
                warnings.filterwarnings("ignore", r".*use of fork\(\) may lead to deadlocks",
                                        DeprecationWarning)
                # every process forks now: a fork pool starts them all at its first task
                started = pool.submit(int)
            started.result(timeout=START_SECONDS)
        except Exception:
            # no fork (a limit on processes), no thread, no start in time: read here
            if pool is not None:
                _abandon(pool)
            pool = None
    if pool is None:
        yield None
        return
    try:
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _reader_started() -> None:
    """A reading process's start: no cyclic collector (a reader makes many small objects
    and no cycles: the collector would only walk them), and `FORK_LOCK` let go (this
    copy of it was taken by the thread that forked, which is not in this process)."""
    gc.disable()
    if FORK_LOCK.locked():
        FORK_LOCK.release()


def _abandon(pool: ProcessPoolExecutor) -> None:
    """A pool that did not start whole: the processes it did start killed (no task will
    tell them to stop, and a process that waits for one would keep this one from
    exiting), then the pool let go."""
    # the processes started so far are the pool's own record of them (a private field,
    # read defensively: where it is missing, shutdown alone is what is left)
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.kill()
        process.join()
    pool.shutdown(wait=False, cancel_futures=True)


def in_order(pool: Executor, work: Callable[[_B], _R], blocks: Iterable[_B],
             ahead: int = AHEAD) -> Iterator[_R]:
    """``work(block)`` of each block, run on ``pool`` up to ``ahead`` blocks beyond the
    one whose result is yielded, the results in the blocks' order.

    >>> from concurrent.futures import ThreadPoolExecutor
    >>> with ThreadPoolExecutor(2) as pool:
    ...     list(in_order(pool, sum, [[1, 2], [3], [4, 5, 6]], ahead=1))
    [3, 3, 15]
    """
    waiting: deque[Future[_R]] = deque()
    for block in blocks:
        waiting.append(pool.submit(work, block))
        if len(waiting) > ahead:
            yield waiting.popleft().result()
    while waiting:
        yield waiting.popleft().result()
