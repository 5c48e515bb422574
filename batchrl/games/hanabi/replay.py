"""Replaying recorded Hanabi games through the rules: the moves no rule has, as the
programs that logged them made them."""

from __future__ import annotations

from dataclasses import replace

from batchrl.games.hanabi.rules import IllegalMove, State, decode, tell


def hint_self(state: State, action: int) -> State:
    """Eger et al.'s AI hinting ITSELF (4 logged games): a hint token spent and the
    seat's own cards told, as their program did; the turn passes."""
    kind, _, value = decode(action, 2)
    me = state.current
    if state.hints == 0:
        raise IllegalMove(f"player {me}: no hint token left")
    told, clued, focus = tell(state, me, kind, value)
    return replace(state, known=(*state.known[:me], told, *state.known[me + 1:]),
                   clued=(*state.clued[:me], clued, *state.clued[me + 1:]),
                   hints=state.hints - 1, current=1 - me, moves=state.moves + 1,
                   turns_left=state.turns_left - 1 if state.turns_left > 0 else
                   state.turns_left, hint_target=me, hint_focus=focus)
