"""Values worked out once per (game, betting so far): a hand's states, features and legal
moves follow from its game and its betting alone (`rules.deal` and `rules.step` make
every chip, stack and raise from them; only the cards are ever replaced), so a search that
asks for the same few bettings in many worlds, and a log whose hands share their first
actions, work each out once.

Kept by the game's id, each value beside its game: the game is held while its values are
(so its id is not reused meanwhile), and a value is given back only to that same game
(so no other game ever gets it, whatever threads do between a lookup and a store).
Emptied whole when full: the values are cheap to work out again.
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
        self._values: dict[tuple[int, Hashable], tuple[GameDef, V]] = {}

    def get(self, game: GameDef, key: Hashable) -> V | None:
        entry = self._values.get((id(game), key))
        return entry[1] if entry is not None and entry[0] is game else None

    def put(self, game: GameDef, key: Hashable, value: V) -> V:
        if len(self._values) >= self.limit:
            self._values.clear()
        self._values[(id(game), key)] = (game, value)
        return value

    def clear(self) -> None:
        self._values.clear()

    def __len__(self) -> int:
        return len(self._values)
