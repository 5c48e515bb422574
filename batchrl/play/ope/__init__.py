"""Off-policy evaluation (``batchrl ope``): the value a model's policy would have had in a
store's logged episodes, taking a seat while the other seats play as logged, from the
logs alone, in the game's unit with a 95% bootstrap interval over episodes.

Three estimators, each named in the report:

- ``fqe``: fitted Q evaluation on frozen per-move Extra-Trees, masked by the legal moves
  (`batchrl.play.ope.fqe`);
- ``wis``: per-decision weighted importance sampling, the behaviour policy a clone of
  the seat's logged moves (``batchrl learn bc``'s forest, or ``behaviour``), its
  propensities floored at ``clip``, with the effective sample size;
- ``dr``: weighted doubly robust, FQE's Q as the control variate of the weights.

Where the policy plays a move the logs hardly make in such a state (the clone's
propensity under ``clip``), the report says how often: there the weights are 0, and
FQE's value is the trees' extrapolation.

The bootstrap draws one exponential weight per store episode (Rubin's Bayesian
bootstrap), shared by every seat and estimator, so replicates pair: the mean over seats
gets its interval from the same draws.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games import GameError, game_for, seats_of
from batchrl.learners.bc import behaviour_model, probabilities
from batchrl.play.ope.fqe import FrozenFQE
from batchrl.play.ope.steps import SeatSteps, player_steps
from batchrl.play.ope.weighting import ratios, weighted
from batchrl.policy import LoadedModel, ModelError, load_policy
from batchrl.store import Store, StoreError, Transitions

__all__ = ["ESTIMATORS", "OPEConfig", "OPEReport", "SeatResult", "Value", "evaluate_offline",
           "takers"]

ESTIMATORS = ("fqe", "wis", "dr")
TITLES = {"fqe": "fitted Q evaluation", "wis": "weighted importance sampling (per decision)",
          "dr": "weighted doubly robust"}


@dataclass(frozen=True)
class OPEConfig:
    """What ``batchrl ope`` is asked.

    Args:
        model: the model file whose policy is valued.
        store: the logs.
        seats: the seats the policy takes, one at a time (others as logged); empty:
            every seat that decides in the logs (or ``players``).
        players: the logged players, by name, whose decisions the policy takes, one at
            a time, in whatever seat they sit (a store that records names); a name in
            both seats of an episode: the policy takes each.
        estimators: of `ESTIMATORS`.
        boot: bootstrap replicates (0: no interval).
        seed: the bootstrap's and the forests' randomness.
        gamma: the discount.
        trees, nmin: the forests' size and the rows a node needs to be split (FQE's and
            the behaviour clone's).
        clip: the floor of a behaviour propensity (a ratio is at most 1 / clip).
        behaviour: a cloned model (``batchrl learn bc``) of the logged players; None:
            one is fitted on each seat's rows.
        jobs: threads that grow the forests.
    """

    model: Path
    store: Path | str
    seats: tuple[int, ...] = ()
    players: tuple[str, ...] = ()
    estimators: tuple[str, ...] = ESTIMATORS
    boot: int = 100
    seed: int = 0
    gamma: float = 1.0
    trees: int = 50
    nmin: int = 20
    clip: float = 0.01
    behaviour: Path | None = None
    jobs: int = -1

    def __post_init__(self) -> None:
        if unknown := [e for e in self.estimators if e not in ESTIMATORS]:
            raise ValueError(f"no estimator {', '.join(unknown)}: the estimators are "
                             f"{', '.join(ESTIMATORS)}")
        if not self.estimators:
            raise ValueError("name at least one estimator")
        if self.seats and self.players:
            raise ValueError("take seats (--seat) or players by name (--player), not both")
        if self.boot < 0 or self.boot == 1:
            raise ValueError(f"--boot {self.boot}: 0 (no interval) or at least 2 replicates")
        if not 0 < self.clip <= 1:
            raise ValueError(f"--clip {self.clip}: a propensity floor in (0, 1]")
        if not 0 <= self.gamma <= 1:
            raise ValueError(f"--gamma {self.gamma}: in [0, 1]")
        if self.trees < 1 or self.nmin < 2:
            raise ValueError(f"--trees {self.trees}, --nmin {self.nmin}: at least 1 and 2")


@dataclass(frozen=True)
class Value:
    """One estimator's value with its 95% bootstrap interval (NaN: none)."""

    estimator: str
    value: float
    low: float
    high: float
    why: str = ""  # why there is no value, where there is none

    def as_dict(self) -> dict[str, Any]:
        return {"estimator": self.estimator, "value": _num(self.value),
                "low": _num(self.low), "high": _num(self.high),
                **({"why": self.why} if self.why else {})}


