"""PHH hand histories (pokerkit's notation; Kim 2023) as hold'em hands.

A ``.phh`` file holds one hand, a ``.phhs`` file many (TOML tables ``[1]``, ``[2]`` …),
and a folder holds either, in its subfolders too (one source, one store part, hands in
the files' natural order: ``2.phh`` before ``10.phh``). PHH is TOML: the usual
one-value-a-line files are read by ``parsers.toml_lines``, anything else by Python's own
``tomllib`` (comments and both quote styles included). This module turns each
hand into a `LoggedHand` in the dealer's notation, with the game it was played in, and
leaves the poker (is the betting legal, do the results add up) to
``batchrl.games.holdem``, which replays every hand through its rules::

    variant = 'NT'
    antes = [0, 0, 0]
    blinds_or_straddles = [50, 100, 0]
    min_bet = 100
    starting_stacks = [10000, 10000, 10000]
    actions = ['d dh p1 Qh5c', 'd dh p2 9h6h', 'd dh p3 KcJh', 'p3 cbr 210', 'p1 f',
               'p2 cc', 'd db 7s9cTc', 'p2 cc', 'p3 cbr 235', 'p2 f']
    players = ['A', 'B', 'C']
    finishing_stacks = [9950, 9790, 10260]

becomes the betting ``r210fc/cr445f`` (a raise names the chips the seat has put in over
the hand, as the dealer writes it: 210 then 210 + 235), the hole and board cards, the
payoffs ``finishing_stacks - starting_stacks`` (or ``winnings`` less what the seat put
in), the names, and a no-limit `GameDef` of the hand's seats, blinds and stacks.

Read: no-limit hold'em (``NT``) with antes (trimmed or a big blind's,
``ante_trimming_status``), hole cards hidden as ``????`` (shown later by ``sm``, or
never: such a seat's moves replay and it has no rows), and decimal amounts (an online
hand's $0.25): the source's first hand decides its chip (`Chips`: whole, or cents), the
game states it (``GameDef.chip``) and every amount is whole chips of it. A hand of another
variant is passed over, counted by its variant's name (as hanab.live variants are); a
hand that cannot be read is refused with its file and number, the other hands read.

>>> from batchrl.games.holdem.records import LoggedHand
>>> hand = next(_hands({"variant": "NT", "antes": [0, 0], "blinds_or_straddles": [1, 2],
...                     "min_bet": 2, "starting_stacks": [200, 200],
...                     "actions": ["d dh p1 AsKs", "d dh p2 7c2d", "p2 cbr 6", "p1 f"],
...                     "finishing_stacks": [198, 202]}, "x.phh", 1, 0))
>>> hand.betting, hand.payoffs, hand.game.blind, hand.game.first_player  # p1: big blind
('r6f', (-2.0, 2.0), (2, 1), (1, 0, 0, 0))
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import os
import re
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from batchrl.games import Format, Source, register_format
from batchrl.games.holdem.cards import cards_str, parse_cards
from batchrl.games.holdem.gamedef import GameDef, GameDefError
from batchrl.games.holdem.handhistory import phh_first_player, seat_order
from batchrl.games.holdem.records import LoggedHand
from batchrl.records import BadLine, Skipped, regular_file, shown
from batchrl.store import file_digest
from parsers import toml_lines

__all__ = ["PHH", "read_phh"]

SUFFIXES = (".phh", ".phhs")
MAX_FILE = 64 << 20  # bytes: a .phhs of a hundred thousand hands is a few tens of MB
MAX_ACTIONS = 1_000  # a hand of nine seats raising all-in takes a few dozen
MAX_SEATS = 10  # as an ACPC game's (batchrl.games.holdem.gamedef.BOUNDS)
VARIANT = "NT"  # no-limit Texas hold'em
LIMIT = "FT"  # fixed-limit Texas hold'em: read into a limit game where its betting fits
FIXED_LIMIT_CAP = 4  # bets and raises a round, as pokerkit's fixed-limit games allow
_ACTION = re.compile(r"^(?:d (dh) p([0-9]+) (\S+)|d (db) (\S+)|p([0-9]+) (f|cc|cbr|sm)"
                     r"(?: (\S+))?)$")


class HandError(ValueError):
    """A hand this reader cannot turn into a dealer's record; the message says why, and
    ``kind`` counts it in the ingest's report."""

    def __init__(self, message: str, kind: str = "bad hand") -> None:
        super().__init__(message)
        self.kind = kind


