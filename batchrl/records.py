"""What every log reader and every game shares about records: the lines of a log file,
a line that is no record, and a record the rules refuse.

Parsers (``parsers/``) turn text into records; games turn records into store rows. Both
speak these types, so they live here, below both: this module imports nothing of
batchrl.
"""

from __future__ import annotations

import os
import re
import reprlib
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# How far into a file a reader looks when guessing its format.
SNIFF_LINES = 50
MALFORMED = "malformed line"
# The longest line a reader reads, in characters: no record of any game comes near (a
# Hanabi state line, the longest, is a few thousand). A longer line is a bad line, read
# no further than this (``LogLines``).
MAX_LINE = 1 << 20
# How much of a value from a log an error message shows (``excerpt``, ``shown``), and
# the longest message a reader's error may be: a log's values never come back whole, so
# a 10 MB field makes no 10 MB message (nor footer, where skipped lines are kept).
EXCERPT = 80
MAX_MESSAGE = 400
# A logged seed: 64 bits, signed or not.
MIN_SEED, MAX_SEED = -(2**63), 2**64 - 1


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

    def __post_init__(self) -> None:
        # the line is kept for a look, never whole: it may be a megabyte
        object.__setattr__(self, "text", excerpt(self.text))

    def __str__(self) -> str:
        if self.line < 0:
            return excerpt(self.reason, MAX_MESSAGE)
        if self.line == 0:
            return f"{self.source}: {excerpt(self.reason, MAX_MESSAGE)}"
        return f"{self.source}, line {self.line}: {excerpt(self.reason, MAX_MESSAGE)}"


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


