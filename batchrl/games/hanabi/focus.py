"""The facts a focus convention reads, computed from the 210 numbers a store keeps.

The bots' convention (``bots.ConventionBot``) decides on facts that are
functions of the two-player state a store keeps (the report's 195 numbers and
the 15 public hint facts), but not simple ones: which of the partner's cards a
rank or a colour hint would *focus* (the newest card it touches for the first
time), whether the partner would read that focus as a play, which card is a
hand's oldest untouched one (its "chop"), whether a card is the last copy the
mover has not seen. A network can in principle learn them from the 210 numbers;
``convention_facts`` hands them over ready-made, so the network spends its
capacity on choosing between them. They add no information: every fact is
computed from the same row, and the network still makes every decision.

Per own slot (5 each): the focus of the partner's hint just before (one-hot of
the newest slot it touched first), the chop, ``playability > 0``,
``playability > 0.999``, ``uselessness > 0.999``. Per partner slot (5 each): the
card plays now, the partner knows it plays, a rank hint would focus it, a colour
hint would focus it, another touched card of the partner's is the same card,
the card is a play the mover could hint (plays now, not known, no touched copy,
a hint focuses it), the chop, the card is critical (not dead, and at most one
other copy not seen by the mover), a rank hint touching it would have its focus
read as a play, a colour hint the same. Then: no hint token left, all 8 left,
the deck empty. Empty slots are all zeros. Every fact is per slot, never per
colour, so the colour order (``symmetry``) leaves them unchanged.

>>> from batchrl.games.hanabi.knowledge import encode, hint_features
>>> from batchrl.games.hanabi.rules import deal, full_deck, step
>>> s = step(deal(full_deck(), 2), 13)   # player 0 hints fours: player 1's slots 2 and 3
>>> x = np.concatenate([encode(s, 1), hint_features(s, 1)])[None]
>>> f = convention_facts(x)
>>> f.shape == (1, len(FACT_NAMES))
True
>>> [FACT_NAMES[i] for i in np.flatnonzero(f[0, :5])]     # the newest touched slot
['current3_focus']
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from batchrl.games.hanabi.knowledge import COPIES, table_facts

_OWN = ("focus", "chop", "maybe_playable", "known_playable", "known_useless")
_OTHER = ("plays_now", "known_playable", "rank_hint_focus", "colour_hint_focus",
          "touched_copy", "hintable_play", "chop", "critical", "rank_hint_misread",
          "colour_hint_misread")
FACT_NAMES = (*(f"current{i}_{n}" for n in _OWN for i in range(5)),
              *(f"other{i}_{n}" for n in _OTHER for i in range(5)),
              "no_hints", "all_hints", "deck_empty")
WIDTH = 210  # what the facts are read from: the report's 195 numbers and 15 hint facts


def _first(flags: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """One-hot of each row's first set slot (none set: all False)."""
    out = np.zeros_like(flags)
    rows = np.flatnonzero(flags.any(axis=1))
    out[rows, flags[rows].argmax(axis=1)] = True
    return out


