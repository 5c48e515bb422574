"""Leduc hold'em logs (STATE lines, see ``batchrl.games.leduc.logs``) as records.

Each hand is replayed through the rules: its moves must be legal, the hand over, the
public card shown exactly when the second round was reached, and the chips each won
what the rules give, and no hand number used twice in a log (the first line with it is
read). A line that is not one comes out as a ``BadLine`` naming the file, the line and
what was wrong; ``#`` lines and ``SCORE`` lines are passed over.

>>> good, bad = read_leduc(["STATE:0:rc/rc:Kh|Qs/Js:7|-7:a|b",
...                         "STATE:1:rc/rc:Kh|Qs/Js:-7|7:a|b"], "l.log")
>>> good.states[-1].history, good.names
('rc/rc', ('a', 'b'))
>>> print(bad)
l.log, line 2: the rules give the players 7|-7; the line says -7|7
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from batchrl.games import Format, Source, register_format
from batchrl.games.leduc import rules
from batchrl.games.leduc.game import LeducHand
from batchrl.games.leduc.rules import N_CARDS, LeducState
from batchrl.records import BadLine, LogLines, excerpt, printable

_CARD = r"[JQK][sh]"
_LINE = re.compile(rf"STATE:([0-9]+):([crf/]*):({_CARD})\|({_CARD})(?:/({_CARD}))?:"
                   r"(-?[0-9]+(?:\.[0-9]+)?)\|(-?[0-9]+(?:\.[0-9]+)?):([^|]+)\|([^|]+)")
_SUFFIX = re.compile(r" +# .*$")  # a dealer's " # <time>" after a line, as ACPC's logs have
LONGEST = 10_000  # characters: no hand is longer (a longer line was cut, or is no hand)


def read_leduc(lines: Iterable[str], source: str, start: int = 1) -> Iterator[Any]:
    index = 0
    seen: dict[str, int] = {}  # the line of each hand number's first STATE line
    for number, text in enumerate(lines, start):
        stripped = text.strip()
        if not stripped or stripped.startswith(("#", "SCORE")):
            continue
        try:
            if len(stripped) > LONGEST:
                raise ValueError(f"the line is {len(stripped):,} characters long: no hand "
                                 "is; it was cut short or is no hand")
            hand = _replay(_SUFFIX.sub("", stripped), source, number, index, seen)
        except ValueError as exc:
            yield BadLine(source, number, str(exc), text)
            continue
        yield hand
        index += 1


def _replay(text: str, source: str, number: int, index: int,
            seen: dict[str, int]) -> LeducHand:
    match = _LINE.fullmatch(text)
    if match is None:
        raise ValueError(f"{printable(text, 80)!r} is not a Leduc STATE line: want "
                         "STATE:<hand>:<betting>:<card>|<card>[/<public>]:<chips>|<chips>:"
                         "<name>|<name> (two names), e.g. STATE:0:rc/rc:Kh|Qs/Js:7|-7:alice|bob")
    hand = match[1].lstrip("0") or "0"  # as text: a number may have thousands of digits
    if (first := seen.setdefault(hand, number)) != number:
        raise ValueError(f"hand {excerpt(hand, 20)} again: line {first} has it, and a hand is "
                         "numbered once in a log")
    _, betting, c0, c1, shown, w0, w1, n0, n1 = match.groups()
    cards = [rules.card_of(c) for c in (c0, c1, *((shown,) if shown else ()))]
    if len(set(cards)) < len(cards):
        raise ValueError(f"a card is dealt twice ({'|'.join((c0, c1))}"
                         f"{'/' + shown if shown else ''})")
    # a hand folded in the first round shows no public card: any card left stands for it
    public = cards[2] if shown else next(c for c in range(N_CARDS) if c not in cards)
    state = LeducState((cards[0], cards[1], public))
    states, actions = [state], []
    for move in betting.replace("/", ""):
        action = rules.MOVES.index(move)
        try:
            state = rules.step(state, action)
        except ValueError as exc:
            raise ValueError(f"the betting {betting!r}: {exc}") from None
        states.append(state)
        actions.append(action)
    if state.history != betting:
        raise ValueError(f"the betting {betting!r} does not end its rounds where the rules "
                         f"do ({state.history!r})")
    if not rules.is_terminal(state):
        raise ValueError(f"the hand {betting!r} is not over")
    if bool(shown) != (rules.round_of(betting) == 1):
        raise ValueError("the public card is shown exactly when the second round is "
                         f"reached: {betting!r} {'shows' if shown else 'does not show'} it")
    won = rules.returns(state)
    if (float(w0), float(w1)) != won:
        raise ValueError(f"the rules give the players {won[0]:g}|{won[1]:g}; the line says "
                         f"{w0}|{w1}")
    return LeducHand(source, number, index, tuple(states), tuple(actions),
                     (printable(n0, 80), printable(n1, 80)))


def sniff(path: Path, head: Sequence[str]) -> bool:
    """A Leduc log: a STATE line among its first with one private card a player (a
    hold'em log's have two)."""
    return any(re.match(rf"STATE:[0-9]+:[crf/]*:{_CARD}\|{_CARD}[:/]", line.strip())
               for line in head)


def read(source: Source) -> Iterator[Any]:
    return read_leduc(source.lines if source.lines is not None else LogLines(source.path),
                      str(source.path))


FORMAT = register_format(Format("leduc", "leduc", "a Leduc hold'em log (STATE lines)",
                                sniff, read, priority=1))
