"""Leduc hold'em: the rules against OpenSpiel's (its information sets and the uniform
policy's NashConv), exact values against played hands, the best response against every
pure alternative, the logs through the parser, and learning against the exact ceiling."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from batchrl.cli import main
from batchrl.evaluation import mean_ci
from batchrl.games.conformance import check_game
from batchrl.games.leduc import GAME
from batchrl.games.leduc import rules as r
from batchrl.games.leduc.exact import (
    best_response,
    expected_returns,
    infosets,
    nash_conv,
    pure,
    strategy,
)
from batchrl.games.leduc.rules import LeducState
from batchrl.games.play import seat_returns


def invoke(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_the_game_passes_the_conformance_check() -> None:
    check_game(GAME, playouts=300)


def test_the_betting_follows_openspiel_s_rules() -> None:
    """Fold only when a raise is owed, at most two raises a round, player 0 opens both
    rounds, a raise puts in 2 then 4, and a called raise or two checks end a round."""
    s = LeducState((0, 3, 5))
    assert r.legal_actions(s) == (r.CALL, r.RAISE) and r.current_player(s) == 0
    s = r.step(s, r.RAISE)
    assert r.legal_actions(s) == (r.FOLD, r.CALL, r.RAISE) and r.current_player(s) == 1
    s = r.step(s, r.RAISE)
    assert r.legal_actions(s) == (r.FOLD, r.CALL)  # two raises: no third
    assert r.contributions(s.history) == (3, 5)
    s = r.step(s, r.CALL)
    assert s.history == "rrc/" and r.current_player(s) == 0 and r.public_card(s) == 5
    s = r.step(r.step(s, r.CALL), r.RAISE)
    assert r.contributions(s.history) == (5, 9)
    with pytest.raises(ValueError, match="not legal"):
        r.step(s, 7)
    s = r.step(s, r.FOLD)
    assert r.is_terminal(s) and r.returns(s) == (-5.0, 5.0)
    # a pair beats a king; equal ranks split
    assert r.returns(LeducState((1, 4, 0), "cc/cc")) == (1.0, -1.0)
    assert r.returns(LeducState((4, 5, 0), "cc/cc")) == (0.0, 0.0)


def test_openspiel_s_information_sets_and_the_uniform_policy_s_nash_conv() -> None:
    """936 information sets (OpenSpiel's count, its cards told apart by suit; 288 up to
    suits), and the NashConv of the uniform random policy OpenSpiel gives: 4.7472."""
    per_history = {h: 6 if r.round_of(h) == 0 else 30 for h in r.histories()}
    assert sum(per_history.values()) == 936
    assert len(infosets()) == 288
    uniform = strategy("random", 0), strategy("random", 1)
    assert nash_conv(uniform) == pytest.approx(4.7472, abs=5e-5)


def test_exact_values_are_what_played_hands_win() -> None:
    """The rule bot against random, exactly and over 40,000 played hands (seats rotating)."""
    exact = sum(GAME.play.exact(("rule", "random"))) / 2
    played = mean_ci(seat_returns(GAME, GAME.rules.params(), ["rule", "random"], 40_000, 3))
    assert played.low <= exact <= played.high, (played, exact)


def test_the_best_response_is_best_and_takes_its_own_value() -> None:
    """Against the rule bot: the best response's moves, played, give its value exactly;
    no pure alternative differing at one information set does better."""
    other = strategy(GAME.play.bot("rule", GAME.rules.params(), np.random.default_rng(0)).act, 1)
    value, moves = best_response(0, other)
    mine = pure(moves)
    assert expected_returns(mine, other) == pytest.approx(value, abs=1e-12)
    rng = np.random.default_rng(1)
    keys = list(moves)
    for key in rng.choice(len(keys), 40, replace=False):
        state = next(s for k, s in infosets() if k == keys[key])
        for move in r.legal_actions(state):
            changed = {**mine, keys[key]: np.eye(3)[move]}
            assert expected_returns(changed, other) <= value + 1e-12
    assert value > sum(GAME.play.exact(("rule", "rule"))) / 2


def test_logs_are_replayed_and_a_bad_line_is_named(tmp_path: Path) -> None:
    log = tmp_path / "l.log"
    assert invoke("generate", "--game", "leduc", "--players", "rule,random", "--hands", 300,
                  "--seed", 2, "-o", log).exit_code == 0
    lines = log.read_text().splitlines()
    assert lines[1].startswith("STATE:0:") and lines[1].endswith(":rule|random")
    assert lines[2].endswith(":random|rule")  # the seats change hand by hand
    bad = [*lines[:3], "STATE:9:rrrc/cc:Ks|Qh/Jh:7|-7:a|b", "STATE:10:rc/cc:Ks|Ks/Jh:0|0:a|b",
           "STATE:11:cr:Ks|Qh:0|0:a|b", "STATE:12:rf:Ks|Qh/Jh:1|-1:a|b",
           "STATE:13:rc/cc:Ks|Qh/Jh:9|-9:a|b", "STATE:14:Ks|Qh"]
    (tmp_path / "bad.log").write_text("\n".join(bad) + "\n")
    result = invoke("ingest", tmp_path / "bad.log", "--store", tmp_path / "s", "--on-error",
                    "skip")
    assert result.exit_code == 0 and "2 hands" in result.output, result.output
    failed = invoke("ingest", tmp_path / "bad.log", "--store", tmp_path / "t")
    assert failed.exit_code == 1 and "bad.log, line 4" in failed.output
    assert "'raise' is not legal after 'rr'" in failed.output
    from parsers.leduc import read_leduc

    reasons = [str(x) for x in read_leduc(bad[3:], "bad.log", 4)]
    assert "a card is dealt twice" in reasons[1]
    assert "is not over" in reasons[2]
    assert "does not show it" not in reasons[3] and "shows it" in reasons[3]
    assert "the rules give the players 3|-3" in reasons[4]
    assert "is not a Leduc STATE line" in reasons[5]
    result = invoke("ingest", log, "--store", tmp_path / "store")
    assert result.exit_code == 0 and "leduc" in result.output and "300 hands" in result.output


def test_fqi_from_random_hands_takes_most_of_the_best_response(tmp_path: Path) -> None:
    """A small run (the benchmark's is 100,000 hands): FQI from 6,000 random hands,
    scored exactly against random, takes more than the rule bot and most of the best
    response's value; evaluate says so from the model and the best response alike."""
    log, store = tmp_path / "r.log", tmp_path / "store"
    assert invoke("generate", "--game", "leduc", "--hands", 6000, "--seed", 4, "-o",
                  log).exit_code == 0
    assert invoke("ingest", log, "--store", store).exit_code == 0
    result = invoke("fqi", "--store", store, "--trees", 30, "--iters", 6, "-j", 1)
    assert result.exit_code == 0, result.output
    model = next((store / "models").glob("fqi-*.npz"))
    report = json.loads(invoke("evaluate", "--game", "leduc", "--players",
                               f"model:{model},random", "--json").output)
    best = report["best_response"]
    assert best == pytest.approx(4.7472 / 2, abs=5e-5)  # half the uniform NashConv
    rule = sum(GAME.play.exact(("rule", "random"))) / 2
    assert rule < report["chips_per_hand"] <= best
    assert report["chips_per_hand"] / best > 0.85, report
    assert 0 < report["exploitability"] < 4.7472
    shown = invoke("evaluate", "--game", "leduc", "--players", f"model:{model},random")
    assert "the player takes" in shown.output and "exploitability" in shown.output


def test_a_leduc_log_is_told_from_a_hold_em_one_whatever_comes_first(tmp_path: Path) -> None:
    """A SCORE line, an indented comment or a bad hand first: still a Leduc log (not the
    hold'em reader's); a line too long, with a third name or with non-ASCII digits is a
    bad line; a dealer's time suffix is dropped."""
    from parsers.leduc import read_leduc, sniff

    good = "STATE:1:rc/rc:Kh|Qs/Js:7|-7:a|b"
    for first in ("SCORE:0|0:a|b", "  # started", "STATE:0:rc/rc:As|Qs/Js:7|-7:a|b"):
        assert sniff(tmp_path / "x.log", [first, good])
    assert not sniff(tmp_path / "x.log", ["STATE:0:cc/crc/cc/cc:5d5c|9hQd/8dAs8s/4h/6d:20|-20:"
                                          "p1|p2"])
    (tmp_path / "y.log").write_text(f"SCORE:0|0:a|b\n{good}\n")
    result = invoke("ingest", tmp_path / "y.log", "--store", tmp_path / "s")
    assert result.exit_code == 0 and "leduc" in result.output, result.output
    lines = [good + " # 12:00:01", "STATE:2:rc/rc:Kh|Qs/Js:7|-7:a|b|c",
             "STATE:3:rc/rc:Kh|Qs/Js:\u0667|-\u0667:a|b", good[:-1] + "b" * 20_000]
    records = list(read_leduc(lines, "z.log"))
    assert records[0].names == ("a", "b")
    assert [type(r).__name__ for r in records[1:]] == ["BadLine"] * 3
    assert "characters long" in str(records[3])
