"""Lockstep simulation with the knowledge features."""

import numpy as np
import pytest

from batchrl.games.hanabi.bots import ConventionBot, SimpleBot
from batchrl.games.hanabi.knowledge import encode
from batchrl.games.hanabi.rules import legal_actions, new_game, step
from batchrl.games.hanabi.simulate import play


def one_at_a_time(games, rng, choose):
    """The reference: one game at a time, ``encode`` per state."""
    features, actions, game, scores = [], [], [], []
    for g in range(games):
        s = new_game(rng, 2)
        while not s.over:
            features.append(encode(s, s.current))
            a = choose(s)
            actions.append(a)
            game.append(g)
            s = step(s, a)
        scores.append(s.score_played)
    return np.stack(features), np.array(actions), np.array(game), np.array(scores)


def check(episodes, expected):
    features, actions, game, scores = expected
    assert episodes.features.dtype == np.float32
    assert np.array_equal(episodes.features, features)
    assert np.array_equal(episodes.actions, actions)
    assert np.array_equal(episodes.game, game)
    assert np.array_equal(episodes.scores, scores)
    assert len(episodes) == len(actions)


def test_random_play_one_game_at_a_time_is_the_reference():
    def choose(s):
        legal = legal_actions(s)
        return legal[int(rng.integers(np.array([len(legal)]))[0])]

    rng = np.random.default_rng(5)
    expected = one_at_a_time(30, rng, choose)
    check(play(30, np.random.default_rng(5), batch=1), expected)


@pytest.mark.parametrize("batch", [1, 3, 64])
def test_bots_play_the_same_games_at_any_batch(batch):
    bots = (ConventionBot(), ConventionBot())
    expected = one_at_a_time(8, np.random.default_rng(6), lambda s: bots[s.current].act(s))
    check(play(8, np.random.default_rng(6), bots=bots, batch=batch), expected)
    assert expected[3].mean() > 10  # long games: an empty deck, short hands


def test_each_seat_plays_its_own_bot():
    seen = []

    class Recorder:
        def __init__(self, seat):
            self.seat, self.bot = seat, SimpleBot(np.random.default_rng(seat))

        def act(self, state):
            seen.append((self.seat, state.current))
            return self.bot.act(state)

    e = play(5, np.random.default_rng(7), bots=(Recorder(0), Recorder(1)), batch=2)
    assert len(seen) == len(e) and all(bot == seat for bot, seat in seen)


def test_random_play_in_batches():
    e = play(200, np.random.default_rng(8), batch=64)
    assert e.features.shape == (len(e), 195) and len(e.game) == len(e)
    assert np.array_equal(np.unique(e.game), np.arange(200))
    assert (np.diff(e.game) >= 0).all()  # game by game
    firsts = np.flatnonzero(np.diff(e.game, prepend=-1))
    assert (e.features[firsts, 0] == 8).all() and (e.features[firsts, 2] == 40).all()
    assert ((e.actions >= 0) & (e.actions < 20)).all()
    assert ((e.scores >= 0) & (e.scores <= 25)).all()
    again = play(200, np.random.default_rng(8), batch=64)
    assert np.array_equal(again.features, e.features) and np.array_equal(again.actions, e.actions)


def test_arguments():
    e = play(0, np.random.default_rng(0))
    assert e.features.shape == (0, 195) and len(e) == 0 and e.scores.shape == (0,)
    with pytest.raises(ValueError):
        play(1, np.random.default_rng(0), batch=0)
    with pytest.raises(ValueError):
        play(1, np.random.default_rng(0), bots=(ConventionBot(),))
