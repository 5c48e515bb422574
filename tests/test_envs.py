"""Every registered game as a PettingZoo AEC environment and a Gymnasium one, checked with
the libraries' own API tests."""

from __future__ import annotations

import numpy as np
import pytest

import batchrl
from batchrl.games import GAMES, register_game, unregister_game

pytest.importorskip("pettingzoo", reason="the environments need the envs extra (pettingzoo)")
pytest.importorskip("gymnasium", reason="the environments need the envs extra (gymnasium)")

from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test


@pytest.fixture
def kuhn():
    from kuhn import GAME

    register_game(GAME)
    yield GAME
    unregister_game(GAME.name)


@pytest.mark.parametrize("name", list(GAMES))
def test_every_game_passes_pettingzoo_api_test(name):
    api_test(batchrl.env(name), num_cycles=60)


@pytest.mark.parametrize("name", list(GAMES))
def test_every_game_passes_gymnasium_check_env(name):
    n = GAMES[name].rules.num_players(GAMES[name].rules.params())
    check_env(batchrl.env(name, opponents=["random"] * (n - 1)), skip_render_check=True)


@pytest.mark.parametrize("name", [n for n in GAMES if len(GAMES[n].play.bots) > 1])
def test_the_other_seats_may_be_the_games_own_bots(name):
    game = GAMES[name]
    bot = next(b for b in game.play.bots if b != "random")
    n = game.rules.num_players(game.rules.params())
    env = batchrl.env(name, opponents=[bot] * (n - 1), seat=n - 1)
    check_env(env, skip_render_check=True)
    observation, _ = env.reset(seed=3)
    rng, done, steps = np.random.default_rng(3), False, 0
    while not done:  # the seat's turns come back until the bots end the game
        assert observation["action_mask"].any()
        action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
        observation, _, done, _, info = env.step(action)
        assert "illegal_action" not in info
        steps += 1
    assert steps >= 1


def test_the_toy_game_too(kuhn):
    api_test(batchrl.env("kuhn"), num_cycles=40)
    check_env(batchrl.env("kuhn", opponents=["random"]), skip_render_check=True)


def _episode(env, seed):
    env.reset(seed=seed)
    moves, totals = [], dict.fromkeys(env.possible_agents, 0.0)
    rng = np.random.default_rng(seed)
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, _ = env.last()
        totals[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        legal = np.flatnonzero(observation["action_mask"])
        moves.append(int(rng.choice(legal)))
        env.step(moves[-1])
    return moves, totals


def test_the_same_seed_gives_the_same_game_and_rewards_add_up_to_returns(kuhn):
    env = batchrl.env("kuhn")
    for seed in range(20):
        moves, totals = _episode(env, seed)
        assert _episode(env, seed) == (moves, totals)
        state = kuhn.rules.new_game(np.random.default_rng(seed), kuhn.rules.params())
        for m in moves:
            state = kuhn.rules.step(state, m)
        assert tuple(totals.values()) == kuhn.rules.returns(state)


def test_an_unknown_game_names_the_games():
    with pytest.raises(ValueError, match="the games are"):
        batchrl.env("chess")


@pytest.mark.parametrize("bad", [1.7, "1", True, None, float("nan"), np.array([1, 0]), -1, 3,
                                 np.float64(1.0)])
def test_an_action_that_is_not_a_whole_number_in_range_is_refused_by_name(bad):
    gym = batchrl.env("sette-mezzo", opponents=[])
    gym.reset(seed=0)
    with pytest.raises(ValueError, match=r"action .* want a whole number from 0 to 1"):
        gym.step(bad)
    aec = batchrl.env("sette-mezzo")
    aec.reset(seed=0)
    with pytest.raises(ValueError, match=r"action .* want a whole number from 0 to 1"):
        aec.step(bad)
    assert gym.step(np.int64(1))[1] is not None  # numpy's integers are whole numbers


def test_stepping_before_reset_or_after_the_end_is_a_clear_error():
    gym = batchrl.env("sette-mezzo", opponents=[])
    with pytest.raises(RuntimeError, match="call reset"):
        gym.step(0)
    gym.reset(seed=1)
    done = False
    while not done:
        _, _, done, _, _ = gym.step(1)  # stick: the game ends
    with pytest.raises(RuntimeError, match="the episode is over: call reset"):
        gym.step(0)
    aec = batchrl.env("sette-mezzo")
    with pytest.raises(RuntimeError, match="call reset"):
        aec.step(0)
    aec.reset(seed=1)
    for _agent in aec.agent_iter():
        _, _, terminated, truncated, _ = aec.last()
        aec.step(None if terminated or truncated else 1)
    with pytest.raises(RuntimeError, match="every agent is done: call reset"):
        aec.step(0)


def test_a_holdem_reset_always_gives_the_seat_a_decision_and_accounts_the_chips():
    """About one hand in ten the small blind folds before the big blind acts: reset deals
    again rather than start an episode already over, and says what the seat won in the
    hands it had no decision in; the env says what its rewards count."""
    env = batchrl.env("holdem", opponents=["random"], seat=0)  # the big blind
    assert env.reward_scale == {"big_blind": 10.0} and "chips" in env.reward_unit
    skipped = won = 0
    for seed in range(120):
        observation, info = env.reset(seed=seed)
        assert observation["action_mask"].any()
        skipped += info["games_without_a_decision"]
        won += info["reward_of_games_without_a_decision"]
    assert skipped > 0 and won == skipped * 5.0  # the small blind's 5 chips, each time


def test_a_one_player_game_s_gymnasium_env_needs_no_opponents_named():
    seat = batchrl.env("sette-mezzo", gym=True)
    assert not hasattr(seat, "agents") and seat.reset(seed=0)[0]["action_mask"].any()
    check_env(seat, skip_render_check=True)
    with pytest.raises(ValueError, match="holdem has 2 seats: name the other 1 players"):
        batchrl.env("holdem", gym=True)


def test_a_six_seat_holdem_table_passes_both_checkers():
    """Hold'em of any seat count the bots play (here six, Pluribus's table, with a big
    blind's ante): the AEC env and the Gymnasium one with five ``rule`` bots."""
    from batchrl.games.holdem.gamedef import GameDef

    six = GameDef("six", "nolimit", 6, 4, (50, 100, 0, 0, 0, 0), (), (2, 0, 0, 0), (255,) * 4,
                  (0, 3, 1, 1), stack=(10000,) * 6, ante=(0, 100, 0, 0, 0, 0))
    api_test(batchrl.env("holdem", gamedef=six), num_cycles=60)
    check_env(batchrl.env("holdem", opponents=["rule"] * 5, seat=3, gamedef=six),
              skip_render_check=True)
