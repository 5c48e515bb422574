"""Hold'em rules as the ACPC dealer applies them: pure functions over a frozen state.

One set of rules for every ACPC game: the betting structure is a parameter of the
game definition (``GameDef.betting``), as pokerkit makes limit a betting-structure
mixin. Limit raises add the round's fixed size; no-limit raises name the total they
raise *to* (``r300``), at least the last raise's size over the bet (the ACPC server's
``minNoLimitRaiseTo``) and at most the player's stack, where the player is all-in.
Stacks reset every hand, as the dealer resets them (20,000 chips in the standard
no-limit games; limit games have none). Any number of players: a player all-in no
longer acts, a round ends when every player still able to act has matched the bet
since the last raise, and when fewer than two can act the hand runs out to a showdown
(the log's empty rounds, ``r20000c///``). The pot is split in side pots by what each
player put in, ties sharing a pot evenly (hence fractional payoffs).

The parser replays every logged hand through these functions, and the simulator plays
new hands through the same ones, so a hand is legal here exactly when the dealer would
have accepted it. An illegal action raises ``IllegalAction``; nothing is repaired.

>>> from batchrl.games.holdem.gamedef import HEADS_UP_LIMIT, HEADS_UP_NOLIMIT
>>> s = deal(HEADS_UP_LIMIT, hole=((0, 1), (2, 3)), board=(4, 5, 6, 7, 8))
>>> s.current, legal_actions(s)            # the small blind (seat 1) acts first
(1, (0, 1, 2))
>>> s = step(step(s, RAISE), CALL)          # "rc": on to the flop
>>> s.round, s.spent, s.current
(1, (20, 20), 0)
>>> n = deal(HEADS_UP_NOLIMIT, hole=((0, 1), (2, 3)), board=(4, 5, 6, 7, 8))
>>> raise_bounds(n)                         # a min-raise to 200, or all-in
(200, 20000)
>>> n = step(step(n, RAISE, 300), RAISE, 900)
>>> n.betting, raise_bounds(n)              # the next raise must add at least 600
('r300r900', (1500, 20000))
>>> step(step(n, RAISE, 20000), CALL).betting    # all-in and called: the board runs out
'r300r900r20000c///'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from batchrl.games.holdem.evaluator import evaluate, evaluate_many
from batchrl.games.holdem.gamedef import GameDef

FOLD, CALL, RAISE = 0, 1, 2
ACTION_NAMES = ("fold", "call", "raise")
ACTION_CHARS = "fcr"


class IllegalAction(ValueError):
    """An action the dealer would have refused in this state."""


class HandState(NamedTuple):
    """One hand at one moment; build it with ``deal`` or ``new_hand``.

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
    history: tuple[str, ...]  # betting per round reached, as a log writes it ("r300c", "")
    raises: tuple[int, ...]  # raises per seat over the whole hand
    round_raises: int
    called: int  # seats still able to act that have matched the bet since the last raise
    current: int  # seat to act, -1 once the hand is over
    min_raise_to: int  # no-limit: the least total a raise may name (0 in limit games)
    aggressor: int  # the seat that made the last raise of the hand, -1 before any
    stack: tuple[int, ...]  # each seat's chips at the start of the hand, less its ante
    round_pots: tuple[int, ...]  # the pot when each round reached began (blinds in the first)

    @property
    def finished(self) -> bool:
        return self.current < 0

    @property
    def betting(self) -> str:
        """The betting so far as an ACPC log writes it, e.g. ``"rc/crc/"`` or ``"r300c/"``."""
        return "/".join(self.history)

    def visible_board(self) -> tuple[int, ...]:
        return self.board[: self.game.board_cards_before(self.round)]

    def board_dealt(self, round_: int) -> tuple[int, ...]:
        """The board cards dealt for ``round_`` (none pre-flop)."""
        start = self.game.board_cards_before(round_ - 1)
        return self.board[start : start + self.game.num_board_cards[round_]]

    def to_call(self, seat: int) -> int:
        """The chips ``seat`` must add to stay in (no more than it has)."""
        return min(self.max_spent, self.stack[seat]) - self.spent[seat]

    def all_in(self, seat: int) -> bool:
        return self.spent[seat] >= self.stack[seat]

    def acting(self) -> int:
        """Players who can still act: neither folded nor all-in."""
        return _acting(self.folded, self.spent, self.stack)

    @property
    def pot(self) -> int:
        """The chips in the pot: the bets and blinds, and the antes."""
        return sum(self.spent) + dead_chips(self.game)

    def contributed(self, seat: int) -> int:
        """What ``seat`` has put in the pot: its bets, its blind and its ante."""
        return self.spent[seat] + self.game.posted_antes()[seat]


