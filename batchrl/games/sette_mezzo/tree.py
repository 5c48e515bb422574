"""The player's decision states and their exact probabilities, as arrays for the solver.

A state is the multiset of the player's cards (a count per kind) and the opponent's up
card. Drawing a card of kind ``v`` leads to the state with one more ``v``, with
probability (copies of ``v`` left) / (cards left), or to a bust (worth -1); so the
states form a DAG layered by the number of cards held, which `evaluate` walks backward
and `visits` forward, a layer at a time.

>>> t = build(10)
>>> t.size, round(float(t.start.sum()), 12)
(1752, 1.0)
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from math import factorial

import numpy as np
from numpy.typing import NDArray

from batchrl.games.sette_mezzo.rules import BUST, COPIES, COUNTS, DECK_SIZE, HALVES, KINDS

_HALVES = np.asarray(HALVES, dtype=np.int64)
_COPIES = np.asarray(COPIES, dtype=np.int64)
_RADIX = 13  # more than the most copies of a kind (12 faces)
# the kind of a card from its value in half points; -1 where no card has that value
_KIND_OF_HALVES = np.full(2 * BUST + 2, -1, dtype=np.int64)
_KIND_OF_HALVES[_HALVES] = np.arange(KINDS)


@dataclass(frozen=True, eq=False)
class Tree:
    """Every decision state of the player, with its moves; index ``size`` means "bust"."""

    limit: int  # the opponent's limit in half points
    counts: NDArray[np.int8]  # (n, 8) the player's cards of each kind
    up: NDArray[np.int8]  # (n,) the opponent's up card
    succ: NDArray[np.int64]  # (n, 8) the state after drawing each kind, or n (bust)
    prob: NDArray[np.float64]  # (n, 8) the chance of drawing each kind
    stick: NDArray[np.float64]  # (n,) the expected reward of sticking
    start: NDArray[np.float64]  # (n,) the chance that the deal gives this state
    layers: tuple[NDArray[np.int64], ...]  # states by cards held: 1, 2, ...

    @property
    def size(self) -> int:
        return len(self.up)


def codes(counts: NDArray[np.int64], up: NDArray[np.int64]) -> NDArray[np.int64]:
    """One integer per state: the counts in base 13, then the up card."""
    powers = _RADIX ** np.arange(KINDS, dtype=np.int64)
    return np.asarray(counts, dtype=np.int64) @ powers * KINDS + np.asarray(up, dtype=np.int64)


@functools.lru_cache(maxsize=8)
def build(limit: int) -> Tree:
    """All states for an opponent that stops at ``limit`` half points (cached)."""
    hands = np.array(list(_multisets(BUST, COPIES)), dtype=np.int64)[1:]  # drop the empty
    rows = [(c, u) for u in range(KINDS) for c in hands if c[u] < COPIES[u]]
    counts = np.array([c for c, _ in rows], dtype=np.int64)
    up = np.array([u for _, u in rows], dtype=np.int64)
    n = len(up)
    code = codes(counts, up)
    where = dict(zip(code.tolist(), range(n), strict=True))
    left = _COPIES - counts - np.eye(KINDS, dtype=np.int64)[up]
    prob = left / left.sum(axis=1, keepdims=True)
    total = counts @ _HALVES
    succ = np.full((n, KINDS), n, dtype=np.int64)
    for v in range(KINDS):
        fits = (total + _HALVES[v] <= BUST) & (left[:, v] > 0)
        succ[fits, v] = [where[c] for c in (code[fits] + KINDS * _RADIX**v).tolist()]
    cards = counts.sum(axis=1)
    first = np.where(cards == 1, counts.argmax(axis=1), 0)
    start = np.where(cards == 1, _COPIES[first] / DECK_SIZE
                     * (_COPIES[up] - (first == up)) / (DECK_SIZE - 1), 0.0)
    layers = tuple(np.flatnonzero(cards == k) for k in range(1, int(cards.max()) + 1))
    arrays = (counts.astype(np.int8), up.astype(np.int8), succ, prob,
              _stick_values(counts, up, total, limit), start)
    for a in (*arrays, *layers):
        a.flags.writeable = False
    return Tree(limit, *arrays, layers)


def evaluate(tree: Tree, hit: NDArray[np.bool_] | NDArray[np.float64]) -> NDArray[np.float64]:
    """Each state's exact value under the policy ``hit`` (then -1 at index ``size``):
    whether it hits in each state, or (floats) the probability that it does."""
    value = np.empty(tree.size + 1)
    value[tree.size] = -1.0
    mixed = hit.dtype != np.bool_
    for idx in reversed(tree.layers):  # a hit's successors hold one more card: done already
        hits = (tree.prob[idx] * value[tree.succ[idx]]).sum(axis=1)
        if mixed:
            value[idx] = hit[idx] * hits + (1 - hit[idx]) * tree.stick[idx]
        else:
            value[idx] = np.where(hit[idx], hits, tree.stick[idx])
    return value


def hit_values(tree: Tree, value: NDArray[np.float64]) -> NDArray[np.float64]:
    """The expected value of hitting once, then following the policy behind ``value``."""
    out: NDArray[np.float64] = (tree.prob * value[tree.succ]).sum(axis=1)
    return out


def visits(tree: Tree, hit: NDArray[np.bool_]) -> NDArray[np.float64]:
    """The chance that a game played by the policy ``hit`` reaches each state."""
    reach = tree.start.copy()
    for idx in tree.layers:  # every way into a state comes from the layer before
        moving = idx[hit[idx]]
        flow = reach[moving, None] * tree.prob[moving]
        target = tree.succ[moving]
        kept = target < tree.size
        np.add.at(reach, target[kept], flow[kept])
    return reach


def stick_values(features: NDArray[np.float32], limit: int) -> NDArray[np.float64]:
    """The exact expected reward of sticking in each encoded state ``(n, n_features)``
    against an opponent that stops at ``limit`` half points (`ValueError` names a row
    that is no decision state)."""
    tree = build(limit)
    return tree.stick[_lookup(limit).find(np.asarray(features, dtype=np.float32))]


@functools.lru_cache(maxsize=8)
def _lookup(limit: int) -> Lookup:
    tree = build(limit)
    return Lookup(tree.counts, tree.up)


class Lookup:
    """Finds states by their encoded features (`codes` sorted once, then bisection)."""

    def __init__(self, counts: NDArray[np.int8], up: NDArray[np.int8]) -> None:
        code = codes(counts.astype(np.int64), up.astype(np.int64))
        self.order = np.argsort(code)
        self.sorted = code[self.order]

    def find(self, features: NDArray[np.float32]) -> NDArray[np.int64]:
        if features.ndim != 2 or features.shape[1] < COUNTS.stop:
            raise ValueError(f"expected encoded states (n, {COUNTS.stop}), "
                             f"got shape {features.shape}")
        counts = np.rint(features[:, COUNTS]).astype(np.int64)
        halves = np.clip(np.rint(2 * features[:, 1]).astype(np.int64), 0, len(_KIND_OF_HALVES) - 1)
        code = codes(counts, _KIND_OF_HALVES[halves])
        pos = np.minimum(np.searchsorted(self.sorted, code), len(self.sorted) - 1)
        found = (self.sorted[pos] == code) & (_KIND_OF_HALVES[halves] >= 0) & (counts >= 0).all(1)
        if not found.all():
            bad = int(np.flatnonzero(~found)[0])
            raise ValueError(f"row {bad} is not a decision state of the game: "
                             f"{features[bad].tolist()}")
        out: NDArray[np.int64] = self.order[pos]
        return out


def _multisets(budget: int, caps: tuple[int, ...], kind: int = 0) -> Iterator[tuple[int, ...]]:
    """Count vectors over kinds ``kind..7``, at most ``caps``, worth at most ``budget``."""
    if kind == KINDS:
        yield ()
        return
    for k in range(min(caps[kind], budget // HALVES[kind]) + 1):
        for rest in _multisets(budget - k * HALVES[kind], caps, kind + 1):
            yield (k, *rest)


def _stick_values(counts: NDArray[np.int64], up: NDArray[np.int64], total: NDArray[np.int64],
                  limit: int) -> NDArray[np.float64]:
    """The exact expected reward of sticking, vectorized over the states.

    The opponent keeps drawing while under ``limit``, so it stops after drawing some
    multiset ``m`` that leaves it under the limit and then one card that does not.
    Every order of ``m`` is drawn (its running totals stay under the limit), each
    with the same chance: prod_v ff(left_v, m_v) / ff(left, |m|), ff a falling
    factorial; so the chance of reaching ``m`` is that times the orders of ``m``.
    """
    ff = np.ones((DECK_SIZE + 1, DECK_SIZE + 1))
    for k in range(1, DECK_SIZE + 1):
        ff[:, k] = ff[:, k - 1] * np.maximum(np.arange(DECK_SIZE + 1) - k + 1, 0)
    out = np.empty(len(up))
    for u in range(KINDS):
        rows = np.flatnonzero(up == u)
        if HALVES[u] >= limit:  # the up card alone reaches the limit: no draw
            out[rows] = np.sign(total[rows] - HALVES[u])
            continue
        caps = tuple(c - (v == u) for v, c in enumerate(COPIES))
        m = np.array(list(_multisets(limit - 1 - HALVES[u], caps)), dtype=np.int64)
        size = m.sum(axis=1)
        orders = np.array([factorial(s) / np.prod([factorial(x) for x in r])
                           for s, r in zip(size, m, strict=True)])
        left = _COPIES - counts[rows] - np.eye(KINDS, dtype=np.int64)[u]  # (n, 8)
        n_left = left.sum(axis=1)
        ways = ff[left[:, None, :], m[None, :, :]].prod(axis=2)  # (n, M)
        reach = orders * ways / ff[n_left[:, None], size]
        after = np.maximum(left[:, None, :] - m[None, :, :], 0)  # (n, M, 8)
        draw = after / (n_left[:, None] - size)[:, :, None]
        final = (HALVES[u] + m @ _HALVES)[:, None] + _HALVES  # (M, 8) total after the draw
        stops = final >= limit
        outcome = np.where(final > BUST, 1.0, np.sign(total[rows, None, None] - final))
        out[rows] = (reach[:, :, None] * draw * (stops * outcome)).sum(axis=(1, 2))
    return out
