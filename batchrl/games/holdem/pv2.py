"""PV2: the chance that two hole cards beat two random opponent hands, for three-player
games.

Like ``pv.py``'s PV, a tie counts as a share of the pot (a half against one opponent,
a third against both). The opponents' four cards and the board still to come are
uniform over the cards the player cannot see.

* pre-flop: a 169-class table shipped in ``data/pv2_preflop.npy``, each class measured
  on 200,000 deals (standard error about 0.001);
* flop, turn and river: ``SAMPLES`` deals drawn for the request itself (standard error
  at most 0.016, 0.5 / sqrt(1,000)). The draws come from a counter-based generator keyed
  by the cards, so a request always gets the same value: a state stored at ingest and
  the same state met in play give a model the same number.

Exact enumeration against two hands (900,000 pairs of hands on the river, 41 million
after the flop) costs too much per decision; the exact tables stay with one opponent.

    python -m batchrl.games.holdem.pv2      # regenerate the pre-flop table

>>> from batchrl.games.holdem.cards import parse_cards
>>> round(float(pv2_many([(parse_cards("AhAd"), ())])[0]), 2)     # aces: 0.85 heads-up
0.73
>>> float(pv2_many([(parse_cards("AhAd"), parse_cards("AsAc2d7h9s"))])[0])
1.0
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games.holdem import evaluator as ev
from batchrl.games.holdem.pv import DATA_DIR, Request, _as_requests, _check, preflop_cell

PREFLOP2_FILE = "pv2_preflop.npy"
SAMPLES = 1000  # deals drawn per request after the flop
TABLE_SAMPLES = 200_000  # per pre-flop class, when the table is made
CHUNK = 64  # requests drawn together (their deals: CHUNK x SAMPLES x 50 bytes)
CACHE_LIMIT = 1 << 18
_cache: dict[int, float] = {}

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def _mix(x: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """The splitmix64 finaliser: a counter to a well-mixed 64-bit number (``x`` is
    overwritten: each step's result written in place)."""
    with np.errstate(over="ignore"):
        x += np.uint64(0x9E3779B97F4A7C15)
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
        return x


def _uniform(keys: NDArray[np.uint64], samples: int, draw: int) -> NDArray[np.float64]:
    """``(len(keys), samples)`` numbers in [0, 1), a function of (key, sample, draw) only."""
    with np.errstate(over="ignore"):
        counter = (keys[:, None] * np.uint64(0x100000001B3)
                   + np.arange(samples, dtype=np.uint64)[None, :] * np.uint64(64)
                   + np.uint64(draw))
    bits = _mix(_mix(counter))
    bits >>= np.uint64(11)
    return bits.astype(np.float64) / float(1 << 53)


def equity2(cards: NDArray[np.int64], size: int, samples: int,
            keys: NDArray[np.uint64]) -> NDArray[np.float64]:
    """Equity against two random hands of each row of ``cards`` (hole pair, then ``size``
    board cards, then -1s), from ``samples`` deals drawn by the counter keyed ``keys``."""
    n = len(cards)
    drawn = _deals(cards, size, samples, keys)  # (n, samples, 4 + 5 - size)
    board = np.concatenate([np.broadcast_to(cards[:, None, 2 : 2 + size].astype(np.int8),
                                            (n, samples, size)), drawn[..., 4:]], axis=2)
    hole = np.broadcast_to(cards[:, None, :2].astype(np.int8), (n, samples, 2))
    # the three hands share the board: its cards' keys summed once, each hand adds its two
    keys_of = ev.tables().card_keys
    board_keys = np.repeat(keys_of[cards[:, 2 : 2 + size]].sum(axis=1)[:, None], samples,
                           axis=1)
    for j in range(4, drawn.shape[-1]):
        board_keys += keys_of[drawn[..., j]]
    mine, first, second = (_strengths(h, board, board_keys) for h in
                           (hole, drawn[..., 0:2], drawn[..., 2:4]))
    best = np.maximum(first, second)
    ties = 1 + (first == mine).astype(np.int64) + (second == mine)  # 1 where mine wins
    share = np.where(mine >= best, 1.0 / ties, 0.0)
    out: NDArray[np.float64] = share.mean(axis=1)
    return out


def _deals(cards: NDArray[np.int64], size: int, samples: int,
           keys: NDArray[np.uint64]) -> NDArray[np.int8]:
    """Each request's deals of the cards it cannot see: both opponents' holes, then the
    board still to come, ``(n, samples, 4 + 5 - size)``."""
    n = len(cards)
    known = np.zeros((n, 52), dtype=bool)
    np.put_along_axis(known, cards[:, : 2 + size], True, axis=1)
    rest = np.nonzero(~known)[1].reshape(n, 52 - 2 - size).astype(np.int8)
    m = rest.shape[1]
    draws = 4 + 5 - size
    # A partial Fisher-Yates shuffle of each deal's unseen cards: step j swaps place j
    # with a place `pick` at or after it, and the card drawn is the one at `pick`. Only
    # the places swapped so far differ from `rest`, so each step looks them up among
    # the earlier steps' picks, not in a copy of the whole deck per deal.
    picks: list[NDArray[np.int8]] = []  # places (at most 49: one byte each)
    moved: list[NDArray[np.int8]] = []  # step k's card put at picks[k]
    drawn = np.empty((n, samples, draws), dtype=np.int8)
    offsets = (np.arange(n) * m)[:, None]  # a deal's row in rest, flattened
    for j in range(draws):
        pick = (_uniform(keys, samples, j) * (m - j)).astype(np.int8)
        pick += np.int8(j)
        at_j = np.broadcast_to(rest[:, j : j + 1], (n, samples))  # place j's card now
        at_pick = rest.ravel()[pick + offsets]  # place pick's card now
        for k in range(j):  # later steps' writes win
            at_j = np.where(picks[k] == j, moved[k], at_j)
            at_pick = np.where(picks[k] == pick, moved[k], at_pick)
        drawn[..., j] = at_pick
        picks.append(pick)
        moved.append(at_j)
    return drawn


def _strengths(hole: NDArray[np.int8], board: NDArray[np.int8],
               board_keys: NDArray[np.int64]) -> NDArray[np.int32]:
    """The strengths of ``hole`` (..., 2) with ``board`` (..., 5), whose cards' keys sum
    to ``board_keys``: ``evaluate7``'s, a flush's suits looked up from its own row's
    cards only."""
    t = ev.tables()
    key_sums = board_keys + t.card_keys[hole[..., 0]] + t.card_keys[hole[..., 1]]

    def suit_bits(rows: NDArray[np.intp]) -> NDArray[np.int64]:  # the rare flushes
        flat = rows.ravel()
        seven = np.concatenate([_row(hole, flat), _row(board, flat)], axis=1)
        bits: NDArray[np.int64] = t.card_suit_bits[seven].sum(axis=1)
        return bits

    return ev.strengths7(key_sums, suit_bits)


def _row(cards: NDArray[np.int8], flat: NDArray[np.intp]) -> NDArray[np.int8]:
    """Rows ``flat`` (indices into all but the last axis, flattened) of ``cards``, without
    copying a broadcast array whole."""
    index = np.unravel_index(flat, cards.shape[:-1])
    out: NDArray[np.int8] = cards[index]
    return out


@functools.cache
def preflop_table() -> NDArray[np.float64]:
    """``(13, 13)`` equities against two hands, laid out as ``pv.preflop_cell``."""
    path = DATA_DIR / PREFLOP2_FILE
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; make it with "
                                "`python -m batchrl.games.holdem.pv2`")
    table: NDArray[np.float64] = np.load(path)
    return table


