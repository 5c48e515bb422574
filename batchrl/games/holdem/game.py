"""Hold'em as ``batchrl.games`` knows it: the `Game` the commands, the ingest, the model
loader and the environments use.

The params are the ACPC game definition (``gamedef``: betting structure, players, stacks,
blinds, bet sizes, rounds; the ACPC heads-up limit game by default) and ``pv``, whether
the states hold the equities (the one costly feature). Limit and no-limit, two or three
players, play through the one set of rules (``rules.py``); a no-limit raise is one of
four sizes against the pot to the learner (``actions.py``), played as a legal total.
Stores and models name the game definition (e.g.
``holdem.limit.2p.reverse_blinds``, ``glassfrog.limit.2p`` or a custom file's name) and
record its params, so hold'em owns any store whose params are a game definition's.

>>> from batchrl.games.holdem.rules import RAISE
>>> params = GAME.params()
>>> s = GAME.new_game(np.random.default_rng(0), params)
>>> GAME.current_player(s), GAME.legal_actions(s)       # the small blind opens
(1, (0, 1, 2))
>>> after = GAME.step(s, RAISE)
>>> GAME.rewards(s, after)                              # its blind and its raise
(0.0, -20.0)
>>> dict(zip(GAME.feature_names(params), GAME.encode(after, 0, params).tolist()))["pot"]
30.0
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
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
    Scores,
    SourceContext,
    SourcePlan,
    single_group,
)
from batchrl.games.holdem import actions, features, gamedef, rules
from batchrl.games.holdem import ingest as store_side
from batchrl.games.holdem.gamedef import HEADS_UP_LIMIT, GameDef, GameDefError
from batchrl.games.holdem.rules import HandState
from batchrl.store import StoreSchema

if TYPE_CHECKING:
    from batchrl.blocks import Tasks
    from batchrl.games.holdem.evaluate import HoldemReport
    from batchrl.policy import LoadedModel, Policy


@dataclass(frozen=True)
class HoldemParams:
    """A hold'em game: its ACPC definition (a `GameDef`, or a built-in's name or a
    ``.game`` file's path), and whether the states hold pv."""

    gamedef: GameDef = HEADS_UP_LIMIT
    pv: bool = True

    def __post_init__(self) -> None:
        given: object = self.gamedef
        if isinstance(given, str | Path):
            object.__setattr__(self, "gamedef", gamedef.resolve(str(given)))
        elif not isinstance(given, GameDef):
            raise TypeError(f"gamedef is a GameDef, a built-in's name or a .game file, not "
                            f"{given!r}")


