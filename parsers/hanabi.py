"""The report's Hanabi logs (see ``batchrl.games.hanabi.logs``): a game's two files ->
its rows, nothing else.

The state lines already hold the knowledge model's numbers, so a game is read
without replaying it: the 195 numbers come straight from the fields (the
current player's own colours and values are dropped), the legal moves of each
state from its hints and the other player's cards, the reward of each move
from the score after it. Every move is checked against its state: a game with
an unreadable line or an illegal move is refused whole, with an error naming
the file and the line.

>>> import tempfile
>>> from pathlib import Path
>>> from batchrl.games.hanabi.logs import generate
>>> folder = Path(tempfile.mkdtemp())
>>> scores = generate(folder, ("convention", "simple"), 1, seed=3)
>>> game = read_game(folder / "game000000.states.jsonl")
>>> game.features.shape[1], int(game.rewards.sum()) == scores[0], game.names[:2]
(195, True, ('convention', 'simple'))
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games.hanabi.rules import COLOURS, MAX_HINTS, encode_hint

STATES_SUFFIX, ACTIONS_SUFFIX = ".states.jsonl", ".actions.jsonl"
_HEAD = ("hints", "fuse", "deck", *COLOURS, "handentropy_current", "handentropy_other")
_CARD = ("playability", "cardentropy", "uselessness")


class HanabiLogError(ValueError):
    """A game the parser refuses; the message names the file and the line."""


@dataclass(frozen=True)
class ReportGame:
    """One game of the report's format, as rows: one per move."""

    source: str  # the states file
    features: NDArray[np.float32]  # (moves, 195)
    actions: NDArray[np.int64]
    rewards: NDArray[np.float64]  # cards played by each move
    legal: NDArray[np.bool_]  # (moves, 20): the legal moves of each state
    names: tuple[str, ...]  # who moved
    hands: tuple[str, ...]  # the mover's own cards (hidden from it), e.g. "w1 b3 r2 y4 g5"
    score: int  # cards played at the end


def actions_path(states: Path) -> Path:
    """The actions file beside a states file."""
    return states.with_name(states.name.removesuffix(STATES_SUFFIX) + ACTIONS_SUFFIX)


def _number(record: dict[str, Any], key: str) -> float:
    value = record[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key!r} is {value!r}, not a number")
    return float(value)


def _card_numbers(card: dict[str, Any]) -> list[float]:
    values, colours = card["poss_values"], card["poss_colors"]
    if len(values) != 5 or len(colours) != 5:
        raise ValueError("poss_values and poss_colors want 5 numbers each")
    return [*(_number(card, k) for k in _CARD), *map(float, values), *map(float, colours)]


def _identity(card: dict[str, Any]) -> tuple[int, int]:
    colour, value = card["color"], card["value"]
    if colour not in COLOURS or value not in (1, 2, 3, 4, 5):
        raise ValueError(f"a card {colour!r} {value!r}: want a colour of {COLOURS} and 1-5")
    return COLOURS.index(colour), int(value)


def _discards(numbers: list[Any]) -> list[float]:
    table = [[0.0] * 5 for _ in range(5)]
    for n in numbers:
        digits = str(n)
        if len(digits) != 6 or not digits.isdigit() or not "1" <= digits[0] <= "5":
            raise ValueError(f"discarded {n!r}: want 6 digits, a colour 1-5 then 5 counts")
        table[int(digits[0]) - 1] = [float(d) for d in digits[1:]]
    return [v for row in table for v in row]


def encode_record(record: dict[str, Any]) -> tuple[list[float], list[tuple[int, int]],
                                                   list[tuple[int, int]]]:
    """The 195 numbers of a state line, and the identities of both hands."""
    mine, theirs = record["hands"]["current"], record["hands"]["other"]
    if not 1 <= len(mine) <= 5 or not 1 <= len(theirs) <= 5:
        raise ValueError("a hand holds 1 to 5 cards")
    x = [_number(record, k) for k in _HEAD] + _discards(record["discarded"])
    own = [v for c in mine for v in _card_numbers(c)]
    x += own + [0.0] * (65 - len(own))
    other = []
    for c in theirs:
        colour, value = _identity(c)
        other += [*_card_numbers(c), *(float(colour == k) for k in range(5)), float(value)]
    x += other + [0.0] * (95 - len(other))
    return x, [_identity(c) for c in mine], [_identity(c) for c in theirs]


