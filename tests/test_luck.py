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
from batchrl.cli import play as cli_play
from batchrl.games import sniff_format
from batchrl.games.base import ChanceEvent, ChanceHand, SourceContext
from batchrl.games.holdem import chance, gamedef
from batchrl.games.holdem.evaluator import evaluate7
from batchrl.games.holdem.logs import generate
from batchrl.ingest import records_of
from batchrl.play.luck import (
    LuckConfig,
    LuckError,
    corrections,
    evaluate_logs,
    hand_folds,
    read_logs,
)

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
    # deals: every card once per draw, and seat by seat uniform
    rng = np.random.default_rng(0)
    dealt = chance._redeal(rng, 20_000, 3)
    assert all(len(set(row.ravel())) == 6 for row in dealt[:500])
    counts = np.bincount(dealt[:, 0, 0], minlength=52)
    assert counts.min() > 0.8 * 20_000 / 52 and counts.max() < 1.2 * 20_000 / 52


def test_a_flop_s_draws_are_three_cards_nobody_holds() -> None:
    holes = np.array([[0, 1], [50, 51], [20, 33]])
    flops = chance._board_draws(np.random.default_rng(3), 400, holes, (), 3)
    assert flops.shape == (400, 3)
    assert all(len(set(row)) == 3 for row in flops.tolist())
    assert not np.isin(flops, holes).any()
    assert len(np.unique(flops)) == 52 - 6  # every card left is drawn, in 1,200 cards


def test_a_folded_seat_s_cards_are_valued_at_nothing(tmp_path: Path) -> None:
    path = tmp_path / "three.log"
    generate(path, ["rule", "random", "rule"], 80, seed=1,
             game=gamedef.BUILTINS["holdem.limit.3p"])
    hands = _hands(path, draws=4)
    folded = 0
    for hand in hands:
        for event in hand.events:
            # equity, strength, the strongest rival's: none for a seat out of the hand
            assert (event.features[:, ~event.seats, :3] == 0).all()
            live = event.features[:, event.seats, 0]
            assert np.allclose(live.sum(axis=1), 1.0)  # the live seats share the pot
            folded += int((~event.seats).sum())
    assert folded > 0


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


def test_a_fixed_value_s_corrections_average_zero(rule_log: Path) -> None:
    hands = _hands(rule_log)

    class Showdown:
        def predict(self, x: np.ndarray) -> np.ndarray:
            return x[:, 0] * x[:, 3] - x[:, 4] + 0.3 * x[:, 1]  # equity × pot − put in

    fixed = corrections(hands, 3, 0, fit=lambda x, y, seed: Showdown())
    seat = np.array([c[0] for c in fixed.per_seat])
    assert seat.std() > 1.0  # the cards moved it
    # the draws are as likely as what was dealt: a correction's expectation is zero
    assert abs(seat.mean()) < 4 * seat.std() / np.sqrt(len(seat))


def test_hands_dealt_alike_share_a_fold(rule_log: Path, tmp_path: Path) -> None:
    lines = rule_log.read_text().splitlines(keepends=True)
    states = [line for line in lines if line.startswith("STATE")][:60]
    twice = tmp_path / "twice.log"
    twice.write_text("".join(states + states))  # a dealer's seed run twice
    hands = _hands(twice, draws=2)
    assert len(hands) == 120 and hands[0].deal == hands[60].deal
    fold = hand_folds(hands, 5, 0)
    assert (fold[:60] == fold[60:]).all()
    assert sorted(set(fold.tolist())) == [0, 1, 2, 3, 4]


