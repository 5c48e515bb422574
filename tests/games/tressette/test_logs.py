"""Tressette game logs: playing, replaying, JSON Lines and the seed's transcript."""

import json

import numpy as np
import pytest

from batchrl.games.tressette.logs import (
    Game,
    ReplayError,
    hand_seed,
    play,
    to_json,
    transcript_lines,
    write_log,
)
from batchrl.games.tressette.rules import card_name, deal, is_terminal, parse_card, team_points

SEATS = ["seed-heuristic", "random", "rule", "random"]


@pytest.fixture(scope="module")
def games():
    return list(play(SEATS, 20, seed=11, first_leader=2))


def test_play_deals_plays_and_scores_whole_hands(games):
    assert [g.leader for g in games] == [(2 + i) % 4 for i in range(20)]
    for g in games:
        assert g.names == tuple(SEATS) and not g.truncated and len(g.plays) == 40
        assert sorted(c for h in g.hands for c in h) == list(range(40))
        assert all(len(h) == 10 and list(h) == sorted(h) for h in g.hands)
        assert g.plays[0][0] == g.leader
        states = g.replay()
        assert len(states) == 41 and is_terminal(states[-1])
        assert team_points(states[-1]) == g.points and sum(g.points) == 11


def test_play_is_seeded_per_hand_not_per_chunk(games):
    again = list(play(SEATS, 20, seed=11, first_leader=2))
    assert again == games
    # hands 5.. of the run are what a run asked for hand 5 onwards would give
    for i in (5, 13):
        rng = np.random.default_rng(hand_seed(11, i))
        assert games[i].seed == hand_seed(11, i)
        assert deal(rng, games[i].leader).hands == games[i].hands
    other = list(play(SEATS, 3, seed=12))
    assert {g.seed for g in other}.isdisjoint(g.seed for g in games)


def test_play_refuses_bad_arguments():
    with pytest.raises(ValueError, match="four bot names"):
        play(["rule"] * 3, 1, seed=0)
    with pytest.raises(ValueError, match="unknown Tressette bots"):
        play(["rule", "rule", "dqn", "rule"], 1, seed=0)
    with pytest.raises(ValueError):
        play(["rule"] * 4, 1, seed=-1)


def test_json_line_round_trips_and_reads_ids(games):
    g = games[0]
    data = json.loads(to_json(g))
    assert set(data) == {"seed", "leader", "players", "hands", "plays", "points"}
    assert data["plays"][0] == [g.leader, card_name(g.plays[0][1])]
    assert data["hands"][1] == [card_name(c) for c in g.hands[1]]
    assert Game.from_json(to_json(g)) == g and Game.from_json(g.to_json()) == g
    data["hands"] = [list(h) for h in g.hands]  # int ids are read too
    data["plays"] = [[s, c] for s, c in g.plays]
    assert Game.from_json(json.dumps(data)) == g


@pytest.mark.parametrize(("change", "message"), [
    ({"leader": 4}, "leader 4"),
    ({"leader": True}, "leader True"),
    ({"seed": "x"}, "seed 'x'"),
    ({"players": ["a", "b"]}, "players"),
    ({"hands": [["AD"]] * 3}, "hands"),
    ({"hands": [["XX"]] * 4}, "hands\\[0\\]: not a card"),
    ({"plays": [[0, 40]]}, "plays\\[0\\]: 40 is not a card"),
    ({"plays": [[0]]}, "plays\\[0\\]"),
    ({"points": [11]}, "points"),
])
def test_from_json_names_the_bad_field(games, change, message):
    data = json.loads(to_json(games[0])) | change
    with pytest.raises(ValueError, match=message):
        Game.from_json(json.dumps(data))
    with pytest.raises(ValueError, match="not JSON"):
        Game.from_json("{")
    with pytest.raises(ValueError, match="missing fields \\['plays'\\]"):
        Game.from_json(json.dumps({"leader": 0, "players": [], "hands": []}))


def edit(g, **change):
    return Game(**({f: getattr(g, f) for f in Game.__slots__} | change))


