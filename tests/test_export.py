"""batchrl export: a store as Minari loads it, d3rlpy trains on it and RLlib's offline
Parquet columns hold it; the legal masks carried, honestly; the command's errors."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from batchrl.cli import main
from batchrl.export import episodes_of, export, load_d3rlpy
from batchrl.games import GAMES
from batchrl.store import Store


def invoke(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict[str, Path]:
    """Small stores of three games, generated and ingested by batchrl itself."""
    root = tmp_path_factory.mktemp("stores")
    made = {}
    for game, log, args in (
            ("holdem", "h.log", ["--hands", "60", "--players", "random,random"]),
            ("sette-mezzo", "s.jsonl", ["--games", "50", "--policy", "random"]),
            ("hanabi", "hanabi-games", ["--games", "2", "--players", "simple,simple"])):
        result = invoke("generate", "--game", game, *args, "--seed", "3", "-o", root / log)
        assert result.exit_code == 0, result.output
        result = invoke("ingest", root / log, "--store", root / game,
                        *(["--no-pv"] if game == "holdem" else []))
        assert result.exit_code == 0, result.output
        made[game] = root / game
    return made


def seat_episodes(store: Path) -> dict[tuple[str, int], dict[str, np.ndarray]]:
    """The store's rows by (episode id, seat), in step order, straight from Store.arrays."""
    data = Store.open(store).arrays()
    nxt = np.asarray(data.next_state)
    out = {}
    for e, p in sorted({(int(e), int(p)) for e, p in zip(data.episode, data.player,
                                                         strict=True)}):
        rows = np.flatnonzero((data.episode == e) & (data.player == p))
        rows = rows[np.argsort(data.step[rows], kind="stable")]
        out[(str(data.episode_ids[e]), p)] = {
            "state": data.state[rows], "action": data.action[rows],
            "reward": data.reward[rows], "final": nxt[rows[-1]],
            "terminal": data.terminal[rows], "next_legal": data.next_legal[rows]}
    return out


def test_minari_loads_it_episode_by_seat(stores, tmp_path, monkeypatch):
    minari = pytest.importorskip("minari")
    result = export(stores["holdem"], "minari", tmp_path / "mds")
    assert result.dataset_id == "batchrl/holdem-v0" and result.by == "seat"
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "mds"))
    dataset = minari.load_dataset("batchrl/holdem-v0")
    expected = seat_episodes(stores["holdem"])
    rows = len(Store.open(stores["holdem"]).arrays())
    assert dataset.total_steps == rows and dataset.total_episodes == len(expected)
    assert dataset.observation_space.shape == (10,) and dataset.action_space.n == 3
    meta = dataset.storage.metadata["batchrl"]
    assert meta["feature_names"][:3] == ["stage", "raises", "raises_sb"]
    assert meta["action_names"] == ["fold", "call", "raise"]
    assert meta["reward_unit"].startswith("chips of holdem.limit.2p.reverse_blinds")
    # the store records every row's own legal actions: no mask is unknown
    assert meta["episode_unit"] == "hands" and meta["legal_mask_unknown"] is None
    assert meta["legal_mask"].startswith("a bool per action (action_names) per observation: "
                                         "its row's own legal actions")
    steps = 0
    for episode, info in zip(dataset.iterate_episodes(), dataset.storage.get_episode_metadata(
            dataset.episode_indices), strict=True):
        t = len(episode.actions)
        steps += t
        assert episode.observations.shape == (t + 1, 10)
        assert episode.infos["action_mask"].shape == (t + 1, 3)
        assert episode.infos["legal_known"].shape == (t + 1,)
        want = expected[(str(info["episode"]), int(info["player"]))]
        np.testing.assert_array_equal(episode.observations[:-1], want["state"])
        np.testing.assert_array_equal(episode.observations[-1], want["final"])
        np.testing.assert_array_equal(episode.actions, want["action"])
        assert episode.rewards.sum() == pytest.approx(want["reward"].sum())
        assert bool(episode.terminations[-1]) and not episode.truncations.any()
        mask, known = episode.infos["action_mask"], episode.infos["legal_known"]
        # every mask recorded, the first decision's too; each the step before's next_legal
        # (two records of one thing that agree), and the action taken among them
        assert known.all()
        np.testing.assert_array_equal(mask[1:], want["next_legal"])
        assert mask[np.arange(t), episode.actions].all()
    assert steps == rows
    assert meta["legal_unknown_steps"] == 0


