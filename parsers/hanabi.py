"""The report's Hanabi logs (see ``batchrl.games.hanabi.logs``): a game's two files ->
its rows, nothing else.

The state lines already hold the knowledge model's numbers, so a game is read
without replaying it: the 195 numbers come straight from the fields (the
current player's own colours and values are dropped), the legal moves of each
state from its hints and the other player's cards, the reward of each move
from the log itself: a play scores when the mover's card (in its state line,
hidden from the features) is one above its colour's firework. The action
line's ``score`` (ours), when present, must agree; so must the fireworks of
the next state. A game must end where the rules end it. The public hint facts that follow the
195 numbers (which cards hints touched, the focus of the hint just before) are
rebuilt from the moves. Every move is checked
against its state: a game with an unreadable line or an illegal move is
refused whole, with an error naming the file and the line.

>>> import tempfile
>>> from pathlib import Path
>>> from batchrl.games.hanabi.logs import generate
>>> folder = Path(tempfile.mkdtemp())
>>> scores = generate(folder, ("convention", "simple"), 1, seed=3)
>>> game = read_game(folder / "game000000.states.jsonl")
>>> game.features.shape[1], int(game.rewards.sum()) == scores[0], game.names[:2]
(210, True, ('convention', 'simple'))
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games.hanabi.logs import ACTIONS_SUFFIX, STATES_SUFFIX
from batchrl.games.hanabi.rules import COLOURS, MAX_HINTS, card, decode, encode_hint, legal_moves
from batchrl.games.jsonlines import line_parser
from batchrl.records import MAX_LINE, regular_file, shown

_HEAD = ("hints", "fuse", "deck", *COLOURS, "handentropy_current", "handentropy_other")
_CARD = ("playability", "cardentropy", "uselessness")
# A game's file is a few hundred KB (a state line is a few thousand characters, a game a
# hundred moves at most); the knowledge model's numbers are small.
MAX_FILE = 64 << 20
MAX_NUMBER = 1e6
# a row: the report's 195 numbers, then the hint facts (cards clued in each hand, 5 and 5,
# and the slots the last hint touched first, 5)
FEATURES = 195 + 15


class HanabiLogError(ValueError):
    """A game the parser refuses; the message names the file and the line."""


@dataclass(frozen=True)
class ReportGame:
    """One game of the report's format, as rows: one per move."""

    source: str  # the states file
    features: NDArray[np.float32]  # (moves, 210): the 195 numbers, then the hint facts
    actions: NDArray[np.int64]
    rewards: NDArray[np.float64]  # cards played by each move
    legal: NDArray[np.bool_]  # (moves, 20): the legal moves of each state
    names: tuple[str, ...]  # who moved
    hands: tuple[str, ...]  # the mover's own cards (hidden from it), e.g. "w1 b3 r2 y4 g5"
    score: int  # cards played at the end


def actions_path(states: Path) -> Path:
    """The actions file beside a states file."""
    return states.with_name(states.name.removesuffix(STATES_SUFFIX) + ACTIONS_SUFFIX)


def _finite(value: Any, what: str) -> float:
    # a range, not math.isfinite: a 400-digit integer is no float (OverflowError)
    if isinstance(value, bool) or not isinstance(value, int | float) or \
            not -MAX_NUMBER <= value <= MAX_NUMBER:
        raise ValueError(f"{what} is {shown(value)}, not a number from {-MAX_NUMBER:g} to "
                         f"{MAX_NUMBER:g}")
    return float(value)


def _number(record: dict[str, Any], key: str) -> float:
    return _finite(record[key], repr(key))