def test_replay_names_the_play_and_the_rules_message(games):
    g = games[0]
    swapped = (g.plays[1], g.plays[0], *g.plays[2:])
    with pytest.raises(ReplayError, match=r"play 1: seat .* out of turn") as e:
        edit(g, plays=swapped).replay()
    assert e.value.play == 0
    with pytest.raises(ReplayError, match="points") as e:
        edit(g, points=(g.points[1], g.points[0])).replay()
    assert e.value.play is None
    with pytest.raises(ReplayError, match="not marked truncated"):
        edit(g, plays=g.plays[:39]).replay()
    with pytest.raises(ReplayError, match="marked truncated, but all 40"):
        edit(g, truncated=True).replay()
    with pytest.raises(ReplayError, match="a truncated hand has no final points"):
        edit(g, plays=g.plays[:7], truncated=True).replay()
    with pytest.raises(ReplayError, match="the deal: a deal needs"):
        edit(g, hands=(g.hands[1], g.hands[1], g.hands[2], g.hands[3])).replay()


def test_replay_catches_a_revoke():
    by_suit = tuple(tuple(range(10 * s, 10 * s + 10)) for s in range(4))
    # seat s holds suit s, but seats 0 and 1 swap 4D and 4C: seat 1 must follow AD with 4D
    hands = [list(h) for h in by_suit]
    hands[0][0], hands[1][0] = 10, 0  # seat 0 holds 4C, seat 1 holds 4D
    plays = ((0, parse_card("AD")), (1, parse_card("5C")))
    g = Game(None, 0, ("a", "b", "c", "d"), tuple(tuple(sorted(h)) for h in hands), plays,
             None, truncated=True)
    with pytest.raises(ReplayError, match="play 2: seat 1 cannot play 5C: it must follow "
                                          "denari \\(holds 4D\\)") as e:
        g.replay()
    assert e.value.play == 1


def test_truncated_game_with_partial_hands_replays_what_is_known():
    plays = ((2, parse_card("3B")), (3, parse_card("4B")))
    g = Game(5, 2, ("", "", "x", "y"), ((), (), (39,), (30,)), plays, None, truncated=True)
    states = g.replay()
    assert len(states) == 3 and states[-1].current == 0
    assert Game.from_json(to_json(g)) == g
    with pytest.raises(ReplayError, match="at most 10 each"):
        edit(g, hands=((), (), tuple(range(11)), (30,))).replay()
    with pytest.raises(ReplayError, match="once at most"):
        edit(g, hands=((39,), (), (39,), (30,))).replay()


def test_transcript_is_the_seeds_print(games):
    g = games[3]
    lines = transcript_lines(g)
    assert lines[0] == f"[DEBUG] Seed partita: {g.seed}"
    seat, card = g.plays[0]
    assert lines[1] == f"Giocatore {seat} ({SEATS[seat]}) gioca {card_name(card)})"
    t0, t1 = g.points
    assert lines[41:] == ["== Fine partita ==", f"Team 0 (seat 0+2) → {t0} punti",
                          f"Team 1 (seat 1+3) → {t1} punti",
                          f"Vince TEAM {0 if t0 > t1 else 1}"]
    assert len(transcript_lines(edit(g, seed=None))) == 44
    cut = transcript_lines(edit(g, plays=g.plays[:9], points=None, truncated=True))
    assert len(cut) == 10 and cut[-1].startswith("Giocatore ")
    assert transcript_lines(edit(g, points=None)) == lines  # the rules' points
    with pytest.raises(ValueError, match="line break"):
        transcript_lines(edit(g, names=("a\nb", "b", "c", "d")))


