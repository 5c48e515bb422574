"""Why one forest on (state, action) grows slower than one forest per action: the work
of their splits, counted.

    python benchmarks/fqi_split_work.py [--store DIR] [--trees 10] [--nmin 20]

An extremely randomized tree's split scans each candidate input over the rows of its
node, so a forest's work is the sum, over its inner nodes, of rows × inputs. This grows
both models on the store's rows (the target: each row's return-to-go, the targets fast
mode grows on) and prints that sum and the node counts, with the joint model's over the
per-action models' (the baseline). Default store: the bundled heads-up limit sample,
ingested under a temporary directory.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def work(model: Any) -> tuple[int, int]:
    """Rows × inputs scanned at the forest's splits, and its nodes."""
    scanned = nodes = 0
    for tree in model.estimators_:
        inner = tree.tree_.children_left >= 0
        scanned += int(tree.tree_.n_node_samples[inner].sum()) * model.n_features_in_
        nodes += tree.tree_.node_count
    return scanned, nodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=None)
    parser.add_argument("--trees", type=int, default=10)
    parser.add_argument("--nmin", type=int, default=20)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from batchrl.ingest import IngestConfig, ingest
    from batchrl.learners.fqi import extra_trees
    from batchrl.learners.fqi.inputs import return_to_go
    from batchrl.store import Store

    with tempfile.TemporaryDirectory() as tmp:
        store = args.store
        if store is None:
            store = Path(tmp) / "store"
            ingest(IngestConfig(paths=(ROOT / "datasets/samples/random_vs_random.2p.limit.log",),
                                store=store))
        t = Store.open(store).arrays()
    y = return_to_go(t)
    joint = extra_trees(args.trees, args.nmin, None, 1).set_params(random_state=0).fit(
        np.column_stack([t.state, t.action.astype(np.float32)]), y)
    per_action = [extra_trees(args.trees, args.nmin, None, 1).set_params(random_state=a).fit(
        t.state[t.action == a], y[t.action == a])
        for a in range(len(t.action_names)) if (t.action == a).any()]
    (js, jn), parts = work(joint), [work(m) for m in per_action]
    ps, pn = sum(p[0] for p in parts), sum(p[1] for p in parts)
    print(f"{len(t):,} rows, {t.state.shape[1]} features, {args.trees} trees per forest, "
          f"n_min {args.nmin}")
    print(f"{'model':<28}{'rows x inputs at splits':>26}{'nodes':>12}{'x per-action':>14}")
    print(f"{'one forest per action':<28}{ps:>26,}{pn:>12,}{1:>14.3f}")
    print(f"{'one forest on (s, a)':<28}{js:>26,}{jn:>12,}{js / ps:>14.3f}")


if __name__ == "__main__":
    main()
