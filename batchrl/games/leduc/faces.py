"""Leduc hold'em's faces beside its rules core: its logs into store rows (`LeducLog`) and
its players, logs written and exact scores (`LeducPlay`).

Every score here is exact: two fixed policies' expected returns come from walking the
game tree, not from playing hands, and the benchmark's reference is the exact best
response to the opponents (``best-response``), so a learned policy's score is a share of
the most that can be won against them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games.base import (
    GameError,
    Interval,
    LogFace,
    PlayFace,
    Scores,
    SourceContext,
    SourcePlan,
    single_group,
)
from batchrl.games.leduc import rules
from batchrl.games.leduc.exact import best_response, expected_returns, nash_conv, strategy
from batchrl.games.leduc.game import FEATURES, LeducHand
from batchrl.games.leduc.logs import write_log
from batchrl.games.leduc.rules import ACTION_NAMES, LeducState, cards_text
from batchrl.games.play import RandomPlayer, Trajectory, make_player, trajectory_rows
from batchrl.policy import ModelError
from batchrl.store import RowsBatch, StoreSchema

BEST_RESPONSE = "best-response"


class RuleBot:
    """Raise a king or a pair, call a queen or a card above the public one, fold the rest
    when a raise is owed (else check)."""

    name = "rule"

    def act(self, states: Sequence[LeducState], seats: Sequence[int]) -> NDArray[np.int64]:
        return np.fromiter((self._one(s, p) for s, p in zip(states, seats, strict=True)),
                           np.int64, count=len(states))

    @staticmethod
    def _one(state: LeducState, seat: int) -> int:
        legal = rules.legal_actions(state)
        own, public = state.cards[seat] // 2, rules.public_card(state)
        strong = own == 2 if public is None else own == public // 2
        fair = own >= 1 if public is None else own > public // 2
        if strong and rules.RAISE in legal:
            return rules.RAISE
        if strong or fair or rules.FOLD not in legal:
            return rules.CALL
        return rules.FOLD


class LeducLog(LogFace):
    """Leduc logs (``parsers/leduc.py``) into rows, one per decision."""

    def reward_unit(self, params: Any) -> str:
        return "chips (the ante is 1, a raise 2 in the first round and 4 in the second)"

    def schema(self, params: Any) -> StoreSchema:
        # every feature a small whole number (chips at most 13); a row's next state is its
        # seat's next decision
        return StoreSchema(self.rules.name, FEATURES, ACTION_NAMES, audit_columns=("cards", "name"),
                           state_dtype="int8", next_state="following", legal=True)

    def open_source(self, records: Iterator[Any], context: SourceContext) -> SourcePlan:
        params = self.rules.params()

        def rows(chunk: list[LeducHand]) -> RowsBatch:
            made = trajectory_rows(
                self.game, params, [Trajectory(h.states, h.actions) for h in chunk],
                context.prefix, [h.index for h in chunk], [h.line for h in chunk],
                {"cards": [cards_text(h.states[-1]) for h in chunk]},
                {"name": [h.names for h in chunk]})
            return RowsBatch(made, len(chunk))

        return SourcePlan(self.schema(params), records, rows, unit=self.rules.unit)



class LeducPlay(PlayFace):
    """Leduc's players and exact scores: no hand is played to score a player."""

    bots = ("random", "rule")  # and, measured first in evaluate, best-response
    default_players = ("random", "random")
    default_count = 20_000
    log_formats = ("leduc",)
    ablation_opponents = ("random",)

    def bot(self, name: str, params: Any, rng: np.random.Generator) -> Any:
        if name == "rule":
            return RuleBot()
        if name == "random":
            return RandomPlayer(self.game, rng)
        raise GameError(f"leduc has no bot {name!r}: {', '.join(self.bots)}")

    def generate(self, out: Path, players: Sequence[str], count: int, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None) -> str:
        written = write_log(self.game, out, tuple(players), count, seed, progress)
        return f"{written:,} hands written to {out}"

    def strategy(self, spec: str, seat: int, params: Any = None) -> Any:
        """The exact strategy (`batchrl.games.leduc.exact.Strategy`) of the player
        ``spec`` in ``seat``."""
        if spec == "random":
            return strategy("random", seat)
        if spec == BEST_RESPONSE:
            raise GameError(f"{BEST_RESPONSE} answers given opponents: it is measured first "
                            "(batchrl evaluate --game leduc --players best-response,OTHER), "
                            "it plays no hands")
        try:
            player = make_player(self.game, spec, params or self.rules.params(),
                                 np.random.default_rng(0))
            return strategy(player.act, seat)
        except (ModelError, ValueError) as exc:
            raise GameError(str(exc)) from None

    def exact(self, players: Sequence[str], params: Any = None) -> tuple[float, float]:
        """The first player's exact expected chips per hand against the second, from
        seat 0 and from seat 1 (``best-response``: the best response's)."""
        if len(players) != 2:
            raise GameError(f"leduc is played by two: give two players, not {len(players)}")
        first, other = players
        if other == BEST_RESPONSE:
            raise GameError(f"{BEST_RESPONSE} is measured, first: it answers the others")
        theirs = self.strategy(other, 1, params), self.strategy(other, 0, params)
        if first == BEST_RESPONSE:
            return best_response(0, theirs[0])[0], best_response(1, theirs[1])[0]
        mine = self.strategy(first, 0, params), self.strategy(first, 1, params)
        return (expected_returns(mine[0], theirs[0]),
                -expected_returns(theirs[1], mine[1]))

    def score(self, players: Sequence[str], count: int, seed: int,
              options: Mapping[str, Any],
              progress: Callable[[int], None] | None = None, params: Any = None) -> Scores:
        """The first player's exact expected chips per hand from each seat against the
        second (one unit: the hand from both seats)."""
        seats = self.exact(players, params)
        return Scores(np.asarray(seats, dtype=np.float64), "chips_per_hand",
                      "chips per hand", per_unit=2, exact=True)

    def return_of_score(self, params: Any) -> tuple[float, float]:
        return 1.0, 0.0  # chips per hand, as the rows' rewards

    def score_count(self, count: int, params: Any) -> str | None:
        return None  # exact: no hand is played

    def exploitability(self, player: str, params: Any = None) -> float:
        """Half the player's NashConv: what a best response wins from it per hand, on
        average over the two seats (0 at an equilibrium)."""
        return nash_conv((self.strategy(player, 0, params),
                          self.strategy(player, 1, params))) / 2

    def evaluate(self, groups: Sequence[Sequence[str]], count: int | None, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None, tasks: Any = None) -> Any:
        group = single_group(self.game, groups)
        seats = self.exact(group)
        best = self.exact((BEST_RESPONSE, group[1]))
        own = None
        if group[0] != BEST_RESPONSE:
            own = self.exploitability(group[0])
        return ExactReport(tuple(group), seats, best, own)


