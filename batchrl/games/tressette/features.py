"""What a Tressette player sees, as numbers, for many hands at once.

``Tracker`` follows a batch of hands in lockstep (every hand has 40 plays, so
play t of every hand is made at once) and gives the state of the seat to play
as 287 numbers, from that seat's view; seats are counted from it (0 itself, 1
the next opponent, 2 its partner, 3 the other opponent), so one policy serves
every seat. The seed's encoder (152 numbers: hand 40, played 40, void flags
4×4, seat 4, partner 4, signals 4×4×3) is the start; here the cards on the
table are apart from those played before (40), seat and partner are implicit
in the relative order, and the trick is described:

* ``hand_*`` (40): the seat's cards; ``played_*`` (40): cards of finished
  tricks; ``table_*`` (40): the current trick's cards;
* ``void_{p}_{suit}`` (16): seat p is known to hold none of the suit (it did
  not follow it, or signalled volo in it);
* ``signal_{p}_{suit}_{kind}`` (48): each seat's latest signal (busso, volo,
  striscio in a suit), as the seed keeps them;
* ``position_{0..3}`` (4): how many cards are on the table; ``led_{suit}`` (4);
* ``partner_winning``, ``winning_rank`` (the best card of the led suit so far,
  0-9, -1 when leading), ``table_thirds``, ``our_thirds``, ``their_thirds``
  (points in thirds taken so far), ``tricks`` (finished tricks);
* what each card of the hand would do, which a tree would otherwise have to
  piece together from many columns: ``beats_*`` (40), played now it would be
  the best card on the table (never when leading); ``master_*`` (40), no card
  of its suit above it is still out (unseen: not in this hand, not played, not
  on the table), so no one else can take it in its suit; ``mine_{suit}`` and
  ``unseen_{suit}`` (4 + 4), how many cards of the suit this seat holds and how
  many are still out; ``unseen_thirds``, the points (in thirds) still out.

Every number is a small integer, so a store may keep them as int8.

The tracker also checks every play (the seat's card, its turn, following
suit), so a log can be checked and encoded in one pass, and gives each
decision's legal cards.

>>> import numpy as np
>>> from batchrl.games.tressette.rules import deal
>>> t = Tracker.deal([deal(np.random.default_rng(0), leader=1)])
>>> x = t.features()
>>> x.shape, int(x[0, :40].sum()), t.current.tolist()
((1, 287), 10, [1])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games.tressette.rules import (
    ACE,
    BUSSO,
    CARD_THIRDS,
    RANKS,
    STRISCIO,
    SUITS,
    THREE,
    TWO,
    VOLO,
    State,
    card_name,
)

KINDS = (BUSSO, VOLO, STRISCIO)  # the order of the signal columns
_SUIT = np.arange(40) // 10
_RANK = np.arange(40) % 10
_THIRDS = np.asarray(CARD_THIRDS, dtype=np.int64)
_HIGH = (_RANK == TWO) | (_RANK == THREE)
_TAKEN_HIGH = _HIGH | (_RANK == ACE)
# _ORDER[me]: relative seat -> seat, for the seat ``me``
_ORDER = (np.arange(4)[:, None] + np.arange(4)[None, :]) % 4
# _BEATS[led + 1, best_rank + 1]: the cards above the best so far in the led suit (none
# when leading: led and best_rank are -1)
_BEATS = np.zeros((5, 11, 40), dtype=bool)
_BEATS[1:] = (_SUIT[None, None, :] == np.arange(4)[:, None, None]) \
    & (_RANK[None, None, :] > np.arange(-1, 10)[None, :, None])
# Sets of cards as 40-bit integers (bit c: card c), so the counts per suit are table
# look-ups, not sums over short axes: a suit's cards are the 10 bits from 10 × suit.
_SHIFTS = np.arange(0, 40, 10, dtype=np.uint64)
_SUIT_BITS = np.uint64(0x3FF)
POPCOUNT = np.asarray([bin(v).count("1") for v in range(1024)], dtype=np.uint8)  # 10 bits
# _MASTER[bits of a suit's unseen cards, rank]: no unseen card of the suit is above it
_MASTER = np.asarray([[v >> (r + 1) == 0 for r in range(10)] for v in range(1024)])
# the thirds of a suit's cards, by the suit's 10 bits
_SUIT_THIRDS = np.asarray([sum(CARD_THIRDS[r] for r in range(10) if v >> r & 1)
                           for v in range(1024)], dtype=np.int64)


def pack_bits(flags: NDArray[np.bool_]) -> NDArray[np.uint64]:
    """(..., k) flags, k <= 64 -> (...) integers, bit i set for flag i (for cards: bit c
    for card c)."""
    packed = np.zeros((*flags.shape[:-1], 8), dtype=np.uint8)
    packed[..., :(flags.shape[-1] + 7) // 8] = np.packbits(flags, axis=-1, bitorder="little")
    out: NDArray[np.uint64] = packed.view("<u8")[..., 0]
    return out


def feature_names() -> tuple[str, ...]:
    cards = [card_name(c) for c in range(40)]
    return (*(f"hand_{c}" for c in cards), *(f"played_{c}" for c in cards),
            *(f"table_{c}" for c in cards),
            *(f"void_{p}_{s}" for p in range(4) for s in SUITS),
            *(f"signal_{p}_{s}_{k}" for p in range(4) for s in SUITS for k in KINDS),
            *(f"position_{i}" for i in range(4)), *(f"led_{s}" for s in SUITS),
            "partner_winning", "winning_rank", "table_thirds", "our_thirds", "their_thirds",
            "tricks", *(f"beats_{c}" for c in cards), *(f"master_{c}" for c in cards),
            *(f"mine_{s}" for s in SUITS), *(f"unseen_{s}" for s in SUITS), "unseen_thirds")


N_FEATURES = len(feature_names())
assert N_FEATURES == 287 and len(RANKS) == 10


class IllegalPlay(ValueError):
    """A play the rules refuse; ``games`` holds the indices of the hands it happened in."""

    def __init__(self, message: str, games: NDArray[np.int64]) -> None:
        super().__init__(message)
        self.games = games


class Tracker:
    """Hands in lockstep: ``features()`` and ``legal()`` for the seat to play in each,
    ``play(cards)`` to advance them all by one card."""

    def __init__(self, hands: NDArray[np.bool_], leaders: NDArray[np.int64]) -> None:
        g = len(hands)
        self.hands = hands.copy()  # (g, seat, card)
        self.played = np.zeros((g, 40), dtype=bool)
        self.table = np.zeros((g, 40), dtype=bool)
        # what each seat has shown, voids (4) then signals (4 × 3), in one array so that
        # ``features`` turns it to the player's view with one gather; ``void`` and
        # ``signal`` are views of it (splitting the last, contiguous axis is a view)
        self._shown = np.zeros((g, 4, 16), dtype=bool)
        self.void = self._shown[:, :, :4]
        self.signal = self._shown[:, :, 4:].reshape(g, 4, 4, 3)
        self.current = np.asarray(leaders, dtype=np.int64).copy()
        self.position = np.zeros(g, dtype=np.int64)
        self.led = np.full(g, -1, dtype=np.int64)
        self.best_seat = np.zeros(g, dtype=np.int64)
        self.best_rank = np.full(g, -1, dtype=np.int64)
        self.table_thirds = np.zeros(g, dtype=np.int64)
        self.thirds = np.zeros((g, 2), dtype=np.int64)
        self.tricks = np.zeros(g, dtype=np.int64)
        self.last_winner = np.full(g, -1, dtype=np.int64)
        self.high_taken = np.zeros((g, 2), dtype=np.int64)  # aces, 2s and 3s taken per team
        self._rows = np.arange(g)

    @classmethod
    def deal(cls, states: Sequence[State]) -> Tracker:
        """Trackers at the start of dealt hands (``rules.deal``/``deal_hands``)."""
        hands = np.zeros((len(states), 4, 40), dtype=bool)
        for g, s in enumerate(states):
            for seat, cards in enumerate(s.hands):
                hands[g, seat, list(cards)] = True
        return cls(hands, np.asarray([s.leader for s in states], dtype=np.int64))

    def __len__(self) -> int:
        return len(self.current)

    def copy(self) -> Tracker:
        """An independent tracker of the same hands at the same point."""
        twin = Tracker.__new__(Tracker)
        for name, value in self._arrays():
            setattr(twin, name, value.copy())
        twin._views()
        return twin

    def take(self, rows: NDArray[np.int64]) -> Tracker:
        """A tracker of the hands ``rows`` of this one (in that order), at their point."""
        part = Tracker.__new__(Tracker)
        for name, value in self._arrays():
            setattr(part, name, value[rows])
        part._views()
        return part

    @classmethod
    def concat(cls, parts: Sequence[Tracker]) -> Tracker:
        """One tracker of the hands of ``parts``, in order."""
        whole = Tracker.__new__(Tracker)
        for name, _ in parts[0]._arrays():
            setattr(whole, name, np.concatenate([getattr(p, name) for p in parts]))
        whole._views()
        return whole

    def _arrays(self) -> list[tuple[str, NDArray[Any]]]:
        """The arrays the tracker owns (not ``_views``'s, which are made from them)."""
        return [(name, value) for name, value in vars(self).items()
                if name not in ("void", "signal", "_rows")]

    def _views(self) -> None:
        """``void`` and ``signal`` as views of ``_shown``, the rows' indices."""
        self.void = self._shown[:, :, :4]
        self.signal = self._shown[:, :, 4:].reshape(len(self._shown), 4, 4, 3)
        self._rows = np.arange(len(self._shown))

    def legal(self) -> NDArray[np.bool_]:
        """(g, 40): the cards the seat to play may play (follow the led suit if it can)."""
        mine = np.take(self.hands.reshape(-1, 40), self._rows * 4 + self.current, axis=0)
        follow = mine & (_SUIT[None, :] == self.led[:, None])
        must = follow.any(axis=1) & (self.position > 0)
        out: NDArray[np.bool_] = np.where(must[:, None], follow, mine)
        return out

    def features(self, out: NDArray[Any] | None = None,
                 seats: NDArray[np.int64] | None = None) -> NDArray[Any]:
        """(g, 287): the state of the seat to play in each hand, from its view (``seats``:
        from those seats' instead); float32, or written into ``out`` (any numeric dtype:
        int8 holds every value)."""
        g, me = len(self), self.current if seats is None else np.asarray(seats, np.int64)
        if out is None:
            out = np.zeros((g, N_FEATURES), dtype=np.float32)
        else:
            out[...] = 0
        mine = np.take(self.hands.reshape(g * 4, 40), self._rows * 4 + me, axis=0)
        out[:, :40] = mine
        out[:, 40:80] = self.played
        out[:, 80:120] = self.table
        # each seat's voids and signals, the seats counted from ``me``
        shown = np.take(self._shown.reshape(g * 4, 16),
                        (self._rows * 4)[:, None] + _ORDER[me], axis=0)
        out[:, 120:136] = shown[:, :, :4].reshape(g, 16)
        out[:, 136:184] = shown[:, :, 4:].reshape(g, 48)
        out[self._rows, 184 + self.position] = 1
        leading = self.position == 0
        out[~leading, 188 + self.led[~leading]] = 1
        team = me % 2
        out[:, 192] = ~leading & (self.best_seat % 2 == team) & (self.best_seat != me)
        out[:, 193] = self.best_rank
        out[:, 194] = self.table_thirds
        out[:, 195] = self.thirds[self._rows, team]
        out[:, 196] = self.thirds[self._rows, 1 - team]
        out[:, 197] = self.tricks
        # played now, the card would lead the table: in the led suit, above the best so
        # far (never when leading)
        out[:, 198:238] = mine & _BEATS[self.led + 1, self.best_rank + 1]
        # unseen: not in this hand, not played, not on the table
        unseen = pack_bits(~(mine | self.played | self.table))
        suits = (unseen[:, None] >> _SHIFTS) & _SUIT_BITS  # (g, 4)
        out[:, 238:278] = mine & _MASTER[suits].reshape(g, 40)
        out[:, 278:282] = POPCOUNT[(pack_bits(mine)[:, None] >> _SHIFTS) & _SUIT_BITS]
        out[:, 282:286] = POPCOUNT[suits]
        thirds = _SUIT_THIRDS[suits]
        out[:, 286] = thirds[:, 0] + thirds[:, 1] + thirds[:, 2] + thirds[:, 3]
        return out

    def play(self, cards: NDArray[np.int64], active: NDArray[np.bool_] | None = None,
             legal: NDArray[np.bool_] | None = None) -> None:
        """Each hand's seat to play plays its card (only where ``active``); raises
        ``IllegalPlay`` naming the hands where the card is not allowed. ``legal``: this
        state's ``legal()``, when the caller has it already."""
        rows = self._rows if active is None else self._rows[active]
        cards = np.asarray(cards, dtype=np.int64)
        if active is not None:
            cards = cards[active]
        seat = self.current[rows]
        ok = (self.legal() if legal is None else legal)[rows, cards]
        if not ok.all():
            raise IllegalPlay("a card not in the seat's hand, or not following the led suit "
                              "while it holds that suit", rows[~ok])
        suit, rank = _SUIT[cards], _RANK[cards]
        self.hands[rows, seat, cards] = False
        self.table[rows, cards] = True
        lead = self.position[rows] == 0
        led = np.where(lead, suit, self.led[rows])
        # the leader's signal: busso (a 2 or 3 left in the suit), volo (none left), striscio
        if lead.any():
            r, s, st = rows[lead], seat[lead], suit[lead]
            left = self.hands[r, s] & (_SUIT[None, :] == st[:, None])
            kind = np.where((left & _HIGH[None, :]).any(axis=1), 0,
                            np.where(left.any(axis=1), 2, 1))
            self.signal[r, s] = False
            self.signal[r, s, st, kind] = True
            self.void[r[kind == 1], s[kind == 1], st[kind == 1]] = True
        # not following the led suit shows a void
        off = ~lead & (suit != led)
        self.void[rows[off], seat[off], led[off]] = True
        beats = lead | ((suit == led) & (rank > self.best_rank[rows]))
        self.best_seat[rows] = np.where(beats, seat, self.best_seat[rows])
        self.best_rank[rows] = np.where(beats, rank, self.best_rank[rows])
        self.led[rows] = led
        self.table_thirds[rows] += _THIRDS[cards]
        self.position[rows] += 1
        self.current[rows] = (seat + 1) % 4
        done = rows[self.position[rows] == 4]
        if len(done):
            winner = self.best_seat[done]
            self.thirds[done, winner % 2] += self.table_thirds[done]
            self.high_taken[done, winner % 2] += (self.table[done] & _TAKEN_HIGH).sum(axis=1)
            self.played[done] |= self.table[done]
            self.table[done] = False
            self.position[done] = 0
            self.led[done] = -1
            self.best_rank[done] = -1
            self.table_thirds[done] = 0
            self.tricks[done] += 1
            self.last_winner[done] = winner
            self.current[done] = winner

    def points(self) -> NDArray[np.int64]:
        """(g, 2): each team's points, the last trick's point counted once all are played."""
        out = self.thirds // 3
        over = self.tricks == 10
        out[over & (self.last_winner % 2 == 0), 0] += 1
        out[over & (self.last_winner % 2 == 1), 1] += 1
        result: NDArray[np.int64] = out
        return result
