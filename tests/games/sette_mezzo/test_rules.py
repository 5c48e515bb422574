import numpy as np
import pytest

from batchrl.games.conformance import check_game
from batchrl.games.sette_mezzo import GAME
from batchrl.games.sette_mezzo.rules import (
    FEATURE_NAMES,
    HIT,
    STICK,
    IllegalAction,
    deal,
    encode,
    is_terminal,
    legal_actions,
    legal_mask,
    new_game,
    returns,
    step,
)


def test_conformance():
    check_game(GAME, playouts=200)


@pytest.mark.parametrize("limit", [0.5, 3, 5, 7.5])
def test_conformance_at_other_limits(limit):
    check_game(GAME, GAME.rules.params(limit=limit), playouts=50)


def test_a_limit_the_game_cannot_use_is_refused_by_name():
    with pytest.raises(ValueError, match=r"multiple of 0\.5 from 0\.5 to 7\.5"):
        GAME.rules.params(limit=8)


def test_a_fresh_deck_is_the_forty_cards():
    s = new_game(np.random.default_rng(3))
    cards = np.bincount((*s.player, *s.opponent, *s.deck), minlength=8)
    assert cards.tolist() == [12, 4, 4, 4, 4, 4, 4, 4]


def test_opponent_draws_until_it_reaches_the_limit():
    s = step(deal(7, 0, deck=(0, 4, 0, 6)), STICK)  # 0.5 + 0.5 + 4 = 5: stops at 5
    assert s.opponent == (0, 0, 4) and s.deck == (0, 6) and returns(s) == 1.0
    s = step(deal(7, 2, deck=(2, 1, 3), limit=6), STICK)  # 2+2+1 = 5 < 6, then 3: 8, bust
    assert s.opponent == (2, 2, 1, 3) and returns(s) == 1.0
    s = step(deal(5, 6, deck=()), STICK)  # 6 reaches 5 without a draw
    assert s.opponent == (6,) and returns(s) == -1.0


def test_ties_and_busts():
    assert returns(step(deal(5, 5, deck=()), STICK)) == 0.0
    s = step(step(deal(5, 1, deck=(0, 0)), HIT), HIT)  # 5 + 0.5 + 0.5 = 6
    assert not is_terminal(s) and s.total == 6.0
    s = step(deal(7, 1, deck=(1,)), HIT)  # 8: bust, the opponent never plays
    assert is_terminal(s) and returns(s) == -1.0 and s.opponent == (1,)
    assert legal_actions(s) == () and legal_mask(s) == (False, False)


def test_illegal_actions_raise():
    s = deal(3, 4, deck=(2, 5))
    with pytest.raises(IllegalAction, match="not an action"):
        step(s, 2)
    done = step(s, STICK)
    with pytest.raises(IllegalAction, match="game is over"):
        step(done, HIT)
    with pytest.raises(IllegalAction, match="no card left"):
        step(deal(1, 4, deck=()), HIT)
    with pytest.raises(ValueError, match="not over"):
        returns(s)


def test_deal_refuses_impossible_cards_and_limits():
    with pytest.raises(ValueError, match="5 cards worth 7"):
        deal(7, 7, deck=(7, 7, 7))
    with pytest.raises(ValueError, match="card kinds"):
        deal(8, 1, deck=())
    with pytest.raises(ValueError, match="limit"):
        deal(1, 1, deck=(), limit=5.2)
    with pytest.raises(ValueError, match="limit"):
        deal(1, 1, deck=(), limit=8)


def test_encode_names_each_feature():
    s = step(step(deal(3, 6, deck=(0, 0, 1)), HIT), HIT)
    x = dict(zip(FEATURE_NAMES, encode(s).tolist(), strict=True))
    assert x["total"] == 4.0 and x["opponent_card"] == 6 and x["num_cards"] == 3
    assert x["n_faces"] == 2 and x["n_threes"] == 1 and x["n_sevens"] == 0
    assert encode(s).dtype == np.float32


def test_same_seed_same_game():
    a = new_game(np.random.default_rng(11))
    b = new_game(np.random.default_rng(11))
    assert a == b and hash(a) == hash(b)