@dataclass(frozen=True)
class SeatResult:
    """The policy in one seat: its values, and how far the logs support it.

    ``decisions``: the seat's logged steps; ``episodes``: those where it decides
    (``left_out``: where it does not); ``unsupported``: the share of its steps where the
    policy's move has a behaviour propensity under the clip; ``unvalued``: where the logs
    never make that move at all (FQE cannot value it); ``follows``: the share of episodes
    whose every logged move is the policy's; ``ess``: the importance weights' effective
    sample size (of ``episodes``)."""

    who: str  # "seat 0", or a player's name
    decisions: int
    episodes: int
    left_out: int
    unsupported: float
    unvalued: float
    follows: float
    ess: float
    values: tuple[Value, ...]
    iterations: int = 0
    # episodes where it never decides counted at their logged result (a zero-sum game's
    # one seat without a decision); ``left_out``: those whose result is unknown
    counted: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"who": self.who, "decisions": self.decisions, "episodes": self.episodes,
                "left_out": self.left_out, "unsupported": self.unsupported,
                "unvalued": self.unvalued, "follows": self.follows, "ess": self.ess,
                "fqe_iterations": self.iterations, "counted": self.counted,
                "values": [v.as_dict() for v in self.values]}


@dataclass(frozen=True)
class OPEReport:
    """``batchrl ope``'s answer: per seat, and the mean over the seats taken."""

    game: str
    unit: str
    model: str
    store: str
    boot: int
    seats: tuple[SeatResult, ...]
    mean: tuple[Value, ...] = field(default=())

    def value(self, estimator: str) -> Value:
        """The estimator's value over the seats taken (the one seat's, if one)."""
        values = self.mean if len(self.seats) > 1 else self.seats[0].values
        return next(v for v in values if v.estimator == estimator)

    def table(self) -> str:
        lines = [f"off-policy value of {self.model} taking a seat of {self.store} "
                 f"({self.game}), the other seats as logged",
                 f"unit: {self.unit}",
                 "95% intervals: bootstrap over episodes, " + (
                     f"{self.boot} replicates" if self.boot else "none asked (--boot 0)")]
        width = max(len(TITLES[v.estimator]) for s in self.seats for v in s.values)
        for s in self.seats:
            lines.append(f"{s.who}: {s.episodes:,} episodes, {s.decisions:,} decisions"
                         + (f"; {s.counted:,} episodes where it never decides counted at "
                            "their logged result" if s.counted else "")
                         + (f"; {s.left_out:,} episodes where it never decides left out"
                            if s.left_out else ""))
            for v in s.values:
                lines.append(f"  {v.estimator:<4} {TITLES[v.estimator]:<{width}}  "
                             f"{_shown(v)}")
            lines.append(f"  support: {s.follows:.1%} of episodes follow the policy "
                         f"throughout; effective sample size {s.ess:,.1f}")
            if s.unsupported:
                lines.append(f"  warning: in {s.unsupported:.1%} of decisions the policy plays "
                             f"a move the logs hardly make there (probability under the "
                             f"clip{f'; never at all in {s.unvalued:.1%}' if s.unvalued else ''}"
                             f"): no estimator sees what it earns; FQE and DR extrapolate "
                             f"the trees, WIS leaves those episodes out, and the intervals "
                             f"do not hold that")
        if len(self.seats) > 1:
            lines.append(f"mean over {', '.join(s.who for s in self.seats)}:")
            for v in self.mean:
                lines.append(f"  {v.estimator:<4} {TITLES[v.estimator]:<{width}}  "
                             f"{_shown(v)}")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {"game": self.game, "unit": self.unit, "model": self.model,
                "store": self.store, "boot": self.boot,
                "seats": [s.as_dict() for s in self.seats],
                "mean": [v.as_dict() for v in self.mean]}


