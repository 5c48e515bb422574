"""The Game protocol: what every game gives the rest of batchrl, under one naming.

A game is one package under ``batchrl/games/`` that exports one `Game` object as
``GAME`` (found by ``batchrl.games``), plus one module under ``parsers/`` that registers
its log formats (`Format`). Everything that is not the game's own rules reaches it through
that object: the command line's choices and options, ingest, ``fqi``'s recommended
settings, ``evaluate``, the model loader, the environments and the conformance check.

A `Game` declares fixed facts (``name``, ``player_counts``, ``zero_sum``, ``teams``, its
``Params`` dataclass, the settings it recommends to each learner, command-line
`Option` s, named players)
and gives the rules as pure functions over an immutable state:

- ``new_game(rng, params)``: a fresh game, dealt from ``rng`` (the only randomness);
- ``current_player(s)``: the seat to act (-1 once the game is over);
- ``legal_actions(s)``: the legal actions, as indices into ``action_names(params)``;
- ``step(s, a)``: the state after the seat to act plays ``a``; an illegal ``a`` raises;
- ``is_terminal(s)`` and ``returns(s)``: one value per seat, always;
- ``encode(s, player, params)``: what ``player`` sees, the store's features, named by
  ``feature_names(params)``.

Store side: ``schema(params)`` and ``open_source`` (how one source's records become a
`batchrl.store.RowsBatch` at a time). Play side: ``generate`` (named players into a log),
``evaluate`` (a report with ``table()`` and ``as_dict()``), ``solve`` where a game has an
exact solver.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np
from numpy.typing import NDArray

from batchrl.records import LogLines
from batchrl.registry import make_dataclass_of
from batchrl.store import RowsBatch, StoreSchema

if TYPE_CHECKING:
    from batchrl.blocks import Tasks
    from batchrl.policy import FeatureView, LoadedModel, Policy


class GameError(ValueError):
    """A request a game cannot do as asked (an unknown player, a bad option, a capability
    it lacks); the message says what exists instead."""


class SourceError(ValueError):
    """A source (a log file or a directory of games) a game cannot ingest; the message
    names it and says what to do."""


@dataclass(frozen=True, slots=True)
class Option:
    """A setting a game takes on the command line.

    ``flags`` maps each command that takes it to its flag (``"--pv/--no-pv"`` for a
    switch); the value reaches the game's method for that command as ``options[name]``,
    and only when the user gave it. Two games may declare the same flag for a command
    when they agree on its name and type: the command shows one option whose help names
    both. Their ``choices`` may differ (Tressette's and sette e mezzo's ``--reward``): the
    flag takes any game's, and a game's files with another game's choice are refused,
    naming the game's own.
    """

    name: str
    flags: Mapping[str, str]
    help: str
    type: Any = str  # str, int, float or bool (a bool flag without "/" is a switch: on or
    # not given)
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    short: str | None = None  # e.g. "-j"


@dataclass(frozen=True)
class Scores:
    """A measured player's score game by game (``Game.score``), on deals its seed fixes:
    two players measured on one seed pair up value by value (common random numbers), so
    a difference between them is a paired one.

    ``name`` is the score as an identifier (``bb_per_hand``), ``unit`` in words
    (``bb/hand``); ``per_unit`` consecutive values are one independent sample (a deal
    played from every seat); ``exact``: the values are exact expectations, not draws.
    """

    values: NDArray[np.float64]
    name: str
    unit: str
    per_unit: int = 1
    exact: bool = False


@dataclass(frozen=True)
class Dataset:
    """One of a game's benchmark datasets (``batchrl bench``): logs ``generate`` writes
    with ``players``, ``count`` games dealt from ``seed`` (``quick`` under ``--quick``),
    ingested with the game's ``options`` (those of ``ingest`` and ``generate``).

    ``tier`` is the field's name for how the logs were played: ``random`` (uniform
    random players), ``mixed`` (the best bot beside weaker or ε-random play), ``expert``
    (the best bot against itself)."""

    tier: str
    players: tuple[str, ...]
    count: int
    seed: int
    quick: int
    options: Mapping[str, Any] = field(default_factory=dict)

    def games(self, quick: bool) -> int:
        return self.quick if quick else self.count


class Report(Protocol):
    """What ``evaluate`` and ``solve`` return: a table for people, a dict for notebooks.
    An evaluation's report also gives ``intervals()``, ``(unit, [Interval, ...])``: what
    ``evaluate --plot`` draws (`batchrl.evaluation.draw_intervals`)."""

    def table(self) -> str: ...

    def as_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Interval:
    """One figure of a report with its 95% interval (``low == high``: exact)."""

    label: str
    mean: float
    low: float
    high: float


@dataclass(frozen=True)
class Source:
    """One source as its format's reader sees it: the path, its lines (files), the
    options given to ``ingest`` and a progress callback taking bytes read."""

    path: Path
    lines: LogLines | None
    options: Mapping[str, Any] = field(default_factory=dict)
    progress: Callable[[int], None] | None = None


@dataclass(frozen=True)
class Format:
    """A log format a module of ``parsers/`` registers (``batchrl.games.register_format``).

    ``sniff(path, head)`` tells whether a source is of this format from its path and its
    first lines (``head`` is empty for a directory); ``read(source)`` yields the records
    in order: the game's own record objects, ``batchrl.records.BadLine`` for a line (or a
    game's file) that is no record, ``batchrl.records.Skipped`` for records passed over.
    No exception escapes ``read`` for bad input. ``directories``: a source may be a
    directory of game files (one source, one store part), digested by ``digest``.
    """

    name: str
    game: str
    description: str
    sniff: Callable[[Path, Sequence[str]], bool]
    read: Callable[[Source], Iterator[Any]]
    directories: bool = False
    digest: Callable[[Path], str] | None = None  # None: the file's sha256
    priority: int = 0  # higher sniffs first (a more specific format before a looser one)


@dataclass
class SourceContext:
    """What a game gets to open one source: where it is, its format, the prefix of its
    episode ids, the ``ingest`` options given, and the report's notes to add to."""

    path: Path
    format: Format
    prefix: str
    options: Mapping[str, Any]
    notes: list[str]


