"""Replaying a logged hand through the rules, and checking its payoffs.

A logged hand is trusted only once every action was legal in turn, the rounds
break where the rules say, the board has the right number of cards, and the
payoffs the rules compute equal the logged ones. Anything else raises
``ReplayError`` saying what disagreed; the caller adds the file and line.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from batchrl.games.holdem.cards import cards_str
from batchrl.games.holdem.gamedef import GameDef
from batchrl.games.holdem.memo import ByBetting
from batchrl.games.holdem.rules import (
    CALL,
    FOLD,
    RAISE,
    HandState,
    IllegalAction,
    deal,
    payoffs,
    showdown_seats,
    step,
)
from batchrl.records import RejectedRecord, shown

# ACPC letters; the server also accepts b (bet) and k (check) and capitals.
_ACTIONS = {"f": FOLD, "c": CALL, "k": CALL, "r": RAISE, "b": RAISE}

# Payoffs are compared with a tolerance because logs print fractions in decimal.
PAYOFF_TOLERANCE = 1e-6


BETTING, CARDS, PAYOFFS = "illegal betting", "cards do not fit the game", "payoffs disagree"


class ReplayError(RejectedRecord):
    """A logged hand the rules do not accept; ``kind`` says which check refused it."""

    def __init__(self, message: str, kind: str = BETTING) -> None:
        super().__init__(message, kind)


@dataclass(frozen=True, slots=True)
class Replayed:
    """A hand replayed: the state before each action, and the final state."""

    decisions: tuple[tuple[HandState, int], ...]  # (state before, action), in order
    final: HandState
    showdown: tuple[int, ...]  # the seats whose cards decide the pot (`showdown_seats`)

    @property
    def needs_showdown(self) -> bool:
        return bool(self.showdown)


def replay(
    game: GameDef,
    betting: str,
    hole: Sequence[Sequence[int]],
    board: Sequence[Sequence[int]],
) -> Replayed:
    """Play ``betting`` (ACPC letters, rounds split by '/'), checking each step and the cards.
    A seat whose hole cards the log hides may act (its moves are public); at a showdown
    every seat's cards must be known, or the payoffs could not be checked.

    The returned states carry no cards: the betting alone decides every state
    the rules track, so ``replay_betting`` is memoized per betting string (real
    logs hold a few thousand distinct ones) and the cards are checked per hand.
    """
    check_deal(game, hole, board)
    replayed = replay_betting(game, betting)
    reached = replayed.final.round
    if len(board) != reached:
        raise ReplayError(f"the hand reached round {reached + 1} but the log shows "
                          f"{len(board)} groups of board cards, not {reached}", CARDS)
    if replayed.needs_showdown and any(not hole[p] for p in replayed.showdown):
        raise ReplayError("a showdown seat's hole cards are missing", CARDS)
    return replayed


def check_deal(game: GameDef, hole: Sequence[Sequence[int]], board: Sequence[Sequence[int]]
               ) -> None:
    """The log deals as many cards as the game does, none of them twice."""
    if len(hole) != game.num_players:
        raise ReplayError(f"{len(hole)} players in the log, {game.num_players} in {game.name}",
                          CARDS)
    for seat, cards in enumerate(hole):
        if cards and len(cards) != game.num_hole_cards:
            raise ReplayError(f"seat {seat} has {len(cards)} hole cards, "
                              f"{game.name} deals {game.num_hole_cards}", CARDS)
    if len(board) > game.num_rounds - 1:
        raise ReplayError(f"{len(board)} groups of board cards, {game.name} deals "
                          f"at most {game.num_rounds - 1}", CARDS)
    for r, cards in enumerate(board, 1):
        if len(cards) != game.num_board_cards[r]:
            raise ReplayError(f"round {r + 1} shows {len(cards)} board cards, "
                              f"{game.name} deals {game.num_board_cards[r]}", CARDS)
    dealt = [c for cards in (*hole, *board) for c in cards]
    if len(set(dealt)) != len(dealt):
        twice = next(c for c in dealt if dealt.count(c) > 1)
        raise ReplayError(f"card {cards_str((twice,))} is dealt twice", CARDS)


_TOKEN = re.compile(r"([fckbrFCKBR])(\d*)")
_ROUND = re.compile(r"(?:[fckbrFCKBR]\d*)*")
_ANY_CASE = {**_ACTIONS, **{letter.upper(): action for letter, action in _ACTIONS.items()}}


@functools.lru_cache(maxsize=1 << 16)
def tokens(betting: str, game: GameDef) -> tuple[tuple[tuple[int, int], ...], ...]:
    """``betting`` as (action, size) per round: ``r300`` is a raise to 300 in no-limit,
    ``r`` a raise of the round's size in limit; the letters' case and the server's ``b``
    (bet) and ``k`` (check) are accepted. Kept per betting string: the replay and the rows
    both read it."""
    rounds: list[tuple[tuple[int, int], ...]] = []
    for r, sequence in enumerate(betting.split("/")):
        moves: list[tuple[int, int]] = []
        if _ROUND.fullmatch(sequence):  # all actions: each (letter, digits) at once
            found, at = _TOKEN.findall(sequence), len(sequence)
        else:  # the actions up to where it goes wrong
            found, at = [], 0
            for match in _TOKEN.finditer(sequence):
                if match.start() != at:
                    break
                at = match.end()
                found.append(match.groups())
        for letter, digits in found:
            action = _ANY_CASE[letter]
            if action == RAISE:
                if game.is_limit and digits:
                    raise ReplayError(f"betting {shown(betting)}, round {r + 1}: "
                                      f"{letter + digits!r} names an amount, and {game.name} "
                                      f"is a limit game")
                if not game.is_limit and not digits:
                    raise ReplayError(f"betting {shown(betting)}, round {r + 1}: a no-limit raise "
                                      f"names the total it raises to ({letter.lower()}<chips>)")
                if len(digits) > 10:
                    raise ReplayError(f"betting {shown(betting)}, round {r + 1}: a raise to "
                                      f"{len(digits)} digits of chips")
            elif digits:
                raise ReplayError(f"betting {shown(betting)}, round {r + 1}: "
                                  f"{letter + digits!r}: only a raise names an amount")
            moves.append((action, int(digits) if digits else 0))
        if at != len(sequence):
            raise ReplayError(f"betting {shown(betting)}, round {r + 1}: {sequence[at:at + 12]!r} "
                              f"is not an action (f, c, r<chips> or r)")
        rounds.append(tuple(moves))
    return tuple(rounds)


# The states of a betting carry no cards, so a log's bettings that begin alike share their
# first states (`memo`): each (game, betting so far, action) is stepped once (DeepStack's
# 6,474 distinct bettings take 56,381 actions, from 18,357 distinct states).
_STEPS: ByBetting[HandState] = ByBetting(limit=1 << 17)


@functools.lru_cache(maxsize=1 << 16)
def replay_betting(game: GameDef, betting: str) -> Replayed:
    """The betting replayed from the blinds, every step through ``rules.step``."""
    rounds = tokens(betting, game)
    if len(rounds) > game.num_rounds:
        raise ReplayError(f"betting {shown(betting)} has {len(rounds)} rounds, "
                          f"{game.name} has {game.num_rounds}")
    state = _STEPS.get(game, ())
    if state is None:  # the first state: before any action
        state = _STEPS.put(game, (), deal(game, ((),) * game.num_players, ()))
    decisions: list[tuple[HandState, int]] = []
    for r, sequence in enumerate(rounds):
        if not sequence and not state.finished and state.round < r:
            raise ReplayError(f"betting {shown(betting)}: round {r + 1} starts while round "
                              f"{state.round + 1} is still open")
        for action, size in sequence:
            if state.finished:
                raise ReplayError(f"betting {shown(betting)} goes on after the hand ended in "
                                  f"round {state.round + 1}")
            if state.round != r:
                raise ReplayError(f"betting {shown(betting)}: round {r + 1} starts while round "
                                  f"{state.round + 1} is still open" if state.round < r else
                                  f"betting {shown(betting)}: round {r + 1} goes on after it "
                                  f"closed")
            decisions.append((state, action))
            key = (state.history, action, size)
            after = _STEPS.get(game, key)
            if after is None:
                try:
                    after = _STEPS.put(game, key, step(state, action, size))
                except IllegalAction as exc:
                    raise ReplayError(f"betting {shown(betting)}, round {r + 1}, action "
                                      f"{len(decisions)}: {exc}") from None
            state = after
    if not state.finished:
        raise ReplayError(f"betting {shown(betting)} stops before the hand is over")
    if len(rounds) != state.round + 1:
        raise ReplayError(f"betting {shown(betting)} has {len(rounds)} rounds but the hand "
                          f"ended in round {state.round + 1}")
    return Replayed(tuple(decisions), state, showdown_seats(state))


def check_payoffs(
    replayed: Replayed, logged: Sequence[float], strengths: Sequence[int] | None,
    computed: tuple[float, ...] | None = None,
) -> tuple[float, ...]:
    """The rules' payoffs (``computed``, where the caller has them), after checking that
    they equal the logged ones."""
    if computed is None:
        computed = payoffs(replayed.final, strengths)
    if any(abs(a - b) > PAYOFF_TOLERANCE for a, b in zip(computed, logged, strict=True)):
        raise ReplayError(f"logged payoffs {_fmt(logged)} but the rules give {_fmt(computed)} "
                          f"(pot {replayed.final.pot}, betting "
                          f"{replayed.final.betting!r})", PAYOFFS)
    return computed


def _fmt(values: Sequence[float]) -> str:
    return "|".join(f"{v:g}" for v in values)
