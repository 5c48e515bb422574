"""PV2 (equity against two random hands) against a plain reference: the same deals,
drawn by the same counter, dealt from a whole deck per deal, and every hand judged by
phevaluator (another evaluator than ours)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.typing import NDArray
from phevaluator import evaluate_cards

from batchrl.games.holdem.cards import card_str
from batchrl.games.holdem.pv2 import _uniform, equity2, pv2_cards


def reference(cards: NDArray[np.int64], size: int, samples: int,
              keys: NDArray[np.uint64]) -> NDArray[np.float64]:
    """Each request's deals by a textbook partial Fisher-Yates shuffle of a copy of its
    unseen cards (the draws ``equity2`` takes), the pot shared among the best hands."""
    draws = 9 - size
    uniforms = [_uniform(keys, samples, j) for j in range(draws)]
    shares = np.zeros((len(cards), samples))
    for r, row in enumerate(cards):
        seen = set(row[: 2 + size].tolist())
        rest = [c for c in range(52) if c not in seen]
        for s in range(samples):
            deck = list(rest)
            for j in range(draws):
                pick = j + int(uniforms[j][r, s] * (len(rest) - j))
                deck[j], deck[pick] = deck[pick], deck[j]
            board = [*row[2 : 2 + size].tolist(), *deck[4:draws]]

            def strength(hole: list[int], board: list[int] = board) -> int:
                return -evaluate_cards(*(card_str(c) for c in hole + board))

            mine = strength(row[:2].tolist())
            theirs = [strength(deck[0:2]), strength(deck[2:4])]
            if mine >= max(theirs):
                shares[r, s] = 1 / (1 + theirs.count(mine))
    out: NDArray[np.float64] = shares.mean(axis=1)
    return out


def _requests(rng: np.random.Generator, size: int, flushy: bool) -> NDArray[np.int64]:
    rows = []
    for _ in range(6):
        if flushy:  # four or five of one suit seen: the flush path of every hand
            suit = int(rng.integers(4))
            mine = (rng.permutation(13)[: min(2 + size, 5)] * 4 + suit).tolist()
            others = [c for c in rng.permutation(52).tolist() if c not in mine]
            seen = rng.permutation(mine + others[: 2 + size - len(mine)]).tolist()
        else:
            seen = rng.permutation(52)[: 2 + size].tolist()
        rows.append(seen + [-1] * (5 - size))
    return np.array(rows, dtype=np.int64)


@pytest.mark.parametrize("size", [0, 3, 4, 5])  # 0: the pre-flop table's deals
@pytest.mark.parametrize("flushy", [False, True])
def test_equity2_deals_and_judges_as_the_reference(size: int, flushy: bool) -> None:
    rng = np.random.default_rng(size + 10 * flushy)
    cards = _requests(rng, size, flushy)
    keys = rng.integers(1, 2**62, len(cards)).astype(np.uint64)
    samples = 40
    got = equity2(cards, size, samples, keys)
    assert np.array_equal(got, reference(cards, size, samples, keys))
    assert 0 < got.mean() < 1  # not a degenerate case: some deals won, some lost


def test_the_same_cards_in_another_order_give_the_same_value() -> None:
    flop = [[0, 9, 20, 33, 47, -1, -1], [9, 0, 47, 20, 33, -1, -1]]
    a, b = pv2_cards(np.array(flop))
    assert a == b and 0 < a < 1
