"""The Parquet transition store, how sources get in: a re-ingest replaces its part,
sources coexist and leave, a writer that fails or is killed leaves only whole sources,
and the stores, games, schemas and batches it cannot take are refused, saying why."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from store_rows import ACTIONS, FEATURES, SCHEMA, hidden_files, ingest, make_batch, source

from batchrl import store as store_module
from batchrl.store import (
    SCHEMA_VERSION,
    Store,
    StoreError,
    StoreSchema,
    file_digest,
)
from batchrl.store import writer as store_writer


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.create(tmp_path / "store", SCHEMA)


def test_file_digest_is_sha256_of_bytes(tmp_path: Path) -> None:
    path, digest = source(tmp_path, "a.log", "x" * 100_000)
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()


def test_reingesting_a_source_replaces_its_part(store: Store, tmp_path: Path) -> None:
    path, digest = source(tmp_path, "a.log")
    ingest(store, path, digest, make_batch(digest, range(4), seed=1))
    second = make_batch(digest, range(4), seed=2)
    ingest(store, path, digest, second)
    assert store.info().rows == 16 and len(store.sources()) == 1
    np.testing.assert_array_equal(store.arrays().state, second["state"])

    # the file changed on disk: same path, new digest, still one part
    path.write_text("longer log now\n")
    new_digest = file_digest(path)
    ingest(store, path, new_digest, make_batch(new_digest, range(2)))
    [info] = store.sources()
    assert (info.digest, info.rows, info.episodes) == (new_digest, 8, 2)


def test_two_sources_coexist_and_can_be_removed(store: Store, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (a, da), (b, db) = source(tmp_path, "a.log"), source(tmp_path, "b.log")
    ingest(store, a, da, make_batch(da, range(2)))
    ingest(store, b, db, make_batch(db, range(3)))
    assert sorted(s.path for s in store.sources()) == [str(a), str(b)]
    assert len(set(store.arrays().episode_ids)) == 5

    assert store.remove_source(a) and not store.remove_source(a)
    assert [s.path for s in store.sources()] == [str(b)]
    monkeypatch.chdir(tmp_path)
    ingest(store, Path("logs/a.log"), da, make_batch(da, range(1)))
    monkeypatch.chdir(store.root)  # "logs/a.log" now resolves elsewhere: the recorded path wins
    assert store.remove_source("logs/a.log")
    assert [s.path for s in store.sources()] == [str(b)]


def test_same_content_under_another_path_is_refused(store: Store, tmp_path: Path) -> None:
    (a, da), (b, db) = source(tmp_path, "a.log", "same"), source(tmp_path, "b.log", "same")
    ingest(store, a, da, make_batch(da, range(2)))
    with pytest.raises(StoreError, match=r"same content as .*a.log.*twice"):
        store.writer(b, db)


def test_exception_inside_writer_keeps_earlier_part(store: Store, tmp_path: Path) -> None:
    path, digest = source(tmp_path, "a.log")
    first = make_batch(digest, range(3), seed=1)
    ingest(store, path, digest, first)
    with pytest.raises(RuntimeError, match="parser broke"), store.writer(path, digest) as w:
        w.write(make_batch(digest, range(9), seed=2))
        raise RuntimeError("parser broke")
    assert hidden_files(store) == []
    np.testing.assert_array_equal(store.arrays().state, first["state"])
    assert store.info().rows == 12


def test_stale_temp_file_is_ignored_then_cleaned(store: Store, tmp_path: Path) -> None:
    path, digest = source(tmp_path, "a.log")
    ingest(store, path, digest, make_batch(digest, range(2)))
    stale = store.parts_dir / ".0123456789abcdef.tmp-999999999"  # beyond any pid_max
    stale.write_bytes(b"PAR1 half a part")
    assert Store.open(store.root).info().rows == 8 and len(store.arrays()) == 8
    ingest(store, *source(tmp_path, "b.log"))
    assert not stale.exists()


def test_other_schema_version_is_refused_with_what_to_do(store: Store) -> None:
    manifest = json.loads((store.root / "store.json").read_text())
    manifest["schema_version"] = SCHEMA_VERSION + 1
    (store.root / "store.json").write_text(json.dumps(manifest))
    with pytest.raises(StoreError, match=f"schema version {SCHEMA_VERSION + 1}.*upgrade "
                                         "batchrl, or re-ingest.*--store"):
        Store.open(store.root)


def test_version_1_store_is_refused_with_the_reingest_hint(store: Store) -> None:
    manifest = json.loads((store.root / "store.json").read_text())
    del manifest["state_dtype"]  # as version 1 wrote it
    (store.root / "store.json").write_text(json.dumps(manifest | {"schema_version": 1}))
    with pytest.raises(StoreError, match=rf"written by schema version 1; this batchrl reads "
                                         rf"version {SCHEMA_VERSION}: re-ingest the logs into "
                                         "a new store"):
        Store.open(store.root)


def test_an_older_store_is_refused_with_the_command_that_rebuilds_it(store: Store,
                                                                     tmp_path: Path) -> None:
    for name in ("a.log", "b c.log"):
        path, digest = source(tmp_path, name)
        ingest(store, path, digest, make_batch(digest, range(2)))
    manifest = json.loads((store.root / "store.json").read_text())
    (store.root / "store.json").write_text(json.dumps(manifest | {"schema_version": 2}))
    with pytest.raises(StoreError) as caught:
        Store.open(store.root)
    message = str(caught.value)
    assert "schema version 2" in message and "\n" not in message
    logs = sorted(s.path for s in _sources_of(store))
    assert message.endswith(f" --store {store.root}-v3")
    command = message[message.index("batchrl ingest "):]
    assert f" {logs[0]} " in command and f" '{logs[1]}' " in command
    assert "game params" in message  # the test schema has game params to ingest with


def _sources_of(store: Store) -> list[Any]:
    manifest = json.loads((store.root / "store.json").read_text())
    (store.root / "store.json").write_text(json.dumps(manifest | {
        "schema_version": SCHEMA_VERSION}))
    try:
        return store.sources()
    finally:
        (store.root / "store.json").write_text(json.dumps(manifest))


def test_other_game_is_refused_naming_both(store: Store, tmp_path: Path) -> None:
    path, digest = source(tmp_path, "a.log")
    ingest(store, path, digest, make_batch(digest, range(2)))
    assert Store.create(store.root, SCHEMA).schema == SCHEMA
    hanabi = StoreSchema(game="hanabi.2p", feature_names=("hints",), action_names=("play",))
    with pytest.raises(StoreError, match=r"test.limit.2p, not hanabi.2p.*another --store"):
        Store.create(store.root, hanabi)
    other_blinds = StoreSchema(SCHEMA.game, FEATURES, ACTIONS, ("cards",), {"big_blind": 4})
    with pytest.raises(StoreError, match="game_params"):
        Store.create(store.root, other_blinds)
    fewer = StoreSchema(SCHEMA.game, FEATURES[1:], ACTIONS, ("cards",), SCHEMA.game_params)
    with pytest.raises(StoreError,
                       match=f"{FEATURES[0]} among its features, which this ingest leaves out"):
        Store.create(store.root, fewer)
    as_int8 = StoreSchema(SCHEMA.game, FEATURES, ACTIONS, ("cards",), SCHEMA.game_params,
                          state_dtype="int8")
    assert as_int8 != SCHEMA
    with pytest.raises(StoreError, match=r"test.limit.2p with state_dtype float32 \(not int8\): "
                                         "use another --store"):
        Store.create(store.root, as_int8)


def test_an_empty_store_takes_a_new_schema(store: Store) -> None:
    # A failed first ingest must not pin an empty store to its game.
    hanabi = StoreSchema(game="hanabi.2p", feature_names=("hints",), action_names=("play",))
    assert Store.create(store.root, hanabi).schema == hanabi
    assert Store.open(store.root).schema == hanabi


def test_missing_or_foreign_directories_are_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"no batchrl store.*batchrl ingest"):
        Store.open(tmp_path / "nowhere")
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos" / "cat.jpg").write_bytes(b"")
    with pytest.raises(StoreError, match="not a batchrl store"):
        Store.create(tmp_path / "photos", SCHEMA)


def _broken(batch: dict[str, Any], column: str, value: Any) -> dict[str, Any]:
    return batch | {column: value}


@pytest.mark.parametrize(
    ("column", "change", "message"),
    [
        ("state", lambda b: b["state"][:, :3], "'state' has shape"),
        ("next_legal", lambda b: b["next_legal"][:, :2], "'next_legal' has shape"),
        ("reward", lambda b: b["reward"][:-1], "'reward' has shape"),
        ("action", lambda b: b["action"] + 3, "'action' has values outside"),
        ("terminal", lambda b: b["terminal"].astype(int), "'terminal' must be bool"),
        ("reward", lambda b: b["reward"] * np.nan, "'reward' has a NaN"),
        ("episode", lambda b: np.roll(b["episode"], 1), "not contiguous"),
        ("episode", lambda b: np.char.add("x", b["episode"]), "must start with"),
        ("cards", None, "missing columns \\['cards'\\]"),
    ],
)
def test_malformed_batches_are_rejected(store: Store, tmp_path: Path, column: str,
                                        change: Any, message: str) -> None:
    path, digest = source(tmp_path, "a.log")
    batch = make_batch(digest, range(2))
    bad = {k: v for k, v in batch.items() if k != column} if change is None else _broken(
        batch, column, change(batch))
    with pytest.raises(StoreError, match=message), store.writer(path, digest) as w:
        w.write(bad)
    assert store.sources() == [] and hidden_files(store) == []


def test_many_small_batches_stream_into_few_row_groups(store: Store, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_writer, "ROW_GROUP_ROWS", 100)
    path, digest = source(tmp_path, "a.log")
    whole = make_batch(digest, range(300))
    with store.writer(path, digest) as w:
        for start in range(0, 1200, 6):  # 6 rows: an episode is split across two writes
            w.write({k: v[start:start + 6] for k, v in whole.items()})
        w.write(make_batch(digest, range(0)))
        w.set_stats({"hands_skipped": {"misdeal": 1}})
    [info] = store.sources()
    assert (info.rows, info.episodes, info.players) == (1200, 300, (0, 1))
    assert info.extra == {"hands_skipped": {"misdeal": 1}}
    [part] = list(store.parts_dir.glob("*.parquet"))
    assert pq.read_metadata(part).num_row_groups == 12
    t = store.arrays()
    np.testing.assert_array_equal(t.state, whole["state"])
    np.testing.assert_array_equal(t.episode_ids[t.episode], whole["episode"])
    assert sum(b.num_rows for b in store.iter_batches(["reward"], batch_size=64)) == 1200


_KILLED_WRITER = """
import sys, time
from pathlib import Path
import numpy as np
from batchrl import store as st
root, src, digest, npz, marker = sys.argv[1:]
st.writer.ROW_GROUP_ROWS = 4
batch = dict(np.load(npz))
with st.Store.open(root).writer(src, digest) as w:
    for i in range(10**6):
        w.write(batch)
        if i == 5:
            Path(marker).touch()
        time.sleep(0.01)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")
