"""Logged hands to store rows: one row per decision, from the acting seat's view.

The thesis's model (Vilella 2011, ch. 2.2 and 4.1): a row holds the features
the seat saw, its action, and a reward; ``next_state`` is the same seat's next
decision, after the opponent's reply, and the row is terminal when the hand
ends first. The reward is minus the chips the seat puts in with this action
(its blind counted on its first decision), plus, on its last decision, the chips
it takes from the pot. So for every seat that acts, its rewards add up to its
logged payoff.

Hands are processed in chunks so that the showdowns and the PVs of a few
thousand hands are computed in one vectorized call each.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from batchrl.games.holdem import actions, features
from batchrl.games.holdem.evaluator import evaluate7
from batchrl.games.holdem.gamedef import GameDef
from batchrl.games.holdem.pv import pv_cards
from batchrl.games.holdem.pv2 import pv2_cards
from batchrl.games.holdem.replay import (
    Replayed,
    ReplayError,
    check_payoffs,
    replay,
    replay_betting,
    tokens,
)
from batchrl.games.holdem.rules import ACTION_CHARS
from batchrl.games.holdem.rules import payoffs as rules_payoffs
from batchrl.store import Rows, RowsBatch

AUDIT_COLUMNS = ("cards", "betting", "name")  # name: the acting player, as logged
# no-limit stores add the move as logged: "f", "c" or "r<total>", the raise's exact size
NOLIMIT_AUDIT = ("move",)


def audit_columns(game: GameDef) -> tuple[str, ...]:
    return AUDIT_COLUMNS if game.is_limit else AUDIT_COLUMNS + NOLIMIT_AUDIT


class LoggedHandLike(Protocol):
    """What the rows need from a parsed hand (``records.LoggedHand`` has it)."""

    @property
    def source(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def index(self) -> int: ...
    @property
    def betting(self) -> str: ...
    @property
    def cards(self) -> str: ...
    @property
    def names(self) -> tuple[str, ...]: ...
    @property
    def hole(self) -> tuple[tuple[int, ...], ...]: ...
    @property
    def board(self) -> tuple[tuple[int, ...], ...]: ...
    @property
    def payoffs(self) -> tuple[float, ...]: ...
    @property
    def game(self) -> GameDef | None: ...


def game_of(hand: LoggedHandLike, game: GameDef) -> GameDef:
    """The game ``hand`` was played in: its own where it says (a hand history's blinds,
    antes and stacks), else its source's."""
    return hand.game or game


def check_hands(
    game: GameDef, hands: Sequence[LoggedHandLike]
) -> tuple[list[tuple[LoggedHandLike, Replayed]], list[tuple[LoggedHandLike, ReplayError]]]:
    """Replay each hand and compare payoffs; the showdowns are evaluated in one batch."""
    replayed: list[tuple[LoggedHandLike, Replayed]] = []
    rejected: list[tuple[LoggedHandLike, ReplayError]] = []
    for hand in hands:
        try:
            replayed.append((hand, replay(game_of(hand, game), hand.betting, hand.hole,
                                          hand.board)))
        except ReplayError as exc:
            rejected.append((hand, exc))
    showdown_cards: list[tuple[int, ...]] = []
    showdown_hands: list[int] = []
    for i, (hand, rep) in enumerate(replayed):
        if rep.needs_showdown:
            board = tuple(c for group in hand.board for c in group)
            for seat in range(game.num_players):
                hole = hand.hole[seat]
                # A seat that folded or hid its cards gets a dummy; its strength is unused.
                showdown_cards.append((*hole, *board) if hole else (*board[:2], *board))
            showdown_hands.append(i)
    strengths: dict[int, list[int]] = {}
    if showdown_cards:
        values = evaluate7(np.array(showdown_cards, dtype=np.int64)).reshape(
            len(showdown_hands), game.num_players
        )
        strengths = {i: values[k].tolist() for k, i in enumerate(showdown_hands)}
    # A hand's payoffs follow from its final state and which seats' cards beat which: the
    # hands of a chunk that end alike are paid once (the states are shared, ``replay``).
    paid: dict[tuple[int, tuple[int, ...]], tuple[float, ...]] = {}
    accepted: list[tuple[LoggedHandLike, Replayed]] = []
    for i, (hand, rep) in enumerate(replayed):
        seen = strengths.get(i)
        key = (id(rep.final), () if seen is None else tuple([sum([v > w for w in seen])
                                                              for v in seen]))
        try:
            result = paid.get(key)
            if result is None:
                result = paid[key] = rules_payoffs(rep.final, seen)
            if not hand.payoffs:  # a hand that logs no result: the rules' is its result
                logged: Any = hand  # a dataclass (`records.LoggedHand`)
                hand = dataclasses.replace(logged, payoffs=result)
            else:
                check_payoffs(rep, hand.payoffs, seen, result)
        except ReplayError as exc:
            rejected.append((hand, exc))
            continue
        accepted.append((hand, rep))
    return accepted, rejected


