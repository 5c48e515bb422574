"""What Hanabi's states and moves are called: the stored features (the report's 195
numbers and 15 public hint facts with two players, `observation`'s with more) and the
moves (each hint once per target with more than two)."""

from __future__ import annotations

from batchrl.games.hanabi import knowledge
from batchrl.games.hanabi.observation import feature_names as of_more
from batchrl.games.hanabi.rules import COLOURS

# the report's 195 numbers first (what its network reads), then the public hint facts
FEATURE_NAMES = (*knowledge.feature_names(), *knowledge.HINT_FEATURES)
ACTION_NAMES = (*(f"play_{i}" for i in range(5)), *(f"discard_{i}" for i in range(5)),
                *(f"hint_value_{r}" for r in range(1, 6)), *(f"hint_{c}" for c in COLOURS))


def feature_names(players: int = 2) -> tuple[str, ...]:
    """The state's names: the report's 210 for two players, else `observation`'s."""
    return FEATURE_NAMES if players == 2 else of_more(players)


def action_names(players: int = 2) -> tuple[str, ...]:
    """The moves' names: the report's 20 for two players; with more, each hint once per
    target, ``+1_…`` the next seat."""
    if players == 2:
        return ACTION_NAMES
    kinds = [f"play_{i}" for i in range(5)] + [f"discard_{i}" for i in range(5)]
    for offset in range(1, players):
        kinds += [f"+{offset}_hint_value_{r}" for r in range(1, 6)]
        kinds += [f"+{offset}_hint_{c}" for c in COLOURS]
    return tuple(kinds)
