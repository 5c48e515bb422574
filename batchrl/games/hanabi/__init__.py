"""Hanabi: rules for 2-5 players, the knowledge model and the report's state, bots, the
report's JSON logs, store rows, and its views of them (the colour order, the convention's facts).

``GAME`` is the game as ``batchrl.games`` knows it.
"""

from batchrl.games.hanabi import bots
from batchrl.games.hanabi.game import GAME

bots.HANABI.bind(GAME)

__all__ = ["GAME"]
