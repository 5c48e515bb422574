"""Hanabi JSON ingest against its floor: parsing the same files with Python's ``json``.

    python benchmarks/hanabi_ingest.py [--games 1000] [--runs 3] [--baseline REV] [--quick]

The report's state/action pairs (``game000000.states.jsonl`` and its ``.actions.jsonl``,
about 200 KB a game) of ``bot2`` self-play are generated here. Each measure is a whole
process, run ``--runs`` times in turn (floor, ingest, ingest --jobs 0, [baseline], floor,
…) and its fastest run kept:

1. **the floor** (the baseline of the ratios): ``json.loads`` of every line of every
   file, nothing else, in a fresh Python, on one core;
2. **``batchrl ingest DIR --store S``**: read, check every move against the rules,
   encode, write the Parquet part, in a fresh process (its imports included), as a user
   runs it: the games read by one process per core beside the one writing the rows;
3. **``batchrl ingest ... --jobs 0``**: the same in one process, like for like with the
   floor's one core;
4. with ``--baseline REV``: revision ``REV``'s ``batchrl ingest`` (checked out in a
   temporary worktree), in the same run.

Prints each one's seconds and games/s and its time as a ratio to the floor (the issue's
target: at most 2×). The stores of all of them must hold the same rows.
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import _args  # noqa: E402  (benchmarks/, the script's own folder)
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from batchrl.forked import usable_cores  # noqa: E402
from batchrl.games.hanabi.logs import generate  # noqa: E402

DEFAULTS = {"games": 1000, "runs": 3}
QUICK = {"games": 50, "runs": 1}
TARGET = 2.0

FLOOR = """
import json, sys
from pathlib import Path
for path in sorted(Path(sys.argv[1]).iterdir()):
    with open(path, encoding="utf-8") as f:
        for line in f:
            json.loads(line)
"""


def _timed(command: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT, env=env)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, help=f"games generated ({DEFAULTS['games']:,})")
    parser.add_argument("--runs", type=int, help=f"runs of each, the fastest kept "
                                                 f"({DEFAULTS['runs']})")
    parser.add_argument("--baseline", help="a git revision whose ingest is timed too")
    args = _args.parse(parser, DEFAULTS, QUICK)
    with tempfile.TemporaryDirectory(prefix="hanabi-ingest-") as work, \
            (_args.worktree(args.baseline) if args.baseline else
             contextlib.nullcontext(None)) as baseline:
        measure(Path(work), args.games, args.runs, baseline, args.baseline)


def measure(work: Path, count: int, runs: int, baseline: Path | None = None,
            revision: str = "") -> None:
    """Generate ``count`` games under ``work`` and time the floor and the ingests."""
    games = work / "games"
    generate(games, ["bot2", "bot2"], count, seed=1)
    size = sum(p.stat().st_size for p in games.iterdir())
    print(f"{count:,} games of bot2 self-play ({size / 1e6:.0f} MB of JSON lines); "
          f"each measure a whole process, the fastest of {runs}; "
          f"{usable_cores()} cores")
    here = _args.tree_env(ROOT)
    sides = {"batchrl ingest (one reading process a core)": (here, []),
             "batchrl ingest --jobs 0 (one process)": (here, ["--jobs", "0"])}
    if baseline is not None:
        sides[f"batchrl ingest at {revision}"] = (_args.tree_env(baseline), [])
    best: dict[str, float] = {"floor": float("inf")}
    tables = {}
    for run in range(runs):
        best["floor"] = min(best["floor"], _timed([sys.executable, "-c", FLOOR, str(games)]))
        for k, (label, (env, flags)) in enumerate(sides.items()):
            store = work / f"store{run}-{k}"
            seconds = _timed([sys.executable, "-m", "batchrl", "ingest", str(games),
                              "--store", str(store), *flags], env)
            best[label] = min(best.get(label, float("inf")), seconds)
            tables[label] = pa.concat_tables(
                pq.read_table(part) for part in sorted((store / "parts").glob("*.parquet")))
    first = next(iter(tables.values()))
    if not all(t.equals(first) for t in tables.values()):
        raise SystemExit("the stores differ")
    print(f"{'measure':<52} {'seconds':>8} {'games/s':>8} {'ratio':>6}")
    print(f"{'json.loads of every line (floor, baseline)':<52} {best['floor']:>8.2f} "
          f"{count / best['floor']:>8.0f} {1.0:>6.2f}")
    for label in sides:
        print(f"{label:<52} {best[label]:>8.2f} {count / best[label]:>8.0f} "
              f"{best[label] / best['floor']:>6.2f}")
    ratio = best[next(iter(sides))] / best["floor"]
    print(f"the same rows in every store; target: ingest at most {TARGET:g}× the floor: "
          f"{'meets' if ratio <= TARGET else 'misses'} it ({ratio:.2f}×)")


if __name__ == "__main__":
    main()
