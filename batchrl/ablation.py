"""Attribute ablation: which features a hero needs, with confidence intervals.

The thesis (section 5.2, Figure 5.6) trained one hero per left-out attribute
and compared single 3,000-hand results. Here every hero — the full one and one
per dropped feature or group — is evaluated on the same duplicate deals with
the same seed, so the difference to the full hero is a paired difference over
common random numbers: per deal, (ablated pair sum − full pair sum) / 2, whose
mean and 95% interval are the change in bb/hand. A control row, the full hero
retrained from the next FQI seed, shows how much retraining alone moves the
result: a dropped feature matters when its change is beyond both zero and that.
Two cheap measures sit beside it: the full Q-forest's impurity importances,
and the permutation importance of each feature on held-out Bellman targets
(episodes the probe model never saw). Heroes and per-hand results are cached under ``out`` by their
parameters, so a rerun reuses everything finished.

>>> groups = parse_groups({"betting": ["bet_flop", "bet_turn"]}, ("pv", "bet_flop", "bet_turn"))
>>> groups
{'betting': ('bet_flop', 'bet_turn')}
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from batchrl.evaluation import mean_ci
from batchrl.experiments import Hero, data_digest, train
from batchrl.filenames import inside
from batchrl.games.holdem.bots import BOT_NAMES, load_models
from batchrl.policy import GreedyPolicy, LoadedModel, QFunction
from batchrl.store import Store, StoreError, Transitions
from batchrl.store.place import outputs_beside

FULL = "(none)"
RETRAINED = "(retrained)"  # the control: the full hero again, from the next FQI seed


@dataclass(frozen=True)
class AblationConfig:
    store: Path | str  # a directory, or a URL to read a store from
    opponent: str = "rule"
    trees: int = 50
    nmin: int = 20
    iters: int = 11
    hands: int = 20_000  # duplicate: hands / 2 deals, each played twice
    seed: int = 33  # evaluation seed, shared by every hero (common random numbers)
    fqi_seed: int = 0
    features: tuple[str, ...] | None = None  # the features to drop one at a time; None all
    groups: Mapping[str, tuple[str, ...]] | None = None  # named groups dropped together
    players: tuple[str, ...] = ()
    fast: bool = True
    per_action: bool = False
    jobs: int = -1
    holdout: float = 0.2  # share of episodes held out for the permutation importance
    permutation_rows: int = 20_000
    permutation_repeats: int = 5
    max_half_width: float = 0.05  # wanted precision of each change, bb/hand (a note if missed)
    out: Path | None = None  # default: STORE/ablation
    scheduler: str | None = None  # a Dask scheduler: one task per hero (train and play)

    def full_hero(self) -> Hero:
        return Hero(trees=self.trees, nmin=self.nmin, iters=self.iters, seed=self.fqi_seed,
                    fast=self.fast, per_action=self.per_action, players=self.players)


@dataclass
class AblationResult:
    table: pd.DataFrame  # one row per dropped feature or group, the full hero first
    seconds: dict[str, float] = field(default_factory=dict)  # training, evaluation, importances
    path: Path | None = None  # where the table was written (CSV, Parquet beside it)
    max_half_width: float = 0.05

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
        return (f"note: {worst}'s change has a 95% CI half-width of {widest:.3f} bb/hand, over "
                f"the {self.max_half_width} wanted: about --hands {needed:,} would do")

    def text(self) -> str:
        t = self.table
        lines = [f"{'dropped':<16}{'bb/hand':>9}{'change':>9}  {'95% CI of change':>19}"
                 f"{'impurity':>10}{'permutation':>13}"]
        for _, r in t.iterrows():
            ci = "" if r["dropped"] == FULL else \
                f"[{r['change_low']:+7.3f}, {r['change_high']:+7.3f}]"
            change = "" if r["dropped"] == FULL else f"{r['change']:+9.3f}"
            lines.append(f"{r['dropped']:<16}{r['bb_per_hand']:+9.3f}{change:>9}  {ci:>19}"
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


def _per_hand(model: Path, policy: GreedyPolicy, config: AblationConfig, cache: Path,
              opponents: Mapping[str, LoadedModel]) -> NDArray[np.float64]:
    """The hero's bb won per hand on the shared duplicate deals (cached)."""
    from batchrl.games.holdem.evaluate import play_bots

    key = inside(cache, f"{model.stem}--{config.opponent.replace('/', '_')}-{config.hands}-"
                        f"{config.seed}-crn.npy")
    if key.exists() and key.stat().st_mtime_ns >= model.stat().st_mtime_ns:
        loaded: NDArray[np.float64] = np.load(key)
        return loaded
    match = play_bots(str(model), config.opponent, config.hands, config.seed, duplicate=True,
                      keyed=True, models={**opponents, str(model): policy})
    won = match.payoffs[:, 0] / match.game.big_blind
    tmp = key.with_name(f".{key.name}.tmp-{os.getpid()}.npy")
    np.save(tmp, won)
    os.replace(tmp, key)  # a killed run never leaves a truncated result to reuse
    return won


