"""Every reader of a store checks its parts before its work: a part cut short, a part
whose pages were changed under an intact footer, a store.json edited to another game or
a part of another store are named, with what to do, never a codec's traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner, Result

from batchrl.cli import main
from batchrl.games.sette_mezzo.logs import play, write_log
from batchrl.store import Store, StoreError

COMMANDS = {  # every command that reads a store, as cheap as it runs
    "info": lambda s: ["info", s],
    "fqi": lambda s: ["fqi", "--store", s, "--trees", "2", "--iters", "2"],
    "export": lambda s: ["export", s, "--to", "rllib", "-o", Path(s).parent / "exported"],
    "ablate": lambda s: ["ablate", "--store", s, "--trees", "2", "--iters", "1", "--hands",
                         "4", "--features", "pv"],
    "imitate": lambda s: ["imitate", "--store", s, "--epochs", "1"],
}


def invoke(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def error_line(result: Result) -> str:
    lines = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert result.exit_code == 1 and len(lines) == 1, result.output
    assert "Traceback" not in result.output, result.output
    assert "bellman residual" not in result.output, result.output  # no iteration ran
    return lines[0]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A hold'em store and a sette e mezzo one, generated and ingested by batchrl."""
    root = tmp_path_factory.mktemp("checked")
    holdem_log, sette_log = root / "h.log", root / "s.jsonl"
    assert invoke("generate", "--game", "holdem", "--hands", "300", "--players",
                  "random,random", "--seed", "4", "-o", holdem_log).exit_code == 0
    write_log(sette_log, play("random", 200, np.random.default_rng(5)))
    for name, log in (("holdem", holdem_log), ("sette", sette_log)):
        result = invoke("ingest", log, "--store", root / name)
        assert result.exit_code == 0, result.output
    return {"holdem": root / "holdem", "sette": root / "sette", "log": holdem_log}


def copy(made: dict[str, Path], tmp_path: Path, name: str = "holdem") -> tuple[Path, Path]:
    store = tmp_path / "store"
    shutil.copytree(made[name], store)
    (part,) = (store / "parts").glob("*.parquet")
    return store, part


def flip_page(part: Path, column: str, row_group: int = 0) -> None:
    """Flip bytes in the middle of one column's pages, the footer left as it was."""
    chunk = next(c for c in (pq.read_metadata(part).row_group(row_group).column(i)
                             for i in range(pq.read_metadata(part).num_columns))
                 if c.path_in_schema == column)
    start = min(o for o in (chunk.dictionary_page_offset, chunk.data_page_offset)
                if o is not None)
    middle = start + chunk.total_compressed_size // 2
    data = bytearray(part.read_bytes())
    for at in range(middle, middle + 4):
        data[at] ^= 0x5A
    part.write_bytes(bytes(data))


@pytest.mark.parametrize("command", COMMANDS)
def test_a_part_cut_short_is_named_by_every_reader(made: dict[str, Path], tmp_path: Path,
                                                  command: str) -> None:
    store, part = copy(made, tmp_path)
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])
    line = error_line(invoke(*COMMANDS[command](store)))
    assert f"part {part} is damaged (Parquet magic bytes not found" in line
    assert "delete it, then re-ingest that log (batchrl ingest LOG --store" in line


@pytest.mark.parametrize("command", ["info", "fqi", "export", "ablate"])
def test_pages_changed_under_an_intact_footer_are_named_by_every_reader(
        made: dict[str, Path], tmp_path: Path, command: str) -> None:
    store, part = copy(made, tmp_path)
    flip_page(part, "action")
    line = error_line(invoke(*COMMANDS[command](store)))
    assert line == (
        f"Error: part {part} is damaged (could not verify page integrity, CRC checksum "
        f"verification failed for page_ordinal 0); it holds the rows of {made['log']}: "
        f"re-ingest that log to replace it (batchrl ingest {made['log']} --store {store}, "
        "with the options it was ingested with), or delete the part to go on without them")
    # info --quick reads the footers only; the log re-ingested replaces the part
    assert invoke("info", "--quick", store).exit_code == 0
    assert invoke("ingest", made["log"], "--store", store).exit_code == 0
    assert invoke("info", store).exit_code == 0


def test_a_flipped_byte_in_any_column_is_caught_not_read_as_other_numbers(
        made: dict[str, Path], tmp_path: Path) -> None:
    """Without the pages' checksums, zstd decoded about half of such flips into other
    values without a word; with them, each one is named (or it hit a byte of a page
    header that changes no value: the rows read back as they were)."""
    _, part = copy(made, tmp_path, "sette")
    store = Store.open(part.parent.parent)
    rows = store.to_pandas()
    whole = part.read_bytes()
    columns = [c.path_in_schema for c in (pq.read_metadata(part).row_group(0).column(i)
                                          for i in range(pq.read_metadata(part).num_columns))]
    named = 0
    for column in columns:
        part.write_bytes(whole)
        flip_page(part, column)
        try:
            store.check(pages=True)
        except StoreError as e:
            assert str(e).startswith(f"part {part} is damaged (")
            named += 1
        else:
            assert store.to_pandas().equals(rows), column
    assert named >= len(columns) - 2, (named, len(columns))
    part.write_bytes(whole)
    store.check(pages=True)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_store_json_edited_to_another_game_is_refused_before_any_work(
        made: dict[str, Path], tmp_path: Path, command: str) -> None:
    store, _ = copy(made, tmp_path)
    meta = json.loads((store / "store.json").read_text())
    sette = json.loads((made["sette"] / "store.json").read_text())
    (store / "store.json").write_text(json.dumps(meta | {"game": sette["game"]}))
    line = error_line(invoke(*COMMANDS[command](store)))
    assert line == (
        f"Error: {store / 'store.json'} disagrees with every part of the store: they hold "
        f"game {meta['game']}, not sette-mezzo as store.json says; store.json was edited or "
        "replaced: restore it, or re-ingest the logs into a new --store")
    # its params edited: the same
    (store / "store.json").write_text(json.dumps(
        meta | {"game_params": meta["game_params"] | {"big_blind": 7}}))
    assert "store.json was edited" in error_line(invoke(*COMMANDS[command](store)))


