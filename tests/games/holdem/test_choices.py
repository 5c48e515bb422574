"""A known strategy's choices as events for ``evaluate --logs --strategy`` (AIVAT's action
terms): the random bot's probabilities, each choice's alternatives and their values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from batchrl.cli import main
from batchrl.games import sniff_format
from batchrl.games.base import ChanceHand, SourceContext, SourceError
from batchrl.games.holdem import chance, gamedef
from batchrl.games.holdem.actions import concrete
from batchrl.games.holdem.bots import RandomBot, known_strategy
from batchrl.games.holdem.cards import parse_cards
from batchrl.games.holdem.logs import generate
from batchrl.games.holdem.rules import CALL, FOLD, RAISE, deal, step
from batchrl.ingest import records_of
from batchrl.play.luck import LuckConfig, LuckError, corrections, read_logs

LIMIT = gamedef.BUILTINS["holdem.limit.2p.reverse_blinds"]
NOLIMIT = gamedef.BUILTINS["holdem.nolimit.2p.reverse_blinds"]
HOLES = (parse_cards("AhAs"), parse_cards("7c2d"))
BOARD = parse_cards("Kd9c4s5h8d")


def _hands(path: Path, strategies: dict[str, str]) -> list[ChanceHand]:
    plan = chance.chance_hands(records_of(path), SourceContext(path, sniff_format(path), "",
                                                               {}, []), None, 4, 0,
                               strategies)
    return [h for h in plan.hands if isinstance(h, ChanceHand)]


@pytest.mark.parametrize("game", [LIMIT, NOLIMIT], ids=["limit", "nolimit"])
def test_the_random_bot_s_probabilities_are_how_often_it_acts_so(game: gamedef.GameDef
                                                                  ) -> None:
    opening = deal(game, HOLES, BOARD)
    checked_to = step(opening, CALL)  # the big blind, nothing to call
    states = [opening, checked_to]
    if game.is_limit:  # the small blind faces the round's last raise: raising is refused
        capped = opening
        for _ in range(3):  # the pre-flop cap of three raises
            capped = step(capped, RAISE)
        states.append(capped)
    bot = RandomBot(np.random.default_rng(5))
    chances = bot.probabilities(states)
    assert np.allclose(chances.sum(axis=1), 1.0)
    draws = 40_000
    for state, p in zip(states, chances, strict=True):
        acted = bot.act([state] * draws, [state.current] * draws)
        seen = np.bincount(acted, minlength=len(p)) / draws
        # each share within four standard errors of its probability
        assert np.all(np.abs(seen - p) <= 4 * np.sqrt(p * (1 - p) / draws) + 1e-9), (seen, p)
    if game.is_limit:
        assert np.allclose(chances, [[0.1, 0.5, 0.4], [0.0, 0.6, 0.4], [0.1, 0.9, 0.0]])


def test_a_choice_s_alternatives_are_its_moves_and_the_move_made_is_one_of_them() -> None:
    state = step(step(deal(LIMIT, HOLES, BOARD), RAISE), CALL)  # the flop, bet to nobody
    state = step(state, RAISE)  # the big blind bets: the small blind faces it
    chances = np.array([0.1, 0.5, 0.4])
    event = chance.choice_event(np.array(HOLES), state.visible_board(), state, (CALL, 0),
                                chances, 10.0, np.random.default_rng(0))
    assert event is not None
    assert event.weights is not None and event.exact is not None
    assert event.weights.tolist() == [0.1, 0.5, 0.4]
    assert event.features.shape == (4, 2, len(chance.FEATURES))
    # the move made is a copy of its alternative's row, noise and all
    assert np.array_equal(event.features[0], event.features[1 + CALL])
    # a fold ends the hand: its results are the rules' (mbb), every other still to play
    folder = state.current
    put_in = state.contributed(folder) / 10.0 * 1000.0
    assert event.exact[1 + FOLD, folder] == -put_in
    assert event.exact[1 + FOLD, 1 - folder] == put_in
    assert np.isnan(event.exact[1 + CALL]).all() and np.isnan(event.exact[0]).all()
    assert event.seats.all()
    # the pot and what each has put in follow each move
    pot = event.features[1:, 0, 3]
    assert pot[CALL] == pytest.approx(pot[FOLD] + 1.0) and pot[RAISE] == pytest.approx(
        pot[CALL] + 1.0)
    # a move the strategy never makes: no event
    assert chance.choice_event(np.array(HOLES), state.visible_board(), state, (RAISE, 0),
                               np.array([0.5, 0.5, 0.0]), 10.0,
                               np.random.default_rng(0)) is None


def test_a_call_to_the_showdown_is_valued_at_it() -> None:
    state = deal(LIMIT, HOLES, BOARD)
    for move in (CALL, CALL, CALL, CALL, CALL, CALL, CALL):  # checked to the river
        state = step(state, move)
    state = step(state, RAISE)  # the river: a bet, the other to call
    event = chance.choice_event(np.array(HOLES), state.visible_board(), state, (CALL, 0),
                                np.array([0.1, 0.5, 0.4]), 10.0, np.random.default_rng(0))
    assert event is not None and event.exact is not None
    aces = 0  # AhAs wins the showdown
    assert event.exact[1 + CALL, aces] == state.max_spent / 10.0 * 1000.0  # all the bet
    assert event.exact[1 + CALL, 1 - aces] == -state.max_spent / 10.0 * 1000.0
    assert event.exact[0].tolist() == event.exact[1 + CALL].tolist()
    assert np.isnan(event.exact[1 + RAISE]).all()  # a raise leaves a call to come


def test_no_limit_raise_bins_that_play_one_total_are_one_alternative() -> None:
    # a raise to 8,000 of 20,000: the pot and two pots both reach the stack, as all-in does
    state = step(deal(NOLIMIT, HOLES, BOARD), RAISE, 8000)
    chances = RandomBot().probabilities([state])[0]
    assert sorted({concrete(state, a) for a in range(2, 6)}) == [(RAISE, 16000),
                                                                  (RAISE, 20000)]
    event = chance.choice_event(np.array(HOLES), (), state, (RAISE, 20000), chances,
                                100.0, np.random.default_rng(0))
    assert event is not None and event.weights is not None
    # fold, call, half the pot, and the three bins that all go all-in as one
    assert np.allclose(event.weights, [0.1, 0.5, 0.4 * 0.40, 0.4 * 0.60])
    assert np.array_equal(event.features[0], event.features[4])



def test_every_choice_of_the_named_player_is_an_event(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    generate(path, ["rule", "random"], 60, seed=1)
    plain = _hands(path, {})
    known = _hands(path, {"random": "random"})
    betting = [line.split(":")[2] for line in path.read_text().splitlines()
               if line.startswith("STATE")]
    river = settled = 0
    for hand, again, bets in zip(plain, known, betting, strict=True):
        # the chance events are the same numbers, with or without the choices
        for a, b in zip(hand.events, again.events, strict=False):
            assert np.array_equal(a.features, b.features)
        choices = again.events[len(hand.events):]
        assert all(e.weights is not None for e in choices)
        moves = sum(1 for c in bets if c in "frc")
        assert 0 < len(choices) < moves or moves == 1  # the random seat's, not rule's
        # on the river, the equities are the showdown's, as the river card's event has them
        # (the replay of the betting holds no cards: the log's board is what they are of)
        for event in choices:
            if event.features[0, 0, 9] == 3 and event.seats.all() and len(hand.events) == 4:
                river += 1
                assert np.array_equal(event.features[-1, :, 0], hand.events[3].features[0, :, 0])
                assert event.weights is not None and event.exact is not None
                if len(event.weights) == 3:  # fold, call, raise: facing a bet
                    # a call ends the hand at the showdown, settled
                    assert np.isfinite(event.exact[1 + CALL]).all()
                    settled += 1
    assert river > 3 and settled > 0


def test_a_strategy_the_logs_contradict_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "nolimit.log"
    generate(path, ["rule", "random"], 20, seed=1, game=NOLIMIT)
    header = [line for line in path.read_text().splitlines(keepends=True)
              if line.startswith("#")]
    # the small blind raises to 250: 1.5 pots after its call, a size the random bot's
    # half pot, pot, two pots and all-in never play
    path.write_text("".join([*header, "STATE:0:cc/cc/cc/cc:AhAs|7c2d/Kd9c4s/5h/8d:100|-100:x|y\n",
                             "STATE:1:r250f:AhAs|7c2d:-100|100:x|y\n"]))
    with pytest.raises(SourceError, match=r"line \d+: y played r250 after the deal, a move "
                                          r"random never makes.*--strategy y=random"):
        _hands(path, {"y": "random"})
    with pytest.raises(LuckError, match="--strategy nobody: no such player"):
        read_logs([path], LuckConfig(draws=2, strategies={"nobody": "random"}))
    with pytest.raises(ValueError, match="no luck to take out"):
        known_strategy("rule")


def test_the_choices_corrections_average_zero_under_a_fixed_value(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    generate(path, ["rule", "random"], 600, seed=2)
    hands = [ChanceHand(h.where, h.names, h.results,
                        tuple(e for e in h.events if e.weights is not None), h.deal)
             for h in _hands(path, {"random": "random"})]

    class Chips:
        def predict(self, x: np.ndarray) -> np.ndarray:
            return x[:, 5] * 1000.0  # the showdown value, in mbb

    fixed = corrections(hands, 3, 0, fit=lambda x, y, seed: Chips())
    seat = np.array([c[h.names.index("rule")] for c, h in zip(fixed.per_seat, hands,
                                                              strict=True)])
    assert seat.std() > 100.0  # the choices moved it
    # each choice's moves are weighted by how likely the bot made them: zero on average
    assert abs(seat.mean()) < 4 * seat.std() / np.sqrt(len(seat))


def test_the_command_line_takes_strategies(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    generate(path, ["rule", "random"], 40, seed=1)
    runner = CliRunner()
    bad = runner.invoke(main, ["evaluate", "--logs", str(path), "--strategy", "random"])
    assert bad.exit_code == 2 and "NAME=BOT" in bad.output
    twice = runner.invoke(main, ["evaluate", "--logs", str(path), "--strategy",
                                 "random=random", "--strategy", "random=rule"])
    assert twice.exit_code == 2 and "two bots" in twice.output
    rule = runner.invoke(main, ["evaluate", "--logs", str(path), "--strategy", "rule=rule"])
    assert rule.exit_code == 1 and "no luck to take out" in rule.output
    alone = runner.invoke(main, ["evaluate", "--game", "holdem", "--strategy",
                                 "random=random"])
    assert alone.exit_code == 2 and "give --logs" in alone.output