def _hero_task(config: AblationConfig, hero: Hero, models: Path, cache: Path,
               digest: str) -> tuple[Path, NDArray[np.float64], float, float]:
    """On a worker: the hero trained (with the worker's threads) and played on the shared
    deals; its model and result are written under ``models`` and ``cache`` as a local run
    writes them, and the per-hand result comes back with the seconds each step took."""
    try:
        from distributed import get_worker

        jobs = max(1, int(getattr(get_worker(), "nthreads", 1) or 1))
    except (ImportError, ValueError):
        jobs = 1
    began = time.perf_counter()
    path, policy = train(config.store, hero, models, jobs, digest)
    trained = time.perf_counter()
    won = _per_hand(path, policy, config, cache, load_models([config.opponent]))
    return path, won, trained - began, time.perf_counter() - trained


def _heroes_on_cluster(config: AblationConfig, heroes: Sequence[tuple[str, Hero]],
                       models: Path, cache: Path, digest: str, paths: dict[str, Path],
                       results: dict[str, NDArray[np.float64]], seconds: dict[str, float],
                       say: Callable[[str], None]) -> None:
    """Every hero as one task on the cluster at ``config.scheduler``. A hero's FQI is set by
    its seed and the deals by ``config.seed``, so each result is the local run's. The
    workers read the store and write the models where this process would: the store and
    ``--out`` must be on a filesystem they share with it."""
    from batchrl.cluster import connect

    run = uuid.uuid4().hex[:12]
    with connect(config.scheduler) as client:
        futures = {dropped: client.submit(_hero_task, config, hero, models, cache, digest,
                                          key=f"batchrl-ablate-{run}-{i}")
                   for i, (dropped, hero) in enumerate(heroes)}
        say(f"{len(futures)} heroes sent to {config.scheduler}")
        for dropped, future in futures.items():
            paths[dropped], results[dropped], trained, played = future.result()
            seconds["training"] += trained
            seconds["evaluation"] += played
            say(f"{dropped}: trained and played on the cluster")


def check(config: AblationConfig, store: Store) -> None:
    """Refuse what would fail only after the first hero's training."""
    if "raise_size" not in store.schema.game_params:
        raise StoreError(f"{config.store} holds {store.schema.game}: batchrl ablate plays "
                         "hold'em heroes (other games: use the ablation functions directly)")
    if config.hands < 4 or config.hands % 2:
        raise ValueError(f"--hands {config.hands}: duplicate play needs an even number, "
                         "at least 4")
    if config.opponent not in BOT_NAMES and not Path(
            config.opponent.removeprefix("model:")).is_file():
        raise ValueError(f"--opponent {config.opponent!r}: want {', '.join(BOT_NAMES)} or a "
                         "model file")


def impurity_importances(q: QFunction, names: Sequence[str]) -> dict[str, float]:
    """Mean decrease in impurity per state feature, averaged over the Q-forest(s)."""
    forests = [m for m in q.models if m is not None]
    per = np.mean([f.feature_importances_[: len(names)] for f in forests], axis=0)
    return dict(zip(names, (per / per.sum()).tolist(), strict=True))


def permutation_importances(
    q: Any, data: Transitions, groups: Mapping[str, tuple[str, ...]], rng: np.random.Generator,
    repeats: int = 5, gamma: float = 1.0,
) -> dict[str, tuple[float, float]]:
    """Rise in the mean squared Bellman error on ``data`` when a group's columns are
    shuffled across rows: (mean, sd) over ``repeats`` shuffles, per group."""
    legal_next = np.where(data.next_legal, q.q_values(data.next_state), -np.inf)
    best = np.max(legal_next, axis=1)
    ends = data.terminal | ~np.isfinite(best)
    target = data.reward + gamma * np.where(ends, 0.0, best)
    rows = np.arange(len(data))

    def error(states: NDArray[np.float32]) -> float:
        return float(np.mean((q.q_values(states)[rows, data.action] - target) ** 2))

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


