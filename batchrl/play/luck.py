"""``batchrl evaluate --logs``: each logged player's result per hand, raw and with the
luck of the cards taken out by chance-event control variates.

Where the cards fall is most of what a few thousand hands' result says. At every chance
event (the deal, a board card) a value function ``V`` values each seat still in the hand
just after it; the correction is ``V`` after what was dealt minus the mean of ``V`` after
draws from what could have come (the game draws them: `ChanceEvent`). A player's hand
counts at its result minus the sum of its corrections. Each correction has expectation
zero whatever ``V`` is, since what was dealt and the draws come from the same deal (AIVAT's
chance terms, Burch et al. 2018), so the mean stays unbiased; the better ``V`` predicts
the result, the more of the cards' variance goes.

``V`` is learned from the same logs: a gradient-boosted regression of each seat's result
on its features after each event (a Monte Carlo evaluation of the logged play, FQE of its
own policy with the returns as targets). It is **cross-fitted**: the hands are cut into
``folds``; a hand's corrections come from the ``V`` fitted on the other folds, so no hand
corrects itself with a value that saw its result. Hands dealt alike (a duplicate match's
twins, a dealer's repeated seed) share a fold, so none is corrected by a fit on its twin.

The intervals: mean ± 1.96 standard errors over the player's hands (the hands are
independent deals; a cross-fitted ``V`` ties them only through its fit on the others).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

import parsers  # noqa: F401  (the built-in log formats register themselves)
from batchrl.evaluation import Estimate, mean_ci
from batchrl.games import Game, GameError, get_game, sniff_format
from batchrl.games.base import ChanceHand, Interval, Source, SourceContext, SourceError
from batchrl.records import BadLine, LogLines, Skipped
from batchrl.store import Store, StoreError, file_digest

FOLDS = 5
DRAWS = 32
SHOWN_BAD = 5  # bad lines quoted in the report


class LuckError(ValueError):
    """Logs ``evaluate --logs`` cannot read: the message names the file and what to do."""


@dataclass(frozen=True)
class LuckConfig:
    """``draws`` per deal or flop (a single card's are every card left); ``folds`` for the
    cross-fitting; ``seed`` draws the cards and seeds the fits; ``players`` the names
    reported (all when empty); ``options`` the game's reading options (hold'em's
    ``gamedef``), as ingest takes them; ``strategies`` the players (by name) who played
    one of the game's bots whose probabilities it knows (``{"random": "random"}``): the
    luck of their choices is taken out too."""

    draws: int = DRAWS
    folds: int = FOLDS
    seed: int = 0
    players: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    strategies: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PlayerResult:
    name: str
    hands: int
    raw: Estimate
    reduced: Estimate

    @property
    def se_ratio(self) -> float:
        """The reduced result's standard error over the raw one's."""
        return self.reduced.sd / self.raw.sd if self.raw.sd > 0 else float("nan")


@dataclass
class LuckReport:
    """Each player's result per hand, raw and variance-reduced, in ``unit``."""

    game: str
    unit: str
    sources: list[str]
    hands: int
    players: list[PlayerResult]
    draws: int
    folds: int
    # V's R² over every (hand, event, live seat) of the held-out folds: how well a seat's
    # result is predicted after each event, pooled (not the share of a player's variance)
    explained: float
    left_out: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    strategies: dict[str, str] = field(default_factory=dict)  # name: the bot it played

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON takes it: a figure that is not a number (the spread of one
        hand) is null."""
        out: dict[str, Any] = _finite({
            "game": self.game, "unit": self.unit, "sources": self.sources,
            "hands": self.hands, "draws": self.draws, "folds": self.folds,
            "value_r2": self.explained,
            "players": [{"name": p.name, "hands": p.hands, "raw": _with_se(p.raw),
                         "reduced": _with_se(p.reduced), "se_ratio": p.se_ratio}
                        for p in self.players],
            "left_out": self.left_out, "examples": self.examples, "notes": self.notes,
            "strategies": self.strategies,
        })
        return out

    def table(self) -> str:
        width = max([len("player"), *(len(p.name) for p in self.players)])
        choices = " and of the known strategies' choices" if self.strategies else ""
        lines = [f"{self.game}: {self.hands:,} hands from {_sources(self.sources)}",
                 f"each player's result, {self.unit}, with its 95% interval: raw, and with "
                 f"the luck of the cards{choices} taken out",
                 f"{'player':<{width}}  {'hands':>7}  {'raw':>30}  {'variance-reduced':>30}"
                 f"  {'SE ratio':>8}"]
        for p in self.players:
            lines.append(f"{p.name:<{width}}  {p.hands:>7,}  {_shown(p.raw):>30}  "
                         f"{_shown(p.reduced):>30}  {p.se_ratio:>8.2f}")
        lines.append(f"value function: gradient-boosted trees on the chance events' "
                     f"features, cross-fitted over {self.folds} folds of hands (R² "
                     f"{self.explained:.2f} of a seat's result after each event, on hands "
                     f"it did not see); {self.draws} draws per deal or flop, every card "
                     "left for a single card")
        if self.strategies:
            lines.append("the luck of the choices taken out too, with the probabilities of "
                         "the bot each played: " + ", ".join(
                             f"{name} ({bot})" for name, bot in self.strategies.items()))
        if self.left_out:
            lines.append("left out: " + ", ".join(f"{n:,} {k}" for k, n in
                                                  self.left_out.items()))
            lines += [f"  {e}" for e in self.examples]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    def intervals(self) -> tuple[str, list[Interval]]:
        """For ``--plot``: each player's raw and reduced result with its interval."""
        rows: list[Interval] = []
        for p in self.players:
            rows.append(Interval(f"{p.name} raw", p.raw.mean, p.raw.low, p.raw.high))
            rows.append(Interval(f"{p.name} reduced", p.reduced.mean, p.reduced.low,
                                 p.reduced.high))
        return self.unit, rows


