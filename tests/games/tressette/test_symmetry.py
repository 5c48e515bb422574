"""Canonical suits: a deal with its suits renamed reads the same, decision by decision."""

import itertools

import numpy as np

from batchrl.games.tressette.bots import make_bot
from batchrl.games.tressette.features import Tracker, feature_names
from batchrl.games.tressette.rules import deal, deal_hands, step
from batchrl.games.tressette.symmetry import canonical, canonical_name, suit_order, to_cards

NAMES = feature_names()


def _rename(card, perm):
    return perm[card // 10] * 10 + card % 10


def _two_trackers(seed, perm, hands=20):
    """Hands played by bots, and the same hands with suit s renamed perm[s]."""
    rng = np.random.default_rng(seed)
    bots = [make_bot(n, rng) for n in ("rule", "random", "seed-heuristic", "random")]
    states = [deal(np.random.default_rng([seed, i]), leader=i % 4) for i in range(hands)]
    renamed = [deal_hands([[_rename(c, perm) for c in h] for h in s.hands], s.leader)
               for s in states]
    return bots, states, renamed


def test_renaming_the_suits_of_a_deal_changes_no_canonical_state_legal_mask_or_card():
    checked = 0
    for seed, perm in enumerate([(1, 0, 3, 2), (3, 2, 1, 0), (2, 3, 0, 1)]):
        bots, states, renamed = _two_trackers(seed, perm)
        a, b = Tracker.deal(states), Tracker.deal(renamed)
        for _ in range(40):
            cards = np.asarray([bots[s.current].act(s) for s in states])
            other = np.asarray([_rename(c, perm) for c in cards])
            xa, la, ca = canonical(a.features(), a.legal(), cards)
            xb, lb, cb = canonical(b.features(), b.legal(), other)
            assert np.array_equal(xa, xb) and np.array_equal(la, lb)
            assert np.array_equal(ca, cb)
            checked += len(cards)
            a.play(cards)
            b.play(other)
            states = [step(s, int(c)) for s, c in zip(states, cards, strict=True)]
    assert checked == 3 * 20 * 40


def test_the_canonical_card_is_the_real_card_renamed_and_back():
    _, states, _ = _two_trackers(7, (0, 1, 2, 3), hands=50)
    tracker = Tracker.deal(states)
    x, legal = tracker.features(), tracker.legal()
    xc, lc, order = canonical(x, legal)
    for g in range(len(states)):
        real = np.flatnonzero(legal[g])
        named = np.flatnonzero(lc[g])
        assert sorted(to_cards(named, np.repeat(order[g:g + 1], len(named), axis=0))) \
            == real.tolist()
    held = xc[:, :40].reshape(-1, 4, 10).sum(axis=2)
    led = xc[:, [NAMES.index(f"led_{s}") for s in "DCSB"]]
    assert (np.diff(held[led.sum(axis=1) == 0], axis=1) <= 0).all()  # longest suit first
    assert canonical_name(7) == "Aa" and canonical_name(39) == "3d"


def test_the_led_suit_comes_first_and_every_order_is_a_permutation():
    _, states, _ = _two_trackers(3, (0, 1, 2, 3), hands=64)
    tracker = Tracker.deal(states)
    tracker.play(np.asarray([min(s.hands[s.leader]) for s in states]))
    x = tracker.features()
    order = suit_order(x)
    led = tracker.led
    assert (order[:, 0] == led).all()
    assert all(sorted(o) == [0, 1, 2, 3] for o in order.tolist())
    assert len({tuple(o) for o in order.tolist()}) > 1
    assert set(itertools.chain.from_iterable(order.tolist())) == {0, 1, 2, 3}


def test_canonical_rows_are_the_dealt_rows_each_in_its_own_suit_order():
    from batchrl.games.tressette.logs import play
    from batchrl.games.tressette.transitions import Logged, rows, schema

    games = [Logged(g, i, i + 1) for i, g in enumerate(play(
        ("seed-heuristic", "random", "rule", "random"), 12, seed=5))]
    dealt, _ = rows(games, "0" * 16 + ":")
    canon, _ = rows(games, "0" * 16 + ":", suits="canonical")
    x, _, action = canonical(dealt["state"], None, dealt["action"])
    assert np.array_equal(canon["state"], x) and np.array_equal(canon["action"], action)
    assert np.array_equal(canon["reward"], dealt["reward"])
    # the next state is the seat's next decision, in that decision's own order
    has_next = ~canon["terminal"]
    nx, nl, _ = canonical(dealt["next_state"][has_next], dealt["next_legal"][has_next])
    assert np.array_equal(canon["next_state"][has_next], nx)
    assert np.array_equal(canon["next_legal"][has_next], nl)
    assert not np.array_equal(canon["state"], dealt["state"])
    assert schema(suits="canonical").action_names[7] == "Aa"


def test_a_card_of_a_tied_suit_is_named_in_the_first_of_the_tied_suits():
    # seat 0 holds A 2 3 of denari and of coppe: the two suits read the same
    hands = [[7, 8, 9, 17, 18, 19, 20, 21, 22, 23]]
    rest = [c for c in range(40) if c not in hands[0]]
    hands += [rest[0:10], rest[10:20], rest[20:30]]
    tracker = Tracker.deal([deal_hands(hands, leader=0)] * 2)
    x, legal, cards = canonical(tracker.features(), tracker.legal(), np.asarray([7, 17]))
    assert cards[0] == cards[1] and canonical_name(int(cards[0])) == "Ab"  # spades first
    assert np.array_equal(x[0], x[1]) and np.array_equal(legal[0], legal[1])