def run_ablation(config: AblationConfig,
                 on_step: Callable[[str], None] | None = None) -> AblationResult:
    """Train and evaluate the full hero and one hero per dropped feature or group."""
    from batchrl.fqi import FQI, extra_trees
    from batchrl.training import FAST_FREEZE_AFTER

    store = Store.open(config.store)
    store.check()
    check(config, store)
    names = store.schema.feature_names
    variants = _variants(config, names)
    out = config.out or outputs_beside(config.store) / "ablation"
    models, cache = out / "models", out / "results"
    cache.mkdir(parents=True, exist_ok=True)
    seconds = {"training": 0.0, "evaluation": 0.0, "importances": 0.0}
    say = on_step or (lambda message: None)
    full = config.full_hero()
    results: dict[str, NDArray[np.float64]] = {}
    paths: dict[str, Path] = {}
    digest = data_digest(config.store)
    opponents = load_models([config.opponent])  # an opponent model is read once
    full_q: QFunction | None = None
    heroes = [(FULL, full), (RETRAINED, full.with_(seed=full.seed + 1)),
              *((d, full.with_(drop=m)) for d, m in variants.items())]
    if config.scheduler is not None:
        _heroes_on_cluster(config, heroes, models, cache, digest, paths, results, seconds, say)
        full_q = GreedyPolicy.load(paths[FULL]).artifact.q
    for dropped, hero in heroes:
        if dropped in results:
            continue
        say(f"{dropped}: training {hero.name}")
        began = time.perf_counter()
        paths[dropped], policy = train(config.store, hero, models, config.jobs, digest)
        seconds["training"] += time.perf_counter() - began
        if dropped == FULL:
            full_q = policy.artifact.q
        say(f"{dropped}: {config.hands:,} duplicate hands against {config.opponent}")
        began = time.perf_counter()
        results[dropped] = _per_hand(paths[dropped], policy, config, cache, opponents)
        del policy  # one forest in memory at a time, besides the full hero's Q
        seconds["evaluation"] += time.perf_counter() - began

    say("importances: impurity, and permutation on held-out episodes")
    began = time.perf_counter()
    assert full_q is not None
    impurity = impurity_importances(full_q, names)
    data = store.arrays(players=config.players)
    rng = np.random.default_rng(config.fqi_seed)
    held = rng.random(len(data.episode_ids)) < config.holdout
    test_rows = held[data.episode]
    probe = FQI(extra_trees(config.trees, config.nmin, None, config.jobs),
                n_iterations=config.iters, per_action=config.per_action,
                freeze_after=FAST_FREEZE_AFTER if config.fast else None,
                random_state=config.fqi_seed).fit(data.rows(~test_rows))
    test = data.rows(test_rows)
    if len(test) > config.permutation_rows:
        sample = np.zeros(len(test), dtype=bool)
        sample[rng.choice(len(test), config.permutation_rows, replace=False)] = True
        test = test.rows(sample)
    permutation = permutation_importances(probe.q_function(), test, variants, rng,
                                          config.permutation_repeats)
    seconds["importances"] += time.perf_counter() - began

    base = results[FULL]
    rows = []
    for dropped, hero in heroes:
        members = hero.drop
        won = results[dropped]
        absolute = mean_ci(won, per_unit=2)
        change = mean_ci(won - base, per_unit=2)
        perm = permutation.get(dropped, (np.nan, np.nan))
        rows.append({
            "dropped": dropped, "features": ",".join(members), "hero": paths[dropped].stem,
            "opponent": config.opponent, "hands": config.hands, "seed": config.seed,
            "bb_per_hand": absolute.mean, "ci_low": absolute.low, "ci_high": absolute.high,
            "change": change.mean if dropped != FULL else 0.0,
            "change_low": change.low if dropped != FULL else 0.0,
            "change_high": change.high if dropped != FULL else 0.0,
            "change_half_width": change.half_width if dropped != FULL else 0.0,
            "impurity": sum(impurity[m] for m in members) if members else np.nan,
            "permutation": perm[0], "permutation_sd": perm[1],
        })
    table = pd.DataFrame(rows)
    stem = f"ablation-{full.name}-{config.opponent.replace('/', '_')}-{config.hands}-" \
           f"{config.seed}" + ("-groups" if config.groups else "")
    path = inside(out, f"{stem}.csv")
    table.to_csv(path, index=False)
    table.to_parquet(path.with_suffix(".parquet"), index=False)
    return AblationResult(table, seconds, path, config.max_half_width)
