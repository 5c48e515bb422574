"""Fuzz the ingest on demand: mutated logs of every format, by the thousand.

    python benchmarks/fuzz.py [--cases 1000] [--formats acpc,tressette] [--seed 0] [--quick]

The cases of ``tests/test_fuzz.py``, drawn from a seeded generator instead of
hypothesis, and as many as asked: each a log of the project's own players
(``tests/fuzzing.py`` writes them) with one to three mutations (bit flips, lines
deleted, doubled or swapped, a cut, binary garbage, huge numbers, deep nesting,
bytes that are no UTF-8, fields up to past the longest line a reader reads),
ingested with ``--on-error skip`` (then ``fail`` if anything was skipped), a third
of them with ``--format`` given. Per format it prints the cases; those that stored
rows (with ``skip``); those where the ingest stopped with its own one-line error (in
either mode: a case can store rows with ``skip`` and stop with ``fail``); the
tracebacks (anything else that escaped); the hangs (a case still running after 30 s);
and the wrong rows, the cases that broke a check (a message over 1,500 characters, an
episode whose rewards do not add up to its logged result); then the process's peak
memory, every case's included. Each escape and broken
check is printed (the first few per format) with its mutations, so it can be replayed.

Exit status 1 if anything escaped or broke a check, else 0.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the cases: tests/fuzzing.py

import _args  # noqa: E402  (benchmarks/, the script's own folder)
import numpy as np  # noqa: E402
from fuzzing import FORMATS, case_files, random_mutations, run_case, seed_logs  # noqa: E402

SHOWN_PER_FORMAT = 3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=None, help="cases per format")
    parser.add_argument("--formats", default=",".join(FORMATS),
                        help=f"formats to fuzz, comma-separated (default: all: "
                             f"{', '.join(FORMATS)})")
    parser.add_argument("--seed", type=int, default=0, help="seeds the mutations")
    args = _args.parse(parser, defaults={"cases": 1000}, quick={"cases": 30})
    formats = [f for f in args.formats.split(",") if f]
    if unknown := sorted(set(formats) - set(FORMATS)):
        parser.error(f"no format {', '.join(unknown)}: the formats are {', '.join(FORMATS)}")
    rng = np.random.default_rng(args.seed)
    header = (f"{'format':<22}{'cases':>8}{'rows stored':>13}{'clean errors':>14}"
              f"{'tracebacks':>12}{'hangs':>7}{'wrong rows':>12}{'seconds':>9}")
    totals = [0, 0, 0, 0, 0, 0]
    with tempfile.TemporaryDirectory(prefix="batchrl-fuzz-") as tmp:
        seeds = seed_logs(Path(tmp) / "seeds")
        print(header, flush=True)
        for fmt in formats:
            counts = [0, 0, 0, 0, 0, 0]  # cases, rows, errors, tracebacks, broken, hangs
            shown = 0
            started = time.perf_counter()
            for k in range(args.cases):
                seed = seeds[fmt][int(rng.integers(len(seeds[fmt])))]
                mutations = random_mutations(rng, len(case_files(seed)))
                forced = bool(rng.random() < 1 / 3)
                outcome = run_case(fmt, seed, mutations, Path(tmp) / "case", forced=forced)
                counts[0] += 1
                counts[1] += outcome.rows > 0
                counts[2] += bool(outcome.error) and not outcome.escape
                counts[3] += bool(outcome.escape) and not outcome.hung
                counts[4] += bool(outcome.problems)
                counts[5] += outcome.hung
                if not outcome.ok and shown < SHOWN_PER_FORMAT:
                    shown += 1
                    what = outcome.escape or "\n".join(outcome.problems)
                    print(f"\n{fmt}, case {k} ({seed.name}, --format given: {forced}): "
                          f"{mutations}\n{what}", file=sys.stderr, flush=True)
                if sys.stderr.isatty() and (k % 10 == 0 or k == args.cases - 1):
                    print(f"\r{fmt}: {k + 1:,}/{args.cases:,} cases, {counts[3] + counts[5]} "
                          f"escapes",
                          end="", file=sys.stderr, flush=True)
                elif not sys.stderr.isatty() and (k + 1) % max(args.cases // 10, 1) == 0:
                    print(f"{fmt}: {k + 1:,}/{args.cases:,} cases, {counts[3]} escapes",
                          file=sys.stderr, flush=True)
            if sys.stderr.isatty():
                print("\r" + " " * 60 + "\r", end="", file=sys.stderr, flush=True)
            seconds = time.perf_counter() - started
            print(f"{fmt:<22}{counts[0]:>8,}{counts[1]:>13,}{counts[2]:>14,}{counts[3]:>12,}"
                  f"{counts[5]:>7,}{counts[4]:>12,}{seconds:>9.1f}", flush=True)
            totals = [t + c for t, c in zip(totals, counts, strict=True)]
    print(f"{'total':<22}{totals[0]:>8,}{totals[1]:>13,}{totals[2]:>14,}{totals[3]:>12,}"
          f"{totals[5]:>7,}{totals[4]:>12,}")
    if sys.platform != "win32":
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
        print(f"peak memory of this process, every case included: "
              f"{peak / (1 << 20 if sys.platform == 'darwin' else 1 << 10):,.0f} MiB")
    return 1 if totals[3] or totals[4] or totals[5] else 0


if __name__ == "__main__":
    sys.exit(main())
