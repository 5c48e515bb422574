"""Pairs of Hanabi players in play: the report's Table 2 (mean, deviation, max, min).

Every pairing plays the same deals (one seed), seat 0 first, so two pairings are
compared on the same cards. Both score conventions are reported: cards played
(the report's, Eger et al.'s) and the research one (0 when the third fuse burns).

>>> r = evaluate_players(("simple", "simple"), games=20, seed=1)
>>> r.games, 0 <= r.played.mean.mean <= 25, r.research.mean.mean <= r.played.mean.mean
(20, True, True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.blocks import Task, Tasks, block_entropy, spans
from batchrl.evaluation import Estimate, mean_ci
from batchrl.games.base import Interval
from batchrl.games.hanabi.bots import (
    ConventionBot,
    draws_nothing,
    make_bot,
    play_game,
    play_lockstep,
)


@dataclass(frozen=True)
class Scores:
    mean: Estimate
    sd: float
    max: int
    min: int

    @classmethod
    def of(cls, values: NDArray[np.int64]) -> Scores:
        estimate = mean_ci(values.astype(np.float64))
        return cls(estimate, estimate.sd, int(values.max()), int(values.min()))


@dataclass(frozen=True)
class PairReport:
    players: tuple[str, ...]
    games: int
    seed: int
    played: Scores  # cards played
    research: Scores  # 0 after the third fuse
    lost_all_fuses: int
    scores: NDArray[np.int64]  # cards played per game

    def row(self) -> str:
        p, r = self.played, self.research
        names = [f"model:{Path(n.removeprefix('model:')).name}" if n.startswith("model:") else n
                 for n in self.players]
        return (f"{' + '.join(names):<40} {p.mean.mean:>6.2f} ±{p.mean.half_width:>5.2f} "
                f"{p.sd:>5.2f} {p.max:>4} {p.min:>4}   {r.mean.mean:>6.2f} {r.sd:>5.2f} "
                f"{self.lost_all_fuses:>6,}")

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"players": list(self.players), "games": self.games,
                               "seed": self.seed, "lost_all_fuses": self.lost_all_fuses}
        for name, s in (("played", self.played), ("research", self.research)):
            out[name] = {"mean": s.mean.mean, "low": s.mean.low, "high": s.mean.high,
                         "sd": s.sd, "max": s.max, "min": s.min}
        return out


HEADER = (f"{'players':<40} {'mean':>6} {'95% CI':>6} {'sd':>5} {'max':>4} {'min':>4}   "
          f"{'mean':>6} {'sd':>5} {'lost':>6}\n{'':<40} {'cards played':^32}   "
          f"{'research (0 on 3rd fuse)':^20}")


BLOCK = 1_000  # games a block (a task on a cluster) plays, dealt from its own seed


def evaluate_players(specs: Sequence[str], games: int, seed: int,
                     progress: Callable[[int], None] | None = None,
                     bots: Sequence[Any] | None = None,
                     tasks: Tasks | None = None) -> PairReport:
    """Play ``games`` two-player games of the players named by ``specs`` (see
    ``bots.make_bot``; ``bots`` given: use those objects, named by ``specs``), in blocks
    of ``BLOCK`` games (`play_block`) that ``tasks`` play [here]."""
    return evaluate_pairs([specs], games, seed, progress, bots, tasks)[0]


def evaluate_pairs(pairs: Sequence[Sequence[str]], games: int, seed: int,
                   progress: Callable[[int], None] | None = None,
                   bots: Sequence[Any] | None = None,
                   tasks: Tasks | None = None) -> list[PairReport]:
    """`evaluate_players` for each pair, on the same deals, every pair's blocks given to
    ``tasks`` at once (a cluster plays the pairs side by side)."""
    if any(not 2 <= len(specs) <= 5 for specs in pairs):
        raise ValueError(f"give 2 to 5 players a game (A,B or A,B,C...), not "
                         f"{[len(s) for s in pairs]}")
    if games < 2:
        raise ValueError("play at least 2 games: a deviation needs two")
    rng = np.random.default_rng(0)
    for specs in pairs if bots is None else ():  # first: a model of another player count
        for spec in specs:
            make_bot(spec, rng, len(specs))
    if bots is not None and tasks is not None and tasks.client is not None:
        raise ValueError("players given as objects are played here, not on a cluster")
    blocks = spans(games, BLOCK)
    parts = Tasks.of(tasks, progress).run(
        [Task(play_block, tuple(specs), seed, b, lo, hi, bots, size=hi - lo)
         for specs in pairs for b, lo, hi in blocks])
    out = []
    for k, specs in enumerate(pairs):
        played, research, burnt = np.concatenate(parts[k * len(blocks):(k + 1) * len(blocks)]).T
        out.append(PairReport(tuple(specs), games, seed, Scores.of(played),
                              Scores.of(research), int(burnt.sum()), played))
    return out


LOCKSTEP = 1024  # games played in lockstep where no player draws


def play_block(specs: Sequence[str], seed: int, block: int, lo: int, hi: int,
               bots: Sequence[Any] | None = None,
               progress: Callable[[int], None] | None = None) -> NDArray[np.int64]:
    """Games ``lo`` to ``hi`` - 1 of ``seed``: each game's cards played, research score
    and whether the third fuse burnt, a row each. The block deals from and the bots draw
    from its own seeds (`batchrl.blocks.block_entropy`); block 0's are the seed's."""
    rng = np.random.default_rng(block_entropy(seed, block))
    deals = np.random.default_rng(block_entropy([seed, 1], block))
    players: list[Any] = list(bots) if bots is not None else \
        [make_bot(s, rng, len(specs)) for s in specs]
    out = np.zeros((hi - lo, 3), dtype=np.int64)
    if all(draws_nothing(p) for p in players):  # the same games, in lockstep
        for start in range(0, hi - lo, LOCKSTEP):
            ends = play_lockstep(players, min(LOCKSTEP, hi - lo - start), deals)
            for g, state in enumerate(ends, start):
                out[g] = state.score_played, state.score_research, state.fuses == 0
            if progress is not None:
                progress(len(ends))
        return out
    for g in range(hi - lo):
        state = play_game(players, deals)[0][-1]
        out[g] = state.score_played, state.score_research, state.fuses == 0
        if progress is not None:
            progress(1)
    return out


@dataclass(frozen=True)
class PairsReport:
    """Several pairs on the same deals: the report's Table 2, a row per pair."""

    games: int
    seed: int
    pairs: list[PairReport]

    def table(self) -> str:
        return "\n".join([f"{self.games:,} games per pair, seed {self.seed} (the same deals "
                          "for every pair)", HEADER, *(p.row() for p in self.pairs)])

    def as_dict(self) -> dict[str, Any]:
        return {"games": self.games, "seed": self.seed,
                "pairs": [p.as_dict() for p in self.pairs]}

    def intervals(self) -> tuple[str, list[Interval]]:
        return ("cards played per game", [
            Interval(" + ".join(p.players), p.played.mean.mean, p.played.mean.low,
                     p.played.mean.high) for p in self.pairs])


