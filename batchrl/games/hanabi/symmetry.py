"""Colour symmetry of two-player Hanabi: a canonical colour order for the 195 numbers.

The five colours play the same part in the rules, so renaming them gives an
equivalent game. The report ("Gestione delle simmetrie") therefore put each
state's colours in a canonical order and permuted every colour-indexed number,
remapping the hint-colour actions to match. This module does that from the 195
numbers of ``knowledge.encode`` alone (no engine state), vectorized over rows,
so it applies to any stored dataset.

A permutation ``perm`` (one row per state) says that position j of the
canonical order holds original colour ``perm[i, j]``.

* ``colour_order(X)``: the canonical order. Colours are sorted, largest key
  first, by: the firework; the discards from rank 5 down to 1; the partner's
  cards of the colour from rank 5 down to 1 (from its colour one-hots and
  ranks); the partner's ``poss_color`` of the colour, slot by slot; the acting
  player's, slot by slot (the report sorts these values; slot order is finer);
  and last every one of the colour's 21 numbers. So
  two colours tie only when all their numbers are equal, and then swapping
  them leaves the canonical vector unchanged: it is a function of the
  equivalence class alone. (The report's key stops before that last step;
  colours it leaves tied can still differ, e.g. in which partner slot holds
  which colour, and then the original colour names leak into the order.)
  A legal colour hint never names a fully tied colour: the partner holds a
  card of the hinted colour, whose one-hot tells it apart.
* ``canonical_states(X, perm)`` / ``original_states(X, perm)``: move the 105
  colour-indexed numbers (``COLOUR_COLUMNS``): the 5 fireworks, the 25
  discards (colour × rank), each own slot's 5 ``poss_color`` and each partner
  slot's 5 ``poss_color`` and 5-colour one-hot. Nothing else depends on the
  colour names: playability, entropy, uselessness, ``poss_value``, the partner
  card's rank, hints, fuses, deck and the hand entropies stay where they are.
* ``canonical_actions(y, perm)`` / ``original_actions(y, perm)``: only hint
  colour (15–19) changes; the two are inverse.

Card slots keep their order. A slot's index is the card's age (slot 0 the
oldest) and carries meaning: the usual conventions discard the oldest
untouched card and read a hint's newest touched card. The report also sorted
the cards, which renames the play and discard actions (0–9) by a state-
dependent slot permutation; a player's own cards are unknown, so the sort
key of its own slots can only be its knowledge, which often ties (fresh
cards), and then equal canonical states get different play/discard labels.
Sorting colours only needs no such remapping of 0–9.

``relabel_state`` and ``relabel_action`` rename the colours of an engine
state and an action (colour c becomes ``sigma[c]``), e.g. for tests and
data augmentation.

>>> X = np.zeros((1, 195))
>>> X[0, FIREWORKS] = [0, 0, 3, 0, 1]        # red at 3, green at 1
>>> perm = colour_order(X)
>>> perm.tolist()                            # red, green, then the tied ones in order
[[2, 4, 0, 1, 3]]
>>> canonical_states(X, perm)[0, FIREWORKS].tolist()
[3.0, 1.0, 0.0, 0.0, 0.0]
>>> canonical_actions([17], perm).tolist(), canonical_actions([3], perm).tolist()  # red; play 3
([15], [3])
>>> original_actions([15], perm).tolist()   # canonical colour 0 is red
[17]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from numpy.typing import ArrayLike, NDArray

from batchrl.games.hanabi.rules import State, decode, encode_hint

N_FEATURES = 195
HINT_COLOUR = 15  # the first hint-colour action (two players)
_OWN, _OTHER, _OWN_SIZE, _OTHER_SIZE = 35, 100, 13, 19
_POSS_COLOR, _ONE_HOT, _VALUE = 8, 13, 18  # offsets inside a slot's block
_SLOTS = np.arange(5)

FIREWORKS = 3 + np.arange(5)  # column of colour c's firework
DISCARDS = 10 + 5 * np.arange(5)[:, None] + np.arange(5)  # [colour, rank - 1]
OWN_POSS = _OWN + _OWN_SIZE * _SLOTS[None, :] + _POSS_COLOR + np.arange(5)[:, None]  # [c, slot]
OTHER_POSS = _OTHER + _OTHER_SIZE * _SLOTS[None, :] + _POSS_COLOR + np.arange(5)[:, None]
OTHER_ONE_HOT = _OTHER + _OTHER_SIZE * _SLOTS[None, :] + _ONE_HOT + np.arange(5)[:, None]
OTHER_VALUE = _OTHER + _OTHER_SIZE * _SLOTS + _VALUE  # [slot], colour-free
# Row c: every column that belongs to colour c, in the same order for each colour.
COLOUR_COLUMNS: NDArray[np.intp] = np.hstack(
    [FIREWORKS[:, None], DISCARDS, OWN_POSS, OTHER_POSS, OTHER_ONE_HOT]).astype(np.intp)


def _states(X: ArrayLike) -> NDArray[np.generic]:
    x = np.asarray(X)
    if x.ndim != 2 or x.shape[1] != N_FEATURES:
        raise ValueError(f"want states of shape (n, {N_FEATURES}), not {x.shape}")
    return x


def _perms(perm: ArrayLike, n: int) -> NDArray[np.intp]:
    p = np.asarray(perm).astype(np.intp)
    if p.shape != (n, 5) or not (np.sort(p, axis=1) == np.arange(5)).all():
        raise ValueError(f"want {n} permutations of the 5 colours, shape ({n}, 5)")
    return p


def inverse(perm: ArrayLike) -> NDArray[np.intp]:
    """Each row's inverse permutation: ``inverse(perm)[i, perm[i, j]] == j``."""
    p = np.asarray(perm)
    out: NDArray[np.intp] = np.argsort(p, axis=1).astype(np.intp)
    return out


