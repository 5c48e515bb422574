"""A game as the rest of batchrl sees it: its rules core and its faces, one `Game`.

A game is one package under ``batchrl/games/`` that exports one `Game` object as
``GAME`` (found by ``batchrl.games``), plus one module under ``parsers/`` that registers
its log formats (`Format`). The `Game` holds the game's rules core (``rules``, a
`batchrl.games.core.Rules`: facts and pure rules, what everything else plays) and its
faces, each a small protocol used by its own layer:

- ``log`` (`LogFace`): the store's schema and how a source's records become rows
  (``batchrl ingest``, the exports);
- ``play`` (`PlayFace`): named players, logs written, scores and reports (``generate``,
  ``evaluate``, ``solve``, the play wing, the environments);
- ``learn`` (`LearnFace`): the settings the game recommends to each learner, as data,
  and its views of its features (``batchrl learn``);
- ``bench`` (`BenchFace`) and ``cli`` (`CliFace`): its benchmark datasets, and its
  command-line options and examples, as data.

``Game.load_model`` binds a model file to the game's states, the one loader every player
uses.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np
from numpy.typing import NDArray

from batchrl.games.chance import ChanceEvent as ChanceEvent
from batchrl.games.chance import ChanceHand as ChanceHand
from batchrl.games.chance import ChancePlan as ChancePlan
from batchrl.games.core import GameError as GameError
from batchrl.games.core import Rules, can
from batchrl.games.sources import Format as Format
from batchrl.games.sources import Source as Source
from batchrl.games.sources import SourceContext as SourceContext
from batchrl.games.sources import SourceError as SourceError
from batchrl.games.sources import SourcePlan as SourcePlan
from batchrl.policy import FeatureView, LoadedModel, Policy, load_model, load_policy
from batchrl.store import StoreSchema

if TYPE_CHECKING:
    from batchrl.blocks import Tasks


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
    """A measured player's score game by game (``PlayFace.score``), on deals its seed fixes:
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

    ``tier`` is the field's name for how the logs were played (`TIERS`): ``random``
    (uniform random players), ``mixed`` (the best bot beside weaker or ε-random play),
    ``expert`` (the best bot against itself).

    A policy learned from the logs is scored where they were played (D4RL's
    convention): it takes the first seat, and meets ``opponents``, by default the
    players of the logs' other seats (`PlayFace.opponents_of`)."""

    tier: str
    players: tuple[str, ...]
    count: int
    seed: int
    quick: int
    options: Mapping[str, Any] = field(default_factory=dict)
    opponents: tuple[str, ...] | None = None  # None: the logs' other seats

    def games(self, quick: bool) -> int:
        return self.quick if quick else self.count



# what a dataset's tier says of its logs, the same in every game (``batchrl bench --help``)
TIERS: Mapping[str, str] = {
    "random": "every seat plays uniformly random legal moves",
    "mixed": "the game's best bot in the first seat, weaker play in the others (uniform "
             "random, an ε-random best bot, or a weaker bot): the logs hold good and poor "
             "moves side by side",
    "expert": "the game's best bot in every seat"}


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


