"""Tressette hands to store rows: one row per card played, from the player's view.

A hand is one episode; each seat's ten decisions are its steps (``player`` is
the seat), and a row's next state is the same seat's next decision, after the
other three have played. Actions are the 40 cards, with the legal mask (follow
suit) at the next decision. The reward (``points``, the default) is the
player's team's points at the end of the hand, on its last decision, so a
seat's rewards add up to its team's score (0-11; the other team has 11 minus
it). ``shaped`` is the seed's per-card reward instead (it penalises an ace
−0.2, a 2 or 3 −0.1, rewards another card +0.05; on the card that closes a
trick +0.5 if its team takes it, else −0.5, and +0.3 per 2, 3 or ace its team
takes), plus the team's points at the end.

Hands are encoded in lockstep by ``features.Tracker``, which also checks every
play; a hand the rules refuse is returned with the reason and left out. A hand
cut short keeps its rows when its deal is known whole (a JSON line): the last
decision of each seat is marked ``truncated``. A transcript cut short shows
only the cards played, so its hands cannot be encoded: it is refused, saying
so.

>>> import numpy as np
>>> from batchrl.games.tressette.logs import play
>>> game = next(play(("rule", "random", "rule", "random"), 1, seed=3))
>>> cols, rejected = rows([Logged(game)], "0123456789abcdef:")
>>> len(cols["step"]), float(cols["reward"].sum()), rejected
(40, 22.0, [])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from batchrl.games.tressette.features import IllegalPlay, Tracker, feature_names
from batchrl.games.tressette.names import (
    ACTION_NAMES,
    check_options,
    names,
    shaped_rewards,
)
from batchrl.games.tressette.symmetry import canonical
from batchrl.store import StoreSchema

GAME_NAME = "tressette"
AUDIT_COLUMNS = ("name", "hand")
_NAMES = ACTION_NAMES


def schema(reward: str = "points", suits: str = "dealt") -> StoreSchema:
    """The store's schema; ``suits="canonical"`` names the features and cards in each
    state's canonical suits (``symmetry``: ``hand_Aa`` is the ace of suit ``a``)."""
    check_options(reward, suits)
    names_, actions = names(suits)
    params: dict[str, str] = {"reward": reward}
    if suits == "canonical":
        params["suits"] = suits
    # every feature is a small whole number (flags, ranks, thirds, tricks): int8 on disk
    return StoreSchema(game=GAME_NAME, feature_names=names_, action_names=actions,
                       audit_columns=AUDIT_COLUMNS, game_params=params,
                       state_dtype="int8", next_state="following", legal=True)


@dataclass(frozen=True, slots=True)
class Logged:
    """A game with the place a log gives it (``parsers.tressette.LoggedGame`` has the
    same fields), for games straight from ``logs.play``."""

    game: Any  # logs.Game
    index: int = 0
    line: int = 1


