"""President's rules against the seed's description, move by move."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batchrl.games.conformance import check_game
from batchrl.games.president import GAME
from batchrl.games.president.bots import RandomBot, RuleBot
from batchrl.games.president.features import encode, feature_names
from batchrl.games.president.rules import (
    CARDS,
    N_SUITS,
    PASS,
    RANKS,
    IllegalMove,
    Rules,
    action_name,
    action_rank_count,
    deal,
    from_deal,
    legal_actions,
    parse_card,
    placements,
    play_action,
    step,
)


def _random_game(rules, seed, bot=None):
    rng = np.random.default_rng(seed)
    bot = bot or RandomBot(rng)
    state = deal(rng, rules)
    states = [state]
    while state.turn >= 0:
        state = step(state, bot.act(state))
        states.append(state)
    return states


@pytest.mark.parametrize("players", [2, 4, 5, 8])
@pytest.mark.parametrize("pass_locks", [False, True])
def test_the_conformance_check(players, pass_locks):
    check_game(GAME, GAME.rules.params(players=players, pass_locks=pass_locks), playouts=40)


@pytest.mark.parametrize("players", [2, 4, 5, 8])
def test_the_deck_is_dealt_evenly_and_the_two_of_golds_leads(players):
    state = deal(np.random.default_rng(players), Rules(players=players))
    assert sorted(c for hand in state.dealt for c in hand) == list(range(CARDS))
    assert {len(h) for h in state.dealt} == {CARDS // players}
    assert parse_card("2o") in state.dealt[state.turn]
    twos = state.hands[state.turn][0]
    assert legal_actions(state) == tuple(play_action(0, c) for c in range(1, twos + 1))
    with pytest.raises(IllegalMove, match="2 of golds"):
        step(state, PASS)


@pytest.mark.parametrize("players", [2, 4, 5, 8])
@pytest.mark.parametrize("pass_locks", [False, True])
def test_random_games_end_with_an_order_and_the_seeds_rewards(players, pass_locks):
    for seed in range(30):
        states = _random_game(Rules(players=players, pass_locks=pass_locks), seed)
        end = states[-1]
        assert sorted(end.order) == list(range(players))
        servant = end.order[-1]
        assert sum(end.hands[servant]) > 0 and all(
            not any(end.hands[s]) for s in end.order[:-1])
        decisions = np.zeros(players)
        for s in states[:-1]:
            decisions[s.turn] += 1
        place = placements(end)
        for seat in range(players):  # -1 a decision, 3 - p for the one that empties the hand
            emptied = seat != servant
            expected = -(decisions[seat] - emptied) + (3 - place[seat] if emptied else 0)
            assert end.scores[seat] == expected


def test_following_needs_as_many_cards_of_a_higher_value():
    rules = Rules(players=2)
    # seat 0: the four 2s and the ranks 5-8; seat 1: the ranks 1-4 and the aces
    s0 = (*range(0, 4), *range(20, 36))
    s1 = tuple(c for c in range(CARDS) if c not in s0)
    state = from_deal((s0, s1), rules)
    assert state.turn == 0
    state = step(state, play_action(0, 2))  # a pair of 2s
    legal = legal_actions(state)
    assert legal[0] == PASS
    for a in legal[1:]:
        rank, count = action_rank_count(a)
        assert count == 2 and rank > 0 and state.hands[1][rank] >= 2
    with pytest.raises(IllegalMove, match="follow with 2 cards"):
        step(state, next(play_action(r, 1) for r in range(1, 10) if state.hands[1][r]))


def test_the_round_ends_when_every_other_player_passes_and_its_player_leads():
    rules = Rules(players=4)
    state = deal(np.random.default_rng(5), rules)
    leader = state.turn
    state = step(state, play_action(0, 1))
    for _ in range(3):
        assert state.table == (0, 1)
        state = step(state, PASS)
    assert state.table == (-1, 0) and state.turn == leader and state.last == -1
    assert PASS not in legal_actions(state)


def test_a_player_who_passed_may_play_again_unless_passes_lock():
    found = {False: False, True: False}
    for locks in (False, True):
        for seed in range(200):
            states = _random_game(Rules(players=4, pass_locks=locks), seed)
            passed: set[int] = set()  # seats that passed in this round
            for before, after in itertools.pairwise(states):
                if before.table[0] < 0:
                    passed = set()
                elif before.turn in passed:
                    found[locks] = True  # a seat that passed in this round acts again
                if after.table[0] >= 0 and after.last != before.turn:
                    passed.add(before.turn)
    assert found[False] and not found[True]


def test_a_player_out_of_cards_hands_the_lead_to_the_next_one_holding_cards():
    seen = 0
    for seed in range(300):
        states = _random_game(Rules(players=4), seed)
        for before, after in itertools.pairwise(states):
            if after.table[0] < 0 and after.turn >= 0 and before.table[0] >= 0 \
                    and not any(after.hands[before.last]):
                n = 4
                expected = next(s for k in range(1, n) if any(after.hands[
                    s := (before.last + k) % n]))
                assert after.turn == expected
                seen += 1
    assert seen > 10


def _powerset_moves(hand_cards, table):
    """The seed's way: every subset of the hand, kept when it is a legal set."""
    moves = set()
    for k in range(1, len(hand_cards) + 1):
        for subset in itertools.combinations(hand_cards, k):
            ranks = {c // N_SUITS for c in subset}
            if len(ranks) != 1:
                continue
            rank = ranks.pop()
            if table[0] < 0 or (k == table[1] and rank > table[0]):
                moves.add(play_action(rank, k))
    return moves


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([4, 5, 8]), st.integers(0, 30))
def test_legal_moves_are_the_seeds_powerset_enumeration(seed, players, steps):
    rng = np.random.default_rng(seed)
    bot = RandomBot(rng)
    state = deal(rng, Rules(players=players))
    for _ in range(steps):
        if state.turn < 0:
            break
        state = step(state, bot.act(state))
    if state.turn < 0 or state.first:
        return
    seat = state.turn
    cards = [r * N_SUITS + k for r in range(10) for k in range(state.hands[seat][r])]
    expected = _powerset_moves(cards, state.table)
    if state.table[0] >= 0:
        expected.add(PASS)
    assert set(legal_actions(state)) == expected


