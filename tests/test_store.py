"""The Parquet transition store: round trips, idempotent re-ingest, atomic parts, refusals."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
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

from batchrl import store as store_module
from batchrl.store import (
    SCHEMA_VERSION,
    Store,
    StoreError,
    StoreSchema,
    default_store_path,
    episode_id,
    file_digest,
    source_key,
)
from batchrl.store import schema as store_schema
from batchrl.store import writer as store_writer

FEATURES = ("hand_strength", "pot", "round", "raises")
ACTIONS = ("fold", "call", "raise")
SCHEMA = StoreSchema(game="test.limit.2p", feature_names=FEATURES, action_names=ACTIONS,
                     audit_columns=("cards",), game_params={"big_blind": 2, "bets": [2, 4]})


def make_batch(digest: str, episodes: range, *, seed: int = 0, rows: int = 4) -> dict[str, Any]:
    """``rows`` decisions per episode, players alternating; each player's last one is terminal."""
    rng = np.random.default_rng(seed)
    n = len(episodes) * rows
    index = np.repeat(np.asarray(episodes, dtype=np.int64), rows)
    k = np.tile(np.arange(rows), len(episodes))
    terminal = k >= rows - 2
    next_legal = ~terminal[:, None] & (rng.random((n, len(ACTIONS))) < 0.5)
    next_legal[~terminal, 1] = True
    return {
        "episode": np.array([episode_id(digest, int(i)) for i in index]),
        "step": (k // 2).astype(np.int32),
        "player": (k % 2).astype(np.int8),
        "state": rng.integers(0, 5, (n, len(FEATURES))).astype(np.float32) + 0.25,
        "action": rng.integers(0, len(ACTIONS), n).astype(np.int8),
        "reward": np.where(terminal, rng.integers(-4, 5, n) * 0.5, 0.0),
        "next_state": np.where(terminal[:, None], 0, rng.random((n, len(FEATURES)))
                               ).astype(np.float32),
        "next_legal": next_legal,
        "terminal": terminal,
        "truncated": np.zeros(n, dtype=bool),
        "line": 1 + index * rows + k,
        "cards": np.array([f"As{i}|Kd{j}" for i, j in zip(index, k, strict=True)]),
    }


def source(tmp_path: Path, name: str, content: str = "") -> tuple[Path, str]:
    path = tmp_path / "logs" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(content or f"log {name}\n")
    return path, file_digest(path)


def ingest(store: Store, path: Path, digest: str, *batches: dict[str, Any]) -> None:
    with store.writer(path, digest) as w:
        for batch in batches:
            w.write(batch)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.create(tmp_path / "store", SCHEMA)


def hidden_files(store: Store) -> list[str]:
    return [p.name for p in store.parts_dir.iterdir() if p.name.startswith(".")]


def test_file_digest_is_sha256_of_bytes(tmp_path: Path) -> None:
    path, digest = source(tmp_path, "a.log", "x" * 100_000)
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()


def test_round_trip_through_arrays_and_pandas(store: Store, tmp_path: Path) -> None:
    path, digest = source(tmp_path, "a.log")
    batch = make_batch(digest, range(5))
    ingest(store, path, digest, batch)

    t = store.arrays()
    assert len(t) == 20 and t.feature_names == FEATURES and t.action_names == ACTIONS
    for name in ("state", "next_state", "next_legal", "reward", "terminal", "truncated",
                 "step", "player"):
        np.testing.assert_array_equal(getattr(t, name), batch[name], err_msg=name)
    np.testing.assert_array_equal(t.action, batch["action"])
    np.testing.assert_array_equal(t.episode_ids[t.episode], batch["episode"])
    assert t.state.dtype == np.float32 and t.action.dtype == np.int64 and t.state.flags.writeable

    df = store.to_pandas()
    assert list(df.columns) == [*store_schema.CORE_COLUMNS, "cards"]
    np.testing.assert_array_equal(np.stack(df["state"].to_numpy()), batch["state"])
    np.testing.assert_array_equal(np.stack(df["next_legal"].to_numpy()), batch["next_legal"])
    np.testing.assert_array_equal(df["line"].to_numpy(), batch["line"])
    assert list(df["cards"]) == list(batch["cards"])
    assert set(df["source"]) == {str(path)}
    assert list(store.to_pandas(["reward"]).columns) == ["reward"]


def test_features_selected_and_dropped_by_name(store: Store, tmp_path: Path) -> None:
    path, digest = source(tmp_path, "a.log")
    batch = make_batch(digest, range(3))
    ingest(store, path, digest, batch)

    picked = store.arrays(features=["round", "hand_strength"])
    assert picked.feature_names == ("hand_strength", "round")  # store order, not asked order
    np.testing.assert_array_equal(picked.state, batch["state"][:, [0, 2]])
    np.testing.assert_array_equal(picked.next_state, batch["next_state"][:, [0, 2]])

    dropped = store.arrays(drop=["pot"])
    assert dropped.feature_names == ("hand_strength", "round", "raises")
    np.testing.assert_array_equal(dropped.state, batch["state"][:, [0, 2, 3]])
    assert store.arrays(features=["pot", "raises"], drop=["raises"]).feature_names == ("pot",)


# each state dtype with values at both ends of its range
STATE_VALUES = {"float32": [-1e30, -0.25, 0.0, 3.5, 1e30], "int8": [-128, -1, 0, 1, 127],
                "uint8": [0, 1, 2, 254, 255]}


def _with_states(batch: dict[str, Any], state_dtype: str, seed: int = 0) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    values = np.asarray(STATE_VALUES[state_dtype], dtype=np.float32)
    n = len(batch["state"])
    return batch | {"state": rng.choice(values, (n, len(FEATURES))),
                    "next_state": rng.choice(values, (n, len(FEATURES)))}


@pytest.mark.parametrize("state_dtype", list(STATE_VALUES))
def test_each_state_dtype_round_trips_exactly(tmp_path: Path, state_dtype: str) -> None:
    schema = StoreSchema(SCHEMA.game, FEATURES, ACTIONS, ("cards",), SCHEMA.game_params,
                         state_dtype=state_dtype)
    store = Store.create(tmp_path / "store", schema)
    path, digest = source(tmp_path, "a.log")
    batch = _with_states(make_batch(digest, range(6)), state_dtype)
    ingest(store, path, digest, batch)
    [part] = store.parts_dir.glob("*.parquet")
    for feature in FEATURES:  # each feature a column of the state's dtype, and its next_
        for column in (feature, f"next_{feature}"):
            assert pq.read_schema(part).field(column).type == pa.from_numpy_dtype(
                np.dtype(state_dtype))
    assert pq.read_schema(part).field("next_legal_raise").type == pa.bool_()
    assert Store.open(store.root).schema == schema  # state_dtype read back from store.json

    t = store.arrays()
    for name in ("state", "next_state", "next_legal"):
        np.testing.assert_array_equal(getattr(t, name), batch[name], err_msg=name)
    assert t.state.dtype == t.next_state.dtype == np.float32 and t.next_legal.dtype == bool
    frame = store.to_pandas(["next_legal", "reward", "state"])
    assert list(frame.columns) == ["next_legal", "reward", "state"]
    for name in ("state", "next_legal"):
        assert frame[name].dtype == object
        assert all(isinstance(v, np.ndarray) and v.ndim == 1 for v in frame[name])
        assert frame[name].iloc[0].dtype == getattr(t, name).dtype
        np.testing.assert_array_equal(np.stack(frame[name].to_numpy()), batch[name])
    [record] = store.iter_batches([f"next_{f}" for f in FEATURES])
    np.testing.assert_array_equal(np.column_stack(record.columns), batch["next_state"])


@pytest.mark.parametrize(
    ("state_dtype", "value", "shown"),
    [("int8", 0.5, "0.5"), ("int8", 128, "128.0"), ("int8", -129, "-129.0"),
     ("int8", np.nan, "nan"), ("uint8", -1, "-1.0"), ("uint8", 256, "256.0")],
)
def test_integer_states_refuse_what_they_cannot_hold(tmp_path: Path, state_dtype: str,
                                                     value: float, shown: str) -> None:
    schema = StoreSchema(SCHEMA.game, FEATURES, ACTIONS, ("cards",), state_dtype=state_dtype)
    store = Store.create(tmp_path / "store", schema)
    path, digest = source(tmp_path, "a.log")
    batch = _with_states(make_batch(digest, range(3)), state_dtype)
    batch["next_state"][7:, 2] = value  # rows 7 on, feature "round"
    with pytest.raises(StoreError, match=rf"column 'next_state' has {shown} at row 7, feature "
                                         rf"'round': this store keeps it as {state_dtype}"):
        ingest(store, path, digest, batch)
    assert store.sources() == [] and hidden_files(store) == []


def test_integer_states_take_ints_and_floats_alike(tmp_path: Path) -> None:
    schema = StoreSchema(SCHEMA.game, FEATURES, ACTIONS, ("cards",), state_dtype="int8")
    store = Store.create(tmp_path / "store", schema)
    path, digest = source(tmp_path, "a.log")
    batch = _with_states(make_batch(digest, range(3)), "int8")
    ingest(store, path, digest, batch | {"state": batch["state"].astype(np.int64)})
    np.testing.assert_array_equal(store.arrays().state, batch["state"])


def test_unknown_state_dtype_is_refused_naming_the_allowed() -> None:
    with pytest.raises(StoreError, match="state_dtype 'float64' is not one of float32, int8, "
                                         "uint8"):
        StoreSchema(SCHEMA.game, FEATURES, ACTIONS, state_dtype="float64")


def test_selected_features_from_many_parts_and_row_groups(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # several parts of several row groups each, and a player filter: the columns arrive in
    # many chunks, which the reader must put each at its own place
    monkeypatch.setattr(store_writer, "ROW_GROUP_ROWS", 40)
    schema = StoreSchema(SCHEMA.game, FEATURES, ACTIONS, ("cards", "name"), state_dtype="int8")
    store = Store.create(tmp_path / "store", schema)
    batches = {}
    for k in range(3):
        path, digest = source(tmp_path, f"{k}.log")
        batch = _with_states(make_batch(digest, range(25 + k)), "int8", seed=k)
        batch["name"] = np.where(batch["player"] == 0, "alice", "bob")
        ingest(store, path, digest, batch)
        batches[source_key(path)] = batch
    in_order = [batches[key] for key in sorted(batches)]  # parts are read in name order
    whole = {name: np.concatenate([b[name] for b in in_order]) for name in in_order[0]}
    parts = sorted(store.parts_dir.glob("*.parquet"))
    assert [pq.read_metadata(p).num_row_groups for p in parts] == [3, 3, 3]

    t = store.arrays(features=["pot", "raises"])
    np.testing.assert_array_equal(t.state, whole["state"][:, [1, 3]])
    np.testing.assert_array_equal(t.next_state, whole["next_state"][:, [1, 3]])
    np.testing.assert_array_equal(t.next_legal, whole["next_legal"])
    bob = whole["player"] == 1
    t = store.arrays(drop=["hand_strength"], players=["bob"])
    np.testing.assert_array_equal(t.state, whole["state"][bob][:, 1:])
    np.testing.assert_array_equal(t.next_legal, whole["next_legal"][bob])


def test_feature_patterns_pick_and_drop_by_name(store: Store, tmp_path: Path) -> None:
    path, digest = source(tmp_path, "a.log")
    ingest(store, path, digest, make_batch(digest, range(3)))
    assert store.arrays(drop=["r*"]).feature_names == ("hand_strength", "pot")
    assert store.arrays(features=["*o*"], drop=["round"]).feature_names == ("pot",)
    assert store.arrays(features=["p?t", "raises"]).feature_names == ("pot", "raises")
    with pytest.raises(StoreError, match=r"unknown features \['x\*'\]"):
        store.arrays(drop=["x*"])


def test_an_empty_store_gives_object_columns_for_the_vectors(store: Store) -> None:
    frame = store.to_pandas(["state", "next_legal", "reward"])
    assert len(frame) == 0 and list(frame.columns) == ["state", "next_legal", "reward"]
    assert frame["state"].dtype == object and frame["next_legal"].dtype == object


def test_unknown_feature_lists_the_valid_names(store: Store) -> None:
    with pytest.raises(StoreError, match=r"unknown features \['pv'\].*hand_strength"):
        store.arrays(drop=["pv"])
    with pytest.raises(StoreError, match="no feature left"):
        store.arrays(drop=list(FEATURES))
    with pytest.raises(StoreError, match="unknown columns"):
        store.to_pandas(["nope"])


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


def test_info_counts_rows_episodes_players_and_bytes(store: Store, tmp_path: Path) -> None:
    empty = store.info()
    assert (empty.rows, empty.episodes, empty.players, empty.sources) == (0, 0, (), [])
    assert len(store.arrays()) == 0 and store.arrays().state.shape == (0, len(FEATURES))
    (a, da), (b, db) = source(tmp_path, "a.log"), source(tmp_path, "b.log")
    ingest(store, a, da, make_batch(da, range(3)))
    ingest(store, b, db, make_batch(db, range(4), rows=6))
    info = store.info()
    assert (info.rows, info.episodes, info.players) == (36, 7, (0, 1))
    assert (info.game, info.schema_version) == (SCHEMA.game, SCHEMA_VERSION)
    assert (info.features, info.actions) == (FEATURES, ACTIONS)
    assert {s.path: s.rows for s in info.sources} == {str(a): 12, str(b): 24}
    on_disk = sum(p.stat().st_size for p in store.root.rglob("*") if p.is_file())
    assert info.bytes_on_disk == on_disk


def test_default_store_path_follows_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BATCHRL_STORE", raising=False)
    assert default_store_path() == Path("datasets") / "store"
    monkeypatch.setenv("BATCHRL_STORE", "/data/poker")
    assert default_store_path() == Path("/data/poker")


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


FOLLOWING = StoreSchema(SCHEMA.game, FEATURES, ACTIONS, ("cards",), SCHEMA.game_params,
                        next_state="following")


def following_batch(digest: str, episodes: range, seed: int = 0) -> dict[str, Any]:
    """`make_batch` with each row's next state its player's next row's state (zeros for
    each player's last row): what a "following" store derives."""
    batch = make_batch(digest, episodes, seed=seed, rows=6)
    codes = np.unique(batch["episode"], return_inverse=True)[1]
    after = store_module.following_rows(codes, batch["player"])
    batch["next_state"] = np.where(after[:, None] >= 0, batch["state"][after], 0
                                   ).astype(np.float32)
    return batch


def test_a_following_store_derives_next_state_across_batches(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "store", FOLLOWING)
    path, digest = source(tmp_path, "a.log")
    batch = following_batch(digest, range(5))
    # cut inside episode 2, and again between its two players' last rows
    cuts = [0, 15, 16, 22, 30]
    ingest(store, path, digest, *({k: v[a:b] for k, v in batch.items()}
                                  for a, b in itertools.pairwise(cuts)))
    [part] = store.parts_dir.glob("*.parquet")
    assert not [c for c in pq.read_schema(part).names if c.startswith("next_")
                and not c.startswith("next_legal_")]  # the next state is not written twice
    t = store.arrays()
    assert isinstance(t.next_state, store_module.FollowingStates)
    np.testing.assert_array_equal(np.asarray(t.next_state), batch["next_state"])
    rows = np.flatnonzero(batch["terminal"])[:3]
    np.testing.assert_array_equal(t.next_state[rows], batch["next_state"][rows])
    frame = store.to_pandas(["next_state", "player"])
    np.testing.assert_array_equal(np.stack(frame["next_state"].to_numpy()), batch["next_state"])
    # a player's rows, or whole episodes, keep the next states gathered on demand
    mine = t.rows(t.player == 1)
    assert isinstance(mine.next_state, store_module.FollowingStates)
    np.testing.assert_array_equal(np.asarray(mine.next_state),
                                  batch["next_state"][batch["player"] == 1])
    # a cut through a player's rows gathers them there and then
    odd = t.rows(np.arange(len(t)) % 4 == 0)
    np.testing.assert_array_equal(odd.next_state, batch["next_state"][::4])
    narrow = store.arrays(features=["pot"])
    np.testing.assert_array_equal(np.asarray(narrow.next_state), batch["next_state"][:, [1]])


@pytest.mark.parametrize(("row", "what"), [(2, "other than the state of its player's next "
                                               "row"),
                                           (4, "its player's last in the episode but has a "
                                               "next_state other than zeros")])
def test_a_following_store_refuses_rows_that_break_it(tmp_path: Path, row: int,
                                                      what: str) -> None:
    store = Store.create(tmp_path / "store", FOLLOWING)
    path, digest = source(tmp_path, "a.log")
    batch = following_batch(digest, range(3))
    batch["next_state"][row, 0] += 1  # row 2 has a next row; row 4 is player 0's last
    with pytest.raises(StoreError, match=f"line {batch['line'][row]} .*{what}.*"
                                         "next_state='stored'"):
        ingest(store, path, digest, batch)
    assert store.sources() == [] and hidden_files(store) == []


def test_a_store_made_before_rows_recorded_their_legal_actions_still_works(
        tmp_path: Path) -> None:
    """A store whose schema has no legal_<action> columns (made before they were written)
    opens, reads (no legal), takes more rows of the same game (their legal actions left
    out) and exports with the masks found as before; a new store records them."""
    from dataclasses import replace

    from locations import SAMPLES

    from batchrl.export import episodes_of
    from batchrl.ingest import IngestConfig, ingest

    log = SAMPLES / "random_vs_random.2p.limit.log"
    new = tmp_path / "new"
    ingest(IngestConfig(paths=(log,), store=new, options={"pv": False}))
    made = Store.open(new)
    assert made.schema.legal and made.arrays().legal is not None
    assert "legal_fold" in pq.read_schema(next((new / "parts").iterdir())).names
    old = tmp_path / "old"
    Store.create(old, replace(made.schema, legal=False))
    ingest(IngestConfig(paths=(log,), store=old, options={"pv": False}))
    held = Store.open(old)
    held.check()
    assert not held.schema.legal and "legal" not in json.loads(
        (old / "store.json").read_text())
    t, whole = held.arrays(), made.arrays()
    assert t.legal is None and len(t) == len(whole)
    np.testing.assert_array_equal(t.next_legal, whole.next_legal)
    assert "legal_fold" not in pq.read_schema(next((old / "parts").iterdir())).names
    found, recorded = episodes_of(t), episodes_of(whole)
    assert found.mask_sources["unknown"] > 0 and recorded.mask_sources["unknown"] == 0
    known = found.legal_known
    np.testing.assert_array_equal(found.legal_mask[known], recorded.legal_mask[known])
    (part,) = (new / "parts").glob("*.parquet")
    shutil.copy(part, old / "parts" / "zzz.parquet")  # a part of a store that records them
    with pytest.raises(StoreError, match=r"part .*zzz\.parquet holds game .* with "
                                         r"legal_<action> columns \(each row's own legal "
                                         r"actions\) as store\.json and the other parts say"):
        Store.open(old).check()
    frame = made.to_pandas(["action", "legal"])
    assert frame["legal"].map(len).eq(len(made.schema.action_names)).all()
