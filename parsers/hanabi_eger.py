"""Eger et al.'s Hanabi game logs (real two-player games, an AI in seat 0 and a human in
seat 1): text -> games, nothing else.

A log holds the treatment (the AI and the deck seed), the 40 cards left after the
deal, one ``MOVE: <player> <action> <card> <target> <colour> <rank>`` line per move
(action 0 colour hint, 1 rank hint, 2 play, 3 discard; ``None`` where a field does
not apply) between readable lines, and ``Score <n>`` (cards played; not zeroed on a
third fuse). The deal is rebuilt from the seed: the game shuffled its deck with
Python 2's ``random.shuffle`` seeded with it, which Python 3's ``random.Random``
reproduces for integer seeds when the shuffle is done by hand (``_shuffle``). The
rebuilt pile is checked against the logged one.

Colours in the logs: 0 green, 1 yellow, 2 white, 3 blue, 4 red; here they become
batchrl's (``batchrl.games.hanabi.rules.COLOURS``). The game allowed a discard with
all 8 hints left (gaining nothing): replay with ``deal(..., discard_at_max_hints=True)``.
In 4 games the AI hints itself, which no rule allows; those moves are flagged
(``EgerGame.self_hints``) rather than refused.
"""

from __future__ import annotations

import ast
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from batchrl.games.hanabi.rules import RANK_COUNTS, card, encode_hint
from batchrl.records import MAX_LINE, MAX_SEED, MIN_SEED, excerpt, regular_file, shown

_LOG_COLOUR = {0: 4, 1: 3, 2: 0, 3: 1, 4: 2}  # log colour -> batchrl colour index
_LOG_CARDS = frozenset((c, r) for c in range(5) for r in range(1, 6))
MAX_FILE = 16 << 20  # a game's log is a few KB


@dataclass(frozen=True)
class EgerGame:
    source: str
    game_id: str
    ai: str
    seed: int
    deck: tuple[int, ...]  # all 50 cards in deal order: seat 0's five, seat 1's five, the pile
    moves: tuple[tuple[int, int, int], ...]  # (line, seat, batchrl action)
    score: int
    # moves where the AI hints ITSELF (4 games): the action is that hint as if given to the
    # partner; ``batchrl.games.hanabi.sources.hint_self`` replays it as their program did
    self_hints: tuple[int, ...] = ()


class EgerError(ValueError):
    """A log line that cannot be read; the message names the file and the line."""


def _shuffle(items: list[tuple[int, int]], seed: int) -> list[tuple[int, int]]:
    """Python 2's ``random.shuffle`` after ``random.seed(seed)``."""
    rng = random.Random(seed)
    x = list(items)
    for i in reversed(range(1, len(x))):
        j = int(rng.random() * (i + 1))
        x[i], x[j] = x[j], x[i]
    return x


def _log_deck() -> list[tuple[int, int]]:
    return [(c, r + 1) for c in range(5) for r, n in enumerate(RANK_COUNTS) for _ in range(n)]


def _card(pair: tuple[int, int]) -> int:
    return card(_LOG_COLOUR[pair[0]], pair[1])


def read_eger(path: str | Path) -> EgerGame:
    """One game log; raises ``EgerError`` naming the line on anything unreadable."""
    path = Path(path)
    if why := regular_file(path):  # a pipe would block the read; a device never end it
        raise EgerError(f"{path}: {why}")
    if (size := path.stat().st_size) > MAX_FILE:
        raise EgerError(f"{path}: {size:,} bytes: a game's log is a few KB")
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    ai, seed, pile, score = None, None, None, None
    moves: list[tuple[int, int, int]] = []
    self_hints: list[int] = []

    def fail(no: int, why: str) -> EgerError:
        return EgerError(f"{path}:{no}: {why}: {shown(lines[no - 1])}")

    for no, line in enumerate(lines, 1):
        if len(line) > MAX_LINE:
            raise fail(no, f"a line of more than {MAX_LINE:,} characters")
        if line.startswith("Treatment:"):
            treatment = _literal(line.split(":", 1)[1].strip())
            if not (isinstance(treatment, tuple) and len(treatment) == 2
                    and isinstance(treatment[0], str) and isinstance(treatment[1], int)
                    and not isinstance(treatment[1], bool)
                    and MIN_SEED <= treatment[1] <= MAX_SEED):
                raise fail(no, "want Treatment: ('<ai>', <seed>), the seed a whole number")
            ai, seed = treatment
        elif line.startswith("[(") and pile is None:
            listed = _literal(line)
            if not isinstance(listed, list) or not all(
                    isinstance(p, tuple | list) and len(p) == 2
                    and all(type(x) is int for x in p) and tuple(p) in _LOG_CARDS
                    for p in listed):
                raise fail(no, "want the pile as a list of (colour 0-4, rank 1-5)")
            pile = [tuple(p) for p in listed]
        elif line.startswith("MOVE:"):
            fields = line.split()[1:]
            if len(fields) != 6:
                raise fail(no, "want MOVE: <player> <action> <card> <target> <colour> <rank>")
            if fields[0] not in ("0", "1"):
                raise fail(no, f"player {excerpt(fields[0])} is no seat (0 or 1)")
            if fields[1] not in ("0", "1", "2", "3"):
                raise fail(no, f"action {excerpt(fields[1])} is none of 0-3")
            seat, kind = int(fields[0]), int(fields[1])
            if kind in (0, 1) and fields[3] == fields[0]:
                # a few logged games have the AI hint itself, a move no rule allows: kept,
                # flagged, so a replay can apply it as their program did
                self_hints.append(len(moves))
            if kind == 0 and fields[4] in ("0", "1", "2", "3", "4"):
                action = encode_hint("hint_colour", 1, _LOG_COLOUR[int(fields[4])])
            elif kind == 1 and fields[5] in ("1", "2", "3", "4", "5"):
                action = encode_hint("hint_rank", 1, int(fields[5]))
            elif kind in (2, 3) and fields[2] in ("0", "1", "2", "3", "4"):
                action = int(fields[2]) + (0 if kind == 2 else 5)
            else:
                raise fail(no, "want a colour 0-4 (action 0), a rank 1-5 (1) or a slot 0-4 "
                               "(2, 3)")
            moves.append((no, seat, action))
        elif line.startswith("Score"):
            fields = line.split()
            if len(fields) != 2 or not fields[1].isascii() or not fields[1].isdigit() or \
                    int(fields[1]) > 25:
                raise fail(no, "want Score <cards played, 0-25>")
            score = int(fields[1])
    if ai is None or seed is None or pile is None or score is None:
        raise EgerError(f"{path}: no Treatment, pile or Score line: not an Eger et al. log")
    deck = _shuffle(_log_deck(), seed)
    if deck[10:] != pile:
        raise EgerError(f"{path}:3: the deck rebuilt from seed {seed} does not leave the "
                        "logged pile")
    return EgerGame(str(path), path.stem.removeprefix("game"), ai, seed,
                    tuple(_card(p) for p in deck), tuple(moves), score, tuple(self_hints))


def _literal(text: str) -> Any:
    """A Python literal (the logs print tuples and lists), or None if ``text`` is none:
    a 1e400 is a float (inf) here, never an error; nesting past the parser is None."""
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
