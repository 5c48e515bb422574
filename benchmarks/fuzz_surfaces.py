"""Fuzz what a string, a setting or a file on disk can make batchrl do, by the thousand.

    python benchmarks/fuzz_surfaces.py [--kinds search,network,rows,bench] [--cases 1000]
                                       [--seed 0] [--quick]

The cases of ``tests/test_fuzz_surfaces.py`` (``tests/surface_fuzzing.py`` makes and
judges them), drawn from a seeded generator, as many per kind as asked: search players'
names played in Leduc, ``learn network``'s shapes and settings, crafted rows in a store's
part, and a finished bench's files damaged before it runs again. Per kind it prints the
cases; those that ran to a right result; those refused with the project's one-line
error; and the escapes: tracebacks, hangs (past 60 s), peak resident memory past 2 GB,
and wrong results with exit 0; with the largest peak seen and the seconds. Each escape
is printed (the first few per kind) with its case, so it can be replayed.

Exit status 1 if anything escaped, else 0.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the cases: tests/surface_fuzzing.py

import _args  # noqa: E402  (benchmarks/, the script's own folder)
import surface_fuzzing as sf  # noqa: E402

SHOWN_PER_KIND = 3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kinds", default=",".join(sf.KINDS))
    parser.add_argument("--cases", type=int, default=None, help="cases per kind")
    parser.add_argument("--seed", type=int, default=0)
    args = _args.parse(parser, defaults={"cases": 1000}, quick={"cases": 20})
    kinds = [k for k in args.kinds.split(",") if k]
    if unknown := sorted(set(kinds) - set(sf.KINDS)):
        parser.error(f"no kind {', '.join(unknown)}: the kinds are {', '.join(sf.KINDS)}")
    escaped = 0
    print(f"{'kind':<10} {'cases':>6} {'right':>6} {'refused':>8} {'tracebacks':>11} "
          f"{'hangs':>6} {'memory':>7} {'wrong':>6} {'peak MB':>8} {'seconds':>8}",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="batchrl-fuzz-") as tmp:
        root = Path(tmp)
        store = sf.leduc_store(root / "leduc") if {"network", "rows"} & set(kinds) else None
        bench, table = sf.bench_seed(root / "bench") if "bench" in kinds else (None, [])
        for kind in kinds:
            rng = random.Random(f"{kind}-{args.seed}")
            counts: Counter[str] = Counter()
            shown: list[str] = []
            peak, started = 0, time.perf_counter()
            for i in range(args.cases):
                case = root / f"case-{i}"
                if kind == "search":
                    what = sf.search_spec(rng)
                    outcome = sf.search_case(what)
                elif kind == "network":
                    assert store is not None
                    settings = sf.network_args(rng)
                    what = " ".join(settings)
                    outcome = sf.network_case(store, settings, case.with_suffix(".npz"))
                    case.with_suffix(".npz").unlink(missing_ok=True)
                elif kind == "rows":
                    assert store is not None
                    what = sf.crafted_rows(store, case, rng)
                    outcome = sf.rows_case(case)
                else:
                    assert bench is not None
                    what = sf.damaged_bench(bench, case, rng)
                    outcome = sf.bench_case(case, table)
                sf.clear(case)
                peak = max(peak, outcome.peak)
                if outcome.escape:
                    esc = outcome.escape
                    counts["hangs" if esc.startswith("hang") else "memory"
                           if esc.startswith("peak memory") else "wrong"
                           if esc.startswith("wrong") else "tracebacks"] += 1
                    if len(shown) < SHOWN_PER_KIND:
                        shown.append(f"  {kind} case {i} ({what[:200]!r}): {esc}")
                else:
                    counts["right" if outcome.ok else "refused"] += 1
                if sys.stderr.isatty() and i % 10 == 0:
                    print(f"\r{kind}: {i + 1:,}/{args.cases:,}", end="", file=sys.stderr)
            bad = counts["tracebacks"] + counts["hangs"] + counts["memory"] + counts["wrong"]
            escaped += bad
            print(f"\r{kind:<10} {args.cases:>6} {counts['right']:>6} {counts['refused']:>8} "
                  f"{counts['tracebacks']:>11} {counts['hangs']:>6} {counts['memory']:>7} "
                  f"{counts['wrong']:>6} {peak / 2**20:>8.0f} "
                  f"{time.perf_counter() - started:>8.1f}", flush=True)
            for line in shown:
                print(line, flush=True)
    return 1 if escaped else 0


if __name__ == "__main__":
    sys.exit(main())
