"""A store as the field's offline-RL libraries read it: Minari, d3rlpy and RLlib.

``export(store, to, out)`` (and ``batchrl export STORE --to minari|d3rlpy|rllib -o OUT``)
turns a store's rows into episodes (`batchrl.episodes`: what an episode is, and the
legal mask of each observation) and writes them in the library's own format. It reads
the store through its public API only (``Store.open(path).arrays()`` and ``.schema``),
never the Parquet parts, whose layout is the store's business.

Formats
-------
- **Minari** (``OUT`` is a Minari datasets root, ``MINARI_DATASETS_PATH=OUT``): the
  dataset ``--id NAMESPACE/NAME-vN`` (default ``batchrl/<game>-v0``) written with
  ``minari.create_dataset_from_buffers`` (no environment; ``observation_space`` a
  ``Box(-inf, inf, (features,), float32)``, ``action_space`` a ``Discrete(actions)``, as
  ``batchrl.env``'s). ``infos`` per episode hold ``action_mask`` (T + 1 masks, one per
  observation) and ``legal_known`` (T + 1 flags). The dataset's metadata holds this
  module's metadata under ``"batchrl"``; each episode's metadata its store ``episode`` id
  and ``player`` (-1 for a store episode). Load: ``minari.load_dataset(ID)``.
- **d3rlpy** (``OUT`` a new directory): ``dataset.npz``, the arrays
  ``d3rlpy.dataset.MDPDataset(observations, actions, rewards, terminals, timeouts)``
  takes, episode after episode (T observations each: d3rlpy's next observation is the
  next step's, zeros after a terminal step; a timeout's last step is no transition for
  it); ``legal.npz``, row for row with them: ``legal_mask`` (the mask of each
  observation), ``next_legal_mask`` (of the next one) and ``legal_known``;
  ``episodes.npz``: per episode its store ``episode`` id, ``player``, ``start``,
  ``length``, ``final_observation`` and ``final_legal_mask``; ``metadata.json``. An
  episode whose last row is neither terminal nor truncated gets a timeout there (d3rlpy
  ends episodes only at one). d3rlpy's own ``dump`` (HDF5, one dataset per episode and
  key) was left aside: it took 0.8 ms per episode to write and 1 ms to read (10,000
  short episodes), over a minute each way for the 80,000 seat episodes of a 20,000-hand
  Tressette store; the ``.npz`` files
  are compressed (a 2,000-hand Tressette store: 3.7 MB, not 93). ``load_d3rlpy(OUT)``
  builds the ``MDPDataset``.
- **RLlib** (``OUT`` a new directory): ``data/part-NNNNN.parquet``, one row per step
  with the offline columns of RLlib's new API stack (``ray.rllib.core.columns.Columns``,
  what ``OfflinePreLearner`` turns into ``SingleAgentEpisode`` s): ``eps_id`` (the
  exported episode: ``<store episode>/<seat>``, or the store episode), ``agent_id``
  (``player_<seat>``, as ``batchrl.env``'s agents), ``t`` (the step's index in its
  episode), ``obs``, ``actions``, ``rewards``, ``new_obs``, ``terminateds``,
  ``truncateds``; besides them ``action_mask`` and ``new_action_mask`` (the legal masks
  of ``obs`` and ``new_obs``), ``legal_known`` (of ``action_mask``), ``episode`` (the
  store's id) and ``player``. ``obs`` and ``new_obs`` are fixed-size lists of float32,
  the masks of bools. ``metadata.json`` beside ``data/``, and the same under ``batchrl``
  in every file's Parquet metadata. Neither writing nor reading them needs RLlib
  (pandas and pyarrow read them); RLlib reads them with
  ``config.offline_data(input_=["OUT/data"])``.

Every export's metadata (``export_metadata``) names the game, its params, the feature and
action names, what a reward counts (``Game.reward_unit``) and what an episode is.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from numpy.typing import NDArray

from batchrl import __version__
from batchrl.episodes import CHUNK_ROWS, GROUPINGS, Episodes, ExportError, episodes_of
from batchrl.filenames import clear_leftovers
from batchrl.foreign import d3rlpy_quietly, import_d3rlpy
from batchrl.games import GameError, game_for, seats_of
from batchrl.store import Store
from batchrl.store.place import is_url, recorded

FORMATS = ("minari", "d3rlpy", "rllib")
EXTRA = "pip install -e '.[export]'"
# minari's dataset id, (namespace/)name-vN, with the version required (minari needs it)
DATASET_ID = re.compile(r"(?:[-_\w][-_\w/]*[-_\w]+/)?[-_\w]+?-v\d+")
# Minari episodes written per call (each opens the HDF5 file once)
MINARI_CHUNK = 1024
# rows per RLlib Parquet file (files end at an episode's end)
RLLIB_FILE_ROWS = 1_000_000
__all__ = ["FORMATS", "GROUPINGS", "Episodes", "ExportError", "ExportResult", "check_request",
           "episodes_of", "export", "export_metadata", "load_d3rlpy", "recommended_features"]
UNKNOWN_MASK = ("unknown: all ones. No store row leads to this observation (the first "
                "decision of an episode's seat), so its legal actions were never recorded; "
                "the game cannot rebuild them from features. The action taken there was "
                "legal; legal_known is False for it.")

# the export libraries (minari, d3rlpy), imported by name when asked for
__lazy_imports__: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote: the format, where, the Minari id, episodes and steps, the
    files, and the metadata written with them."""

    to: str
    out: Path
    dataset_id: str | None
    episodes: int
    steps: int
    by: str
    files: tuple[Path, ...]
    metadata: dict[str, Any]

    def summary(self) -> str:
        what = f"Minari dataset {self.dataset_id}" if self.dataset_id else self.to
        unknown = self.metadata["legal_unknown_steps"]
        mismatched = self.metadata["next_state_mismatches"]
        off = (f"; {mismatched:,} steps' next observation is not their row's next_state "
               "(a store whose next states follow another order: see --by)"
               if mismatched else "")
        masks = ("every observation's legal mask as the store records it" if not unknown
                 else f"{unknown:,} observations without a recorded legal mask (all ones, "
                      "legal_known False: a store made before rows recorded their legal "
                      "actions)")
        return (f"exported {self.episodes:,} episodes ({self.steps:,} steps, by {self.by}) "
                f"as {what} to {self.out}; {masks}{off}")


