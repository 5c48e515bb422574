"""Texas hold'em hand strength for 5, 6 or 7 cards, vectorised with numpy.

A strength is the rank of the best five-card hand among the 7,462 distinct
classes of five-card poker hands: 1 is 7-5-4-3-2 (no flush), 7462 a royal
flush, and two hands tie exactly when their strengths are equal. (This is
7463 minus the rank that Cactus Kev's and phevaluator's evaluators give.)

Cards are ints ``rank * 4 + suit`` (see :mod:`batchrl.games.holdem.cards`).

The fast path needs no sorting or per-rank counting. Each card has an additive
key: a rank weight chosen so that the sum over any 7 cards identifies their
rank multiset, plus a 4-bit counter for its suit. Summing seven keys gives an
index into a table of non-flush strengths and, in the counters, whether some
suit reached five; only those rare rows take the flush path, a lookup on the
13-bit rank mask of the flush suit. With at most 7 cards a flush never
coexists with a full house or quads, so a flush row's answer is its flush.

>>> from batchrl.games.holdem.cards import parse_cards
>>> evaluate(parse_cards("AsKsQsJsTs")), evaluate(parse_cards("7c5d4h3s2c"))
(7462, 1)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

N_CLASSES = 7462

CATEGORIES = (
    "high card",
    "pair",
    "two pair",
    "three of a kind",
    "straight",
    "flush",
    "full house",
    "four of a kind",
    "straight flush",
)

# Sums of these over any multiset of ranks with at most 4 of each and 5, 6 or 7
# in all are distinct within each size (the 7-card sums top out at 7,825,759,
# so a direct table of uint16 strengths is 15.6 MB). They are the rank keys of
# Kenneth Shackleton's SKPokerEval; tables() re-checks them when it builds.
RANK_WEIGHTS = (0, 1, 5, 22, 98, 453, 2031, 8698, 22854, 83661, 262349, 636345, 1479181)

RANK_BITS = 23
RANK_MASK = (1 << RANK_BITS) - 1
# One 4-bit counter per suit above the rank sum. Adding 3 to every counter
# makes bit 3 of a counter set exactly when its suit has 5..7 cards.
_SUIT_SHIFT = RANK_BITS
FLUSH_BIAS = 0x3333 << _SUIT_SHIFT
FLUSH_FLAGS = 0x8888 << _SUIT_SHIFT

# Per-suit 13-bit rank masks, 16 bits apart: distinct cards never carry, so
# these add up as well.
SUIT_RANKS_SHIFT = 16


def _highest_bit(masks: NDArray[np.int64]) -> NDArray[np.int64]:
    """Index of the top set bit of each 13-bit mask (-1 for 0)."""
    out = np.full(masks.shape, -1, dtype=np.int64)
    for r in range(13):
        out[(masks >> r) & 1 == 1] = r
    return out


def _straight_tops(masks: NDArray[np.int64]) -> NDArray[np.int64]:
    """Rank of the top card of the best straight in each rank mask, -1 if none."""
    top = np.full(masks.shape, -1, dtype=np.int64)
    for t in range(4, 13):
        window = 0b11111 << (t - 4)
        top[(masks & window) == window] = t
    wheel = 0b1000000001111  # A-2-3-4-5 counts as 5-high, below 6-high
    top[((masks & wheel) == wheel) & (top < 0)] = 3
    return top


def _pack(category: NDArray[np.int64], *kickers: NDArray[np.int64]) -> NDArray[np.int64]:
    # Within a category every hand has the same number of kickers, so packing
    # them 4 bits each below the category orders hands correctly.
    value = category << 20
    for i, k in enumerate(kickers):
        value = value | (k << (16 - 4 * i))
    return value


def _nonflush_values(counts: NDArray[np.int64]) -> NDArray[np.int64]:
    """Packed value of the best hand of each rank-count row, ignoring suits."""
    ranks = np.arange(13, dtype=np.int64)
    # Ranks ordered by (count, rank) descending: quads, then trips, pairs...
    ordered = -np.sort(-(counts * 16 + ranks), axis=1)
    gc, gr = ordered >> 4, ordered & 15
    bits = ((counts > 0).astype(np.int64) << ranks).sum(axis=1)
    straight = _straight_tops(bits)
    zero = np.zeros(len(counts), dtype=np.int64)
    one = np.int64(1)

    def best_other(*used: NDArray[np.int64]) -> NDArray[np.int64]:
        rest = bits
        for u in used:
            rest = rest & ~(one << u)
        return _highest_bit(rest)

    r0, r1, r2, r3, r4 = (gr[:, i] for i in range(5))
    c0, c1 = gc[:, 0], gc[:, 1]
    choices = [
        (c0 == 4, _pack(zero + 7, r0, best_other(r0))),
        ((c0 == 3) & (c1 >= 2), _pack(zero + 6, r0, r1)),
        (straight >= 0, _pack(zero + 4, straight)),
        (c0 == 3, _pack(zero + 3, r0, r1, r2)),
        ((c0 == 2) & (c1 == 2), _pack(zero + 2, r0, r1, best_other(r0, r1))),
        (c0 == 2, _pack(zero + 1, r0, r1, r2, r3)),
    ]
    high_card = _pack(zero, r0, r1, r2, r3, r4)
    return np.select([c for c, _ in choices], [v for _, v in choices], high_card)


def _flush_values(masks: NDArray[np.int64]) -> NDArray[np.int64]:
    """Packed value of the best flush in each rank mask of one suit (5+ bits)."""
    straight = _straight_tops(masks)
    tops = []
    rest = masks
    for _ in range(5):
        t = _highest_bit(rest)
        tops.append(t)
        rest = rest & ~(np.int64(1) << np.maximum(t, 0))
    flush = _pack(np.full(masks.shape, 5, dtype=np.int64), *tops)
    return np.where(straight >= 0, _pack(np.full(masks.shape, 8, dtype=np.int64), straight), flush)


def _rank_counts() -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Every rank-count vector with counts <= 4 and 5..7 cards, and its size."""
    rows = np.zeros((1, 0), dtype=np.int64)
    total = np.zeros(1, dtype=np.int64)
    for _ in range(13):
        parts, totals = [], []
        for c in range(5):
            ok = total + c <= 7
            parts.append(np.hstack([rows[ok], np.full((int(ok.sum()), 1), c, dtype=np.int64)]))
            totals.append(total[ok] + c)
        rows, total = np.vstack(parts), np.concatenate(totals)
    keep = total >= 5
    return rows[keep], total[keep]


