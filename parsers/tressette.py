"""Tressette logs as records: batchrl's JSON Lines and the seed project's transcript.

Both formats are described in ``batchrl.games.tressette.logs``. Each game read is
replayed through the rules (``Game.replay``), so a ``LoggedGame`` that comes out is a
game the rules play exactly as logged. Anything else comes out as a ``BadLine``
naming the file, the line and what was wrong; no exception escapes for bad input.
A whole game always comes out with its points (the rules', checked against the
log's where it gives them).

JSON Lines (``read_tressette``): one game a line; blank lines are skipped. The plays
must be legal from the logged ``hands``, and, 40 plays emptying the four hands, the
hands are exactly what the plays show. A line of fewer than 40 plays is a hand cut
off: ``truncated``, replayed in full as far as it goes, no points.

Transcript (``read_transcript``): a game starts at a ``[DEBUG] Seed partita`` line,
or at a ``Giocatore`` line after a game's 40 plays or its end block. The deal is
rebuilt from the plays (seat s held the cards seat s played), the leader is the
first play's seat, the agent names come from the lines (a seat never seen: ``""``).
Checked: seat numbers, cards, each card played once, each seat one name, whose
turn it is (the winner of a trick leads the next), following suit, and the end
block (``Team`` lines against the rules' points, ``Vince TEAM``/``Pareggio!``
against them). A game cut off before 40 plays (the file ends, or the next
``[DEBUG]`` line comes) is kept with ``truncated=True`` and no points; its
``hands`` hold only the cards each seat was seen to play, as a transcript cannot
tell who held the cards never played. Its plays are checked as far as they go:
turns and cards in full, following suit only against what is known (a seat that
plays off suit and later in the transcript plays the led suit is caught; a card of
the led suit it held but never showed cannot be). A bad line inside a game spoils
the game: one ``BadLine`` (the first fault) comes out for it and the rest of its
lines are passed over. A line that is no transcript line at all comes out as a
``BadLine`` and leaves the game around it alone. A game comes out when it ends,
so after the ``BadLine``s of lines inside it; ``line`` is its first line.

>>> from batchrl.games.tressette.logs import play, transcript_lines
>>> game = next(play(["rule", "random", "rule", "random"], 1, seed=3))
>>> lines = [*transcript_lines(game),                               # lines 1 to 45
...          "Giocatore 0 (me) gioca AD)", "Giocatore 1 (you) gioca 4C)",
...          "Giocatore 2 (me) gioca 5D)", "Giocatore 3 (you) gioca 6D)",
...          "Giocatore 0 (me) gioca 7D)", "Giocatore 1 (you) gioca 4D)"]
>>> whole, bad = read_transcript(lines, "t.txt")
>>> whole.game == game, whole.line, whole.game.points
(True, 1, (7, 4))
>>> print(bad)
t.txt, line 47: play 2: seat 1 cannot play 4C: it must follow denari (holds 4D)
>>> cut, = read_transcript(["Giocatore 2 (me) gioca 3B)", "Giocatore 3 (you) gioca 4B)"], "c")
>>> cut.game.truncated, cut.game.leader, cut.game.hands, cut.game.points
(True, 2, ((), (), (39,), (30,)), None)
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from batchrl.forked import in_order, jobs_wanted, reading_processes, usable_cores
from batchrl.games import Format, Source, register_format
from batchrl.games.jsonlines import parse_json
from batchrl.games.tressette.ingest import deal_ref, whole_deals
from batchrl.games.tressette.logs import (
    DRAW_LINE,
    END_LINE,
    MAX_POINTS,
    SEED_PREFIX,
    TEAM_SEATS,
    Game,
    ReplayError,
)
from batchrl.games.tressette.rules import CARDS, SEATS, card_name, parse_card, team_points
from batchrl.games.tressette.transitions import Deals
from batchrl.records import (
    MAX_SEED,
    MIN_SEED,
    SNIFF_LINES,
    BadLine,
    LogLines,
    excerpt,
    line_too_long,
    shown,
    whole_number,
)


@dataclass(frozen=True, slots=True)
class LoggedGame:
    """One game as a log tells it, checked by replaying it."""

    source: str
    line: int  # 1-based: the game's line (JSON) or its first line (transcript)
    index: int  # ordinal among the file's games
    game: Game


Record = LoggedGame | BadLine
FORMATS = ("tressette", "tressette-transcript")

_SEED = re.compile(r"^\[DEBUG\] Seed partita:\s*(.*)$")
_PLAY = re.compile(r"^Giocatore (\S+) \((.*)\) gioca (\S+?)\)?$")
_TEAM = re.compile(r"^Team (\S+) \(seat (\S+)\) (?:→|->) (\S+) punti$")
_WIN = re.compile(r"^Vince TEAM (\S+)$")
# A transcript's line is a few dozen characters (an agent's name among them).
MAX_TRANSCRIPT_LINE = 10_000


def read_tressette(lines: Iterable[str], source: str, start: int = 1,
                   replay: bool = True) -> Iterator[Record]:
    """Records of a JSON Lines log from its lines (numbered from ``start``).

    ``replay=False`` leaves the replay to the caller: the ingest checks every play in
    lockstep with ``batchrl.games.tressette.features.Tracker`` (the same rules, for a
    batch of hands at once), so reading stays cheap; the points are then unchecked here.
    """
    index = 0
    for lineno, text in enumerate(lines, start):
        if not text.strip():
            continue
        try:
            game = Game.from_json(text)
            final = None
            if replay:
                final = game.replay()[-1]
            else:
                game.check_deal()  # the deal, the counts, the marks: all but the plays
        except ValueError as e:  # ReplayError included: the game does not play as logged
            yield BadLine(source, lineno, str(e), text)
            continue
        except RecursionError:  # JSON the parser read, nested past what the checks walk
            yield BadLine(source, lineno, "nested too deep: a game's line nests a few levels",
                          text)
            continue
        if game.points is None and not game.truncated and final is not None:
            game = dataclasses.replace(game, points=team_points(final))
        yield LoggedGame(source, lineno, index, game)
        index += 1


@dataclass
class _Pending:
    """A transcript game being read."""

    line: int
    seed: int | None = None
    count: int = 0  # play lines, the spoiled ones included
    plays: list[tuple[int, int]] = field(default_factory=list)
    play_lines: list[int] = field(default_factory=list)
    names: dict[int, str] = field(default_factory=dict)
    seen: dict[int, int] = field(default_factory=dict)  # card -> the line that played it
    ended: bool = False  # "== Fine partita ==" read
    team: dict[int, tuple[int, int]] = field(default_factory=dict)  # team -> (points, line)
    result: tuple[int | None, int] | None = None  # (winning team, None a draw; line)
    spoiled: bool = False
    texts: dict[int, str] = field(default_factory=dict)  # line -> its text


@dataclass
class _Bad:
    """Makes the ``BadLine`` of one transcript line; one that spoils ``game`` by default."""

    source: str
    line: int
    text: str
    game: _Pending | None

    def __call__(self, reason: str, *, spoil: bool = True) -> BadLine:
        if spoil and self.game is not None:
            self.game.spoiled = True
        return BadLine(self.source, self.line, reason, self.text)


def read_transcript(lines: Iterable[str], source: str, start: int = 1) -> Iterator[Record]:
    """Records of the seed's transcript from its lines (numbered from ``start``)."""
    index = 0
    game: _Pending | None = None

    def finish(g: _Pending | None) -> Iterator[Record]:
        nonlocal index
        if g is None:
            return
        for record in _finish(g, source, index):
            if isinstance(record, LoggedGame):
                index += 1
            yield record

    for lineno, raw in enumerate(lines, start):
        if too_long := line_too_long(source, lineno, raw, MAX_TRANSCRIPT_LINE):
            yield too_long  # the game around it is left alone, as for any odd line
            continue
        text = raw.strip()
        if not text:
            continue
        if game is not None:
            game.texts[lineno] = raw
        bad = _Bad(source, lineno, raw, game)
        if m := _SEED.match(text):
            yield from finish(game)
            game = _Pending(lineno, texts={lineno: raw})
            bad.game = game
            try:
                game.seed = whole_number(m.group(1), "seed", MIN_SEED, MAX_SEED)
            except ValueError as e:
                yield bad(str(e), spoil=False)
        elif m := _PLAY.match(text):
            if game is None or game.ended or game.count >= CARDS:
                yield from finish(game)
                game = _Pending(lineno, texts={lineno: raw})
                bad.game = game
            game.count += 1
            if not game.spoiled and (reason := _add_play(game, lineno, *m.groups())):
                yield bad(reason)
        elif text == END_LINE:
            if game is None or game.ended:
                yield bad("an end of game with no game before it", spoil=False)
                continue
            game.ended = True
            if not game.spoiled and game.count < CARDS:
                yield bad(f"the game ends after {game.count} plays; a hand has {CARDS}")
        elif m := _TEAM.match(text):
            if game is None or not game.ended:
                yield bad("a team's points outside a game's end", spoil=False)
            elif not game.spoiled and (reason := _add_team(game, lineno, *m.groups())):
                yield bad(reason)
        elif (m := _WIN.match(text)) or text == DRAW_LINE:
            if game is None or not game.ended:
                yield bad("a game's result outside a game's end", spoil=False)
                continue
            winner = m.group(1) if m else None
            if winner is not None and winner not in ("0", "1"):
                if not game.spoiled:
                    yield bad(f"team {shown(winner)}: want 0 or 1")  # the game is spoiled
            else:
                game.result = (None if winner is None else int(winner), lineno)
            yield from finish(game)
            game = None
        else:
            yield bad("not a line of a Tressette transcript", spoil=False)
    yield from finish(game)


