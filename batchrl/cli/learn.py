"""The learning commands beyond fqi: `batchrl learn NAME` (any registered learner, its
options made from its config), `batchrl ablate` (which features a hero of any learner
needs, on any game) and `batchrl imitate` (a network that imitates the logged
players)."""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import inspect
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import click

from batchrl.cli.common import (
    JOBS,
    OUT_DIR,
    OUT_FILE,
    STORE,
    STORE_HELP,
    game_options,
    games_help,
    interrupted,
    progress,
    split_names,
    take_game_options,
)
from batchrl.cluster import ClusterError, scheduler_address
from batchrl.learners import EXPLICIT_NONE, LEARNERS, LearnerError, RunOption, get_learner
from batchrl.learners.network.report import (
    can_plot,
    class_report,
    confusion,
    epochs_table,
    table,
    write_figures,
)
from batchrl.learners.network.training import split_by_game
from batchrl.learning import (
    checkpoints_of,
    deal_groups,
    model_path,
    recommended_learner,
    settings,
    settings_name,
)
from batchrl.learning import learn as fit
from batchrl.play.ablation import AblationConfig, load_groups, run_ablation
from batchrl.policy import ModelError
from batchrl.store import Store, StoreError, default_store_path

STEP_EVERY = 30.0  # seconds between progress lines while a learner fits


