"""Bots that choose actions from a state; randomness only from the given generator."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from batchrl.games.holdem.gamedef import GameDef
from batchrl.games.holdem.rules import (
    CALL,
    FOLD,
    RAISE,
    HandState,
    legal_actions,
    new_hand,
    returns,
    step,
)


def random_action(state: HandState, rng: np.random.Generator,
                  fold: float = 0.1, call: float = 0.5) -> int:
    """The thesis's random player: 10% fold, 50% call, the rest (40%) raise.

    Where a choice is illegal its probability goes to calling: a fold with
    nothing to call is a check (the ACPC dealer would refuse the fold), and a
    raise at the cap is a call.
    """
    legal = legal_actions(state)
    u = rng.random()
    if u < fold:
        choice = FOLD
    elif u < fold + call:
        choice = CALL
    else:
        choice = RAISE
    return choice if choice in legal else CALL


def random_match(
    game: GameDef, hands: int, rng: np.random.Generator
) -> Iterator[tuple[HandState, tuple[float, ...]]]:
    """Finished hands of two random players, with their payoffs."""
    for _ in range(hands):
        state = new_hand(game, rng)
        while not state.finished:
            state = step(state, random_action(state, rng))
        yield state, returns(state)
