"""Tressette: the seed project's rules, its heuristic and our own bots, and simulation."""
