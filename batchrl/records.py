"""What every log reader and every game shares about records: the lines of a log file,
a line that is no record, and a record the rules refuse.

Parsers (``parsers/``) turn text into records; games turn records into store rows. Both
speak these types, so they live here, below both: this module imports nothing of
batchrl.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

# How far into a file a reader looks when guessing its format.
SNIFF_LINES = 50
MALFORMED = "malformed line"


@dataclass(frozen=True, slots=True)
class BadLine:
    """A line (or a game's file) that is no record; ``kind`` names the check for reports.

    ``line`` 0 means the source as a whole (a game's file that cannot be read); -1 that
    ``reason`` is the whole message, naming its file and line itself.

    >>> print(BadLine("a.log", 3, "not a hand", "xyz"))
    a.log, line 3: not a hand
    >>> print(BadLine("g.json", 0, "no deck", "", "bad game"))
    g.json: no deck
    """

    source: str
    line: int
    reason: str
    text: str
    kind: str = MALFORMED

    def __str__(self) -> str:
        if self.line < 0:
            return self.reason
        if self.line == 0:
            return f"{self.source}: {self.reason}"
        return f"{self.source}, line {self.line}: {self.reason}"


@dataclass(frozen=True, slots=True)
class Skipped:
    """Records a game's reader passes over on purpose (a run of another game appended to a
    log): counted under ``kind``, ``message`` kept as an example when given. With
    ``--on-error fail`` the first one stops the source, like a bad line."""

    kind: str
    message: str | None = None
    count: int = 1


class RejectedRecord(ValueError):
    """A logged hand or game the rules refuse; ``kind`` names the check, for reports."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class LogLines:
    """The text lines of a log file, for one pass.

    Read as bytes, so ``progress`` can be told how many have been read, and so
    that a byte that is not UTF-8 spoils one line (which the readers report)
    rather than the file. CRLF endings, trailing blanks and a byte-order mark
    are dropped. After the pass, ``unterminated`` is the number of the last
    line if the file ends in the middle of it (a log cut off while written).
    """

    def __init__(self, path: str | Path, progress: Callable[[int], None] | None = None) -> None:
        self.path = Path(path)
        self.progress = progress
        self.unterminated: int | None = None

    def __iter__(self) -> Iterator[str]:
        pending = 0
        with open(self.path, "rb") as f:
            for lineno, raw in enumerate(f, 1):
                pending += len(raw)
                if self.progress is not None and pending >= 1 << 20:
                    self.progress(pending)
                    pending = 0
                if not raw.endswith(b"\n"):
                    self.unterminated = lineno
                text = raw.decode("utf-8", "replace").rstrip("\r\n \t")
                yield text.removeprefix("\ufeff") if lineno == 1 else text
        if self.progress is not None and pending:
            self.progress(pending)


def head_lines(path: Path, lines: int = SNIFF_LINES) -> list[str]:
    """A file's first ``lines`` lines (for telling its format), ends stripped; [] for a
    directory or a file that cannot be read."""
    if not path.is_file():
        return []
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as f:
            return [line.rstrip("\r\n") for _, line in zip(range(lines), f, strict=False)]
    except OSError:
        return []