def excerpt(text: str, limit: int = EXCERPT) -> str:
    """``text`` if it is at most ``limit`` characters, else its first ``limit``, an
    ellipsis and its length: what a message shows of a long value.

    >>> excerpt("9" * 500, 10)
    '9999999999… (500 characters)'
    >>> excerpt("short")
    'short'
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


def redacted(text: str) -> str:
    """``text`` with the password of every URL in it replaced by ``***`` (an error from a
    library may quote the URL it was given whole).

    >>> redacted("cannot open 'file://alice:S3CRET@host/x' or tcp://bo:pw@h:1")
    "cannot open 'file://alice:***@host/x' or tcp://bo:***@h:1"
    """
    return re.sub(r"(://[^/@:\s'\"]*):[^/@\s'\"]*@", r"\1:***@", text)


def printable(text: str, limit: int = 60) -> str:
    """A name from a log as a terminal shows it: control, format (a right-to-left
    override) and surrogate characters escaped, and an excerpt if long.

    >>> printable("bad\\x00name\\u202eevil"), printable("x" * 100, 5)
    ('bad\\\\x00name\\\\u202eevil', 'xxxxx… (100 characters)')
    """
    return excerpt(_escaped(text), limit)


def _escaped(text: str) -> str:
    return "".join(c if c.isprintable() else c.encode("unicode_escape", "backslashreplace")
                   .decode("ascii") for c in text)


def terminal_safe(text: str) -> str:
    r"""``text`` (lines a command prints from a file another person may hand us) with
    every character a terminal would act on escaped but the line breaks: no escape
    sequence in a model's metadata or a log's name retitles the window or recolours it.

    >>> print(terminal_safe("a\x1b]0;title\x07b\nc"))
    a\x1b]0;title\x07b
    c
    """
    return "\n".join(_escaped(line) for line in text.split("\n"))


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 3, EXCERPT, EXCERPT
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 8


def shown(value: Any, limit: int = EXCERPT) -> str:
    """A value read from a log as a message shows it: its ``repr`` if short; else an
    excerpt (a string's first characters and its length, a number's first digits and
    how many, a list's first items, nested three deep at most).

    >>> shown("x" * 200, 5)
    "'xxxxx'… (200 characters)"
    >>> shown(10 ** 399, 12)
    '100000000000… (400 digits)'
    >>> shown([[[[[1]]]]])
    '[[[[...]]]]'
    """
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}… ({len(value):,} characters)"
    if isinstance(value, int) and not isinstance(value, bool):
        if value.bit_length() > 14_000:  # past what str() converts (4,300 digits)
            return f"a number of {value.bit_length():,} bits"
        digits = str(value)
        return digits if len(digits) <= limit else \
            f"{digits[:limit]}… ({len(digits.lstrip('-')):,} digits)"
    return excerpt(_REPR.repr(value), limit)


# A whole number as logs write it: ASCII digits (``str.isdigit`` and ``int`` take other
# scripts' digits, and superscripts that ``int`` then refuses), no sign or underscore.
_WHOLE = re.compile(r"-?[0-9]+")


def whole_number(text: str, what: str, low: int, high: int) -> int:
    """``text`` as a whole number from ``low`` to ``high``, written in ASCII digits;
    ``ValueError`` naming ``what`` otherwise.

    >>> whole_number("42", "hand number", 0, 10 ** 18)
    42
    >>> whole_number("3²", "hand number", 0, 99)
    Traceback (most recent call last):
    ...
    ValueError: hand number '3²': want a whole number from 0 to 99
    """
    if _WHOLE.fullmatch(text) and len(text) <= len(str(high)) + 1 and \
            low <= (number := int(text)) <= high:
        return number
    raise ValueError(f"{what} {shown(text)}: want a whole number from {low:,} to {high:,}")


def json_int(value: Any, what: str, low: int, high: int) -> int:
    """A JSON value that must be a whole number from ``low`` to ``high`` (not a bool, not
    a float); ``ValueError`` naming ``what`` otherwise."""
    if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
        return value
    raise ValueError(f"{what} {shown(value)}: want a whole number from {low:,} to {high:,}")


def json_number(value: Any, what: str, low: float, high: float) -> float:
    """A JSON value that must be a number from ``low`` to ``high``; ``ValueError`` naming
    ``what`` otherwise (a 400-digit integer included: compared before it is made a
    float, which it could not be).

    >>> json_number(10 ** 400, "limit", 0, 100)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: limit 100000...… (401 digits): want a number from 0 to 100
    """
    if isinstance(value, int | float) and not isinstance(value, bool) and \
            low <= value <= high:  # NaN compares false
        return float(value)
    raise ValueError(f"{what} {shown(value)}: want a number from {low:g} to {high:g}")


def regular_file(path: Path, directory: Path | None = None) -> str:
    """Why ``path`` is not a file a reader may open ("" if it is): a pipe or a device
    (opening one waits for a writer, or reads forever), or, for a file of
    ``directory``, a symbolic link that leaves it (the source is the directory's files,
    not what its links reach). Nothing is opened."""
    try:
        mode = os.lstat(path).st_mode  # one call for the usual case, a plain file
        if stat.S_ISREG(mode):
            return ""
        linked = stat.S_ISLNK(mode)
        if linked:
            mode = os.stat(path).st_mode
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if stat.S_ISDIR(mode):
        return "a directory"
    if not stat.S_ISREG(mode):
        return "not a regular file (a pipe, a socket, a device?): not opened"
    if directory is not None and linked:
        target, inside = Path(os.path.realpath(path)), Path(os.path.realpath(directory))
        if not target.is_relative_to(inside):
            return f"a symbolic link to outside {directory}: not followed"
    return ""


# a store's own files (batchrl.store), no one else's to write: its manifest (what marks a
# directory as a store), its writers' lock, its parts
STORE_MANIFEST, STORE_LOCK = "store.json", ".lock"
STORE_OWN = (STORE_MANIFEST, STORE_LOCK, "parts")


def writable_file(path: Path) -> str:
    """Why ``path`` may not be written as a file ("" if it may): only a new name or a
    regular file is replaced, never a device, a pipe, a directory or a symbolic link (a
    rename over it would replace the node, or write where the link points), and never
    a store's own files (its manifest, its lock, its parts).
    Nothing is opened.

    >>> writable_file(Path("/dev/null"))
    'not a regular file (a pipe, a socket, a device?): not replaced'
    """
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        return f"cannot be written ({exc.strerror})"
    if mode is not None:
        if stat.S_ISLNK(mode):
            return "a symbolic link: not followed, not replaced"
        if stat.S_ISDIR(mode):
            return "a directory"
        if not stat.S_ISREG(mode):
            return "not a regular file (a pipe, a socket, a device?): not replaced"
    here = Path(os.path.abspath(path))
    for store in here.parents[:2]:
        if (store / STORE_MANIFEST).is_file():
            if here.relative_to(store).parts[0] in STORE_OWN:
                return (f"a file of the store {store} (its manifest, its lock or its "
                        f"parts): a model goes in {store / 'models'}/ or outside the store")
            break
    return ""


def check_writable(path: Path, what: str = "") -> Path:
    """``path``, where it may be written as a file (`writable_file`); a `ValueError`
    naming it and why not otherwise."""
    if why := writable_file(path):
        raise ValueError(f"{what + ' ' if what else ''}{path}: {why}")
    return path


def directory_files(directory: Path, pattern: str = "*") -> tuple[list[Path],
                                                                   list[tuple[Path, str]]]:
    """The regular files of ``directory`` whose names match ``pattern``, in name order
    (hidden ones and subdirectories passed over); and the others that match, each with
    why it is not read (``regular_file``): none of them is opened."""
    files, refused = [], []
    for f in sorted(directory.glob(pattern)):
        if f.name.startswith("."):
            continue
        why = regular_file(f, directory)
        if not why:
            files.append(f)
        elif why != "a directory":
            refused.append((f, why))
    return files, refused


class LogLines:
    """The text lines of a log file, for one pass.

    Read as bytes, so ``progress`` can be told how many have been read, and so
    that a byte that is not UTF-8 spoils one line (which the readers report)
    rather than the file. CRLF endings, trailing blanks and a byte-order mark
    are dropped. After the pass, ``unterminated`` is the number of the last
    line if the file ends in the middle of it (a log cut off while written).
    A line longer than ``MAX_LINE`` characters comes out cut to more than
    ``MAX_LINE`` (so its reader refuses it: ``line_too_long``), the rest of it
    passed over unread into memory. ``progress`` is told each ``every`` bytes or so (a
    reader that spends long on each line wants it more often than ingest's mebibyte).
    """

    def __init__(self, path: str | Path, progress: Callable[[int], None] | None = None,
                 every: int = 1 << 20) -> None:
        self.path = Path(path)
        self.progress = progress
        self.every = every
        self.unterminated: int | None = None

    def __iter__(self) -> Iterator[str]:
        pending = 0
        # a UTF-8 character is at most 4 bytes, and a byte that is none 1 character: a
        # line cut at this many bytes still has more than MAX_LINE characters
        most = 4 * MAX_LINE + 4
        with open(self.path, "rb") as f:
            read = f.readline
            lineno = 0
            while raw := read(most):
                lineno += 1
                pending += len(raw)
                end = raw
                while len(end) == most and not end.endswith(b"\n"):  # passed over
                    end = read(most)
                    pending += len(end)
                if self.progress is not None and pending >= self.every:
                    self.progress(pending)
                    pending = 0
                if not end.endswith(b"\n"):
                    self.unterminated = lineno
                text = raw.decode("utf-8", "replace").rstrip("\r\n \t")
                yield text.removeprefix("\ufeff") if lineno == 1 else text
        if self.progress is not None and pending:
            self.progress(pending)


def line_too_long(source: str, line: int, text: str, limit: int = MAX_LINE) -> BadLine | None:
    """The ``BadLine`` of a line longer than ``limit`` characters, or None."""
    if len(text) <= limit:
        return None
    return BadLine(source, line, f"a line of more than {limit:,} characters: no record is "
                   f"near that long", text)


def head_lines(path: Path, lines: int = SNIFF_LINES) -> list[str]:
    """A file's first ``lines`` lines (for telling its format), ends stripped and each
    cut to ``MAX_LINE`` characters; [] for a directory, a pipe or a device, or a file
    that cannot be read."""
    if regular_file(path):
        return []
    out: list[str] = []
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as f:
            while len(out) < lines and (line := f.readline(MAX_LINE + 1)):
                out.append(line.rstrip("\r\n"))
                rest = line
                while len(rest) > MAX_LINE and not rest.endswith("\n"):  # passed over
                    rest = f.readline(MAX_LINE + 1)
    except OSError:
        return []
    return out