def read_phh(path: Path, chips: Chips | None = None
             ) -> Iterator[LoggedHand | BadLine | Skipped]:
    """The hands of one ``.phh``/``.phhs`` file, in order: a `LoggedHand` each, a
    `BadLine` for a hand (or a file) that cannot be read, a `Skipped` for a hand of
    another variant."""
    if why := regular_file(path):
        yield BadLine(str(path), 1, f"not read: {why}", "")
        return
    yield from _file_hands(path, chips)


def _file_hands(path: Path, chips: Chips | None,
                progress: Callable[[int], None] | None = None
                ) -> Iterator[LoggedHand | BadLine | Skipped]:
    """``read_phh`` of a file known to be a regular one; ``progress`` told its bytes."""
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_FILE + 1)
        if progress is not None:
            progress(len(raw))
        if len(raw) > MAX_FILE:
            raise HandError(f"over {MAX_FILE:,} bytes, more than a PHH file holds")
        text = raw.decode("utf-8")
        document = toml_lines.loads(text)  # the usual one-value-a-line files, fast
        if document is None:
            document = tomllib.loads(text)
    # ValueError: TOML's own errors, bytes that are no UTF-8, and a number of more digits
    # than Python converts (tomllib raises it as it is)
    except (OSError, ValueError, RecursionError) as exc:
        yield BadLine(str(path), _line_of(exc), f"not a PHH file ({shown(str(exc), 200)})",
                      "")
        return
    many = path.suffix == ".phhs"
    tables = [(k, v) for k, v in document.items() if isinstance(v, dict)] if many else \
        [("", document)]
    if many and not tables:
        yield BadLine(str(path), 1, "a .phhs file holds hands as tables ([1], [2] …): none "
                                    "found", "")
    for index, (key, hand) in enumerate(tables):
        where = f"{path}, hand [{key}]" if many else str(path)
        try:
            yield from _hands(hand, where, _line(raw, key) if many else 1, index, chips)
        except HandError as exc:
            yield BadLine(str(path), _line(raw, key) if many else 0,
                          f"hand [{key}]: {exc}" if many else str(exc), "", exc.kind)


@dataclass
class Chips:
    """The chip of a source's hands, in decimal places of the logs' amounts: 0 whole
    chips, 2 cents (an online hand's $0.25 is 25 chips); None until its first hand
    decides (any decimal there: cents, or finer where it needs, as long as its amounts
    stay within a 32-bit stack: `_scaled`)."""

    places: int | None = None

    def decide(self, need: int) -> int:
        if self.places is None:
            self.places = 0 if need == 0 else max(2, need)
        if need > self.places:
            raise HandError(f"amounts in {10 ** -need:g}s, and the source's first hand is in "
                            f"{'whole chips' if not self.places else f'{10 ** -self.places:g}s'}"
                            ": ingest hands of finer chips as a source of their own",
                            "chips finer than the source's")
        return self.places