class LearnGroup(click.Group):
    """``batchrl learn NAME``: a command per registered learner (``batchrl.learners``), found
    when it runs, so a learner registered by a notebook or a test is offered too."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(LEARNERS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return command_of(cmd_name)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """No learner named (``batchrl learn --store S``): the store's game's recommended
        one (`batchrl.learning.recommended_learner`), said first; with ``--help``, that
        learner's help where the store opens, else the group's."""
        if not args or not args[0].startswith("-") or ctx.resilient_parsing:
            return super().parse_args(ctx, args)  # a learner named, or shell completion
        helped = any(a in ("-h", "--help") for a in args)
        store: str | Path = default_store_path()
        for i, arg in enumerate(args):
            if arg == "--store" and i + 1 < len(args):
                store = args[i + 1]
            elif arg.startswith("--store="):
                store = arg.split("=", 1)[1]
        try:
            name, game = recommended_learner(store)
        except (StoreError, ValueError) as exc:
            if helped:
                return super().parse_args(ctx, ["--help"])
            raise click.ClickException(str(exc)) from None
        click.echo(f"learner: {name} ({game}'s recommended learner; batchrl learn NAME for "
                   "another)")
        return super().parse_args(ctx, [name, *args])

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in LEARNERS:
            close = difflib.get_close_matches(name, list(LEARNERS), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise click.UsageError(f"no learner {name!r}: the learners are "
                                   f"{', '.join(LEARNERS)}.{hint}", ctx)
        return super().resolve_command(ctx, args)


def command_of(name: str) -> click.Command | None:
    """``batchrl learn NAME``'s command (None: no learner ``name``); a learner found as a
    package with a config no command line can give says so when it is asked for."""
    learner = LEARNERS.get(name)
    if learner is None:
        return None
    try:
        return learner_command(learner)
    except LearnerError as exc:
        message = str(exc)

        def refuse() -> None:
            raise click.ClickException(message)

        return click.Command(name, callback=refuse, short_help=f"(unusable: {message})")


@click.group(cls=LearnGroup)
def learn() -> None:
    """Learn a policy from a store with any learner: batchrl learn NAME --store S.

    With no learner named (batchrl learn --store S), the store's game's recommended
    one: the learner the benchmark shows best across the game's datasets. Each
    learner's settings are its options (batchrl learn NAME --help); with no flags it
    uses the store's game's recommended settings and prints them. The model file plays
    wherever a model does: batchrl evaluate --model PATH, or model:PATH among
    --players.

    \b
    Examples:
      batchrl learn --store datasets/store             # the game's recommended learner
      batchrl learn fqi --store datasets/store         # fitted Q-iteration (batchrl fqi)
      batchrl learn bc --store datasets/store          # behaviour cloning
      batchrl policy show datasets/store/models/bc.npz
    """


def _setting_option(name: str, kind: type, default: Any, text: str,
                    metadata: Mapping[str, Any]) -> click.Option:
    """One config field as an option: its flag, short flag, bounds, help and what its
    None means (``unset``) from the field's ``metadata`` (`batchrl.learners.Learner`);
    None is "not given", so the game's recommendation or the learner's default applies."""
    flag = name.replace("_", "-")
    decls = [str(metadata["flag"]) if "flag" in metadata else
             f"--{flag}/--no-{flag}" if kind is bool else f"--{flag}"]
    decls += [str(metadata["short"])] if "short" in metadata else []
    bounds = {k: metadata[k] for k in ("min", "max", "min_open", "max_open") if k in metadata}
    kind_of: Any = kind
    if bounds and kind is int:
        kind_of = click.IntRange(**bounds)
    elif bounds and kind is float:
        kind_of = click.FloatRange(**bounds)
    shown = metadata.get("unset", "none") if default is None else default
    return click.Option([*decls, name], type=None if kind is bool else kind_of, default=None,
                        metavar=metadata.get("metavar"),
                        help=f"{text} [default: the game's, else {shown}]".strip())


def _named(learner: Any) -> str:
    """A learner's model file's default name with its default settings, for ``--out``'s
    help."""
    config = learner.Config()
    return str(learner.file_name(config, None, (), (), "") or
               settings_name(learner, config, None, (), ()))


def learner_command(learner: Any) -> click.Command:
    """The command that runs ``learner``: the store and data options every learner takes,
    one option per field of its config, and its run-time options."""
    fields = {f.name: f.metadata for f in dataclasses.fields(learner.Config)}
    params: list[click.Parameter] = [
        click.Option(["--store", "store"], type=STORE, default=None, help=STORE_HELP)]
    for name, kind, default, text in learner.settings():
        params.append(_setting_option(name, kind, default, text, fields.get(name, {})))
    params += [
        click.Option(["--features"], multiple=True, metavar="NAME[,NAME...]",
                     help="Use only these features (see batchrl info); a name may be a "
                          "shell pattern such as 'hand_*' [default: the game's]."),
        click.Option(["--drop"], multiple=True, metavar="NAME[,NAME...]",
                     help="Leave these features out (ablation); patterns as for --features "
                          "[default: the game's]."),
        click.Option(["--player", "players"], multiple=True, metavar="NAME[,NAME...]",
                     help="Learn only from these players' decisions (names as batchrl info "
                          "lists them): the seat that faced the opponent you want to beat. "
                          "A name may be a shell pattern ('*.1'); !NAME leaves a player out "
                          "('!DeepStack': everyone else)."),
        click.Option(["--jobs", "-j"], type=JOBS, default=-1, show_default=True,
                     help="Worker threads (-1: every core). Results do not depend on it."),
        click.Option(["--out"], type=OUT_FILE, default=None,
                     help=f"Model file [default: STORE/models/NAME.npz, named by the "
                          f"settings that make it: {_named(learner)}.npz with the "
                          "learner's defaults].")]
    run_options: tuple[RunOption, ...] = learner.run_options
    for option in run_options:
        flag = f"--{option.name.replace('_', '-')}"
        if option.type is bool:
            params.append(click.Option([flag, option.name], is_flag=True, help=option.help))
        else:
            params.append(click.Option([flag, option.name], type=option.type, default=None,
                                       envvar=option.envvar, metavar=option.metavar,
                                       help=option.help))
    params += _view_options()
    run_names = {option.name for option in run_options}

    def run(store: Path | str | None, features: tuple[str, ...], drop: tuple[str, ...],
            players: tuple[str, ...], jobs: int, out: Path | None, **given: Any) -> None:
        root = store if store is not None else default_store_path()
        view = take_game_options("learn", given, None)
        run_given = {k: given.pop(k) for k in run_names if given.get(k) not in (None, False)}
        for k in run_names:
            given.pop(k, None)
        who = split_names(players)
        try:
            chosen = settings(learner, root, given, split_names(features) or None,
                              split_names(drop) or None, view=view or None)
            kept = checkpoints_of(model_path(learner, root, chosen, who, out)) \
                if learner.checkpoints else None
        except (StoreError, ValueError) as exc:
            raise click.ClickException(str(exc)) from None
        click.echo(chosen.said)
        done = 0
        if kept is not None and run_given.get("resume"):  # where it goes on from
            note = learner.resume_note(kept, chosen.config)
            if note:
                click.echo(note)
            done = learner.resumed(kept, chosen.config)
        started = time.perf_counter()
        try:
            with _reporting(learner, learner.history_length(chosen.config), done) as (
                    step, on_iteration):
                path, policy = fit(learner, root, chosen, players=who, jobs=jobs, out=out,
                                   progress=step, on_iteration=on_iteration, **run_given)
        except KeyboardInterrupt:
            if kept is None:
                raise
            interrupted(f"every finished iteration is checkpointed in {kept}: run the same "
                        "command with --resume to go on from the last one.")
        except (StoreError, ModelError, ValueError, ClusterError) as exc:
            raise click.ClickException(str(exc)) from None
        except OSError as exc:  # the model file cannot be written there
            raise click.ClickException(f"{exc.filename or out}: {exc.strerror or exc}") from None
        lines, warnings = learner.notes(path, getattr(policy, "policy", policy))
        for warning in warnings:
            click.echo(f"warning: {warning}", err=True)
        for line in lines:
            click.echo(line)
        click.echo(f"done in {time.perf_counter() - started:.1f} s: model in {path}")
        click.echo(f"play it: batchrl evaluate --model {path}")

    title = learner.title or f"The {learner.name} learner."
    own = type(learner).__doc__  # a learner's own docstring is its command's help
    text = inspect.cleandoc(own) if own else (
        f"{title}\n\nWith no flags it uses the store's game's recommended settings and "
        f"prints them; any flag given wins.\n\n\b\nExample:\n  batchrl learn "
        f"{learner.name} --store datasets/store")
    return click.Command(learner.name, params=params, callback=run, short_help=title,
                         help=text, context_settings={"max_content_width": 100})


@contextlib.contextmanager
def _reporting(learner: Any, length: int | None, before: int = 0
               ) -> Iterator[tuple[Callable[[str, int, int], None],
                               Callable[[dict[str, Any]], None] | None]]:
    """How a fit reports while it runs: ``progress(what, done, of)``, and for a learner
    with a history table, each entry as a row. On a terminal a bar (with the last
    entry's first figure) and the table at the end; piped, the header with the first row,
    each row as it comes, and a line on stderr every ``STEP_EVERY`` seconds at most,
    between rows, naming the entry under way (after ``before`` entries: a resume's)."""
    header = learner.history_header
    rows: list[str] = []
    last = [time.perf_counter()]
    if header is None:
        def step(what: str, done: int, total: int) -> None:
            if time.perf_counter() - last[0] >= STEP_EVERY or sys.stderr.isatty():
                click.echo(f"  ... {done} of {total} {what}", err=True)
                last[0] = time.perf_counter()

        yield step, None
        return
    if not sys.stderr.isatty() or length is None:
        waiting = [header]

        def echo(entry: dict[str, Any]) -> None:
            while waiting:  # the header with the first row: an error comes before it
                click.echo(waiting.pop())
            rows.append(learner.history_row(entry))
            click.echo(rows[-1])
            last[0] = time.perf_counter()

        def quiet_step(what: str, done: int, total: int) -> None:
            # a long iteration says what it is doing, every STEP_EVERY seconds at most
            if done and time.perf_counter() - last[0] >= STEP_EVERY:
                click.echo(f"  ... iteration {before + len(rows) + 1}: {done} of {total} "
                           f"{what}", err=True)
                last[0] = time.perf_counter()

        yield quiet_step, echo
        return
    with click.progressbar(length=length, label=learner.name, file=sys.stderr,
                           show_eta=True, show_pos=True) as bar:
        bar.update(before)
        said = [""]

        def advance(entry: dict[str, Any]) -> None:
            rows.append(learner.history_row(entry))
            first = next((f"{k.replace('_', ' ')} {v:.4g}" for k, v in entry.items()
                          if isinstance(v, float)), "")
            said[0] = first
            bar.label = f"{learner.name} ({first})"
            bar.update(1)

        def bar_step(what: str, done: int, total: int) -> None:
            parts = filter(None, [said[0], f"{done}/{total} {what}"])
            bar.label = f"{learner.name} ({', '.join(parts)})"
            bar.render_progress()

        yield bar_step, advance
    click.echo(header)
    click.echo("\n".join(rows))


def _view_options() -> list[click.Parameter]:
    """The games' options of their views of the features (``LearnFace.view``), as
    ``batchrl learn NAME`` takes them."""
    @game_options("learn")
    def holder() -> None: ...

    return list(getattr(holder, "__click_params__", []))[::-1]


def settings_given(name: str, given: tuple[str, ...]) -> dict[str, Any]:
    """``--set NAME=VALUE`` options as the learner's settings, each of its setting's type;
    a `batchrl.learners.base.LearnerError` (a ValueError) names what is wrong."""
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
                       lambda g: ",".join(g.play.ablation_opponents) or "none (alone)"
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
@click.option("--out", type=OUT_DIR, default=None,
              help="Heroes, per-hand results and the table [default: STORE/ablation].")
@click.option("--scheduler", envvar="BATCHRL_SCHEDULER", default=None, metavar="ADDRESS",
              help="Train and play each hero as one task on a Dask cluster "
                   "(tcp://HOST:8786; or set BATCHRL_SCHEDULER): the same table as here. "
                   "The store and --out must be on a filesystem the workers share. Needs "
                   "pip install 'batchrl[dask]'; see docs/scale.md.")
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
@click.option("--epochs", type=click.IntRange(min=1), default=None,
              help="Passes over the training games [default: the game's, else 30].")
@click.option("--player", "players", multiple=True, metavar="NAME[,NAME...]",
              help="Learn only these players' moves (see the names in batchrl info), e.g. "
                   "human in Eger et al.'s games [default: every move].")
@click.option("--hidden", default=None, metavar="N,N,...",
              help="Hidden layer widths [default: the game's; Hanabi's: the report's "
                   "195,128,64,32].")
@click.option("--dropout", type=click.FloatRange(0, 1, max_open=True), default=None,
              help="Dropout after each hidden layer but the last [default: 0.1].")
@click.option("--batchnorm/--no-batchnorm", default=None,
              help="Batch normalisation before the output layer [default: on].")
@click.option("--batch-size", type=click.IntRange(min=2), default=None,
              help="Moves per gradient step [default: 256].")
@click.option("--lr", "learning_rate", type=click.FloatRange(0, min_open=True), default=None,
              help="Adam's learning rate [default: 0.001].")
@game_options("imitate")
@click.option("--mask/--no-mask", default=None,
              help="Mask the moves a state cannot allow out of the softmax in training "
                   "[default: on].")
@click.option("--keep-best/--keep-last", default=None,
              help="Keep the network of the epoch best on the validation games, or the last "
                   "[default: best].")
@click.option("--seed", type=int, default=None, help="The game split and the weights "
              "[default: 0].")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="CPU threads for torch [default: one per core].")
@click.option("--out", type=OUT_FILE, default=None,
              help="Model file [default: STORE/models/network[-SETTING...][-VIEW].npz]; a "
                   "plot of the curves (.png) and the figures (.json) go beside it.")
def imitate(store: Path | str | None, players: tuple[str, ...], threads: int | None,
            out: Path | None, **kwargs: Any) -> None:
    """Train a network to predict the moves in a store: batchrl learn network, with
    the report's figures.

    With no flags it takes the game's recommended settings and view and prints them
    (Hanabi's: the report's network on colour-ordered states and the convention's
    facts). Games are split 70/20/10 (train, validation, test) by game, never by
    row. Prints each epoch's loss and accuracy, then the test set's per-move
    precision, recall and F1 (the report's Figure 5), and saves the model, a plot
    of the curves and the figures. Play it with
    batchrl evaluate --game hanabi --players model:PATH,bot2.

    \b
    Examples:
      batchrl imitate --store datasets/hanabi
      batchrl imitate --store datasets/hanabi --features report --no-colour-order
      batchrl imitate --store datasets/eger --player human
    Needs torch to train: pip install -e '.[imitation]' (without a GPU, first
    pip install torch --index-url https://download.pytorch.org/whl/cpu: docs/interop.md).
    """
    root = store if store is not None else default_store_path()
    view = take_game_options("imitate", kwargs, None)
    learner = get_learner("network")
    who = split_names(players)
    try:
        chosen = settings(learner, root, kwargs, view=view or None)
    except (StoreError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(chosen.said)
    if not can_plot():
        click.echo("matplotlib is not installed: the network and its figures are saved, the "
                   "curves not drawn (pip install -e '.[imitation]' draws them)", err=True)
    try:
        with progress_steps("training") as step:
            path, policy = fit(learner, root, chosen, players=who, jobs=threads or -1,
                               out=out, progress=step)
        shown, figures = test_report(root, policy, chosen, who)
        plot, written = write_figures(path, figures)
    except (StoreError, ModelError, ValueError) as exc:  # a LearnerError is a ValueError
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"{exc.filename or out}: {exc.strerror or exc}") from None
    click.echo(shown)
    click.echo(f"network: {path}\ncurves:  {plot or 'not drawn (no matplotlib)'}\n"
               f"figures: {written}")


@contextlib.contextmanager
def progress_steps(label: str) -> Iterator[Callable[[str, int, int], None]]:
    """A learner's ``progress(what, done, of)`` as a progress bar (nothing when piped)."""
    bar: Any = None
    shown = 0
    with contextlib.ExitStack() as stack:
        def step(what: str, done: int, total: int) -> None:
            nonlocal bar, shown
            if bar is None:
                bar = stack.enter_context(progress(total, label))
            bar(done - shown)
            shown = done

        yield step


def test_report(store: Path | str, policy: Any, chosen: Any, players: tuple[str, ...]
                ) -> tuple[str, dict[str, Any]]:
    """The network's epochs, the test games' per-move report (as played, through the
    game's view), the test accuracy by partner where the store names partners, and where
    the figures went."""
    meta = policy.meta
    opened = Store.open(store)
    t = opened.arrays(features=list(policy.feature_names), players=players)
    groups = deal_groups(opened, t, players)
    test = split_by_game(groups if groups is not None else t.episode,
                         chosen.config.seed) == 2
    states = t.state[test]
    view = getattr(policy, "view", None)
    recorded = None if t.legal is None else t.legal[test]  # the store's, where it has them
    possible = view.possible(states) if view is not None else None  # else the store's
    legal = (recorded if possible is None else possible) if chosen.config.mask else None
    predicted = policy.act(states, legal)
    truth = t.action[test]
    table_of = confusion(truth, predicted, len(t.action_names))
    report = class_report(table_of, t.action_names)
    accuracy = float((predicted == truth).mean())
    lines = [epochs_table(meta["history"]),
             f"kept the network of epoch {meta['best_epoch']} (best validation accuracy)"
             if chosen.config.keep_best else "kept the network of the last epoch",
             f"\ntest set: {meta['split_games'][2]:,} games, {meta['split_rows'][2]:,} moves "
             f"(train {meta['split_games'][0]:,} games, validation {meta['split_games'][1]:,})",
             table(report, accuracy)]
    extra: dict[str, Any] = {}
    if "partner" in opened.schema.audit_columns:  # e.g. a human's accuracy per AI partner
        partner = opened.audit("partner", players)[test]
        extra["accuracy_by_partner"] = {
            str(p): {"accuracy": float((predicted == truth)[partner == p].mean()),
                     "moves": int((partner == p).sum())} for p in sorted(set(partner))}
        if len(extra["accuracy_by_partner"]) > 1:
            lines.append("\ntest accuracy by partner:")
            lines += [f"  {name:<24} {f['accuracy']:>7.2%}  ({f['moves']:,} moves)"
                      for name, f in extra["accuracy_by_partner"].items()]
    figures = {"settings": meta.get("params"), "view": meta.get("view"),
               "players": list(players), "history": meta["history"],
               "best_epoch": meta["best_epoch"], "test_accuracy": accuracy,
               "test_loss": meta["test_loss"], "split_games": meta["split_games"],
               "split_rows": meta["split_rows"], "report": report,
               "confusion": table_of.tolist(), **extra}
    return "\n".join(lines), figures


# the playing commands live in their own module
