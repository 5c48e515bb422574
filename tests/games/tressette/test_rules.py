"""Tressette rules against the seed's: points, following suit, tricks, signals, the fast path."""

import copy
import dataclasses
import pickle

import numpy as np
import pytest
from search_runs import recorded_search

from batchrl.games import legal_mask
from batchrl.games.conformance import check_game
from batchrl.games.tressette import GAME
from batchrl.games.tressette.bots import RandomBot
from batchrl.games.tressette.rules import (
    BUSSO,
    CARD_THIRDS,
    STRISCIO,
    VOLO,
    IllegalCard,
    Match,
    State,
    card_name,
    deal,
    deal_hands,
    hand_winner,
    is_terminal,
    legal_cards,
    parse_card,
    returns,
    step,
    team_points,
    trick_winner,
)
from batchrl.games.tressette.simulate import play_hands, random_hands

BY_SUIT = [range(0, 10), range(10, 20), range(20, 30), range(30, 40)]  # seat s holds suit s


def cards(text: str) -> list[int]:
    return [parse_card(t) for t in text.split()]


def play(state: State, text: str) -> State:
    for c in cards(text):
        state = step(state, c)
    return state


def test_card_names_round_trip_and_follow_the_seed():
    names = [card_name(c) for c in range(40)]
    assert names[:10] == ["4D", "5D", "6D", "7D", "8D", "9D", "10D", "AD", "2D", "3D"]
    assert names[10] == "4C" and names[26] == "10S" and names[39] == "3B"
    assert [parse_card(n) for n in names] == list(range(40))
    assert [parse_card(n.lower()) for n in names] == list(range(40))
    assert parse_card("FB") == parse_card("8B") and parse_card("CC") == parse_card("9C")
    for bad in ["", "D", "1D", "11S", "AX", "A", "10"]:
        with pytest.raises(ValueError, match="not a card"):
            parse_card(bad)
    with pytest.raises(ValueError):
        card_name(40)


def test_points_in_thirds():
    assert sum(CARD_THIRDS) == 32
    assert [CARD_THIRDS[c] for c in cards("AS 2S 3S 10S 9S 8S 7S 4S")] == [3, 1, 1, 1, 1, 1, 0, 0]


def test_every_hand_totals_eleven():
    rng = np.random.default_rng(0)
    bots = [RandomBot(rng)] * 4
    plain = play_hands(bots, 300, rng)
    fast = random_hands(5000, rng, batch=1000)
    for h in (plain, fast):
        assert (h.points.sum(axis=1) == 11).all()
        assert set(np.unique(h.points)) <= set(range(12))
    # both extremes: one team takes every trick
    s = deal_hands(BY_SUIT, leader=0)
    while not is_terminal(s):
        s = step(s, legal_cards(s)[0])
    assert team_points(s) == (11, 0) and hand_winner(s) == 0 and returns(s) == (11, -11, 11, -11)


@pytest.mark.parametrize(("suits", "reward"), [("dealt", "points"), ("canonical", "shaped")])
def test_the_game_api_conformance(suits, reward):
    check_game(GAME, GAME.rules.params(suits=suits, reward=reward))


def test_deals():
    s = deal(np.random.default_rng(3), leader=2)
    assert s.current == s.leader == 2 and s.plays == () and s.signals == (None,) * 4
    assert sorted(c for h in s.hands for c in h) == list(range(40))
    assert all(len(h) == 10 and list(h) == sorted(h) for h in s.hands)
    assert s == deal(np.random.default_rng(3), leader=2)  # seeded, and hashable
    assert len({s, deal(np.random.default_rng(3), leader=2)}) == 1
    with pytest.raises(ValueError, match="4 hands of 10"):
        deal_hands([range(10)] * 3, 0)
    with pytest.raises(ValueError, match="exactly once"):
        deal_hands([range(10)] * 4, 0)
    with pytest.raises(ValueError, match="leader 4"):
        deal_hands(BY_SUIT, 4)


