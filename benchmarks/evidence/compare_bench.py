"""Compare two ``batchrl bench --json`` documents row by row, leaving out what a rerun
changes by itself (CPU and wall seconds, where the scores files went).

    python benchmarks/evidence/compare_bench.py BEFORE.json AFTER.json
"""

from __future__ import annotations

import json
import sys
from typing import Any

TIMING = {"cpu_seconds", "seconds", "scores"}


def strip(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in TIMING} for r in rows]


def main(before_path: str, after_path: str) -> int:
    with open(before_path) as f:
        before = json.load(f)
    with open(after_path) as f:
        after = json.load(f)
    same = True
    for key in ("rows", "summary", "paired"):
        a, b = strip(before.get(key, [])), strip(after.get(key, []))
        equal = sum(x == y for x, y in zip(a, b, strict=False))
        print(f"{key}: {len(a)} before, {len(b)} after, {equal} identical "
              f"(all but {', '.join(sorted(TIMING))})")
        same = same and len(a) == len(b) == equal
    other = sorted(k for k in before if k not in ("rows", "summary", "paired")
                   and before[k] != after.get(k))
    print(f"other keys that differ: {', '.join(other) or 'none'}")
    return 0 if same and not other else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
