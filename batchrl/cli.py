"""The ``batchrl`` command: a thin layer over the library (each command calls one function)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from batchrl import __version__
from batchrl.games.holdem.gamedef import BUILTINS
from parsers import FORMATS

if TYPE_CHECKING:
    from batchrl.ingest import SourceReport

_STORE_HELP = "Store directory [default: datasets/store, or $BATCHRL_STORE]."


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="batchrl")
def main() -> None:
    """Offline reinforcement learning from card-game logs.

    \b
    The spine: log files -> store (Parquet rows of state, action, reward,
    next_state) -> fitted Q-iteration -> policy -> evaluation.
    \b
    Start here:
      batchrl ingest ROOM_90.dealer.summary     # a log into the default store
      batchrl info                              # what the store holds
    """


def _print_report(report: SourceReport) -> None:
    click.echo(f"{report.path}: {report.fmt}, {report.game}: {report.hands:,} hands, "
               f"{report.rows:,} decisions in {report.seconds:.2f} s "
               f"({report.hands_per_second:,.0f} hands/s)")
    for note in report.notes:
        click.echo(f"  {note}")
    for kind, count in report.skipped.most_common():
        click.echo(f"  skipped {count:,} ({kind}), e.g.:")
        for example in report.examples.get(kind, []):
            click.echo(f"    {example}")


@main.command()
@click.argument("paths", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--store", "store", type=click.Path(file_okay=False, path_type=Path),
              default=None, help=_STORE_HELP)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="Log format: ACPC dealer .log (STATE lines), Glassfrog .dealer.summary, "
                   "or told from the content.")
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
def ingest(paths: tuple[Path, ...], store: Path | None, fmt: str, game: str | None,
           on_error: str, pv: bool) -> None:
    """Turn poker logs into store rows, one per decision.

    Every hand is replayed through the rules: each action must be legal and the
    payoffs the rules compute must equal the logged ones. Rows hold the thesis's
    features from the acting seat's view (its own cards only). Ingesting a file
    again replaces its rows; a killed ingest leaves the store as it was.

    \b
    Examples:
      batchrl ingest ROOM_90.dealer.summary
      batchrl ingest logs/*.log --store datasets/acpc --on-error skip
      batchrl ingest foo.log --game wvholdem.limit.2p.game
    """
    from batchrl.ingest import IngestConfig, IngestError
    from batchrl.ingest import ingest as run
    from batchrl.store import StoreError, default_store_path

    root = store if store is not None else default_store_path()
    config = IngestConfig(paths=paths, store=root, fmt=fmt, game=game, on_error=on_error,
                          pv=pv)
    total = sum(p.stat().st_size for p in paths)
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


@main.command()
@click.argument("store", required=False, type=click.Path(file_okay=False, path_type=Path))
def info(store: Path | None) -> None:
    """What a store holds: rows, episodes, players, features, actions, sources.

    STORE defaults to datasets/store (or $BATCHRL_STORE).
    """
    from batchrl.store import Store, StoreError, default_store_path

    root = store if store is not None else default_store_path()
    try:
        summary = Store.open(root).info()
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"store     {root}")
    click.echo(f"game      {summary.game} (schema version {summary.schema_version})")
    click.echo(f"rows      {summary.rows:,}")
    click.echo(f"episodes  {summary.episodes:,}")
    click.echo(f"players   {', '.join(map(str, summary.players))}")
    click.echo(f"features  {', '.join(summary.features)}")
    click.echo(f"actions   {', '.join(summary.actions)}")
    click.echo(f"sources   {len(summary.sources)}")
    for src in summary.sources:
        click.echo(f"  {src.path}  {src.rows:,} rows, {src.episodes:,} episodes, "
                   f"sha256 {src.digest[:12]}")
        for note in src.extra.get("notes", []) if src.extra else []:
            click.echo(f"    {note}")
        skipped = src.extra.get("skipped") if src.extra else None
        if skipped:
            click.echo("    skipped: " + ", ".join(f"{v} {k}" for k, v in skipped.items()))


if __name__ == "__main__":
    main()