@dataclass(frozen=True, slots=True)
class Template:
    """The rows one betting string gives, before the cards and payoffs are known.

    Every public feature, the actions (no-limit raises binned, ``actions.abstract``),
    the chips put in and the legal masks follow from the betting alone, so they are
    computed once per distinct betting string; only the equities, the payoffs and the
    audit columns vary by hand. Rows are ordered seat by seat, each seat's decisions
    in turn.
    """

    seat: NDArray[np.int8]
    step: NDArray[np.int32]
    action: NDArray[np.int8]
    state: NDArray[np.float32]  # (k, n_features), pv NaN
    put_in: NDArray[np.float64]  # chips put in by the action (the blind on the first)
    last: NDArray[np.bool_]
    next_row: NDArray[np.int64]  # row of the same seat's next decision, -1 if last
    next_legal: NDArray[np.bool_]  # (k, actions)
    legal: NDArray[np.bool_]  # (k, actions): the row's own
    board_seen: NDArray[np.int64]  # board cards visible at each decision
    final_spent: NDArray[np.float64]  # (k,) what the row's seat put in over the hand
    move: tuple[str, ...]  # the move as logged ("f", "c", "r300")


@functools.lru_cache(maxsize=1 << 16)
def template(game: GameDef, betting: str) -> Template:
    """The rows of ``betting``; raises ``ReplayError`` if the rules refuse it."""
    rep = replay_betting(game, betting)
    final = rep.final
    decisions = rep.decisions
    moves = [m for sequence in tokens(betting, game) for m in sequence]
    n_actions = len(actions.action_names(game))
    after = [d[0] for d in decisions[1:]] + [final]
    masks = [actions.action_mask(s) for s, _ in decisions]  # each decision's legal actions
    seat_l: list[int] = []
    step_l: list[int] = []
    action_l: list[int] = []
    state_l: list[list[float]] = []
    put_in: list[float] = []
    last_l: list[bool] = []
    next_l: list[int] = []
    legal_l: list[tuple[bool, ...]] = []
    now_l: list[tuple[bool, ...]] = []
    move_l: list[str] = []
    seen: list[int] = []
    spent_l: list[float] = []
    for seat in range(game.num_players):
        mine = [k for k, (s, _) in enumerate(decisions) if s.current == seat]
        first = len(seat_l)
        for i, k in enumerate(mine):
            s, a = decisions[k]
            last = i == len(mine) - 1
            seat_l.append(seat)
            step_l.append(i)
            _, size = moves[k]
            action_l.append(actions.abstract(s, a, size))
            move_l.append(ACTION_CHARS[a] + (str(size) if size else ""))
            state_l.append(features.public_features(s, seat))
            put_in.append(after[k].contributed(seat) - (0 if i == 0 else s.contributed(seat)))
            last_l.append(last)
            next_l.append(-1 if last else first + i + 1)
            legal_l.append((False,) * n_actions if last else masks[mine[i + 1]])
            now_l.append(masks[k])
            seen.append(game.board_cards_before(s.round))
            spent_l.append(final.contributed(seat))
    n_features = len(features.feature_names(game))
    return Template(
        seat=np.asarray(seat_l, dtype=np.int8),
        step=np.asarray(step_l, dtype=np.int32),
        action=np.asarray(action_l, dtype=np.int8),
        state=np.asarray(state_l, dtype=np.float32).reshape(len(seat_l), n_features),
        put_in=np.asarray(put_in, dtype=np.float64),
        last=np.asarray(last_l, dtype=bool),
        next_row=np.asarray(next_l, dtype=np.int64),
        next_legal=np.asarray(legal_l, dtype=bool).reshape(len(seat_l), n_actions),
        legal=np.asarray(now_l, dtype=bool).reshape(len(seat_l), n_actions),
        board_seen=np.asarray(seen, dtype=np.int64),
        final_spent=np.asarray(spent_l, dtype=np.float64),
        move=tuple(move_l),
    )


def _no_rows(game: GameDef) -> Template:
    """A template of no rows, in the columns' shapes (a chunk of which no hand stood)."""
    n_features, n_actions = len(features.feature_names(game)), len(actions.action_names(game))
    return Template(
        seat=np.zeros(0, np.int8), step=np.zeros(0, np.int32), action=np.zeros(0, np.int8),
        state=np.zeros((0, n_features), np.float32), put_in=np.zeros(0, np.float64),
        last=np.zeros(0, bool), next_row=np.zeros(0, np.int64),
        next_legal=np.zeros((0, n_actions), bool), legal=np.zeros((0, n_actions), bool),
        board_seen=np.zeros(0, np.int64), final_spent=np.zeros(0, np.float64), move=())


