"""Hold'em's faces beside its rules core: ACPC logs into store rows (`HoldemLog`), and its
players, logs written, duplicate matches and reports (`HoldemPlay`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games.base import (
    ChancePlan,
    GameError,
    LogFace,
    PlayFace,
    Scores,
    SourceContext,
    SourcePlan,
    single_group,
)
from batchrl.games.holdem import chance, gamedef
from batchrl.games.holdem import ingest as store_side
from batchrl.games.holdem.bots import make_bot, models_game
from batchrl.games.holdem.evaluate import HoldemReport, evaluate_bots, play_bots
from batchrl.games.holdem.game import HoldemParams
from batchrl.games.holdem.gamedef import GameDef, GameDefError
from batchrl.games.holdem.logs import generate
from batchrl.games.holdem.rules import HandState, returns_many
from batchrl.policy import ModelError
from batchrl.store import StoreSchema

if TYPE_CHECKING:
    from batchrl.blocks import Tasks


def _resolve(spec: str | GameDef) -> GameDef:
    if isinstance(spec, GameDef):
        return spec
    try:
        return gamedef.resolve(spec)
    except GameDefError as exc:
        raise GameError(str(exc)) from None


class HoldemLog(LogFace):
    """ACPC dealer logs and Glassfrog summaries into rows, one per decision; a store names
    its game definition and records its params."""

    def owns(self, stored_game: str, game_params: Mapping[str, Any]) -> bool:
        """Hold'em stores name their game definition and record its params."""
        return stored_game == self.rules.name or {"betting", "raise_size"} <= set(game_params)

    def params_from_store(self, stored_game: str, game_params: Mapping[str, Any]
                          ) -> HoldemParams:
        if stored_game == self.rules.name and not game_params:
            return HoldemParams()
        try:
            return HoldemParams(gamedef.from_params(stored_game, game_params,
                                                    f"the game of a {stored_game} store"))
        except (GameDefError, TypeError) as exc:
            raise GameError(f"{stored_game}: not a hold'em game definition ({exc})") from None

    def reward_unit(self, params: HoldemParams) -> str:
        game = params.gamedef
        blinds = "/".join(map(str, sorted(b for b in game.blind if b)))
        sizes = (f"bets {'/'.join(map(str, game.raise_size))}" if game.is_limit
                 else f"stacks {'/'.join(map(str, sorted(set(game.stacks()))))}")
        worth = f", a chip worth {game.chip} of the logs' amounts" if game.chip else ""
        return (f"chips of {game.name} (blinds {blinds}, {sizes}{worth}): minus the chips "
                "put in with each action (the blind and ante on the first), plus the pot "
                "taken on the last; a seat's rewards add up to its payoff in the hand")

    def reward_scale(self, params: HoldemParams) -> Mapping[str, float]:
        """The big blind, in the rewards' chips: a reward over it is big blinds."""
        return {"big_blind": float(params.gamedef.big_blind)}

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

    def chance_hands(self, records: Iterator[Any], context: SourceContext, draws: int,
                     seed: int, strategies: Mapping[str, str] | None = None) -> ChancePlan:
        """The deal and each round's board cards, with draws from the deck, and each live
        seat's equity and chips after them; the choices of players who played the
        ``random`` bot, with its probabilities (`batchrl.games.holdem.chance`)."""
        forced = self.prepare("ingest", context.options).get("gamedef")
        return chance.chance_hands(records, context, forced, draws, seed, strategies)


class HoldemPlay(PlayFace):
    """Hold'em's bots and model players, dealer logs written, duplicate matches."""

    bots = ("random", "rule")
    default_players = ("random", "random")
    default_count = 3000  # the thesis played 3,000 hands
    log_formats = ("acpc", "glassfrog", "phh")

    def check_model_params(self, path: str | Path, trained: HoldemParams,
                           playing: HoldemParams) -> HoldemParams:
        """A model plays the game definition it was trained on (its chips are in the
        features); with or without pv, it plays on the features it has."""
        if trained.gamedef != playing.gamedef:
            raise GameError(f"{path} was trained on {trained.gamedef.name}, in other units or "
                            f"rules than {playing.gamedef.name}: its features would not mean "
                            f"what it learned")
        return playing

    def model_params(self, params: HoldemParams, model_features: Sequence[str]
                     ) -> HoldemParams:
        """A model trained without pv plays without computing it (pv2: three players)."""
        return dataclasses.replace(params, pv=bool({"pv", "pv2"} & set(model_features)))

    def returns_batch(self, states: Sequence[HandState]) -> NDArray[np.float64]:
        return returns_many(states)

    def bot(self, name: str, params: HoldemParams, rng: np.random.Generator) -> Any:
        """``random`` (the thesis's) or ``rule``: they act on batches of states already."""
        return make_bot(name, params.gamedef, rng)

    def generate(self, out: Path, players: Sequence[str], count: int, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None) -> str:
        """The players' hands as an ACPC dealer log (or, heads-up limit, a Glassfrog
        summary; no-limit, PHH hand histories: ``format``, else told by the file name);
        the game is ``gamedef``, else a model player's, else heads-up limit in the
        format's usual units."""
        game = self.game.log.prepare("generate", options).get("gamedef")
        fmt = options.get("format")
        try:
            written = generate(out, list(players), count, seed, fmt, game, progress)
        except ModelError as exc:
            raise GameError(str(exc)) from None
        return f"{written:,} {self.rules.unit} written to {out}"

    ablation_opponents = ("rule",)

    def ablation_players(self, params: HoldemParams) -> tuple[str, ...]:
        return (self.ablation_opponents[0],) * (params.gamedef.num_players - 1)

    def return_of_score(self, params: HoldemParams) -> tuple[float, float]:
        return float(params.gamedef.big_blind), 0.0  # bb/hand into the rows' chips

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
        hero, *others = players
        if not others:
            raise GameError("hold'em scores a player against others: give at least two")
        try:
            game = params.gamedef if params is not None else \
                self.game.log.prepare("generate", options).get("gamedef") or \
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
        (``duplicate``: each deal played once per seating). At a table of more than two
        seats, two players given mean the second takes every other seat."""
        group = single_group(self.game, groups)
        if len(group) not in self.rules.player_counts:
            raise GameError(f"hold'em seats {self.rules.player_counts[0]} to "
                            f"{self.rules.player_counts[-1]} players, not {len(group)} "
                            f"({','.join(group)})")
        try:
            game = self.game.log.prepare("generate", options).get("gamedef")
            if game is None:
                game = models_game(group, gamedef.HEADS_UP_LIMIT)
                if len(group) > 2 and game.num_players == 2:
                    raise GameError(f"{len(group)} players: say which game with --gamedef "
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
