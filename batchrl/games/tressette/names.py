"""What Tressette's rows and moves are called and what a card earns, from the rules alone:
the features' and the cards' names, as dealt or in canonical suits (``symmetry``), the
reward models (``REWARDS``) and the seed's per-card shaping. The rules core
(``game``) and the store's rows (``transitions``) both read them.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from batchrl.games.tressette.features import Tracker, feature_names
from batchrl.games.tressette.rules import ACE, THREE, TWO, card_name
from batchrl.games.tressette.symmetry import canonical_name, canonical_names

REWARDS = ("points", "shaped")
SUIT_ORDERS = ("dealt", "canonical")
ACTION_NAMES = tuple(card_name(c) for c in range(40))
CANONICAL_ACTION_NAMES = tuple(canonical_name(c) for c in range(40))


def check_options(reward: str, suits: str) -> None:
    """``ValueError`` for an unknown reward or suit order."""
    if reward not in REWARDS:
        raise ValueError(f"reward {reward!r}: want one of {', '.join(REWARDS)}")
    if suits not in SUIT_ORDERS:
        raise ValueError(f"suits {suits!r}: want one of {', '.join(SUIT_ORDERS)}")


_NAMES_BY_SUITS = {"dealt": (feature_names(), ACTION_NAMES),
                   "canonical": (canonical_names(), CANONICAL_ACTION_NAMES)}


def names(suits: str = "dealt") -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The features' and the cards' names: as dealt, or in canonical suits
    (``symmetry``: ``hand_Aa`` is the ace of suit ``a``)."""
    return _NAMES_BY_SUITS["canonical" if suits == "canonical" else "dealt"]


def _shaping(card: NDArray[np.int64]) -> NDArray[np.float64]:
    rank = card % 10
    return np.where(rank == ACE, -0.2, np.where((rank == TWO) | (rank == THREE), -0.1, 0.05))


def shaped_rewards(cards: NDArray[np.int64], team: NDArray[np.int64],
                   high_before: NDArray[np.int64], after: Tracker,
                   active: NDArray[np.bool_]) -> NDArray[np.float64]:
    """The seed's per-card reward of the card each hand's seat (of ``team``) just played
    (``after``: the trackers once it is played; ``high_before``: the aces, 2s and 3s its
    team had taken before it), 0 where not ``active``."""
    closed = active & (after.position == 0)
    took = after.last_winner % 2 == team
    gained = after.high_taken[np.arange(len(after)), team] - high_before
    out: NDArray[np.float64] = np.where(active, _shaping(cards), 0.0) + np.where(
        closed, np.where(took, 0.5, -0.5) + 0.3 * gained, 0.0)
    return out
