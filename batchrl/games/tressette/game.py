"""Tressette through the `batchrl.games.Game` protocol: four seats in two teams (0 and 2
against 1 and 3), a hand an episode, the rules of ``rules``, the features of ``features``.

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

>>> game = GAME
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

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from batchrl.games.base import (
    Dataset,
    Game,
    GameError,
    Option,
    Report,
    Scores,
    SourceContext,
    SourcePlan,
    single_group,
)
from batchrl.games.tressette import transitions as tt
from batchrl.games.tressette.bots import BOT_NAMES
from batchrl.games.tressette.features import N_FEATURES, Tracker
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
from batchrl.games.tressette.symmetry import (
    canonical,
    canonical_cards,
    canonical_name,
    to_cards,
)
from batchrl.store import StoreSchema

if TYPE_CHECKING:
    from batchrl.blocks import Tasks


@dataclass(frozen=True, slots=True)
class TressetteParams:
    """``reward``: ``"points"``, the team's points at the end of the hand, or ``"shaped"``,
    the seed's per-card reward on top of them; ``suits``: ``"dealt"`` (cards by their
    names) or ``"canonical"`` (each state's suits in canonical order)."""

    reward: str = "points"
    suits: str = "dealt"

    def __post_init__(self) -> None:
        tt.check_options(self.reward, self.suits)


@dataclass(frozen=True, slots=True)
class Hand:
    """A hand as the protocol plays it: the rules' ``state`` and the ``params`` its seats
    play with."""

    state: State
    params: TressetteParams


_JOBS_HELP = ("processes that read and check JSON lines while this one makes and writes "
              "the rows. Default: 1 on a machine with two cores or more, else 0 (read "
              "here).")


class Tressette(Game):
    name = "tressette"
    title = "Tressette (four seats, two teams)"
    player_counts = (4,)
    zero_sum = True
    teams = ((0, 2), (1, 3))
    unit = "hands"
    Params = TressetteParams
    # the recipe of docs/games/tressette.md (75% of hands won against random)
    recommended: ClassVar[Mapping[str, Any]] = {
        "fqi": {"trees": 50, "nmin": 20, "k": 30, "iters": 10, "per_action": True, "fast": True,
                "drop": ("played_*", "table_*")},
        "bc": {"k": 30, "drop": ("played_*", "table_*")}}
    options = (
        Option("reward", {"ingest": "--reward"},
               "the team's points at the end of the hand, or the seed's shaped per-card "
               "reward on top of them. [default: points]", choices=tt.REWARDS),
        Option("suits", {"ingest": "--suits"},
               "name the suits as dealt, or put each state's suits in a canonical order "
               "(led suit, then most cards held, ...): there are no trumps, so a learner "
               "then sees 24 suit orders of a situation as one. [default: dealt]",
               choices=tt.SUIT_ORDERS),
        Option("jobs", {"ingest": "--jobs"}, _JOBS_HELP, type=int, short="-j"),
    )
    bots = BOT_NAMES
    default_players = ("random", "random", "random", "random")
    default_count = 20_000
    log_formats = ("jsonl", "transcript")
    datasets = (Dataset("random", ("random",) * 4, 10_000, 1, 200, {"suits": "canonical"}),
                Dataset("mixed", ("rule~0.3",) * 4, 10_000, 2, 200, {"suits": "canonical"}),
                Dataset("expert", ("rule",) * 4, 10_000, 3, 200, {"suits": "canonical"}))
    reference = "rule"
    bench_games = (2_000, 40)
    examples: ClassVar[Mapping[str, str]] = {
        "generate": "four seats, or A,B for teams 0+2 and 1+3:\n"
                    "  batchrl generate --game tressette --players seed-heuristic,random \\\n"
                    "      --games 50000 -o tressette.jsonl",
        "evaluate": "a team against another, each deal played from both sides and the lead\n"
                    "rotating: hands won and points per hand with 95% intervals:\n"
                    "  batchrl evaluate --game tressette --team model:M.npz --vs random \\\n"
                    "      --games 20000",
    }

    # ---- facts -------------------------------------------------------------------------

    def action_names(self, params: Any) -> tuple[str, ...]:
        return tt.names(params.suits)[1]

    def reward_unit(self, params: Any) -> str:
        points = ("the team's points at the end of the hand (0-11, both teams' adding up to "
                  "11), on each seat's last card")
        if params.reward == "shaped":
            return ("the seed's shaped per-card reward (an ace -0.2, a 2 or 3 -0.1, another "
                    "card +0.05; +0.5 or -0.5 on the card that closes a trick, +0.3 per 2, 3 "
                    f"or ace the team takes) plus {points}")
        return points

    def feature_names(self, params: Any) -> tuple[str, ...]:
        return tt.names(params.suits)[0]

    # ---- rules -------------------------------------------------------------------------

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
        if state.params.suits == "canonical" and not is_terminal(state.state):
            if not 0 <= card < CARDS:
                raise IllegalCard(f"card {card}: ids are 0..{CARDS - 1}")
            order = _ORDERS.get(state.state)
            if order is None:
                order = _canonical_view(state.state)[2]
            real = int(to_cards(np.asarray([card]), order[None])[0])
            try:
                return Hand(step(state.state, real), state.params)
            except IllegalCard as exc:
                raise IllegalCard(f"{canonical_name(card)} is {card_name(real)} here: "
                                  f"{exc}") from None
        return Hand(step(state.state, card), state.params)

    def is_terminal(self, state: Hand) -> bool:
        return is_terminal(state.state)

    def returns(self, state: Hand) -> tuple[float, ...]:
        return rules_returns(state.state)

    def sample_worlds(self, state: Hand, seat: int, n: int,
                      rng: np.random.Generator) -> list[Hand]:
        """The other hands drawn uniformly among the deals ``seat`` cannot rule out: the
        cards it has not seen, in hands of the sizes they have, with the voids shown by
        not following suit and what the signals said (`batchrl.games.tressette.worlds`)."""
        from batchrl.games.tressette.worlds import sample

        return [Hand(w, state.params) for w in sample(state.state, seat, n, rng)]

    def encode(self, state: Hand, player: int, params: Any) -> NDArray[np.float32]:
        if params.suits == "canonical" and player == state.state.current:
            return _canonical_view(state.state)[0].copy()
        x = tracker_at(state.state).features(seats=np.asarray([player]))
        if params.suits == "canonical":
            x = canonical(x)[0]
        out: NDArray[np.float32] = x[0]
        return out

    def encode_batch(self, states: Sequence[Hand], players: Sequence[int], params: Any
                     ) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
        """Every state replayed from its deal in one tracker (`replay`), a play at a time
        for the whole batch, not a tracker per state; a canonical state's suit order is
        kept for ``step`` (`_ORDERS`)."""
        live = [i for i, h in enumerate(states) if not is_terminal(h.state)]
        x = np.empty((len(states), N_FEATURES), dtype=np.float32)
        legal = np.zeros((len(states), CARDS), dtype=bool)
        for i in sorted(set(range(len(states))) - set(live)):  # a hand over: as encode
            x[i] = self.encode(states[i], players[i], params)
        _ORDERS.clear()  # ``step`` follows the acting on these states
        if not live:
            return x, legal
        tracker = replay([states[i].state for i in live])
        seats = np.asarray(players, dtype=np.int64)[live]
        xs, ls = tracker.features(seats=seats), tracker.legal()
        own = seats == tracker.current  # the seat to play's own view
        if params.suits == "canonical":
            xs, renamed, order = canonical(xs, ls)
            assert renamed is not None
            ls = renamed
            for j in np.flatnonzero(own):
                _ORDERS[states[live[j]].state] = order[j].copy()
        x[live] = xs
        legal[live] = ls
        for j in np.flatnonzero(~own):  # the mask is the seat to play's, in its suits
            legal[live[j]] = self.legal_mask(states[live[j]], params)
        return x, legal

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

    # ---- store side --------------------------------------------------------------------

    def schema(self, params: Any) -> StoreSchema:
        return tt.schema(params.reward, params.suits)

    def prepare(self, command: str, options: Mapping[str, Any]) -> Mapping[str, Any]:
        self._params_of(options)
        jobs = options.get("jobs")
        if jobs is not None and (not isinstance(jobs, int) or jobs < 0):
            raise GameError(f"--jobs {jobs}: want 0 (read in this process) or more")
        return options

    def open_source(self, records: Iterator[Any], context: SourceContext) -> SourcePlan:
        from batchrl.games.tressette.ingest import open_source

        params = self._params_of(context.options)
        return open_source(records, context, params.reward, params.suits)

    def _params_of(self, options: Mapping[str, Any]) -> TressetteParams:
        chosen = {k: options[k] for k in ("reward", "suits") if options.get(k) is not None}
        params: TressetteParams = self.params(**chosen)
        return params

    # ---- play side ---------------------------------------------------------------------

    def check_model_params(self, path: str | Path, trained: Any, playing: Any) -> None:
        """A model plays whatever reward its store had; its suits must be the game's."""
        if trained.suits != playing.suits:
            raise GameError(f"{path} names the suits {trained.suits}, not {playing.suits}: "
                            f"its features would not mean what it learned")

    def bot(self, name: str, params: Any, rng: np.random.Generator) -> Any:
        from batchrl.games.play import OneAtATime
        from batchrl.games.tressette.bots import make_bot

        bot = make_bot(name, rng)
        if params.suits != "canonical":
            return OneAtATime(name, lambda hand: int(bot.act(hand.state)))
        return CanonicalBot(name, bot)

    def generate(self, out: Path, players: Sequence[str], count: int, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None) -> str:
        """``count`` hands of ``players`` (four seats, or A,B: seats 0 and 2 play A, 1 and 3
        play B) as JSON lines, or as the seed's transcript (``format`` "transcript", or
        "auto" and a ``.txt`` file)."""
        from batchrl.games.tressette.logs import play, write_log

        names = [p.strip() for p in players]
        if len(names) == 2:
            names = names * 2
        fmt = options.get("format") or "auto"
        if fmt not in ("auto", *self.log_formats):
            raise GameError(f"tressette writes {', '.join(self.log_formats)}, not {fmt}")
        kind = "transcript" if fmt == "transcript" or (fmt == "auto" and out.suffix == ".txt") \
            else "jsonl"
        written = write_log(out, _advancing(play(names, count, seed), progress), kind)
        return f"{written:,} hands written to {out} ({kind})"

    ablation_opponents = ("rule",)

    def score_count(self, count: int, params: Any) -> str | None:
        return None if count >= 4 and count % 2 == 0 else \
            "want an even number, at least 4 (each deal is played from both sides)"

    def score(self, players: Sequence[str], count: int, seed: int,
              options: Mapping[str, Any],
              progress: Callable[[int], None] | None = None, params: Any = None) -> Scores:
        """Hands won by the first player's team (both its seats) against the second's,
        each deal played from both sides."""
        from batchrl.games.tressette.evaluate import sides_points
        from batchrl.policy import ModelError

        if len(players) != 2:
            raise GameError(f"tressette scores a team against another: give two players, "
                            f"not {len(players)}")
        try:
            ours = sides_points(players[0], players[1], count, seed, progress,
                                load_model=self.load_model)
        except (ModelError, ValueError) as exc:
            raise GameError(str(exc)) from None
        return Scores((ours > 11 - ours).astype(np.float64).ravel(), "hands_won",
                      "share of hands won", per_unit=2)

    def evaluate(self, groups: Sequence[Sequence[str]], count: int | None, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None,
                 tasks: Tasks | None = None) -> Report:
        """A team (both its seats) against another: the group (team, vs)."""
        from batchrl.games.tressette.evaluate import evaluate_teams
        from batchrl.policy import ModelError

        group = single_group(self, groups)
        if len(group) != 2:
            raise GameError(f"tressette plays a team against another: give two players "
                            f"(the team, then its opponents), not {len(group)}")
        team, vs = group
        try:
            return evaluate_teams(team, vs, count or self.default_count, seed, progress,
                                  load_model=self.load_model, tasks=tasks)
        except ModelError as exc:
            raise GameError(str(exc)) from None


def _advancing(items: Iterable[Any], progress: Callable[[int], None] | None
               ) -> Iterator[Any]:
    for item in items:
        yield item
        if progress is not None:
            progress(1)


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
    hands = np.zeros((len(states), SEATS, CARDS), dtype=bool)
    depth = np.fromiter((len(st.plays) for st in states), np.int64, count=len(states))
    cards = np.zeros((len(states), max(int(depth.max(initial=0)), 1)), dtype=np.int64)
    leaders = np.empty(len(states), dtype=np.int64)
    for g, st in enumerate(states):
        for seat, held in enumerate(st.hands):
            hands[g, seat, list(held)] = True
        for t, (seat, card) in enumerate(st.plays):
            hands[g, seat, card] = True
            cards[g, t] = card
        leaders[g] = st.plays[0][0] if st.plays else st.leader
    tracker = Tracker(hands, leaders)
    for t in range(int(depth.max(initial=0))):
        tracker.play(cards[:, t], active=depth > t)
    return tracker


# the suit order of the canonical states of `Tressette.encode_batch`'s last batch, for
# ``step`` to name their cards: a search's rollouts step every state a model acted on
_ORDERS: dict[State, NDArray[np.int64]] = {}

_View = tuple[NDArray[Any], NDArray[np.bool_], NDArray[np.int64]]
_VIEWS: dict[State, _View] = {}


class CanonicalBot:
    """A bot (it plays real cards) as a `batchrl.games.play.Player` of canonical suits:
    the game's actions name cards in the seat's canonical suits (a tied suit's card by
    the first of the tie: alike). A batch of states is replayed in one tracker
    (`replay`) to rename its cards, not a tracker per state, and each state's suit
    order is kept for the ``step`` that follows (`_ORDERS`): a search's rollouts ask
    a bot for thousands of states at once."""

    def __init__(self, name: str, bot: Any) -> None:
        self.name, self.bot = name, bot

    def act(self, states: Sequence[Hand], seats: Sequence[int]) -> NDArray[np.int64]:
        cards = np.fromiter((self.bot.act(h.state) for h in states), np.int64,
                            count=len(states))
        _ORDERS.clear()  # ``step`` follows the acting on these states
        if not len(states):
            return cards
        x = replay([h.state for h in states]).features()  # the seat to play's view
        order, renamed = canonical_cards(x, cards)
        for h, o in zip(states, order, strict=True):
            _ORDERS[h.state] = o.copy()
        return renamed


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


GAME = Tressette()
