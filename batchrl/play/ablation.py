"""Attribute ablation: which features a hero needs, with confidence intervals, for any
learner on any game.

The thesis (section 5.2, Figure 5.6) trained one hero per left-out attribute
and compared single 3,000-hand results. Here every hero — the full one and one
per dropped feature or group, each learned by the same learner (``fqi`` by
default, any of ``batchrl.learners``) — is scored by its game (``PlayFace.score``)
against the game's ablation opponents on the same deals with the same seed, so
the difference to the full hero is a paired difference over common random
numbers (hold'em: per deal, (ablated pair sum − full pair sum) / 2, in bb/hand;
sette e mezzo: exact expected stakes, no sampling). A control row, the full hero
retrained from the learner's next seed, shows how much retraining alone moves
the result: a dropped feature matters when its change is beyond both zero and
that. Two cheap measures sit beside it: the full hero's impurity importances
(a forest's), and the permutation importance of each feature on held-out
episodes the probe model never saw (the rise in Bellman error for a policy with
values, else the fall in agreement with the logged moves). Heroes and per-game
results are cached under ``out`` by their parameters, so a rerun reuses
everything finished.

>>> groups = parse_groups({"betting": ["bet_flop", "bet_turn"]}, ("pv", "bet_flop", "bet_turn"))
>>> groups
{'betting': ('bet_flop', 'bet_turn')}
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from batchrl.cluster import connect
from batchrl.evaluation import mean_ci
from batchrl.filenames import inside, safe_name
from batchrl.games import Game, GameError, Scores, game_for
from batchrl.games.play import absolute_player, player_file
from batchrl.learners import Learner, LearnerError, get_learner
from batchrl.learning import Settings, learn, settings, settings_name, store_digest
from batchrl.policy import ModelError, load_policy, policy_meta
from batchrl.store import Store, StoreError, Transitions
from batchrl.store.place import is_url, outputs_beside

FULL = "(none)"
RETRAINED = "(retrained)"  # the control: the full hero again, from the learner's next seed
# settings of the learner that AblationConfig names (each where the learner takes it)
SHORTHANDS = ("trees", "nmin", "iters", "fast", "per_action")


@dataclass(frozen=True)
class AblationConfig:
    store: Path | str  # a directory, or a URL to read a store from
    opponent: str | None = None  # comma-separated players after the hero; None: the game's
    # the learner's settings of these names, where it has them (None: the game's
    # recommendation, else the learner's default)
    trees: int | None = None
    nmin: int | None = None
    iters: int | None = None
    hands: int = 20_000  # hold'em: duplicate, hands / 2 deals, each played twice
    seed: int = 33  # evaluation seed, shared by every hero (common random numbers)
    fqi_seed: int = 0  # the learner's seed (its ``seed`` setting); the control's is the next
    features: tuple[str, ...] | None = None  # the features to drop one at a time; None all
    groups: Mapping[str, tuple[str, ...]] | None = None  # named groups dropped together
    players: tuple[str, ...] = ()
    fast: bool | None = None
    per_action: bool | None = None
    jobs: int = -1
    holdout: float = 0.2  # share of episodes held out for the permutation importance
    permutation_rows: int = 20_000
    permutation_repeats: int = 5
    max_half_width: float = 0.05  # wanted precision of each change (a note if missed)
    out: Path | None = None  # default: STORE/ablation
    scheduler: str | None = None  # a Dask scheduler: one task per hero (train and play)
    learner: str = "fqi"
    settings: Mapping[str, Any] = field(default_factory=dict)  # the learner's, over the above


@dataclass
class AblationResult:
    table: pd.DataFrame  # one row per dropped feature or group, the full hero first
    seconds: dict[str, float] = field(default_factory=dict)  # training, evaluation, importances
    path: Path | None = None  # where the table was written (CSV, Parquet beside it)
    max_half_width: float = 0.05

    @property
    def score(self) -> str:
        """The score's column (``bb_per_hand``, ``hands_won``...)."""
        return str(self.table["score"].iloc[0]) if "score" in self.table else "bb_per_hand"

    @property
    def unit(self) -> str:
        return str(self.table["unit"].iloc[0]) if "unit" in self.table else "bb/hand"

    def too_wide(self) -> str | None:
        """A note when some change's interval is wider than wanted, with the hands it needs."""
        t = self.table[self.table["dropped"] != FULL]
        widest = float(t["change_half_width"].max()) if not t.empty else 0.0
        if not np.isfinite(widest):
            return "note: too few hands for a confidence interval: play more (--hands)"
        if widest <= self.max_half_width:
            return None
        hands = int(t["hands"].iloc[0])
        # the half-width shrinks as 1/sqrt(hands); round up to 10,000 hands
        needed = -(-int(hands * (widest / self.max_half_width) ** 2) // 10_000) * 10_000
        worst = t["dropped"].iloc[int(np.argmax(t["change_half_width"].to_numpy()))]
        return (f"note: {worst}'s change has a 95% CI half-width of {widest:.3f} {self.unit}, "
                f"over the {self.max_half_width} wanted: about --hands {needed:,} would do")

    def text(self) -> str:
        t = self.table
        score = self.score
        lines = [f"{'dropped':<16}{score:>13}{'change':>9}  {'95% CI of change':>19}"
                 f"{'impurity':>10}{'permutation':>13}   ({self.unit})"]
        for _, r in t.iterrows():
            ci = "" if r["dropped"] == FULL else \
                f"[{r['change_low']:+7.3f}, {r['change_high']:+7.3f}]"
            change = "" if r["dropped"] == FULL else f"{r['change']:+9.3f}"
            lines.append(f"{r['dropped']:<16}{r[score]:+13.3f}{change:>9}  {ci:>19}"
                         f"{r['impurity']:>10.3f}{r['permutation']:>13.3f}")
        total = sum(self.seconds.values())
        if note := self.too_wide():
            lines.append(note)
        lines.append("")
        lines.append("time: " + ", ".join(f"{k} {v:.0f} s" for k, v in self.seconds.items())
                     + f"; total {total:.0f} s")
        return "\n".join(lines)


def parse_groups(raw: Mapping[str, Sequence[str]],
                 names: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Named groups of features, checked against the store's feature names."""
    groups = {str(k): tuple(v) for k, v in raw.items()}
    for group, members in groups.items():
        if not members or [m for m in members if m not in names]:
            raise StoreError(f"group {group!r}: unknown or no features "
                             f"{[m for m in members if m not in names]}; the store's features "
                             f"are {list(names)}")
    return groups


def load_groups(path: Path, names: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Groups from a JSON file: ``{"betting": ["bet_preflop", "bet_flop"], ...}``."""
    try:
        raw = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise StoreError(f"{path}: not a JSON object of feature groups ({exc})") from None
    if not isinstance(raw, dict):
        raise StoreError(f"{path}: want a JSON object mapping group names to feature lists")
    return parse_groups(raw, names)


def _variants(config: AblationConfig, names: Sequence[str]) -> dict[str, tuple[str, ...]]:
    if config.groups:
        return parse_groups(config.groups, names)
    chosen = config.features if config.features is not None else tuple(names)
    if unknown := [f for f in chosen if f not in names]:
        raise StoreError(f"unknown features {unknown}; the store's features are {list(names)}")
    return {f: (f,) for f in chosen}


@dataclass(frozen=True)
class Plan:
    """What every hero of one ablation shares: the game, the learner and its settings,
    the players the heroes meet, and where models and results go."""

    game: Game
    params: Any  # the store's game params: what every hero is scored with
    learner: Learner
    full: Settings
    opponents: tuple[str, ...]
    models: Path
    cache: Path
    digest: str


def plan(config: AblationConfig, store: Store) -> Plan:
    """The ablation's game, learner, full settings and opponents; refuses what would fail
    only after the first hero's training."""
    try:
        game = game_for(store.schema.game, store.schema.game_params)
    except GameError as exc:
        raise StoreError(f"{config.store}: {exc}") from None
    if not game.can("score"):
        raise StoreError(f"{config.store} holds {game.name}, which cannot score a player "
                         "game by game (PlayFace.score): batchrl ablate cannot compare heroes")
    learner = get_learner(config.learner)
    given = {k: getattr(config, k) for k in SHORTHANDS if getattr(config, k) is not None}
    if unknown := [k for k in [*given, *config.settings] if not learner.takes(k)]:
        raise LearnerError(f"{learner.name} has no setting {', '.join(unknown)}: its "
                           f"settings are {', '.join(n for n, *_ in learner.settings())}")
    if learner.takes("seed"):
        given["seed"] = config.fqi_seed
    full = settings(learner, config.store, {**given, **config.settings}, views=False)
    params = game.log.params_from_store(store.schema.game, store.schema.game_params)
    opponents = _opponents(config, game, params)
    if why := game.play.score_count(config.hands, params):
        raise ValueError(f"--hands {config.hands}: {why}")
    out = Path(config.out) if config.out is not None else \
        outputs_beside(config.store) / "ablation"
    return Plan(game, params, learner, full, opponents, out / "models", out / "results",
                store_digest(store))


def _opponents(config: AblationConfig, game: Game, params: Any) -> tuple[str, ...]:
    """The players after the hero: ``--opponent`` (one name fills every seat the game's
    own opponents take), else the game's; model files by their absolute paths (a
    cluster's workers read them from elsewhere)."""
    own = game.play.ablation_players(params)
    if config.opponent is None:
        return own
    given = tuple(o.strip() for o in config.opponent.split(",") if o.strip())
    if len(given) == 1 and len(own) > 1:
        given = given * len(own)
    for name in given:
        path = player_file(name)
        if name not in game.play.bots and name != "random" and not name.startswith("python:") \
                and (path is None or not path.is_file()):
            raise ValueError(f"--opponent {name!r}: want one of {', '.join(game.play.bots)}, a "
                             "model file or python:MODULE:CALLABLE")
    return tuple(absolute_player(name) for name in given)


def _stamp(players: Sequence[str]) -> str:
    """What the results of a hero against ``players`` depend on beyond their names: each
    file's size and time of change (an opponent retrained is another opponent)."""
    parts = []
    for name in players:
        path = player_file(name)
        if path is not None and path.is_file():
            stat = path.stat()
            parts.append(f"{path}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:8] if parts else "bots"


def _hero(chosen: Settings, drop: tuple[str, ...] = (), seed: int | None = None) -> Settings:
    """The full hero's settings with ``drop`` left out too (and another seed)."""
    config = chosen.config if seed is None else replace(chosen.config, seed=seed)
    return Settings(config, chosen.features, (*chosen.drop, *drop), chosen.said)


def train(config: AblationConfig, p: Plan, hero: Settings, jobs: int) -> tuple[Path, Any]:
    """The hero's model file and policy, learned unless a model from the same data and
    settings is there already."""
    # every hero its own file: the learner's own name for a model may leave a setting out
    out = inside(p.models, settings_name(p.learner, hero.config, hero.features, hero.drop,
                                         config.players) + ".npz")
    if out.exists():
        try:
            meta = policy_meta(out)
            same = meta.get("store_digest") == p.digest and meta.get("params", {}).get(
                "drop") == list(hero.drop) and all(
                meta.get("params", {}).get(k) == v for k, v in asdict(hero.config).items())
            if same:
                return out, load_policy(out)
        except ModelError:
            pass  # a damaged model is learned again
    return learn(p.learner, config.store, hero, players=config.players, jobs=jobs, out=out)


def _scores(model: Path, config: AblationConfig, p: Plan) -> Scores:
    """The hero's score game by game against the opponents on the shared deals
    (cached)."""
    against = safe_name("_".join(Path(o).name for o in p.opponents) or "alone")
    key = inside(p.cache, f"{model.stem}--{against}-{_stamp(p.opponents)}-{config.hands}-"
                          f"{config.seed}-crn.npz")
    if key.exists() and key.stat().st_mtime_ns >= model.stat().st_mtime_ns:
        with np.load(key, allow_pickle=False) as held:
            return Scores(held["values"], str(held["name"]), str(held["unit"]),
                          int(held["per_unit"]), bool(held["exact"]))
    try:
        scored = p.game.play.score((f"model:{Path(model).resolve()}", *p.opponents), config.hands,
                              config.seed, {}, params=p.params)
    except GameError as exc:
        raise ValueError(str(exc)) from None
    tmp = key.with_name(f".{key.name}.tmp-{os.getpid()}.npz")
    np.savez(tmp, values=scored.values, name=scored.name, unit=scored.unit,
             per_unit=scored.per_unit, exact=scored.exact)
    os.replace(tmp, key)  # a killed run never leaves a truncated result to reuse
    return scored


def _hero_task(config: AblationConfig, p: Plan, hero: Settings
               ) -> tuple[Path, Scores, float, float]:
    """On a worker: the hero learned (with the worker's threads) and scored on the shared
    deals; its model and result are written under the plan's folders as a local run
    writes them, and the scores come back with the seconds each step took."""
    try:
        from distributed import get_worker  # dask: on a cluster worker only

        jobs = max(1, int(getattr(get_worker(), "nthreads", 1) or 1))
    except (ImportError, ValueError):
        jobs = 1
    began = time.perf_counter()
    path, _ = train(config, p, hero, jobs)
    trained = time.perf_counter()
    won = _scores(path, config, p)
    return path, won, trained - began, time.perf_counter() - trained


def _heroes_on_cluster(config: AblationConfig, p: Plan, heroes: Sequence[tuple[str, Settings]],
                       paths: dict[str, Path], results: dict[str, Scores],
                       seconds: dict[str, float], say: Callable[[str], None]) -> None:
    """Every hero as one task on the cluster at ``config.scheduler``. A hero's model is
    set by its settings and the deals by ``config.seed``, so each result is the local
    run's. The workers read the store and write the models where this process would: the
    store and ``--out`` must be on a filesystem they share with it."""
    run = uuid.uuid4().hex[:12]
    with connect(config.scheduler) as client:
        futures = {dropped: client.submit(_hero_task, config, p, hero,
                                          key=f"batchrl-ablate-{run}-{i}")
                   for i, (dropped, hero) in enumerate(heroes)}
        say(f"{len(futures)} heroes sent to {config.scheduler}")
        for dropped, future in futures.items():
            paths[dropped], results[dropped], trained, played = future.result()
            seconds["training"] += trained
            seconds["evaluation"] += played
            say(f"{dropped}: trained and played on the cluster")


def impurity_importances(q: Any, names: Sequence[str]) -> dict[str, float]:
    """Mean decrease in impurity per state feature, averaged over the forest(s) of a
    Q-function (``q.models``) or a policy (``importances()``); NaN where it has none."""
    forests = [m for m in getattr(q, "models", ()) if m is not None]
    if forests:
        per = np.mean([f.feature_importances_[: len(names)] for f in forests], axis=0)
    elif callable(getattr(q, "importances", None)):
        per = np.asarray(q.importances(), dtype=np.float64)[: len(names)]
    else:
        return dict.fromkeys(names, float("nan"))
    return dict(zip(names, (per / per.sum()).tolist(), strict=True))


def permutation_importances(
    q: Any, data: Transitions, groups: Mapping[str, tuple[str, ...]], rng: np.random.Generator,
    repeats: int = 5, gamma: float = 1.0,
) -> dict[str, tuple[float, float]]:
    """The rise in the mean squared Bellman error on ``data`` (a Q-function's, or a
    policy's with values) when a group's columns are shuffled across rows — for a policy
    without values, the fall in its agreement with the logged moves: (mean, sd) over
    ``repeats`` shuffles, per group."""
    values = getattr(q, "q_values", None) or getattr(q, "values", None)
    rows = np.arange(len(data))
    if values is not None:
        legal_next = np.where(data.next_legal, values(data.next_state), -np.inf)
        best = np.max(legal_next, axis=1)
        ends = data.terminal | ~np.isfinite(best)
        target = data.reward + gamma * np.where(ends, 0.0, best)

        def error(states: NDArray[np.float32]) -> float:
            return float(np.mean((values(states)[rows, data.action] - target) ** 2))
    else:
        def error(states: NDArray[np.float32]) -> float:
            return float(np.mean(q.act(states) != data.action))

    base = error(data.state)
    out = {}
    for group, members in groups.items():
        cols = [data.feature_names.index(m) for m in members]
        rises = []
        for _ in range(repeats):
            shuffled = data.state.copy()
            shuffled[:, cols] = data.state[rng.permutation(len(data))][:, cols]
            rises.append(error(shuffled) - base)
        out[group] = (float(np.mean(rises)), float(np.std(rises)))
    return out


def _change(won: Scores, base: Scores) -> tuple[float, float, float, float]:
    """The change from the full hero: mean, low, high, half-width (exact: no width)."""
    if won.exact or base.exact:
        d = float(np.mean(won.values) - np.mean(base.values))
        return d, d, d, 0.0
    c = mean_ci(won.values - base.values, per_unit=won.per_unit)
    return c.mean, c.low, c.high, c.half_width


def run_ablation(config: AblationConfig,
                 on_step: Callable[[str], None] | None = None) -> AblationResult:
    """Learn and score the full hero and one hero per dropped feature or group."""
    if config.scheduler is not None and not is_url(config.store):
        # the workers run elsewhere: every path theirs to read or write is absolute
        config = replace(config, store=Path(config.store).resolve(),
                         out=Path(config.out or outputs_beside(config.store) / "ablation")
                         .resolve())
    store = Store.open(config.store)
    store.check()
    p = plan(config, store)
    kept = store.select_features(p.full.features, p.full.drop)
    names = [store.schema.feature_names[i] for i in kept]
    variants = _variants(config, names)
    p.cache.mkdir(parents=True, exist_ok=True)
    seconds = {"training": 0.0, "evaluation": 0.0, "importances": 0.0}
    say = on_step or (lambda message: None)
    results: dict[str, Scores] = {}
    paths: dict[str, Path] = {}
    seed = getattr(p.full.config, "seed", None)
    heroes = [(FULL, p.full),
              *([(RETRAINED, _hero(p.full, seed=seed + 1))] if seed is not None
                else []),
              *((d, _hero(p.full, m)) for d, m in variants.items())]
    against = ",".join(p.opponents) or "the game alone"
    if config.scheduler is not None:
        _heroes_on_cluster(config, p, heroes, paths, results, seconds, say)
    full_policy: Any = None
    for dropped, hero in heroes:
        if dropped in results:
            continue
        say(f"{dropped}: learning with {p.learner.name}")
        began = time.perf_counter()
        paths[dropped], policy = train(config, p, hero, config.jobs)
        seconds["training"] += time.perf_counter() - began
        if dropped == FULL:
            full_policy = policy
        say(f"{dropped}: {config.hands:,} games against {against}")
        began = time.perf_counter()
        results[dropped] = _scores(paths[dropped], config, p)
        del policy  # one model in memory at a time, besides the full hero's
        seconds["evaluation"] += time.perf_counter() - began

    say("importances: impurity, and permutation on held-out episodes")
    began = time.perf_counter()
    if full_policy is None:
        full_policy = load_policy(paths[FULL])
    q = getattr(getattr(full_policy, "artifact", None), "q", full_policy)
    impurity = impurity_importances(q, names)
    data = store.arrays(features=p.full.features, drop=p.full.drop, players=config.players)
    rng = np.random.default_rng(config.fqi_seed)
    held = rng.random(len(data.episode_ids)) < config.holdout
    test_rows = held[data.episode]
    permutation: dict[str, tuple[float, float]] = {}
    if test_rows.any() and not test_rows.all():
        probe = p.learner.fit(p.full.config, data.rows(~test_rows), jobs=config.jobs)
        test = data.rows(test_rows)
        if len(test) > config.permutation_rows:
            sample = np.zeros(len(test), dtype=bool)
            sample[rng.choice(len(test), config.permutation_rows, replace=False)] = True
            test = test.rows(sample)
        probe_q = getattr(getattr(probe, "artifact", None), "q", probe)
        permutation = permutation_importances(probe_q, test, variants, rng,
                                              config.permutation_repeats)
    else:  # too few episodes to hold some out: no permutation importance (NaN)
        say(f"importances: {len(data.episode_ids)} episodes are too few to hold "
            f"{config.holdout:.0%} out; no permutation importance")
    seconds["importances"] += time.perf_counter() - began

    base = results[FULL]
    rows = []
    for dropped, hero in heroes:
        members = tuple(d for d in hero.drop if d not in p.full.drop)
        won = results[dropped]
        absolute = mean_ci(won.values, per_unit=won.per_unit) if not won.exact else None
        score = float(np.mean(won.values))
        change = _change(won, base) if dropped != FULL else (0.0, 0.0, 0.0, 0.0)
        perm = permutation.get(dropped, (np.nan, np.nan))
        rows.append({
            "dropped": dropped, "features": ",".join(members), "hero": paths[dropped].stem,
            "learner": p.learner.name, "opponent": ",".join(p.opponents),
            "hands": config.hands, "seed": config.seed, "score": won.name, "unit": won.unit,
            won.name: score,
            "ci_low": absolute.low if absolute else score,
            "ci_high": absolute.high if absolute else score,
            "change": change[0], "change_low": change[1], "change_high": change[2],
            "change_half_width": change[3],
            "impurity": sum(impurity[m] for m in members) if members else np.nan,
            "permutation": perm[0], "permutation_sd": perm[1],
        })
    table = pd.DataFrame(rows)
    stem = (f"ablation-{paths[FULL].stem}-{safe_name(','.join(p.opponents) or 'alone')}-"
            f"{config.hands}-{config.seed}" + ("-groups" if config.groups else ""))
    path = inside(p.models.parent, f"{stem}.csv")
    table.to_csv(path, index=False)
    table.to_parquet(path.with_suffix(".parquet"), index=False)
    return AblationResult(table, seconds, path, config.max_half_width)