def build_rows(
    game: GameDef, hands: Sequence[tuple[LoggedHandLike, Replayed]], episode_prefix: str,
    pv: bool = True,
) -> dict[str, Any]:
    """Store columns for accepted hands (see ``batchrl.store`` for their meaning)."""
    # Each distinct template of the chunk once, and each hand's rows taken from them: the
    # hands of a chunk share their bettings (a few hundred of 2,048 in DeepStack's log).
    distinct: list[Template] = []
    which: dict[tuple[str, GameDef | None], int] = {}
    indices: list[int] = []
    for hand, _ in hands:
        key = (hand.betting, hand.game)
        k = which.get(key)
        if k is None:
            k = which[key] = len(distinct)
            distinct.append(template(game_of(hand, game), hand.betting))
        indices.append(k)
    of_hand = np.array(indices, dtype=np.int64)
    lengths = np.array([len(t.seat) for t in distinct], dtype=np.int64)
    counts = lengths[of_hand]
    n = int(counts.sum())
    starts = np.cumsum(counts) - counts
    hand_of_row = np.repeat(np.arange(len(hands)), counts)
    # a row's place among the distinct templates' rows
    take = np.repeat((np.cumsum(lengths) - lengths)[of_hand] - starts, counts) + np.arange(n)

    def cat(name: str) -> Any:
        if not distinct:
            return getattr(_no_rows(game), name)
        return np.concatenate([getattr(t, name) for t in distinct])[take]

    seat = cat("seat")
    state = cat("state")
    next_row = cat("next_row")
    last = cat("last")
    payoffs = np.array([hand.payoffs for hand, _ in hands], dtype=np.float64).reshape(
        len(hands), game.num_players)
    # The last decision takes the seat's share of the pot: its payoff plus its stake.
    reward = -cat("put_in") + np.where(last, payoffs[hand_of_row, seat] + cat("final_spent"), 0.0)
    # a seat whose hole cards the log hides has no rows: its view cannot be computed
    known = np.array([[len(h) > 0 for h in hand.hole] for hand, _ in hands],
                     dtype=bool).reshape(len(hands), game.num_players)[hand_of_row, seat]
    columns = features.pv_columns(game)
    if pv:
        state[np.ix_(known, list(columns))] = _pvs(
            hands, hand_of_row[known], seat[known], cat("board_seen")[known], len(columns))
    else:
        state = np.ascontiguousarray(np.delete(state, columns, axis=1))
    has_next = next_row >= 0
    global_next = next_row + np.repeat(starts, counts)
    next_state = np.zeros_like(state)
    next_state[has_next] = state[global_next[has_next]]
    per_hand = {
        "episode": [f"{episode_prefix}{hand.index}" for hand, _ in hands],
        "line": [hand.line for hand, _ in hands],
        "cards": [hand.cards for hand, _ in hands],
        "betting": [hand.betting for hand, _ in hands],
    }
    audit = {k: np.repeat(np.asarray(v, dtype=np.int64 if k == "line" else object), counts)
             for k, v in per_hand.items()}
    names = np.array([[*hand.names, *[""] * game.num_players][:game.num_players]
                      for hand, _ in hands], dtype=object).reshape(len(hands), game.num_players)
    extra = {} if game.is_limit else {
        "move": np.array([m for t in distinct for m in t.move], dtype=object)[take]}
    columns_out = {
        "episode": audit["episode"],
        "step": cat("step"),
        "player": seat,
        "state": state,
        "action": cat("action"),
        "reward": reward,
        "next_state": next_state,
        "next_legal": cat("next_legal"),
        "legal": cat("legal"),
        "terminal": last,
        "truncated": np.zeros(n, dtype=bool),
        "line": audit["line"],
        "cards": audit["cards"],
        "betting": audit["betting"],
        "name": names[hand_of_row, seat],
        **extra,
    }
    if known.all():
        return columns_out
    return {k: v[known] for k, v in columns_out.items()}


def _pvs(
    hands: Sequence[tuple[LoggedHandLike, Replayed]], hand_of_row: NDArray[np.int64],
    seat: NDArray[np.int8], board_seen: NDArray[np.int64], kinds: int = 1,
) -> NDArray[np.float64]:
    """Each row's equities (``kinds`` columns: PV, then PV2): its seat's hole cards
    against the board visible at its decision."""
    if not hands:
        return np.zeros((0, kinds), dtype=np.float64)
    n_seats = len(hands[0][0].hole)
    none = (-1, -1)
    holes = np.array([[hole if len(hole) == 2 else none for hole in hand.hole]
                      for hand, _ in hands], dtype=np.int64).reshape(len(hands), n_seats, 2)
    padding = (-1,) * 5
    boards = np.array([(*(c for group in hand.board for c in group), *padding)[:5]
                       for hand, _ in hands], dtype=np.int64)
    rows = np.concatenate([holes[hand_of_row, seat], boards[hand_of_row]], axis=1)
    rows[:, 2:][np.arange(5) >= board_seen[:, None]] = -1
    kinds_of = (pv_cards, pv2_cards)[:kinds]
    return np.stack([equity(rows) for equity in kinds_of], axis=1)


def process_chunk(
    game: GameDef, hands: Sequence[LoggedHandLike], episode_prefix: str, pv: bool = True
) -> RowsBatch:
    """Check and convert a chunk of logged hands; refused hands are returned with why."""
    accepted, rejected = check_hands(game, hands)
    rows = Rows.from_columns(build_rows(game, accepted, episode_prefix, pv))
    return RowsBatch(rows, len(accepted), rejected)
