"""Hanabi logs as ``batchrl generate`` writes them: the report's for two players, and
hanab.live's game exports for three to five.

Games of three to five players are written as hanab.live exports, one JSON file a
game (``game000000.json``: ``{"players", "deck": [{"suitIndex", "rank"}], "actions":
[{"type", "target", "value"}], "options": {"variant": "No Variant"}}``, the format the
site exports and ``parsers.hanablive`` reads; `live_record`).

The report's logs, two players: per game, one JSON state per line and one JSON action
per line. Line *i* of ``<game>.states.jsonl`` is the state the player to move sees
before the move on line *i* of ``<game>.actions.jsonl``. A state::

    {"hints": 8, "finalround": -1, "white": 0, "blue": 0, "red": 0, "yellow": 0,
     "green": 0, "deck": 40, "handentropy_other": 21.6, "handentropy_current": 21.6,
     "fuse": 3, "round": 1, "current": "convention",
     "hands": {"current": [CARD, ...], "other": [CARD, ...]},
     "discarded": [100000, 200000, 300000, 400000, 500000]}

with a ``CARD`` ``{"playability", "color", "value", "cardentropy", "uselessness",
"poss_values": [5], "poss_colors": [5]}``. The report names the player to move
``current`` and also groups the cards under ``current``/``other``; one JSON object
cannot hold both, so the cards sit under ``hands``. Fireworks are the last rank
played of each colour (0: none), ``fuse`` the fuses left, ``deck`` the cards left,
``round`` counts from 1 (a round is one move each), ``finalround`` is -1 until the
last card is drawn and then the round it was drawn in. ``discarded`` holds one
6-digit number per colour: the colour (1 white … 5 green), then how many of each
rank 1–5 are discarded (misplays included).

The numbers are the knowledge model's (``batchrl.games.hanabi.knowledge``): the
current player's cards as it knows them, the other player's as that player is
publicly known to know them; ``color``/``value`` are the true card (the encoder
drops the current player's own). An action::

    {"type": "play", "player": "convention", "card": 2, "score": 7}
    {"type": "hintcolor", "player": "convention", "hinted": "simple", "value": 1, "score": 7}

``card`` is a slot (0 the oldest card), a ``hintvalue`` ``value`` a rank 1–5 and a
``hintcolor`` ``value`` a colour 0–4 (white, blue, red, yellow, green). ``score``
(ours, not the report's) is the cards played after the move, so the last move's
reward can be read without the state after it.

>>> import numpy as np
>>> from batchrl.games.hanabi.bots import ConventionBot
>>> states, actions = play_game((ConventionBot(), ConventionBot()), np.random.default_rng(3))
>>> record = state_record(states[0], ("a", "b"), -1)
>>> record["current"], record["deck"], len(record["hands"]["other"]), record["discarded"][0]
('a', 40, 5, 100000)
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from joblib import Parallel, delayed

from batchrl.games.hanabi import knowledge as kn
from batchrl.games.hanabi.bots import make_bot, play_game
from batchrl.games.hanabi.rules import (
    COLOURS,
    State,
    colour_of,
    decode,
    rank_of,
)

# a game is two files: its states and its actions, one JSON object a line each
STATES_SUFFIX, ACTIONS_SUFFIX = ".states.jsonl", ".actions.jsonl"
TYPES = {"play": "play", "discard": "discard", "hint_rank": "hintvalue",
         "hint_colour": "hintcolor"}


def _cards(state: State, seat: int, viewer: int | None) -> list[dict[str, Any]]:
    p = kn.distributions(kn.unseen(state, viewer), state.known[seat])
    numbers = kn.card_features(p, kn.playable(state), kn.useless(state))
    return [{"playability": float(f[0]), "color": COLOURS[colour_of(c)], "value": rank_of(c),
             "cardentropy": float(f[1]), "uselessness": float(f[2]),
             "poss_values": [float(v) for v in f[3:8]],
             "poss_colors": [float(v) for v in f[8:13]]}
            for c, f in zip(state.hands[seat], numbers, strict=True)]


def state_record(state: State, names: Sequence[str], finalround: int) -> dict[str, Any]:
    """The report's JSON state for the player to move."""
    if state.players != 2:
        raise ValueError(f"the report's logs are of two-player games, not {state.players}")
    me, other = state.current, 1 - state.current
    mine, theirs = _cards(state, me, me), _cards(state, other, None)
    table = kn.counts(state.discards).astype(int)
    return {
        "hints": state.hints, "finalround": finalround,
        **{name: state.fireworks[i] for i, name in enumerate(COLOURS)},
        "deck": len(state.deck),
        "handentropy_other": float(sum(c["cardentropy"] for c in theirs)),
        "handentropy_current": float(sum(c["cardentropy"] for c in mine)),
        "fuse": state.fuses, "round": state.moves // 2 + 1, "current": names[me],
        "hands": {"current": mine, "other": theirs},
        "discarded": [int(f"{i + 1}{''.join(str(n) for n in row)}")
                      for i, row in enumerate(table)],
    }


def action_record(state: State, action: int, names: Sequence[str],
                  score: int) -> dict[str, Any]:
    """The report's JSON action of the player to move in ``state``; ``score`` after it."""
    kind, a, b = decode(action, state.players)
    out: dict[str, Any] = {"type": TYPES[kind], "player": names[state.current]}
    if kind in ("play", "discard"):
        out["card"] = a
    else:
        out["hinted"], out["value"] = names[(state.current + a) % state.players], b
    out["score"] = score
    return out


