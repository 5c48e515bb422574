"""The state of a Hanabi game of three to five players, from the acting seat's view.

Two-player stores keep the report's 210 numbers (`batchrl.games.hanabi.knowledge`,
`batchrl.games.hanabi.transitions`). With more players the state is this module's, in
the spirit of the Hanabi Learning Environment's canonical observation and built from
the same pieces as the report's, every other seat named by its offset from the actor
(``next1`` is the seat after it, ``next2`` the one after that); H is the hand size (5
with three players, 4 with four or five):

- ``hints``, ``fuses``, ``deck``, ``firework_<colour>`` (5), ``handentropy_current``
  and ``handentropy_next<k>`` (the sum of the entropies of a hand's cards, as their
  holder is known to see them);
- ``discarded_<colour><rank>`` (25);
- per own slot ``current<i>_…`` the report's 13 knowledge numbers (playability,
  entropy, uselessness, 5 ``poss_value``, 5 ``poss_color``), the own cards' from the
  actor's view (every other hand seen);
- per slot of each other seat ``next<k>_<i>_…``: the same 13 as that seat is known to
  see its card (the public view), the card's colour one-hot and its rank;
- the public hint facts: ``current<i>_clued`` and ``next<k>_<i>_clued`` (a hint has
  touched the card), ``current<i>_hint_focus`` (the previous move was a hint to the
  actor, and it touched this card first);
- the last moves, one per other seat, ``last1`` the newest (made by the seat before the
  actor): its kind (``play``, ``discard``, ``hint_colour``, ``hint_rank``), a hint's
  target (``target_current``, ``target_next<k>``), the colour and rank named (a hint's,
  or the card played or discarded), the slots a hint touched (its target's slots when it
  was given: a card played since shifts them, as in the Hanabi Learning Environment),
  and ``scored`` (a play that went up).

An empty slot (the last round) is all zeros. The actor's own colours and ranks never
enter it (the conformance check holds every game to that). It is meant for the seat to
act: ``last1`` is the move of the seat before the actor (``encode`` of another seat reads
the same moves, newest first).

>>> import numpy as np
>>> from batchrl.games.hanabi.rules import new_game, step
>>> s = step(new_game(np.random.default_rng(0), 3), 10)    # seat 0 hints ones to seat 1
>>> x = encode(s, 1)
>>> len(x) == len(feature_names(3)), x[feature_names(3).index("last1_target_current")]
(True, np.float32(1.0))
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from itertools import chain

import numpy as np
from numpy.typing import NDArray

from batchrl.games.hanabi.knowledge import hand_features
from batchrl.games.hanabi.rules import COLOURS, State, decode, hand_size

_PER = ("playability", "cardentropy", "uselessness", *(f"poss_value{r}" for r in range(1, 6)),
        *(f"poss_color_{c}" for c in COLOURS))
_SHOWN = (*(f"color_{c}" for c in COLOURS), "value")


@cache
def feature_names(players: int) -> tuple[str, ...]:
    """The names of the state of a game of ``players`` (3 to 5), in order."""
    if not 3 <= players <= 5:
        raise ValueError(f"this state is for 3 to 5 players, not {players} (two-player "
                         "stores keep the report's 210 numbers)")
    h, others = hand_size(players), range(1, players)
    head = ["hints", "fuses", "deck", *(f"firework_{c}" for c in COLOURS),
            "handentropy_current", *(f"handentropy_next{k}" for k in others)]
    disc = [f"discarded_{c}{r}" for c in COLOURS for r in range(1, 6)]
    own = [f"current{i}_{n}" for i in range(h) for n in _PER]
    seen = [f"next{k}_{i}_{n}" for k in others for i in range(h) for n in (*_PER, *_SHOWN)]
    hints = [*(f"current{i}_clued" for i in range(h)),
             *(f"next{k}_{i}_clued" for k in others for i in range(h)),
             *(f"current{i}_hint_focus" for i in range(h))]
    last = [f"last{j}_{n}" for j in others
            for n in ("play", "discard", "hint_colour", "hint_rank", "target_current",
                      *(f"target_next{k}" for k in others), *(f"color_{c}" for c in COLOURS),
                      *(f"value{r}" for r in range(1, 6)), *(f"touched{i}" for i in range(h)),
                      "scored")]
    return tuple(head + disc + own + seen + hints + last)


def _layout(players: int) -> tuple[int, int, int, int, int, int]:
    """Where each block starts: (discards, own, others, hint facts, last moves, width)."""
    h = hand_size(players)
    disc = 8 + players
    own = disc + 25
    others = own + 13 * h
    hints = others + 19 * h * (players - 1)
    last = hints + h * (players + 1)
    width = last + (players - 1) * (4 + players + 10 + h + 1)
    return disc, own, others, hints, last, width


def encode(state: State, seat: int) -> NDArray[np.float32]:
    """The state of ``seat`` in ``state`` (3 to 5 players): ``feature_names``' numbers."""
    out: NDArray[np.float32] = encode_many([state], [seat])[0]
    return out