def test_follow_suit_is_enforced_and_illegal_cards_are_named():
    hands = [cards("4D 5D 6D 7D 8D 9D 10D AD 2D 3D"),
             cards("4C 5C 6C 7C 8C 9C 10C AC 2C 4S"),
             cards("3C 5S 6S 7S 8S 9S 10S AS 2S 3S"),
             range(30, 40)]
    s = deal_hands(hands, leader=1)
    s = step(s, parse_card("4S"))  # seat 1 leads its only spade
    assert legal_cards(s) == tuple(cards("5S 6S 7S 8S 9S 10S AS 2S 3S"))
    with pytest.raises(IllegalCard, match=r"seat 2 cannot play 3C: it must follow spade "
                                          r"\(holds 5S 6S 7S 8S 9S 10S AS 2S 3S\)"):
        step(s, parse_card("3C"))
    with pytest.raises(IllegalCard, match="seat 2 cannot play 4C: not in its hand"):
        step(s, parse_card("4C"))
    with pytest.raises(IllegalCard, match="card 40"):
        step(s, 40)
    s = step(s, parse_card("5S"))
    assert legal_cards(s) == tuple(range(30, 40))  # seat 3 has no spade: anything goes
    s = play(s, "3B 4D")  # a 3 of another suit does not win: 5S does
    assert s.last_winner == 2 and s.current == 2 and s.leader == 2 and s.tricks_played == 1
    assert sorted(s.captured[0]) == sorted(cards("4S 5S 3B 4D")) and s.captured[1] == ()
    assert team_points(s) == (0, 0)  # one third: no whole point yet, no last-trick bonus
    finished = s
    while not is_terminal(finished):
        finished = step(finished, legal_cards(finished)[0])
    with pytest.raises(IllegalCard, match="the hand is over"):
        step(finished, 0)


def test_trick_winner_is_the_strongest_of_the_led_suit():
    assert trick_winner([(0, parse_card("4D")), (1, parse_card("3C")), (2, parse_card("AD")),
                         (3, parse_card("2D"))]) == 3
    assert trick_winner([(1, parse_card("7S")), (2, parse_card("3D")), (3, parse_card("10S")),
                         (0, parse_card("6S"))]) == 3
    assert trick_winner([(2, parse_card("3B")), (3, parse_card("2B")), (0, parse_card("AB")),
                         (1, parse_card("RB"))]) == 2
    with pytest.raises(ValueError):
        trick_winner([])


def test_signals_as_the_seed_defines_them():
    hands = [cards("4D 5D 2D 4C 5C 6C 4S 5S 6S 7S"),
             cards("6D 7D 8D 7C 8C 9C 8S 9S 10S AS"),
             cards("9D 10D AD 3D 10C AC 2C 3C 2S 3S"),
             cards("4B 5B 6B 7B 8B 9B 10B AB 2B 3B")]
    s = deal_hands(hands, leader=0)
    s = step(s, parse_card("4D"))
    assert s.signals == ((0, BUSSO), None, None, None)  # 5D and 2D left: a 2 among them
    s = play(s, "6D 3D 4B")  # seat 2 wins with the 3 and leads
    s = step(s, parse_card("10C"))
    assert s.signals[2] == (1, BUSSO)  # AC 2C 3C left
    s = play(s, "5B 4C 7C")
    s = step(s, parse_card("AC"))
    assert s.signals[2] == (1, BUSSO)
    s = play(s, "6B 5C 8C")
    s = step(s, parse_card("2C"))
    assert s.signals[2] == (1, BUSSO)  # the 3 is left
    s = play(s, "7B 6C 9C")
    s = step(s, parse_card("3C"))
    assert s.signals[2] == (1, VOLO)  # no coppe left
    s = play(s, "8B 4S 7D")  # seat 2 wins; leads 9D with 10D and AD left: no 2 or 3
    s = step(s, parse_card("9D"))
    assert s.signals == ((0, BUSSO), None, (0, STRISCIO), None)  # seat 0's signal is kept


