"""Leduc hold'em's rules core (`batchrl.games.Rules`): the rules of ``rules``, what a seat
sees (``encode``) and the worlds it cannot tell apart; its faces are in ``faces`` (the
exact values of ``exact``, the logs of ``logs``), the parser is ``parsers/leduc.py``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games.core import Rules
from batchrl.games.leduc import rules
from batchrl.games.leduc.rules import ACTION_NAMES, LeducState

FEATURES = ("card_J", "card_Q", "card_K", "public_J", "public_Q", "public_K", "round", "pair",
            "above_public", "seat", "to_call", "my_chips", "their_chips", "raises",
            "raises_first_round")


@dataclass(frozen=True)
class LeducParams:
    """Leduc hold'em has no options (the game of OpenSpiel and RLCard)."""


def encode(state: LeducState, seat: int) -> NDArray[np.float32]:
    """What ``seat`` sees: its card, the public card once turned (and whether it pairs
    it or is above it), the round, its seat, the chips owed, put in by each, and the
    raises of this round and of the first."""
    x = np.zeros(len(FEATURES), dtype=np.float32)
    own = state.cards[seat] // 2
    x[own] = 1
    public = rules.public_card(state)
    if public is not None:
        x[3 + public // 2] = 1
        x[7] = own == public // 2
        x[8] = own > public // 2
    x[6] = rules.round_of(state.history)
    x[9] = seat
    put = rules.contributions(state.history)
    x[10] = put[1 - seat] - put[seat]
    x[11], x[12] = put[seat], put[1 - seat]
    x[13] = rules.round_moves(state.history).count("r")
    x[14] = state.history.split("/")[0].count("r")
    return x


@dataclass(frozen=True)
class LeducHand:
    """A hand as a log gives it (what ``parsers/leduc.py`` reads)."""

    source: str
    line: int
    index: int
    states: tuple[LeducState, ...]
    actions: tuple[int, ...]
    names: tuple[str, str]


class LeducRules(Rules):
    """Leduc hold'em: six cards, two rounds, one public card."""

    name = "leduc"
    unit = "hands"
    Params = LeducParams

    def action_names(self, params: Any) -> tuple[str, ...]:
        return ACTION_NAMES

    def feature_names(self, params: Any) -> tuple[str, ...]:
        return FEATURES

    def new_game(self, rng: np.random.Generator, params: Any) -> LeducState:
        return rules.deal(rng)

    def current_player(self, state: LeducState) -> int:
        return rules.current_player(state)

    def legal_actions(self, state: LeducState) -> tuple[int, ...]:
        return rules.legal_actions(state)

    def step(self, state: LeducState, action: int) -> LeducState:
        return rules.step(state, action)

    def is_terminal(self, state: LeducState) -> bool:
        return rules.is_terminal(state)

    def returns(self, state: LeducState) -> tuple[float, float]:
        return rules.returns(state)

    def encode(self, state: LeducState, player: int, params: Any) -> NDArray[np.float32]:
        return encode(state, player)

    def banked(self, state: LeducState, seat: int) -> float:
        """Nothing: a seat's rows earn the hand's payoff at its end (`Rules.rewards`)."""
        return 0.0

    def sample_worlds(self, state: LeducState, seat: int, n: int,
                      rng: np.random.Generator) -> list[LeducState]:
        """The other seat's card, and the public card until it is turned, drawn from the
        cards ``seat`` has not seen."""
        shown = rules.round_of(state.history) > 0
        seen = {state.cards[seat], *((state.cards[2],) if shown else ())}
        unseen = np.array([c for c in range(rules.N_CARDS) if c not in seen])
        worlds = []
        for _ in range(n):
            drawn = rng.choice(unseen, 1 if shown else 2, replace=False).tolist()
            cards = list(state.cards)
            cards[1 - seat] = drawn[0]
            if not shown:
                cards[2] = drawn[1]
            worlds.append(dataclasses.replace(state, cards=(cards[0], cards[1], cards[2])))
        return worlds


RULES = LeducRules()