@dataclass(frozen=True, slots=True)
class Deals:
    """A batch of hands whose deals are known whole, as the arrays the rows are made of
    (``of`` makes them from game records). Small enough to send between processes: an
    ingest reads and checks a log's lines in a worker process and makes the rows here.
    """

    hands: NDArray[np.int8]  # (g, 4, 10): each seat's cards, by id
    leader: NDArray[np.int64]  # (g,)
    seats: NDArray[np.int8]  # (g, 40): the seat of play t (0 after the last play)
    cards: NDArray[np.int8]  # (g, 40): the card of play t (0 after the last play)
    lengths: NDArray[np.int64]  # (g,): plays made (40 unless the hand was cut short)
    logged: NDArray[np.bool_]  # (g,): the log gives the points
    points: NDArray[np.int64]  # (g, 2): those points (-1: none, or not a team's 0..11)
    names: NDArray[np.object_]  # (g, 4): the players' names
    hand_text: NDArray[np.object_]  # (g, 4): each seat's cards as text (the audit column)
    index: NDArray[np.int64]  # (g,): the game's place in its log (its episode's number)
    line: NDArray[np.int64]  # (g,): its line

    @classmethod
    def of(cls, records: Sequence[Any]) -> Deals:
        """From records with ``game`` (hands whole: ``game.whole_deal``), ``index`` and
        ``line``."""
        g = len(records)
        games = [r.game for r in records]
        lengths = np.fromiter(map(len, (x.plays for x in games)), np.int64, count=g)
        flat = [*chain.from_iterable(chain.from_iterable(x.plays for x in games))]
        try:
            played = np.asarray(flat, dtype=np.int64).reshape(-1, 2)
        except OverflowError:  # a seat past int64 (a log may hold any whole number)
            played = np.asarray([v if 0 <= v < 40 else -1 for v in flat],
                                dtype=np.int64).reshape(-1, 2)
        # a seat that is no seat is kept as -1, never its int8 wrap: it plays out of turn
        played[(played < 0) | (played >= 40)] = -1
        seats, cards = np.zeros((g, 40), dtype=np.int8), np.zeros((g, 40), dtype=np.int8)
        made = np.arange(40)[None, :] < lengths[:, None]
        seats[made], cards[made] = played[:, 0], played[:, 1]
        held = [h for x in games for h in x.hands]
        if set(map(len, held)) - {10}:
            raise ValueError("Deals.of: every hand of a whole deal holds 10 cards")
        # a team's points are 0..11: any other logged number is kept as -1, which differs
        # from the rules' as the number itself would
        points = np.asarray([[p if 0 <= p <= 11 else -1 for p in x.points]
                             if x.points is not None else (-1, -1) for x in games],
                            dtype=np.int64).reshape(g, 2)
        return cls(
            hands=np.fromiter(chain.from_iterable(held), np.int8, count=40 * g).reshape(g, 4, 10),
            leader=np.fromiter((x.leader for x in games), np.int64, count=g),
            seats=seats, cards=cards, lengths=lengths, points=points,
            logged=np.fromiter((x.points is not None for x in games), bool, count=g),
            names=_objects(chain.from_iterable(x.names for x in games), g),
            hand_text=_objects([" ".join([_NAMES[c] for c in sorted(h)]) for h in held], g),
            index=np.fromiter((r.index for r in records), np.int64, count=g),
            line=np.fromiter((r.line for r in records), np.int64, count=g))

    def __len__(self) -> int:
        return len(self.leader)

    def take(self, which: NDArray[Any]) -> Deals:
        """The hands ``which`` (indices or a mask), in that order."""
        return Deals(*(getattr(self, f)[which] for f in _DEAL_FIELDS))

    @staticmethod
    def concat(parts: Sequence[Deals]) -> Deals:
        if not parts:
            return Deals.of([])
        return Deals(*(np.concatenate([getattr(d, f) for d in parts]) for f in _DEAL_FIELDS))


_DEAL_FIELDS = Deals.__slots__


def _objects(values: Iterable[str], g: int) -> NDArray[np.object_]:
    """(g, 4) strings from ``values``, four per hand in order."""
    out = np.empty(4 * g, dtype=object)
    out[:] = list(values)
    return out.reshape(g, 4)


def rows(games: Sequence[Any], episode_prefix: str, reward: str = "points",
         suits: str = "dealt", dictionaries: bool = False
         ) -> tuple[dict[str, Any], list[tuple[Any, str]]]:
    """Store columns for ``games`` (records with ``game``, ``index`` and ``line``, the
    game having hands, leader, plays, names and points), and the records refused with
    why; a refused record's hand is left out, the others kept. ``suits="canonical"``:
    each decision's state, legal cards and card in its canonical suits.
    ``dictionaries``: the string columns (``episode``, ``name``, ``hand``) as
    ``pa.DictionaryArray`` (codes and the distinct strings), which the store's writer
    takes as they are, instead of arrays of one Python string per row."""
    games = list(games)
    whole = [r for r in games if r.game.whole_deal]
    rejected: list[tuple[Any, str]] = [(r, CUT_TRANSCRIPT) for r in games
                                       if not r.game.whole_deal]
    cols, refused = deal_rows(Deals.of(whole), episode_prefix, reward, suits, dictionaries)
    return cols, rejected + [(whole[i], why) for i, why in refused]


