"""President through the `batchrl.games.Game` protocol: 2, 4, 5 or 8 seats, a game an
episode, the rules of ``rules``, the features of ``features``, the players of ``bots``.

A state of the protocol is a `rules.State` (it carries its rules: the players, whether a
pass is final, the reward). ``rewards`` are the seed's time penalty (or the placement
reward) of the decision just made, to the seat that made it; ``returns`` are each seat's
sum of them.

>>> game = GAME
>>> params = game.params(players=2)
>>> s = game.new_game(np.random.default_rng(0), params)
>>> while not game.is_terminal(s):
...     s = game.step(s, game.legal_actions(s)[-1])
>>> s.order, game.returns(s)
((1, 0), (-15.0, -11.0))
"""

from __future__ import annotations

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
    Report,
    Scores,
    SourceContext,
    SourcePlan,
    single_group,
)
from batchrl.games.president import features
from batchrl.games.president.bots import BOT_NAMES, make_bot
from batchrl.games.president.logs import LoggedGame
from batchrl.games.president.rules import (
    ACTION_NAMES,
    N_ACTIONS,
    PLAYER_COUNTS,
    Rules,
    State,
    deal,
    from_deal,
    game_orders,
    is_terminal,
    legal_actions,
    step,
)
from batchrl.store import RowsBatch, StoreSchema

if TYPE_CHECKING:
    from batchrl.blocks import Tasks


@dataclass(frozen=True, slots=True)
class PresidentParams:
    """``players``: 2, 4, 5 or 8; ``pass_locks``: a pass is final for the round (the
    common rule, the default, lets a player who passed play again while the round goes
    on); ``reward``: ``"time"`` (the seed's) or ``"placement"``; ``match``: games per
    match, with the servant's and the president's exchange between them (1: single
    games)."""

    players: int = 4
    pass_locks: bool = False
    reward: str = "time"
    match: int = 1

    def __post_init__(self) -> None:
        self.rules  # noqa: B018  (raises on a bad value)

    @property
    def rules(self) -> Rules:
        return Rules(self.players, self.pass_locks, self.reward, self.match)


@dataclass(frozen=True, slots=True)
class PresidentRecord:
    """A game as a log line gives it (what ``parsers/president.py`` reads)."""

    source: str
    line: int
    game: LoggedGame