class Holdem(Game):
    """Texas hold'em as the ACPC dealer plays it (heads-up limit so far)."""

    name = "holdem"
    title = "Texas hold'em (ACPC limit and no-limit poker)"
    player_counts = (2, 3)
    zero_sum = True
    unit = "hands"
    Params = HoldemParams
    # FQI: the thesis's M=100, n_min=20, N=11, one joint model, full refits
    recommended: ClassVar[Mapping[str, Any]] = {"fqi": {"trees": 100, "nmin": 20, "iters": 11}}
    options = (
        Option("gamedef", {"ingest": "--game", "generate": "--gamedef",
                           "evaluate": "--gamedef"},
               help="the game: an ACPC .game file, or a built-in game: "
                    f"{', '.join(gamedef.BUILTINS)}. Default: for ingest, the game the log's "
                    "header names, else the built-in whose rules give the logged payoffs "
                    "(this picks a Glassfrog summary's units); for generate and evaluate, "
                    "a model player's game, else heads-up limit in the format's usual "
                    "units (three players: name the game).",
               metavar="FILE|NAME"),
        Option("pv", {"ingest": "--pv/--no-pv"}, type=bool,
               help="compute pv, the exact probability of victory, for every decision. "
                    "--no-pv leaves the feature out: ingest runs several times faster "
                    "[default: --pv]."),
        Option("duplicate", {"evaluate": "--duplicate"}, type=bool,
               help="play every deal once per seating (twice heads-up, three times with "
                    "three players), cutting the variance the cards add."),
    )
    bots = ("random", "rule")
    default_players = ("random", "random")
    default_count = 3000  # the thesis played 3,000 hands
    log_formats = ("acpc", "glassfrog")
    datasets = (Dataset("random", ("random", "random"), 20_000, 1, 400),
                Dataset("mixed", ("rule", "random"), 20_000, 2, 400),
                Dataset("expert", ("rule", "rule"), 20_000, 3, 400))
    reference = "rule"
    bench_games = (4_000, 200)
    examples: ClassVar[Mapping[str, str]] = {
        "generate": "ACPC STATE logs, or Glassfrog's (a .dealer.summary name):\n"
                    "  batchrl generate --game holdem --hands 5000 --players random,random \\\n"
                    "      --seed 10 -o ROOM_90.dealer.summary\n"
                    "  batchrl generate --game holdem --hands 50000 --players random,rule \\\n"
                    "      -o rule.log\n"
                    "  batchrl generate --game holdem --gamedef holdem.nolimit.3p \\\n"
                    "      --players rule,random,rule --hands 20000 -o nl3.log",
        "evaluate": "plays the model against an opponent and reports the chips it won (the\n"
                    "thesis's figure), big blinds and mbb per hand with a 95% confidence\n"
                    "interval, and the split by position:\n"
                    "  batchrl evaluate --model M.npz --opponent rule --hands 20000 --duplicate",
    }

    # ---- facts and params ----------------------------------------------------------

    def owns(self, stored_game: str, game_params: Mapping[str, Any]) -> bool:
        """Hold'em stores name their game definition and record its params."""
        return stored_game == self.name or {"betting", "raise_size"} <= set(game_params)

    def params_from_store(self, stored_game: str, game_params: Mapping[str, Any]
                          ) -> HoldemParams:
        if stored_game == self.name and not game_params:
            return HoldemParams()
        try:
            return HoldemParams(gamedef.from_params(stored_game, game_params,
                                                    f"the game of a {stored_game} store"))
        except (GameDefError, TypeError) as exc:
            raise GameError(f"{stored_game}: not a hold'em game definition ({exc})") from None

    def num_players(self, params: HoldemParams) -> int:
        return params.gamedef.num_players

    def action_names(self, params: HoldemParams) -> tuple[str, ...]:
        return actions.action_names(params.gamedef)

    def reward_unit(self, params: HoldemParams) -> str:
        game = params.gamedef
        blinds = "/".join(map(str, sorted(b for b in game.blind if b)))
        sizes = (f"bets {'/'.join(map(str, game.raise_size))}" if game.is_limit
                 else f"stacks {'/'.join(map(str, sorted(set(game.stacks()))))}")
        return (f"chips of {game.name} (blinds {blinds}, {sizes}): minus the chips put in "
                "with each action (the blind on the first), plus the pot taken on the last; "
                "a seat's rewards add up to its payoff in the hand")

    def reward_scale(self, params: HoldemParams) -> Mapping[str, float]:
        """The big blind, in the rewards' chips: a reward over it is big blinds."""
        return {"big_blind": float(params.gamedef.big_blind)}

    def feature_names(self, params: HoldemParams) -> tuple[str, ...]:
        return features.feature_names(params.gamedef, params.pv)

    # ---- rules ---------------------------------------------------------------------

    def new_game(self, rng: np.random.Generator, params: HoldemParams) -> HandState:
        return rules.new_hand(params.gamedef, rng)

    def current_player(self, state: HandState) -> int:
        return state.current

    def legal_actions(self, state: HandState) -> tuple[int, ...]:
        return actions.legal(state)

    def step(self, state: HandState, action: int) -> HandState:
        """The learner's ``action`` played: a no-limit raise bin as a legal total."""
        if state.finished or not 0 <= action < len(actions.action_names(state.game)):
            return rules.step(state, action)  # the rules say what is wrong
        return rules.step(state, *actions.concrete(state, action))

    def is_terminal(self, state: HandState) -> bool:
        return state.finished

    def returns(self, state: HandState) -> tuple[float, ...]:
        return rules.returns(state)

    def encode(self, state: HandState, player: int, params: HoldemParams
               ) -> NDArray[np.float32]:
        return features.encode(state, player, params.pv)

    def banked(self, state: HandState, seat: int) -> float:
        """Minus the chips ``seat`` has put in, its blind included, once it has acted;
        nothing before (`rewards`: a row's reward is minus what its action puts in, the
        blind counted on the seat's first, and the pot it takes on its last)."""
        spent = state.spent[seat]
        blind = min(state.game.blind[seat], state.stack[seat])
        if spent == blind and seat not in _seats_acted(state):  # more than its blind: acted
            return 0.0
        return -float(spent)

    def sample_worlds(self, state: HandState, seat: int, n: int,
                      rng: np.random.Generator) -> list[HandState]:
        """The other seats' hole cards and the board still to come, drawn from the cards
        ``seat`` has not seen (its own and the board shown so far are kept); the betting
        is the same, so every world is the hand ``seat`` sees."""
        game = state.game
        shown = game.board_cards_before(state.round)
        seen = {*state.hole[seat], *state.board[:shown]}
        unseen = np.array([c for c in range(game.num_suits * game.num_ranks)
                           if c not in seen])
        k = game.num_hole_cards
        others = [p for p in range(game.num_players) if p != seat]
        need = k * len(others) + len(state.board) - shown
        worlds = []
        for _ in range(n):
            drawn = rng.choice(unseen, need, replace=False).tolist()
            hole = list(state.hole)
            for i, p in enumerate(others):
                hole[p] = tuple(drawn[i * k:(i + 1) * k])
            board = (*state.board[:shown], *drawn[k * len(others):])
            worlds.append(state._replace(hole=tuple(hole), board=board))
        return worlds

    def rewards(self, before: HandState, after: HandState) -> tuple[float, ...]:
        """The store's rewards: minus the chips the seat to act puts in (its blind counted
        on its first decision), and at the end each seat's share of the pot (a seat that
        never acted gets its payoff). A seat's rewards over a hand add up to its payoff."""
        seat = before.current
        acted = _seats_acted(before)
        out = [0.0] * len(after.spent)
        out[seat] -= after.spent[seat] - (before.spent[seat] if seat in acted else 0)
        if after.finished:
            acted.add(seat)
            for p, payoff in enumerate(rules.returns(after)):
                out[p] += payoff + (after.spent[p] if p in acted else 0)
        return tuple(out)

    # ---- store side ----------------------------------------------------------------

    def schema(self, params: HoldemParams) -> StoreSchema:
        return store_side.schema_for(params.gamedef, params.pv)

    def prepare(self, command: str, options: Mapping[str, Any]) -> Mapping[str, Any]:
        """``gamedef`` (``--game``, ``--gamedef``) resolved to a game definition; for
        ingest, a game batchrl cannot turn into transitions yet is refused by name."""
        spec = options.get("gamedef")
        if spec is None or command not in ("ingest", "generate"):
            return options
        game = _resolve(spec)
        if command == "ingest":
            where = f"--game {spec if isinstance(spec, str) else game.name}"
            if why := store_side.unsupported(where, game, bool(options.get("pv", True))):
                raise GameError(why)
        return {**options, "gamedef": game}

    def open_source(self, records: Iterator[Any], context: SourceContext) -> SourcePlan:
        """A dealer log or summary: its game read off its header or its first hands (or
        ``--game``), its hands replayed and checked, one row per decision."""
        forced = self.prepare("ingest", context.options).get("gamedef")
        return store_side.open_source(records, context, forced,
                                      bool(context.options.get("pv", True)))

    # ---- play side -----------------------------------------------------------------

    def check_model_params(self, path: str | Path, trained: HoldemParams,
                           playing: HoldemParams) -> None:
        """A model plays the game definition it was trained on (its chips are in the
        features); with or without pv, it plays on the features it has."""
        if trained.gamedef != playing.gamedef:
            raise GameError(f"{path} was trained on {trained.gamedef.name}, in other units or "
                            f"rules than {playing.gamedef.name}: its features would not mean "
                            f"what it learned")

    def load_model(self, path: str | Path, params: Any = None,
                   policy: Policy | None = None) -> LoadedModel:
        """The one loader (``Game.load_model``), then bound to the states the model knows:
        a model trained without pv plays without computing it."""
        given = None if params is None else dataclasses.replace(params, pv=True)
        model = super().load_model(path, given, policy)
        pv = bool({"pv", "pv2"} & set(model.policy.feature_names))  # pv2: three players
        if model.params.pv != pv:
            model = super().load_model(path, dataclasses.replace(model.params, pv=pv),
                                       model.policy)
        return model

    def bot(self, name: str, params: HoldemParams, rng: np.random.Generator) -> Any:
        """``random`` (the thesis's) or ``rule``: they act on batches of states already."""
        from batchrl.games.holdem.bots import make_bot

        return make_bot(name, params.gamedef, rng)

    def generate(self, out: Path, players: Sequence[str], count: int, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None) -> str:
        """The players' hands as an ACPC dealer log (or, heads-up limit, a Glassfrog
        summary: ``format``, else told by the file name); the game is ``gamedef``, else a
        model player's, else heads-up limit in the format's usual units."""
        from batchrl.games.holdem.logs import generate
        from batchrl.policy import ModelError

        game = self.prepare("generate", options).get("gamedef")
        fmt = options.get("format")
        try:
            written = generate(out, list(players), count, seed, fmt, game, progress)
        except ModelError as exc:
            raise GameError(str(exc)) from None
        return f"{written:,} {self.unit} written to {out}"

    ablation_opponents = ("rule",)

    def ablation_players(self, params: HoldemParams) -> tuple[str, ...]:
        return (self.ablation_opponents[0],) * (params.gamedef.num_players - 1)

    def score_count(self, count: int, params: HoldemParams) -> str | None:
        seats = params.gamedef.num_players
        if count < seats or count % seats:
            return ("want an even number (each deal is played from both seats)" if seats == 2
                    else f"want a multiple of {seats} (each deal is played from every seat)")
        return None

    def score(self, players: Sequence[str], count: int, seed: int,
              options: Mapping[str, Any],
              progress: Callable[[int], None] | None = None,
              params: HoldemParams | None = None) -> Scores:
        """The first player's big blinds won per hand on duplicate deals (each played from
        every seat), the random bots' draws keyed to the state: common random numbers
        for any two players measured on one seed. The game is ``gamedef``, else the
        first model player's."""
        from batchrl.games.holdem.bots import models_game
        from batchrl.games.holdem.evaluate import play_bots
        from batchrl.policy import ModelError

        hero, *others = players
        if not others:
            raise GameError("hold'em scores a player against others: give at least two")
        try:
            game = params.gamedef if params is not None else \
                self.prepare("generate", options).get("gamedef") or \
                models_game(players, gamedef.HEADS_UP_LIMIT)
            match = play_bots(hero, others[0], count, seed, game=game, duplicate=True,
                              keyed=True, progress=progress,
                              opponents=others if len(others) > 1 else None)
        except (ModelError, ValueError) as exc:
            raise GameError(str(exc)) from None
        return Scores(match.payoffs[:, 0] / match.game.big_blind, "bb_per_hand", "bb/hand",
                      per_unit=match.game.num_players)

    def evaluate(self, groups: Sequence[Sequence[str]], count: int | None, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None,
                 tasks: Tasks | None = None) -> HoldemReport:
        """The first player against the others, in ``gamedef`` or the game of the model
        among them: chips won, bb and mbb per hand with a 95% interval, by position
        (``duplicate``: each deal played once per seating). At a three-player table two
        players given mean the second takes both other seats."""
        from batchrl.games.holdem.bots import models_game
        from batchrl.games.holdem.evaluate import evaluate_bots
        from batchrl.policy import ModelError

        group = single_group(self, groups)
        if len(group) not in self.player_counts:
            raise GameError(f"hold'em seats 2 or 3 players, not {len(group)} "
                            f"({','.join(group)})")
        try:
            game = self.prepare("generate", options).get("gamedef")
            if game is None:
                game = models_game(group, gamedef.HEADS_UP_LIMIT)
                if len(group) == 3 and game.num_players == 2:
                    raise GameError("three players: say which game with --gamedef "
                                    "(holdem.limit.3p, holdem.nolimit.3p or a .game file)")
            others = list(group[1:]) if len(group) == game.num_players else None
            if others is None and len(group) != 2:
                raise GameError(f"{game.name} seats {game.num_players} players, not "
                                f"{len(group)} ({','.join(group)})")
            return evaluate_bots(group[0], group[1], count or self.default_count, seed,
                                 game=game, duplicate=bool(options.get("duplicate", False)),
                                 progress=progress, opponents=others, tasks=tasks)
        except (ModelError, GameDefError) as exc:
            raise GameError(str(exc)) from None


def _resolve(spec: str | GameDef) -> GameDef:
    if isinstance(spec, GameDef):
        return spec
    try:
        return gamedef.resolve(spec)
    except GameDefError as exc:
        raise GameError(str(exc)) from None


def _seats_acted(state: HandState) -> set[int]:
    """The seats that have acted so far in ``state``'s hand (its betting replayed)."""
    from batchrl.games.holdem.replay import tokens

    replay = rules.deal(state.game, state.hole, state.board)
    seats = set()
    for action, size in (m for sequence in tokens(state.betting, state.game)
                         for m in sequence):
        seats.add(replay.current)
        replay = rules.step(replay, action, size)
    return seats


GAME = Holdem()