def _last(flags: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """One-hot of each row's last set slot."""
    return _first(flags[:, ::-1])[:, ::-1]


def _focus_of(hits: NDArray[np.bool_], clued: NDArray[np.bool_]) -> NDArray[np.intp]:
    """The slot a hint touching ``hits`` (rows, slots) focuses: the newest first-touched
    card, else the newest touched; -1 where it touches none."""
    new = hits & ~clued
    pick = np.where(new.any(axis=1, keepdims=True), new, hits)
    last = 4 - pick[:, ::-1].argmax(axis=1)
    return np.where(pick.any(axis=1), last, -1)


def convention_facts(x: NDArray[np.floating]) -> NDArray[np.float32]:
    """The facts (``FACT_NAMES``) of each row of ``x``, rows of the 210 stored numbers."""
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2 or x.shape[1] < WIDTH:
        raise ValueError(f"want rows of the {WIDTH} stored numbers, not shape {x.shape}")
    n = len(x)
    hints, deck = x[:, 0], x[:, 2]
    fireworks = np.rint(x[:, 3:8]).astype(np.int64)
    discards = x[:, 10:35].reshape(n, 5, 5)
    own = x[:, 35:100].reshape(n, 5, 13)
    other = x[:, 100:195].reshape(n, 5, 19)
    own_clued, other_clued = x[:, 195:200] > 0.5, x[:, 200:205] > 0.5
    focused = x[:, 205:210] > 0.5

    own_held = own[:, :, 3:8].sum(axis=2) > 0.5
    rank = np.rint(other[:, :, 18]).astype(np.int64)
    held = rank > 0
    colour = np.where(held, other[:, :, 13:18].argmax(axis=2), 0)
    ident = colour * 5 + np.clip(rank, 1, 5) - 1  # (n, 5); meaningless where not held
    rows = np.arange(n)[:, None]

    up, plays, dead = table_facts(fireworks, discards)  # (n, colour, rank)
    public = np.clip(COPIES - up - discards, 0, None)  # copies not seen by everyone
    in_hand = np.zeros((n, 25))
    np.add.at(in_hand, (np.broadcast_to(rows, ident.shape)[held], ident[held]), 1)
    mover_left = np.clip(public.reshape(n, 25) - in_hand, 0, None)  # the mover's unseen

    plays_now = held & plays.reshape(n, 25)[rows, ident]
    known_playable = held & (other[:, :, 0] > 0.999)
    same = (ident[:, :, None] == ident[:, None, :]) & held[:, :, None] & held[:, None, :]
    same &= ~np.eye(5, dtype=bool)
    touched_copy = (same & other_clued[:, None, :]).any(axis=2)
    cmask, rmask = other[:, :, 8:13] > 0, other[:, :, 3:8] > 0  # public masks per slot

    rank_focus = np.zeros((n, 5), dtype=bool)
    colour_focus = np.zeros((n, 5), dtype=bool)
    rank_misread = np.zeros((n, 5), dtype=bool)
    colour_misread = np.zeros((n, 5), dtype=bool)
    every = np.arange(n)
    for slot in range(5):
        has = held[:, slot]
        r, c = rank[:, slot], colour[:, slot]
        for hits, out, misread, kind in (
                (held & (rank == r[:, None]), rank_focus, rank_misread, "rank"),
                (held & (colour == c[:, None]), colour_focus, colour_misread, "colour")):
            f = _focus_of(hits & has[:, None], other_clued)
            out[:, slot] = has & (f == slot)
            fs = np.clip(f, 0, 4)
            if kind == "rank":  # the focus is then known to be rank r: could it play?
                ri = np.clip(r, 1, 5) - 1
                could = cmask[every, fs] & plays[every, :, ri] & (public[every, :, ri] > 0)
            else:  # known to be colour c
                could = rmask[every, fs] & plays[every, c] & (public[every, c] > 0)
            misread[:, slot] = has & could.any(axis=1)

    hintable = plays_now & ~known_playable & ~touched_copy & (rank_focus | colour_focus)
    critical = held & ~dead.reshape(n, 25)[rows, ident] & (mover_left[rows, ident] <= 1)
    facts = [
        _last(focused), _first(own_held & ~own_clued), own_held & (own[:, :, 0] > 1e-6),
        own_held & (own[:, :, 0] > 0.999), own_held & (own[:, :, 2] > 0.999),
        plays_now, known_playable, rank_focus, colour_focus, touched_copy, hintable,
        _first(held & ~other_clued), critical, rank_misread, colour_misread,
    ]
    out = np.concatenate([*facts, (hints < 0.5)[:, None], (hints > 7.5)[:, None],
                          (deck < 0.5)[:, None]], axis=1)
    return out.astype(np.float32)
