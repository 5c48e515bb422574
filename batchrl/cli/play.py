"""The playing commands: ``generate`` (players into logs), ``solve`` and ``evaluate``.

Each dispatches through the game registry (``batchrl.games``): the game's own method
does the work, the game's own options reach it. ``batchrl.cli.main`` registers them on the
``batchrl`` group.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
from pathlib import Path
from typing import Any

import click

from batchrl.blocks import Tasks
from batchrl.cli.common import (
    MODEL,
    OUT_FILE,
    GameName,
    game_options,
    games_help,
    games_paragraphs,
    option_flags,
    progress,
    take_game_options,
)
from batchrl.cluster import ClusterError, connect, scheduler_address
from batchrl.evaluation import draw_intervals
from batchrl.games import GAMES, Game, GameError, game_for
from batchrl.games.play import absolute_player, is_model
from batchrl.games.search import inner
from batchrl.ingest import source_bytes
from batchrl.play.luck import (
    DRAWS,
    FOLDS,
    LuckConfig,
    LuckError,
    LuckReport,
    corrections,
    log_paths,
    read_logs,
    summarize,
)
from batchrl.policy import ModelError, policy_meta

LOGS = click.Path(exists=True, path_type=Path)


def _log_formats() -> list[str]:
    return sorted({f for game in GAMES.values() for f in game.play.log_formats})


def _players(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split(",") if p.strip())


@click.command(context_settings={"max_content_width": 100})
@click.option("--game", type=GameName("generate"), required=True, help="Which game to play.")
@click.option("--games", "--hands", "count", type=click.IntRange(min=1), default=1000,
              show_default=True, help="Games (hands, in the card games) to play.")
@click.option("--players", default=None, metavar="A,B,...",
              help="The players, seat by seat: random, model:PATH (a model from batchrl fqi) "
                   "or one of the game's bots (" + games_help(
                       lambda g: ", ".join(g.play.bots)
                       + f" [default {','.join(g.play.default_players)}]"
                       if g.can("generate") else None)
                   + "); search:NAME searches over any of them at each decision "
                     "(docs/search.md). holdem: a model file without model: works too; "
                     "tressette: A,B "
                     "means teams 0+2 and 1+3, and NAME~EPS a bot that plays a random card "
                     "with probability EPS (rule~0.3: good play that tries every move); "
                     "hanabi: model:PATH is any learner's model (learn, fqi, imitate).")
@click.option("--policy", "policy_name", default=None, metavar="PLAYER",
              help="A one-player game's player (sette-mezzo: random, optimal or a model "
                   "file): the same as --players PLAYER.")
@click.option("--format", "fmt", type=click.Choice(["auto", *_log_formats()]), default="auto",
              show_default=True,
              help="The log format to write: " + games_help(
                  lambda g: ", ".join(g.play.log_formats) if len(g.play.log_formats) > 1 else None)
              + "; auto: the game's usual one, told by the file name where a game "
                "writes several (.dealer.summary: glassfrog; .phh, .phhs: PHH hand histories, "
                "no-limit, or --format phh and a folder; .txt: a Tressette transcript).")
@click.option("--seed", default=0, show_default=True, help="Makes the deals repeatable.")
@game_options("generate")
@click.option("-o", "--out", type=click.Path(path_type=Path), required=True,
              help="Log file to write (hanabi: a directory, two files per game).")
def generate(game: Game, count: int, players: str | None, policy_name: str | None, fmt: str,
             seed: int, out: Path, **kwargs: Any) -> None:
    """Play games with bots and write them as logs that batchrl ingest reads.

    Per game:
    """
    options = take_game_options("generate", kwargs, game)
    if fmt != "auto" and fmt not in game.play.log_formats:
        raise click.UsageError(f"{game.name} writes {', '.join(game.play.log_formats)}, not {fmt}")
    chosen = _players(policy_name or players or ",".join(game.play.default_players))
    try:
        with progress(count, "playing") as advance:
            line = game.play.generate(out, chosen, count, seed, options | {"format": fmt}, advance)
    except (GameError, ValueError, OSError) as exc:
        raise click.ClickException(_message(exc)) from None
    click.echo(line)


generate.help = f"{inspect.cleandoc(generate.help or '')}\n\n{games_paragraphs('generate')}"


@click.command(context_settings={"max_content_width": 100})
@click.argument("game", type=GameName("solve"))
@game_options("solve")
def solve(game: Game, **kwargs: Any) -> None:
    """Solve a game exactly and print the optimal strategy as a table.

    sette-mezzo: policy iteration over the exact card-removal probabilities.
    """
    options = take_game_options("solve", kwargs, game)
    try:
        click.echo(game.play.solve(options).table())
    except (GameError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None


@click.command(context_settings={"max_content_width": 100})
@click.option("--game", type=GameName("evaluate"), default=None,
              help="The game [default: the model's]; given, it must be the model's.")
@click.option("--model", type=MODEL, default=None,
              help="The player measured: a model file from batchrl learn or fqi, or "
                   "python:MODULE:CALLABLE, another library's policy (the same as "
                   "model:PATH first in --players).")
@click.option("--players", "groups", multiple=True, metavar="A,B,...",
              help="The players, the measured one first: random, model:PATH or the game's "
                   "bots; search:NAME searches over any of them at each decision, its "
                   "options before the colon (search+worlds=64+opponent=rule+more=48:NAME; "
                   "see docs/search.md). hanabi: a group of 2 to 5, repeat for more groups "
                   "(those of one size on the same deals) "
                   "[default: bot2,bot2].")
@click.option("--opponent", default=None, metavar="PLAYER",
              help="The other player when --model is given [default: random] (holdem: the "
                   "thesis's random bot, rule, or another model file).")
@click.option("--team", default=None, metavar="PLAYER",
              help="tressette: the team's player (both seats): random, seed-heuristic, rule "
                   "or model:PATH [default: rule].")
@click.option("--vs", "versus", default=None, metavar="PLAYER",
              help="tressette: the other team's player [default: random].")
@click.option("--games", "--hands", "count", type=click.IntRange(min=1), default=None,
              help="Games (hands) to play [default: " + games_help(
                  lambda g: f"{g.play.default_count:,}" if g.can("evaluate") else None) + "].")
@click.option("--seed", type=click.IntRange(min=0), default=33, show_default=True,
              help="The deals and the bots' randomness (the same seed, the same cards); "
                   "with --logs, the draws and the value function's folds.")
@click.option("--scheduler", envvar="BATCHRL_SCHEDULER", default=None, metavar="ADDRESS",
              help="Play on a Dask cluster (tcp://HOST:8786; or set BATCHRL_SCHEDULER): "
                   "blocks of hands as tasks (10,000 deals; hanabi: 1,000 games), their "
                   "players drawing from the block's own seed, so the report is the one a "
                   "run here gives. Model files must be at the same absolute path on the "
                   "workers (pip install 'batchrl[dask]').")
@game_options("evaluate")
@click.option("--logs", multiple=True, type=LOGS, metavar="PATH",
              help="Measure the players of logs instead of playing: each one's result per "
                   "hand, raw and with the cards' luck taken out (chance-event control "
                   "variates from a value function cross-fitted on the logs' other "
                   "hands; docs/concepts/luck.md). A log file, a folder of logs or of hand "
                   "histories, or a store (the logs it was ingested from); repeat for more. "
                   "Poker logs (ACPC, Glassfrog, PHH).")
@click.option("--player", "log_players", multiple=True, metavar="NAME",
              help="With --logs: the player reported, by name as logged; repeat for more "
                   "[default: every player].")
@click.option("--strategy", "strategies", multiple=True, metavar="NAME=BOT",
              help="With --logs: the player NAME played the bot BOT, whose probabilities "
                   "batchrl knows (holdem: random): the luck of its choices is taken out "
                   "too (AIVAT's action terms). Only for a player that did play it (your "
                   "bots' logs): a move the bot never makes is refused, but a wrong "
                   "strategy that makes every logged move would bias the result. Repeat "
                   "for more.")
@click.option("--draws", type=click.IntRange(min=2), default=DRAWS, show_default=True,
              help="With --logs: the draws of a deal or a flop that value what could have "
                   "come (a single card is drawn as every card left).")
@click.option("--folds", type=click.IntRange(min=2), default=FOLDS, show_default=True,
              help="With --logs: the folds of hands the value function is cross-fitted over "
                   "(each fold's hands corrected by a fit on the others).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object, for notebooks.")
@click.option("--plot", type=OUT_FILE, default=None,
              help="Also draw the report's figures with their 95% intervals as a chart "
                   "(PNG, SVG or PDF, by the name's suffix). Needs matplotlib.")
def evaluate(game: Game | None, model: str | None, groups: tuple[str, ...],
             opponent: str | None, team: str | None, versus: str | None, count: int | None,
             seed: int, scheduler: str | None, logs: tuple[Path, ...],
             log_players: tuple[str, ...], strategies: tuple[str, ...], draws: int,
             folds: int, as_json: bool,
             plot: Path | None, **kwargs: Any) -> None:
    """Measure a learned policy, in the game its model was trained on; or, with --logs,
    the players of logs, from their hands alone.

    Hands are played in blocks. A block's random players draw from a seed of
    its own derived from --seed (the first block's is --seed itself); its cards
    are --seed's deals, whatever the blocks (hanabi: past its first 1,000
    games, the block's own). So the same seed gives the same report here or on
    a cluster (--scheduler).

    Per game:
    """
    if plot is not None:
        if importlib.util.find_spec("matplotlib") is None:
            raise click.ClickException("--plot draws with matplotlib: pip install matplotlib")
        if plot.suffix.lower() not in (".png", ".svg", ".pdf"):
            raise click.ClickException(f"--plot {plot}: name a .png, .svg or .pdf file")
    if logs:
        options = take_game_options("evaluate", kwargs, None)
        reading, flags = option_flags("ingest"), option_flags("evaluate")
        played = [flag for flag, given in (("--game", game), ("--model", model),
                                           ("--players", groups), ("--opponent", opponent),
                                           ("--team", team), ("--vs", versus),
                                           ("--games", count), ("--scheduler", scheduler))
                  if given] + [flags[n] for n in options if n not in reading]
        if played:
            raise click.UsageError(f"--logs measures the logged players: {', '.join(played)} "
                                   "would play new games (leave them out)")
        report: Any = _logged(logs, LuckConfig(draws, folds, seed, log_players, options,
                                               _strategies(strategies)), as_json)
        click.echo(json.dumps(report.as_dict()) if as_json else report.table())
        if plot is not None:
            _plot(report, report.game, f"batchrl evaluate --logs ({report.game})", plot,
                  as_json)
        return
    if log_players or strategies:
        raise click.UsageError(f"{'--player' if log_players else '--strategy'} names a "
                               "logged player: give --logs")
    hero = f"model:{model}" if model is not None else None
    try:
        game = _game_of(game, hero, groups, team)
        options = take_game_options("evaluate", kwargs, game)
        chosen = _groups(game, hero, groups, opponent, team, versus)
        total = (count or game.play.default_count) * len(chosen)
        address = scheduler_address(scheduler)
        takes_tasks = "tasks" in inspect.signature(game.play.evaluate).parameters
        if address is not None:
            if not takes_tasks:
                raise GameError(f"{game.name}'s evaluate takes no tasks: it plays here only "
                                f"(leave out --scheduler)")

            chosen = [tuple(absolute_player(p) for p in g) for g in chosen]  # as workers read
        with connect(address) as client, \
                progress(total, "playing", lines=not as_json) as advance:
            if takes_tasks:
                report = game.play.evaluate(chosen, count, seed, options, advance,
                                       tasks=Tasks(client, advance))
            else:  # a game written before evaluate took tasks
                report = game.play.evaluate(chosen, count, seed, options, advance)
    except (GameError, ValueError, OSError, ClusterError) as exc:
        raise click.ClickException(_message(exc)) from None
    if as_json:
        out = report.as_dict()
        if model is not None:
            out.setdefault("model", str(model))
        click.echo(json.dumps(out))
    else:
        click.echo(report.table())
    if plot is not None:
        _plot(report, game.name, f"batchrl evaluate --game {game.name} (seed {seed})", plot,
              as_json)


def _strategies(given: tuple[str, ...]) -> dict[str, str]:
    """``--strategy NAME=BOT`` as {NAME: BOT}."""
    out: dict[str, str] = {}
    for text in given:
        name, equals, bot = text.rpartition("=")
        if not equals or not name or not bot:
            raise click.UsageError(f"--strategy {text!r}: give NAME=BOT (the logged player's "
                                   "name, the bot it played: random)")
        if out.get(name, bot) != bot:
            raise click.UsageError(f"--strategy: {name} is given two bots, {out[name]} and "
                                   f"{bot}")
        out[name] = bot
    return out


def _plot(report: Any, name: str, title: str, plot: Path, as_json: bool) -> None:
    intervals = getattr(report, "intervals", None)
    if intervals is None:
        raise click.ClickException(f"{name}'s report has no figures to draw")
    unit, rows = intervals()
    try:
        drawn = draw_intervals(unit, rows, title, plot)
    except OSError as exc:
        raise click.ClickException(f"--plot {plot}: {exc.strerror or exc}") from None
    click.echo(f"chart: {drawn}", err=as_json)


def _logged(paths: tuple[Path, ...], config: LuckConfig, as_json: bool) -> LuckReport:
    """``evaluate --logs``: the logs read with a bar over their bytes, the value function
    fitted with one over its folds."""
    try:
        sources = log_paths(paths)
        with progress(sum(source_bytes(p) for p in sources), "reading",
                      lines=not as_json) as advance:
            read = read_logs(sources, config, advance)
        with progress(config.folds, "value function", lines=not as_json) as advance:
            fixed = corrections(read.hands, config.folds, config.seed, progress=advance)
        return summarize(read, fixed, config, paths)
    except (LuckError, GameError, OSError) as exc:
        raise click.ClickException(_message(exc)) from None


evaluate.help = f"{inspect.cleandoc(evaluate.help or '')}\n\n{games_paragraphs('evaluate')}"


def _game_of(game: Game | None, hero: str | None, groups: tuple[str, ...],
             team: str | None) -> Game:
    """The game given, else the game of the first model player; a given game must be the
    model's."""
    models = [inner(p) for p in (hero, team, *(q for g in groups for q in _players(g)))
              if p is not None and is_model(inner(p))]
    for spec in models[:1]:
        path = spec.removeprefix("model:")
        try:
            meta = policy_meta(path)  # any learner's; the arrays are read where they play
        except ModelError as exc:
            if game is not None:  # a network, say: the game knows its own files
                break
            raise click.ClickException(str(exc)) from None
        trained = game_for(str(meta.get("game", "?")), meta.get("game_params") or {})
        if game is not None and game is not trained:
            raise click.ClickException(f"{path} was trained on {trained.name}, not "
                                       f"{game.name}")
        return trained
    if game is None:
        raise click.UsageError("say which game: --game NAME, or a model file (--model PATH, "
                               "model:PATH among --players)")
    return game


def _groups(game: Game, hero: str | None, groups: tuple[str, ...], opponent: str | None,
            team: str | None, versus: str | None) -> list[tuple[str, ...]]:
    """The groups of players to evaluate, from --players, or --model/--opponent, or
    --team/--vs."""
    if groups:
        if others := [flag for flag, given in (("--model", hero), ("--opponent", opponent),
                                               ("--team", team), ("--vs", versus)) if given]:
            raise click.UsageError(f"--players names every player: {', '.join(others)} "
                                   "would be ignored; give one way (--players "
                                   "model:PATH,OPPONENT, or --model PATH --opponent NAME)")
        return [_players(g) for g in groups]
    one = game.rules.num_players(game.rules.params()) == 1
    if hero is not None and team is None:
        return [(hero,)] if one else [(hero, opponent or "random")]
    if team is not None or versus is not None:
        return [(team or hero or "rule", versus or "random")]
    if len(game.play.default_players) == 2:
        return [tuple(game.play.default_players)]
    raise click.UsageError(f"say who plays {game.name}: --players A,B,... or --model PATH")


def _message(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    return str(exc)