def test_a_part_of_another_store_is_named_as_foreign(made: dict[str, Path],
                                                    tmp_path: Path) -> None:
    store, _ = copy(made, tmp_path)
    (other,) = (made["sette"] / "parts").glob("*.parquet")
    shutil.copy(other, store / "parts" / other.name)
    line = error_line(invoke("fqi", "--store", store, "--trees", "2", "--iters", "1"))
    assert f"part {store / 'parts' / other.name} holds game sette-mezzo, not holdem" in line
    assert line.endswith("it is no part of this store; delete it")


@pytest.mark.parametrize("command", COMMANDS)
def test_what_is_no_part_the_store_wrote_is_refused_by_every_reader(
        made: dict[str, Path], tmp_path: Path, command: str) -> None:
    """A part copied beside itself (its rows would count twice), a link to a file
    outside the store, a FIFO (it would block every reader) and a part whose leading
    magic was flipped (footer-first readers never look): each named, none read."""
    import os

    store, part = copy(made, tmp_path)
    twin = part.with_name("0" + part.name)
    shutil.copy(part, twin)
    line = error_line(invoke(*COMMANDS[command](store)))
    assert f"part {twin} holds the rows of" in line and "renamed or copied" in line
    twin.unlink()
    outside = tmp_path / "outside.parquet"
    shutil.copy(part, outside)
    twin.symlink_to(outside)
    part.unlink()
    line = error_line(invoke(*COMMANDS[command](store)))
    assert f"part {twin} is a symbolic link to outside" in line
    assert "copy the file it leads to into the store" in line  # nothing to delete
    twin.unlink()
    (store / "archive").mkdir()  # a link within the store (a content cache's) is read
    shutil.copy(outside, store / "archive" / "p.parquet")
    part.symlink_to(store / "archive" / "p.parquet")
    if command == "info":
        assert invoke(*COMMANDS[command](store)).exit_code == 0
    part.unlink()
    os.mkfifo(twin)
    line = error_line(invoke(*COMMANDS[command](store)))
    assert f"part {twin} is not a regular file" in line
    twin.unlink()
    data = bytearray(outside.read_bytes())
    data[0] ^= 0x01
    part.write_bytes(bytes(data))
    line = error_line(invoke(*COMMANDS[command](store)))
    assert f"part {part} is damaged (it does not begin as a Parquet file" in line


@pytest.mark.parametrize("command", ["info", "fqi", "export"])
def test_a_store_json_that_nests_blocks_or_is_no_object_is_one_line(
        made: dict[str, Path], tmp_path: Path, command: str) -> None:
    import os

    store, _ = copy(made, tmp_path)
    meta = store / "store.json"
    for bad, message in (("[" * 100_000 + "]" * 100_000, "nests deeper than any store's"),
                         ("[1]", "is unreadable (not a JSON object)"),
                         (None, "is unreadable (not a regular file")):
        meta.unlink()
        if bad is None:
            os.mkfifo(meta)
        else:
            meta.write_text(bad)
        assert message in error_line(invoke(*COMMANDS[command](store)))


@pytest.mark.parametrize("command", ["info", "fqi", "export"])
def test_a_part_another_store_wrote_is_refused_even_of_the_same_log(
        made: dict[str, Path], tmp_path: Path, command: str) -> None:
    """Each store names itself in store.json and in every part it writes: a part swapped in
    from another store of the same game, even one of the same log, is no part of this one;
    a store made before stores were named reads as it did."""
    store, part = copy(made, tmp_path)
    again = tmp_path / "again"
    assert invoke("ingest", made["log"], "--store", again).exit_code == 0
    (foreign,) = (again / "parts").glob("*.parquet")
    assert foreign.name == part.name  # the same log: the same part name and content
    ours = json.loads((store / "store.json").read_text())["store_id"]
    theirs = json.loads((again / "store.json").read_text())["store_id"]
    assert ours != theirs
    shutil.copy(foreign, part)
    line = error_line(invoke(*COMMANDS[command](store)))
    assert f"part {part} was written by store {theirs}, not by this one ({ours})" in line
    assert "it is no part of this store" in line
    from batchrl.store import Store

    assert Store.open(store).remove_source(tmp_path / "moved.log") is False  # passed over
    shutil.copy(made["holdem"] / "parts" / part.name, part)  # ours again, and one more
    assert invoke("generate", "--game", "holdem", "--hands", 40, "--seed", 8, "-o",
                  tmp_path / "more.log").exit_code == 0
    assert invoke("ingest", tmp_path / "more.log", "--store", store).exit_code == 0
    shutil.copy(again / "store.json", store / "store.json")  # every part now "foreign"
    line = error_line(invoke(*COMMANDS[command](store)))
    assert f"{store / 'store.json'} names store {theirs}, but every part was written by " \
           f"store {ours}: store.json was replaced" in line
    meta = json.loads((store / "store.json").read_text())
    meta["store_id"] = ours
    del meta["store_id"]  # as a store made before: its parts are not asked for a name
    (store / "store.json").write_text(json.dumps(meta))
    assert invoke("info", store).exit_code == 0
    meta["store_id"] = "../../x"
    (store / "store.json").write_text(json.dumps(meta))
    line = error_line(invoke(*COMMANDS[command](store)))
    assert "its store_id is ../../x, not 16 hex digits" in line