def test_d3rlpy_trains_a_step_on_it(stores, tmp_path, monkeypatch):
    d3rlpy = pytest.importorskip("d3rlpy")
    out = tmp_path / "d3"
    result = export(stores["sette-mezzo"], "d3rlpy", out)
    rows = len(Store.open(stores["sette-mezzo"]).arrays())
    assert sorted(p.name for p in out.iterdir()) == ["dataset.npz", "episodes.npz",
                                                     "legal.npz", "metadata.json"]
    dataset, legal = load_d3rlpy(out)
    assert dataset.size() == result.episodes == 50
    assert sum(e.size() for e in dataset.episodes) == rows
    assert dataset.transition_count == rows  # every episode ends terminal: no step dropped
    assert dataset.dataset_info.action_size == 2
    assert legal["legal_mask"].shape == legal["next_legal_mask"].shape == (rows, 2)
    with np.load(out / "dataset.npz") as arrays:
        actions = arrays["actions"]
        # what d3rlpy takes, straight from the file, as the command's hint says
        plain = d3rlpy.dataset.MDPDataset(**arrays, action_space=d3rlpy.ActionSpace.DISCRETE,
                                          action_size=2)
    assert plain.transition_count == rows
    assert legal["legal_mask"][np.arange(rows), actions].all()
    assert legal["legal_known"].all()  # each game's first decision recorded too
    with np.load(out / "episodes.npz") as episodes:
        first = np.cumsum(episodes["length"]) - episodes["length"]
    assert legal["legal_mask"][first].all()  # hit and stick: both legal at the first card
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["reward_unit"].startswith("stakes")
    assert sorted(meta["action_names"]) == ["hit", "stick"]
    with np.load(out / "episodes.npz") as episodes:
        assert episodes["length"].sum() == rows and (episodes["player"] == 0).all()
    monkeypatch.chdir(tmp_path)  # nothing is logged, but were it, not into the checkout
    algo = d3rlpy.algos.DiscreteBCConfig().create(device="cpu")
    algo.fit(dataset, n_steps=1, n_steps_per_epoch=1, show_progress=False,
             logger_adapter=d3rlpy.logging.NoopAdapterFactory())
    assert algo.predict(dataset.episodes[0].observations[:1]).shape == (1,)
    assert not (tmp_path / "d3rlpy_logs").exists()


def test_rllib_parquet_has_the_offline_columns(stores, tmp_path):
    out = tmp_path / "rl"
    result = export(stores["holdem"], "rllib", out)
    table = pq.read_table(out / "data")
    data = Store.open(stores["holdem"]).arrays()
    assert table.num_rows == len(data) == result.steps
    for column in ("eps_id", "agent_id", "t", "obs", "actions", "rewards", "new_obs",
                   "terminateds", "truncateds", "action_mask", "new_action_mask",
                   "legal_known", "episode", "player"):
        assert column in table.column_names
    assert table.schema.field("obs").type.list_size == 10
    assert str(table.schema.field("obs").type.value_type) == "float"
    assert table.schema.field("action_mask").type.list_size == 3
    frame = table.to_pandas()
    assert set(frame.agent_id) == {"player_0", "player_1"}
    for _, steps in frame.groupby("eps_id", sort=False):
        assert steps.t.tolist() == list(range(len(steps)))
        obs, new_obs = np.stack(steps.obs), np.stack(steps.new_obs)
        np.testing.assert_array_equal(new_obs[:-1], obs[1:])
        assert steps.terminateds.tolist() == [False] * (len(steps) - 1) + [True]
        masks, new_masks = np.stack(steps.action_mask), np.stack(steps.new_action_mask)
        np.testing.assert_array_equal(new_masks[:-1], masks[1:])
        assert not new_masks[-1].any()  # nothing is legal after the last decision
    footer = json.loads(pq.read_metadata(next((out / "data").iterdir())).metadata[b"batchrl"])
    assert footer["action_names"] == ["fold", "call", "raise"]
    assert json.loads((out / "metadata.json").read_text())["steps"] == len(data)


