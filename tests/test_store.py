"""The Parquet transition store, what it gives back: round trips through arrays and
pandas, every state dtype exactly, features picked and dropped by name, its counts, the
next states a following store derives, and stores older than the legal-action record.
How sources get in (re-ingest, atomic parts, refusals) is `tests/test_store_writing.py`."""

from __future__ import annotations

import itertools
import json
import shutil
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
    default_store_path,
    source_key,
)
from batchrl.store import schema as store_schema
from batchrl.store import writer as store_writer


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.create(tmp_path / "store", SCHEMA)


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
