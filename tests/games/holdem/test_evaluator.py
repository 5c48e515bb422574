"""The hand evaluator against phevaluator, known hands, and its own 5-card subsets."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from phevaluator import evaluate_cards

from batchrl.games.holdem import evaluator
from batchrl.games.holdem.cards import card_str, parse_cards
from batchrl.games.holdem.evaluator import (
    N_CLASSES,
    category,
    evaluate,
    evaluate7,
    evaluate_many,
)


def reference(hand: NDArray[np.int64]) -> int:
    """phevaluator's strength, flipped so that higher is better."""
    return -int(evaluate_cards(*(card_str(int(c)) for c in hand)))


def random_hands(rng: np.random.Generator, n: int, size: int) -> NDArray[np.int64]:
    return np.argsort(rng.random((n, 52)), axis=1)[:, :size]


def skewed_hands(rng: np.random.Generator, n: int, size: int) -> NDArray[np.int64]:
    """Hands from a few ranks or a few suits, rich in flushes, straights and sets."""
    out = []
    for _ in range(n):
        if rng.random() < 0.5:
            deck = [c for c in range(52) if c & 3 in rng.choice(4, 2, replace=False)]
        else:
            ranks = rng.choice(13, int(rng.integers(3, 7)), replace=False)
            deck = [c for c in range(52) if c >> 2 in ranks]
        out.append(rng.choice(deck, size, replace=False))
    return np.array(out)


def assert_same_order(mine: NDArray[np.int32], ref: NDArray[np.int64]) -> None:
    # Sorted by one evaluator, the other must step up exactly where it does:
    # this is every pairwise comparison, ties included.
    order = np.argsort(mine, kind="stable")
    dm, dr = np.diff(mine[order]), np.diff(ref[order])
    assert np.array_equal(dm > 0, dr > 0)
    assert np.array_equal(dm == 0, dr == 0)


@pytest.mark.parametrize("size", [5, 6, 7])
def test_order_matches_phevaluator(size: int) -> None:
    rng = np.random.default_rng(size)
    hands = np.concatenate([random_hands(rng, 3000, size), skewed_hands(rng, 2000, size)])
    mine = evaluate_many(hands)
    ref = np.array([reference(h) for h in hands])
    assert_same_order(mine, ref)


def test_order_matches_phevaluator_across_sizes() -> None:
    rng = np.random.default_rng(0)
    hands = [h for size in (5, 6, 7) for h in skewed_hands(rng, 700, size)]
    mine = np.array([evaluate(h.tolist()) for h in hands], dtype=np.int32)
    ref = np.array([reference(h) for h in hands])
    assert_same_order(mine, ref)


def test_seven_cards_are_the_best_five() -> None:
    rng = np.random.default_rng(1)
    hands = np.concatenate([random_hands(rng, 300, 7), skewed_hands(rng, 300, 7)])
    subsets = hands[:, list(itertools.combinations(range(7), 5))]  # (n, 21, 5)
    assert np.array_equal(evaluate7(hands), evaluate_many(subsets).max(axis=1))


def test_strengths_span_all_classes() -> None:
    t = evaluator.tables()
    assert t.flush.max() == N_CLASSES
    assert set(np.unique(t.sorted_strengths[0])) | set(np.unique(t.flush[t.flush > 0])) == set(
        range(1, N_CLASSES + 1)
    )


def test_all_five_card_hands() -> None:
    # The textbook counts of each category over all C(52, 5) hands.
    flat = itertools.chain.from_iterable(itertools.combinations(range(52), 5))
    hands = np.fromiter(flat, dtype=np.int8, count=2_598_960 * 5).reshape(-1, 5)
    strengths = evaluate_many(hands)
    assert len(np.unique(strengths)) == N_CLASSES
    names = np.array([category(s) for s in range(1, N_CLASSES + 1)])
    found = dict(zip(*np.unique(names[strengths - 1], return_counts=True), strict=True))
    assert found == {
        "straight flush": 40,
        "four of a kind": 624,
        "full house": 3744,
        "flush": 5108,
        "straight": 10200,
        "three of a kind": 54912,
        "two pair": 123552,
        "pair": 1098240,
        "high card": 1302540,
    }


