"""``batchrl evaluate --logs``: logged players' results, raw and with the cards' luck taken
out by chance-event control variates (`batchrl.play.luck`, hold'em's
`batchrl.games.holdem.chance`)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from locations import SHARED, needs

from batchrl.cli import main
from batchrl.games import sniff_format
from batchrl.games.base import ChanceHand, SourceContext
from batchrl.games.holdem import chance
from batchrl.games.holdem.evaluator import evaluate7
from batchrl.games.holdem.logs import generate
from batchrl.ingest import records_of
from batchrl.play.luck import LuckConfig, LuckError, corrections, evaluate_logs, read_logs

PLURIBUS = SHARED / "phh" / "pluribus"


@pytest.fixture(scope="module")
def rule_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two copies of one bot, seats rotating hand by hand: each player's true result is 0."""
    path = tmp_path_factory.mktemp("luck") / "rule.log"
    generate(path, ["rule", "rule"], 2000, seed=4)
    return path


def _hands(path: Path, draws: int = 8) -> list[ChanceHand]:
    plan = chance.chance_hands(records_of(path), SourceContext(path, sniff_format(path), "",
                                                               {}, []), None, draws, 0)
    return [h for h in plan.hands if isinstance(h, ChanceHand)]


def test_draws_come_from_the_cards_that_could_have_come(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    generate(path, ["rule", "random"], 60, seed=1)
    hands = _hands(path)
    assert len(hands) == 60
    for hand in hands:
        deal, *boards = hand.events
        assert deal.features.shape[:2] == (1 + 8, 2)
        assert deal.seats.all()  # nobody has folded before the cards come
        for k, event in enumerate(boards, 1):
            if k >= 2:  # a single card: every card left once (52 - 4 hole - board before)
                assert event.features.shape[0] == 1 + 52 - 4 - (k + 1)
            assert (event.features[:, ~event.seats] == 0).all()
    # deals: every card once per draw, and seat by seat uniform
    rng = np.random.default_rng(0)
    dealt = chance._redeal(rng, 20_000, 3)
    assert all(len(set(row.ravel())) == 6 for row in dealt[:500])
    counts = np.bincount(dealt[:, 0, 0], minlength=52)
    assert counts.min() > 0.8 * 20_000 / 52 and counts.max() < 1.2 * 20_000 / 52


def test_the_river_s_equity_is_the_showdown_s_and_a_board_draw_avoids_dealt_cards() -> None:
    holes = np.array([[0, 1], [50, 51]])  # 2c2d against AhAs
    board = (4, 9, 14, 27)
    drawn = chance._board_draws(np.random.default_rng(0), 8, holes, board, 1)
    assert sorted(drawn.ravel().tolist()) == sorted(set(range(52)) - {0, 1, 50, 51, *board})
    boards = np.concatenate([np.broadcast_to(board, (len(drawn), 4)), drawn], axis=1)
    equity = chance.equities(np.broadcast_to(holes, (len(drawn), 2, 2)), boards,
                             np.array([True, True]), np.random.default_rng(0))
    strength = evaluate7(np.concatenate([np.broadcast_to(holes[:, None], (2, len(drawn), 2)),
                                         np.broadcast_to(boards, (2, len(drawn), 5))],
                                        axis=2)).T
    expected = np.where(strength[:, 0] > strength[:, 1], 1.0,
                        np.where(strength[:, 0] < strength[:, 1], 0.0, 0.5))
    assert np.array_equal(equity[:, 0], expected)
    assert np.allclose(equity.sum(axis=1), 1.0)


def test_a_value_that_ignores_the_cards_corrects_nothing(rule_log: Path) -> None:
    hands = _hands(rule_log)[:300]

    class Flat:
        def predict(self, x: np.ndarray) -> np.ndarray:
            return x[:, 4]  # what the seat has put in: the same whatever the cards

    fixed = corrections(hands, 3, 0, fit=lambda x, y, seed: Flat())
    assert all(np.allclose(c, 0.0) for c in fixed.per_seat)


def test_the_luck_goes_and_the_mean_stays(rule_log: Path) -> None:
    report = evaluate_logs([rule_log], LuckConfig(seed=2))
    assert [p.name for p in report.players] == ["rule-1", "rule-2"]
    for player in report.players:
        assert player.hands == 2000
        assert player.se_ratio < 0.7
        # the same bot in both chairs: the truth is 0, inside the reduced interval
        assert player.reduced.low < 0 < player.reduced.high
    assert report.explained > 0.2
    first, second = report.players
    assert first.raw.mean == pytest.approx(-second.raw.mean)


def test_the_command_line_reports_a_player_and_says_what_it_left_out(
        rule_log: Path, tmp_path: Path) -> None:
    lines = rule_log.read_text().splitlines(keepends=True)
    state = next(i for i, line in enumerate(lines) if line.startswith("STATE"))
    broken = tmp_path / "broken.log"
    bad = "STATE:9:rr:AsAs|KdKc:1|-1:a|b\n"  # one card dealt twice
    broken.write_text("".join([*lines[:state + 1], bad, *lines[state + 1: state + 400]]))
    runner = CliRunner()
    result = runner.invoke(main, ["evaluate", "--logs", str(broken), "--player", "rule-2",
                                  "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert [p["name"] for p in out["players"]] == ["rule-2"]
    assert out["hands"] == 400 and sum(out["left_out"].values()) == 1
    assert "line" in out["examples"][0]
    player = out["players"][0]
    assert player["raw"]["low"] < player["raw"]["mean"] < player["raw"]["high"]
    text = runner.invoke(main, ["evaluate", "--logs", str(broken)]).output
    assert "variance-reduced" in text and "left out: 1" in text
    unknown = runner.invoke(main, ["evaluate", "--logs", str(broken), "--player", "nobody"])
    assert unknown.exit_code != 0 and "rule-1, rule-2" in unknown.output
    both = runner.invoke(main, ["evaluate", "--logs", str(broken), "--model", str(broken)])
    assert both.exit_code != 0 and "--model" in both.output


def test_a_store_is_measured_from_the_logs_it_was_ingested_from(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    generate(log, ["rule", "random"], 300, seed=3)
    store = tmp_path / "store"
    runner = CliRunner()
    assert runner.invoke(main, ["ingest", str(log), "--store", str(store), "--no-pv"]
                         ).exit_code == 0
    from_store = runner.invoke(main, ["evaluate", "--logs", str(store), "--json"])
    from_log = runner.invoke(main, ["evaluate", "--logs", str(log), "--json"])
    assert from_store.exit_code == 0, from_store.output
    assert json.loads(from_store.output)["players"] == json.loads(from_log.output)["players"]
    log.write_text(log.read_text() + "# appended\n")
    changed = runner.invoke(main, ["evaluate", "--logs", str(store)])
    assert changed.exit_code != 0 and "changed since it was ingested" in changed.output


def test_a_game_without_chance_events_says_so(tmp_path: Path) -> None:
    log = tmp_path / "leduc.log"
    runner = CliRunner()
    assert runner.invoke(main, ["generate", "--game", "leduc", "--hands", "50", "-o",
                                str(log)]).exit_code == 0
    with pytest.raises(LuckError, match="leduc: batchrl cannot yet"):
        read_logs([log], LuckConfig())


@needs(PLURIBUS)
def test_pluribus_s_hands_read_whole_and_their_raw_result_is_the_stacks() -> None:
    folders = [PLURIBUS / "100", PLURIBUS / "101"]
    read = read_logs(folders, LuckConfig(draws=4))
    assert not read.left_out
    won: dict[str, list[float]] = {}
    for folder in folders:
        for file in sorted(folder.glob("*.phh")):
            hand = tomllib.loads(file.read_text())
            for name, start, end in zip(hand["players"], hand["starting_stacks"],
                                        hand["finishing_stacks"], strict=True):
                won.setdefault(name, []).append((end - start) / 100 * 1000)  # mbb, bb 100
    assert len(read.hands) == len(won["Pluribus"])
    got: dict[str, list[float]] = {}
    for hand in read.hands:
        for name, result in zip(hand.names, hand.results, strict=True):
            got.setdefault(name, []).append(float(result))
    assert sorted(np.round(got["Pluribus"], 6)) == sorted(np.round(won["Pluribus"], 6))
