"""Shared by the benchmarks: options whose defaults a --quick smoke run shrinks."""

from __future__ import annotations

import argparse
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
