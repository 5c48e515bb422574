"""Tressette random play on one core: ``simulate.random_hands`` (numpy lockstep) against
the plain ``rules.step`` loop as the baseline, measured in the same run.

    python benchmarks/tressette_simulate.py [--hands 40000] [--baseline-hands 2000]
                                            [--batch 1024] [--repeat 3] [--core 0] [--quick]

The target: >= 5,000 simulated hands/s of random play on one core (a hand is 40
plays). Every row deals its hands and plays uniformly random legal cards to
the end, the points counted:

* ``rules.step loop (baseline)``: one hand at a time, ``rules.deal``,
  ``rules.legal_cards`` and ``rules.step``, a card drawn by ``rng.integers``;
* ``play_hands, RandomBot``: the same through ``simulate.play_hands``, which
  also records every deal and play into arrays;
* ``random_hands, batch B``: ``--hands`` hands, ``B`` at a time in lockstep
  (and a quarter of ``B``, to show the batch's effect).

Each row is run ``--repeat`` times, interleaved, and the median reported, with
every run's rate so noise shows. The process is pinned to core ``--core``
(where the OS allows) and numpy's thread pools are held to one thread (set
before numpy is imported).
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

from batchrl.games.tressette.bots import RandomBot  # noqa: E402
from batchrl.games.tressette.rules import (  # noqa: E402
    deal,
    is_terminal,
    legal_cards,
    step,
    team_points,
)
from batchrl.games.tressette.simulate import play_hands, random_hands  # noqa: E402

TARGET = 5_000  # hands/s of random play on one core
DEFAULTS = {"hands": 40_000, "baseline_hands": 2_000, "batch": 1024, "repeat": 3}
QUICK = {"hands": 4_000, "baseline_hands": 200, "batch": 512, "repeat": 1}


def step_loop(hands: int) -> tuple[int, float]:
    """(hands, seconds) of ``hands`` random hands through ``rules.step``, one at a time."""
    rng = np.random.default_rng(0)
    started = time.perf_counter()
    total = 0
    for i in range(hands):
        s = deal(rng, i % 4)
        while not is_terminal(s):
            legal = legal_cards(s)
            s = step(s, legal[int(rng.integers(len(legal)))])
        total += sum(team_points(s))
    assert total == 11 * hands
    return hands, time.perf_counter() - started


def recorded_loop(hands: int) -> tuple[int, float]:
    rng = np.random.default_rng(0)
    started = time.perf_counter()
    h = play_hands([RandomBot(rng)] * 4, hands, rng)
    return len(h), time.perf_counter() - started


def lockstep(hands: int, batch: int) -> tuple[int, float]:
    started = time.perf_counter()
    h = random_hands(hands, np.random.default_rng(0), batch=batch)
    elapsed = time.perf_counter() - started
    assert (h.points.sum(axis=1) == 11).all()
    return len(h), elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int,
                        help=f"hands of the lockstep rows ({DEFAULTS['hands']:,})")
    parser.add_argument("--baseline-hands", type=int,
                        help=f"hands of the one-at-a-time rows ({DEFAULTS['baseline_hands']:,})")
    parser.add_argument("--batch", type=int, help=f"hands in lockstep ({DEFAULTS['batch']})")
    parser.add_argument("--repeat", type=int, help=f"runs, median reported ({DEFAULTS['repeat']})")
    parser.add_argument("--core", type=int, default=0, help="the core to pin to (0)")
    args = _args.parse(parser, DEFAULTS, QUICK)

    print(_args.pin(args.core))

    small = max(1, args.batch // 4)
    rows: list[tuple[str, int, Callable[[], tuple[int, float]]]] = [
        ("rules.step loop (baseline)", args.baseline_hands,
         lambda: step_loop(args.baseline_hands)),
        ("play_hands, RandomBot", args.baseline_hands,
         lambda: recorded_loop(args.baseline_hands)),
        (f"random_hands, batch {small}", args.hands, lambda: lockstep(args.hands, small)),
        (f"random_hands, batch {args.batch}", args.hands,
         lambda: lockstep(args.hands, args.batch)),
    ]
    lockstep(min(args.hands, 2 * args.batch), args.batch)  # warm-up: imports, caches
    step_loop(10)
    runs: dict[str, list[tuple[int, float]]] = {name: [] for name, _, _ in rows}
    for _ in range(args.repeat):  # interleaved, so a busy spell hits every row alike
        for name, _, run in rows:
            runs[name].append(run())
    rate = {name: statistics.median(n / s for n, s in runs[name]) for name in runs}
    base = rate[rows[0][0]]

    print(f"runs: {args.repeat}, the median reported; uniformly random legal cards, "
          f"deal seed 0; 40 plays a hand\n")
    print(f"{'run':<30}{'hands':>8}{'hands/s':>10}{'plays/s':>12}{'x baseline':>12}")
    for name, hands, _ in rows:
        r = rate[name]
        print(f"{name:<30}{hands:>8,}{r:>10,.0f}{40 * r:>12,.0f}{r / base:>12.2f}")
    if args.repeat > 1:
        print()
        for name, _, _ in rows:
            each = ", ".join(f"{n / s:,.0f}" for n, s in runs[name])
            print(f"  {name + ':':<30}{each} hands/s")
    r = rate[rows[-1][0]]
    met = "met" if r >= TARGET else "NOT met"
    print(f"\nlockstep random play: {r:,.0f} hands/s, {r / base:.1f}x the rules.step loop")
    print(f"target >= {TARGET:,} hands/s of random play on one core: {met}")


if __name__ == "__main__":
    main()