def test_the_same_log_by_another_name_draws_the_same_cards(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    generate(path, ["rule", "random"], 40, seed=5)
    (tmp_path / "sub").mkdir()
    other = tmp_path / "sub" / ".." / "a.log"
    for first, second in zip(_hands(path), _hands(other), strict=True):
        for a, b in zip(first.events, second.events, strict=True):
            assert np.array_equal(a.features, b.features)


def test_all_in_hands_deal_their_board_after_the_betting(tmp_path: Path) -> None:
    path = tmp_path / "nolimit.log"
    generate(path, ["random", "random"], 200, seed=1,
             game=gamedef.BUILTINS["holdem.nolimit.2p.reverse_blinds"])
    states = {int(line.split(":")[1]): line.split(":")
              for line in path.read_text().splitlines() if line.startswith("STATE")}
    hands = _hands(path, draws=4)
    assert len(hands) == 200
    all_in = 0
    for number, hand in enumerate(hands):
        fields = states[number]
        betting, cards = fields[2], fields[3]
        assert len(hand.events) == cards.count("/") + 1
        payoffs = [float(v) for v in fields[4].split("|")]
        assert np.allclose(hand.results, np.array(payoffs) / 100 * 1000)  # bb 100, mbb
        if betting.endswith("/"):  # all in: the rounds after it are dealt with no betting
            all_in += 1
            river = hand.events[-1].features[0]
            assert (river[:, 6] == 0).all()  # nothing behind
            # the river decides it: the winner's equity 1, a split's ½ each
            assert river[int(np.argmax(payoffs)), 0] == (1.0 if max(payoffs) > 0 else 0.5)
    assert all_in > 5


@pytest.mark.slow
def test_the_luck_goes_and_the_mean_stays(rule_log: Path) -> None:
    report = evaluate_logs([rule_log], LuckConfig(seed=2))
    assert [p.name for p in report.players] == ["rule-1", "rule-2"]
    for player in report.players:
        assert player.hands == 2000
        assert player.se_ratio < 0.7
        # the same bot in both chairs: the truth is 0, within three standard errors
        # (the interval's 1.96 would fail one log in twenty)
        assert abs(player.reduced.mean) < 3 * player.reduced.sd / np.sqrt(player.hands)
    assert report.explained > 0.2
    first, second = report.players
    assert first.raw.mean == pytest.approx(-second.raw.mean)


@pytest.mark.slow
def test_the_command_line_reports_a_player_and_says_what_it_left_out(
        rule_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = rule_log.read_text().splitlines(keepends=True)
    state = next(i for i, line in enumerate(lines) if line.startswith("STATE"))
    broken = tmp_path / "broken.log"
    bad = "STATE:9:rr:AsAs|KdKc:1|-1:a|b\n"  # one card dealt twice
    broken.write_text("".join([*lines[:state + 1], bad, *lines[state + 1: state + 400]]))
    runner = CliRunner()
    result = runner.invoke(main, ["evaluate", "--logs", str(broken), "--player", "rule-2",
                                  "--json", "--draws", "2"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert [p["name"] for p in out["players"]] == ["rule-2"]
    assert out["hands"] == 400 and sum(out["left_out"].values()) == 1
    assert "line" in out["examples"][0]
    player = out["players"][0]
    assert player["raw"]["low"] < player["raw"]["mean"] < player["raw"]["high"]
    text = runner.invoke(main, ["evaluate", "--logs", str(broken), "--draws", "2"]).output
    assert "variance-reduced" in text and "left out: 1" in text

    def no_fit(*args: object, **kwargs: object) -> None:
        raise AssertionError("a value function fitted for a player the logs do not hold")

    # refused once the logs are read, before the value function is fitted (seconds)
    monkeypatch.setattr(cli_play, "corrections", no_fit)
    unknown = runner.invoke(main, ["evaluate", "--logs", str(broken), "--player", "nobody"])
    assert unknown.exit_code == 1 and "no player nobody in the logs: they hold rule-1, " \
        "rule-2" in unknown.output, unknown.output
    both = runner.invoke(main, ["evaluate", "--logs", str(broken), "--model", str(broken)])
    assert both.exit_code != 0 and "--model" in both.output
    playing = runner.invoke(main, ["evaluate", "--logs", str(broken), "--duplicate"])
    assert playing.exit_code == 2 and "--duplicate would play new games" in playing.output
    negative = runner.invoke(main, ["evaluate", "--logs", str(broken), "--seed", "-1"])
    assert negative.exit_code == 2 and "--seed" in negative.output


@pytest.mark.slow
def test_the_game_named_reads_the_logs(rule_log: Path) -> None:
    runner = CliRunner()
    named = runner.invoke(main, ["evaluate", "--logs", str(rule_log), "--gamedef",
                                 "holdem.limit.2p.reverse_blinds", "--json", "--draws", "2"])
    assert named.exit_code == 0, named.output
    assert json.loads(named.output)["hands"] == 2000
    # the ACPC game's blinds are 5/10: read as Glassfrog's 1/2, a hand that moved chips
    # disagrees with the rules' payoffs
    wrong = runner.invoke(main, ["evaluate", "--logs", str(rule_log), "--gamedef",
                                 "glassfrog.limit.2p", "--draws", "2", "--json"])
    assert wrong.exit_code == 0, wrong.output
    out = json.loads(wrong.output)
    assert out["left_out"]["payoffs disagree"] > 1000
    assert any("glassfrog.limit.2p as given" in n for n in out["notes"])


@pytest.mark.slow
def test_unnamed_players_are_reported_by_seat_and_a_lone_hand_s_spread_is_null(
        rule_log: Path, tmp_path: Path) -> None:
    states = [line for line in rule_log.read_text().splitlines()
              if line.startswith("STATE")][:300]
    unnamed = tmp_path / "unnamed.log"
    unnamed.write_text("".join(line.rsplit(":", 1)[0] + "\n" for line in states))
    runner = CliRunner()
    by_seat = runner.invoke(main, ["evaluate", "--logs", str(unnamed), "--json", "--draws", "2"])
    assert by_seat.exit_code == 0, by_seat.output
    out = json.loads(by_seat.output)
    assert [p["name"] for p in out["players"]] == ["seat 1", "seat 2"]
    assert any("reported by seat" in n for n in out["notes"])
    lone = tmp_path / "lone.log"
    fields = states[0].split(":")
    lone.write_text("".join([":".join([*fields[:5], "rule-1|solo"]) + "\n",
                             *(line + "\n" for line in states[1:])]))
    result = runner.invoke(main, ["evaluate", "--logs", str(lone), "--json", "--draws", "2"])
    assert result.exit_code == 0, result.output

    def no_nan(constant: str) -> None:
        raise AssertionError(f"{constant} in the JSON")

    solo = next(p for p in json.loads(result.output, parse_constant=no_nan)["players"]
                if p["name"] == "solo")
    assert solo["hands"] == 1 and solo["raw"]["sd"] is None


@pytest.mark.slow
def test_a_store_is_measured_from_the_logs_it_was_ingested_from(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    generate(log, ["rule", "random"], 300, seed=3)
    store = tmp_path / "store"
    runner = CliRunner()
    assert runner.invoke(main, ["ingest", str(log), "--store", str(store), "--no-pv"]
                         ).exit_code == 0
    from_store = runner.invoke(main, ["evaluate", "--logs", str(store), "--json", "--draws", "2"])
    from_log = runner.invoke(main, ["evaluate", "--logs", str(log), "--json", "--draws", "2"])
    assert from_store.exit_code == 0, from_store.output
    assert json.loads(from_store.output)["players"] == json.loads(from_log.output)["players"]
    log.write_text(log.read_text() + "# appended\n")
    changed = runner.invoke(main, ["evaluate", "--logs", str(store)])
    assert changed.exit_code != 0 and "changed since it was ingested" in changed.output


def test_hand_histories_without_their_results_are_measured_at_the_rules(
        tmp_path: Path) -> None:
    folder = tmp_path / "hands"
    generate(folder, ["rule", "random"], 40, seed=2, fmt="phh",
             game=gamedef.BUILTINS["holdem.nolimit.2p.reverse_blinds"])
    logged = read_logs([folder], LuckConfig(draws=2))
    for file in folder.glob("*.phh"):
        file.write_text("".join(line for line in file.read_text().splitlines(keepends=True)
                                if not line.startswith("finishing_stacks")))
    bare = read_logs([folder], LuckConfig(draws=2))
    assert not bare.left_out and len(bare.hands) == len(logged.hands) == 40
    for a, b in zip(logged.hands, bare.hands, strict=True):
        assert np.array_equal(a.results, b.results)
    store = tmp_path / "store"
    runner = CliRunner()
    assert runner.invoke(main, ["ingest", str(folder), "--store", str(store), "--no-pv"]
                         ).exit_code == 0
    assert runner.invoke(main, ["evaluate", "--logs", str(store), "--draws", "2"]
                         ).exit_code == 0
    first = sorted(folder.glob("*.phh"))[0]
    first.write_text(first.read_text() + "# changed\n")
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


def test_reading_tells_its_progress_every_few_hundred_hands(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    generate(path, ["rule", "random"], 800, seed=6)
    told: list[int] = []
    read_logs([path], LuckConfig(draws=2), told.append)
    assert sum(told) == path.stat().st_size
    assert len(told) >= path.stat().st_size // (1 << 14)  # not once at the end of a mebibyte


def test_a_choice_s_correction_is_the_move_made_less_the_moves_expected() -> None:
    """V after the move made, less the probability-weighted mean of V after each move; a
    settled outcome is valued at its result, never fitted nor predicted."""
    hands = []
    for h in range(20):
        # two seats, one feature: the outcome's number, so V tells them apart (the move
        # made first, a copy of its alternative's row); even hands call, odd ones fold
        taken = 0.0 if h % 2 else 1.0
        moves = np.array([[[taken], [taken]], [[0.0], [0.0]], [[1.0], [1.0]], [[2.0], [2.0]]])
        exact = np.full((4, 2), np.nan)
        exact[1] = (-5.0, 5.0)  # the fold settles the hand
        if h % 2:
            exact[0] = exact[1]
        choice = ChanceEvent(moves, np.array([True, True]), np.array([0.1, 0.5, 0.4]), exact)
        deal = ChanceEvent(np.full((3, 2, 1), 7.0), np.array([True, True]))
        hands.append(ChanceHand(f"h{h}", ("a", "b"), np.array([1.0, -1.0]), (deal, choice),
                                ("deal", h)))
    fitted: list[np.ndarray] = []

    class Tenfold:
        def predict(self, x: np.ndarray) -> np.ndarray:
            assert not (x[:, 0] == 0.0).any()  # a settled outcome is never predicted
            return 10.0 * x[:, 0]

    def fit(x: np.ndarray, y: np.ndarray, seed: int) -> Tenfold:
        fitted.append(x[:, 0])
        return Tenfold()

    fixed = corrections(hands, 2, 0, fit=fit)
    expected = 0.1 * np.array([-5.0, 5.0]) + 0.5 * 10 + 0.4 * 20
    # the deal's V is the same for every draw: no correction; the call's: V 10 less the
    # moves' mean; the fold's: its result less it
    assert np.allclose(fixed.per_seat[0], 10.0 - expected)
    assert np.allclose(fixed.per_seat[1], np.array([-5.0, 5.0]) - expected)
    # fitted on what was dealt and the calls made, never on a settled fold
    values = np.concatenate(fitted)
    assert set(values.tolist()) == {7.0, 1.0}
