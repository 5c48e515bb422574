"""Logs into a store: find the format and the game, check every hand, write the rows.

Each source file lands whole or not at all: its rows stream into a temporary
part that replaces the source's earlier part only when the file is done. With
``on_error="skip"`` a bad line or an illegal hand is counted, reported and
left out, and the good hands around it are kept; with ``"fail"`` the first one
stops the file with an error naming the file, the line and what was wrong.
A last line cut off mid-write is never an error: it is dropped with a note.

Tressette JSON lines are read and checked in a worker process (``jobs``, see
``batchrl.games.tressette.ingest``) while this process makes the rows and writes
them: the records still come out in line order, so the store and the report are
those of one process.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from batchrl.games.errors import RejectedRecord
from batchrl.games.holdem import features, gamedef
from batchrl.games.holdem.gamedef import GameDef, GameDefError
from batchrl.games.holdem.transitions import AUDIT_COLUMNS, Chunk, check_hands, process_chunk
from batchrl.games.tressette import ingest as tressette
from batchrl.store import Store, StoreSchema, file_digest
from parsers import FORMATS, HANABI_FORMATS, READERS, sniff_format
from parsers.acpc import SNIFF_LINES, BadLine, Header, LoggedHand, LogLines
from parsers.sette_mezzo import LoggedGame

# Examples of each kind of skipped line kept for the report.
EXAMPLES_PER_KIND = 3
# Hands read ahead, at most, to tell a log's game or units from its payoffs.
LOOKAHEAD_HANDS = 1000
# PV is defined for these numbers of visible board cards.
PV_BOARDS = frozenset({0, 3, 4, 5})


class IngestError(Exception):
    """A source that cannot be ingested; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class IngestConfig:
    paths: tuple[Path, ...]
    store: Path
    fmt: str = "auto"
    game: str | None = None  # a built-in game name or a .game file
    on_error: str = "fail"  # or "skip"
    pv: bool = True  # compute the probability-of-victory feature
    reward: str = "points"  # tressette: the team's points, or "shaped" (the seed's)
    suits: str = "dealt"  # tressette: or "canonical", each state's suits in a fixed order
    chunk_size: int = 2048
    # processes that read and check Tressette JSON lines (0: read in this one); None:
    # one if this process may use two cores or more, else 0
    jobs: int | None = None


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

    @property
    def hands_per_second(self) -> float:
        return self.hands / self.seconds if self.seconds > 0 else 0.0

    def skip(self, kind: str, message: str, count: int = 1) -> None:
        self.skipped[kind] += count
        kept = self.examples.setdefault(kind, [])
        if len(kept) < EXAMPLES_PER_KIND:
            kept.append(message)

    def stats(self) -> dict[str, Any]:
        return {
            "format": self.fmt,
            "game": self.game,
            "notes": self.notes,
            "hands": self.hands,
            "rows": self.rows,
            "seconds": round(self.seconds, 3),
            "skipped": dict(self.skipped),
            "examples": self.examples,
        }


ProgressFn = Callable[[int], None]
ReportFn = Callable[[SourceReport], None]


def schema_for(game: GameDef, pv: bool = True) -> StoreSchema:
    return StoreSchema(
        game=game.name,
        feature_names=features.feature_names(game, pv),
        action_names=features.action_names(),
        audit_columns=AUDIT_COLUMNS,
        game_params=game.params(),
    )


