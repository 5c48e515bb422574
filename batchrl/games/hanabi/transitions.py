"""Hanabi games to store rows: one row per move, from the mover's view.

A two-player row's state is the report's 195 numbers followed by 15 public facts
about hints (``knowledge.HINT_FEATURES``: which cards hints have touched, and the
focus of the partner's hint just before): the report's network reads the first
195; the others are there because the conventions bots play by read them. A game
of three to five players has the state of `batchrl.games.hanabi.observation` (the
same pieces for every other seat, and the last moves); a store holds one player
count.

Hanabi is cooperative: both players share every point, so a game is one
episode of the team's moves and a row's next state is the *next move's* state
(the partner's view), not the mover's next turn. The reward is the move's score
change (1 for a card played, else 0), so an episode's rewards add up to its
final score in cards played; the research convention (0 after the third fuse)
can be rebuilt from ``terminal`` rows, whose ``state`` holds the fuses left. The
next state's legal moves come from the rules of the game as it was played
(Eger et al.'s house rule allows a discard with 8 hints). Audit columns: who
moved (``name``: a bot, ``human`` or the Eger AI), their partner, the
mover's own cards, which its state hides, and the deal where games can share
one (Eger et al.'s seeds repeat: 52 games were dealt from seed 1), so a split
by game can keep a deal on one side.

>>> import numpy as np
>>> from batchrl.games.hanabi.bots import ConventionBot
>>> from batchrl.games.hanabi.logs import play_game
>>> states, actions = play_game((ConventionBot(), ConventionBot()), np.random.default_rng(3))
>>> cols = rows([replayed(states, actions, ("a", "b"), key="g3")], "0123456789abcdef:")
>>> bool(cols["reward"].sum() == states[-1].score_played), cols["state"].shape[1], cols["name"][:2]
(True, 210, ['a', 'b'])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games.hanabi import knowledge
from batchrl.games.hanabi.names import action_names, feature_names
from batchrl.games.hanabi.observation import encode_many as of_more
from batchrl.games.hanabi.rules import State, card_name, legal_actions, n_actions
from batchrl.store import StoreSchema

GAME_NAME = "hanabi"
AUDIT_COLUMNS = ("name", "partner", "hand", "deal")
@dataclass(frozen=True)
class Episode:
    """One game's moves, ready for the store."""

    key: str  # unique within its source: the game's index or id
    features: NDArray[np.float32]  # (moves, 210), before each move: FEATURE_NAMES
    actions: NDArray[np.int64]
    rewards: NDArray[np.float64]
    legal: NDArray[np.bool_]  # (moves, 20), before each move
    seats: NDArray[np.int8]  # the seat of each mover
    names: tuple[str, ...]  # who made each move
    partners: tuple[str, ...]
    hands: tuple[str, ...]  # each mover's own cards
    lines: tuple[int, ...]  # where each move is in its log (else its number, from 1)
    deal: str = ""  # games sharing a deal share this (e.g. Eger's seed); "" when unique
    players: int = 2


def schema(players: int = 2) -> StoreSchema:
    return StoreSchema(game=GAME_NAME, feature_names=feature_names(players),
                       action_names=action_names(players), audit_columns=AUDIT_COLUMNS,
                       game_params={"players": players}, legal=True)


def encode_many(states: Sequence[State], seats: Sequence[int]) -> NDArray[np.float32]:
    """The stored state of ``seats[i]`` in ``states[i]``, for a batch of one player count:
    the report's 210 numbers (two players) or `observation`'s."""
    if not states:
        return np.zeros((0, len(feature_names(2))), dtype=np.float32)
    if states[0].players != 2:
        return of_more(states, seats)
    return np.hstack([knowledge.encode_many(states, seats),
                      np.asarray([knowledge.hint_features(s, m)
                                  for s, m in zip(states, seats, strict=True)],
                                 dtype=np.float32).reshape(len(states), 15)])


def mask(state: State) -> NDArray[np.bool_]:
    out = np.zeros(n_actions(state.players), dtype=bool)
    out[list(legal_actions(state))] = True
    return out


def replayed(states: Sequence[State], actions: Sequence[int], names: Sequence[str],
             key: str, lines: Sequence[int] | None = None, deal: str = "") -> Episode:
    """An episode from a game played or replayed through the rules: ``states`` from the
    deal to the end (one more than ``actions``); ``names[seat]`` the seat's player."""
    before = states[:-1]
    if len(before) != len(actions):
        raise ValueError(f"{len(states)} states for {len(actions)} moves: want one more")
    movers = [s.current for s in before]
    players = states[0].players
    width = len(feature_names(players))
    return Episode(
        key=key,
        features=encode_many(before, movers).reshape(len(before), width),
        actions=np.asarray(actions, dtype=np.int64),
        rewards=np.diff([s.score_played for s in states]).astype(np.float64),
        legal=np.asarray([mask(s) for s in before], dtype=bool).reshape(
            len(before), len(action_names(players))),
        seats=np.asarray(movers, dtype=np.int8),
        names=tuple(names[m] for m in movers),
        # the partner; with more players, the others from the next seat on
        partners=tuple(",".join(names[(m + k) % players] for k in range(1, players))
                       for m in movers),
        hands=tuple(" ".join(card_name(c) for c in s.hands[s.current]) for s in before),
        lines=tuple(lines) if lines is not None else tuple(range(1, len(before) + 1)),
        deal=deal,
        players=players,
    )


def rows(episodes: Sequence[Episode], episode_prefix: str) -> dict[str, Any]:
    """Store columns for ``episodes``; an episode's id is ``episode_prefix`` + its key."""
    counts = np.asarray([len(e.actions) for e in episodes], dtype=np.int64)
    n = int(counts.sum())
    if len({e.players for e in episodes}) > 1:
        raise ValueError("rows of one player count at a time")
    players = episodes[0].players if episodes else 2
    width = len(feature_names(players))
    state = np.concatenate([e.features for e in episodes]) if episodes else \
        np.zeros((0, width), dtype=np.float32)
    legal = np.concatenate([e.legal for e in episodes]) if episodes else \
        np.zeros((0, len(action_names(players))), dtype=bool)
    last = np.zeros(n, dtype=bool)
    last[np.cumsum(counts) - 1] = True
    next_state = np.roll(state, -1, axis=0)
    next_state[last] = 0.0
    next_legal = np.roll(legal, -1, axis=0)
    next_legal[last] = False
    steps = np.arange(n) - np.repeat(np.cumsum(counts) - counts, counts)
    return {
        "episode": np.repeat(np.asarray([f"{episode_prefix}{e.key}" for e in episodes],
                                        dtype=object), counts),
        "step": steps.astype(np.int32),
        "player": _joined([e.seats for e in episodes], np.int8),
        "state": state.astype(np.float32),
        "action": _joined([e.actions for e in episodes], np.int8),
        "reward": _joined([e.rewards for e in episodes], np.float64),
        "next_state": next_state.astype(np.float32),
        "next_legal": next_legal,
        "legal": legal,
        "terminal": last,
        "truncated": np.zeros(n, dtype=bool),
        "line": np.asarray([v for e in episodes for v in e.lines], dtype=np.int64),
        "name": [v for e in episodes for v in e.names],
        "partner": [v for e in episodes for v in e.partners],
        "hand": [v for e in episodes for v in e.hands],
        "deal": [e.deal for e in episodes for _ in e.actions],
    }


def _joined(parts: Sequence[NDArray[Any]], dtype: Any) -> NDArray[Any]:
    return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)
