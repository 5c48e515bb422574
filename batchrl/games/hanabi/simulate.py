"""Many two-player Hanabi games played in lockstep, every state encoded before its move.

``play`` deals ``games`` games from one ``numpy.random.Generator`` and advances
them ``batch`` at a time: at each step every unfinished game of the batch makes
one move, and the states before those moves are encoded together by
``knowledge.encode_many`` (the 195 numbers of the seat to act). The moves are
random legal ones drawn from the same generator, or, with ``bots``, each
seat's bot's ``act(state)`` (seat 0 plays ``bots[0]``); bots are asked one
state at a time, only the encoding is batched. The games are played by
``rules.step``.

The rows come game by game, each game's moves in order, so row i's next state
is row i + 1's unless row i is its game's last move. With random moves the
games depend on ``batch`` as well as on the generator (the deals and the
choices are drawn batch by batch).

>>> e = play(100, np.random.default_rng(0), batch=32)
>>> e.features.shape == (len(e), 195), e.scores.shape, bool((np.diff(e.game) >= 0).all())
(True, (100,), True)
>>> from batchrl.games.hanabi.bots import ConventionBot
>>> c = play(10, np.random.default_rng(0), bots=(ConventionBot(), ConventionBot()))
>>> bool(c.scores.mean() > e.scores.mean() + 5)          # random play burns its fuses
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from batchrl.games.hanabi.knowledge import encode_many
from batchrl.games.hanabi.rules import State, legal_actions, new_game, step


class Bot(Protocol):
    """A player: the action of the seat to act."""

    def act(self, state: State) -> int: ...


@dataclass(frozen=True)
class Episodes:
    """The moves of many games, row by row: ``features[i]`` (195 numbers, the view of
    the seat to act) before move ``actions[i]`` of game ``game[i]``; ``scores[g]``
    is game g's final score (cards played, ``State.score_played``)."""

    features: NDArray[np.float32]
    actions: NDArray[np.int64]
    game: NDArray[np.int64]
    scores: NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.actions)


def _random_moves(states: Sequence[State], rng: np.random.Generator) -> list[int]:
    legal = [legal_actions(s) for s in states]
    picks = rng.integers(np.array([len(a) for a in legal])).tolist()
    return [a[i] for a, i in zip(legal, picks, strict=True)]


def play(games: int, rng: np.random.Generator, bots: tuple[Bot, Bot] | None = None,
         batch: int = 512) -> Episodes:
    """Play ``games`` two-player games, ``batch`` at a time: random legal moves, or
    ``bots`` (one per seat)."""
    if bots is not None and len(bots) != 2:
        raise ValueError(f"two bots, one per seat, not {len(bots)}")
    if batch < 1:
        raise ValueError(f"batch must be at least 1, not {batch}")
    features: list[NDArray[np.float32]] = []
    actions: list[int] = []
    game: list[int] = []
    scores = np.zeros(games, dtype=np.int64)
    for lo in range(0, games, batch):
        ids = list(range(lo, min(games, lo + batch)))
        states = [new_game(rng, 2) for _ in ids]
        while states:
            features.append(encode_many(states, [s.current for s in states]))
            moves = (_random_moves(states, rng) if bots is None
                     else [bots[s.current].act(s) for s in states])
            actions += moves
            game += ids
            live: list[int] = []
            states_after: list[State] = []
            for g, s, a in zip(ids, states, moves, strict=True):
                nxt = step(s, a)
                if nxt.over:
                    scores[g] = nxt.score_played
                else:
                    live.append(g)
                    states_after.append(nxt)
            ids, states = live, states_after
    order = np.argsort(np.array(game, dtype=np.int64), kind="stable")
    stacked = np.concatenate(features) if features else np.zeros((0, 195), np.float32)
    return Episodes(features=stacked[order], actions=np.array(actions, dtype=np.int64)[order],
                    game=np.array(game, dtype=np.int64)[order], scores=scores)
