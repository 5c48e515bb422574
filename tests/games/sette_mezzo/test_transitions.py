import numpy as np
import pytest

from batchrl.games.sette_mezzo.logs import Game, play, write_log
from batchrl.games.sette_mezzo.rules import FEATURE_NAMES
from batchrl.games.sette_mezzo.transitions import Logged, rows, schema
from batchrl.ingest import IngestConfig, IngestError, ingest
from batchrl.store import Store, file_digest


def ingest_file(log, store_dir, on_error="fail"):
    (report,) = ingest(IngestConfig(paths=(log,), store=store_dir, on_error=on_error))
    assert report.fmt == "sette-mezzo" and report.game == "sette-mezzo"
    return report.hands, report.rows


def test_rows_rewards_add_up_to_each_game():
    games = play("random", 400, np.random.default_rng(9))
    cols = rows([Logged(g, index=i, line=i + 1) for i, g in enumerate(games)], "p:")
    episodes = cols["episode"]
    for i, g in enumerate(games):
        mine = episodes == f"p:{i}"
        assert cols["reward"][mine].sum() == g.reward
        assert cols["action"][mine].tolist() == list(g.actions)
        assert cols["step"][mine].tolist() == list(range(len(g.actions)))
        assert cols["terminal"][mine].tolist() == [False] * (len(g.actions) - 1) + [True]
    # every row but the last of a game: no reward, and its next state is the next row's
    on = ~cols["terminal"]
    assert (cols["reward"][on] == 0).all()
    assert np.array_equal(cols["next_state"][:-1][on[:-1]], cols["state"][1:][on[:-1]])
    assert (cols["next_state"][~on] == 0).all()
    assert cols["next_legal"][on].all() and not cols["next_legal"][~on].any()
    busts = cols["terminal"] & (cols["action"] == 1)
    assert (cols["reward"][busts] == -1).all()
    assert cols["state"].shape == (len(cols["step"]), len(FEATURE_NAMES))


def test_ingest_writes_one_source_idempotently(tmp_path):
    log = tmp_path / "g.jsonl"
    games = play("optimal", 500, np.random.default_rng(4), limit=5)
    write_log(log, games)
    store_dir = tmp_path / "store"
    hands, n = ingest_file(log, store_dir)
    assert hands == 500 and n == sum(len(g.actions) for g in games)
    assert ingest_file(log, store_dir) == (hands, n)  # again: replaces its own part
    store = Store.open(store_dir)
    assert store.schema == schema(5)
    assert store.schema.game_params["limit"] == 5.0
    [source] = store.sources()
    assert (source.rows, source.episodes) == (n, 500)
    t = store.arrays()
    assert len(t) == n and t.reward.sum() == sum(g.reward for g in games)
    prefix = file_digest(log)[:16] + ":"
    assert all(e.startswith(prefix) for e in t.episode_ids)
    frame = store.to_pandas(["episode", "line", "cards"])
    assert frame["cards"].iloc[0].count("|") == 1 and frame["line"].min() == 1


def test_bad_line_fails_the_file_or_is_skipped(tmp_path):
    log = tmp_path / "g.jsonl"
    good = play("random", 5, np.random.default_rng(0))
    text = "".join(g.to_json() + "\n" for g in good)
    log.write_text(text + '{"limit": 5}\n')
    store_dir = tmp_path / "store"
    with pytest.raises(IngestError, match=f"{log}, line 6: missing fields"):
        ingest_file(log, store_dir)
    assert not store_dir.exists()  # nothing half-written, and no empty store left
    assert ingest_file(log, store_dir, on_error="skip") == (5, sum(len(g.actions) for g in good))
    assert Store.open(store_dir).sources()[0].extra["skipped"] == {"malformed line": 1}


def test_one_limit_per_file(tmp_path):
    log = tmp_path / "g.jsonl"
    a = Game(None, 5.0, (7,), (5,), (0,), 1.0)
    b = Game(None, 4.0, (7,), (5,), (0,), 1.0)
    write_log(log, [a, b])
    with pytest.raises(IngestError, match="line 2: the opponent's limit is 4"):
        ingest_file(log, tmp_path / "store")


def test_the_expected_reward_is_the_stick_s_exact_value_and_leaves_hits_alone():
    from batchrl.games.sette_mezzo.solver import solve

    games = play("random", 400, np.random.default_rng(9))
    logged = [Logged(g, index=i, line=i + 1) for i, g in enumerate(games)]
    result, expected = rows(logged, "p:"), rows(logged, "p:", "expected")
    sticks = result["action"] == 0
    assert sticks.any() and (~sticks).any()
    # a hit's reward is the logged one either way; a stick's is the solver's value of
    # sticking in that state (the game's result averaged over the opponent's draws)
    assert np.array_equal(expected["reward"][~sticks], result["reward"][~sticks])
    sol = solve(5.0)
    exact = sol.stick[sol.index(result["state"][sticks])]
    assert np.allclose(expected["reward"][sticks], exact)
    assert not np.allclose(expected["reward"][sticks], result["reward"][sticks])
    # over many games the logged results average to the expectation
    assert abs(result["reward"][sticks].mean() - exact.mean()) < 0.1
    for name in set(result) - {"reward"}:
        assert np.array_equal(result[name], expected[name]), name
    with pytest.raises(ValueError, match="result, expected"):
        rows(logged, "p:", "mean")


def test_ingest_reward_expected_is_the_store_s_and_the_default_store_is_unchanged(tmp_path):
    from click.testing import CliRunner

    from batchrl.cli import main

    log = tmp_path / "g.jsonl"
    write_log(log, play("random", 300, np.random.default_rng(2)))
    run = CliRunner().invoke
    assert run(main, ["ingest", str(log), "--store", str(tmp_path / "a")]).exit_code == 0
    result = run(main, ["ingest", str(log), "--store", str(tmp_path / "b"), "--reward",
                        "expected"])
    assert result.exit_code == 0 and "a stick earns its expected result" in result.output
    plain, expected = Store.open(tmp_path / "a"), Store.open(tmp_path / "b")
    # stores made before the choice existed hold only the limit, and still take games
    assert dict(plain.schema.game_params) == {"limit": 5.0}
    assert dict(expected.schema.game_params) == {"limit": 5.0, "reward": "expected"}
    assert plain.arrays().reward.sum() != expected.arrays().reward.sum()
    # one store holds one reward model
    mixed = run(main, ["ingest", str(log), "--store", str(tmp_path / "b")])
    assert mixed.exit_code != 0 and "use another --store" in mixed.output
    info = run(main, ["info", str(tmp_path / "b")]).output
    assert "expected result" in info


def test_another_game_s_reward_choice_is_refused_naming_this_game_s(tmp_path):
    from click.testing import CliRunner

    from batchrl.cli import main

    log = tmp_path / "g.jsonl"
    write_log(log, play("random", 30, np.random.default_rng(2)))
    result = CliRunner().invoke(main, ["ingest", str(log), "--store", str(tmp_path / "s"),
                                       "--reward", "shaped"])
    assert result.exit_code != 0
    assert "a sette-mezzo log, and reward 'shaped': sette-mezzo takes result, expected" \
        in result.output
    assert not (tmp_path / "s" / "store.json").exists()
