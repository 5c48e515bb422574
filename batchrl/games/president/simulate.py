"""Many President games at once, in numpy lockstep: random play for benchmarks and
statistics, move for move the game ``rules.step`` plays (tested by replaying the moves).

Every array has one row per game: hands ``(G, n, 10)``, the set on the table, who played
it, the pass bits, whose turn, each seat's place once out. A step asks the legal moves
of every live game at once (`legal_masks`), picks one uniformly at random per game, and
applies them all together.

>>> result = random_games(1000, 4, np.random.default_rng(0))
>>> result.places.shape, sorted(set(result.places[0].tolist()))
((1000, 4), [0, 1, 2, 3])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from batchrl.games.president.rules import CARDS, N_ACTIONS, N_RANKS, N_SUITS

_COUNTS = np.arange(1, N_SUITS + 1, dtype=np.int8)


@dataclass(frozen=True)
class Games:
    """Finished games: ``places[g, s]`` seat s's place (0 the president), ``scores`` the
    seed's time reward summed per seat, ``moves[g]`` the actions in order (-1 after the
    end), ``dealt[g, s]`` seat s's card ids."""

    places: NDArray[np.int8]
    scores: NDArray[np.float64]
    moves: NDArray[np.int8]
    dealt: NDArray[np.int8]


def deal_many(count: int, players: int, rng: np.random.Generator) -> NDArray[np.int8]:
    """``count`` shuffled decks dealt evenly: ``(count, players, 40 // players)`` card ids."""
    decks = rng.permuted(np.tile(np.arange(CARDS, dtype=np.int8), (count, 1)), axis=1)
    return decks.reshape(count, players, CARDS // players)


def legal_masks(hand: NDArray[np.int8], rank: NDArray[np.int8], count: NDArray[np.int8],
                first: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """The legal moves ``(G, 41)`` of the seats to act, from their hands ``(G, 10)``, the
    set on the table (rank -1 when leading) and whether it is the game's first play."""
    g = len(hand)
    sets = hand[:, :, None] >= _COUNTS  # (G, 10, 4): may play c cards of rank r
    leading = rank < 0
    follow = (np.arange(N_RANKS)[None, :, None] > rank[:, None, None]) & \
        (_COUNTS[None, None, :] == count[:, None, None])
    sets &= leading[:, None, None] | follow
    sets[first, 1:, :] = False
    mask = np.empty((g, N_ACTIONS), dtype=bool)
    mask[:, 0] = ~leading & ~first
    mask[:, 1:] = sets.reshape(g, -1)
    return mask


def random_games(count: int, players: int, rng: np.random.Generator,
                 pass_locks: bool = False, batch: int = 4096) -> Games:
    """``count`` games of uniformly random legal play, ``batch`` at a time in lockstep."""
    parts = [_random_games(min(batch, count - lo), players, rng, pass_locks)
             for lo in range(0, count, batch)]
    width = max(p.moves.shape[1] for p in parts)
    moves = np.concatenate([np.pad(p.moves, ((0, 0), (0, width - p.moves.shape[1])),
                                   constant_values=-1) for p in parts])
    return Games(np.concatenate([p.places for p in parts]),
                 np.concatenate([p.scores for p in parts]), moves,
                 np.concatenate([p.dealt for p in parts]))


def _random_games(count: int, players: int, rng: np.random.Generator,
                  pass_locks: bool) -> Games:
    n = players
    dealt = deal_many(count, n, rng)
    hands = np.zeros((count, n, N_RANKS), dtype=np.int8)
    rows = np.repeat(np.arange(count), n * (CARDS // n))
    seats = np.tile(np.repeat(np.arange(n), CARDS // n), count)
    np.add.at(hands, (rows, seats, dealt.reshape(-1) // N_SUITS), 1)
    turn = np.argmax((dealt == 0).any(axis=2), axis=1).astype(np.int64)  # the 2 of golds
    rank = np.full(count, -1, dtype=np.int8)
    size = np.zeros(count, dtype=np.int8)
    last = np.full(count, -1, dtype=np.int64)
    passed = np.zeros(count, dtype=np.int64)
    first = np.ones(count, dtype=bool)
    places = np.full((count, n), -1, dtype=np.int8)
    out = np.zeros(count, dtype=np.int8)
    decisions = np.zeros((count, n), dtype=np.int64)
    moves = np.full((count, CARDS * 2 * n), -1, dtype=np.int8)
    live = np.arange(count)
    bit = 1 << np.arange(n, dtype=np.int64)
    t = 0
    while len(live):
        g = live
        seat = turn[g]
        hand = hands[g, seat]
        mask = legal_masks(hand, rank[g], size[g], first[g])
        action = np.argmax(rng.random(mask.shape) * mask, axis=1)
        if t >= moves.shape[1]:
            moves = np.concatenate([moves, np.full_like(moves, -1)], axis=1)
        moves[g, t] = action
        decisions[g, seat] += 1
        plays = action > 0
        r = (action - 1) // N_SUITS
        c = (action - 1) % N_SUITS + 1
        # passes
        pg = g[~plays]
        passed[pg] |= bit[seat[~plays]]
        # plays
        qg, qs, qr, qc = g[plays], seat[plays], r[plays], c[plays]
        hands[qg, qs, qr] -= qc.astype(np.int8)
        rank[qg], size[qg], last[qg] = qr, qc, qs
        if not pass_locks:
            passed[qg] = 0
        first[g] = False
        emptied = hands[qg, qs].sum(axis=1) == 0
        eg, es = qg[emptied], qs[emptied]
        places[eg, es] = out[eg]
        out[eg] += 1
        # the end: one seat holds cards
        holding = hands[g].sum(axis=2) > 0  # (L, n)
        over = holding.sum(axis=1) <= 1
        og = g[over]
        servant = np.argmax(holding[over], axis=1)
        has = holding[over].any(axis=1)
        places[og[has], servant[has]] = out[og[has]]
        # the round: every other seat holding cards passed on the last set
        hold_bits = (holding * bit).sum(axis=1)
        lastbit = np.where(last[g] >= 0, bit[np.maximum(last[g], 0)], 0)
        round_over = ~over & ((hold_bits & ~lastbit & ~passed[g]) == 0)
        # the next seat: after the last player on a new round, else after this seat
        start = np.where(round_over, last[g] - 1, seat)
        skip = np.where(round_over, 0, passed[g] if pass_locks else 0)
        allowed = holding & ((skip[:, None] & bit) == 0)
        offsets = (start[:, None] + 1 + np.arange(n)) % n  # seats in turn order
        pick = np.argmax(np.take_along_axis(allowed, offsets, axis=1), axis=1)
        turn[g] = offsets[np.arange(len(g)), pick]
        rg = g[round_over]
        rank[rg], size[rg], last[rg], passed[rg] = -1, 0, -1, 0
        live = g[~over]
        t += 1
    emptied_all = places < n - 1
    scores = -(decisions - emptied_all) + np.where(emptied_all, 3 - places, 0)
    return Games(places, scores.astype(np.float64), moves[:, :t], dealt)