def _add_play(game: _Pending, lineno: int, seat_text: str, name: str,
              card_text: str) -> str | None:
    """Adds a play to ``game``; the reason it cannot, if it cannot."""
    if seat_text not in ("0", "1", "2", "3"):
        return f"seat {shown(seat_text)}: want 0..3"
    seat = int(seat_text)
    try:
        card = parse_card(card_text)
    except ValueError as e:
        return str(e)
    if game.names.setdefault(seat, name) != name:
        return f"seat {seat} is {shown(game.names[seat])} earlier in the game, not {shown(name)}"
    if card in game.seen:
        return f"{card_name(card)} is played twice (first at line {game.seen[card]})"
    game.seen[card] = lineno
    game.plays.append((seat, card))
    game.play_lines.append(lineno)
    return None


def _add_team(game: _Pending, lineno: int, team_text: str, seats: str,
              points_text: str) -> str | None:
    if team_text not in ("0", "1"):
        return f"team {shown(team_text)}: want 0 or 1"
    team = int(team_text)
    if seats != TEAM_SEATS[team]:
        return f"team {team} is seats {TEAM_SEATS[team]}, not {excerpt(seats)}"
    if team in game.team:
        return f"team {team}'s points twice (first at line {game.team[team][1]})"
    try:
        game.team[team] = (whole_number(points_text, "points", 0, MAX_POINTS), lineno)
    except ValueError as e:
        return str(e)
    return None


