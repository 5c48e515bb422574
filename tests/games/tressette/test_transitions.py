"""Tressette hands into store rows: one per card, rewards adding up to the team's points."""

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from batchrl.games.tressette.features import Tracker
from batchrl.games.tressette.logs import Game, play, write_log
from batchrl.games.tressette.rules import ACE, THREE, TWO, legal_cards, team_points
from batchrl.games.tressette.transitions import Logged, rows, schema
from batchrl.ingest import IngestConfig, IngestError, ingest
from batchrl.store import Store, file_digest

SEATS = ("seed-heuristic", "random", "rule", "random")


def _games(n, seed=4):
    return [Logged(g, index=i, line=i + 1) for i, g in enumerate(play(SEATS, n, seed))]


def test_each_seats_rows_follow_its_decisions_and_add_up_to_its_teams_points():
    logged = _games(12)
    cols, rejected = rows(logged, "p:")
    assert rejected == [] and len(cols["step"]) == 12 * 40
    for i, rec in enumerate(logged):
        states = rec.game.replay()
        points = team_points(states[-1])
        for seat in range(4):
            mine = (cols["episode"] == f"p:{i}") & (cols["player"] == seat)
            assert mine.sum() == 10 and cols["terminal"][mine].tolist() == [False] * 9 + [True]
            assert cols["reward"][mine].sum() == points[seat % 2]
            # the seat's cards, as its states and actions show them
            decisions = [s for s in states[:-1] if s.current == seat]
            assert [int(a) % 256 for a in cols["action"][mine]] == \
                [c for p, c in rec.game.plays if p == seat]
            for k, s in enumerate(decisions):
                assert np.flatnonzero(cols["state"][mine][k, :40]).tolist() == sorted(s.hands[seat])
                if k < 9:  # next state: the same seat's next decision, with its legal cards
                    assert np.array_equal(cols["next_state"][mine][k], cols["state"][mine][k + 1])
                    legal = np.flatnonzero(cols["next_legal"][mine][k]).tolist()
                    assert legal == sorted(legal_cards(decisions[k + 1]))
            assert not cols["next_legal"][mine][9].any()


def _seed_reward(before, after, seat, card):
    """The seed's compute_reward (its slides), card by card, on rules states."""
    rank = card % 10
    r = -0.2 if rank == ACE else -0.1 if rank in (TWO, THREE) else 0.05
    if after.tricks_played > before.tricks_played:
        team = seat % 2
        r += 0.5 if len(after.captured[team]) > len(before.captured[team]) else -0.5
        taken = set(after.captured[team]) - set(before.captured[team])
        r += 0.3 * sum(1 for c in taken if c % 10 in (ACE, TWO, THREE))
    return r


def test_the_seeds_shaped_reward_is_its_compute_reward_card_by_card():
    logged = _games(6)
    plain, _ = rows(logged, "p:")
    shaped, _ = rows(logged, "p:", reward="shaped")
    extra = shaped["reward"] - plain["reward"]
    checked = 0
    for i, rec in enumerate(logged):
        states = rec.game.replay()
        for seat in range(4):
            mine = np.flatnonzero((plain["episode"] == f"p:{i}") & (plain["player"] == seat))
            steps = [t for t, (p, _) in enumerate(rec.game.plays) if p == seat]
            for row, t in zip(mine, steps, strict=True):
                card = rec.game.plays[t][1]
                assert extra[row] == pytest.approx(_seed_reward(states[t], states[t + 1],
                                                                seat, card))
                checked += 1
    assert checked == 6 * 40 and (np.abs(extra) > 0.4).any()


def test_an_illegal_hand_is_refused_alone():
    logged = _games(4)
    g = logged[2].game
    plays = list(g.plays)
    plays[1], plays[2] = plays[2], plays[1]  # two seats out of turn
    bad = Game(g.seed, g.leader, g.names, g.hands, tuple(plays), None)
    logged[2] = Logged(bad, index=2, line=3)
    cols, rejected = rows(logged, "p:")
    assert [r.index for r, _ in rejected] == [2] and "out of turn" in rejected[0][1]
    assert len(cols["step"]) == 3 * 40


