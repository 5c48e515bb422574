"""A command's speed here against a named revision's: the same whole process in turn, and
whether both printed the same results.

    python benchmarks/search_speed.py --baseline REV [--runs 2] -- evaluate --game tressette \
        --players search:model:expert-bc.npz,rule --games 100

The ``batchrl`` command after ``--`` runs as a fresh process at the baseline (the
revision ``REV``, checked out in a temporary git worktree) and in this working tree, in
turn (baseline, here, baseline, here, ...), ``--runs`` times each; each side's fastest
run is kept. Prints the seconds of each, the ratio (the baseline's time over this tree's:
above 1, this tree is faster) and whether the two printed the same report: a search that
makes the same decisions for the same seed gives the same scores to the last digit (a
changed move that changed no hand's points would not show: the tests compare the moves
themselves). A report's rate lines (``4,037 hands/s``) are timings, not results: they are
left out of the comparison. Nothing else should load the machine.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import _args  # noqa: E402  (benchmarks/, the script's own folder)


def timed(tree: Path, command: list[str]) -> tuple[float, str]:
    """Seconds of ``python -m batchrl COMMAND`` run from ``tree``'s code, and its report
    (stdout; the progress lines go to stderr)."""
    env = _args.tree_env(tree)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "batchrl", *command], env=env, text=True,
                          capture_output=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{tree}: batchrl {' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return seconds, done.stdout


def results(report: str) -> str:
    """A report less its rate lines (``4,037 hands/s``, ``12.0 a second``): what two runs of
    the same decisions print alike.

    >>> results("all  +1.8  20,000\\n4,037 hands/s\\n")
    'all  +1.8  20,000\\n'
    """
    return "".join(line for line in report.splitlines(keepends=True)
                   if not re.search(r"(/s|a second)\s*$", line))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="the git revision measured against")
    parser.add_argument("--runs", type=int, default=2, help="runs of each side")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="after --: the batchrl command (evaluate ...)")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the batchrl command after --")
    with _args.worktree(args.baseline) as base:
        best = {"baseline": float("inf"), "here": float("inf")}
        reports: dict[str, str] = {}
        for run in range(args.runs):
            for side, tree in (("baseline", base), ("here", ROOT)):
                seconds, report = timed(tree, command)
                best[side] = min(best[side], seconds)
                reports[side] = report
                print(f"run {run + 1}, {side}: {seconds:.1f} s", flush=True)
    print(f"\nbatchrl {' '.join(command)}")
    print(f"{'side':<44} {'seconds':>8} {'ratio':>6}")
    print(f"{'baseline ' + args.baseline:<44} {best['baseline']:>8.1f} {1.0:>6.2f}")
    print(f"{'this tree':<44} {best['here']:>8.1f} {best['baseline'] / best['here']:>6.2f}")
    same = results(reports["baseline"]) == results(reports["here"])
    print(f"the same report: {'yes' if same else 'NO'}")
    if not same:
        print(f"--- baseline\n{reports['baseline']}--- this tree\n{reports['here']}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
