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

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from batchrl.games.tressette.features import IllegalPlay, Tracker, feature_names
from batchrl.games.tressette.rules import ACE, THREE, TWO, card_name
from batchrl.games.tressette.symmetry import canonical, canonical_name, canonical_names
from batchrl.store import StoreSchema

GAME_NAME = "tressette"
AUDIT_COLUMNS = ("name", "hand")
REWARDS = ("points", "shaped")
SUIT_ORDERS = ("dealt", "canonical")
ACTION_NAMES = tuple(card_name(c) for c in range(40))
_NAMES = ACTION_NAMES


def schema(reward: str = "points", suits: str = "dealt") -> StoreSchema:
    """The store's schema; ``suits="canonical"`` names the features and cards in each
    state's canonical suits (``symmetry``: ``hand_Aa`` is the ace of suit ``a``)."""
    if reward not in REWARDS:
        raise ValueError(f"reward {reward!r}: want one of {', '.join(REWARDS)}")
    if suits not in SUIT_ORDERS:
        raise ValueError(f"suits {suits!r}: want one of {', '.join(SUIT_ORDERS)}")
    names, actions = feature_names(), ACTION_NAMES
    params: dict[str, str] = {"reward": reward}
    if suits == "canonical":
        names, actions = canonical_names(), tuple(canonical_name(c) for c in range(40))
        params["suits"] = suits
    # every feature is a small whole number (flags, ranks, thirds, tricks): int8 on disk
    return StoreSchema(game=GAME_NAME, feature_names=names, action_names=actions,
                       audit_columns=AUDIT_COLUMNS, game_params=params,
                       state_dtype="int8")


def _shaping(card: NDArray[np.int64]) -> NDArray[np.float64]:
    rank = card % 10
    return np.where(rank == ACE, -0.2, np.where((rank == TWO) | (rank == THREE), -0.1, 0.05))


@dataclass(frozen=True, slots=True)
class Logged:
    """A game with the place a log gives it (``parsers.tressette.LoggedGame`` has the
    same fields), for games straight from ``logs.play``."""

    game: Any  # logs.Game
    index: int = 0
    line: int = 1


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
    rejected: list[tuple[Any, str]] = []
    games = list(games)
    partial = [r for r in games if not r.game.whole_deal]
    rejected += [(r, "a transcript cut short shows only the cards played: the unplayed "
                     "cards' owners are unknown, so its players' hands cannot be encoded")
                 for r in partial]
    games = [r for r in games if r.game.whole_deal]
    while True:
        try:
            cols = _rows(games, episode_prefix, reward, suits)
            if not dictionaries:
                cols |= {k: _per_row(cols[k]) for k in ("episode", *AUDIT_COLUMNS)}
            return cols, rejected
        except IllegalPlay as exc:
            bad = set(exc.games.tolist())
            rejected += [(games[i], str(exc)) for i in sorted(bad)]
            games = [g for i, g in enumerate(games) if i not in bad]


def _rows(games: list[Any], prefix: str, reward: str, suits: str) -> dict[str, Any]:
    g = len(games)
    hands = np.zeros((g, 4, 40), dtype=bool)
    lengths = np.asarray([len(x.game.plays) for x in games], dtype=np.int64)
    seats = np.zeros((g, 40), dtype=np.int64)
    cards = np.zeros((g, 40), dtype=np.int64)
    # every card of every hand and play in one pass each, not an array per hand
    held = [h for x in games for h in x.game.hands]
    owner = np.repeat(np.arange(len(held)), [len(h) for h in held])
    hands.reshape(-1, 40)[owner, np.fromiter(chain.from_iterable(held), np.int64,
                                             count=len(owner))] = True
    played = np.fromiter(chain.from_iterable(chain.from_iterable(x.game.plays for x in games)),
                         np.int64, count=2 * int(lengths.sum())).reshape(-1, 2)
    made = np.arange(40)[None, :] < lengths[:, None]
    seats[made], cards[made] = played[:, 0], played[:, 1]
    tracker = Tracker(hands, np.asarray([r.game.leader for r in games], dtype=np.int64))
    x = np.zeros((g, 40, len(feature_names())), dtype=np.int8)  # every feature fits
    legal = np.zeros((g, 40, 40), dtype=bool)
    shaped = np.zeros((g, 40))
    for t in range(40):
        active = t < lengths
        if not active.any():
            break
        turn = active & (seats[:, t] != tracker.current)
        if turn.any():
            raise IllegalPlay("a seat plays out of turn", np.flatnonzero(turn))
        tracker.features(out=x[:, t])
        legal[:, t] = tracker.legal()
        team = seats[:, t] % 2
        high_before = tracker.high_taken[np.arange(g), team]
        tracker.play(cards[:, t], active, legal[:, t])
        if reward == "shaped":
            closed = active & (tracker.position == 0)
            took = tracker.last_winner % 2 == team
            gained = tracker.high_taken[np.arange(g), team] - high_before
            shaped[:, t] = np.where(active, _shaping(cards[:, t]), 0.0) + np.where(
                closed, np.where(took, 0.5, -0.5) + 0.3 * gained, 0.0)
    finished = lengths == 40
    points = tracker.points()
    wrong = [j for j in np.flatnonzero(finished).tolist()
             if games[j].game.points is not None
             and tuple(int(p) for p in games[j].game.points) != tuple(points[j])]
    if wrong:  # all of them at once: one more pass, not one per hand
        raise IllegalPlay("the rules' points differ from the logged points",
                          np.asarray(wrong, dtype=np.int64))
    actions = cards
    if suits == "canonical" and g:  # each decision in its own suit order; the next state too
        flat, masks, actions = canonical(x.reshape(g * 40, -1), legal.reshape(g * 40, 40),
                                         cards.ravel())
        assert masks is not None
        x, legal, actions = flat.reshape(x.shape), masks.reshape(legal.shape), \
            actions.reshape(cards.shape)
    return _columns(games, prefix, x, legal, seats, cards, actions, lengths, points, shaped,
                    reward)


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


