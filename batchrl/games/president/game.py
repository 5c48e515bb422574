"""President's rules core (`batchrl.games.Rules`): 2, 4, 5 or 8 seats, a game an episode,
the rules of ``rules``, the features of ``features``; its faces are in ``faces``.

A state of the protocol is a `rules.State` (it carries its rules: the players, whether a
pass is final, the reward). ``rewards`` are the seed's time penalty (or the placement
reward) of the decision just made, to the seat that made it; ``returns`` are each seat's
sum of them.

>>> game = RULES
>>> params = game.params(players=2)
>>> s = game.new_game(np.random.default_rng(0), params)
>>> while not game.is_terminal(s):
...     s = game.step(s, game.legal_actions(s)[-1])
>>> s.order, game.returns(s)
((1, 0), (-15.0, -11.0))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games import core
from batchrl.games.president import features
from batchrl.games.president.rules import (
    ACTION_NAMES,
    CARDS,
    N_RANKS,
    N_SUITS,
    PLAYER_COUNTS,
    TWO_OF_GOLDS,
    Rules,
    State,
    deal,
    is_terminal,
    legal_actions,
    step,
)


@dataclass(frozen=True, slots=True)
class PresidentParams:
    """``players``: 2, 4, 5 or 8; ``pass_locks``: a pass is final for the round (the
    common rule, the default, lets a player who passed play again while the round goes
    on); ``reward``: ``"time"`` (the seed's) or ``"placement"``; ``match``: games per
    match, with the servant's and the president's exchange between them (1: single
    games)."""

    players: int = 4
    pass_locks: bool = False
    reward: str = "time"
    match: int = 1

    def __post_init__(self) -> None:
        self.rules  # noqa: B018  (raises on a bad value)

    @property
    def rules(self) -> Rules:
        return Rules(self.players, self.pass_locks, self.reward, self.match)

    @property
    def won_or_lost(self) -> bool:
        """Two players, single games, the placement reward: a game's return is 1 for
        first place and 0 for last, nothing else."""
        return self.players == 2 and self.match == 1 and self.reward == "placement"


class PresidentRules(core.Rules):
    """President's rules: a `rules.State` carries its own rules (players, pass rule, reward)."""

    name = "president"
    player_counts = PLAYER_COUNTS
    zero_sum = False
    unit = "games"
    Params = PresidentParams

    def num_players(self, params: Any) -> int:
        return int(params.players)

    def action_names(self, params: Any) -> tuple[str, ...]:
        return ACTION_NAMES

    def feature_names(self, params: Any) -> tuple[str, ...]:
        return features.feature_names(params.players, params.match)

    def new_game(self, rng: np.random.Generator, params: Any) -> State:
        return deal(rng, params.rules)

    def current_player(self, state: State) -> int:
        return state.turn

    def legal_actions(self, state: State) -> tuple[int, ...]:
        return legal_actions(state)

    def step(self, state: State, action: int) -> State:
        return step(state, action)

    def is_terminal(self, state: State) -> bool:
        return is_terminal(state)

    def returns(self, state: State) -> tuple[float, ...]:
        return state.scores

    def rewards(self, before: State, after: State) -> tuple[float, ...] | None:
        return tuple(a - b for a, b in zip(after.scores, before.scores, strict=True))

    def encode(self, state: State, player: int, params: Any) -> NDArray[np.float32]:
        return features.encode(state, player)

    def sample_worlds(self, state: State, seat: int, n: int,
                      rng: np.random.Generator) -> list[State]:
        """The other hands drawn uniformly from the cards ``seat`` has not seen (a pass
        says nothing: a seat may pass holding a set that beats the table), each hand as
        many cards as it holds; before the game's first play the seat to act holds the
        2 of golds. A match's deals to come are shuffled anew."""
        others = [p for p in range(len(state.hands)) if p != seat]
        unseen = np.repeat(np.arange(N_RANKS), [
            N_SUITS - state.played[r] - state.hands[seat][r] for r in range(N_RANKS)])
        sizes = [sum(state.hands[p]) for p in others]
        fixed = [0] * len(others)  # the 2 of golds, where its holder is known
        if state.first and not state.exchange and state.turn != seat and state.turn >= 0:
            at = others.index(state.turn)
            fixed[at] = 1
            unseen = np.delete(unseen, int(np.flatnonzero(unseen == TWO_OF_GOLDS // N_SUITS)[0]))
        worlds = []
        for _ in range(n):
            order = rng.permutation(unseen)
            hands = list(state.hands)
            start = 0
            for i, p in enumerate(others):
                take = sizes[i] - fixed[i]
                counts = np.bincount(order[start:start + take], minlength=N_RANKS)
                counts[TWO_OF_GOLDS // N_SUITS] += fixed[i]
                hands[p] = tuple(int(c) for c in counts)
                start += take
            upcoming = tuple(
                tuple(tuple(int(c) for c in deck[k * (CARDS // len(hands)):
                                                 (k + 1) * (CARDS // len(hands))])
                      for k in range(len(hands)))
                for deck in (rng.permutation(CARDS) for _ in state.upcoming))
            dealt = state.dealt
            if state.exchange:  # the exchange deals the game's hands again from ``dealt``
                dealt = _dealt_as(state.dealt, hands, seat, rng)
            worlds.append(dataclasses.replace(state, hands=tuple(hands), upcoming=upcoming,
                                              dealt=dealt))
        return worlds


RULES = PresidentRules()




def _dealt_as(dealt: tuple[tuple[int, ...], ...], hands: Sequence[tuple[int, ...]], seat: int,
              rng: np.random.Generator) -> tuple[tuple[int, ...], ...]:
    """``dealt`` with every seat but ``seat`` holding card ids of the ranks ``hands`` count
    for it, drawn among the ids ``seat`` was not dealt."""
    mine = set(dealt[seat])
    free = {r: [int(c) for c in rng.permutation([r * N_SUITS + k for k in range(N_SUITS)])
                if c not in mine] for r in range(N_RANKS)}
    out = []
    for p, counts in enumerate(hands):
        if p == seat:
            out.append(dealt[seat])
            continue
        out.append(tuple(sorted(free[r].pop() for r in range(N_RANKS)
                                for _ in range(counts[r]))))
    return tuple(out)
