"""The transition store: one Parquet part per source log, read back as numpy arrays for FQI.

Layout::

    ROOT/store.json              schema version, game, game_params, feature/action names
    ROOT/parts/<key>.parquet     one part per source; <key> = sha256(resolved source path)[:16]

Each part's footer holds, as JSON under key ``b"batchrl"``, the store identity plus the
source's path, digest, counts and ingest stats; `Store.sources` reads footers only, so no
separate manifest can disagree with the parts.

A part lands whole or not at all: `SourceWriter` streams into ``parts/.<key>.tmp-<pid>``
and ``os.replace``-s it onto the part's name, replacing any earlier part of the same
source, so re-ingesting a path is idempotent. Readers list only ``parts/*.parquet``.

Concurrency: one writer per store at a time; nothing locks. A reader beside the writer
sees each part before or after its replacement, never half of it (but a part removed by
`Store.remove_source` between listing and reading makes that read fail).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from numpy.typing import NDArray

if TYPE_CHECKING:
    import pandas as pd

SCHEMA_VERSION: int = 1

# On 1M poker-like rows (24 mostly discrete features, 253 MB in memory) zstd-3 wrote
# 30.5 MB against snappy's 47.7 MB, writing in 1.65 s against 1.5 s, reading in 0.4 s both.
# Byte-stream-split on the floats grew it to 49 MB: it displaces Parquet's dictionary
# encoding, which is what wins on discrete features.
COMPRESSION, COMPRESSION_LEVEL = "zstd", 3
# Small writes are buffered into row groups of this size: compression needs big groups,
# and this bound is all the memory a writer holds.
ROW_GROUP_ROWS = 128 * 1024

_META_KEY = b"batchrl"
_STRING_DICT = pa.dictionary(pa.int32(), pa.string())
# numeric core columns and their stored dtypes; episode and source are dictionary strings
_NUMERIC: dict[str, type[np.generic]] = {
    "step": np.int32, "player": np.int8, "state": np.float32, "action": np.int8,
    "reward": np.float64, "next_state": np.float32, "next_legal": np.bool_,
    "terminal": np.bool_, "truncated": np.bool_, "line": np.int64}
_CORE_COLUMNS = ("episode", "step", "player", "state", "action", "reward", "next_state",
                 "next_legal", "terminal", "truncated", "source", "line")
_LOWEST = {"step": 0, "player": 0, "action": 0, "line": 1}


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

    def __post_init__(self) -> None:
        for name in ("feature_names", "action_names", "audit_columns"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        names = (*_CORE_COLUMNS, *self.audit_columns)
        if (len(set(self.feature_names)) < len(self.feature_names) or not self.feature_names
                or len(set(names)) < len(names) or not 0 < len(self.action_names) < 128):
            raise StoreError(f"{self.game}: feature names must be distinct, audit columns "
                             "must not repeat core columns, and there must be 1..127 actions")
        try:  # the JSON round trip makes a schema read back from disk compare equal
            params = json.loads(json.dumps(dict(self.game_params), sort_keys=True))
        except (TypeError, ValueError) as e:
            raise StoreError(f"{self.game}: game_params must be JSON-able ({e})") from e
        object.__setattr__(self, "game_params", MappingProxyType(params))

    def identity(self) -> dict[str, Any]:
        """The JSON written to store.json and to every part's footer."""
        return {"schema_version": SCHEMA_VERSION, "game": self.game,
                "game_params": dict(self.game_params), "feature_names": list(self.feature_names),
                "action_names": list(self.action_names), "audit_columns": list(self.audit_columns)}

    @classmethod
    def from_identity(cls, meta: Mapping[str, Any]) -> StoreSchema:
        return cls(meta["game"], tuple(meta["feature_names"]), tuple(meta["action_names"]),
                   tuple(meta["audit_columns"]), meta["game_params"])

    def widths(self) -> dict[str, int]:
        """Row length of each vector column."""
        f = len(self.feature_names)
        return {"state": f, "next_state": f, "next_legal": len(self.action_names)}

    def arrow_schema(self) -> pa.Schema:
        """A part's columns, with `identity` under ``b"batchrl"`` in the metadata."""
        def arrow_type(name: str) -> pa.DataType:
            if name not in _NUMERIC:
                return _STRING_DICT
            t = pa.from_numpy_dtype(_NUMERIC[name])
            return pa.list_(t, self.widths()[name]) if name in self.widths() else t

        fields = [pa.field(n, arrow_type(n), nullable=False) for n in _CORE_COLUMNS]
        fields += [pa.field(n, pa.string(), nullable=False) for n in self.audit_columns]
        return pa.schema(fields, metadata={_META_KEY: json.dumps(self.identity())})


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """One ingested source file, as recorded in its part's footer."""

    path: str
    digest: str
    rows: int
    episodes: int
    extra: Mapping[str, Any]
    resolved_path: str = ""
    players: tuple[int, ...] = ()
    ingested_at: str = ""


