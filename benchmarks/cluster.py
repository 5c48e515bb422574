"""One against two Dask worker processes on this machine, for ``fqi`` and ``evaluate``, as
ratios in one run.

    python benchmarks/cluster.py [--hands 15000] [--eval-hands 40000] [--repeat 2] [--quick]
                                  [--only fqi|evaluate]

Generates a heads-up limit log of two random bots (``--hands``), ingests it, and runs
``batchrl fqi`` with hold'em's settings (M=100, n_min=20, N=11, one forest on state and
action, full refits) three ways: locally on one thread (``--jobs 1``, the baseline), and
with ``--scheduler`` on a LocalCluster of one worker process (one thread) and of two.
Every run's model must predict what the local one does (checked). Then ``batchrl
evaluate`` plays the local model against the random bot (``--eval-hands``, duplicate:
blocks of 10,000 deals are the tasks) the same three ways; every report must be the
local one. The runs alternate ``--repeat`` times; the medians are printed with the
ratios.

Needs the dask extra (``pip install -e '.[dask]'``).
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BATCHRL = [sys.executable, "-m", "batchrl"]


def timed(args: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([*BATCHRL, *args], check=True, stdout=subprocess.PIPE, text=True)
    return time.perf_counter() - started, done.stdout


def table(title: str, times: dict[str, list[float]]) -> None:
    medians = {name: statistics.median(t) for name, t in times.items()}
    first = medians["local, one thread (baseline)"]
    one = medians["LocalCluster, 1 worker"]
    print(f"{title}\n")
    print(f"{'run':<32}{'seconds':>9}{'x baseline':>12}{'x 1 worker':>12}   every run")
    for name, t in medians.items():
        each = ", ".join(f"{s:.1f}" for s in times[name])
        print(f"{name:<32}{t:>9.1f}{first / t:>12.2f}{one / t:>12.2f}   {each}")
    print(f"\ntarget: 2 workers >= 1.7x 1 worker: "
          f"{one / medians['LocalCluster, 2 workers']:.2f}x\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=15_000)
    parser.add_argument("--eval-hands", type=int, default=40_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="1,000 hands, one run")
    parser.add_argument("--only", choices=("fqi", "evaluate"), default=None,
                        help="time one command (evaluate alone: the model is made once, "
                             "untimed, by the local fqi)")
    args = parser.parse_args()
    hands, repeat = (1_000, 1) if args.quick else (args.hands, args.repeat)
    eval_hands = 2_000 if args.quick else args.eval_hands
    sys.path.insert(0, str(ROOT))
    import numpy as np
    from distributed import LocalCluster

    from batchrl.learners.fqi.model import GreedyPolicy
    from batchrl.store import Store

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        log, store = work / "rr.log", work / "store"
        subprocess.run([*BATCHRL, "generate", "--game", "holdem", "--players", "random,random",
                        "--hands", str(hands), "--seed", "3", "-o", str(log)], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run([*BATCHRL, "ingest", str(log), "--store", str(store)], check=True,
                       stdout=subprocess.DEVNULL)
        rows = Store.open(store).info().rows
        fqi = ["fqi", "--store", str(store)]
        times: dict[str, list[float]] = {"local, one thread (baseline)": [],
                                         "LocalCluster, 1 worker": [],
                                         "LocalCluster, 2 workers": []}
        outs = {name: work / f"m{k}.npz" for k, name in enumerate(times)}
        clusters = {}
        for name, n in (("LocalCluster, 1 worker", 1), ("LocalCluster, 2 workers", 2)):
            clusters[name] = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                          host="127.0.0.1", dashboard_address=None,
                                          silence_logs=logging.ERROR)
        try:
            if args.only == "evaluate":
                timed([*fqi, "--jobs", "1", "--out", str(outs["local, one thread (baseline)"])])
            for _ in range(repeat if args.only != "evaluate" else 0):
                for name in times:
                    extra = ["--jobs", "1"] if name not in clusters else \
                        ["--scheduler", clusters[name].scheduler_address]
                    times[name].append(timed([*fqi, *extra, "--out", str(outs[name])])[0])
            if args.only == "fqi":
                repeat = 0
            evaluate = ["evaluate", "--model", str(outs["local, one thread (baseline)"]),
                        "--opponent", "random", "--hands", str(eval_hands), "--duplicate",
                        "--json"]
            played: dict[str, list[float]] = {name: [] for name in times}
            reports = set()
            for _ in range(repeat):
                for name in played:
                    extra = [] if name not in clusters else \
                        ["--scheduler", clusters[name].scheduler_address]
                    seconds, out = timed([*evaluate, *extra])
                    played[name].append(seconds)
                    report = json.loads(out)
                    reports.add(json.dumps({k: v for k, v in report.items()
                                            if k not in ("seconds", "hands_per_second")}))
            if len(reports) != 1:
                raise SystemExit("evaluate: a cluster's report differs from the local one")
        finally:
            for c in clusters.values():
                c.close()
        states = Store.open(store).arrays().state
        base = GreedyPolicy.load(outs["local, one thread (baseline)"]).q_values(states)
        for name, path in outs.items() if args.only != "evaluate" else ():
            if not np.array_equal(GreedyPolicy.load(path).q_values(states), base):
                raise SystemExit(f"{name}: its model predicts otherwise than the local one")
    if args.only != "evaluate":
        table(f"batchrl fqi, hold'em's settings (M=100 n_min=20 N=11, joint, full refits), "
              f"{rows:,} rows; runs: {len(times['LocalCluster, 1 worker'])}, the median; "
              "every model the same", times)
    if args.only != "fqi":
        table(f"batchrl evaluate, that model against random, {eval_hands:,} hands duplicate "
              f"(blocks of 10,000 deals); runs: {len(played['LocalCluster, 1 worker'])}, the "
              "median; every report the same", played)

if __name__ == "__main__":
    main()
