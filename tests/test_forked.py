"""Processes that read beside the ingest (`batchrl.forked`): forked only when asked, where
fork exists and no other thread could hold a lock at the fork, and their results taken
back in order."""

from __future__ import annotations

import multiprocessing
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import batchrl.forked as forked
from batchrl.cli import common

needs_fork = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                                reason="reading processes are forked; this platform has no "
                                       "fork")


@needs_fork
def test_processes_only_when_asked(fork_beside_threads) -> None:
    with forked.reading_processes(0) as none:
        assert none is None
    with forked.reading_processes(2) as pool:
        assert pool is not None and pool.submit(sum, [1, 2]).result() == 3


@needs_fork
def test_no_fork_beside_a_thread_that_may_hold_a_lock(monkeypatch) -> None:
    me = threading.current_thread()
    other, safe = threading.Thread(target=int), forked.fork_safe(threading.Thread(target=int))
    monkeypatch.setattr(threading, "enumerate", lambda: [me, other])
    assert not forked._alone()
    with forked.reading_processes(1) as readers:
        assert readers is None  # a notebook's kernel, say: read here
    monkeypatch.setattr(threading, "enumerate", lambda: [me, safe])
    assert forked._alone()
    with forked.reading_processes(1) as readers:
        assert readers is not None


def _fork_lock_held() -> bool:
    return forked.FORK_LOCK.locked()


def test_the_progress_lines_thread_lets_the_readers_fork(monkeypatch) -> None:
    """A piped command's progress lines come from a thread of their own (`heartbeat`): it
    is fork-safe, the readers fork beside it (and find the lock they forked under let
    go), and it waits for a fork in progress before it writes a line."""
    monkeypatch.setattr(common, "PIPED_EVERY", 0.01)
    lines: list[str] = []
    monkeypatch.setattr(common.click, "echo", lambda text, err: lines.append(text))
    every = threading.enumerate
    with common.heartbeat(10, "games"):
        beating = [t for t in threading.enumerate() if t.name == "batchrl-heartbeat"]
        assert len(beating) == 1 and beating[0] in forked._FORK_SAFE
        if "fork" in multiprocessing.get_all_start_methods():
            # the other threads of this test process aside (joblib's idle pool, say)
            me = threading.current_thread()
            monkeypatch.setattr(threading, "enumerate",
                                lambda: [t for t in every() if t in (me, beating[0])])
            with forked.reading_processes(1) as pool:
                assert pool is not None and pool.submit(_fork_lock_held).result() is False
            monkeypatch.setattr(threading, "enumerate", every)
        with forked.FORK_LOCK:
            lines.clear()  # the lines before: none is being written while this is held
            time.sleep(0.1)
            assert lines == []  # held back while a fork is under way
        waited = time.monotonic()
        while not lines and time.monotonic() - waited < 10:
            time.sleep(0.01)
    assert lines and lines[0].startswith("games: 0%")


@needs_fork
def test_no_fork_where_there_is_none_or_the_processes_cannot_start(monkeypatch) -> None:
    monkeypatch.setattr(forked, "_alone", lambda: True)

    class Unstartable(forked.ProcessPoolExecutor):
        def submit(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            raise OSError("cannot fork: out of memory")

    monkeypatch.setattr(forked, "ProcessPoolExecutor", Unstartable)
    with forked.reading_processes(1) as readers:
        assert readers is None
    monkeypatch.undo()
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    with forked.reading_processes(1) as readers:
        assert readers is None


@needs_fork
def test_a_pool_that_starts_in_part_is_stopped_and_the_reading_stays_here(monkeypatch):
    """A limit on processes met at the third fork: the two started are killed (nothing
    else would stop them, and this process would wait for them at its exit)."""
    monkeypatch.setattr(forked, "_alone", lambda: True)
    real, forks = forked.os.fork, []

    def limited() -> int:
        if len(forks) == 2:
            raise BlockingIOError("fork: Resource temporarily unavailable")
        forks.append(1)
        return real()

    before = set(multiprocessing.active_children())  # an earlier test's (joblib's workers)
    monkeypatch.setattr(forked.os, "fork", limited)
    with forked.reading_processes(4) as readers:
        assert readers is None
    monkeypatch.setattr(forked.os, "fork", real)
    assert len(forks) == 2 and set(multiprocessing.active_children()) <= before


def test_results_come_back_in_order_a_few_blocks_ahead() -> None:
    started: list[int] = []
    taken: list[int] = []

    def work(block: int) -> int:
        started.append(block)
        time.sleep(0.002 * (5 - block % 5))  # later blocks finish first
        return block * 10

    with ThreadPoolExecutor(3) as pool:
        for result in forked.in_order(pool, work, range(12), ahead=2):
            # no block starts more than `ahead` beyond the one taken
            assert max(started) <= result // 10 + 2
            taken.append(result)
    assert taken == [b * 10 for b in range(12)]


def test_usable_cores_follow_the_affinity(monkeypatch) -> None:
    monkeypatch.setattr(forked.os, "sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    assert forked.usable_cores() == 3
    monkeypatch.delattr(forked.os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(forked.os, "cpu_count", lambda: None)
    assert forked.usable_cores() == 1