def _finish(g: _Pending, source: str, index: int) -> Iterator[Record]:
    if g.spoiled:
        return
    if not g.plays:
        yield BadLine(source, g.line, "a game with no plays", g.texts.get(g.line, ""))
        return
    truncated = len(g.plays) < CARDS
    hands = tuple(tuple(sorted(c for s, c in g.plays if s == seat)) for seat in range(SEATS))
    names = tuple(g.names.get(seat, "") for seat in range(SEATS))
    game = Game(g.seed, g.plays[0][0], names, hands, tuple(g.plays), None, truncated)
    try:
        final = game.replay()[-1]
    except ReplayError as e:
        line = g.line if e.play is None else g.play_lines[e.play]
        yield BadLine(source, line, str(e), g.texts.get(line, ""))
        return
    if truncated:
        yield LoggedGame(source, g.line, index, game)
        return
    points = team_points(final)
    for team, (logged, line) in sorted(g.team.items()):
        if logged != points[team]:
            yield BadLine(source, line, f"the rules give team {team} {points[team]} points; "
                          f"the line says {logged}", g.texts[line])
            return
    if g.result is not None:
        winner, line = g.result
        rules_winner = 0 if points[0] > points[1] else 1 if points[1] > points[0] else None
        if winner != rules_winner:
            said = "a draw" if winner is None else f"team {winner} wins"
            yield BadLine(source, line, f"the rules give {points[0]} to {points[1]} points; "
                          f"the line says {said}", g.texts[line])
            return
    yield LoggedGame(source, g.line, index, dataclasses.replace(game, points=points))


def sniff(lines: Iterable[str]) -> str | None:
    """``"tressette"`` (JSON Lines), ``"tressette-transcript"`` or None, from the
    first non-blank lines."""
    n = 0
    for raw in lines:
        text = raw.strip()
        if not text:
            continue
        if n >= SNIFF_LINES:
            break
        n += 1
        if text.startswith("{"):
            try:
                data = parse_json(text)
            except ValueError:
                return None
            # a sette e mezzo game's line has an opponent and no plays
            return "tressette" if isinstance(data, dict) and "plays" in data \
                and "hands" in data and "opponent" not in data else None
        if text.startswith((SEED_PREFIX.strip(), "Giocatore ")):
            return "tressette-transcript"
    return None