CATEGORY_EXAMPLES = [
    ("AsKsQsJsTs", "straight flush"),
    ("5d4d3d2dAd", "straight flush"),
    ("9c9d9h9s2c", "four of a kind"),
    ("3c3d3hKsKc", "full house"),
    ("2c2d2h3s3c", "full house"),
    ("Ah9h7h4h2h", "flush"),
    ("AcKdQhJsTc", "straight"),
    ("6c5d4h3s2c", "straight"),
    ("5c4d3h2sAc", "straight"),
    ("QcQdQh7s2c", "three of a kind"),
    ("JcJd4h4s9c", "two pair"),
    ("TcTd8h4s2c", "pair"),
    ("AcJd8h4s2c", "high card"),
    ("7c5d4h3s2c", "high card"),
]


def test_categories_in_order() -> None:
    strengths = [evaluate(parse_cards(text)) for text, _ in CATEGORY_EXAMPLES]
    assert [category(s) for s in strengths] == [name for _, name in CATEGORY_EXAMPLES]
    assert strengths == sorted(strengths, reverse=True)
    assert strengths[0] == N_CLASSES and strengths[-1] == 1


@pytest.mark.parametrize(
    ("better", "worse"),
    [
        ("6c5d4h3s2c", "5c4d3h2sAc"),  # the wheel is the lowest straight
        ("5c4d3h2sAc", "AcAdAhKsQc"),  # ... but beats any three of a kind
        ("6d5d4d3d2d", "5d4d3d2dAd"),  # the steel wheel is the lowest straight flush
        ("AcAdKhKs8c8d2h", "AcAdKhKs7c6d5h"),  # third pair can be the kicker
        ("AcAdKhKs7c6d5h", "AcAdKhKs6c5d4h"),
        ("9c9d9h7s7c7d2h", "9c9d9h2s2c3d4h"),  # two trips: full house, nines full of sevens
        ("KhQhJh9h7h2c3c", "KhQhJh9h6h2cAc"),  # flush kickers, not off-suit ace
        ("AhAdAcAs2c3dKh", "AhAdAcAsQc3dJh"),  # quads kicker
        ("8c7d6h5s4c3d2h", "7c6d5h4s3c2dKh"),  # highest straight of seven cards
    ],
)
def test_known_comparisons(better: str, worse: str) -> None:
    assert evaluate(parse_cards(better)) > evaluate(parse_cards(worse))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("AcKdQhJsTc", "AdKhQsJcTd"),  # suits do not matter off a flush
        ("AcAd2h3s4c8s9s", "AhAs2c3d4h8d9c"),
        ("AhKhQhJhThAcAd", "AsKsQsJsTsAcAd"),
        ("2c2d5h5s9cKdQd", "2h2s5c5d9dKhQh"),
    ],
)
def test_ties(a: str, b: str) -> None:
    assert evaluate(parse_cards(a)) == evaluate(parse_cards(b))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 51), min_size=7, max_size=7, unique=True))
def test_scalar_and_vector_paths_agree(hand: list[int]) -> None:
    strength = evaluate(hand)
    assert strength == int(evaluate7(np.array([hand, hand[::-1]]))[1])
    assert strength == int(evaluate_many(np.array(hand, dtype=np.int8)[None])[0])
    assert 1 <= strength <= N_CLASSES


def test_evaluate7_shapes_and_dtypes() -> None:
    rng = np.random.default_rng(3)
    hands = random_hands(rng, 100_000, 7)  # several chunks
    flat = evaluate7(hands)
    assert flat.dtype == np.int32 and flat.shape == (100_000,)
    assert np.array_equal(evaluate7(hands.astype(np.int8)), flat)
    assert np.array_equal(evaluate7(hands.reshape(10, 10_000, 7)), flat.reshape(10, 10_000))


@pytest.mark.parametrize(
    "hand", [[0, 1, 2, 3], [0, 1, 2, 3, 4, 5, 6, 7], [0, 0, 1, 2, 3], [0, 1, 2, 3, 52]]
)
def test_evaluate_rejects_bad_hands(hand: list[int]) -> None:
    with pytest.raises(ValueError):
        evaluate(hand)
