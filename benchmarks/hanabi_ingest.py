"""Hanabi JSON ingest against its floor: parsing the same files with Python's ``json``.

    python benchmarks/hanabi_ingest.py [--games 1000] [--runs 3] [--quick]

The report's state/action pairs (``game000000.states.jsonl`` and its ``.actions.jsonl``,
about 200 KB a game) of ``bot2`` self-play are generated here. Each measure is a whole
process, run ``--runs`` times in turn (floor, ingest, floor, ingest, …) and its fastest
run kept:

1. **the floor** (the baseline): ``json.loads`` of every line of every file, nothing
   else, in a fresh Python;
2. **``batchrl ingest DIR --store S``**: read, check every move against the rules,
   encode, write the Parquet part, in a fresh process (its imports included).

Prints each one's seconds and games/s and the ingest's time as a ratio to the floor
(the issue's target: at most 2×), and the ingest's own figure (its reading only, from
its report line).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import _args  # noqa: E402  (benchmarks/, the script's own folder)

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


def _timed(command: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
    return time.perf_counter() - start, done.stdout + done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, help=f"games generated ({DEFAULTS['games']:,})")
    parser.add_argument("--runs", type=int, help=f"runs of each, the fastest kept "
                                                 f"({DEFAULTS['runs']})")
    args = _args.parse(parser, DEFAULTS, QUICK)
    with tempfile.TemporaryDirectory(prefix="hanabi-ingest-") as work:
        measure(Path(work), args.games, args.runs)


def measure(work: Path, count: int, runs: int) -> None:
    """Generate ``count`` games under ``work`` and time the floor and the ingest."""
    games = work / "games"
    generate(games, ["bot2", "bot2"], count, seed=1)
    size = sum(p.stat().st_size for p in games.iterdir())
    print(f"{count:,} games of bot2 self-play ({size / 1e6:.0f} MB of JSON lines); "
          f"each measure a whole process, the fastest of {runs}")
    floor: list[float] = []
    ingest: list[float] = []
    reading: list[float] = []
    for run in range(runs):
        floor.append(_timed([sys.executable, "-c", FLOOR, str(games)])[0])
        store = work / f"store{run}"
        seconds, out = _timed([sys.executable, "-m", "batchrl", "ingest", str(games),
                               "--store", str(store)])
        ingest.append(seconds)
        if m := re.search(r"decisions in ([0-9.]+) s", out):
            reading.append(float(m.group(1)))
    best_floor, best_ingest = min(floor), min(ingest)
    print(f"{'measure':<44} {'seconds':>8} {'games/s':>8} {'ratio':>6}")
    print(f"{'json.loads of every line (floor, baseline)':<44} {best_floor:>8.2f} "
          f"{count / best_floor:>8.0f} {1.0:>6.2f}")
    print(f"{'batchrl ingest, the whole process':<44} {best_ingest:>8.2f} "
          f"{count / best_ingest:>8.0f} {best_ingest / best_floor:>6.2f}")
    if reading:
        print(f"{'  of which reading and encoding (its report)':<44} {min(reading):>8.2f} "
              f"{count / min(reading):>8.0f} {min(reading) / best_floor:>6.2f}")
    verdict = "meets" if best_ingest / best_floor <= TARGET else "misses"
    print(f"target: ingest at most {TARGET:g}× the floor: {verdict} it "
          f"({best_ingest / best_floor:.2f}×)")


if __name__ == "__main__":
    main()
