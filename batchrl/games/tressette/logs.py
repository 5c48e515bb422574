"""Tressette hands as logs: batchrl's JSON Lines and the seed project's transcript.

A ``Game`` is one hand: the deal, every play in order, the teams' points. Two ways
to write it (``parsers.tressette`` reads both back, replaying every game):

* JSON Lines, one game a line, cards by name (the reader also takes int ids)::

    {"seed": 7, "leader": 0, "players": ["rule", "random", "rule", "random"],
     "hands": [["4D", "AD", ...], x4], "plays": [[0, "AD"], [1, "4D"], ...],
     "points": [6, 5]}

  ``hands`` are the four seats' cards as dealt (sorted), ``plays`` the 40 cards in
  the order played, ``points`` team 0's (seats 0 and 2) and team 1's; ``seed`` may be
  null. A line with fewer than 40 plays is a hand cut off: ``truncated``, no points.
* The transcript the seed's ``play_one_game`` prints, exactly (the stray ``)`` after
  each card included)::

    [DEBUG] Seed partita: 7
    Giocatore 0 (rule) gioca AD)
    ...
    == Fine partita ==
    Team 0 (seat 0+2) → 6 punti
    Team 1 (seat 1+3) → 5 punti
    Vince TEAM 0

  Several games follow one another in a file. The deal is not printed: a reader
  rebuilds it from the 40 plays. A game without a seed has no ``[DEBUG]`` line.

``play`` deals hand i from ``np.random.default_rng(hand_seed(seed, i))``, a function
of ``(seed, i)`` only, so hands do not depend on how a run is cut into chunks; the
logged ``seed`` is that per-hand seed, so ``deal(default_rng(game.seed), leader)``
deals the hand again (the random bots draw from the same generator after the deal).

>>> games = list(play(["rule", "random", "seed-heuristic", "random"], 3, seed=1))
>>> [g.leader for g in games], [sum(g.points or ()) for g in games], len(games[0].plays)
([0, 1, 2], [11, 11, 11], 40)
>>> all(Game.from_json(to_json(g)) == g for g in games)
True
>>> transcript_lines(games[0])[1:2], transcript_lines(games[0])[-4:-2]
(['Giocatore 0 (rule) gioca 3C)'], ['== Fine partita ==', 'Team 0 (seat 0+2) → 8 punti'])
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from batchrl.games.jsonlines import game_object
from batchrl.games.tressette.bots import BOT_NAMES, is_bot_name, make_bot
from batchrl.games.tressette.rules import (
    CARDS,
    SEATS,
    TRICKS,
    Play,
    State,
    card_name,
    deal,
    deal_hands,
    is_terminal,
    parse_card,
    step,
    team_points,
)
from batchrl.records import MAX_SEED, MIN_SEED, json_int, shown

SEED_PREFIX = "[DEBUG] Seed partita: "
END_LINE = "== Fine partita =="
DRAW_LINE = "Pareggio!"
TEAM_SEATS = ("0+2", "1+3")
MAX_POINTS = 11  # a hand's points, both teams' together


class ReplayError(ValueError):
    """A logged game that the rules do not play out as logged. ``play`` is the index
    (0-based) of the offending play in ``Game.plays``, or None if no one play is."""

    def __init__(self, message: str, play: int | None = None) -> None:
        super().__init__(message)
        self.play = play


@dataclass(frozen=True, slots=True)
class Game:
    """One hand as a log records it.

    ``names[s]``: the agent in seat s. ``hands[s]``: seat s's cards as dealt, sorted
    (ids, ``rules.card_name`` names them). ``plays``: (seat, card) in order, 40 for a
    whole hand. ``points``: (team 0, team 1), None where unknown (a truncated hand).
    ``truncated``: fewer than 40 plays, the log cut off mid-hand. A truncated game
    read from a transcript knows only the cards each seat was seen to play, so its
    ``hands`` hold just those (fewer than 10 cards, not a whole deal)."""

    seed: int | None
    leader: int
    names: tuple[str, ...]
    hands: tuple[tuple[int, ...], ...]
    plays: tuple[Play, ...]
    points: tuple[int, int] | None
    truncated: bool = False

    def to_json(self) -> str:
        return to_json(self)

    @classmethod
    def from_json(cls, text: str) -> Game:
        """The game on a JSON line; ``ValueError`` naming the field that is wrong. It is
        not replayed (``replay`` does that); ``truncated`` is fewer than 40 plays."""
        data = game_object(text, ("leader", "players", "hands", "plays"))
        seed = data.get("seed")
        if seed is not None:
            seed = json_int(seed, "seed", MIN_SEED, MAX_SEED)
        leader = data["leader"]
        if not _is_int(leader) or not 0 <= leader < SEATS:
            raise ValueError(f"leader {shown(leader)}: want a seat 0..3")
        players = data["players"]
        if (not isinstance(players, list) or len(players) != SEATS
                or not all(isinstance(p, str) for p in players)):
            raise ValueError(f"players {shown(players)}: want a list of 4 names")
        hands = data["hands"]
        if not isinstance(hands, list) or len(hands) != SEATS:
            raise ValueError("hands: want a list of 4 lists of cards")
        plays = data["plays"]
        # the common case in one look-up per card: lists of the writer's card names and
        # [int, name] pairs (JSON gives exact types); anything else takes the checked
        # path, which names what is wrong
        try:
            held = [tuple(sorted(map(_BY_NAME.__getitem__, hand))) for hand in hands
                    if type(hand) is list]
            # lists of two, transposed in C: the seats (ints, not bools) and the cards
            if type(plays) is not list or not set(map(type, plays)) <= _LIST \
                    or not set(map(len, plays)) <= _PAIR:
                raise ValueError
            seats, names = zip(*plays, strict=True)
            if not set(map(type, seats)) <= _INT:
                raise ValueError
            played = list(zip(seats, map(_BY_NAME.__getitem__, names), strict=True))
        except (KeyError, TypeError, ValueError):
            held, played = [], []
        if len(held) != SEATS or len(played) != len(plays):
            held, played = _checked_cards(hands, plays)
        points = data.get("points")
        if points is not None:
            # any whole numbers: the rules' points are checked against them
            if (not isinstance(points, list) or len(points) != 2
                    or not all(_is_int(x) for x in points)):
                raise ValueError(f"points {shown(points)}: want [team 0, team 1] or null")
            points = (points[0], points[1])
        return cls(seed, leader, tuple(players), tuple(held), tuple(played), points,
                   truncated=len(played) < CARDS)

    def replay(self) -> list[State]:
        """The state before each play, then the state after the last; ``ReplayError``
        if the rules do not play the game as logged.

        A whole game is dealt with ``rules.deal_hands`` and each play stepped, checked
        to be the seat to act's and legal. A truncated game whose hands are not a whole
        deal (a transcript's: the cards seen played) starts from those known cards, so
        a card counts as held only if the log shows its seat playing it: a seat that
        plays off suit and later plays the led suit is caught, nothing else can be.
        ``points``, if given, must be the rules' (a truncated game has none)."""
        states = [self.check()]
        for k, (seat, card) in enumerate(self.plays):
            s = states[-1]
            if seat != s.current:
                raise ReplayError(f"play {k + 1}: seat {seat} plays {_card_text(card)} out of "
                                  f"turn: seat {s.current} is to play", k)
            try:
                states.append(step(s, card))
            except ValueError as e:  # IllegalCard
                raise ReplayError(f"play {k + 1}: {e}", k) from None
        if self.points is not None:
            got = team_points(states[-1])
            if got != tuple(self.points):
                raise ReplayError(f"the rules give the teams {got[0]} and {got[1]} points; "
                                  f"the log says {self.points[0]} and {self.points[1]}")
        return states

    def check(self) -> State:
        """The checks that need no play: the number of plays, the truncated mark, the
        names, the deal (a whole one: 4 × 10 cards, each once), no points on a truncated
        hand; returns the state before the first play. ``ReplayError`` otherwise."""
        self._check_counts()
        try:
            return self._start()
        except ValueError as e:
            raise ReplayError(f"the deal: {e}") from None

    def check_deal(self) -> None:
        """``check`` without making the state: a whole deal is tested in one pass over
        its cards; anything else, or a deal that fails, goes through ``check`` for its
        error."""
        hands = self.hands
        if (len(hands) == SEATS and set(map(len, hands)) == _TEN
                and set().union(*hands) == _EVERY_CARD and 0 <= self.leader < SEATS):
            self._check_counts()
        else:
            self.check()

    def _check_counts(self) -> None:
        n = len(self.plays)
        if n > CARDS:
            raise ReplayError(f"{n} plays: a hand has {CARDS}")
        if self.truncated != (n < CARDS):
            raise ReplayError(f"marked truncated, but all {CARDS} cards are played"
                              if self.truncated else
                              f"{n} of {CARDS} plays, but not marked truncated")
        if len(self.names) != SEATS:
            raise ReplayError(f"{len(self.names)} names: want one per seat, 4")
        if self.truncated and self.points is not None:
            raise ReplayError(f"a truncated hand has no final points; the log gives "
                              f"{list(self.points)}")

    @property
    def whole_deal(self) -> bool:
        """Are the four hands known whole (not only the cards a cut transcript shows)?"""
        return sum(len(h) for h in self.hands) == CARDS

    def _start(self) -> State:
        if len(self.hands) != SEATS:
            raise ValueError(f"{len(self.hands)} hands: want 4")
        if not self.truncated or sum(len(h) for h in self.hands) == CARDS:
            return deal_hands(self.hands, self.leader)
        cards = [c for h in self.hands for c in h]
        if any(len(h) > TRICKS for h in self.hands):
            raise ValueError(f"hands of {[len(h) for h in self.hands]} cards: at most 10 each")
        if any(not _is_int(c) or not 0 <= c < CARDS for c in cards) or \
                len(set(cards)) != len(cards):
            raise ValueError("a card (ids 0..39) may be in one hand once at most")
        if not 0 <= self.leader < SEATS:
            raise ValueError(f"leader {self.leader}: want a seat 0..3")
        return State(hands=tuple(tuple(sorted(h)) for h in self.hands), leader=self.leader,
                     current=self.leader)


def hand_seed(seed: int, i: int) -> int:
    """The seed of hand ``i`` of a run seeded ``seed``: 63 bits from numpy's
    ``SeedSequence([seed, i])`` (distinct hands do not share a deal by accident)."""
    return int(np.random.SeedSequence([seed, i]).generate_state(1, np.uint64)[0]) >> 1


def play(names: Sequence[str], hands: int, seed: int, first_leader: int = 0) -> Iterator[Game]:
    """Play ``hands`` hands with the bots ``names`` (one of ``bots.BOT_NAMES`` per seat).

    Hand i is dealt from ``default_rng(hand_seed(seed, i))`` and led by seat
    ``(first_leader + i) % 4``; the random bots draw from that generator after the
    deal. Lazy: games come one at a time."""
    seats = tuple(names)
    if len(seats) != SEATS:
        raise ValueError(f"four bot names, one per seat, not {len(seats)}")
    if unknown := [n for n in seats if not is_bot_name(n)]:
        raise ValueError(f"unknown Tressette bots {unknown}: want {', '.join(BOT_NAMES)}, or "
                         f"NAME~EPS (say rule~0.2)")
    if hands < 0:
        raise ValueError(f"hands {hands}: want 0 or more")
    np.random.SeedSequence([seed, 0])  # a bad seed fails here, not at the first game
    return _play(seats, hands, seed, first_leader)


def _play(names: tuple[str, ...], hands: int, seed: int, first_leader: int) -> Iterator[Game]:
    for i in range(hands):
        hs = hand_seed(seed, i)
        rng = np.random.default_rng(hs)
        leader = (first_leader + i) % SEATS
        s = deal(rng, leader)
        dealt = s.hands
        bots = [make_bot(n, rng) for n in names]
        while not is_terminal(s):
            s = step(s, bots[s.current].act(s))
        yield Game(hs, leader, names, dealt, s.plays, team_points(s))


def to_json(game: Game) -> str:
    """The game as one JSON line (no newline), cards by name."""
    return json.dumps({
        "seed": game.seed, "leader": game.leader, "players": list(game.names),
        "hands": [[card_name(c) for c in h] for h in game.hands],
        "plays": [[seat, card_name(c)] for seat, c in game.plays],
        "points": None if game.points is None else list(game.points)})


def transcript_lines(game: Game) -> list[str]:
    """The game as the seed's ``play_one_game`` prints it (no ``[DEBUG]`` line without a
    seed; no end block for a truncated game). Whole games without points get the
    rules' points."""
    out = [] if game.seed is None else [f"{SEED_PREFIX}{game.seed}"]
    for name in game.names:
        if "\n" in name or "\r" in name:
            raise ValueError(f"agent name {name!r}: a transcript line cannot hold a line break")
    out += [f"Giocatore {seat} ({game.names[seat]}) gioca {card_name(c)})"
            for seat, c in game.plays]
    if not game.truncated:
        t0, t1 = game.points if game.points is not None else team_points(game.replay()[-1])
        out += [END_LINE, f"Team 0 (seat {TEAM_SEATS[0]}) → {t0} punti",
                f"Team 1 (seat {TEAM_SEATS[1]}) → {t1} punti",
                "Vince TEAM 0" if t0 > t1 else "Vince TEAM 1" if t1 > t0 else DRAW_LINE]
    return out


def write_log(path: str | Path, games: Iterable[Game], fmt: str = "jsonl") -> int:
    """Write ``games`` as JSON Lines or as a transcript; returns how many. The file
    appears whole (written aside, then renamed onto ``path``)."""
    if fmt not in ("jsonl", "transcript"):
        raise ValueError(f"format {fmt!r}: want 'jsonl' or 'transcript'")
    path = Path(path)
    count, open_end = 0, False
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for g in games:  # streamed: a long run is not held in memory
                if fmt == "jsonl":
                    f.write(f"{to_json(g)}\n")
                else:
                    if open_end and g.seed is None:
                        raise ValueError("a truncated game, then one without a seed: a "
                                         "transcript cannot tell where the first ends")
                    f.writelines(f"{t}\n" for t in transcript_lines(g))
                    open_end = g.truncated
                count += 1
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count


def _checked_cards(hands: list[Any], plays: Any
                   ) -> tuple[list[tuple[int, ...]], list[tuple[int, int]]]:
    """The hands and plays of a JSON line, every card checked; ``ValueError`` naming the
    first that is wrong."""
    held = []
    for s, hand in enumerate(hands):
        if not isinstance(hand, list):
            raise ValueError(f"hands[{s}] {shown(hand)} is not a list of cards")
        held.append(tuple(sorted(_card(c, f"hands[{s}]") for c in hand)))
    if not isinstance(plays, list):
        raise ValueError("plays: want a list of [seat, card] pairs")
    played = []
    for k, p in enumerate(plays):
        if not isinstance(p, list) or len(p) != 2 or not _is_int(p[0]):
            raise ValueError(f"plays[{k}] {shown(p)} is not a [seat, card] pair")
        played.append((p[0], _card(p[1], f"plays[{k}]")))
    return held, played


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_BY_NAME = {card_name(c): c for c in range(CARDS)}  # the names the writer writes
_EVERY_CARD, _TEN = frozenset(range(CARDS)), {TRICKS}
_LIST, _PAIR, _INT = {list}, {2}, {int}


def _card(value: Any, where: str) -> int:
    if isinstance(value, str):
        if (known := _BY_NAME.get(value)) is not None:
            return known
        try:
            return parse_card(value)
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
    if _is_int(value) and 0 <= value < CARDS:
        return int(value)
    raise ValueError(f"{where}: {shown(value)} is not a card (a name like 'AD' or an id "
                     f"0..39)")


def _card_text(card: int) -> str:
    return card_name(card) if _is_int(card) and 0 <= card < CARDS else shown(card)