def _integer(value: Any, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{what} {shown(value)}: want a whole number {low}-{high}")
    return value


def _card_numbers(card: dict[str, Any]) -> list[float]:
    values, colours = card["poss_values"], card["poss_colors"]
    if not isinstance(values, list) or not isinstance(colours, list) or len(values) != 5 \
            or len(colours) != 5:
        raise ValueError("poss_values and poss_colors want 5 numbers each")
    return [*(_number(card, k) for k in _CARD), *(_finite(v, "poss_values") for v in values),
            *(_finite(v, "poss_colors") for v in colours)]


def _identity(card: dict[str, Any]) -> tuple[int, int]:
    colour, value = card["color"], card["value"]
    if not isinstance(colour, str) or colour not in COLOURS or isinstance(value, bool) or \
            not isinstance(value, int) or value not in (1, 2, 3, 4, 5):
        raise ValueError(f"a card {shown(colour)} {shown(value)}: want a colour of {COLOURS} "
                         f"and 1-5")
    return COLOURS.index(colour), int(value)


PILES_KEPT = 1 << 14  # piles looked up before the table starts again (a few MB)
_PILES: dict[tuple[int, ...], tuple[float, ...]] = {}


def _discards(numbers: list[Any]) -> tuple[float, ...]:
    """The 25 numbers of the discard pile's counts, colour by colour (each logged number
    6 digits: the colour 1-5, then the count of each rank); a pile met before is looked
    up (it changes only on a discard or a misplay: a game meets a few dozen)."""
    # a list of whole numbers only: 112000.0 would find 112000's entry, and must be
    # refused; anything else is checked, where the checks say what it is
    key = tuple(numbers) if type(numbers) is list else None
    if key is None or not all(type(n) is int for n in key):
        return _discards_checked(numbers)
    if (known := _PILES.get(key)) is not None:
        return known
    got = _discards_checked(numbers)
    if len(_PILES) >= PILES_KEPT:
        _PILES.clear()
    _PILES[key] = got
    return got


def _discards_checked(numbers: list[Any]) -> tuple[float, ...]:
    table = [[0.0] * 5 for _ in range(5)]
    if not isinstance(numbers, list):
        raise ValueError(f"discarded {shown(numbers)}: want a list of numbers")
    for n in numbers:
        if isinstance(n, bool) or not isinstance(n, int) or not 100_000 <= n <= 599_999:
            raise ValueError(f"discarded {shown(n)}: want 6 digits, a colour 1-5 then 5 "
                             f"counts")
        digits = str(n)
        table[int(digits[0]) - 1] = [float(d) for d in digits[1:]]
    return tuple(v for row in table for v in row)


_COLOUR_INDEX = {c: i for i, c in enumerate(COLOURS)}
_HEAD_OF = operator.itemgetter(*_HEAD)
_ONE_HOT = [[float(k == i) for k in range(5)] for i in range(5)]
_NUMBER_TYPES = frozenset({int, float})


def encode_record(record: dict[str, Any]) -> tuple[list[float], list[tuple[int, int]],
                                                   list[tuple[int, int]]]:
    """The 195 numbers of a state line, and the identities of both hands.

    A line as the logs write it is encoded in one pass and checked in bulk (every number
    of a type and range at once); any other is encoded field by field, whose checks say
    what is wrong where."""
    try:
        fast = _encode_fast(record)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError):
        fast = None
    return fast if fast is not None else _encode_checked(record)


def _encode_fast(record: dict[str, Any]) -> tuple[list[float], list[tuple[int, int]],
                                                  list[tuple[int, int]]] | None:
    """`encode_record` of a well-formed line; None, or any exception, for another."""
    hands = record["hands"]
    mine, theirs = hands["current"], hands["other"]
    if type(mine) is not list or type(theirs) is not list or not 1 <= len(mine) <= 5 \
            or not 1 <= len(theirs) <= 5:
        return None
    numbers = [*_HEAD_OF(record)]
    own_ids = _cards(mine, numbers)
    own = len(numbers)
    other_ids = _cards(theirs, numbers)
    if own_ids is None or other_ids is None:
        return None
    # every number an int or a float (no bool, no string), none NaN, all in range (as
    # floats: max and min compare floats with floats quicker than ints with floats)
    if not set(map(type, numbers)) <= _NUMBER_TYPES:
        return None
    numbers = [*map(float, numbers)]
    if max(numbers) > MAX_NUMBER or min(numbers) < -MAX_NUMBER or \
            (total := sum(numbers)) != total:
        return None
    for _, value in (*own_ids, *other_ids):
        if type(value) is not int or not 1 <= value <= 5:
            return None
    head = len(_HEAD)
    x = [*numbers[:head], *_discards(record["discarded"]), *numbers[head:own],
         *[0.0] * (65 - (own - head))]
    for k, (colour, value) in enumerate(other_ids):
        start = own + 13 * k
        x += [*numbers[start:start + 13], *_ONE_HOT[colour], float(value)]
    x += [0.0] * (19 * (5 - len(theirs)))
    return x, own_ids, other_ids


