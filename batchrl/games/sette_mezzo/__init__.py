"""Sette e mezzo against a dealer that draws to a fixed limit, solved exactly.

- ``game``: ``GAME``, the game as ``batchrl.games`` knows it.
- ``rules``: the game as pure functions over a frozen state, and the feature encoder.
- ``tree``, ``solver``: the decision states with exact card-removal probabilities,
  policy iteration to the optimal policy, and exact evaluation of any batched policy.
- ``logs``: games as JSON Lines, and a lockstep simulator (``parsers.sette_mezzo``
  reads the lines back, replaying each game through ``rules``).
- ``transitions``: logged games to store rows.
"""

from batchrl.games.sette_mezzo.game import GAME

__all__ = ["GAME"]