def read_file(path: str | Path, fmt: str | None = None) -> Iterator[Record]:
    """Records of the log at ``path`` (``fmt`` one of ``FORMATS``, or sniffed), read
    as bytes so an odd byte spoils only its line. ``ValueError`` if the format is
    neither."""
    if fmt is None:
        fmt = sniff(LogLines(path))
    if fmt == "tressette":
        return read_tressette(LogLines(path), str(path))
    if fmt == "tressette-transcript":
        return read_transcript(LogLines(path), str(path))
    raise ValueError(f"{path}: not a Tressette log (format {fmt!r}; want one of {FORMATS})")


def read_tressette_for_ingest(lines: Iterable[str], source: str,
                              start: int = 1) -> Iterator[Record]:
    """``read_tressette`` without the replay: the ingest's lockstep check does it."""
    return read_tressette(lines, source, start, replay=False)


# ---- reading JSON lines for the ingest, in worker processes ---------------------------

# JSON lines a reading process reads and checks at a time.
READ_BLOCK_LINES = 1024


def read_for_ingest(lines: Iterable[str], source: str, jobs: int | None = None
                    ) -> Iterator[Any]:
    """The records of JSON lines for the ingest: read and checked (all but the plays,
    which the ingest's rows check in lockstep) by ``jobs`` processes a few blocks ahead
    (None: one if this process may use two cores or more; 0: here; -1: one per core),
    in line order.
    Read beside, the games come out as ``batchrl.games.tressette.ingest.DealRef`` (their
    deals already arrays: a few KB a block to send back); read here, as ``LoggedGame``.
    The processes start at the first record and end when the records do, or when the
    generator is closed."""
    with reading_processes(jobs_wanted(jobs, default_jobs())) as readers:
        if readers is None:
            yield from read_tressette_for_ingest(lines, source)
        else:
            yield from _records(lines, source, readers)


def _read_block(texts: list[str], source: str, start: int) -> tuple[Deals, list[Any]]:
    """A reading process's work: lines read and checked (all but the plays, which the
    rows check in lockstep), the whole deals as arrays and each line's record
    (``whole_deals``): a few KB to send back."""
    return whole_deals(read_tressette_for_ingest(texts, source, start))


def _records(lines: Iterable[str], source: str, readers: Executor) -> Iterator[Any]:
    numbered = zip(itertools.count(1), lines)
    blocks = iter(lambda: list(itertools.islice(numbered, READ_BLOCK_LINES)), [])
    index = 0  # games so far: what read_tressette numbers them
    for deals, entries in in_order(readers, functools.partial(_read_numbered, source), blocks):
        for entry in entries:
            if isinstance(entry, BadLine):
                yield entry
                continue
            yield deal_ref(source, entry[0], index, deals, entry[1])
            index += 1


def _read_numbered(source: str, texts: list[tuple[int, str]]) -> tuple[Deals, list[Any]]:
    """`_read_block` of lines numbered from the log's first."""
    return _read_block([t for _, t in texts], source, texts[0][0])


def default_jobs() -> int:
    """One reading process if this process may use two cores or more, else none (the
    ingesting process has the rows' lockstep check to run: one reader keeps up)."""
    return 1 if usable_cores() >= 2 else 0


# ---- the formats, registered for batchrl ingest ---------------------------------------

def _lines(source: Source) -> Iterable[str]:
    return source.lines if source.lines is not None else LogLines(source.path)


def _read_json_lines(source: Source) -> Iterator[Any]:
    return read_for_ingest(_lines(source), str(source.path), source.options.get("jobs"))


def _read_transcript(source: Source) -> Iterator[Any]:
    return read_transcript(_lines(source), str(source.path))


def _sniff_json_lines(path: Path, head: Sequence[str]) -> bool:
    return sniff(head) == "tressette"


def _sniff_transcript(path: Path, head: Sequence[str]) -> bool:
    return sniff(head) == "tressette-transcript"


JSON_LINES = register_format(Format(
    "tressette", "tressette", "a Tressette game log (JSON lines)", _sniff_json_lines,
    _read_json_lines))
TRANSCRIPT = register_format(Format(
    "tressette-transcript", "tressette", "a Tressette transcript (Giocatore ... gioca ...)",
    _sniff_transcript, _read_transcript))
