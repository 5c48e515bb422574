"""A bench's output folder is one bench's at a time, and what it finds there is checked
as any input is: its rows (`load_rows`), its scores files (`load_scores`), each a regular
file that reads as what it should hold, else done again, saying so."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import hashlib
import json
import math
import os
import stat
import zipfile
import zlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from batchrl.play.bench.datasets import BenchError
from batchrl.play.bench.report import Row, json_default
from batchrl.records import printable, regular_file

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: a bench's folder is not locked there
    fcntl = None  # type: ignore[assignment]

LOCK = ".bench.lock"
# a normalized score is undefined (NaN) where the reference scores as random play does
UNDEFINED_AT_TIMES = ("normalized", "normalized_ci")
# a row's fields an earlier batchrl's rows did not have (its digest was taken without them)
LATER_FIELDS = ("opponents", "transfer", "exploitability")
# fields added after those, digested only where they hold something (a row of ``bench``
# without --ope digests as before them)
OPTIONAL_FIELDS = ("ope",)


@contextlib.contextmanager
def one_bench(out: Path) -> Iterator[None]:
    """Hold ``out`` for this bench: a second bench on it is refused at once, naming the
    first (the kernel lets the lock go when its process ends, killed or not)."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / LOCK
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        why = "a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
        raise BenchError(f"{path} cannot be the bench's lock ({why}): remove it and run "
                         "again") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BenchError(f"{path} is not a regular file, so not the bench's lock: "
                             "remove it and run again")
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
                held = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
                raise BenchError(f"another bench is writing {out} ({printable(held or '?')})"
                                 ": wait for it to finish, or give -o another folder") \
                    from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()}".encode(), 0)
        yield
    finally:
        os.close(fd)


def row_line(row: Row) -> str:
    """A row as ``results.jsonl`` keeps it: its fields and their digest, so a row edited
    since is known for one."""
    fields = dataclasses.asdict(row)
    return json.dumps(fields | {"digest": _digest(fields)}, default=json_default) + "\n"


def _digest(fields: dict[str, Any]) -> str:
    """The row's digest; a field added since (``OPTIONAL_FIELDS``) counts only where it
    holds something, so the rows written before it keep theirs."""
    fields = {k: v for k, v in fields.items() if not (k in OPTIONAL_FIELDS and v is None)}
    text = json.dumps(fields, sort_keys=True, default=json_default)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_rows(results: Path, say: Callable[[str], None]) -> tuple[list[Row], bool]:
    """The rows of ``results`` that read as rows (each field of its type, numbers
    finite, the digest it was written with), and whether any line did not (those are
    run again, and said)."""
    if why := regular_file(results):
        raise BenchError(f"{results} is {why.removesuffix(': not opened')}: a bench's "
                         "results are a file it wrote; remove it and run again")
    rows, cut = [], False
    for n, line in enumerate(results.read_text(errors="replace").splitlines(), 1):
        try:
            data = json.loads(line)
            digest = data.pop("digest", None) if isinstance(data, dict) else None
            row = row_of(data)
            fields = dataclasses.asdict(row)
            if digest != _digest(fields):
                before = {k: v for k, v in fields.items() if k not in LATER_FIELDS}
                raise ValueError(
                    "no digest (an older batchrl's row, or edited)" if digest is None else
                    "an older batchrl's row (before rows named whom they were scored "
                    "against)" if digest == _digest(before) else
                    "edited since it was written (its digest differs)")
            rows.append(row)
        except (ValueError, TypeError, RecursionError) as exc:
            say(f"{results}:{n}: not a result ({printable(str(exc), 80)}); that row is run "
                "again")
            cut = True
    return rows, cut


def row_of(data: Any) -> Row:
    """A `Row` from a line's JSON, each field checked against its type."""
    if not isinstance(data, dict):
        raise TypeError("not a JSON object")
    row = Row(**data)
    for f in dataclasses.fields(Row):
        value, kind = getattr(row, f.name), str(f.type)
        if f.name in UNDEFINED_AT_TIMES and isinstance(value, float) and math.isnan(value):
            continue
        ok = {"str": isinstance(value, str),
              "int | None": value is None or (isinstance(value, int) and
                                              not isinstance(value, bool)),
              "int": isinstance(value, int) and not isinstance(value, bool),
              "bool": isinstance(value, bool),
              "float | None": value is None or (isinstance(value, int | float) and
                                                not isinstance(value, bool)
                                                and math.isfinite(value)),
              "float": isinstance(value, int | float) and not isinstance(value, bool)
              and math.isfinite(value)}.get(kind, True)
        if not ok:
            raise ValueError(f"its {f.name} is {printable(repr(value), 40)}")
    if row.ope is not None and not _sound_ope(row.ope):
        raise ValueError(f"its ope is {printable(repr(row.ope), 40)}")
    return row


