"""Fuzzing the store's files: a store the project made, its files changed as a hostile
copy would change them, each case opened, checked and read as every command reads it,
and judged as ``tests/model_fuzzing.py`` judges a model: the read works or stops with
`StoreError` naming the store, within its time and memory; anything else escapes.

The mutations: a part's bytes flipped, its end cut off, its leading magic changed; a
field of its footer's JSON deleted or given a hostile value, the footer nested 100,000
deep; a field of ``store.json`` likewise, or ``store.json`` not JSON; a part copied
beside itself or renamed, swapped for another store's, replaced by a link out of the
store, by a pipe, by an empty file, by a directory.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from model_fuzzing import HOSTILE, Outcome, _paths, _set, run_case

MUTATIONS = ("flip bytes", "truncate part", "magic", "footer field", "footer deep",
             "store.json field", "store.json garbage", "copy part", "rename part",
             "other store's part", "link out", "fifo part", "empty part", "directory part")


def seed_store(folder: Path) -> tuple[Path, Callable[[Path], None]]:
    """A hold'em store of two logs, and the function that reads a store as the
    commands do: open, check every page, the arrays, the summary, the rows as pandas."""
    from batchrl.games.holdem.logs import generate
    from batchrl.ingest import IngestConfig, ingest
    from batchrl.store import Store

    logs = [folder / "a.log", folder / "b.log"]
    for seed, log in enumerate(logs):
        generate(log, ["random", "random"], 120, seed, "acpc", None, None)
    store = folder / "store"
    ingest(IngestConfig(paths=tuple(logs), store=store))

    def read(root: Path) -> None:
        opened = Store.open(root)
        opened.check(pages=True)
        opened.arrays()
        opened.info()
        opened.to_pandas(["episode", "action", "reward"])

    return store, read


def mutate_store(seed: Path, case: Path, mutation: str, rng: random.Random) -> None:
    """A copy of the store ``seed`` at ``case`` with ``mutation`` applied."""
    shutil.copytree(seed, case)
    parts = sorted((case / "parts").glob("*.parquet"))
    part = rng.choice(parts)
    if mutation == "flip bytes":
        data = bytearray(part.read_bytes())
        for _ in range(rng.randrange(1, 8)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        part.write_bytes(bytes(data))
    elif mutation == "truncate part":
        part.write_bytes(part.read_bytes()[: rng.randrange(part.stat().st_size)])
    elif mutation == "magic":
        data = bytearray(part.read_bytes())
        data[rng.randrange(4)] ^= 0x20
        part.write_bytes(bytes(data))
    elif mutation in ("footer field", "footer deep", "other store's part"):
        table = pq.read_table(part)
        meta = dict(table.schema.metadata or {})
        footer: Any = json.loads(meta[b"batchrl"])
        if mutation == "other store's part":  # the same rows, written by another store
            footer["store_id"] = f"{rng.getrandbits(64):016x}"
            text = json.dumps(footer)
        elif mutation == "footer field":
            path = rng.choice(_paths(footer))
            _set(footer, path, rng.choice(HOSTILE), delete=rng.random() < 0.3)
            text = json.dumps(footer)
        else:
            text = "[" * 100_000 + "]" * 100_000
        meta[b"batchrl"] = text.encode()
        pq.write_table(table.replace_schema_metadata(meta), part)
    elif mutation == "store.json field":
        document: Any = json.loads((case / "store.json").read_text())
        path = rng.choice(_paths(document))
        _set(document, path, rng.choice(HOSTILE), delete=rng.random() < 0.3)
        (case / "store.json").write_text(json.dumps(document))
    elif mutation == "store.json garbage":
        (case / "store.json").write_bytes(rng.choice(
            [b"", b"\xff\xfe", b"{", b"null", b"[1, 2]", b"{" * 50_000]))
    elif mutation == "copy part":
        shutil.copy(part, part.with_name("0" + part.name))
    elif mutation == "rename part":
        part.rename(part.with_name(f"{rng.getrandbits(64):016x}.parquet"))
    elif mutation in ("link out", "fifo part", "directory part"):
        replace_node(part, mutation.split()[0], case.parent / f"{case.name}-outside.parquet")
    elif mutation == "empty part":
        part.write_bytes(b"")


def replace_node(path: Path, how: str, outside: Path) -> None:
    """The file at ``path`` replaced by what a hostile copy puts there: a ``link`` to a
    copy of it at ``outside``, a ``fifo`` (a reader that opens it waits), a
    ``directory``."""
    if how == "link":
        shutil.copy(path, outside)
    path.unlink()
    if how == "link":
        path.symlink_to(outside)
    elif how == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()


def run_store_case(case: Path, read: Callable[[Path], None]) -> Outcome:
    from batchrl.store import StoreError

    return run_case(case, read, clean=(StoreError,))