def write_game(directory: Path, stem: str, states: Sequence[State], actions: Sequence[int],
               names: Sequence[str]) -> None:
    """Write one game's two files; each appears whole (written aside, then renamed)."""
    state_lines, action_lines, finalround = [], [], -1
    for before, action, after in zip(states, actions, states[1:], strict=False):
        if finalround < 0 and not before.deck:
            finalround = (before.moves - 1) // 2 + 1  # the round of the move that drew it
        state_lines.append(json.dumps(state_record(before, names, finalround)))
        action_lines.append(json.dumps(action_record(before, action, names,
                                                     after.score_played)))
    # the actions first: a kill between the two leaves no states file, so no game
    for suffix, lines in ((ACTIONS_SUFFIX, action_lines), (STATES_SUFFIX, state_lines)):
        _write_atomic(directory / f"{stem}{suffix}", "".join(f"{t}\n" for t in lines))


# hanab.live's No Variant suits (red, yellow, green, blue, purple) as batchrl's colours
# (white, blue, red, yellow, green): suit index -> colour; what parsers.hanablive reads
HANABLIVE_SUITS = {0: 2, 1: 3, 2: 4, 3: 1, 4: 0}
_SUIT_OF = {colour: suit for suit, colour in HANABLIVE_SUITS.items()}


def live_record(states: Sequence[State], actions: Sequence[int], names: Sequence[str],
                game_id: str) -> dict[str, Any]:
    """A game played through the rules as a hanab.live export: the deck as dealt (every
    hand in seat order, then the draws), plays and discards naming the card's place in
    the deck, hints a seat and a suit or rank.

    >>> from batchrl.games.hanabi.bots import ConventionBot
    >>> bots = (ConventionBot(),) * 3
    >>> states, actions = play_game(bots, np.random.default_rng(3))
    >>> record = live_record(states, actions, ("a", "b", "c"), "g3")
    >>> len(record["deck"]), len(record["actions"]) == len(actions) + 1  # and the game's end
    (50, True)
    >>> record["actions"][-1]["type"]
    4
    """
    first = states[0]
    players = first.players
    deck = [c for hand in first.hands for c in hand] + list(first.deck)
    size = len(first.hands[0])
    slots = [list(range(p * size, (p + 1) * size)) for p in range(players)]
    drawn = players * size
    out = []
    for state, action in zip(states, actions, strict=False):
        seat = state.current
        kind, a, b = decode(action, players)
        if kind in ("play", "discard"):
            out.append({"type": 0 if kind == "play" else 1, "target": slots[seat].pop(a)})
            if drawn < len(deck):
                slots[seat].append(drawn)
                drawn += 1
        else:
            out.append({"type": 2 if kind == "hint_colour" else 3,
                        "target": (seat + a) % players,
                        "value": _SUIT_OF[b] if kind == "hint_colour" else b})
    out.append({"type": 4, "target": states[-1].current, "value": 0})  # the game is over
    return {"id": game_id, "players": list(names),
            "deck": [{"suitIndex": _SUIT_OF[colour_of(c)], "rank": rank_of(c)} for c in deck],
            "actions": out, "options": {"variant": "No Variant"}}


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _play_and_write(directory: Path, specs: Sequence[str], first: int, count: int, seed: int,
                    width: int) -> list[int]:
    scores = []
    networks: dict[str, object] = {}  # a model: player's network, read once per block
    for g in range(first, first + count):
        rng = np.random.default_rng([seed, g])  # per game: the same games with any --jobs
        bots = []
        for spec in specs:
            if not spec.startswith(("model:", "python:")):
                bots.append(make_bot(spec, rng, len(specs)))
                continue
            if spec not in networks:
                networks[spec] = make_bot(spec, rng, len(specs))
            bots.append(networks[spec])
        states, actions = play_game(bots, rng)
        stem = f"game{g:0{width}d}"
        if len(specs) == 2:
            write_game(directory, stem, states, actions, specs)
        else:
            _write_atomic(directory / f"{stem}.json",
                          json.dumps(live_record(states, actions, specs, stem)))
        scores.append(states[-1].score_played)
    return scores


def generate(directory: Path, specs: Sequence[str], games: int, seed: int,
             progress: Callable[[int], None] | None = None, jobs: int = 1,
             block: int = 200) -> list[int]:
    """Play ``games`` games of the players ``specs`` (see ``bots.make_bot``) and write them
    under ``directory`` as ``game000000.*`` (two players: the report's logs; three to
    five: hanab.live exports); returns their scores (cards played). Game g is seeded by
    (``seed``, g), so ``jobs`` processes write the same files as one."""
    if not 2 <= len(specs) <= 5:
        raise ValueError(f"Hanabi is for 2 to 5 players, not {len(specs)}")

    for spec in specs:  # an unknown name, or a model of another count, fails first
        make_bot(spec, np.random.default_rng(0), len(specs))
    directory.mkdir(parents=True, exist_ok=True)
    width = max(6, len(str(games - 1)))
    starts = range(0, games, block)
    if jobs == 1:
        parts = (_play_and_write(directory, specs, s, min(block, games - s), seed, width)
                 for s in starts)
    else:
        parts = Parallel(n_jobs=jobs, return_as="generator")(
            delayed(_play_and_write)(directory, specs, s, min(block, games - s), seed, width)
            for s in starts)
    scores: list[int] = []
    for part in parts:
        scores += part
        if progress is not None:
            progress(len(part))
    return scores
