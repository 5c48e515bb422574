"""Logs into a store: find the format and the game, check every hand, write the rows.

Each source file lands whole or not at all: its rows stream into a temporary
part that replaces the source's earlier part only when the file is done. With
``on_error="skip"`` a bad line or an illegal hand is counted, reported and
left out, and the good hands around it are kept; with ``"fail"`` the first one
stops the file with an error naming the file, the line and what was wrong.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from batchrl.games.holdem import features, gamedef
from batchrl.games.holdem.gamedef import GameDef, GameDefError
from batchrl.games.holdem.transitions import AUDIT_COLUMNS, check_hands, process_chunk
from batchrl.store import Store, StoreSchema, file_digest
from parsers.acpc import BadLine, Header, LoggedHand, read_acpc, read_glassfrog, sniff_format

FORMATS = ("auto", "acpc", "glassfrog")
# Examples of each kind of skipped line kept for the report.
EXAMPLES_PER_KIND = 3


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
    chunk_size: int = 2048


@dataclass
class SourceReport:
    """What happened to one source file."""

    path: Path
    fmt: str = ""
    game: str = ""
    notes: list[str] = field(default_factory=list)
    hands: int = 0
    rows: int = 0
    seconds: float = 0.0
    skipped: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    @property
    def hands_per_second(self) -> float:
        return self.hands / self.seconds if self.seconds > 0 else 0.0

    def skip(self, kind: str, message: str) -> None:
        self.skipped[kind] += 1
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


def schema_for(game: GameDef, pv: bool = True) -> StoreSchema:
    return StoreSchema(
        game=game.name,
        feature_names=features.feature_names(game, pv),
        action_names=features.action_names(),
        audit_columns=AUDIT_COLUMNS,
        game_params=game.params(),
    )


def ingest(
    config: IngestConfig, progress: ProgressFn | None = None
) -> list[SourceReport]:
    """Ingest every path in ``config`` in turn; ``progress`` gets bytes read."""
    if config.fmt not in FORMATS:
        raise IngestError(f"unknown format {config.fmt!r}: use one of {', '.join(FORMATS)}")
    if config.on_error not in ("fail", "skip"):
        raise IngestError(f"--on-error is fail or skip, not {config.on_error!r}")
    forced = None
    if config.game is not None:
        try:
            forced = gamedef.resolve(config.game)
        except GameDefError as exc:
            raise IngestError(str(exc)) from None
    return [ingest_file(p, config, forced, progress) for p in config.paths]


def ingest_file(
    path: Path, config: IngestConfig, forced: GameDef | None, progress: ProgressFn | None
) -> SourceReport:
    report = SourceReport(path=path)
    if not path.is_file():
        raise IngestError(f"{path}: no such file")
    started = time.perf_counter()
    digest = file_digest(path)
    fmt = config.fmt if config.fmt != "auto" else _sniff(path)
    report.fmt = fmt
    records = _records(path, fmt, progress)
    game, pending = _decide_game(path, fmt, records, forced, report)
    report.game = game.name
    _refuse_unsupported(path, game)
    store = Store.create(config.store, schema_for(game, config.pv))
    prefix = digest[:16] + ":"
    chunk: list[LoggedHand] = []
    with store.writer(path, digest) as writer:
        for record in _chain(pending, records):
            if isinstance(record, BadLine):
                if config.on_error == "fail" and chunk:
                    # An illegal hand earlier in the file is the error to report.
                    _flush(game, chunk, prefix, writer, report, config)
                    chunk = []
                _bad(report, config, "malformed line", str(record))
            elif isinstance(record, Header):
                _check_header(record, game, forced, config, report)
            else:
                chunk.append(record)
                if len(chunk) >= config.chunk_size:
                    _flush(game, chunk, prefix, writer, report, config)
                    chunk = []
        if chunk:
            _flush(game, chunk, prefix, writer, report, config)
        report.seconds = time.perf_counter() - started
        writer.set_stats(extra=report.stats())
    report.seconds = time.perf_counter() - started
    return report


def _flush(
    game: GameDef, chunk: Sequence[LoggedHand], prefix: str, writer: Any,
    report: SourceReport, config: IngestConfig,
) -> None:
    result = process_chunk(game, chunk, prefix, config.pv)
    for hand, reason in sorted(result.rejected, key=lambda hr: hr[0].line):
        kind = "payoffs disagree" if "payoffs" in reason else "illegal or incomplete betting"
        _bad(report, config, kind, f"{hand_source(hand)}, line {hand.line}: {reason}")
    if result.rows:
        writer.write(result.columns)
    report.hands += result.hands
    report.rows += result.rows


def hand_source(hand: Any) -> str:
    return str(getattr(hand, "source", "?"))


def _bad(report: SourceReport, config: IngestConfig, kind: str, message: str) -> None:
    if config.on_error == "fail":
        raise IngestError(f"{message}\n(use --on-error skip to keep the good hands and "
                          f"report the bad ones)")
    report.skip(kind, message)


def _sniff(path: Path) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        head = [line.rstrip("\r\n") for _, line in zip(range(200), f, strict=False)]
    fmt = sniff_format(head)
    if fmt is None:
        raise IngestError(f"{path}: neither an ACPC dealer log (STATE: lines) nor a Glassfrog "
                          f"dealer summary (name|name:hand:betting:cards:payoffs) in its first "
                          f"lines; give --format if you know better")
    return fmt


def _records(path: Path, fmt: str, progress: ProgressFn | None) -> Iterator[Any]:
    reader = read_acpc if fmt == "acpc" else read_glassfrog
    return reader(_lines(path, progress), str(path))


def _lines(path: Path, progress: ProgressFn | None) -> Iterator[str]:
    # Bytes in, so progress can count them; a bad byte spoils one line, not the file.
    pending = 0
    with open(path, "rb") as f:
        for raw in f:
            pending += len(raw)
            if progress is not None and pending >= 1 << 20:
                progress(pending)
                pending = 0
            yield raw.decode("utf-8", "replace").rstrip("\r\n \t")
    if progress is not None and pending:
        progress(pending)


def _chain(first: Iterable[Any], rest: Iterator[Any]) -> Iterator[Any]:
    yield from first
    yield from rest


def _decide_game(
    path: Path, fmt: str, records: Iterator[Any], forced: GameDef | None, report: SourceReport
) -> tuple[GameDef, list[Any]]:
    """The game of a source, and the records read ahead to find it (to be processed first)."""
    pending: list[Any] = []
    if forced is not None:
        return forced, pending
    if fmt == "acpc":
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
            if isinstance(record, LoggedHand):
                game = _guess_from_hand(record)
                report.notes.append(f"no header: game {game.name} guessed from line "
                                    f"{record.line}")
                return game, pending
        return gamedef.HEADS_UP_LIMIT, pending
    # Glassfrog summaries come in two unit systems; the first hand that moves
    # chips tells which (a split pot fits both).
    candidates = (gamedef.GLASSFROG_LIMIT, gamedef.HEADS_UP_LIMIT)
    for record in records:
        pending.append(record)
        if not isinstance(record, LoggedHand) or not any(record.payoffs):
            continue
        if record.is_nolimit or record.num_players != 2:
            return _guess_from_hand(record), pending
        fits = [g for g in candidates if not check_hands(g, [record])[1]]
        if not fits:
            continue  # a bad hand: it is reported in its turn; the next one decides
        game = fits[0]
        report.notes.append(
            f"units: {game.description} (line {record.line}'s payoffs "
            f"{'|'.join(f'{v:g}' for v in record.payoffs)} fit them)")
        return game, pending
    return gamedef.GLASSFROG_LIMIT, pending


def _guess_from_hand(hand: LoggedHand) -> GameDef:
    betting = "nolimit" if hand.is_nolimit else "limit"
    for game in gamedef.BUILTINS.values():
        if game.betting == betting and game.num_players == hand.num_players:
            return game
    raise IngestError(f"{hand.source}, line {hand.line}: a {hand.num_players}-player "
                      f"{betting} hand, and no built-in game of that kind: pass --game FILE")


def _check_header(
    header: Header, game: GameDef, forced: GameDef | None, config: IngestConfig,
    report: SourceReport,
) -> None:
    if forced is not None:
        return
    named = gamedef.builtin_by_filename(header.game_path)
    if named is None or named.name != game.name:
        _bad(report, config, "another game appended",
             f"{header.source}, line {header.line}: a run of {header.game_path!r} appended "
             f"to a log of {game.name}")


def _refuse_unsupported(path: Path, game: GameDef) -> None:
    if not game.is_limit or game.num_players != 2:
        what = "no-limit" if not game.is_limit else f"{game.num_players}-player"
        raise IngestError(
            f"{path}: this is a {what} log (game {game.name}: {game.description or 'custom'}); "
            f"batchrl turns heads-up limit hold'em into transitions so far")
