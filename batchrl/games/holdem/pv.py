"""PV: the exact chance that two hole cards beat one random opponent hand.

PV ("probability of victory") counts a tie as half a win. The opponent's two
cards are uniform over the cards the player cannot see, and the board cards
still to come are uniform over what is left; every (opponent, runout) pair is
equally likely, and PV is exact up to float64 rounding.

* pre-flop: a 169-class table shipped in ``data/pv_preflop.npy``;
* flop: a table over the 1,755 flops distinct up to suit relabelling,
  ``data/pv_flop.npz``;
* turn and river: exact, counted at run time: opponent hands without a flush as
  91 rank pairs sorted by strength once per process, flushes in groups of cards
  alike (a river no one can flush on needs no flush count at all).

Both tables come from ``python -m batchrl.games.holdem.pv_tables``.

>>> from batchrl.games.holdem.cards import parse_cards
>>> round(pv(parse_cards("AhAd"), ()), 4)
0.852
>>> pv(parse_cards("AhAd"), parse_cards("AsAc2d7h9s"))
1.0
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games.holdem import evaluator as ev

DATA_DIR = Path(__file__).parent / "data"
FLOP_FILE = "pv_flop.npz"
PREFLOP_FILE = "pv_preflop.npy"

# Outcomes behind each count, so that PV = count / (2 * outcomes): the count is
# 2 * wins + ties over every equally likely (runout, opponent) pair.
N_FLOPS = 19600  # C(50, 3) flops around a given hole pair
FLOP_OUTCOMES = 1081 * 990  # C(47, 2) turn-river runouts x C(45, 2) opponents
TURN_OUTCOMES = 46 * 990
RIVER_OUTCOMES = 990

Request = tuple[tuple[int, int], tuple[int, ...]]


# --- Card combinatorics shared with the table generator ---------------------


@functools.cache
def pair_tables() -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The 1,326 two-card sets as ``(lo, hi)`` rows, and a 52x52 index into them.

    Pair ``{a, b}`` with ``a < b`` has index ``b * (b - 1) / 2 + a``; the
    index table is symmetric with -1 on the diagonal.
    """
    pairs = np.array([(a, b) for b in range(52) for a in range(b)], dtype=np.int64)
    index = np.full((52, 52), -1, dtype=np.int64)
    index[pairs[:, 0], pairs[:, 1]] = np.arange(len(pairs))
    index[pairs[:, 1], pairs[:, 0]] = np.arange(len(pairs))
    return pairs, index


@functools.cache
def suit_perms() -> NDArray[np.int64]:
    """``(24, 52)``: card ``c`` under each of the 24 relabellings of the suits."""
    cards = np.arange(52)
    perms = np.array(list(itertools.permutations(range(4))), dtype=np.int64)
    return (cards >> 2) * 4 + perms[:, cards & 3]


@dataclass(frozen=True)
class FlopCanon:
    """Flops up to suit relabelling.

    ``flops`` lists the 1,755 canonical flops (sorted cards, each the least
    flop of its class in ``c0*2704 + c1*52 + c2`` order, rows in that order).
    ``row[a, b, c]`` is the canonical row of flop ``{a, b, c}`` (any order)
    and ``perm[a, b, c]`` a relabelling in :func:`suit_perms` that maps it
    onto that canonical flop.
    """

    flops: NDArray[np.int64]
    row: NDArray[np.int16]
    perm: NDArray[np.int8]