def test_hanabi_episodes_are_games_where_the_next_state_is_the_next_movers(stores):
    data = Store.open(stores["hanabi"]).arrays()
    team = episodes_of(data)  # auto: the store's next state is the partner's state
    assert team.by == "episode" and len(team) == 2 and team.mismatched == 0
    assert (team.players == -1).all() and team.mask_sources == {"recorded": team.steps,
                                                                 "unknown": 0}
    np.testing.assert_array_equal(team.legal_mask, data.legal[team.rows])
    # a store made before stores recorded each row's legal actions: found as before
    data = dataclasses.replace(data, legal=None)
    old = episodes_of(data)
    assert old.mask_sources["unknown"] == 2
    known = old.legal_known
    np.testing.assert_array_equal(old.legal_mask[known], team.legal_mask[known])
    seats = episodes_of(data, "seat")
    assert len(seats) == 4 and seats.mismatched > 0
    # a seat's masks come from the partner's rows before them (the second seat's first
    # decision's too), none from its own previous decision
    assert seats.mask_sources["previous step"] == 0
    assert seats.mask_sources["previous store row"] == seats.steps - 2
    assert seats.mask_sources["unknown"] == 2
    for eps in (team, seats):
        assert eps.legal_mask[np.arange(eps.steps), data.action[eps.rows]].all()


def test_the_command_writes_and_says_where(stores, tmp_path, monkeypatch):
    pytest.importorskip("minari")
    result = invoke("export", stores["sette-mezzo"], "--to", "minari", "-o", tmp_path / "m",
                    "--id", "me/sette-random-v2")
    assert result.exit_code == 0, result.output
    assert "exported 50 episodes" in result.output and "me/sette-random-v2" in result.output
    assert (tmp_path / "m" / "me" / "sette-random-v2" / "data").is_dir()
    result = invoke("export", stores["holdem"], "--to", "rllib", "-o", tmp_path / "r",
                    "--drop", "bet_*")
    assert result.exit_code == 0, result.output
    assert pq.read_table(tmp_path / "r" / "data").schema.field("obs").type.list_size == 6
    help_text = invoke("export", "--help").output
    for needle in ("minari.load_dataset", "MDPDataset", "eps_id", "Examples", "legal_known"):
        assert needle in help_text


def _one_line_error(result, *needles: str) -> None:
    assert result.exit_code != 0 and "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(lines) == 1, result.output
    for needle in needles:
        assert needle in lines[0], result.output


def test_the_command_errors_are_one_line_naming_the_option(stores, tmp_path, monkeypatch):
    store = stores["sette-mezzo"]
    _one_line_error(invoke("export", store, "--to", "tensorflow", "-o", tmp_path / "x"),
                    "--to")
    _one_line_error(invoke("export", store, "--to", "minari", "-o", tmp_path / "x",
                           "--id", "no version"), "--id", "NAMESPACE/NAME-vN")
    _one_line_error(invoke("export", store, "--to", "d3rlpy", "-o", tmp_path / "x",
                           "--id", "a/b-v0"), "--id")
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    _one_line_error(invoke("export", store, "--to", "rllib", "-o", full), "-o", str(full))
    assert [p.name for p in full.iterdir()] == ["keep.txt"]
    _one_line_error(invoke("export", tmp_path / "nostore", "--to", "rllib", "-o",
                           tmp_path / "y"), "no batchrl store")
    monkeypatch.setitem(sys.modules, "minari", None)  # as if the extra were not installed
    _one_line_error(invoke("export", store, "--to", "minari", "-o", tmp_path / "z"),
                    "--to minari", "pip install -e '.[export]'")
    assert not (tmp_path / "x").exists() and not (tmp_path / "z").exists()


