"""President's faces beside its rules core: its logs into store rows (`PresidentLog`), and
its players, logs written and placements (`PresidentPlay`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games.base import (
    Game,
    GameError,
    LearnFace,
    Report,
    Scores,
    SourceContext,
    SourcePlan,
    single_group,
)
from batchrl.games.president.bots import BOT_NAMES, make_bot
from batchrl.games.president.logs import LoggedGame
from batchrl.games.president.rules import (
    ACTION_NAMES,
    N_ACTIONS,
    PLAYER_COUNTS,
    Rules,
    State,
    from_deal,
    game_orders,
    legal_actions,
    step,
)
from batchrl.store import RowsBatch, StoreSchema

if TYPE_CHECKING:
    from batchrl.blocks import Tasks
from batchrl.blocks import Task, Tasks, spans
from batchrl.games.base import LogFace, PlayFace
from batchrl.games.play import OneAtATime, Trajectory, make_player, play, trajectory_rows
from batchrl.games.president import evaluate as placements
from batchrl.games.president.game import PresidentParams
from batchrl.games.president.logs import PresidentRecord
from batchrl.policy import ModelError
from batchrl.records import BadLine, Skipped


class PresidentLog(LogFace):
    """JSON-lines games into rows: the seed's time penalty, or the placement reward."""

    def reward_unit(self, params: Any) -> str:
        if params.reward == "placement":
            return ("n - 1 - p on the play that empties the hand at placement p (0 the "
                    "president), 0 otherwise")
        return ("the seed's time penalty: -1 for each decision that does not empty the hand, "
                "3 - p for the one that empties it at placement p (0 the president); the "
                "match's exchange earns nothing")


    def schema(self, params: Any) -> StoreSchema:
        return StoreSchema(self.rules.name, self.rules.feature_names(params), ACTION_NAMES,
                           audit_columns=("name",),
                           game_params={"players": params.players,
                                        "pass_locks": params.pass_locks,
                                        "match": params.match,
                                        "reward": params.reward},
                           state_dtype="int8", next_state="following", legal=True)

    def open_source(self, records: Iterator[Any], context: SourceContext) -> SourcePlan:
        # the placement reward unless the seed's is asked for (--time-reward): FQI learns
        # the game's goal from it (docs/games/president.md)
        reward = "placement" if context.options.get("placement", True) else "time"
        pending: list[Any] = []
        first = None
        for record in records:  # the first game says how many play
            pending.append(record)
            if isinstance(record, PresidentRecord):
                first = record
                break
            if not isinstance(record, BadLine | Skipped):
                break
        if first is None:
            params = self.rules.params(reward=reward)
        else:
            params = self.rules.params(players=first.game.rules.players,
                                 pass_locks=first.game.rules.pass_locks, reward=reward,
                                 match=first.game.rules.match)
        rules = params.rules

        def checked(items: Iterator[Any]) -> Iterator[Any]:
            for r in items:
                if isinstance(r, PresidentRecord) and _kind(r.game.rules) != _kind(rules):
                    yield BadLine(r.source, r.line,
                                  f"a game of {_kind(r.game.rules)} among games of "
                                  f"{_kind(rules)}: a store holds one kind; ingest it into "
                                  "another store", "")
                else:
                    yield r

        def replayed(game: LoggedGame) -> Trajectory:
            if rules.reward == game.rules.reward:
                return Trajectory(game.states, game.moves)
            states = [from_deal(game.states[0].dealt, rules, game.states[0].upcoming)]
            for a in game.moves:
                states.append(step(states[-1], a))
            return Trajectory(tuple(states), game.moves)

        def rows(chunk: list[PresidentRecord]) -> RowsBatch:
            made = trajectory_rows(self.game, params, [replayed(r.game) for r in chunk],
                                   context.prefix, [r.game.index for r in chunk],
                                   [r.line for r in chunk],
                                   seat_audit={"name": [r.game.players for r in chunk]})
            return RowsBatch(made, len(chunk))

        return SourcePlan(self.schema(params), checked(chain(pending, records)), rows,
                          variant=f"{rules.players} players", unit=self.rules.unit)


    def params_from_store(self, stored_game: str, game_params: Mapping[str, Any]) -> Any:
        return self.rules.params(**{k: game_params[k] for k in ("players", "pass_locks", "reward",
                                                          "match") if k in game_params})