@dataclass(frozen=True)
class Tables:
    """Lookup tables of the fast path, built once per process (about 0.1 s)."""

    card_keys: NDArray[np.int64]  # (52,) rank weight + suit counter
    card_suit_bits: NDArray[np.int64]  # (52,) 1 << (16 * suit + rank)
    nonflush7: NDArray[np.uint16]  # indexed by a 7-card rank sum
    sorted_sums: tuple[NDArray[np.int64], NDArray[np.int64]]  # 5-, 6-card rank sums
    sorted_strengths: tuple[NDArray[np.uint16], NDArray[np.uint16]]
    flush: NDArray[np.uint16]  # (8192,) indexed by the flush suit's rank mask


@functools.cache
def tables() -> Tables:
    """The evaluator's tables, built on first use."""
    weights = np.array(RANK_WEIGHTS, dtype=np.int64)
    counts, size = _rank_counts()
    sums = counts @ weights
    nonflush = _nonflush_values(counts)
    masks = np.arange(8192, dtype=np.int64)
    n_bits = ((masks[:, None] >> np.arange(13)) & 1).sum(axis=1)
    flush = np.where(n_bits >= 5, _flush_values(masks), -1)

    # Every hand's best five cards form one of the five-card classes, so
    # ranking the packed values of those classes gives dense strengths.
    classes = np.unique(np.concatenate([nonflush[size == 5], flush[n_bits == 5]]))
    assert len(classes) == N_CLASSES, len(classes)

    def strength(values: NDArray[np.int64]) -> NDArray[np.uint16]:
        return (np.searchsorted(classes, values) + 1).astype(np.uint16)

    sorted_sums = []
    sorted_strengths = []
    for n in (5, 6, 7):
        s, v = sums[size == n], strength(nonflush[size == n])
        order = np.argsort(s)
        s, v = s[order], v[order]
        if np.any(s[1:] == s[:-1]):
            raise RuntimeError(f"RANK_WEIGHTS collide on {n}-card rank multisets")
        sorted_sums.append(s)
        sorted_strengths.append(v)
    nonflush7 = np.zeros(int(sorted_sums[2][-1]) + 1, dtype=np.uint16)
    nonflush7[sorted_sums[2]] = sorted_strengths[2]

    cards = np.arange(52, dtype=np.int64)
    rank, suit = cards >> 2, cards & 3
    flush_strength = np.zeros(8192, dtype=np.uint16)
    flush_strength[n_bits >= 5] = strength(flush[n_bits >= 5])
    return Tables(
        card_keys=weights[rank] + (np.int64(1) << (_SUIT_SHIFT + 4 * suit)),
        card_suit_bits=np.int64(1) << (SUIT_RANKS_SHIFT * suit + rank),
        nonflush7=nonflush7,
        sorted_sums=(sorted_sums[0], sorted_sums[1]),
        sorted_strengths=(sorted_strengths[0], sorted_strengths[1]),
        flush=flush_strength,
    )


