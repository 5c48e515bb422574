"""The luck taken out of logged results (``batchrl evaluate --logs``), against the truth.

Bots play heads-up limit hold'em and their hands are logged (``batchrl generate``); the
log is cut into replicates of a few hands each (consecutive hands: independent deals).
Each replicate's result per hand is measured twice: raw (the mean of the chips won, the
baseline) and variance-reduced (chance-event control variates from the value function
cross-fitted over the whole log's hands, `batchrl.play.luck`); where one of the bots is
``random``, a third time with its strategy known (``--strategy random=random``: its
choices' luck taken out too, AIVAT's action terms). The truth is the same
matchup played far longer on duplicate deals (`evaluate_bots`), measured in the same run.

Printed per matchup: the truth with its interval; each estimator's mean over the
replicates with its interval (unbiased: it covers the truth); the replicates' spread
(their standard deviation: the standard error of a replicate's mean, measured, not
modelled) and its ratio to the raw one; and the share of replicates whose own 95%
interval covers the truth.

    python benchmarks/luck_holdem.py                      # 2,000 replicates of 50 hands
    python benchmarks/luck_holdem.py --matchups rule,random --replicates 500
    python benchmarks/luck_holdem.py --quick               # a smoke run
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _args import parse

from batchrl.games.holdem.evaluate import play_bots
from batchrl.games.holdem.logs import generate
from batchrl.play.luck import LuckConfig, corrections, read_logs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matchups", default="rule,random;rule,rule",
                        help="bots per matchup, matchups split by ';' (the first player "
                             "is measured)")
    parser.add_argument("--replicates", type=int, default=None)
    parser.add_argument("--hands", type=int, default=None, help="hands per replicate")
    parser.add_argument("--truth", type=int, default=None,
                        help="duplicate deals for the truth (each played from both seats)")
    parser.add_argument("--draws", type=int, default=LuckConfig.draws)
    parser.add_argument("--seed", type=int, default=11)
    args = parse(parser, {"replicates": 2000, "hands": 50, "truth": 200_000},
                 {"replicates": 40, "hands": 50, "truth": 4_000})
    print(f"heads-up limit hold'em (ACPC, blinds 5/10): {args.replicates:,} replicates of "
          f"{args.hands} hands each, the truth on {args.truth:,} duplicate deals; mbb/hand")
    for spec in args.matchups.split(";"):
        hero, villain = spec.split(",")
        started = time.perf_counter()
        match = play_bots(hero, villain, 2 * args.truth, args.seed + 1, duplicate=True)
        truth_values = match.payoffs[:, 0] / match.game.big_blind * 1000.0
        pairs = truth_values.reshape(-1, 2).mean(axis=1)  # a deal from both seats
        truth = float(pairs.mean())
        truth_se = float(pairs.std(ddof=1) / np.sqrt(len(pairs)))
        truth_seconds = time.perf_counter() - started
        estimators: dict[str, Any] = {}
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "match.log"
            generate(log, [hero, villain], args.replicates * args.hands, args.seed)
            started = time.perf_counter()
            read = read_logs([log], LuckConfig(draws=args.draws, seed=args.seed))
            fixed = corrections(read.hands, LuckConfig.folds, args.seed)
            seconds = time.perf_counter() - started
            name = read.hands[0].names[0] if hero == villain else hero
            raw = np.array([h.results[h.names.index(name)] for h in read.hands])
            estimators["raw (baseline)"] = raw
            estimators["variance-reduced"] = raw - _mine(read.hands, fixed.per_seat, name)
            if "random" in (hero, villain):  # its strategy is known: its choices' luck too
                started = time.perf_counter()
                randoms = {n: "random" for n in read.hands[0].names
                           if n == "random" or n.startswith("random-")}
                known = read_logs([log], LuckConfig(draws=args.draws, seed=args.seed,
                                                    strategies=randoms))
                choices = corrections(known.hands, LuckConfig.folds, args.seed)
                estimators["and random's choices"] = raw - _mine(known.hands,
                                                                 choices.per_seat, name)
                known_seconds = time.perf_counter() - started
        print(f"\n{hero} against {villain} ({name} measured): truth {truth:+.1f} "
              f"[{truth - 1.96 * truth_se:+.1f}, {truth + 1.96 * truth_se:+.1f}] "
              f"({truth_seconds:.0f} s); logs read and corrected in {seconds:.0f} s "
              f"({len(read.hands) / seconds:,.0f} hands/s), the value function's R² "
              f"{fixed.explained:.2f} (a seat's result after each event, held-out folds)")
        if "and random's choices" in estimators:
            print(f"with random's strategy known (--strategy random=random): read and "
                  f"corrected in {known_seconds:.0f} s, the value function's R² "
                  f"{choices.explained:.2f}")
        print(f"{'estimator':<21} {'mean of replicates':>30} {'covers':>7} "
              f"{'replicate SE':>13} {'SE ratio':>9} {'intervals covering':>19}")
        spread = {}
        for label, values in estimators.items():
            reps = values.reshape(args.replicates, args.hands)
            means = reps.mean(axis=1)
            ses = reps.std(axis=1, ddof=1) / np.sqrt(args.hands)
            spread[label] = float(means.std(ddof=1))
            overall = float(means.mean())
            half = 1.96 * spread[label] / np.sqrt(args.replicates)
            # covers: within 1.96 standard errors of the difference (the truth's own too)
            apart = 1.96 * float(np.hypot(half / 1.96, truth_se))
            share = float(np.mean(np.abs(means - truth) <= 1.96 * ses))
            print(f"{label:<21} {overall:>+9.1f} [{overall - half:+.1f}, {overall + half:+.1f}]"
                  f"{'':>4} {'yes' if abs(overall - truth) <= apart else 'NO':>7} "
                  f"{spread[label]:>13.1f} {spread[label] / spread['raw (baseline)']:>9.2f} "
                  f"{share:>19.1%}")


def _mine(hands: list[Any], per_seat: list[Any], name: str) -> Any:
    """The corrections of the player ``name`` in each hand."""
    return np.array([c[h.names.index(name)] for h, c in zip(hands, per_seat, strict=True)])


if __name__ == "__main__":
    main()
