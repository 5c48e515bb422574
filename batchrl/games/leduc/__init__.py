"""Leduc hold'em: the standard small poker game, with exact values of any policy and an
exact best response (``exact``)."""

from batchrl.games.leduc.game import GAME

__all__ = ["GAME"]
