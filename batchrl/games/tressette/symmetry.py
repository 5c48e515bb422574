"""Suits in a canonical order: Tressette has no trumps, so renaming the suits of a
deal changes nothing in its play, and a learner need not see the same situation
in each of the 24 suit orders.

``canonical`` renames each state's suits ``a b c d`` in an order read from the
state itself: the led suit first, then the suits with more cards in hand, then
the stronger holding, then the cards played and on the table, the known voids
and the signals. Two suits that tie on all of these are alike in every column,
so the state reads the same whichever comes first. Every column that names a
suit or a card is moved with it, and so are the legal cards and the card played;
``to_cards`` turns a card chosen in the canonical names back into the real one.

>>> import numpy as np
>>> from batchrl.games.tressette.features import Tracker
>>> from batchrl.games.tressette.rules import card_name, deal
>>> t = Tracker.deal([deal(np.random.default_rng(0), leader=1)])
>>> [card_name(c) for c in np.flatnonzero(t.hands[0, 1])]
['4D', '4C', 'AC', '4S', '6S', '10S', '2S', '4B', 'AB', '2B']
>>> x, legal, order = canonical(t.features(), t.legal())
>>> [canonical_name(c) for c in np.flatnonzero(x[0, :40])]
['4a', '6a', '10a', '2a', '4b', 'Ab', '2b', '4c', 'Ac', '4d']
>>> card_name(int(to_cards(np.array([7]), order)[0]))  # the ace of suit a: spades
'AS'
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games.tressette.features import KINDS, POPCOUNT, feature_names, pack_bits
from batchrl.games.tressette.rules import RANKS, SUITS, card_name

CANONICAL = "abcd"  # the canonical suits' letters, in their order
_CARD_BLOCKS = ("hand", "played", "table", "beats", "master")
_SUIT_BLOCKS = ("led", "mine", "unseen")


def canonical_name(card: int) -> str:
    """The name of card id ``card`` among the canonical suits (``Aa``, ``3d``)."""
    return card_name(card)[:-1] + CANONICAL[card // 10]


def canonical_names() -> tuple[str, ...]:
    """The feature names with the canonical suits' letters (``hand_Aa``, ``void_1_b``)."""
    return tuple(_rename(n) for n in feature_names())


def _rename(name: str) -> str:
    """``hand_AD`` -> ``hand_Aa``, ``signal_1_C_volo`` -> ``signal_1_b_volo``; names
    without a suit or card stay."""
    parts = name.split("_")
    at = -2 if parts[-1] in KINDS else -1
    tail = parts[at]
    if tail[-1:] in tuple(SUITS) and (len(tail) == 1 or tail[:-1] in RANKS):
        parts[at] = tail[:-1] + CANONICAL[SUITS.index(tail[-1])]
    return "_".join(parts)


def _sources(order: tuple[int, ...], names: tuple[str, ...]) -> NDArray[np.int64]:
    """For one order (``order[i]``: the suit put in place i), where each canonical
    column is read from: canonical column j is column ``src[j]`` of the state."""
    index = {n: i for i, n in enumerate(names)}
    src = np.arange(len(names))
    for place, suit in enumerate(order):
        to, frm = SUITS[place], SUITS[suit]
        moves = [(f"{b}_{card_name(place * 10 + r)}", f"{b}_{card_name(suit * 10 + r)}")
                 for b in _CARD_BLOCKS for r in range(10)]
        moves += [(f"{b}_{to}", f"{b}_{frm}") for b in _SUIT_BLOCKS]
        moves += [(f"void_{p}_{to}", f"void_{p}_{frm}") for p in range(4)]
        moves += [(f"signal_{p}_{to}_{k}", f"signal_{p}_{frm}_{k}")
                  for p in range(4) for k in KINDS]
        for new, old in moves:
            src[index[new]] = index[old]
    return src


