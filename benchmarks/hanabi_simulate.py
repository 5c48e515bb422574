"""Two-player Hanabi simulation with the knowledge features, on one core: batched
``simulate.play`` against one game at a time with ``encode`` per state as the
baseline, measured in the same run.

    python benchmarks/hanabi_simulate.py [--games 4000] [--baseline-games 400]
                                         [--batch 512] [--repeat 3] [--core 0] [--quick]

The issue's target: simulation with the knowledge features at >= 20,000 moves/s
on one core. Every row plays random legal moves and counts moves (one per
state before it, the game-ending move included):

* ``rules only``: one game at a time, ``rules.legal_actions`` and
  ``rules.step``, no features: the engine's ceiling;
* ``encode per state (baseline)``: the same loop, ``knowledge.encode(state,
  state.current)`` on every state before its move;
* ``simulate.play, batch B``: ``--games`` games advanced in lockstep ``--batch``
  at a time, each step's states encoded at once by ``knowledge.encode_many``.

Random play burns its three fuses fast (about 13 moves a game), so the deals
(``rules.new_game``) are part of every figure. Each row is run ``--repeat``
times, interleaved, and the median reported, with every run's rate so noise
shows. The process is pinned to core ``--core`` (where the OS allows) and
numpy's thread pools are held to one thread (set before numpy is imported).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import _args  # noqa: E402  (benchmarks/, the script's own folder)
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from batchrl.games.hanabi.knowledge import encode  # noqa: E402
from batchrl.games.hanabi.rules import legal_actions, new_game, step  # noqa: E402
from batchrl.games.hanabi.simulate import play  # noqa: E402

TARGET = 20_000  # moves/s on one core, the target
DEFAULTS = {"games": 4_000, "baseline_games": 400, "batch": 512, "repeat": 3}
QUICK = {"games": 400, "baseline_games": 40, "batch": 128, "repeat": 1}


def one_at_a_time(games: int, features: bool) -> tuple[int, float]:
    """(moves, seconds) of ``games`` random games played one after another."""
    rng = np.random.default_rng(0)
    moves = 0
    started = time.perf_counter()
    for _ in range(games):
        s = new_game(rng, 2)
        while not s.over:
            if features:
                encode(s, s.current)
            legal = legal_actions(s)
            s = step(s, legal[int(rng.integers(len(legal)))])
            moves += 1
    return moves, time.perf_counter() - started


def batched(games: int, batch: int) -> tuple[int, float]:
    started = time.perf_counter()
    episodes = play(games, np.random.default_rng(0), batch=batch)
    return len(episodes), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int,
                        help=f"games of the batched and rules-only rows ({DEFAULTS['games']:,})")
    parser.add_argument("--baseline-games", type=int,
                        help=f"games of the encode-per-state baseline "
                             f"({DEFAULTS['baseline_games']:,})")
    parser.add_argument("--batch", type=int, help=f"games in lockstep ({DEFAULTS['batch']})")
    parser.add_argument("--repeat", type=int, help=f"runs, median reported ({DEFAULTS['repeat']})")
    parser.add_argument("--core", type=int, default=0, help="the core to pin to (0)")
    args = _args.parse(parser, DEFAULTS, QUICK)

    print(_args.pin(args.core))

    rows: list[tuple[str, int, Callable[[], tuple[int, float]]]] = [
        ("rules only", args.games, lambda: one_at_a_time(args.games, features=False)),
        ("encode per state (baseline)", args.baseline_games,
         lambda: one_at_a_time(args.baseline_games, features=True)),
        (f"simulate.play, batch {args.batch}", args.games,
         lambda: batched(args.games, args.batch)),
    ]
    batched(min(args.games, 2 * args.batch), args.batch)  # warm-up: imports, caches
    one_at_a_time(10, features=True)
    runs: dict[str, list[tuple[int, float]]] = {name: [] for name, _, _ in rows}
    for _ in range(args.repeat):  # interleaved, so a busy spell hits every row alike
        for name, _, run in rows:
            runs[name].append(run())
    rate = {name: statistics.median(m / s for m, s in runs[name]) for name in runs}
    base = rate[rows[1][0]]
    rules = rate[rows[0][0]]

    print(f"runs: {args.repeat}, the median reported; random legal moves, deal seed 0\n")
    print(f"{'run':<32}{'games':>7}{'moves':>9}{'moves/s':>10}{'x baseline':>12}"
          f"{'x rules':>9}")
    for name, games, _ in rows:
        r = rate[name]
        print(f"{name:<32}{games:>7,}{runs[name][0][0]:>9,}{r:>10,.0f}{r / base:>12.2f}"
              f"{r / rules:>9.2f}")
    if args.repeat > 1:
        print()
        for name, _, _ in rows:
            each = ", ".join(f"{m / s:,.0f}" for m, s in runs[name])
            print(f"  {name + ':':<32}{each} moves/s")
    r = rate[rows[2][0]]
    met = "met" if r >= TARGET else "NOT met"
    print(f"\nbatched with features: {r:,.0f} moves/s, {r / base:.1f}x the baseline, "
          f"{r / rules:.2f} of the rules-only rate")
    print(f"target >= {TARGET:,} moves/s with the knowledge features on one core: {met}")


if __name__ == "__main__":
    main()
