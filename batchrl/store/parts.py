"""A store's part files, read and checked: their footers, their pages against the CRC32s
their writer put in them, and the one-line errors that name a bad part and what to do.
"""

from __future__ import annotations

import contextlib
import json
import shlex
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from batchrl.store.place import Place
from batchrl.store.schema import (
    META_KEY,
    StoreError,
    StoreSchema,
    describe_difference,
    first_line,
    schema_of,
)

UNREADABLE = (OSError, KeyError, TypeError, ValueError, pa.ArrowException, RecursionError)


def read_part(part: Place, columns: list[str], root: Place) -> pa.Table:
    """A part's columns, each page checked against its CRC (the bad part named)."""
    try:
        return pq.read_table(part.path, columns=columns, filesystem=part.fs,
                             page_checksum_verification=True)
    except (OSError, pa.ArrowException) as e:
        raise damaged(part, root, e) from None


def open_part(part: Place) -> pq.ParquetFile:
    """A part opened for reading, each page it reads checked against its CRC."""
    return pq.ParquetFile(part.path, filesystem=part.fs, page_checksum_verification=True)


def check_pages(part: Place, root: Place) -> None:
    """Every page of ``part`` read, decoded and checked, a row group at a time."""
    try:
        f = open_part(part)
        for group in range(f.num_row_groups):
            f.read_row_group(group)
    except (OSError, pa.ArrowException) as e:
        raise damaged(part, root, e) from None


def footer(part: Place, root: Place) -> dict[str, Any]:
    """A part's batchrl footer: the store's identity and its source's record."""
    try:
        # Parquet's leading magic, which readers that start from the footer never check
        if part.local is not None:
            with open(part.local, "rb") as f:
                head = f.read(4)
        else:
            with part.fs.open_input_file(part.path) as f:
                head = f.read(4)
        if head != b"PAR1":
            raise damaged(part, root, f"it does not begin as a Parquet file ({head!r})")
        meta = pq.read_metadata(part.path, filesystem=part.fs)
        found: dict[str, Any] = json.loads(meta.metadata[META_KEY])
        rows = int(found["source"]["rows"])
    except UNREADABLE as e:
        raise damaged(part, root, e) from None
    if meta.num_rows != rows:
        raise damaged(part, root, f"its footer counts {rows:,} rows, its row groups "
                                  f"{meta.num_rows:,}")
    return found


def recorded_source(part: Place) -> str | None:
    """The source path a part's footer records, None where it cannot be read."""
    try:
        meta = pq.read_metadata(part.path, filesystem=part.fs).metadata
        return str(json.loads(meta[META_KEY])["source"]["path"])
    except UNREADABLE:
        return None


def recorded_sources(parts: Place) -> list[str]:
    """The source paths in the footers of ``parts``' files, whatever their version; the
    unreadable ones left out."""
    return [s for p in parts.files(".parquet") if (s := recorded_source(p)) is not None]


def mismatch(part: Place, schema: StoreSchema, expected: StoreSchema, parts: Sequence[Place],
             root: Place) -> StoreError:
    """A part of another schema than store.json's (``expected``): the part is foreign, or,
    when every part of ``parts`` agrees with it, store.json is the one changed."""
    held = []
    for other in parts:
        with contextlib.suppress(StoreError):
            held.append(schema_of(footer(other, root), f"part {other}"))
    if all(h == schema for h in held):
        return StoreError(
            f"{root / 'store.json'} disagrees with every part of the store: they "
            f"hold {describe_difference(schema, expected)} as store.json says; "
            "store.json was edited or replaced: restore it, or re-ingest the logs into "
            "a new --store")
    return StoreError(f"part {part} holds {describe_difference(schema, expected)} "
                      f"as store.json and the other parts say: it is no part of this "
                      "store; delete it")


def damaged(part: Place, root: Place, error: BaseException | str) -> StoreError:
    """The error that names a damaged part, the log it came from, and what to do."""
    why = first_line(error)
    store = shlex.quote(str(root))
    source = recorded_source(part)
    if root.local is None:  # a store by URL is a copy: the part is mended where it was made
        came = f"; it holds the rows of {source}" if source is not None else ""
        return StoreError(
            f"part {part} is damaged ({why}){came}: copy the store here again from the "
            f"local store it was made in (re-ingesting that log there first if that copy "
            f"is damaged too)")
    if source is None:
        return StoreError(
            f"part {part} is damaged ({why}), and its footer no longer says which log it "
            f"came from: delete it, then re-ingest that log (batchrl ingest LOG --store "
            f"{store})")
    return StoreError(
        f"part {part} is damaged ({why}); it holds the rows of {source}: re-ingest that "
        f"log to replace it (batchrl ingest {shlex.quote(source)} --store {store}, with "
        f"the options it was ingested with), or delete the part to go on without them")
