"""What a log format and a game exchange when a source is read (``batchrl ingest``,
``evaluate --logs``): the source as its format's reader sees it (`Source`), the format a
module of ``parsers/`` registers (`Format`), what a game gets to open a source
(`SourceContext`) and how its records become rows (`SourcePlan`); `SourceError` when a
source cannot be read. `batchrl.games.base` re-exports them with the faces that use them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from batchrl.records import LogLines
from batchrl.store import RowsBatch, StoreSchema


class SourceError(ValueError):
    """A source (a log file or a directory of games) a game cannot ingest; the message
    names it and says what to do."""


@dataclass(frozen=True)
class Source:
    """One source as its format's reader sees it: the path, its lines (files), the
    options given to ``ingest`` and a progress callback taking bytes read."""

    path: Path
    lines: LogLines | None
    options: Mapping[str, Any] = field(default_factory=dict)
    progress: Callable[[int], None] | None = None


@dataclass(frozen=True)
class Format:
    """A log format a module of ``parsers/`` registers (``batchrl.games.register_format``).

    ``sniff(path, head)`` tells whether a source is of this format from its path and its
    first lines (``head`` is empty for a directory); ``read(source)`` yields the records
    in order: the game's own record objects, ``batchrl.records.BadLine`` for a line (or a
    game's file) that is no record, ``batchrl.records.Skipped`` for records passed over.
    No exception escapes ``read`` for bad input. ``directories``: a source may be a
    directory of game files (one source, one store part), digested by ``digest``.
    """

    name: str
    game: str
    description: str
    sniff: Callable[[Path, Sequence[str]], bool]
    read: Callable[[Source], Iterator[Any]]
    directories: bool = False
    digest: Callable[[Path], str] | None = None  # None: the file's sha256
    priority: int = 0  # higher sniffs first (a more specific format before a looser one)


@dataclass
class SourceContext:
    """What a game gets to open one source: where it is, its format, the prefix of its
    episode ids, the ``ingest`` options given, and the report's notes to add to."""

    path: Path
    format: Format
    prefix: str
    options: Mapping[str, Any]
    notes: list[str]


@dataclass
class SourcePlan:
    """How a source's records become rows: ``rows`` makes a `RowsBatch` of a chunk of
    records (on a worker thread while the next chunk is read, where ``rows_beside``);
    ``records`` are the source's records, any read ahead first; ``variant`` names what the
    report and the store call the game (a hold'em log's game definition, say);
    ``finish(records_stored)`` runs after the last chunk and may raise `SourceError`.

    ``rows_beside``: the thread pays where making rows lets go of the interpreter for long
    stretches (big NumPy and Arrow loops) while the reader parses; where both hold it in
    short turns, the threads' switching costs more than they overlap, and the rows are
    better made and written between reads (hold'em: DeepStack's log 8% faster so)."""

    schema: StoreSchema
    records: Iterator[Any]
    rows: Callable[[list[Any]], RowsBatch]
    variant: str = ""
    unit: str = "hands"
    finish: Callable[[int], None] | None = None
    rows_beside: bool = True
