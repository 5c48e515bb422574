"""President logs (JSON Lines, see ``batchrl.games.president.logs``) as records.

Each line is read and replayed through the rules (``LoggedGame.from_json``): a record
that comes out is a game the rules play exactly as logged, to its finishing order and
results. A line that is none comes out as a ``BadLine`` naming the file, the line and
what was wrong; no exception escapes for bad input. Blank lines are skipped.

>>> from batchrl.games.president import play_games
>>> good = play_games(["rule", "random"], 1, seed=3)[0].to_json()
>>> first, bad = read_president([good, good.replace('"moves":["', '"moves":["pass","')], "p")
>>> first.line, first.game.order == play_games(["rule", "random"], 1, seed=3)[0].order
(1, True)
>>> print(bad)
p, line 2: move 1 (seat 0): pass: seat 0 holds the 2 of golds and must lead it
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from batchrl.games import Format, Source, register_format
from batchrl.games.president.logs import LoggedGame, PresidentRecord
from batchrl.records import BadLine, LogLines

MAX_LINE = 1 << 20  # a game's line is a few KB


def read_president(lines: Iterable[str], source: str, start: int = 1
                   ) -> Iterator[PresidentRecord | BadLine]:
    """Records of a President log from its lines (numbered from ``start``)."""
    for number, text in enumerate(lines, start):
        if not text.strip():
            continue
        if len(text) > MAX_LINE:
            yield BadLine(source, number, f"a line of {len(text):,} characters: a game's "
                          f"line is a few thousand", text[:80])
            continue
        try:
            game = LoggedGame.from_json(text)
        except (ValueError, RecursionError) as e:
            yield BadLine(source, number, str(e)[:300], text)
            continue
        yield PresidentRecord(source, number, game)


def sniff(path: Path, head: Sequence[str]) -> bool:
    """A President log: its first line that is not blank is a JSON object naming the
    game."""
    first = next((line for line in head if line.strip()), "")
    return first.lstrip().startswith("{") and '"game":"president"' in first.replace(" ", "")


def read(source: Source) -> Iterator[PresidentRecord | BadLine]:
    return read_president(source.lines if source.lines is not None
                          else LogLines(source.path), str(source.path))


register_format(Format("president", "president", "a President game log (JSON lines)",
                       sniff, read))
