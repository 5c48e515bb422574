"""The ``batchrl`` command: a thin layer over the library (each command calls one function).

Here the group (with ``batchrl fqi``, the alias of ``batchrl learn fqi``) and the data
commands (ingest, info, policy); learn, ablate and imitate are in ``batchrl.cli.learn``,
the playing commands (generate, solve, evaluate) in ``batchrl.cli.play``, export in
``batchrl.cli.export``, bench and ope in their own. Those modules load when their command
runs (or a help page lists them all): their libraries (scikit-learn's ensembles, the
benchmark's grid) cost about a second and a half that ``batchrl ingest`` never needs.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any, ClassVar

import click

from batchrl import __version__
from batchrl.cli.common import (
    INGEST_STORE_HELP,
    STORE,
    FormatName,
    Main,
    game_options,
    heartbeat,
    stopped,
    take_game_options,
)
from batchrl.cluster import ClusterError
from batchrl.games import FORMATS
from batchrl.ingest import IngestConfig, IngestError, SourceReport, source_bytes
from batchrl.ingest import ingest as run_ingest
from batchrl.learners import LEARNERS, get_learner
from batchrl.learning import recommended_learner, settings
from batchrl.modelfile import kind_of
from batchrl.policy import ModelError, load_policy
from batchrl.records import printable, terminal_safe
from batchrl.store import Store, StoreError, default_store_path

# the commands' modules, loaded by name when their command is asked for (`Batchrl.LAZY`)
__lazy_imports__ = ("batchrl.cli.play", "batchrl.cli.export", "batchrl.cli.learn",
                    "batchrl.cli.bench", "batchrl.cli.ope")


class Batchrl(Main):
    """The group, with ``batchrl fqi`` for ``batchrl learn fqi``: the thesis's command,
    kept by its name (the same options, output and model files)."""

    ALIASES: ClassVar[Mapping[str, str]] = {"fqi": "fqi"}  # command: the learner it runs
    # every command by the module that defines it, loaded when it is asked for (the
    # group holds none itself: a reader of its commands, mkdocs-click's, asks for each)
    LAZY: ClassVar[Mapping[str, str]] = {
        "ingest": __name__, "info": __name__, "policy": __name__,
        "generate": "batchrl.cli.play", "solve": "batchrl.cli.play",
        "evaluate": "batchrl.cli.play", "export": "batchrl.cli.export",
        "learn": "batchrl.cli.learn", "ablate": "batchrl.cli.learn",
        "imitate": "batchrl.cli.learn", "bench": "batchrl.cli.bench", "ope": "batchrl.cli.ope",
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.ALIASES, *self.LAZY})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.ALIASES:
            learn = importlib.import_module("batchrl.cli.learn")
            command: click.Command = learn.command_of(self.ALIASES[cmd_name])
            return command
        if cmd_name in self.LAZY:
            loaded: click.Command = getattr(importlib.import_module(self.LAZY[cmd_name]),
                                            cmd_name)
            return loaded
        return super().get_command(ctx, cmd_name)


@click.group(cls=Batchrl,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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
      batchrl policy show datasets/store/models/fqi-M100-nmin20-N11.npz
      batchrl evaluate --model datasets/store/models/fqi-M100-nmin20-N11.npz \\
          --opponent rule --hands 20000 --duplicate
    \b
    Hanabi (the network, on the game's view: colour order, convention facts):
      batchrl generate --game hanabi --players bot2,bot2 --games 36000 -o games/
      batchrl ingest games/ --store datasets/hanabi
      batchrl imitate --store datasets/hanabi        # = batchrl learn network
      batchrl evaluate --game hanabi --players model:NET.npz,bot2 --games 1000
    \b
    Tressette:
      batchrl generate --game tressette --players seed-heuristic,random --games 50000 \\
          -o sr.jsonl
      batchrl ingest sr.jsonl --store datasets/tressette
      batchrl fqi --store datasets/tressette       # the recipe: per-action, fast, N=20
      batchrl evaluate --game tressette --team model:MODEL.npz --vs random
    \b
    The benchmark (every learner on every game's datasets, 0 = random, 100 = best):
      batchrl bench --quick
    \b
    A policy's value from logs alone (no simulator of the logged players):
      batchrl ope --model datasets/store/models/fqi-M100-nmin20-N11.npz
    \b
    Logged players' results, raw and with the cards' luck taken out (poker logs):
      batchrl evaluate --logs pluribus/ --player Pluribus
    """


