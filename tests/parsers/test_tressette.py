"""Tressette logs read back: JSON Lines and the seed's transcript, good and bad."""

import dataclasses
import json

import pytest

from batchrl.games.tressette.logs import Game, play, to_json, transcript_lines, write_log
from batchrl.games.tressette.rules import card_name, parse_card
from batchrl.records import BadLine
from parsers.tressette import (
    LoggedGame,
    read_file,
    read_transcript,
    read_tressette,
    sniff,
)

LINEUPS = [("seed-heuristic", "random", "seed-heuristic", "random"),
           ("rule", "seed-heuristic", "rule", "random")]


@pytest.fixture(scope="module")
def games():
    return [g for n, names in enumerate(LINEUPS) for g in play(names, 50, seed=n, first_leader=n)]


def good(records):
    assert all(isinstance(r, LoggedGame) for r in records), [str(r) for r in records
                                                             if isinstance(r, BadLine)]
    return [r.game for r in records]


@pytest.mark.parametrize("fmt", ["jsonl", "transcript"])
def test_written_games_read_back_the_same(tmp_path, games, fmt):
    path = tmp_path / f"games.{fmt}"
    assert write_log(path, games, fmt=fmt) == 100
    with open(path, encoding="utf-8") as f:
        assert sniff(f) == ("tressette" if fmt == "jsonl" else "tressette-transcript")
    records = list(read_file(path))
    assert good(records) == games  # seed, leader, names, hands, plays, points, truncated
    assert [r.index for r in records] == list(range(100))
    assert {r.source for r in records} == {str(path)}
    per_game = 1 if fmt == "jsonl" else 45
    assert [r.line for r in records] == [1 + per_game * i for i in range(100)]


def test_a_transcript_rebuilds_the_deal_from_the_plays(games):
    g = games[7]
    bare = [t for t in transcript_lines(g) if t.startswith("Giocatore ")]  # no seed, no end
    (r,) = list(read_transcript(bare, "t", start=10))
    assert r.line == 10 and r.game.seed is None
    assert (r.game.hands, r.game.plays, r.game.leader, r.game.names, r.game.points) == \
        (g.hands, g.plays, g.leader, g.names, g.points)
    assert not r.game.truncated


def test_several_transcript_games_without_seeds_split_at_their_end(games):
    lines = [t for g in games[:4] for t in transcript_lines(dataclasses.replace(g, seed=None))]
    records = list(read_transcript(lines, "t"))
    assert good(records) == [dataclasses.replace(g, seed=None) for g in games[:4]]
    assert [r.line for r in records] == [1, 45, 89, 133]
    # games whose end blocks are lost still split after 40 plays
    plays_only = [t for t in lines if t.startswith("Giocatore ")]
    assert [g.plays for g in good(list(read_transcript(plays_only, "t")))] == \
        [g.plays for g in games[:4]]


def test_a_transcript_cut_mid_game_keeps_the_known_plays(tmp_path, games):
    lines = [t for g in games[:3] for t in transcript_lines(g)]
    # the second game loses its last 15 plays and its end block; the file is cut in the third
    lines = lines[:45 + 1 + 25] + lines[90:90 + 1 + 9]
    path = tmp_path / "cut.txt"
    path.write_text("\n".join(lines), encoding="utf-8")  # no final newline, as if killed
    _, second, third = records = list(read_file(path, "tressette-transcript"))
    assert good(records)[0] == games[0]
    for r, g, n in ((second, games[1], 25), (third, games[2], 9)):
        assert r.game.truncated and r.game.points is None and r.game.seed == g.seed
        assert r.game.plays == g.plays[:n] and r.game.leader == g.leader
        for seat in range(4):  # the cards seen played, nothing else
            assert r.game.hands[seat] == tuple(sorted(c for s, c in g.plays[:n] if s == seat))
            assert set(r.game.hands[seat]) <= set(g.hands[seat])
        assert r.game.names == g.names
    assert (second.line, third.line, second.index, third.index) == (46, 72, 1, 2)