def test_write_log_both_formats_atomically(tmp_path, games):
    path = tmp_path / "g.jsonl"
    assert write_log(path, iter(games)) == 20
    assert path.read_text().splitlines() == [to_json(g) for g in games]
    text = tmp_path / "g.txt"
    assert write_log(text, games[:3], fmt="transcript") == 3
    assert text.read_text(encoding="utf-8").splitlines() == [
        t for g in games[:3] for t in transcript_lines(g)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.jsonl", "g.txt"]  # no temp left

    def failing():
        yield games[0]
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        write_log(path, failing())
    assert path.read_text().splitlines() == [to_json(g) for g in games]  # untouched
    with pytest.raises(ValueError, match="format"):
        write_log(path, games, fmt="csv")
    cut = edit(games[0], seed=None, plays=games[0].plays[:5], points=None, truncated=True)
    with pytest.raises(ValueError, match="cannot tell where the first ends"):
        write_log(text, [cut, edit(games[1], seed=None)], fmt="transcript")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.jsonl", "g.txt"]


@pytest.mark.parametrize(("change", "message"), [
    ({"plays": [[0, "AD"], [True, "4D"]]}, "plays\\[1\\] \\[True, '4D'\\] is not a"),
    ({"plays": [[0, "AD"], [1, "4D", 2]]}, "plays\\[1\\] \\[1, '4D', 2\\] is not a"),
    ({"plays": [[0, "AD"], [1.0, "4D"]]}, "plays\\[1\\] \\[1.0, '4D'\\] is not a"),
    ({"plays": [[0, "AD"], "4D"]}, "plays\\[1\\] '4D' is not a"),
    ({"plays": {"0": "AD"}}, "plays: want a list of \\[seat, card\\] pairs"),
    ({"plays": "AD"}, "plays: want a list of \\[seat, card\\] pairs"),
    ({"plays": [[0, "AD"], [1, "ZZ"]]}, "plays\\[1\\]: not a card"),
    ({"hands": [["AD"], ["4D"], "AD", ["3C"]]}, "hands\\[2\\] 'AD' is not a list of cards"),
    ({"hands": [["AD"], ["4D", [1]], ["3C"], []]}, "hands\\[1\\]: \\[1\\] is not a card"),
    ({"hands": [["AD"], [], [], [], []]}, "hands: want a list of 4"),
])
def test_from_json_names_the_first_bad_card_or_pair_past_good_ones(games, change, message):
    data = json.loads(to_json(games[0])) | change
    with pytest.raises(ValueError, match=message):
        Game.from_json(json.dumps(data))


def test_from_json_reads_names_and_ids_mixed_in_a_line(games):
    g = games[1]
    data = json.loads(to_json(g))
    data["hands"][2] = list(g.hands[2])  # one seat's cards by id
    data["plays"][5][1] = g.plays[5][1]  # one play by id
    assert Game.from_json(json.dumps(data)) == g


def test_check_deal_accepts_and_refuses_what_check_does(games):
    """The ingest's cheap deal test (no state made) against ``check``: same verdict, same
    message, on good games and on every kind of bad deal and count."""
    g = games[0]
    partial = Game(5, 2, ("", "", "x", "y"), ((), (), (39,), (30,)),
                   ((2, 39), (3, 30)), None, truncated=True)
    variants = [g, partial, edit(g, plays=g.plays[:39]), edit(g, truncated=True),
                edit(g, plays=g.plays[:7], truncated=True),
                edit(g, plays=g.plays[:7], truncated=True, points=None),
                edit(g, hands=(g.hands[1], g.hands[1], g.hands[2], g.hands[3])),
                edit(g, hands=(g.hands[0][:9], g.hands[1], g.hands[2], g.hands[3])),
                edit(g, hands=g.hands[:3]), edit(g, leader=4), edit(g, names=("a", "b")),
                edit(g, plays=g.plays + g.plays[:1]),
                edit(partial, hands=((39,), (), (39,), (30,)))]
    outcomes = set()
    for v in variants:
        try:
            v.check()
            want = None
        except ReplayError as e:
            want = str(e)
        try:
            assert v.check_deal() is None
            got = None
        except ReplayError as e:
            got = str(e)
        assert got == want, v
        outcomes.add(want)
    assert None in outcomes and len(outcomes) >= 8  # good ones and many kinds of bad
