"""The canonical colour order: renamed games get the same canonical states and actions."""

import itertools

import numpy as np
import pytest

from batchrl.games.hanabi.bots import ConventionBot, RandomBot
from batchrl.games.hanabi.knowledge import encode, feature_names
from batchrl.games.hanabi.rules import (
    card,
    deal,
    full_deck,
    is_terminal,
    legal_actions,
    step,
)
from batchrl.games.hanabi.symmetry import (
    COLOUR_COLUMNS,
    DISCARDS,
    FIREWORKS,
    OTHER_ONE_HOT,
    OTHER_POSS,
    OWN_POSS,
    canonical_actions,
    canonical_states,
    colour_order,
    inverse,
    original_actions,
    original_states,
    relabel_action,
    relabel_card,
    relabel_state,
    sort_keys,
)

NAMES = feature_names()
ALL_PERMS = np.array(list(itertools.permutations(range(5))))


@pytest.fixture(scope="module")
def renamed_games():
    """The same games twice, the second with its colours renamed by a random sigma
    before the deal (hint-colour moves renamed alike): every move's state of the
    player to act and its action, (X, y) for each copy."""
    rng = np.random.default_rng(7)
    X1, X2, y1, y2 = [], [], [], []
    for g in range(24):
        sigma = rng.permutation(5)
        deck = tuple(full_deck()[i] for i in rng.permutation(50))
        s1, s2 = deal(deck, 2), deal(tuple(relabel_card(c, sigma) for c in deck), 2)
        bots = (ConventionBot(), ConventionBot()) if g % 2 else (RandomBot(rng),) * 2
        while not is_terminal(s1):
            assert relabel_state(s1, sigma) == s2  # the helper agrees with a renamed deal
            a = bots[s1.current].act(s1)
            b = relabel_action(a, sigma)
            assert sorted(relabel_action(x, sigma) for x in legal_actions(s1)) == \
                list(legal_actions(s2))
            X1.append(encode(s1, s1.current))
            X2.append(encode(s2, s2.current))
            y1.append(a)
            y2.append(b)
            s1, s2 = step(s1, a), step(s2, b)
        assert is_terminal(s2) and s1.score_played == s2.score_played
    return np.array(X1), np.array(y1), np.array(X2), np.array(y2)


def mismatches(games, order=colour_order, states=canonical_states,
               actions=canonical_actions):
    """Rows where the two copies' canonical states, or canonical actions, differ."""
    X1, y1, X2, y2 = games
    p1, p2 = order(X1), order(X2)
    bad_x = (states(X1, p1) != states(X2, p2)).any(axis=1)
    bad_y = actions(y1, p1) != actions(y2, p2)
    return int((bad_x | bad_y).sum())


def test_renamed_games_have_the_same_canonical_states_and_actions(renamed_games):
    X1, y1, X2, y2 = renamed_games
    assert len(X1) > 500
    # the renaming really changes the raw data, hint labels included
    assert (X1 != X2).any(axis=1).mean() > 0.9
    assert (y1 != y2).sum() > 50
    p1, p2 = colour_order(X1), colour_order(X2)
    np.testing.assert_array_equal(canonical_states(X1, p1), canonical_states(X2, p2))
    np.testing.assert_array_equal(canonical_actions(y1, p1), canonical_actions(y2, p2))
    assert mismatches(renamed_games) == 0


def _skip_columns(columns):
    def states(X, perm):
        out = canonical_states(X, perm)
        out[:, columns] = X[:, columns]
        return out
    return states


def _order_by(key_slice):
    def order(X):
        keys = sort_keys(X)[:, :, key_slice]
        return np.lexsort(-np.moveaxis(keys, 2, 0)[::-1], axis=-1)
    return order