def test_a_truncated_transcript_is_checked_as_far_as_it_goes():
    ok = ["Giocatore 0 (a) gioca AD)", "Giocatore 1 (b) gioca 4C)", "Giocatore 2 (c) gioca 5D)",
          "Giocatore 3 (d) gioca 6D)"]
    (r,) = list(read_transcript(ok, "t"))  # seat 1 is not known to hold denari: fine
    assert r.game.truncated and r.game.hands[1] == (parse_card("4C"),)
    revoke = [*ok, "Giocatore 0 (a) gioca 7D)", "Giocatore 1 (b) gioca 4D)"]
    (bad,) = list(read_transcript(revoke, "t"))
    assert isinstance(bad, BadLine) and bad.line == 2 and bad.text == ok[1]
    assert "it must follow denari (holds 4D)" in bad.reason
    turn = [*ok, "Giocatore 1 (b) gioca 7C)"]  # seat 0 won the trick and leads
    (bad,) = list(read_transcript(turn, "t"))
    assert bad.line == 5 and "out of turn: seat 0 is to play" in bad.reason


def test_a_points_line_the_rules_disagree_with(games):
    g = games[0]
    t0, t1 = g.points
    lines = transcript_lines(g)
    wrong = [*lines[:42], f"Team 0 (seat 0+2) → {t0 + 1} punti", *lines[43:]]
    (bad,) = list(read_transcript(wrong, "t.txt"))
    assert (bad.source, bad.line) == ("t.txt", 43)
    assert f"the rules give team 0 {t0} points; the line says {t0 + 1}" in bad.reason
    result = [*lines[:44], "Vince TEAM 0" if t1 > t0 else "Vince TEAM 1"]
    (bad,) = list(read_transcript(result, "t.txt"))
    assert bad.line == 45 and "wins" in bad.reason
    (bad,) = list(read_transcript([*lines[:44], "Pareggio!"], "t.txt"))
    assert bad.line == 45 and "a draw" in bad.reason
    swapped = [*lines[:42], lines[43].replace("Team 1", "Team 0")]
    (bad,) = list(read_transcript(swapped, "t.txt"))
    assert bad.line == 43 and "team 0 is seats 0+2, not 1+3" in bad.reason


def test_bad_transcript_lines_spoil_their_game_only(games):
    a, b, c = (transcript_lines(g) for g in games[:3])
    b_bad_card = [*b[:5], b[5].rsplit(" ", 1)[0] + " XX)", *b[6:]]
    c_name = [*c[:9], c[9].replace(f"({c[9].split('(')[1].split(')')[0]})", "(someone)"), *c[10:]]
    lines = [*a, *b_bad_card, "tqdm 50%|#####", *c_name, *a]
    records = list(read_transcript(lines, "t.txt"))
    kinds = [(type(r).__name__, r.line) for r in records]
    assert kinds == [("LoggedGame", 1), ("BadLine", 51), ("BadLine", 91), ("BadLine", 101),
                     ("LoggedGame", 137)]
    assert "not a card: 'XX'" in records[1].reason
    assert records[2].reason == "not a line of a Tressette transcript"
    assert "earlier in the game, not 'someone'" in records[3].reason
    assert [r.game for r in records if isinstance(r, LoggedGame)] == [games[0], games[0]]
    assert [r.index for r in records if isinstance(r, LoggedGame)] == [0, 1]


def test_more_transcript_faults(games):
    g = games[0]
    lines = transcript_lines(g)
    dup = [*lines[:3], lines[3].rsplit(" ", 1)[0] + f" {card_name(g.plays[0][1])})",
           *lines[4:]]
    (bad,) = list(read_transcript(dup, "t"))
    assert bad.line == 4 and "played twice (first at line 2)" in bad.reason
    (bad,) = list(read_transcript([*lines[:30], *lines[41:]], "t"))
    assert bad.line == 31 and "the game ends after 29 plays" in bad.reason
    (bad,) = list(read_transcript(["Giocatore 7 (x) gioca AD)"], "t"))
    assert "seat '7'" in bad.reason
    bad, r = list(read_transcript(["[DEBUG] Seed partita: many", *lines[1:]], "t"))
    assert bad.line == 1 and "want a whole number" in bad.reason and r.game.seed is None
    (bad,) = list(read_transcript(["[DEBUG] Seed partita: 3"], "t"))
    assert bad.reason == "a game with no plays"
    stray = list(read_transcript(["Vince TEAM 0", "== Fine partita ==", *lines], "t"))
    assert [type(r).__name__ for r in stray] == ["BadLine", "BadLine", "LoggedGame"]
    # the stray parenthesis may be missing; the arrow may be ASCII
    loose = [t.removesuffix(")") if t.startswith("Giocatore") else t.replace("→", "->")
             for t in lines]
    assert good(list(read_transcript(loose, "t"))) == [g]


