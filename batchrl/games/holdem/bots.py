"""Hold'em players for the simulator: the thesis's random bot, rule bots, a hero.

Every bot acts on a batch: ``act(states, seats)`` gets the states of many tables
and the seat to act at each, and returns one action per table, so a learned
policy decides for thousands of tables in one call. The actions are the learner's
(``actions.py``): fold, call, raise in limit games; in no-limit games a raise is one of
four sizes against the pot, which the simulator plays as a legal total. Randomness
comes only from the generator a bot is given.

* ``RandomBot``: the thesis's random player (ch. 5.1): 10% fold, 50% call,
  40% raise. Where a choice is illegal its probability goes to calling: a fold
  with nothing to call is a check (the ACPC dealer refuses a free fold), and a
  raise past the round's cap is a call. So with nothing to call it checks 60%
  of the time, and at the cap it calls 90%. In no-limit its raises are half the
  pot, the pot, two pots and all-in, 40/35/15/10 of them.
* ``RuleBot`` (``rule`` in heads-up limit): a tight-aggressive fixed-limit player
  after the pokerstrategy.com basic strategy the thesis played against (ch. 5.2),
  described at the class.
* ``EquityBot`` (``rule`` in no-limit and three-player games): equity thresholds,
  pot-odds calls and value bets sized in pot fractions, described at the class.
* ``HeroBot``: a model from ``batchrl fqi`` acting greedily through the same
  feature encoder the store's rows were written with (bound by the one model
  loader, ``Game.load_model``).

>>> import numpy as np
>>> from batchrl.games.holdem.gamedef import HEADS_UP_LIMIT
>>> from batchrl.games.holdem.rules import deal
>>> from batchrl.games.holdem.cards import parse_cards
>>> board = parse_cards("Kd9c4s5h8d")
>>> aces = deal(HEADS_UP_LIMIT, (parse_cards("7c2d"), parse_cards("AhAs")), board)
>>> RuleBot().act([aces], [aces.current]).tolist()    # the small blind's aces raise
[2]
>>> junk = deal(HEADS_UP_LIMIT, (parse_cards("AhAs"), parse_cards("7c2d")), board)
>>> RuleBot().act([junk], [junk.current]).tolist()    # 7-2 offsuit just completes
[1]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
from numpy.typing import NDArray

from batchrl.blocks import load_once
from batchrl.games.base import Bound
from batchrl.games.holdem.actions import FIRST_RAISE, action_names, may_fold, may_raise
from batchrl.games.holdem.features import encode_many, history_codes, thesis
from batchrl.games.holdem.gamedef import GameDef, GameDefError, evaluable
from batchrl.games.holdem.pv import pv_many
from batchrl.games.holdem.pv2 import pv2_many
from batchrl.games.holdem.rules import CALL, FOLD, RAISE, HandState
from batchrl.games.search import inner, search_player
from batchrl.policy import LoadedModel, ModelError, policy_meta

if TYPE_CHECKING:
    from batchrl.policy import LoadedModel, Policy


class Bot(Protocol):
    """A player: one action per table, for a batch of tables."""

    name: str

    def act(self, states: Sequence[HandState], seats: Sequence[int]) -> NDArray[np.int64]:
        """The action of ``seats[i]`` (the seat to act) in ``states[i]``, for every i."""
        ...


def _masks(states: Sequence[HandState]) -> NDArray[np.bool_]:
    """The learner's legal actions of each state, one row each (`action_mask`'s, from the
    same `may_fold` and `may_raise`, without a tuple per state)."""
    width = len(action_names(states[0].game)) if states else 3
    out = np.zeros((len(states), width), dtype=bool)
    fold, call, can_raise = out[:, FOLD], out[:, CALL], out[:, RAISE]
    for i, s in enumerate(states):
        if s.current >= 0:
            fold[i], call[i], can_raise[i] = may_fold(s), True, may_raise(s)
    out[:, RAISE + 1:] = can_raise[:, None]
    return out


def _legal_or_call(states: Sequence[HandState], choice: NDArray[np.int64]) -> NDArray[np.int64]:
    """``choice`` where legal, a call where not (fold with nothing to call, raise at the cap):
    only a fold's or a raise's legality is looked up (a call is always legal)."""
    out = choice.astype(np.int64)
    width = len(action_names(states[0].game)) if states else 3
    if len(out) and (out.min() < 0 or out.max() >= width):
        raise ValueError(f"a choice out of the {width} actions: {out.tolist()}")
    for i in np.flatnonzero(out != CALL).tolist():
        s = states[i]
        if s.current < 0 or not (may_fold(s) if out[i] == FOLD else may_raise(s)):
            out[i] = CALL
    return out


_MASK = (1 << 64) - 1


def _unit(key: int) -> float:
    """A uniform number in [0, 1) from an integer key (the splitmix64 finaliser)."""
    z = (key + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return ((z ^ (z >> 31)) >> 11) / float(1 << 53)


def _units(keys: NDArray[np.uint64]) -> NDArray[np.float64]:
    """`_unit` of each key, in numpy's wrapping 64-bit arithmetic: the same numbers.

    >>> keys = [0, 1, 12345, _MASK]
    >>> _units(np.array(keys, dtype=np.uint64)).tolist() == [_unit(k) for k in keys]
    True
    """
    z = keys + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    out: NDArray[np.float64] = ((z ^ (z >> np.uint64(31))) >> np.uint64(11)).astype(
        np.float64) / float(1 << 53)
    return out


class RandomBot:
    """The thesis's random player; ``fold`` and ``call`` probabilities, the rest raises.

    ``keyed=True`` draws each decision's number from the state itself (the deal,
    the betting so far, the seat) and one seed taken from ``rng``: two heroes
    that reach the same state of the same deal meet the same random decision.
    That makes their results common random numbers, so the difference between
    two heroes is measured far more tightly (the ablation uses it). Each
    decision is still 10/50/40; only the pairing across runs changes.
    """

    SIZES = (0.40, 0.35, 0.15, 0.10)  # no-limit: half pot, pot, two pots, all-in

    def __init__(self, rng: np.random.Generator | None = None, fold: float = 0.1,
                 call: float = 0.5, name: str = "random", keyed: bool = False) -> None:
        if min(fold, call) < 0 or fold + call > 1:
            raise ValueError(f"fold {fold} and call {call} must be probabilities summing to ≤ 1")
        self.rng = rng if rng is not None else np.random.default_rng()
        self.fold, self.call, self.name = fold, call, name
        self.key = int(self.rng.integers(1 << 62)) if keyed else None

    def _draws(self, states: Sequence[HandState], seats: Sequence[int]) -> NDArray[np.float64]:
        if self.key is None:
            return self.rng.random(len(states))

        # ints only: Python's hash of a str changes from process to process
        return _units(np.array([hash((self.key, s.hole, s.board, p, history_codes(s.history)))
                                & _MASK for s, p in zip(states, seats, strict=True)],
                               dtype=np.uint64))

    def act(self, states: Sequence[HandState], seats: Sequence[int]) -> NDArray[np.int64]:
        u = self._draws(states, seats)
        choice = np.where(u < self.fold, FOLD, np.where(u < self.fold + self.call, CALL, RAISE))
        if states and not states[0].game.is_limit:
            # the raise's size from where u fell in the raise's share
            share = (u - self.fold - self.call) / max(1e-12, 1 - self.fold - self.call)
            bins = np.searchsorted(np.cumsum(self.SIZES)[:-1], share, side="right")
            choice = np.where(choice == RAISE, FIRST_RAISE + bins, choice)
        return _legal_or_call(states, choice.astype(np.int64))

    def probabilities(self, states: Sequence[HandState]) -> NDArray[np.float64]:
        """The chance of each of the learner's actions in each state, as ``act`` draws
        them (an illegal choice's share on the call): its strategy, known exactly, which
        ``evaluate --logs --strategy`` takes the luck of its choices out with."""
        width = len(action_names(states[0].game)) if states else 3
        raises = np.array(self.SIZES) if width > 3 else np.ones(1)
        drawn = np.concatenate([[self.fold, self.call],
                                (1 - self.fold - self.call) * raises])
        legal = _masks(states)
        out = np.where(legal, drawn, 0.0)
        out[:, CALL] += 1.0 - out.sum(axis=1)
        return out


def random_action(state: HandState, rng: np.random.Generator,
                  fold: float = 0.1, call: float = 0.5) -> int:
    """One decision of the random player (see ``RandomBot``)."""
    return int(RandomBot(rng, fold, call).act([state], [state.current])[0])


# Pre-flop hand groups, 1 (best) to 5 (the rest), after the pokerstrategy.com
# fixed-limit starting-hand chart, widened for heads-up play where every hand
# is in the blinds. Ranks: 0 = deuce .. 12 = ace.
def preflop_group(hole: Sequence[int]) -> int:
    """The group of two hole cards.

    >>> from batchrl.games.holdem.cards import parse_cards
    >>> [preflop_group(parse_cards(h)) for h in ("AsAh", "AdQd", "8c8h", "Kc5c", "7c2d")]
    [1, 2, 3, 4, 5]
    """
    a, b = hole[0] // 4, hole[1] // 4
    hi, lo = max(a, b), min(a, b)
    suited = hole[0] % 4 == hole[1] % 4
    ace, king, queen, jack, ten, nine = 12, 11, 10, 9, 8, 7
    if hi == lo:
        return 1 if hi >= jack else 2 if hi >= nine else 3
    if hi == ace:
        if lo == king:
            return 1
        if lo == queen or (lo == jack and suited):
            return 2
        if lo >= ten or suited:
            return 3
        return 4
    if hi == king:
        if lo == queen:
            return 2 if suited else 3
        if (lo >= ten and suited) or lo == jack:
            return 3
        return 4 if suited or lo >= nine else 5
    if suited:
        if (hi, lo) in ((queen, jack), (queen, ten), (jack, ten), (ten, nine)):
            return 3
        if lo >= nine or (hi - lo == 1 and lo >= 3):
            return 4
        return 5
    if (hi, lo) == (queen, jack):
        return 3
    if (hi, lo) in ((queen, ten), (jack, ten), (ten, nine)):
        return 4
    return 5


def draws(hole: Sequence[int], board: Sequence[int]) -> tuple[bool, bool]:
    """(flush draw, open-ended straight draw) that use a hole card, on the flop or turn.

    >>> from batchrl.games.holdem.cards import parse_cards
    >>> draws(parse_cards("AhKh"), parse_cards("2h7h9c"))
    (True, False)
    >>> draws(parse_cards("9c8d"), parse_cards("7h6s2c"))
    (False, True)
    """
    if not 3 <= len(board) <= 4:
        return False, False
    cards = (*hole, *board)
    suits = [c % 4 for c in cards]
    flush = any(suits.count(s) == 4 for s in {h % 4 for h in hole})
    ranks = {c // 4 for c in cards}
    if 12 in ranks:
        ranks.add(-1)  # the wheel's ace
    hole_ranks = {c // 4 for c in hole}
    straight = False
    for low in range(0, 9):  # four in a row open at both ends: low-1 and low+4 both live
        run = set(range(low, low + 4))
        if run <= ranks and run & hole_ranks and low + 4 not in ranks and low - 1 not in ranks:
            straight = True
    return flush, straight


class RuleBot:
    """A tight-aggressive fixed-limit player (pokerstrategy.com's basic strategy, heads-up).

    Pre-flop, by hand group (``preflop_group``) and position: the small blind
    raises groups 1-3 and completes the rest (heads-up, the button plays wide);
    the big blind raises groups 1-3 over a completed small blind and checks the
    rest. Facing a raise: group 1 re-raises to the cap, group 2 re-raises once,
    group 3 calls, and the rest call only with pot odds (below).

    After the flop, by PV (the probability of beating a random hand, the same
    number the features hold) and draws: PV ≥ ``strong`` bets and raises to the
    cap; PV ≥ ``good`` bets, raises once and calls; PV ≥ ``fair`` checks and calls
    one bet (two on the flop); a flush or open-ended straight draw bets the flop
    when checked to and calls one bet on the flop or turn. Anything else checks,
    and facing a bet it calls only with pot odds: when PV ≥ ``odds`` × the
    share of the pot after calling that the call would be.
    """

    def __init__(self, strong: float = 0.75, good: float = 0.60, fair: float = 0.45,
                 odds: float = 1.5, name: str = "rule") -> None:
        self.strong, self.good, self.fair, self.odds = strong, good, fair, odds
        self.name = name

    def act(self, states: Sequence[HandState], seats: Sequence[int]) -> NDArray[np.int64]:
        pvs = pv_many([((s.hole[p][0], s.hole[p][1]), s.visible_board())
                       for s, p in zip(states, seats, strict=True)])
        choice = np.array([
            self._preflop(s, p, v) if s.round == 0 else self._postflop(s, p, v)
            for s, p, v in zip(states, seats, np.asarray(pvs).tolist(), strict=True)
        ], dtype=np.int64)
        return _legal_or_call(states, choice)

    def _pot_odds(self, state: HandState, seat: int, pv: float) -> int:
        owed = state.to_call(seat)
        return CALL if pv >= self.odds * owed / (state.pot + owed) else FOLD

    def _preflop(self, state: HandState, seat: int, pv: float) -> int:
        group = preflop_group(state.hole[seat])
        raises = state.round_raises
        if state.to_call(seat) == 0:  # the big blind after the small blind completed
            return RAISE if group <= 3 else CALL
        if raises == 0:  # the small blind's first decision: only the blind to complete
            return RAISE if group <= 3 else CALL
        if group == 1 or (group == 2 and raises < 2):
            return RAISE
        return CALL if group <= 3 else self._pot_odds(state, seat, pv)

    def _postflop(self, state: HandState, seat: int, pv: float) -> int:
        facing = state.to_call(seat) > 0
        raises = state.round_raises
        if pv >= self.strong:
            return RAISE
        if pv >= self.good:
            return RAISE if not facing or raises < 2 else CALL
        if not facing:
            flush, straight = draws(state.hole[seat], state.visible_board())
            return RAISE if state.round == 1 and (flush or straight) else CALL
        if pv >= self.fair and raises <= (2 if state.round == 1 else 1):
            return CALL
        if raises <= 1 and any(draws(state.hole[seat], state.visible_board())):
            return CALL
        return self._pot_odds(state, seat, pv)


class EquityBot:
    """``rule`` in no-limit and three-player games: an equity-threshold player.

    Its hand's strength is its equity against as many random hands as opponents are
    still in (``pv`` against one, ``pv2`` against two: the numbers the features hold;
    against k > 2, ``pv2 ** (k / 2)``, as if each pair were independent), scaled so that
    a fair share is 0.5 however many are in (``equity × players in / 2``).

    * Strong (scaled equity ≥ ``strong``, after the flop ``value``): raise the pot,
      re-raising up to ``max_raises`` raises in the round, then call.
    * Good (≥ ``good``): raise half the pot when nobody has raised in the round, else
      call whatever the pot odds.
    * Anything else: check when it is free, call when the unscaled equity is at least
      ``odds`` × the pot odds (the share of the pot after calling that the call is),
      and fold otherwise.

    In limit games every raise is the round's one size.
    """

    def __init__(self, strong: float = 0.62, good: float = 0.52, value: float = 0.75,
                 odds: float = 1.0, max_raises: int = 3, name: str = "rule") -> None:
        self.strong, self.good, self.value, self.odds = strong, good, value, odds
        self.max_raises, self.name = max_raises, name

    def act(self, states: Sequence[HandState], seats: Sequence[int]) -> NDArray[np.int64]:
        if not states:
            return np.zeros(0, dtype=np.int64)
        requests = [((s.hole[p][0], s.hole[p][1]), s.visible_board())
                    for s, p in zip(states, seats, strict=True)]
        live = np.array([s.game.num_players - sum(s.folded) for s in states])
        equity = pv_many(requests)
        three = np.flatnonzero(live >= 3)
        if three.size:  # against k > 2 hands, as if each pair of them were independent
            equity[three] = pv2_many([requests[i] for i in three]) ** ((live[three] - 1) / 2)
        half, pot = (FIRST_RAISE, FIRST_RAISE + 1) if not states[0].game.is_limit \
            else (RAISE, RAISE)
        choice = np.empty(len(states), dtype=np.int64)
        for i, (s, p) in enumerate(zip(states, seats, strict=True)):
            e = float(equity[i])
            scaled = e * live[i] / 2
            owed = s.to_call(p)
            if scaled >= (self.strong if s.round == 0 else self.value):
                choice[i] = pot if s.round_raises < self.max_raises else CALL
            elif scaled >= self.good:
                choice[i] = half if s.round_raises == 0 else CALL
            elif owed == 0:
                choice[i] = CALL
            else:
                choice[i] = CALL if e >= self.odds * owed / (s.pot + owed) else FOLD
        return _legal_or_call(states, choice)


class HeroBot:
    """A Q-function from ``batchrl fqi`` playing greedily among the legal actions.

    ``model`` is the file bound to hold'em's encoding by the one model loader
    (``Game.load_model``): the states are encoded by ``features.encode_many``, the
    function the store's rows were written with, and the model's own feature selection
    (``--drop`` or ``--features``) is taken from them by name. A model trained without
    pv plays without computing it.
    """

    def __init__(self, model: LoadedModel, name: str | None = None) -> None:
        self.model = model
        self.name = name or model.name
        self.pv: bool = model.params.pv

    @property
    def policy(self) -> Policy:
        return self.model.policy

    @property
    def game(self) -> GameDef:
        game: GameDef = self.model.params.gamedef
        return game

    @property
    def columns(self) -> list[int]:
        """The model's features' places among the encoded ones."""
        return [int(c) for c in self.model.columns]

    @classmethod
    def load(cls, path: str | Path, game: GameDef, name: str | None = None) -> HeroBot:
        """The model at ``path`` playing ``game``; `GameError` if it was trained on another
        game (other units or rules)."""
        holdem = HOLDEM()
        return cls(holdem.load_model(path, holdem.rules.params(gamedef=game)),
                   name or Path(path).stem)

    def act(self, states: Sequence[HandState], seats: Sequence[int]) -> NDArray[np.int64]:
        x = encode_many(states, seats, pv=self.pv)
        return self.model.act_batch(x, _masks(states))

    def value(self, states: Sequence[HandState], seats: Sequence[int]) -> NDArray[np.float64]:
        """The model's value of each state to the seat to act (the Q of the move it
        plays, in the store's chips): what a search to a depth takes at its leaves."""
        return self.model.played_values(encode_many(states, seats, pv=self.pv), _masks(states))


BOT_NAMES = ("random", "rule")


# Hold'em's `Game` (whose ``load_model`` binds model files): this module sits below the
# game's own, so the package binds it on import
HOLDEM = Bound("holdem")


def load_models(specs: Sequence[str],
                loaded: Mapping[str, LoadedModel | Policy] | None = None
                ) -> dict[str, LoadedModel]:
    """The model players among ``specs`` (``PATH`` or ``model:PATH``), each file loaded once
    and bound to the game it was trained on (``loaded`` holds models in memory already),
    in the order given; bots by name are skipped."""
    given = loaded or {}
    out: dict[str, LoadedModel] = {}
    for spec in [inner(s) for s in specs]:
        if spec in BOT_NAMES or spec in out:
            continue
        path = spec.removeprefix("model:")
        held = given.get(spec)
        if isinstance(held, LoadedModel):
            out[spec] = held
            continue
        if held is None:
            _model_file(spec)
        # a policy held already is bound again from its file: binding is the one
        # loader's (``Game.load_model``), and it takes a path
        out[spec] = load_once(HOLDEM().load_model, path)
    return out


def models_game(specs: Sequence[str], fallback: GameDef) -> GameDef:
    """The game of the first model player among ``specs``, else ``fallback``, from the
    headers of their files alone (what `players_game` gives once the models are loaded;
    where they are played elsewhere, on a cluster's workers, their trees are not read
    here). Every model player's file is checked: there, a model file of hold'em."""
    games: list[GameDef] = []
    for spec in [inner(s) for s in specs]:
        if spec in BOT_NAMES:
            continue
        path = _model_file(spec)
        meta = policy_meta(path)
        games.append(HOLDEM().trained_params(path, str(meta.get("game", "?")),
                                              meta.get("game_params") or {}).gamedef)
    return games[0] if games else fallback


def _model_file(spec: str) -> str:
    """The path of a model player (``PATH`` or ``model:PATH``; a ``python:MODULE:CALLABLE``
    as it is); refused, naming the bots, when no file is there."""
    path = spec.removeprefix("model:")
    if not Path(path).is_file() and not path.startswith("python:"):
        raise ModelError(f"{spec!r} is neither a bot ({', '.join(BOT_NAMES)}) nor a "
                         "model file")
    return path


def players_game(models: Mapping[str, LoadedModel], fallback: GameDef) -> GameDef:
    """The first model player's game, else ``fallback``."""
    for model in models.values():
        game: GameDef = model.params.gamedef
        return game
    return fallback


def make_bot(spec: str, game: GameDef, rng: np.random.Generator, keyed: bool = False,
             models: Mapping[str, LoadedModel | Policy] | None = None) -> Bot:
    """A bot from its name (``random``, ``rule``) or a model file (``PATH`` or ``model:PATH``,
    taken from ``models`` when loaded already); ``keyed`` makes a random bot's draws common
    random numbers (see ``RandomBot``). A model must have been trained on ``game``.
    ``search:INNER`` searches over INNER at each decision (`batchrl.games.search`)."""
    holdem = HOLDEM()
    searching = search_player(holdem, holdem.rules.params(gamedef=game), spec,
                              lambda name: make_bot(name, game, rng, keyed, models), rng)
    if searching is not None:
        return searching
    if spec == "random":
        return RandomBot(rng, keyed=keyed)
    if spec == "rule":
        return RuleBot() if thesis(game) else EquityBot()
    path = spec.removeprefix("model:")
    model = load_models([spec], models)[spec]
    holdem.play.check_model_params(
        path, model.params, holdem.rules.params(gamedef=game, pv=model.params.pv))
    return HeroBot(model, Path(path).stem)


def known_strategy(spec: str) -> RandomBot:
    """The bot ``spec`` as a strategy batchrl knows in probabilities (``evaluate --logs
    --strategy NAME=BOT``); a bot that chooses by its cards alone has no luck in its
    choices to take out."""
    if spec == "random":
        return RandomBot(np.random.default_rng(0))
    if spec == "rule":
        raise ValueError("rule chooses by its cards and the betting alone: its choices have "
                         "no luck to take out (--strategy takes random)")
    raise ValueError(f"{spec}: not a bot whose strategy batchrl knows as probabilities "
                     "(--strategy takes random)")


PLAYABLE = tuple(range(2, 11))  # players at a table the bots and the features know


def check_playable(game: GameDef) -> None:
    if game.num_players not in PLAYABLE:
        raise GameDefError(f"{game.name}: the bots play games of {PLAYABLE[0]} to "
                           f"{PLAYABLE[-1]} players, not {game.num_players}")
    if why := evaluable(game):
        raise GameDefError(f"{game.name}: cannot score its showdowns: {why}")