def _finite(value: Any) -> Any:
    """``value`` with every float that is not finite as None (JSON has no NaN)."""
    if isinstance(value, float):
        return value if np.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _with_se(e: Estimate) -> dict[str, Any]:
    return {**e.as_dict(), "se": e.sd / np.sqrt(e.n) if e.n else float("nan")}


def _shown(e: Estimate) -> str:
    return f"{e.mean:+.1f} [{e.low:+.1f}, {e.high:+.1f}]"


def _sources(sources: Sequence[str]) -> str:
    return sources[0] if len(sources) == 1 else f"{len(sources):,} sources"


@dataclass
class LogsRead:
    """The hands of the logs read, with their chance events, and what was left out."""

    game: Game
    variant: str
    unit: str
    hands: list[ChanceHand]
    left_out: Counter[str]
    examples: list[str]
    notes: list[str]


def log_paths(paths: Sequence[Path]) -> list[Path]:
    """The logs to read: files and directories of game files as given; a directory of
    them, each in name order; a store, the sources it was ingested from, each checked
    unchanged by its digest."""
    out: list[Path] = []
    for path in paths:
        if not path.exists():
            raise LuckError(f"{path}: no such file or directory")
        if path.is_dir() and (path / "store.json").exists():
            try:
                sources = Store.open(path).sources()
            except StoreError as exc:
                raise LuckError(str(exc)) from None
            for source in sources:
                logged = Path(source.resolved_path or source.path)
                if not logged.exists():
                    raise LuckError(f"{path}: its source {logged} is gone: a store keeps "
                                    "rows, not the deals' alternatives; give the logs")
                fmt = sniff_format(logged)
                if fmt is None:
                    raise LuckError(f"{path}: its source {logged} is no log batchrl reads "
                                    "now: give the logs themselves")
                if (fmt.digest or file_digest)(logged) != source.digest:
                    raise LuckError(f"{path}: its source {logged} has changed since it was "
                                    "ingested: give the logs themselves")
                out.append(logged)
        elif path.is_dir() and sniff_format(path) is None:
            # a folder of logs, or of folders of game files (Pluribus's hands)
            found = [p for p in sorted(path.iterdir())
                     if not p.name.startswith(".") and sniff_format(p) is not None]
            if not found:
                raise LuckError(f"{path}: a directory, and no log batchrl reads is in it")
            out += found
        else:
            out.append(path)
    return out


