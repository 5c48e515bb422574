"""Playing any game through the `Game` protocol: named players, lockstep play, rows and
an evaluation with confidence intervals.

What a new game gets for free from its rules alone: ``random`` and ``model:PATH``
players (`make_player`), many games played in lockstep so a model decides for every
table at once (`play`), the store rows of played or replayed games
(`trajectory_rows`), and `evaluate_seats`: the first player's mean return over games
in which the players change seats deal by deal. The four card games of the seeds have
their own faster machinery; a game that needs none uses these.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from batchrl.blocks import Task, Tasks, after, block_rngs, load_once, spans
from batchrl.evaluation import Estimate, mean_ci
from batchrl.games.base import Game, GameError, Interval, Scores
from batchrl.games.search import inner, parse, search_player
from batchrl.store import Rows


class Player(Protocol):
    """A player: one action per game, for a batch of games where it is to act."""

    name: str

    def act(self, states: Sequence[Any], seats: Sequence[int]) -> NDArray[np.int64]: ...


class RandomPlayer:
    """A uniformly random legal action."""

    name = "random"

    def __init__(self, game: Game, rng: np.random.Generator) -> None:
        self.game, self.rng = game, rng

    def act(self, states: Sequence[Any], seats: Sequence[int]) -> NDArray[np.int64]:
        out = np.empty(len(states), dtype=np.int64)
        for i, s in enumerate(states):
            legal = self.game.rules.legal_actions(s)
            out[i] = legal[int(self.rng.integers(len(legal)))]
        return out


class ModelPlayer:
    """A model from ``batchrl fqi`` acting greedily among the legal actions, on the states
    encoded as the game's store encodes them."""

    def __init__(self, game: Game, path: str | Path, params: Any) -> None:
        self.game, self.params = game, params
        self.model = load_once(game.load_model, path, params)
        self.name = self.model.name

    def act(self, states: Sequence[Any], seats: Sequence[int]) -> NDArray[np.int64]:
        x, legal = self.game.play.encode_batch(states, seats, self.params)
        return self.model.act_batch(x, legal)

    def value(self, states: Sequence[Any], seats: Sequence[int]) -> NDArray[np.float64]:
        """The model's value of each state to the seat to act: the Q of the move it plays
        (what its rows from there on earn, in the store's rewards)."""
        x, legal = self.game.play.encode_batch(states, seats, self.params)
        return self.model.played_values(x, legal)


class OneAtATime:
    """A bot that decides one state at a time (``act(state) -> action``) as a `Player`."""

    def __init__(self, name: str, act: Callable[[Any], int]) -> None:
        self.name, self._act = name, act

    def act(self, states: Sequence[Any], seats: Sequence[int]) -> NDArray[np.int64]:
        return np.fromiter((self._act(s) for s in states), np.int64, count=len(states))


def is_model(spec: str) -> bool:
    """``model:PATH``, a model file's path (an old ``.joblib`` one too: loading it says
    how to retrain it), or ``python:MODULE:CALLABLE`` (another library's policy,
    `batchrl.foreign`): a player that `batchrl.policy.load_policy` loads. A search
    player (``search:INNER``) is none itself: its INNER may be."""
    if parse(spec) is not None:
        return False
    return spec.startswith(("model:", "python:")) or spec.endswith((".npz", ".joblib"))


def player_file(spec: str) -> Path | None:
    """The file a player named ``spec`` is read from: a model player's file, or the ``.py``
    file of a ``python:FILE.py:CALLABLE`` (a search player's: its INNER's); None for a bot
    or a module named by import."""
    spec = inner(spec)
    if spec.startswith("python:"):
        module, sep, _ = spec.removeprefix("python:").rpartition(":")
        return Path(module) if sep and module.endswith(".py") else None
    return Path(spec.removeprefix("model:")) if is_model(spec) else None


