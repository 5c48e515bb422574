"""Kuhn poker: a toy game defined in the tests only, to show (and test) that a game is one
package plus one parser module, registered through the public API and nothing else.

Three cards (J < Q < K), one each, an ante of 1. Player 0 passes or bets 1; facing a
pass, player 1 passes (showdown for 1) or bets; facing a bet, a player folds (pass) or
calls (bet), a call going to a showdown for 2. ``kuhn.parser`` reads its logs: one hand a
line, the two cards then the moves, ``KJ pbb``.

>>> rules = KuhnRules()
>>> s = rules.step(rules.step(rules.step(KuhnState((2, 0)), PASS), BET), BET)
>>> rules.is_terminal(s), rules.returns(s), rules.encode(s, 1, rules.params()).tolist()
(True, (2.0, -2.0), [0.0, 0.0])
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games import (
    CliFace,
    Game,
    LearnFace,
    LogFace,
    PlayFace,
    Rules,
    SourceContext,
    SourcePlan,
    single_group,
)
from batchrl.games.play import (
    Trajectory,
    evaluate_seats,
    make_player,
    play,
    seat_scores,
    trajectory_rows,
)
from batchrl.store import RowsBatch, StoreSchema

CARDS = "JQK"
PASS, BET = 0, 1
HISTORIES = ("", "p", "b", "pb")  # the ones a player acts after
ENDS = ("pp", "bp", "bb", "pbp", "pbb")


@dataclass(frozen=True)
class KuhnParams:
    """Kuhn poker has no options; a game's params are a frozen dataclass all the same."""


@dataclass(frozen=True)
class KuhnState:
    cards: tuple[int, int]  # each player's card, 0 J .. 2 K
    history: str = ""  # "p" pass, "b" bet, in order


@dataclass(frozen=True)
class KuhnHand:
    """A hand as a log gives it (what ``kuhn.parser`` reads)."""

    source: str
    line: int
    index: int
    game: Trajectory


class KuhnRules(Rules):
    """The rules of Kuhn poker, as pure functions over a `KuhnState`."""

    name = "kuhn"
    unit = "hands"
    Params = KuhnParams

    def action_names(self, params: Any) -> tuple[str, ...]:
        return ("pass", "bet")

    def feature_names(self, params: Any) -> tuple[str, ...]:
        return ("card", "history")

    def new_game(self, rng: np.random.Generator, params: Any) -> KuhnState:
        first, second = rng.permutation(3)[:2].tolist()
        return KuhnState((first, second))

    def current_player(self, state: KuhnState) -> int:
        return -1 if self.is_terminal(state) else len(state.history) % 2

    def legal_actions(self, state: KuhnState) -> tuple[int, ...]:
        return () if self.is_terminal(state) else (PASS, BET)

    def step(self, state: KuhnState, action: int) -> KuhnState:
        if self.is_terminal(state) or action not in (PASS, BET):
            raise ValueError(f"{action!r} is not a move after {state.history!r}")
        return KuhnState(state.cards, state.history + "pb"[action])

    def is_terminal(self, state: KuhnState) -> bool:
        return state.history in ENDS

    def returns(self, state: KuhnState) -> tuple[float, float]:
        h = state.history
        if h in ("bp", "pbp"):  # a fold: the bettor takes the ante
            winner, amount = (0 if h == "bp" else 1), 1.0
        else:
            winner, amount = int(state.cards[1] > state.cards[0]), 2.0 if "b" in h else 1.0
        return (amount, -amount) if winner == 0 else (-amount, amount)

    def encode(self, state: KuhnState, player: int, params: Any) -> NDArray[np.float32]:
        seen = HISTORIES.index(state.history) if state.history in HISTORIES else 0
        return np.asarray([state.cards[player], seen], dtype=np.float32)


class KuhnLog(LogFace):
    """Kuhn logs into rows, one per decision (`trajectory_rows`)."""

    def schema(self, params: Any) -> StoreSchema:
        rules = self.rules
        return StoreSchema(rules.name, rules.feature_names(params), rules.action_names(params),
                           audit_columns=("cards",), legal=True)  # trajectory_rows gives them

    def open_source(self, records: Iterator[Any], context: SourceContext) -> SourcePlan:
        params = self.rules.params()

        def rows(chunk: list[KuhnHand]) -> RowsBatch:
            made = trajectory_rows(self.game, params, [h.game for h in chunk], context.prefix,
                                   [h.index for h in chunk], [h.line for h in chunk],
                                   {"cards": [cards_text(h.game.states[0]) for h in chunk]})
            return RowsBatch(made, len(chunk))

        return SourcePlan(self.schema(params), records, rows, unit=self.rules.unit)


class KuhnPlay(PlayFace):
    """Random and model players; logs written; the seats rotated in evaluation."""

    default_count = 2000
    log_formats = ("kuhn",)

    def generate(self, out: Path, players: Sequence[str], count: int, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None) -> str:
        params = self.rules.params()
        rngs = np.random.SeedSequence(seed).spawn(3)
        chosen = [make_player(self.game, p, params, np.random.default_rng(r))
                  for p, r in zip(players, rngs[1:], strict=True)]
        games = play(self.game, params, chosen, count, np.random.default_rng(rngs[0]),
                     progress=progress)
        out.write_text("".join(f"{cards_text(g.states[0])} {g.states[-1].history}\n"
                               for g in games))
        return f"{count:,} hands written to {out}"

    def evaluate(self, groups: Sequence[Sequence[str]], count: int | None, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None, tasks: Any = None) -> Any:
        return evaluate_seats(self.game, self.rules.params(), single_group(self.game, groups),
                              count or self.default_count, seed, progress=progress, tasks=tasks)

    def score(self, players: Sequence[str], count: int, seed: int, options: Mapping[str, Any],
              progress: Callable[[int], None] | None = None, params: Any = None) -> Any:
        return seat_scores(self.game, self.rules.params(), players, count, seed, progress)


def cards_text(state: KuhnState) -> str:
    return "".join(CARDS[c] for c in state.cards)


RULES = KuhnRules()
GAME = Game(RULES, log=KuhnLog(RULES), play=KuhnPlay(RULES),
            learn=LearnFace(RULES, {"fqi": {"trees": 20, "nmin": 4, "iters": 4}}),
            cli=CliFace(title="Kuhn poker"))