def read_logs(paths: Sequence[Path], config: LuckConfig,
              progress: Callable[[int], None] | None = None) -> LogsRead:
    """Every hand of ``paths`` (logs and directories of game files, as `log_paths` gives
    them) with its chance events; bad lines counted and quoted, never stopping the
    others."""
    read: LogsRead | None = None
    for path in paths:
        fmt = sniff_format(path)
        if fmt is None:
            raise LuckError(f"{path}: no log format batchrl reads")
        game = get_game(fmt.game)
        if read is not None and game is not read.game:
            raise LuckError(f"{path}: a {game.name} log among {read.game.name} logs: "
                            "evaluate one game's logs at a time")
        notes: list[str] = []
        options = reading_options(game, config.options, path)
        # a hand's events take far longer than its bytes: told every 16 KiB (a few
        # hundred hands), not every mebibyte
        lines = LogLines(path, progress, every=1 << 14) if path.is_file() else None
        records = fmt.read(Source(path, lines, options, progress))
        try:
            with contextlib.closing(records) if isinstance(records, Generator) else \
                    contextlib.nullcontext():
                context = SourceContext(path, fmt, "", options, notes)
                plan = game.log.chance_hands(records, context, config.draws, config.seed,
                                             config.strategies)
                if read is None:
                    read = LogsRead(game, plan.variant or game.name, plan.unit, [], Counter(), [],
                                 [])
                elif (plan.variant or game.name) != read.variant:
                    read.notes.append(f"{path} plays {plan.variant}, the first "
                                      f"{read.variant}: their hands are pooled")
                for record in plan.hands:
                    if isinstance(record, ChanceHand):
                        read.hands.append(record)
                    elif isinstance(record, BadLine):
                        read.left_out[record.kind] += 1
                        if len(read.examples) < SHOWN_BAD:
                            read.examples.append(str(record))
                    elif isinstance(record, Skipped):
                        read.left_out[record.kind] += record.count
                        if record.message and len(read.examples) < SHOWN_BAD:
                            read.examples.append(record.message)
        except (SourceError, GameError) as exc:
            raise LuckError(str(exc)) from None
        read.notes += notes
    if read is None or not read.hands:
        raise LuckError(f"{', '.join(map(str, paths))}: no hand could be read"
                        + (f" ({', '.join(f'{n:,} {k}' for k, n in read.left_out.items())})"
                           if read is not None and read.left_out else ""))
    seen = {name for hand in read.hands for name in hand.names}
    # a player asked for by name is looked for before the value function is fitted
    _look_for(config.players, {name for hand in read.hands for name in seated(hand)})
    if absent := sorted(set(config.strategies) - seen):
        raise LuckError(f"--strategy {', '.join(absent)}: no such player in the logs: they "
                        f"hold {_listed(seen) or 'no names'}")
    if config.strategies and not any(e.weights is not None for h in read.hands
                                     for e in h.events):
        raise LuckError(f"--strategy {', '.join(config.strategies)}: no choice of theirs "
                        f"could be read ({read.game.name} reads none, or no hand names its "
                        "players seat by seat)")
    return read


