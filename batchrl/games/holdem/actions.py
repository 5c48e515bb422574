"""The learner's actions: the rules' moves, and no-limit raises binned by size.

A limit game's moves are the learner's actions: fold, call, raise. A no-limit raise
names any total from the minimum raise to the stack, too many actions to learn one by
one, so the rows and the players see it abstracted, by its size against the pot: the
chips it adds over a call, divided by the pot after that call (a *pot-sized raise* is 1).

| action | a raise of | played as |
|---|---|---|
| ``raise_half`` | up to 0.55 pot | half the pot |
| ``raise_pot`` | up to 1.1 pots | the pot |
| ``raise_2pot`` | up to 2.2 pots | twice the pot |
| ``raise_allin`` | more, or all the stack | all-in |

The bins come from the real logs' sizes (``../shared/data/acpc``, measured with the
rules): DeepStack raises ½, ¾, 1 and 2 pots (its abstraction; 91% of its pre-flop
raises and 93–98% after are at most a pot, 96–99% at most two), the professionals
against it mostly the same sizes; the ACPC bots' logs are split between small raises
(a quarter pot or less after the flop) and shoves of 20 to 100 pots. So the edges sit
just above the field's usual sizes (½, 1, 2 pots; ¾ falls in the pot bin), with room
for the integer rounding of a raise to chips, and everything larger is the all-in bin,
which is also where a raise of the whole stack goes whatever its size against the pot.
The exact total stays in the store's ``raise_to`` column.

A player's abstract raise becomes a legal total by ``concrete``: the bin's size,
raised to the minimum raise where it is below it, and all-in where it reaches the
stack.

>>> from batchrl.games.holdem.gamedef import HEADS_UP_NOLIMIT
>>> from batchrl.games.holdem.rules import deal
>>> s = deal(HEADS_UP_NOLIMIT, ((0, 1), (2, 3)), (4, 5, 6, 7, 8))
>>> [concrete(s, a) for a in range(6)]            # the small blind's first decision
[(0, 0), (1, 0), (2, 200), (2, 300), (2, 500), (2, 20000)]
>>> action_names(HEADS_UP_NOLIMIT)[abstract(s, 2, 300)], abstract(s, 2, 20000)
('raise_pot', 5)
"""

from __future__ import annotations

from typing import Final

from batchrl.games.holdem.gamedef import GameDef
from batchrl.games.holdem.memo import ByBetting
from batchrl.games.holdem.rules import (
    ACTION_NAMES,
    CALL,
    FOLD,
    RAISE,
    HandState,
    raise_bounds,
)

NOLIMIT_NAMES: Final = ("fold", "call", "raise_half", "raise_pot", "raise_2pot", "raise_allin")
# the largest pot fraction of each bin but the last, and the size each bin is played at
EDGES: Final = (0.55, 1.1, 2.2)
SIZES: Final = (0.5, 1.0, 2.0)
FIRST_RAISE: Final = 2  # the first raise action; the all-in bin is the last


def action_names(game: GameDef) -> tuple[str, ...]:
    return ACTION_NAMES if game.is_limit else NOLIMIT_NAMES


def pot_fraction(state: HandState, to: int) -> float:
    """A raise to ``to`` by the seat to act, in pots: the chips over a call divided by the
    pot after the call."""
    seat = state.current
    return (to - state.max_spent) / (state.pot + state.max_spent - state.spent[seat])


def abstract(state: HandState, action: int, size: int = 0) -> int:
    """The learner's action for the move (``action``, ``size``) in ``state``."""
    if action != RAISE or state.game.is_limit:
        return action
    if size >= state.stack[state.current]:
        return len(NOLIMIT_NAMES) - 1
    fraction = pot_fraction(state, size)
    for k, edge in enumerate(EDGES):
        if fraction <= edge:
            return FIRST_RAISE + k
    return len(NOLIMIT_NAMES) - 1


def concrete(state: HandState, action: int) -> tuple[int, int]:
    """The move (action, raise-to total; 0 but for a no-limit raise) that plays the
    learner's ``action``; a raise bin is clamped to the legal raises."""
    if action in (FOLD, CALL) or state.game.is_limit:
        return action, 0
    bounds = raise_bounds(state)
    if bounds is None:
        raise ValueError(f"seat {state.current} cannot raise here")
    low, high = bounds
    if action == len(NOLIMIT_NAMES) - 1:
        return RAISE, high
    seat = state.current
    after_call = state.pot + state.max_spent - state.spent[seat]
    to = state.max_spent + round(SIZES[action - FIRST_RAISE] * after_call)
    return RAISE, min(max(to, low), high)


def may_fold(state: HandState) -> bool:
    """Whether the seat to act may fold: it owes chips (the dealer refuses a free fold)."""
    seat = state.current
    return seat >= 0 and state.spent[seat] < state.max_spent


def may_raise(state: HandState) -> bool:
    """Whether the seat to act may raise (every raise bin is then legal)."""
    return raise_bounds(state) is not None


# A state's legal actions come from its game and its betting alone (`memo`): bettings
# that begin alike share them.
_MASKS: ByBetting[tuple[bool, ...]] = ByBetting(limit=1 << 16)


def action_mask(state: HandState) -> tuple[bool, ...]:
    """The learner's legal actions: fold when owing chips, call, and every raise bin when a
    raise is allowed (several bins may then play the same total)."""
    mask = _MASKS.get(state.game, state.history)
    if mask is None:
        mask = _MASKS.put(state.game, state.history, _mask(state))
    return mask


def _mask(state: HandState) -> tuple[bool, ...]:
    if state.finished:
        return (False,) * len(action_names(state.game))
    raises = 1 if state.game.is_limit else len(NOLIMIT_NAMES) - FIRST_RAISE
    return (may_fold(state), True, *(may_raise(state),) * raises)


def legal(state: HandState) -> tuple[int, ...]:
    """The learner's legal actions as indices."""
    return tuple(a for a, ok in enumerate(action_mask(state)) if ok)
