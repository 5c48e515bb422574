"""Hold'em's chance events, for ``batchrl evaluate --logs``: a logged hand's deal and board
cards, each with draws from the cards that could have come, and what a value function
reads just after each (`batchrl.games.base.ChanceEvent`).

The features of a seat still in the hand after an event, in big blinds where they are
chips: its **equity**, the share of the pot its cards win at a showdown against the
other live seats' actual cards (exact when at most one board card is to come, else over
``SAMPLES`` runouts: a value function may be noisy and its control variate stays
unbiased, so long as what was dealt and the draws are valued alike); the pot, what the
seat has put in, its showdown value (equity × pot − put in), the chips it has behind; the
live seats, those still able to act, the round, the seat and the table's size.

What could have come is what the rules deal from: the deal draws every seat's hole cards
anew from the deck; a board card is drawn from the deck less every hole card (folded
seats' too: the dealer dealt them) and the board before it. A single card's draws are
every card left, each once (an exact expectation); a deal's and a flop's are ``draws``
draws with replacement.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games.base import ChanceEvent, ChanceHand, ChancePlan, SourceContext, SourceError
from batchrl.games.holdem import gamedef
from batchrl.games.holdem.actions import concrete
from batchrl.games.holdem.bots import RandomBot, known_strategy
from batchrl.games.holdem.evaluator import N_CLASSES, evaluate7, evaluate_many
from batchrl.games.holdem.gamedef import GameDef
from batchrl.games.holdem.ingest import decide_game, runs
from batchrl.games.holdem.pv import pv_flop, pv_preflop
from batchrl.games.holdem.records import LoggedHand
from batchrl.games.holdem.replay import Replayed, tokens
from batchrl.games.holdem.rules import ACTION_CHARS, RAISE, HandState, payoffs, step
from batchrl.games.holdem.transitions import check_hands, game_of
from batchrl.records import BadLine, Skipped, shown

FEATURES = ("equity", "strength", "rival_strength", "pot_bb", "put_in_bb", "showdown_bb",
            "behind_bb", "live", "acting", "round", "seat", "players")
SAMPLES = 64  # runouts per equity where two or more board cards are still to come
DECK = 52
CHUNK = 256  # hands replayed and checked at once
HIDDEN = "hole cards hidden"


def unsupported(game: GameDef) -> str | None:
    """Why ``game``'s hands have no chance events here, or None."""
    if problem := gamedef.evaluable(game):
        return f"{game.name} has {problem}"
    if game.num_board_cards[0]:
        return f"{game.name} deals board cards before the first round"
    return None


def chance_hands(records: Iterator[Any], context: SourceContext, forced: GameDef | None,
                 draws: int, seed: int, strategies: Mapping[str, str] | None = None
                 ) -> ChancePlan:
    """A hold'em source's hands with their chance events (see the module's docstring):
    its game decided as ingest decides it, each hand replayed and its payoffs checked
    (a hand that fails is a ``BadLine``; one that hides a seat's hole cards is skipped:
    its deal cannot be drawn again). ``strategies`` names players by the bot they played
    (``random``): each of their choices is an event too (`choice_event`)."""
    try:
        known = {name: known_strategy(spec) for name, spec in (strategies or {}).items()}
    except ValueError as exc:
        raise SourceError(f"--strategy: {exc}") from None
    game, pending = decide_game(context, records, forced)
    if why := unsupported(game):
        raise SourceError(f"{context.path}: {why}: batchrl draws the chance events of "
                          "Texas hold'em's deal only")

    def hands() -> Iterator[Any]:
        chunk: list[LoggedHand] = []
        for record in itertools.chain(
                runs(itertools.chain(pending, records), game, forced is not None,
                     context.notes), [None]):
            if isinstance(record, LoggedHand):
                chunk.append(record)
                if len(chunk) < CHUNK:
                    continue
            elif record is not None:
                yield from _checked(chunk, game, draws, seed, known)
                chunk = []
                yield record
                continue
            yield from _checked(chunk, game, draws, seed, known)
            chunk = []

    return ChancePlan(FEATURES, hands(), unit="mbb/hand", variant=game.name)