def encode_many(states: Sequence[State], seats: Sequence[int]) -> NDArray[np.float32]:
    """``encode`` of many states of one player count at once, row i for ``seats[i]`` in
    ``states[i]``: the knowledge of every hand is computed for the whole batch together.

    >>> import numpy as np
    >>> from batchrl.games.hanabi.rules import new_game
    >>> s = new_game(np.random.default_rng(1), 4)
    >>> bool((encode_many([s, s], [0, 2])[1] == encode(s, 2)).all())
    True
    """
    n = len(states)
    if len(seats) != n:
        raise ValueError(f"{n} states but {len(seats)} seats")
    if n == 0:
        return np.zeros((0, 0), dtype=np.float32)
    players = states[0].players
    h = hand_size(players)
    disc_at, own_at, others_at, hints_at, last_at, width = _layout(players)
    pad_hand = [(-1,) * k for k in range(h + 1)]
    pad_known = [(0,) * (2 * k) for k in range(h + 1)]
    rows: list[tuple[int, ...]] = []
    discarded: list[int] = []
    for s, me in zip(states, seats, strict=True):
        if s.players != players:
            raise ValueError(f"a batch holds one player count: {s.players} among {players}")
        order = [(me + k) % players for k in range(players)]  # the actor first
        hands = [s.hands[p] for p in order[1:]]
        knowns = [s.known[p] for p in order]
        rows.append((s.hints, s.fuses, len(s.deck), *s.fireworks, len(s.discards),
                     *chain.from_iterable((*hand, *pad_hand[h - len(hand)]) for hand in hands),
                     *chain.from_iterable((*chain.from_iterable(k), *pad_known[h - len(k)])
                                          for k in knowns)))
        discarded += s.discards
    table = np.array(rows, dtype=np.int64)
    fireworks = table[:, 3:8]
    seen = table[:, 9:9 + (players - 1) * h].reshape(n, players - 1, h)
    masks = table[:, 9 + (players - 1) * h:].reshape(n, players, h, 2)
    which = np.repeat(np.arange(n) * 25, table[:, 8]) + np.array(discarded, dtype=np.int64)
    gone = np.bincount(which, minlength=n * 25).reshape(n, 5, 5).astype(np.float64)
    held = seen >= 0
    shown = np.bincount((np.arange(n)[:, None, None] * 25 + seen)[held],
                        minlength=n * 25).reshape(n, 5, 5)
    feats = hand_features(fireworks, gone, shown, masks)  # [row, seat from the actor, ...]

    out = np.zeros((n, width), dtype=np.float32)
    out[:, :8] = table[:, :8]
    out[:, 8:8 + players] = feats[..., 1].sum(axis=2)
    out[:, disc_at:own_at] = gone.reshape(n, 25)
    out[:, own_at:others_at] = feats[:, 0].reshape(n, 13 * h)
    other = out[:, others_at:hints_at].reshape(n, players - 1, h, 19)  # a view
    other[..., :13] = feats[:, 1:]
    at_row, at_seat, at_slot = np.nonzero(held)
    cards = seen[at_row, at_seat, at_slot]
    other[at_row, at_seat, at_slot, 13 + cards // 5] = 1.0
    other[at_row, at_seat, at_slot, 18] = cards % 5 + 1
    per_move = 4 + players + 10 + h + 1
    for row, (s, me) in enumerate(zip(states, seats, strict=True)):
        facts = out[row, hints_at:last_at]
        for k in range(players):
            clued = s.clued[(me + k) % players]
            facts[k * h:k * h + len(clued)] = clued
        if s.hint_target == me:
            facts[players * h + np.asarray(s.hint_focus, dtype=np.intp)] = 1.0
        for j, (mover, action, card, info) in enumerate(s.last[:players - 1]):
            at = last_at + j * per_move
            kind, offset, value = decode(action, players)
            out[row, at + ("play", "discard", "hint_colour", "hint_rank").index(kind)] = 1.0
            if kind.startswith("hint"):
                out[row, at + 4 + (mover + offset - me) % players] = 1.0
                colour, rank = (value, -1) if kind == "hint_colour" else (-1, value)
                touched = [b for b in range(h) if info >> b & 1]
                out[row, at + 4 + players + 10 + np.asarray(touched, dtype=np.intp)] = 1.0
            else:
                colour, rank = card // 5, card % 5 + 1
                out[row, at + per_move - 1] = float(kind == "play" and info == 1)
            if colour >= 0:
                out[row, at + 4 + players + colour] = 1.0
            if rank > 0:
                out[row, at + 4 + players + 5 + rank - 1] = 1.0
    return out


def two_player_projection(x: NDArray[np.floating], players: int) -> NDArray[np.float32]:
    """Rows of this state (of ``players``) laid out as the two-player 210 numbers with
    the next seat as the partner: the head, the discards, the own slots, the next seat's
    slots, their hint facts and the focus (hands of 4 padded with an empty slot). What
    the two-player focus convention's facts (`batchrl.games.hanabi.focus`) are read from:
    the bots' play and save hints go to the next seat. (Its ``critical`` fact then counts
    the cards of the next seat's hand only, not those of the others the actor sees.)"""
    x = np.asarray(x, dtype=np.float32)
    h = hand_size(players)
    disc_at, own_at, others_at, hints_at, _, width = _layout(players)
    if x.ndim != 2 or x.shape[1] < width:
        raise ValueError(f"want rows of the {width} numbers of a {players}-player state, not "
                         f"shape {x.shape}")
    n = len(x)
    out = np.zeros((n, 210), dtype=np.float32)
    out[:, :9] = x[:, :9]
    out[:, 9] = x[:, 9]  # the next seat's hand entropy
    out[:, 10:35] = x[:, disc_at:own_at]
    out[:, 35:35 + 13 * h] = x[:, own_at:others_at]
    out[:, 100:100 + 19 * h] = x[:, others_at:others_at + 19 * h]
    out[:, 195:195 + h] = x[:, hints_at:hints_at + h]
    out[:, 200:200 + h] = x[:, hints_at + h:hints_at + 2 * h]
    out[:, 205:205 + h] = x[:, hints_at + players * h:hints_at + (players + 1) * h]
    return out