def sort_keys(X: ArrayLike) -> NDArray[np.float64]:
    """The ordering key of each colour, most significant first: (n, 5, 46)."""
    x = _states(X).astype(np.float64)
    one_hot = x[:, OTHER_ONE_HOT]  # (n, colour, slot)
    ranks = x[:, OTHER_VALUE]  # (n, slot)
    # partner's cards of each colour and rank, rank 5 first: (n, colour, 5)
    held = np.einsum("ncs,nsr->ncr", one_hot,
                     (ranks[:, :, None] == np.arange(5, 0, -1)).astype(np.float64))
    keys: NDArray[np.float64] = np.concatenate(
        [x[:, FIREWORKS][:, :, None], x[:, DISCARDS][:, :, ::-1], held,
         x[:, OTHER_POSS], x[:, OWN_POSS], x[:, COLOUR_COLUMNS]], axis=2)
    return keys


def colour_order(X: ArrayLike) -> NDArray[np.intp]:
    """Each state's canonical colour order: (n, 5), position j holds original colour
    ``perm[i, j]``; colours by decreasing key (``sort_keys``), full ties in their
    original order."""
    keys = sort_keys(X)
    # np.lexsort: the last key is the primary one; negated for a decreasing order
    order: NDArray[np.intp] = np.lexsort(-np.moveaxis(keys, 2, 0)[::-1], axis=-1)
    return order.astype(np.intp)


def canonical_states(X: ArrayLike, perm: ArrayLike) -> NDArray[np.generic]:
    """``X`` with each row's colour-indexed columns reordered: colour j of the result
    is colour ``perm[i, j]`` of ``X``. Also renames colours by any permutation."""
    x = _states(X)
    p = _perms(perm, len(x))
    out = x.copy()
    out[:, COLOUR_COLUMNS] = x[np.arange(len(x))[:, None, None], COLOUR_COLUMNS[p]]
    return out


def original_states(X: ArrayLike, perm: ArrayLike) -> NDArray[np.generic]:
    """The inverse of ``canonical_states`` with the same ``perm``."""
    return canonical_states(X, inverse(_perms(perm, len(_states(X)))))


def _actions(y: ArrayLike, n: int) -> NDArray[np.int64]:
    a = np.asarray(y).astype(np.int64)
    if a.shape != (n,) or ((a < 0) | (a >= 20)).any():
        raise ValueError(f"want {n} two-player actions 0..19, shape ({n},)")
    return a


def _rename_hints(y: NDArray[np.int64], to: NDArray[np.intp]) -> NDArray[np.int64]:
    """Hint colour c becomes hint colour ``to[i, c]``; other actions stay."""
    hint = y >= HINT_COLOUR
    c = np.where(hint, y - HINT_COLOUR, 0)
    out: NDArray[np.int64] = np.where(
        hint, HINT_COLOUR + to[np.arange(len(y)), c], y).astype(np.int64)
    return out


def canonical_actions(y: ArrayLike, perm: ArrayLike) -> NDArray[np.int64]:
    """Actions in the canonical colour names: hinting original colour ``perm[i, j]``
    becomes hinting colour j; plays, discards and rank hints are unchanged."""
    a = _actions(y, len(np.asarray(perm)))
    return _rename_hints(a, inverse(_perms(perm, len(a))))


def original_actions(y: ArrayLike, perm: ArrayLike) -> NDArray[np.int64]:
    """The inverse of ``canonical_actions``: canonical hint colour j is original colour
    ``perm[i, j]``."""
    a = _actions(y, len(np.asarray(perm)))
    return _rename_hints(a, _perms(perm, len(a)))


def relabel_card(card: int, sigma: Sequence[int]) -> int:
    """The card with its colour c renamed ``sigma[c]``."""
    return int(sigma[card // 5]) * 5 + card % 5


def _relabel_mask(mask: int, sigma: Sequence[int]) -> int:
    return sum(1 << int(sigma[c]) for c in range(5) if mask >> c & 1)


def relabel_state(state: State, sigma: Sequence[int]) -> State:
    """The same game with colour c renamed ``sigma[c]`` (any number of players): cards
    in hands, deck and discards, the fireworks, the colour masks of hints, and the last
    moves' cards and hinted colours."""
    if sorted(int(s) for s in sigma) != list(range(5)):
        raise ValueError(f"sigma must be a permutation of 0..4, not {sigma}")
    fireworks = [0] * 5
    for c, f in enumerate(state.fireworks):
        fireworks[int(sigma[c])] = f
    return replace(
        state,
        hands=tuple(tuple(relabel_card(c, sigma) for c in h) for h in state.hands),
        known=tuple(tuple((_relabel_mask(cm, sigma), rm) for cm, rm in k) for k in state.known),
        deck=tuple(relabel_card(c, sigma) for c in state.deck),
        discards=tuple(relabel_card(c, sigma) for c in state.discards),
        fireworks=tuple(fireworks),
        last=tuple((seat, relabel_action(action, sigma, state.players),
                    -1 if card < 0 else relabel_card(card, sigma), info)
                   for seat, action, card, info in state.last))


def relabel_action(action: int, sigma: Sequence[int], players: int = 2) -> int:
    """The action with a hinted colour c renamed ``sigma[c]``; others unchanged."""
    kind, offset, value = decode(action, players)
    if kind != "hint_colour":
        return action
    return encode_hint(kind, offset, int(sigma[value]))