def reading_options(game: Game, options: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """The options given that read ``game``'s logs (those it declares for ingest: hold'em's
    ``gamedef``); another is an error."""
    reads = {o.name for o in game.cli.options if "ingest" in o.flags}
    if others := sorted(set(options) - reads):
        raise LuckError(f"{path}: a {game.name} log, read without "
                        f"{', '.join(o.replace('_', '-') for o in others)}: leave "
                        f"{'it' if len(others) == 1 else 'them'} out")
    return dict(options)


@dataclass(frozen=True)
class Corrections:
    """Each hand's corrections per seat (hands × seats, NaN where no seat sat) and the
    share of variance the value function explained on its held-out folds."""

    per_seat: list[NDArray[np.float64]]
    explained: float


def fit_value(x: NDArray[np.float64], y: NDArray[np.float64], seed: int) -> Any:
    """The value function: gradient-boosted trees of a seat's result on its features."""
    # scikit-learn's ensembles load in about half a second: only when a value is fitted
    from sklearn.ensemble import HistGradientBoostingRegressor

    model = HistGradientBoostingRegressor(max_iter=150, learning_rate=0.1, max_leaf_nodes=31,
                                          min_samples_leaf=40, early_stopping=False,
                                          random_state=seed)
    return model.fit(x, y)


def corrections(hands: Sequence[ChanceHand], folds: int, seed: int,
                fit: Callable[[NDArray[np.float64], NDArray[np.float64], int], Any] = fit_value,
                progress: Callable[[int], None] | None = None) -> Corrections:
    """Each hand's chance corrections per seat, from a value function cross-fitted over
    ``folds`` folds of hands (``fit(x, y, seed)`` returns a model with ``predict``;
    ``progress`` is told of each fold done)."""
    deal, deals = _deals(hands)
    if deals < 2 * folds:
        raise LuckError(f"{deals:,} deals: too few to fit a value function on some hands and "
                        f"correct the others over {folds} folds (want {2 * folds} or more)")
    # every (hand, event, live seat, outcome) as one row: outcome 0 what was dealt
    blocks: list[NDArray[np.float64]] = []
    hand_of: list[NDArray[np.int64]] = []
    seat_of: list[NDArray[np.int64]] = []
    group_of: list[NDArray[np.int64]] = []
    first: list[NDArray[np.bool_]] = []
    weight_of: list[NDArray[np.float64]] = []  # an outcome's probability (what was dealt: 0)
    exact_of: list[NDArray[np.float64]] = []  # a result an outcome settles, else NaN
    groups = 0
    for h, hand in enumerate(hands):
        for event in hand.events:
            seats = np.flatnonzero(event.seats)
            outcomes = event.features.shape[0]
            rows = event.features[:, seats].reshape(-1, event.features.shape[2])
            blocks.append(rows)
            hand_of.append(np.full(len(rows), h))
            seat_of.append(np.tile(seats, outcomes))
            group_of.append(groups + np.tile(np.arange(len(seats)), outcomes))
            first.append(np.repeat(np.arange(outcomes) == 0, len(seats)))
            likely = np.ones(outcomes - 1) if event.weights is None \
                else np.asarray(event.weights, np.float64)
            likely = likely / max(float(likely.sum()), 1e-300)
            weight_of.append(np.repeat(np.concatenate([[0.0], likely]), len(seats)))
            exact_of.append(np.full(len(rows), np.nan) if event.exact is None
                            else event.exact[:, seats].reshape(-1))
            groups += len(seats)
    x = np.concatenate(blocks).astype(np.float32)
    hand_ids, seat_ids = np.concatenate(hand_of), np.concatenate(seat_of)
    group_ids, dealt = np.concatenate(group_of), np.concatenate(first)
    weights, exact = np.concatenate(weight_of), np.concatenate(exact_of)
    seats_max = max(len(h.results) for h in hands)
    results = np.full((len(hands), seats_max), np.nan)
    for h, hand in enumerate(hands):
        results[h, : len(hand.results)] = hand.results
    target = results[hand_ids, seat_ids]
    fold = _folds(deal, deals, folds, seed)
    row_fold = fold[hand_ids]
    # an outcome that settles a seat's result is valued at it, not by V, nor fitted
    settled = ~np.isnan(exact)
    predicted = np.where(settled, exact, 0.0)
    for f in range(folds):
        train = dealt & ~settled & (row_fold != f)
        model = fit(x[train], target[train], seed + f)
        mine = (row_fold == f) & ~settled
        predicted[mine] = model.predict(x[mine])
        if progress is not None:
            progress(1)
    held = dealt & ~settled
    explained = 1.0 - float(np.mean((target[held] - predicted[held]) ** 2)
                            / max(np.var(target[held]), 1e-12))
    # per group: V after what was dealt (or chosen) minus V's expectation over what could
    # have been: the draws' mean, or the moves' mean weighted by their probabilities
    dealt_value = np.zeros(groups)
    dealt_value[group_ids[dealt]] = predicted[dealt]
    expected = np.bincount(group_ids, weights=predicted * weights, minlength=groups)
    correction = dealt_value - expected
    group_hand = np.zeros(groups, np.int64)
    group_seat = np.zeros(groups, np.int64)
    group_hand[group_ids[dealt]] = hand_ids[dealt]
    group_seat[group_ids[dealt]] = seat_ids[dealt]
    total = np.zeros((len(hands), seats_max))
    np.add.at(total, (group_hand, group_seat), correction)
    return Corrections([total[h, : len(hand.results)] for h, hand in enumerate(hands)],
                       explained)


def hand_folds(hands: Sequence[ChanceHand], folds: int, seed: int) -> NDArray[np.int64]:
    """Each hand's fold: the deals (`ChanceHand.deal`) shuffled by ``seed`` and dealt round
    the folds, so hands dealt alike share one."""
    return _folds(*_deals(hands), folds, seed)


def _deals(hands: Sequence[ChanceHand]) -> tuple[NDArray[np.int64], int]:
    """Each hand's deal as a number, and how many deals there are (a hand without
    `ChanceHand.deal` is its own)."""
    index: dict[Any, int] = {}
    deal = [index.setdefault(("hand", i) if h.deal is None else ("deal", h.deal), len(index))
            for i, h in enumerate(hands)]
    return np.array(deal, dtype=np.int64), len(index)


def _folds(deal: NDArray[np.int64], deals: int, folds: int, seed: int) -> NDArray[np.int64]:
    return (np.random.default_rng(seed).permutation(deals) % folds)[deal]


def evaluate_logs(paths: Sequence[Path], config: LuckConfig,
                  progress: Callable[[int], None] | None = None) -> LuckReport:
    """Each player's result per hand in the logs, raw and variance-reduced (see the
    module's docstring); ``progress`` is told of the bytes read."""
    read = read_logs(log_paths(paths), config, progress)
    return summarize(read, corrections(read.hands, config.folds, config.seed), config,
                     paths)


def summarize(read: LogsRead, fixed: Corrections, config: LuckConfig, paths: Sequence[Path]
              ) -> LuckReport:
    """The report of hands read and their corrections: each player's raw and reduced
    result per hand (``config.players``, else every player, most hands first)."""
    raw: dict[str, list[float]] = {}
    reduced: dict[str, list[float]] = {}
    notes = list(read.notes)
    unnamed = 0
    for hand, correction in zip(read.hands, fixed.per_seat, strict=True):
        unnamed += len(hand.names) != len(hand.results)
        for seat, name in enumerate(seated(hand)):
            raw.setdefault(name, []).append(float(hand.results[seat]))
            reduced.setdefault(name, []).append(float(hand.results[seat] - correction[seat]))
    _look_for(config.players, set(raw))
    names = list(config.players) or sorted(raw, key=lambda n: (-len(raw[n]), n))
    players = [PlayerResult(n, len(raw[n]), mean_ci(raw[n]),
                            mean_ci(reduced[n])) for n in names]
    if unnamed:
        notes.append(f"{unnamed:,} hands name no players: their players are reported by "
                     "seat (seat 1 the log's first)")
    return LuckReport(read.variant, read.unit, [str(p) for p in paths], len(read.hands),
                      players, config.draws, config.folds, fixed.explained,
                      dict(read.left_out), read.examples, notes, dict(config.strategies))


def seated(hand: ChanceHand) -> tuple[str, ...]:
    """Who sat in each seat of ``hand``: its players' names, or ``seat 1``, ``seat 2``...
    where it names none (or not one a seat)."""
    if len(hand.names) == len(hand.results):
        return hand.names
    return tuple(f"seat {s + 1}" for s in range(len(hand.results)))


def _look_for(players: Sequence[str], seen: set[str]) -> None:
    if unknown := [n for n in players if n not in seen]:
        raise LuckError(f"no player {', '.join(unknown)} in the logs: they hold "
                        f"{_listed(seen)}")


def _listed(names: Iterable[str]) -> str:
    shown = sorted(names)
    return ", ".join(shown[:12]) + (f" and {len(shown) - 12:,} more" if len(shown) > 12 else "")
