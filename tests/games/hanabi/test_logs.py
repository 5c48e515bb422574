"""The report's JSON state/action logs: generate -> parse -> store gives back the games."""

import json
import re

import numpy as np
import pytest
from locations import SHARED_EGER, needs

from batchrl.games.hanabi.bots import ConventionBot, SimpleBot
from batchrl.games.hanabi.knowledge import encode, hint_features
from batchrl.games.hanabi.logs import generate, play_game, write_game
from batchrl.games.hanabi.rules import legal_actions
from batchrl.ingest import IngestConfig, IngestError, ingest
from batchrl.store import Store
from parsers.hanabi import HanabiLogError, encode_record, read_game

EGER = SHARED_EGER


def _games(n, seed=5):
    rng = np.random.default_rng(seed)
    return [play_game((ConventionBot(), SimpleBot(rng)), rng) for _ in range(n)]


def test_a_written_game_reads_back_as_the_engine_played_it(tmp_path):
    for g, (states, actions) in enumerate(_games(6)):
        write_game(tmp_path, f"g{g}", states, actions, ("teacher", "partner"))
        game = read_game(tmp_path / f"g{g}.states.jsonl")
        expected = np.stack([np.concatenate([encode(s, s.current),
                                             hint_features(s, s.current)])
                             for s in states[:-1]])
        assert expected[:, 195:].any()  # the hint facts are not all zeros
        assert np.array_equal(game.features, expected)
        assert game.actions.tolist() == actions
        assert game.rewards.tolist() == np.diff([s.score_played for s in states]).tolist()
        assert game.score == states[-1].score_played
        for mask, s in zip(game.legal, states, strict=False):
            assert np.flatnonzero(mask).tolist() == list(legal_actions(s))
        assert game.names == tuple(("teacher", "partner")[s.current] for s in states[:-1])


def test_generated_games_do_not_depend_on_the_number_of_processes(tmp_path):
    one = generate(tmp_path / "one", ("bot2", "simple"), 5, seed=4)
    two = generate(tmp_path / "two", ("bot2", "simple"), 5, seed=4, jobs=2, block=2)
    assert one == two and len(set(one)) > 1
    for f in sorted((tmp_path / "one").iterdir()):
        assert f.read_bytes() == (tmp_path / "two" / f.name).read_bytes()


