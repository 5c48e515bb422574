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
        self.void = np.zeros((g, 4, 4), dtype=bool)
        self.signal = np.zeros((g, 4, 4, 3), dtype=bool)
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

    def legal(self) -> NDArray[np.bool_]:
        """(g, 40): the cards the seat to play may play (follow the led suit if it can)."""
        mine = self.hands[self._rows, self.current]
        follow = mine & (_SUIT[None, :] == self.led[:, None])
        must = follow.any(axis=1) & (self.position > 0)
        out: NDArray[np.bool_] = np.where(must[:, None], follow, mine)
        return out

    def features(self, out: NDArray[Any] | None = None) -> NDArray[Any]:
        """(g, 287): the state of the seat to play in each hand, from its view; float32,
        or written into ``out`` (any numeric dtype: int8 holds every value)."""
        g, me = len(self), self.current
        order = (me[:, None] + np.arange(4)[None, :]) % 4  # relative seat -> seat
        rows = self._rows[:, None]
        if out is None:
            out = np.zeros((g, N_FEATURES), dtype=np.float32)
        else:
            out[...] = 0
        out[:, :40] = self.hands[self._rows, me]
        out[:, 40:80] = self.played
        out[:, 80:120] = self.table
        out[:, 120:136] = self.void[rows, order].reshape(g, 16)
        out[:, 136:184] = self.signal[rows, order].reshape(g, 48)
        out[self._rows, 184 + self.position] = 1.0
        leading = self.position == 0
        out[~leading, 188 + self.led[~leading]] = 1.0
        team = me % 2
        out[:, 192] = ~leading & (self.best_seat % 2 == team) & (self.best_seat != me)
        out[:, 193] = self.best_rank
        out[:, 194] = self.table_thirds
        out[:, 195] = self.thirds[self._rows, team]
        out[:, 196] = self.thirds[self._rows, 1 - team]
        out[:, 197] = self.tricks
        mine = self.hands[self._rows, me]
        # played now, the card would lead the table: the led suit (-1 when leading, so
        # never then), above the best so far
        out[:, 198:238] = mine & (_SUIT[None, :] == self.led[:, None]) \
            & (_RANK[None, :] > self.best_rank[:, None])
        unseen = ~(mine | self.played | self.table)
        # out_above[g, suit, r]: a card of the suit ranked above r is still out
        out_from = np.logical_or.accumulate(unseen.reshape(g, 4, 10)[:, :, ::-1], axis=2)
        out_above = np.zeros((g, 4, 10), dtype=bool)
        out_above[:, :, :9] = out_from[:, :, ::-1][:, :, 1:]
        out[:, 238:278] = mine & ~out_above.reshape(g, 40)
        out[:, 278:282] = mine.reshape(g, 4, 10).sum(axis=2)
        out[:, 282:286] = unseen.reshape(g, 4, 10).sum(axis=2)
        out[:, 286] = unseen @ _THIRDS
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