def ingest(
    config: IngestConfig, progress: ProgressFn | None = None, on_report: ReportFn | None = None
) -> list[SourceReport]:
    """Ingest every path in ``config`` in turn; ``progress`` gets bytes read, ``on_report``
    each file's report as soon as the file is stored (before a later file can fail)."""
    if config.fmt not in FORMATS:
        raise IngestError(f"unknown format {config.fmt!r}: use one of {', '.join(FORMATS)}")
    if config.on_error not in ("fail", "skip"):
        raise IngestError(f"--on-error is fail or skip, not {config.on_error!r}")
    if config.jobs is not None and config.jobs < 0:
        raise IngestError(f"--jobs {config.jobs}: want 0 (read in this process) or more")
    forced = None
    if config.game is not None:
        try:
            forced = gamedef.resolve(config.game)
        except GameDefError as exc:
            raise IngestError(str(exc)) from None
        _refuse_unsupported(f"--game {config.game}", forced, config.pv)
    reports = []
    for path in config.paths:
        reports.append(ingest_file(path, config, forced, progress))
        if on_report is not None:
            on_report(reports[-1])
    return reports


def ingest_file(
    path: Path, config: IngestConfig, forced: GameDef | None, progress: ProgressFn | None
) -> SourceReport:
    report = SourceReport(path=path)
    if not path.exists():
        raise IngestError(f"{path}: no such file")
    hanabi = config.fmt if config.fmt in HANABI_FORMATS else None
    if config.fmt == "auto":
        from batchrl.games.hanabi.sources import sniff

        hanabi = sniff(path)
    if hanabi is not None:
        return _ingest_hanabi(path, hanabi, config, progress)
    if not path.is_file():
        raise IngestError(f"{path}: not a file")
    if path.stat().st_size == 0:
        raise IngestError(f"{path}: the file is empty")
    started = time.perf_counter()
    digest = file_digest(path)
    fmt = config.fmt if config.fmt != "auto" else _sniff(path)
    report.fmt = fmt
    lines = LogLines(path, progress)
    records: Iterator[Any] = READERS[fmt](lines, str(path))
    beside: contextlib.AbstractContextManager[Iterator[Any] | None] = contextlib.nullcontext()
    prefix = digest[:16] + ":"
    if fmt == "sette-mezzo":
        schema, pending, process = _sette_mezzo(path, records, report, prefix)
        game = None
    elif fmt in ("tressette", "tressette-transcript"):
        try:
            schema, process = tressette.source(report, prefix, config.reward, config.suits)
        except ValueError as exc:
            raise IngestError(str(exc)) from None
        pending, game = [], None
        if fmt == "tressette":  # JSON lines: read and checked beside the rows
            beside = tressette.reading(lines, str(path), config.jobs)
    else:
        game, pending = _decide_game(path, fmt, records, forced, report)
        report.game = game.name
        if forced is None:
            _refuse_unsupported(str(path), game, config.pv)
        schema = schema_for(game, config.pv)

        def process(chunk: list[Any], game: GameDef = game) -> Chunk:
            return process_chunk(game, chunk, prefix, config.pv)

    store = Store.create(config.store, schema)
    run = _Run(game, forced, config, report, process)
    with beside as read, store.writer(path, digest) as writer, run:
        for record in _chain(pending, records if read is None else read):
            if isinstance(record, Header):
                run.header(record, writer)
            elif not isinstance(record, BadLine):  # a hand or game
                run.hand(record, writer)
            elif record.line == lines.unterminated:
                run.flush(writer)
                report.notes.append(f"line {record.line} is cut off (the file ends in the "
                                    f"middle of it): dropped")
                report.skip("cut-off last line", str(record))
            else:
                run.bad(record, writer)
        run.close(writer)
        report.seconds = time.perf_counter() - started
        writer.set_stats(extra=report.stats())
    report.seconds = time.perf_counter() - started
    return report


