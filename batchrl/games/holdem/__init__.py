"""Texas hold'em as the ACPC plays it: game definitions, rules, features; ``GAME`` is the
game as ``batchrl.games`` knows it (``game.Holdem``)."""

from batchrl.games.holdem import bots
from batchrl.games.holdem.game import GAME, Holdem, HoldemParams

bots.HOLDEM.bind(GAME)

__all__ = ["GAME", "Holdem", "HoldemParams"]