def test_bad_json_lines_are_named_and_the_good_around_them_read(tmp_path, games):
    g = json.loads(to_json(games[0]))
    unparseable = g | {"plays": [[0, "ZZ"], *g["plays"][1:]]}
    swapped = g | {"plays": [g["plays"][1], g["plays"][0], *g["plays"][2:]]}
    wrong_points = g | {"points": [g["points"][1], g["points"][0]]}
    stolen = g | {"hands": [g["hands"][1], g["hands"][0], *g["hands"][2:]]}
    lines = [to_json(games[1]), json.dumps(unparseable), "", json.dumps(swapped),
             json.dumps(wrong_points), "{oops", json.dumps(stolen), to_json(games[2])]
    path = tmp_path / "g.jsonl"
    path.write_bytes("\n".join(lines).encode() + b"\n\xff\xfe{\n")
    records = list(read_file(path))
    assert [(type(r).__name__, r.line) for r in records] == [
        ("LoggedGame", 1), ("BadLine", 2), ("BadLine", 4), ("BadLine", 5), ("BadLine", 6),
        ("BadLine", 7), ("LoggedGame", 8), ("BadLine", 9)]
    assert str(records[1]).startswith(f"{path}, line 2: plays[0]: not a card: 'ZZ'")
    assert records[2].reason.startswith("play 1: seat ") and "out of turn" in records[2].reason
    assert "the rules give the teams" in records[3].reason
    assert "not JSON" in records[4].reason
    assert "cannot play" in records[5].reason and "not in its hand" in records[5].reason
    assert [r.game for r in records if isinstance(r, LoggedGame)] == [games[1], games[2]]


def test_json_truncated_and_pointless_games():
    g = next(play(["rule"] * 4, 1, seed=9))
    data = json.loads(to_json(g))
    cut = data | {"plays": data["plays"][:13], "points": None}
    (r,) = list(read_tressette([json.dumps(cut)], "g"))
    assert r.game.truncated and r.game.hands == g.hands and r.game.plays == g.plays[:13]
    assert r.game.points is None
    (bad,) = list(read_tressette([json.dumps(cut | {"points": [1, 2]})], "g"))
    assert "a truncated hand has no final points" in bad.reason
    (r,) = list(read_tressette([json.dumps(data | {"points": None})], "g"))
    assert r.game == g  # a whole game gets the rules' points
    ids = data | {"hands": [list(h) for h in g.hands], "plays": [list(p) for p in g.plays]}
    (r,) = list(read_tressette([json.dumps(ids)], "g"))
    assert r.game == g


def test_sniff():
    g = next(play(["random"] * 4, 1, seed=1))
    assert sniff(["", to_json(g)]) == "tressette"
    assert sniff(transcript_lines(g)) == "tressette-transcript"
    assert sniff(["loading model...", *transcript_lines(dataclasses.replace(g, seed=None))]) \
        == "tressette-transcript"
    assert sniff(['{"seed": 7, "limit": 5, "player": [3], "opponent": [3]}']) is None
    assert sniff(["STATE:0:r200c/cc/f:..."]) is None
    assert sniff([]) is None
    with pytest.raises(ValueError, match="not a Tressette log"):
        list(read_file(__file__))


def test_game_from_transcript_equals_its_json(games):
    (r,) = list(read_transcript(transcript_lines(games[5]), "t"))
    assert Game.from_json(to_json(r.game)) == r.game == games[5]
