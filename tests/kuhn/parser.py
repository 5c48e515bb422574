"""Kuhn poker logs (``KJ pbb``, one hand a line) as records: the toy game's parser module.

Each hand is replayed through the rules; a line that is no hand comes out as a
``BadLine`` naming the file, the line and what was wrong.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from batchrl.games import Format, Source
from batchrl.games.play import Trajectory
from batchrl.records import BadLine
from kuhn import CARDS, RULES, KuhnHand, KuhnState


def sniff(path: Path, head: Sequence[str]) -> bool:
    return bool(head) and all(_shape(line) for line in head)


def _shape(line: str) -> bool:
    parts = line.split()
    return len(parts) == 2 and len(parts[0]) == 2 and set(parts[0]) <= set(CARDS) \
        and set(parts[1]) <= set("pb")


def read(source: Source) -> Iterator[Any]:
    assert source.lines is not None
    index = 0
    for number, text in enumerate(source.lines, 1):
        if not text.strip():
            continue
        try:
            hand = _replay(text)
        except ValueError as exc:
            yield BadLine(str(source.path), number, str(exc), text)
            continue
        yield KuhnHand(str(source.path), number, index, hand)
        index += 1


def _replay(text: str) -> Trajectory:
    if not _shape(text) or text[0] == text[1]:
        raise ValueError(f"{text!r} is not a hand: want two different cards of JQK, then "
                         "the moves (p pass, b bet), e.g. 'KJ pbb'")
    state = KuhnState((CARDS.index(text[0]), CARDS.index(text[1])))
    states = [state]
    for move in text.split()[1]:
        states.append(RULES.step(states[-1], "pb".index(move)))
    if not RULES.is_terminal(states[-1]):
        raise ValueError(f"the hand {text.split()[1]!r} is not over")
    return Trajectory(tuple(states), tuple("pb".index(m) for m in text.split()[1]))


FORMAT = Format("kuhn", "kuhn", "a Kuhn poker log (KJ pbb)", sniff, read)