_NAMES = feature_names()
_ORDERS = list(itertools.permutations(range(4)))
_SRC = np.stack([_sources(o, _NAMES) for o in _ORDERS])  # (24, features)
_CARD_SRC = np.stack([np.asarray(o)[np.arange(40) // 10] * 10 + np.arange(40) % 10
                      for o in _ORDERS])  # (24, 40): canonical card -> real card
_ORDER_ID = np.full(256, -1, dtype=np.int64)  # an order as base-4 digits -> its index
for _i, _o in enumerate(_ORDERS):
    _ORDER_ID[sum(s << (2 * p) for p, s in enumerate(_o))] = _i


def _suit_columns() -> NDArray[np.int64]:
    """(4, 47): for each suit, where its key's parts are in a state: led, then its ten
    cards in hand, played and on the table (rank order), then the bits of its seats'
    signals (3 × seat + kind) and voids (12 + seat)."""
    columns = []
    for s in SUITS:
        cards = [card_name(SUITS.index(s) * 10 + r) for r in range(10)]
        signals = [f"signal_{p}_{s}_{k}" for p in range(4) for k in KINDS]
        names = [f"led_{s}", *(f"{b}_{c}" for b in ("hand", "played", "table") for c in cards),
                 *signals, *(f"void_{p}_{s}" for p in range(4))]
        columns.append([_NAMES.index(n) for n in names])
    return np.asarray(columns, dtype=np.int64)


_KEY_COLUMNS = _suit_columns()


def _keys(x: NDArray[Any]) -> NDArray[np.int64]:
    """(n, 4): one sortable number per suit: led, cards held, the holding, the cards
    played and on the table, the four seats' voids and signals (51 bits). Suits with
    equal numbers are alike in every column."""
    # each suit's 47 flags as the bits of one number (bit i: its i-th column)
    bits = pack_bits(np.take(x, _KEY_COLUMNS, axis=1) != 0)  # (n, 4)
    held, played = (bits >> 1) & 0x3FF, (bits >> 11) & 0x3FF
    table, shown = (bits >> 21) & 0x3FF, (bits >> 31) & 0xFFFF
    key = (bits & 1).astype(np.int64) << 50
    key |= POPCOUNT[held].astype(np.int64) << 46
    key |= held.astype(np.int64) << 36
    key |= played.astype(np.int64) << 26
    key |= table.astype(np.int64) << 16
    key |= shown.astype(np.int64)
    return key


def suit_order(x: NDArray[Any]) -> NDArray[np.int64]:
    """(n, 4): for each state (float or int8 features), the real suit put in each
    canonical place."""
    order: NDArray[np.int64] = np.argsort(-_keys(x), axis=1, kind="stable")
    return order


def canonical(x: NDArray[Any], legal: NDArray[np.bool_] | None = None,
              action: NDArray[np.integer] | None = None
              ) -> tuple[NDArray[Any], NDArray[np.bool_] | None, NDArray[np.int64]]:
    """States ``x`` (n, 287) with their suits in canonical order, the legal cards (n, 40)
    renamed alike, and the order (n, 4) ``to_cards`` needs. With ``action`` (the cards
    played), the third value is those cards renamed instead of the order; a card of a
    suit that ties with an earlier one is named in the first of them (the two cards are
    alike, so the same situation always gives the same action)."""
    keys = _keys(x)
    order: NDArray[np.int64] = np.argsort(-keys, axis=1, kind="stable")
    ids = _ORDER_ID[(order << (2 * np.arange(4))).sum(axis=1)]
    out, moved = np.empty_like(x), None if legal is None else np.empty_like(legal)
    # the rows of each of the 24 orders at once: one gather with that order's columns
    by_order = np.argsort(ids, kind="stable")
    bounds = np.searchsorted(ids[by_order], np.arange(len(_ORDERS) + 1))
    for k in np.flatnonzero(np.diff(bounds)).tolist():
        rows = by_order[bounds[k]:bounds[k + 1]]
        out[rows] = np.take(x[rows], _SRC[k], axis=1)
        if moved is not None and legal is not None:
            moved[rows] = np.take(legal[rows], _CARD_SRC[k], axis=1)
    if action is None:
        return out, moved, order
    return out, moved, _renamed(keys, action)


def canonical_cards(x: NDArray[Any], cards: NDArray[np.integer]
                    ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The order (n, 4) of states ``x`` and real ``cards`` renamed in their canonical
    suits, as `canonical` gives them, without moving the states' columns (what a bot
    playing real cards needs)."""
    keys = _keys(x)
    order: NDArray[np.int64] = np.argsort(-keys, axis=1, kind="stable")
    return order, _renamed(keys, cards)


def _renamed(keys: NDArray[np.int64], action: NDArray[np.integer]) -> NDArray[np.int64]:
    """Cards named in the canonical suits; a tied suit's card by the first of the tie."""
    action = np.asarray(action, dtype=np.int64)
    own = keys[np.arange(len(action)), action // 10]
    first = (keys > own[:, None]).sum(axis=1)  # the first place with the card's key
    renamed: NDArray[np.int64] = first * 10 + action % 10
    return renamed


def to_card(card: int, order: Sequence[int]) -> int:
    """One card named in a state's canonical suits (``order``: the real suit in each
    canonical place), as the real card; `to_cards` for many."""
    return order[card // 10] * 10 + card % 10


def to_cards(cards: NDArray[np.integer], order: NDArray[np.int64]) -> NDArray[np.int64]:
    """Cards named in each state's canonical suits, as the real cards."""
    cards = np.asarray(cards, dtype=np.int64)
    real: NDArray[np.int64] = order[np.arange(len(cards)), cards // 10] * 10 + cards % 10
    return real