class President(Game):
    name = "president"
    title = "President (2, 4, 5 or 8 players, the seed's Spanish-deck rules)"
    player_counts = PLAYER_COUNTS
    zero_sum = False
    unit = "games"
    Params = PresidentParams
    # N=20: a seat decides about 16 times in a two-player game, and N iterations carry a
    # reward N decisions back (N=10 left 2-player Q-values still growing)
    recommended: ClassVar[Mapping[str, Any]] = {
        "fqi": {"trees": 50, "nmin": 20, "iters": 20, "per_action": True, "fast": True}}
    options = (
        Option("placement", {"ingest": "--placement"},
               "reward n - 1 - p for the play that empties the hand at placement p (0 "
               "first) and nothing else, instead of the seed's time penalty (-1 a "
               "decision, 3 - p for that play).", type=bool),
        Option("pass_locks", {"generate": "--pass-locks", "evaluate": "--pass-locks"},
               "a pass is final for the round (by default a player who passed may play "
               "again while the round goes on).", type=bool),
        Option("match", {"generate": "--match", "evaluate": "--match"},
               "play matches of K games: before each game after the first the servant "
               "gives the president its best card and the president returns one of its "
               "choice (a decision of the president's); the episode is the match. "
               "[default: 1, single games]", type=int, metavar="K"),
    )
    bots = BOT_NAMES
    default_players = ("random", "random", "random", "random")
    default_count = 10_000
    log_formats = ("jsonl",)
    datasets = (Dataset("random", ("random",) * 4, 10_000, 1, 300, {"placement": True}),
                Dataset("mixed", ("rule", "random", "rule", "random"), 10_000, 2, 300,
                        {"placement": True}),
                Dataset("expert", ("rule",) * 4, 10_000, 3, 300, {"placement": True}))
    reference = "rule"
    bench_games = (4_000, 200)
    examples: ClassVar[Mapping[str, str]] = {
        "generate": "2, 4, 5 or 8 seats (random, rule, model:PATH), JSON lines; --match K\n"
                    "plays matches of K games with the cards exchanged between games:\n"
                    "  batchrl generate --game president --players rule,random,random,random \\\n"
                    "      --games 20000 -o president.jsonl",
        "evaluate": "the players take every seat in turn on the same deals: each one's\n"
                    "first-place rate, mean placement and top-half rate, 95% intervals:\n"
                    "  batchrl evaluate --game president \\\n"
                    "      --players model:M.npz,random,random,random --games 10000",
    }

    # ---- facts -------------------------------------------------------------------------

    def num_players(self, params: Any) -> int:
        return int(params.players)

    def action_names(self, params: Any) -> tuple[str, ...]:
        return ACTION_NAMES

    def feature_names(self, params: Any) -> tuple[str, ...]:
        return features.feature_names(params.players, params.match)

    def reward_unit(self, params: Any) -> str:
        if params.reward == "placement":
            return ("n - 1 - p on the play that empties the hand at placement p (0 the "
                    "president), 0 otherwise")
        return ("the seed's time penalty: -1 for each decision that does not empty the hand, "
                "3 - p for the one that empties it at placement p (0 the president); the "
                "match's exchange earns nothing")

    # ---- rules -------------------------------------------------------------------------

    def new_game(self, rng: np.random.Generator, params: Any) -> State:
        return deal(rng, params.rules)

    def current_player(self, state: State) -> int:
        return state.turn

    def legal_actions(self, state: State) -> tuple[int, ...]:
        return legal_actions(state)

    def step(self, state: State, action: int) -> State:
        return step(state, action)

    def is_terminal(self, state: State) -> bool:
        return is_terminal(state)

    def returns(self, state: State) -> tuple[float, ...]:
        return state.scores

    def rewards(self, before: State, after: State) -> tuple[float, ...] | None:
        return tuple(a - b for a, b in zip(after.scores, before.scores, strict=True))

    def encode(self, state: State, player: int, params: Any) -> NDArray[np.float32]:
        return features.encode(state, player)

    def sample_worlds(self, state: State, seat: int, n: int,
                      rng: np.random.Generator) -> list[State]:
        """The other hands drawn uniformly from the cards ``seat`` has not seen (a pass
        says nothing: a seat may pass holding a set that beats the table), each hand as
        many cards as it holds; before the game's first play the seat to act holds the
        2 of golds. A match's deals to come are shuffled anew."""
        import dataclasses

        from batchrl.games.president.rules import CARDS, N_RANKS, N_SUITS, TWO_OF_GOLDS

        others = [p for p in range(len(state.hands)) if p != seat]
        unseen = np.repeat(np.arange(N_RANKS), [
            N_SUITS - state.played[r] - state.hands[seat][r] for r in range(N_RANKS)])
        sizes = [sum(state.hands[p]) for p in others]
        fixed = [0] * len(others)  # the 2 of golds, where its holder is known
        if state.first and not state.exchange and state.turn != seat and state.turn >= 0:
            at = others.index(state.turn)
            fixed[at] = 1
            unseen = np.delete(unseen, int(np.flatnonzero(unseen == TWO_OF_GOLDS // N_SUITS)[0]))
        worlds = []
        for _ in range(n):
            order = rng.permutation(unseen)
            hands = list(state.hands)
            start = 0
            for i, p in enumerate(others):
                take = sizes[i] - fixed[i]
                counts = np.bincount(order[start:start + take], minlength=N_RANKS)
                counts[TWO_OF_GOLDS // N_SUITS] += fixed[i]
                hands[p] = tuple(int(c) for c in counts)
                start += take
            upcoming = tuple(
                tuple(tuple(int(c) for c in deck[k * (CARDS // len(hands)):
                                                 (k + 1) * (CARDS // len(hands))])
                      for k in range(len(hands)))
                for deck in (rng.permutation(CARDS) for _ in state.upcoming))
            dealt = state.dealt
            if state.exchange:  # the exchange deals the game's hands again from ``dealt``
                dealt = _dealt_as(state.dealt, hands, seat, rng)
            worlds.append(dataclasses.replace(state, hands=tuple(hands), upcoming=upcoming,
                                              dealt=dealt))
        return worlds

    def legal_mask(self, state: State, params: Any) -> NDArray[np.bool_]:
        mask = np.zeros(N_ACTIONS, dtype=bool)
        mask[list(legal_actions(state))] = True
        return mask

    # ---- store side --------------------------------------------------------------------

    def schema(self, params: Any) -> StoreSchema:
        return StoreSchema(self.name, self.feature_names(params), ACTION_NAMES,
                           audit_columns=("name",),
                           game_params={"players": params.players,
                                        "pass_locks": params.pass_locks,
                                        "match": params.match,
                                        "reward": params.reward},
                           state_dtype="int8", next_state="following", legal=True)

    def open_source(self, records: Iterator[Any], context: SourceContext) -> SourcePlan:
        from batchrl.games.play import Trajectory, trajectory_rows
        from batchrl.records import BadLine, Skipped

        reward = "placement" if context.options.get("placement") else "time"
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
            params = self.params(reward=reward)
        else:
            params = self.params(players=first.game.rules.players,
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
            made = trajectory_rows(self, params, [replayed(r.game) for r in chunk],
                                   context.prefix, [r.game.index for r in chunk],
                                   [r.line for r in chunk],
                                   seat_audit={"name": [r.game.players for r in chunk]})
            return RowsBatch(made, len(chunk))

        return SourcePlan(self.schema(params), checked(_chain(pending, records)), rows,
                          variant=f"{rules.players} players", unit=self.unit)

    # ---- play side ---------------------------------------------------------------------

    def params_from_store(self, stored_game: str, game_params: Mapping[str, Any]) -> Any:
        return self.params(**{k: game_params[k] for k in ("players", "pass_locks", "reward",
                                                          "match") if k in game_params})

    def check_model_params(self, path: str | Path, trained: Any, playing: Any) -> None:
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

    def bot(self, name: str, params: Any, rng: np.random.Generator) -> Any:
        from batchrl.games.play import OneAtATime

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
            params: PresidentParams = self.params(
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
            for game in iter_games(self, params, players, count, seed, progress):
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
        from batchrl.games.president.evaluate import placement_report

        names = single_group(self, groups)
        params = self._params_for(len(names), options)
        placed = self._placements(names, params, count or self.default_count, seed, progress,
                                  tasks)
        return placement_report(names, placed, seed, params.pass_locks, params.match)

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

    def _placements(self, names: Sequence[str], params: PresidentParams, count: int,
                    seed: int, progress: Callable[[int], None] | None = None,
                    tasks: Tasks | None = None) -> NDArray[np.int64]:
        """Each player's place (game, player) in ``count`` games rounded up to whole
        rotations of the seats, played in blocks by ``tasks`` [here]."""
        from batchrl.blocks import Task, Tasks, spans
        from batchrl.games.president.evaluate import BLOCK, CHUNK, play_block
        from batchrl.policy import ModelError

        n = params.players
        games = -(-count // n) * n  # whole rotations
        chunk = CHUNK * n  # games played in lockstep, each chunk dealt from its own child
        size = -(-BLOCK // chunk) * chunk  # a block: the fewest whole chunks of BLOCK games
        try:
            placed = Tasks.of(tasks, progress).run(
                [Task(play_block, self, params, names, seed, b, lo, hi, chunk, size=hi - lo)
                 for b, lo, hi in spans(games, size)])
        except ModelError as exc:
            raise GameError(str(exc)) from None
        out: NDArray[np.int64] = np.concatenate(placed)
        return out


def iter_games(game: President, params: PresidentParams, players: Sequence[str], count: int,
               seed: int, progress: Callable[[int], None] | None = None
               ) -> Iterator[LoggedGame]:
    """``count`` games of the named players (seat by seat: random, rule, model:PATH),
    dealt and played from ``seed``, many at a time."""
    from batchrl.games.play import make_player, play

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


def play_games(players: Sequence[str], count: int, seed: int, pass_locks: bool = False,
               match: int = 1) -> list[LoggedGame]:
    """``count`` games (matches) of ``players`` (a list, for tests and notebooks)."""
    params = GAME.params(players=len(players), pass_locks=pass_locks, match=match)
    return list(iter_games(GAME, params, players, count, seed))


def _kind(rules: Rules) -> str:
    return (f"{rules.players} players" + (", passes final" if rules.pass_locks else "")
            + (f", matches of {rules.match}" if rules.match > 1 else ""))


def _chain(first: list[Any], rest: Iterator[Any]) -> Iterator[Any]:
    yield from first
    yield from rest


GAME = President()


def _dealt_as(dealt: tuple[tuple[int, ...], ...], hands: Sequence[tuple[int, ...]], seat: int,
              rng: np.random.Generator) -> tuple[tuple[int, ...], ...]:
    """``dealt`` with every seat but ``seat`` holding card ids of the ranks ``hands`` count
    for it, drawn among the ids ``seat`` was not dealt."""
    from batchrl.games.president.rules import N_RANKS, N_SUITS

    mine = set(dealt[seat])
    free = {r: [int(c) for c in rng.permutation([r * N_SUITS + k for k in range(N_SUITS)])
                if c not in mine] for r in range(N_RANKS)}
    out = []
    for p, counts in enumerate(hands):
        if p == seat:
            out.append(dealt[seat])
            continue
        out.append(tuple(sorted(free[r].pop() for r in range(N_RANKS)
                                for _ in range(counts[r]))))
    return tuple(out)