# ---- metadata --------------------------------------------------------------------------


def export_metadata(store: Store, episodes: Episodes) -> dict[str, Any]:
    """What every export writes beside its data: the game, its features, actions and
    reward unit, how the episodes and legal masks were made."""
    schema = store.schema
    try:
        game = game_for(schema.game, schema.game_params)
        params = game.log.params_from_store(schema.game, schema.game_params)
        reward_unit, unit, game_name = game.log.reward_unit(params), game.rules.unit, game.name
        reward_scale = dict(game.log.reward_scale(params))
    except GameError:  # a game not registered here: say what is known
        reward_unit, unit, game_name = "unknown: the store's game is not registered", "", ""
        reward_scale = {}
    data = episodes.data
    last = episodes.last_rows
    return {
        "format": "batchrl export",
        "batchrl_version": __version__,
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "store": recorded(store.root if is_url(store.root) else Path(store.root).resolve()),
        "game": schema.game,
        "registered_game": game_name,
        "game_params": dict(schema.game_params),
        "feature_names": list(data.feature_names),
        "action_names": list(data.action_names),
        "reward_unit": reward_unit,
        "reward_scale": reward_scale,
        "episode_unit": unit,
        "episodes_by": episodes.by,
        "episode": ("the decisions of one seat in one store episode, in step order"
                    if episodes.by == "seat" else
                    "the decisions of one store episode, all seats, in the store's order"),
        "episodes": len(episodes),
        "steps": episodes.steps,
        "players": sorted(int(p) for p in np.unique(data.player)),
        "player_names": store.names(),
        "observation": ("the store's state features, float32, in feature_names order; an "
                        "episode of T steps has T + 1 observations, the last its last "
                        "row's next_state (zeros after a terminal decision)"),
        "next_state_mismatches": episodes.mismatched,
        "legal_mask": ("a bool per action (action_names) per observation: its row's own "
                       "legal actions as the store records them" if data.legal is not None
                       else "a bool per action (action_names) per observation: the store's "
                       "next_legal of the row whose next_state the observation is") +
                      "; the last observation's is the last row's next_legal (all False "
                      "after a terminal decision)",
        "legal_mask_unknown": UNKNOWN_MASK if data.legal is None else None,
        "legal_unknown_steps": episodes.mask_sources.get("unknown", 0),
        "legal_mask_sources": episodes.mask_sources,
        "terminated_episodes": int(data.terminal[last].sum()),
        "truncated_episodes": int((data.truncated[last] & ~data.terminal[last]).sum()),
        "unended_episodes": int((~data.terminal[last] & ~data.truncated[last]).sum()),
        "sources": [{"path": s.path, "digest": s.digest, "rows": s.rows,
                     "episodes": s.episodes} for s in store.sources()],
    }


