"""ACPC poker logs as text: dealer ``STATE`` logs and Glassfrog dealer summaries.

This module turns lines into ``LoggedHand`` records and nothing else: it checks
that each line has the right shape, and leaves the poker (is the betting legal,
do the payoffs add up) to ``batchrl.games.holdem``. A line that is not a hand
comes out as a ``BadLine`` naming the file, the line and what was wrong, so the
caller decides whether to stop or to skip it; no other exception escapes for
bad input. The records (``LoggedHand``, ``Header``) are the game's
(``batchrl.games.holdem.records``); the two formats register themselves with
``batchrl.games`` as ``acpc`` and ``glassfrog``, both of the game ``holdem``.

Dealer log (ACPC server 2.x), fields in *player* order::

    # name/game/hands/seed 2p.limit.h1000.r0 …/holdem.limit.2p.reverse_blinds.game 1000 0
    STATE:0:cc/crc/cc/cc:5d5c|9hQd/8dAs8s/4h/6d:20|-20:p1|p2
    SCORE:455|-455:p1|p2

Glassfrog dealer summary (the big blind listed first)::

    GGValuta|HyperboreanLimit-Eqm:0:rc/crc/cc/rc:8hTd|As9c/KsJcJh/Qc/8d:10|-10

>>> hand = next(h for h in read_acpc(["STATE:3:rrrc/rrf:4s8s|6hJd/QhJs9d:-50|50:p2|p1"], "x.log")
...             if isinstance(h, LoggedHand))
>>> hand.number, hand.betting, hand.board, hand.payoffs
(3, 'rrrc/rrf', ((42, 39, 29),), (-50.0, 50.0))
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from batchrl.games import Format, Source, register_format
from batchrl.games.holdem.cards import parse_cards
from batchrl.games.holdem.records import Header, LoggedHand
from batchrl.records import SNIFF_LINES, BadLine, line_too_long, shown, whole_number

__all__ = ["ACPC", "GLASSFROG", "BadLine", "Header", "LoggedHand", "Record", "read_acpc",
           "read_glassfrog", "sniff_format"]


Record = LoggedHand | Header | BadLine

_HEADER = re.compile(r"^#\s*name/game/hands/seed\s+(\S+)\s+(\S+)(?:\s+([0-9]+))?"
                     r"(?:\s+([0-9]+))?")
# A payoff as dealers write it: "-455", "2.5", "-5.000000" (ASCII only: ``float`` also
# takes "1_0", "inf", "nan" and other scripts' digits); far below a float's range.
_PAYOFF = re.compile(r"[-+]?(?:[0-9]{1,18}(?:\.[0-9]{0,18})?|\.[0-9]{1,18})"
                     r"(?:[eE][-+]?[0-9]{1,3})?")
MAX_PAYOFF = 1e15
_BETTING = re.compile(r"^[fcrbk/0-9FCRBK]*$")
# A hand number, a header's hand count and seed: whole numbers, with room to spare (the
# dealer's seed is 32 bits; a match of 10**15 hands would take millennia).
MAX_HAND_NUMBER = MAX_HANDS = 10**15
MAX_SEED = 2**64 - 1
# A hand's line is a few hundred characters at most (a no-limit hand of three players
# raising all the way); a betting string is kept per hand read, so none may be huge.
MAX_LINE = 10_000
_SCORE_PREFIX = "SCORE:"
_STATE_PREFIX = "STATE:"


def sniff_format(lines: Iterable[str]) -> str | None:
    """``"acpc"`` or ``"glassfrog"`` from a file's first lines, or None if neither."""
    for n, text in enumerate(lines):
        if n >= SNIFF_LINES:
            break
        if text.startswith(_STATE_PREFIX) or _HEADER.match(text):
            return "acpc"
        if not text or text.startswith("#"):
            continue
        fields = text.split(":")
        if len(fields) == 5 and "|" in fields[0] and "|" in fields[4]:
            return "glassfrog"
    return None


def read_acpc(lines: Iterable[str], source: str, start: int = 1) -> Iterator[Record]:
    """Records of an ACPC dealer log from its lines (numbered from ``start``)."""
    index = 0
    for lineno, text in enumerate(lines, start):
        record = line_too_long(source, lineno, text, MAX_LINE) or \
            _acpc_line(text, source, lineno, index)
        if record is None:
            continue
        if isinstance(record, LoggedHand):
            index += 1
        yield record


def read_glassfrog(lines: Iterable[str], source: str, start: int = 1) -> Iterator[Record]:
    """Records of a Glassfrog ``.dealer.summary`` from its lines."""
    index = 0
    for lineno, text in enumerate(lines, start):
        if too_long := line_too_long(source, lineno, text, MAX_LINE):
            yield too_long
            continue
        text = _strip_comment(text)
        if not text or text.startswith("#"):
            continue
        fields = text.split(":")
        if len(fields) != 5:
            yield BadLine(source, lineno, f"expected 5 ':'-separated fields "
                          f"(names:hand:betting:cards:payoffs), found {len(fields)}", text)
            continue
        names, number, betting, cards, payoffs = fields
        record = _hand(source, lineno, index, number, betting, cards, payoffs, names, text)
        if isinstance(record, LoggedHand):
            index += 1
        yield record


