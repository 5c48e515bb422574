"""The lockstep tracker agrees with the rules, card by card, and sees only what it may."""

import numpy as np
import pytest

from batchrl.games.tressette.bots import make_bot
from batchrl.games.tressette.features import IllegalPlay, Tracker, feature_names
from batchrl.games.tressette.rules import (
    deal,
    legal_cards,
    step,
    suit_of,
    team_points,
    thirds,
)

NAMES = feature_names()


def _col(name):
    return NAMES.index(name)


def test_the_tracker_follows_the_rules_through_whole_hands():
    rng = np.random.default_rng(0)
    bots = [make_bot(n, rng) for n in ("rule", "random", "seed-heuristic", "random")]
    states = [deal(np.random.default_rng([0, i]), leader=i % 4) for i in range(60)]
    tracker = Tracker.deal(states)
    signals_seen = voids_seen = partner_wins = 0
    for _ in range(40):
        x, legal = tracker.features(), tracker.legal()
        cards = np.zeros(len(states), dtype=np.int64)
        for g, s in enumerate(states):
            me = s.current
            assert tracker.current[g] == me
            assert np.flatnonzero(legal[g]).tolist() == sorted(legal_cards(s))
            assert np.flatnonzero(x[g, :40]).tolist() == sorted(s.hands[me])
            on_table = {c for _, c in s.trick}
            assert set(np.flatnonzero(x[g, 80:120]).tolist()) == on_table
            done = {c for _, c in s.plays} - on_table
            assert set(np.flatnonzero(x[g, 40:80]).tolist()) == done
            # signals, seats counted from the player: (me + p) % 4
            for p in range(4):
                sig = s.signals[(me + p) % 4]
                block = x[g, 136 + 12 * p: 148 + 12 * p].reshape(4, 3)
                if sig is None:
                    assert not block.any()
                else:
                    kind = ("busso", "volo", "striscio").index(sig[1])
                    assert block[sig[0], kind] == 1 and block.sum() == 1
                    signals_seen += 1
            # a seat that did not follow a led suit is void in it
            for p in range(4):
                seat = (me + p) % 4
                for suit in range(4):
                    if x[g, 120 + 4 * p + suit]:
                        voids_seen += 1
                        assert not any(suit_of(c) == suit for c in s.hands[seat])
            # points taken so far, in thirds, from the player's side
            ours, theirs = thirds(s.captured[me % 2]), thirds(s.captured[1 - me % 2])
            assert (x[g, 195], x[g, 196]) == (ours, theirs)
            assert x[g, 197] == s.tricks_played
            if s.trick:  # who is winning the trick so far: the best card of the led suit
                led = suit_of(s.trick[0][1])
                best = max((p for p in s.trick if suit_of(p[1]) == led),
                           key=lambda p: p[1] % 10)[0]
                partner_wins += best == (me + 2) % 4
                assert x[g, 192] == (best == (me + 2) % 4)
            cards[g] = bots[me].act(s)
        tracker.play(cards)
        states = [step(s, int(c)) for s, c in zip(states, cards, strict=True)]
    assert tracker.points().tolist() == [list(team_points(s)) for s in states]
    assert partner_wins > 100
    assert signals_seen > 1000 and voids_seen > 100


def _card_facts(s):
    """What each card of the hand would do, read from the rules state card by card."""
    hand = set(s.hands[s.current])
    seen = hand | {c for _, c in s.plays}
    beats, master = set(), set()
    for c in hand:
        higher = [c - c % 10 + r for r in range(c % 10 + 1, 10)]
        if not any(h not in seen for h in higher):
            master.add(c)
        if s.trick:
            led = suit_of(s.trick[0][1])
            best = max(p % 10 for _, p in s.trick if suit_of(p) == led)
            if suit_of(c) == led and c % 10 > best:
                beats.add(c)
    unseen = [c for c in range(40) if c not in seen]
    return (beats, master, [sum(suit_of(c) == u for c in hand) for u in range(4)],
            [sum(suit_of(c) == u for c in unseen) for u in range(4)], thirds(unseen))


def test_the_card_facts_agree_with_the_rules():
    rng = np.random.default_rng(1)
    bots = [make_bot(n, rng) for n in ("rule", "random", "rule", "seed-heuristic")]
    states = [deal(np.random.default_rng([1, i]), leader=i % 4) for i in range(30)]
    tracker = Tracker.deal(states)
    beats_seen = master_seen = 0
    for _ in range(40):
        x = tracker.features()
        cards = np.zeros(len(states), dtype=np.int64)
        for g, s in enumerate(states):
            beats, master, mine, unseen, out = _card_facts(s)
            assert set(np.flatnonzero(x[g, _col("beats_4D"):_col("beats_4D") + 40])) == beats
            assert set(np.flatnonzero(x[g, _col("master_4D"):_col("master_4D") + 40])) == master
            assert x[g, _col("mine_D"):_col("mine_D") + 4].tolist() == mine
            assert x[g, _col("unseen_D"):_col("unseen_D") + 4].tolist() == unseen
            assert x[g, _col("unseen_thirds")] == out
            beats_seen += len(beats)
            master_seen += len(master)
            cards[g] = bots[s.current].act(s)
        tracker.play(cards)
        states = [step(s, int(c)) for s, c in zip(states, cards, strict=True)]
    assert beats_seen > 300 and master_seen > 300


def test_a_card_that_does_not_follow_suit_is_refused_for_its_hand_only():
    states = [deal(np.random.default_rng([5, i]), leader=0) for i in range(3)]
    tracker = Tracker.deal(states)
    first = np.asarray([min(s.hands[0]) for s in states])
    tracker.play(first)
    legal = tracker.legal()
    cards = np.asarray([np.flatnonzero(row)[0] for row in legal])
    # hand 1's seat plays a card of another suit though it can follow
    follow = [c for c in states[1].hands[1] if suit_of(c) == suit_of(first[1])]
    other = [c for c in states[1].hands[1] if suit_of(c) != suit_of(first[1])]
    if not follow or not other:
        pytest.skip("this deal gives seat 1 no choice to break")
    cards[1] = other[0]
    with pytest.raises(IllegalPlay) as info:
        tracker.play(cards)
    assert info.value.games.tolist() == [1]


def test_the_trick_columns_describe_the_table():
    s = deal(np.random.default_rng(9), leader=2)
    tracker = Tracker.deal([s])
    led = min(s.hands[2])
    tracker.play(np.asarray([led]))
    x = tracker.features()[0]
    assert x[_col("position_1")] == 1 and x[_col(f"led_{'DCSB'[suit_of(led)]}")] == 1
    assert x[_col("winning_rank")] == led % 10
    assert x[_col("partner_winning")] == 0  # seat 3 plays next: the leader, seat 2, is an opponent
