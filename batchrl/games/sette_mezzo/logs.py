"""Played games as JSON Lines, one game a line, and a simulator that plays them.

A line names the cards by value (0.5 for a face) in the order they were drawn, the
player's actions as letters (``h`` hit, ``s`` stick) and the player's reward::

    {"seed": 7, "limit": 5, "player": [3, 0.5], "opponent": [3, 1, 7], "actions": "hs", "reward": 1}

The cards, not the seed, are the record: ``parsers.sette_mezzo`` replays them through
the rules. The seed says where the deal came from (``new_game(default_rng(seed))``),
but numpy does not promise the same shuffle from a seed across its versions.

>>> games = play("random", 3, np.random.default_rng(0))
>>> [len(g.actions) >= 1 for g in games], all(g == Game.from_json(g.to_json()) for g in games)
([True, True, True], True)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from batchrl.games.jsonlines import game_object
from batchrl.games.sette_mezzo.rules import (
    ACTION_NAMES,
    DEFAULT_LIMIT,
    VALUES,
    GameState,
    deal,
    encode,
    is_terminal,
    kind_of,
    new_game,
    returns,
    step,
)
from batchrl.games.sette_mezzo.solver import solve
from batchrl.records import MAX_SEED, MIN_SEED, json_int, json_number, shown

ACTION_CHARS = "sh"  # indexed by action: 0 stick, 1 hit
# The numbers a line may hold, with room to spare: the rules check them further (a limit
# from 0.5 to 7.5, a reward the rules give).
MAX_NUMBER = 1e6
Policy = str | Callable[[NDArray[np.float32]], ArrayLike]


class ReplayError(ValueError):
    """A logged game that the rules do not play out as logged."""


@dataclass(frozen=True, slots=True)
class Game:
    """One finished game as a log records it (cards as kinds: 0 a face, 1..7 the pips)."""

    seed: int | None
    limit: float
    player: tuple[int, ...]  # in the order drawn
    opponent: tuple[int, ...]  # the up card, then the opponent's draws
    actions: tuple[int, ...]
    reward: float

    def to_json(self) -> str:
        return json.dumps({
            "seed": self.seed, "limit": _number(self.limit),
            "player": [_number(VALUES[k]) for k in self.player],
            "opponent": [_number(VALUES[k]) for k in self.opponent],
            "actions": "".join(ACTION_CHARS[a] for a in self.actions),
            "reward": _number(self.reward)})

    @classmethod
    def from_json(cls, text: str) -> Game:
        """The game on a log line; raises ``ValueError`` naming the field that is wrong."""
        data = game_object(text, ("limit", "player", "opponent", "actions", "reward"))
        seed = data.get("seed")
        if seed is not None:
            seed = json_int(seed, "seed", MIN_SEED, MAX_SEED)
        actions = data["actions"]
        if not isinstance(actions, str) or set(actions) - set(ACTION_CHARS):
            raise ValueError(f"actions {shown(actions)} must be a string of 'h' (hit) and 's' "
                             f"(stick)")
        return cls(seed, _real(data["limit"], "limit"), _cards(data["player"], "player"),
                   _cards(data["opponent"], "opponent"),
                   tuple(ACTION_CHARS.index(c) for c in actions),
                   _real(data["reward"], "reward"))

    def replay(self) -> list[GameState]:
        """The state at each decision, then the final state; ``ReplayError`` if inconsistent.

        The deck is the logged cards in the order the rules draw them: the player's
        first card, the opponent's up card, the player's hits, the opponent's draws.
        """
        if not self.player or not self.opponent:
            raise ReplayError("each side needs at least its first card")
        states: list[GameState] = []
        try:
            states.append(deal(self.player[0], self.opponent[0],
                               (*self.player[1:], *self.opponent[1:]), self.limit))
            for a in self.actions:
                states.append(step(states[-1], a))
        except ValueError as e:  # IllegalAction included
            where = f"after {len(states) - 1} of the actions" if states else "at the deal"
            raise ReplayError(f"{where}: {e}") from None
        final = states[-1]
        if not is_terminal(final):
            raise ReplayError(f"the game is not over after the logged actions "
                              f"({_letters(self.actions)})")
        if final.player != self.player or final.opponent != self.opponent:
            raise ReplayError(f"the actions ({_letters(self.actions)}) give the player "
                              f"{_values(final.player)} and the opponent "
                              f"{_values(final.opponent)}; the log says {_values(self.player)} "
                              f"and {_values(self.opponent)}")
        if (got := returns(final)) != self.reward:
            raise ReplayError(f"the rules give the player {got:g}; the log says {self.reward:g}")
        return states


def play(policy: Policy, games: int, rng: np.random.Generator,
         limit: float = DEFAULT_LIMIT) -> list[Game]:
    """Play ``games`` games in lockstep: the policy sees one batch of states per round.

    ``policy`` is ``"random"`` (hit or stick, 50/50, drawn from ``rng``), ``"optimal"``
    (the solver's policy) or a callable from encoded states ``(n, n_features)`` to
    actions ``(n,)``. Each game is dealt from its own seed, drawn from ``rng``.
    """
    choose = _chooser(policy, rng, limit)
    seeds = [int(s) for s in rng.integers(2**63 - 1, size=games)]
    states = [new_game(np.random.default_rng(s), limit) for s in seeds]
    actions: list[list[int]] = [[] for _ in range(games)]
    live = list(range(games))
    while live:
        chosen = np.asarray(choose(np.stack([encode(states[i]) for i in live])))
        if chosen.shape != (len(live),) or not np.isin(chosen, (0, 1)).all():
            raise ValueError(f"the policy must return one action, 0 (stick) or 1 (hit), per "
                             f"state: it returned shape {chosen.shape} for {len(live)} states")
        for i, a in zip(live, chosen.tolist(), strict=True):
            states[i] = step(states[i], int(a))
            actions[i].append(int(a))
        live = [i for i in live if not is_terminal(states[i])]
    return [Game(seed, float(limit), s.player, s.opponent, tuple(a), returns(s))
            for seed, s, a in zip(seeds, states, actions, strict=True)]


def write_log(path: str | Path, games: Iterable[Game]) -> int:
    """Write ``games`` as JSON Lines; returns how many."""
    lines = [g.to_json() for g in games]
    Path(path).write_text("".join(line + "\n" for line in lines))
    return len(lines)


def _chooser(policy: Policy, rng: np.random.Generator,
             limit: float) -> Callable[[NDArray[np.float32]], ArrayLike]:
    if callable(policy):
        return policy
    if policy == "random":
        return lambda x: rng.integers(0, 2, size=len(x))
    if policy == "optimal":
        return solve(limit).choose
    raise ValueError(f"policy {policy!r}: use 'random', 'optimal' or a callable "
                     f"over encoded states returning {'/'.join(ACTION_NAMES)} actions")


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else float(value)


def _real(value: Any, name: str) -> float:
    return json_number(value, name, -MAX_NUMBER, MAX_NUMBER)


def _cards(value: Any, name: str) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise ValueError(f"{name} {shown(value)} is not a list of card values")
    return tuple(kind_of(_real(v, f"{name} card")) for v in value)


def _values(cards: Sequence[int]) -> list[float | int]:
    return [_number(VALUES[k]) for k in cards]


def _letters(actions: Sequence[int]) -> str:
    return "".join(ACTION_CHARS[a] for a in actions) or "none"
