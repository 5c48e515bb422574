"""The ``export`` command: a store written for Minari, d3rlpy or RLlib (``batchrl.export``
does the work; ``batchrl.cli.main`` registers the command on the ``batchrl`` group)."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from batchrl.cli.common import OUT_DIR, STORE, progress, split_names
from batchrl.export import (
    FORMATS,
    GROUPINGS,
    ExportError,
    ExportResult,
    check_request,
    recommended_features,
)
from batchrl.export import export as run_export
from batchrl.store import Store, StoreError, default_store_path


def _load_hint(result: ExportResult) -> str:
    out = shlex.quote(str(result.out))
    if result.to == "minari":
        return (f"load: MINARI_DATASETS_PATH={out} python -c \"import minari; "
                f"print(minari.load_dataset('{result.dataset_id}'))\"")
    if result.to == "d3rlpy":
        return (f"load: batchrl.export.load_d3rlpy({str(result.out)!r}), or d3rlpy.dataset."
                f"MDPDataset(**numpy.load({str(result.out / 'dataset.npz')!r}), action_space="
                f"d3rlpy.ActionSpace.DISCRETE, action_size="
                f"{len(result.metadata['action_names'])})")
    return f"load: pandas.read_parquet({str(result.out / 'data')!r}), or RLlib's " \
           f"config.offline_data(input_=[{str(result.out / 'data')!r}])"


@click.command("export", context_settings={"max_content_width": 100})
@click.argument("store", required=False, type=STORE)
@click.option("--to", "to", type=click.Choice(FORMATS), required=True,
              help="The library to write for (see above for what each gets).")
@click.option("-o", "--out", type=OUT_DIR, required=True,
              help="Where: for minari, a Minari datasets root (what MINARI_DATASETS_PATH "
                   "names; the dataset goes to OUT/ID, which must not exist); for d3rlpy and "
                   "rllib, a new or empty directory.")
@click.option("--id", "dataset_id", default=None, metavar="NAMESPACE/NAME-vN",
              help="The Minari dataset's id [default: batchrl/<game>-v0, e.g. "
                   "batchrl/tressette-v0]. Minari only.")
@click.option("--by", type=click.Choice(GROUPINGS), default="auto", show_default=True,
              help="An episode is one seat's decisions in a store episode (seat), or all of "
                   "a store episode's decisions (episode: for stores whose next state is the "
                   "next mover's, as Hanabi's team games); auto picks the one the store's "
                   "next states follow.")
@click.option("--features", multiple=True, metavar="NAME[,NAME...]",
              help="Export only these features (see batchrl info); shell patterns such as "
                   "'hand_*' allowed; '*' exports all [default: the game's recommended, as "
                   "fqi reads them].")
@click.option("--drop", multiple=True, metavar="NAME[,NAME...]",
              help="Leave these features out; patterns as for --features [default: the "
                   "game's recommended].")
def export(store: Path | str | None, to: str, out: Path, dataset_id: str | None, by: str,
           features: tuple[str, ...], drop: tuple[str, ...]) -> None:
    """Write a store for the field's offline-RL libraries: Minari, d3rlpy, RLlib.

    STORE (a directory or a URL, as fqi's --store) defaults to datasets/store
    (or $BATCHRL_STORE). An episode is one seat's
    decisions in one hand or game (or a whole game's, see --by), in order: T states
    plus the last row's next state (T + 1 observations), T actions and rewards, the
    terminal and truncated flags the store records. Every export carries the game, the
    feature and action names, what a reward counts and the legal mask of every
    observation. The first observation of a seat has no recorded mask (the store keeps
    the masks of next states): it is all ones, flagged legal_known = False.

    \b
    What each format gets:
      minari  a Minari dataset (HDF5) under OUT/ID: Box observations, Discrete
              actions, infos action_mask and legal_known (T + 1 each); the
              metadata under "batchrl", each episode's store id and seat in its
              episode metadata. minari.load_dataset(ID) with MINARI_DATASETS_PATH=OUT.
      d3rlpy  OUT/dataset.npz, the arrays d3rlpy.dataset.MDPDataset takes
              (observations, actions, rewards, terminals, timeouts); OUT/legal.npz,
              the masks row for row; OUT/episodes.npz; OUT/metadata.json.
              batchrl.export.load_d3rlpy(OUT) builds the MDPDataset.
      rllib   OUT/data/*.parquet, a row per step in RLlib's offline columns (eps_id,
              agent_id, t, obs, actions, rewards, new_obs, terminateds, truncateds)
              plus action_mask, new_action_mask, legal_known; OUT/metadata.json.
              RLlib is not needed to write them.
    \b
    Examples:
      batchrl export datasets/tressette --to minari -o ~/.minari/datasets
      batchrl export datasets/tressette --to minari --id me/tressette-canonical-v1 -o mds
      batchrl export datasets/demo --to d3rlpy -o exports/demo-d3rlpy --drop pv
      batchrl export datasets/hanabi --to rllib -o exports/hanabi-rllib
    \b
    minari and d3rlpy come with the export extra: pip install -e '.[export]'.
    """
    root = store if store is not None else default_store_path()
    try:
        check_request(to, dataset_id, by)
        opened = Store.open(root)
        chosen, drops = split_names(features) or None, split_names(drop)
        said = ""
        if chosen is None and not drops:  # the features the game's learners read
            opened.check(pages=False)  # store.json's game is the parts' before it is asked
            chosen, drops, said = recommended_features(opened)
        total = opened.info().rows
        with progress(total, f"writing {to}") as advance:
            result = run_export(opened, to, out, dataset_id=dataset_id, by=by,
                                features=chosen, drop=drops, progress=advance)
    except (ExportError, StoreError) as exc:
        raise click.ClickException(str(exc)) from None
    if said:
        click.echo(said)
    click.echo(result.summary())
    click.echo(f"reward: {result.metadata['reward_unit']}")
    click.echo(_load_hint(result))
