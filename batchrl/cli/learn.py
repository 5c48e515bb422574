"""The learning commands beyond fqi: `batchrl learn NAME` (any registered learner, its
options made from its config), `batchrl ablate` (which features a hero of any learner
needs, on any game) and `batchrl imitate` (a network that imitates the logged
players)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click

from batchrl.cli.common import (
    JOBS,
    STORE,
    STORE_HELP,
    game_options,
    games_help,
    progress,
    split_names,
    take_game_options,
)
from batchrl.games import GameError, game_for

STEP_EVERY = 30.0  # seconds between progress lines while a learner fits


class LearnGroup(click.Group):
    """``batchrl learn NAME``: a command per registered learner (``batchrl.learners``), found
    when it runs, so a learner registered by a notebook or a test is offered too."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        from batchrl.learners import LEARNERS

        return list(LEARNERS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        from batchrl.learners import LEARNERS, LearnerError

        learner = LEARNERS.get(cmd_name)
        if learner is None:
            return None
        if learner.command is not None:  # a learner with a command of its own (fqi)
            root = ctx.find_root().command
            if isinstance(root, click.Group) and root is not self:
                return root.get_command(ctx, learner.command)
            return None  # learn alone, without the batchrl group that holds that command
        try:
            return learner_command(learner)
        except LearnerError as exc:  # a learner found as a package, with a config no
            message = str(exc)       # command line can give: said when it is asked for

            def refuse() -> None:
                raise click.ClickException(message)

            return click.Command(cmd_name, callback=refuse, short_help=f"(unusable: {message})")


@click.group(cls=LearnGroup)
def learn() -> None:
    """Learn a policy from a store with any learner: batchrl learn NAME --store S.

    Each learner's settings are its options (batchrl learn NAME --help); with no
    flags it uses the store's game's recommended settings and prints them. The
    model file plays wherever a model does: batchrl evaluate --model PATH, or
    model:PATH among --players.

    \b
    Examples:
      batchrl learn bc --store datasets/store          # behaviour cloning
      batchrl learn fqi --store datasets/store         # the same as batchrl fqi
      batchrl policy show datasets/store/models/bc.npz
    """


def learner_command(learner: Any) -> click.Command:
    """The command that runs ``learner``: the store and data options every learner takes,
    and one option per field of its config."""
    params: list[click.Parameter] = [
        click.Option(["--store", "store"], type=STORE, default=None, help=STORE_HELP)]
    for name, kind, default, text in learner.settings():
        switch = kind is bool
        flag = name.replace("_", "-")
        shown = "all" if default is None else default
        params.append(click.Option(
            [f"--{flag}/--no-{flag}" if switch else f"--{flag}", name],
            type=None if switch else kind, default=None,
            help=f"{text} [default: the game's, else {shown}]".strip()))
    params += [
        click.Option(["--features"], multiple=True, metavar="NAME[,NAME...]",
                     help="Use only these features (see batchrl info); shell patterns "
                          "allowed [default: the game's]."),
        click.Option(["--drop"], multiple=True, metavar="NAME[,NAME...]",
                     help="Leave these features out [default: the game's]."),
        click.Option(["--player", "players"], multiple=True, metavar="NAME[,NAME...]",
                     help="Learn only from these players' decisions (as fqi --player)."),
        click.Option(["--jobs", "-j"], type=JOBS, default=-1, show_default=True,
                     help="Worker threads (-1: every core). Results do not depend on it."),
        click.Option(["--out"], type=click.Path(dir_okay=False, path_type=Path),
                     default=None,
                     help=f"Model file [default: STORE/models/{learner.name}[-SETTING...]"
                          ".npz, named by every setting that is not the default]."),
    ]

    def run(store: Path | str | None, features: tuple[str, ...], drop: tuple[str, ...],
            players: tuple[str, ...], jobs: int, out: Path | None, **given: Any) -> None:
        from batchrl.learning import learn as fit
        from batchrl.learning import settings
        from batchrl.policy import ModelError
        from batchrl.store import StoreError, default_store_path

        root = store if store is not None else default_store_path()
        try:
            chosen = settings(learner, root, given, split_names(features) or None,
                              split_names(drop) or None)
        except (StoreError, ValueError) as exc:
            raise click.ClickException(str(exc)) from None
        click.echo(chosen.said)
        started = last = time.perf_counter()

        def step(what: str, done: int, total: int) -> None:
            nonlocal last
            if time.perf_counter() - last >= STEP_EVERY or sys.stderr.isatty():
                click.echo(f"  ... {done} of {total} {what}", err=True)
                last = time.perf_counter()

        try:
            path, _ = fit(learner, root, chosen, players=split_names(players), jobs=jobs,
                          out=out, progress=step)
        except (StoreError, ModelError, ValueError) as exc:
            raise click.ClickException(str(exc)) from None
        except OSError as exc:  # the model file cannot be written there
            raise click.ClickException(f"{exc.filename or out}: {exc.strerror or exc}") from None
        click.echo(f"done in {time.perf_counter() - started:.1f} s: model in {path}")
        click.echo(f"play it: batchrl evaluate --model {path}")

    title = learner.title or f"The {learner.name} learner."
    return click.Command(
        learner.name, params=params, callback=run, short_help=title,
        help=f"{title}\n\nWith no flags it uses the store's game's recommended settings "
             f"and prints them; any flag given wins.\n\n\b\nExample:\n  batchrl learn "
             f"{learner.name} --store datasets/store",
        context_settings={"max_content_width": 100})


def settings_given(name: str, given: tuple[str, ...]) -> dict[str, Any]:
    """``--set NAME=VALUE`` options as the learner's settings, each of its setting's type;
    a `batchrl.learners.LearnerError` (a ValueError) names what is wrong."""
    from batchrl.learners import LearnerError, get_learner
    from batchrl.learning import EXPLICIT_NONE

    learner = get_learner(name)
    types = {n: t for n, t, _, _ in learner.settings()}
    out: dict[str, Any] = {}
    for item in given:
        key, sep, text = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in types:
            raise LearnerError(f"--set {item!r}: want NAME=VALUE with NAME one of "
                               f"{learner.name}'s settings: {', '.join(types)}")
        kind, word = types[key], text.strip().lower()
        if word == "none":
            out[key] = EXPLICIT_NONE
        elif kind is bool:
            if word not in ("1", "true", "yes", "on", "0", "false", "no", "off"):
                raise LearnerError(f"--set {item!r}: {key} is true or false")
            out[key] = word in ("1", "true", "yes", "on")
        else:
            try:
                out[key] = kind(text.strip())
            except ValueError:
                raise LearnerError(f"--set {item!r}: {key} is a {kind.__name__}") from None
    return out


@click.command()
@click.option("--store", "store", type=STORE,
              default=None, help=STORE_HELP)
@click.option("--learner", default="fqi", show_default=True, metavar="NAME",
              help="The learner every hero is learned by (batchrl learn --help lists them).")
@click.option("--set", "given", multiple=True, metavar="NAME=VALUE",
              help="One of the learner's settings (batchrl learn NAME --help), for every "
                   "hero; repeat for more. Over --trees, --nmin, --iters, --fast, "
                   "--per-action.")
@click.option("--opponent", default=None, metavar="PLAYER[,PLAYER...]",
              help="Who every hero plays: the players after it, as evaluate's --players "
                   "takes them; one name fills every seat [default: the game's: " + games_help(
                       lambda g: ",".join(g.ablation_opponents) or "none (alone)"
                       if g.can("score") else None) + "].")
@click.option("--trees", "-M", type=click.IntRange(min=1), default=None,
              help="M: trees per forest [default: the game's recommendation for the "
                   "learner, else the learner's].")
@click.option("--nmin", type=click.IntRange(min=2), default=None,
              help="n_min: rows to split a node [default: as --trees].")
@click.option("--iters", "-N", type=click.IntRange(min=1), default=None,
              help="N: FQI iterations [default: as --trees].")
@click.option("--hands", type=click.IntRange(min=2), default=20000, show_default=True,
              help="Games (hands) per hero, an even number: hold'em's duplicate, each deal "
                   "played from both seats.")
@click.option("--seed", default=33, show_default=True,
              help="Evaluation seed, shared by every hero: the same deals for all.")
@click.option("--features", multiple=True, metavar="NAME[,NAME...]",
              help="Drop only these, one at a time [default: every feature].")
@click.option("--groups", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help='Drop named groups instead: a JSON file like '
                                 '{"betting": ["bet_flop", "bet_turn"]}.')
@click.option("--player", "players", multiple=True, metavar="NAME[,NAME...]",
              help="Learn only from these players' decisions (as batchrl fqi --player).")
@click.option("--fast/--no-fast", default=None,
              help="FQI fast mode (trees grown once) for every hero [default: as --trees].")
@click.option("--per-action/--joint", "per_action", default=None,
              help="FQI: one regressor per action, or one on (state, action) [default: as "
                   "--trees].")
@click.option("--jobs", "-j", type=JOBS, default=-1, show_default=True,
              help="Threads for the trees (-1: every core).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Heroes, per-hand results and the table [default: STORE/ablation].")
@click.option("--scheduler", envvar="BATCHRL_SCHEDULER", default=None, metavar="ADDRESS",
              help="Train and play each hero as one task on a Dask cluster "
                   "(tcp://HOST:8786; or set BATCHRL_SCHEDULER): the same table as here. "
                   "The store and --out must be on a filesystem the workers share. Needs "
                   "pip install 'batchrl[dask]'; see the README's Dask section.")
def ablate(store: Path | str | None, learner: str, given: tuple[str, ...],
           opponent: str | None, trees: int | None, nmin: int | None, iters: int | None,
           hands: int, seed: int, features: tuple[str, ...], groups: Path | None,
           players: tuple[str, ...], fast: bool | None, per_action: bool | None, jobs: int,
           out: Path | None, scheduler: str | None) -> None:
    """Which features a hero needs: one hero per dropped feature, with 95% CIs.

    Learns the full hero and one hero without each feature (or group), with any
    learner, on any game; the game scores each on the same deals against its
    opponents (hold'em: bb/hand on duplicate deals; tressette: hands won;
    president: first places; hanabi: cards played with the partner; sette e
    mezzo: the exact expected stake) and the table gives the change from the
    full hero with a paired 95% confidence interval. Beside it: the impurity
    importances of a forest and the permutation importance on held-out episodes.
    The table goes to CSV and Parquet; a rerun reuses every finished hero and
    result.

    \b
    Examples (the first, the thesis's Figure 5.6):
      batchrl ablate --store datasets/rule --opponent rule --player random \\
          --trees 50 --nmin 20 --iters 11 --fast --hands 20000
      batchrl ablate --store datasets/tressette --learner bc --hands 2000
      batchrl ablate --scheduler tcp://HOST:8786 ...   # a hero per task on a cluster
    """
    from batchrl.ablation import AblationConfig, load_groups, run_ablation
    from batchrl.cluster import ClusterError, scheduler_address
    from batchrl.policy import ModelError
    from batchrl.store import Store, StoreError, default_store_path

    root = store if store is not None else default_store_path()
    try:
        names = Store.open(root).schema.feature_names
        config = AblationConfig(
            store=root, opponent=opponent, trees=trees, nmin=nmin, iters=iters, hands=hands,
            seed=seed, features=split_names(features) or None,
            groups=load_groups(groups, names) if groups else None, players=split_names(players),
            fast=fast, per_action=per_action, jobs=jobs, out=out,
            scheduler=scheduler_address(scheduler), learner=learner,
            settings=settings_given(learner, given))
        result = run_ablation(config, on_step=lambda m: click.echo(m, err=True))
    except (StoreError, ModelError, ValueError, ClusterError) as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:  # --out cannot be written, say
        raise click.ClickException(f"{exc.filename or out}: {exc.strerror or exc}") from None
    click.echo(result.text())
    click.echo(f"table: {result.path} (and .parquet)")


@click.command()
@click.option("--store", "store", type=STORE,
              default=None, help=STORE_HELP)
@click.option("--epochs", type=click.IntRange(min=1), default=100, show_default=True,
              help="Passes over the training games.")
@click.option("--player", "players", multiple=True, metavar="NAME[,NAME...]",
              help="Learn only these players' moves (see the names in batchrl info), e.g. "
                   "human in Eger et al.'s games [default: every move].")
@click.option("--hidden", default=None, metavar="N,N,...",
              help="Hidden layer widths [default: the game's; Hanabi's: the report's "
                   "195,128,64,32].")
@click.option("--dropout", type=click.FloatRange(0, 1, max_open=True), default=0.1,
              show_default=True, help="Dropout after each hidden layer but the last.")
@click.option("--batchnorm/--no-batchnorm", default=True, show_default=True,
              help="Batch normalisation before the output layer.")
@click.option("--batch-size", type=click.IntRange(min=1), default=256, show_default=True,
              help="Moves per gradient step.")
@click.option("--lr", "learning_rate", type=click.FloatRange(0, min_open=True), default=1e-3,
              show_default=True,
              help="Adam's learning rate.")
@game_options("imitate")
@click.option("--keep-best/--keep-last", default=True, show_default=True,
              help="Keep the network of the epoch best on the validation games, or the last.")
@click.option("--seed", default=0, show_default=True, help="The game split and the weights.")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="CPU threads for torch [default: one per core].")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Network file [default: STORE/models/imitation[-PLAYER][-colour].pt]; a "
                   "plot of the curves (.png) and the figures (.json) go beside it.")
