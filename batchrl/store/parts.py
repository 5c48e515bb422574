"""A store's part files, read and checked: their footers, their pages against the CRC32s
their writer put in them, and the one-line errors that name a bad part and what to do.
"""

from __future__ import annotations

import contextlib
import json
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from batchrl.records import printable
from batchrl.store.content import CONTENT_KEY, ContentDigest
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
    """A part's columns, each page checked against its CRC and each column against the
    digest its writer recorded (the bad part named)."""
    try:
        f = open_part(part)
        table = f.read(columns=columns)
    except (OSError, pa.ArrowException) as e:
        raise damaged(part, root, e) from None
    if (recorded := recorded_content(f)) is not None:
        found = ContentDigest(table.schema.names)
        found.update(table)
        check_digests(part, root, recorded, found.hexdigests())
    return table


def open_part(part: Place) -> pq.ParquetFile:
    """A part opened for reading, each page it reads checked against its CRC."""
    return pq.ParquetFile(part.path, filesystem=part.fs, page_checksum_verification=True)


def check_pages(part: Place, root: Place) -> None:
    """Every page of ``part`` read, decoded and checked, a row group at a time, and every
    column against the digest its writer recorded."""
    try:
        f = open_part(part)
        recorded = recorded_content(f)
        found = ContentDigest(f.schema_arrow.names)
        for group in range(f.num_row_groups):
            found.update(f.read_row_group(group))
    except (OSError, pa.ArrowException) as e:
        raise damaged(part, root, e) from None
    if recorded is not None:
        check_digests(part, root, recorded, found.hexdigests())


def recorded_content(f: pq.ParquetFile) -> dict[str, str] | None:
    """The column digests a part's footer records (None in a part written before parts
    recorded them, or where its footer cannot say: `footer` names that)."""
    try:
        content = json.loads(f.metadata.metadata[META_KEY])["source"].get(CONTENT_KEY)
    except (*UNREADABLE, AttributeError):
        return None
    return content if isinstance(content, dict) else None


def check_digests(part: Place, root: Place, recorded: Mapping[str, Any],
                  found: Mapping[str, str]) -> None:
    """Likewise, for digests already taken (``found``: column -> digest)."""
    if changed := [n for n, d in found.items() if recorded.get(n) != d]:
        raise rewritten(part, root, changed)


def rewritten(part: Place, root: Place, columns: Sequence[str]) -> StoreError:
    """The error for a part whose ``columns`` no longer hold what was written."""
    named = ", ".join(printable(c, 40) for c in columns[:3]) + (
        f" and {len(columns) - 3} more" if len(columns) > 3 else "")
    many = len(columns) > 1
    return damaged(part, root, f"its column{'s' if many else ''} {named} "
                               f"hold{'' if many else 's'} other values than its ingest "
                               "wrote (their content digests differ): it was rewritten or "
                               "replaced since")


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
