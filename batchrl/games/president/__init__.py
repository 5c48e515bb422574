"""President, the fifth seed game: 2, 4, 5 or 8 players shed a Spanish deck (see
``rules``); learned offline from logs of ``random`` and ``rule`` play."""

from batchrl.games.president.game import GAME

__all__ = ["GAME"]
