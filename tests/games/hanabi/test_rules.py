"""Hanabi rules against the rulebook."""

from collections import Counter
from dataclasses import replace

import numpy as np
import pytest

from batchrl.games.conformance import check_game
from batchrl.games.hanabi import GAME
from batchrl.games.hanabi.rules import (
    ALL,
    MAX_HINTS,
    IllegalMove,
    card,
    deal,
    decode,
    encode_hint,
    full_deck,
    hand_size,
    is_terminal,
    legal_actions,
    n_actions,
    new_game,
    rank_of,
    returns,
    step,
)


def test_the_deck_is_the_standard_fifty():
    deck = full_deck()
    assert len(deck) == 50
    per_rank = Counter(rank_of(c) for c in deck)
    assert per_rank == {1: 15, 2: 10, 3: 10, 4: 10, 5: 5}
    assert [hand_size(p) for p in (2, 3, 4, 5)] == [5, 5, 4, 4]
    with pytest.raises(ValueError):
        hand_size(6)


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_conformance(players):
    check_game(GAME, GAME.rules.params(players=players), playouts=30, seed=players)


@pytest.mark.parametrize("players", [2, 3, 5])
def test_actions_decode_and_encode_both_ways(players):
    for a in range(10, n_actions(players)):
        kind, offset, value = decode(a, players)
        assert 1 <= offset < players and encode_hint(kind, offset, value) == a
    with pytest.raises(IllegalMove):
        decode(n_actions(players), players)


def test_illegal_moves_raise():
    s = deal(full_deck(), 2)  # seat 1 holds w3 w3 w4 w4 w5
    assert 5 not in legal_actions(s)  # no discard at 8 hints
    with pytest.raises(IllegalMove, match="cannot discard"):
        step(s, 5)
    with pytest.raises(IllegalMove, match="touches no card"):
        step(s, encode_hint("hint_colour", 1, 1))  # blue: seat 1 has none
    with pytest.raises(IllegalMove, match="no hint token"):
        step(replace(s, hints=0), encode_hint("hint_rank", 1, 3))
    assert not [a for a in legal_actions(replace(s, hints=0)) if a >= 10]


def test_a_misplay_burns_a_fuse_and_the_third_ends_the_game():
    s = deal(full_deck(), 2)
    # seat 0 holds w1 w1 w1 w2 w2: play w2 (slot 3) before any w1
    s = step(s, 3)
    assert s.fuses == 2 and s.discards == (card(0, 2),) and s.score_played == 0
    s = replace(s, fuses=1, fireworks=(3, 0, 0, 0, 0))
    s = step(s, 0)  # seat 1's w3 on a white 3: misplay, the last fuse
    assert is_terminal(s) and s.score_research == 0 and s.score_played == 3
    assert returns(s) == (3.0, 3.0) and returns(s, research=True) == (0.0, 0.0)
    with pytest.raises(IllegalMove, match="over"):
        step(s, 0)


def test_a_five_gives_back_a_hint_and_discards_take_one_back():
    s = replace(deal(full_deck(), 2), fireworks=(4, 0, 0, 0, 0), hints=5, current=1)
    s = step(s, 4)  # seat 1's w5
    assert s.fireworks[0] == 5 and s.hints == 6
    s = step(s, 5)  # seat 0 discards slot 0
    assert s.hints == 7 and len(s.discards) == 1


def test_every_player_gets_one_turn_after_the_last_card():
    s = deal(full_deck(), 3)
    s = replace(s, deck=s.deck[-1:], hints=4)  # one card left
    s = step(s, 5)  # seat 0 draws it
    assert s.deck == () and s.turns_left == 3 and not is_terminal(s)
    for _ in range(2):
        s = step(s, 5)
        assert not is_terminal(s)
    s = step(s, 5)  # seat 0's last turn, with a hand of 4
    assert is_terminal(s) and s.turns_left == 0
    assert [len(h) for h in s.hands] == [4, 4, 4]


def test_hints_tell_positive_and_negative_knowledge():
    s = deal(full_deck(), 2)
    s = step(s, encode_hint("hint_rank", 1, 4))  # seat 1: w3 w3 w4 w4 w5
    four = 1 << 3
    assert [k[1] for k in s.known[1]] == [ALL & ~four] * 2 + [four] * 2 + [ALL & ~four]
    assert all(k[0] == ALL for k in s.known[1]) and s.hints == MAX_HINTS - 1
    s = step(s, 5 + 0)  # seat 1 discards slot 0: the knowledge moves with the cards
    assert [k[1] for k in s.known[1]][:3] == [ALL & ~four, four, four]
    assert s.known[1][-1] == (ALL, ALL)  # the new card


def test_the_same_seed_deals_the_same_game():
    a, b = new_game(np.random.default_rng(9)), new_game(np.random.default_rng(9))
    assert a == b and a != new_game(np.random.default_rng(10))


def test_the_house_rule_that_allows_a_discard_at_eight_hints():
    s = deal(full_deck(), 2, discard_at_max_hints=True)
    assert 5 in legal_actions(s)
    s = step(s, 5)
    assert s.hints == MAX_HINTS and len(s.discards) == 1  # allowed, and gains nothing


def test_the_rules_keep_the_public_facts_of_hints():
    s = step(deal(full_deck(), 2), encode_hint("hint_rank", 1, 4))  # seat 1: w3 w3 w4 w4 w5
    assert s.clued[1] == (False, False, True, True, False)
    assert s.hint_target == 1 and s.hint_focus == (2, 3)
    s = step(s, encode_hint("hint_colour", 1, 0))  # seat 1 hints white: all of seat 0's
    assert s.hint_focus == (0, 1, 2, 3, 4) and all(s.clued[0])
    s = step(s, encode_hint("hint_colour", 1, 0))  # white again to seat 1: w3 w3 w5 new
    assert s.hint_focus == (0, 1, 4)
    s = step(s, 6)  # seat 1 discards slot 1: the flags move with the cards
    assert s.hint_target == -1 and s.clued[1] == (True, True, True, True, False)