@dataclass(frozen=True)
class RuleAgreement:
    """Per rule of the teacher (``ConventionBot.RULES``): the measured player's moves in
    states where the teacher would use it, how many the teacher would make too, and how
    many of them were misplays (a card that does not play)."""

    moves: dict[str, int]
    agree: dict[str, int]
    misplays: dict[str, int]
    games: int
    mean: float  # cards played
    lost_all_fuses: int

    def table(self) -> str:
        lines = [f"{'the teacher would':<28} {'moves':>7} {'agree':>6} {'misplays':>8}"]
        for rule in self.moves:
            lines.append(f"{rule:<28} {self.moves[rule]:>7,} "
                         f"{self.agree[rule] / self.moves[rule]:>6.3f} {self.misplays[rule]:>8,}")
        return "\n".join(lines)


def agreement(specs: Sequence[str], games: int, seed: int, measured: int = 0,
              bots: Sequence[Any] | None = None) -> RuleAgreement:
    """Play ``games`` games of ``specs`` (the deals of ``evaluate_players``' first block,
    then the same stream on) and at each move of seat ``measured`` ask the teacher
    (``bot2``, the convention bot) what it would play and by which rule: where a learner
    parts from its teacher, in the states the learner itself reaches.

    >>> r = agreement(("simple", "bot2"), games=5, seed=1)
    >>> 0 < sum(r.agree.values()) < sum(r.moves.values())
    True
    """
    teacher = ConventionBot()
    rng = np.random.default_rng(seed)
    deals = np.random.default_rng([seed, 1])
    players: list[Any] = list(bots) if bots is not None else \
        [make_bot(s, rng, len(specs)) for s in specs]
    moves = dict.fromkeys(ConventionBot.RULES, 0)
    agree, misplays = dict(moves), dict(moves)
    scores, burnt = [], 0
    for _ in range(games):
        states, actions = play_game(players, deals)
        for state, action, after in zip(states[:-1], actions, states[1:], strict=True):
            if state.current != measured:
                continue
            wanted, rule = teacher.decide(state)
            moves[rule] += 1
            agree[rule] += action == wanted
            misplays[rule] += after.fuses < state.fuses  # a card that did not play
        scores.append(states[-1].score_played)
        burnt += states[-1].fuses == 0
    used = [r for r in ConventionBot.RULES if moves[r]]
    return RuleAgreement({r: moves[r] for r in used}, {r: agree[r] for r in used},
                         {r: misplays[r] for r in used}, games, float(np.mean(scores)),
                         int(burnt))