def _hands(hand: Mapping[str, Any], where: str, line: int, index: int,
           chips: Chips | None = None) -> Iterator[LoggedHand | Skipped]:
    variant = hand.get("variant")
    if variant not in (VARIANT, LIMIT):
        yield Skipped(f"variant {shown(variant, 20)}",
                      f"{where}: variant {shown(variant, 20)}, not Texas hold'em "
                      f"({VARIANT}, {LIMIT}): batchrl reads {VARIANT} and {LIMIT} hands")
        return
    raw_stacks = _amounts(hand, "starting_stacks")
    seats = len(raw_stacks)
    if not 2 <= seats <= MAX_SEATS:
        raise HandError(f"{seats} seats; a hand has 2 to {MAX_SEATS}")
    raw_blinds = _amounts(hand, "blinds_or_straddles", seats)
    raw_antes = _amounts(hand, "antes", seats) if "antes" in hand else (0,) * seats
    trimming = hand.get("ante_trimming_status", False)
    if not isinstance(trimming, bool):
        raise HandError(f"ante_trimming_status {shown(trimming, 20)}: want true or false")
    actions = hand.get("actions")
    if not isinstance(actions, list) or len(actions) > MAX_ACTIONS or \
            not all(isinstance(a, str) for a in actions):
        raise HandError(f"actions {shown(actions, 60)}: want a list of at most "
                        f"{MAX_ACTIONS:,} strings")
    matches = []
    for number, text in enumerate(actions, 1):
        match = _ACTION.match(text.split("#", 1)[0].strip())
        if match is None:
            raise HandError(f"action {number} {shown(text, 60)} is none PHH's no-limit "
                            "hold'em has (d dh pN CARDS, d db CARDS, pN f, pN cc, "
                            "pN cbr AMOUNT, pN sm CARDS)")
        matches.append((number, text, match.groups()))
    bets = {number: _amount(g[7], f"action {number}'s amount") for number, _, g in matches
            if g[6] == "cbr"}
    raw_min = hand.get("min_bet") if variant == VARIANT else None
    limit = () if variant == VARIANT else tuple(
        _amount(hand.get(key), key) for key in ("small_bet", "big_bet"))
    every = (*raw_stacks, *raw_blinds, *raw_antes, *bets.values(), *limit)
    places = (chips or Chips()).decide(max(map(_places, every)))
    stacks = _scaled(raw_stacks, places, "starting_stacks")
    # each seat's, as pokerkit posts them: heads-up, the lists reversed (`seat_order`)
    blinds = seat_order(_scaled(raw_blinds, places, "blinds_or_straddles"))
    antes = seat_order(_scaled(raw_antes, places, "antes"))
    big = max(blinds)
    if raw_min is not None and _scaled((_amount(raw_min, "min_bet"),), places,
                                       "min_bet") != (big,):
        raise HandError(f"min_bet {shown(raw_min, 20)} is not the big blind "
                        f"{max(raw_blinds)}: batchrl's no-limit game raises by at least the "
                        "big blind")
    sizes = _scaled(limit, places, "small_bet and big_bet")
    game = _game(blinds, stacks, antes, trimming, places,
                 (sizes[0], sizes[0], sizes[1], sizes[1]) if sizes else ())
    hole: list[tuple[int, ...]] = [()] * seats
    board: list[tuple[int, ...]] = []
    betting: list[str] = [""]
    put_in = [0] * seats  # over the hand, before this round
    behind = game.behind()  # each seat's chips once its ante is in
    this_round = [min(b, k) for b, k in zip(blinds, behind, strict=True)]
    for number, text, groups in matches:
        deal_hole, seat, cards, deal_board, flop, actor, verb, amount = groups
        try:
            if deal_hole:
                s = _seat(seat, seats, number)
                if cards != "????" and "?" in cards:
                    raise HandError(f"action {number}: seat p{s + 1}'s cards {shown(cards)} "
                                    "are partly hidden")
                hole[s] = () if cards == "????" else parse_cards(cards)
            elif deal_board:
                if len(board) >= game.num_rounds - 1:
                    raise HandError("a board dealt after the river")
                board.append(parse_cards(flop))
                betting.append("")
                put_in = [a + b for a, b in zip(put_in, this_round, strict=True)]
                this_round = [0] * seats
            else:
                s = _seat(actor, seats, number)
                if verb == "sm":  # shows (or mucks) at the showdown: hidden cards known
                    if amount and amount != "????":
                        shows = parse_cards(amount)
                        if hole[s] and shows != hole[s]:
                            raise HandError(f"action {number}: p{s + 1} shows {amount}, "
                                            f"and was dealt {cards_str(hole[s])}")
                        hole[s] = shows
                elif verb == "f":
                    betting[-1] += "f"
                elif verb == "cc":
                    this_round[s] = min(max(this_round), behind[s] - put_in[s])
                    betting[-1] += "c"
                elif verb == "cbr":
                    (to,) = _scaled((bets[number],), places, f"action {number}'s amount")
                    if limit:  # the dealer's "r": the size is the game's, checked here
                        fixed = min(max(this_round) + game.raise_size[len(board)],
                                    behind[s] - put_in[s])
                        if to != fixed:
                            raise HandError(f"action {number}: p{s + 1} raises to {to}, "
                                            f"and the fixed limit raises to {fixed}")
                    this_round[s] = to
                    betting[-1] += "r" if limit else f"r{put_in[s] + to}"
        except ValueError as exc:
            raise HandError(f"action {number} {shown(text, 60)}: {exc}") from None
    spent = [a + b for a, b in zip(put_in, this_round, strict=True)]
    payoffs = _payoffs(hand, stacks, [b + a for b, a in zip(
        spent, game.posted_antes(), strict=True)], places)
    names = hand.get("players", [])
    if not (isinstance(names, list) and len(names) in (0, seats) and
            all(isinstance(n, str) for n in names)):
        raise HandError(f"players {shown(names, 60)}: want a name for each of {seats} seats")
    number = hand.get("hand", index + 1)
    if not isinstance(number, int) or isinstance(number, bool) or number < 0:
        number = index + 1
    if not any(hole):
        yield Skipped("no hole cards shown", f"{where}: every seat's hole cards are hidden: "
                                             "no seat's view can be computed, no rows")
        return
    cards = "/".join(["|".join(cards_str(h) if h else "????" for h in hole),
                      *(cards_str(b) for b in board)])
    yield LoggedHand(where, line, index, number, "/".join(betting), tuple(hole),
                     tuple(board), payoffs, tuple(names), cards, game)