def test_finalround_and_the_discards_follow_the_report(tmp_path):
    (states, actions), = _games(1, seed=11)
    write_game(tmp_path, "g", states, actions, ("a", "b"))
    lines = [json.loads(t) for t in (tmp_path / "g.states.jsonl").read_text().splitlines()]
    empty = [i for i, s in enumerate(states[:-1]) if not s.deck]
    assert all(r["finalround"] == -1 for r in lines[:empty[0]])
    assert {r["finalround"] for r in lines[empty[0]:]} == {(empty[0] - 1) // 2 + 1}
    last = lines[-1]
    for number in last["discarded"]:
        colour = int(str(number)[0]) - 1
        counted = [sum(1 for c in states[-2].discards if c == colour * 5 + r) for r in range(5)]
        assert str(number)[1:] == "".join(map(str, counted))


def test_a_bad_line_refuses_its_game_naming_the_file_and_line(tmp_path):
    (states, actions), = _games(1)
    write_game(tmp_path, "g", states, actions, ("a", "b"))
    path = tmp_path / "g.actions.jsonl"
    lines = path.read_text().splitlines()
    bad = json.loads(lines[3])
    bad.update(type="discard", card=7)
    path.write_text("\n".join([*lines[:3], json.dumps(bad), *lines[4:]]) + "\n")
    with pytest.raises(HanabiLogError, match=r"g\.actions\.jsonl, line 4: card 7: want a whole"):
        read_game(tmp_path / "g.states.jsonl")
    path.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(HanabiLogError, match=r"states but g\.actions\.jsonl holds"):
        read_game(tmp_path / "g.states.jsonl")


def test_generate_then_ingest_round_trips_and_keeps_the_good_games(tmp_path):
    games = tmp_path / "games"
    scores = generate(games, ("bot2", "bot2"), 5, seed=2)
    broken = games / "game000003.states.jsonl"
    lines = broken.read_text().splitlines()
    broken.write_text("\n".join([lines[0], "{not json", *lines[2:]]) + "\n")
    with pytest.raises(IngestError, match=r"game000003\.states\.jsonl, line 2: not JSON"):
        ingest(IngestConfig(paths=(games,), store=tmp_path / "store"))
    report, = ingest(IngestConfig(paths=(games,), store=tmp_path / "store", on_error="skip"))
    assert report.fmt == "hanabi-json" and report.hands == 4 and report.skipped["bad game"] == 1
    store = Store.open(tmp_path / "store")
    t = store.arrays()
    frame = store.to_pandas()
    returns = frame.groupby("episode")["reward"].sum().sort_index().tolist()
    assert sorted(returns) == sorted(s for i, s in enumerate(scores) if i != 3)
    assert t.state.shape[1] == 210 and int(t.terminal.sum()) == 4
    # next_state is the next move's state; the last move's is zeros with no legal move
    nxt = np.flatnonzero(~t.terminal)
    assert np.array_equal(t.next_state[nxt], t.state[nxt + 1])
    assert not t.next_legal[t.terminal].any() and t.next_legal[nxt].any(axis=1).all()
    assert set(frame["name"]) == {"bot2"}
    assert store.audit("hand").tolist() == frame["hand"].tolist()
    assert len(store.audit("hand", players=["bot2"])) == len(t)


def test_audit_columns_follow_a_player_filter(tmp_path):
    generate(tmp_path / "g", ("bot2", "simple"), 3, seed=6)
    ingest(IngestConfig(paths=(tmp_path / "g",), store=tmp_path / "s"))
    store = Store.open(tmp_path / "s")
    partner = store.audit("partner", players=["simple"])
    assert len(partner) == len(store.arrays(players=["simple"])) > 0
    assert set(partner) == {"bot2"} and set(store.audit("partner")) == {"bot2", "simple"}


@needs(EGER)
def test_eger_games_land_in_a_store_marked_by_who_moved(tmp_path):
    files = sorted(EGER.glob("game*.log"))[:40]
    folder = tmp_path / "eger"
    folder.mkdir()
    for f in files:
        (folder / f.name).write_bytes(f.read_bytes())
    report, = ingest(IngestConfig(paths=(folder,), store=tmp_path / "store", on_error="skip"))
    assert report.fmt == "hanabi-eger" and report.hands + sum(report.skipped.values()) == 40
    frame = Store.open(tmp_path / "store").to_pandas()
    assert set(frame["name"]) <= {"human", "full", "intentional", "outer"}
    assert "human" in set(frame["name"])
    humans = frame[frame["name"] == "human"]
    assert (humans["partner"] != "human").all() and (humans["player"] == 1).all()
    # every episode's rewards add up to its logged score
    from parsers.hanabi_eger import read_eger

    logged = {read_eger(f).game_id: read_eger(f).score for f in files
              if not report.examples or str(f) not in str(report.examples)}
    got = frame.groupby("episode")["reward"].sum()
    for episode, total in got.items():
        assert total == logged[str(episode).split(":", 1)[1]]


def _rewrite(path, line, change):
    lines = path.read_text().splitlines()
    record = json.loads(lines[line - 1])
    change(record)
    lines[line - 1] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(("field", "value", "why"), [
    ("value", 0, "hint value 0"), ("value", 6, "hint value 6"), ("value", True, "hint value"),
])
def test_a_hint_out_of_range_is_refused_not_read_as_another_move(tmp_path, field, value, why):
    (states, actions), = _games(1)
    write_game(tmp_path, "g", states, actions, ("a", "b"))
    hint = next(i for i, a in enumerate(actions) if 10 <= a < 15) + 1
    _rewrite(tmp_path / "g.actions.jsonl", hint, lambda r: r.update({field: value}))
    with pytest.raises(HanabiLogError, match=rf"g\.actions\.jsonl, line {hint}: {why}"):
        read_game(tmp_path / "g.states.jsonl")


def test_a_missing_field_a_wrong_score_or_an_unfinished_game_names_the_line(tmp_path):
    (states, actions), = _games(1)
    write_game(tmp_path, "g", states, actions, ("a", "b"))
    path = tmp_path / "g.states.jsonl"
    original = path.read_text()
    _rewrite(path, 5, lambda r: r.pop("current"))
    with pytest.raises(HanabiLogError, match=r"g\.states\.jsonl, line 5: no field 'current'"):
        read_game(path)
    path.write_text(original)
    _rewrite(tmp_path / "g.actions.jsonl", 3, lambda r: r.update(score=9))
    with pytest.raises(HanabiLogError, match=r"line 3: score 9 after the move"):
        read_game(path)
    write_game(tmp_path, "cut", states[:-5], actions[:-5], ("a", "b"))
    with pytest.raises(HanabiLogError, match="ends before the game does"):
        read_game(tmp_path / "cut.states.jsonl")


def test_without_the_score_field_rewards_come_from_the_cards(tmp_path):
    for g, (states, actions) in enumerate(_games(4, seed=9)):
        write_game(tmp_path, f"g{g}", states, actions, ("a", "b"))
        path = tmp_path / f"g{g}.actions.jsonl"
        stripped = [json.loads(t) for t in path.read_text().splitlines()]
        path.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "score"}) + "\n"
                                for r in stripped))
        game = read_game(tmp_path / f"g{g}.states.jsonl")
        assert game.rewards.tolist() == np.diff([s.score_played for s in states]).tolist()


