"""The transition store: one Parquet part per source log, read back as numpy arrays for FQI.

Layout::

    ROOT/store.json              schema version, game, game_params, feature/action names,
                                 state dtype
    ROOT/parts/<key>.parquet     one part per source; <key> = sha256(resolved source path)[:16]

A part's columns are plain Parquet columns, each feature and each legal action a column
of its own, that DuckDB, Polars or pandas read by name without batchrl (the layout is
`batchrl.store.schema`'s docstring)::

    SELECT avg(pv) FROM 'ROOT/parts/*.parquet' WHERE action = 2

Each part's footer holds, as JSON under key ``b"batchrl"``, the store identity plus the
source's path, digest, counts and ingest stats; `Store.sources` reads footers only, so no
separate manifest can disagree with the parts. Every page carries a CRC32 that each read
checks: `Store.check` (what every reader runs first) names a damaged part, a part of
another store, or a store.json that disagrees with its parts, and what to do.

A part lands whole or not at all: `SourceWriter` streams into ``parts/.<key>.tmp-<pid>``
and ``os.replace``-s it onto the part's name, replacing any earlier part of the same
source, so re-ingesting a path is idempotent. Readers list only ``parts/*.parquet``.

Concurrency: one writer per store at a time, held by an OS lock on ``ROOT/.lock``
(`batchrl.store.lock`; an ingest holds it over all its sources, and a second writer waits
or gives up). Readers take no lock: a reader beside the writer sees each part before or
after its replacement, never half of it (but a part removed by `Store.remove_source`
between listing and reading makes that read fail).

A store is read by URL as from its directory (``Store.open("s3://bucket/acpc")``; any
filesystem pyarrow reads, or fsspec's), and written only in a local directory.

Modules: `batchrl.store.schema` (identity, ids, errors), `batchrl.store.rows` (rows on
their way in), `batchrl.store.writer` (writing a source), `batchrl.store.lock` (one
writer at a time), `batchrl.store.place` (a directory or a URL), `batchrl.store.store`
(`Store`), `batchrl.store.transitions` (what it reads back). Import from here.
"""

from __future__ import annotations

from batchrl.store.info import SourceInfo, StoreInfo
from batchrl.store.place import default_store_path
from batchrl.store.rows import Rows, RowsBatch, following_rows
from batchrl.store.schema import (
    SCHEMA_VERSION,
    StoreError,
    StoreSchema,
    episode_id,
    file_digest,
    source_key,
)
from batchrl.store.store import Store
from batchrl.store.transitions import FollowingStates, Transitions
from batchrl.store.writer import (
    COMPRESSION,
    COMPRESSION_LEVEL,
    ROW_GROUP_ROWS,
    SourceWriter,
)

__all__ = [
    "COMPRESSION",
    "COMPRESSION_LEVEL",
    "ROW_GROUP_ROWS",
    "SCHEMA_VERSION",
    "FollowingStates",
    "Rows",
    "RowsBatch",
    "SourceInfo",
    "SourceWriter",
    "Store",
    "StoreError",
    "StoreInfo",
    "StoreSchema",
    "Transitions",
    "default_store_path",
    "episode_id",
    "file_digest",
    "following_rows",
    "source_key",
]

