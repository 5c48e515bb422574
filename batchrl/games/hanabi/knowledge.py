"""What a player can know of each card, and the report's 195-number state.

For each card the knowledge is a distribution over its 25 identities (colour,
rank): the copies not yet accounted for, kept only where every hint received
allows them. Which copies count as accounted for depends on the viewer:

* a player's own cards, from its own view: the 50 cards less the fireworks,
  the discards and every card it sees in the other hands;
* the other hands' cards, as their holders are known to see them: the 50
  cards less the fireworks and the discards only (what everybody sees). Using
  the holder's own view would subtract the acting player's cards, which the
  acting player cannot see: its own cards would leak into its state.

From the distribution: ``poss_colors`` and ``poss_values`` (the marginals),
``playability`` (the chance it plays now), ``uselessness`` (the chance it can
never be played: its rank is already up, or a lower rank of its colour has
every copy discarded), ``cardentropy`` (bits), and per hand the sum of its
cards' entropies.

The report's 195 numbers, two players (``feature_names``): hints, fuses, deck,
the five fireworks, the two hand entropies (10); the discards, 5 colours × 5
ranks (25); per own slot playability, entropy, uselessness, 5 poss_values, 5
poss_colors (5 × 13); per partner slot the same plus its colour one-hot and its
rank (5 × 19). The acting player's own colours and ranks never enter it. A slot
left empty in the last round is all zeros. ``encode_many`` gives the same
numbers for a batch of states at once.

>>> from batchrl.games.hanabi.rules import deal, full_deck
>>> x = encode(deal(full_deck(), 2), 0)
>>> x.shape, len(feature_names())
((195,), 195)
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np
from numpy.typing import NDArray

from batchrl.games.hanabi.rules import ALL, COLOURS, RANK_COUNTS, State

COPIES = np.tile(np.array(RANK_COUNTS, dtype=np.float64), (5, 1))  # [colour, rank-1]
_RANKS = np.arange(1, 6)


def counts(cards: tuple[int, ...] | list[int]) -> NDArray[np.float64]:
    """How many of each identity: a (colour, rank - 1) table."""
    ids = np.asarray(cards, dtype=np.int64)
    return np.bincount(ids, minlength=25).reshape(5, 5).astype(np.float64)


def played(state: State) -> NDArray[np.float64]:
    """The cards on the fireworks, as a table."""
    return (_RANKS[None, :] <= np.array(state.fireworks)[:, None]).astype(np.float64)


def unseen(state: State, viewer: int | None) -> NDArray[np.float64]:
    """Copies not accounted for by ``viewer`` (None: by the public view only)."""
    seen = list(state.discards)
    if viewer is not None:
        seen += [c for p, hand in enumerate(state.hands) if p != viewer for c in hand]
    left = COPIES - _PLAYED[state.fireworks] - counts(seen)
    out: NDArray[np.float64] = np.maximum(left, 0.0, out=left)
    return out


def _bits(masks: list[int]) -> NDArray[np.float64]:
    return ((np.asarray(masks, dtype=np.int64)[:, None] >> np.arange(5)) & 1).astype(np.float64)


# every (colour mask, rank mask) pair, indexed colours << 5 | ranks: which identities it allows
_ALLOWED = (_bits(list(range(32)))[:, None, :, None]
            * _bits(list(range(32)))[None, :, None, :]).reshape(1024, 5, 5)
# played(state) of every fireworks, indexed by the fireworks tuple
_PLAYED = (_RANKS[None, None, None, None, None, None, :]
           <= np.stack(np.meshgrid(*[np.arange(6)] * 5, indexing="ij"), axis=-1)[..., None]
           ).astype(np.float64)


def allowed(known: Sequence[tuple[int, int]]) -> NDArray[np.float64]:
    """(n, 5, 5): 1 where each card's hints (colour mask, rank mask) allow the identity."""
    out: NDArray[np.float64] = _ALLOWED[[cm << 5 | rm for cm, rm in known]]
    return out