def test_a_truncated_hand_keeps_its_rows_and_marks_the_last_ones():
    (rec,) = _games(1)
    g = rec.game
    short = Game(g.seed, g.leader, g.names, g.hands, g.plays[:22], None, truncated=True)
    cols, rejected = rows([Logged(short)], "p:")
    assert rejected == [] and len(cols["step"]) == 22
    assert not cols["terminal"].any() and cols["truncated"].sum() == 4
    assert cols["reward"].sum() == 0


@pytest.mark.parametrize("fmt", ["jsonl", "transcript"])
def test_generate_then_ingest_round_trips_for_both_formats(tmp_path, fmt):
    games = list(play(SEATS, 30, 9))
    path = tmp_path / f"hands.{'txt' if fmt == 'transcript' else 'jsonl'}"
    write_log(path, games, fmt)
    report, = ingest(IngestConfig(paths=(path,), store=tmp_path / "store"))
    assert report.fmt == ("tressette-transcript" if fmt == "transcript" else "tressette")
    assert report.hands == 30 and report.rows == 30 * 40
    store = Store.open(tmp_path / "store")
    assert store.schema.state_dtype == "int8"  # the 198 features are small whole numbers
    expected, _ = rows([Logged(g) for g in games], "p:")
    np.testing.assert_array_equal(store.arrays().state, expected["state"])
    frame = store.to_pandas()
    totals = frame.groupby("episode")["reward"].sum()
    assert (totals == 22).all()  # each seat gets its team's points: 2 × 11 a hand
    assert set(frame["name"]) == set(SEATS)


def test_an_unreadable_tressette_line_names_the_file_and_line(tmp_path):
    path = tmp_path / "hands.jsonl"
    write_log(path, list(play(SEATS, 3, 1)), "jsonl")
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace('"plays": [[', '"plays": [[9, "ZZ"], [', 1)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(IngestError, match=r"hands\.jsonl, line 2"):
        ingest(IngestConfig(paths=(path,), store=tmp_path / "s"))
    report, = ingest(IngestConfig(paths=(path,), store=tmp_path / "s", on_error="skip"))
    assert report.hands == 2


def test_the_tracker_points_match_the_rules_for_logged_hands():
    logged = _games(8)
    tracker = Tracker(np.stack([np.isin(np.arange(40), list(h))[None].repeat(1, 0)[0]
                                for r in logged for h in r.game.hands]).reshape(8, 4, 40),
                      np.asarray([r.game.leader for r in logged]))
    for t in range(40):
        tracker.play(np.asarray([r.game.plays[t][1] for r in logged]))
    assert tracker.points().tolist() == [list(r.game.points) for r in logged]


def _ingest_lines(tmp_path, lines):
    path = tmp_path / "hands.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return ingest(IngestConfig(paths=(path,), store=tmp_path / "s", on_error="skip"))[0]


def test_the_ingest_checks_the_deal_the_counts_and_the_points_without_a_replay(tmp_path):
    import json

    good = [g.to_json() for g in play(SEATS, 6, 2)]
    lines = list(good)
    record = json.loads(lines[1])
    record["hands"][0].append(record["hands"][1][0])  # 11 cards, one also seat 1's
    lines[1] = json.dumps(record)
    record = json.loads(lines[2])
    record["plays"].append(record["plays"][0])  # 41 plays
    lines[2] = json.dumps(record)
    record = json.loads(lines[3])
    record["plays"] = record["plays"][:20]  # cut short, but still claiming final points
    lines[3] = json.dumps(record)
    record = json.loads(lines[4])
    record["points"] = record["points"][::-1]  # the teams' points swapped (never equal)
    lines[4] = json.dumps(record)
    record = json.loads(lines[5])
    record["points"] = [record["points"][1], record["points"][0]]
    lines[5] = json.dumps(record)
    report = _ingest_lines(tmp_path, lines)
    assert report.hands == 1 and report.rows == 40
    assert report.skipped["malformed line"] == 3 and report.skipped["illegal hand"] == 2
    examples = " ".join(report.examples["malformed line"])
    assert "line 2: the deal" in examples and "41 plays" in examples
    assert "truncated hand has no final points" in examples