@dataclass(frozen=True, slots=True)
class StoreInfo:
    root: Path
    game: str
    schema_version: int
    rows: int
    episodes: int
    players: tuple[int, ...]
    features: tuple[str, ...]
    actions: tuple[str, ...]
    sources: list[SourceInfo]
    bytes_on_disk: int


@dataclass(frozen=True, eq=False)
class Transitions:
    """A store's rows as numpy arrays for fitted Q-iteration.

    ``state``/``next_state`` hold the selected features in store order. ``episode`` holds
    int64 codes into ``episode_ids``: split train/test on these, never on rows.
    """

    state: NDArray[np.float32]
    action: NDArray[np.int64]
    reward: NDArray[np.float64]
    next_state: NDArray[np.float32]
    next_legal: NDArray[np.bool_]
    terminal: NDArray[np.bool_]
    truncated: NDArray[np.bool_]
    episode: NDArray[np.int64]
    episode_ids: NDArray[np.object_]
    step: NDArray[np.int32]
    player: NDArray[np.int8]
    feature_names: tuple[str, ...]
    action_names: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.action)


class SourceWriter:
    """Streams one source's rows into a temporary part; lands it on a clean ``with`` exit.

    Episodes are counted as runs of equal ids, so a parser writes each episode's rows
    together (hand by hand); an episode split inside one batch is refused.
    """

    def __init__(self, store: Store, source_path: str | Path, digest: str) -> None:
        if not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise StoreError(f"digest {digest!r} is not a sha256 hex string: compute it with "
                             "batchrl.store.file_digest(path)")
        self._schema, self._arrow, self._digest = store.schema, store.schema.arrow_schema(), digest
        self._source, self._resolved = str(source_path), str(Path(source_path).resolve())
        key = source_key(source_path)
        self._final = store.parts_dir / f"{key}.parquet"
        self._tmp = store.parts_dir / f".{key}.tmp-{os.getpid()}"
        self._writer: Any = None
        self._pending: list[pa.RecordBatch] = []
        self._rows = self._episodes = 0
        self._last_episode: str | None = None
        self._players: set[int] = set()
        self._extra: dict[str, Any] = {}

    def __enter__(self) -> SourceWriter:
        _remove_stale_temps(self._tmp.parent)
        self._writer = pq.ParquetWriter(self._tmp, self._arrow, compression=COMPRESSION,
                                        compression_level=COMPRESSION_LEVEL)
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

    def write(self, batch: Mapping[str, Any]) -> None:
        """Append rows given as column name -> array (``source`` may be left out)."""
        if self._writer is None:
            raise StoreError("write() outside its block: use `with store.writer(...) as w:`")
        record = self._to_record_batch(batch)
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
                  "ingested_at": _now()}
        # The footer's Arrow schema was serialised before the first row, so the counts go
        # into the Parquet key-value metadata, which overrides the same key there.
        meta = self._schema.identity() | {"source": source}
        self._writer.add_key_value_metadata({_META_KEY: json.dumps(meta)})
        self._writer.close()
        _fsync(self._tmp)  # the bytes must be on disk before the name points at them
        os.replace(self._tmp, self._final)
        _fsync(self._final.parent)

    def _to_record_batch(self, batch: Mapping[str, Any]) -> pa.RecordBatch:
        cols, what = dict(batch), f"batch for {self._source}"
        n = len(cols["action"]) if np.ndim(cols.get("action", 0)) else -1
        cols.setdefault("source", [self._source] * max(n, 0))
        expected = (*_CORE_COLUMNS, *self._schema.audit_columns)
        missing, unknown = [c for c in expected if c not in cols], sorted(set(cols) - {*expected})
        if missing or unknown:
            raise StoreError(f"{what}: missing columns {missing}, unknown columns {unknown}; "
                             f"a row has exactly {list(expected)}")
        widths, top = self._schema.widths(), {"action": len(self._schema.action_names) - 1}
        arr = {name: _array(cols, name, (n, widths[name]) if name in widths else (n,), dtype,
                            _LOWEST.get(name), top.get(name))
               for name, dtype in _NUMERIC.items()}
        source = _strings(cols, "source", n)
        if n and pc.any(pc.not_equal(source, self._source)).as_py():
            raise StoreError(f"{what} has rows of another source; leave the 'source' column "
                             "out and the writer fills it")
        self._players.update(np.unique(arr["player"]).tolist())
        columns = {name: _fixed_size_list(a) if a.ndim == 2 else a for name, a in arr.items()}
        columns |= {"episode": self._episodes_of(_strings(cols, "episode", n)),
                    "source": source.dictionary_encode()}
        columns |= {c: _strings(cols, c, n) for c in self._schema.audit_columns}
        return pa.RecordBatch.from_pydict(columns, schema=self._arrow)

    def _episodes_of(self, ids: pa.Array) -> pa.Array:
        encoded = ids.dictionary_encode()
        if len(ids) == 0:
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
        self._episodes += runs - (ids[0].as_py() == self._last_episode)  # continued episode
        self._last_episode = ids[-1].as_py()
        return encoded