def absolute_player(spec: str) -> str:
    """``spec`` with its file (`player_file`) as an absolute path: a cluster's workers read
    it from another directory than ours (a search player's INNER so, its options kept)."""
    if (parsed := parse(spec)) is not None:
        head = spec[: len(spec) - len(parsed[1]) - 1]  # before the colon
        pieces = [f"opponent={absolute_player(p[len('opponent='):])}"
                  if p.startswith("opponent=") else p for p in head.split("+")]
        return "+".join(pieces) + ":" + absolute_player(parsed[1])
    path = player_file(spec)
    if path is None:
        return spec
    if spec.startswith("python:"):
        return f"python:{path.resolve()}:{spec.rpartition(':')[2]}"
    prefix = "model:" if spec.startswith("model:") else ""
    return f"{prefix}{path.resolve()}"


def make_player(game: Game, spec: str, params: Any, rng: np.random.Generator,
                bots: Callable[[str, np.random.Generator], Player] | None = None) -> Player:
    """A player by name: ``random``, ``model:PATH`` (or a ``.npz`` path), one of the
    game's own bots (``bots(name, rng)``, else ``game.play.bot``), or ``search:NAME``, any of
    them searched over at each decision (`batchrl.games.search`)."""
    searching = search_player(game, params, spec,
                              lambda name: make_player(game, name, params, rng, bots), rng)
    if searching is not None:
        return searching
    if is_model(spec):
        return ModelPlayer(game, spec.removeprefix("model:"), params)
    if bots is not None and spec in game.play.bots:
        return bots(spec, rng)
    if spec in game.play.bots and game.can("bot"):
        made: Player = game.play.bot(spec, params, rng)
        return made
    if spec == "random":
        return RandomPlayer(game, rng)
    raise GameError(f"unknown {game.name} player {spec!r}: want one of "
                    f"{', '.join(game.play.bots)}, model:PATH (a model from batchrl learn or "
                    f"fqi) or python:MODULE:CALLABLE")


@dataclass(frozen=True)
class Trajectory:
    """One game as played: every state from the deal to the end, and the actions between
    (one fewer)."""

    states: tuple[Any, ...]
    actions: tuple[int, ...]