def _columns(games: list[Any], prefix: str, x: NDArray[np.int8], legal: NDArray[np.bool_],
             seats: NDArray[np.int64], cards: NDArray[np.int64], actions: NDArray[np.int64],
             lengths: NDArray[np.int64],
             points: NDArray[np.int64], shaped: NDArray[np.float64],
             reward: str) -> dict[str, Any]:
    # row order: hand, then seat, then the seat's decisions in play order
    valid = np.arange(40)[None, :] < lengths[:, None]
    key = np.where(valid, np.arange(len(games))[:, None] * 4 + seats, -1)  # (hand, seat)
    flat = key.ravel()
    order = np.argsort(flat, kind="stable")  # by hand and seat, plays in order within
    order = order[flat[order] >= 0]
    gi, ti = np.divmod(order, 40)
    si = seats[gi, ti]
    group = gi * 4 + si
    n = len(gi)
    same_next = np.zeros(n, dtype=bool)
    same_next[:-1] = group[1:] == group[:-1]
    last = ~same_next
    whole = lengths[gi] == 40
    # rows gathered by their flat (hand, play) index; a row's next state is the row below
    # it when that is the same seat's next decision (a shifted copy, not another gather)
    state = np.take(x.reshape(len(x) * 40, x.shape[2]), order, axis=0)
    next_state, next_legal = _next_rows(state, same_next), _next_rows(
        np.take(legal.reshape(len(legal) * 40, 40), order, axis=0), same_next)
    first = np.ones(n, dtype=bool)
    first[1:] = same_next[:-1] == 0
    starts = np.flatnonzero(first)
    step = (np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n)))).astype(np.int32)
    team_points = points[gi, si % 2].astype(np.float64)
    r = np.where(last & whole, team_points, 0.0)
    if reward == "shaped":
        r = r + shaped[gi, ti]
    # the audit strings once per (hand, seat), as codes into their distinct values: the
    # writer takes dictionaries, so no Python string is made per row
    owners = list(zip(gi[starts].tolist(), si[starts].tolist(), strict=True))
    sizes = np.diff(np.append(starts, n))
    names = _dictionary([games[g].game.names[q] for g, q in owners], sizes)
    hand_text = _dictionary([" ".join([_NAMES[c] for c in sorted(games[g].game.hands[q])])
                             for g, q in owners], sizes)
    # an episode per hand with rows (a hand cut before its first play has none), in order
    used = np.flatnonzero(lengths > 0)
    code = np.cumsum(lengths > 0) - 1
    episode = pa.DictionaryArray.from_arrays(
        pa.array(code[gi].astype(np.int32)),
        pa.array([f"{prefix}{games[j].index}" for j in used.tolist()], type=pa.string()))
    line = np.asarray([r.line for r in games], dtype=np.int64)[gi]
    return {
        "episode": episode,
        "step": step,
        "player": si.astype(np.int8),
        "state": state,
        "action": actions[gi, ti].astype(np.int8),
        "reward": r,
        "next_state": next_state,
        "next_legal": next_legal,
        "terminal": last & whole,
        "truncated": last & ~whole,
        "line": line,
        "name": names,
        "hand": hand_text,
    }