@dataclass(frozen=True)
class ExactReport:
    """What ``batchrl evaluate --game leduc`` prints: exact, no hands played."""

    players: tuple[str, ...]
    seats: tuple[float, float]
    best: tuple[float, float]
    exploitability: float | None

    def table(self) -> str:
        mean, best = sum(self.seats) / 2, sum(self.best) / 2
        share = f"{mean / best:.1%}" if best > 0 else "n/a"
        lines = [f"players          {', '.join(self.players)} (the first is measured; exact, "
                 "no hands played)",
                 f"chips per hand   {mean:+.4f}  (seat 0 {self.seats[0]:+.4f}, seat 1 "
                 f"{self.seats[1]:+.4f})",
                 f"best response    {best:+.4f}  to {self.players[1]}: the player takes "
                 f"{share} of it"]
        if self.exploitability is not None:
            lines.append(f"exploitability   {self.exploitability:.4f} chips per hand (what "
                         "a best response to the player wins, on average over seats)")
        return "\n".join(lines)

    def intervals(self) -> tuple[str, list[Interval]]:
        mean, best = sum(self.seats) / 2, sum(self.best) / 2  # exact: no interval
        return (f"chips per hand against {self.players[1]} (exact)",
                [Interval(self.players[0], mean, mean, mean),
                 Interval("best response", best, best, best)])

    def as_dict(self) -> dict[str, Any]:
        return {"players": list(self.players), "chips_per_hand": sum(self.seats) / 2,
                "by_seat": list(self.seats), "best_response": sum(self.best) / 2,
                "best_response_by_seat": list(self.best),
                "exploitability": self.exploitability}
