"""Experiments as library calls: the notebooks plot, these functions compute.

An experiment is data (``make_store``: bots play, the log is ingested), heroes
(``train``: FQI with given parameters) and their evaluation (``evaluate``:
duplicate hands against an opponent). Every hero and every result is saved
under the experiment's directory, named by its parameters, so a rerun reuses
what is finished and a notebook can be re-executed cheaply.

>>> Hero(nmin=10).name
'M100-nmin10-N11-s0'
>>> Hero(nmin=20, trees=50, fast=True, per_action=True, players=("random",)).name
'M50-nmin20-N11-s0-fast-peraction-random'
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from batchrl.filenames import inside, safe_name
from batchrl.games.holdem.evaluate import evaluate_bots
from batchrl.games.holdem.logs import generate
from batchrl.ingest import IngestConfig, ingest
from batchrl.learners.fqi import FAST_FREEZE_AFTER
from batchrl.learners.fqi import LEARNER as FQI
from batchrl.learners.fqi.model import GreedyPolicy
from batchrl.learning import Settings, learn, store_digest
from batchrl.store import Store, StoreError


@dataclass(frozen=True)
class Hero:
    """FQI parameters of one hero (the thesis's "hands-M-K-n_min" plus ours)."""

    trees: int = 100
    nmin: int = 20
    iters: int = 11
    seed: int = 0
    fast: bool = False
    per_action: bool = False
    players: tuple[str, ...] = ()  # learn from these players' decisions; () every row
    drop: tuple[str, ...] = ()
    label: str = field(default="", compare=False)  # free text for tables and plots

    @property
    def name(self) -> str:
        parts = [f"M{self.trees}", f"nmin{self.nmin}", f"N{self.iters}", f"s{self.seed}"]
        parts += ["fast"] if self.fast else []
        parts += ["peraction"] if self.per_action else []
        # players' names come from logs, features' from a store: never a path
        parts += [safe_name(p) for p in self.players]
        parts += [f"no-{safe_name(d)}" for d in self.drop]
        return "-".join(parts)

    def with_(self, **changes: Any) -> Hero:
        return replace(self, **changes)


def make_store(root: Path, players: Sequence[str], hands: int, seed: int) -> Path:
    """``hands`` hands between ``players`` as an ACPC log under ``root``, ingested into a
    store there; reused when it exists and was made with the same parameters."""
    root.mkdir(parents=True, exist_ok=True)
    store = root / "store"
    params = {"players": list(players), "hands": hands, "seed": seed}
    made = root / "params.json"
    if (store / "store.json").exists():
        if made.exists() and (old := json.loads(made.read_text())) != params:
            raise StoreError(f"{store} was made with {old}, not {params}: use another folder, "
                             "or delete it to remake it")
        made.write_text(json.dumps(params))
        return store
    names = "_vs_".join(Path(p).stem.replace(".", "_") for p in players)
    log = root / f"{names}.{hands}.log"
    generate(log, list(players), hands, seed=seed)
    ingest(IngestConfig(paths=(log,), store=store))
    made.write_text(json.dumps(params))
    return store


def train(store: Path | str, hero: Hero, models: Path, jobs: int = -1,
          digest: str | None = None) -> tuple[Path, GreedyPolicy]:
    """The hero's model file and its policy, trained on ``store`` unless already there from
    the same data (a model from another store, or from before more logs were ingested, is
    retrained). ``digest``: the store's, when the caller has it."""
    out = inside(models, f"{hero.name}.npz")
    if out.exists():
        policy = GreedyPolicy.load(out)
        if policy.artifact.meta.get("store_digest") == (digest or data_digest(store)):
            return out, policy
    config = FQI.config(trees=hero.trees, nmin=hero.nmin, iters=hero.iters, seed=hero.seed,
                        per_action=hero.per_action,
                        freeze_after=FAST_FREEZE_AFTER if hero.fast else None)
    _, policy = learn(FQI, store, Settings(config, None, tuple(hero.drop), ""),
                      players=tuple(hero.players), jobs=jobs, out=out)
    assert isinstance(policy, GreedyPolicy)
    return out, policy


def data_digest(store: Path | str) -> str:
    """What a model records of the data it saw (``learning.store_digest``)."""
    return store_digest(Store.open(store))


def evaluate(model: Path, opponent: str, hands: int, seed: int, duplicate: bool = True,
             policy: GreedyPolicy | None = None) -> dict[str, Any]:
    """One evaluation as a flat record (bb/hand with its CI, chips, by position);
    ``policy`` is the model already loaded."""
    policy = policy or GreedyPolicy.load(model)
    r = evaluate_bots(str(model), opponent, hands, seed, duplicate=duplicate,
                      models={str(model): policy})
    meta = policy.artifact.meta
    record = {
        "opponent": opponent, "hands": r.hands, "eval_seed": seed, "duplicate": duplicate,
        "chips": r.chips, "bb_per_hand": r.bb_per_hand.mean, "ci_low": r.bb_per_hand.low,
        "ci_high": r.bb_per_hand.high, "half_width": r.bb_per_hand.half_width,
        "train_seconds": meta.get("seconds"), "rows": meta.get("rows"),
        "eval_seconds": r.seconds,
    }
    for position, e in r.by_position.items():
        record[f"bb_{position.replace(' ', '_')}"] = e.mean
    return record


def sweep(
    store: Path, heroes: Iterable[Hero], opponent: str, hands: int, seeds: Sequence[int] = (33,),
    root: Path | None = None, duplicate: bool = True,
    on_result: Callable[[dict[str, Any]], None] | None = None,
) -> pd.DataFrame:
    """Train every hero on ``store`` and evaluate it against ``opponent`` on each seed.

    Results are cached as JSON under ``root/results`` (default: beside the store),
    keyed by hero, opponent, hands, seed and duplicate.
    """
    root = root or store.parent
    models, results = root / "models", root / "results"
    results.mkdir(parents=True, exist_ok=True)
    digest = data_digest(store)
    rows = []
    for hero in heroes:
        for seed in seeds:
            key = f"{hero.name}--{opponent.replace('/', '_')}-{hands}-{seed}" \
                  f"{'-dup' if duplicate else ''}.json"
            cached = inside(results, key)
            record = json.loads(cached.read_text()) if cached.exists() else {}
            if record.get("store_digest", digest) != digest:
                record = {}  # made from other data: the store changed since
            if not record:
                started = time.perf_counter()
                model, policy = train(store, hero, models, digest=digest)
                record = {"hero": hero.name, **{k: v for k, v in asdict(hero).items()
                                                 if k != "label"}}
                record |= evaluate(model, opponent, hands, seed, duplicate, policy)
                record["seconds"] = time.perf_counter() - started
                record["store_digest"] = digest
                cached.write_text(json.dumps(record, default=list))
            record["label"] = hero.label
            rows.append(record)
            if on_result is not None:
                on_result(record)
    return pd.DataFrame(rows)