def _sound_ope(ope: Any) -> bool:
    """An ``ope`` field as the bench writes it: estimators' [value, low, high, normalized]
    (numbers or None), the two finite figures and the logs' folder."""
    if not isinstance(ope, dict) or set(ope) != {"estimates", "unsupported", "ess", "logs"} \
            or not isinstance(ope["logs"], str):
        return False
    number = (int, float)
    estimates = ope["estimates"]
    return isinstance(estimates, dict) and all(
        isinstance(k, str) and isinstance(v, list) and len(v) == 4 and all(
            x is None or (isinstance(x, number) and not isinstance(x, bool)
                          and math.isfinite(x)) for x in v)
        for k, v in estimates.items()) and all(
        isinstance(ope[k], number) and math.isfinite(ope[k]) for k in ("unsupported", "ess"))


Key = tuple[str, str, str, int | None, str, bool, str]  # Row.key()


class ResultsFile:
    """``OUT/results.jsonl``: the rows done so far (``done``, by `Row.key`), each added
    as it lands and kept through a kill: a line cut by one, or one no bench wrote, is
    dropped (and its row done again) before any row is added."""

    def __init__(self, path: Path, say: Callable[[str], None]) -> None:
        self.path = path
        self.done: dict[Key, Row] = {}
        if path.exists() or path.is_symlink():
            rows, cut = load_rows(path, say)
            self.done = {row.key(): row for row in rows}
            if cut:  # the file again of whole rows only, before any is added
                self.rewrite()

    def drop(self, key: Key) -> None:
        """Forget a row (to be done again), the file rewritten without it."""
        del self.done[key]
        self.rewrite()

    def rewrite(self) -> None:
        """The file made again of the rows done, replaced in one step."""
        tmp = self.path.with_name(f".{self.path.name}.tmp-{os.getpid()}")
        tmp.write_text("".join(row_line(r) for r in self.done.values()))
        os.replace(tmp, self.path)

    def append(self, row: Row) -> None:
        """Add ``row``: one write and an fsync, never through a link."""
        line = row_line(row).encode()
        try:  # never through a link: the rows are the folder's own file
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW,
                         0o644)
        except OSError as exc:
            raise BenchError(f"{self.path} cannot take a row ({exc.strerror}): remove it "
                             "and run again") from None
        try:  # one write: a kill leaves the line whole or cut, never run into the next
            if os.fstat(fd).st_size and _last_byte(self.path) != b"\n":
                line = b"\n" + line  # a line cut before: this row starts a line of its own
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
        self.done[row.key()] = row


def _last_byte(path: Path) -> bytes:
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1)


def replaceable(path: Path) -> None:
    """`BenchError` where a file the bench writes in its own folder is a directory
    (anything else there, a link or a pipe, is replaced by the file, not written into)."""
    if path.is_dir() and not path.is_symlink():
        raise BenchError(f"{path} is a directory where the bench keeps a file: remove it "
                         "and run again")


def load_scores(path: Path) -> dict[str, Any] | None:
    """A scores file as `score` wrote it, checked: a regular file, arrays only (no
    pickle), finite values, a whole number of units, the digest it was written with;
    None where it is not."""
    if regular_file(path):
        return None
    try:
        with np.load(path, allow_pickle=False) as f:
            got: dict[str, Any] = {"values": np.asarray(f["values"], dtype=np.float64),
                                   "name": str(f["name"]), "unit": str(f["unit"]),
                                   "per_unit": int(f["per_unit"]),
                                   "exact": bool(f["exact"])}
            digest = str(f["digest"]) if "digest" in f.files else ""
    except (OSError, KeyError, ValueError, TypeError, EOFError, zipfile.BadZipFile,
            zlib.error):
        return None
    values = got["values"]
    if values.ndim != 1 or not len(values) or not np.isfinite(values).all() or \
            got["per_unit"] < 1 or len(values) % got["per_unit"] or \
            digest != scores_digest(got):
        return None
    return got


def scores_digest(got: Mapping[str, Any]) -> str:
    """The digest a scores file keeps of what it holds: scores changed since (finite
    and plausible, say) are known for changed."""
    h = hashlib.sha256(np.ascontiguousarray(got["values"], dtype="<f8").tobytes())
    h.update(json.dumps([got["name"], got["unit"], int(got["per_unit"]),
                         bool(got["exact"])]).encode())
    return h.hexdigest()[:16]