class _Run:
    """The hands of one source on their way to the writer, in chunks.

    A chunk's rows are made on a worker thread while the next chunk is read, and the
    rows before them are written on another (NumPy and Arrow let go of the interpreter
    for their big loops: Parquet's compression runs beside the reading and the rows);
    results are taken and written in order, and anything but another hand waits for
    them all, so errors and notes come out as if it ran in one thread."""

    def __init__(self, game: GameDef | None, forced: GameDef | None, config: IngestConfig,
                 report: SourceReport, process: Callable[[list[Any]], Chunk]) -> None:
        self.game, self.forced, self.config, self.report = game, forced, config, report
        self.process = process
        self.chunk: list[Any] = []
        self.run_header: Header | None = None  # the run in progress, and its hand count
        self.run_hands = 0
        self.foreign: Header | None = None  # set while skipping a run of another game
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="batchrl-rows")
        self.pending: deque[Future[Chunk]] = deque()
        # one writing thread: the writer sees its batches one at a time, in order
        self.writes = ThreadPoolExecutor(max_workers=1, thread_name_prefix="batchrl-write")
        self.written: deque[Future[None]] = deque()

    def __enter__(self) -> _Run:
        return self

    def __exit__(self, *exc: object) -> None:
        # the writer is closed (and its temp part removed) only after this: no write is
        # left running into it
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.writes.shutdown(wait=True, cancel_futures=True)

    def hand(self, hand: Any, writer: Any) -> None:
        self.run_hands += 1
        if self.foreign is not None:
            self.report.skipped["another game appended"] += 1
            return
        self.chunk.append(hand)
        if len(self.chunk) >= self.config.chunk_size:
            self._send(writer, keep=1)

    def header(self, header: Header, writer: Any) -> None:
        self._end_run()
        self.run_header, self.run_hands, self.foreign = header, 0, None
        if self.forced is not None or self.game is None:
            return
        named = gamedef.builtin_by_filename(header.game_path)
        if named is None or named.name != self.game.name:
            self.flush(writer)  # an illegal hand before this line is the error to report
            self.foreign = header
            self._bad("another game appended",
                      f"{header.source}, line {header.line}: a run of {header.game_path!r} "
                      f"appended to a log of {self.game.name}: its hands are left out")

    def bad(self, record: BadLine, writer: Any) -> None:
        if self.config.on_error == "fail":
            self.flush(writer)  # an illegal hand before this line is the error to report
        self._bad("malformed line", str(record))

    def flush(self, writer: Any) -> None:
        """Every hand so far processed and written (or refused)."""
        self._send(writer, keep=0)
        self._written(keep=0)

    def _written(self, keep: int) -> None:
        """Wait for the writes until ``keep`` are in flight; a write's error is raised."""
        while len(self.written) > keep:
            self.written.popleft().result()

    def _send(self, writer: Any, keep: int) -> None:
        """Hand the chunk to the worker; store results until ``keep`` are in flight."""
        if self.chunk:
            self.pending.append(self.pool.submit(self.process, self.chunk))
            self.chunk = []
        while len(self.pending) > keep:
            self._store(self.pending.popleft().result(), writer)

    def _store(self, result: Chunk, writer: Any) -> None:
        for hand, error in sorted(result.rejected, key=lambda he: he[0].line):
            self._bad(error.kind, f"{hand.source}, line {hand.line}: {error}")
        if result.rows:
            self._written(keep=1)  # two batches' rows held at most
            self.written.append(self.writes.submit(writer.write, result.columns))
        self.report.hands += result.hands
        self.report.rows += result.rows

    def close(self, writer: Any) -> None:
        self.flush(writer)
        self._end_run()

    def _end_run(self) -> None:
        header = self.run_header
        if header is not None and header.hands is not None and self.run_hands < header.hands:
            self.report.notes.append(
                f"the run from line {header.line} promises {header.hands:,} hands and holds "
                f"{self.run_hands:,}: the match was cut off")

    def _bad(self, kind: str, message: str) -> None:
        if self.config.on_error == "fail":
            self._written(keep=0)  # a write that failed before this failed first
            raise IngestError(f"{message}\n(use --on-error skip to keep the good hands and "
                              f"report the bad ones)")
        self.report.skip(kind, message)