def distributions(left: NDArray[np.float64],
                  known: tuple[tuple[int, int], ...]) -> NDArray[np.float64]:
    """P(identity) of each card whose hints allow its (colour mask, rank mask): (n, 5, 5)."""
    if not known:
        return np.zeros((0, 5, 5))
    weight = left[None] * allowed(known)
    total = weight.sum(axis=(1, 2), keepdims=True)
    out: NDArray[np.float64] = np.divide(weight, total, out=np.zeros_like(weight),
                                         where=total > 0)
    return out


def playable(state: State) -> NDArray[np.bool_]:
    """Which identities would play now (read-only: one table per fireworks)."""
    out: NDArray[np.bool_] = _PLAYABLE[state.fireworks]
    return out


def useless(state: State) -> NDArray[np.bool_]:
    """Identities that can never be played: already up, or blocked by a dead lower rank
    (read-only; kept per fireworks and discards, which a bot's rollouts repeat)."""
    key = (state.fireworks, state.discards)
    out = _USELESS.get(key)
    if out is None:
        dead = table_facts(np.array(state.fireworks)[None], counts(state.discards)[None])[2]
        out = dead[0]
        out.flags.writeable = False
        if len(_USELESS) >= _KEEP:
            _USELESS.clear()
        _USELESS[key] = out
    return out


# playable(state) of every fireworks; useless(state) of the fireworks and discards seen
_PLAYABLE = (_RANKS[None, None, None, None, None, None, :]
             == np.stack(np.meshgrid(*[np.arange(6)] * 5, indexing="ij"), axis=-1)[..., None] + 1)
_PLAYABLE.flags.writeable = False
_USELESS: dict[tuple[tuple[int, ...], tuple[int, ...]], NDArray[np.bool_]] = {}
_KEEP = 1 << 16


def table_facts(fireworks: NDArray[np.integer], gone: NDArray[np.floating]
                ) -> tuple[NDArray[np.bool_], NDArray[np.bool_], NDArray[np.bool_]]:
    """Per row of ``fireworks`` (n, colour) and discarded copies ``gone`` (n, colour,
    rank - 1), as (n, colour, rank) tables: which identities are up, which would play
    now, which can never be played (up, or a lower rank of the colour has every copy
    discarded)."""
    up = fireworks[:, :, None] >= _RANKS
    plays = fireworks[:, :, None] + 1 == _RANKS
    dead = gone >= COPIES  # every copy of it discarded
    blocked = np.cumsum(dead, axis=2) - dead > 0  # some lower rank of the colour is dead
    return up, plays, up | blocked


def entropy(p: NDArray[np.float64]) -> NDArray[np.float64]:
    """Shannon entropy in bits of each distribution over the last two axes."""
    logs = np.log2(p, out=np.zeros_like(p), where=p > 0)
    out: NDArray[np.float64] = -(p * logs).sum(axis=(-2, -1))
    return out


