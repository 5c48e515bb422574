"""The deals a Tressette seat cannot tell from the real one, drawn uniformly.

What a seat knows of the others' hands: how many cards each holds; that a seat which
did not follow a suit holds none of it (a void); and the seed's signals, public at each
lead (`rules.signal_of`, from the leader's cards left in the led suit): ``volo``, none
of that suit was left; ``striscio``, some were, but no 2 and no 3; ``busso``, a 2 or a 3
was. Cards only leave a hand, so each signal still says something now: no card of the
suit (volo) or no 2 or 3 of it (striscio) is a card the seat cannot hold; "some of the
suit" (striscio) and "a 2 or a 3" (busso) are cards at least one of which it still
holds, unless it has played one since.

The unseen cards fall in classes by the seats that may hold them; a deal gives each
class's cards to its seats. Counting the deals of each split of the classes (a product
of multinomials) and drawing a split in proportion (`_Splits`, a dynamic program over
the classes and the seats' room left), then the cards within each class at random,
draws uniformly among the deals that respect the voids and the forbidden cards; the
"at least one" conditions are then met by drawing again (exactly uniform, as rejection
is; the worst acceptance seen in random play is about 1.5%, and after ``MAX_TRIES``
draws the last is kept, which would break a signal: a split by those conditions in the
dynamic program would make it exact without drawing again).

>>> from batchrl.games.tressette.rules import deal, step, legal_cards
>>> s = deal(np.random.default_rng(1), leader=0)
>>> for _ in range(6):
...     s = step(s, legal_cards(s)[0])
>>> worlds = sample(s, 2, 3, np.random.default_rng(0))
>>> all(w.hands[2] == s.hands[2] for w in worlds)
True
>>> [len(h) for h in worlds[0].hands] == [len(h) for h in s.hands]
True
"""

from __future__ import annotations

import dataclasses
import functools
from math import comb

import numpy as np
from numpy.typing import NDArray

from batchrl.games.tressette.rules import (
    BUSSO,
    SEATS,
    STRISCIO,
    THREE,
    TWO,
    VOLO,
    State,
    signal_of,
)

MAX_TRIES = 2_000


@dataclasses.dataclass
class Known:
    """What a seat knows of each other seat's hand now."""

    forbidden: list[set[int]]  # cards a seat cannot hold
    needs: list[list[set[int]]]  # sets a seat holds at least one card of


def knowledge(state: State) -> Known:
    """Voids and signals, read off the plays (every lead's signal is public)."""
    forbidden: list[set[int]] = [set() for _ in range(SEATS)]
    needs: list[list[set[int]]] = [[] for _ in range(SEATS)]
    played_after: list[list[int]] = [[] for _ in range(SEATS)]  # per seat, in order
    events: list[tuple[int, int, int]] = []  # (seat, index in its plays, the card led)
    lead = -1
    for i, (seat, card) in enumerate(state.plays):
        if i % SEATS == 0:
            lead = card // 10
            events.append((seat, len(played_after[seat]), card))
        elif card // 10 != lead:
            forbidden[seat] |= set(range(lead * 10, lead * 10 + 10))
        played_after[seat].append(card)
    last = {seat: (at, led) for seat, at, led in events}
    for seat, (at, led) in last.items():  # rebuilt from the hands: they must agree
        said = state.signals[seat]
        if said is not None and said[1] != _signal(state, seat, at, led):
            raise ValueError(f"seat {seat}'s hand does not give the signal it announced "
                             f"({said[1]}): not a state of the rules")
    for seat, at, led in events:
        suit = led // 10
        later = played_after[seat][at + 1:]
        # the seat's cards of the suit when it led: what it played after, and what it
        # holds now; the signal is what those were
        suit_cards = set(range(suit * 10, suit * 10 + 10))
        tops = {suit * 10 + TWO, suit * 10 + THREE}
        kind = _signal(state, seat, at, led)
        if kind == VOLO:
            forbidden[seat] |= suit_cards
        elif kind == STRISCIO:
            forbidden[seat] |= tops
            if not suit_cards & set(later):
                needs[seat].append(suit_cards)
        elif kind == BUSSO and not tops & set(later):
            needs[seat].append(tops)
    return Known(forbidden, needs)


def _signal(state: State, seat: int, at: int, led: int) -> str:
    """The signal ``seat`` announced leading ``led`` (its ``at``-th card), as every seat
    heard it: the rules' function of the cards it kept then (those it played after, and
    those it holds now). The state keeps only each seat's latest signal; the earlier
    ones are rebuilt so."""
    held = [c for s, c in state.plays if s == seat]
    now = state.hands[seat]
    return signal_of([*held[at + 1:], *now], led)