def _amounts(hand: Mapping[str, Any], key: str, seats: int | None = None
             ) -> tuple[Amount, ...]:
    values = hand.get(key)
    if not isinstance(values, list) or (seats is not None and len(values) != seats):
        want = f"{seats} amounts, one a seat" if seats is not None else "a list of amounts"
        raise HandError(f"{key} {shown(values, 60)}: want {want}")
    return tuple(_amount(v, key) for v in values)


Amount = int | Decimal  # as logged: whole, or decimal
_DECIMAL = re.compile(r"[0-9]{1,12}(?:\.[0-9]{1,8})?")


def _amount(value: Any, what: str) -> Amount:
    """An amount as the log writes it, exactly: a whole number, or a decimal one (TOML's
    float, or a string of digits: an action's)."""
    if isinstance(value, str):
        if not _DECIMAL.fullmatch(value):
            raise HandError(f"{what} {shown(value, 20)}: want an amount of chips")
        return int(value) if value.isdigit() else Decimal(value)
    if isinstance(value, float) and math.isfinite(value) and 0 <= value <= 2**31:
        return Decimal(repr(value))  # the shortest decimal that is this float: 0.1, not 0.1000…
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2**31:
        raise HandError(f"{what} {shown(value, 20)}: want an amount of chips, 0 to "
                        f"{2**31 - 1:,}")
    return value


def _places(amount: Amount) -> int:
    """The decimal places ``amount`` needs (0 for a whole number)."""
    if isinstance(amount, int):
        return 0
    exponent = amount.normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def _scaled(amounts: Sequence[Amount], places: int, what: str) -> tuple[int, ...]:
    """``amounts`` in chips of ``places`` decimal places, within a 32-bit stack."""
    if not places and all(type(a) is int and a < 2**31 for a in amounts):
        return tuple(amounts)  # type: ignore[arg-type]  # the common case: whole chips
    out = []
    for amount in amounts:
        chips = Decimal(amount).scaleb(places)
        if chips != chips.to_integral_value() or not 0 <= chips <= 2**31 - 1:
            raise HandError(f"{what} {amount}: want 0 to {2**31 - 1:,} chips of "
                            f"{10 ** -places:g}")
        out.append(int(chips))
    return tuple(out)


def _seat(text: str, seats: int, number: int) -> int:
    seat = int(text) - 1
    if not 0 <= seat < seats:
        raise HandError(f"action {number} names seat p{text}; the hand has p1 to p{seats}")
    return seat


@functools.lru_cache(maxsize=4096)
def _game(blinds: tuple[int, ...], stacks: tuple[int, ...], antes: tuple[int, ...] = (),
          trimming: bool = False, places: int = 0, raise_size: tuple[int, ...] = ()
          ) -> GameDef:
    """The game of a hand's seats, blinds, antes and stacks, its seats acting in PHH's
    order (`phh_first_player`): no-limit, or with ``raise_size`` (small, small, big,
    big bets) fixed-limit, at most `FIXED_LIMIT_CAP` bets and raises a round. Made once
    for the hands of one table (a session's ten thousand hands are one game)."""
    seats = len(blinds)
    try:
        first = phh_first_player(blinds)
    except ValueError as exc:
        raise HandError(str(exc)) from None
    try:
        betting = "limit" if raise_size else "nolimit"
        return GameDef(name=f"holdem.{betting}.{seats}p.phh", betting=betting,
                       num_players=seats, num_rounds=4, blind=tuple(blinds),
                       raise_size=raise_size, first_player=first,
                       max_raises=(FIXED_LIMIT_CAP if raise_size else 255,) * 4,
                       num_board_cards=(0, 3, 1, 1), stack=tuple(stacks),
                       ante=tuple(antes) if any(antes) else (),
                       ante_trimming=trimming and any(antes),
                       chip=f"{10 ** -places:.{places}f}" if places else "",
                       description=f"{'fixed-limit' if raise_size else 'no-limit'} "
                                   f"hold'em of {seats} seats, blinds "
                                   f"{'/'.join(map(str, blinds))}"
                                   + (f", antes {'/'.join(map(str, antes))}"
                                      if any(antes) else "")
                                   + (f", bets {raise_size[0]}/{raise_size[2]}"
                                      if raise_size else "")
                                   + f", stacks {'/'.join(map(str, stacks))}"
                                   + (f" in chips of {10 ** -places:.{places}f}"
                                      if places else "") + " (PHH)")
    except GameDefError as exc:
        raise HandError(str(exc)) from None