_FIELDS = operator.itemgetter("playability", "cardentropy", "uselessness", "poss_values",
                              "poss_colors", "color", "value")


def _cards(cards: list[Any], numbers: list[Any]) -> list[tuple[int, int]] | None:
    """A hand's cards' 13 numbers each, unchecked, onto ``numbers``; their identities, or
    None where a card's lists are not 5 long."""
    ids: list[tuple[int, int]] = []
    for c in cards:
        playability, entropy, uselessness, values, colours, colour, value = _FIELDS(c)
        if type(values) is not list or type(colours) is not list or len(values) != 5 \
                or len(colours) != 5:
            return None
        numbers += (playability, entropy, uselessness, *values, *colours)
        ids.append((_COLOUR_INDEX[colour], value))
    return ids


def _encode_checked(record: dict[str, Any]) -> tuple[list[float], list[tuple[int, int]],
                                                     list[tuple[int, int]]]:
    """`encode_record` field by field, each checked with its own message."""
    mine, theirs = record["hands"]["current"], record["hands"]["other"]
    if not 1 <= len(mine) <= 5 or not 1 <= len(theirs) <= 5:
        raise ValueError("a hand holds 1 to 5 cards")
    x = [_number(record, k) for k in _HEAD] + [*_discards(record["discarded"])]
    own = [v for c in mine for v in _card_numbers(c)]
    x += own + [0.0] * (65 - len(own))
    other = []
    for c in theirs:
        colour, value = _identity(c)
        other += [*_card_numbers(c), *(float(colour == k) for k in range(5)), float(value)]
    x += other + [0.0] * (95 - len(other))
    return x, [_identity(c) for c in mine], [_identity(c) for c in theirs]


State = tuple[list[float], list[tuple[int, int]], list[tuple[int, int]], int, list[int], int,
              int, str]
_STATE_INTS = operator.itemgetter("hints", "fuse", "deck", *COLOURS)


def _state(record: dict[str, Any]) -> State:
    """A state line's numbers and hands (`encode_record`), then its hints, fireworks,
    fuse, deck and the player to move: checked in bulk for a line as the logs write it,
    else field by field, whose errors say what is wrong."""
    try:
        fast = _state_fast(record)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError):
        fast = None
    if fast is not None:
        return fast
    x, mine, theirs = encode_record(record)
    hints = _integer(record["hints"], "hints", 0, MAX_HINTS)
    fireworks = [_integer(record[c], c, 0, 5) for c in COLOURS]
    fuse = _integer(record["fuse"], "fuse", 0, 3)
    deck = _integer(record["deck"], "deck", 0, 40)
    return x, mine, theirs, hints, fireworks, fuse, deck, _name(record["current"], "current")


def _state_fast(record: dict[str, Any]) -> State | None:
    """`_state` of a well-formed line; None, or any exception, for another."""
    encoded = _encode_fast(record)
    counts = _STATE_INTS(record)
    hints, fuse, deck, *fireworks = counts
    current = record["current"]
    if encoded is None or set(map(type, counts)) != _INT or \
            not (0 <= hints <= MAX_HINTS and 0 <= fuse <= 3 and 0 <= deck <= 40) or \
            min(fireworks) < 0 or max(fireworks) > 5 or type(current) is not str or \
            len(current) > 1000:
        return None
    return *encoded, hints, fireworks, fuse, deck, current


_INT = {int}


def legal(hints: int, own: int, other: list[tuple[int, int]],
          discard_at_max_hints: bool = False) -> tuple[int, ...]:
    """The legal moves of a two-player state (as ``rules.legal_actions`` gives them)."""
    return legal_moves(own, hints, [[card(colour, rank) for colour, rank in other]],
                       discard_at_max_hints)