def flush_rows(key_sums: NDArray[np.int64]) -> tuple[NDArray[np.intp], NDArray[np.int64]]:
    """Rows of summed card keys where a suit has 5+ cards, and that suit."""
    flags = (key_sums + FLUSH_BIAS) & FLUSH_FLAGS
    rows = np.flatnonzero(flags)
    f = flags.ravel()[rows] >> (_SUIT_SHIFT + 3)  # 1, 16, 256 or 4096
    suit = (f > 1).astype(np.int64) + (f > 16) + (f > 256)
    return rows, suit


def flush_strengths(suit_bits: NDArray[np.int64], suit: NDArray[np.int64]) -> NDArray[np.uint16]:
    """Strengths of flush hands from their summed ``card_suit_bits`` and flush suit."""
    masks = (suit_bits >> (SUIT_RANKS_SHIFT * suit)) & 0x1FFF
    out: NDArray[np.uint16] = tables().flush[masks]
    return out


def strengths7(
    key_sums: NDArray[np.int64], suit_bits_of: Callable[[NDArray[np.intp]], NDArray[np.int64]]
) -> NDArray[np.int32]:
    """Strengths of 7-card hands from their summed ``card_keys``.

    ``suit_bits_of(rows)`` returns the summed ``card_suit_bits`` of the given
    flat row indices; it is called only for the few rows holding a flush.
    """
    t = tables()
    out: NDArray[np.int32] = t.nonflush7[key_sums & RANK_MASK].astype(np.int32)
    rows, suit = flush_rows(key_sums)
    if rows.size:
        out.ravel()[rows] = flush_strengths(suit_bits_of(rows), suit)
    return out


def _as_cards(cards: ArrayLike) -> NDArray[np.integer[Any]]:
    # Any integer dtype indexes the key tables directly; converting int8 card
    # arrays to intp first would cost more than it saves.
    arr = np.asarray(cards)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"cards must be integers, got {arr.dtype}")
    return arr


