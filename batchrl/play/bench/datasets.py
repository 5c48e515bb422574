"""The benchmark's datasets: each game's `batchrl.games.Dataset` generated and ingested
once into the cache (`cache_dir`), built aside and moved in whole, and reused after."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from batchrl.filenames import clear_leftovers
from batchrl.games import Dataset, Game
from batchrl.ingest import IngestConfig, ingest
from batchrl.learning import store_digest
from batchrl.records import regular_file
from batchrl.store import Store, StoreError

RECORD = "dataset.json"  # in a built dataset's folder: what it is, and its rows' digest


class BenchError(ValueError):
    """A benchmark that cannot run as asked; the message says what exists instead."""


def cache_dir() -> Path:
    """Where built datasets are kept: ``$BATCHRL_CACHE``, else ``$XDG_CACHE_HOME/batchrl``,
    else ``~/.cache/batchrl``."""
    if given := os.environ.get("BATCHRL_CACHE"):
        where = Path(given).expanduser()
    else:
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        where = Path(base) / "batchrl"
    if where.exists() and not where.is_dir():
        raise BenchError(f"the datasets' cache {where} is not a directory: point "
                         "$BATCHRL_CACHE (or --cache) at a directory")
    return where


def dataset_folder(game: Game, dataset: Dataset, quick: bool, cache: Path) -> Path:
    """The cache folder of a built dataset: named by everything that makes its logs."""
    digest = hashlib.sha256(_recipe(dataset).encode()).hexdigest()[:8]
    return cache / "bench" / game.name / (
        f"{dataset.tier}-{dataset.games(quick)}-seed{dataset.seed}-{digest}")


def _recipe(dataset: Dataset) -> str:
    return json.dumps({"players": dataset.players, "options": dict(dataset.options)},
                      sort_keys=True, default=str)


def _record(game: Game, dataset: Dataset, quick: bool) -> dict[str, object]:
    """What a built dataset's ``dataset.json`` says it is, beside its store's digest."""
    return {"game": game.name, "tier": dataset.tier, "games": dataset.games(quick),
            "seed": dataset.seed, "recipe": _recipe(dataset)}


def cached(game: Game, dataset: Dataset, quick: bool, folder: Path) -> str:
    """Why the cache's ``folder`` is not the dataset's, sound ("" if it is): a link (no
    folder of the cache's own), no store, a damaged part or a changed row (every page
    and every column read and checked), or a store other than the one built there (its
    ``dataset.json``: the recipe, and the digest of the rows as they were built)."""
    if folder.is_symlink() or not folder.is_dir():
        return "it is a link, not a folder the cache made" if folder.is_symlink() else \
            "it is not a folder"
    if why := regular_file(folder / RECORD):
        return f"its {RECORD} {why.removesuffix(': not opened')}"
    try:
        recorded = json.loads((folder / RECORD).read_text())
        store = Store.open(folder / "store")
        store.check(pages=True)
        digest = store_digest(store)
    except (OSError, ValueError, RecursionError) as exc:
        return f"its {RECORD} is unreadable ({str(exc)[:100]})"
    except StoreError as exc:
        return str(exc)[:300]
    if not isinstance(recorded, dict) or \
            {k: recorded.get(k) for k in _record(game, dataset, quick)} != \
            _record(game, dataset, quick):
        return f"its {RECORD} names another dataset"
    if recorded.get("store_digest") != digest:
        return "its store is not the one built there (the digest of its rows differs)"
    return ""


def build_dataset(game: Game, dataset: Dataset, quick: bool, cache: Path,
                  say: Callable[[str], None] = lambda _: None) -> Path:
    """The dataset's store, built once (logs generated, then ingested with its options)
    into a folder beside its final place and moved in whole; reused after."""
    folder = dataset_folder(game, dataset, quick, cache)
    if folder.exists() or folder.is_symlink():
        if not (why := cached(game, dataset, quick, folder)):
            return folder / "store"
        say(f"{game.name}/{dataset.tier}: the cached dataset in {folder} is not sound "
            f"({why}); building it again")
        if folder.is_symlink() or not folder.is_dir():
            folder.unlink(missing_ok=True)  # the link, not what it leads to
        else:  # moved aside first: a bench sharing the cache finds it whole or gone
            stale = folder.with_name(f".{folder.name}.tmp-{os.getpid()}-stale")
            with contextlib.suppress(FileNotFoundError):
                os.replace(folder, stale)
                shutil.rmtree(stale, ignore_errors=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    clear_leftovers(folder.parent, folder.name)  # what a killed build left
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
        record = _record(game, dataset, quick) | {
            "store_digest": store_digest(Store.open(tmp / "store"))}
        (tmp / RECORD).write_text(json.dumps(record, indent=1))
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
