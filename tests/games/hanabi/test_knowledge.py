"""The knowledge model and the 195-number encoding."""

from dataclasses import replace

import numpy as np
import pytest
from hanabi_support import swap_unseen_own_cards

from batchrl.games.hanabi.bots import ConventionBot
from batchrl.games.hanabi.knowledge import encode, encode_many, feature_names, useless
from batchrl.games.hanabi.rules import (
    ALL,
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


def _mixed_play_states(seed, games):
    """Every state (game over included) of games where a move is drawn from the legal
    plays with probability 0.1 and from the discards and hints otherwise: few enough
    misplays that most games run out of cards and hands shrink in the last round."""
    rng = np.random.default_rng(seed)
    states = []
    for _ in range(games):
        s = new_game(rng, 2)
        while True:
            states.append(s)
            legal = legal_actions(s)
            if not legal:
                break
            plays = [a for a in legal if a < 5]
            rest = [a for a in legal if a >= 5] or plays
            pool = plays if rng.random() < 0.1 else rest
            s = step(s, pool[int(rng.integers(len(pool)))])
    return states


def test_encode_many_equals_encode_row_by_row():
    states = _mixed_play_states(0, 60)
    rng = np.random.default_rng(1)
    rng.shuffle(states)
    # what the states cover: misplays, hints received, an empty deck, short hands
    assert any(s.fuses < 3 for s in states) and any(s.fuses == 0 for s in states)
    assert any(k != (ALL, ALL) for s in states for hand in s.known for k in hand)
    assert any(not s.deck for s in states)
    assert any(len(s.hands[0]) < 5 for s in states) and any(len(s.hands[1]) < 5 for s in states)
    assert any(len(s.hands[0]) != len(s.hands[1]) for s in states)
    for players in ([s.current for s in states], [1 - s.current for s in states]):
        expected = np.stack([encode(s, p) for s, p in zip(states, players, strict=True)])
        got = encode_many(states, players)
        assert got.dtype == np.float32 and got.shape == (len(states), 195)
        assert np.array_equal(got, expected)
        # batch size does not matter
        assert np.array_equal(encode_many(states[:7], players[:7]), expected[:7])
        assert np.array_equal(encode_many(states[-1:], players[-1:]), expected[-1:])


def test_encode_many_from_bot_games():
    rng = np.random.default_rng(2)
    bots = (ConventionBot(), ConventionBot())
    states = []
    for _ in range(3):
        s = new_game(rng, 2)
        while not s.over:
            states.append(s)
            s = step(s, bots[s.current].act(s))
        states.append(s)
    players = [s.current for s in states]
    expected = np.stack([encode(s, p) for s, p in zip(states, players, strict=True)])
    assert np.array_equal(encode_many(states, players), expected)


def test_encode_many_edges():
    assert encode_many([], []).shape == (0, 195)
    s = deal(full_deck(), 2)
    with pytest.raises(ValueError):
        encode_many([s, s], [0])
    with pytest.raises(ValueError):
        encode_many([deal(full_deck(), 3)], [0])