def test_a_failed_export_leaves_nothing(stores, tmp_path, monkeypatch):
    import batchrl.export as module

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(module, "_write_rllib", broken)
    with pytest.raises(RuntimeError):
        export(stores["sette-mezzo"], "rllib", tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_every_game_says_what_its_rewards_count():
    for name, game in GAMES.items():
        unit = game.log.reward_unit(game.rules.params())
        assert isinstance(unit, str) and len(unit) > 10, name


def test_the_command_exports_the_features_the_game_recommends(stores, tmp_path):
    result = invoke("export", stores["sette-mezzo"], "--to", "d3rlpy", "-o", tmp_path / "a")
    assert result.exit_code == 0, result.output
    all_features = Store.open(stores["sette-mezzo"]).schema.feature_names
    assert f"features: 2 of {len(all_features)}, the game's recommended (features " \
        "total,opponent_card); --features '*' exports all" in result.output
    meta = json.loads((tmp_path / "a" / "metadata.json").read_text())
    assert meta["feature_names"] == ["total", "opponent_card"]
    with np.load(tmp_path / "a" / "dataset.npz") as arrays:
        assert arrays["observations"].shape[1] == 2
    result = invoke("export", stores["sette-mezzo"], "--to", "d3rlpy", "-o", tmp_path / "b",
                    "--features", "*")
    assert result.exit_code == 0 and "recommended" not in result.output
    meta = json.loads((tmp_path / "b" / "metadata.json").read_text())
    assert meta["feature_names"] == list(all_features)


def test_the_reward_scale_is_a_number_in_the_metadata(stores, tmp_path):
    result = export(stores["holdem"], "rllib", tmp_path / "r")
    big_blind = GAMES["holdem"].log.params_from_store(
        Store.open(stores["holdem"]).schema.game,
        Store.open(stores["holdem"]).schema.game_params).gamedef.big_blind
    assert result.metadata["reward_scale"] == {"big_blind": float(big_blind)} and big_blind > 0
    assert export(stores["sette-mezzo"], "rllib", tmp_path / "s").metadata["reward_scale"] == {}


def test_an_export_lands_whole_or_not_at_all_and_clears_what_a_killed_one_left(
        stores, tmp_path, monkeypatch):
    """Minari's dataset is written aside and moved in last: an export stopped midway
    leaves no dataset that loads half; the temporary files of a killed run (its process
    gone) go at the next run, a live one's stay."""
    pytest.importorskip("minari")
    import os

    import minari

    out = tmp_path / "mds"
    (out / ".minari.tmp-999999999" / "batchrl").mkdir(parents=True)  # killed before
    os.utime(out / ".minari.tmp-999999999", (0, 0))  # and an hour ago or more
    live = out / f".minari.tmp-{os.getppid()}"
    live.mkdir()

    def killed(self, metadata):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(minari.dataset.minari_storage.MinariStorage, "update_metadata", killed)
        with pytest.raises(KeyboardInterrupt):
            export(stores["holdem"], "minari", out)
    assert not (out / "batchrl").exists()  # nothing half written is left to load
    assert not (out / ".minari.tmp-999999999").exists() and live.exists()
    result = export(stores["holdem"], "minari", out)  # and nothing blocks the next run
    assert (out / result.dataset_id).is_dir()
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(out))
    assert "batchrl" in minari.namespace.list_local_namespaces()  # its metadata moved too
    (tmp_path / ".rl.tmp-999999999").mkdir()
    os.utime(tmp_path / ".rl.tmp-999999999", (0, 0))
    export(stores["holdem"], "rllib", tmp_path / "rl")
    assert not (tmp_path / ".rl.tmp-999999999").exists()
