"""Worlds a Hanabi seat cannot tell apart: its own hand and the deck, drawn from the
cards it has not seen, its hand agreeing with every hint it received (SPARTA's belief
without the blueprint's filter).

A seat sees every other hand, the fireworks and the discards; what is left (the unseen
copies) is its own hand and the deck. Each of its slots allows the identities its hints
left (``State.known``: a colour mask and a rank mask, positive and negative hints
alike). A world is a deal of the unseen physical cards: the hand drawn uniformly among
the deals that fit the hints, then the deck as the rest, shuffled.

The draw is exact: slot by slot, a copy among the unseen ones the slot allows (an
identity with the weight of its copies left), accepted with probability ``prod(Z_i) /
prod(Z0_i)``, where ``Z_i`` is how many copies slot i could take when drawn and ``Z0_i``
how many it could before any was drawn. A deal's chance of being proposed is
``prod(1 / Z_i)``, so the accepted ones are uniform.

>>> import numpy as np
>>> from batchrl.games.hanabi.rules import new_game, step
>>> s = step(new_game(np.random.default_rng(0)), 10)   # a hint of ones to seat 1
>>> w = sample(s, 1, 3, np.random.default_rng(1))
>>> [x.hands[0] == s.hands[0] and x.known == s.known and len(x.deck) == len(s.deck)
...  for x in w]
[True, True, True]
"""

from __future__ import annotations

import dataclasses

import numpy as np

from batchrl.games.hanabi.knowledge import allowed, unseen
from batchrl.games.hanabi.rules import State

MAX_TRIES = 100_000  # proposals per world before the hints are called contradictory


def sample(state: State, seat: int, n: int, rng: np.random.Generator) -> list[State]:
    """``n`` states ``seat`` cannot tell from ``state``: its hand drawn uniformly among
    the deals of the unseen cards that fit its hints, the deck the rest, shuffled."""
    left = unseen(state, seat).reshape(25).astype(np.int64)
    hand, deck = state.hands[seat], state.deck
    if int(left.sum()) != len(hand) + len(deck):
        raise ValueError(f"seat {seat} has {int(left.sum())} cards unseen for a hand of "
                         f"{len(hand)} and a deck of {len(deck)}: not a state of the rules")
    fits = allowed(state.known[seat]).reshape(-1, 25) > 0
    first = (fits * left[None, :]).sum(axis=1).astype(np.float64)  # Z0 of each slot
    out = []
    for _ in range(n):
        for _ in range(MAX_TRIES):
            pool = left.copy()
            drawn: list[int] = []
            accept = 1.0
            for i in range(len(hand)):
                weight = fits[i] * pool
                total = int(weight.sum())
                if total == 0:
                    break
                c = int(rng.choice(25, p=weight / total))
                drawn.append(c)
                pool[c] -= 1
                accept *= total / first[i]
            if len(drawn) == len(hand) and rng.random() < accept:
                break
        else:
            raise ValueError(f"no deal of the unseen cards fits seat {seat}'s hints in "
                             f"{MAX_TRIES:,} draws")
        rest = np.repeat(np.arange(25), pool)
        rng.shuffle(rest)
        hands = list(state.hands)
        hands[seat] = tuple(drawn)
        out.append(dataclasses.replace(state, hands=tuple(hands),
                                       deck=tuple(int(c) for c in rest)))
    return out