def _action(record: dict[str, Any], own: int) -> int:
    kind = record["type"]
    if kind in ("play", "discard"):
        slot = _integer(record["card"], "card", 0, own - 1)
        return slot + (0 if kind == "play" else 5)
    if kind == "hintvalue":
        return encode_hint("hint_rank", 1, _integer(record["value"], "hint value", 1, 5))
    if kind == "hintcolor":
        return encode_hint("hint_colour", 1, _integer(record["value"], "hint colour", 0, 4))
    raise ValueError(f"type {shown(kind)}: want play, discard, hintvalue or hintcolor")


def _object(text: str, parse: Callable[[str], Any]) -> dict[str, Any]:
    data = parse(text)
    if type(data) is not dict:
        raise ValueError(f"{shown(data)}: want a JSON object")
    return data


def _name(value: Any, what: str) -> str:
    """A player's name: a string (or a number, as some logs write seats)."""
    if type(value) is str and len(value) <= 1000:
        return value
    if isinstance(value, bool) or not isinstance(value, str | int) or \
            (isinstance(value, int) and not -(2**63) <= value < 2**64) or \
            (isinstance(value, str) and len(value) > 1000):
        raise ValueError(f"{what} {shown(value)}: want a player's name")
    return str(value)


def _lines(path: Path) -> tuple[list[str], Callable[[str], Any]]:
    """A game file's lines, and the parser of its lines (`line_parser`: the file's text
    checked once for what every line would be checked for)."""
    if not path.exists() and not path.is_symlink():
        raise HanabiLogError(f"{path}: no such file (a game needs its states and its "
                             f"actions file)")
    if why := regular_file(path):  # a pipe would block the read; a device never end it
        raise HanabiLogError(f"{path}: {why}")
    if (size := path.stat().st_size) > MAX_FILE:
        raise HanabiLogError(f"{path}: {size:,} bytes: a game's file is a few hundred KB")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise HanabiLogError(f"{path}: not UTF-8 text ({exc.reason})") from None
    lines = text.splitlines()
    if long := next((n for n, t in enumerate(lines, 1) if len(t) > MAX_LINE), None):
        raise HanabiLogError(f"{path}, line {long}: a line of more than {MAX_LINE:,} "
                             f"characters: a state is a few thousand")
    while lines and not lines[-1].strip():
        lines.pop()
    return lines, line_parser(text)


_FLOATS = [[0.0] * n for n in range(6)]  # a hand's missing slots' hint facts
_CARD_TEXT = {(c, r): f"{name[0]}{r}" for c, name in enumerate(COLOURS) for r in range(1, 6)}


