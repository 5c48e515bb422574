"""Limit hold'em rules as the ACPC dealer applies them: pure functions over a frozen state.

The parser replays every logged hand through these functions, and the simulator
plays new hands through the same ones, so a hand is legal here exactly when the
dealer would have accepted it. An illegal action raises ``IllegalAction``;
nothing is repaired.

>>> from batchrl.games.holdem.gamedef import HEADS_UP_LIMIT
>>> s = deal(HEADS_UP_LIMIT, hole=((0, 1), (2, 3)), board=(4, 5, 6, 7, 8))
>>> s.current, legal_actions(s)            # the small blind (seat 1) acts first
(1, (0, 1, 2))
>>> s = step(step(s, RAISE), CALL)          # "rc": on to the flop
>>> s.round, s.spent, s.current
(1, (20, 20), 0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from batchrl.games.holdem.gamedef import GameDef, GameDefError

FOLD, CALL, RAISE = 0, 1, 2
ACTION_NAMES = ("fold", "call", "raise")
ACTION_CHARS = "fcr"


class IllegalAction(ValueError):
    """An action the dealer would have refused in this state."""


class HandState(NamedTuple):
    """One hand of limit hold'em at one moment; build it with ``deal`` or ``new_hand``.

    Immutable like a frozen dataclass, but a tuple: the parser builds one per
    logged action, and a tuple is several times cheaper to build.
    """

    game: GameDef
    hole: tuple[tuple[int, ...], ...]  # per seat; () when a log does not show them
    board: tuple[int, ...]  # the whole deal's board, revealed round by round
    round: int
    spent: tuple[int, ...]  # chips each seat has put in this hand, blinds included
    max_spent: int
    folded: tuple[bool, ...]
    history: tuple[str, ...]  # betting per round reached, in ACPC letters ("rc", "crc", "")
    raises: tuple[int, ...]  # raises per seat over the whole hand
    round_raises: int
    called: int  # seats that have matched the bet in this round (the raiser counts)
    current: int  # seat to act, -1 once the hand is over

    @property
    def finished(self) -> bool:
        return self.current < 0

    @property
    def betting(self) -> str:
        """The betting so far as an ACPC log writes it, e.g. ``"rc/crc/"``."""
        return "/".join(self.history)

    def visible_board(self) -> tuple[int, ...]:
        return self.board[: self.game.board_cards_before(self.round)]

    def to_call(self, seat: int) -> int:
        return self.max_spent - self.spent[seat]


def deal(game: GameDef, hole: Sequence[Sequence[int]], board: Sequence[int]) -> HandState:
    """The state before the first action, with the cards already dealt."""
    if not game.is_limit:
        raise GameDefError(f"{game.name} is a no-limit game: batchrl plays limit games only")
    if len(hole) != game.num_players:
        raise ValueError(f"{len(hole)} hands of hole cards for {game.num_players} players")
    n = game.num_players
    state = HandState(
        game=game,
        hole=tuple(tuple(h) for h in hole),
        board=tuple(board),
        round=0,
        spent=game.blind,
        max_spent=max(game.blind),
        folded=(False,) * n,
        history=("",),
        raises=(0,) * n,
        round_raises=0,
        called=0,
        current=-1,
    )
    return state._replace(current=_first_to_act(state.folded, game, 0))


def new_hand(game: GameDef, rng: np.random.Generator) -> HandState:
    """Deal a fresh hand from ``rng`` (the only source of randomness)."""
    deck = [int(c) for c in rng.permutation(game.num_suits * game.num_ranks)]
    k = game.num_hole_cards
    hole = [deck[p * k : (p + 1) * k] for p in range(game.num_players)]
    start = game.num_players * k
    return deal(game, hole, deck[start : start + sum(game.num_board_cards)])


def legal_actions(state: HandState) -> tuple[int, ...]:
    """Fold only when owing chips (the dealer refuses a free fold); raise up to the cap."""
    if state.finished:
        return ()
    actions = [CALL]
    if state.to_call(state.current) > 0:
        actions.insert(0, FOLD)
    if state.round_raises < state.game.max_raises[state.round]:
        actions.append(RAISE)
    return tuple(actions)


def legal_mask(state: HandState) -> tuple[bool, bool, bool]:
    legal = legal_actions(state)
    return (FOLD in legal, CALL in legal, RAISE in legal)


def step(state: HandState, action: int) -> HandState:
    """The state after the seat to act plays ``action`` (FOLD, CALL or RAISE)."""
    (game, hole, board, round_, spent, max_spent, folded, history, raises, round_raises,
     called, seat) = state
    if seat < 0:
        raise IllegalAction("the hand is over")
    if action == FOLD:
        if spent[seat] == max_spent:
            raise IllegalAction(f"seat {seat} cannot fold: nothing to call")
        folded = (*folded[:seat], True, *folded[seat + 1:])
    elif action == CALL:
        spent = (*spent[:seat], max_spent, *spent[seat + 1:])
        called += 1
    elif action == RAISE:
        if round_raises >= game.max_raises[round_]:
            raise IllegalAction(f"seat {seat} cannot raise: {round_raises} raises already, "
                                f"the cap in round {round_ + 1}")
        max_spent += game.raise_size[round_]
        spent = (*spent[:seat], max_spent, *spent[seat + 1:])
        raises = (*raises[:seat], raises[seat] + 1, *raises[seat + 1:])
        round_raises += 1
        called = 1
    else:
        raise IllegalAction(f"seat {seat}: {action!r} is not an action (0 fold, 1 call, 2 raise)")
    history = (*history[:-1], history[-1] + ACTION_CHARS[action])
    active = game.num_players - sum(folded)
    if active <= 1:
        current = -1
    elif called >= active:
        if round_ + 1 >= game.num_rounds:
            current = -1
        else:
            round_ += 1
            history = (*history, "")
            round_raises = 0
            called = 0
            current = _first_to_act(folded, game, round_)
    else:
        current = _next_active(folded, seat)
    return HandState(game, hole, board, round_, spent, max_spent, folded, history, raises,
                     round_raises, called, current)


def is_terminal(state: HandState) -> bool:
    return state.finished


def showdown_seats(state: HandState) -> tuple[int, ...]:
    """Seats whose cards decide the pot; empty when everybody else folded."""
    live = tuple(p for p in range(state.game.num_players) if not state.folded[p])
    return live if len(live) > 1 else ()


def payoffs(state: HandState, strengths: Sequence[int] | None = None) -> tuple[float, ...]:
    """Each seat's chips won or lost; ``strengths`` (higher wins) are needed at a showdown.

    Ties split the pot evenly, as the ACPC dealer does (hence fractional payoffs).
    """
    if not state.finished:
        raise ValueError("the hand is not over")
    pot = sum(state.spent)
    live = [p for p in range(state.game.num_players) if not state.folded[p]]
    if len(live) > 1:
        if strengths is None:
            raise ValueError("a showdown needs the players' hand strengths")
        best = max(strengths[p] for p in live)
        live = [p for p in live if strengths[p] == best]
    share = pot / len(live)
    return tuple(
        (share if p in live else 0.0) - state.spent[p] for p in range(state.game.num_players)
    )


def returns(state: HandState) -> tuple[float, ...]:
    """Payoffs of a finished hand, evaluating the showdown if there is one."""
    from batchrl.games.holdem.evaluator import evaluate

    seats = showdown_seats(state)
    if not seats:
        return payoffs(state)
    board = state.board[: sum(state.game.num_board_cards)]
    strengths = [evaluate((*h, *board)) if h else -1 for h in state.hole]
    return payoffs(state, strengths)


def _first_to_act(folded: tuple[bool, ...], game: GameDef, round_: int) -> int:
    first = game.first_player[round_]
    return first if not folded[first] else _next_active(folded, first)


def _next_active(folded: tuple[bool, ...], seat: int) -> int:
    n = len(folded)
    nxt = (seat + 1) % n
    while folded[nxt]:
        nxt = (nxt + 1) % n
    return nxt