CUT_TRANSCRIPT = ("a transcript cut short shows only the cards played: the unplayed cards' "
                  "owners are unknown, so its players' hands cannot be encoded")


def deal_rows(deals: Deals, episode_prefix: str, reward: str = "points",
              suits: str = "dealt", dictionaries: bool = False
              ) -> tuple[dict[str, Any], list[tuple[int, str]]]:
    """``rows`` of a batch of ``Deals``: the columns, and the places in ``deals`` of the
    hands refused, with why."""
    refused: list[tuple[int, str]] = []
    place = np.arange(len(deals))
    while True:
        try:
            cols = _rows(deals, episode_prefix, reward, suits)
            if not dictionaries:
                cols |= {k: _per_row(cols[k]) for k in ("episode", *AUDIT_COLUMNS)}
            return cols, sorted(refused)
        except IllegalPlay as exc:
            refused += [(int(place[i]), str(exc)) for i in exc.games.tolist()]
            keep = np.ones(len(deals), dtype=bool)
            keep[exc.games] = False
            deals, place = deals.take(keep), place[keep]


def _rows(deals: Deals, prefix: str, reward: str, suits: str) -> dict[str, Any]:
    g = len(deals)
    hands = np.zeros((g, 4, 40), dtype=bool)
    lengths = deals.lengths
    seats, cards = deals.seats.astype(np.int64), deals.cards.astype(np.int64)
    hands[np.arange(g)[:, None, None], np.arange(4)[None, :, None], deals.hands] = True
    tracker = Tracker(hands, deals.leader)
    rows = _RowOrder(seats, lengths)
    # each play's state and legal cards go straight to its row (a scatter from a buffer
    # the size of one play, not a (hand, play) array gathered after)
    state = np.empty((rows.n, len(feature_names())), dtype=np.int8)  # every feature fits
    legal = np.empty((rows.n, 40), dtype=bool)
    buffer = np.empty((g, state.shape[1]), dtype=np.int8)
    shaped = np.zeros((g, 40))
    for t in range(40):
        active = t < lengths
        if not active.any():
            break
        turn = active & (seats[:, t] != tracker.current)
        if turn.any():
            raise IllegalPlay("a seat plays out of turn", np.flatnonzero(turn))
        tracker.features(out=buffer)
        allowed = tracker.legal()
        if active.all():
            state[rows.of_play[:, t]], legal[rows.of_play[:, t]] = buffer, allowed
        else:
            at = rows.of_play[active, t]
            state[at], legal[at] = buffer[active], allowed[active]
        team = seats[:, t] % 2
        high_before = tracker.high_taken[np.arange(g), team]
        tracker.play(cards[:, t], active, allowed)
        if reward == "shaped":
            shaped[:, t] = shaped_rewards(cards[:, t], team, high_before, tracker, active)
    points = tracker.points()
    wrong = (lengths == 40) & deals.logged & (deals.points != points).any(axis=1)
    if wrong.any():  # all of them at once: one more pass, not one per hand
        raise IllegalPlay("the rules' points differ from the logged points",
                          np.flatnonzero(wrong))
    actions = cards[rows.hand, rows.play]
    if suits == "canonical" and rows.n:  # each decision in its own suit order
        state, masks, actions = canonical(state, legal, actions)
        assert masks is not None
        legal = masks
    return _columns(deals, prefix, rows, state, legal, actions, points,
                    shaped[rows.hand, rows.play], reward)