def _acpc_line(text: str, source: str, lineno: int, index: int) -> Record | None:
    if text.startswith("#"):
        match = _HEADER.match(text)
        if match is None:
            return None  # the dealer's "#--t_response" settings and other comments
        hands, seed = match.group(3), match.group(4)
        try:
            return Header(source, lineno, match.group(1), match.group(2),
                          whole_number(hands, "the header's hands", 0, MAX_HANDS)
                          if hands else None,
                          whole_number(seed, "the header's seed", 0, MAX_SEED) if seed else None)
        except ValueError as exc:
            return BadLine(source, lineno, str(exc), text)
    text = _strip_comment(text)
    if not text or text.startswith(_SCORE_PREFIX):
        return None
    if not text.startswith(_STATE_PREFIX):
        return BadLine(source, lineno, "expected a STATE:, SCORE: or # line", text)
    fields = text.split(":")
    if len(fields) not in (5, 6):
        return BadLine(source, lineno, f"a STATE line has 5 or 6 ':'-separated fields, "
                       f"found {len(fields)}", text)
    names = fields[5] if len(fields) == 6 else ""
    return _hand(source, lineno, index, fields[1], fields[2], fields[3], fields[4], names, text)


def _strip_comment(text: str) -> str:
    # The DeepStack logs end each line with " # <unix time>".
    cut = text.find(" #")
    return text if cut < 0 else text[:cut].rstrip()


def _hand(
    source: str, lineno: int, index: int, number: str, betting: str, cards: str,
    payoffs: str, names: str, text: str,
) -> LoggedHand | BadLine:
    def bad(reason: str) -> BadLine:
        return BadLine(source, lineno, reason, text)

    try:
        hand_number = whole_number(number, "hand number", 0, MAX_HAND_NUMBER)
    except ValueError as exc:
        return bad(str(exc))
    if not _BETTING.match(betting):
        odd = sorted(set(betting) - set("fcrbk/0123456789FCRBK"))
        return bad(f"betting {shown(betting)} has characters other than f c r and '/': "
                   f"{shown(odd)}")
    groups = cards.split("/")
    holes = groups[0].split("|")
    if len(holes) < 2:
        return bad(f"cards {shown(cards)} should start with one '|'-separated hand per "
                   f"player")
    try:
        hole = tuple(map(parse_cards, holes))
        board = tuple(map(parse_cards, groups[1:]))
    except ValueError as exc:
        return bad(f"cards {shown(cards)}: {exc}")
    seen = [c for h in hole for c in h] + [c for g in board for c in g]
    if len(set(seen)) != len(seen):
        return bad(f"cards {shown(cards)} deal the same card twice")
    values = payoffs.split("|")
    if len(values) != len(hole):
        return bad(f"{len(values)} payoffs {shown(payoffs)} for {len(hole)} players")
    if not all(map(_PAYOFF.fullmatch, values)):
        return bad(f"payoffs {shown(payoffs)} are not numbers (digits, a sign, a point)")
    payoff = tuple(map(float, values))  # never NaN (digits only); 1e999 is inf: too big
    if max(map(abs, payoff)) > MAX_PAYOFF:
        return bad(f"payoffs {shown(payoffs)}: want numbers from {-MAX_PAYOFF:g} to "
                   f"{MAX_PAYOFF:g}")
    who = tuple(names.split("|")) if names else ()
    if who and len(who) != len(hole):
        return bad(f"{len(who)} player names {shown(names)} for {len(hole)} players")
    return LoggedHand(source, lineno, index, hand_number, betting, hole, board, payoff, who,
                      cards)



def _lines(source: Source) -> Iterable[str]:
    assert source.lines is not None, "ACPC logs are files: the ingest never reads a directory"
    return source.lines


def _sniff_acpc(path: Path, head: Sequence[str]) -> bool:
    return sniff_format(head) == "acpc"


def _sniff_glassfrog(path: Path, head: Sequence[str]) -> bool:
    return sniff_format(head) == "glassfrog"


def _read_acpc(source: Source) -> Iterator[Record]:
    return read_acpc(_lines(source), str(source.path))


def _read_glassfrog(source: Source) -> Iterator[Record]:
    return read_glassfrog(_lines(source), str(source.path))


# Both are looser than the JSON formats (a line of five ':'-fields with '|' in the first
# and the last makes a summary): they are tried after every other format, as they always
# were.
ACPC = register_format(Format(
    "acpc", "holdem", "an ACPC dealer log (STATE: lines)", _sniff_acpc, _read_acpc,
    priority=-1))
GLASSFROG = register_format(Format(
    "glassfrog", "holdem", "a Glassfrog dealer summary (name|name:hand:betting:cards:payoffs)",
    _sniff_glassfrog, _read_glassfrog, priority=-1))