# ---- the export ------------------------------------------------------------------------


def recommended_features(store: Store) -> tuple[tuple[str, ...] | None, tuple[str, ...], str]:
    """The features the store's game recommends (its FQI settings' ``features`` and
    ``drop``: what ``batchrl fqi`` reads with no flags), and the line that says so."""
    try:
        game = game_for(store.schema.game, store.schema.game_params)
        settings = game.learn.settings_for("fqi", game.log.params_from_store(store.schema.game,
                                                                   store.schema.game_params))
    except GameError:
        return None, (), ""
    features = tuple(settings["features"]) if settings.get("features") else None
    drop = tuple(settings.get("drop") or ())
    if features is None and not drop:
        return None, (), ""
    kept = len(store.select_features(features, drop))
    chosen = [f"features {','.join(features)}"] if features else []
    chosen += [f"drop {','.join(drop)}"] if drop else []
    return (features, drop,
            f"features: {kept} of {len(store.schema.feature_names)}, the game's recommended "
            f"({'; '.join(chosen)}); --features '*' exports all")


def default_dataset_id(store: Store) -> str:
    """``batchrl/<game>-v0``, the game as registered (hold'em's stores name a variant)."""
    try:
        name = game_for(store.schema.game, store.schema.game_params).name
    except GameError:
        name = store.schema.game
    return "batchrl/" + re.sub(r"[^-\w]", "_", name) + "-v0"


def check_dataset_id(dataset_id: str) -> str:
    if not DATASET_ID.fullmatch(dataset_id):
        raise ExportError(f"--id {dataset_id!r} is no Minari dataset id: want "
                          "NAMESPACE/NAME-vN (letters, digits, _ and -), e.g. "
                          "batchrl/tressette-v0", "id")
    return dataset_id


def check_request(to: str, dataset_id: str | None = None, by: str = "auto") -> None:
    """`ExportError` for a format, Minari id or grouping that cannot be (before any work)."""
    if to not in FORMATS:
        raise ExportError(f"--to {to!r}: want one of {', '.join(FORMATS)}", "to")
    if by not in GROUPINGS:
        raise ExportError(f"--by {by!r}: want one of {', '.join(GROUPINGS)}", "by")
    if dataset_id is not None:
        if to != "minari":
            raise ExportError(f"--id names a Minari dataset; --to {to} takes none", "id")
        check_dataset_id(dataset_id)


def export(store: str | Path | Store, to: str, out: str | Path, *,
           dataset_id: str | None = None, by: str = "auto",
           features: Sequence[str] | None = None, drop: Sequence[str] = (),
           progress: Callable[[int], None] | None = None,
           minari_metadata: Mapping[str, Any] | None = None) -> ExportResult:
    """Write ``store`` for ``to`` (``"minari"``, ``"d3rlpy"`` or ``"rllib"``) at ``out``.

    ``out`` is a Minari datasets root for Minari (the dataset goes to ``out/dataset_id``,
    which must not exist), else a new or empty directory. ``dataset_id`` names the Minari
    dataset (default ``batchrl/<game>-v0``), ``minari_metadata`` more of its metadata
    (``ref_min_score``, ``ref_max_score``); ``by`` how rows become episodes;
    ``features``/``drop`` choose features as ``Store.arrays`` does; ``progress`` is told
    of the steps written as they go. Raises `ExportError` (or ``StoreError``).
    """
    check_request(to, dataset_id, by)
    out = Path(out)
    if to == "minari":
        _library("minari", to)
        _library("gymnasium", to)
    opened = store if isinstance(store, Store) else Store.open(store)
    opened.check()  # each page is checked as it is read
    if to == "minari":
        dataset_id = dataset_id or default_dataset_id(opened)
        if out.exists() and not out.is_dir():
            raise ExportError(f"{out} is a file: -o takes a directory (the Minari datasets "
                              "root)", "out")
        if (out / dataset_id).exists():
            raise ExportError(f"{out / dataset_id} exists and Minari never overwrites a "
                              "dataset: give --id another name or version, or another -o",
                              "out")
    elif out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ExportError(f"{out} exists and is not an empty directory: give -o a new "
                          "directory", "out")
    seats = seats_of(opened.schema.game, opened.schema.game_params)
    episodes = episodes_of(opened.arrays(features=features, drop=drop, seats=seats), by)
    meta = export_metadata(opened, episodes)
    tell = progress or (lambda n: None)
    if to == "minari":
        assert dataset_id is not None
        files = _write_minari(episodes, meta, out, dataset_id, tell, minari_metadata or {})
    else:
        writer = _write_d3rlpy if to == "d3rlpy" else _write_rllib
        files = _atomically(out, lambda tmp: writer(episodes, meta, tmp, tell))
    return ExportResult(to, out, dataset_id, len(episodes), episodes.steps, episodes.by,
                        files, meta)