def takers(config: OPEConfig) -> int:
    """How many results ``config`` asks for (the players or seats taken), from the store's
    schema alone: what a progress bar counts bootstraps by."""
    if config.players or config.seats:
        return len(config.players or config.seats)
    schema = Store.open(config.store).schema
    return seats_of(schema.game, schema.game_params) or 1


def evaluate_offline(config: OPEConfig,
                     progress: Callable[[str, int, int], None] | None = None) -> OPEReport:
    """The model's policy valued from the store's logs (see the module doc).

    Raises:
        StoreError: a store that cannot be read, or no seat to take.
        ModelError: a model that does not fit the store's game.
        ValueError: settings it cannot take.
    """
    say = progress or (lambda what, done, total: None)
    opened = Store.open(config.store)
    schema = opened.schema
    try:
        game = game_for(schema.game, schema.game_params)
    except GameError as exc:
        raise StoreError(f"{config.store}: {exc}") from None
    params = game.log.params_from_store(schema.game, schema.game_params)
    try:
        loaded = game.load_model(config.model, params)
    except GameError as exc:
        raise ModelError(str(exc)) from None
    n_seats = game.rules.num_players(params)
    data = opened.arrays(seats=n_seats)
    model = _on_store(loaded, data)
    decided = sorted(int(s) for s in np.unique(data.player))
    if missing := [s for s in config.seats if s not in decided]:
        raise StoreError(f"{config.store}: seat {missing[0]} takes no decision in its logs "
                         f"(the seats that do: {', '.join(map(str, decided))})")
    none = (np.zeros(0, np.int64), np.zeros(0))
    taken = [(name, opened.rows_of([name]), none) for name in config.players] or \
        [(f"seat {s}", data.player == s, _outside(data, s, n_seats, game.rules.zero_sum))
         for s in (config.seats or decided)]
    rng = np.random.default_rng(config.seed)
    draws = rng.exponential(size=(config.boot, len(data.episode_ids)))
    results, replicates = [], []
    for who, mine, outside in taken:
        result, reps = _seat(config, data, player_steps(data, mine, who), model, draws, say,
                             outside)
        results.append(result)
        replicates.append(reps)
    mean: tuple[Value, ...] = ()
    if len(results) > 1:
        mean = tuple(_value(e, float(np.mean([r.values[i].value for r in results])),
                            _paired_mean([reps.get(e, np.zeros(0)) for reps in replicates]),
                            next((r.values[i].why for r in results if r.values[i].why), ""))
                     for i, e in enumerate(config.estimators))
    return OPEReport(game.name, game.log.reward_unit(params), str(config.model),
                     str(config.store), config.boot, tuple(results), mean)


def _on_store(loaded: LoadedModel, data: Transitions) -> LoadedModel:
    """The model reading the store's own columns (found by name)."""
    index = {n: i for i, n in enumerate(data.feature_names)}
    if missing := [n for n in loaded.policy.feature_names if n not in index]:
        raise ModelError(f"{loaded.path} reads features the store does not hold "
                         f"({', '.join(missing[:5])}): it was trained on other data")
    return replace(loaded, columns=np.asarray([index[n] for n in loaded.policy.feature_names],
                                              dtype=np.intp))


