import numpy as np
import pytest

from batchrl.games.conformance import check_game
from batchrl.games.holdem import GAME, gamedef
from batchrl.games.holdem.rules import (
    CALL,
    FOLD,
    RAISE,
    IllegalAction,
    deal,
    legal_actions,
    new_hand,
    payoffs,
    step,
)

HU = gamedef.HEADS_UP_LIMIT


def play(state, letters):
    for ch in letters.replace("/", ""):
        state = step(state, "fcr".index(ch))
    return state


def fresh():
    return deal(HU, hole=((0, 1), (2, 3)), board=(4, 5, 6, 7, 8))


def test_small_blind_acts_first_preflop_big_blind_after():
    s = fresh()
    assert s.current == 1 and s.spent == (10, 5)
    s = play(s, "c")
    assert s.current == 0 and s.round == 0
    s = play(s, "c")
    assert s.round == 1 and s.current == 0 and s.spent == (10, 10)


def test_bets_follow_the_round_sizes_and_caps():
    s = play(fresh(), "rrrc")  # three raises pre-flop: the cap
    assert s.spent == (40, 40) and s.round == 1
    s = play(fresh(), "rrr")
    assert RAISE not in legal_actions(s)
    with pytest.raises(IllegalAction, match="cap"):
        step(s, RAISE)
    s = play(fresh(), "cc/rrrrc/r")  # four raises on the flop, then a turn bet of 20
    assert s.spent == (70, 50) and s.round == 2


def test_fold_only_when_owing_chips():
    s = play(fresh(), "cc/")
    assert FOLD not in legal_actions(s)
    with pytest.raises(IllegalAction, match="nothing to call"):
        step(s, FOLD)
    s = play(s, "r")
    assert legal_actions(s) == (FOLD, CALL, RAISE)


def test_fold_ends_the_hand_and_pays_the_other_seat():
    s = play(fresh(), "rf")
    assert s.finished
    assert payoffs(s) == (-10.0, 10.0)


def test_showdown_needs_strengths_and_splits_ties():
    s = play(fresh(), "cc/cc/cc/cc")
    assert s.finished
    with pytest.raises(ValueError, match="strengths"):
        payoffs(s)
    assert payoffs(s, [5, 3]) == (10.0, -10.0)
    assert payoffs(s, [4, 4]) == (0.0, 0.0)


def test_no_action_after_the_end():
    s = play(fresh(), "f")
    with pytest.raises(IllegalAction, match="over"):
        step(s, CALL)


def test_three_player_limit_rounds_close_when_all_live_seats_match():
    g = gamedef.THREE_PLAYER_LIMIT
    s = deal(g, hole=((0, 1), (2, 3), (4, 5)), board=(6, 7, 8, 9, 10))
    assert s.current == 2  # firstPlayer = 3 pre-flop
    s = play(s, "rfc")  # seat 2 raises, seat 0 folds, seat 1 calls
    assert s.round == 1 and s.current == 1  # seat 0 folded, so seat 1 opens the flop
    assert s.spent == (5, 20, 20)


def test_conformance():
    check_game(GAME)


@pytest.mark.parametrize("game", [gamedef.GLASSFROG_LIMIT, gamedef.THREE_PLAYER_LIMIT])
@pytest.mark.parametrize("pv", [True, False])
def test_conformance_of_other_game_definitions(game, pv):
    check_game(GAME, GAME.params(gamedef=game, pv=pv), playouts=50)


def test_new_hand_is_seeded():
    a = new_hand(HU, np.random.default_rng(7))
    b = new_hand(HU, np.random.default_rng(7))
    assert a.hole == b.hole and a.board == b.board
    cards = [c for h in a.hole for c in h] + list(a.board)
    assert len(set(cards)) == 9


def test_nolimit_is_refused_by_name():
    with pytest.raises(gamedef.GameDefError, match="no-limit"):
        deal(gamedef.HEADS_UP_NOLIMIT, hole=((0, 1), (2, 3)), board=(4, 5, 6, 7, 8))
