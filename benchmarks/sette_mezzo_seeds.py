"""Sette e mezzo's optimum gap across data seeds: each learner trained on random play's
logs of several seeds (100,000 games each, the benchmark's recipe: the stick's expected
reward), each policy evaluated exactly through the game tree, its gap to the exact
optimum (the baseline, measured in the same run: its gap is 0) printed seed by seed
with the mean.

    python benchmarks/sette_mezzo_seeds.py                       # fqi and iql, seeds 0 3 7 11 19
    python benchmarks/sette_mezzo_seeds.py --learners fqi,fqi:nmin=50 --seeds 0,3
    python benchmarks/sette_mezzo_seeds.py --quick               # a smoke run: small, two seeds

The datasets are built once into the bench's cache (``$BATCHRL_CACHE``) and reused.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _args import parse

from batchrl.games import GAMES, Dataset
from batchrl.learning import learn, settings
from batchrl.play.bench import LearnerSpec, build_dataset, cache_dir, split_learners


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", default="fqi,iql",
                        help="learner specs, as bench --learners takes them")
    parser.add_argument("--seeds", default=None, help="data seeds, comma-separated")
    parser.add_argument("--games", type=int, default=None, help="random games a dataset")
    parser.add_argument("--cache", type=Path, default=None)
    args = parse(parser, {"games": 100_000}, {"games": 3_000})
    seeds = [int(s) for s in (args.seeds or ("0,3" if args.quick else "0,3,7,11,19"))
             .split(",")]
    game = GAMES["sette-mezzo"]
    optimum = float(game.play.score(("optimal",), 1, 0, {}).values[0])
    specs = [LearnerSpec.parse(s) for s in split_learners([args.learners])]
    print(f"sette e mezzo, random play's logs of {args.games:,} games a seed; the baseline "
          f"is the exact optimum, {optimum:+.5f} a game (gap 0)")
    print(f"{'learner':<24} " + " ".join(f"{'seed ' + str(s):>10}" for s in seeds)
          + f" {'mean gap':>10} {'CPU s':>8}")
    cache = args.cache or cache_dir()
    stores = [build_dataset(game, Dataset("random", ("random",), args.games, seed, args.games,
                                          {"reward": "expected"}), False, cache,
                            lambda _: None) for seed in seeds]
    with tempfile.TemporaryDirectory() as tmp:
        for spec in specs:
            gaps, cpu = [], 0.0
            for seed, store in zip(seeds, stores, strict=True):
                chosen = settings(spec.learner, store, dict(spec.given))
                began = time.process_time()
                path, _ = learn(spec.learner, store, chosen, jobs=1,
                                out=Path(tmp) / f"{seed}.npz")
                cpu += time.process_time() - began
                worth = float(game.play.score((f"model:{path}",), 1, 0, {}).values[0])
                gaps.append(optimum - worth)
            print(f"{spec.label[:24]:<24} " + " ".join(f"{g:>10.4f}" for g in gaps)
                  + f" {sum(gaps) / len(gaps):>10.4f} {cpu:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
