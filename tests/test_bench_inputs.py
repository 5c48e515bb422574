"""What a bench finds on disk is checked as any input is: a damaged or swapped cached
dataset is built again, once, saying so; its output folder is one bench's at a time; a
results row or a scores file that is not what the bench wrote is done again."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from batchrl.cli import main
from batchrl.play.bench.outputs import LOCK, load_rows, row_line
from batchrl.play.bench.report import Row

GRID = ("--quick", "--seeds", "1", "--games", "sette-mezzo", "--learners", "bc", "-j", "1")


def bench(out: Path, cache: Path, *more: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, ["bench", *GRID, "-o", str(out), "--cache", str(cache),
                                     *more], env=env)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    root = tmp_path_factory.mktemp("bench")
    got = bench(root / "out", root / "cache")
    assert got.exit_code == 0, got.output
    return root / "out", root / "cache", got.output


@pytest.fixture
def copy(built: tuple[Path, Path, str], tmp_path: Path) -> tuple[Path, Path, str]:
    out, cache, output = built
    shutil.copytree(out, tmp_path / "out")
    shutil.copytree(cache, tmp_path / "cache", symlinks=True)
    return tmp_path / "out", tmp_path / "cache", output


def _table(output: str) -> list[str]:
    """The sette-mezzo rows of a bench's table, less their CPU seconds: a timing (a row
    trained again takes its own, 0.0 one time and 0.1 the next)."""
    rows = []
    for line in output.splitlines():
        if line.startswith("sette-mezzo "):
            head, _, last = line.rstrip().rpartition(" ")
            timed = re.fullmatch(r"\d+\.\d", last) and not head.rstrip().endswith("±")
            rows.append(head.rstrip() if timed else line)
    return rows


def _folder(cache: Path, tier: str = "random") -> Path:
    return next((cache / "bench" / "sette-mezzo").glob(f"{tier}-*"))


def test_a_bench_leaves_no_empty_models_folder_and_calls_exact_rows_exact(built) -> None:
    out, _, output = built
    assert not (out / "models").exists()
    table = _table(output)
    assert table and all("± 0.0000" not in line for line in table)
    assert all(" exact " in line for line in table if " optimal " in line), table


def _flip_reward(cache: Path) -> None:
    part = next((_folder(cache) / "store" / "parts").glob("*.parquet"))
    import pyarrow as pa  # test helper: only this test rewrites a part
    import pyarrow.parquet as pq

    f = pq.ParquetFile(part)
    meta = f.metadata.metadata
    table = f.read()
    i = table.schema.get_field_index("reward")
    table = table.set_column(i, "reward", pa.array(-table.column(i).to_numpy() - 1))
    with pq.ParquetWriter(part, table.schema, write_page_checksum=True) as w:
        w.write_table(table)
        w.add_key_value_metadata({b"batchrl": meta[b"batchrl"]})


def _swap(cache: Path) -> None:
    """The expert tier's store put in the random tier's folder."""
    shutil.rmtree(_folder(cache) / "store")
    shutil.copytree(_folder(cache, "expert") / "store", _folder(cache) / "store")


def _link(cache: Path) -> None:
    folder = _folder(cache)
    moved = cache / "elsewhere"
    shutil.move(folder, moved)
    folder.symlink_to(moved)


@pytest.mark.parametrize(("damage", "said"), [
    (_flip_reward, "its column reward holds other values than its ingest wrote"),
    (lambda cache: (_folder(cache) / "store" / "store.json").unlink(), "no store.json"),
    (_swap, "its store is not the one built there (the digest of its rows differs)"),
    (_link, "it is a link, not a folder the cache made"),
    (lambda cache: (_folder(cache) / "dataset.json").write_text("{"), "dataset.json is "
                                                                      "unreadable")])
def test_a_damaged_cached_dataset_is_built_again_once_saying_so(copy, damage, said) -> None:
    out, cache, output = copy
    damage(cache)
    again = bench(out, cache)
    assert again.exit_code == 0, again.output
    assert said in again.output and "building it again" in again.output
    assert _table(again.output) == _table(output)  # the same dataset, the same rows
    assert not _folder(cache).is_symlink()
    third = bench(out, cache)
    assert "building it again" not in third.output and "generating" not in third.output


def test_what_a_killed_build_left_is_cleared_by_the_next(copy) -> None:
    out, cache, _ = copy
    folder = _folder(cache)
    left = folder.with_name(f".{folder.name}.tmp-999999999")
    (left / "logs").mkdir(parents=True)
    os.utime(left, (0, 0))
    shutil.rmtree(folder)
    assert bench(out, cache).exit_code == 0
    assert not left.exists()


def test_a_cache_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    got = CliRunner().invoke(main, ["bench", *GRID, "-o", str(tmp_path / "out")],
                             env={"BATCHRL_CACHE": str(tmp_path / "file")})
    assert got.exit_code == 1 and "is not a directory: point $BATCHRL_CACHE" in got.output
    assert "Traceback" not in got.output


def test_an_output_folder_is_one_benchs_at_a_time(copy) -> None:
    out, cache, _ = copy
    fd = os.open(out / LOCK, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.ftruncate(fd, 0)
        os.write(fd, b"pid 4242")
        got = bench(out, cache)
    finally:
        os.close(fd)
    assert got.exit_code == 1 and f"another bench is writing {out} (pid 4242)" in got.output
    assert bench(out, cache).exit_code == 0  # once the first is done


def test_an_edited_row_or_poisoned_scores_are_done_again(copy) -> None:
    out, cache, output = copy
    results = out / "results.jsonl"
    row = json.loads(results.read_text().splitlines()[0])
    results.write_text(json.dumps({**row, "normalized": 99.95}) + "\n")  # by hand
    again = bench(out, cache)
    assert again.exit_code == 0
    assert "not a result (edited since it was written (its digest differs))" in again.output
    assert _table(again.output) == _table(output)
    row = json.loads(results.read_text().splitlines()[0])
    del row["digest"]  # by a tool that digests the row again, the scores left
    results.write_text(row_line(Row(**{**row, "normalized": 99.95})))
    again = bench(out, cache)
    assert "says normalized 99.95, its scores file" in again.output
    assert "trained and scored again" in again.output
    assert _table(again.output) == _table(output)
    scores = out / "scores" / Path(json.loads(results.read_text().splitlines()[0])["scores"]).name
    with np.load(scores) as f:
        poisoned = {k: f[k] for k in f.files} | {"values": np.full(len(f["values"]), np.nan)}
    np.savez(scores.with_suffix(".tmp.npz"), **poisoned)
    os.replace(scores.with_suffix(".tmp.npz"), scores)
    third = bench(out, cache)
    assert "has no sound scores file" in third.output and _table(third.output) == \
        _table(output)


def test_a_fifo_among_a_benchs_files_hangs_nothing(copy) -> None:
    out, cache, output = copy
    results = out / "results.jsonl"
    scores = out / "scores" / Path(json.loads(results.read_text().splitlines()[0])["scores"]).name
    baseline = next(p for p in (out / "scores").glob("sette-mezzo-random-*.npz"))
    for path in (scores, baseline):
        path.unlink()
        os.mkfifo(path)
    started = time.monotonic()
    again = bench(out, cache)
    assert again.exit_code == 0 and time.monotonic() - started < 120
    assert _table(again.output) == _table(output)
    os.replace(results, out / "kept")
    os.mkfifo(results)
    got = bench(out, cache)
    assert got.exit_code == 1 and "results.jsonl is not a regular file" in got.output


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_a_scores_file_cut_or_flipped_is_scored_again(copy, damage: str) -> None:
    out, cache, output = copy
    scores = out / "scores" / Path(json.loads((out / "results.jsonl").read_text()
                                          .splitlines()[0])["scores"]).name
    data = bytearray(scores.read_bytes())
    if damage == "truncate":
        del data[len(data) // 2:]
    else:
        data[len(data) // 3] ^= 0x10
    scores.write_bytes(bytes(data))
    again = bench(out, cache)
    assert again.exit_code == 0, again.output
    assert "Traceback" not in again.output and _table(again.output) == _table(output)


def test_an_undefined_normalized_score_is_a_row_not_a_cut_line(tmp_path: Path) -> None:
    """Where the reference scores as random play does, the normalized score is NaN: the
    row reads back as written, not as a line to run again."""
    row = Row("g", "random", "bc", 0, 0.5, 0.1, float("nan"), float("nan"), 1.0, "u", 10,
              False)
    (tmp_path / "results.jsonl").write_text(row_line(row))
    said: list[str] = []
    rows, cut = load_rows(tmp_path / "results.jsonl", said.append)
    assert not cut and not said and len(rows) == 1 and np.isnan(rows[0].normalized)