@pytest.mark.parametrize("broken", [
    {"states": _skip_columns(OWN_POSS)},  # own poss_color left in place
    {"states": _skip_columns(OTHER_POSS)},  # partner's poss_color left in place
    {"states": _skip_columns(OTHER_ONE_HOT)},  # partner's colours left in place
    {"states": _skip_columns(DISCARDS)},
    {"actions": original_actions},  # hint colours renamed by perm, not its inverse
    {"order": _order_by(slice(0, 11))},  # key: fireworks, discards, partner cards only
    {"order": _order_by(slice(0, 21))},  # the report's key, no final tie-break
])
def test_the_check_catches_a_broken_canonical_form(renamed_games, broken):
    assert mismatches(renamed_games, **broken) > 0


def test_colour_ties_are_full_ties_and_harmless(renamed_games):
    X1, y1, _, _ = renamed_games
    keys = sort_keys(X1)
    perm = colour_order(X1)
    ordered = np.take_along_axis(keys, perm[:, :, None], axis=1)
    # decreasing keys, and equal neighbours only where every number of the colours is equal
    diff = ordered[:, :-1] - ordered[:, 1:]
    first = np.take_along_axis(diff, (diff != 0).argmax(axis=2)[:, :, None], axis=2)[..., 0]
    assert (first >= 0).all()
    cols = np.take_along_axis(X1[:, COLOUR_COLUMNS], perm[:, :, None], axis=1)
    tied = (diff == 0).all(axis=2)
    np.testing.assert_array_equal(tied, (cols[:, :-1] == cols[:, 1:]).all(axis=2))
    assert tied.any()  # ties do occur (e.g. untouched colours early on)
    # a colour hint never names a tied colour: the partner holds that colour
    hinted = np.flatnonzero(y1 >= 15)
    for n in hinted:
        j = int(inverse(perm[n:n + 1])[0, y1[n] - 15])
        assert not (j > 0 and tied[n, j - 1]) and not (j < 4 and tied[n, j])


def test_round_trips():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 195)).astype(np.float32)
    perm = ALL_PERMS[rng.integers(len(ALL_PERMS), size=500)]
    Xc = canonical_states(X, perm)
    assert Xc.dtype == np.float32
    np.testing.assert_array_equal(original_states(Xc, perm), X)
    np.testing.assert_array_equal(canonical_states(original_states(X, perm), perm), X)
    # only the 105 colour columns move
    moving = np.zeros(195, dtype=bool)
    moving[COLOUR_COLUMNS] = True
    assert moving.sum() == 105 and len(np.unique(COLOUR_COLUMNS)) == 105
    np.testing.assert_array_equal(Xc[:, ~moving], X[:, ~moving])
    # every action under every permutation
    y = np.tile(np.arange(20), len(ALL_PERMS))
    p = np.repeat(ALL_PERMS, 20, axis=0)
    yc = canonical_actions(y, p)
    np.testing.assert_array_equal(original_actions(yc, p), y)
    np.testing.assert_array_equal(canonical_actions(original_actions(y, p), p), y)
    np.testing.assert_array_equal(yc[y < 15], y[y < 15])
    np.testing.assert_array_equal(yc[y >= 15], 15 + inverse(p)[y >= 15, y[y >= 15] - 15])
    np.testing.assert_array_equal(inverse(ALL_PERMS)[np.arange(120)[:, None], ALL_PERMS],
                                  np.tile(np.arange(5), (120, 1)))


def test_column_tables_follow_the_feature_names():
    colours = ("white", "blue", "red", "yellow", "green")
    for c, colour in enumerate(colours):
        assert NAMES[FIREWORKS[c]] == f"firework_{colour}"
        assert [NAMES[i] for i in DISCARDS[c]] == [f"discarded_{colour}{r}" for r in range(1, 6)]
        assert [NAMES[i] for i in OWN_POSS[c]] == [f"current{i}_poss_color_{colour}"
                                                   for i in range(5)]
        assert [NAMES[i] for i in OTHER_POSS[c]] == [f"other{i}_poss_color_{colour}"
                                                     for i in range(5)]
        assert [NAMES[i] for i in OTHER_ONE_HOT[c]] == [f"other{i}_color_{colour}"
                                                        for i in range(5)]
        assert all(colour in NAMES[i] for i in COLOUR_COLUMNS[c])
    # every name that mentions a colour is in the table
    named = {i for i, n in enumerate(NAMES) if any(colour in n for colour in colours)}
    assert named == set(COLOUR_COLUMNS.ravel().tolist())