def play(game: Game, params: Any, players: Sequence[Player], count: int,
         rng: np.random.Generator, seats: Callable[[int], Sequence[int]] | None = None,
         progress: Callable[[int], None] | None = None, batch: int = 4096, repeat: int = 1
         ) -> list[Trajectory]:
    """``count`` games, each dealt from its own generator spawned from ``rng``, played in
    lockstep: at each step every player is asked once for all the games where it is to
    act. ``seats(i)`` gives game i's seating (``seats(i)[s]``: the player in seat s);
    default: player s in seat s. ``repeat`` k > 1: games i·k to i·k + k − 1 are dealt
    the same cards (with ``seats``, the players change seats on one deal)."""
    n = game.rules.num_players(params)
    if len(players) != n:
        raise GameError(f"{game.name} is played by {n} players, not {len(players)}")
    out: list[Trajectory] = []
    deals = rng.spawn(-(-count // repeat))

    def dealer(i: int) -> np.random.Generator:
        return deals[i] if repeat == 1 else copy.deepcopy(deals[i // repeat])

    for lo in range(0, count, batch):
        ids = range(lo, min(count, lo + batch))
        states = [[game.rules.new_game(dealer(i), params)] for i in ids]
        actions: list[list[int]] = [[] for _ in ids]
        seating = [list(seats(i)) if seats else list(range(n)) for i in ids]
        live = [j for j in range(len(ids)) if not game.rules.is_terminal(states[j][-1])]
        while live:
            for who, player in enumerate(players):
                mine = [j for j in live if not game.rules.is_terminal(states[j][-1])
                        and seating[j][game.rules.current_player(states[j][-1])] == who]
                if not mine:
                    continue
                chosen = player.act([states[j][-1] for j in mine],
                                    [game.rules.current_player(states[j][-1]) for j in mine])
                for j, a in zip(mine, chosen.tolist(), strict=True):
                    states[j].append(game.rules.step(states[j][-1], int(a)))
                    actions[j].append(int(a))
            live = [j for j in live if not game.rules.is_terminal(states[j][-1])]
        out += [Trajectory(tuple(s), tuple(a)) for s, a in zip(states, actions, strict=True)]
        if progress is not None:
            progress(len(ids))
    return out


def trajectory_rows(game: Game, params: Any, games: Sequence[Trajectory], prefix: str,
                    keys: Sequence[Any], lines: Sequence[int],
                    audit: dict[str, Sequence[str]] | None = None,
                    seat_audit: dict[str, Sequence[Sequence[str]]] | None = None) -> Rows:
    """The store rows of ``games``: one per decision, from the acting seat's view, in the
    order played.

    A row's reward is what its seat earned (``game.rules.rewards``) from its decision up to its
    next one; its next state is that next decision's (zeros, with no legal action, after
    its last: the row is terminal). Game i's episode is ``prefix`` + ``keys[i]`` and its
    line ``lines[i]``; ``audit`` holds one string per game for each audit column,
    ``seat_audit`` one per game and seat (a row takes its seat's: the player's name).
    """
    audit = audit or {}
    seat_audit = seat_audit or {}
    episode: list[str] = []
    step: list[int] = []
    player: list[int] = []
    action: list[int] = []
    reward: list[float] = []
    line: list[int] = []
    state: list[NDArray[np.float32]] = []
    before: list[Any] = []  # each row's state, for the next legal moves
    next_row: list[int] = []
    columns: dict[str, list[str]] = {name: [] for name in (*audit, *seat_audit)}
    for i, g in enumerate(games):
        seats = game.rules.num_players(params)
        mine: list[list[int]] = [[] for _ in range(seats)]  # each seat's rows, in order
        for t, (s, a) in enumerate(zip(g.states, g.actions, strict=False)):
            p = game.rules.current_player(s)
            row = len(action)
            if mine[p]:
                next_row[mine[p][-1]] = row
            mine[p].append(row)
            episode.append(f"{prefix}{keys[i]}")
            step.append(len(mine[p]) - 1)
            player.append(p)
            state.append(game.rules.encode(s, p, params))
            before.append(s)
            action.append(a)
            reward.append(0.0)
            next_row.append(-1)
            line.append(lines[i])
            for name, values in audit.items():
                columns[name].append(values[i])
            for name, by_seat in seat_audit.items():
                columns[name].append(by_seat[i][p])
            earned = game.rules.rewards(s, g.states[t + 1])
            if earned is not None:  # to each seat's latest decision
                for q, rows in enumerate(mine):
                    if rows:
                        reward[rows[-1]] += float(earned[q])
    n = len(action)
    x = np.asarray(state, dtype=np.float32).reshape(n, len(game.rules.feature_names(params)))
    nxt = np.asarray(next_row, dtype=np.int64)
    terminal = nxt < 0
    next_state = np.zeros_like(x)
    next_state[~terminal] = x[nxt[~terminal]]
    legal = np.zeros((n, len(game.rules.action_names(params))), dtype=bool)
    for r, s in enumerate(before):  # each row's own legal actions, the first's included
        legal[r, list(game.rules.legal_actions(s))] = True
    next_legal = np.zeros_like(legal)
    next_legal[~terminal] = legal[nxt[~terminal]]
    return Rows(episode=episode, step=np.asarray(step, dtype=np.int32),
                player=np.asarray(player, dtype=np.int8), state=x,
                action=np.asarray(action, dtype=np.int8),
                reward=np.asarray(reward, dtype=np.float64), next_state=next_state,
                next_legal=next_legal, terminal=terminal, truncated=np.zeros(n, dtype=bool),
                line=np.asarray(line, dtype=np.int64), audit=columns, legal=legal)


@dataclass(frozen=True)
class SeatReport:
    """The first player's results against the others: its mean return per game with a 95%
    confidence interval, over games in which the players take every seat in turn."""

    game: str
    players: tuple[str, ...]
    games: int
    seed: int
    mean: Estimate
    by_seat: dict[int, Estimate] = field(default_factory=dict)

    def table(self) -> str:
        e = self.mean
        lines = [f"game       {self.game}",
                 f"players    {', '.join(self.players)} (the first is measured)",
                 f"games      {self.games:,}, seed {self.seed} (seats rotate game by game)",
                 "",
                 f"{'':12}{'return':>9}  {'95% CI':>20}  {'games':>7}",
                 f"{'all':12}{e.mean:+9.3f}  [{e.low:+8.3f}, {e.high:+8.3f}]  {e.n:>7,}"]
        for seat, s in self.by_seat.items():
            lines.append(f"{f'seat {seat}':12}{s.mean:+9.3f}  [{s.low:+8.3f}, {s.high:+8.3f}]"
                         f"  {s.n:>7,}")
        return "\n".join(lines)

    def intervals(self) -> tuple[str, list[Interval]]:
        rows = [("all", self.mean), *((f"seat {k}", v) for k, v in self.by_seat.items())]
        return (f"return per game, {self.players[0]} against {', '.join(self.players[1:])}",
                [Interval(name, e.mean, e.low, e.high) for name, e in rows])

    def as_dict(self) -> dict[str, Any]:
        return {"game": self.game, "players": list(self.players), "games": self.games,
                "seed": self.seed, "mean": self.mean.as_dict(),
                "by_seat": {str(k): v.as_dict() for k, v in self.by_seat.items()}}


BLOCK = 10_000  # games a block (a task on a cluster) plays, its players drawing from its seed


def evaluate_seats(game: Game, params: Any, specs: Sequence[str], count: int, seed: int,
                   bots: Callable[[str, np.random.Generator], Player] | None = None,
                   progress: Callable[[int], None] | None = None,
                   tasks: Tasks | None = None) -> SeatReport:
    """``count`` games of the players ``specs``; the first player sits in seat i % n in
    game i (the others after it in order), so the seats' advantages even out. The games
    are played in blocks of ``BLOCK`` (`play_seats`) by ``tasks`` [here]."""
    n = game.rules.num_players(params)
    first = seat_returns(game, params, specs, count, seed, bots, progress, tasks)
    seat = np.arange(count) % n
    return SeatReport(game.name, tuple(specs), count, seed, mean_ci(first),
                      {s: mean_ci(first[seat == s]) for s in range(n)})


def seat_scores(game: Game, params: Any, specs: Sequence[str], count: int, seed: int,
                progress: Callable[[int], None] | None = None) -> Scores:
    """`PlayFace.score` for any game: the first player's return per game, seats rotating
    (`seat_returns`)."""
    values = seat_returns(game, params, specs, count, seed, progress=progress)
    return Scores(values, "return", f"return per {game.rules.unit.removesuffix('s')}")


def seat_returns(game: Game, params: Any, specs: Sequence[str], count: int, seed: int,
                 bots: Callable[[str, np.random.Generator], Player] | None = None,
                 progress: Callable[[int], None] | None = None,
                 tasks: Tasks | None = None) -> NDArray[np.float64]:
    """The first player's return in each of ``count`` games of ``specs`` (the first
    player in seat i % n in game i), played in blocks of ``BLOCK`` (`play_seats`) by
    ``tasks`` [here]."""
    n = game.rules.num_players(params)
    if len(specs) != n:
        raise GameError(f"{game.name} is played by {n} players: give {n}, not {len(specs)}")
    if count < 2:
        raise GameError(f"play at least 2 games, not {count}: an interval needs two")
    return np.concatenate(Tasks.of(tasks, progress).run(
        [Task(play_seats, game, params, tuple(specs), seed, b, lo, hi, bots, size=hi - lo)
         for b, lo, hi in spans(count, BLOCK)]))


def play_seats(game: Game, params: Any, specs: Sequence[str], seed: int, block: int, lo: int,
               hi: int, bots: Callable[[str, np.random.Generator], Player] | None = None,
               progress: Callable[[int], None] | None = None) -> NDArray[np.float64]:
    """The first player's return in games ``lo`` to ``hi`` - 1 of ``seed`` (game i dealt
    from the seed's i-th child, the first player in seat i % n); the players draw from
    the block's seed (`batchrl.blocks.block_entropy`), block 0's being the seed's."""
    n = game.rules.num_players(params)
    deals = np.random.default_rng(after(np.random.SeedSequence(seed).spawn(1)[0], lo))
    players = [make_player(game, s, params, rng, bots)  # game i: the i-th child of deals
               for s, rng in zip(specs, block_rngs(seed, block, n), strict=False)]

    def seats(i: int) -> list[int]:  # seats(i)[s]: the player in seat s
        return [(s - lo - i) % n for s in range(n)]

    played = play(game, params, players, hi - lo, deals, seats, progress)
    return np.asarray([game.rules.returns(g.states[-1])[(lo + i) % n]
                       for i, g in enumerate(played)], dtype=np.float64)