def _payoffs(hand: Mapping[str, Any], stacks: Sequence[int], spent: Sequence[int],
             places: int = 0) -> tuple[float, ...]:
    """What each seat won or lost: its finishing stack less its starting one, or its
    winnings less what it put in; halves as the log pays them (an odd chip split). Empty
    where the hand logs neither: the rules' result is then the hand's."""
    seats = len(stacks)
    for key, base in (("finishing_stacks", stacks), ("winnings", spent)):
        values = hand.get(key)
        if values is None:
            continue
        if not (isinstance(values, list) and len(values) == seats and all(
                isinstance(v, int | float) and not isinstance(v, bool) and abs(v) <= 2**31
                for v in values)):  # a NaN is no number within those bounds either
            raise HandError(f"{key} {shown(values, 60)}: want {seats} numbers")
        return tuple(float(Decimal(repr(v)).scaleb(places)) - b
                     for v, b in zip(values, base, strict=True))
    return ()  # no result logged: the replay's is the hand's (a historical hand's)


def _line(raw: bytes, key: str) -> int:
    """The line of a ``.phhs`` file where hand ``[key]`` begins (1 if not found)."""
    found = re.search(rb"^[ \t]*\[[ \t]*['\"]?" + re.escape(key.encode()) + rb"['\"]?[ \t]*\]",
                      raw, re.MULTILINE)
    return raw.count(b"\n", 0, found.start()) + 1 if found else 1


def _line_of(exc: BaseException) -> int:
    found = re.search(r"line (\d+)", str(exc))
    return int(found.group(1)) if found else 1


def phh_files(path: Path) -> list[Path]:
    """A source's PHH files: the file itself, or a folder's, its subfolders' too, in
    natural order (``2.phh`` before ``10.phh``); hidden ones passed over, and linked
    folders not entered (a link to a file is listed: `regular_file` judges it)."""
    if not path.is_dir():
        return [path]
    return [path / relative for relative in _listing(path)]


_DIGITS = re.compile(r"([0-9]+)")  # a name's runs of ASCII digits, kept by the split


def _listing(path: Path) -> list[str]:
    """Folder ``path``'s PHH files, relative to it, in natural order (``01.phh`` and
    ``1.phh``, equal as numbers, by name)."""
    # the split alternates text and digit runs: the odd places are the numbers
    return sorted(_walk(path), key=lambda relative: (
        [int(t) if i % 2 else t for i, t in enumerate(_DIGITS.split(relative))], relative))


def _walk(path: Path) -> Iterator[str]:
    """The PHH files' names within folder ``path``, relative to it, in the order found."""
    for root, folders, names in os.walk(path):
        folders[:] = [d for d in folders if not d.startswith(".")]
        within = os.path.relpath(root, path)
        # a folder named like a PHH file is listed too: reading it says what it is
        for name in (*names, *folders):
            if not name.startswith(".") and name.endswith(SUFFIXES):
                yield name if within == "." else os.path.join(within, name)


def _digest(path: Path) -> str:
    """A folder's: a sha256 over its files' names and contents (a file no regular one,
    or a link out of it: its name only, never opened)."""
    if not path.is_dir():
        return file_digest(path)
    h = hashlib.sha256()
    for relative in _listing(path):
        h.update(relative.encode() + b"\0")
        if not regular_file(f := path / relative, path):
            h.update(file_digest(f).encode())
    return h.hexdigest()


def _sniff(path: Path, head: Sequence[str]) -> bool:
    if path.is_dir():
        return next(_walk(path), None) is not None and not any(
            p.suffix not in SUFFIXES for p in path.iterdir() if p.is_file()
            and not p.name.startswith("."))
    return path.suffix in SUFFIXES


def _read(source: Source) -> Iterator[LoggedHand | BadLine | Skipped]:
    hands = 0  # the hands' ordinal in the source, over its files
    chips = Chips()  # one chip for the source's hands: its first hand's
    folder = source.path if source.path.is_dir() else None
    for f in phh_files(source.path):
        if why := regular_file(f, folder):
            yield BadLine(str(f), 1, f"not read: {why}", "")
            continue
        for record in _file_hands(f, chips, source.progress):
            if isinstance(record, LoggedHand):
                record, hands = dataclasses.replace(record, index=hands), hands + 1
            yield record


PHH = register_format(Format(
    "phh", "holdem", "PHH hand histories (.phh, .phhs, or a folder of them)", _sniff, _read,
    directories=True, digest=_digest, priority=5))