def test_the_movers_own_cards_never_reach_its_features(tmp_path):
    (states, actions), = _games(1)
    write_game(tmp_path, "g", states, actions, ("a", "b"))
    for text in (tmp_path / "g.states.jsonl").read_text().splitlines()[:20]:
        record = json.loads(text)
        before = encode_record(record)[0]
        for c in record["hands"]["current"]:
            c["color"], c["value"] = "green", 5
        assert encode_record(record)[0] == before
        record["hands"]["other"][0]["value"] = 1 if record["hands"]["other"][0]["value"] != 1 else 2
        assert encode_record(record)[0] != before  # the partner's cards do


def test_a_line_is_encoded_alike_in_bulk_and_field_by_field(tmp_path):
    """The bulk-checked encoding of a well-formed line is the field-by-field one; a line
    with any number wrong falls to the field-by-field checks, which name it."""
    # the two encodings are private: this test holds them to each other
    from parsers.hanabi import _encode_checked, _encode_fast

    generate(tmp_path, ["bot2", "bot2"], 3, seed=5)
    records = [json.loads(line) for path in sorted(tmp_path.glob("*.states.jsonl"))
               for line in path.read_text().splitlines()]
    assert len(records) > 100
    for record in records:
        fast = _encode_fast(record)
        assert fast is not None and fast == _encode_checked(record)
        assert len(fast[0]) == 195
    record = records[40]
    for path, bad, message in [
        (("hints",), True, "'hints' is True"),
        (("hands", "current", 0, "playability"), float("nan"), "'playability' is nan"),
        (("hands", "other", 1, "poss_values", 2), "0.2", "poss_values is '0.2'"),
        (("hands", "other", 0, "cardentropy"), 10**400, "'cardentropy' is 1000"),
        (("hands", "other", 0, "value"), True, "True: want a colour"),
        (("hands", "current", 0, "color"), "pink", "a card 'pink'"),
    ]:
        broken = json.loads(json.dumps(record))
        where = broken
        for key in path[:-1]:
            where = where[key]
        where[path[-1]] = bad
        try:
            fast = _encode_fast(broken)
        except (KeyError, TypeError, ValueError, OverflowError):
            fast = None
        assert fast is None, path
        with pytest.raises(ValueError, match=message):
            encode_record(broken)
    # a discard pile met before is looked up, not checked again: it is the checked one,
    # and the same pile with a float in it (equal to the whole number, hashed alike) is
    # still refused once the pile is known
    # the pile cache and its checks are private: this test holds them to each other
    from parsers.hanabi import _PILES, _discards, _discards_checked

    _PILES.clear()
    pile = next(r for r in records if r["discarded"])["discarded"]
    assert _discards(pile) == _discards_checked(pile) and tuple(pile) in _PILES
    assert _discards(list(pile)) is _PILES[tuple(pile)]  # looked up
    with pytest.raises(ValueError, match="want 6 digits"):
        _discards([float(pile[0]), *pile[1:]])


def test_a_state_s_counts_are_read_alike_in_bulk_and_field_by_field(tmp_path, monkeypatch):
    """A state line's hints, fireworks, fuse, deck and player to move, checked in bulk
    for a line as the logs write it, are what the field-by-field checks give; a line
    with any of them wrong falls to those checks, which name it."""
    # the two paths are private: this test holds them to each other
    import parsers.hanabi as reader

    generate(tmp_path, ["bot2", "bot2"], 2, seed=5)
    records = [json.loads(line) for path in sorted(tmp_path.glob("*.states.jsonl"))
               for line in path.read_text().splitlines()]
    fast = [reader._state_fast(r) for r in records]
    assert None not in fast
    with monkeypatch.context() as checked:
        checked.setattr(reader, "_state_fast", lambda record: None)
        assert [reader._state(r) for r in records] == fast
    record = records[30]
    for field, bad, message in [
        ("hints", 9, "hints 9: want a whole number 0-8"), ("hints", True, "'hints' is True"),
        ("fuse", 4, "fuse 4"), ("deck", -1, "deck -1"), ("red", 6, "red 6"),
        ("white", 1.0, "white 1.0"), ("current", ["a"], "current"),
    ]:
        broken = {**record, field: bad}
        assert reader._state_fast(broken) is None, field
        with pytest.raises(ValueError, match=re.escape(message)):
            reader._state(broken)
    # a seat named by a number, as some logs write it: read by the checks, as its text
    assert reader._state({**record, "current": 1})[-1] == "1"