def test_a_hand_built_hand_to_the_end():
    """Each seat holds one suit; seat 1 leads coppe and wins every trick: team 1 takes it all."""
    s = deal_hands(BY_SUIT, leader=1)
    for rank in range(10):
        assert s.current == 1 and legal_cards(s) == tuple(range(10 + rank, 20))
        s = step(s, 10 + rank)
        for seat in (2, 3, 0):
            assert s.current == seat
            s = step(s, legal_cards(s)[-1])  # off suit: the strongest card, which still loses
    assert s.captured[0] == () and len(s.captured[1]) == 40
    assert team_points(s) == (0, 11) and hand_winner(s) == 1
    assert s.signals[1] == (1, VOLO)  # the last lead leaves no coppe
    with pytest.raises(ValueError, match="not over"):
        hand_winner(deal_hands(BY_SUIT, leader=1))


def test_the_fast_path_plays_by_the_same_rules():
    rng = np.random.default_rng(1)
    h = random_hands(600, rng, first_leader=3, batch=128)
    assert h.leaders[:5].tolist() == [3, 0, 1, 2, 3]
    for i in range(len(h)):
        s = deal_hands(h.deals[i].tolist(), int(h.leaders[i]))
        for k in range(40):
            assert s.current == h.seats[i, k]
            s = step(s, int(h.plays[i, k]))  # raises on a card the rules forbid
        assert team_points(s) == tuple(h.points[i].tolist())
        assert hand_winner(s) == h.winners[i]
    again = random_hands(600, np.random.default_rng(1), first_leader=3, batch=128)
    assert (again.plays == h.plays).all()


def test_random_play_is_uniform_over_legal_cards():
    """The fast path's first lead: each of the leader's ten cards a tenth of the time."""
    h = random_hands(20_000, np.random.default_rng(2))
    slot = (h.deals[np.arange(len(h)), h.leaders] == h.plays[:, :1]).argmax(axis=1)
    counts = np.bincount(slot, minlength=10)
    assert np.abs(counts / len(h) - 0.1).max() < 0.012, counts


def test_a_match_to_21():
    m = Match(target=21, first_leader=1)
    leaders = []
    while not m.over:
        leaders.append(m.next_leader)
        m = m.add((6, 5))
    assert m.scores == (24, 20) and m.hands == 4 and m.winner == 0
    assert leaders == [1, 2, 3, 0]
    tied = Match(target=21, scores=(16, 17)).add((6, 5))  # 22 all: play on
    assert not tied.over and tied.winner is None
    with pytest.raises(ValueError, match="over"):
        m.add((6, 5))


@pytest.mark.parametrize("suits", ["dealt", "canonical"])
def test_a_batch_is_encoded_at_once_as_each_state_alone(suits):
    """``encode_batch`` replays a batch of hands at different points (a finished one
    among them) in one tracker: each row is ``encode`` and ``legal_mask`` of its state,
    and a canonical card a model picks from it steps as the state's own would."""
    params = GAME.rules.params(suits=suits)
    rng = np.random.default_rng(3)
    states, seats = [], []
    for k in range(12):
        state = GAME.rules.new_game(rng, params)
        for _ in range(40 if k == 6 else (7 * k) % 41):
            legal = GAME.rules.legal_actions(state)
            state = GAME.rules.step(state, legal[int(rng.integers(len(legal)))])
        states.append(state)
        seats.append(GAME.rules.current_player(state) if k % 3 else k % 4)
    assert any(GAME.rules.is_terminal(s) for s in states)
    x, legal = GAME.play.encode_batch(states, [max(p, 0) for p in seats], params)
    for i, state in enumerate(states):
        assert np.array_equal(x[i], GAME.rules.encode(state, max(seats[i], 0), params))
        assert np.array_equal(legal[i], legal_mask(GAME.rules, state, params))
    # what the batch keeps for ``step``: the orders worked out, only for the seat to act
    cards = [int(np.flatnonzero(legal[i])[-1]) for i, s in enumerate(states)
             if not GAME.rules.is_terminal(s)]
    playing = [s for s in states if not GAME.rules.is_terminal(s)]
    ordered = sum(s.seen.order is not None for s in playing)
    kept = [GAME.rules.step(s, c) for s, c in zip(playing, cards, strict=True)]
    own = sum(not GAME.rules.is_terminal(s) and GAME.rules.current_player(s) == p
              for s, p in zip(states, seats, strict=True))  # encoded from the seat to act
    assert own >= 6 and ordered == (own if suits == "canonical" else 0)
    again = [type(s)(s.state, s.params) for s in playing]  # nothing kept: worked out again
    assert kept == [GAME.rules.step(s, c) for s, c in zip(again, cards, strict=True)]


