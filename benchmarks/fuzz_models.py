"""Fuzz the files a user may be handed, on demand: models, checkpoints and stores.

    python benchmarks/fuzz_models.py [--files models,checkpoints,stores] [--cases 1000]
                                     [--kinds fqi,bc] [--seed 0]

The cases of ``tests/test_fuzz_models.py`` (``tests/model_fuzzing.py`` makes the
seeds and the mutations), drawn from a seeded generator, as many per kind as asked:
fqi joint, per action and with the support constraint, bc, and the network (where
torch is installed), each loaded and played as ``evaluate`` does. Per kind it prints
the cases; those that loaded and played; those refused with the project's one-line
error; and the escapes: tracebacks, hangs (past 20 s) and cases whose peak memory
(tracemalloc) passed 1.5 GB; with the largest peak seen. Each escape is printed (the
first few per kind) with its mutation and seed, so it can be replayed.

``--files checkpoints``: fqi checkpoints (joint, and per action with its trees set
aside), one of their files mutated as a model is, each resumed (a clean refusal is a
ValueError naming the checkpoint). ``--files stores``: a hold'em store's parts and
store.json mutated (``tests/store_fuzzing.py``), each opened, checked and read.

Exit status 1 if anything escaped, else 0.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the cases: tests/model_fuzzing.py

import model_fuzzing  # noqa: E402
import store_fuzzing  # noqa: E402
from model_fuzzing import MUTATIONS, mutate, run_case, seed_models  # noqa: E402

from batchrl.store import StoreError  # noqa: E402

SHOWN_PER_KIND = 3


def kinds_of(files: str, tmp: Path) -> list[tuple[str, Callable[[Path, random.Random], Path],
                                                  Callable[[Path], Any]]]:
    """Per kind of file: its name, how to make a mutated case, how to judge one."""
    out: list[tuple[str, Callable[[Path, random.Random], Path], Callable[[Path], Any]]] = []
    if files == "models":
        models, play = seed_models(tmp / "models")
        for kind, seed in models.items():
            def make(case: Path, rng: random.Random, seed: Path = seed) -> Path:
                mutate(seed, case, rng.choice(MUTATIONS), rng)
                return case
            out.append((kind, make, lambda case, play=play: run_case(case, play)))
    elif files == "checkpoints":
        seeds, resume = model_fuzzing.seed_checkpoints(tmp / "checkpoints")
        for kind, seed in seeds.items():
            def make(case: Path, rng: random.Random, seed: Path = seed,
                     kind: str = kind) -> Path:
                case = case.with_name(f"{case.stem}-{kind}.npz.ckpt")
                model_fuzzing.mutate_checkpoint(seed, case, rng.choice(MUTATIONS), rng)
                return case
            out.append((f"checkpoint-{kind}", make, lambda case, resume=resume: run_case(
                case, resume, clean=(ValueError, StoreError))))
    else:
        store, read = store_fuzzing.seed_store(tmp / "stores")

        def make_store(case: Path, rng: random.Random) -> Path:
            store_fuzzing.mutate_store(store, case, rng.choice(store_fuzzing.MUTATIONS), rng)
            return case
        out.append(("store", make_store,
                    lambda case: store_fuzzing.run_store_case(case, read)))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", default="models,checkpoints,stores")
    parser.add_argument("--cases", type=int, default=1000, help="cases per kind")
    parser.add_argument("--kinds", default="", help="comma-separated (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    escaped = 0
    print(f"{'kind':<20} {'cases':>6} {'read':>6} {'refused':>8} {'tracebacks':>11} "
          f"{'hangs':>6} {'memory':>7} {'peak MB':>8} {'seconds':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for files in args.files.split(","):
            (Path(tmp) / files).mkdir()
            for kind, make, judge in kinds_of(files, Path(tmp)):
                if args.kinds and kind not in args.kinds.split(","):
                    continue
                rng = random.Random(f"{kind}-{args.seed}")
                counts: Counter[str] = Counter()
                shown, peak, started = [], 0, time.perf_counter()
                for i in range(args.cases):
                    case = make(Path(tmp) / f"case-{i}", rng)
                    outcome = judge(case)
                    if case.is_dir() and not case.is_symlink():
                        shutil.rmtree(case, ignore_errors=True)
                    else:
                        case.unlink(missing_ok=True)
                    peak = max(peak, outcome.peak)
                    if outcome.escape:
                        what = ("hangs" if outcome.escape.startswith("hang") else "memory"
                                if outcome.escape.startswith("peak memory") else "tracebacks")
                        counts[what] += 1
                        if len(shown) < SHOWN_PER_KIND:
                            shown.append(f"  {kind} case {i}: {outcome.escape}")
                    else:
                        counts["read" if outcome.loaded else "refused"] += 1
                escaped += counts["tracebacks"] + counts["hangs"] + counts["memory"]
                print(f"{kind:<20} {args.cases:>6} {counts['read']:>6} {counts['refused']:>8} "
                      f"{counts['tracebacks']:>11} {counts['hangs']:>6} {counts['memory']:>7} "
                      f"{peak / 2**20:>8.0f} {time.perf_counter() - started:>8.1f}",
                      flush=True)
                for line in shown:
                    print(line)
    return 1 if escaped else 0


if __name__ == "__main__":
    sys.exit(main())
