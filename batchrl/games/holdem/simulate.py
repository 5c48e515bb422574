"""Playing many hands of heads-up limit hold'em in lockstep, through the rules module.

``play`` deals every hand from one ``numpy.random.Generator``, seats the two
bots, and advances a batch of tables together: at each step it gathers the
tables where a bot is to act and asks that bot once for all of them, so a
learned policy encodes and predicts for thousands of tables per call. The
hands are played by ``rules.step``, the function the parser replays logs with.

Seating follows the ACPC dealer: bot 0 sits in seat ``i % 2`` at hand ``i``
(seat 0 is the big blind, seat 1 the small blind, in the standard game). With
``duplicate=True`` every deal is played twice, bot 0 in each seat, so the luck
of the cards cancels out of the difference between the bots.

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

from batchrl.games.holdem.bots import Bot, check_heads_up
from batchrl.games.holdem.evaluator import evaluate_many
from batchrl.games.holdem.gamedef import GameDef
from batchrl.games.holdem.rules import HandState, deal, payoffs, step


@dataclass(frozen=True)
class Match:
    """The hands two bots played: row i is hand i.

    ``payoffs[i, b]`` is bot b's chips won in hand i, ``seat[i, b]`` the seat it
    sat in, ``deal[i]`` the deal's number (a duplicate pair shares one), and
    ``states`` the finished hands when they were kept (for writing logs).
    """

    game: GameDef
    names: tuple[str, str]
    payoffs: NDArray[np.float64]
    seat: NDArray[np.int64]
    deal: NDArray[np.int64]
    duplicate: bool
    states: tuple[HandState, ...] | None = None

    def __len__(self) -> int:
        return len(self.payoffs)

    def seat_payoffs(self) -> NDArray[np.float64]:
        """Payoffs in seat order, as a dealer log prints them."""
        out = np.empty_like(self.payoffs)
        rows = np.arange(len(self))[:, None]
        out[rows, self.seat] = self.payoffs
        return out


def deal_cards(game: GameDef, n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """``n`` deals, one row each: the hole cards seat by seat, then the whole board."""
    needed = game.num_players * game.num_hole_cards + sum(game.num_board_cards)
    deck = np.tile(np.arange(game.num_suits * game.num_ranks, dtype=np.int64), (n, 1))
    return rng.permuted(deck, axis=1)[:, :needed]


def _start(game: GameDef, row: NDArray[np.int64]) -> HandState:
    k = game.num_hole_cards
    cards = row.tolist()
    hole = [cards[p * k:(p + 1) * k] for p in range(game.num_players)]
    return deal(game, hole, cards[game.num_players * k:])


def _finish(game: GameDef, states: Sequence[HandState]) -> NDArray[np.float64]:
    """Each seat's payoff per hand, the showdowns scored in one batch."""
    k = game.num_hole_cards
    cards = np.array([[*s.hole[0], *s.hole[1], *s.board] for s in states], dtype=np.int64)
    board = cards[:, 2 * k:]
    strengths = np.stack([evaluate_many(np.concatenate([cards[:, p * k:(p + 1) * k], board],
                                                       axis=1)) for p in range(2)], axis=1)
    return np.array([payoffs(s, strengths[i].tolist()) for i, s in enumerate(states)],
                    dtype=np.float64)


def play(
    game: GameDef,
    bots: tuple[Bot, Bot],
    hands: int,
    rng: np.random.Generator,
    *,
    duplicate: bool = False,
    batch: int = 4096,
    keep_states: bool = False,
    progress: Callable[[int], None] | None = None,
) -> Match:
    """Play ``hands`` hands (with ``duplicate``, ``hands // 2`` deals, each twice).

    ``progress`` is called with the number of hands finished after each batch.
    """
    check_heads_up(game)
    if duplicate and hands % 2:
        raise ValueError(f"duplicate play needs an even number of hands, not {hands}")
    deals = hands // 2 if duplicate else hands
    cards = deal_cards(game, deals, rng)
    if duplicate:
        deal_of = np.repeat(np.arange(deals), 2)
        seat0 = np.tile(np.array([0, 1]), deals)
    else:
        deal_of = np.arange(deals)
        seat0 = deal_of % 2
    seat = np.stack([seat0, 1 - seat0], axis=1).astype(np.int64)
    payoff = np.empty((hands, 2), dtype=np.float64)
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
                    states[j] = step(states[j], a)
            live = [j for j in live if not states[j].finished]
        by_seat = _finish(game, states)
        payoff[lo:hi] = by_seat[np.arange(hi - lo)[:, None], seat[lo:hi]]
        if keep_states:
            kept.extend(states)
        if progress is not None:
            progress(hi - lo)
    names = (bots[0].name, bots[1].name)
    return Match(game, names, payoff, seat, deal_of.astype(np.int64), duplicate,
                 tuple(kept) if keep_states else None)
