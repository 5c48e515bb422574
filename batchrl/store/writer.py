"""Writing a source: `SourceWriter` and the checks each batch of rows must pass.

A writer streams one source's rows into a temporary part and lands it whole on a clean
exit (see the package docstring); a killed writer's temp part is swept by the next one.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from numpy.typing import NDArray

from batchrl.store.content import CONTENT_KEY, ContentDigest
from batchrl.store.files import fsync, now
from batchrl.store.lock import store_lock
from batchrl.store.rowcheck import WRITTEN, first_broken
from batchrl.store.rows import Rows, following_rows
from batchrl.store.schema import (
    CORE_COLUMNS,
    MATRICES,
    META_KEY,
    NUMERIC,
    STRING_DICT,
    StoreError,
    StoreSchema,
    episode_id,
    source_key,
)

# Each feature and each legal action is a column of its own (schema version 3), so any
# Parquet reader takes it by name; the scalar columns are zstd level 3, dictionary encoded.
# The matrices' columns are plain and zstd level 1: on 800,000 Tressette rows (287 int8
# features, 40 actions) that wrote in 1.34 s, 26.7 MB, where delta-packed integers and
# level 3 took 1.97 s for 20.7 MB and lz4 0.97 s for 66 MB (reading back: 0.47, 0.43, 0.20 s).
# benchmarks/store_layout.py times the whole against schema version 2's binary rows.
COMPRESSION, COMPRESSION_LEVEL = "zstd", 3
MATRIX_COMPRESSION_LEVEL = 1
# Small writes are buffered into row groups of this size: compression needs big groups,
# and this bound is all the memory a writer holds.
ROW_GROUP_ROWS = 128 * 1024
# the lowest valid value of each integer column a batch is checked against
_LOWEST = {"step": 0, "player": 0, "action": 0, "line": 1}


class SourceWriter:
    """Streams one source's rows into a temporary part; lands it on a clean ``with`` exit.

    Episodes are counted as runs of equal ids, so a parser writes each episode's rows
    together (hand by hand); an episode split inside one batch is refused.
    """

    def __init__(self, schema: StoreSchema, parts_dir: Path, source_path: str | Path,
                 digest: str, store_id: str | None = None) -> None:
        if not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise StoreError(f"digest {digest!r} is not a sha256 hex string: compute it with "
                             "batchrl.store.file_digest(path)")
        self._schema, self._arrow, self._digest = schema, schema.arrow_schema(), digest
        self._store_id = store_id  # the store's name, in the footer (none in an old store)
        self._source, self._resolved = str(source_path), str(Path(source_path).resolve())
        key = source_key(source_path)
        self._final = parts_dir / f"{key}.parquet"
        self._tmp = parts_dir / f".{key}.tmp-{os.getpid()}"
        self._writer: Any = None
        self._pending: list[pa.RecordBatch] = []
        # row groups are encoded and compressed on a thread of their own (pyarrow lets go of
        # the GIL), beside the caller making the next rows; one group at a time in flight
        self._pool: ThreadPoolExecutor | None = None
        self._in_flight: Future[None] | None = None
        self._rows = self._episodes = 0
        self._last_episode: str | None = None
        self._players: set[int] = set()
        self._extra: dict[str, Any] = {}
        # "following" stores: the rows of the last episode written whose next row of the
        # same player has not come yet (player -> (line, the next_state they gave))
        self._open: dict[int, tuple[int, NDArray[Any]]] = {}
        self._last_open_episode: str | None = None
        self._lock = contextlib.ExitStack()
        self._content = ContentDigest(self._arrow.names)  # of the rows as written

    def __enter__(self) -> SourceWriter:
        # the store's lock, from here to the part's landing (an ingest holds it already)
        self._lock.enter_context(store_lock(self._final.parent.parent))
        try:
            return self._start()
        except BaseException:
            self._lock.close()
            raise

    def _start(self) -> SourceWriter:
        _remove_stale_temps(self._tmp.parent)
        # The matrices' columns: no dictionary (a feature's values are few, but hashing
        # every value cost more than it saved) and no min/max statistics (5% of the writing,
        # and a reader filters on the scalar columns); the rest dictionary encoded. Every
        # page carries a CRC32 that readers check (`Store.check`): a flipped byte that zstd
        # would decode into other numbers without a word is caught. Writing and reading
        # 786,432 Tressette rows took as long with it as without (within the noise of
        # 1.3-1.5 s and 0.8-0.9 s), and the part grew 0.25%.
        matrix = {c for cs in self._schema.columns().values() for c in cs}
        scalar = [n for n in self._arrow.names if n not in matrix]
        level = {n: MATRIX_COMPRESSION_LEVEL if n in matrix else COMPRESSION_LEVEL
                 for n in self._arrow.names}
        self._writer = pq.ParquetWriter(self._tmp, self._arrow, compression=COMPRESSION,
                                        compression_level=level, use_dictionary=scalar,
                                        write_statistics=scalar,
                                        column_encoding=dict.fromkeys(matrix, "PLAIN"),
                                        write_page_checksum=True)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if exc_type is None:
                self._commit()
        finally:
            # a failing close must not hide the exception that brought us here
            try:
                with contextlib.suppress(Exception):
                    self._wait()
                if self._pool is not None:
                    self._pool.shutdown()
                with contextlib.suppress(Exception):
                    self._writer.close()
                self._tmp.unlink(missing_ok=True)
                self._writer = None
            finally:
                self._lock.close()  # whatever failed above, the store is not left held

    def write(self, batch: Rows | Mapping[str, Any]) -> None:
        """Append rows: a `Rows`, or column name -> array (``source`` may be left out)."""
        if self._writer is None:
            raise StoreError("write() outside its block: use `with store.writer(...) as w:`")
        record = self._to_record_batch(batch.columns() if isinstance(batch, Rows) else batch)
        self._pending.append(record)
        self._rows += record.num_rows
        if sum(b.num_rows for b in self._pending) >= ROW_GROUP_ROWS:
            self._flush()

    def set_stats(self, extra: Mapping[str, Any]) -> None:
        """Record JSON-able ingest stats (replacing earlier ones) as `SourceInfo.extra`."""
        try:
            self._extra = json.loads(json.dumps(dict(extra)))
        except (TypeError, ValueError) as e:
            raise StoreError(f"ingest stats for {self._source} must be JSON-able ({e})") from e

    def _flush(self, final: bool = False) -> None:
        # whole row groups go out; the remainder waits for more rows unless this is the end
        table = pa.Table.from_batches(self._pending, schema=self._arrow)
        cut = table.num_rows if final else table.num_rows - table.num_rows % ROW_GROUP_ROWS
        self._wait()
        if cut:
            self._content.update(table.slice(0, cut))
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="batchrl-writer")
            self._in_flight = self._pool.submit(self._writer.write_table, table.slice(0, cut),
                                                row_group_size=ROW_GROUP_ROWS)
        self._pending = table.slice(cut).to_batches()

    def _wait(self) -> None:
        """Until the row groups in flight are written (raising what writing them raised)."""
        if self._in_flight is not None:
            done, self._in_flight = self._in_flight, None
            done.result()

    def _commit(self) -> None:
        self._close_open()
        self._flush(final=True)
        self._wait()
        source = {"path": self._source, "resolved_path": self._resolved, "digest": self._digest,
                  "rows": self._rows, "episodes": self._episodes,
                  "players": sorted(self._players), "extra": self._extra,
                  "ingested_at": now(), CONTENT_KEY: self._content.hexdigests()}
        # The footer's Arrow schema was serialised before the first row, so the counts go
        # into the Parquet key-value metadata, which overrides the same key there.
        meta = self._schema.identity() | {"source": source}
        if self._store_id is not None:
            meta["store_id"] = self._store_id
        self._writer.add_key_value_metadata({META_KEY: json.dumps(meta)})
        self._writer.close()
        fsync(self._tmp)  # the bytes must be on disk before the name points at them
        os.replace(self._tmp, self._final)
        fsync(self._final.parent)

    def _to_record_batch(self, batch: Mapping[str, Any]) -> pa.RecordBatch:
        cols, what = dict(batch), f"batch for {self._source}"
        n = len(cols["action"]) if np.ndim(cols.get("action", 0)) else -1
        if "source" not in cols:  # one value: straight to its dictionary, no per-row strings
            cols["source"] = pa.DictionaryArray.from_arrays(
                pa.array(np.zeros(max(n, 0), dtype=np.int32)), pa.array([self._source]))
        records = self._schema.legal
        # a store made before stores recorded each row's legal actions leaves them out;
        # one that records them finds them missing when a game gives none
        if not records or cols.get("legal") is None:
            cols.pop("legal", None)
        expected = (*CORE_COLUMNS, *self._schema.audit_columns, *(["legal"] if records else []))
        missing, unknown = [c for c in expected if c not in cols], sorted(set(cols) - {*expected})
        if missing or unknown:
            raise StoreError(f"{what}: missing columns {missing}, unknown columns {unknown}; "
                             f"a row has exactly {list(expected)}")
        widths = {"state": len(self._schema.feature_names),
                  "next_state": len(self._schema.feature_names),
                  "next_legal": len(self._schema.action_names),
                  "legal": len(self._schema.action_names)}
        top = {"action": len(self._schema.action_names) - 1}
        arr = {name: _array(cols, name, (n, widths[name]), self._schema.matrix_dtype(name),
                            labels=self._schema.feature_names)
               if name in MATRICES else
               _array(cols, name, (n,), np.dtype(dtype), _LOWEST.get(name), top.get(name))
               for name, dtype in NUMERIC.items() if name != "legal" or records}
        source = _encoded(_strings(cols, "source", n))
        if n and pc.any(pc.not_equal(source.dictionary, self._source)).as_py():
            raise StoreError(f"{what} has rows of another source; leave the 'source' column "
                             "out and the writer fills it")
        # the rules a reader holds rows to (batchrl.store.rowcheck), held at the source
        if (broken := first_broken(self._schema, arr, self._schema.feature_names)) is not None:
            row, why = broken
            raise StoreError(f"{self._source}: a batch of rows, row {row + 1:,} (line "
                             f"{int(arr['line'][row]):,} of its log): {why}: {WRITTEN}")
        self._players.update(np.unique(arr["player"]).tolist())
        episodes = self._episodes_of(_encoded(_strings(cols, "episode", n)))
        if self._schema.next_state == "following":
            self._check_following(episodes, arr)
        columns: dict[str, Any] = {name: a for name, a in arr.items() if name not in MATRICES}
        for matrix, names in self._schema.columns().items():
            if names:  # each feature's values contiguous, a column at a time
                columns |= dict(zip(names, _transposed(arr[matrix]), strict=True))
        columns |= {"episode": episodes, "source": source}
        columns |= {c: _decoded(_strings(cols, c, n)) for c in self._schema.audit_columns}
        return pa.RecordBatch.from_pydict(columns, schema=self._arrow)

    def _check_following(self, episodes: pa.DictionaryArray, arr: Mapping[str, Any]) -> None:
        """In a "following" store, check that each row's next_state is the state of the next
        row of its episode and player, and zeros where none follows: the reader derives it
        so, and a row that breaks it would be read back wrong."""
        state, nxt, line = arr["state"], arr["next_state"], arr["line"]
        player = arr["player"].astype(np.int64)
        if not len(player):
            return
        codes = episodes.indices.to_numpy().astype(np.int64)
        first, last = episodes.dictionary[int(codes[0])].as_py(), int(codes[-1])
        # the open rows of the episode the last batch ended in
        if self._open:
            going_on = first == self._last_open_episode
            for p, (at, expected) in list(self._open.items()):
                mine = (np.flatnonzero((player == p) & (codes == codes[0])) if going_on
                        else np.empty(0, np.int64))
                if len(mine):
                    self._same_state(expected, state[mine[0]], at, int(line[mine[0]]))
                elif going_on and int(codes[0]) == last:
                    continue  # the episode goes on past this batch too
                else:
                    self._nothing_follows(expected, at)
                del self._open[p]
        follower = following_rows(codes, player)
        has = follower >= 0
        if not np.array_equal(nxt[has], state[follower[has]]):
            bad = np.flatnonzero(has)[np.flatnonzero(
                (nxt[has] != state[follower[has]]).any(axis=1))[0]]
            self._same_state(nxt[bad], state[follower[bad]], int(line[bad]),
                             int(line[follower[bad]]))
        # rows nothing follows in this batch: the last episode's may go on in the next one
        ended = ~has & (codes != last)
        if (wrong := ended & nxt.any(axis=1)).any():
            first_wrong = int(np.flatnonzero(wrong)[0])
            self._nothing_follows(nxt[first_wrong], int(line[first_wrong]))
        for row in np.flatnonzero(~has & (codes == last)).tolist():
            self._open[int(player[row])] = (int(line[row]), nxt[row].copy())
        self._last_open_episode = episodes.dictionary[last].as_py()

    def _close_open(self) -> None:
        for at, expected in self._open.values():
            self._nothing_follows(expected, at)
        self._open.clear()

    def _same_state(self, expected: NDArray[Any], found: NDArray[Any], at: int,
                    then: int) -> None:
        if not np.array_equal(expected, found):
            raise StoreError(
                f"{self._source}: the row of line {at} has a next_state other than the state "
                f"of its player's next row (line {then}), which a store with next_state "
                "'following' derives it from: the game's rows break its schema (declare "
                "next_state='stored')")

    def _nothing_follows(self, expected: NDArray[Any], at: int) -> None:
        if np.any(expected):
            raise StoreError(
                f"{self._source}: the row of line {at} is its player's last in the episode but "
                "has a next_state other than zeros, which a store with next_state 'following' "
                "reads back as zeros: the game's rows break its schema (declare "
                "next_state='stored')")

    def _episodes_of(self, encoded: pa.DictionaryArray) -> pa.DictionaryArray:
        if len(encoded) == 0:
            return encoded
        prefix = episode_id(self._digest, 0)[:17]
        if not pc.all(pc.starts_with(encoded.dictionary, pattern=prefix)).as_py():
            raise StoreError(f"episode ids of {self._source} must start with {prefix!r}, its "
                             "sha256 prefix: build them with batchrl.store.episode_id")
        codes = encoded.indices.to_numpy()
        runs = 1 + int(np.count_nonzero(codes[1:] != codes[:-1]))
        if runs != len(encoded.dictionary):
            raise StoreError(f"batch for {self._source}: an episode's rows are not contiguous; "
                             "write each episode's rows together")
        first = encoded.dictionary[int(codes[0])].as_py()
        last = encoded.dictionary[int(codes[-1])].as_py()
        self._episodes += runs - (first == self._last_episode)  # continued episode
        self._last_episode = last
        return encoded


def _array(cols: Mapping[str, Any], name: str, shape: tuple[int, ...],
           dtype: np.dtype[Any], low: int | None = None, high: int | None = None,
           labels: tuple[str, ...] = ()) -> NDArray[Any]:
    """One column, checked and cast to its stored ``dtype``: shape, kind, range for ints,
    finite for floats, and for an int8 or uint8 state every value whole and in range
    (``labels`` name a vector column's entries in that error)."""
    a = np.asarray(cols[name])
    if a.shape != shape:
        raise StoreError(f"column {name!r} has shape {a.shape}; expected {shape} "
                         "(rows, then features or actions for vector columns)")
    given = np.dtype(NUMERIC[name])  # what a batch gives, whatever the store keeps
    if a.dtype.kind not in {"b": "b", "i": "iu", "f": "fiu"}[given.kind]:
        raise StoreError(f"column {name!r} must be {given}, not {a.dtype}")
    if low is not None and a.size:
        high = int(np.iinfo(dtype).max) if high is None else high
        if int(a.min()) < low or int(a.max()) > high:
            raise StoreError(f"column {name!r} has values outside [{low}, {high}]")
    with np.errstate(invalid="ignore"):  # a NaN cast to an int is caught just below
        out = np.ascontiguousarray(a, dtype=dtype)
    # a NaN or inf reward or feature would silently poison every fitted Q value
    if out.dtype.kind == "f" and not np.isfinite(out).all():
        raise StoreError(f"column {name!r} has a NaN or infinite value")
    # a fraction, or wrapped around (nothing to lose when the batch has the stored dtype)
    if out.dtype.kind in "iu" and a.dtype != out.dtype and (bad := out != a).any():
        at = tuple(np.argwhere(bad)[0].tolist())
        where = f"row {at[0]}" + (f", feature {labels[at[1]]!r}" if len(at) > 1 else "")
        info = np.iinfo(dtype)
        raise StoreError(f"column {name!r} has {a[at]} at {where}: this store keeps it as "
                         f"{dtype}, whole numbers from {info.min} to {info.max} (a schema with "
                         "state_dtype 'float32' keeps any number)")
    return out


def _transposed(matrix: NDArray[Any], block: int = 64) -> NDArray[Any]:
    """``matrix.T`` laid out row by row, so each of its columns is one contiguous run;
    copied a few rows at a time, which keeps both sides in cache (twice as fast as
    ``np.asfortranarray`` on 287 int8 columns)."""
    out = np.empty((matrix.shape[1], len(matrix)), matrix.dtype)
    for start in range(0, len(matrix), block):
        out[:, start:start + block] = matrix[start:start + block].T
    return out


def _strings(cols: Mapping[str, Any], name: str, n: int) -> pa.Array:
    """A string column: any sequence of strings, or a ``pa.DictionaryArray`` of string
    values (codes and the distinct strings: no Python string per row)."""
    value = cols[name]
    if isinstance(value, pa.DictionaryArray):
        kind = value.dictionary.type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
            raise StoreError(f"column {name!r} must hold strings (a dictionary of {kind})")
        arr: pa.Array = value.cast(STRING_DICT)
        if arr.dictionary.null_count:  # a missing value in the dictionary: count it per row
            arr = arr.dictionary.take(arr.indices)
    else:
        try:  # an empty np.array([]) is float64, which arrow will not read as strings
            arr = pa.array(value if np.size(value) else [], type=pa.string())
        except (pa.ArrowException, TypeError) as e:
            raise StoreError(f"column {name!r} must hold strings ({e})") from e
    if len(arr) != n or arr.null_count:
        raise StoreError(f"column {name!r} has {len(arr)} values with {arr.null_count} missing; "
                         f"expected {n} strings")
    return arr


def _encoded(arr: pa.Array) -> pa.DictionaryArray:
    """``arr`` dictionary encoded as ``dictionary_encode`` would: int32 codes, each
    distinct string once, in order of first appearance. A dictionary given already so is
    kept as it is (checked in one pass over its codes); another is decoded and encoded."""
    if isinstance(arr, pa.DictionaryArray):
        codes = arr.indices.to_numpy(zero_copy_only=False)
        seen = np.maximum.accumulate(codes) if len(codes) else codes
        # each code at most one above every earlier one, and every entry used once: the
        # order of first appearance, so this is what dictionary_encode would give
        if ((not len(codes) and not len(arr.dictionary))
                or (len(codes) and codes[0] == 0 and seen[-1] == len(arr.dictionary) - 1
                    and not (np.diff(seen) > 1).any()
                    and pc.count_distinct(arr.dictionary).as_py() == len(arr.dictionary))):
            return arr
        arr = arr.dictionary.take(arr.indices)
    encoded: pa.DictionaryArray = arr.dictionary_encode()
    return encoded


def _decoded(arr: pa.Array) -> pa.Array:
    """Plain strings, from a dictionary of them (the store keeps audit columns plain)."""
    return arr.dictionary.take(arr.indices) if isinstance(arr, pa.DictionaryArray) else arr


def _remove_stale_temps(parts: Path) -> None:
    """Delete temp parts of killed writers: those whose process is gone."""
    for tmp in parts.glob(".*.tmp-*"):
        pid = tmp.name.rsplit("-", 1)[-1]
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                tmp.unlink(missing_ok=True)
            except (OSError, OverflowError):
                pass  # alive but not ours, or not a pid at all: leave it