def _difference(held: StoreSchema, new: StoreSchema) -> str:
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


class Store:
    """A directory of Parquet parts; get one with `Store.create` or `Store.open`."""

    def __init__(self, root: Path, schema: StoreSchema) -> None:
        self.root, self.schema = root, schema
        self.parts_dir = root / "parts"

    @classmethod
    def create(cls, root: str | Path, schema: StoreSchema) -> Store:
        """A new store at ``root``, or the one already there if its schema is equal."""
        root = Path(root)
        if (root / "store.json").exists():
            store = cls.open(root)
            if store.schema == schema:
                return store
            if store._part_files():
                raise StoreError(f"store {root} holds {_difference(store.schema, schema)}: "
                                 "use another --store directory")
            # A store without parts has no rows to protect: it takes the new schema.
        elif root.exists() and (not root.is_dir() or any(root.iterdir())):
            raise StoreError(f"{root} exists and is not a batchrl store (no store.json): "
                             "use a new or empty --store directory")
        (root / "parts").mkdir(parents=True, exist_ok=True)
        tmp = root / f".store.json.tmp-{os.getpid()}"
        tmp.write_text(json.dumps(schema.identity() | {"created_at": _now()}, indent=2))
        _fsync(tmp)
        os.replace(tmp, root / "store.json")
        _fsync(root)
        return cls(root, schema)

    @classmethod
    def open(cls, root: str | Path) -> Store:
        """The store at ``root``; refuses a missing, foreign or other-version store."""
        root = Path(root)
        try:
            meta = json.loads((root / "store.json").read_text())
        except FileNotFoundError:
            raise StoreError(f"no batchrl store at {root} (no store.json): ingest logs first "
                             f"(batchrl ingest ... --store {root})") from None
        except (OSError, ValueError) as e:
            raise StoreError(f"{root}/store.json is unreadable ({e}): point --store at a "
                             "batchrl store or a new directory") from e
        return cls(root, _schema_of(meta, f"store {root}"))

    def writer(self, source_path: str | Path, digest: str) -> SourceWriter:
        """A context manager that (re)writes ``source_path``'s part; see `SourceWriter`."""
        key = source_key(source_path)
        for part in self._part_files():
            if (info := self._read_source(part)).digest == digest and part.stem != key:
                raise StoreError(
                    f"{source_path} has the same content as {info.path}, already in store "
                    f"{self.root}; ingesting both would count its hands twice: skip it, or "
                    f"remove {info.path} from the store first")
        return SourceWriter(self, source_path, digest)

    def sources(self) -> list[SourceInfo]:
        return [self._read_source(part) for part in self._part_files()]

    def remove_source(self, source_path: str | Path) -> bool:
        """Delete a source's part, found by its path now or as recorded; False if none."""
        part = self.parts_dir / f"{source_key(source_path)}.parquet"
        if not part.exists():  # the log may have moved since its ingest: try the recorded path
            recorded = [p for p in self._part_files()
                        if self._read_source(p).path == str(source_path)]
            if not recorded:
                return False
            part = recorded[0]
        part.unlink()
        _fsync(self.parts_dir)
        return True

    def info(self) -> StoreInfo:
        sources, parts = self.sources(), self._part_files()
        return StoreInfo(
            root=self.root, game=self.schema.game, schema_version=SCHEMA_VERSION,
            rows=sum(s.rows for s in sources), episodes=sum(s.episodes for s in sources),
            players=tuple(sorted({p for s in sources for p in s.players})),
            features=self.schema.feature_names, actions=self.schema.action_names,
            sources=sources,
            bytes_on_disk=sum(p.stat().st_size for p in [self.root / "store.json", *parts]))

    def iter_batches(self, columns: Sequence[str] | None = None,
                     batch_size: int = 65_536) -> Iterator[pa.RecordBatch]:
        """Record batches, part by part, in bounded memory."""
        names = self._columns(columns)
        for part in self._part_files():
            yield from pq.ParquetFile(part).iter_batches(batch_size=batch_size, columns=names)

    def to_pandas(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """All rows as a DataFrame.

        ``state``, ``next_state`` and ``next_legal`` are object columns of 1-D numpy arrays
        (use `arrays` for matrices); ``episode`` and ``source`` are categorical.
        """
        frame: pd.DataFrame = self._read_table(self._columns(columns)).to_pandas()
        return frame

    def arrays(self, features: Sequence[str] | None = None,
               drop: Sequence[str] = ()) -> Transitions:
        """What FQI needs as numpy arrays: the named ``features`` (default all) minus ``drop``."""
        names = self.schema.feature_names
        if unknown := [n for n in (*(features or ()), *drop) if n not in names]:
            raise StoreError(f"unknown features {unknown}; the store's features are "
                             f"{list(names)}")
        wanted = set(names if features is None else features) - set(drop)
        if not (keep := [i for i, n in enumerate(names) if n in wanted]):
            raise StoreError(f"no feature left after selecting {features} and dropping {drop}")
        wanted_cols = ["episode", *(n for n in _NUMERIC if n != "line")]
        table = self._read_table(wanted_cols).unify_dictionaries()
        out: dict[str, NDArray[Any]] = {}
        for name in wanted_cols[1:]:
            chunks, dtype = table.column(name).chunks, _NUMERIC[name]
            tail: tuple[int, ...] = ()
            if (width := self.schema.widths().get(name)) is None:
                blocks = [c.to_numpy(zero_copy_only=False) for c in chunks]
            else:  # one flatten + reshape per chunk (flatten honours offsets), no row loop
                cut = slice(None) if name == "next_legal" else keep
                tail = (width if name == "next_legal" else len(keep),)
                blocks = [c.flatten().to_numpy(zero_copy_only=False).reshape(-1, width)[:, cut]
                          for c in chunks]
            # concatenating onto an empty block always yields a fresh, writable array
            out[name] = np.concatenate([np.empty((0, *tail), dtype), *blocks])
        out["action"] = out["action"].astype(np.int64)
        episodes = table.column("episode").chunks
        out["episode"] = np.concatenate([np.empty(0, np.int64),
                                         *(c.indices.to_numpy() for c in episodes)])
        ids = episodes[0].dictionary.to_pylist() if episodes else []
        return Transitions(**out, episode_ids=np.array(ids, dtype=object),
                           feature_names=tuple(names[i] for i in keep),
                           action_names=self.schema.action_names)

    def _part_files(self) -> list[Path]:
        # temp parts are named .<key>.tmp-<pid>: this glob never sees a half-written one
        return sorted(self.parts_dir.glob("*.parquet"))

    def _columns(self, columns: Sequence[str] | None) -> list[str]:
        valid = self.schema.arrow_schema().names
        if unknown := [c for c in columns or () if c not in valid]:
            raise StoreError(f"unknown columns {unknown}; the store's columns are {valid}")
        return valid if columns is None else list(columns)

    def _read_table(self, columns: list[str]) -> pa.Table:
        if not (parts := self._part_files()):
            return self.schema.arrow_schema().empty_table().select(columns)
        return pa.concat_tables([pq.read_table(p, columns=columns) for p in parts])

    def _read_source(self, part: Path) -> SourceInfo:
        try:
            meta = json.loads(pq.read_metadata(part).metadata[_META_KEY])
            s = meta["source"]
        except (OSError, KeyError, TypeError, ValueError, pa.ArrowException) as e:
            raise StoreError(f"part {part} is unreadable or not a batchrl part ({e!r}): "
                             "delete it and re-ingest its source") from e
        if (schema := _schema_of(meta, f"part {part}")) != self.schema:
            raise StoreError(f"part {part} holds game {schema.game} with other features or "
                             f"params than this store's {self.schema.game}: delete it")
        return SourceInfo(s["path"], s["digest"], s["rows"], s["episodes"], s["extra"],
                          s["resolved_path"], tuple(s["players"]), s["ingested_at"])


def _schema_of(meta: Mapping[str, Any], what: str) -> StoreSchema:
    if (version := meta.get("schema_version")) != SCHEMA_VERSION:
        raise StoreError(f"{what} was written by schema version {version}; this batchrl reads "
                         f"version {SCHEMA_VERSION}: re-ingest the logs into a new store "
                         "(batchrl ingest ... --store NEW_DIR)")
    try:
        return StoreSchema.from_identity(meta)
    except (KeyError, TypeError) as e:
        raise StoreError(f"{what} lacks {e}: it is not a batchrl store; use another --store "
                         "directory") from e


def _array(cols: Mapping[str, Any], name: str, shape: tuple[int, ...],
           dtype: type[np.generic], low: int | None, high: int | None) -> NDArray[Any]:
    """One column, checked: shape, kind, range for ints, finite for floats."""
    a = np.asarray(cols[name])
    if a.shape != shape:
        raise StoreError(f"column {name!r} has shape {a.shape}; expected {shape} "
                         "(rows, then features or actions for vector columns)")
    kinds = {"b": "b", "i": "iu", "f": "fiu"}[np.dtype(dtype).kind]
    if a.dtype.kind not in kinds:
        raise StoreError(f"column {name!r} must be {np.dtype(dtype)}, not {a.dtype}")
    if low is not None and a.size:
        high = int(np.iinfo(np.dtype(dtype)).max) if high is None else high
        if int(a.min()) < low or int(a.max()) > high:
            raise StoreError(f"column {name!r} has values outside [{low}, {high}]")
    out = np.ascontiguousarray(a, dtype=dtype)
    # a NaN or inf reward or feature would silently poison every fitted Q value
    if out.dtype.kind == "f" and not np.isfinite(out).all():
        raise StoreError(f"column {name!r} has a NaN or infinite value")
    return out


def _strings(cols: Mapping[str, Any], name: str, n: int) -> pa.Array:
    try:  # an empty np.array([]) is float64, which arrow will not read as strings
        arr = pa.array(cols[name] if np.size(cols[name]) else [], type=pa.string())
    except (pa.ArrowException, TypeError) as e:
        raise StoreError(f"column {name!r} must hold strings ({e})") from e
    if len(arr) != n or arr.null_count:
        raise StoreError(f"column {name!r} has {len(arr)} values with {arr.null_count} missing; "
                         f"expected {n} strings")
    return arr


def _fixed_size_list(matrix: NDArray[Any]) -> pa.FixedSizeListArray:
    return pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1)), matrix.shape[1])


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


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


def _fsync(path: Path) -> None:
    """Flush a file or a directory entry to disk; skipped where directories can't be opened."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
