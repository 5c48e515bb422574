"""Training a Q-function from a store: what ``batchrl fqi`` runs, callable from a notebook.

>>> cfg = FQIConfig(store=Path("datasets/store"), trees=100, nmin=20, iters=11)
>>> default_out(cfg).as_posix()
'datasets/store/models/fqi-M100-nmin20-N11.npz'
>>> default_out(FQIConfig(store=Path("s"), players=("../../../../tmp/x",))).name
'fqi-M100-nmin20-N11-player-tmp_x-6e26be7d.npz'
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from batchrl.cluster import connect, scheduler_address
from batchrl.episodes import grouping
from batchrl.filenames import inside, safe_name
from batchrl.games import FQISettings, GameError, game_for
from batchrl.learners.fqi import FAST_FREEZE_AFTER, LEARNER, FQIParams
from batchrl.learners.fqi.iterations import IterationStats, return_to_go
from batchrl.learning import model_meta, snapshot
from batchrl.policy import ModelArtifact
from batchrl.store import Store
from batchrl.store.place import outputs_beside


@dataclass(frozen=True, slots=True)
class FQIConfig:
    store: Path | str  # a directory, or a URL to read a store from
    trees: int = 100
    nmin: int = 20
    k: int | None = None  # candidate attributes per split; None: all (the thesis, Ernst)
    iters: int = 11
    gamma: float = 1.0
    features: tuple[str, ...] | None = None
    drop: tuple[str, ...] = ()
    players: tuple[str, ...] = ()  # learn from these players' decisions only; () all
    per_action: bool = False
    freeze_after: int | None = None  # None: refit every iteration
    jobs: int = -1  # worker threads for the trees; -1: every core
    seed: int = 0
    out: Path | None = None
    resume: bool = False
    # discrete BCQ's support constraint (batchrl.learners.fqi.support): None, or the share tau
    support: float | None = None
    # a Dask scheduler's address: the trees are grown on its workers (the same model)
    scheduler: str | None = None


def default_out(config: FQIConfig) -> Path:
    fast = "" if config.freeze_after is None else f"-fast{config.freeze_after}"
    per = "-peraction" if config.per_action else ""
    who = "".join(f"-player-{safe_name(p)}" for p in config.players)
    k = "" if config.k is None else f"-K{config.k}"  # None: every input
    tau = "" if config.support is None else f"-support{config.support:g}"
    # the seed and gamma too, when not the defaults: a second seed must not replace the
    # first one's model and checkpoint (the features: `refuse_other_model`)
    gamma = "" if config.gamma == 1.0 else f"-gamma{config.gamma:g}"
    seed = "" if config.seed == 0 else f"-seed{config.seed}"
    name = (f"fqi-M{config.trees}-nmin{config.nmin}{k}-N{config.iters}{fast}{per}{tau}"
            f"{gamma}{seed}{who}.npz")
    return inside(outputs_beside(config.store) / "models", name)


def recommended(store: Path | str, given: Mapping[str, Any], **rest: Any) -> tuple[FQIConfig, str]:
    """The FQI config for ``store``: each setting of ``given`` (trees, nmin, k, iters,
    per_action, fast, freeze_after, features, drop; None: not given) as given, else the
    store's game's recommended one (``Game.fqi``); ``rest``: the other `FQIConfig`
    fields. Also the line that says what was chosen. ``features`` and ``drop`` go
    together: either given, both are the user's.
    """
    opened = Store.open(store)
    opened.check()  # store.json's game is the parts' before its settings are taken
    schema = opened.schema
    try:
        game = game_for(schema.game, schema.game_params)
        settings, whose = game.fqi, f"{game.name}'s recommended settings"
    except GameError:
        settings, whose = FQISettings(), "the defaults"

    def pick(name: str) -> Any:
        return given.get(name) if given.get(name) is not None else getattr(settings, name)

    fast = pick("fast")
    freeze_after = given.get("freeze_after")
    if freeze_after is None and fast:
        freeze_after = FAST_FREEZE_AFTER
    chosen = given.get("features") is not None or given.get("drop") is not None
    features = given.get("features") if chosen else settings.features
    drop = tuple(given.get("drop") or ()) if chosen else settings.drop
    config = FQIConfig(store=store, trees=pick("trees"), nmin=pick("nmin"), k=pick("k"),
                       iters=pick("iters"), per_action=pick("per_action"),
                       freeze_after=freeze_after, features=features, drop=drop, **rest)
    if config.k is not None:  # K beyond the inputs would silently mean all of them
        features = len(Store.open(store).select_features(config.features, config.drop))
        inputs = features + (0 if config.per_action else 1)
        if config.k > inputs:
            seen = f"{features} features" + ("" if config.per_action else " and the action")
            raise ValueError(f"--k {config.k}: the trees see {inputs} inputs here ({seen}), "
                             f"so K is at most {inputs}")
    shown = FQISettings(config.trees, config.nmin, config.k, config.iters, config.per_action,
                        config.freeze_after is not None, config.features, config.drop)
    asked = [k for k in ("trees", "nmin", "k", "iters", "per_action", "fast", "freeze_after",
                         "features", "drop") if given.get(k) is not None]
    source = whose if not asked else \
        f"{whose}, with {', '.join(asked)} as given" if len(asked) < 9 else "as given"
    return config, f"settings: {shown.describe()} ({source})"


def checkpoint_data(store: Store, config: FQIConfig) -> dict[str, Any]:
    """What a checkpoint records of the data, beyond the rows that
    `batchrl.learners.fqi.checkpoint_data.data_key` sees: the store's game and sources (each log's
    sha256, rows and ingest time: a log added, removed or re-ingested changes it) and the
    selection (players; the features are the rows'; --support, which changes the legal
    next actions)."""
    return {"game": store.schema.game, "game_params": dict(store.schema.game_params),
            "sources": {s.path: {"sha256": s.digest[:16], "rows": s.rows,
                                 "ingested_at": s.ingested_at} for s in store.sources()},
            "players": list(config.players), "support": config.support}


CHECKPOINT_MARKER = "batchrl-fqi-checkpoints"  # in every checkpoint directory fqi made


def _checkpoint_files(path: Path) -> bool:
    """Whether ``path`` holds nothing but what an fqi checkpoint holds (an earlier batchrl
    made its checkpoints without the marker); an empty directory holds nothing to lose."""
    import re

    return all(p.is_file() and not p.is_symlink() and re.fullmatch(
        r"checkpoint\.npz|(models|frozen)-\d+\.npz|\.[^/]+\.tmp-\d+", p.name)
        for p in path.iterdir())


def checkpoint_directory(path: Path, resume: bool) -> None:
    """Make fqi's checkpoint directory ``path`` (emptied unless ``resume``), with its
    marker: a directory fqi did not make (no marker, something in it), a link or a file
    is never deleted nor written into; a ValueError says what to do."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        kind = "a symbolic link" if path.is_symlink() else "not a directory"
        raise ValueError(f"{path} is {kind}, not a checkpoint directory batchrl fqi made: "
                         "move it away, or give another --out")
    if path.is_dir() and not (path / CHECKPOINT_MARKER).is_file() and \
            not _checkpoint_files(path):
        raise ValueError(f"{path} exists and batchrl fqi did not make it (no "
                         f"{CHECKPOINT_MARKER} in it): fqi never deletes or writes into a "
                         "directory it did not make; move it away, or give another --out")
    if not resume and path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True, exist_ok=True)
    (path / CHECKPOINT_MARKER).write_text("checkpoints of a batchrl fqi run, removed when "
                                          "it ends; --resume goes on from them\n")