def imitate(store: Path | str | None, epochs: int, players: tuple[str, ...], hidden: str | None,
            dropout: float, batchnorm: bool, batch_size: int, learning_rate: float,
            keep_best: bool, seed: int, threads: int | None, out: Path | None,
            **kwargs: Any) -> None:
    """Train a network to predict the moves in a store (Hanabi's: the report's network).

    Games are split 70/20/10 (train, validation, test) by game, never by row.
    Prints each epoch's loss and accuracy, then the test set's per-move
    precision, recall and F1 (the report's Figure 5), and saves the network, a
    plot of the curves and the figures. Play it with
    batchrl evaluate --game hanabi --players model:PATH,bot2.

    \b
    Examples:
      batchrl imitate --store datasets/hanabi --epochs 100
      batchrl imitate --store datasets/eger --player human --epochs 30
      batchrl imitate --store datasets/hanabi --colour-order
    Needs torch: pip install -e '.[imitation]' (or pip install torch==2.13.0).
    """
    from batchrl.imitation import (
        Epoch,
        NetworkConfig,
        batches_per_epoch,
        can_plot,
        default_out,
        train,
        write_figures,
    )
    from batchrl.store import Store, StoreError, default_store_path

    root = store if store is not None else default_store_path()
    try:  # the store's game must have a network: one clear line if it has none
        opened = Store.open(root)
        opened.check()
        schema = opened.schema
        game = game_for(schema.game, schema.game_params)
        options = take_game_options("imitate", kwargs, game)
        spec = game.imitation(options)  # what the network reads and masks: the game's
    except (StoreError, GameError) as exc:
        raise click.ClickException(str(exc)) from None
    try:
        widths = tuple(int(w) for w in hidden.split(",")) if hidden is not None else None
    except ValueError:
        raise click.BadParameter(f"{hidden!r}: want widths like 195,128,64,32",
                                 param_hint="--hidden") from None
    config = NetworkConfig(hidden=widths, dropout=dropout, batchnorm=batchnorm, epochs=epochs,
                           batch_size=batch_size, learning_rate=learning_rate, seed=seed,
                           threads=threads, keep_best=keep_best)
    who = split_names(players)
    if out is None:
        out = default_out(root, spec, who)
    if not can_plot():
        click.echo("matplotlib is not installed: the network and its figures are saved, the "
                   "curves not drawn (pip install -e '.[imitation]' draws them)", err=True)
    header = [f"{'epoch':>5} {'train loss':>10} {'train acc':>9} {'val loss':>9} "
              f"{'val acc':>8} {'seconds':>8}"]

    def line(e: Epoch) -> None:
        while header:  # the header with the first epoch: an error comes before it
            click.echo(header.pop())
        click.echo(f"{e.epoch:>5} {e.train_loss:>10.4f} {e.train_accuracy:>9.2%} "
                   f"{e.val_loss:>9.4f} {e.val_accuracy:>8.2%} {e.seconds:>8.1f}")

    try:
        total = batches_per_epoch(root, who, config) * epochs
        with progress(total, "training") as advance:
            result = train(root, out, config, spec, who, progress=advance, on_epoch=line)
    except (ValueError, StoreError) as exc:  # ImitationError is a ValueError
        raise click.ClickException(str(exc)) from None
    if "best_epoch" in result.extra:
        click.echo(f"kept the network of epoch {result.extra['best_epoch']} (best validation "
                   f"accuracy)")
    click.echo(f"\ntest set: {result.split_games[2]:,} games, {result.split_rows[2]:,} moves "
               f"(train {result.split_games[0]:,} games, validation {result.split_games[1]:,})")
    click.echo(result.table())
    by_partner = result.extra.get("accuracy_by_partner", {})
    if len(by_partner) > 1:
        click.echo("\ntest accuracy by partner:")
        for name, figures_of in by_partner.items():
            click.echo(f"  {name:<24} {figures_of['accuracy']:>7.2%}  "
                       f"({figures_of['moves']:,} moves)")
    plot, figures = write_figures(result)
    click.echo(f"network: {out}\ncurves:  {plot or 'not drawn (no matplotlib)'}\n"
               f"figures: {figures}")


# the playing commands live in their own module