def _print_report(report: SourceReport) -> None:
    if report.error:
        why = report.error.removeprefix(f"{report.path}: ").removeprefix(f"{report.path}, ")
        click.echo(f"{report.path}: not ingested: {why}")
        return
    unit = report.unit.removesuffix("s") if report.hands == 1 else report.unit  # 1 game
    click.echo(f"{report.path}: {report.fmt}, {report.game}: {report.hands:,} {unit}, "
               f"{report.rows:,} decisions in {report.seconds:.2f} s "
               f"({report.hands_per_second:,.0f} {report.unit}/s)")
    for note in report.notes:
        click.echo(f"  {note}")
    for kind, count in report.skipped.most_common():
        click.echo(f"  skipped {count:,} ({kind}), e.g.:")
        for example in report.examples.get(kind, []):
            click.echo(f"    {example}")


def _formats_help() -> str:
    return "; ".join(f"{f.name}: {f.description}" for f in sorted(FORMATS.values(),
                                                                  key=lambda f: f.name))


@click.command(context_settings={"max_content_width": 100})
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--store", "store", type=STORE,
              default=None, help=INGEST_STORE_HELP)
@click.option("--format", "fmt", type=FormatName(), default="auto",
              show_default=True,
              help="Log format, told from the content unless given: " + _formats_help() + ".")
@click.option("--on-error", type=click.Choice(["fail", "skip"]), default="fail",
              show_default=True,
              help="On a bad line, an illegal hand or a file it cannot ingest: stop (nothing "
                   "of that file is stored; files before it are), or skip it, say so and keep "
                   "the good hands and files.")
@click.option("--scheduler", envvar="BATCHRL_SCHEDULER", default=None, metavar="ADDRESS",
              help="Make the rows on a Dask cluster (tcp://HOST:8786; or set "
                   "BATCHRL_SCHEDULER): chunks of hands as tasks, the same rows written "
                   "here in order (pip install 'batchrl[dask]').")
@click.option("--wait", type=click.FloatRange(min=0), default=None, metavar="SECONDS",
              help="A store takes one writer at a time: wait at most this long for another "
                   "ingest into it to finish, then give up (0: at once) [default: as long "
                   "as it takes].")
@game_options("ingest")
@stopped("the logs read to the end are in the store; the one being read left nothing behind "
         "(a log's rows land whole or not at all). Run the same command to go on (a log "
         "ingested again replaces its own rows).")
def ingest(paths: tuple[Path, ...], store: Path | str | None, fmt: str, on_error: str,
           scheduler: str | None, wait: float | None, **kwargs: Any) -> None:
    """Turn game logs into store rows, one per decision.

    Every hand is replayed through the rules: each action must be legal and the
    payoffs the rules compute must equal the logged ones. Rows hold the thesis's
    features from the acting seat's view (its own cards only). Ingesting a file
    again replaces its rows; a killed ingest leaves the store as it was. One
    ingest writes a store at a time: a second one waits for it (see --wait).

    Hanabi: a path is a game's file or a directory of games (one source). Rows
    hold the report's 195 numbers from the mover's view, the 20 action classes,
    the score change of each move as reward, and who moved (bot, human or AI).

    Tressette: batchrl's JSON lines or the seed's printed transcript. Every
    play is checked against the rules; rows hold 287 numbers from the
    player's view (the seed's 152, the trick, and what each card in hand
    would do), the 40 cards as actions, and the team's points as reward.

    The options after --on-error are the games' own: each applies to the logs of
    the games it names.

    \b
    Examples:
      batchrl ingest ROOM_90.dealer.summary
      batchrl ingest logs/*.log --store datasets/acpc --on-error skip
      batchrl ingest foo.log --game wvholdem.limit.2p.game
      batchrl ingest hanabi-games/ --store datasets/hanabi
      batchrl ingest ../shared/data/hanabi/eger_hanabidata/log --store datasets/eger \\
          --on-error skip
      batchrl ingest tressette.jsonl --store datasets/tressette
    """
    root = store if store is not None else default_store_path()
    options = take_game_options("ingest", kwargs, None)
    config = IngestConfig(paths=paths, store=root, fmt=fmt, on_error=on_error, options=options,
                          scheduler=scheduler, wait=wait)
    total = sum(source_bytes(p) for p in paths)

    def waiting(message: str) -> None:
        click.echo(message, err=True)

    try:
        if sys.stderr.isatty():
            with click.progressbar(length=total, label="ingesting", file=sys.stderr,
                                   show_eta=True, show_percent=True) as bar:

                def report(source: SourceReport) -> None:
                    click.echo("", err=True)  # the summary on its own line, after the bar
                    _print_report(source)

                reports = run_ingest(config, progress=bar.update, on_report=report,
                                     on_wait=waiting)
        else:
            with heartbeat(total, "ingesting (bytes read)") as advance:
                reports = run_ingest(config, progress=advance, on_report=_print_report,
                                     on_wait=waiting)
    except (IngestError, StoreError, ClusterError) as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"{exc.filename or root}: {exc.strerror}") from None
    stored = [r for r in reports if not r.error]
    if not stored:
        raise click.ClickException(f"no source was ingested ({len(reports)} not, each said "
                                   "above): nothing stored")
    if len(reports) > 1:
        hands = sum(r.hands for r in stored)
        seconds = sum(r.seconds for r in stored)
        rate = hands / seconds if seconds else 0.0
        passed = f"; {len(reports) - len(stored)} not ingested" if len(stored) < len(reports) \
            else ""
        click.echo(f"total: {len(stored)} sources, {hands:,} hands, "
                   f"{sum(r.rows for r in stored):,} decisions in {seconds:.2f} s "
                   f"({rate:,.0f} hands/s){passed}")
    click.echo(f"store: {root}")