# the settings that change an FQI model (not the worker count, nor where it goes)
MODEL_SETTINGS = ("trees", "nmin", "k", "iters", "gamma", "features", "drop", "players",
                  "per_action", "freeze_after", "seed", "support")


def refuse_other_model(out: Path, config: FQIConfig) -> None:
    """A `ValueError` where the model at ``out`` (a default name: it holds some settings,
    not all) was made with other settings than ``config``'s: a run must not replace a
    model it did not make again, and that model's name would then lie."""
    if not out.is_file():
        return
    from batchrl.policy import ModelError, policy_meta

    try:
        made = policy_meta(out).get("params") or {}
    except (ModelError, ValueError, OSError):
        return  # not a model this reads: replaced, as before
    mine = asdict(config)

    def same(value: Any) -> Any:
        return list(value) if isinstance(value, (list, tuple)) else value

    other = [f"{k} {made.get(k)!r} (this run: {mine[k]!r})" for k in MODEL_SETTINGS
             if k in made and same(made[k]) != same(mine[k])]
    if other:
        raise ValueError(f"{out} holds a model made with other settings: "
                         f"{'; '.join(other)}. Give --out for this one, or remove that "
                         "model first")


def run_fqi(
    config: FQIConfig, on_iteration: Callable[[IterationStats], None] | None = None,
    on_step: Callable[[str, int, int], None] | None = None,
) -> tuple[Path, ModelArtifact]:
    """Train on the store, checkpointing every iteration; returns where the model went.
    ``on_step(what, done, of)`` hears the progress inside an iteration."""
    if config.out is None and not config.resume:  # before the store is read: at once
        refuse_other_model(default_out(config), config)
    store = Store.open(config.store)
    store.check()  # every part sound and of store.json's game; each page checked as read
    seen = snapshot(store)  # the store as read: an ingest landing meanwhile is not it
    held = [store.arrays(features=config.features, drop=config.drop, players=config.players)]
    if not len(held[0]):
        raise ValueError(f"store {config.store} has no rows: ingest logs first")
    # the largest |return| of a logged decision: no |Q| should go far past it (curves.py)
    largest = float(np.abs(return_to_go(held[0], config.gamma, grouping(held[0]))
                           ).max(initial=0.0))
    out = config.out or default_out(config)
    checkpoints = out.with_name(out.name + ".ckpt")
    if config.resume and not checkpoints.exists() and out.exists():
        raise ValueError(f"--resume: the run is finished, its model is {out}; run without "
                         "--resume to train it again")
    checkpoint_directory(checkpoints, config.resume)
    hyper = FQIParams(trees=config.trees, nmin=config.nmin, k=config.k, iters=config.iters,
                      gamma=config.gamma, per_action=config.per_action,
                      freeze_after=config.freeze_after, support=config.support,
                      seed=config.seed)
    started = time.perf_counter()
    with connect(scheduler_address(config.scheduler)) as client:
        # the learner takes the rows from ``held``: they go before the trees set aside
        # come back
        policy = LEARNER.fit(hyper, held.pop, progress=on_step, jobs=config.jobs,
                             on_iteration=on_iteration, checkpoints=checkpoints,
                             resume=config.resume, client=client,
                             checkpoint_data=checkpoint_data(store, config))
    learned, artifact = policy.meta, policy.artifact
    artifact.meta = model_meta(
        store, config.store, feature_names=learned["feature_names"],
        action_names=learned["action_names"], rows=learned["rows"],
        params={k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(config).items()
                if k not in ("store", "out", "resume", "scheduler")},
        history=learned["history"], started=started, seen=seen)
    artifact.meta["max_abs_return"] = largest
    artifact.save(out)
    shutil.rmtree(checkpoints, ignore_errors=True)
    return out, artifact
