"""A forest's prediction on one thread: batchrl's (`batchrl.forests.predict`, each
tree's own walk summed in order) against scikit-learn's ``forest.predict`` (the baseline,
the same sum with its input checks and a joblib hand-off for each tree), in one run.

    python benchmarks/tree_predict.py [--runs 5] [--hands 400] [--baseline REV] [--quick]

1. In this process: ExtraTrees forests of 10, 50 and 100 trees (n_jobs 1, n_min 20) on
   20,000 random rows of 60 features, each predicting 1, 8, 64 and 512 rows; the
   fastest of ``--runs`` timings of each (each timing repeats the call for 0.2 s); every
   prediction checked equal, bit for bit, to scikit-learn's. Beside them, the same
   forest read back from a model file and walked by numpy (`StoredRegressor`: what a
   fresh process does for a few rows, before it has imported scikit-learn).
2. With ``--baseline REV``, whole commands: Tressette learned with ``--jobs 1`` (FQI's
   fast per-action recipe, 50 trees, from 2,000 hands of the seed's heuristic and random
   play), then ``batchrl evaluate --team model:M --vs random --games G --json``, for 40
   games and for HANDS, timed in turn with this tree's code and REV's (checked out in a
   temporary worktree), the fastest of ``--runs``; both must report the same results.

A model learned on one thread predicts on one thread wherever it plays: an evaluation,
a search's rollouts, the benchmark's scoring under ``-j 1``; one state at a time, the
per-tree cost was most of its time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _args
import numpy as np
from sklearn.ensemble import ExtraTreesRegressor

from batchrl import forests
from batchrl.forests import predict
from batchrl.modeltrees import decode_models, encode_models

TREES = (10, 50, 100)
ROWS = (1, 8, 64, 512)


def fastest(call, runs: int) -> float:
    """Seconds a call, the fastest of ``runs`` timings of 0.2 s of calls each."""
    best = float("inf")
    for _ in range(runs):
        count, started = 0, time.perf_counter()
        while (spent := time.perf_counter() - started) < 0.2:
            call()
            count += 1
        best = min(best, spent / count)
    return best


def in_process(runs: int) -> None:
    rng = np.random.default_rng(0)
    x = rng.random((20_000, 60), dtype=np.float32)
    y = x[:, 0] * 3 + np.sin(6 * x[:, 1]) + rng.normal(scale=0.1, size=len(x))
    print("one thread: scikit-learn's forest.predict (baseline) against batchrl's predict, "
          f"and the forest read from a file and walked by numpy; the fastest of {runs}")
    print(f"{'trees':>5} {'rows':>5} {'forest.predict ms':>18} {'batchrl ms':>11} "
          f"{'x faster':>9} {'numpy walk ms':>14} {'x faster':>9}")
    # a fresh process's walk, with no scikit-learn imported and no budget spent, on any
    # number of rows (a stored forest walks at most forests.WALK_WORK rows times trees)
    forests._trees_loaded = lambda: False
    forests.WALK_WORK = forests.WALK_BUDGET = 1 << 62
    for trees in TREES:
        forest = ExtraTreesRegressor(n_estimators=trees, min_samples_split=20, n_jobs=1,
                                     random_state=0).fit(x, y)
        specs, arrays = encode_models([forest])
        (stored,) = decode_models(specs, {k: v() for k, v in arrays.items()}, "memory")
        for rows in ROWS:
            part = x[:rows]
            if not np.array_equal(predict(forest, part), forest.predict(part)) or \
                    not np.array_equal(stored.predict(part), forest.predict(part)):
                raise SystemExit(f"{trees} trees, {rows} rows: not scikit-learn's sum")
            if not stored.walks(part):
                raise SystemExit(f"{trees} trees, {rows} rows: not walked by numpy")
            base = fastest(lambda f=forest, p=part: f.predict(p), runs)
            ours = fastest(lambda f=forest, p=part: predict(f, p), runs)
            walked = fastest(lambda f=stored, p=part: f.predict(p), runs)
            print(f"{trees:>5} {rows:>5} {base * 1e3:>18.3f} {ours * 1e3:>11.3f} "
                  f"{base / ours:>8.1f}x {walked * 1e3:>14.3f} {base / walked:>8.1f}x")


def batchrl(env: dict[str, str], *args: object) -> str:
    done = subprocess.run([sys.executable, "-m", "batchrl", *map(str, args)], env=env,
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"batchrl {args[0]} failed:\n{done.stderr[-2000:]}")
    return done.stdout


def whole_commands(baseline: str, hands: int, runs: int) -> None:
    here = {**os.environ, "PYTHONSAFEPATH": "1"}
    with tempfile.TemporaryDirectory(prefix="tree-predict-") as scratch, \
            _args.worktree(baseline) as tree:
        folder = Path(scratch)
        log, store, model = folder / "sr.jsonl", folder / "store", folder / "m.npz"
        batchrl(here, "generate", "--game", "tressette", "--players",
                "seed-heuristic,random,seed-heuristic,random", "--games", 2_000, "--seed", 1,
                "-o", log)
        batchrl(here, "ingest", log, "--store", store, "--suits", "canonical")
        batchrl(here, "fqi", "--store", store, "--per-action", "--fast", "--trees", 50,
                "--nmin", 20, "--k", 30, "--iters", 5, "--jobs", 1, "--out", model)
        envs = {"this tree": here, baseline: _args.tree_env(tree)}
        for games in sorted({40, hands}):
            command = ("evaluate", "--game", "tressette", "--team", f"model:{model}", "--vs",
                       "random", "--games", games, "--seed", 33, "--json")
            times: dict[str, float] = {}
            results: dict[str, object] = {}
            for _ in range(runs):
                for name, env in envs.items():
                    started = time.perf_counter()
                    said = json.loads(batchrl(env, *command))
                    spent = time.perf_counter() - started
                    times[name] = min(times.get(name, float("inf")), spent)
                    results[name] = {k: v for k, v in said.items() if "second" not in k}
            if results["this tree"] != results[baseline]:
                raise SystemExit("the two evaluations differ")
            print(f"\nbatchrl evaluate, Tressette, a 50-tree per-action model learned with "
                  f"--jobs 1, {games:,} hands against random (whole commands, the fastest of "
                  f"{runs}; the same results)")
            for name, spent in times.items():
                print(f"  {name:>10}: {spent:7.2f} s  ({times[baseline] / spent:.2f}x "
                      f"{baseline})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--hands", type=int, default=None)
    parser.add_argument("--baseline", default=None, metavar="REV",
                        help="also time whole evaluations with REV's code")
    args = _args.parse(parser, {"runs": 5, "hands": 400}, {"runs": 1, "hands": 40})
    print(f"{os.cpu_count()} cores; numpy {np.__version__}")
    in_process(args.runs)
    if args.baseline:
        whole_commands(args.baseline, args.hands, args.runs)


if __name__ == "__main__":
    main()
