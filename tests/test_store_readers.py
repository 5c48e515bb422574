"""A store is plain Parquet: DuckDB, Polars and pandas read every column of its parts by
name, with no batchrl, and agree with what batchrl reads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from locations import SAMPLES

from batchrl.games.sette_mezzo.logs import play, write_log
from batchrl.ingest import IngestConfig, ingest
from batchrl.store import Store


@pytest.fixture(scope="module")
def holdem(tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = tmp_path_factory.mktemp("readers") / "store"
    ingest(IngestConfig(paths=(SAMPLES / "random_vs_random.2p.limit.log",), store=root))
    return Store.open(root)


@pytest.fixture(scope="module")
def sette_mezzo(tmp_path_factory: pytest.TempPathFactory) -> Store:
    work = tmp_path_factory.mktemp("readers-sm")
    log = work / "games.jsonl"
    write_log(log, play("random", 300, np.random.default_rng(3)))
    ingest(IngestConfig(paths=(log,), store=work / "store"))
    return Store.open(work / "store")


def parts(store: Store) -> str:
    return str(store.root / "parts" / "*.parquet")


def test_duckdb_queries_the_features_by_name(holdem: Store) -> None:
    duckdb = pytest.importorskip("duckdb", reason="the test extra brings duckdb")
    t = holdem.arrays()
    pv = t.state[:, t.feature_names.index("pv")]
    [(mean,)] = duckdb.sql(f"SELECT avg(pv) FROM '{parts(holdem)}' WHERE action = 2").fetchall()
    assert mean == pytest.approx(float(pv[t.action == 2].mean()), rel=1e-6)
    # every column reads, by name
    columns = pq.read_schema(next(holdem.parts_dir.glob("*.parquet"))).names
    quoted = ", ".join(f'"{c}"' for c in columns)
    rows = duckdb.sql(f"SELECT {quoted} FROM '{parts(holdem)}'").fetchall()
    assert len(rows) == len(t) and len(rows[0]) == len(columns)
    [(legal,)] = duckdb.sql(f"SELECT count(*) FROM '{parts(holdem)}' WHERE next_legal_raise"
                            ).fetchall()
    assert legal == int(t.next_legal[:, holdem.schema.action_names.index("raise")].sum())


def test_polars_reads_every_column(holdem: Store, sette_mezzo: Store) -> None:
    pl = pytest.importorskip("polars", reason="the test extra brings polars")
    for store in (holdem, sette_mezzo):
        frame = pl.read_parquet(parts(store))
        t = store.arrays()
        assert frame.columns == store.schema.arrow_schema().names and len(frame) == len(t)
        state = frame.select(list(store.schema.feature_names)).to_numpy().astype(np.float32)
        np.testing.assert_array_equal(state, t.state)
        legal = frame.select(list(store.schema.columns()["next_legal"])).to_numpy()
        np.testing.assert_array_equal(legal, t.next_legal)
        assert frame["episode"].to_list() == t.episode_ids[t.episode].tolist()


def test_pandas_reads_the_features_as_numbers(sette_mezzo: Store) -> None:
    import pandas as pd

    frame = pd.read_parquet(next(Path(sette_mezzo.parts_dir).glob("*.parquet")))
    t = sette_mezzo.arrays()
    assert frame["total"].dtype == np.float32
    np.testing.assert_array_equal(frame["total"].to_numpy(), t.state[:, 0])
    np.testing.assert_array_equal(frame["reward"].to_numpy(), t.reward)


def test_the_footer_tells_other_readers_where_the_next_state_is(holdem: Store) -> None:
    import json

    meta = json.loads(pq.read_schema(next(holdem.parts_dir.glob("*.parquet"))).metadata[
        b"batchrl"])
    assert meta["columns"]["state"] == list(holdem.schema.feature_names)
    assert "following row of the same episode and player" in meta["columns"]["next_state"]