@pytest.mark.parametrize("suits", ["dealt", "canonical"])
def test_hands_followed_from_batch_to_batch_encode_as_replayed_from_their_deals(suits):
    """A search's rollouts: a batch encoded, each state stepped once or twice (a bot's
    card between two batches), the next batch mixed with states never seen (a world
    drawn); each row is still ``encode`` and ``legal_mask`` of its state, as a fresh
    replay from its deal gives them. What a hand keeps of its batch is no part of it:
    not compared, and a copy, a pickle or a hand made from it keeps nothing."""
    params = GAME.rules.params(suits=suits)
    rng = np.random.default_rng(8)
    states = [GAME.rules.new_game(rng, params) for _ in range(24)]
    steps = 0
    while states:
        seats = [GAME.rules.current_player(s) for s in states]
        x, legal = GAME.play.encode_batch(states, seats, params)
        for i, state in enumerate(states):
            assert np.array_equal(x[i], GAME.rules.encode(state, seats[i], params))
            assert np.array_equal(legal[i], legal_mask(GAME.rules, state, params))
            assert state.seen.row == i and state.seen.cards == ()
        stepped = []
        for i, state in enumerate(states):
            for _ in range(1 + (i + steps) % 2):  # one card, or two
                if not GAME.rules.is_terminal(state):
                    options = np.flatnonzero(legal[i]) if state is states[i] else \
                        GAME.rules.legal_actions(state)
                    state = GAME.rules.step(state, int(options[(i * 7 + steps) % len(options)]))
            if not GAME.rules.is_terminal(state):
                stepped.append(state)
        assert all(s.seen.tracker is not None and s.seen.cards for s in stepped)
        if steps % 5 == 2 and steps < 20:  # a world never seen: replayed from its deal
            stepped.append(GAME.rules.new_game(rng, params))
        states, steps = stepped, steps + 1
    assert steps >= 20
    hand = GAME.rules.new_game(rng, params)
    GAME.play.encode_batch([hand], [GAME.rules.current_player(hand)], params)
    assert hand.seen.tracker is not None
    assert pickle.loads(pickle.dumps(hand)).seen.tracker is None
    assert copy.deepcopy(hand).seen.tracker is None and copy.deepcopy(hand) == hand
    assert dataclasses.replace(hand, state=hand.state).seen.tracker is None  # its own
    # a drawn world's suit order is the real state's (the seat to play sees the same)
    from batchrl.games.tressette.game import _canonical_view

    canonical = GAME.rules.params(suits="canonical")
    for depth in range(0, 36, 5):
        state = GAME.rules.new_game(np.random.default_rng(depth), canonical)
        for _ in range(depth):
            state = GAME.rules.step(state, GAME.rules.legal_actions(state)[0])
        seat = GAME.rules.current_player(state)
        for world in GAME.rules.sample_worlds(state, seat, 6, np.random.default_rng(1)):
            assert world.seen.order == _canonical_view(world.state)[2].tolist()
        others = GAME.rules.sample_worlds(state, (seat + 1) % 4, 2, np.random.default_rng(1))
        assert all(w.seen.order is None for w in others)  # another seat's view: not known


@pytest.mark.parametrize("name", ["rule", "random", "seed-heuristic"])
def test_a_bot_plays_the_game_s_actions_in_canonical_suits_too(name):
    """With canonical suits the game's actions name cards in each seat's own suit order:
    a bot (which plays real cards) is put in them, as a search's opponents' model and an
    environment's opponents need (a real card id taken as canonical was another card)."""
    params = GAME.rules.params(suits="canonical")
    bot = GAME.play.bot(name, params, np.random.default_rng(0))
    rng = np.random.default_rng(1)
    for _ in range(6):
        hand = GAME.rules.new_game(rng, params)
        while not GAME.rules.is_terminal(hand):
            action = int(bot.act([hand], [GAME.rules.current_player(hand)])[0])
            assert action in GAME.rules.legal_actions(hand)
            hand = GAME.rules.step(hand, action)


