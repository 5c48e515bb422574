"""hanab.live game exports (JSON): text -> games, nothing else.

``{players, deck: [{suitIndex, rank}], actions: [{type, target, value}], options?}``.
The deck is listed top to bottom and dealt seat by seat, each seat's whole hand
before the next (5 cards with 2-3 players, 4 with 4-5), which is how
``batchrl.games.hanabi.rules.deal`` deals. Actions: 0 play and 1 discard
(``target`` is the card's index in ``deck``, not its slot), 2 colour clue and 3
rank clue (``target`` a seat, ``value`` a suit index or a rank), 4 game over. A play
or a discard may leave its ``value`` out (the format's own example does); a clue may not.

batchrl plays the standard game only: "No Variant" (suits red, yellow, green,
blue, purple, read as batchrl's five colours), the first seat starting, and none
of the options that change the rules. Anything else is refused with a message
that names the variant or the option.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from batchrl.games.hanabi.logs import HANABLIVE_SUITS as _SUIT
from batchrl.games.hanabi.rules import (
    IllegalMove,
    State,
    card,
    deal,
    encode_hint,
    full_deck,
    hand_size,
    step,
)
from batchrl.games.jsonlines import parse_json
from batchrl.records import excerpt, json_int, regular_file, shown

MAX_FILE = 16 << 20  # an export is tens of KB
_INT = 2**31  # a field's whole numbers, before their own checks
_DECK = len(full_deck())
_CLUES = {2: "a colour clue (type 2)", 3: "a rank clue (type 3)"}
_RULE_OPTIONS = ("deckPlays", "emptyClues", "oneExtraCard", "oneLessCard", "allOrNothing",
                 "detrimentalCharacters", "cardCycle")


class HanabLiveError(ValueError):
    """An export batchrl cannot replay; the message says why, and ``kind`` what kind of
    refusal it is (``variant 'NAME'``, ``option NAME``, ``bad game``), for counts."""

    def __init__(self, message: str, kind: str = "bad game") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class LiveGame:
    source: str
    players: tuple[str, ...]
    deck: tuple[int, ...]  # batchrl card ids, top to bottom
    actions: tuple[dict[str, int], ...]  # as exported, without the final game-over action
    game_id: str


def read_hanablive(path: str | Path) -> LiveGame:
    """One export; raises ``HanabLiveError`` for variants, options and malformed files."""
    path = Path(path)
    if why := regular_file(path):  # a pipe would block the read; a device never end it
        raise HanabLiveError(f"{path}: {why}")
    try:
        if (size := path.stat().st_size) > MAX_FILE:
            raise HanabLiveError(f"{path}: {size:,} bytes: an export is tens of KB")
        data = parse_json(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError) as exc:
        raise HanabLiveError(f"{path}: not a JSON game export ({exc})") from None
    if not isinstance(data, dict):
        raise HanabLiveError(f"{path}: not a JSON game export (not an object)")
    options = {} if data.get("options") is None else data["options"]
    if not isinstance(options, dict):
        raise HanabLiveError(f"{path}: options {shown(options)}: want an object")
    # the variant is named in options.variant, or in a top-level "variant" key (some
    # exports, e.g. partial endgame fixtures): either names a game that is not ours
    variant = options.get("variant", data.get("variant", "No Variant"))
    if variant != "No Variant" or data.get("variant", "No Variant") != "No Variant":
        variant = variant if variant != "No Variant" else data.get("variant")
        raise HanabLiveError(f"{path}: variant {shown(variant)}: batchrl plays No Variant only",
                             kind=f"variant {shown(variant)}")
    if changed := [o for o in _RULE_OPTIONS if options.get(o)]:
        raise HanabLiveError(f"{path}: option {', '.join(changed)} changes the rules: "
                             "batchrl plays the standard game only",
                             kind=f"option {', '.join(changed)}")
    if options.get("startingPlayer", 0) != 0:
        raise HanabLiveError(f"{path}: startingPlayer {shown(options['startingPlayer'])}: "
                             "batchrl's games start with seat 0")
    try:
        if not isinstance(data["players"], list) or not all(
                isinstance(p, str | int) and not isinstance(p, bool) for p in data["players"]):
            raise ValueError(f"players {shown(data['players'])}: want a list of names")
        players = tuple(str(p) for p in data["players"])
        for key in ("deck", "actions"):
            if not isinstance(data[key], list):
                raise ValueError(f"{key} {shown(data[key])}: want a list")
        if not all(isinstance(c, dict) for c in data["deck"]):
            raise ValueError(f"deck {shown(data['deck'])}: want a list of cards (objects)")
        suits = [json_int(c["suitIndex"], "suitIndex", -_INT, _INT) for c in data["deck"]]
        if bad := sorted({x for x in suits if x not in _SUIT}):
            raise HanabLiveError(f"{path}: suits {shown(bad)} are not No Variant's 0-4")
        ranks = [json_int(c["rank"], "rank", -_INT, _INT) for c in data["deck"]]
        if bad := sorted({r for r in ranks if not 1 <= r <= 5}):
            raise HanabLiveError(f"{path}: the deck is not the 50 cards of No Variant: ranks "
                                 f"{shown(bad)}")
        deck = tuple(card(_SUIT[x], r) for x, r in zip(suits, ranks, strict=True))
        actions = tuple(_move(path, number, a) for number, a in enumerate(data["actions"], 1))
    except HanabLiveError:
        raise
    except KeyError as exc:
        raise HanabLiveError(f"{path}: missing field {shown(exc.args[0])}") from None
    except (TypeError, ValueError, AttributeError) as exc:
        raise HanabLiveError(f"{path}: malformed field ({exc})") from None
    if sorted(deck) != sorted(full_deck()):
        raise HanabLiveError(f"{path}: the deck is not the 50 cards of No Variant")
    while actions and actions[-1]["type"] == 4:
        actions = actions[:-1]
    given = data.get("id")
    game_id = excerpt(str(given)) if isinstance(given, str | int) and \
        not isinstance(given, bool) else path.stem
    return LiveGame(str(path), players, deck, actions, game_id)


def _move(path: Path, number: int, move: Any) -> dict[str, int]:
    """Action ``number`` of the export at ``path`` as whole numbers ``{type, target,
    value}`` (``value`` 0 where a play, a discard or the game's end leaves it out);
    ``HanabLiveError`` naming the file and the action if a field is missing or no whole
    number."""
    try:
        if not isinstance(move, dict):
            raise ValueError("want an object")
        kind = json_int(move["type"], "type", -_INT, _INT)
        if kind in _CLUES and "value" not in move:
            raise ValueError(f"{_CLUES[kind]} has no value: the suit or rank clued")
        return {"type": kind, "target": json_int(move["target"], "target", -_INT, _INT),
                "value": json_int(move.get("value", 0), "value", -_INT, _INT)}
    except KeyError as exc:
        raise HanabLiveError(f"{path}: action {number} ({shown(move)}): missing field "
                             f"{shown(exc.args[0])}") from None
    except ValueError as exc:
        raise HanabLiveError(f"{path}: action {number} ({shown(move)}): {exc}") from None


def to_action(move: dict[str, int], seat: int, players: int, slots: list[int]) -> int:
    """A hanab.live action as a batchrl action for ``seat``, whose hand holds the deck
    cards ``slots`` (in batchrl's slot order)."""
    kind, target, value = move["type"], move["target"], move["value"]
    if kind in (0, 1):
        if not 0 <= target < _DECK:
            raise HanabLiveError(f"seat {seat} plays or discards deck card {target}, not one "
                                 f"of 0-{_DECK - 1}")
        if target not in slots:
            raise HanabLiveError(f"seat {seat} plays or discards deck card {target}, "
                                 "which it does not hold")
        return slots.index(target) + (0 if kind == 0 else 5)
    if kind in (2, 3):
        if not 0 <= target < players:
            raise HanabLiveError(f"seat {seat} clues seat {target}, not one of "
                                 f"0-{players - 1}")
        offset = (target - seat) % players
        if offset == 0:
            raise HanabLiveError(f"seat {seat} clues itself")
        if kind == 2:
            if value not in _SUIT:
                raise HanabLiveError(f"seat {seat} clues suit {value}, not one of 0-4")
            return encode_hint("hint_colour", offset, _SUIT[value])
        if not 1 <= value <= 5:
            raise HanabLiveError(f"seat {seat} clues rank {value}, not one of 1-5")
        return encode_hint("hint_rank", offset, value)
    raise HanabLiveError(f"action type {kind} is none of 0-3")


def replay_live(game: LiveGame) -> tuple[list[State], list[int]]:
    """The states of a hanab.live game (``LiveGame``), first to last, and
    the moves between them (one fewer).

    Raises ``HanabLiveError`` naming the action that breaks a rule.
    """
    players = len(game.players)
    if not 2 <= players <= 5:
        raise HanabLiveError(f"{game.source}: {players} players: Hanabi is for 2 to 5")
    size = hand_size(players)
    state = deal(game.deck, players)
    # which deck card sits in each slot, in the rules' slot order (a draw goes last)
    slots = [list(range(p * size, (p + 1) * size)) for p in range(players)]
    next_card = players * size
    states, actions = [state], []
    for number, move in enumerate(game.actions, 1):
        seat = state.current
        try:
            action = to_action(move, seat, players, slots[seat])
            after = step(state, action)
        except (HanabLiveError, IllegalMove) as exc:
            raise HanabLiveError(f"{game.source}: action {number} ({move}): {exc}") from None
        if action < 10:
            slots[seat].pop(action % 5)
            if len(after.hands[seat]) > len(slots[seat]):
                slots[seat].append(next_card)
                next_card += 1
        state = after
        states.append(state)
        actions.append(action)
    return states, actions