def dead_chips(game: GameDef) -> int:
    """The antes in the pot: chips no seat has to match."""
    return sum(game.posted_antes()) if game.ante else 0


def deal(game: GameDef, hole: Sequence[Sequence[int]], board: Sequence[int]) -> HandState:
    """The state before the first action, with the cards already dealt."""
    if len(hole) != game.num_players:
        raise ValueError(f"{len(hole)} hands of hole cards for {game.num_players} players")
    n = game.num_players
    stack = game.behind()
    spent = tuple(min(b, s) for b, s in zip(game.blind, stack, strict=True))
    max_spent = max(spent)
    # no-limit: call the big blind and raise by as much, twice the blind (one chip without
    # blinds); limit games do not track it
    min_raise_to = 0 if game.is_limit else 2 * max_spent if max_spent else 1
    state = HandState(
        game=game,
        hole=tuple(tuple(h) for h in hole),
        board=tuple(board),
        round=0,
        spent=spent,
        max_spent=max_spent,
        folded=(False,) * n,
        history=("",),
        raises=(0,) * n,
        round_raises=0,
        called=0,
        current=-1,
        min_raise_to=min_raise_to,
        aggressor=-1,
        stack=stack,
        round_pots=(sum(spent) + dead_chips(game),),
    )
    acting = state.acting()
    if acting == 0 or (acting == 1 and all(  # all-in from the antes and blinds: no betting
            state.spent[p] >= max_spent for p in range(n)
            if not state.folded[p] and not state.all_in(p))):
        last = game.num_rounds - 1
        return state._replace(history=("",) * (last + 1), round=last,
                              round_pots=(state.round_pots[0],) * (last + 1))
    return state._replace(current=_first_seat(game.first_player[0], state.folded, state.spent,
                                              state.stack))


def new_hand(game: GameDef, rng: np.random.Generator) -> HandState:
    """Deal a fresh hand from ``rng`` (the only source of randomness)."""
    deck = [int(c) for c in rng.permutation(game.num_suits * game.num_ranks)]
    k = game.num_hole_cards
    hole = [deck[p * k : (p + 1) * k] for p in range(game.num_players)]
    start = game.num_players * k
    return deal(game, hole, deck[start : start + sum(game.num_board_cards)])


def raise_bounds(state: HandState) -> tuple[int, int] | None:
    """The least and the most a raise may raise *to* (limit: the one size), or None when
    no raise is allowed: the round's cap is reached, nobody is left to call it, or the
    player cannot put in more than the bet."""
    seat = state.current
    if seat < 0:
        return None
    game = state.game
    if state.round_raises >= game.max_raises[state.round] or \
            _acting(state.folded, state.spent, state.stack) <= 1:
        return None
    stack = state.stack[seat]
    if state.max_spent >= stack:
        return None
    if game.is_limit:
        to = min(state.max_spent + game.raise_size[state.round], stack)
        return to, to
    return min(state.min_raise_to, stack), stack


def legal_actions(state: HandState) -> tuple[int, ...]:
    """Fold only when owing chips (the dealer refuses a free fold); call; raise when
    ``raise_bounds`` allows one."""
    if state.finished:
        return ()
    actions = [CALL]
    if state.spent[state.current] < state.max_spent:
        actions.insert(0, FOLD)
    if raise_bounds(state) is not None:
        actions.append(RAISE)
    return tuple(actions)


def legal_mask(state: HandState) -> tuple[bool, bool, bool]:
    legal = legal_actions(state)
    return (FOLD in legal, CALL in legal, RAISE in legal)