def sample(state: State, seat: int, n: int, rng: np.random.Generator) -> list[State]:
    """``n`` states with the other seats' hands drawn uniformly among those ``seat``
    cannot rule out; its own hand, the plays and the signals are the state's."""
    known = knowledge(state)
    others = [p for p in range(SEATS) if p != seat]
    unseen = sorted(c for p in others for c in state.hands[p])
    sizes = [len(state.hands[p]) for p in others]
    classes: dict[tuple[int, ...], list[int]] = {}
    for c in unseen:
        allowed = tuple(i for i, p in enumerate(others) if c not in known.forbidden[p])
        classes.setdefault(allowed, []).append(c)
    splits = _Splits(list(classes.items()), sizes)
    out = []
    for _ in range(n):
        for _ in range(MAX_TRIES):
            hands: list[list[int]] = [[] for _ in others]
            for (allowed, cards), counts in zip(classes.items(), splits.draw(rng),
                                                strict=True):
                order = rng.permutation(cards).tolist()
                start = 0
                for i, k in zip(allowed, counts, strict=True):
                    hands[i] += order[start:start + k]
                    start += k
            if all(any(c in hands[i] for c in need) for i, p in enumerate(others)
                   for need in known.needs[p]):
                break
        full: list[tuple[int, ...]] = list(state.hands)
        for i, p in enumerate(others):
            full[p] = tuple(sorted(hands[i]))
        out.append(dataclasses.replace(state, hands=tuple(full)))
    return out


class _Splits:
    """How many cards of each class go to each of its seats, drawn in proportion to the
    number of deals of each split: a dynamic program over the classes and the seats'
    room left."""

    def __init__(self, classes: list[tuple[tuple[int, ...], list[int]]],
                 sizes: list[int]) -> None:
        self.classes, self.sizes = classes, tuple(sizes)
        self.memo: dict[tuple[int, tuple[int, ...]], int] = {}
        self.ways: dict[tuple[int, tuple[int, ...]], list[tuple[tuple[int, ...], int]]] = {}
        # each class and room's splits and their chances, worked out once for every draw
        self.chances: dict[tuple[int, tuple[int, ...]],
                           tuple[list[tuple[int, ...]], NDArray[np.float64]]] = {}
        if self.count(0, self.sizes) == 0:
            raise ValueError("no deal of the unseen cards fits what the seat knows")

    def _ways(self, k: int, room: tuple[int, ...]) -> list[tuple[tuple[int, ...], int]]:
        """Each split of class ``k`` that fits ``room``, with its number of deals."""
        out = self.ways.get((k, room))
        if out is not None:
            return out
        allowed, cards = self.classes[k]
        out = []
        for split in _compositions(len(cards), len(allowed)):
            if all(split[j] <= room[i] for j, i in enumerate(allowed)):
                ways, left = 1, len(cards)
                for part in split:
                    ways *= comb(left, part)
                    left -= part
                out.append((split, ways))
        self.ways[(k, room)] = out
        return out

    def count(self, k: int, room: tuple[int, ...]) -> int:
        if k == len(self.classes):
            return int(not any(room))
        key = (k, room)
        if key not in self.memo:
            allowed = self.classes[k][0]
            self.memo[key] = sum(ways * self.count(k + 1, _less(room, allowed, split))
                                 for split, ways in self._ways(k, room))
        return self.memo[key]

    def draw(self, rng: np.random.Generator) -> list[tuple[int, ...]]:
        room, out = self.sizes, []
        for k in range(len(self.classes)):
            allowed = self.classes[k][0]
            chances = self.chances.get((k, room))
            if chances is None:
                options = [(split, ways * self.count(k + 1, _less(room, allowed, split)))
                           for split, ways in self._ways(k, room)]
                weights = np.array([float(w) for _, w in options])
                chances = [split for split, _ in options], weights / weights.sum()
                self.chances[(k, room)] = chances
            splits, p = chances
            split = splits[int(rng.choice(len(splits), p=p))]
            out.append(split)
            room = _less(room, allowed, split)
        return out


def _less(room: tuple[int, ...], allowed: tuple[int, ...], split: tuple[int, ...]
          ) -> tuple[int, ...]:
    left = list(room)
    for j, i in enumerate(allowed):
        left[i] -= split[j]
    return tuple(left)


@functools.cache
def _compositions(total: int, parts: int) -> tuple[tuple[int, ...], ...]:
    """Every way to write ``total`` as ``parts`` whole numbers (in order); kept."""
    if parts == 0:
        return ((),) if total == 0 else ()
    if parts == 1:
        return ((total,),)
    return tuple((first, *rest) for first in range(total + 1)
                 for rest in _compositions(total - first, parts - 1))


def consistent(world: State, real: State, seat: int) -> bool:
    """Whether ``world`` keeps everything ``seat`` knows of ``real`` (for the tests)."""
    known = knowledge(real)
    for p in range(SEATS):
        if p == seat:
            if world.hands[p] != real.hands[p]:
                return False
            continue
        if len(world.hands[p]) != len(real.hands[p]):
            return False
        if known.forbidden[p] & set(world.hands[p]):
            return False
        if any(not need & set(world.hands[p]) for need in known.needs[p]):
            return False
    return sorted(c for h in world.hands for c in h) == sorted(c for h in real.hands
                                                                for c in h)

