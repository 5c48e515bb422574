"""The checks every registered game must pass (in the spirit of pgx's ``api_test`` and
OpenSpiel's random simulation test), run over ``batchrl.games.GAMES`` by the tests.

Random playouts through the `Game` protocol: a move is always possible while the game is
on and every legal move is one of the game's actions; the seat to act is a seat; each
encoded state has as many numbers as the game has feature names (and ``encode_batch``
encodes as ``encode`` does, ``returns_batch`` gives ``returns``); an action the rules
do not allow raises; the same seed gives the same game; and the returns of a zero-sum
game add up to zero.

>>> from batchrl.games import GAMES
>>> check_game(GAMES["sette-mezzo"], playouts=5)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from batchrl.games.base import Game
from batchrl.games.core import legal_mask


def check_game(game: Game, params: Any = None, playouts: int = 100, seed: int = 0,
               max_steps: int = 10_000, encode: bool = True) -> None:
    """Raise AssertionError on the first playout that breaks a rule of the protocol;
    ``encode=False`` for params a game plays but has no features for (Hanabi beyond two
    players)."""
    params = game.rules.params() if params is None else params
    names = game.rules.feature_names(params) if encode else ()
    actions = game.rules.action_names(params)
    assert len(set(names)) == len(names), f"{game.name}: feature names repeat"
    assert len(set(actions)) == len(actions), f"{game.name}: action names repeat"
    seats = game.rules.num_players(params)
    ends: list[Any] = []
    for k in range(playouts):
        seen: list[Any] = []
        first = _playout(game, params, seed + k, max_steps, len(names), len(actions), seats,
                         seen, ends)
        again = _playout(game, params, seed + k, max_steps, len(names), len(actions), seats)
        if names and k < 10:
            _check_batch(game, params, seen, seats)
        assert first == again, f"{game.name}, playout {k}: the same seed gave two games"
        _, returns = first
        assert len(returns) == seats, f"{game.name}: {len(returns)} returns for {seats} seats"
        if game.rules.zero_sum:
            total = sum(returns)
            assert abs(total) < 1e-9, f"{game.name}, playout {k}: returns add up to {total}"
    batch = game.play.returns_batch(ends)
    one = np.array([game.rules.returns(s) for s in ends], dtype=np.float64)
    assert batch.shape == one.shape and np.array_equal(batch, one), \
        f"{game.name}: returns_batch of {len(ends)} games is not their returns one at a time"


def _check_batch(game: Game, params: Any, states: list[Any], seats: int) -> None:
    """``encode_batch`` of a playout's states, each from the seat to act and from another
    seat, is ``encode`` and ``legal_mask`` one state at a time."""
    players = [game.rules.current_player(s) for s in states]
    viewers = players + [(p + 1) % seats for p in players]
    states = states + states
    x, legal = game.play.encode_batch(states, viewers, params)
    assert x.shape[0] == legal.shape[0] == len(states), \
        f"{game.name}: encode_batch gave {x.shape[0]} states for {len(states)}"
    for i, (s, p) in enumerate(zip(states, viewers, strict=True)):
        assert np.array_equal(x[i], game.rules.encode(s, p, params)), \
            f"{game.name}: encode_batch's state {i} (seat {p}) is not its encode"
        assert np.array_equal(legal[i], legal_mask(game.rules, s, params)), \
            f"{game.name}: encode_batch's legal mask {i} is not its legal_mask"


def _playout(game: Game, params: Any, seed: int, max_steps: int, n_features: int,
             n_actions: int, seats: int, seen: list[Any] | None = None,
             ends: list[Any] | None = None) -> tuple[list[int], tuple[float, ...]]:
    rng = np.random.default_rng(seed)
    state = game.rules.new_game(rng, params)
    moves: list[int] = []
    for _ in range(max_steps):
        if game.rules.is_terminal(state):
            if ends is not None:
                ends.append(state)
            return moves, tuple(float(r) for r in game.rules.returns(state))
        if seen is not None:
            seen.append(state)
        player = game.rules.current_player(state)
        assert 0 <= player < seats, f"{game.name}: seat {player} of {seats} is to act"
        legal = list(game.rules.legal_actions(state))
        assert legal, f"{game.name}: no legal action while the game is not over"
        assert all(0 <= a < n_actions for a in legal), f"{game.name}: legal {legal}"
        if n_features:
            x = game.rules.encode(state, player, params)
            assert np.shape(x) == (n_features,), \
                f"{game.name}: encode gave {np.shape(x)} numbers for {n_features} features"
        mask = legal_mask(game.rules, state, params)
        assert mask.tolist() == [a in legal for a in range(n_actions)]
        illegal = [a for a in range(n_actions) if a not in legal]
        if illegal and len(moves) % 7 == 0:  # now and then: an illegal action must raise
            try:
                game.rules.step(state, illegal[int(rng.integers(len(illegal)))])
            except ValueError:
                pass
            else:
                raise AssertionError(f"{game.name}: an illegal action was played")
        action = int(legal[int(rng.integers(len(legal)))])
        state = game.rules.step(state, action)
        moves.append(action)
    raise AssertionError(f"{game.name}: no end after {max_steps} steps")


def check_worlds(game: Game, params: Any = None, playouts: int = 20, worlds: int = 8,
                 seed: int = 0) -> int:
    """Raise AssertionError where a world ``game.rules.sample_worlds`` gives is one its seat could
    tell from the state (`Rules.sample_worlds`): at each decision of random playouts,
    for the seat to act and each other seat, every world encodes as the state does for
    that seat, and for the seat to act it is the same decision (the same legal moves);
    and the sampler reads nothing the seat cannot see: from a world of the state, the
    same draws give the same worlds. Returns how many worlds were checked."""
    params = game.rules.params() if params is None else params
    seats = game.rules.num_players(params)
    checked = 0
    for k in range(playouts):
        rng = np.random.default_rng(seed + k)
        state = game.rules.new_game(rng, params)
        while not game.rules.is_terminal(state):
            player = game.rules.current_player(state)
            for seat in range(seats):
                seen = game.rules.encode(state, seat, params)
                for world in game.rules.sample_worlds(state, seat, worlds, rng):
                    assert np.array_equal(game.rules.encode(world, seat, params), seen), \
                        f"{game.name}: a world seat {seat} could tell from the state"
                    if seat == player:
                        assert not game.rules.is_terminal(world) and \
                            game.rules.current_player(world) == player and \
                            list(game.rules.legal_actions(world)) == \
                            list(game.rules.legal_actions(state)), \
                            f"{game.name}: a world where seat {player} has another decision"
                    checked += 1
                twin = game.rules.sample_worlds(state, seat, 1, rng)[0]
                draws = int(rng.integers(1 << 31))
                assert game.rules.sample_worlds(twin, seat, 2, np.random.default_rng(draws)) == \
                    game.rules.sample_worlds(state, seat, 2, np.random.default_rng(draws)), \
                    f"{game.name}: seat {seat}'s worlds depend on what it cannot see"
            legal = list(game.rules.legal_actions(state))
            state = game.rules.step(state, int(legal[int(rng.integers(len(legal)))]))
    return checked