def _listing(names: tuple[str, ...] | list[str], whole: bool, head: int = 24) -> str:
    """Names, comma separated; a long list is cut after ``head`` unless ``whole``."""
    if whole or len(names) <= head + 1:
        return ", ".join(names)
    return f"{', '.join(names[:head])}, ... ({len(names)} in all; --all lists them)"


@click.command()
@click.argument("store", required=False, type=STORE)
@click.option("--all", "whole", is_flag=True, help="List every feature, however many.")
@click.option("--json", "as_json", is_flag=True,
              help="Print it all as one JSON object (every feature, every source), for "
                   "scripts.")
@click.option("--quick", is_flag=True,
              help="Check only the parts' footers, not every page of every part (a full "
                   "read of the store: seconds for millions of rows).")
def info(store: Path | str | None, whole: bool, as_json: bool, quick: bool) -> None:
    """What a store holds: rows, episodes, players, features, actions, sources.

    STORE (a directory or a URL, as fqi's --store) defaults to datasets/store
    (or $BATCHRL_STORE). Every part is checked
    first, each page against its checksum (--quick: the footers only); a damaged
    part is named, with what to do.

    \b
    Examples:
      batchrl info datasets/store --all
      batchrl info datasets/store --json | jq .rows
    """
    root = store if store is not None else default_store_path()
    try:
        opened = Store.open(root)
        opened.check(pages=not quick)
        summary = opened.info()
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        chosen = settings(get_learner("fqi"), root, {})  # what batchrl fqi runs
        fqi_settings = {**asdict(chosen.config), "features": chosen.features,
                        "drop": chosen.drop}
        click.echo(json.dumps({
            "store": str(opened.place), "game": summary.game,
            "schema_version": summary.schema_version,
            "rows": summary.rows, "episodes": summary.episodes, "players": summary.players,
            "names": opened.names(), "features": summary.features, "actions": summary.actions,
            "game_params": dict(opened.schema.game_params),
            "state_dtype": opened.schema.state_dtype, "next_state": opened.schema.next_state,
            "legal": opened.schema.legal, "fqi": fqi_settings,
            "bytes_on_disk": summary.bytes_on_disk,
            "sources": [asdict(s) | {"content_digest": s.content_digest}
                        for s in summary.sources]}, indent=1))
        return
    _echo(f"store     {opened.place}")
    _echo(f"game      {summary.game} (schema version {summary.schema_version})")
    _echo(f"rows      {summary.rows:,}")
    _echo(f"episodes  {summary.episodes:,}")
    _echo(f"players   {', '.join(map(str, summary.players))}")
    if names := opened.names():
        _echo("names     " + ", ".join(f"{printable(n)} ({c:,} decisions)"
                                            for n, c in names.items()))
    _echo(f"features  {_listing(summary.features, whole)}")
    _echo(f"actions   {_listing(summary.actions, whole)}")
    if not opened.schema.legal:
        _echo("legal     not recorded (a store made before rows recorded their own legal "
                   "actions): exports mark each seat's first mask unknown; ingest the logs "
                   "into a new store to record them")
    name, _ = recommended_learner(root)
    if name != "fqi":  # the game's recommended learner (batchrl learn), where not FQI
        said = settings(get_learner(name), root, {}).said.removeprefix("settings: ")
        _echo(f"learn     {name}, {said}: batchrl learn with no flags")
    said = settings(get_learner("fqi"), root, {}).said.removeprefix("settings: ")
    _echo(f"fqi       {said}: batchrl fqi with no flags")
    _echo(f"sources   {len(summary.sources)}")
    for src in summary.sources:
        _echo(f"  {src.path}  {src.rows:,} rows, {src.episodes:,} episodes, "
                   f"sha256 {src.digest[:12]}"
                   + (f", rows {src.content_digest}" if src.content_digest else
                      ", rows not digested (an older batchrl's part)"))
        for note in src.extra.get("notes", []) if src.extra else []:
            _echo(f"    {note}")
        skipped = src.extra.get("skipped") if src.extra else None
        if skipped:
            _echo("    skipped: " + ", ".join(f"{v} {k}" for k, v in skipped.items()))