def test_names_round_trip():
    assert [action_name(play_action(r, 2)) for r in (0, 9)] == ["2x2", "1x2"]
    assert RANKS[parse_card("12b") // N_SUITS] == 12
    with pytest.raises(ValueError, match="not a card"):
        parse_card("8o")


@pytest.mark.parametrize("players", [2, 4, 5, 8])
def test_features_are_named_and_from_the_players_view(players):
    states = _random_game(Rules(players=players), 3)
    names = feature_names(players)
    for s in states[:-1]:
        x = encode(s, s.turn)
        assert len(x) == len(names)
        view = dict(zip(names, x, strict=True))
        assert [view[f"own_{r}"] for r in RANKS] == list(s.hands[s.turn])
        assert view["hand_1"] == sum(s.hands[(s.turn + 1) % players])
        assert sum(view[f"own_{r}"] + view[f"played_{r}"] + view[f"out_{r}"]
                   for r in RANKS) == CARDS


@pytest.mark.parametrize("players", [4, 5, 8])
def test_features_do_not_see_the_opponents_cards(players):
    """Moving cards between two opponents' hands (their sizes kept) changes nothing the
    player to act sees."""
    import dataclasses

    rng = np.random.default_rng(players)
    moved = 0
    for seed in range(20):
        for s in _random_game(Rules(players=players), seed)[:-1]:
            others = [p for p in range(players) if p != s.turn and sum(s.hands[p])]
            if len(others) < 2:
                continue
            a, b = rng.choice(others, 2, replace=False)
            ra = [r for r in range(len(RANKS)) if s.hands[a][r]]
            rb = [r for r in range(len(RANKS)) if s.hands[b][r]]
            x, y = int(rng.choice(ra)), int(rng.choice(rb))
            if x == y:
                continue
            hands = [list(h) for h in s.hands]
            hands[a][x] -= 1
            hands[b][x] += 1
            hands[b][y] -= 1
            hands[a][y] += 1
            other = dataclasses.replace(s, hands=tuple(tuple(h) for h in hands))
            assert encode(other, s.turn).tolist() == encode(s, s.turn).tolist()
            moved += 1
    assert moved > 100


def test_the_rule_player_beats_random_players():
    wins = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        bots = [RuleBot(), RandomBot(rng), RandomBot(rng), RandomBot(rng)]
        state = deal(rng, Rules(players=4))
        while state.turn >= 0:
            state = step(state, bots[state.turn].act(state))
        wins += state.order[0] == 0
    assert wins / 200 > 0.4  # chance is 0.25


@pytest.mark.parametrize("players", [2, 4, 5, 8])
@pytest.mark.parametrize("pass_locks", [False, True])
def test_the_lockstep_simulator_plays_the_rules_move_for_move(players, pass_locks):
    from batchrl.games.president.simulate import random_games

    games = random_games(150, players, np.random.default_rng(players), pass_locks, batch=64)
    rules = Rules(players=players, pass_locks=pass_locks)
    for g in range(150):
        state = from_deal(tuple(tuple(int(c) for c in h) for h in games.dealt[g]), rules)
        for a in games.moves[g]:
            if a < 0:
                break
            state = step(state, int(a))  # raises if the simulator made an illegal move
        assert state.turn < 0
        assert placements(state) == tuple(games.places[g].tolist())
        assert state.scores == tuple(games.scores[g].tolist())


@pytest.mark.parametrize("players", [2, 4, 5])
def test_a_match_exchanges_cards_between_games(players):
    rules = Rules(players=players, match=3)
    check_game(GAME, GAME.rules.params(players=players, match=3), playouts=20)
    exchanges = 0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        bot = RandomBot(rng)
        state = deal(rng, rules)
        assert len(state.upcoming) == 2
        while state.turn >= 0:
            before = state
            state = step(state, bot.act(state))
            if state.exchange:  # a game is over: the servant gave its best card
                president, servant = state.results[-1][0], state.results[-1][-1]
                given = before.upcoming[0]
                assert state.turn == president
                assert max(given[servant]) in state.dealt[president]
                assert len(state.dealt[president]) == len(given[president]) + 1
                assert set(legal_actions(state)) == {
                    play_action(r, 1) for r in range(10) if state.hands[president][r]}
                with pytest.raises(IllegalMove, match="returns one card"):
                    step(state, PASS)
            if before.exchange:  # the president returned a card: hands even again
                exchanges += 1
                assert {len(h) for h in state.dealt} == {CARDS // players}
                assert not state.exchange and state.first
                assert parse_card("2o") in state.dealt[state.turn]
                assert state.scores == before.scores  # the exchange earns nothing
        assert len(state.results) == 2 and sorted(state.order) == list(range(players))
    assert exchanges == 40