@pytest.mark.parametrize("name", ["rule", "random"])
def test_a_bot_of_canonical_suits_acts_on_a_batch_as_on_each_state(name):
    """A batch of states (a search's rollouts) is renamed in one replay: the same actions
    as each state renamed alone, each stepping to the bot's card (or its alike in a tied
    suit)."""
    from batchrl.games.tressette.bots import make_bot
    from batchrl.games.tressette.game import tracker_at
    from batchrl.games.tressette.symmetry import canonical

    params = GAME.rules.params(suits="canonical")
    rng = np.random.default_rng(3)
    states = []
    for _ in range(60):
        s = GAME.rules.new_game(rng, params)
        for _ in range(int(rng.integers(0, 39))):
            legal = GAME.rules.legal_actions(s)
            s = GAME.rules.step(s, legal[int(rng.integers(len(legal)))])
        states.append(s)
    batch = GAME.play.bot(name, params, np.random.default_rng(5))
    alone = make_bot(name, np.random.default_rng(5))  # the same draws, state by state
    chosen = batch.act(states, [GAME.rules.current_player(s) for s in states])
    for s, action in zip(states, chosen.tolist(), strict=True):
        card = int(alone.act(s.state))
        x = tracker_at(s.state).features()
        assert action == int(canonical(x, None, action=np.asarray([card]))[2][0])
        assert action in GAME.rules.legal_actions(s)
        played = GAME.rules.step(s, action).state.plays[-1][1]  # a tied suit's alike card, or it
        assert played % 10 == card % 10


@pytest.mark.slow
def test_a_search_decides_the_same_with_its_rollouts_followed_or_replayed(tmp_path,
                                                                         monkeypatch):
    """Following the rollouts' hands from batch to batch (`lockstep`) only saves time: a
    search over a model of canonical suits (random as the others' model, a bot between
    the model's batches) gets the same returns in every rollout, and so makes the same
    moves, as one whose every batch is replayed from the deals."""
    # the CLI and the game modules patched are this test's alone: a small model to search over
    from click.testing import CliRunner

    from batchrl.cli import main
    from batchrl.games.tressette import faces
    from batchrl.games.tressette import game as core

    run = CliRunner().invoke
    for args in (["generate", "--game", "tressette", "--games", "40", "--seed", "2", "-o",
                  str(tmp_path / "h.jsonl")],
                 ["ingest", str(tmp_path / "h.jsonl"), "--store", str(tmp_path / "s"),
                  "--suits", "canonical"],
                 ["learn", "bc", "--store", str(tmp_path / "s"), "--trees", "3",
                  "--out", str(tmp_path / "m.npz")]):
        result = run(main, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
    params = GAME.rules.params(suits="canonical")
    rng = np.random.default_rng(4)
    states = []
    for k in range(6):
        s = GAME.rules.new_game(rng, params)
        for _ in range(5 * k):
            legal = GAME.rules.legal_actions(s)
            s = GAME.rules.step(s, legal[int(rng.integers(len(legal)))])
        states.append(s)
    seats = [GAME.rules.current_player(s) for s in states]

    spec = f"search+worlds=3+opponent=random:model:{tmp_path / 'm.npz'}"
    followed, followed_returns, first = recorded_search(GAME, spec, params, states, seats)
    for s in states:
        s.seen.tracker, s.seen.order = None, None
    monkeypatch.setattr(core, "lockstep", lambda hands: core.replay([h.state for h in hands]))
    monkeypatch.setattr(faces, "lockstep", core.lockstep)  # every batch from the deals
    replayed, replayed_returns, second = recorded_search(GAME, spec, params, states, seats)
    assert followed == replayed and first.rollout_steps == second.rollout_steps > 0
    assert len(followed_returns) == len(replayed_returns) and all(
        np.array_equal(a, b) for a, b in zip(followed_returns, replayed_returns, strict=True))
    assert len({v for r in followed_returns for v in r.tolist()}) > 2  # returns that differ
