"""President game logs: JSON lines, one game a line, written by ``batchrl generate`` and
read back (``parsers/president.py``) by replaying every move through the rules.

A line holds the players (seat by seat), the rules, the deal (each seat's cards by name,
``2o`` the 2 of golds), the moves in order (``pass`` or ``<rank>x<count>``: whose turn it
is follows from the rules), the finishing order (seats, president first, servant last)
and each seat's result under the seed's time reward::

    {"game": "president", "seed": 7, "index": 0, "players": ["rule", "random"],
     "rules": {"pass_locks": false}, "deal": [["2o", "1c", ...], [...]],
     "moves": ["2x1", "pass", ...], "order": [0, 1], "returns": [-6.0, -9.0]}

`LoggedGame.from_json` checks the fields, replays the moves and compares the order and
the results with the log's: a line that does not replay is refused with the reason.

>>> from batchrl.games.president import play_games
>>> g = play_games(["rule", "random"], 1, seed=3)[0]
>>> back = LoggedGame.from_json(g.to_json())
>>> back.order == g.order, len(back.states) == len(back.moves) + 1
(True, True)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from batchrl.games.jsonlines import game_object
from batchrl.games.president.rules import (
    ACTION_NAMES,
    MAX_MATCH,
    IllegalMove,
    Rules,
    State,
    action_name,
    card_name,
    from_deal,
    game_orders,
    is_terminal,
    parse_action,
    parse_card,
    step,
)

FIELDS = ("players", "deal", "moves", "order", "returns")
MAX_MOVES = 2000  # per game of a match: far above any game's (each play takes a card;
# passes end rounds)


@dataclass(frozen=True)
class LoggedGame:
    """One game: its players (names, seat by seat), the states from the deal to the end
    and the moves between, as played or as a log line replays."""

    players: tuple[str, ...]
    states: tuple[State, ...]
    moves: tuple[int, ...]
    seed: int | None = None
    index: int = 0

    @property
    def rules(self) -> Rules:
        return self.states[0].rules

    @property
    def order(self) -> tuple[int, ...]:
        return self.states[-1].order

    @property
    def returns(self) -> tuple[float, ...]:
        return self.states[-1].scores

    def to_json(self) -> str:
        first = self.states[0]
        match: dict[str, Any] = {}
        if self.rules.match > 1:
            match = {"next_deals": [_deal_names(d) for d in first.upcoming],
                     "orders": [list(o) for o in game_orders(self.states[-1])]}
        return json.dumps({
            "game": "president", "seed": self.seed, "index": self.index,
            "players": list(self.players),
            "rules": {"pass_locks": self.rules.pass_locks, "match": self.rules.match},
            "deal": _deal_names(first.dealt), **match,
            "moves": [action_name(a) for a in self.moves], "order": list(self.order),
            "returns": list(self.returns)}, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> LoggedGame:
        """The game on a log line, replayed; `ValueError` says what is wrong."""
        data = game_object(text, ())
        if data.get("game", "president") != "president":
            raise ValueError(f"game: {str(data.get('game'))[:40]!r}, not a President game")
        if missing := [k for k in FIELDS if k not in data]:
            raise ValueError(f"missing fields {missing}")
        players = data["players"]
        if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
            raise ValueError("players: want a list of names")
        rules_given = data.get("rules", {})
        match = rules_given.get("match", 1) if isinstance(rules_given, dict) else None
        if not isinstance(rules_given, dict) or not isinstance(
                rules_given.get("pass_locks", False), bool) or not isinstance(match, int) \
                or isinstance(match, bool) or not 1 <= match <= MAX_MATCH:
            raise ValueError('rules: want {"pass_locks": true or false, "match": games '
                             f'per match, 1 to {MAX_MATCH}}}')
        try:
            rules = Rules(players=len(players), pass_locks=rules_given.get("pass_locks", False),
                          match=match)
        except ValueError as e:
            raise ValueError(f"players: {e}") from None
        later = data.get("next_deals", [])
        if not isinstance(later, list) or len(later) != rules.match - 1:
            raise ValueError(f"next_deals: a match of {rules.match} games has "
                             f"{rules.match - 1} deals after the first")
        try:
            first = _parse_deal(data["deal"], rules)
            upcoming = tuple(_parse_deal(d, rules) for d in later)
            state = from_deal(first, rules, upcoming)
        except ValueError as e:
            raise ValueError(f"deal: {e}") from None
        moves = data["moves"]
        most = MAX_MOVES * rules.match
        if not isinstance(moves, list) or len(moves) > most or not all(
                isinstance(m, str) for m in moves):
            raise ValueError(f"moves: want a list of at most {most:,} moves "
                             f"({', '.join(ACTION_NAMES[:3])}, ...)")
        states = [state]
        actions: list[int] = []
        for k, text_move in enumerate(moves, 1):
            try:
                action = parse_action(text_move)
                states.append(step(states[-1], action))
            except (IllegalMove, ValueError) as e:
                raise ValueError(f"move {k} (seat {states[-1].turn}): {e}") from None
            actions.append(action)
        if not is_terminal(states[-1]):
            raise ValueError(f"the game is not over after its {len(moves)} moves "
                             f"(seat {states[-1].turn} to play)")
        if rules.match > 1:
            orders = [list(o) for o in game_orders(states[-1])]
            if data.get("orders") != orders:
                raise ValueError(f"orders: the moves finish the games {orders}, the log says "
                                 f"{str(data.get('orders'))[:60]}")
        order = data["order"]
        if order != list(states[-1].order):
            raise ValueError(f"order: the moves finish {list(states[-1].order)}, the log says "
                             f"{str(order)[:40]}")
        logged = data["returns"]
        if not isinstance(logged, list) or len(logged) != rules.players or not all(
                # a range, not math.isfinite: a 400-digit integer is no float
                isinstance(v, int | float) and not isinstance(v, bool) and -1e6 < v < 1e6
                for v in logged) or any(
                abs(a - b) > 1e-9 for a, b in zip(logged, states[-1].scores, strict=True)):
            raise ValueError(f"returns: the moves give {list(states[-1].scores)}, the log "
                             f"says {str(logged)[:40]}")
        seed = data.get("seed")
        index = data.get("index", 0)
        return cls(tuple(players), tuple(states), tuple(actions),
                   seed if isinstance(seed, int) and abs(seed) < 2**63 else None,
                   index if isinstance(index, int) and 0 <= index < 2**62 else 0)


def _deal_names(dealt: tuple[tuple[int, ...], ...]) -> list[list[str]]:
    return [[card_name(c) for c in hand] for hand in dealt]


def _parse_deal(hands: Any, rules: Rules) -> tuple[tuple[int, ...], ...]:
    if not isinstance(hands, list) or len(hands) != rules.players or not all(
            isinstance(h, list) and all(isinstance(c, str) for c in h) for h in hands):
        raise ValueError(f"want {rules.players} lists of card names")
    return tuple(tuple(parse_card(c) for c in h) for h in hands)


@dataclass(frozen=True, slots=True)
class PresidentRecord:
    """A game as a log line gives it (what ``parsers/president.py`` reads)."""

    source: str
    line: int
    game: LoggedGame