def test_writer_killed_mid_write_leaves_only_whole_sources(store: Store, tmp_path: Path) -> None:
    (a, da), (b, db) = source(tmp_path, "a.log"), source(tmp_path, "b.log")
    ingest(store, a, da, make_batch(da, range(2)))
    old_b = make_batch(db, range(3), seed=7)
    ingest(store, b, db, old_b)
    np.savez(tmp_path / "batch.npz", **make_batch(db, range(50), seed=8))
    marker = tmp_path / "writing"
    env = os.environ | {"PYTHONPATH": str(Path(store_module.__file__).parents[2])}
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_WRITER, str(store.root), str(b), db,
         str(tmp_path / "batch.npz"), str(marker)],
        env=env, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert child.poll() is None, child.stderr.read() if child.stderr else ""
            assert time.monotonic() < deadline, "writer never started"
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
        child.wait()
    finally:
        child.kill()
        child.wait()
    assert len(hidden_files(store)) == 1  # the killed writer's temp part

    reopened = Store.open(store.root)
    assert {s.path: s.rows for s in reopened.sources()} == {str(a): 8, str(b): 12}
    b_rows = reopened.to_pandas()
    b_rows = b_rows[b_rows["source"] == str(b)]
    np.testing.assert_array_equal(np.stack(b_rows["state"].to_numpy()), old_b["state"])
    ingest(reopened, *source(tmp_path, "c.log"))  # the next writer sweeps the dead temp part
    assert hidden_files(store) == []


