"""Tressette logs into store rows, for ``batchrl.ingest``: the rows of each chunk of
games, and JSON lines read and checked in a worker process beside them.

Every game reaches the rows as a ``DealRef``: its place in a ``transitions.Deals``
(the whole deals of a block of records, as arrays), or why it cannot be encoded (a
cut transcript's partial deal). A reading process (``reading``) turns a block of
1,024 JSON lines into arrays and sends them back (a few KB); here the records come
out in line order, as ``read_tressette`` gives them, so the ingest's
chunks, report and errors are those of one process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import itertools
import multiprocessing
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from batchrl.games.errors import RejectedRecord
from batchrl.games.holdem.transitions import Chunk
from batchrl.games.tressette import transitions as tt
from batchrl.store import StoreSchema
from parsers.acpc import BadLine
from parsers.tressette import LoggedGame, read_tressette_for_ingest

if TYPE_CHECKING:
    from batchrl.ingest import SourceReport

# JSON lines a reading process reads and checks at a time.
READ_BLOCK_LINES = 1024


@dataclass(frozen=True, slots=True)
class DealRef:
    """A game on its way to the rows: its place ``at`` in ``deals``, or why it cannot be
    encoded (``refused``)."""

    source: str
    line: int
    index: int  # its place among the log's games: its episode's number
    deals: tt.Deals
    at: int
    refused: str | None = None


def _whole(records: Iterable[Any]) -> tuple[tt.Deals, list[Any]]:
    """The whole deals among ``records`` as one ``Deals``, and each record in order: a
    bad line as it is, a game as (its line, its place in the deals or -1 for a deal that
    is not whole)."""
    games: list[LoggedGame] = []
    entries: list[Any] = []
    for record in records:
        if not isinstance(record, LoggedGame):
            entries.append(record)
        elif record.game.whole_deal:
            entries.append((record.line, len(games)))
            games.append(record)
        else:
            entries.append((record.line, -1))
    return tt.Deals.of(games), entries


def _ref(source: str, line: int, index: int, deals: tt.Deals, at: int) -> DealRef:
    return DealRef(source, line, index, deals, at, None if at >= 0 else tt.CUT_TRANSCRIPT)


def deal_refs(games: list[LoggedGame]) -> list[DealRef]:
    """Games read here, each as a ``DealRef`` into one ``Deals`` of the whole deals."""
    deals, entries = _whole(games)
    return [_ref(g.source, g.line, g.index, deals, at)
            for g, (_, at) in zip(games, entries, strict=True)]


def source(report: SourceReport, prefix: str, reward: str, suits: str
           ) -> tuple[StoreSchema, Callable[[list[Any]], Chunk]]:
    """The store's schema and the rows of a chunk of games (records or ``DealRef``): every
    play checked in lockstep, one row per card played. ``ValueError`` for an unknown
    reward or suit order."""
    schema = tt.schema(reward, suits)
    report.game = tt.GAME_NAME
    if reward != "points":
        report.notes.append(f"rewards: {reward} (the seed's per-card shaping, plus the "
                            f"team's points at the end)")
    cut = [0]  # hands cut short kept so far, over every chunk

    def process(chunk: list[Any]) -> Chunk:
        refs = chunk if isinstance(chunk[0], DealRef) else deal_refs(chunk)
        whole = [r for r in refs if r.refused is None]
        deals = _deals(whole)
        columns, places = tt.deal_rows(deals, prefix, reward, suits, dictionaries=True)
        refused = [(r, r.refused) for r in refs if r.refused is not None] \
            + [(whole[i], why) for i, why in places]
        kept = np.ones(len(deals), dtype=bool)
        kept[[i for i, _ in places]] = False
        cut[0] += int(((deals.lengths < 40) & kept).sum())
        if cut[0]:
            note = f"{cut[0]:,} hand(s) cut short: kept, each seat's last row truncated"
            report.notes[:] = [n for n in report.notes if "cut short: kept" not in n] + [note]
        return Chunk(columns, len(refs) - len(refused), len(columns["step"]),
                     [(r, RejectedRecord(why, "illegal hand")) for r, why in refused])

    return schema, process


def _deals(refs: list[DealRef]) -> tt.Deals:
    """The deals of ``refs`` (whole ones), in order, numbered as their log numbers them.
    Runs of refs into one block's deals are taken together (the refs hold the blocks, so
    no two live blocks share an id)."""
    parts = [block[0].deals.take(np.fromiter((r.at for r in block), np.int64))
             for _, group in itertools.groupby(refs, key=lambda r: id(r.deals))
             for block in [list(group)]]
    deals = tt.Deals.concat(parts)
    return dataclasses.replace(deals, index=np.fromiter((r.index for r in refs), np.int64,
                                                        count=len(refs)))


def _read_block(texts: list[str], source: str, start: int) -> tuple[tt.Deals, list[Any]]:
    """A reading process's work: lines read and checked (all but the plays, which the
    rows check in lockstep), the whole deals as arrays and each line's record
    (``_whole``): a few KB to send back."""
    return _whole(read_tressette_for_ingest(texts, source, start))


@contextlib.contextmanager
def reading(lines: Iterable[str], source: str, jobs: int | None
            ) -> Iterator[Iterator[Any] | None]:
    """The records of JSON lines read and checked by ``jobs`` processes a few blocks
    ahead (None: one if this process may use two cores or more), in line order, the games
    as ``DealRef``; or None where the lines are read here (``_readers``)."""
    with _readers(jobs) as readers:
        yield None if readers is None else _records(lines, source, readers)


def _records(lines: Iterable[str], source: str, readers: Executor) -> Iterator[Any]:
    def blocks() -> Iterator[tuple[tt.Deals, list[Any]]]:
        ahead: deque[Future[tuple[tt.Deals, list[Any]]]] = deque()
        numbered = zip(itertools.count(1), lines)
        while texts := list(itertools.islice(numbered, READ_BLOCK_LINES)):
            ahead.append(readers.submit(_read_block, [t for _, t in texts], source,
                                        texts[0][0]))
            if len(ahead) > 4:
                yield ahead.popleft().result()
        while ahead:
            yield ahead.popleft().result()

    index = 0  # games so far: what read_tressette numbers them
    for deals, entries in blocks():
        for entry in entries:
            if isinstance(entry, BadLine):
                yield entry
                continue
            yield _ref(source, entry[0], index, deals, entry[1])
            index += 1


def default_jobs() -> int:
    """One reading process if this process may use two cores or more, else none."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
        else os.cpu_count() or 1
    return 1 if cores >= 2 else 0


@contextlib.contextmanager
def _readers(jobs: int | None) -> Iterator[Executor | None]:
    """Processes that read and check lines, or None: read here.

    They are forked, and only while this process runs no other Python thread (the
    ingest's own start later), so the copy holds no lock a thread held at the fork (the
    threads of the BLAS and of Arrow's allocator are the C libraries' own, and mind
    forks). The reading stays here where fork is missing (Windows, macOS's default),
    where another thread runs (a notebook's kernel), or if the processes cannot start."""
    jobs = default_jobs() if jobs is None else jobs
    pool = None
    if jobs > 0 and "fork" in multiprocessing.get_all_start_methods() \
            and threading.active_count() == 1:
        # the readers make many small objects and no cycles: the collector would only
        # walk them
        pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"),
                                   initializer=gc.disable)
        try:
            pool.submit(int).result()  # the processes start now, before any thread
        except (OSError, BrokenProcessPool):
            pool.shutdown(wait=True, cancel_futures=True)
            pool = None
    if pool is None:
        yield None
        return
    try:
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