class PresidentLearn(LearnFace):
    """The game's recommended settings, with ``two_players``' over them for a store of
    two-player single games with the placement reward (where they were measured: FQI
    learned better there with fewer iterations, each iteration's max over the moves'
    forests adding its bias; docs/games/president.md). ``two_players`` holds only
    learners the game already recommends settings for (one without would no longer take
    another learner's, as ``lcb`` takes FQI's)."""

    def __init__(self, rules: Any, recommended: Mapping[str, Any],
                 two_players: Mapping[str, Mapping[str, Any]], learner: str = "fqi") -> None:
        super().__init__(rules, recommended, learner)
        if stray := sorted(set(two_players) - set(recommended)):
            raise GameError(f"two-player settings for {', '.join(stray)}, which the game "
                            "recommends nothing for")
        self.two_players = {k: dict(v) for k, v in two_players.items()}

    def settings_for(self, learner: str, params: Any = None) -> dict[str, Any]:
        out = super().settings_for(learner, params)
        if params is not None and params.won_or_lost:
            out.update(self.two_players.get(learner, {}))
        return out


class PresidentPlay(PlayFace):
    """Random and rule players, logs written, placements with every player in every seat."""

    bots = BOT_NAMES
    default_players = ("random", "random", "random", "random")
    default_count = 10_000
    log_formats = ("jsonl",)

    def legal_mask(self, state: State, params: Any) -> NDArray[np.bool_]:
        mask = np.zeros(N_ACTIONS, dtype=bool)
        mask[list(legal_actions(state))] = True
        return mask

    def check_model_params(self, path: str | Path, trained: Any, playing: Any) -> Any:
        """A model plays the number of players it learned with, under the pass rule it
        learned, and matches if it learned them; its reward does not change what its
        features mean."""
        if trained.players != playing.players:
            raise GameError(f"{path} learned {trained.players}-player games, not "
                            f"{playing.players}: its features would not mean what it learned")
        if (trained.match > 1) != (playing.match > 1):
            learned = "matches" if trained.match > 1 else "single games"
            raise GameError(f"{path} learned {learned}: play it "
                            f"{'with' if trained.match > 1 else 'without'} --match")
        if trained.pass_locks != playing.pass_locks:
            rule = "a pass locks" if trained.pass_locks else "a player who passed may play"
            raise GameError(f"{path} learned games where {rule} for the rest of the round: "
                            f"play it {'with' if trained.pass_locks else 'without'} "
                            f"--pass-locks (its passes feature counts other passes)")
        return playing

    def bot(self, name: str, params: Any, rng: np.random.Generator) -> Any:
        try:
            bot = make_bot(name, rng)
        except ValueError as exc:
            raise GameError(str(exc)) from None
        return OneAtATime(name, bot.act)

    def _params_for(self, players: int, options: Mapping[str, Any]) -> PresidentParams:
        if players not in PLAYER_COUNTS:
            raise GameError(f"president is played by {', '.join(map(str, PLAYER_COUNTS))} "
                            f"players (the 40 cards dealt evenly), not {players}")
        match = options.get("match") or 1
        try:
            params: PresidentParams = self.rules.params(
                players=players, pass_locks=bool(options.get("pass_locks")), match=match)
        except GameError as exc:
            raise GameError(f"--match {match}: {exc}") from None
        return params

    def generate(self, out: Path, players: Sequence[str], count: int, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None) -> str:
        """``count`` games of ``players`` (seat by seat) as JSON lines."""
        params = self._params_for(len(players), options)
        fmt = options.get("format") or "auto"
        if fmt not in ("auto", *self.log_formats):
            raise GameError(f"president writes {', '.join(self.log_formats)}, not {fmt}")
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.tmp")
        results = np.zeros(len(players))
        with tmp.open("w") as f:
            for game in iter_games(self.game, params, players, count, seed, progress):
                f.write(game.to_json() + "\n")
                for order in game_orders(game.states[-1]):
                    results[list(order)] += np.arange(len(players)) / params.match
        tmp.replace(out)
        mean = ", ".join(f"{p} {r / count + 1:.2f}" for p, r in zip(players, results,
                                                                    strict=True))
        return f"{count:,} games written to {out} (mean placement by seat: {mean})"

    def evaluate(self, groups: Sequence[Sequence[str]], count: int | None, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None,
                 tasks: Tasks | None = None) -> Report:
        """The group's players take every seat in turn on the same deals."""
        names = single_group(self.game, groups)
        params = self._params_for(len(names), options)
        placed = self._placements(names, params, count or self.default_count, seed, progress,
                                  tasks)
        return placements.placement_report(names, placed, seed, params.pass_locks, params.match)

    ablation_opponents = ("rule", "rule", "rule")

    def ablation_players(self, params: PresidentParams) -> tuple[str, ...]:
        return (self.ablation_opponents[0],) * (params.players - 1)

    def score(self, players: Sequence[str], count: int, seed: int,
              options: Mapping[str, Any],
              progress: Callable[[int], None] | None = None,
              params: PresidentParams | None = None) -> Scores:
        """Whether the first player took first place, game by game, every player taking
        every seat in turn on each deal (``params``: a store's players, matches and pass
        locks; else ``options``'s)."""
        if params is None:
            params = self._params_for(len(players), options)
        elif params.players != len(players):
            raise GameError(f"president with {params.players} players: give "
                            f"{params.players}, not {len(players)}")
        placed = self._placements(players, params, count, seed, progress)
        return Scores((placed[:, 0] == 0).astype(np.float64), "first_place",
                      "share of games won", per_unit=params.players * params.match)

    def return_of_score(self, params: PresidentParams) -> tuple[float, float] | None:
        """Two players, one game a match, the placement reward: a game's reward is 1 for
        first place, 0 for last, the score's own indicator; otherwise another quantity."""
        if params.won_or_lost:
            return 1.0, 0.0
        return None

    def _placements(self, names: Sequence[str], params: PresidentParams, count: int,
                    seed: int, progress: Callable[[int], None] | None = None,
                    tasks: Tasks | None = None) -> NDArray[np.int64]:
        """Each player's place (game, player) in ``count`` games rounded up to whole
        rotations of the seats, played in blocks by ``tasks`` [here]."""
        n = params.players
        games = -(-count // n) * n  # whole rotations
        # games played in lockstep, each chunk dealt from its own child; a block: the
        # fewest whole chunks of BLOCK games
        chunk = placements.CHUNK * n
        size = -(-placements.BLOCK // chunk) * chunk
        try:
            placed = Tasks.of(tasks, progress).run(
                [Task(placements.play_block, self.game, params, names, seed, b, lo, hi, chunk,
                      size=hi - lo) for b, lo, hi in spans(games, size)])
        except ModelError as exc:
            raise GameError(str(exc)) from None
        out: NDArray[np.int64] = np.concatenate(placed)
        return out


def iter_games(game: Game, params: PresidentParams, players: Sequence[str], count: int,
               seed: int, progress: Callable[[int], None] | None = None
               ) -> Iterator[LoggedGame]:
    """``count`` games of the named players (seat by seat: random, rule, model:PATH),
    dealt and played from ``seed``, many at a time."""
    streams = np.random.SeedSequence(seed).spawn(len(players) + 1)
    chosen = [make_player(game, p, params, np.random.default_rng(s))
              for p, s in zip(players, streams[1:], strict=False)]
    deals = np.random.default_rng(streams[0])
    index = 0
    for lo in range(0, count, 2048):
        for g in play(game, params, chosen, min(2048, count - lo), deals.spawn(1)[0],
                      progress=progress):
            yield LoggedGame(tuple(players), g.states, g.actions, seed, index)
            index += 1


def _kind(rules: Rules) -> str:
    return (f"{rules.players} players" + (", passes final" if rules.pass_locks else "")
            + (f", matches of {rules.match}" if rules.match > 1 else ""))
