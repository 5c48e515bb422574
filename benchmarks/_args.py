"""Shared by the benchmarks: options whose defaults a --quick smoke run shrinks, and
pinning a one-core benchmark to its core."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping


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