def test_a_transcript_cut_short_is_read_but_its_hands_are_not_encoded(tmp_path):
    games = list(play(SEATS, 3, 5))
    path = tmp_path / "hands.txt"
    write_log(path, games, "transcript")
    text = path.read_text().splitlines()
    cut = [i for i, t in enumerate(text) if t.startswith("[DEBUG]")][2] + 15
    path.write_text("\n".join(text[:cut]) + "\n")
    report, = ingest(IngestConfig(paths=(path,), store=tmp_path / "s", on_error="skip"))
    assert report.hands == 2 and report.skipped["illegal hand"] == 1
    assert "cannot be encoded" in report.examples["illegal hand"][0]


def test_small_chunks_on_the_worker_thread_store_the_same_rows_in_the_same_order(tmp_path):
    import json

    lines = [g.to_json() for g in play(SEATS, 40, 4)]
    for at in (23, 30):  # refused by the rows, in the 6th and 8th chunks of 4
        bad = json.loads(lines[at])
        bad["points"] = bad["points"][::-1]
        lines[at] = json.dumps(bad)
    path = tmp_path / "hands.jsonl"
    path.write_text("\n".join(lines) + "\n")
    stores = []
    for size in (4, 4096):
        config = IngestConfig(paths=(path,), store=tmp_path / f"s{size}", on_error="skip",
                              chunk_size=size)
        report, = ingest(config)
        assert report.hands == 38 and report.skipped["illegal hand"] == 2
        assert "line 24" in " ".join(report.examples["illegal hand"])
        stores.append(Store.open(tmp_path / f"s{size}").to_pandas(["episode", "step", "state"]))
    small, whole = stores
    assert small["episode"].astype(str).tolist() == whole["episode"].astype(str).tolist()
    assert np.array_equal(np.stack(small["state"]), np.stack(whole["state"]))
    with pytest.raises(IngestError, match="line 24") as failed:  # the first, chunks in flight
        ingest(IngestConfig(paths=(path,), store=tmp_path / "fail", chunk_size=4))
    assert "line 31" not in str(failed.value) and str(failed.value).count("line 24") == 1
    assert not (tmp_path / "fail").exists()  # nothing stored, no empty store left


@pytest.mark.parametrize("suits", ["dealt", "canonical"])
def test_a_chunk_whose_hands_are_all_refused_is_reported_not_crashed_on(tmp_path, suits):
    import json

    lines = []
    for g in play(SEATS, 3, 6):
        record = json.loads(g.to_json())
        record["points"] = record["points"][::-1]
        lines.append(json.dumps(record))
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    report, = ingest(IngestConfig(paths=(path,), store=tmp_path / "s", on_error="skip",
                                  options={"suits": suits}))
    assert report.hands == 0 and report.skipped["illegal hand"] == 3
    with pytest.raises(IngestError, match="line 1: the rules' points differ"):
        ingest(IngestConfig(paths=(path,), store=tmp_path / "f", options={"suits": suits}))


def test_dictionary_columns_hold_the_per_row_strings_and_store_the_same_part(tmp_path):
    logged = _games(5)
    g = logged[2].game  # a hand cut before its first play: no rows, no episode
    logged[2] = Logged(Game(g.seed, g.leader, g.names, g.hands, (), None, truncated=True), 2, 3)
    log = tmp_path / "hands.jsonl"
    log.write_text("hands\n")
    digest = file_digest(log)
    plain, _ = rows(logged, digest[:16] + ":")
    coded, _ = rows(logged, digest[:16] + ":", dictionaries=True)
    assert len(plain["step"]) == 4 * 40
    for k in ("episode", "name", "hand"):
        assert isinstance(coded[k], pa.DictionaryArray)
        assert coded[k].to_pylist() == plain[k].tolist()
        assert coded[k].dictionary.to_pylist() == list(dict.fromkeys(plain[k].tolist()))
    parts = []
    for name, cols in (("plain", plain), ("coded", coded)):
        store = Store.create(tmp_path / name, schema())
        with store.writer(log, digest) as writer:
            writer.write(cols)
        [part] = store.parts_dir.glob("*.parquet")
        parts.append(pq.read_table(part))
        assert store.info().episodes == 4
    assert parts[0].equals(parts[1])
