"""President on one core: random four-player games in numpy lockstep against the
``rules.step`` loop, and legal moves from rank counts against the seed's powerset
enumeration of the hand, each measured against its baseline in the same run.

    python benchmarks/president_simulate.py [--games 40000] [--baseline-games 2000]
                                            [--states 2000] [--repeat 3] [--core 0]
                                            [--quick]

The targets: >= 5,000 random four-player games/s on one core; legal moves >= 100x
faster than enumerating the powerset of the hand as the seed's ``possible_plays``
does (every subset of the hand, kept when it is one rank and beats the table).

* ``rules.step loop (baseline)``: one game at a time, ``rules.deal``,
  ``rules.legal_actions`` and ``rules.step``, a move drawn by ``rng.integers``;
* ``random_games, batch B``: ``simulate.random_games``, B games in lockstep (and a
  quarter of B).
* legal moves: the same states (taken from random games: 4 players, and 2 players,
  whose 20-card hands make the powerset 2^20) through ``rules.legal_actions`` (its
  cache of hands emptied before each run, so every state is a first sight) and
  through the powerset; both give the same moves (checked).

Rows are run ``--repeat`` times, interleaved, the median reported. The process is pinned
to core ``--core`` and numpy's thread pools held to one thread.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import itertools  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import _args  # noqa: E402  (benchmarks/, the script's own folder)
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from batchrl.games.president.rules import (  # noqa: E402
    N_SUITS,
    PASS,
    Rules,
    State,
    _legal,
    deal,
    legal_actions,
    play_action,
    step,
)
from batchrl.games.president.simulate import random_games  # noqa: E402

TARGET_GAMES, TARGET_LEGAL = 5_000, 100
DEFAULTS = {"games": 40_000, "baseline_games": 2_000, "batch": 4096, "states": 2_000,
            "repeat": 3}
QUICK = {"games": 4_000, "baseline_games": 200, "batch": 1024, "states": 100, "repeat": 1}


def step_loop(games: int) -> tuple[int, float]:
    rng = np.random.default_rng(0)
    rules = Rules(players=4)
    started = time.perf_counter()
    for _ in range(games):
        s = deal(rng, rules)
        while s.turn >= 0:
            legal = legal_actions(s)
            s = step(s, legal[int(rng.integers(len(legal)))])
    return games, time.perf_counter() - started


def lockstep(games: int, batch: int) -> tuple[int, float]:
    started = time.perf_counter()
    g = random_games(games, 4, np.random.default_rng(0), batch=batch)
    elapsed = time.perf_counter() - started
    assert (np.sort(g.places, axis=1) == np.arange(4)).all()
    return games, elapsed


def powerset_moves(state: State) -> set[int]:
    """The seed's way: every subset of the hand's cards, kept when it is a legal set."""
    hand = state.hands[state.turn]
    cards = [r * N_SUITS + k for r in range(len(hand)) for k in range(hand[r])]
    rank, count = state.table
    moves = {PASS} if rank >= 0 else set()
    for k in range(1, len(cards) + 1):
        for subset in itertools.combinations(cards, k):
            ranks = {c // N_SUITS for c in subset}
            if len(ranks) == 1:
                r = ranks.pop()
                if rank < 0 or (k == count and r > rank):
                    moves.add(play_action(r, k))
    return moves


def sample_states(players: int, count: int, max_cards: int) -> list[State]:
    """States of random games past the first play, hands of at most ``max_cards``."""
    rng = np.random.default_rng(players)
    out: list[State] = []
    while len(out) < count:
        s = deal(rng, Rules(players=players))
        while s.turn >= 0 and len(out) < count:
            legal = legal_actions(s)
            if not s.first and sum(s.hands[s.turn]) <= max_cards:
                out.append(s)
            s = step(s, legal[int(rng.integers(len(legal)))])
    return out


def timed(f: Callable[[State], object], states: list[State]) -> float:
    started = time.perf_counter()
    for s in states:
        f(s)
    return (time.perf_counter() - started) / len(states)


def cold(states: list[State]) -> float:
    """``legal_actions`` per state with its cache emptied first: no state is seen twice."""
    _legal.cache_clear()
    return timed(legal_actions, states)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, help=f"lockstep games ({DEFAULTS['games']:,})")
    parser.add_argument("--baseline-games", type=int,
                        help=f"one-at-a-time games ({DEFAULTS['baseline_games']:,})")
    parser.add_argument("--batch", type=int, help=f"games in lockstep ({DEFAULTS['batch']})")
    parser.add_argument("--states", type=int,
                        help=f"states for the legal-move rows ({DEFAULTS['states']:,})")
    parser.add_argument("--repeat", type=int, help=f"runs, median reported ({DEFAULTS['repeat']})")
    parser.add_argument("--core", type=int, default=0, help="the core to pin to (0)")
    args = _args.parse(parser, DEFAULTS, QUICK)
    print(_args.pin(args.core))

    small = max(1, args.batch // 4)
    rows: list[tuple[str, Callable[[], tuple[int, float]]]] = [
        ("rules.step loop (baseline)", lambda: step_loop(args.baseline_games)),
        (f"random_games, batch {small}", lambda: lockstep(args.games, small)),
        (f"random_games, batch {args.batch}", lambda: lockstep(args.games, args.batch)),
    ]
    lockstep(2 * args.batch, args.batch)  # warm-up
    runs: dict[str, list[tuple[int, float]]] = {name: [] for name, _ in rows}
    for _ in range(args.repeat):
        for name, run in rows:
            runs[name].append(run())
    rate = {name: statistics.median(n / s for n, s in runs[name]) for name in runs}
    base = rate[rows[0][0]]
    print(f"\nrandom four-player games, uniformly random legal moves; runs: {args.repeat}, "
          "the median\n")
    print(f"{'run':<32}{'games/s':>10}{'x baseline':>12}   every run")
    for name, _ in rows:
        each = ", ".join(f"{n / s:,.0f}" for n, s in runs[name])
        print(f"{name:<32}{rate[name]:>10,.0f}{rate[name] / base:>12.2f}   {each}")

    print(f"\nlegal moves, {args.states:,} states each; the powerset enumeration is the "
          "baseline\n")
    print(f"{'states':<34}{'powerset':>12}{'rank counts':>13}{'x baseline':>12}")
    ratios = []
    for players, max_cards, n in ((4, 10, args.states), (2, 20, max(10, args.states // 100))):
        states = sample_states(players, n, max_cards)
        for s in states[:50]:
            assert set(legal_actions(s)) == powerset_moves(s)
        slow = [statistics.median([timed(powerset_moves, states)
                                   for _ in range(args.repeat)])][0]
        fast = statistics.median([cold(states) for _ in range(args.repeat)])
        ratios.append(slow / fast)
        cards = np.mean([sum(s.hands[s.turn]) for s in states])
        label = f"{players} players ({n:,}, {cards:.1f} cards held)"
        print(f"{label:<34}{slow * 1e6:>10,.0f}us{fast * 1e6:>11,.2f}us{slow / fast:>12,.0f}")

    r = rate[rows[-1][0]]
    print(f"\ntarget >= {TARGET_GAMES:,} random four-player games/s on one core: "
          f"{r:,.0f}, {'met' if r >= TARGET_GAMES else 'NOT met'}")
    worst = min(ratios)
    print(f"target legal moves >= {TARGET_LEGAL}x the powerset enumeration: {worst:,.0f}x "
          f"at the least, {'met' if worst >= TARGET_LEGAL else 'NOT met'}")


if __name__ == "__main__":
    main()
