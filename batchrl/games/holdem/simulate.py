"""Playing many hands of hold'em in lockstep, through the rules module.

``play`` deals every hand from one ``numpy.random.Generator``, seats the bots (two or
three, one per seat of the game), and advances a batch of tables together: at each
step it gathers the tables where a bot is to act and asks that bot once for all of
them, so a learned policy encodes and predicts for thousands of tables per call. The
bots answer with the learner's actions (a no-limit raise as a size against the pot,
``actions.concrete`` making it a legal total), and the hands are played by
``rules.step``, the function the parser replays logs with.

Seating follows the ACPC dealer: bot ``b`` sits in seat ``(b + i) % n`` at hand ``i``
(heads-up: seat 0 is the big blind, seat 1 the small blind, in the standard games).
With ``duplicate=True`` every deal is played ``n`` times, once per rotation of the
seats, so the luck of the cards cancels out of the difference between the bots.

>>> from batchrl.games.holdem.gamedef import HEADS_UP_LIMIT
>>> from batchrl.games.holdem.bots import RandomBot
>>> rng = np.random.default_rng(0)
>>> m = play(HEADS_UP_LIMIT, (RandomBot(rng), RandomBot(rng)), 100, rng)
>>> len(m), bool((m.payoffs.sum(axis=1) == 0).all())     # zero-sum, hand by hand
(100, True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from batchrl.games.holdem.actions import concrete
from batchrl.games.holdem.bots import Bot, check_playable
from batchrl.games.holdem.gamedef import GameDef
from batchrl.games.holdem.rules import HandState, deal, returns_many, step


@dataclass(frozen=True)
class Match:
    """The hands the bots played: row i is hand i.

    ``payoffs[i, b]`` is bot b's chips won in hand i, ``seat[i, b]`` the seat it
    sat in, ``deal[i]`` the deal's number (a duplicate set shares one), and
    ``states`` the finished hands when they were kept (for writing logs).
    """

    game: GameDef
    names: tuple[str, ...]
    payoffs: NDArray[np.float64]
    seat: NDArray[np.int64]
    deal: NDArray[np.int64]
    duplicate: bool
    states: tuple[HandState, ...] | None = None

    def __len__(self) -> int:
        return len(self.payoffs)

    @classmethod
    def join(cls, parts: Sequence[Match]) -> Match:
        """The match whose hands are ``parts``' in order (blocks of one match)."""
        first = parts[0]
        kept = [s for p in parts for s in (p.states or ())]
        return cls(first.game, first.names, np.concatenate([p.payoffs for p in parts]),
                   np.concatenate([p.seat for p in parts]),
                   np.concatenate([p.deal for p in parts]), first.duplicate,
                   tuple(kept) if first.states is not None else None)

    def seat_payoffs(self) -> NDArray[np.float64]:
        """Payoffs in seat order, as a dealer log prints them."""
        out = np.empty_like(self.payoffs)
        rows = np.arange(len(self))[:, None]
        out[rows, self.seat] = self.payoffs
        return out


def deal_cards(game: GameDef, n: int, rng: np.random.Generator, skip: int = 0
               ) -> NDArray[np.int64]:
    """``n`` deals, one row each: the hole cards seat by seat, then the whole board; with
    ``skip``, the ``n`` that follow ``rng``'s first ``skip`` deals (dealt and dropped a
    chunk at a time: each row is shuffled in turn, so in chunks or at once, the rows are
    the same)."""
    needed = game.num_players * game.num_hole_cards + sum(game.num_board_cards)
    cards = game.num_suits * game.num_ranks
    while skip:
        k = min(skip, 1 << 16)
        rng.permuted(np.tile(np.arange(cards, dtype=np.int64), (k, 1)), axis=1)
        skip -= k
    deck = np.tile(np.arange(cards, dtype=np.int64), (n, 1))
    return rng.permuted(deck, axis=1)[:, :needed]


def _start(game: GameDef, row: NDArray[np.int64]) -> HandState:
    k = game.num_hole_cards
    cards = row.tolist()
    hole = [cards[p * k:(p + 1) * k] for p in range(game.num_players)]
    return deal(game, hole, cards[game.num_players * k:])


def play(
    game: GameDef,
    bots: Sequence[Bot],
    hands: int,
    rng: np.random.Generator,
    *,
    duplicate: bool = False,
    batch: int = 4096,
    keep_states: bool = False,
    progress: Callable[[int], None] | None = None,
    first: int = 0,
) -> Match:
    """Play ``hands`` hands (with ``duplicate``, ``hands // n`` deals, each ``n`` times).

    ``first``: the deals are ``rng``'s from deal ``first`` on, numbered from it (a block
    of a longer match, its seats rotating as in the whole). ``progress`` is called with
    the number of hands finished after each batch.
    """
    check_playable(game)
    n = game.num_players
    if len(bots) != n:
        raise ValueError(f"{game.name} seats {n} players, not {len(bots)}")
    if duplicate and hands % n:
        raise ValueError(f"duplicate play of {n} players needs a multiple of {n} hands, "
                         f"not {hands}")
    deals = hands // n if duplicate else hands
    cards = deal_cards(game, deals, rng, skip=first)
    if duplicate:
        deal_of = np.repeat(np.arange(deals), n)
        rotation = np.tile(np.arange(n), deals)
    else:
        deal_of = np.arange(deals)
        rotation = (first + deal_of) % n
    seat = ((np.arange(n)[None, :] + rotation[:, None]) % n).astype(np.int64)
    payoff = np.empty((hands, n), dtype=np.float64)
    kept: list[HandState] = []
    for lo in range(0, hands, batch):
        hi = min(hands, lo + batch)
        states = [_start(game, cards[deal_of[i]]) for i in range(lo, hi)]
        occupant = seat[lo:hi].argsort(axis=1)  # occupant[j, s]: the bot in seat s
        live = list(range(hi - lo))
        while live:
            for b, bot in enumerate(bots):
                mine = [j for j in live
                        if not states[j].finished and occupant[j, states[j].current] == b]
                if not mine:
                    continue
                actions = bot.act([states[j] for j in mine], [states[j].current for j in mine])
                for j, a in zip(mine, actions.tolist(), strict=True):
                    states[j] = step(states[j], *concrete(states[j], a))
            live = [j for j in live if not states[j].finished]
        by_seat = returns_many(states)
        payoff[lo:hi] = by_seat[np.arange(hi - lo)[:, None], seat[lo:hi]]
        if keep_states:
            kept.extend(states)
        if progress is not None:
            progress(hi - lo)
    names = tuple(b.name for b in bots)
    return Match(game, names, payoff, seat, first + deal_of.astype(np.int64), duplicate,
                 tuple(kept) if keep_states else None)