@click.group()
def policy() -> None:
    """Inspect learned policies (model files written by batchrl learn or fqi)."""


@policy.command("show")
@click.argument("model", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True,
              help="Print the model's metadata as one JSON object, for scripts.")
def policy_show(model: Path, as_json: bool) -> None:
    """Print a model's learner, game, features, actions, data, parameters and diagnostics
    (a model file of any learner)."""
    try:
        meta = dict(load_policy(model).meta)  # read whole: a damaged file is told here
        kind = kind_of(model)
    except ModelError as exc:
        raise click.ClickException(str(exc)) from None
    reader = _reader_of(kind)
    learner = meta.get("learner") or (reader.name if reader is not None else kind)
    if as_json:
        click.echo(json.dumps({"model": str(model), "kind": kind, **meta, "learner": learner},
                              indent=1, default=str))
        return
    _echo(f"model     {model}")
    _echo(f"learner   {learner} (a {kind} file)")
    _echo(f"game      {meta.get('game', '?')}")
    names = [str(n) for n in meta.get("feature_names", [])]
    shown = names if len(names) <= 40 else [*names[:20], f"... {len(names) - 30} more ...",
                                            *names[-10:]]
    _echo(f"features  {len(names)}: {', '.join(shown)}")
    if isinstance(meta.get("view"), dict):
        _echo(f"view      {', '.join(f'{k}={v}' for k, v in meta['view'].items())} (the "
                   "game's view of the stored features: the model plays through it)")
    _echo(f"actions   {', '.join(map(str, meta.get('action_names', [])))}")
    if "store" in meta:
        _echo(f"data      {meta['store']} (digest {meta.get('store_digest')}), "
                   f"{meta.get('rows', 0):,} rows, {meta.get('episodes', 0):,} episodes")
    params = meta.get("params") or {}
    if isinstance(params, dict):
        _echo(f"params    {', '.join(f'{k}={v}' for k, v in params.items())}")
    if "created_at" in meta:
        _echo(f"trained   {meta['created_at']} in {float(meta.get('seconds', 0)):.1f} s "
                   f"(batchrl {meta.get('batchrl_version', '?')})")
    if isinstance(meta.get("test_accuracy"), float):
        games = meta.get("split_games") or ["?"] * 3
        _echo(f"test      {meta['test_accuracy']:.2%} of the moves of {games[2]:,} held-out "
                   f"episodes (epoch {meta.get('best_epoch', '?')} kept)")
    history = meta.get("history") or []
    if reader is not None and reader.history_header is not None and history and \
            all(isinstance(h, dict) for h in history):
        try:
            rows = [reader.history_row(h) for h in history]
        except (KeyError, TypeError, ValueError):  # a history not of the learner's shape
            return
        _echo(reader.history_header)
        _echo("\n".join(rows))


def _echo(text: str) -> None:
    """A line of what a store's logs or a model's metadata say, its escape sequences
    shown, not acted on (`batchrl.records.terminal_safe`)."""
    click.echo(terminal_safe(text))


def _reader_of(kind: str) -> Any:
    """The learner that reads model files of ``kind`` (None: none registered)."""
    return next((learner for learner in LEARNERS.values() if learner.kind == kind), None)


if __name__ == "__main__":
    main()
