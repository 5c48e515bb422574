import numpy as np
import pytest

from batchrl.games.conformance import check_game
from batchrl.games.holdem import GAME, gamedef
from batchrl.games.holdem.cards import parse_cards
from batchrl.games.holdem.rules import (
    CALL,
    FOLD,
    RAISE,
    IllegalAction,
    deal,
    legal_actions,
    new_hand,
    payoffs,
    raise_bounds,
    returns,
    returns_many,
    showdown_seats,
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
    check_game(GAME, GAME.rules.params(gamedef=game, pv=pv), playouts=50)


def test_new_hand_is_seeded():
    a = new_hand(HU, np.random.default_rng(7))
    b = new_hand(HU, np.random.default_rng(7))
    assert a.hole == b.hole and a.board == b.board
    cards = [c for h in a.hole for c in h] + list(a.board)
    assert len(set(cards)) == 9


NL = gamedef.HEADS_UP_NOLIMIT


def nl_play(state, betting):
    """Play ACPC no-limit betting ("r300c/r600f") through the rules."""
    import re
    for letter, size in re.findall(r"([fcr])(\d*)", betting):
        state = step(state, "fcr".index(letter), int(size or 0))
    return state


def nl_fresh(game=NL):
    n = game.num_players
    return deal(game, hole=tuple((2 * p, 2 * p + 1) for p in range(n)),
                board=tuple(range(2 * n, 2 * n + 5)))


def test_nolimit_raises_name_totals_and_the_minimum_is_the_last_raise():
    s = nl_fresh()
    assert s.current == 1 and s.spent == (100, 50) and raise_bounds(s) == (200, 20000)
    with pytest.raises(IllegalAction, match="between 200 and 20000"):
        step(s, RAISE, 150)
    with pytest.raises(IllegalAction, match="between 200 and 20000"):
        step(s, RAISE, 20001)
    s = nl_play(s, "r300")           # raised by 200: the next raise adds at least 200
    assert raise_bounds(s) == (500, 20000)
    s = nl_play(s, "r900")           # by 600
    assert raise_bounds(s) == (1500, 20000)
    s = nl_play(s, "c")              # the flop: the minimum is a big blind over the bet
    assert s.round == 1 and s.current == 0 and raise_bounds(s) == (1000, 20000)
    assert nl_play(s, "r2250f").betting == "r300r900c/r2250f"


def test_nolimit_all_in_runs_the_board_out_and_nobody_acts_after():
    s = nl_play(nl_fresh(), "r20000")
    assert legal_actions(s) == (FOLD, CALL)   # no raise past a stack
    s = nl_play(s, "c")
    assert s.finished and s.round == 3 and s.betting == "r20000c///"
    assert payoffs(s, [2, 1]) == (20000.0, -20000.0)
    # all-in after the flop: the empty rounds are the turn and the river
    s = nl_play(nl_fresh(), "cc/r20000c")
    assert s.finished and s.betting == "cc/r20000c//"


def test_nolimit_call_of_an_all_in_by_a_shorter_stack_and_side_pots():
    game = gamedef.parse("GAMEDEF\nnolimit\nnumPlayers = 3\nnumRounds = 4\n"
                         "stack = 1000 5000 5000\nblind = 50 100 0\nfirstPlayer = 3 1 1 1\n"
                         "numSuits = 4\nnumRanks = 13\nnumHoleCards = 2\n"
                         "numBoardCards = 0 3 1 1\nEND GAMEDEF\n", name="short")
    s = nl_play(nl_fresh(game), "r3000c")     # seat 2 raises, seat 0 calls all-in for 1000
    assert s.spent == (1000, 100, 3000) and s.all_in(0) and s.current == 1
    s = nl_play(s, "c")                       # seat 1 calls: on to the flop, seat 0 sits out
    assert s.round == 1 and s.current == 1
    s = nl_play(s, "cc/cc/cc")
    assert s.finished and s.spent == (1000, 3000, 3000)
    # seat 0 has the best hand: it takes the main pot (3 x 1000); the side pot (2 x 2000)
    # goes to the better of seats 1 and 2, or is split
    assert payoffs(s, [9, 5, 3]) == (2000.0, 1000.0, -3000.0)
    assert payoffs(s, [9, 5, 5]) == (2000.0, -1000.0, -1000.0)
    assert payoffs(s, [9, 9, 9]) == (0.0, 0.0, 0.0)
    assert payoffs(s, [5, 9, 9]) == (-1000.0, 500.0, 500.0)


def test_three_way_ties_pay_fractions():
    game = gamedef.THREE_PLAYER_LIMIT
    s = play(deal(game, ((0, 1), (2, 3), (4, 5)), (6, 7, 8, 9, 10)), "ccc/ccc/ccc/ccc")
    assert s.spent == (10, 10, 10)
    assert payoffs(s, [7, 7, 3]) == (5.0, 5.0, -10.0)
    s = play(deal(game, ((0, 1), (2, 3), (4, 5)), (6, 7, 8, 9, 10)), "rcc/ccc/ccc/ccc")
    assert payoffs(s, [7, 7, 7]) == (0.0, 0.0, 0.0)
    s = play(deal(game, ((0, 1), (2, 3), (4, 5)), (6, 7, 8, 9, 10)), "cfc/cc/cc/cc")
    assert payoffs(s, [1, 7, 7]) == (-5.0, 2.5, 2.5)


def _random_ends(game, n, seed):
    """``n`` finished hands of ``game`` played by uniformly random legal moves (no-limit
    raises at either bound), so folds, showdowns, all-ins and side pots all occur."""
    rng = np.random.default_rng(seed)
    ends = []
    for _ in range(n):
        s = new_hand(game, rng)
        while not s.finished:
            action = int(rng.choice(legal_actions(s)))
            size = 0
            if action == RAISE and not game.is_limit:
                size = int(rng.choice(raise_bounds(s)))
            s = step(s, action, size)
        ends.append(s)
    return ends


@pytest.mark.parametrize("game", [HU, NL, gamedef.THREE_PLAYER_LIMIT,
                                  gamedef.THREE_PLAYER_NOLIMIT])
def test_returns_of_many_hands_at_once_are_each_hands_returns(game):
    ends = _random_ends(game, 400, seed=5)
    # a royal flush on the board: every seat that sees the river ties
    board = tuple(parse_cards("AsKsQsJsTs"))
    hole = tuple(tuple(parse_cards(h)) for h in ("2c3d", "4c5d", "6c7d")[:game.num_players])
    tie = deal(game, hole, board)
    while not tie.finished:
        tie = step(tie, CALL)
    ends.append(tie)
    batch = returns_many(ends)
    one = np.array([returns(s) for s in ends])
    assert batch.shape == (len(ends), game.num_players)
    assert np.array_equal(batch, one)
    showdowns = sum(1 for s in ends if showdown_seats(s))
    assert 0 < showdowns < len(ends)  # both kinds of ending were met
    assert (one[-1] == 0).all()  # the tie: every seat gets its chips back


def test_returns_of_many_hands_fall_back_to_one_at_a_time_and_keep_its_errors():
    ends = _random_ends(HU, 20, seed=1)
    unknown = ends[0]._replace(hole=((), ends[0].hole[1]))  # a log that hid a hand
    other = _random_ends(gamedef.GLASSFROG_LIMIT, 1, seed=2)[0]  # other blinds, two seats
    for batch in ([*ends, unknown], [*ends, other], [unknown]):
        assert [tuple(r) for r in returns_many(batch)] == [returns(s) for s in batch]
    shown = next(s for s in ends if showdown_seats(s))
    uneven = shown._replace(hole=((*shown.hole[0], shown.board[4]), shown.hole[1][:1]))
    with pytest.raises(ValueError, match="want 5 to 7 cards"):  # 8 cards in one hand
        returns(uneven)
    with pytest.raises(ValueError, match="want 5 to 7 cards"):  # as many cards in all
        returns_many([*ends, uneven])
    bad = shown._replace(board=(60, *shown.board[1:]))
    with pytest.raises(ValueError, match=r"want distinct cards in 0\.\.51"):
        returns(bad)
    with pytest.raises(ValueError, match=r"want distinct cards in 0\.\.51"):
        returns_many([*ends, bad])
    assert returns_many([]).shape[0] == 0


@pytest.mark.parametrize("game", [HU, NL, gamedef.GLASSFROG_LIMIT])
def test_a_heads_up_pot_of_equal_stakes_pays_as_its_layers_do(game):
    """`payoffs`' shortcut (two seats, both in for as much, no antes) gives the same
    numbers as the side-pot layers, ties and both-folded states included."""
    from batchrl.games.holdem.rules import _layered  # (the layers the shortcut skips)

    checked = 0
    antes = game.posted_antes()
    for s in _random_ends(game, 300, seed=9):
        for strengths in ([5, 5], [7, 2], [2, 7], [-1, 3]):
            paid = tuple(a + b for a, b in zip(s.spent, antes, strict=True))
            for state in (s, s._replace(folded=(True, True))):
                if sum(not f for f in state.folded) == 1:
                    continue  # a fold: no showdown
                got, layers = payoffs(state, strengths), _layered(state, strengths, paid, antes)
                assert [repr(v) for v in got] == [repr(v) for v in layers]  # -0.0 too
                checked += state.spent[0] == state.spent[1] and not any(state.folded)
    assert checked > 100
