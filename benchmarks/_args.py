"""Shared by the benchmarks: options whose defaults a --quick smoke run shrinks, pinning a
one-core benchmark to its core, and a git revision's code to time beside this tree's."""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def parse(parser: argparse.ArgumentParser, defaults: Mapping[str, int],
          quick: Mapping[str, int]) -> argparse.Namespace:
    """Add ``--quick`` to ``parser``, parse, and fill each option left unset from
    ``quick`` (with ``--quick``) or ``defaults``."""
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: " + ", ".join(f"{k} {v:,}" for k, v in quick.items()))
    args = parser.parse_args()
    for key, value in (quick if args.quick else defaults).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    return args


def pin(core: int) -> str:
    """Pin this process to ``core`` where the OS allows; a line saying what was done."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {core})
        pinned = f"pinned to core {core} (os.sched_setaffinity)"
    else:
        pinned = "not pinned (no os.sched_setaffinity here)"
    return f"one core: {pinned}; numpy thread pools at 1 thread; os.cpu_count() = {os.cpu_count()}"


@contextlib.contextmanager
def worktree(revision: str) -> Iterator[Path]:
    """``revision`` checked out in a temporary git worktree (removed after), to time its
    code beside this tree's in the same run."""
    with tempfile.TemporaryDirectory(prefix="batchrl-baseline-") as scratch:
        tree = Path(scratch) / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree),
                        revision], check=True, capture_output=True)
        try:
            yield tree
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(tree)], check=False, capture_output=True)


def tree_env(tree: Path) -> dict[str, str]:
    """The environment in which ``python -m batchrl`` runs ``tree``'s code (not the working
    directory's, nor the installed one's); exits if batchrl would come from elsewhere."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONSAFEPATH": "1"}
    where = subprocess.run([sys.executable, "-c", "import batchrl; print(batchrl.__file__)"],
                           env=env, text=True, capture_output=True, check=True).stdout
    if not Path(where.strip()).resolve().is_relative_to(tree.resolve()):
        raise SystemExit(f"batchrl is imported from {where.strip()}, not from {tree}")
    return env