def _checked(chunk: list[LoggedHand], game: GameDef, draws: int, seed: int,
             known: Mapping[str, RandomBot]) -> Iterator[Any]:
    """The chunk's hands in order, each replayed and checked: its `ChanceHand`, else a
    ``BadLine`` or a ``Skipped``. A hand that logs no result is measured at its rules'
    (the accepted hand carries them)."""
    if not chunk:
        return
    accepted, rejected = check_hands(game, chunk)
    # check_hands returns a hand that logs no result as a copy with its rules' payoffs:
    # the hands are matched by where they are, not by identity
    bad = {(h.source, h.line, h.index): exc for h, exc in rejected}
    # (a LoggedHand, as check_hands was given: its protocol type says less)
    done: dict[tuple[str, int, int], tuple[Any, Replayed]] = {
        (h.source, h.line, h.index): (h, replayed) for h, replayed in accepted}
    for hand in chunk:
        where = (hand.source, hand.line, hand.index)
        if where in bad:
            exc = bad[where]
            yield BadLine(hand.source, hand.line, str(exc), hand.cards, exc.kind)
        elif any(not h for h in hand.hole):
            yield Skipped(HIDDEN, f"{hand.source}, line {hand.line}: a seat's hole cards "
                                  "are not in the log: its deal cannot be drawn again")
        else:
            checked, replayed = done[where]
            key = deal_key(checked)
            # the choices' runouts come from a stream keyed on the hand's logged cards,
            # whose board ends where the choices ended it: each stream's runouts are as
            # uniform as any, so a choice's correction keeps its zero mean
            yield hand_events(checked, replayed, game_of(checked, game), draws,
                              np.random.default_rng([seed, key]),
                              (known, np.random.default_rng([seed, key, 1])) if known else None)


def deal_key(hand: LoggedHand) -> int:
    """What the hand's draws are seeded by: its cards and where it is in its log, never
    the path it was read by (the same log the same figures, however it is named)."""
    cards = [c for group in (*hand.hole, *hand.board) for c in group]
    return zlib.crc32(np.array([*cards, hand.line, hand.index], np.int64).tobytes())


def hand_events(hand: LoggedHand, replayed: Replayed, game: GameDef, draws: int,
                rng: np.random.Generator,
                choices: tuple[Mapping[str, RandomBot], np.random.Generator] | None = None
                ) -> ChanceHand:
    """``hand``'s result per seat (mbb) and its chance events: the deal, then each round's
    board cards, with the features after what was dealt and after the draws; then, with
    ``choices`` (the strategies known by player name, and a generator of their own, so the
    chance events' draws are the same with or without them), each choice of a player
    whose strategy is known.

    Raises:
        SourceError: a known player made a move its strategy never makes.
    """
    n = game.num_players
    bb = float(game.big_blind)
    holes = np.array(hand.hole, dtype=np.int64)  # (n, 2)
    starts: dict[int, HandState] = {}
    for state, _ in replayed.decisions:
        starts.setdefault(state.round, state)
    # a round nobody acts in (all in) starts as the hand ends: nothing moves after it
    events = [_event(holes, _redeal(rng, draws, n), None, starts.get(0, replayed.final), 0,
                     bb, rng)]
    board: tuple[int, ...] = ()
    for r, group in enumerate(hand.board, 1):
        state = starts.get(r, replayed.final)
        dealt = np.array([*board, *group], dtype=np.int64)
        draws_now = _board_draws(rng, draws, holes, board, len(group))
        drawn = np.concatenate([np.broadcast_to(np.array(board, np.int64),
                                                (len(draws_now), len(board))), draws_now],
                               axis=1)
        events.append(_event(holes, None, np.concatenate([dealt[None], drawn]), state, r,
                             bb, rng))
        board += tuple(group)
    if choices is not None and len(hand.names) == n:
        events += _choices(hand, replayed, game, holes, *choices)
    results = np.asarray(hand.payoffs, dtype=np.float64) / bb * 1000.0
    # the deal whoever sat where: a duplicate match's twin hands share it
    deal = tuple(sorted(tuple(sorted(h)) for h in hand.hole))
    return ChanceHand(f"{hand.source}, line {hand.line}", tuple(hand.names), results,
                      tuple(events), deal)


def _choices(hand: LoggedHand, replayed: Replayed, game: GameDef, holes: NDArray[np.int64],
             known: Mapping[str, RandomBot], rng: np.random.Generator) -> list[ChanceEvent]:
    """The events of the known players' choices in ``hand`` (`choice_event`)."""
    out = []
    moves = [m for sequence in tokens(hand.betting, game) for m in sequence]
    for (state, action), (_, size) in zip(replayed.decisions, moves, strict=True):
        bot = known.get(hand.names[state.current])
        if bot is None:
            continue
        move = (action, size if action == RAISE and not game.is_limit else 0)
        board = tuple(c for group in hand.board[: state.round] for c in group)
        event = choice_event(holes, board, state, move, bot.probabilities([state])[0],
                             float(game.big_blind), rng)
        if event is None:
            raise SourceError(
                f"{hand.source}, line {hand.line}: {hand.names[state.current]} played "
                f"{ACTION_CHARS[action]}{size or ''} after "
                f"{shown(state.betting) if state.betting else 'the deal'}, a move {bot.name} "
                f"never makes: it did not play {bot.name}'s strategy (leave out --strategy "
                f"{hand.names[state.current]}={bot.name})")
        out.append(event)
    return out


