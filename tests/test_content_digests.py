"""Each part's rows carry their digests: a part rewritten under a copied footer (its page
checksums new and sound) is named by every reader, and a model records the rows it read."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from batchrl.cli import main
from batchrl.learning import store_digest
from batchrl.store import Store, StoreError
from batchrl.store.content import CONTENT_KEY, ContentDigest
from batchrl.store.schema import META_KEY
from tests.store_rows import SCHEMA, ingest, make_batch, source


def _store(tmp_path: Path, seed: int = 0, name: str = "s") -> Store:
    store = Store.create(tmp_path / name, SCHEMA)
    path, digest = source(tmp_path, "a.log")
    ingest(store, path, digest, make_batch(digest, range(6), seed=seed),
           make_batch(digest, range(6, 9), seed=seed + 1))
    return store


def _rewrite(part: Path, change: str | None = "reward", footer: dict | None = None) -> None:
    """``part`` written again as another tool would: ``change``'s values negated, the
    footer copied (or ``footer`` given), every page checksum new and sound."""
    f = pq.ParquetFile(part)
    meta = f.metadata.metadata[META_KEY]
    table = f.read()
    if change is not None:
        column = table.column(change).to_pylist()
        new = [f"{v}!" for v in column] if isinstance(column[0], str) else \
            [-v - 1 for v in column]
        table = table.set_column(table.schema.get_field_index(change), change,
                                 pa.array(new, table.schema.field(change).type))
    with pq.ParquetWriter(part, table.schema, write_page_checksum=True) as w:
        w.write_table(table)
        w.add_key_value_metadata({META_KEY: json.dumps(footer).encode()
                                  if footer is not None else meta})


def _part(store: Store) -> Path:
    return next(store.parts_dir.glob("*.parquet"))


@pytest.mark.parametrize("read", ["check", "arrays", "batches", "pandas"])
def test_a_part_rewritten_under_its_footer_is_named_by_every_reader(tmp_path: Path,
                                                                    read: str) -> None:
    store = _store(tmp_path)
    part = _part(store)
    _rewrite(part)
    again = Store.open(store.root)
    again.check()  # the footers alone cannot tell
    run = {"check": lambda: again.check(pages=True), "arrays": again.arrays,
           "batches": lambda: list(again.iter_batches()), "pandas": again.to_pandas}[read]
    with pytest.raises(StoreError, match=rf"part .*{part.name} is damaged \(its column "
                                         r"reward holds other values than its ingest wrote"):
        run()


def test_a_column_not_read_is_not_what_a_reader_checks(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _rewrite(_part(store), change="cards")
    again = Store.open(store.root)
    assert len(again.arrays().reward) == 36  # the learners' columns are the written ones
    with pytest.raises(StoreError, match="column cards holds other values"):
        again.audit("cards")


def test_info_and_fqi_refuse_a_rewritten_part(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _rewrite(_part(store))
    runner = CliRunner()
    info = runner.invoke(main, ["info", str(store.root)])
    assert info.exit_code == 1 and "holds other values than its ingest wrote" in info.output
    assert "Traceback" not in info.output
    fqi = runner.invoke(main, ["fqi", "--store", str(store.root), "--trees", "2", "--iters",
                               "1", "--out", str(tmp_path / "m.npz")])
    assert fqi.exit_code == 1 and "holds other values than its ingest wrote" in fqi.output
    assert not (tmp_path / "m.npz").exists()


def test_a_part_of_an_older_batchrl_reads_and_says_it_is_not_digested(tmp_path: Path) -> None:
    store = _store(tmp_path)
    part = _part(store)
    footer = json.loads(pq.ParquetFile(part).metadata.metadata[META_KEY])
    assert len(footer["source"].pop(CONTENT_KEY)) == len(SCHEMA.arrow_schema().names)
    _rewrite(part, change=None, footer=footer)
    again = Store.open(store.root)
    assert again.check(pages=True)[0].content_digest == ""
    out = CliRunner().invoke(main, ["info", str(store.root)]).output
    assert "rows not digested (an older batchrl's part)" in out


def test_the_digest_is_of_the_rows_however_they_were_cut(tmp_path: Path) -> None:
    whole = _store(tmp_path, name="whole")
    table = pq.read_table(_part(whole))
    assert whole.sources()[0].content == _digests(table)
    for size in (1, 7, 1000):
        assert _digests(pa.Table.from_batches(table.to_batches(max_chunksize=size))) \
            == whole.sources()[0].content
    strings = pa.table({"s": pa.array(["ab", "", "c"]), "d": pa.array(["x", "y", "x"])
                        .dictionary_encode(), "n": pa.array([1, None, 3])})
    cut = pa.Table.from_batches(strings.to_batches(max_chunksize=1))
    assert _digests(strings) == _digests(cut)
    nulls = pa.table({"s": pa.array(["aaa", None, "b", None])})
    assert _digests(nulls) == _digests(pa.Table.from_batches(nulls.to_batches(max_chunksize=1)))
    moved = pa.table({"s": pa.array(["a", "bc", "c"]), "d": strings.column("d"),
                      "n": pa.array([1, 3, None])})  # the same bytes, cut elsewhere
    assert all(_digests(moved)[c] != _digests(strings)[c] for c in ("s", "n"))


def _digests(table: pa.Table) -> dict[str, str]:
    found = ContentDigest(table.schema.names)
    found.update(table)
    return found.hexdigests()


def test_a_model_records_the_rows_it_read_not_only_the_log(tmp_path: Path) -> None:
    one, other = _store(tmp_path, seed=0, name="one"), _store(tmp_path, seed=5, name="two")
    assert one.sources()[0].digest == other.sources()[0].digest  # the same log's name
    assert store_digest(one) != store_digest(other)
    assert store_digest(one) == store_digest(Store.open(one.root))
    assert np.isfinite(one.arrays().reward).all()