def step(state: HandState, action: int, size: int = 0) -> HandState:
    """The state after the seat to act plays ``action`` (FOLD, CALL or RAISE); a no-limit
    raise names ``size``, the total it raises to."""
    (game, hole, board, round_, spent, max_spent, folded, history, raises, round_raises,
     called, seat, min_raise_to, aggressor, stack, round_pots) = state
    if seat < 0:
        raise IllegalAction("the hand is over")
    if action == FOLD:
        if spent[seat] >= max_spent:
            raise IllegalAction(f"seat {seat} cannot fold: nothing to call")
        folded = (*folded[:seat], True, *folded[seat + 1:])
        token = "f"
    elif action == CALL:
        spent = (*spent[:seat], min(max_spent, stack[seat]), *spent[seat + 1:])
        called += spent[seat] < stack[seat]
        token = "c"
    elif action == RAISE:
        bounds = raise_bounds(state)
        if bounds is None:
            why = (f"{round_raises} raises already, the cap in round {round_ + 1}"
                   if round_raises >= game.max_raises[round_] else
                   "nobody is left to call a raise" if state.acting() <= 1 else
                   f"its stack of {stack[seat]} does not cover more than the bet")
            raise IllegalAction(f"seat {seat} cannot raise: {why}")
        low, high = bounds
        if game.is_limit:
            to, token = low, "r"
        else:
            if not low <= size <= high:
                raise IllegalAction(f"seat {seat} cannot raise to {size}: a raise goes to "
                                    f"between {low} and {high} here")
            to, token = size, f"r{size}"
            min_raise_to = max(min_raise_to, 2 * to - max_spent)
        max_spent = to
        spent = (*spent[:seat], to, *spent[seat + 1:])
        raises = (*raises[:seat], raises[seat] + 1, *raises[seat + 1:])
        round_raises += 1
        called = 1 if to < stack[seat] else 0
        aggressor = seat
    else:
        raise IllegalAction(f"seat {seat}: {action!r} is not an action (0 fold, 1 call, 2 raise)")
    history = (*history[:-1], history[-1] + token)
    # who acts next, worked out before the one state is built
    if sum(folded) + 1 >= game.num_players:
        current = -1
    else:
        acting = _acting(folded, spent, stack)
        if called < acting:
            current = _next_seat(folded, spent, stack, seat)
        elif acting <= 1:
            # nobody left to bet against: the board runs out to the showdown
            last = game.num_rounds - 1
            pot = sum(spent) + dead_chips(game)
            history = (*history, *[""] * (last - round_))
            round_pots = (*round_pots, *[pot] * (last - round_))
            round_, current = last, -1
        elif round_ + 1 >= game.num_rounds:
            current = -1
        else:
            min_raise_to = 0 if game.is_limit else max(1, *game.blind) + max_spent
            round_pots = (*round_pots, sum(spent) + dead_chips(game))
            history = (*history, "")
            round_, round_raises, called = round_ + 1, 0, 0
            current = _first_seat(game.first_player[round_], folded, spent, stack)
    return _new_state(HandState, (game, hole, board, round_, spent, max_spent, folded, history,
                                  raises, round_raises, called, current, min_raise_to,
                                  aggressor, stack, round_pots))


def is_terminal(state: HandState) -> bool:
    return state.finished


def showdown_seats(state: HandState) -> tuple[int, ...]:
    """Seats whose cards decide the pot; empty when everybody else folded."""
    live = tuple(p for p in range(state.game.num_players) if not state.folded[p])
    return live if len(live) > 1 else ()


def payoffs(state: HandState, strengths: Sequence[int] | None = None) -> tuple[float, ...]:
    """Each seat's chips won or lost; ``strengths`` (higher wins) are needed at a showdown.

    The pot is cut in layers by what the seats put in (side pots): each layer goes to
    the strongest live hands among the seats that paid into it, split evenly on a tie,
    as the ACPC dealer's ``valueOfState`` does (hence fractional payoffs). Chips nobody
    live matched go back to whoever put them in. Antes count with the bets when trimmed
    (`GameDef.ante_trimming`); otherwise they are one dead pot for the seats still in,
    as pokerkit pays them.
    """
    if not state.finished:
        raise ValueError("the hand is not over")
    game = state.game
    n = game.num_players
    antes = game.posted_antes()
    paid = tuple(s + a for s, a in zip(state.spent, antes, strict=True))
    live = [p for p in range(n) if not state.folded[p]]
    if len(live) == 1:
        winner = live[0]
        pot = sum(paid)
        return tuple(float(pot - paid[p] if p == winner else -paid[p]) for p in range(n))
    if strengths is None:
        raise ValueError("a showdown needs the players' hand strengths")
    if n == 2 and paid[0] == paid[1] and not any(antes) and not any(state.folded):
        # heads-up, both in for as much: one pot to the stronger, split on a tie (the
        # layers below would do the same sums)
        both = float(paid[0] + paid[1])
        a, b = strengths[0], strengths[1]
        won2 = (both / 2, both / 2) if a == b else (both, 0.0) if a > b else (0.0, both)
        return (won2[0] - paid[0], won2[1] - paid[1])
    return _layered(state, strengths, paid, antes)


