"""A game's rules core: its facts and its rules, as pure functions over an immutable state.

Everything else a game gives (its logs and store rows, its players and reports, the
settings it recommends to learners, its benchmark and its command-line options) is a
face beside the core (`batchrl.games.base`), each read by its own layer. The core
imports nothing of batchrl's but the registry's dataclass helper: a game's rules stand
below the store, the policies, the learners and the command line, and anything can play
them.

A `Rules` declares fixed facts (``name``, ``player_counts``, ``zero_sum``, ``teams``,
``unit``, its ``Params`` dataclass) and gives the rules:

- ``new_game(rng, params)``: a fresh game, dealt from ``rng`` (the only randomness);
- ``current_player(s)``: the seat to act (-1 once the game is over);
- ``legal_actions(s)``: the legal actions, as indices into ``action_names(params)``;
- ``step(s, a)``: the state after the seat to act plays ``a``; an illegal ``a`` raises;
- ``is_terminal(s)``, ``returns(s)`` (one value per seat, always) and ``rewards``;
- ``encode(s, player, params)``: what ``player`` sees, named by ``feature_names(params)``;
- what search at decision time needs of the rules: ``sample_worlds`` and ``banked``.

>>> class Coin(Rules):
...     name = "coin"
...     player_counts = (1,)
...     def action_names(self, params): return ("heads", "tails")
>>> can(Coin(), "banked"), legal_mask.__name__
(False, 'legal_mask')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from batchrl.registry import make_dataclass_of


class GameError(ValueError):
    """A request a game cannot do as asked (an unknown player, a bad option, a capability
    it lacks); the message says what exists instead."""


class Rules:
    """One game's facts and rules (20 members at most: what every other face plays).

    Subclasses set the class attributes and override the methods; ``sample_worlds`` and
    ``banked`` are capabilities a game may lack (`can`). ``Params`` is a frozen dataclass
    of the game's options whose defaults are the usual game.
    """

    name: ClassVar[str]
    player_counts: ClassVar[tuple[int, ...]] = (2,)
    zero_sum: ClassVar[bool] = True
    teams: ClassVar[tuple[tuple[int, ...], ...]] = ()  # seats that share a result
    unit: ClassVar[str] = "games"  # what one episode is called ("hands" in card games)
    Params: ClassVar[type] = type(None)

    def params(self, **values: Any) -> Any:
        """The game's params with ``values`` set; `GameError` names the valid fields."""
        return make_dataclass_of(self.Params, values, self.name, "option", GameError)

    def num_players(self, params: Any) -> int:
        """How many seats a game of ``params`` has."""
        return self.player_counts[0]

    def action_names(self, params: Any) -> tuple[str, ...]:
        """Every action of a game of ``params``, by index."""
        raise NotImplementedError

    def feature_names(self, params: Any) -> tuple[str, ...]:
        """What ``encode`` gives, by position."""
        raise NotImplementedError

    def new_game(self, rng: np.random.Generator, params: Any) -> Any:
        """A fresh game.

        Args:
            rng: the only randomness: the deal, and every chance event after it.
            params: the game's params (`params`).

        Returns:
            The first state, immutable.
        """
        raise NotImplementedError

    def current_player(self, state: Any) -> int:
        """The seat to act in ``state``; -1 once the game is over."""
        raise NotImplementedError

    def legal_actions(self, state: Any) -> Sequence[int]:
        """The legal actions in ``state``, as indices into ``action_names(params)``."""
        raise NotImplementedError

    def step(self, state: Any, action: int) -> Any:
        """The state after the seat to act plays a move.

        Args:
            state: a state where a seat is to act.
            action: one of ``legal_actions(state)``.

        Returns:
            The next state; ``state`` is left as it was.

        Raises:
            ValueError: an illegal action (never repaired).
        """
        raise NotImplementedError

    def is_terminal(self, state: Any) -> bool:
        """Whether the game is over."""
        raise NotImplementedError

    def returns(self, state: Any) -> tuple[float, ...]:
        """What each seat has won so far, one value per seat (its final result once the
        game is over)."""
        raise NotImplementedError

    def rewards(self, before: Any, after: Any) -> tuple[float, ...] | None:
        """What each seat earns from one step (``before`` to ``after``), the game's
        per-decision reward; None for nothing. By default nothing until the end, then
        ``returns``."""
        return self.returns(after) if self.is_terminal(after) else None

    def encode(self, state: Any, player: int, params: Any) -> NDArray[np.float32]:
        """What a seat sees: the store's features.

        Args:
            state: any state of the game.
            player: the seat whose view it is.
            params: the game's params.

        Returns:
            (len(feature_names(params)),) float32, the row a store holds for it.
        """
        raise NotImplementedError

    def sample_worlds(self, state: Any, seat: int, n: int,
                      rng: np.random.Generator) -> list[Any]:
        """``n`` full states that ``seat`` cannot tell from ``state``: everything it has
        observed is the same (``encode(world, seat)`` equals ``encode(state, seat)``),
        the rest (the cards it cannot see) drawn uniformly among what is consistent with
        it, from ``rng``. What search at decision time (`batchrl.games.search`) plays
        out; a game without it cannot be searched."""
        raise GameError(f"{self.name} cannot sample the worlds a seat cannot tell apart")

    def banked(self, state: Any, seat: int) -> float:
        """What ``seat``'s store rows before ``state`` earned, their rewards added up: a
        learned value of ``state`` (what its rows from there on will earn) plus this is
        the seat's expected return (`returns`). Where a search to a depth
        (``search+depth=1:...``) adds the blueprint's value at its leaves; a game whose
        rewards all come at the end banks 0. A game without it cannot be searched to a
        depth."""
        raise GameError(f"{self.name} cannot be searched to a depth: it does not say what "
                        "a seat's rows have earned before a state (Rules.banked)")

    def __repr__(self) -> str:
        return f"<Rules {self.name}>"


def legal_mask(rules: Rules, state: Any, params: Any) -> NDArray[np.bool_]:
    """``rules.legal_actions(state)`` as a mask over ``rules.action_names(params)``."""
    mask = np.zeros(len(rules.action_names(params)), dtype=bool)
    mask[list(rules.legal_actions(state))] = True
    return mask


def can(face: object, capability: str) -> bool:
    """Whether ``face`` (a game's `Rules` or one of its faces) overrides ``capability``,
    a method its protocol gives a default that refuses (``"sample_worlds"``, ``"solve"``).
    """
    owners = [c for c in type(face).__mro__ if capability in vars(c)]
    if not owners:
        raise AttributeError(f"{type(face).__name__} has no {capability!r}")
    return owners[0] is not owners[-1]