def _library(module: str, to: str) -> Any:
    """``module`` imported, or one line naming the extra that brings it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ExportError(f"--to {to} needs {module}, which is not installed: {EXTRA}",
                          "to") from None


def _atomically(out: Path, write: Callable[[Path], list[Path]]) -> tuple[Path, ...]:
    """``write`` into a temporary directory beside ``out``, then moved onto it: a failed
    export leaves nothing."""
    out.parent.mkdir(parents=True, exist_ok=True)
    clear_leftovers(out.parent, out.name)  # what a killed export left
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        files = write(tmp)
        if out.exists():
            out.rmdir()  # empty: checked before
        tmp.replace(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tuple(out / f.relative_to(tmp) for f in files)


def _write_json(path: Path, meta: dict[str, Any]) -> Path:
    path.write_text(json.dumps(meta, indent=1) + "\n")
    return path


def _write_minari(episodes: Episodes, meta: dict[str, Any], out: Path, dataset_id: str,
                  tell: Callable[[int], None], more: Mapping[str, Any]
                  ) -> tuple[Path, ...]:
    minari = _library("minari", "minari")
    collector = _library("minari.data_collector", "minari")
    spaces = _library("gymnasium.spaces", "minari")
    data = episodes.data
    observation_space = spaces.Box(-np.inf, np.inf, (len(data.feature_names),), np.float32)
    action_space = spaces.Discrete(len(data.action_names))
    description = (f"{meta['registered_game'] or meta['game']} decisions from the batchrl "
                   f"store {meta['store']}: {meta['episode']}. Observations: "
                   f"{len(data.feature_names)} features (metadata batchrl.feature_names); "
                   f"actions: {', '.join(data.action_names)}; rewards: {meta['reward_unit']}. "
                   "infos['action_mask'] holds each observation's legal actions" +
                   ("." if data.legal is not None else "; the first observation of a seat's "
                    "episode has none recorded (all ones, infos['legal_known'] False)."))
    previous = os.environ.get("MINARI_DATASETS_PATH")
    # minari writes under a root of its own beside the datasets, moved in whole at the
    # end: a killed export leaves no dataset that loads half (the next run clears it)
    out.mkdir(parents=True, exist_ok=True)
    clear_leftovers(out, "minari")
    root = out / f".minari.tmp-{os.getpid()}"
    shutil.rmtree(root, ignore_errors=True)
    # minari finds its files under the root by this variable, and wants it absolute
    os.environ["MINARI_DATASETS_PATH"] = str(root.resolve())
    try:
        with warnings.catch_warnings():
            # no author, code link or environment: minari warns of each, to no end here
            warnings.filterwarnings("ignore", category=UserWarning, module=r"minari\.")
            dataset: Any = None
            ids, players = episodes.episode_ids, episodes.players
            for lo in range(0, len(episodes), MINARI_CHUNK):
                hi = min(lo + MINARI_CHUNK, len(episodes))
                buffers = list(_minari_buffers(collector.EpisodeBuffer, episodes, lo, hi))
                if dataset is None:
                    dataset = minari.create_dataset_from_buffers(
                        dataset_id, buffers, observation_space=observation_space,
                        action_space=action_space,
                        algorithm_name="logged play (batchrl store)", description=description)
                else:
                    dataset.update_dataset_from_buffer(buffers)
                dataset.storage.update_episode_metadata(
                    [{"episode": str(ids[i]), "player": int(players[i])}
                     for i in range(lo, hi)], range(lo, hi))
                tell(int(episodes.starts[hi] - episodes.starts[lo]))
            dataset.storage.update_metadata({"batchrl": meta, **more})
        (out / dataset_id).parent.mkdir(parents=True, exist_ok=True)
        (root / dataset_id).replace(out / dataset_id)
        space = Path(dataset_id).parent  # each namespace's metadata, where there is none
        while space != Path("."):
            made = root / space / "namespace_metadata.json"
            if made.is_file() and not (out / space / "namespace_metadata.json").exists():
                made.replace(out / space / "namespace_metadata.json")
            space = space.parent
    finally:
        shutil.rmtree(root, ignore_errors=True)
        if previous is None:
            os.environ.pop("MINARI_DATASETS_PATH", None)
        else:
            os.environ["MINARI_DATASETS_PATH"] = previous
    return tuple(sorted(p for p in (out / dataset_id).rglob("*") if p.is_file()))


def _minari_buffers(buffer: Any, episodes: Episodes, lo: int, hi: int) -> Iterator[Any]:
    steps = episodes.step_arrays(lo, hi, new_obs=False)
    final_obs, final_mask = episodes.final_observations(lo, hi), episodes.final_legal(lo, hi)
    base = int(episodes.starts[lo])
    for i in range(lo, hi):
        a, b = int(episodes.starts[i]) - base, int(episodes.starts[i + 1]) - base
        j = i - lo
        yield buffer(
            observations=np.concatenate([steps["obs"][a:b], final_obs[j:j + 1]]),
            actions=steps["actions"][a:b],
            rewards=steps["rewards"][a:b],
            terminations=steps["terminals"][a:b],
            truncations=steps["truncated"][a:b],
            infos={"action_mask": np.concatenate([steps["legal_mask"][a:b],
                                                  final_mask[j:j + 1]]),
                   "legal_known": np.append(steps["legal_known"][a:b], True)})


def _write_d3rlpy(episodes: Episodes, meta: dict[str, Any], out: Path,
                  tell: Callable[[int], None]) -> list[Path]:
    steps = episodes.step_arrays(0, len(episodes), new_obs=False)
    terminals = steps["terminals"]
    timeouts = steps["truncated"] & ~terminals
    timeouts[steps["last"] & ~terminals] = True  # d3rlpy ends episodes at one only
    np.savez_compressed(out / "dataset.npz", observations=steps["obs"],
                        actions=steps["actions"].astype(np.int64),
                        rewards=steps["rewards"].astype(np.float32),
                        terminals=terminals.astype(np.float32),
                        timeouts=timeouts.astype(np.float32))
    np.savez_compressed(out / "legal.npz", legal_mask=steps["legal_mask"],
                        next_legal_mask=steps["next_legal_mask"],
                        legal_known=steps["legal_known"])
    np.savez_compressed(out / "episodes.npz", episode=episodes.episode_ids,
                        player=episodes.players, start=episodes.starts[:-1],
                        length=episodes.lengths,
                        final_observation=episodes.final_observations(),
                        final_legal_mask=episodes.final_legal())
    d3 = {"d3rlpy": {
        "dataset.npz": "d3rlpy.dataset.MDPDataset(observations, actions, rewards, terminals, "
                       "timeouts, action_space=ActionSpace.DISCRETE, action_size=len("
                       "action_names)): T observations per episode, episode after episode",
        "legal.npz": "legal_mask, next_legal_mask, legal_known: row for row with dataset.npz",
        "episodes.npz": "per episode: episode (the store's id), player (-1: all seats), "
                        "start, length, final_observation, final_legal_mask",
        "timeouts": "the rows' truncated flags, and the last step of an episode that ends "
                    "neither terminal nor truncated; d3rlpy makes no transition of a "
                    "timeout's last step"}}
    tell(episodes.steps)
    return [out / "dataset.npz", out / "legal.npz", out / "episodes.npz",
            _write_json(out / "metadata.json", meta | d3)]


def load_d3rlpy(out: str | Path) -> tuple[Any, dict[str, NDArray[Any]]]:
    """A d3rlpy export as a ``d3rlpy.dataset.MDPDataset`` and its legal masks
    (``legal_mask``, ``next_legal_mask``, ``legal_known``, row for row with the dataset's
    steps, episode after episode)."""
    try:
        d3rlpy = import_d3rlpy()
    except ImportError:
        raise ExportError(f"load_d3rlpy needs d3rlpy, which is not installed: {EXTRA}",
                          "to") from None
    out = Path(out)
    meta = json.loads((out / "metadata.json").read_text())
    with np.load(out / "dataset.npz") as arrays, d3rlpy_quietly():
        dataset = d3rlpy.dataset.MDPDataset(
            arrays["observations"], arrays["actions"], arrays["rewards"],
            arrays["terminals"], arrays["timeouts"],
            action_space=d3rlpy.ActionSpace.DISCRETE, action_size=len(meta["action_names"]))
    with np.load(out / "legal.npz") as legal:
        masks = {k: legal[k] for k in legal.files}
    return dataset, masks


def _write_rllib(episodes: Episodes, meta: dict[str, Any], out: Path,
                 tell: Callable[[int], None]) -> list[Path]:
    data = episodes.data
    features, actions = len(data.feature_names), len(data.action_names)
    ids, players = episodes.episode_ids, episodes.players
    eps_ids = (ids if episodes.by == "episode"
               else np.char.add(np.char.add(ids, "/"), players.astype(str)))
    footer = {b"batchrl": json.dumps(meta).encode()}
    (out / "data").mkdir()
    files: list[Path] = []
    writer: Any = None
    rows_in_file = 0
    try:
        for lo, hi in episodes.chunks(CHUNK_ROWS):
            steps = episodes.step_arrays(lo, hi)
            lengths = episodes.lengths[lo:hi]
            rows = episodes.rows[episodes.starts[lo]:episodes.starts[hi]]
            table = pa.table({
                "eps_id": pa.array(np.repeat(eps_ids[lo:hi], lengths), pa.string()),
                "agent_id": pa.array(np.char.add("player_",
                                                 data.player[rows].astype(str)), pa.string()),
                "t": pa.array(steps["t"], pa.int64()),
                "obs": _fixed(pa, steps["obs"], features),
                "actions": pa.array(steps["actions"], pa.int64()),
                "rewards": pa.array(steps["rewards"], pa.float64()),
                "new_obs": _fixed(pa, steps["new_obs"], features),
                "terminateds": pa.array(steps["terminals"], pa.bool_()),
                "truncateds": pa.array(steps["truncated"], pa.bool_()),
                "action_mask": _fixed(pa, steps["legal_mask"], actions),
                "new_action_mask": _fixed(pa, steps["next_legal_mask"], actions),
                "legal_known": pa.array(steps["legal_known"], pa.bool_()),
                "episode": pa.array(np.repeat(ids[lo:hi], lengths), pa.string()),
                "player": pa.array(data.player[rows], pa.int8()),
            })
            if writer is None or rows_in_file >= RLLIB_FILE_ROWS:
                if writer is not None:
                    writer.close()
                files.append(out / "data" / f"part-{len(files):05d}.parquet")
                writer = pq.ParquetWriter(files[-1], table.schema.with_metadata(footer),
                                          compression="zstd")
                rows_in_file = 0
            writer.write_table(table)
            rows_in_file += table.num_rows
            tell(table.num_rows)
    finally:
        if writer is not None:
            writer.close()
    rl = {"rllib": {
        "data": "data/*.parquet: one row per step; RLlib's offline columns eps_id, agent_id, "
                "t, obs, actions, rewards, new_obs, terminateds, truncateds; beside them "
                "action_mask, new_action_mask, legal_known, episode, player",
        "read": "config.offline_data(input_=[OUT/data]) in RLlib; pandas.read_parquet or "
                "pyarrow.parquet.read_table without it"}}
    return [*files, _write_json(out / "metadata.json", meta | rl)]


def _fixed(pa: Any, matrix: NDArray[Any], width: int) -> Any:
    """A matrix as an Arrow fixed-size list column, a row per row."""
    return pa.FixedSizeListArray.from_arrays(pa.array(np.ascontiguousarray(matrix).ravel()),
                                             width)