@functools.cache
def flop_canon() -> FlopCanon:
    flops = np.array(list(itertools.combinations(range(52), 3)), dtype=np.int64)
    mapped = np.sort(suit_perms()[:, flops], axis=2)  # (24, 22100, 3)
    codes = mapped[..., 0] * 2704 + mapped[..., 1] * 52 + mapped[..., 2]
    best = np.argmin(codes, axis=0)
    canon_codes = codes[best, np.arange(len(flops))]
    distinct, rows = np.unique(canon_codes, return_inverse=True)
    row = np.full((52, 52, 52), -1, dtype=np.int16)
    perm = np.full((52, 52, 52), -1, dtype=np.int8)
    for a, b, c in itertools.permutations(range(3)):
        row[flops[:, a], flops[:, b], flops[:, c]] = rows
        perm[flops[:, a], flops[:, b], flops[:, c]] = best
    canon = np.stack([distinct // 2704, distinct // 52 % 52, distinct % 52], axis=1)
    return FlopCanon(flops=canon, row=row, perm=perm)


def preflop_cell(hole: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Cell of each hole pair ``(n, 2)`` in the 13x13 pre-flop table.

    Pairs sit on the diagonal, suited hands at ``[high, low]`` and offsuit
    ones at ``[low, high]`` (ranks 0..12 for 2..A).
    """
    r0, r1 = hole[:, 0] >> 2, hole[:, 1] >> 2
    hi, lo = np.maximum(r0, r1), np.minimum(r0, r1)
    suited = (hole[:, 0] & 3) == (hole[:, 1] & 3)
    return np.where(suited, hi, lo), np.where(suited, lo, hi)


# --- Shipped tables ----------------------------------------------------------


def _data_file(name: str) -> Path:
    path = DATA_DIR / name
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing; generate it with `python -m batchrl.games.holdem.pv_tables`"
        )
    return path


@functools.cache
def flop_counts() -> NDArray[np.uint32]:
    """``(1755, 1326)`` 2*wins+ties of each hole pair on each canonical flop."""
    with np.load(_data_file(FLOP_FILE)) as data:
        counts: NDArray[np.uint32] = data["counts"]
        if not np.array_equal(data["flops"], flop_canon().flops):
            raise ValueError(f"{FLOP_FILE} was made for other canonical flops; regenerate it")
    return counts


@functools.cache
def preflop_counts() -> NDArray[np.int64]:
    """``(13, 13)`` 2*wins+ties summed over all flops, laid out as :func:`preflop_cell`."""
    counts: NDArray[np.int64] = np.load(_data_file(PREFLOP_FILE))
    return counts


# --- PV by stage: each takes hole cards (n, 2) and a board (n, k) -------------


def pv_preflop(hole: NDArray[np.int64]) -> NDArray[np.float64]:
    """PV of each row of ``(n, 2)`` hole cards before the flop, from the table."""
    i, j = preflop_cell(hole)
    return preflop_counts()[i, j] / (2.0 * N_FLOPS * FLOP_OUTCOMES)


def pv_flop(hole: NDArray[np.int64], flop: NDArray[np.int64]) -> NDArray[np.float64]:
    """PV of each row of ``(n, 2)`` hole cards on its ``(n, 3)`` flop, from the table."""
    canon = flop_canon()
    _, index = pair_tables()
    a, b, c = flop[:, 0], flop[:, 1], flop[:, 2]
    relabel = suit_perms()[canon.perm[a, b, c]]
    rows = np.arange(len(hole))
    h = index[relabel[rows, hole[:, 0]], relabel[rows, hole[:, 1]]]
    return flop_counts()[canon.row[a, b, c], h] / (2.0 * FLOP_OUTCOMES)


def _card_sums(cards: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Summed evaluator keys and suit bits of each row of cards."""
    t = ev.tables()
    return t.card_keys[cards].sum(axis=1), t.card_suit_bits[cards].sum(axis=1)


def _dead_masks(cards: NDArray[np.int64]) -> NDArray[np.uint64]:
    masks: NDArray[np.uint64] = np.bitwise_or.reduce(
        np.uint64(1) << cards.astype(np.uint64), axis=1
    )
    return masks


@functools.cache
def _pair_sums() -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.uint64]]:
    pairs, _ = pair_tables()
    keys, bits = _card_sums(pairs)
    return keys, bits, _dead_masks(pairs)


def _pv_river(hole: NDArray[np.int64], board: NDArray[np.int64]) -> NDArray[np.float64]:
    """River PV: where the board holds at most two cards of each suit nobody can make a
    flush, and the hands' ranks decide every showdown (`_pv_river_ranks`); else every
    opponent hand is evaluated (`_pv_river_grid`)."""
    out = np.empty(len(hole), dtype=np.float64)
    most = np.stack([(board & 3) == s for s in range(4)], axis=2).sum(axis=1).max(axis=1)
    plain = most <= 2
    if plain.any():
        out[plain] = _pv_river_ranks(hole[plain], board[plain])
    if not plain.all():
        out[~plain] = _pv_river_grid(hole[~plain], board[~plain])
    return out


@dataclass(frozen=True)
class _RiverRanks:
    """Opponent hands by rank on a full board: for each of the 6,188 rank multisets of five
    board cards (``board_keys``, summed rank weights, sorted), the 91 opponent rank pairs
    sorted by what they make without a flush (their ranks ``x`` and ``y``), and those
    strengths as one sorted array of ``board * _STRENGTHS + strength`` (``keys``): where a
    hand's strength falls in it tells how many pairs are below it. The turn's count reads
    it too, a turn board's ranks with each river rank. Built in a few hundredths of a
    second, 3 MB."""

    board_keys: NDArray[np.int64]
    x: NDArray[np.int8]  # (6188, 91)
    y: NDArray[np.int8]
    keys: NDArray[np.int32]


@functools.cache
def _river_ranks() -> _RiverRanks:
    t = ev.tables()
    weights = np.array(ev.RANK_WEIGHTS, dtype=np.int64)
    boards = np.array(list(itertools.combinations_with_replacement(range(13), 5)),
                      dtype=np.int64)
    board_keys = np.sort(weights[boards].sum(axis=1))
    x, y, xy_keys = _rank_pairs()
    sums = board_keys[:, None] + xy_keys
    # More than four of a rank cannot be dealt (those pairs count 0): any index will do.
    strength = t.nonflush7[np.minimum(sums, len(t.nonflush7) - 1)].astype(np.int32)
    ranked = np.sort(strength << 7 | np.arange(91, dtype=np.int32), axis=1)
    order = ranked & 127
    group = np.arange(len(board_keys), dtype=np.int32).reshape(-1, 1)
    return _RiverRanks(board_keys, x.astype(np.int8)[order], y.astype(np.int8)[order],
                       (group * _STRENGTHS + (ranked >> 7)).ravel())


def _pv_river_ranks(hole: NDArray[np.int64], board: NDArray[np.int64]) -> NDArray[np.float64]:
    """River PV where no flush can be made: the 990 opponent hands as 91 rank pairs, each
    weighted by how many of its hands are left, sorted by strength once per process, and
    counted below and up to mine by a search."""
    n = len(hole)
    table = _river_ranks()
    board_keys, board_bits = _card_sums(board)
    hole_keys, hole_bits = _card_sums(hole)
    mine = ev.strengths7(board_keys + hole_keys, lambda r: (board_bits + hole_bits)[r])
    board_at = np.searchsorted(table.board_keys, board_keys & ev.RANK_MASK)
    seen = np.hstack([hole, board]) >> 2
    left = 4 - (seen[:, :, None] == np.arange(13)).sum(axis=1, dtype=np.int16)  # (n, 13)
    score = _counted_by_ranks(board_at, left, np.arange(n), mine)
    return score / (2.0 * RIVER_OUTCOMES)


def _counted_by_ranks(board_at: NDArray[np.intp], left: NDArray[np.int16],
                      group: NDArray[np.intp], mine: NDArray[np.int32]) -> NDArray[np.int64]:
    """Opponent hands without a flush counted against mine, as 91 rank pairs: two for each
    hand below mine, one for each tied. ``board_at`` (m,) are rows of `_river_ranks` (the
    five ranks on the board), ``left`` (m, 13) how many cards of each rank an opponent may
    hold there; each query names its row (``group``) and my strength (``mine``)."""
    m = len(board_at)
    table = _river_ranks()
    x, y = table.x[board_at], table.y[board_at]  # (m, 91): the pairs, weakest first
    row = np.arange(0, 13 * m, 13).reshape(m, 1)
    lx, ly = left.ravel()[x + row], left.ravel()[y + row]
    # counted cumulatively from 0 by strength: how many hands are below a strength
    counts = np.zeros((m, 92), dtype=np.int32)
    np.cumsum(np.where(x == y, lx * (lx - 1) // 2, lx * ly), axis=1, out=counts[:, 1:])
    # The rows of the table these queries read: a search in them stays in cache.
    boards, board_row = np.unique(board_at, return_inverse=True)
    keys_here = table.keys.reshape(len(table.board_keys), 91)[boards].ravel()
    keys = (board_at[group] * _STRENGTHS + mine).astype(np.int32)
    here = board_row[group] * 91
    below = np.searchsorted(keys_here, keys, side="left") - here
    up_to = np.searchsorted(keys_here, keys, side="right") - here
    flat = counts.ravel()
    at = group * 92
    # the hands below mine, plus those up to mine
    return flat[at + below].astype(np.int64) + flat[at + up_to]


def _pv_river_grid(hole: NDArray[np.int64], board: NDArray[np.int64]) -> NDArray[np.float64]:
    # All 1,326 pairs against every request, masked: a fixed-shape grid beats
    # gathering each request's own 990 pairs.
    pair_keys, pair_bits, pair_masks = _pair_sums()
    board_keys, board_bits = _card_sums(board)
    hole_keys, hole_bits = _card_sums(hole)
    dead = _dead_masks(np.hstack([hole, board]))
    mine = ev.strengths7(board_keys + hole_keys, lambda r: (board_bits + hole_bits)[r])

    def opp_bits(rows: NDArray[np.intp]) -> NDArray[np.int64]:
        return board_bits[rows // len(pair_keys)] + pair_bits[rows % len(pair_keys)]

    # Pairs that meet the request's cards get key 0 (no such hand, no flush):
    # their sums could index past the table.
    live = (dead[:, None] & pair_masks) == 0
    opp = ev.strengths7(np.where(live, board_keys[:, None] + pair_keys, 0), opp_bits)
    score: NDArray[np.int64] = np.where(live, np.sign(mine[:, None] - opp) + 1, 0).sum(axis=1)
    return score / (2.0 * RIVER_OUTCOMES)


@functools.cache
def _rank_pairs() -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """The 91 rank multisets ``{x, y}`` of an opponent's hand, and their key sums."""
    xy = np.array([(x, y) for y in range(13) for x in range(y + 1)], dtype=np.int64)
    weights = np.array(ev.RANK_WEIGHTS, dtype=np.int64)
    return xy[:, 0], xy[:, 1], weights[xy[:, 0]] + weights[xy[:, 1]]


_NONE = 13  # a slot of a flush group that holds no card


@dataclass(frozen=True)
class _FlushGroups:
    """The three cards (the river and an opponent's pair) that make a flush with a turn
    board holding ``5 - need`` of the flush suit, grouped by what decides the hands: the
    ranks of the cards of the suit (``suited``, at least ``need`` of them) and the ranks of
    the others (``plain``), each row padded with ``_NONE``. Every set of cards of a group
    makes the same flush and the same hand without it, and the river's card plays the same
    by its rank alone off the suit (no other suit can flush: the board holds at most one
    of it), so a group stands for as many sets as its plain ranks have cards left."""

    suited: NDArray[np.int64]  # (groups, 3) ranks of the suit's cards
    plain: NDArray[np.int64]  # (groups, 3) ranks of the other cards, a rank repeated for two
    suited_bits: NDArray[np.int64]  # the suit's ranks as a 13-bit mask
    rank_keys: NDArray[np.int64]  # summed rank weights of the three cards
    pair: NDArray[np.bool_]  # two plain cards of one rank (counted as pairs of its cards)
    plain_slots: int  # 3 - need: the most plain cards a group holds


@functools.cache
def _flush_groups(need: int) -> _FlushGroups:
    suited, plain = [], []
    for k in range(need, 4):
        for ranks in itertools.combinations(range(13), k):
            for others in itertools.combinations_with_replacement(range(13), 3 - k):
                suited.append((*ranks, *(_NONE,) * (3 - k)))
                plain.append((*others, *(_NONE,) * k))
    s, o = np.array(suited, dtype=np.int64), np.array(plain, dtype=np.int64)
    weights = np.array((*ev.RANK_WEIGHTS, 0), dtype=np.int64)
    return _FlushGroups(
        suited=s, plain=o,
        suited_bits=np.where(s < _NONE, 1 << np.minimum(s, 12), 0).sum(axis=1),
        rank_keys=weights[s].sum(axis=1) + weights[o].sum(axis=1),
        pair=(o[:, 0] == o[:, 1]) & (o[:, 0] < _NONE),
        plain_slots=3 - need,
    )


_STRENGTHS = 1 << 13  # above every hand strength (at most 7,462)


def _pv_turn(hole: NDArray[np.int64], board: NDArray[np.int64]) -> NDArray[np.float64]:
    """Turn PV by river card and opponent *rank* pair, then flush corrections.

    Without a flush the opponent's strength depends only on the ranks of
    the two hole cards, so for each river card 91 rank pairs, weighted by how
    many card pairs have those ranks, stand in for the 990 opponent hands; sorted
    by strength once per process, they are counted by a search for mine.
    Opponent flushes are then patched in; they need at least two of the flush
    suit on the turn board, and the sets of three cards (river plus opponent
    pair) that make them, grouped by their ranks in and off the suit
    (`_flush_groups`), are few.
    """
    n = len(hole)
    t = ev.tables()
    seen = np.hstack([hole, board])
    alive = np.ones((n, 52), dtype=bool)
    alive[np.arange(n)[:, None], seen] = False
    unseen = np.nonzero(alive)[1].reshape(n, 46)  # the possible river cards

    board_keys, board_bits = _card_sums(board)
    hole_keys, hole_bits = _card_sums(hole)
    mine_keys = (board_keys + hole_keys)[:, None] + t.card_keys[unseen]
    mine_bits = board_bits + hole_bits

    def my_bits(rows: NDArray[np.intp]) -> NDArray[np.int64]:
        return mine_bits[rows // 46] + t.card_suit_bits[unseen.ravel()[rows]]

    mine_river = ev.strengths7(mine_keys, my_bits)  # (n, 46): mine, by river card
    mine_of_card = np.zeros((n, 52), dtype=np.int32)
    np.put_along_axis(mine_of_card, unseen, mine_river, axis=1)

    # By river rank (13) and opponent rank pair (91): how many opponent hands
    # have those ranks once the river is out; what they make without a flush
    # depends on the five ranks alone, sorted once per process (``_RiverRanks``).
    table = _river_ranks()
    weights = np.array(ev.RANK_WEIGHTS, dtype=np.int64)
    # the full board's ranks with each river rank: its row of the table
    board_at = np.searchsorted(table.board_keys, (board_keys & ev.RANK_MASK)[:, None] + weights)
    # how many cards of each rank are left once a river of each rank is out: (n, 13, 13)
    avail = alive.reshape(n, 13, 4).sum(axis=2, dtype=np.int16)
    left = avail[:, None, :] - np.eye(13, dtype=np.int16)
    group = np.arange(0, 13 * n, 13).reshape(n, 1) + (unseen >> 2)  # (n, 46): by river card
    counted = _counted_by_ranks(board_at.ravel(), left.reshape(13 * n, 13), group.ravel(),
                                mine_river.ravel())
    score: NDArray[np.int64] = counted.reshape(n, 46).sum(axis=1)

    suit_counts = np.stack([(board & 3) == s for s in range(4)], axis=2).sum(axis=1)
    for suit in range(4):
        for have in (2, 3, 4):
            reqs = np.flatnonzero(suit_counts[:, suit] == have)
            if reqs.size:
                score[reqs] += _flush_corrections(
                    reqs, suit, 5 - have, alive, board_keys, board_bits, mine_of_card
                )
    return score / (2.0 * TURN_OUTCOMES)


def _flush_corrections(
    reqs: NDArray[np.intp],
    suit: int,
    need: int,
    alive: NDArray[np.bool_],
    board_keys: NDArray[np.int64],
    board_bits: NDArray[np.int64],
    mine_of_card: NDArray[np.int32],
) -> NDArray[np.int64]:
    """Score change of each of ``reqs`` when opponent flushes replace their ranks-only value.

    ``reqs`` are the requests whose board holds ``5 - need`` cards of ``suit``; each
    group of `_flush_groups` is counted once per request, times the sets it stands for.
    """
    t = ev.tables()
    groups = _flush_groups(need)
    live = alive[reqs]  # (n, 52): the cards neither mine nor the board's
    in_suit = live[:, suit::4]  # (n, 13)
    bits = (in_suit.astype(np.int64) << np.arange(13)).sum(axis=1)
    # cards left off the suit, by rank; the padding rank counts as one
    left = np.ones((len(reqs), 14), dtype=np.int16)
    left[:, :13] = live.reshape(-1, 13, 4).sum(axis=2) - in_suit
    sets = ((groups.suited_bits & ~bits[:, None]) == 0).astype(np.int16)  # the suit's left
    if groups.plain_slots > 0:
        first = left[:, groups.plain[:, 0]]
        sets *= first
        if groups.plain_slots > 1:
            second = left[:, groups.plain[:, 1]]
            sets *= np.where(groups.pair, first - 1, second)
            sets[:, groups.pair] //= 2  # two cards of one rank: its pairs
    at, group = np.nonzero(sets)
    req = reqs[at]
    # Every group is a flush in ``suit``, so the flush table gives its strength directly.
    board_suit_ranks = (board_bits[req] >> (ev.SUIT_RANKS_SHIFT * suit)) & 0x1FFF
    true = t.flush[board_suit_ranks | groups.suited_bits[group]].astype(np.int32)
    ranks_only = t.nonflush7[(board_keys[req] & ev.RANK_MASK)
                             + groups.rank_keys[group]].astype(np.int32)
    # Mine with each card as the river: a card of the suit by its rank, another by its
    # rank alone (any left of that rank); the padding above every hand, so it adds 0.
    above = np.int32(1 << 14)
    mine_suited = np.full((len(reqs), 14), above, dtype=np.int32)
    mine_suited[:, :13] = np.where(in_suit, mine_of_card[reqs, suit::4], above)
    off = live.reshape(-1, 13, 4).copy()
    off[:, :, suit] = False
    mine_plain = np.full((len(reqs), 14), above, dtype=np.int32)
    mine_plain[:, :13] = np.where(off, mine_of_card[reqs].reshape(-1, 13, 4), -1).max(axis=2)
    delta = np.zeros(len(req), dtype=np.int32)
    row = at * 14
    # Each of the three cards can be the river, the other two the opponent's.
    for mine_of, ranks, slots in ((mine_suited, groups.suited, 3),
                                  (mine_plain, groups.plain, groups.plain_slots)):
        flat = mine_of.ravel()
        for j in range(slots):
            mine = flat[row + ranks[group, j]]
            delta += np.sign(mine - true)
            delta -= np.sign(mine - ranks_only)
    return np.bincount(at, weights=delta * sets[at, group],
                       minlength=len(reqs)).astype(np.int64)


# --- Public API --------------------------------------------------------------


def _as_requests(requests: Sequence[Request]) -> NDArray[np.int64]:
    """``(n, 7)`` cards: the hole pair, then the board padded with -1."""
    rows = []
    for hole, board in requests:
        if len(hole) != 2 or len(board) not in (0, 3, 4, 5):
            raise ValueError(f"want 2 hole cards and 0, 3, 4 or 5 board cards: {hole}, {board}")
        rows.append((*hole, *board, *(-1,) * (5 - len(board))))
    return np.array(rows, dtype=np.int64).reshape(-1, 7)


def _check(cards: NDArray[np.int64]) -> NDArray[np.int64]:
    """Board sizes of valid ``(n, 7)`` requests; raises on anything else."""
    board = cards[:, 2:] >= 0
    sizes: NDArray[np.int64] = board.sum(axis=1)
    if np.any(cards > 51) or np.any(cards[:, :2] < 0) or np.any(cards[:, 2:] < -1):
        raise ValueError("cards must be ints in 0..51 (boards padded with -1)")
    if np.any(board[:, 1:] > board[:, :-1]) or np.any(np.isin(sizes, (1, 2))):
        raise ValueError("a board holds 0, 3, 4 or 5 cards, padded at the end with -1")
    ordered = np.sort(cards, axis=1)
    repeated = ((ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] >= 0)).any(axis=1)
    if repeated.any():
        raise ValueError(f"repeated card in request {cards[int(np.argmax(repeated))].tolist()}")
    return sizes


def _canonical(cards: NDArray[np.int64], sizes: NDArray[np.int64]) -> NDArray[np.int64]:
    # PV does not depend on the order of the hole cards or of the flop cards.
    out = cards.copy()
    out[:, :2] = np.sort(cards[:, :2], axis=1)
    flop = sizes >= 3
    out[flop, 2:5] = np.sort(cards[flop, 2:5], axis=1)
    return out


def _pv_unique(cards: NDArray[np.int64], sizes: NDArray[np.int64]) -> NDArray[np.float64]:
    out = np.empty(len(cards), dtype=np.float64)
    hole = cards[:, :2]
    for size in (0, 3, 4, 5):
        rows = np.flatnonzero(sizes == size)
        if not rows.size:
            continue
        if size == 0:
            out[rows] = pv_preflop(hole[rows])
        elif size == 3:
            out[rows] = pv_flop(hole[rows], cards[rows, 2:5])
        else:
            stage = _pv_turn if size == 4 else _pv_river
            # Chunks bound the memory of the per-request grids.
            step = 256
            for lo in range(0, len(rows), step):
                part = rows[lo : lo + step]
                out[part] = stage(hole[part], cards[part, 2 : 2 + size])
    return out


# Turn and river PVs cost tens of microseconds: keep them across calls, so a
# log that repeats its deals (logs made with one seed do) pays once per deal.
# Pre-flop and flop PVs are table lookups, cheaper than the cache. The bound
# keeps memory flat on long logs of fresh deals (about 100 bytes an entry).
CACHE_LIMIT = 1 << 20
_cache: dict[int, float] = {}


def pv_cards(cards: NDArray[np.integer[Any]]) -> NDArray[np.float64]:
    """PV of each row of ``(n, 7)`` cards: two hole cards, then 0/3/4/5 board cards and -1s.

    Deduplicated within the call and cached across calls.

    >>> from batchrl.games.holdem.cards import parse_cards
    >>> pv_cards(np.array([[*parse_cards("AhAd"), -1, -1, -1, -1, -1]])).round(4)
    array([0.852])
    """
    cards = np.asarray(cards, dtype=np.int64).reshape(-1, 7)
    if not len(cards):
        return np.zeros(0, dtype=np.float64)
    sizes = _check(cards)
    canon = _canonical(cards, sizes)
    code = np.zeros(len(canon), dtype=np.int64)
    for j in range(7):
        code = code * 53 + canon[:, j] + 1
    unique, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    sizes_u = sizes[first]
    values = np.empty(len(unique), dtype=np.float64)
    cheap = sizes_u < 4
    if cheap.any():
        values[cheap] = _pv_unique(canon[first[cheap]], sizes_u[cheap])
    costly = np.flatnonzero(~cheap)
    if costly.size:
        keys = unique[costly].tolist()
        found = [_cache.get(k) for k in keys]
        missing = [i for i, v in enumerate(found) if v is None]
        values[costly] = [0.0 if v is None else v for v in found]
        if missing:
            rows = first[costly[missing]]
            fresh = _pv_unique(canon[rows], sizes[rows])
            values[costly[missing]] = fresh
            if len(_cache) + len(missing) > CACHE_LIMIT:
                _cache.clear()
            _cache.update(zip([keys[i] for i in missing], fresh.tolist(), strict=True))
    return values[inverse]


def pv_many(requests: Sequence[Request]) -> NDArray[np.float64]:
    """PV of each ``(hole, board)`` request, batched, deduplicated and cached.

    >>> from batchrl.games.holdem.cards import parse_cards
    >>> reqs = [(parse_cards("AhAd"), parse_cards("AsAc2d7h9s")), (parse_cards("7h2d"), ())]
    >>> pv_many(reqs).round(4)
    array([1.    , 0.3458])
    """
    return pv_cards(_as_requests(requests))


def pv(hole: tuple[int, int], board: tuple[int, ...]) -> float:
    """PV of ``hole`` on ``board`` (0, 3, 4 or 5 cards); cached.

    >>> from batchrl.games.holdem.cards import parse_cards
    >>> round(pv(parse_cards("Ks7h"), parse_cards("Kd9c2s")), 4)
    0.8389
    """
    return float(pv_many([(hole, board)])[0])
