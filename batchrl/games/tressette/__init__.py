"""Tressette: the seed project's rules, its heuristic and our own bots, and simulation;
``GAME`` is the game as ``batchrl.games`` knows it (``game.Tressette``)."""

from batchrl.games.tressette import evaluate
from batchrl.games.tressette.game import GAME, Hand, Tressette, TressetteParams

evaluate.TRESSETTE.bind(GAME)

__all__ = ["GAME", "Hand", "Tressette", "TressetteParams"]
