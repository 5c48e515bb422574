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
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from numpy.typing import NDArray

from batchrl.store.files import fsync, now
from batchrl.store.rows import Rows
from batchrl.store.schema import (
    CORE_COLUMNS,
    META_KEY,
    NUMERIC,
    STRING_DICT,
    StoreError,
    StoreSchema,
    encode_rows,
    episode_id,
    source_key,
)

# On 800,000 Tressette rows (state and next_state of 198 int8 features, next_legal of
# 40 bytes as binary rows) zstd-3 wrote 38 MB against snappy's 81 MB and lz4's 95 MB, in
# 0.8 s against 0.6 s, reading back in 0.4 s, no slower than either; zstd-1 was no
# faster. Packing next_legal into bits would save 0.9 of those 38 MB: not worth a step.
COMPRESSION, COMPRESSION_LEVEL = "zstd", 3
# The vector columns are written byte stream split: byte k of every row together, so
# each feature's values are one run for zstd. On 800,000 rows of 287 int8 features it
# wrote 34 MB in 1.0 s where plain rows took 55 MB in 1.2 s (read back: 0.38 s, 0.33 s).
VECTOR_ENCODING = "BYTE_STREAM_SPLIT"
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
                 digest: str) -> None:
        if not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise StoreError(f"digest {digest!r} is not a sha256 hex string: compute it with "
                             "batchrl.store.file_digest(path)")
        self._schema, self._arrow, self._digest = schema, schema.arrow_schema(), digest
        self._source, self._resolved = str(source_path), str(Path(source_path).resolve())
        key = source_key(source_path)
        self._final = parts_dir / f"{key}.parquet"
        self._tmp = parts_dir / f".{key}.tmp-{os.getpid()}"
        self._writer: Any = None
        self._pending: list[pa.RecordBatch] = []
        self._rows = self._episodes = 0
        self._last_episode: str | None = None
        self._players: set[int] = set()
        self._extra: dict[str, Any] = {}

    def __enter__(self) -> SourceWriter:
        _remove_stale_temps(self._tmp.parent)
        # Dictionary encoding for all but the vector columns: their rows are nearly all
        # distinct, so Parquet would hash every row only to fall back to plain (Tressette:
        # the same 36 MB, 10% slower); on the scalar columns it saves 1-2% of a part.
        vectors = self._schema.vectors()
        dictionary = [n for n in self._arrow.names if n not in vectors]
        # no min/max statistics for the vectors: the bytes of a state row have no useful
        # order, and comparing every row cost 5% of the writing
        self._writer = pq.ParquetWriter(self._tmp, self._arrow, compression=COMPRESSION,
                                        compression_level=COMPRESSION_LEVEL,
                                        use_dictionary=dictionary, write_statistics=dictionary,
                                        column_encoding=dict.fromkeys(vectors, VECTOR_ENCODING))
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if exc_type is None:
                self._commit()
        finally:
            # a failing close must not hide the exception that brought us here
            with contextlib.suppress(Exception):
                self._writer.close()
            self._tmp.unlink(missing_ok=True)
            self._writer = None

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
        if cut:
            self._writer.write_table(table.slice(0, cut), row_group_size=ROW_GROUP_ROWS)
        self._pending = table.slice(cut).to_batches()

    def _commit(self) -> None:
        self._flush(final=True)
        source = {"path": self._source, "resolved_path": self._resolved, "digest": self._digest,
                  "rows": self._rows, "episodes": self._episodes,
                  "players": sorted(self._players), "extra": self._extra,
                  "ingested_at": now()}
        # The footer's Arrow schema was serialised before the first row, so the counts go
        # into the Parquet key-value metadata, which overrides the same key there.
        meta = self._schema.identity() | {"source": source}
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
        expected = (*CORE_COLUMNS, *self._schema.audit_columns)
        missing, unknown = [c for c in expected if c not in cols], sorted(set(cols) - {*expected})
        if missing or unknown:
            raise StoreError(f"{what}: missing columns {missing}, unknown columns {unknown}; "
                             f"a row has exactly {list(expected)}")
        vectors, top = self._schema.vectors(), {"action": len(self._schema.action_names) - 1}
        arr = {name: _array(cols, name, (n, vectors[name][0]), vectors[name][1],
                            labels=self._schema.feature_names)
               if name in vectors else
               _array(cols, name, (n,), np.dtype(dtype), _LOWEST.get(name), top.get(name))
               for name, dtype in NUMERIC.items()}
        source = _encoded(_strings(cols, "source", n))
        if n and pc.any(pc.not_equal(source.dictionary, self._source)).as_py():
            raise StoreError(f"{what} has rows of another source; leave the 'source' column "
                             "out and the writer fills it")
        self._players.update(np.unique(arr["player"]).tolist())
        columns = {name: encode_rows(a) if a.ndim == 2 else a for name, a in arr.items()}
        columns |= {"episode": self._episodes_of(_encoded(_strings(cols, "episode", n))),
                    "source": source}
        columns |= {c: _decoded(_strings(cols, c, n)) for c in self._schema.audit_columns}
        return pa.RecordBatch.from_pydict(columns, schema=self._arrow)

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
