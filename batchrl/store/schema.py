"""A store's identity: its schema, the ids and keys of what it holds, and its errors.

`StoreSchema` fixes a store's game, features, actions, audit columns and the dtype its
states are kept in; every part's footer and ``store.json`` carry its
`~StoreSchema.identity`, and a store accepts only rows of an equal schema.

A vector column (``state``, ``next_state``, ``next_legal``) holds one fixed-size binary
value per row: the row's numbers in the schema's dtype, back to back (`encode_rows`,
`decode_rows`). Parquet writes a list column value by value, with a repetition level for
each; as one value a row is several times faster to write and to read.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import DTypeLike, NDArray

# 2: vector columns as fixed-size binary rows in the schema's state_dtype (1: lists of float32)
SCHEMA_VERSION: int = 2
# the dtypes a store may keep its states in; integer ones hold whole numbers in their range
STATE_DTYPES = ("float32", "int8", "uint8")

META_KEY = b"batchrl"
STRING_DICT = pa.dictionary(pa.int32(), pa.string())
# numeric core columns and their dtypes as written and read back (vector columns are
# stored as `StoreSchema.vectors` says); episode and source are dictionary strings
NUMERIC: dict[str, type[np.generic]] = {
    "step": np.int32, "player": np.int8, "state": np.float32, "action": np.int8,
    "reward": np.float64, "next_state": np.float32, "next_legal": np.bool_,
    "terminal": np.bool_, "truncated": np.bool_, "line": np.int64}
CORE_COLUMNS = ("episode", "step", "player", "state", "action", "reward", "next_state",
                 "next_legal", "terminal", "truncated", "source", "line")


class StoreError(Exception):
    """A store cannot be used as asked; the message says what is wrong and what to do."""


def file_digest(path: str | Path) -> str:
    """Full sha256 hex of a file's bytes, streamed."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def default_store_path() -> Path:
    """``$BATCHRL_STORE`` if set, else ``datasets/store`` under the current directory."""
    env = os.environ.get("BATCHRL_STORE")
    return Path(env).expanduser() if env else Path("datasets") / "store"


def episode_id(digest: str, index: int) -> str:
    """The stable id of the ``index``-th hand of the source whose sha256 is ``digest``.

    >>> episode_id("ab" * 32, 7)
    'abababababababab:7'
    """
    return f"{digest[:16]}:{index}"