def _redeal(rng: np.random.Generator, draws: int, n: int) -> NDArray[np.int64]:
    """``draws`` deals of every seat's hole cards, each a uniform draw: (draws, n, 2)."""
    keys = rng.random((draws, DECK))
    chosen = np.argpartition(keys, 2 * n - 1, axis=1)[:, : 2 * n]
    # in the order of their keys: argpartition's own order is not random
    order = np.argsort(np.take_along_axis(keys, chosen, axis=1), axis=1)
    return np.take_along_axis(chosen, order, axis=1).reshape(draws, n, 2)


def _board_draws(rng: np.random.Generator, draws: int, holes: NDArray[np.int64],
                 board: tuple[int, ...], count: int) -> NDArray[np.int64]:
    """Draws of a round's board cards from the deck less the hole cards and the board
    before: every card left once for a single card, else ``draws`` uniform sets."""
    used = np.zeros(DECK, dtype=bool)
    used[holes.ravel()] = True
    used[list(board)] = True
    left = np.flatnonzero(~used)
    if count == 1:
        return left[:, None]
    keys = rng.random((draws, len(left)))
    return left[np.argpartition(keys, count - 1, axis=1)[:, :count]]


def _event(holes: NDArray[np.int64], hole_draws: NDArray[np.int64] | None,
           boards: NDArray[np.int64] | None, state: HandState, round_: int, bb: float,
           rng: np.random.Generator) -> ChanceEvent:
    """The features after an event for what was dealt and each draw: the deal
    (``hole_draws``, new hole cards, no board), or a round's board cards (``boards``: the
    whole board so far, what was dealt first, then each draw's)."""
    live = np.array([not f for f in state.folded])
    if hole_draws is not None:
        all_holes = np.concatenate([holes[None], hole_draws])
        boards = np.zeros((len(all_holes), 0), np.int64)
    else:
        assert boards is not None
        all_holes = np.broadcast_to(holes, (len(boards), *holes.shape))
    cards = _card_features(all_holes, boards, live, rng)
    return ChanceEvent(_features(cards, state, round_, bb), live)


def _card_features(all_holes: NDArray[np.int64], boards: NDArray[np.int64],
                   live: NDArray[np.bool_], rng: np.random.Generator
                   ) -> NDArray[np.float64]:
    """Each seat's equity, strength and strongest live rival's strength for ``A`` deals
    (``all_holes`` (A, n, 2), ``boards`` (A, b)): (A, n, 3), nothing for a folded seat."""
    a, n = all_holes.shape[:2]
    out = np.zeros((a, n, 3))
    out[:, live, 0] = equities(all_holes, boards, live, rng)
    out[:, live, 1] = strengths(all_holes[:, live], boards)
    for s in np.flatnonzero(live):
        others = live.copy()
        others[s] = False
        out[:, s, 2] = out[:, others, 1].max(axis=1) if others.any() else 0.0
    return out


def _features(cards: NDArray[np.float64], state: HandState, round_: int, bb: float
              ) -> NDArray[np.float64]:
    """The features (A, n, FEATURES) of ``cards`` (`_card_features`) with ``state``'s
    chips, ``round_`` the round whose cards are known."""
    n = cards.shape[1]
    live = np.array([not f for f in state.folded])
    pot = state.pot / bb
    put_in = np.array([state.contributed(s) for s in range(n)]) / bb
    behind = np.array([state.stack[s] - state.spent[s] for s in range(n)]) / bb
    features = np.empty((cards.shape[0], n, len(FEATURES)))
    features[..., :3] = cards
    features[..., 3] = pot
    features[..., 4] = put_in
    features[..., 5] = cards[..., 0] * pot - put_in
    features[..., 6] = behind
    features[..., 7] = live.sum()
    features[..., 8] = state.acting()
    features[..., 9] = round_
    features[..., 10] = np.arange(n)
    features[..., 11] = n
    return features


