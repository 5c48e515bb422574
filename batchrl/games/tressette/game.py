"""Tressette's rules core (`batchrl.games.Rules`): four seats in two teams (0 and 2 against
1 and 3), a hand an episode, the rules of ``rules``, the features of ``features``; its
faces are in ``faces``.

A state of the protocol is a `Hand`: the rules' state and the params it is played with,
which say what the cards are called and what a decision earns. With ``suits="dealt"``
(the default) an action is a card id (``rules.card_name``); with ``"canonical"`` it is a
card in the acting seat's canonical suits (``symmetry``: ``Aa`` is the ace of the suit the
state puts first), as in a store ingested with ``--suits canonical``. ``encode`` gives
exactly a store row's features: ``features.Tracker`` computes them, here for one hand,
replayed from its deal (the tracker of a hand's previous play is kept, so a hand played
card by card costs one play a step). The reward of a decision is the store's: the team's
points at the end of the hand (``reward="points"``), or the seed's per-card shaping on
top of them (``"shaped"``); ``returns`` are zero-sum, the team's points minus the
other's.

>>> game = RULES
>>> hand = game.new_game(np.random.default_rng(0), game.params())
>>> game.current_player(hand), [card_name(c) for c in game.legal_actions(hand)][:4]
(3, ['9D', 'AD', '6C', '7C'])
>>> while not game.is_terminal(hand):
...     before, hand = hand, game.step(hand, game.legal_actions(hand)[0])
>>> game.returns(hand), game.rewards(before, hand)  # the last card: each team's points
((-5.0, 5.0, -5.0, 5.0), (3.0, 8.0, 3.0, 8.0))
>>> game.encode(before, 2, game.params()).shape
(287,)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games.core import Rules
from batchrl.games.tressette import names as tt
from batchrl.games.tressette.features import Tracker
from batchrl.games.tressette.rules import (
    CARDS,
    SEATS,
    IllegalCard,
    State,
    card_name,
    deal,
    is_terminal,
    legal_cards,
    step,
    team_points,
)
from batchrl.games.tressette.rules import returns as rules_returns
from batchrl.games.tressette.symmetry import canonical, canonical_name, to_card
from batchrl.games.tressette.worlds import sample


@dataclass(frozen=True, slots=True)
class TressetteParams:
    """``reward``: ``"points"``, the team's points at the end of the hand, or ``"shaped"``,
    the seed's per-card reward on top of them; ``suits``: ``"dealt"`` (cards by their
    names) or ``"canonical"`` (each state's suits in canonical order)."""

    reward: str = "points"
    suits: str = "dealt"

    def __post_init__(self) -> None:
        tt.check_options(self.reward, self.suits)


class Seen:
    """Where a batch left a hand (`lockstep`): row ``row`` of ``tracker``, then the real
    ``cards`` played since; ``order``: the seat to play's canonical suits (the real suit
    in each canonical place), once worked out. A memo only: nothing compares it, a deep
    copy or a pickle of it is empty, a hand made with ``dataclasses.replace`` gets its own
    (a shallow copy shares it: the same state, so still right), and a finished hand keeps
    no tracker. The tracker is shared by the batch: never change it."""

    __slots__ = ("cards", "order", "row", "tracker")

    def __init__(self) -> None:
        self.tracker: Tracker | None = None
        self.row = 0
        self.cards: tuple[int, ...] = ()
        self.order: list[int] | None = None

    def __reduce__(self) -> tuple[type[Seen], tuple[()]]:
        return Seen, ()


@dataclass(frozen=True, slots=True)
class Hand:
    """A hand as the protocol plays it: the rules' ``state`` and the ``params`` its seats
    play with; ``seen``: where the last batch that held it left it (a memo, for speed)."""

    state: State
    params: TressetteParams
    seen: Seen = field(default_factory=Seen, init=False, compare=False, repr=False)


class TressetteRules(Rules):
    """Four seats in two teams; a state is a `Hand` (the rules' state and its params)."""

    name = "tressette"
    player_counts = (4,)
    zero_sum = True
    teams = ((0, 2), (1, 3))
    unit = "hands"
    Params = TressetteParams

    def action_names(self, params: Any) -> tuple[str, ...]:
        return tt.names(params.suits)[1]

    def feature_names(self, params: Any) -> tuple[str, ...]:
        return tt.names(params.suits)[0]

    def new_game(self, rng: np.random.Generator, params: Any) -> Hand:
        return Hand(deal(rng, leader=int(rng.integers(SEATS))), params)

    def current_player(self, state: Hand) -> int:
        return -1 if is_terminal(state.state) else state.state.current

    def legal_actions(self, state: Hand) -> tuple[int, ...]:
        if is_terminal(state.state):
            return ()
        if state.params.suits != "canonical":
            return legal_cards(state.state)
        return tuple(np.flatnonzero(_canonical_view(state.state)[1]).tolist())

    def step(self, state: Hand, action: int) -> Hand:
        card = int(action)
        seen = state.seen
        if state.params.suits == "canonical" and not is_terminal(state.state):
            if not 0 <= card < CARDS:
                raise IllegalCard(f"card {card}: ids are 0..{CARDS - 1}")
            order = seen.order if seen.order is not None else \
                _canonical_view(state.state)[2].tolist()
            real = to_card(card, order)
            try:
                after = Hand(step(state.state, real), state.params)
            except IllegalCard as exc:
                raise IllegalCard(f"{canonical_name(card)} is {card_name(real)} here: "
                                  f"{exc}") from None
        else:
            real, after = card, Hand(step(state.state, card), state.params)
        if seen.tracker is not None and not is_terminal(after.state):  # one card on
            follows = after.seen
            follows.tracker, follows.row, follows.cards = seen.tracker, seen.row, \
                (*seen.cards, real)
        return after

    def is_terminal(self, state: Hand) -> bool:
        return is_terminal(state.state)

    def returns(self, state: Hand) -> tuple[float, ...]:
        return rules_returns(state.state)

    def sample_worlds(self, state: Hand, seat: int, n: int,
                      rng: np.random.Generator) -> list[Hand]:
        """The other hands drawn uniformly among the deals ``seat`` cannot rule out: the
        cards it has not seen, in hands of the sizes they have, with the voids shown by
        not following suit and what the signals said (`batchrl.games.tressette.worlds`)."""
        worlds = [Hand(w, state.params) for w in sample(state.state, seat, n, rng)]
        if state.params.suits == "canonical" and seat == state.state.current:
            # the seat sees each world as the real state (its hand, the plays, the
            # signals): its canonical suits are the same, worked out once
            order = _canonical_view(state.state)[2].tolist()
            for w in worlds:
                w.seen.order = order
        return worlds

    def encode(self, state: Hand, player: int, params: Any) -> NDArray[np.float32]:
        if params.suits == "canonical" and player == state.state.current:
            return _canonical_view(state.state)[0].copy()
        x = tracker_at(state.state).features(seats=np.asarray([player]))
        if params.suits == "canonical":
            x = canonical(x)[0]
        out: NDArray[np.float32] = x[0]
        return out

    def rewards(self, before: Hand, after: Hand) -> tuple[float, ...] | None:
        """The store's reward of the card just played: with ``"shaped"`` the seed's reward
        to the seat that played it; at the end, each team's points to its seats."""
        earned: list[float] | None = None
        if after.params.reward == "shaped" and after.state.plays:
            seat, card = after.state.plays[-1]
            team = np.asarray([seat % 2])
            high_before = tracker_at(before.state).high_taken[:, seat % 2]
            value = tt.shaped_rewards(np.asarray([card]), team, high_before,
                                      tracker_at(after.state), np.ones(1, dtype=bool))
            earned = [0.0] * SEATS
            earned[seat] = float(value[0])
        if is_terminal(after.state):
            points = team_points(after.state)
            earned = [points[s % 2] + (earned[s] if earned else 0.0) for s in range(SEATS)]
        return None if earned is None else tuple(earned)


RULES = TressetteRules()


# ---- one hand's features, replayed from its deal ------------------------------------------

_TRACKERS: dict[tuple[Any, ...], Tracker] = {}
_KEEP = 1024  # trackers kept (a few KB each)


def tracker_at(state: State) -> Tracker:
    """A tracker of the one hand ``state``, at ``state``: replayed from its deal, or one
    play on from the tracker of the state before (kept). Never change the one returned
    (``copy`` it)."""
    played: list[list[int]] = [[] for _ in range(SEATS)]
    for seat, card in state.plays:
        played[seat].append(card)
    dealt = tuple(tuple(sorted((*state.hands[s], *played[s]))) for s in range(SEATS))
    leader = state.plays[0][0] if state.plays else state.leader
    key = (dealt, leader, state.plays)
    tracker = _TRACKERS.get(key)
    if tracker is not None:
        return tracker
    before = _TRACKERS.get((dealt, leader, state.plays[:-1])) if state.plays else None
    if before is not None:
        tracker = before.copy()
        tracker.play(np.asarray([state.plays[-1][1]]))
    else:
        tracker = replay([state])
    if len(_TRACKERS) >= _KEEP:
        _TRACKERS.clear()
    _TRACKERS[key] = tracker
    return tracker


def replay(states: Sequence[State]) -> Tracker:
    """One tracker of the hands ``states``, each at its own point: replayed from their
    deals together, play t of every hand that has one at once."""
    depth = np.fromiter((len(st.plays) for st in states), np.int64, count=len(states))
    longest = int(depth.max(initial=0))
    held: list[int] = []  # (hand, seat, card) as one index: every card dealt
    cards = np.zeros((len(states), max(longest, 1)), dtype=np.int64)
    leaders = np.empty(len(states), dtype=np.int64)
    for g, st in enumerate(states):
        base = g * SEATS * CARDS
        for seat, hand in enumerate(st.hands):
            at = base + seat * CARDS
            held += [at + c for c in hand]
        if st.plays:
            held += [base + seat * CARDS + c for seat, c in st.plays]
            cards[g, :len(st.plays)] = [c for _, c in st.plays]
            leaders[g] = st.plays[0][0]
        else:
            leaders[g] = st.leader
    hands = np.zeros(len(states) * SEATS * CARDS, dtype=bool)
    hands[held] = True
    tracker = Tracker(hands.reshape(len(states), SEATS, CARDS), leaders)
    for t in range(longest):
        tracker.play(cards[:, t], active=depth > t)
    return tracker


# ---- hands followed from batch to batch ----------------------------------------------------


def lockstep(hands: Sequence[Hand]) -> Tracker:
    """One tracker of ``hands`` (as `replay`'s), each hand's `Seen` pointed at its row. A
    search's rollouts ask a model (and the others' model) for tens of thousands of hands
    a step, each a card or two on from a hand of an earlier batch: such a hand is taken
    from that batch's tracker and played on (the cards since); any other is replayed from
    its deal. Never change the tracker returned: the hands' memos hold it."""
    if not hands:
        return replay([])
    parts: list[Tracker] = []
    placed: list[int] = []  # the batch's index of each part's rows, parts in order
    groups: dict[tuple[int, int], list[int]] = {}
    fresh: list[int] = []
    for i, hand in enumerate(hands):
        seen = hand.seen
        if seen.tracker is None:
            fresh.append(i)
        else:
            groups.setdefault((id(seen.tracker), len(seen.cards)), []).append(i)
    for members in groups.values():
        first = hands[members[0]].seen
        assert first.tracker is not None
        part = first.tracker.take(np.fromiter((hands[i].seen.row for i in members),
                                              np.int64, count=len(members)))
        if first.cards:
            since = np.asarray([hands[i].seen.cards for i in members], dtype=np.int64)
            for t in range(since.shape[1]):
                part.play(since[:, t])
        parts.append(part)
        placed += members
    if fresh:
        parts.append(replay([hands[i].state for i in fresh]))
        placed += fresh
    tracker = Tracker.concat(parts) if len(parts) != 1 else parts[0]
    if placed != list(range(len(hands))):
        rows = np.empty(len(hands), dtype=np.int64)
        rows[placed] = np.arange(len(hands))
        tracker = tracker.take(rows)
    for i, hand in enumerate(hands):
        seen = hand.seen
        seen.tracker, seen.row, seen.cards = tracker, i, ()
    return tracker


_View = tuple[NDArray[Any], NDArray[np.bool_], NDArray[np.int64]]
_VIEWS: dict[State, _View] = {}


def _canonical_view(state: State) -> _View:
    """The seat to play's state and legal cards in its canonical suits, and the order
    (the real suit in each canonical place); kept, as the trackers are."""
    view = _VIEWS.get(state)
    if view is None:
        tracker = tracker_at(state)
        x, legal, order = canonical(tracker.features(), tracker.legal())
        assert legal is not None
        view = x[0], legal[0], order[0]
        if len(_VIEWS) >= _KEEP:
            _VIEWS.clear()
        _VIEWS[state] = view
    return view
