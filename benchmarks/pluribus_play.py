"""Pluribus's 10,000 hands learned from end to end, and the clones at six-player tables.

    python benchmarks/pluribus_play.py [--phh DIR] [--out DIR] [--hands 60000] [--quick]

Each step is a batchrl command, printed as it runs (the store and the models are kept in
``--out``, and a step whose output is there already is not run again):

1. ``batchrl ingest DIR --store OUT/store``: every hand replayed and checked;
2. ``batchrl learn bc --player Pluribus`` (Pluribus's own decisions), ``batchrl learn bc
   --player '!Pluribus'`` (the professionals'), and ``batchrl learn fqi --player Pluribus
   --support 0.3`` (FQI acting only where Pluribus did);
3. each model at a six-player table against five ``rule`` bots, and against five
   ``random`` bots: duplicate deals (each deal played once from every seat), the random
   bots' draws keyed to the state, one seed for every model, so any two models meet the
   same cards and the same opponents' decisions; big blinds won per hand with its 95%
   interval (over deals);
4. the Pluribus clone against the professionals' clone seat for seat: the difference of
   their results in the same seats on the same deals, with its paired 95% interval.

The baseline the table's last column is read against is the ``rule`` bot itself in the
hero's seat (how five of them share the chips: 0 bb/hand by symmetry, its interval the
noise of the deals).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import _args  # noqa: E402  (benchmarks/, the script's own folder)
import numpy as np  # noqa: E402

from batchrl.evaluation import Estimate, mean_ci  # noqa: E402
from batchrl.games.holdem.evaluate import game_of_model, play_bots  # noqa: E402

PLURIBUS = ROOT.parent / "shared" / "data" / "phh" / "pluribus"
SEED = 33


def run(command: list[str], made: Path) -> None:
    """Run a batchrl command unless ``made`` exists already; print it either way."""
    shown = " ".join(f"'{c}'" if "!" in c else c for c in command)
    if made.exists():
        print(f"  (kept) batchrl {shown}")
        return
    print(f"  batchrl {shown}", flush=True)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "batchrl", *command], capture_output=True,
                          text=True, check=False)
    if done.returncode:
        sys.exit(f"exit {done.returncode}: {done.stdout[-600:]}{done.stderr[-600:]}")
    print(f"    {time.perf_counter() - started:.1f} s", flush=True)


def fmt(e: Estimate) -> str:
    return f"{e.mean:+7.3f} [{e.mean - e.half_width:+7.3f}, {e.mean + e.half_width:+7.3f}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--phh", type=Path, default=PLURIBUS,
                        help="a folder of PHH hands [the 10,000 Pluribus hands]")
    parser.add_argument("--out", type=Path, default=Path("pluribus-run"),
                        help="where the store and the models go [./pluribus-run]")
    parser.add_argument("--hands", type=int, default=None,
                        help="hands per match, a multiple of 6 [60,000; --quick 6,000]")
    args = _args.parse(parser, defaults={"hands": 60_000}, quick={"hands": 6_000})
    if not args.phh.is_dir():
        sys.exit(f"{args.phh} is absent: give --phh a folder of .phh files")
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    store = out / "store"
    models = {"Pluribus clone (bc)": out / "pluribus_bc.npz",
              "professionals' clone (bc)": out / "pros_bc.npz",
              "Pluribus FQI (support 0.3)": out / "pluribus_fqi.npz"}
    print(f"the hands: {args.phh}; the run's files: {out}")
    run(["ingest", str(args.phh), "--store", str(store)], store)
    s = ["--store", str(store)]
    paths = list(models.values())
    run(["learn", "bc", *s, "--player", "Pluribus", "--out", str(paths[0])], paths[0])
    run(["learn", "bc", *s, "--player", "!Pluribus", "--out", str(paths[1])], paths[1])
    run(["learn", "fqi", *s, "--player", "Pluribus", "--support", "0.3", "--out",
         str(paths[2])], paths[2])
    game = game_of_model(paths[0])
    seats = game.num_players
    hands = args.hands - args.hands % seats
    print(f"\n{game.name}: {seats} seats; {hands:,} hands a match (duplicate, "
          f"{hands // seats:,} deals), seed {SEED}; bb/hand with its 95% interval\n")
    heroes = {**{name: f"model:{path}" for name, path in models.items()}, "rule bot": "rule"}
    results: dict[tuple[str, str], np.ndarray] = {}
    print(f"{'hero':<30}{'vs 5 rule bots':>32}{'vs 5 random bots':>32}")
    for name, hero in heroes.items():
        line = f"{name:<30}"
        for opponent in ("rule", "random"):
            match = play_bots(hero, opponent, hands, SEED, game=game, duplicate=True,
                              keyed=True)
            won = match.payoffs[:, 0] / game.big_blind
            results[name, opponent] = won
            line += f"{fmt(mean_ci(won, per_unit=seats)):>32}"
        print(line, flush=True)
    print("\nPluribus's clone minus the professionals' clone, same seats, same deals:")
    for opponent in ("rule", "random"):
        difference = results["Pluribus clone (bc)", opponent] - \
            results["professionals' clone (bc)", opponent]
        print(f"  vs 5 {opponent} bots: {fmt(mean_ci(difference, per_unit=seats))} bb/hand")
    return 0


if __name__ == "__main__":
    sys.exit(main())
