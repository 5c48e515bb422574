"""Logs into a store: find each source's format and game, check every record, write rows.

The format of a source (a log file, or a directory of game files) is told from its
content by the formats the modules of ``parsers/`` register (``--format`` forces one);
the format names the game, and the game (``batchrl.games.GAMES``) turns its records
into rows (`batchrl.games.LogFace.open_source`). Nothing here knows any one game.

Each source lands whole or not at all: its rows stream into a temporary part that
replaces the source's earlier part only when the source is done. With
``on_error="skip"`` a bad line or an illegal hand is counted, reported and left out,
and the good hands around it are kept; with ``"fail"`` the first one stops the source
with an error naming the file, the line and what was wrong. A last line cut off
mid-write is never an error: it is dropped with a note.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections import Counter, deque
from collections.abc import Callable, Generator, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import parsers  # noqa: F401  (the built-in log formats register themselves)
from batchrl.cluster import connect, scheduler_address, workers
from batchrl.games import (
    FORMATS,
    GAMES,
    Format,
    GameError,
    Source,
    SourceContext,
    SourceError,
    get_game,
    sniff_format,
)
from batchrl.records import (
    MAX_MESSAGE,
    SNIFF_LINES,
    BadLine,
    LogLines,
    Skipped,
    directory_files,
    excerpt,
    regular_file,
)
from batchrl.store import RowsBatch, Store, StoreError, file_digest
from batchrl.store.lock import LOCK_NAME, store_lock
from batchrl.store.place import writable

# Examples of each kind of skipped line kept for the report.
EXAMPLES_PER_KIND = 3
# The longest message kept or shown whole: a file, a line and a reader's own message
# (itself cut to ``MAX_MESSAGE``); a log's values come back as excerpts, never whole.
MESSAGE_LIMIT = 2 * MAX_MESSAGE


class IngestError(Exception):
    """A source that cannot be ingested; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class IngestConfig:
    paths: tuple[Path, ...]
    store: Path | str  # a URL is refused: a store by URL is read-only
    fmt: str = "auto"
    on_error: str = "fail"  # or "skip"
    # the games' own ingest options, by name (``batchrl ingest --help`` lists them: pv,
    # game, reward, suits, jobs, ...); each reaches the games that declare it
    options: Mapping[str, Any] = field(default_factory=dict)
    chunk_size: int = 2048
    # a Dask scheduler's address: chunks' rows made on its workers (the same rows)
    scheduler: str | None = None
    # seconds to wait for another writer of the store (None: as long as it takes)
    wait: float | None = None


@dataclass
class SourceReport:
    """What happened to one source file."""

    path: Path
    fmt: str = ""
    game: str = ""
    notes: list[str] = field(default_factory=list)
    hands: int = 0  # hands, or games: see unit
    unit: str = "hands"
    rows: int = 0
    seconds: float = 0.0
    skipped: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    # why nothing of the source was stored (with on_error="skip": the other sources go on)
    error: str = ""

    @property
    def hands_per_second(self) -> float:
        return self.hands / self.seconds if self.seconds > 0 else 0.0

    def skip(self, kind: str, message: str | None, count: int = 1) -> None:
        self.skipped[kind] += count
        kept = self.examples.setdefault(kind, [])
        if message is not None and len(kept) < EXAMPLES_PER_KIND:
            kept.append(excerpt(message, MESSAGE_LIMIT))  # kept in the part's footer

    def stats(self) -> dict[str, Any]:
        return {
            "format": self.fmt,
            "game": self.game,
            "notes": [excerpt(note, MESSAGE_LIMIT) for note in self.notes],
            "hands": self.hands,
            "rows": self.rows,
            "seconds": round(self.seconds, 3),
            "skipped": dict(self.skipped),
            "examples": self.examples,
        }


ProgressFn = Callable[[int], None]
ReportFn = Callable[[SourceReport], None]


def ingest_options() -> dict[str, list[str]]:
    """Each ingest option's name, and the games that declare it."""
    out: dict[str, list[str]] = {}
    for game in GAMES.values():
        for option in game.cli.options:
            if "ingest" in option.flags:
                out.setdefault(option.name, []).append(game.name)
    return out