def _put(x, name, value):
    x[NAMES.index(name)] = value


def test_a_small_example():
    x = np.zeros(195)
    _put(x, "firework_white", 1)  # white first: the only firework
    _put(x, "discarded_red5", 1)  # a dead 5 outranks...
    _put(x, "discarded_yellow1", 3)  # ...three dead 1s
    _put(x, "other0_color_green", 1)  # green over blue: the partner holds a g2
    _put(x, "other0_value", 2)
    perm = colour_order(x[None])
    assert perm.tolist() == [[0, 2, 3, 4, 1]]  # white, red, yellow, green, blue
    xc = canonical_states(x[None], perm)[0]
    assert xc[FIREWORKS].tolist() == [1, 0, 0, 0, 0]
    assert xc[DISCARDS[1, 4]] == 1 and xc[DISCARDS[2, 0]] == 3 and xc[DISCARDS].sum() == 4
    assert xc[OTHER_ONE_HOT[:, 0]].tolist() == [0, 0, 0, 1, 0]
    assert xc[NAMES.index("other0_value")] == 2
    # hint green -> canonical colour 3; hint blue -> 4; hint white stays; a play stays
    y = np.array([19, 16, 15, 2])
    assert canonical_actions(y, np.repeat(perm, 4, axis=0)).tolist() == [18, 19, 15, 2]


def test_lower_keys_break_only_ties_of_higher_ones():
    x = np.zeros((3, 195))
    # row 0: red beats white on the partner's poss_color although white has more own
    _put(x[0], "other2_poss_color_red", 0.5)
    _put(x[0], "other2_poss_color_white", 0.4)
    _put(x[0], "current0_poss_color_white", 0.9)
    # row 1: partner's poss_color tied, the player's own decides; slot 0 before slot 1
    _put(x[1], "current0_poss_color_blue", 0.3)
    _put(x[1], "current1_poss_color_green", 0.6)
    # row 2: the partner's cards, rank 5 first: one g5 outranks two r1s
    _put(x[2], "other0_color_green", 1)
    _put(x[2], "other0_value", 5)
    _put(x[2], "other1_color_red", 1)
    _put(x[2], "other1_value", 1)
    _put(x[2], "other2_color_red", 1)
    _put(x[2], "other2_value", 1)
    assert colour_order(x).tolist() == [[2, 0, 1, 3, 4], [1, 4, 0, 2, 3], [4, 2, 0, 1, 3]]


def test_relabel_helpers():
    sigma = [2, 0, 1, 4, 3]
    assert relabel_card(card(0, 3), sigma) == card(2, 3)
    assert relabel_action(15, sigma) == 17 and relabel_action(19, sigma) == 18
    assert relabel_action(12, sigma) == 12
    assert relabel_action(26, sigma, players=3) == 25  # colour 1 to the seat after next
    s = step(deal(full_deck(), 2), 15)  # hint white to seat 1 (all white)
    r = relabel_state(s, sigma)
    assert r.known[1][0] == (0b00100, 0b11111)
    assert all(c // 5 == 2 for c in r.hands[1])
    with pytest.raises(ValueError):
        relabel_state(s, [0, 0, 1, 2, 3])


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError):
        colour_order(np.zeros(195))
    with pytest.raises(ValueError):
        canonical_states(np.zeros((2, 195)), np.zeros((2, 5), dtype=int))  # not permutations
    with pytest.raises(ValueError):
        canonical_actions([20], [[0, 1, 2, 3, 4]])
    with pytest.raises(ValueError):
        original_actions([1, 2], [[0, 1, 2, 3, 4]])