def _part_table(store: Store) -> pa.Table:
    [part] = list(store.parts_dir.glob("*.parquet"))
    return pq.read_table(part)


def _as_dictionary(values: Any, order: list[int] | None = None) -> pa.DictionaryArray:
    """``values`` as codes into their distinct strings, in first-seen order or ``order``
    (a permutation of them), with an unused entry and a repeated one when ``order``."""
    encoded = pa.array(np.asarray(values).tolist(), type=pa.string()).dictionary_encode()
    if order is None:
        return encoded
    uniques = encoded.dictionary.to_pylist()
    shuffled = [uniques[i] for i in order] + ["unused", uniques[order[0]]]
    where = {v: i for i, v in enumerate(shuffled[:len(uniques)])}
    codes = np.asarray([where[v] for v in np.asarray(values).tolist()], dtype=np.int16)
    return pa.DictionaryArray.from_arrays(pa.array(codes), pa.array(shuffled))


@pytest.mark.parametrize("shuffle", [False, True])
def test_string_columns_given_as_dictionaries_store_the_same_part(
        tmp_path: Path, shuffle: bool) -> None:
    path, digest = source(tmp_path, "a.log")
    plain, coded = (Store.create(tmp_path / name, SCHEMA) for name in ("plain", "coded"))
    batches = [make_batch(digest, range(0, 3)), make_batch(digest, range(3, 7), seed=1)]
    # the second batch goes on with the first's last episode: counted once
    batches[1]["episode"][:4] = batches[0]["episode"][-1]
    ingest(plain, path, digest, *batches)
    given = []
    for b in batches:
        k = len(set(b["episode"].tolist()))
        order = list(range(k))[::-1] if shuffle else None
        given.append(b | {"episode": _as_dictionary(b["episode"], order),
                          "cards": _as_dictionary(b["cards"])})
    ingest(coded, path, digest, *given)
    assert _part_table(coded).equals(_part_table(plain))
    assert pq.read_schema(next(coded.parts_dir.glob("*.parquet"))).equals(
        pq.read_schema(next(plain.parts_dir.glob("*.parquet"))))
    assert (coded.info().rows, coded.info().episodes) == (plain.info().rows, 6)


@pytest.mark.parametrize(
    ("column", "change", "message"),
    [
        ("episode", lambda b: _as_dictionary(np.roll(b["episode"], 1)), "not contiguous"),
        ("episode", lambda b: _as_dictionary(np.char.add("x", b["episode"])),
         "must start with"),
        ("cards", lambda b: pa.DictionaryArray.from_arrays(
            pa.array(np.zeros(len(b["cards"]), np.int32)), pa.array([1])), "must hold strings"),
        ("cards", lambda b: pa.DictionaryArray.from_arrays(
            pa.array(np.zeros(3, np.int32)), pa.array(["x"])), "has 3 values"),
        ("cards", lambda b: pa.DictionaryArray.from_arrays(
            pa.array(np.zeros(len(b["cards"]), np.int32)), pa.array([None], pa.string())),
         "missing"),
    ],
)
def test_malformed_dictionary_columns_are_rejected(store: Store, tmp_path: Path, column: str,
                                                   change: Any, message: str) -> None:
    path, digest = source(tmp_path, "a.log")
    batch = make_batch(digest, range(2))
    with pytest.raises(StoreError, match=message), store.writer(path, digest) as w:
        w.write(_broken(batch, column, change(batch)))
    assert store.sources() == [] and hidden_files(store) == []
