"""Rows no rule allows are refused before anything learns from them or exports them,
with their part, row and line: those the writer lets through (an illegal action, a
state with no legal action, a seat the game lacks) and those of a part another tool
wrote (an older batchrl's, whose rows carry no digests)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from batchrl.cli import main
from batchrl.store import Store, StoreError
from batchrl.store.content import CONTENT_KEY
from batchrl.store.schema import META_KEY
from tests.store_rows import SCHEMA, make_batch, source


def _written(tmp_path: Path, change: Any) -> Store:
    store = Store.create(tmp_path / "s", replace(SCHEMA, legal=True))
    path, digest = source(tmp_path, "a.log")
    batch = make_batch(digest, range(4))
    n = len(batch["action"])
    batch["legal"] = np.ones((n, 3), bool)
    change(batch)
    with store.writer(path, digest) as w:
        w.write(batch)
    return store


def _illegal(batch: dict[str, Any]) -> None:
    batch["legal"][5, batch["action"][5]] = False


def _no_move(batch: dict[str, Any]) -> None:
    batch["legal"][6] = False


def _stuck(batch: dict[str, Any]) -> None:
    batch["next_legal"][4] = False  # row 4 starts an episode: it goes on


@pytest.mark.parametrize(("change", "row", "said"), [
    (_illegal, 6, "its action '[a-z]+' is not legal in its state"),
    (_no_move, 7, "its state allows no action, yet it has one"),
    (_stuck, 5, "its episode goes on, but its next state allows no action")])
def test_rows_no_game_allows_are_refused_written_and_read(tmp_path: Path, change: Any,
                                                          row: int, said: str) -> None:
    """The writer refuses them, naming the log; a part another tool wrote with them (no
    digests, as an older batchrl's) is refused when read, naming the part."""
    with pytest.raises(StoreError, match=rf"a\.log: a batch of rows, row {row} \(line {row} "
                                         rf"of its log\): {said}: no rule of the game allows "
                                         r"it: the game's reader made a row"):
        _written(tmp_path / "w", change)
    store = _written(tmp_path, lambda batch: None)
    part = next(store.parts_dir.glob("*.parquet"))
    table = pq.read_table(part)
    batch = {n: table.column(n).to_numpy(zero_copy_only=False).copy()
             for n in table.schema.names if n not in ("episode", "source", "cards")}
    legal = np.column_stack([batch[f"legal_{a}"] for a in ("fold", "call", "raise")])
    nexts = np.column_stack([batch[f"next_legal_{a}"] for a in ("fold", "call", "raise")])
    changed = {"legal": legal, "next_legal": nexts, "action": batch["action"]}
    change(changed)
    for i, a in enumerate(("fold", "call", "raise")):
        batch[f"legal_{a}"], batch[f"next_legal_{a}"] = legal[:, i], nexts[:, i]
    _rewrite_without_digests(part, {n: pa.array(v, table.schema.field(n).type)
                                    for n, v in batch.items()})
    with pytest.raises(StoreError, match=rf"part .*{part.name}, row {row} \(line {row} of its "
                                         rf"log\): {said}: no rule of the game allows it, and "
                                         "a learner"):
        Store.open(store.root).arrays()


def _rewrite_without_digests(part: Path, columns: dict[str, pa.Array]) -> None:
    f = pq.ParquetFile(part)
    footer = json.loads(f.metadata.metadata[META_KEY])
    del footer["source"][CONTENT_KEY]
    table = f.read()
    for name, values in columns.items():
        table = table.set_column(table.schema.get_field_index(name), name, values)
    with pq.ParquetWriter(part, table.schema, write_page_checksum=True) as w:
        w.write_table(table)
        w.add_key_value_metadata({META_KEY: json.dumps(footer).encode()})


def test_a_seat_the_game_lacks_is_refused_where_the_seats_are_known(tmp_path: Path) -> None:
    store = _written(tmp_path, lambda b: b["player"].__setitem__(2, 3))
    assert len(store.arrays().player) == 16  # the store alone cannot know the seats
    with pytest.raises(StoreError, match=r"row 3 \(line 3 of its log\): player 3 is no seat "
                                         r"of the game \(seats 0 to 1\)"):
        store.arrays(seats=2)


def _leduc(tmp_path: Path) -> Path:
    runner = CliRunner()
    log = tmp_path / "leduc.log"
    assert runner.invoke(main, ["generate", "--game", "leduc", "--players", "random,random",
                                "--hands", "40", "--seed", "3", "-o", str(log)]).exit_code == 0
    assert runner.invoke(main, ["ingest", str(log), "--store",
                                str(tmp_path / "s")]).exit_code == 0
    return tmp_path / "s"


def _older_part(store: Path, column: str, value: Any) -> None:
    """The part as an older batchrl's or another tool's: no digests, row 3's ``column``
    set to ``value``."""
    part = next((store / "parts").glob("*.parquet"))
    f = pq.ParquetFile(part)
    footer = json.loads(f.metadata.metadata[META_KEY])
    del footer["source"][CONTENT_KEY]
    table = f.read()
    values = table.column(column).to_pylist()
    values[2] = value
    i = table.schema.get_field_index(column)
    table = table.set_column(i, column, pa.array(values, table.schema.field(column).type))
    with pq.ParquetWriter(part, table.schema, write_page_checksum=True) as w:
        w.write_table(table)
        w.add_key_value_metadata({META_KEY: json.dumps(footer).encode()})


@pytest.mark.parametrize(("column", "value", "said"), [
    ("action", 100, "action 100 is none of the store's 3"),
    ("action", -1, "action -1 is none of the store's 3"),
    ("reward", float("nan"), "its reward is nan"),
    ("reward", float("inf"), "its reward is inf"),
    ("player", -1, r"player -1 is no seat of the game \(seats 0 to 1\)"),
    ("player", 2, r"player 2 is no seat of the game \(seats 0 to 1\)")])
@pytest.mark.parametrize("command", [
    ["learn", "bc", "--store", "{s}", "--out", "{o}/m.npz"],
    ["export", "{s}", "--to", "d3rlpy", "-o", "{o}/d3"],
    ["export", "{s}", "--to", "rllib", "-o", "{o}/rl"]])
def test_crafted_rows_are_neither_learned_from_nor_exported(tmp_path: Path, column: str,
                                                            value: Any, said: str,
                                                            command: list[str]) -> None:
    store = _leduc(tmp_path)
    _older_part(store, column, value)
    args = [a.format(s=store, o=tmp_path) for a in command]
    got = CliRunner().invoke(main, args)
    assert got.exit_code == 1, got.output
    assert "Traceback" not in got.output
    assert re.search(rf"row 3 \(line \d+ of its log\): {said}", got.output), got.output
    assert not [p for p in tmp_path.iterdir() if p.name in ("m.npz", "d3", "rl")]
