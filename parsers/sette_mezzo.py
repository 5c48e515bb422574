"""Sette e mezzo game logs (JSON Lines, see ``batchrl.games.sette_mezzo.logs``) as records.

Each line is read into a ``LoggedGame`` and replayed through the rules, so a record
that comes out is a game the rules play exactly as logged. A line that is not one
comes out as a ``BadLine`` naming the file, the line and what was wrong; no exception
escapes for bad input. Blank lines are skipped.

>>> lines = ['{"seed": 7, "limit": 5, "player": [3, 0.5], "opponent": [3, 1, 7], '
...          '"actions": "hs", "reward": 1}',
...          '{"limit": 5, "player": [3], "opponent": [6], "actions": "s", "reward": 1}']
>>> good, bad = read_sette_mezzo(lines, "g.jsonl")
>>> good.line, good.game.player, good.game.reward
(1, (3, 0), 1.0)
>>> print(bad)
g.jsonl, line 2: the rules give the player -1; the log says 1
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from batchrl.games import Format, Source, register_format
from batchrl.games.sette_mezzo.logs import Game
from batchrl.records import BadLine, LogLines


@dataclass(frozen=True, slots=True)
class LoggedGame:
    """One game as a log line tells it, checked by replaying it."""

    source: str
    line: int  # 1-based
    index: int  # ordinal among the file's games
    game: Game


Record = LoggedGame | BadLine


def read_sette_mezzo(lines: Iterable[str], source: str, start: int = 1) -> Iterator[Record]:
    """Records of a sette e mezzo log from its lines (numbered from ``start``)."""
    index = 0
    for lineno, text in enumerate(lines, start):
        if not text.strip():
            continue
        try:
            game = Game.from_json(text)
            game.replay()
        except ValueError as e:  # ReplayError included: the game does not play as logged
            yield BadLine(source, lineno, str(e), text)
            continue
        yield LoggedGame(source, lineno, index, game)
        index += 1


def read_file(path: str | Path) -> Iterator[Record]:
    """Records of the log at ``path``, read as bytes so an odd byte spoils only its line."""
    return read_sette_mezzo(LogLines(path), str(path))


def sniff(path: Path, head: Sequence[str]) -> bool:
    """A sette e mezzo log: its first line is a JSON object with an ``opponent``."""
    return bool(head) and head[0].lstrip().startswith("{") and '"opponent"' in head[0]


def read(source: Source) -> Iterator[Record]:
    return read_sette_mezzo(source.lines if source.lines is not None
                            else LogLines(source.path), str(source.path))


register_format(Format("sette-mezzo", "sette-mezzo", "a sette e mezzo game log (JSON lines)",
                       sniff, read))