class Face:
    """A face of a game beside its rules (`Rules`): made with the rules, and bound to the
    whole `Game` when the game is assembled, so that it can reach the other faces (the
    play face's players load models through ``game.load_model``)."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self._game: Game | None = None

    def bind(self, game: Game) -> None:
        self._game = game

    @property
    def game(self) -> Game:
        if self._game is None:
            raise GameError(f"{self.rules.name}'s {type(self).__name__} is not part of a "
                            "Game yet")
        return self._game


class LogFace(Face):
    """A game's log side, read by ``batchrl ingest`` and whatever reads a store back: the
    store's schema, how a source's records become rows, and what a store's recorded game
    and params mean. ``open_source`` is a capability a game may lack (`can`)."""

    def schema(self, params: Any) -> StoreSchema:
        """The columns of a store of a game of ``params``."""
        raise NotImplementedError

    def prepare(self, command: str, options: Mapping[str, Any]) -> Mapping[str, Any]:
        """Check the options given to ``command`` before any work (an unknown game file,
        a value out of range): `GameError` says what is wrong. Returns them, resolved."""
        return options

    def open_source(self, records: Iterator[Any], context: SourceContext) -> SourcePlan:
        """How one source's records become rows (see `SourcePlan`).

        Args:
            records: the source's records, as its format reads them.
            context: where the source is, its format, the ingest options given.

        Returns:
            A `SourcePlan`: the schema, the records and the function making rows of them.

        Raises:
            SourceError: the source cannot be ingested.
        """
        raise GameError(f"{self.rules.name} has no store side yet")

    def chance_hands(self, records: Iterator[Any], context: SourceContext, draws: int,
                     seed: int, strategies: Mapping[str, str] | None = None) -> ChancePlan:
        """One source's hands as ``evaluate --logs`` reads them: each seat's result and
        each chance event's features for what was dealt and for ``draws`` draws from
        what could have come (``seed`` draws them: the same seed, the same draws), from
        which a learned value function's control variates take the luck out of the
        results (`batchrl.play.luck`). Every card a hand deals must be in its log.
        ``strategies`` names players by the game's bot they played, whose probabilities
        the game knows: each of their choices is an event too (`ChanceEvent.weights`); a
        game refuses a bot it cannot give so.

        Raises:
            SourceError: the source's hands cannot be read so.
        """
        raise GameError(f"{self.rules.name}: batchrl cannot yet take the luck out of its "
                        "logged results (evaluate --logs reads poker logs)")

    def reward_unit(self, params: Any) -> str:
        """What the rewards of this game's store rows count, in words (exports write it
        beside the data)."""
        return "the game's own score: a seat's rewards add up to its returns in the game"

    def reward_scale(self, params: Any) -> Mapping[str, float]:
        """The reward unit as numbers, by name (hold'em: ``big_blind``, in chips), for
        whoever reads the rewards without batchrl (exports write them); {} if none."""
        return {}

    def params_from_store(self, stored_game: str, game_params: Mapping[str, Any]) -> Any:
        """The params of a store (or a model) of game ``stored_game`` that records
        ``game_params``; by default the fields of ``Params`` found there."""
        fields = {f.name for f in dataclasses.fields(self.rules.Params)}
        return self.rules.params(**{k: v for k, v in game_params.items() if k in fields})

    def owns(self, stored_game: str, game_params: Mapping[str, Any]) -> bool:
        """Whether a store or model of game ``stored_game`` is of this game (a game whose
        stores name a variant, as hold'em's do, says so here)."""
        return stored_game == self.rules.name


class PlayFace(Face):
    """A game's play side, read by ``generate``, ``evaluate``, ``solve``, the play wing
    (`batchrl.play`) and the environments: its named players, its logs written by them,
    its scores and reports. ``bot``, ``generate``, ``evaluate``, ``score`` and ``solve``
    are capabilities a game may lack (`can`)."""

    bots: ClassVar[tuple[str, ...]] = ("random",)  # named players; model:PATH besides
    default_players: ClassVar[tuple[str, ...]] = ("random", "random")
    default_count: ClassVar[int] = 1000  # games (hands) evaluate plays
    # whom a learned player meets when it is scored (``score``, ``batchrl ablate``): the
    # players after it, as evaluate's --players takes them
    ablation_opponents: ClassVar[tuple[str, ...]] = ("random",)
    log_formats: ClassVar[tuple[str, ...]] = ()  # the formats generate writes

    def encode_batch(self, states: Sequence[Any], players: Sequence[int], params: Any
                     ) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
        """What a model player acts on, for many states at once: ``encode(s, player,
        params)`` of each (n, features) and its `legal_mask` (n, actions). By default
        one state at a time; a game whose encoding replays a history (Tressette's) does
        the batch at once. The conformance check holds it to ``encode``."""
        rules = self.rules
        n_features, n_actions = len(rules.feature_names(params)), len(rules.action_names(params))
        x = np.zeros((len(states), n_features), dtype=np.float32)
        legal = np.zeros((len(states), n_actions), dtype=bool)
        for i, (s, p) in enumerate(zip(states, players, strict=True)):
            x[i] = rules.encode(s, p, params)
            legal[i, list(rules.legal_actions(s))] = True
        return x, legal

    def returns_batch(self, states: Sequence[Any]) -> NDArray[np.float64]:
        """``returns(s)`` of many finished states at once, one row each (n, seats), as a
        search's rollouts end. By default one state at a time; a game whose returns
        evaluate hands (hold'em's showdowns) scores the batch at once. The conformance
        check holds it to ``returns``."""
        rows = [self.rules.returns(s) for s in states]
        return np.array(rows, dtype=np.float64).reshape(len(rows), -1) if rows else \
            np.zeros((0, 0))

    def bot(self, name: str, params: Any, rng: np.random.Generator) -> Any:
        """The game's bot called ``name`` (one of ``bots``) as a player of the rules'
        states: ``act(states, seats)`` gives one action per state, ``name`` names it
        (``batchrl.games.play.make_player`` and the environments use it)."""
        raise GameError(f"{self.rules.name} has no bot {name!r}")

    def generate(self, out: Path, players: Sequence[str], count: int, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None) -> str:
        """Play ``count`` games of ``players`` and write them as a log at ``out`` that
        ``batchrl ingest`` reads back; returns the line to print."""
        raise GameError(f"{self.rules.name} cannot write logs yet")

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
        raise GameError(f"{self.rules.name} has no evaluation yet")

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
        raise GameError(f"{self.rules.name} cannot score a player game by game yet")

    def ablation_players(self, params: Any) -> tuple[str, ...]:
        """Whom a learned player of a game with ``params`` meets when it is scored: by
        default ``ablation_opponents``."""
        return tuple(self.ablation_opponents)

    def opponents_of(self, players: Sequence[str]) -> tuple[str, ...]:
        """Whom a player in the first seat of a game of ``players`` (a log's seats, as
        ``generate`` takes them) meets, as ``score`` takes them after it: by default the
        other seats' players (a team game: the other team's)."""
        return tuple(players[1:])

    # whether `score` measures the first player from every seat in turn (duplicate deals,
    # seats rotating); False: from the first seat only (Hanabi's group), which is then
    # the seat a value from the logs takes
    score_rotates_seats: ClassVar[bool] = True

    def return_of_score(self, params: Any) -> tuple[float, float] | None:
        """``(a, b)``: a player's expected return in a store's rewards (of ``params``) is
        ``a * score + b``, its ``score`` as `score` measures it, where the two are one
        quantity in two units (hold'em: bb/hand and chips); None where the score is
        another quantity than the rewards add up to (Tressette's hands won, four-player
        President's first places). What compares an estimate from the logs with a score
        (``batchrl bench --ope``) reads it."""
        return None

    def exploitability(self, player: str, params: Any) -> float | None:
        """What a best response to ``player`` wins from it per game, on average over the
        seats, where the game measures it exactly (Leduc); None where it does not."""
        return None

    def score_count(self, count: int, params: Any) -> str | None:
        """Why ``score`` cannot play ``count`` games with ``params`` (None: it can), said
        before any work."""
        return None if count >= 2 else "play at least 2"

    def solve(self, options: Mapping[str, Any]) -> Report:
        """The game solved exactly (``batchrl solve``), where a game can be."""
        raise GameError(f"{self.rules.name} has no exact solver")

    def check_model_params(self, path: str | Path, trained: Any, playing: Any) -> Any:
        """The params a model trained with ``trained`` plays a game of ``playing`` with;
        `GameError` where its features would mean something else there. By default the
        params must be equal."""
        if trained != playing:
            raise GameError(f"{path} was trained with {trained}, not {playing}: its "
                            f"features would not mean what it learned")
        return playing

    def model_params(self, params: Any, model_features: Sequence[str]) -> Any:
        """The params a model reading ``model_features`` plays with, from those it was
        checked against (hold'em's model without pv plays without computing it); by
        default ``params``."""
        return params


class LearnFace(Face):
    """What a game says to the learners, as data (`batchrl.learning` reads it): the
    settings that suit it, keyed by learner name (``{"fqi": {"trees": 50, "fast":
    True}}``: a mapping of the learner's config's fields, ``features`` / ``drop`` for the
    features it reads), its own readings of its features (``view``), and the learner
    ``batchrl learn`` runs when none is named (``learner``: the one ``batchrl bench``
    shows best across the game's tiers)."""

    def __init__(self, rules: Rules, recommended: Mapping[str, Any] | None = None,
                 learner: str = "fqi") -> None:
        super().__init__(rules)
        self.recommended: Mapping[str, Any] = dict(recommended or {})
        self.learner = learner

    def settings_for(self, learner: str, params: Any = None) -> dict[str, Any]:
        """``recommended[learner]`` as a dict of settings ({} where the game says none), for
        a store of ``params`` (None: the game's defaults); a game whose settings depend on
        its params (Hanabi's views, by the number of players) overrides this."""
        return dict(self.recommended.get(learner) or {})

    def view(self, options: Mapping[str, Any], params: Any = None) -> FeatureView | None:
        """The game's own reading of its stored features for a learner (`FeatureView`)
        that ``options`` ask for (``batchrl learn``'s game options, or a model file's
        ``view`` record), of a store or model of ``params`` (None: the defaults); None for
        no options. A game without views refuses any."""
        if options:
            raise GameError(f"{self.rules.name} has no views of its features (asked for "
                            f"{', '.join(sorted(options))})")
        return None


@dataclass(frozen=True)
class BenchFace:
    """A game in ``batchrl bench``: its datasets, the player whose score is 100
    (``reference``: the exact optimum where ``score`` has one, else the best bot;
    ``random``'s is 0), and how many games score each player (``games``: in full, and
    under ``--quick``); each learned player meets ``PlayFace.ablation_players``."""

    datasets: tuple[Dataset, ...] = ()
    reference: str | None = None
    games: tuple[int, int] = (2_000, 200)


@dataclass(frozen=True)
class CliFace:
    """A game on the command line: its title, the options it takes (`Option`), and a
    paragraph per command (``generate``, ``evaluate``) that the command's --help shows
    under the game's name: what the command does for this game, with an example."""

    title: str = ""
    options: tuple[Option, ...] = ()
    examples: Mapping[str, str] = field(default_factory=dict)


class Game:
    """One game as the registry holds it: its rules core and its faces, each used by its
    own layer.

    Args:
        rules: the facts and the rules (`Rules`): what everything else plays.
        log: the log side (`LogFace`): the store's schema, sources into rows.
        play: the play side (`PlayFace`): players, logs written, scores, reports.
        learn: what it says to the learners (`LearnFace`): recommended settings, views.
        bench: its part in ``batchrl bench`` (`BenchFace`).
        cli: its options and examples on the command line (`CliFace`).
    """

    __slots__ = ("bench", "cli", "learn", "log", "play", "rules")

    def __init__(self, rules: Rules, log: LogFace | None = None,
                 play: PlayFace | None = None, learn: LearnFace | None = None,
                 bench: BenchFace | None = None, cli: CliFace | None = None) -> None:
        self.rules = rules
        self.log = log if log is not None else LogFace(rules)
        self.play = play if play is not None else PlayFace(rules)
        self.learn = learn if learn is not None else LearnFace(rules)
        self.bench = bench if bench is not None else BenchFace()
        self.cli = cli if cli is not None else CliFace()
        for face in (self.log, self.play, self.learn):
            if face.rules is not rules:
                raise GameError(f"{rules.name}'s {type(face).__name__} was made with "
                                f"{face.rules.name}'s rules")
            face.bind(self)

    @property
    def name(self) -> str:
        return self.rules.name

    def load_model(self, path: str | Path, params: Any = None,
                   policy: Policy | None = None) -> LoadedModel:
        """A model file of this game, bound to its states.

        Args:
            path: the model file (any kind `batchrl.policy.load_policy` reads).
            params: the params of the game it will play (checked by
                ``PlayFace.check_model_params``); None: those it was trained with.
            policy: the file, already loaded.

        Returns:
            `batchrl.policy.LoadedModel`: the policy, the params it plays with and where
            its features sit among ``encode``'s (found by name).
        """
        policy = policy if policy is not None else load_policy(path)
        features = tuple(policy.feature_names)

        def check(stored: str, stored_params: Mapping[str, Any]) -> Any:
            trained = self.trained_params(path, stored, stored_params)
            chosen = trained if params is None else \
                self.play.check_model_params(path, trained, params)
            return self.play.model_params(chosen, features)

        return load_model(path, check, self.rules.feature_names, self.rules.action_names,
                          policy, view=self.learn.view)

    def trained_params(self, path: str | Path, stored: str,
                       stored_params: Mapping[str, Any]) -> Any:
        """The params a model file at ``path`` was trained with, from the game and params
        its metadata records; refused when it is another game's."""
        if not self.log.owns(stored, stored_params):
            raise GameError(f"{path} was trained on {stored}, not {self.name}")
        try:
            return self.log.params_from_store(stored, stored_params)
        except (GameError, ValueError, TypeError, KeyError) as exc:  # a crafted file's
            raise GameError(f"{path}: its game params do not make a {self.name} game "
                            f"({str(exc)[:300]})") from None

    def can(self, capability: str) -> bool:
        """Whether the face that has ``capability`` (``"solve"``, ``"view"``, ``"bot"``,
        ``"generate"``, ``"evaluate"``, ``"score"``, ``"open_source"``,
        ``"sample_worlds"``, ``"banked"``) gives it (`batchrl.games.core.can`)."""
        for face in (self.rules, self.log, self.play, self.learn):
            if hasattr(type(face), capability):
                return can(face, capability)
        raise GameError(f"no face of a game has {capability!r}")

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
    batchrl.games.core.GameError: go's players ask for its game before batchrl.games.go bound it
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
