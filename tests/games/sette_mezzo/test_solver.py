"""The solver against an independent exhaustive expectimax in exact fractions.

The brute force shares nothing with the solver but the rules of the game: it draws
card by card from the remaining deck, for the player and for the opponent, and takes
the better action at every player node: no policy iteration, no multiset formulas.
"""

import functools
from fractions import Fraction

import numpy as np
import pytest

from batchrl.games.sette_mezzo.logs import play
from batchrl.games.sette_mezzo.solver import evaluate_policy, solve, strategy_table

VALUES = (Fraction(1, 2), *map(Fraction, range(1, 8)))
COPIES = (12, 4, 4, 4, 4, 4, 4, 4)
TOP = Fraction(15, 2)


@functools.cache
def brute_force(limit):
    """(stick, hit) of a state given as (cards left by kind, player total, up card value)."""

    @functools.cache
    def opponent(left, total, mine):
        if total > TOP:
            return Fraction(1)
        if total >= limit:
            return Fraction((mine > total) - (mine < total))
        n = sum(left)
        return sum(Fraction(c, n) * opponent(_take(left, v), total + VALUES[v], mine)
                   for v, c in enumerate(left) if c)

    @functools.cache
    def q(left, mine, up):
        n = sum(left)
        hit = sum(Fraction(c, n) * (-1 if mine + VALUES[v] > TOP
                                    else max(q(_take(left, v), mine + VALUES[v], up)))
                  for v, c in enumerate(left) if c)
        return opponent(left, up, mine), hit

    return q


def _take(left, v):
    return (*left[:v], left[v] - 1, *left[v + 1:])


def _exact(sol, q):
    """The brute force's (stick, hit) for every state of the solution, and the game value."""
    out = []
    for counts, up in zip(sol.counts.tolist(), sol.opponent_card.tolist(), strict=True):
        left = tuple(COPIES[v] - counts[v] - (v == up) for v in range(8))
        out.append(q(left, sum(c * VALUES[v] for v, c in enumerate(counts)), VALUES[up]))
    game = sum(Fraction(COPIES[p], 40) * Fraction(COPIES[u] - (p == u), 39)
               * max(q(_take(_take(COPIES, p), u), VALUES[p], VALUES[u]))
               for p in range(8) for u in range(8))
    return out, game


@pytest.mark.parametrize("limit", [5, 6.5])
def test_every_state_matches_the_brute_force(limit):
    sol = solve(limit)
    exact, game = _exact(sol, brute_force(Fraction(limit)))
    stick = np.array([float(s) for s, _ in exact])
    hit = np.array([float(h) for _, h in exact])
    np.testing.assert_allclose(sol.stick, stick, atol=1e-12)
    np.testing.assert_allclose(sol.hit, hit, atol=1e-12)
    np.testing.assert_allclose(sol.value, np.maximum(stick, hit), atol=1e-12)
    strict = [h != s for s, h in exact]  # where the two are equal, either is optimal
    assert (sol.action[strict] == (hit > stick)[strict]).all()
    assert sol.expected_reward == pytest.approx(float(game), abs=1e-12)


def test_limit_five_value_and_rounds():
    sol = solve(5)
    assert len(sol.action) == 1752
    assert sol.expected_reward == pytest.approx(0.0020078475693105, abs=1e-13)
    assert sol.rounds > 1  # improvement had work to do, from "always stick"


def test_optimal_beats_simple_policies():
    best = solve(5).expected_reward
    stick = evaluate_policy(lambda x: np.zeros(len(x), dtype=int), 5)
    to_five = evaluate_policy(lambda x: (x[:, 0] < 5).astype(int), 5)
    assert stick.expected_reward < best and to_five.expected_reward < best
    assert 0 < stick.agreement < 1 and stick.decisions_per_game == pytest.approx(1.0)
    q = brute_force(Fraction(5))
    deals = [(Fraction(COPIES[p], 40) * Fraction(COPIES[u] - (p == u), 39),
              q(_take(_take(COPIES, p), u), VALUES[p], VALUES[u])[0])
             for p in range(8) for u in range(8)]
    assert stick.expected_reward == pytest.approx(float(sum(w * v for w, v in deals)), abs=1e-12)


def test_the_optimal_policy_evaluates_to_itself_in_one_batch():
    sol = solve(5)
    calls = []

    def choose(x):
        calls.append(x.shape)
        return sol.choose(x)

    report = evaluate_policy(choose, 5)
    assert calls == [(1752, 11)]
    assert report.expected_reward == pytest.approx(sol.expected_reward, abs=1e-12)
    assert report.agreement == report.agreement_optimal_visits == report.agreement_states == 1.0
    assert report.regret == pytest.approx(0, abs=1e-12)


def test_bad_policy_output_is_refused():
    with pytest.raises(ValueError, match="0 \\(stick\\) or 1"):
        evaluate_policy(lambda x: np.full(len(x), 2), 5)
    with pytest.raises(ValueError, match="1752 actions"):
        evaluate_policy(lambda x: np.zeros(3), 5)
    with pytest.raises(ValueError, match="not a decision state"):
        solve(5).choose(np.zeros((1, 11), dtype=np.float32))


def test_monte_carlo_agrees_with_the_exact_value():
    sol = solve(5)
    games = play("optimal", 20_000, np.random.default_rng(2024), limit=5)
    rewards = np.array([g.reward for g in games])
    se = rewards.std(ddof=1) / np.sqrt(len(rewards))
    assert abs(rewards.mean() - sol.expected_reward) < 4 * se


def test_strategy_table_reads_as_hit_or_stick():
    table = strategy_table(solve(5))
    lines = table.splitlines()
    assert lines[1].split() == ["|", "F", "1", "2", "3", "4", "5", "6", "7"]
    rows = {line.split("|")[0].strip(): line.split("|")[1].split() for line in lines[3:18]}
    assert rows["7.5"] == ["S"] * 8 and rows["0.5"] == ["H"] * 8
    assert rows["6.5"][-1] == "H"  # the opponent's 7 stands: 6.5 must draw
    assert "5 vs 5" in table  # the one cell where the cards that make the 5 matter


@pytest.mark.slow
def test_the_random_player_s_exact_value_is_what_it_wins_in_play() -> None:
    """``score`` takes the bots: ``random``'s exact value (a fair coin in every state,
    through the tree) is what 100,000 simulated games give, within their interval, and
    ``optimal``'s is the solver's."""
    from batchrl.evaluation import mean_ci
    from batchrl.games import get_game
    from batchrl.games.play import seat_scores

    game = get_game("sette-mezzo")
    exact = float(game.play.score(["random"], 1, 0, {}).values[0])
    played = mean_ci(seat_scores(game, game.rules.params(), ["random"], 100_000, 3).values)
    assert abs(played.mean - exact) < played.half_width, (played, exact)
    assert -0.5 < exact < -0.3
    assert game.play.score(["optimal"], 1, 0, {}).values[0] == solve().expected_reward
    assert game.play.score(["random"], 1, 0, {"limit": 4.0}).values[0] != exact
