"""President evaluated: players take every seat in turn on the same deals, and each one's
first-place rate, mean placement and top-half rate come with 95% intervals.

Every deal is played once per seat rotation (n games for n players), so each player
holds each hand once; the unit of the intervals is the deal (its n games averaged),
which keeps them honest about the games sharing cards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from batchrl.blocks import after, block_rngs
from batchrl.evaluation import Estimate, mean_ci
from batchrl.games.base import Interval
from batchrl.games.play import make_player, play
from batchrl.games.president.rules import game_orders, placements

if TYPE_CHECKING:
    from batchrl.games.base import Game


@dataclass(frozen=True)
class PlayerResult:
    name: str
    first: Estimate  # first-place rate
    placement: Estimate  # mean placement, 1 the president
    top_half: Estimate  # placed in the better half (first n // 2 places)
    places: NDArray[np.float64]  # share of games at each place

    def as_dict(self) -> dict[str, Any]:
        return {"player": self.name, "first_place_rate": self.first.mean,
                "first_place_ci": [self.first.low, self.first.high],
                "mean_placement": self.placement.mean,
                "mean_placement_ci": [self.placement.low, self.placement.high],
                "top_half_rate": self.top_half.mean,
                "top_half_ci": [self.top_half.low, self.top_half.high],
                "places": self.places.tolist()}


@dataclass(frozen=True)
class PlacementReport:
    players: tuple[str, ...]
    games: int
    seed: int
    pass_locks: bool
    results: list[PlayerResult]
    match: int = 1

    def table(self) -> str:
        n = len(self.players)
        lines = [f"president, {n} players, {self.games:,} games, seed {self.seed} (each deal "
                 f"played {n} times, the players taking every seat)",
                 "" if not self.pass_locks else "a pass is final for the round (--pass-locks)",
                 "" if self.match == 1 else f"matches of {self.match} games, the servant and "
                 "the president exchanging cards between games; every game counted",
                 f"{'player':<28} {'first place':>11} {'95% CI':>17} {'placement':>9} "
                 f"{'95% CI':>15} {'top half':>8} {'95% CI':>17}"]
        for r in self.results:
            f, p, t = r.first, r.placement, r.top_half
            name = f"model:{Path(r.name[6:]).name}" if r.name.startswith("model:") else r.name
            lines.append(f"{name:<28} {f.mean:>10.2%} [{f.low:>6.2%}, {f.high:>6.2%}] "
                         f"{p.mean:>9.3f} [{p.low:>5.3f}, {p.high:>5.3f}] {t.mean:>7.2%} "
                         f"[{t.low:>6.2%}, {t.high:>6.2%}]")
        lines.append(f"(chance: first place {1 / n:.2%}, placement {(n + 1) / 2:.1f}, "
                     f"top half {(n // 2) / n:.2%})")
        return "\n".join(line for line in lines if line)

    def as_dict(self) -> dict[str, Any]:
        return {"game": "president", "players": list(self.players), "games": self.games,
                "seed": self.seed, "pass_locks": self.pass_locks, "match": self.match,
                "results": [r.as_dict() for r in self.results]}

    def intervals(self) -> tuple[str, list[Interval]]:
        return ("share of games in first place", [
            Interval(r.name, r.first.mean, r.first.low, r.first.high) for r in self.results])


def placement_report(names: Sequence[str], placements: NDArray[np.int64], seed: int,
                     pass_locks: bool = False, match: int = 1) -> PlacementReport:
    """The report of games where ``placements[i, j]`` is player j's place (0 first) in
    game i, consecutive runs of n games (n matches of ``match`` games) being one deal's
    rotations."""
    n = len(names)
    unit = n * match
    results = []
    for j, name in enumerate(names):
        place = placements[:, j].astype(np.float64)
        results.append(PlayerResult(
            name, mean_ci(place == 0, per_unit=unit), mean_ci(place + 1, per_unit=unit),
            mean_ci(place < n // 2, per_unit=unit),
            np.bincount(placements[:, j], minlength=n) / len(place)))
    return PlacementReport(tuple(names), len(placements), seed, pass_locks, results, match)


def rotation(n: int) -> Callable[[int], list[int]]:
    """Game i's seating (``seats[s]``: the player in seat s): player j in seat j + i mod n."""

    def seats(i: int) -> list[int]:
        return [(s - i) % n for s in range(n)]

    return seats


BLOCK = 10_000  # games a block (a task on a cluster) plays at least, in whole chunks
CHUNK = 1024  # rotations of the seats in a chunk (played in lockstep, dealt from one child)


def play_block(game: Game, params: Any, names: Sequence[str], seed: int, block: int,
               lo: int, hi: int, chunk: int,
               progress: Callable[[int], None] | None = None) -> NDArray[np.int64]:
    """Each player's place (rows: games ``lo`` to ``hi`` - 1 of ``seed``, each of a match's
    games), the players rotating seats game by game. Chunk k of ``chunk`` games is dealt
    from the k-th child of the seed's deals, wherever it is played; the players draw from
    the block's seed (`batchrl.blocks.block_entropy`), block 0's being the seed's."""
    n = len(names)
    deals = np.random.default_rng(after(np.random.SeedSequence(seed).spawn(1)[0], lo // chunk))
    players = [make_player(game, s, params, rng)  # chunk k: the k-th child of deals
               for s, rng in zip(names, block_rngs(seed, block, n), strict=False)]
    seats = rotation(n)
    placed = np.zeros(((hi - lo) * params.match, n), dtype=np.int64)
    for start in range(lo, hi, chunk):
        k = min(chunk, hi - start)
        for i, g in enumerate(play(game, params, players, k, deals.spawn(1)[0], seats,
                                   progress, repeat=n)):
            seat_of = np.argsort(seats(i))  # each player's seat
            for m, order in enumerate(game_orders(g.states[-1])):
                where = placements(g.states[-1], order)  # by seat
                placed[(start - lo + i) * params.match + m] = [where[s] for s in seat_of]
    return placed
