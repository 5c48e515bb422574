"""Bounding hold'em's trees: FQI's peak memory, model size and policy strength against n_min.

    python benchmarks/fqi_treesize.py [--rows 1000000] [--nmin 20,200,1000] [--hands 20000]
                                      [--work DIR]

Hold'em's peak memory is its trees (`benchmarks/fqi_memory.py`): a hundred trees grown to
n_min = 20 on a million rows. A larger n_min bounds them; this measures what it costs.
For each n_min it runs ``batchrl fqi`` on the generated hold'em store of
`benchmarks/fqi_memory.py` (the thesis's other settings, M=100, N=11, joint, full refits;
the store is made there, or reused from ``--work``), sampling the child's resident set,
then ``batchrl evaluate --duplicate`` of the model against the random bots that made
the logs, on the same deals for every n_min. Printed per n_min: the nodes of the final
forest, the peak resident set, that peak over the float32 state and next-state matrices,
the fit's wall time, and the model's big blinds per hand with its 95% interval. The
baseline is the first n_min given (the default's first is 20, the thesis's): the node
ratios are to it. Models are kept under ``--work`` and reused; a reused model's peak and
time print as nan (they were not measured in this run).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fqi_memory import BATCHRL, ROOT, rss_peak, store_for


def nodes(model: Path) -> int:
    """The nodes of every forest a model file holds."""
    with np.load(model, allow_pickle=False) as arrays:
        return int(sum(arrays[k].sum() for k in arrays.files if k.endswith(".node_count")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--nmin", default="20,200,1000")
    parser.add_argument("--hands", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("--work", type=Path, default=ROOT / ".bench" / "fqi_memory")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT))
    from batchrl.store import Store

    store = store_for("holdem", args.rows, args.work)
    rows = Store.open(store).info().rows
    matrices_mb = 2 * rows * len(Store.open(store).schema.feature_names) * 4 / 2**20
    print(f"hold'em store {store}: {rows:,} rows, state and next-state matrices "
          f"{matrices_mb:,.0f} MB; evaluate: {args.hands:,} hands duplicate against random, "
          f"seed {args.seed}")
    print(f"{'n_min':>6}{'nodes':>12}{'x nodes':>8}{'peak MB':>9}{'x matrices':>11}"
          f"{'fit s':>8}{'bb/hand':>9}{'95% interval':>18}")
    base: int | None = None
    for nmin in (int(n) for n in args.nmin.split(",")):
        model = args.work / f"holdem-{args.rows}-nmin{nmin}.npz"
        peak, seconds = float("nan"), float("nan")  # a model kept from before: not timed
        if not model.exists():
            peak_bytes, seconds, _ = rss_peak([*BATCHRL, "fqi", "--store", str(store),
                                               "--nmin", str(nmin), "--out", str(model)])
            peak = peak_bytes / 2**20
        out = subprocess.run([*BATCHRL, "evaluate", "--model", str(model), "--opponent",
                              "random", "--hands", str(args.hands), "--duplicate", "--seed",
                              str(args.seed), "--json"], check=True, capture_output=True,
                             text=True).stdout
        bb = json.loads(out)["bb_per_hand"]
        count = nodes(model)
        base = base or count
        print(f"{nmin:>6}{count:>12,}{count / base:>8.3f}{peak:>9,.0f}"
              f"{peak / matrices_mb:>11.1f}{seconds:>8.0f}{bb['mean']:>9.3f}"
              f"   [{bb['low']:.3f}, {bb['high']:.3f}]", flush=True)


if __name__ == "__main__":
    main()