def card_features(p: NDArray[np.float64], play: NDArray[np.bool_],
                  dead: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Per card (rows of ``p``): playability, entropy, uselessness, poss_values (5),
    poss_colors (5)."""
    return np.column_stack([(p * play).sum(axis=(1, 2)), entropy(p), (p * dead).sum(axis=(1, 2)),
                            p.sum(axis=1), p.sum(axis=2)]).reshape(len(p), 13)


def feature_names() -> tuple[str, ...]:
    """The 195 names of the two-player encoding, in order."""
    head = ["hints", "fuses", "deck", *(f"firework_{c}" for c in COLOURS),
            "handentropy_current", "handentropy_other"]
    disc = [f"discarded_{c}{r}" for c in COLOURS for r in range(1, 6)]
    per = ["playability", "cardentropy", "uselessness", *(f"poss_value{r}" for r in range(1, 6)),
           *(f"poss_color_{c}" for c in COLOURS)]
    own = [f"current{i}_{n}" for i in range(5) for n in per]
    other = [f"other{i}_{n}" for i in range(5)
             for n in (*per, *(f"color_{c}" for c in COLOURS), "value")]
    return tuple(head + disc + own + other)


# Public facts about hints the report's state leaves out, which conventions read: which
# cards a hint has ever touched (each hand), and which of the player's cards the
# partner's hint just before this move touched first (its "focus").
HINT_FEATURES = (*(f"current{i}_clued" for i in range(5)), *(f"other{i}_clued" for i in range(5)),
                 *(f"current{i}_hint_focus" for i in range(5)))


def hint_features(state: State, player: int) -> NDArray[np.float32]:
    """The 15 public hint facts for ``player`` (two players; empty slots 0).

    >>> from batchrl.games.hanabi.rules import deal, full_deck, step
    >>> s = step(deal(full_deck(), 2), 13)   # hint fours: the partner's slots 2 and 3
    >>> hint_features(s, 1).reshape(3, 5).astype(int).tolist()
    [[0, 0, 1, 1, 0], [0, 0, 0, 0, 0], [0, 0, 1, 1, 0]]
    """
    out = np.zeros(15, dtype=np.float32)
    mine, theirs = state.clued[player], state.clued[1 - player]
    out[:len(mine)] = mine
    out[5:5 + len(theirs)] = theirs
    if state.hint_target == player:
        out[[10 + i for i in state.hint_focus]] = 1.0
    return out


def encode(state: State, player: int) -> NDArray[np.float32]:
    """The report's state vector for ``player`` (two-player games; the partner is the
    next seat)."""
    if state.players != 2:
        raise ValueError(f"the 195-number encoding is for two players, not {state.players}")
    partner = 1 - player
    play, dead = playable(state), useless(state)
    mine = card_features(distributions(unseen(state, player), state.known[player]), play, dead)
    theirs = card_features(distributions(unseen(state, None), state.known[partner]), play, dead)
    hand = np.asarray(state.hands[partner], dtype=np.int64)
    shown = np.zeros((len(hand), 6))
    shown[np.arange(len(hand)), hand // 5] = 1.0
    shown[:, 5] = hand % 5 + 1
    out = np.zeros(195, dtype=np.float32)
    out[:10] = [state.hints, state.fuses, len(state.deck), *state.fireworks,
                mine[:, 1].sum(), theirs[:, 1].sum()]
    out[10:35] = counts(state.discards).ravel()
    out[35:35 + 13 * len(mine)] = mine.ravel()
    out[100:100 + 19 * len(theirs)] = np.hstack([theirs, shown]).ravel()
    return out


def hand_features(fireworks: NDArray[np.integer], gone: NDArray[np.floating],
                  shown: NDArray[np.integer], masks: NDArray[np.integer]
                  ) -> NDArray[np.float64]:
    """``card_features`` of every hand's slots in a batch: (n, hands, slots, 13). Row i
    has ``fireworks`` (n, 5), the discarded copies ``gone`` (n, 5, 5) and the copies the
    actor sees in the other hands ``shown`` (n, 5, 5); ``masks`` (n, hands, slots, 2)
    the (colour, rank) hint masks, the actor's own hand first (its cards as it knows
    them), the others as their holders are publicly known to know them; an empty slot's
    masks are 0 and all its features 0."""
    up, plays, dead = table_facts(fireworks, gone)  # (n, colour, rank)
    public = np.clip(COPIES - up - gone, 0, None)
    hands = masks.shape[1]
    left = np.repeat(public[:, None], hands, axis=1)  # [row, hand, colour, rank]
    left[:, 0] = np.clip(public - shown, 0, None)
    allowed = _ALLOWED[(masks[..., 0] & ALL) << 5 | masks[..., 1] & ALL]  # (n, h, s, 5, 5)
    weight = left[:, :, None] * allowed
    total = weight.sum(axis=(3, 4), keepdims=True)
    p = np.divide(weight, total, out=np.zeros_like(weight), where=total > 0)
    play, dead = plays[:, None, None], dead[:, None, None]
    feats = np.empty((*masks.shape[:3], 13))
    feats[..., 0] = (p * play).sum(axis=(3, 4))
    feats[..., 1] = entropy(p)
    feats[..., 2] = (p * dead).sum(axis=(3, 4))
    feats[..., 3:8] = p[..., 0, :] + p[..., 1, :] + p[..., 2, :] + p[..., 3, :] + p[..., 4, :]
    feats[..., 8:] = p[..., 0] + p[..., 1] + p[..., 2] + p[..., 3] + p[..., 4]
    return feats


_HAND_PAD = tuple((-1,) * k for k in range(6))  # an empty partner slot: no card
_KNOWN_PAD = tuple((0,) * (2 * k) for k in range(6))  # an empty slot: nothing possible

def encode_many(states: Sequence[State], players: Sequence[int]) -> NDArray[np.float32]:
    """``encode`` of many states at once, row i for ``players[i]`` in ``states[i]``:
    (n, 195), the same numbers as stacking ``encode`` row by row.

    The states' tuples are read into small integer arrays (an empty slot pads
    the partner's hand with -1 and both knowledges with empty masks, so its
    distribution and all its features are 0); the distributions, marginals and
    entropies are then computed once for the whole batch.

    >>> from batchrl.games.hanabi.rules import deal, full_deck, step
    >>> s = deal(full_deck(), 2)
    >>> t = step(s, 10 + 3)                      # hint fours to the partner
    >>> x = encode_many([s, t, t], [0, 1, 0])
    >>> x.shape, bool((x == np.stack([encode(s, 0), encode(t, 1), encode(t, 0)])).all())
    ((3, 195), True)
    """
    n = len(states)
    if len(players) != n:
        raise ValueError(f"{n} states but {len(players)} players")
    rows: list[tuple[int, ...]] = []
    discarded: list[int] = []
    for s, p in zip(states, players, strict=True):
        if len(s.hands) != 2:
            raise ValueError(f"the 195-number encoding is for two players, not {len(s.hands)}")
        mine, theirs = s.known[p], s.known[1 - p]
        seen = s.hands[1 - p]
        rows.append((s.hints, s.fuses, len(s.deck), *s.fireworks, len(s.discards),
                     *seen, *_HAND_PAD[5 - len(seen)],
                     *chain.from_iterable(mine), *_KNOWN_PAD[5 - len(mine)],
                     *chain.from_iterable(theirs), *_KNOWN_PAD[5 - len(theirs)]))
        discarded += s.discards
    out = np.zeros((n, 195), dtype=np.float32)
    if n == 0:
        return out
    table = np.array(rows, dtype=np.int64)  # (n, 9 + 5 + 20)
    fireworks, hand = table[:, 3:8], table[:, 9:14]
    masks = table[:, 14:34].reshape(n, 2, 5, 2)  # [row, own/partner, slot, colour/rank mask]
    which = np.repeat(np.arange(n) * 25, table[:, 8]) + np.array(discarded, dtype=np.int64)
    gone = np.bincount(which, minlength=n * 25).reshape(n, 5, 5).astype(np.float64)
    held = hand >= 0
    shown = np.bincount((np.arange(n)[:, None] * 25 + hand)[held],
                        minlength=n * 25).reshape(n, 5, 5)
    feats = hand_features(fireworks, gone, shown, masks)  # [row, own/partner, slot, 13]
    out[:, :8] = table[:, :8]
    out[:, 8:10] = feats[:, :, :, 1].sum(axis=2)
    out[:, 10:35] = gone.reshape(n, 25)
    out[:, 35:100] = feats[:, 0].reshape(n, 65)
    other = out[:, 100:].reshape(n, 5, 19)  # a view
    other[:, :, :13] = feats[:, 1]
    rows_, slots = np.nonzero(held)
    other[rows_, slots, 13 + hand[held] // 5] = 1.0
    other[rows_, slots, 18] = hand[held] % 5 + 1
    return out