def ingest(
    config: IngestConfig, progress: ProgressFn | None = None, on_report: ReportFn | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> list[SourceReport]:
    """Ingest every path in ``config`` in turn; ``progress`` gets bytes read, ``on_report``
    each file's report as soon as the file is stored (before a later file can fail).

    The store is held for writing throughout (`batchrl.store.lock`): another ingest into
    it waits, and ``on_wait`` hears, in words, that this one waits for another."""
    if config.fmt != "auto" and config.fmt not in FORMATS:
        raise IngestError(f"unknown format {config.fmt!r}: use one of auto, "
                          f"{', '.join(sorted(FORMATS))}")
    if config.on_error not in ("fail", "skip"):
        raise IngestError(f"--on-error is fail or skip, not {config.on_error!r}")
    options = _prepare(config.options)
    root = writable(config.store)  # a store by URL is refused before any log is read
    reports = []
    stores: list[Store] = []  # the store as opened for the last source: its parts read once
    with store_lock(root, config.wait, on_wait), \
            _finally_remove_if_empty(root), \
            connect(scheduler_address(config.scheduler)) as client:
        for path, unknown in _sources(config):
            if unknown:  # a file of a directory that no format reads: passed over, said
                report = SourceReport(path=path, error=unknown)
            else:
                try:
                    report = ingest_file(path, config, options, progress, client, stores)
                except (IngestError, StoreError) as exc:
                    if config.on_error == "fail":
                        hint = "" if "--on-error skip" in str(exc) else (
                            "\n(use --on-error skip to ingest the other sources and report "
                            "this one)")
                        raise type(exc)(f"{exc}{hint}") from None
                    report = SourceReport(path=path, error=str(exc))
            reports.append(report)
            if on_report is not None:
                on_report(report)
    return reports


@contextlib.contextmanager
def _finally_remove_if_empty(root: Path) -> Iterator[None]:
    """A store this ingest made, and nothing landed in it: not left behind (taken away
    under the store's lock, before it is let go)."""
    new_store = not (root / "store.json").exists()
    try:
        yield
    finally:
        if new_store:
            _remove_if_empty(root)


def _sources(config: IngestConfig) -> Iterator[tuple[Path, str]]:
    """The sources of ``config.paths``, each with why no format reads it ("" if one
    does): a directory that is no format's source of games (ACPC logs, say) gives the
    files in it, in name order; those no format reads are passed over, saying so, and
    so are pipes, devices and links to outside the directory, none of them opened."""
    for path in config.paths:
        expand = path.is_dir() and (
            (config.fmt == "auto" and sniff_format(path) is None)
            or (config.fmt != "auto" and not FORMATS[config.fmt].directories))
        if not expand:
            yield path, ""
            continue
        files, refused = directory_files(path)
        known = [f for f in files if config.fmt != "auto" or sniff_format(f) is not None]
        if not known and refused:
            shown = "; ".join(f"{f.name}: {why}" for f, why in refused[:3])
            raise IngestError(f"{path}: no file in it is read: {shown}"
                              f"{'; ...' if len(refused) > 3 else ''} (give the log files "
                              "themselves, or copy them into the directory)")
        if not known:
            _format_of(path, config)  # raises, naming the formats
        why = dict(refused)
        for f in sorted([*files, *why]):
            yield f, why.get(f) or ("" if f in known else "no format batchrl reads: passed "
                                                          "over")


def _remove_if_empty(root: Path) -> None:
    """Remove the store at ``root`` if it holds no part (and the directory if empty)."""
    parts = root / "parts"
    if parts.is_dir():
        if any(parts.glob("*.parquet")):
            return
        for leftover in parts.iterdir():  # temp parts of this failed run are gone already
            if leftover.name.startswith("."):
                leftover.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            parts.rmdir()
    if parts.exists():
        return
    with contextlib.suppress(OSError):
        (root / "store.json").unlink(missing_ok=True)
        # a writer waiting on this lock file sees it gone, and makes the store anew
        (root / LOCK_NAME).unlink(missing_ok=True)
        root.rmdir()


def _prepare(given: Mapping[str, Any]) -> dict[str, Mapping[str, Any] | str]:
    """The options given, checked and resolved by the games that declare them, per game;
    for a game that declares an option without the value given among its choices (two
    games' ``--reward``), what to say if one of its files comes."""
    declared = ingest_options()
    if unknown := sorted(set(given) - set(declared)):
        raise IngestError(f"no ingest option {', '.join(unknown)}: the options are "
                          f"{', '.join(sorted(declared))}")
    out: dict[str, Mapping[str, Any] | str] = {}
    for game in GAMES.values():
        mine = {k: v for k, v in given.items() if v is not None and game.name in declared[k]}
        if refused := [f"{o.name} {mine[o.name]!r}: {game.name} takes "
                       f"{', '.join(o.choices)}" for o in game.cli.options
                       if o.name in mine and o.choices and mine[o.name] not in o.choices]:
            out[game.name] = "; ".join(refused)
            continue
        try:
            out[game.name] = game.log.prepare("ingest", mine) if mine else {}
        except (GameError, ValueError) as exc:
            raise IngestError(str(exc)) from None
    return out


def _format_of(path: Path, config: IngestConfig) -> Format:
    if config.fmt != "auto":
        return FORMATS[config.fmt]
    fmt = sniff_format(path)
    if fmt is not None:
        return fmt
    if path.is_dir():
        raise IngestError(f"{path}: a directory, and no format of game files batchrl reads "
                          f"is in it ({_described(f for f in FORMATS.values() if f.directories)}"
                          f"); give the log files themselves")
    raise IngestError(f"{path}: neither {_described(FORMATS.values())} in its first "
                      f"{SNIFF_LINES} lines; give --format if you know better")


def _described(formats: Any) -> str:
    ordered = sorted(formats, key=lambda f: f.name)
    texts = [f.description for f in ordered]
    return ", ".join(texts[:-1]) + f" nor {texts[-1]}" if len(texts) > 1 else "".join(texts)


def ingest_file(path: Path, config: IngestConfig,
                options: Mapping[str, Mapping[str, Any] | str],
                progress: ProgressFn | None, client: Any = None,
                stores: list[Store] | None = None) -> SourceReport:
    """One source into the store (see ``ingest``); with a Dask ``client``, its chunks'
    rows are made on the cluster's workers (the same rows, written here in order).
    ``stores``: the store as the last source of this ingest opened it, kept for the next
    where the store is still the same (its id and schema): it has read its parts once (a
    log already in the store is refused by reading them)."""
    if not path.exists():
        raise IngestError(f"{path}: no such file")
    if regular_file(path) not in ("", "a directory"):  # before anything opens it
        raise IngestError(f"{path}: not a file (a pipe, a device?): give a log file")
    fmt = _format_of(path, config)
    if path.is_dir() and not fmt.directories:
        raise IngestError(f"{path}: not a file")
    if path.is_file() and path.stat().st_size == 0:
        raise IngestError(f"{path}: the file is empty")
    started = time.perf_counter()
    game = get_game(fmt.game)
    report = SourceReport(path=path, fmt=fmt.name, game=game.name, unit=game.rules.unit)
    digest = fmt.digest(path) if fmt.digest is not None else file_digest(path)
    lines = LogLines(path, progress) if path.is_file() else None
    mine = options.get(game.name, {})
    if isinstance(mine, str):
        raise IngestError(f"{path}: a {game.name} log, and {mine}")
    records = fmt.read(Source(path, lines, mine, progress))
    try:
        # a reader that holds processes or files lets them go when closed, here or early
        with contextlib.closing(records) if isinstance(records, Generator) else \
                contextlib.nullcontext():
            plan = game.log.open_source(records, SourceContext(path, fmt, digest[:16] + ":", mine,
                                                           report.notes))
            report.game, report.unit = plan.variant or game.name, plan.unit
            store = Store.create(config.store, plan.schema)
            if stores is not None:  # the store the last source opened, if it is this one
                if stores and (stores[0].store_id, stores[0].schema) == \
                        (store.store_id, store.schema):
                    store = stores[0]
                stores[:] = [store]
            run = _Run(config, report, plan.rows, client, plan.rows_beside)
            with store.writer(path, digest) as writer, run, _collector_spared():
                for record in plan.records:
                    if isinstance(record, BadLine):
                        if lines is not None and record.line == lines.unterminated:
                            run.flush(writer)
                            report.notes.append(f"line {record.line} is cut off (the file "
                                                f"ends in the middle of it): dropped")
                            report.skip("cut-off last line", str(record))
                        else:
                            run.bad(record.kind, str(record), writer)
                    elif isinstance(record, Skipped):
                        run.skipped(record, writer)
                    else:
                        run.record(record, writer)
                run.close(writer)
                if plan.finish is not None:
                    plan.finish(report.hands)
                report.seconds = time.perf_counter() - started
                writer.set_stats(extra=report.stats())
    except (SourceError, GameError) as exc:
        raise IngestError(excerpt(str(exc), MESSAGE_LIMIT)) from None
    report.seconds = time.perf_counter() - started
    return report


@contextlib.contextmanager
def _collector_spared() -> Iterator[None]:
    """What is alive when a source's reading starts (the modules, the game's tables) set
    aside from Python's cyclic collector while it runs (``gc.freeze``), and given back
    after: the collections a reader's millions of short-lived objects set off walk only
    what is new. Walking the imports was 12% of a Hanabi JSON ingest. Where the caller
    has frozen objects of its own (a server before it forks), it is left as it is:
    unfreezing would undo the caller's too."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


class _Run:
    """The records of one source on their way to the writer, in chunks.

    A chunk's rows are made on a worker thread while the next chunk is read, and the
    rows before them are written on another (NumPy and Arrow let go of the interpreter
    for their big loops: Parquet's compression runs beside the reading and the rows);
    results are taken and written in order, and anything but another record waits for
    them all, so errors and notes come out as if it ran in one thread. Where the game's
    plan says the threads do not pay (``SourcePlan.rows_beside``), a chunk's rows are
    made and written between reads, in this thread."""

    def __init__(self, config: IngestConfig, report: SourceReport,
                 process: Callable[[list[Any]], RowsBatch], client: Any = None,
                 beside: bool = True) -> None:
        self.config, self.report, self.process = config, report, process
        self.chunk: list[Any] = []
        # rows made between reads where the game's plan says a thread does not pay
        threads = beside or client is not None
        self.pool: ThreadPoolExecutor | None = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="batchrl-rows") if threads else None
        # on a cluster, chunks are tasks: a few per worker in flight
        self.client = client
        self.in_flight = 1 if client is None else 2 * workers(client)
        self.pending: deque[Any] = deque()
        # one writing thread: the writer sees its batches one at a time, in order
        self.writes: ThreadPoolExecutor | None = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="batchrl-write") if self.pool else None
        self.written: deque[Future[None]] = deque()

    def __enter__(self) -> _Run:
        return self

    def __exit__(self, *exc: object) -> None:
        # the writer is closed (and its temp part removed) only after this: no write is
        # left running into it
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
        if self.writes is not None:
            self.writes.shutdown(wait=True, cancel_futures=True)

    def record(self, record: Any, writer: Any) -> None:
        self.chunk.append(record)
        if len(self.chunk) >= self.config.chunk_size:
            self._send(writer, keep=self.in_flight)

    def skipped(self, record: Skipped, writer: Any) -> None:
        if record.message is None:  # passed over, counted only
            self.report.skip(record.kind, None, record.count)
            return
        self.flush(writer)  # an illegal hand before this one is the error to report
        self._bad(record.kind, record.message, record.count)

    def bad(self, kind: str, message: str, writer: Any) -> None:
        if self.config.on_error == "fail":
            self.flush(writer)  # an illegal hand before this line is the error to report
        self._bad(kind, message)

    def flush(self, writer: Any) -> None:
        """Every record so far processed and written (or refused)."""
        self._send(writer, keep=0)
        self._written(keep=0)

    def _written(self, keep: int) -> None:
        """Wait for the writes until ``keep`` are in flight; a write's error is raised."""
        while len(self.written) > keep:
            self.written.popleft().result()

    def _send(self, writer: Any, keep: int) -> None:
        """Hand the chunk to the worker; store results until ``keep`` are in flight."""
        if self.chunk:
            if self.pool is None:
                self._store(self.process(self.chunk), writer)
            elif self.client is None:
                self.pending.append(self.pool.submit(self.process, self.chunk))
            else:
                self.pending.append(self.client.submit(self.process, self.chunk, pure=False))
            self.chunk = []
        while len(self.pending) > keep:
            self._store(self.pending.popleft().result(), writer)

    def _store(self, result: RowsBatch, writer: Any) -> None:
        for record, error in sorted(result.rejected, key=lambda re: re[0].line):
            self._bad(error.kind, f"{record.source}, line {record.line}: {error}")
        if len(result.rows):
            self._written(keep=1)  # two batches' rows held at most
            if self.writes is None:
                writer.write(result.rows)
            else:
                self.written.append(self.writes.submit(writer.write, result.rows))
        self.report.hands += result.records
        self.report.rows += len(result.rows)

    def close(self, writer: Any) -> None:
        self.flush(writer)

    def _bad(self, kind: str, message: str, count: int = 1) -> None:
        message = excerpt(message, MESSAGE_LIMIT)  # a game's message may quote a log's value
        if self.config.on_error == "fail":
            self._written(keep=0)  # a write that failed before this failed first
            raise IngestError(f"{message}\n(use --on-error skip to keep the good "
                              f"{self.report.unit} and report the bad ones)")
        self.report.skip(kind, message, count)


def source_bytes(path: Path) -> int:
    """A source's size: a file's, or the sum of a directory's files (for progress bars)."""
    if path.is_dir():
        return sum(f.stat().st_size for f in directory_files(path)[0])
    return path.stat().st_size if not regular_file(path) else 0


def records_of(path: Path, fmt: str | None = None) -> Iterator[Any]:
    """The records of one source as its format's reader gives them (``fmt``: a format
    name, or None to tell it from the content), for notebooks and tests."""
    if regular_file(path) not in ("", "a directory"):  # before anything opens it
        raise IngestError(f"{path}: {regular_file(path)}")
    chosen = FORMATS[fmt] if fmt is not None else sniff_format(path)
    if chosen is None:
        raise IngestError(f"{path}: no format batchrl reads")
    return chosen.read(Source(path, LogLines(path) if path.is_file() else None))
