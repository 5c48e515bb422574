"""Tressette ingest speed: hands/s from a JSON Lines log into a store.

    python benchmarks/tressette_ingest.py [--hands 20000] [--quick]

The issue's target: ingest >= 10,000 hands/s. The baseline, measured in the
same run, is reading the log the plain way: ``parsers.tressette.read_tressette``
with its replay of every hand through ``rules.step`` (parse and check, no
rows). Measured: ``batchrl.ingest`` end to end (read and check, lockstep
check and features, rows, Parquet part), with its reading process (the
default on two cores or more) and with the lines read in the ingesting
process (``--jobs 0``); and its parts timed alone: what the reading process
does (parse without the replay, the deals as arrays), the rows
(``transitions.deal_rows``), and writing the Parquet part.

The log is generated here (seed-heuristic, random, seed-heuristic, random).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import _args  # noqa: E402  (benchmarks/, the script's own folder)
import numpy as np  # noqa: E402

from batchrl.games.tressette.logs import play, write_log  # noqa: E402
from batchrl.games.tressette.transitions import Deals, deal_rows, schema  # noqa: E402
from batchrl.ingest import IngestConfig, ingest  # noqa: E402
from batchrl.store import Store  # noqa: E402
from parsers.tressette import (  # noqa: E402
    LoggedGame,
    default_jobs,
    read_tressette,
)

DEFAULTS = {"hands": 20_000, "repeat": 3}
QUICK = {"hands": 2_000, "repeat": 1}
TARGET = 10_000
SEATS = ("seed-heuristic", "random", "seed-heuristic", "random")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hands", type=int, help=f"hands in the log ({DEFAULTS['hands']:,})")
    parser.add_argument("--repeat", type=int, help=f"runs, median reported ({DEFAULTS['repeat']})")
    args = _args.parse(parser, DEFAULTS, QUICK)
    work = Path(tempfile.mkdtemp(prefix="tressette-ingest-"))
    log = work / "hands.jsonl"
    write_log(log, play(SEATS, args.hands, seed=1), "jsonl")
    lines = log.read_text().splitlines()
    print(f"{args.hands:,} hands ({log.stat().st_size / 1e6:.1f} MB of JSON lines); "
          f"median of {args.repeat}; reading processes by default here: {default_jobs()}")

    def timed(fn: object) -> float:
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            fn()  # type: ignore[operator]
            times.append(time.perf_counter() - started)
        return statistics.median(times)

    def baseline() -> None:
        for _ in read_tressette(lines, str(log)):
            pass

    def parse_only() -> list[Deals]:
        games = [r for r in read_tressette(lines, str(log), replay=False)
                 if isinstance(r, LoggedGame)]
        return [Deals.of(games[start:start + 1024]) for start in range(0, len(games), 1024)]

    deals = Deals.concat(parse_only())
    prefix = "0" * 16 + ":"
    chunks = [deals.take(np.arange(start, min(start + 2048, len(deals))))
              for start in range(0, len(deals), 2048)]
    blocks = [deal_rows(chunk, prefix, dictionaries=True)[0] for chunk in chunks]

    def rows_only() -> None:
        for chunk in chunks:
            deal_rows(chunk, prefix, dictionaries=True)

    def write_only() -> None:
        store = Store.create(work / f"w{time.perf_counter_ns()}", schema())
        with store.writer(work / "w.jsonl", "0" * 64) as writer:
            for block in blocks:
                writer.write(block)

    def whole(jobs: int | None = None) -> None:
        ingest(IngestConfig(paths=(log,), store=work / f"s{time.perf_counter_ns()}",
                            options={"jobs": jobs} if jobs is not None else {}))

    results = [("parse + replay with rules.step (baseline)", timed(baseline)),
               ("batchrl ingest, end to end", timed(whole)),
               ("  the same, lines read here (--jobs 0)", timed(lambda: whole(0))),
               ("  of which: read and check (the reader)", timed(parse_only)),
               ("  of which: lockstep check, features, rows", timed(rows_only)),
               ("  of which: writing the Parquet part", timed(write_only))]
    base = results[0][1]
    print(f"\n{'run':<44} {'seconds':>8} {'hands/s':>9} {'x baseline':>11}")
    for name, seconds in results:
        print(f"{name:<44} {seconds:>8.2f} {args.hands / seconds:>9,.0f} "
              f"{base / seconds:>11.2f}")
    rate = args.hands / results[1][1]
    print(f"\ntarget >= {TARGET:,} hands/s: {'met' if rate >= TARGET else 'NOT met'} "
          f"({rate:,.0f})")


if __name__ == "__main__":
    main()
