"""Hold'em's rules core (`batchrl.games.Rules`): what the commands, the ingest, the model
loader and the environments play; its faces are in ``faces``.

The params are the ACPC game definition (``gamedef``: betting structure, players, stacks,
blinds, bet sizes, rounds; the ACPC heads-up limit game by default) and ``pv``, whether
the states hold the equities (the one costly feature). Limit and no-limit, two or three
players, play through the one set of rules (``rules.py``); a no-limit raise is one of
four sizes against the pot to the learner (``actions.py``), played as a legal total.
Stores and models name the game definition (e.g.
``holdem.limit.2p.reverse_blinds``, ``glassfrog.limit.2p`` or a custom file's name) and
record its params, so hold'em owns any store whose params are a game definition's.

>>> from batchrl.games.holdem.rules import RAISE
>>> params = RULES.params()
>>> s = RULES.new_game(np.random.default_rng(0), params)
>>> RULES.current_player(s), RULES.legal_actions(s)       # the small blind opens
(1, (0, 1, 2))
>>> after = RULES.step(s, RAISE)
>>> RULES.rewards(s, after)                              # its blind and its raise
(0.0, -20.0)
>>> dict(zip(RULES.feature_names(params), RULES.encode(after, 0, params).tolist()))["pot"]
30.0
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from batchrl.games.core import Rules
from batchrl.games.holdem import actions, features, gamedef, rules
from batchrl.games.holdem.gamedef import HEADS_UP_LIMIT, GameDef
from batchrl.games.holdem.replay import tokens
from batchrl.games.holdem.rules import HandState


@dataclass(frozen=True)
class HoldemParams:
    """A hold'em game: its ACPC definition (a `GameDef`, or a built-in's name or a
    ``.game`` file's path), and whether the states hold pv."""

    gamedef: GameDef = HEADS_UP_LIMIT
    pv: bool = True

    def __post_init__(self) -> None:
        given: object = self.gamedef
        if isinstance(given, str | Path):
            object.__setattr__(self, "gamedef", gamedef.resolve(str(given)))
        elif not isinstance(given, GameDef):
            raise TypeError(f"gamedef is a GameDef, a built-in's name or a .game file, not "
                            f"{given!r}")


class HoldemRules(Rules):
    """Texas hold'em as the ACPC dealer plays it (heads-up limit so far)."""

    name = "holdem"
    player_counts = tuple(range(2, 11))  # as the ACPC dealer's games and the PHH hands
    zero_sum = True
    unit = "hands"
    Params = HoldemParams

    def num_players(self, params: HoldemParams) -> int:
        return params.gamedef.num_players

    def action_names(self, params: HoldemParams) -> tuple[str, ...]:
        return actions.action_names(params.gamedef)

    def feature_names(self, params: HoldemParams) -> tuple[str, ...]:
        return features.feature_names(params.gamedef, params.pv)

    def new_game(self, rng: np.random.Generator, params: HoldemParams) -> HandState:
        return rules.new_hand(params.gamedef, rng)

    def current_player(self, state: HandState) -> int:
        return state.current

    def legal_actions(self, state: HandState) -> tuple[int, ...]:
        return actions.legal(state)

    def step(self, state: HandState, action: int) -> HandState:
        """The learner's ``action`` played: a no-limit raise bin as a legal total."""
        game = state.game
        if action == rules.FOLD or action == rules.CALL or game.is_limit or \
                state.current < 0 or not 0 <= action < len(actions.action_names(game)):
            return rules.step(state, action)  # (or the rules say what is wrong)
        return rules.step(state, *actions.concrete(state, action))

    def is_terminal(self, state: HandState) -> bool:
        return state.finished

    def returns(self, state: HandState) -> tuple[float, ...]:
        return rules.returns(state)

    def encode(self, state: HandState, player: int, params: HoldemParams
               ) -> NDArray[np.float32]:
        return features.encode(state, player, params.pv)

    def banked(self, state: HandState, seat: int) -> float:
        """Minus the chips ``seat`` has put in, its blind included, once it has acted;
        nothing before (`rewards`: a row's reward is minus what its action puts in, the
        blind counted on the seat's first, and the pot it takes on its last)."""
        spent = state.spent[seat]
        blind = min(state.game.blind[seat], state.stack[seat])
        if spent == blind and seat not in _seats_acted(state):  # more than its blind: acted
            return 0.0
        return -float(state.contributed(seat))

    def sample_worlds(self, state: HandState, seat: int, n: int,
                      rng: np.random.Generator) -> list[HandState]:
        """The other seats' hole cards and the board still to come, drawn from the cards
        ``seat`` has not seen (its own and the board shown so far are kept); the betting
        is the same, so every world is the hand ``seat`` sees."""
        game = state.game
        shown = game.board_cards_before(state.round)
        seen = {*state.hole[seat], *state.board[:shown]}
        unseen = np.array([c for c in range(game.num_suits * game.num_ranks)
                           if c not in seen])
        k = game.num_hole_cards
        others = [p for p in range(game.num_players) if p != seat]
        need = k * len(others) + len(state.board) - shown
        worlds = []
        for _ in range(n):
            drawn = rng.choice(unseen, need, replace=False).tolist()
            hole = list(state.hole)
            for i, p in enumerate(others):
                hole[p] = tuple(drawn[i * k:(i + 1) * k])
            board = (*state.board[:shown], *drawn[k * len(others):])
            worlds.append(state._replace(hole=tuple(hole), board=board))
        return worlds

    def rewards(self, before: HandState, after: HandState) -> tuple[float, ...]:
        """The store's rewards: minus the chips the seat to act puts in (its blind and ante
        counted on its first decision), and at the end each seat's share of the pot (a seat
        that never acted gets its payoff). A seat's rewards over a hand add up to its
        payoff."""
        seat = before.current
        acted = _seats_acted(before)
        out = [0.0] * len(after.spent)
        out[seat] -= after.contributed(seat) - (before.contributed(seat) if seat in acted
                                                else 0)
        if after.finished:
            acted.add(seat)
            for p, payoff in enumerate(rules.returns(after)):
                out[p] += payoff + (after.contributed(p) if p in acted else 0)
        return tuple(out)


RULES = HoldemRules()


def _seats_acted(state: HandState) -> set[int]:
    """The seats that have acted so far in ``state``'s hand (its betting replayed)."""
    replay = rules.deal(state.game, state.hole, state.board)
    seats = set()
    for action, size in (m for sequence in tokens(state.betting, state.game)
                         for m in sequence):
        seats.add(replay.current)
        replay = rules.step(replay, action, size)
    return seats