def evaluate7(cards: ArrayLike) -> NDArray[np.int32]:
    """Strengths of 7-card hands given as an int array of shape ``(..., 7)``.

    Cards in a row must be distinct (not checked on this fast path).

    >>> from batchrl.games.holdem.cards import parse_cards
    >>> s = evaluate7([parse_cards("AhAd2c3c4c9s8s"), parse_cards("KhKdKs3c4c9s8s")])
    >>> s.tolist(), [category(x) for x in s]
    ([3970, 5749], ['pair', 'three of a kind'])
    """
    arr = _as_cards(cards)
    if arr.shape[-1:] != (7,):
        raise ValueError(f"want shape (..., 7), got {arr.shape}")
    flat = arr.reshape(-1, 7)
    out = np.empty(len(flat), dtype=np.int32)
    # Chunks keep the (chunk, 7) temporaries in cache.
    step = 1 << 14
    for lo in range(0, len(flat), step):
        out[lo : lo + step] = _evaluate7_chunk(flat[lo : lo + step])
    return out.reshape(arr.shape[:-1])


def _evaluate7_chunk(cards: NDArray[np.integer[Any]]) -> NDArray[np.int32]:
    t = tables()
    cols = cards.T
    keys: NDArray[np.int64] = t.card_keys[cols[0]]
    for j in range(1, 7):
        keys += t.card_keys[cols[j]]

    def suit_bits_of(rows: NDArray[np.intp]) -> NDArray[np.int64]:
        bits: NDArray[np.int64] = t.card_suit_bits[cards[rows]].sum(axis=1)
        return bits

    return strengths7(keys, suit_bits_of)


def evaluate_many(cards: ArrayLike) -> NDArray[np.int32]:
    """Strengths of 5-, 6- or 7-card hands given as an int array ``(..., n)``.

    >>> from batchrl.games.holdem.cards import parse_cards
    >>> s = evaluate_many([parse_cards("AhAdAsAc2c"), parse_cards("5h4d3s2cAc")])
    >>> [category(x) for x in s]
    ['four of a kind', 'straight']
    """
    arr = _as_cards(cards)
    n = arr.shape[-1] if arr.ndim else 0
    if n == 7:
        return evaluate7(arr)
    if n not in (5, 6):
        raise ValueError(f"want 5 to 7 cards per hand, got shape {arr.shape}")
    t = tables()
    flat = arr.reshape(-1, n)
    keys: NDArray[np.int64] = t.card_keys[flat].sum(axis=1)
    sums, strengths = t.sorted_sums[n - 5], t.sorted_strengths[n - 5]
    out: NDArray[np.int32] = strengths[np.searchsorted(sums, keys & RANK_MASK)].astype(np.int32)
    rows, suit = flush_rows(keys)
    if rows.size:
        out[rows] = flush_strengths(t.card_suit_bits[flat[rows]].sum(axis=1), suit)
    return out.reshape(arr.shape[:-1])


def evaluate(cards: Sequence[int]) -> int:
    """Strength of one hand of 5 to 7 distinct cards; higher is better.

    >>> from batchrl.games.holdem.cards import parse_cards
    >>> evaluate(parse_cards("AhAd2c3c4c9s8s")) > evaluate(parse_cards("KhKdKs3c4c"))
    False
    """
    arr = _as_cards(list(cards))
    if arr.ndim != 1 or not 5 <= len(arr) <= 7:
        raise ValueError(f"want 5 to 7 cards, got {list(cards)}")
    if arr.min() < 0 or arr.max() > 51 or len(set(arr.tolist())) != len(arr):
        raise ValueError(f"want distinct cards in 0..51, got {list(cards)}")
    return int(evaluate_many(arr[None, :])[0])


def category(strength: int) -> str:
    """Name of the hand category of a strength, such as ``"full house"``.

    >>> category(7462), category(1)
    ('straight flush', 'high card')
    """
    bounds = _category_bounds()
    return CATEGORIES[int(np.searchsorted(bounds, strength, side="right")) - 1]


@functools.cache
def _category_bounds() -> NDArray[np.int64]:
    # Lowest strength of each category, from the number of classes in each:
    # high card 1277, pair 2860, two pair 858, trips 858, straight 10,
    # flush 1277, full house 156, quads 156, straight flush 10.
    sizes = np.array([1277, 2860, 858, 858, 10, 1277, 156, 156, 10], dtype=np.int64)
    return np.concatenate([[1], 1 + np.cumsum(sizes)[:-1]])