def source_key(source_path: str | Path) -> str:
    """A part's name: where the file is, not what it holds, so a changed log replaces it."""
    return hashlib.sha256(str(Path(source_path).resolve()).encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class StoreSchema:
    """What a store holds; a store accepts only rows of an equal schema."""

    game: str
    feature_names: tuple[str, ...]
    action_names: tuple[str, ...]
    audit_columns: tuple[str, ...] = ()
    game_params: Mapping[str, Any] = field(default_factory=dict, hash=False)
    # how ``state`` and ``next_state`` are kept on disk; they are read back as float32
    state_dtype: str = "float32"

    def __post_init__(self) -> None:
        for name in ("feature_names", "action_names", "audit_columns"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        names = (*CORE_COLUMNS, *self.audit_columns)
        if (len(set(self.feature_names)) < len(self.feature_names) or not self.feature_names
                or len(set(names)) < len(names) or not 0 < len(self.action_names) < 128):
            raise StoreError(f"{self.game}: feature names must be distinct, audit columns "
                             "must not repeat core columns, and there must be 1..127 actions")
        try:  # the JSON round trip makes a schema read back from disk compare equal
            params = json.loads(json.dumps(dict(self.game_params), sort_keys=True))
        except (TypeError, ValueError) as e:
            raise StoreError(f"{self.game}: game_params must be JSON-able ({e})") from e
        object.__setattr__(self, "game_params", MappingProxyType(params))
        if self.state_dtype not in STATE_DTYPES:
            raise StoreError(f"{self.game}: state_dtype {self.state_dtype!r} is not one of "
                             f"{', '.join(STATE_DTYPES)}")

    def identity(self) -> dict[str, Any]:
        """The JSON written to store.json and to every part's footer."""
        return {"schema_version": SCHEMA_VERSION, "game": self.game,
                "game_params": dict(self.game_params), "feature_names": list(self.feature_names),
                "action_names": list(self.action_names), "audit_columns": list(self.audit_columns),
                "state_dtype": self.state_dtype}

    @classmethod
    def from_identity(cls, meta: Mapping[str, Any]) -> StoreSchema:
        return cls(meta["game"], tuple(meta["feature_names"]), tuple(meta["action_names"]),
                   tuple(meta["audit_columns"]), meta["game_params"], meta["state_dtype"])

    def vectors(self) -> dict[str, tuple[int, np.dtype[Any]]]:
        """Each vector column's row length and stored dtype (``next_legal``: a 0/1 byte per
        action)."""
        f, state = len(self.feature_names), np.dtype(self.state_dtype)
        return {"state": (f, state), "next_state": (f, state),
                "next_legal": (len(self.action_names), np.dtype(np.bool_))}

    def arrow_schema(self) -> pa.Schema:
        """A part's columns, with `identity` under ``b"batchrl"`` in the metadata."""
        def arrow_type(name: str) -> pa.DataType:
            if name in (vectors := self.vectors()):
                width, dtype = vectors[name]
                return pa.binary(width * dtype.itemsize)
            return pa.from_numpy_dtype(NUMERIC[name]) if name in NUMERIC else STRING_DICT

        fields = [pa.field(n, arrow_type(n), nullable=False) for n in CORE_COLUMNS]
        fields += [pa.field(n, pa.string(), nullable=False) for n in self.audit_columns]
        return pa.schema(fields, metadata={META_KEY: json.dumps(self.identity())})


def encode_rows(matrix: NDArray[Any]) -> pa.FixedSizeBinaryArray:
    """A 2-D array as a vector column: each row's bytes one value (no copy)."""
    matrix = np.ascontiguousarray(matrix)
    return pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(matrix.shape[1] * matrix.itemsize), len(matrix), [None, pa.py_buffer(matrix)])


def decode_rows(column: pa.ChunkedArray | pa.Array, dtype: DTypeLike, width: int,
                keep: list[int] | None = None, out: DTypeLike | None = None) -> NDArray[Any]:
    """A vector column as a fresh (rows, width) array: read as ``dtype`` chunk by chunk,
    only the ``keep`` columns if given, cast to ``out`` (default ``dtype``)."""
    if column.type.byte_width != width * np.dtype(dtype).itemsize:
        raise StoreError(f"a row of {column.type} is not {width} values of {np.dtype(dtype)}: "
                         "decode a vector column with its StoreSchema.vectors() entry")
    rows = np.empty((len(column), width if keep is None else len(keep)),
                    dtype if out is None else out)
    at = 0
    for chunk in column.chunks if isinstance(column, pa.ChunkedArray) else [column]:
        if n := len(chunk):  # a chunk may be a slice: its rows start chunk.offset rows in
            block = np.frombuffer(chunk.buffers()[1], dtype, n * width,
                                  chunk.offset * chunk.type.byte_width).reshape(n, width)
            # np.take: several times faster than block[:, keep]
            rows[at:at + n] = block if keep is None else np.take(block, keep, axis=1)
            at += n
    return rows


def describe_difference(held: StoreSchema, new: StoreSchema) -> str:
    """What sets a store's schema apart from the one asked for, in words."""
    if held.game != new.game:
        return f"game {held.game}, not {new.game}"
    parts = []
    if held.feature_names != new.feature_names:
        only_held = [f for f in held.feature_names if f not in new.feature_names]
        only_new = [f for f in new.feature_names if f not in held.feature_names]
        if only_held:
            parts.append(f"{', '.join(only_held)} among its features, which this ingest "
                         "leaves out")
        if only_new:
            parts.append(f"no {', '.join(only_new)} among its features")
        if not only_held and not only_new:
            parts.append("the same features in another order")
    old, now = held.identity(), new.identity()
    parts += [f"{k} {old[k]} (not {now[k]})" for k in old
              if old[k] != now[k] and k not in ("game", "feature_names")]
    return f"game {held.game} with " + "; ".join(parts)


def schema_of(meta: Mapping[str, Any], what: str) -> StoreSchema:
    if (version := meta.get("schema_version")) != SCHEMA_VERSION:
        raise StoreError(f"{what} was written by schema version {version}; this batchrl reads "
                         f"version {SCHEMA_VERSION}: re-ingest the logs into a new store "
                         "(batchrl ingest ... --store NEW_DIR)")
    try:
        return StoreSchema.from_identity(meta)
    except (KeyError, TypeError) as e:
        raise StoreError(f"{what} lacks {e}: it is not a batchrl store; use another --store "
                         "directory") from e