def _outside(data: Transitions, seat: int, n_seats: int, zero_sum: bool
             ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """The episodes where ``seat`` never decides whose result for it the rows still give,
    and that result: in a zero-sum game where it is the one seat without a decision (a
    big blind that everyone folds to), minus the others' rewards. Its policy changes
    nothing there, but its value counts them (none known: empty)."""
    if not zero_sum:
        return np.zeros(0, np.int64), np.zeros(0)
    episodes = len(data.episode_ids)
    seen = np.zeros((episodes, n_seats), dtype=bool)
    seen[data.episode, data.player.astype(np.int64)] = True
    known = ~seen[:, seat] & (seen.sum(axis=1) == n_seats - 1)
    totals = np.bincount(data.episode, weights=data.reward, minlength=episodes).astype(float)
    codes = np.flatnonzero(known).astype(np.int64)
    return codes, -totals[codes]


def _seat(config: OPEConfig, data: Transitions, steps: SeatSteps, model: LoadedModel,
          draws: NDArray[np.float64], say: Callable[[str, int, int], None],
          outside: tuple[NDArray[np.int64], NDArray[np.float64]]
          ) -> tuple[SeatResult, dict[str, NDArray[np.float64]]]:
    """The result of the policy taking ``steps``, and each estimator's bootstrap
    replicates; the episodes ``outside`` (where it never decides, their results known)
    count at their logged results."""
    seat = steps.who
    n_actions = len(data.action_names)
    moves = model.act_batch(steps.state, steps.legal)
    weights = draws[:, data.episode[steps.rows[steps.first]]]
    propensity = _propensities(config, steps, data.feature_names, n_actions)
    mu_policy = propensity[np.arange(len(steps)), moves]
    mu_logged = propensity[np.arange(len(steps)), steps.action]
    ratio = ratios(steps, moves, mu_logged, config.clip)
    wanted = set(config.estimators)
    fqe = logged_q = policy_v = None
    if wanted & {"fqe", "dr"}:
        say(f"{seat}: forests grown", 0, 1)
        fqe = FrozenFQE(steps, moves, n_actions, config.gamma, config.trees, config.nmin,
                        config.seed, config.jobs)
        say(f"{seat}: forests grown", 1, 1)
        logged_q, policy_v = fqe.solve()
    tables = weighted(steps, ratio, config.gamma, logged_q, policy_v)
    # a move the seat's logs never make has no Q: FQE and DR (which rests on it) then
    # give no value rather than a number that counted it as 0
    unvalued = fqe is not None and bool(fqe.unvalued.any())
    point: dict[str, float] = {"wis": tables.wis()}
    if fqe is not None and policy_v is not None:
        point["fqe"] = float("nan") if unvalued else fqe.estimate(policy_v)
    if "dr" in wanted:
        point["dr"] = float("nan") if unvalued else tables.dr()
    drawn = [e for e in ("fqe", "wis", "dr") if e in point and not np.isnan(point[e])
             and (e != "fqe" or "fqe" in wanted)]
    reps: dict[str, NDArray[np.float64]] = {e: np.empty(len(weights)) for e in drawn}
    for b, w in enumerate(weights):  # every estimator under each draw, the bar a draw
        if "fqe" in reps and fqe is not None and policy_v is not None:
            reps["fqe"][b] = fqe.replicate(w, policy_v)
        if "wis" in reps:
            reps["wis"][b] = tables.wis(w)
        if "dr" in reps:
            reps["dr"][b] = tables.dr(w)
        say(f"{seat}: bootstrap", b + 1, len(weights))
    why = {"fqe": "the policy plays moves the logs never make",
           "wis": "no logged episode follows the policy throughout",
           "dr": "the policy plays moves the logs never make"}
    codes, results = outside
    if len(codes):  # averaged in, weighted as the steps' episodes are, draw by draw
        decided, out_w = float(steps.episodes), draws[:, codes]
        point = {e: (decided * v + results.sum()) / (decided + len(codes))
                 for e, v in point.items()}
        reps = {e: (weights.sum(axis=1) * r + out_w @ results) /
                (weights.sum(axis=1) + out_w.sum(axis=1)) if len(r) else r
                for e, r in reps.items()}
    values = tuple(_value(e, point[e], reps.get(e, np.zeros(0)), why[e])
                   for e in config.estimators)
    follows = float(np.mean(tables.w[:, -1] > 0)) if tables.w.size else 0.0
    return SeatResult(seat, len(steps), steps.episodes, steps.left_out - len(codes),
                      float(np.mean(mu_policy < config.clip)),
                      float(np.mean(fqe.unvalued)) if fqe is not None else 0.0, follows,
                      tables.ess(), values, fqe.iterations if fqe is not None else 0,
                      len(codes)), reps


def _propensities(config: OPEConfig, steps: SeatSteps, names: Sequence[str],
                  n_actions: int) -> NDArray[np.float64]:
    """The behaviour clone's probability of each move at each step, among the legal ones
    (uniform where it gives the legal moves none)."""
    if config.behaviour is not None:
        policy = load_policy(config.behaviour)
        given = getattr(policy, "probabilities", None)
        if given is None:
            raise ModelError(f"{config.behaviour} gives no probabilities of the moves: the "
                             "behaviour model is a clone (batchrl learn bc)")
        index = {n: i for i, n in enumerate(names)}
        if missing := [n for n in policy.feature_names if n not in index]:
            raise ModelError(f"{config.behaviour} reads features the store does not hold "
                             f"({', '.join(missing[:5])})")
        if len(policy.action_names) != n_actions:
            raise ModelError(f"{config.behaviour} has {len(policy.action_names)} moves, not "
                             f"the store's {n_actions}")
        p = np.asarray(given(steps.state[:, [index[n] for n in policy.feature_names]]),
                       dtype=np.float64)
    else:
        forest = behaviour_model(steps.state, steps.action, n_actions, config.trees,
                                 config.nmin, config.seed, config.jobs)
        p = probabilities(forest, steps.state)
    p = np.clip(p, 0.0, None) * steps.legal
    total = p.sum(axis=1, keepdims=True)
    uniform = steps.legal / np.maximum(steps.legal.sum(axis=1, keepdims=True), 1)
    out: NDArray[np.float64] = np.where(total > 0, p / np.where(total > 0, total, 1), uniform)
    return out


def _paired_mean(replicates: list[NDArray[np.float64]]) -> NDArray[np.float64]:
    """The seats' replicates averaged draw by draw (none where a seat has none)."""
    if any(len(r) != len(replicates[0]) or not len(r) for r in replicates):
        return np.zeros(0)
    out: NDArray[np.float64] = np.mean(replicates, axis=0)
    return out


def _value(estimator: str, value: float, replicates: NDArray[np.float64], why: str = ""
           ) -> Value:
    """The estimate with its percentile interval (none from fewer than 2 replicates, or
    where a replicate has no value); ``why``: what a NaN value means."""
    if np.isnan(value):
        return Value(estimator, value, float("nan"), float("nan"), why)
    if len(replicates) < 2 or not np.isfinite(replicates).all():
        return Value(estimator, value, float("nan"), float("nan"))
    low, high = np.percentile(replicates, [2.5, 97.5])
    return Value(estimator, value, float(low), float(high))


def _shown(v: Value) -> str:
    if np.isnan(v.value):
        return f"no value: {v.why or 'none'}"
    if np.isnan(v.low):
        return f"{v.value:+.4f}"
    return f"{v.value:+.4f}  [{v.low:+.4f}, {v.high:+.4f}]"


def _num(x: float) -> float | None:
    return None if np.isnan(x) else float(x)

