"""President's players: ``random`` and ``rule``.

``random`` picks uniformly among the legal moves, pass included when following (the
seed's test opponent picks uniformly among its enumerated plays, which counts every
choice of suits as a play of its own; ours counts a (rank, count) once).

``rule`` plays the usual human heuristics:

- a move that empties the hand is always made;
- leading, it plays its lowest rank, every card of it (low sets go first, pairs stay
  pairs), keeping its 3s and aces for last unless nothing else is left;
- following, it plays the lowest rank it can without breaking a set (a rank held in
  exactly the number asked); it breaks a set only of a low rank (7 or under);
- in a match, the president returns its lowest card;
- it passes rather than spend a 3 or an ace when it still holds more than three cards
  and no opponent is about to go out (an opponent with at most as many cards as the set
  on the table): the strong set is worth more later.

>>> from batchrl.games.president.rules import Rules, deal, step, action_name
>>> bot = RuleBot()
>>> state = deal(np.random.default_rng(1), Rules(players=4))
>>> action_name(bot.act(state))
'2x1'
"""

from __future__ import annotations

import numpy as np

from batchrl.games.president.rules import (
    N_RANKS,
    PASS,
    State,
    legal_actions,
    play_action,
)

BOT_NAMES = ("random", "rule")
HIGH = N_RANKS - 2  # rank index of the 3s; the aces above them
LOW = 4  # rank index of the 7s: sets up to here may be broken


class RandomBot:
    """A uniformly random legal move."""

    name = "random"

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def act(self, state: State) -> int:
        legal = legal_actions(state)
        return legal[int(self.rng.integers(len(legal)))]


class RuleBot:
    """The usual human heuristics (see the module)."""

    name = "rule"

    def act(self, state: State) -> int:
        legal = legal_actions(state)
        if len(legal) == 1 or state.exchange:  # returns its lowest card
            return legal[0]
        seat, n = state.turn, state.rules.players
        hand = state.hands[seat]
        total = sum(hand)
        for rank in range(N_RANKS):  # going out
            if hand[rank] == total and play_action(rank, total) in legal:
                return play_action(rank, total)
        rank, count = state.table
        if rank < 0 or state.first:  # leading: the lowest rank, all of it
            low = [r for r in range(N_RANKS) if hand[r]]
            keep = [r for r in low if r < HIGH] or low
            r = keep[0]
            return play_action(r, hand[r]) if play_action(r, hand[r]) in legal else legal[-1]
        options = [r for r in range(rank + 1, N_RANKS) if hand[r] >= count]
        if not options:
            return PASS
        exact = [r for r in options if hand[r] == count]
        breakable = [r for r in options if r <= LOW]
        choice = exact[0] if exact else breakable[0] if breakable else options[0]
        sizes = [sum(state.hands[s]) for s in range(n) if s != seat and any(state.hands[s])]
        threat = any(size <= count for size in sizes)
        if choice >= HIGH and total > 3 and not threat:
            return PASS
        if not exact and not breakable and not threat:
            return PASS  # would break a strong set
        return play_action(choice, count)


def make_bot(name: str, rng: np.random.Generator) -> RandomBot | RuleBot:
    if name == "random":
        return RandomBot(rng)
    if name == "rule":
        return RuleBot()
    raise ValueError(f"unknown president player {name!r}: want one of "
                     f"{', '.join(BOT_NAMES)} or model:PATH")