def _sniff(path: Path) -> str:
    with open(path, encoding="utf-8-sig", errors="replace") as f:
        head = [line.rstrip("\r\n") for _, line in zip(range(SNIFF_LINES), f, strict=False)]
    fmt = sniff_format(head)
    if fmt is None:
        raise IngestError(f"{path}: neither an ACPC dealer log (STATE: lines), a Glassfrog "
                          f"dealer summary (name|name:hand:betting:cards:payoffs), a sette e "
                          f"mezzo or Tressette game log (JSON lines) nor a Tressette transcript "
                          f"(Giocatore ... gioca ...) in its first {SNIFF_LINES} lines; give "
                          f"--format if you know better")
    return fmt


def _chain(first: Iterable[Any], rest: Iterator[Any]) -> Iterator[Any]:
    yield from first
    yield from rest


def _decide_game(
    path: Path, fmt: str, records: Iterator[Any], forced: GameDef | None, report: SourceReport
) -> tuple[GameDef, list[Any]]:
    """The game of a source, and the records read ahead to find it (to be processed first).

    A header names the game. Without one, the first hands tell: amounts in the
    betting mean no-limit, and otherwise the game is the built-in whose rules
    give the logged payoffs (for Glassfrog summaries, this picks the units).
    """
    pending: list[Any] = []
    if forced is not None:
        report.notes.append(f"game {forced.name} from --game ({forced.description})")
        return forced, pending
    candidates: tuple[GameDef, ...]
    if fmt == "acpc":
        candidates = (gamedef.HEADS_UP_LIMIT,)
    else:
        candidates = (gamedef.GLASSFROG_LIMIT, gamedef.HEADS_UP_LIMIT)
    moved_chips = False
    hands = 0
    for record in records:
        pending.append(record)
        if isinstance(record, Header):
            game = gamedef.builtin_by_filename(record.game_path)
            if game is None:
                raise IngestError(
                    f"{path}, line {record.line}: the log plays {record.game_path!r}, not a "
                    f"standard ACPC game: pass its game file with --game FILE")
            report.notes.append(f"game {game.name} from the header")
            return game, pending
        if not isinstance(record, LoggedHand):
            continue
        hands += 1
        if record.is_nolimit or record.num_players != 2:
            game = _builtin_like(record)
            report.notes.append(f"game {game.name}: line {record.line} is a "
                                f"{record.num_players}-player {game.betting} hand")
            return game, pending
        if any(record.payoffs):
            moved_chips = True
            fits = [g for g in candidates if not check_hands(g, [record])[1]]
            if fits:
                game = fits[0]
                report.notes.append(f"game {game.name}: {game.description} (line "
                                    f"{record.line}'s payoffs {_payoffs(record)} fit it)")
                return game, pending
        if hands >= LOOKAHEAD_HANDS:
            break
    if moved_chips:
        raise IngestError(
            f"{path}: the payoffs of its first {hands:,} hands fit no built-in game "
            f"({', '.join(g.description for g in candidates)}): pass --game FILE")
    game = candidates[0]
    report.notes.append(f"game {game.name}: no hand moved chips, so the game is assumed "
                        f"({game.description})")
    return game, pending


def _sette_mezzo(
    path: Path, records: Iterator[Any], report: SourceReport, prefix: str
) -> tuple[StoreSchema, list[Any], Callable[[list[Any]], Chunk]]:
    """A sette e mezzo log: one store per opponent limit, read off its first game."""
    from batchrl.games.sette_mezzo import transitions as sm

    pending: list[Any] = []
    limit = None
    for record in records:
        pending.append(record)
        if isinstance(record, LoggedGame):
            limit = record.game.limit
            break
    if limit is None:
        raise IngestError(f"{path}: no game to ingest")
    report.game = sm.GAME_NAME
    report.unit = "games"
    report.notes.append(f"the opponent draws to {limit:g}")

    def process(chunk: list[Any]) -> Chunk:
        same = [g for g in chunk if g.game.limit == limit]
        rejected = [(g, RejectedRecord(f"the opponent's limit is {g.game.limit:g}, not "
                                       f"{limit:g} as in the file's first game: a store holds "
                                       "one limit", "another limit"))
                    for g in chunk if g.game.limit != limit]
        columns = sm.rows(same, prefix)
        return Chunk(columns, len(same), len(columns["step"]), rejected)

    return sm.schema(limit), pending, process