def _layered(state: HandState, strengths: Sequence[int], paid: tuple[int, ...],
             antes: tuple[int, ...]) -> tuple[float, ...]:
    """`payoffs` of a showdown, the pot cut in layers by what the seats put in."""
    game = state.game
    n = game.num_players
    live = [p for p in range(n) if not state.folded[p]]
    won = [0.0] * n

    def share(amount: float, eligible: Sequence[int]) -> None:
        best = max(strengths[p] if not state.folded[p] else -1 for p in eligible)
        winners = [p for p in eligible if (strengths[p] if not state.folded[p] else -1) == best]
        for p in winners:
            won[p] += amount / len(winners)

    layered = paid if game.ante_trimming else state.spent
    if not game.ante_trimming and any(antes):
        share(float(sum(antes)), live)
    floor = 0
    for level in sorted(set(layered)):
        if level <= floor:
            continue
        payers = [p for p in range(n) if layered[p] >= level]
        share(float((level - floor) * len(payers)),
              [p for p in payers if not state.folded[p]] or payers)
        floor = level
    return tuple(won[p] - paid[p] for p in range(n))


def returns(state: HandState) -> tuple[float, ...]:
    """Payoffs of a finished hand, evaluating the showdown if there is one."""
    seats = showdown_seats(state)
    if not seats:
        return payoffs(state)
    board = state.board[: sum(state.game.num_board_cards)]
    strengths = [evaluate((*h, *board)) if h else -1 for h in state.hole]
    return payoffs(state, strengths)


def returns_many(states: Sequence[HandState]) -> NDArray[np.float64]:
    """`returns` of many finished hands with as many seats, one row each (n, seats),
    the showdowns evaluated in one batch. The same numbers and the same errors as
    `returns` one hand at a time, which a batch falls back to where its hands are not
    all of one game with every card known, distinct and in the deck."""
    if not states:
        return np.zeros((0, 0))
    game = states[0].game
    n, k, shown = game.num_players, game.num_hole_cards, sum(game.num_board_cards)
    width = n * k + shown
    rows = [[c for h in s.hole for c in h] + list(s.board[:shown]) for s in states]
    even = 5 <= k + shown <= 7 and not any(
        s.game is not game or len(row) != width or any(len(h) != k for h in s.hole)
        for s, row in zip(states, rows, strict=True))
    cards = np.array(rows, dtype=np.int64) if even else np.zeros((0, 0), dtype=np.int64)
    ordered = np.sort(cards, axis=1)
    if not even or ordered[:, 0].min() < 0 or ordered[:, -1].max() > 51 or \
            (np.diff(ordered, axis=1) == 0).any():
        return np.array([returns(s) for s in states], dtype=np.float64)
    board = cards[:, n * k:]
    strengths = np.stack([evaluate_many(np.concatenate([cards[:, p * k:(p + 1) * k], board],
                                                       axis=1)) for p in range(n)], axis=1)
    return np.array([payoffs(s, row) if showdown_seats(s) else payoffs(s)
                     for s, row in zip(states, strengths.tolist(), strict=True)],
                    dtype=np.float64).reshape(len(states), n)


def _first_seat(first: int, folded: tuple[bool, ...], spent: tuple[int, ...],
                stack: tuple[int, ...]) -> int:
    """``first``, or the next seat after it that can act (neither folded nor all-in)."""
    if not folded[first] and spent[first] < stack[first]:
        return first
    return _next_seat(folded, spent, stack, first)


# a HandState from its 16 fields in order, without the named constructor's frame (step
# makes millions in a search's rollouts)
_new_state = tuple.__new__


def _next_seat(folded: tuple[bool, ...], spent: tuple[int, ...], stack: tuple[int, ...],
               seat: int) -> int:
    """The seat after ``seat`` that can act (neither folded nor all-in)."""
    n = len(folded)
    nxt = (seat + 1) % n
    while folded[nxt] or spent[nxt] >= stack[nxt]:
        nxt = (nxt + 1) % n
    return nxt


def _acting(folded: tuple[bool, ...], spent: tuple[int, ...], stack: tuple[int, ...]) -> int:
    """How many seats can still act: neither folded nor all-in."""
    if len(folded) == 2:  # heads-up, without a loop
        return (not folded[0] and spent[0] < stack[0]) + (not folded[1] and spent[1] < stack[1])
    count = 0
    for f, s, k in zip(folded, spent, stack, strict=False):  # one per seat (strict: 2x the cost)
        if not f and s < k:
            count += 1
    return count
