"""The ``batchrl`` command: a thin layer over the library (each command calls one function)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

from batchrl import __version__
from batchrl.games.holdem.gamedef import BUILTINS
from parsers import FORMATS

if TYPE_CHECKING:
    from batchrl.ingest import SourceReport

T = TypeVar("T")
_STORE_HELP = "Store directory [default: datasets/store, or $BATCHRL_STORE]."
_TABLE_HEADER = (f"{'iter':>4} {'bellman residual':>17} {'mean |Q|':>10} {'max |Q|':>10} "
                 f"{'seconds':>8}  trees")


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="batchrl")
def main() -> None:
    """Offline reinforcement learning from card-game logs.

    \b
    The spine: log files -> store (Parquet rows of state, action, reward,
    next_state) -> fitted Q-iteration -> policy -> evaluation.
    \b
    Start here:
      batchrl generate --game holdem --hands 5000 --players random,random -o rr.log
      batchrl ingest rr.log                     # a log into the default store
      batchrl info                              # what the store holds
      batchrl fqi --trees 100 --nmin 20 --iters 11
      batchrl policy show datasets/store/models/fqi-M100-nmin20-N11.joblib
      batchrl evaluate --model datasets/store/models/fqi-M100-nmin20-N11.joblib \\
          --opponent rule --hands 20000 --duplicate
    \b
    Hanabi (imitation):
      batchrl generate --game hanabi --players bot2,bot2 --games 36000 -o games/
      batchrl ingest games/ --store datasets/hanabi
      batchrl imitate --store datasets/hanabi --epochs 30 --colour-order
      batchrl evaluate --game hanabi --players model:NET.pt,bot2 --games 1000
    \b
    Tressette:
      batchrl generate --game tressette --players seed-heuristic,random --games 50000 \\
          -o sr.jsonl
      batchrl ingest sr.jsonl --store datasets/tressette
      batchrl fqi --store datasets/tressette --per-action --fast --iters 10
      batchrl evaluate --game tressette --team model:MODEL.joblib --vs random
    """


def _print_report(report: SourceReport) -> None:
    click.echo(f"{report.path}: {report.fmt}, {report.game}: {report.hands:,} {report.unit}, "
               f"{report.rows:,} decisions in {report.seconds:.2f} s "
               f"({report.hands_per_second:,.0f} {report.unit}/s)")
    for note in report.notes:
        click.echo(f"  {note}")
    for kind, count in report.skipped.most_common():
        click.echo(f"  skipped {count:,} ({kind}), e.g.:")
        for example in report.examples.get(kind, []):
            click.echo(f"    {example}")


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--store", "store", type=click.Path(file_okay=False, path_type=Path),
              default=None, help=_STORE_HELP)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="Log format: ACPC dealer .log (STATE lines), Glassfrog .dealer.summary, "
                   "sette e mezzo JSON lines, Hanabi: the report's JSON state/action pairs, "
                   "Eger et al.'s game logs, hanab.live exports; or told from the content.")
@click.option("--game", "game", metavar="FILE|NAME", default=None,
              help="An ACPC .game file, or a built-in game: " + ", ".join(BUILTINS) + ". "
                   "Default: the game the log's header names, else the built-in whose "
                   "rules give the logged payoffs (this picks a Glassfrog summary's units).")
@click.option("--on-error", type=click.Choice(["fail", "skip"]), default="fail",
              show_default=True,
              help="On a bad line or an illegal hand: stop (nothing of that file is stored; "
                   "files before it are), or skip it, count it and keep the good hands.")
@click.option("--pv/--no-pv", default=True, show_default=True,
              help="Compute pv, the exact probability of victory, for every decision. "
                   "--no-pv leaves the feature out: ingest runs several times faster.")
@click.option("--reward", type=click.Choice(["points", "shaped"]), default="points",
              show_default=True,
              help="tressette: the team's points at the end of the hand, or the seed's "
                   "shaped per-card reward on top of them.")
def ingest(paths: tuple[Path, ...], store: Path | None, fmt: str, game: str | None,
           on_error: str, pv: bool, reward: str) -> None:
    """Turn game logs into store rows, one per decision.

    Every hand is replayed through the rules: each action must be legal and the
    payoffs the rules compute must equal the logged ones. Rows hold the thesis's
    features from the acting seat's view (its own cards only). Ingesting a file
    again replaces its rows; a killed ingest leaves the store as it was.

    Hanabi: a path is a game's file or a directory of games (one source). Rows
    hold the report's 195 numbers from the mover's view, the 20 action classes,
    the score change of each move as reward, and who moved (bot, human or AI).

    \b
    Examples:
      batchrl ingest ROOM_90.dealer.summary
      batchrl ingest logs/*.log --store datasets/acpc --on-error skip
      batchrl ingest foo.log --game wvholdem.limit.2p.game
      batchrl ingest hanabi-games/ --store datasets/hanabi
      batchrl ingest ../shared/data/hanabi/eger_hanabidata/log --store datasets/eger \\
          --on-error skip
    """
    from batchrl.ingest import IngestConfig, IngestError
    from batchrl.ingest import ingest as run
    from batchrl.store import StoreError, default_store_path

    root = store if store is not None else default_store_path()
    config = IngestConfig(paths=paths, store=root, fmt=fmt, game=game, on_error=on_error,
                          pv=pv, reward=reward)
    from batchrl.ingest import source_bytes

    total = sum(source_bytes(p) for p in paths)
    try:
        if sys.stderr.isatty():
            with click.progressbar(length=total, label="ingesting", file=sys.stderr,
                                   show_eta=True, show_percent=True) as bar:
                reports = run(config, progress=bar.update, on_report=_print_report)
        else:
            reports = run(config, on_report=_print_report)
    except (IngestError, StoreError) as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"{exc.filename or root}: {exc.strerror}") from None
    if len(reports) > 1:
        hands = sum(r.hands for r in reports)
        seconds = sum(r.seconds for r in reports)
        rate = hands / seconds if seconds else 0.0
        click.echo(f"total: {hands:,} hands, {sum(r.rows for r in reports):,} decisions in "
                   f"{seconds:.2f} s ({rate:,.0f} hands/s)")
    click.echo(f"store: {root}")


def _listing(names: tuple[str, ...] | list[str], whole: bool, head: int = 24) -> str:
    """Names, comma separated; a long list is cut after ``head`` unless ``whole``."""
    if whole or len(names) <= head + 1:
        return ", ".join(names)
    return f"{', '.join(names[:head])}, ... ({len(names)} in all; --all lists them)"


@main.command()
@click.argument("store", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--all", "whole", is_flag=True, help="List every feature, however many.")
def info(store: Path | None, whole: bool) -> None:
    """What a store holds: rows, episodes, players, features, actions, sources.

    STORE defaults to datasets/store (or $BATCHRL_STORE).
    """
    from batchrl.store import Store, StoreError, default_store_path

    root = store if store is not None else default_store_path()
    try:
        opened = Store.open(root)
        summary = opened.info()
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"store     {root}")
    click.echo(f"game      {summary.game} (schema version {summary.schema_version})")
    click.echo(f"rows      {summary.rows:,}")
    click.echo(f"episodes  {summary.episodes:,}")
    click.echo(f"players   {', '.join(map(str, summary.players))}")
    if names := opened.names():
        click.echo("names     " + ", ".join(f"{n} ({c:,} decisions)" for n, c in names.items()))
    click.echo(f"features  {_listing(summary.features, whole)}")
    click.echo(f"actions   {_listing(summary.actions, whole)}")
    click.echo(f"sources   {len(summary.sources)}")
    for src in summary.sources:
        click.echo(f"  {src.path}  {src.rows:,} rows, {src.episodes:,} episodes, "
                   f"sha256 {src.digest[:12]}")
        for note in src.extra.get("notes", []) if src.extra else []:
            click.echo(f"    {note}")
        skipped = src.extra.get("skipped") if src.extra else None
        if skipped:
            click.echo("    skipped: " + ", ".join(f"{v} {k}" for k, v in skipped.items()))


def _names(values: tuple[str, ...]) -> tuple[str, ...]:
    """Feature names given as repeated options, or comma-separated, or both."""
    return tuple(n.strip() for v in values for n in v.split(",") if n.strip())


@main.command()
@click.option("--store", "store", type=click.Path(file_okay=False, path_type=Path),
              default=None, help=_STORE_HELP)
@click.option("--trees", "-M", default=100, show_default=True, help="M: trees in the forest.")
@click.option("--nmin", default=20, show_default=True,
              help="n_min: rows a node needs to be split (bigger: smoother Q).")
@click.option("--k", "k", type=int, default=None,
              help="K: candidate attributes tried at each split [default: all inputs, as the "
                   "thesis and Ernst et al.].")
@click.option("--iters", "-N", default=11, show_default=True,
              help="N: iterations; Q then looks N decisions ahead (11 covers a limit hand).")
@click.option("--gamma", default=1.0, show_default=True, help="Discount per decision.")
@click.option("--features", multiple=True, metavar="NAME[,NAME...]",
              help="Use only these features (see batchrl info).")
@click.option("--drop", multiple=True, metavar="NAME[,NAME...]",
              help="Leave these features out (ablation).")
@click.option("--player", "players", multiple=True, metavar="NAME[,NAME...]",
              help="Learn only from these players' decisions (names as batchrl info lists "
                   "them): the seat that faced the opponent you want to beat.")
@click.option("--per-action", is_flag=True,
              help="One regressor per action instead of one on (state, action).")
@click.option("--fast", is_flag=True,
              help="Grow the trees once on the return-to-go, then only refit leaf values: "
                   "each iteration is a fraction of a refit.")
@click.option("--freeze-after", type=int, default=None, metavar="K",
              help="Fast mode after K full refits (0 is --fast).")
@click.option("--jobs", "-j", default=-1, show_default=True,
              help="Worker threads for the trees (-1: every core). Results do not depend on it.")
@click.option("--seed", default=0, show_default=True, help="Makes a run repeatable.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Model file [default: STORE/models/fqi-M…-nmin…-N….joblib].")
@click.option("--resume", is_flag=True,
              help="Continue a killed run from its last complete iteration (same result as "
                   "an uninterrupted run).")
def fqi(store: Path | None, trees: int, nmin: int, k: int | None, iters: int, gamma: float,
        features: tuple[str, ...], drop: tuple[str, ...], players: tuple[str, ...],
        per_action: bool, fast: bool,
        freeze_after: int | None, jobs: int, seed: int, out: Path | None,
        resume: bool) -> None:
    """Fitted Q-iteration on a store: learn Q(state, action) with extremely randomized trees.

    Each iteration regresses reward + gamma * max over the legal next actions of
    the previous Q. Every iteration is checkpointed beside the model, so a killed
    run continues with --resume.

    \b
    Examples:
      batchrl fqi --trees 100 --nmin 20 --iters 11
      batchrl fqi --drop pv --fast --out models/no_pv.joblib
      batchrl fqi --player random-1 --fast    # learn from the seat facing the bot
    """
    from batchrl.fqi import IterationStats
    from batchrl.store import StoreError, default_store_path
    from batchrl.training import FAST_FREEZE_AFTER, FQIConfig, run_fqi

    if fast and freeze_after is None:
        freeze_after = FAST_FREEZE_AFTER
    config = FQIConfig(
        store=store if store is not None else default_store_path(), trees=trees, nmin=nmin,
        k=k, iters=iters, gamma=gamma, features=_names(features) or None, drop=_names(drop),
        players=_names(players), per_action=per_action, freeze_after=freeze_after, jobs=jobs,
        seed=seed, out=out, resume=resume)
    rows: list[str] = []

    def row(stats: IterationStats) -> str:
        return (f"{stats.iteration:>4} {stats.bellman_residual:>17.4f} "
                f"{stats.mean_abs_q:>10.3f} {stats.max_abs_q:>10.3f} {stats.seconds:>8.2f}  "
                f"{'frozen' if stats.frozen else 'refit'}")

    started = time.perf_counter()
    try:
        if sys.stderr.isatty():
            # On a terminal: a bar with the last iteration's residual, the table at the end.
            with click.progressbar(length=iters, label="fqi", file=sys.stderr, show_eta=True,
                                   show_pos=True) as bar:

                def advance(stats: IterationStats) -> None:
                    rows.append(row(stats))
                    bar.label = f"fqi (residual {stats.bellman_residual:.4g})"
                    bar.update(1)

                path, _ = run_fqi(config, on_iteration=advance)
            click.echo(_TABLE_HEADER)
            click.echo("\n".join(rows))
        else:
            click.echo(_TABLE_HEADER)
            path, _ = run_fqi(config, on_iteration=lambda stats: click.echo(row(stats)))
    except (StoreError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"done in {time.perf_counter() - started:.1f} s: model in {path}")


@main.group()
def policy() -> None:
    """Inspect learned policies (model files written by batchrl fqi)."""


@policy.command("show")
@click.argument("model", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def policy_show(model: Path) -> None:
    """Print a model's game, features, actions, data, parameters and diagnostics."""
    from batchrl.policy import ModelArtifact, ModelError

    try:
        meta = ModelArtifact.load(model).meta
    except ModelError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"model     {model}")
    click.echo(f"game      {meta['game']}")
    click.echo(f"features  {', '.join(meta['feature_names'])}")
    click.echo(f"actions   {', '.join(meta['action_names'])}")
    click.echo(f"data      {meta['store']} (digest {meta['store_digest']}), {meta['rows']:,} "
               f"rows, {meta['episodes']:,} episodes")
    params = ", ".join(f"{k}={v}" for k, v in meta["params"].items())
    click.echo(f"params    {params}")
    click.echo(f"trained   {meta['created_at']} in {meta['seconds']:.1f} s "
               f"(batchrl {meta['batchrl_version']})")
    click.echo(_TABLE_HEADER)
    for h in meta["history"]:
        click.echo(f"{h['iteration']:>4} {h['bellman_residual']:>17.4f} "
                   f"{h['mean_abs_q']:>10.3f} {h['max_abs_q']:>10.3f} {h['seconds']:>8.2f}  "
                   f"{'frozen' if h['frozen'] else 'refit'}")


GAMES = ("holdem", "sette-mezzo", "hanabi", "tressette")


@main.command()
@click.option("--game", type=click.Choice(GAMES), required=True, help="Which game to play.")
@click.option("--games", "--hands", "count", type=int, default=1000, show_default=True,
              help="Games (hands, for hold'em) to play.")
@click.option("--policy", "policy_name", default="random", show_default=True,
              help="sette-mezzo: random (hit or stick, 50/50), optimal (the exact solution), "
                   "or a model file from batchrl fqi.")
@click.option("--players", default="random,random", show_default=True, metavar="A,B",
              help="holdem: the two players, each random (the thesis's: 10% fold, 50% call, "
                   "40% raise), rule (a tight-aggressive rule bot) or a model file. "
                   "hanabi: random, simple, convention (bot1, bot2: the report's roles, "
                   "simple and convention) or model:PATH (a network from batchrl imitate). "
                   "tressette: four seats (or A,B for teams 0+2 and 1+3), each random, "
                   "seed-heuristic or rule.")
@click.option("--format", "fmt",
              type=click.Choice(["auto", "acpc", "glassfrog", "jsonl", "transcript"]),
              default="auto", show_default=True,
              help="holdem: ACPC dealer .log (STATE lines) or Glassfrog .dealer.summary; "
                   "tressette: batchrl's JSON lines or the seed's printed transcript; "
                   "auto: by the file name (.txt: a transcript).")
@click.option("--gamedef", "table", metavar="FILE|NAME", default=None,
              help="holdem: the game (an ACPC .game file or built-in name) [default: a model "
                   "player's game, else the format's usual units].")
@click.option("--limit", default=5.0, show_default=True,
              help="sette-mezzo: the opponent draws until its total reaches this.")
@click.option("--seed", default=0, show_default=True, help="Makes the deals repeatable.")
@click.option("--jobs", "-j", default=1, show_default=True,
              help="hanabi: processes playing games (-1: one per core); the games do not "
                   "depend on it.")
@click.option("-o", "--out", type=click.Path(path_type=Path), required=True,
              help="Log file to write (hanabi: a directory, two files per game).")
def generate(game: str, count: int, policy_name: str, players: str, fmt: str,
             table: str | None, limit: float, seed: int, jobs: int, out: Path) -> None:
    """Play games with bots and write them as logs that batchrl ingest reads.

    \b
    Examples:
      batchrl generate --game holdem --hands 5000 --players random,random --seed 10 \\
          -o ROOM_90.dealer.summary
      batchrl generate --game holdem --hands 50000 --players random,rule -o rule.log
      batchrl generate --game sette-mezzo --games 100000 --policy random -o random.jsonl
      batchrl generate --game hanabi --players bot2,bot2 --games 36000 -o hanabi-games
      batchrl generate --game tressette --players seed-heuristic,random,seed-heuristic,random \\
          --games 50000 -o tressette.jsonl
    """
    import numpy as np

    if game == "sette-mezzo":
        from batchrl.games.sette_mezzo.logs import play, write_log

        chooser: object = policy_name
        if policy_name not in ("random", "optimal"):
            from batchrl.policy import GreedyPolicy, ModelError

            try:
                learned = GreedyPolicy.load(policy_name)
            except ModelError as exc:
                raise click.ClickException(
                    f"--policy is random, optimal or a model file: {exc}") from None
            chooser = learned.act_batch
        rng = np.random.default_rng(seed)
        written = write_log(out, play(chooser, count, rng, limit))  # type: ignore[arg-type]
    elif game == "tressette":
        from batchrl.games.tressette.logs import play as play_tressette
        from batchrl.games.tressette.logs import write_log as write_tressette

        names = [p.strip() for p in players.split(",")]
        if len(names) == 2:
            names = names * 2  # A,B: seats 0 and 2 play A, seats 1 and 3 play B
        kind = "transcript" if fmt == "transcript" or (fmt == "auto" and out.suffix == ".txt") \
            else "jsonl"
        try:
            with _progress(count, "playing") as advance:
                written = write_tressette(out, _advancing(play_tressette(names, count, seed),
                                                          advance), kind)
        except ValueError as exc:
            raise click.ClickException(str(exc)) from None
        click.echo(f"{written:,} hands written to {out} ({kind})")
        return
    elif game == "hanabi":
        from batchrl.games.hanabi.logs import generate as generate_hanabi

        names = [p.strip() for p in players.split(",")]
        try:
            with _progress(count, "playing") as advance:
                scores = generate_hanabi(out, names, count, seed, advance, jobs)
        except ValueError as exc:
            raise click.ClickException(str(exc)) from None
        click.echo(f"{count:,} games written to {out}/ (mean score {np.mean(scores):.2f} "
                   f"cards played)")
        return
    else:
        from batchrl.games.holdem import gamedef
        from batchrl.games.holdem.logs import generate as generate_holdem
        from batchrl.policy import ModelError

        names = [p.strip() for p in players.split(",")]
        try:
            chosen = gamedef.resolve(table) if table else None
            with _progress(count, "playing") as advance:
                written = generate_holdem(out, names, count, seed, fmt, chosen, advance)
        except (ModelError, gamedef.GameDefError, ValueError) as exc:
            raise click.ClickException(str(exc)) from None
    click.echo(f"{written:,} games written to {out}")


def _advancing(items: Iterable[T], advance: Callable[[int], None]) -> Iterator[T]:
    """``items``, telling ``advance`` of each one as it goes by."""
    for item in items:
        yield item
        advance(1)


@contextmanager
def _progress(total: int, label: str) -> Iterator[Callable[[int], None]]:
    """A progress bar on a terminal (to stderr); nothing when output is piped."""
    if not sys.stderr.isatty():
        yield lambda n: None
        return
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield bar.update


@main.command()
@click.argument("game", type=click.Choice(["sette-mezzo"]))
@click.option("--limit", default=5.0, show_default=True,
              help="The opponent draws until its total reaches this.")
def solve(game: str, limit: float) -> None:
    """Solve a game exactly and print the optimal strategy as a table.

    sette-mezzo: policy iteration over the exact card-removal probabilities.
    """
    from batchrl.games.sette_mezzo.solver import solve as solve_exactly
    from batchrl.games.sette_mezzo.solver import strategy_table

    solution = solve_exactly(limit)
    click.echo(strategy_table(solution))
    click.echo(f"optimal expected reward per game: {solution.expected_reward:+.6f} "
               f"({solution.rounds} rounds of policy iteration, "
               f"{len(solution.action):,} states)")


@main.command()
@click.option("--store", "store", type=click.Path(file_okay=False, path_type=Path),
              default=None, help=_STORE_HELP)
@click.option("--opponent", default="rule", show_default=True, metavar="random|rule|MODEL",
              help="Who every hero plays.")
@click.option("--trees", "-M", default=50, show_default=True, help="M: trees per forest.")
@click.option("--nmin", default=20, show_default=True, help="n_min: rows to split a node.")
@click.option("--iters", "-N", default=11, show_default=True, help="N: FQI iterations.")
@click.option("--hands", default=20000, show_default=True,
              help="Duplicate hands per hero (hands / 2 deals, each played twice).")
@click.option("--seed", default=33, show_default=True,
              help="Evaluation seed, shared by every hero: the same deals for all.")
@click.option("--features", multiple=True, metavar="NAME[,NAME...]",
              help="Drop only these, one at a time [default: every feature].")
@click.option("--groups", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help='Drop named groups instead: a JSON file like '
                                 '{"betting": ["bet_flop", "bet_turn"]}.')
@click.option("--player", "players", multiple=True, metavar="NAME[,NAME...]",
              help="Learn only from these players' decisions (as batchrl fqi --player).")
@click.option("--fast/--no-fast", default=True, show_default=True,
              help="FQI fast mode (trees grown once) for every hero.")
@click.option("--per-action", is_flag=True, help="One regressor per action.")
@click.option("--jobs", "-j", default=-1, show_default=True, help="Threads for the trees.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Heroes, per-hand results and the table [default: STORE/ablation].")
def ablate(store: Path | None, opponent: str, trees: int, nmin: int, iters: int, hands: int,
           seed: int, features: tuple[str, ...], groups: Path | None,
           players: tuple[str, ...], fast: bool, per_action: bool, jobs: int,
           out: Path | None) -> None:
    """Which features a hero needs: one hero per dropped feature, with 95% CIs.

    Trains the full hero and one hero without each feature (or group), plays
    each on the same duplicate deals against the opponent, and reports bb/hand
    and the change from the full hero with a paired 95% confidence interval.
    Beside it: the Q-forest's impurity importances and the permutation
    importance on held-out Bellman targets. The table goes to CSV and Parquet;
    a rerun reuses every finished hero and result.

    \b
    Example (the thesis's Figure 5.6):
      batchrl ablate --store datasets/rule --opponent rule --player random \\
          --trees 50 --nmin 20 --iters 11 --hands 20000
    """
    from batchrl.ablation import AblationConfig, load_groups, run_ablation
    from batchrl.policy import ModelError
    from batchrl.store import Store, StoreError, default_store_path

    root = store if store is not None else default_store_path()
    try:
        names = Store.open(root).schema.feature_names
        config = AblationConfig(
            store=root, opponent=opponent, trees=trees, nmin=nmin, iters=iters, hands=hands,
            seed=seed, features=_names(features) or None,
            groups=load_groups(groups, names) if groups else None, players=_names(players),
            fast=fast, per_action=per_action, jobs=jobs, out=out)
        result = run_ablation(config, on_step=lambda m: click.echo(m, err=True))
    except (StoreError, ModelError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(result.text())
    click.echo(f"table: {result.path} (and .parquet)")


@main.command()
@click.option("--store", "store", type=click.Path(file_okay=False, path_type=Path),
              default=None, help=_STORE_HELP)
@click.option("--epochs", default=100, show_default=True, help="Passes over the training games.")
@click.option("--player", "players", multiple=True, metavar="NAME[,NAME...]",
              help="Learn only these players' moves (see the names in batchrl info), e.g. "
                   "human in Eger et al.'s games [default: every move].")
@click.option("--hidden", default="195,128,64,32", show_default=True, metavar="N,N,...",
              help="Hidden layer widths (the report's).")
@click.option("--dropout", default=0.1, show_default=True, help="Dropout after each hidden "
                                                                  "layer but the last.")
@click.option("--batchnorm/--no-batchnorm", default=True, show_default=True,
              help="Batch normalisation before the output layer.")
@click.option("--batch-size", default=256, show_default=True)
@click.option("--lr", "learning_rate", default=1e-3, show_default=True,
              help="Adam's learning rate.")
@click.option("--colour-order", is_flag=True,
              help="Train on colour-ordered states (colours sorted per state, hint moves "
                   "renamed); the network renames its moves back when it plays.")
@click.option("--features", "feature_set", type=click.Choice(["report", "hints"]),
              default="report", show_default=True,
              help="report: the report's 195 numbers; hints: those and 15 public facts about "
                   "hints (which cards hints touched, the focus of the hint just before).")
@click.option("--keep-best/--keep-last", default=True, show_default=True,
              help="Keep the network of the epoch best on the validation games, or the last.")
@click.option("--seed", default=0, show_default=True, help="The game split and the weights.")
@click.option("--threads", type=int, default=None,
              help="CPU threads for torch [default: one per core].")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Network file [default: STORE/models/imitation[-PLAYER][-colour].pt]; a "
                   "plot of the curves (.png) and the figures (.json) go beside it.")
def imitate(store: Path | None, epochs: int, players: tuple[str, ...], hidden: str,
            dropout: float, batchnorm: bool, batch_size: int, learning_rate: float,
            colour_order: bool, feature_set: str, keep_best: bool, seed: int,
            threads: int | None, out: Path | None) -> None:
    """Train a network to predict the moves in a Hanabi store (the report's).

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
        ImitationError,
        NetworkConfig,
        batches_per_epoch,
        train,
        write_figures,
    )
    from batchrl.store import StoreError, default_store_path

    root = store if store is not None else default_store_path()
    try:
        widths = tuple(int(w) for w in hidden.split(","))
    except ValueError:
        raise click.BadParameter(f"{hidden!r}: want widths like 195,128,64,32",
                                 param_hint="--hidden") from None
    config = NetworkConfig(hidden=widths, dropout=dropout, batchnorm=batchnorm, epochs=epochs,
                           batch_size=batch_size, learning_rate=learning_rate, seed=seed,
                           colour_order=colour_order, threads=threads, keep_best=keep_best,
                           features=feature_set)
    who = _names(players)
    if out is None:
        tag = "".join(f"-{p}" for p in who) + ("-colour" if colour_order else "") + \
            ("-hints" if feature_set == "hints" else "")
        out = root / "models" / f"imitation{tag}.pt"
    click.echo(f"{'epoch':>5} {'train loss':>10} {'train acc':>9} {'val loss':>9} "
               f"{'val acc':>8} {'seconds':>8}")

    def line(e: Epoch) -> None:
        click.echo(f"{e.epoch:>5} {e.train_loss:>10.4f} {e.train_accuracy:>9.2%} "
                   f"{e.val_loss:>9.4f} {e.val_accuracy:>8.2%} {e.seconds:>8.1f}")

    try:
        total = batches_per_epoch(root, who, config) * epochs
        with _progress(total, "training") as advance:
            result = train(root, out, config, who, progress=advance, on_epoch=line)
    except (ImitationError, StoreError) as exc:
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
    click.echo(f"network: {out}\ncurves:  {plot}\nfigures: {figures}")


@main.command()
@click.option("--game", type=click.Choice(GAMES), default=None,
              help="The game [default: the model's]; given, it must be the model's.")
@click.option("--model", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="The hero: a model file from batchrl fqi (holdem, "
                                 "sette-mezzo).")
@click.option("--players", "pairs", multiple=True, metavar="A,B",
              help="hanabi: a pair of players (random, simple, convention, bot1, bot2, "
                   "model:PATH); repeat for more pairs, all on the same deals "
                   "[default: bot2,bot2].")
@click.option("--games", default=None, type=int,
              help="hanabi: games per pair [1000]; tressette: hands, each deal played from "
                   "both sides [20000].")
@click.option("--team", default=None, metavar="PLAYER",
              help="tressette: the team's player (both seats): random, seed-heuristic, rule "
                   "or model:PATH (an FQI model of a Tressette store).")
@click.option("--vs", "versus", default="random", show_default=True, metavar="PLAYER",
              help="tressette: the other team's player.")
@click.option("--opponent", default="random", show_default=True, metavar="random|rule|MODEL",
              help="holdem: the thesis's random bot, the rule bot, or another model file.")
@click.option("--hands", default=3000, show_default=True,
              help="holdem: hands to play (the thesis played 3,000).")
@click.option("--seed", default=33, show_default=True,
              help="holdem: deals and the bots' randomness (the same seed, the same cards).")
@click.option("--duplicate", is_flag=True,
              help="holdem: play every deal twice with the seats swapped, cutting the "
                   "variance the cards add.")
@click.option("--limit", type=float, default=None,
              help="sette-mezzo: the opponent's limit [default: the one the model's data "
                   "was played at].")
@click.option("--json", "as_json", is_flag=True, help="One JSON object, for notebooks.")
def evaluate(game: str | None, model: Path | None, pairs: tuple[str, ...], games: int | None,
             team: str | None, versus: str, opponent: str, hands: int, seed: int,
             duplicate: bool, limit: float | None, as_json: bool) -> None:
    """Measure a learned policy, in the game its model was trained on.

    \b
    holdem: plays the model against an opponent and reports the chips it won
    (the thesis's figure), big blinds and mbb per hand with a 95% confidence
    interval, and the split by position:
      batchrl evaluate --model M.joblib --opponent rule --hands 20000 --duplicate
    \b
    sette-mezzo: exact, no sampling: the policy's expected reward per game,
    the optimal one, the gap, and the share of decisions where it plays the
    optimal action, weighted by how often it reaches each state.
    \b
    tressette: a team against another, each deal played from both sides and
    the lead rotating: hands won and points per hand with 95% intervals:
      batchrl evaluate --game tressette --team model:M.joblib --vs random \\
          --games 20000
    \b
    hanabi: pairs of players on the same deals, the report's Table 2 (mean,
    sd, max, min) in both score conventions:
      batchrl evaluate --game hanabi --players model:net.pt,bot2 \\
          --players bot2,bot2 --games 1000
    """
    import json

    from batchrl.policy import GreedyPolicy, ModelError

    if game == "hanabi" or pairs:
        _evaluate_hanabi(pairs or ("bot2,bot2",), games or 1000, seed, as_json)
        return
    if game == "tressette" or team is not None:
        _evaluate_tressette(team or (f"model:{model}" if model else "rule"), versus,
                            games or 20000, seed, as_json)
        return
    if model is None:
        raise click.UsageError("--model is needed (for hanabi give --game hanabi --players)")
    try:
        hero = GreedyPolicy.load(model)  # read once: a forest file can take seconds to load
        trained = hero.artifact.meta.get("game", "")
        kind = "sette-mezzo" if trained == "sette-mezzo" else "holdem"
        if game is not None and game != kind:
            raise ModelError(f"{model} was trained on {trained}, not {game}")
        if kind == "sette-mezzo":
            _evaluate_sette_mezzo(model, limit, as_json)
            return
        from batchrl.games.holdem.evaluate import evaluate_bots

        with _progress(hands, "playing") as advance:
            result = evaluate_bots(str(model), opponent, hands, seed, duplicate=duplicate,
                                   progress=advance, models={str(model): hero})
    except (ModelError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps(result.as_dict() | {"model": str(model)}))
    else:
        click.echo(result.table())


def _evaluate_hanabi(pairs: tuple[str, ...], games: int, seed: int, as_json: bool) -> None:
    import json

    from batchrl.games.hanabi.evaluate import HEADER, evaluate_players

    reports = []
    try:
        for pair in pairs:
            names = tuple(p.strip() for p in pair.split(","))
            with _progress(games, " + ".join(names)) as advance:
                reports.append(evaluate_players(names, games, seed, advance))
    except ValueError as exc:  # an unknown player, an unreadable network file
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps([r.as_dict() for r in reports]))
        return
    click.echo(f"{games:,} games per pair, seed {seed} (the same deals for every pair)")
    click.echo(HEADER)
    for r in reports:
        click.echo(r.row())


def _evaluate_tressette(team: str, versus: str, hands: int, seed: int, as_json: bool) -> None:
    import json

    from batchrl.games.tressette.evaluate import evaluate_teams
    from batchrl.policy import ModelError

    try:
        with _progress(hands, f"{team} vs {versus}") as advance:
            report = evaluate_teams(team, versus, hands, seed, advance)
    except (ValueError, ModelError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(report.as_dict()) if as_json else report.table())


def _evaluate_sette_mezzo(model: Path, limit: float | None, as_json: bool) -> None:
    import json
    from dataclasses import asdict

    from batchrl.games.sette_mezzo.evaluate import evaluate_model

    report = evaluate_model(model, limit)
    if as_json:
        click.echo(json.dumps(asdict(report) | {"regret": report.regret, "model": str(model)}))
        return
    click.echo(f"model                      {model}")
    click.echo(f"opponent draws to          {report.limit:g}")
    click.echo(f"expected reward per game   {report.expected_reward:+.6f}")
    click.echo(f"optimal                    {report.optimal_reward:+.6f}")
    click.echo(f"gap                        {report.regret:.6f}")
    click.echo(f"optimal action             {report.agreement:.2%} of its decisions "
               f"({report.agreement_optimal_visits:.2%} of the optimal policy's, "
               f"{report.agreement_states:.2%} of all {report.states:,} states)")


if __name__ == "__main__":
    main()