def _codes(cards: NDArray[np.int64]) -> NDArray[np.int64]:
    """One integer per request, the same for the same cards in any hole or flop order."""
    canon = cards.copy()
    canon[:, :2] = np.sort(cards[:, :2], axis=1)
    flop = cards[:, 2] >= 0
    canon[flop, 2:5] = np.sort(cards[flop, 2:5], axis=1)
    code = np.zeros(len(canon), dtype=np.int64)
    for j in range(7):
        code = code * 53 + canon[:, j] + 1
    return code


def pv2_cards(cards: NDArray[np.integer[Any]], samples: int = SAMPLES) -> NDArray[np.float64]:
    """PV2 of each row of ``(n, 7)`` cards: two hole cards, then 0/3/4/5 board cards and
    -1s. Deduplicated within the call and cached across calls."""
    cards = np.asarray(cards, dtype=np.int64).reshape(-1, 7)
    if not len(cards):
        return np.zeros(0, dtype=np.float64)
    sizes = _check(cards)
    code = _codes(cards)
    unique, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    values = np.empty(len(unique), dtype=np.float64)
    preflop = sizes[first] == 0
    if preflop.any():
        i, j = preflop_cell(cards[first[preflop], :2])
        values[preflop] = preflop_table()[i, j]
    later = np.flatnonzero(~preflop)
    found = [_cache.get(k) for k in unique[later].tolist()]
    missing = later[[v is None for v in found]]
    values[later] = [0.0 if v is None else v for v in found]
    for size in (3, 4, 5):
        rows = missing[sizes[first[missing]] == size]
        for lo in range(0, len(rows), CHUNK):
            part = rows[lo : lo + CHUNK]
            values[part] = equity2(cards[first[part]], size, samples,
                                   unique[part].astype(np.uint64))
    if len(_cache) + len(missing) > CACHE_LIMIT:
        _cache.clear()
    _cache.update(zip(unique[missing].tolist(), values[missing].tolist(), strict=True))
    return values[inverse]


def pv2_many(requests: Sequence[Request]) -> NDArray[np.float64]:
    """PV2 of each ``(hole, board)`` request, batched, deduplicated and cached."""
    return pv2_cards(_as_requests(requests))


def make_table(samples: int = TABLE_SAMPLES) -> NDArray[np.float64]:
    """The pre-flop table: each of the 169 classes' equity on ``samples`` deals."""
    table = np.zeros((13, 13), dtype=np.float64)
    for hi in range(13):
        for lo in range(13):
            # [hi, lo] with hi > lo is suited, [lo, hi] offsuit, the diagonal pairs
            a, b = max(hi, lo), min(hi, lo)
            suited = hi > lo
            hole = (4 * a, 4 * b + (0 if suited else 1))
            row = np.array([[*hole, -1, -1, -1, -1, -1]], dtype=np.int64)
            key = np.array([hi * 13 + lo + 1], dtype=np.uint64)
            total, done = 0.0, 0
            step = 20_000
            while done < samples:
                k = min(step, samples - done)
                total += float(equity2(row, 0, k, key + np.uint64(1_000_003 * done))[0]) * k
                done += k
            table[hi, lo] = total / samples
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description="Make the pre-flop table of PV2.")
    parser.add_argument("--out", type=Path, default=DATA_DIR / PREFLOP2_FILE)
    parser.add_argument("--samples", type=int, default=TABLE_SAMPLES)
    args = parser.parse_args()
    started = time.perf_counter()
    table = make_table(args.samples)
    np.save(args.out, table)
    print(f"{args.out}: 169 classes, {args.samples:,} deals each, "
          f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
