"""Shared by the command modules: option help, name lists and progress bars."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import click

T = TypeVar("T")
STORE_HELP = "Store directory [default: datasets/store, or $BATCHRL_STORE]."
GAMES = ("holdem", "sette-mezzo", "hanabi", "tressette")


def split_names(values: tuple[str, ...]) -> tuple[str, ...]:
    """Feature names given as repeated options, or comma-separated, or both."""
    return tuple(n.strip() for v in values for n in v.split(",") if n.strip())


def advancing(items: Iterable[T], advance: Callable[[int], None]) -> Iterator[T]:
    """``items``, telling ``advance`` of each one as it goes by."""
    for item in items:
        yield item
        advance(1)


@contextmanager
def progress(total: int, label: str) -> Iterator[Callable[[int], None]]:
    """A progress bar on a terminal (to stderr); nothing when output is piped."""
    if not sys.stderr.isatty():
        yield lambda n: None
        return
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield bar.update