def legal_mask(hints: int, own: int, other: list[tuple[int, int]],
               discard_at_max_hints: bool = False) -> NDArray[np.bool_]:
    """The legal moves of a two-player state (as ``rules.legal_actions`` gives them)."""
    mask = np.zeros(20, dtype=bool)
    mask[:own] = True
    if hints < MAX_HINTS or discard_at_max_hints:
        mask[5:5 + own] = True
    if hints > 0:
        for colour, rank in other:
            mask[encode_hint("hint_rank", 1, rank)] = True
            mask[encode_hint("hint_colour", 1, colour)] = True
    return mask


def _action(record: dict[str, Any], own: int) -> int:
    kind = record["type"]
    if kind in ("play", "discard"):
        slot = record["card"]
        if not isinstance(slot, int) or not 0 <= slot < own:
            raise ValueError(f"card {slot!r}: the hand has slots 0-{own - 1}")
        return slot + (0 if kind == "play" else 5)
    if kind == "hintvalue":
        return encode_hint("hint_rank", 1, int(record["value"]))
    if kind == "hintcolor":
        return encode_hint("hint_colour", 1, int(record["value"]))
    raise ValueError(f"type {kind!r}: want play, discard, hintvalue or hintcolor")


def _lines(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise HanabiLogError(f"{path}: no such file (a game needs its states and its "
                             f"actions file)") from None
    except UnicodeDecodeError as exc:
        raise HanabiLogError(f"{path}: not UTF-8 text ({exc.reason})") from None
    return [t for t in text.splitlines()]


def read_game(states: str | Path) -> ReportGame:
    """One game from its states file (the actions file is found beside it)."""
    states = Path(states)
    acts = actions_path(states)
    state_lines, action_lines = _lines(states), _lines(acts)
    while state_lines and not state_lines[-1].strip():
        state_lines.pop()
    while action_lines and not action_lines[-1].strip():
        action_lines.pop()
    if not state_lines:
        raise HanabiLogError(f"{states}: no state")
    if len(state_lines) != len(action_lines):
        raise HanabiLogError(f"{states}: {len(state_lines)} states but {acts.name} holds "
                             f"{len(action_lines)} actions: line i of one goes with line i of "
                             f"the other")
    features: list[list[float]] = []
    actions: list[int] = []
    legal: list[NDArray[np.bool_]] = []
    names: list[str] = []
    hands: list[str] = []
    scores_before: list[int] = []
    scores_after: list[Any] = []
    for no, (s_text, a_text) in enumerate(zip(state_lines, action_lines, strict=True), 1):
        where = f"{states}, line {no}"
        try:
            s = json.loads(s_text)
        except json.JSONDecodeError as exc:
            raise HanabiLogError(f"{where}: not JSON ({exc.msg})") from None
        try:
            a = json.loads(a_text)
        except json.JSONDecodeError as exc:
            raise HanabiLogError(f"{acts}, line {no}: not JSON ({exc.msg})") from None
        try:
            x, mine, theirs = encode_record(s)
            mask = legal_mask(int(s["hints"]), len(mine), theirs)
            action = _action(a, len(mine))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            what = f"no field {exc}" if isinstance(exc, KeyError) else str(exc)
            raise HanabiLogError(f"{where}: {what}") from None
        if not mask[action]:
            raise HanabiLogError(f"{acts}, line {no}: {a['type']} {a.get('card', a.get('value'))}"
                                 f" is not a legal move in the state on {states.name} line {no}")
        if a.get("player", s["current"]) != s["current"]:
            raise HanabiLogError(f"{acts}, line {no}: {a['player']!r} moves, but the state says "
                                 f"{s['current']!r} is to move")
        if names and s["current"] == names[-1] and len(set(names)) > 1:
            raise HanabiLogError(f"{where}: {s['current']!r} moves twice in a row")
        features.append(x)
        actions.append(action)
        legal.append(mask)
        names.append(str(s["current"]))
        hands.append(" ".join(f"{COLOURS[c][0]}{r}" for c, r in mine))
        scores_before.append(sum(int(s[c]) for c in COLOURS))
        scores_after.append(a.get("score"))
    # no score field: read it off the next state (the last move, without one, scores 0)
    following = [*scores_before[1:], scores_before[-1]]
    scores_after = [f if a is None else int(a) for a, f in zip(scores_after, following,
                                                               strict=True)]
    rewards = np.asarray(scores_after, dtype=np.float64) - np.asarray(scores_before)
    return ReportGame(str(states), np.asarray(features, dtype=np.float32),
                      np.asarray(actions, dtype=np.int64), rewards,
                      np.asarray(legal, dtype=bool), tuple(names), tuple(hands),
                      int(scores_after[-1]))


def game_files(path: str | Path) -> list[Path]:
    """The states files of a game's states file, or of every game in a directory."""
    path = Path(path)
    if path.is_dir():
        return sorted(path.glob(f"*{STATES_SUFFIX}"))
    return [path]