class _RowOrder:
    """Where each play's row goes: rows by hand, then seat, then the seat's decisions in
    play order (known from the log before any play is checked)."""

    def __init__(self, seats: NDArray[np.int64], lengths: NDArray[np.int64]) -> None:
        g = len(seats)
        valid = np.arange(40)[None, :] < lengths[:, None]
        key = np.where(valid, np.arange(g)[:, None] * 4 + seats, -1).ravel()  # (hand, seat)
        order = np.argsort(key, kind="stable")  # by hand and seat, plays in order within
        order = order[key[order] >= 0]
        self.n = len(order)
        self.hand, self.play = np.divmod(order, 40)  # of each row
        self.seat = seats[self.hand, self.play]
        self.of_play = np.zeros((g, 40), dtype=np.int64)  # the row of each play made
        self.of_play.ravel()[order] = np.arange(self.n)
        # a row's next state is the row below it when that is the same seat's next play
        group = self.hand * 4 + self.seat
        self.same_next = np.zeros(self.n, dtype=bool)
        self.same_next[:-1] = group[1:] == group[:-1]


def _next_rows(rows: NDArray[Any], same_next: NDArray[np.bool_]) -> NDArray[Any]:
    """Row i+1 where ``same_next[i]``, else zeros."""
    out = np.empty_like(rows)
    out[:-1] = rows[1:]
    out[~same_next] = 0
    return out


def _per_row(column: pa.DictionaryArray) -> NDArray[np.object_]:
    """A dictionary column as an array of its strings, one per row."""
    values = np.asarray(column.dictionary.to_pylist(), dtype=object)
    out: NDArray[np.object_] = values[column.indices.to_numpy()]
    return out


def _dictionary(values: list[str], sizes: NDArray[np.int64]) -> pa.DictionaryArray:
    """``values[i]`` repeated ``sizes[i]`` times, as codes into the distinct values in
    order of first appearance (what ``dictionary_encode`` of the rows would give)."""
    encoded = pa.array(values, type=pa.string()).dictionary_encode()
    return pa.DictionaryArray.from_arrays(
        pa.array(np.repeat(encoded.indices.to_numpy(), sizes)), encoded.dictionary)


def _columns(deals: Deals, prefix: str, rows: _RowOrder, state: NDArray[np.int8],
             legal: NDArray[np.bool_], actions: NDArray[np.int64], points: NDArray[np.int64],
             shaped: NDArray[np.float64], reward: str) -> dict[str, Any]:
    lengths, gi, si, n = deals.lengths, rows.hand, rows.seat, rows.n
    same_next = rows.same_next
    last = ~same_next
    whole = lengths[gi] == 40
    next_state, next_legal = _next_rows(state, same_next), _next_rows(legal, same_next)
    first = np.ones(n, dtype=bool)
    first[1:] = same_next[:-1] == 0
    starts = np.flatnonzero(first)
    step = (np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n)))).astype(np.int32)
    team_points = points[gi, si % 2].astype(np.float64)
    r = np.where(last & whole, team_points, 0.0)
    if reward == "shaped":
        r = r + shaped
    # the audit strings once per (hand, seat), as codes into their distinct values: the
    # writer takes dictionaries, so no Python string is made per row
    owners = (gi[starts], si[starts])
    sizes = np.diff(np.append(starts, n))
    names = _dictionary(deals.names[owners].tolist(), sizes)
    hand_text = _dictionary(deals.hand_text[owners].tolist(), sizes)
    # an episode per hand with rows (a hand cut before its first play has none), in order
    used = np.flatnonzero(lengths > 0)
    code = np.cumsum(lengths > 0) - 1
    episode = pa.DictionaryArray.from_arrays(
        pa.array(code[gi].astype(np.int32)),
        pa.array([f"{prefix}{j}" for j in deals.index[used].tolist()], type=pa.string()))
    line = deals.line[gi]
    return {
        "episode": episode,
        "step": step,
        "player": si.astype(np.int8),
        "state": state,
        "action": actions.astype(np.int8),
        "reward": r,
        "next_state": next_state,
        "next_legal": next_legal,
        "legal": legal,
        "terminal": last & whole,
        "truncated": last & ~whole,
        "line": line,
        "name": names,
        "hand": hand_text,
    }