@dataclass
class SourcePlan:
    """How a source's records become rows: ``rows`` makes a `RowsBatch` of a chunk of
    records (it runs on a worker thread); ``records`` are the source's records, any read
    ahead first; ``variant`` names what the report and the store call the game (a
    hold'em log's game definition, say); ``finish(records_stored)`` runs after the last
    chunk and may raise `SourceError`."""

    schema: StoreSchema
    records: Iterator[Any]
    rows: Callable[[list[Any]], RowsBatch]
    variant: str = ""
    unit: str = "hands"
    finish: Callable[[int], None] | None = None


class Game:
    """One game: its facts, its rules, its store side and its play side.

    Subclasses set the class attributes and override the methods; the ones that raise
    `GameError` here are capabilities a game may lack (``solve``). ``Params`` is a frozen
    dataclass of the game's options whose defaults are the usual game.
    """

    name: ClassVar[str]
    title: ClassVar[str] = ""
    player_counts: ClassVar[tuple[int, ...]] = (2,)
    zero_sum: ClassVar[bool] = True
    teams: ClassVar[tuple[tuple[int, ...], ...]] = ()  # seats that share a result
    unit: ClassVar[str] = "games"  # what one episode is called ("hands" in card games)
    Params: ClassVar[type] = type(None)
    # The settings that suit this game, keyed by learner name (``batchrl.learners``):
    # a mapping of the learner's config's fields (``{"fqi": {"trees": 50, "fast": True}}``),
    # ``features`` / ``drop`` for the features it reads. Data only: no learner code.
    recommended: ClassVar[Mapping[str, Any]] = {}
    options: ClassVar[tuple[Option, ...]] = ()
    bots: ClassVar[tuple[str, ...]] = ("random",)  # named players; model:PATH besides
    default_players: ClassVar[tuple[str, ...]] = ("random", "random")
    default_count: ClassVar[int] = 1000  # games (hands) evaluate plays
    # whom a learned player meets when it is scored (``score``, ``batchrl ablate``): the
    # players after it, as evaluate's --players takes them
    ablation_opponents: ClassVar[tuple[str, ...]] = ("random",)
    log_formats: ClassVar[tuple[str, ...]] = ()  # the formats generate writes
    # the benchmark (``batchrl bench``): the game's datasets, the player whose score is
    # 100 (the exact optimum where ``score`` has one, else the best bot; ``random``'s is
    # 0), and how many games score each player (in full, and under --quick); each learned
    # player meets ``ablation_players``
    datasets: ClassVar[tuple[Dataset, ...]] = ()
    reference: ClassVar[str | None] = None
    bench_games: ClassVar[tuple[int, int]] = (2_000, 200)
    # a paragraph per command (``generate``, ``evaluate``) that the command's --help shows
    # under the game's name: what the command does for this game, with an example
    examples: ClassVar[Mapping[str, str]] = {}

    # ---- facts and params ----------------------------------------------------------

    def params(self, **values: Any) -> Any:
        """The game's params with ``values`` set; `GameError` names the valid fields."""
        return make_dataclass_of(self.Params, values, self.name, "option", GameError)

    def params_from_store(self, stored_game: str, game_params: Mapping[str, Any]) -> Any:
        """The params of a store (or a model) of game ``stored_game`` that records
        ``game_params``; by default the fields of ``Params`` found there."""
        fields = {f.name for f in dataclasses.fields(self.Params)}
        return self.params(**{k: v for k, v in game_params.items() if k in fields})

    def owns(self, stored_game: str, game_params: Mapping[str, Any]) -> bool:
        """Whether a store or model of game ``stored_game`` is of this game (a game whose
        stores name a variant, as hold'em's do, says so here)."""
        return stored_game == self.name

    def settings_for(self, learner: str, params: Any = None) -> dict[str, Any]:
        """``recommended[learner]`` as a dict of settings ({} where the game says none), for
        a store of ``params`` (None: the game's defaults); a game whose settings depend on
        its params (Hanabi's views, by the number of players) overrides this."""
        return dict(self.recommended.get(learner) or {})

    def num_players(self, params: Any) -> int:
        return self.player_counts[0]

    def action_names(self, params: Any) -> tuple[str, ...]:
        raise NotImplementedError

    def feature_names(self, params: Any) -> tuple[str, ...]:
        raise NotImplementedError

    def reward_unit(self, params: Any) -> str:
        """What the rewards of this game's store rows count, in words (exports write it
        beside the data)."""
        return "the game's own score: a seat's rewards add up to its returns in the game"

    def reward_scale(self, params: Any) -> Mapping[str, float]:
        """The reward unit as numbers, by name (hold'em: ``big_blind``, in chips), for
        whoever reads the rewards without batchrl (exports write them); {} if none."""
        return {}

    # ---- rules ---------------------------------------------------------------------

    def new_game(self, rng: np.random.Generator, params: Any) -> Any:
        """A fresh game.

        Args:
            rng: the only randomness: the deal, and every chance event after it.
            params: the game's params (`params`).

        Returns:
            The first state, immutable.
        """
        raise NotImplementedError

    def current_player(self, state: Any) -> int:
        """The seat to act in ``state``; -1 once the game is over."""
        raise NotImplementedError

    def legal_actions(self, state: Any) -> Sequence[int]:
        """The legal actions in ``state``, as indices into ``action_names(params)``."""
        raise NotImplementedError

    def step(self, state: Any, action: int) -> Any:
        """The state after the seat to act plays a move.

        Args:
            state: a state where a seat is to act.
            action: one of ``legal_actions(state)``.

        Returns:
            The next state; ``state`` is left as it was.

        Raises:
            ValueError: an illegal action (never repaired).
        """
        raise NotImplementedError

    def is_terminal(self, state: Any) -> bool:
        """Whether the game is over."""
        raise NotImplementedError

    def returns(self, state: Any) -> tuple[float, ...]:
        """What each seat has won so far, one value per seat (its final result once the
        game is over)."""
        raise NotImplementedError

    def encode(self, state: Any, player: int, params: Any) -> NDArray[np.float32]:
        """What a seat sees: the store's features.

        Args:
            state: any state of the game.
            player: the seat whose view it is.
            params: the game's params.

        Returns:
            (len(feature_names(params)),) float32, the row a store holds for it.
        """
        raise NotImplementedError

    def rewards(self, before: Any, after: Any) -> tuple[float, ...] | None:
        """What each seat earns from one step (``before`` to ``after``), the game's
        per-decision reward; None for nothing. By default nothing until the end, then
        ``returns``."""
        return self.returns(after) if self.is_terminal(after) else None

    def legal_mask(self, state: Any, params: Any) -> NDArray[np.bool_]:
        """``legal_actions`` as a mask over ``action_names(params)``."""
        mask = np.zeros(len(self.action_names(params)), dtype=bool)
        mask[list(self.legal_actions(state))] = True
        return mask

    def encode_batch(self, states: Sequence[Any], players: Sequence[int], params: Any
                     ) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
        """What a model player acts on, for many states at once: ``encode(s, player,
        params)`` of each (n, features) and its ``legal_mask`` (n, actions). By default
        one state at a time; a game whose encoding replays a history (Tressette's) does
        the batch at once. The conformance check holds it to ``encode``."""
        n_features, n_actions = len(self.feature_names(params)), len(self.action_names(params))
        x = np.zeros((len(states), n_features), dtype=np.float32)
        legal = np.zeros((len(states), n_actions), dtype=bool)
        for i, (s, p) in enumerate(zip(states, players, strict=True)):
            x[i] = self.encode(s, p, params)
            legal[i] = self.legal_mask(s, params)
        return x, legal

    # ---- store side ----------------------------------------------------------------

    def schema(self, params: Any) -> StoreSchema:
        raise NotImplementedError

    def prepare(self, command: str, options: Mapping[str, Any]) -> Mapping[str, Any]:
        """Check the options given to ``command`` before any work (an unknown game file,
        a value out of range): `GameError` says what is wrong. Returns them, resolved."""
        return options

    def open_source(self, records: Iterator[Any], context: SourceContext) -> SourcePlan:
        """How one source's records become rows (see `SourcePlan`); `SourceError` if the
        source cannot be ingested."""
        raise GameError(f"{self.name} has no store side yet")

    # ---- play side -----------------------------------------------------------------

    def load_model(self, path: str | Path, params: Any = None,
                   policy: Policy | None = None) -> LoadedModel:
        """A model file of this game, checked against ``params`` (default: the params it
        was trained with), its features mapped onto ``encode``'s by name (``policy``: the
        file already loaded)."""
        from batchrl.policy import load_model

        def check(stored: str, stored_params: Mapping[str, Any]) -> Any:
            trained = self.trained_params(path, stored, stored_params)
            if params is not None:
                self.check_model_params(path, trained, params)
                return params
            return trained

        return load_model(path, check, self.feature_names, self.action_names, policy,
                          view=self.view)

    def trained_params(self, path: str | Path, stored: str,
                       stored_params: Mapping[str, Any]) -> Any:
        """The params a model file at ``path`` was trained with, from the game and params
        its metadata records; refused when it is another game's."""
        if not self.owns(stored, stored_params):
            raise GameError(f"{path} was trained on {stored}, not {self.name}")
        try:
            return self.params_from_store(stored, stored_params)
        except (GameError, ValueError, TypeError, KeyError) as exc:  # a crafted file's
            raise GameError(f"{path}: its game params do not make a {self.name} game "
                            f"({str(exc)[:300]})") from None

    def check_model_params(self, path: str | Path, trained: Any, playing: Any) -> None:
        """Refuse a model whose params make its features mean something else in the game
        being played; by default the params must be equal."""
        if trained != playing:
            raise GameError(f"{path} was trained with {trained}, not {playing}: its "
                            f"features would not mean what it learned")

    def generate(self, out: Path, players: Sequence[str], count: int, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None) -> str:
        """Play ``count`` games of ``players`` and write them as a log at ``out`` that
        ``batchrl ingest`` reads back; returns the line to print."""
        raise GameError(f"{self.name} cannot write logs yet")

    def evaluate(self, groups: Sequence[Sequence[str]], count: int | None, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None,
                 tasks: Tasks | None = None) -> Report:
        """Play each group of players and report it (``batchrl evaluate``).

        Args:
            groups: the groups of players by name (bots, ``model:PATH``, ``search:...``);
                the first of each is the one measured.
            count: games (hands) per group; None: the game's ``default_count``.
            seed: fixes the deals, so two runs with one seed play the same ones.
            options: the ``evaluate`` options the game declares (`Option`).
            progress: hears how many games were played since it last heard.
            tasks: runs the games' blocks (`batchrl.blocks.Tasks`; default: here,
                reporting to ``progress``): module-level functions of their arguments
                alone (each block's randomness from `batchrl.blocks.block_entropy`), so a
                cluster's report is the local one.

        Returns:
            A `Report`: ``table()``, ``as_dict()`` and ``intervals()``.

        Raises:
            GameError: a player, option or count the game cannot play.
        """
        raise GameError(f"{self.name} has no evaluation yet")

    def score(self, players: Sequence[str], count: int, seed: int,
              options: Mapping[str, Any],
              progress: Callable[[int], None] | None = None, params: Any = None) -> Scores:
        """The first of ``players`` scored game by game against the others, as ``evaluate``
        plays them (what ``batchrl ablate`` and ``batchrl bench`` compare learned players
        by). A game without machinery of its own can return
        ``batchrl.games.play.seat_scores``: its return per game, seats rotating.

        Args:
            players: the measured player, then the others, by name.
            count: games to play.
            seed: fixes the deals: two players scored with one seed pair up game by game.
            options: the ``evaluate`` options the game declares.
            progress: hears how many games were played since it last heard.
            params: the game's params (a store's); None: from ``options`` and the model
                players.

        Returns:
            `Scores`: one value per game (or exact expectations), their name and unit.
        """
        raise GameError(f"{self.name} cannot score a player game by game yet")

    def ablation_players(self, params: Any) -> tuple[str, ...]:
        """Whom a learned player of a game with ``params`` meets when it is scored: by
        default ``ablation_opponents``."""
        return tuple(self.ablation_opponents)

    def score_count(self, count: int, params: Any) -> str | None:
        """Why ``score`` cannot play ``count`` games with ``params`` (None: it can), said
        before any work."""
        return None if count >= 2 else "play at least 2"

    def bot(self, name: str, params: Any, rng: np.random.Generator) -> Any:
        """The game's bot called ``name`` (one of ``bots``) as a player of the protocol's
        states: ``act(states, seats)`` gives one action per state, ``name`` names it
        (``batchrl.games.play.make_player`` and the environments use it)."""
        raise GameError(f"{self.name} has no bot {name!r}")

    def sample_worlds(self, state: Any, seat: int, n: int,
                      rng: np.random.Generator) -> list[Any]:
        """``n`` full states that ``seat`` cannot tell from ``state``: everything it has
        observed is the same (``encode(world, seat)`` equals ``encode(state, seat)``),
        the rest (the cards it cannot see) drawn uniformly among what is consistent with
        it, from ``rng``. What search at decision time (`batchrl.games.search`) plays
        out; a game without it cannot be searched."""
        raise GameError(f"{self.name} cannot sample the worlds a seat cannot tell apart")

    def banked(self, state: Any, seat: int) -> float:
        """What ``seat``'s store rows before ``state`` earned, their rewards added up: a
        learned value of ``state`` (what its rows from there on will earn) plus this is
        the seat's expected return (`returns`). Where a search to a depth
        (``search+depth=1:...``) adds the blueprint's value at its leaves; a game whose
        rewards all come at the end banks 0. A game without it cannot be searched to a
        depth."""
        raise GameError(f"{self.name} cannot be searched to a depth: it does not say what "
                        "a seat's rows have earned before a state (Game.banked)")

    def solve(self, options: Mapping[str, Any]) -> Report:
        """The game solved exactly (``batchrl solve``), where a game can be."""
        raise GameError(f"{self.name} has no exact solver")

    def view(self, options: Mapping[str, Any], params: Any = None) -> FeatureView | None:
        """The game's own reading of its stored features for a learner (`FeatureView`)
        that ``options`` ask for (``batchrl learn``'s game options, or a model file's
        ``view`` record), of a store or model of ``params`` (None: the defaults); None for
        no options. A game without views refuses any."""
        if options:
            raise GameError(f"{self.name} has no views of its features (asked for "
                            f"{', '.join(sorted(options))})")
        return None

    def can(self, capability: str) -> bool:
        """Whether this game overrides ``capability`` (``"solve"``, ``"view"``, ``"bot"``,
        ``"generate"``, ``"evaluate"``, ``"open_source"``, ``"sample_worlds"``,
        ``"banked"``)."""
        return getattr(type(self), capability) is not getattr(Game, capability)

    def __repr__(self) -> str:
        return f"<Game {self.name}>"


class Bound:
    """The game a module below its package's ``game.py`` plays for (its bots loading a
    model, say), bound by the package's ``__init__`` when it is imported. Such a module
    can neither import ``game.py`` (which imports it) nor ask ``batchrl.games`` (whose
    registry imports the package): either is a cycle.

    >>> slot = Bound("go")
    >>> slot()
    Traceback (most recent call last):
    ...
    batchrl.games.base.GameError: go's players ask for its game before batchrl.games.go bound it
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._game: Game | None = None

    def bind(self, game: Game) -> None:
        self._game = game

    def __call__(self) -> Game:
        if self._game is None:
            raise GameError(f"{self.name}'s players ask for its game before "
                            f"batchrl.games.{self.name} bound it")
        return self._game


def single_group(game: Game, groups: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """The one group of players of an evaluation that takes one."""
    if len(groups) != 1:
        raise GameError(f"{game.name} evaluates one group of players at a time, not "
                        f"{len(groups)}")
    return tuple(groups[0])
