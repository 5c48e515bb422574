"""Values worked out once per (game, betting so far): a hand's states, features and legal
moves follow from its game and its betting alone (`rules.deal` and `rules.step` make
every chip, stack and raise from them; only the cards are ever replaced), so a search that
asks for the same few bettings in many worlds, and a log whose hands share their first
actions, work each out once.

Kept by the game's id, the game held beside, so that no id is reused while its values are
kept; emptied whole when full (the values are cheap to work out again).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

from batchrl.games.holdem.gamedef import GameDef

V = TypeVar("V")


class ByBetting(Generic[V]):
    """A bounded memory of ``V`` by (game, key), the key naming a betting (and a seat, an
    action: whatever else the value depends on)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._values: dict[tuple[int, Hashable], V] = {}
        self._games: dict[int, GameDef] = {}

    def get(self, game: GameDef, key: Hashable) -> V | None:
        return self._values.get((id(game), key))

    def put(self, game: GameDef, key: Hashable, value: V) -> V:
        if len(self._values) >= self.limit:
            self.clear()
        self._games[id(game)] = game
        self._values[(id(game), key)] = value
        return value

    def clear(self) -> None:
        self._values.clear()
        self._games.clear()

    def __len__(self) -> int:
        return len(self._values)