def source_bytes(path: Path) -> int:
    """A source's size: a file's, or the sum of a directory's files (for progress bars)."""
    if path.is_dir():
        return sum(f.stat().st_size for f in path.iterdir() if f.is_file())
    return path.stat().st_size


def _ingest_hanabi(path: Path, fmt: str, config: IngestConfig,
                   progress: ProgressFn | None) -> SourceReport:
    """Hanabi games from a file or a directory of games: one source, one store part."""
    from batchrl.games.hanabi import sources, transitions

    started = time.perf_counter()
    report = SourceReport(path=path, fmt=fmt, game=transitions.GAME_NAME, unit="games")
    files = sources.game_files(path, fmt)
    if not files:
        raise IngestError(f"{path}: no {fmt} game in this directory")
    if fmt == "hanabi-eger":
        report.notes.append("Eger et al.'s house rule: a discard with all 8 hints left is "
                            "legal (the legal masks follow it)")
    digest = sources.digest(files)
    prefix = digest[:16] + ":"
    store = Store.create(config.store, transitions.schema(2))
    chunk: list[Any] = []

    def flush(writer: Any) -> None:
        if chunk:
            columns = transitions.rows(chunk, prefix)
            writer.write(columns)
            report.rows += len(columns["step"])
            report.hands += len(chunk)
            chunk.clear()

    with store.writer(path, digest) as writer:
        for f, item in zip(files, sources.episodes(files, fmt), strict=True):
            if progress is not None:
                progress(f.stat().st_size)
            if isinstance(item, sources.GameError):
                if config.on_error == "fail":
                    raise IngestError(f"{item.message}\n(use --on-error skip to keep the good "
                                      f"games and report the bad ones)")
                report.skip(item.kind, item.message)
                continue
            chunk.append(item)
            if len(chunk) >= 256:
                flush(writer)
        flush(writer)
        if not report.hands:
            raise IngestError(f"{path}: none of its {len(files):,} games could be read "
                              f"(e.g. {next(iter(report.examples.values()))[0]})")
        report.seconds = time.perf_counter() - started
        writer.set_stats(extra=report.stats())
    report.seconds = time.perf_counter() - started
    return report


def _payoffs(hand: LoggedHand) -> str:
    return "|".join(f"{v:g}" for v in hand.payoffs)


def _builtin_like(hand: LoggedHand) -> GameDef:
    betting = "nolimit" if hand.is_nolimit else "limit"
    for game in gamedef.BUILTINS.values():
        if game.betting == betting and game.num_players == hand.num_players:
            return game
    raise IngestError(f"{hand.source}, line {hand.line}: a {hand.num_players}-player "
                      f"{betting} hand, and no built-in game of that kind: pass --game FILE")


def _refuse_unsupported(where: str, game: GameDef, pv: bool) -> None:
    """Refuse what batchrl cannot turn into transitions yet, saying which game it is."""
    what = ("a no-limit game" if not game.is_limit
            else f"a {game.num_players}-player game" if game.num_players != 2 else None)
    if what is not None:
        raise IngestError(f"{where}: {what} ({game.name}: {game.description}); batchrl turns "
                          f"heads-up limit hold'em into transitions so far")
    problem = gamedef.evaluable(game)
    if problem is None and pv:
        seen = {game.board_cards_before(r) for r in range(game.num_rounds)}
        if not seen <= PV_BOARDS:
            problem = (f"rounds showing {sorted(seen)} board cards, and pv needs 0, 3, 4 or 5 "
                       f"(--no-pv leaves it out)")
    if problem is not None:
        raise IngestError(f"{where}: {game.name} has {problem}; batchrl cannot score it")
