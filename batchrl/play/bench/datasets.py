"""The benchmark's datasets: each game's `batchrl.games.Dataset` generated and ingested
once into the cache (`cache_dir`), built aside and moved in whole, and reused after."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from batchrl.games import Dataset, Game
from batchrl.ingest import IngestConfig, ingest
from batchrl.store import Store, StoreError


class BenchError(ValueError):
    """A benchmark that cannot run as asked; the message says what exists instead."""


def cache_dir() -> Path:
    """Where built datasets are kept: ``$BATCHRL_CACHE``, else ``$XDG_CACHE_HOME/batchrl``,
    else ``~/.cache/batchrl``."""
    if given := os.environ.get("BATCHRL_CACHE"):
        return Path(given).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "batchrl"


def dataset_folder(game: Game, dataset: Dataset, quick: bool, cache: Path) -> Path:
    """The cache folder of a built dataset: named by everything that makes its logs."""
    recipe = json.dumps({"players": dataset.players, "options": dict(dataset.options)},
                        sort_keys=True, default=str)
    digest = hashlib.sha256(recipe.encode()).hexdigest()[:8]
    return cache / "bench" / game.name / (
        f"{dataset.tier}-{dataset.games(quick)}-seed{dataset.seed}-{digest}")


def build_dataset(game: Game, dataset: Dataset, quick: bool, cache: Path,
                  say: Callable[[str], None] = lambda _: None) -> Path:
    """The dataset's store, built once (logs generated, then ingested with its options)
    into a folder beside its final place and moved in whole; reused after."""
    folder = dataset_folder(game, dataset, quick, cache)
    if (folder / "store" / "store.json").exists():
        try:
            if Store.open(folder / "store").check():
                return folder / "store"
        except StoreError:
            pass
        say(f"{game.name}/{dataset.tier}: the cached dataset in {folder} is damaged; "
            "building it again")
        shutil.rmtree(folder)  # the cache's own folder, made here
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(f".{folder.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    games = dataset.games(quick)
    say(f"{game.name}/{dataset.tier}: generating {games:,} {game.rules.unit} "
        f"({','.join(dataset.players)}, seed {dataset.seed}) into {folder}")
    try:
        log = tmp / "logs"
        generate_options = {k: v for k, v in dataset.options.items()
                            if declares(game, k, "generate")}
        game.play.generate(log, dataset.players, games, dataset.seed, generate_options)
        ingest_options = {k: v for k, v in dataset.options.items()
                          if declares(game, k, "ingest")}
        say(f"{game.name}/{dataset.tier}: ingesting "
            + (", ".join(f"{k} {v}" for k, v in ingest_options.items()) or "the logs"))
        reports = ingest(IngestConfig(paths=(log,), store=tmp / "store",
                                      options=ingest_options))
        if bad := [r for r in reports if r.error]:
            raise BenchError(f"{game.name}/{dataset.tier}: its logs did not ingest "
                             f"({bad[0].error})")
        try:
            os.replace(tmp, folder)
        except OSError:  # another bench built it meanwhile: its copy is as good
            if not (folder / "store" / "store.json").exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder / "store"


def declares(game: Game, option: str, command: str) -> bool:
    return any(o.name == option and command in o.flags for o in game.cli.options)
