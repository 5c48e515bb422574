"""The store's layout against an earlier one: ingest speed and `Store.arrays`, as ratios.

    python benchmarks/store_layout.py [--baseline REF] [--hands 20000] [--repeat 3]

Schema version 3 keeps every feature and every legal action as a Parquet column of its
own (any reader takes them by name) and, where a game's next state is its player's
next row, derives it instead of writing it twice. The baseline is the same code at git
``REF`` (default ``11fe605``: schema version 2, the vectors as fixed-size binary rows,
which only pyarrow could read), checked out into a temporary worktree and timed in the
same run, alternating with this checkout's, each run in a fresh process.

Timed, for a Tressette log (287 int8 features, 40 actions: the widest store) and a
hold'em log (11 float32 features), each generated here:

1. ``ingest``: ``batchrl.ingest.ingest`` end to end, log to store;
2. ``arrays``: ``Store.arrays()``, every feature (its second call in the process: the
   first imports what reading needs);
3. ``arrays + next``: ``Store.arrays()`` and the next states FQI takes (those of the
   rows that bootstrap): what FQI's data loading costs.

The issue's bounds: ingest no more than 20% slower, ``Store.arrays`` no slower.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import _args  # noqa: E402  (benchmarks/, the script's own folder)

DEFAULTS = {"hands": 20_000, "repeat": 3}
QUICK = {"hands": 1_000, "repeat": 1}

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
from batchrl.ingest import IngestConfig, ingest
from batchrl.store import Store
log, store = sys.argv[2], sys.argv[3]
started = time.perf_counter()
ingest(IngestConfig(paths=(__import__("pathlib").Path(log),), store=store))
ingested = time.perf_counter() - started
Store.open(store).arrays()  # the first call imports what reading needs: not timed
started = time.perf_counter()
t = Store.open(store).arrays()
arrays = time.perf_counter() - started
has_next = ~t.terminal & t.next_legal.any(axis=1)
nxt = t.next_state[has_next]
both = time.perf_counter() - started
size = sum(p.stat().st_size for p in Store.open(store).parts_dir.glob("*.parquet"))
print(json.dumps({"ingest": ingested, "arrays": arrays, "arrays + next": both,
                  "rows": len(t), "MB": size / 1e6, "check": float(nxt.sum()),
                  "from": __import__("batchrl").__file__}))
"""


def logs(work: Path, hands: int) -> dict[str, Path]:
    from batchrl.games.holdem.logs import generate
    from batchrl.games.tressette.logs import play, write_log

    tressette, holdem = work / "tressette.jsonl", work / "holdem.log"
    write_log(tressette, play(("seed-heuristic", "random", "seed-heuristic", "random"), hands,
                              seed=1), "jsonl")
    generate(holdem, ["random", "random"], hands * 5, seed=1)
    return {"tressette": tressette, "hold'em": holdem}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", default="11fe605", help="git ref of the baseline layout")
    parser.add_argument("--hands", type=int, help=f"Tressette hands ({DEFAULTS['hands']:,}); "
                                                   "hold'em plays five times as many")
    parser.add_argument("--repeat", type=int, help=f"runs, median reported ({DEFAULTS['repeat']})")
    args = _args.parse(parser, DEFAULTS, QUICK)
    work = Path(tempfile.mkdtemp(prefix="store-layout-"))
    with _args.worktree(args.baseline) as baseline:
        trees = {f"baseline ({args.baseline})": baseline, "this checkout": ROOT}
        runs: dict[tuple[str, str], list[dict[str, float]]] = {}
        for game, log in logs(work, args.hands).items():
            for k in range(args.repeat):
                for label, tree in trees.items():  # alternating, so drift hits both alike
                    out = subprocess.run([sys.executable, "-c", CHILD, str(tree), str(log),
                                          str(work / f"s-{len(runs)}-{k}-{label[:4]}")],
                                         check=True, capture_output=True, text=True)
                    result = json.loads(out.stdout)
                    if not result.pop("from").startswith(str(tree)):
                        raise SystemExit(f"{label}: batchrl imported from elsewhere than {tree}")
                    runs.setdefault((game, label), []).append(result)
        print(f"median of {args.repeat} runs each, in fresh processes\n")
        print(f"{'store':<10} {'layout':<22} {'rows':>9} {'MB':>6} {'ingest s':>9} "
              f"{'arrays s':>9} {'+ next s':>9}   ratios to the baseline")
        for (game, label), results in runs.items():
            med = {k: statistics.median(r[k] for r in results) for k in results[0]}
            base = {k: statistics.median(r[k] for r in runs[(game, next(iter(trees)))])
                    for k in results[0]}
            ratios = "  ".join(f"{k} {med[k] / base[k]:.2f}"
                               for k in ("ingest", "arrays", "arrays + next"))
            print(f"{game:<10} {label:<22} {med['rows']:>9,.0f} {med['MB']:>6.1f} "
                  f"{med['ingest']:>9.2f} {med['arrays']:>9.2f} {med['arrays + next']:>9.2f}"
                  f"   {ratios}")


if __name__ == "__main__":
    main()
