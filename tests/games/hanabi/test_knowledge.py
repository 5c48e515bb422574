"""The knowledge model and the 195-number encoding."""

from dataclasses import replace

import numpy as np
import pytest
from hanabi_support import swap_unseen_own_cards

from batchrl.games.hanabi.knowledge import encode, feature_names, useless
from batchrl.games.hanabi.rules import (
    card,
    deal,
    encode_hint,
    full_deck,
    legal_actions,
    new_game,
    step,
)

NAMES = feature_names()


def value(x, name):
    return float(x[NAMES.index(name)])


def test_own_cards_follow_what_the_player_sees():
    s = deal(full_deck(), 2)  # seat 0: w1 w1 w1 w2 w2; seat 1: w3 w3 w4 w4 w5
    x = encode(s, 0)
    assert x.shape == (195,) and len(set(NAMES)) == 195
    # seat 0 sees every white 3, 4 and 5 in seat 1's hand: 5 whites left of 45 unseen
    assert value(x, "current0_poss_color_white") == pytest.approx(5 / 45)
    assert value(x, "current0_poss_value5") == pytest.approx(4 / 45)
    # the partner's cards as the partner is known to see them: only public cards removed
    assert value(x, "other0_poss_color_white") == pytest.approx(0.2)
    assert value(x, "other4_color_white") == 1 and value(x, "other4_value") == 5
    assert value(x, "hints") == 8 and value(x, "deck") == 40


def test_hints_sharpen_the_distribution():
    s = step(deal(full_deck(), 2), encode_hint("hint_rank", 1, 4))
    x = encode(s, 1)
    assert value(x, "current2_poss_value4") == pytest.approx(1.0)
    assert value(x, "current0_poss_value4") == 0.0
    # a known 4 on empty fireworks cannot play
    assert value(x, "current2_playability") == 0.0
    ones = step(replace(deal(full_deck(), 2), current=1), encode_hint("hint_rank", 1, 1))
    assert value(encode(ones, 0), "current0_playability") == pytest.approx(1.0)
    # its rank is known, its colour is not: between 0 and log2(5) bits of doubt
    assert 0 < value(encode(ones, 0), "current0_cardentropy") <= np.log2(5) + 1e-9
    assert value(encode(ones, 0), "current0_poss_color_white") < 1


def test_a_players_own_cards_never_enter_its_state():
    rng = np.random.default_rng(4)
    for _ in range(50):
        s = new_game(rng, 2)
        for _ in range(int(rng.integers(0, 30))):
            legal = legal_actions(s)
            if not legal:
                break
            s = step(s, legal[int(rng.integers(len(legal)))])
        p = s.current
        swapped = swap_unseen_own_cards(s)
        if swapped is None:
            continue
        assert (encode(s, p) == encode(swapped, p)).all()


def test_dead_cards_make_higher_ranks_useless():
    s = deal(full_deck(), 2)
    s = replace(s, discards=(card(2, 2), card(2, 2)), fireworks=(1, 0, 0, 0, 0))
    dead = useless(s)
    assert dead[0, 0] and not dead[0, 1]  # white 1 is up, white 2 still needed
    assert not dead[2, 1] and dead[2, 2] and dead[2, 4]  # both red 2s gone: red 3-5 dead