def choice_event(holes: NDArray[np.int64], board: tuple[int, ...], state: HandState,
                 move: tuple[int, int], chances: NDArray[np.float64], bb: float,
                 rng: np.random.Generator) -> ChanceEvent | None:
    """The choice of the seat to act in ``state``, whose strategy is known (``chances``:
    each of the learner's actions' probability), as an event: the features after each
    move it could have made (the actions that play the same move merged, their chances
    added), weighted by their chances, and first a copy of the row of the ``move`` made.
    None when the strategy never makes ``move`` (it was not that strategy's). ``board``:
    the cards on the table (a replay of the betting alone holds none)."""
    alternatives: dict[tuple[int, int], float] = {}
    for action in np.flatnonzero(chances > 0):
        key = concrete(state, int(action))
        alternatives[key] = alternatives.get(key, 0.0) + float(chances[action])
    if move not in alternatives:
        return None
    game = state.game
    on_table = np.array(board, np.int64)[None]
    before = np.array([not f for f in state.folded])
    known: dict[tuple[bool, ...], NDArray[np.float64]] = {}
    rows = []
    exact = np.full((len(alternatives), game.num_players), np.nan)
    for k, key in enumerate(alternatives):
        after = step(state, *key)
        live = np.array([not f for f in after.folded])
        if tuple(live) not in known:  # the cards' features: one draw per set of live seats
            known[tuple(live)] = _card_features(holes[None], on_table, live, rng)
        rows.append(_features(known[tuple(live)], after, state.round, bb)[0])
        alone = live.sum() == 1
        if after.finished and (alone or len(board) == sum(game.num_board_cards)):
            # settled: everybody else folded, or a showdown with every card on the table
            shown_down = None if alone else evaluate7(np.concatenate(
                [holes, np.broadcast_to(on_table, (len(holes), len(board)))], axis=1)).tolist()
            exact[k] = np.array(payoffs(after, shown_down)) / bb * 1000.0
    features = np.stack(rows)
    taken = list(alternatives).index(move)
    return ChanceEvent(np.concatenate([features[taken : taken + 1], features]), before,
                       np.array(list(alternatives.values())),
                       np.concatenate([exact[taken : taken + 1], exact]))


def strengths(holes: NDArray[np.int64], boards: NDArray[np.int64]) -> NDArray[np.float64]:
    """How strong each seat's cards look to it (``holes`` (A, L, 2), ``boards`` (A, b)):
    pre-flop and on the flop its PV (the chance its cards beat one random hand, from
    batchrl's tables); later its best hand's rank among the 7,462 classes, over 7,462."""
    a, seats, b = holes.shape[0], holes.shape[1], boards.shape[1]
    flat = holes.reshape(-1, 2)
    if b == 0 or b < 3:
        return pv_preflop(flat).reshape(a, seats)
    on_board = np.repeat(boards, seats, axis=0)
    if b == 3:
        return pv_flop(flat, on_board).reshape(a, seats)
    ranked = evaluate_many(np.concatenate([flat, on_board], axis=1))
    return (ranked / N_CLASSES).reshape(a, seats)


def equities(holes: NDArray[np.int64], boards: NDArray[np.int64], live: NDArray[np.bool_],
             rng: np.random.Generator) -> NDArray[np.float64]:
    """Each live seat's share of a showdown among the live seats, for each of ``A`` deals
    (``holes`` (A, n, 2), ``boards`` (A, b)): exact over the last card or none to come,
    else over ``SAMPLES`` runouts. Returns (A, live seats)."""
    a, b = len(holes), boards.shape[1]
    to_come = 5 - b
    used = np.zeros((a, DECK), dtype=bool)
    np.put_along_axis(used, holes.reshape(a, -1), True, axis=1)
    if b:
        np.put_along_axis(used, boards, True, axis=1)
    left = np.argsort(used, axis=1, kind="stable")[:, : DECK - int(used[0].sum())]
    if to_come == 0:
        runouts = np.zeros((a, 1, 0), np.int64)
    elif to_come == 1:
        runouts = left[:, :, None]
    else:
        runouts = _runouts(rng, left, SAMPLES, to_come)
    m = runouts.shape[1]
    live_holes = holes[:, live]  # (A, L, 2)
    cards = np.empty((a, m, live_holes.shape[1], 7), np.int64)
    cards[..., :2] = live_holes[:, None]
    cards[..., 2 : 2 + b] = boards[:, None, None, :]
    cards[..., 2 + b :] = runouts[:, :, None, :]
    strength = evaluate7(cards)  # (A, m, L)
    best = strength == strength.max(axis=2, keepdims=True)
    share = best / best.sum(axis=2, keepdims=True)
    return np.asarray(share.mean(axis=1))


def _runouts(rng: np.random.Generator, left: NDArray[np.int64], samples: int, k: int
             ) -> NDArray[np.int64]:
    """``samples`` uniform draws of ``k`` cards from each row of ``left`` (a partial
    Fisher-Yates shuffle of each copy): (A, samples, k)."""
    a, d = left.shape
    deck = np.repeat(left, samples, axis=0)
    rows = np.arange(len(deck))
    for j in range(k):
        pick = j + (rng.random(len(deck)) * (d - j)).astype(np.int64)
        chosen = deck[rows, pick]
        deck[rows, pick] = deck[:, j]
        deck[:, j] = chosen
    return deck[:, :k].reshape(a, samples, k)