def read_game(states: str | Path) -> ReportGame:
    """One game from its states file (the actions file is found beside it)."""
    states = Path(states)
    acts = actions_path(states)
    (state_lines, parse_state), (action_lines, parse_action) = _lines(states), _lines(acts)
    if not state_lines:
        raise HanabiLogError(f"{states}: no state")
    if len(state_lines) != len(action_lines):
        raise HanabiLogError(f"{states}: {len(state_lines)} states but {acts.name} holds "
                             f"{len(action_lines)} actions: line i of one goes with line i of "
                             f"the other")
    # each move's numbers straight into the game's arrays (no list of lists to convert,
    # none for the collector to walk); the legal moves as (row, move) pairs, set at once
    features = np.empty((len(state_lines), FEATURES), dtype=np.float32)
    actions: list[int] = []
    legal_at: tuple[list[int], list[int]] = ([], [])
    names: list[str] = []
    hands: list[str] = []
    rewards: list[float] = []
    score = fuse = emptied = 0  # emptied: the states seen with the deck run out
    # by seat (seat 0 moves first), 1.0 for a card a hint has touched
    clued: list[list[float]] = [[0.0] * 5, [0.0] * 5]
    focus = _FLOATS[5]  # 1.0 for the slots the last move's hint touched first
    for no, (s_text, a_text) in enumerate(zip(state_lines, action_lines, strict=True), 1):
        try:
            s = _object(s_text, parse_state)
        except ValueError as exc:
            raise HanabiLogError(f"{states}, line {no}: {exc}") from None
        try:
            a = _object(a_text, parse_action)
        except ValueError as exc:
            raise HanabiLogError(f"{acts}, line {no}: {exc}") from None
        try:
            x, mine, theirs, hints, fireworks, fuse, deck, current = _state(s)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            what = f"no field {shown(exc.args[0])}" if isinstance(exc, KeyError) else str(exc)
            raise HanabiLogError(f"{states}, line {no}: {what}") from None
        if sum(fireworks) != score:
            raise HanabiLogError(f"{states}, line {no}: the fireworks add up to "
                                 f"{sum(fireworks)}, but the moves before it played {score} "
                                 f"cards")
        emptied += deck == 0
        if fuse == 0 or score == 25 or emptied > 2:
            raise HanabiLogError(f"{states}, line {no}: a move after the game is over")
        try:
            action = _action(a, len(mine))
            player = _name(a.get("player", current), "player")
            logged = a.get("score")
            if logged is not None:
                logged = _integer(logged, "score", 0, 25)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            what = f"no field {shown(exc.args[0])}" if isinstance(exc, KeyError) else str(exc)
            raise HanabiLogError(f"{acts}, line {no}: {what}") from None
        moves = legal(hints, len(mine), theirs)
        if action not in moves:
            raise HanabiLogError(f"{acts}, line {no}: {a['type']} "
                                 f"{a.get('card', a.get('value'))} is not a legal move in the "
                                 f"state on line {no} of {states.name}")
        if player != current:
            raise HanabiLogError(f"{acts}, line {no}: {shown(player)} moves, but the state "
                                 f"says {shown(current)} is to move")
        # the mover's own card is in its state line (hidden from the features): a play
        # scores when its colour's firework is one below it
        reward = 0.0
        if action < 5:
            colour, value = mine[action]
            reward = float(fireworks[colour] == value - 1)
        if logged is not None and logged != score + reward:
            raise HanabiLogError(f"{acts}, line {no}: score {logged} after the move, but the "
                                 f"move makes it {score + reward:g}")
        score += int(reward)
        mine_clued, other_clued = clued[(no - 1) % 2], clued[no % 2]
        if len(mine_clued) != len(mine) or len(other_clued) != len(theirs):
            raise HanabiLogError(f"{states}, line {no}: hands of {len(mine)} and "
                                 f"{len(theirs)} cards, but the moves before leave "
                                 f"{len(mine_clued)} and {len(other_clued)}")
        x += mine_clued
        x += _FLOATS[5 - len(mine)]
        x += other_clued
        x += _FLOATS[5 - len(theirs)]
        x += focus
        focus = _FLOATS[5]
        if action < 10:
            mine_clued.pop(action % 5)
            if deck > 0:
                mine_clued.append(0.0)
        else:
            kind, _, value = decode(action, 2)
            touched = [i for i, (c, r) in enumerate(theirs)
                       if (r if kind == "hint_rank" else c) == value]
            first = [i for i in touched if not other_clued[i]] or touched
            focus = [float(i in first) for i in range(5)]
            for i in touched:
                other_clued[i] = 1.0
        if len(x) != FEATURES:  # the encoding's width, as this reader's arrays hold it
            raise AssertionError(f"{states}, line {no}: {len(x)} numbers encoded, want "
                                 f"{FEATURES}")
        features[no - 1] = x
        actions.append(action)
        legal_at[0].extend([no - 1] * len(moves))
        legal_at[1].extend(moves)
        names.append(current)
        hands.append(" ".join(map(_CARD_TEXT.__getitem__, mine)))
        rewards.append(reward)
    twice = [i for i, (p, q) in enumerate(itertools.pairwise(names)) if p == q]
    if len(set(names)) > 1 and twice:
        turn = twice[0]
        raise HanabiLogError(f"{states}, line {turn + 2}: {names[turn]!r} moves twice in a row")
    last_misplayed = actions[-1] < 5 and rewards[-1] == 0 and fuse == 1
    if not (last_misplayed or score == 25 or emptied == 2):
        raise HanabiLogError(f"{states}: the log ends before the game does (no third fuse, no "
                             f"25, and the last round after the deck ran out is not complete)")
    mask = np.zeros((len(actions), 20), dtype=bool)
    mask[legal_at] = True
    return ReportGame(str(states), features, np.asarray(actions, dtype=np.int64),
                      np.asarray(rewards), mask, tuple(names), tuple(hands), score)
