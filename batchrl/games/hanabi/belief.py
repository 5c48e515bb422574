"""SPARTA's belief filter for a searching Hanabi seat: the worlds where the partner, had
it been playing the blueprint, would have made every move it made.

A hint's meaning in a convention (bot2's "the focus is playable") is not in the hint's
colour or rank: a world drawn only from the hints received gives the focus card any
identity the hint allows, and a search over it throws away what the partner meant.
SPARTA keeps a world only if the blueprint, in the partner's seat, makes the partner's
actual moves there. `History` follows one game from the searching seat (two players):
each of the partner's decisions since the seat's first, the move it made, and which of
the seat's cards it saw then; `History.keep` keeps the worlds that agree with all of
them, the latest first.

A world names the seat's current cards; the partner saw those it still holds (as the
world says they are) and the ones it has played or discarded since (public now: as they
were). The deck plays no part: a player never sees it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from batchrl.games.hanabi.rules import State, decode, legal_actions, step


@dataclasses.dataclass(frozen=True, slots=True)
class Decision:
    """One of the partner's moves: the state it made it in, the move, and the tag of each
    of the searching seat's cards then (``History``: which card each slot held)."""

    state: State
    action: int
    tags: tuple[int, ...]


class History:
    """One game from ``seat``'s view, between its moves (two players). Call ``observe`` with
    each state the seat is to act in, then ``moved`` with its move."""

    def __init__(self, seat: int, blueprint: Any) -> None:
        self.seat, self.blueprint = seat, blueprint
        self.decisions: list[Decision] = []
        self.tags: list[int] = []  # a tag for each of the seat's slots (drawn order)
        self.next_tag = 0
        self.last: State | None = None
        self.last_action = -1

    def _reset(self, state: State) -> None:
        self.decisions = []
        self.tags = list(range(len(state.hands[self.seat])))
        self.next_tag = len(self.tags)
        self.last, self.last_action = None, -1

    def observe(self, state: State) -> None:
        """``state``: the seat is to act. The partner's move since the seat's last is read
        off the two states; a state that does not follow (another game) starts anew."""
        last = self.last
        if last is None or state.players != 2 or state.moves != last.moves + 2:
            self._reset(state)
            return
        mine = step(last, self.last_action)
        kind, slot, _ = decode(self.last_action, 2)
        tags = list(self.tags)
        if kind in ("play", "discard"):
            del tags[slot]
            if len(mine.hands[self.seat]) > len(tags):  # a card drawn
                tags.append(self.next_tag)
                self.next_tag += 1
        moves = [a for a in legal_actions(mine) if step(mine, a) == state]
        if len(moves) != 1:
            self._reset(state)
            return
        self.tags = tags
        self.decisions.append(Decision(mine, moves[0], tuple(tags)))

    def moved(self, state: State, action: int) -> None:
        self.last, self.last_action = state, int(action)

    def keep(self, state: State, seat: int, worlds: Sequence[State]) -> list[State]:
        """The worlds in which the blueprint, in the partner's seat, makes every move the
        partner made (the latest first)."""
        if seat != self.seat or not self.decisions:
            return list(worlds)
        alive = list(worlds)
        partner = 1 - seat
        for decision in reversed(self.decisions):
            if not alive:
                break
            then = decision.state
            at = {tag: i for i, tag in enumerate(self.tags)}
            seen = []
            for world in alive:
                held = world.hands[seat]
                hand = tuple(held[at[tag]] if tag in at else card
                             for tag, card in zip(decision.tags, then.hands[seat], strict=True))
                hands = (hand, then.hands[partner]) if seat == 0 else \
                    (then.hands[partner], hand)
                seen.append(dataclasses.replace(then, hands=hands))
            chosen = self.blueprint.act(seen, [partner] * len(seen))
            alive = [w for w, a in zip(alive, chosen.tolist(), strict=True)
                     if a == decision.action]
        return alive
