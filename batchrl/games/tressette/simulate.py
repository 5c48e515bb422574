"""Many Tressette hands: bots through ``rules.step``, or random play in numpy lockstep.

``play_hands`` deals each hand with ``rules.deal`` and asks the four bots (seat s
plays ``bots[s]``) one card at a time. ``random_hands`` is the fast path for
uniformly random legal play: ``batch`` hands advance together, one numpy step
per card, the hands held as a card-to-owner array. On one core it plays about
80,000 hands a second (batches of about a thousand are best), the plain loop
about 4,000 (``benchmarks/tressette_simulate.py``).
Both return the same record, ``Hands``, with every deal and every play, so a
hand can be replayed through ``rules.step`` (the tests do, for the fast path).
The leader rotates: hand i is led by seat ``(first_leader + i) % 4``.

>>> from batchrl.games.tressette.bots import RandomBot, RuleBot
>>> rng = np.random.default_rng(0)
>>> h = random_hands(1000, rng)
>>> h.points.shape, bool((h.points.sum(axis=1) == 11).all()), h.leaders[:5].tolist()
((1000, 2), True, [0, 1, 2, 3, 0])
>>> bots = (RuleBot(), RandomBot(rng), RuleBot(), RandomBot(rng))
>>> w = play_hands(bots, 200, rng)
>>> rate, low, high = win_rate(w, team=0)
>>> bool(low > 0.5)
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from batchrl.games.tressette.bots import Bot
from batchrl.games.tressette.rules import (
    CARD_THIRDS,
    CARDS,
    SEATS,
    TRICKS,
    Match,
    deal,
    is_terminal,
    step,
    team_points,
)

_SUIT = np.arange(CARDS, dtype=np.int64) // 10
_THIRDS = np.array(CARD_THIRDS, dtype=np.int64)


@dataclass(frozen=True)
class Hands:
    """Hands played to the end: ``deals[i, s]`` seat s's ten cards (sorted),
    ``leaders[i]`` the seat that led the first trick, ``plays[i, k]`` and ``seats[i, k]``
    the k-th card played and who played it, ``points[i]`` the two teams' points."""

    deals: NDArray[np.int8]
    leaders: NDArray[np.int8]
    plays: NDArray[np.int8]
    seats: NDArray[np.int8]
    points: NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.points)

    @property
    def winners(self) -> NDArray[np.int64]:
        """The team that won each hand (11 points: never a tie)."""
        return (self.points[:, 1] > self.points[:, 0]).astype(np.int64)


def play_hands(bots: Sequence[Bot], hands: int, rng: np.random.Generator,
               first_leader: int = 0) -> Hands:
    """Deal ``hands`` hands from ``rng`` and play them with ``bots`` (one per seat)."""
    if len(bots) != SEATS:
        raise ValueError(f"four bots, one per seat, not {len(bots)}")
    deals = np.zeros((hands, SEATS, TRICKS), dtype=np.int8)
    leaders = np.zeros(hands, dtype=np.int8)
    plays = np.zeros((hands, CARDS), dtype=np.int8)
    seats = np.zeros((hands, CARDS), dtype=np.int8)
    points = np.zeros((hands, 2), dtype=np.int64)
    for i in range(hands):
        leader = (first_leader + i) % SEATS
        s = deal(rng, leader)
        deals[i], leaders[i] = s.hands, leader
        while not is_terminal(s):
            s = step(s, bots[s.current].act(s))
        seats[i] = [p for p, _ in s.plays]
        plays[i] = [c for _, c in s.plays]
        points[i] = team_points(s)
    return Hands(deals, leaders, plays, seats, points)


def random_hands(hands: int, rng: np.random.Generator, first_leader: int = 0,
                 batch: int = 1024) -> Hands:
    """``hands`` hands of uniformly random legal play, ``batch`` at a time in lockstep.

    The same rules as ``rules.step``, on arrays: every hand of a batch plays its
    k-th card at once (all hands have 40 plays, so tricks end together)."""
    if batch < 1:
        raise ValueError(f"batch must be at least 1, not {batch}")
    out = [_random_batch(min(batch, hands - lo), rng, first_leader + lo)
           for lo in range(0, hands, batch)]
    if not out:
        return _random_batch(0, rng, first_leader)
    return Hands(*(np.concatenate([getattr(h, f) for h in out])
                   for f in ("deals", "leaders", "plays", "seats", "points")))


def _random_batch(n: int, rng: np.random.Generator, first: int) -> Hands:
    rows = np.arange(n)
    order = rng.permuted(np.tile(np.arange(CARDS, dtype=np.int64), (n, 1)), axis=1)
    owner = np.empty((n, CARDS), dtype=np.int64)
    owner[rows[:, None], order] = np.arange(CARDS) // TRICKS  # seat s gets order[10s:10s+10]
    deals = np.sort(order.reshape(n, SEATS, TRICKS), axis=2).astype(np.int8)
    leaders = (first + rows) % SEATS
    current = leaders.copy()
    plays = np.empty((n, CARDS), dtype=np.int64)
    seats = np.empty((n, CARDS), dtype=np.int64)
    team_thirds = np.zeros((n, 2), dtype=np.int64)
    best_seat = current
    for t in range(TRICKS):
        lead_suit = best = current  # set by each trick's lead (k == 0)
        trick_thirds = np.zeros(n, dtype=np.int64)
        for k in range(SEATS):
            legal = owner == current[:, None]
            if k:
                same = legal & (lead_suit[:, None] == _SUIT)
                legal = np.where(same.any(axis=1)[:, None], same, legal)
            ranks = np.cumsum(legal, axis=1)
            pick = (rng.random(n) * ranks[:, -1]).astype(np.int64)  # the pick-th legal card
            card = np.argmax(ranks > pick[:, None], axis=1)
            owner[rows, card] = -1
            plays[:, 4 * t + k], seats[:, 4 * t + k] = card, current
            trick_thirds += _THIRDS[card]
            if k == 0:
                lead_suit, best, best_seat = _SUIT[card], card, current
            else:
                better = (_SUIT[card] == lead_suit) & (card > best)
                best = np.where(better, card, best)
                best_seat = np.where(better, current, best_seat)
            current = (current + 1) % SEATS
        team_thirds[rows, best_seat % 2] += trick_thirds
        current = best_seat
    points = team_thirds // 3
    points[rows, best_seat % 2] += 1  # the last trick
    return Hands(deals, leaders.astype(np.int8), plays.astype(np.int8), seats.astype(np.int8),
                 points)


def win_rate(hands: Hands, team: int = 0) -> tuple[float, float, float]:
    """The share of hands ``team`` won, with a 95% Wilson interval: (rate, low, high)."""
    n = len(hands)
    if n == 0:
        raise ValueError("no hands")
    wins = int((hands.winners == team).sum())
    return (wins / n, *wilson(wins, n))


def wilson(wins: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95% by default).

    >>> tuple(round(x, 4) for x in wilson(8220, 16384))     # the seed's heuristic vs random
    (0.4941, 0.5094)
    """
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


@dataclass(frozen=True)
class MatchResult:
    """A match to ``target``: the final scores, the hands played, the winning team."""

    scores: tuple[int, int]
    hands: int
    winner: int


def play_match(bots: Sequence[Bot], rng: np.random.Generator, target: int = 21,
               first_leader: int = 0) -> MatchResult:
    """Play hands until one team reaches ``target`` points (see ``rules.Match``)."""
    if len(bots) != SEATS:
        raise ValueError(f"four bots, one per seat, not {len(bots)}")
    m = Match(target=target, first_leader=first_leader)
    while not m.over:
        s = deal(rng, m.next_leader)
        while not is_terminal(s):
            s = step(s, bots[s.current].act(s))
        m = m.add(team_points(s))
    assert m.winner is not None
    return MatchResult(m.scores, m.hands, m.winner)
