"""Shared by the command modules: option help, the games' own options, progress bars.

The games and their options come from the registry (``batchrl.games``): each game
declares the options it takes (`batchrl.games.Option`), and ``game_options(command)``
turns them into the command's click options, one per flag, its help naming the games
that take it. Nothing here names a game.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from batchrl.forked import FORK_LOCK, fork_safe
from batchrl.games import FORMATS, GAMES, Game, GameError, Option, get_game
from batchrl.records import writable_file
from batchrl.store.place import store_root

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
STORE_HELP = ("The store: a directory, or a URL to read one from (s3://BUCKET/DIR, "
              "gs://…, hdfs://…, file:///…; what it makes goes to the current directory) "
              "[default: datasets/store, or $BATCHRL_STORE].")
INGEST_STORE_HELP = "Store directory [default: datasets/store, or $BATCHRL_STORE]."


class StoreRoot(click.ParamType[Any]):
    """A ``--store``: a local directory (a `Path`), or a URL, kept as given (a `str`)."""

    name = "DIR|URL"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:

        root = store_root(value)
        if isinstance(root, Path) and root.is_file():
            self.fail(f"{value} is a file, not a store directory", param, ctx)
        return root


STORE = StoreRoot()

INTERRUPTED = 130  # a shell's status for a command Ctrl-C stopped (128 + SIGINT)


def stopped(kept: str) -> Callable[[F], F]:
    """A command stopped by Ctrl-C says what it kept and how to go on (``kept``) and exits
    130, where click says a bare "Aborted!" and exits 1. Put it under the click
    decorators, on the function."""
    def wrap(f: F) -> F:
        @functools.wraps(f)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return f(*args, **kwargs)
            except KeyboardInterrupt:
                interrupted(kept)

        return run  # type: ignore[return-value]

    return wrap


def interrupted(kept: str) -> NoReturn:
    """Say what a command stopped by Ctrl-C kept and how to go on, and exit 130."""
    click.echo(f"\nstopped (Ctrl-C): {kept}", err=True)
    raise click.exceptions.Exit(INTERRUPTED) from None


class Main(click.Group):
    """The ``batchrl`` group: a command stopped by Ctrl-C exits 130 (`stopped`)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            name = ctx.invoked_subcommand or "the command"
            click.echo(f"\nstopped (Ctrl-C) before {name} finished", err=True)
            raise click.exceptions.Exit(INTERRUPTED) from None


def split_names(values: tuple[str, ...]) -> tuple[str, ...]:
    """Feature names given as repeated options, or comma-separated, or both."""
    return tuple(n.strip() for v in values for n in v.split(",") if n.strip())


def advancing(items: Iterable[T], advance: Callable[[int], None]) -> Iterator[T]:
    """``items``, telling ``advance`` of each one as it goes by."""
    for item in items:
        yield item
        advance(1)


# seconds between progress lines when stderr is not a terminal ($BATCHRL_PROGRESS_EVERY;
# 0: none)
PIPED_EVERY = float(os.environ.get("BATCHRL_PROGRESS_EVERY", "30") or 0)


@contextmanager
def heartbeat(total: int, label: str) -> Iterator[Callable[[int], None]]:
    """Progress where no bar shows (stderr piped or in a file): a line on stderr every
    ``PIPED_EVERY`` seconds while the work runs, saying how far it is, so a long command
    is never silent."""
    done = [0]
    if PIPED_EVERY <= 0:  # asked for none
        yield lambda n: None
        return
    started = time.monotonic()
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(PIPED_EVERY):
            share = f"{done[0] / total:.0%}, " if total else ""
            with FORK_LOCK:  # no reader forks while this holds stderr's lock
                click.echo(f"{label}: {share}{done[0]:,} of {total:,} after "
                           f"{time.monotonic() - started:.0f} s", err=True)

    # an ingest's readers may fork beside it (batchrl.forked)
    thread = fork_safe(threading.Thread(target=beat, name="batchrl-heartbeat", daemon=True))
    thread.start()

    def advance(n: int) -> None:
        done[0] += n

    try:
        yield advance
    finally:
        stop.set()
        thread.join()


@contextmanager
def progress(total: int, label: str, lines: bool = True) -> Iterator[Callable[[int], None]]:
    """A progress bar on a terminal (to stderr); piped, a line every ``PIPED_EVERY``
    seconds (`heartbeat`), unless ``lines`` is False (a command printing JSON: its
    stderr is often the same file as its stdout)."""
    if not sys.stderr.isatty():
        if not lines:
            yield lambda n: None
            return
        with heartbeat(total, label) as advance:
            yield advance
        return
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield bar.update


class Jobs(click.ParamType[int]):
    """A worker count: a positive number, or -1 for every core."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> int:
        try:
            jobs = int(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a whole number", param, ctx)
        if jobs == 0 or jobs < -1:
            self.fail(f"{jobs}: give a number of workers (1 or more), or -1 for every core",
                      param, ctx)
        return jobs


JOBS = Jobs()


class OutFile(click.ParamType[Path]):
    """A file a command writes: a new name, or a regular file it replaces; never a
    device, a pipe, a directory, a link or a store's own file (`writable_file`)."""

    name = "file"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Path:
        path = Path(value)
        if why := writable_file(path):
            self.fail(f"{path}: {why}", param, ctx)
        return path


class OutDir(click.ParamType[Path]):
    """A directory a command writes into: a new name or a directory, not a link to one
    (what is written would land where the link points) nor a file."""

    name = "directory"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Path:
        path = Path(value)
        if path.is_symlink():
            self.fail(f"{path}: a symbolic link: not followed", param, ctx)
        if path.exists() and not path.is_dir():
            self.fail(f"{path}: not a directory", param, ctx)
        return path


OUT_FILE, OUT_DIR = OutFile(), OutDir()


class ModelSpec(click.ParamType[str]):
    """A policy to play: a model file that exists, or ``python:MODULE:CALLABLE``."""

    name = "model"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> str:
        spec = str(value)
        if spec.startswith("python:"):
            return spec
        path = Path(spec.removeprefix("model:"))
        if not path.is_file():
            self.fail(f"{spec!r}: no model file there (or give python:MODULE:CALLABLE)",
                      param, ctx)
        return str(path)


MODEL = ModelSpec()


class GameName(click.ParamType[Game]):
    """A registered game's name, checked when the command runs (a game registered after
    the command line was built counts too)."""

    name = "game"

    def __init__(self, having: str | None = None) -> None:
        self.having = having  # a capability the game must have ("solve", ...)

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Game:
        if isinstance(value, Game):
            return value
        try:
            game = get_game(str(value))
        except GameError as exc:
            self.fail(str(exc), param, ctx)
        if self.having is not None and not game.can(self.having):
            able = [n for n, g in GAMES.items() if g.can(self.having)]
            self.fail(f"{game.name} has no {_CAPABILITIES.get(self.having, self.having)}; "
                      f"{'the games with one: ' + ', '.join(able) if able else 'no game has'}",
                      param, ctx)
        return game

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        names = [n for n, g in GAMES.items() if self.having is None or g.can(self.having)]
        return "[" + "|".join(names) + "]"


class FormatName(click.ParamType[str]):
    """``auto`` or a registered log format's name, checked when the command runs."""

    name = "format"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> str:
        if value != "auto" and value not in FORMATS:
            self.fail(f"{value!r} is not a format: auto, {', '.join(sorted(FORMATS))}",
                      param, ctx)
        return str(value)

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join(["auto", *sorted(FORMATS)]) + "]"


_CAPABILITIES = {"solve": "exact solver", "view": "view of its features",
                 "generate": "log writer", "evaluate": "evaluation"}


def games_help(describe: Callable[[Game], str | None]) -> str:
    """One line per game that ``describe`` has something to say of."""
    lines = [f"{name}: {text}" for name, game in GAMES.items() if (text := describe(game))]
    return "; ".join(lines)


def games_paragraphs(command: str) -> str:
    """Each game's paragraph for ``command`` (``Game.examples``), for its --help."""
    return "\n\n".join(f"\b\n{game.name}: {text}" for game in GAMES.values()
                       if (text := game.cli.examples.get(command)))


def _declared(command: str) -> dict[str, list[tuple[Game, Option]]]:
    """The games' options for ``command``, by flag."""
    out: dict[str, list[tuple[Game, Option]]] = {}
    for game in GAMES.values():
        for option in game.cli.options:
            if command in option.flags:
                out.setdefault(option.flags[command], []).append((game, option))
    return out


def option_flags(command: str) -> dict[str, str]:
    """The games' options for ``command`` by name, each with its flag (``--gamedef``)."""
    return {o.name: flag.split("/")[0] for flag, owners in _declared(command).items()
            for _, o in owners}


def game_options(command: str) -> Callable[[F], F]:
    """A decorator adding the games' own options for ``command`` (see the module doc)."""
    def decorate(f: F) -> F:
        for flag, owners in sorted(_declared(command).items(), reverse=True):
            first = owners[0][1]
            for game, option in owners[1:]:
                if (option.name, option.type, option.choices is None) != \
                        (first.name, first.type, first.choices is None):
                    raise GameError(f"{game.name} and {owners[0][0].name} declare {flag} for "
                                    f"{command} with another name or type")
            # each game's own choices are checked once the game is known
            choices = tuple(dict.fromkeys(c for _, o in owners for c in o.choices or ()))
            help_text = " ".join(f"{g.name}: {o.help}" for g, o in owners)
            decls = [flag, *([first.short] if first.short else [])]
            kwargs: dict[str, Any] = {"default": None, "help": help_text}
            if first.type is bool and "/" not in flag:
                kwargs["is_flag"] = True
            elif first.type is not bool:
                kwargs["type"] = click.Choice(choices) if choices else first.type
                if first.metavar:
                    kwargs["metavar"] = first.metavar
            f = click.option(*decls, _param(command, flag, first), **kwargs)(f)
        return f
    return decorate


def _param(command: str, flag: str, option: Option) -> str:
    """The Python name click gives a game's option: ``gopt_<name>``, never a clash with the
    command's own parameters."""
    return f"gopt_{option.name}"


def take_game_options(command: str, kwargs: dict[str, Any], game: Game | None
                      ) -> dict[str, Any]:
    """The games' options the user gave to ``command`` (popped from ``kwargs``), checked
    against ``game`` (an option of another game is an error naming whose it is)."""
    given: dict[str, Any] = {}
    for flag, owners in _declared(command).items():
        name = owners[0][1].name
        value = kwargs.pop(f"gopt_{name}", None)
        if value is None:
            continue
        if game is not None and game.name not in {g.name for g, _ in owners}:
            whose = ", ".join(g.name for g, _ in owners)
            raise click.UsageError(f"{flag.split('/')[0]} is an option of {whose}, not of "
                                   f"{game.name}")
        mine = [o for g, o in owners if game is not None and g.name == game.name]
        if game is not None and mine and mine[0].choices and value not in mine[0].choices:
            raise click.UsageError(f"{flag.split('/')[0]} {value}: {game.name}'s "
                                   f"{mine[0].name} is one of {', '.join(mine[0].choices)}")
        given[name] = value
    return given


def for_game(options: Mapping[str, Any], game: Game, command: str) -> dict[str, Any]:
    """The options among ``options`` that ``game`` declares for ``command``."""
    mine = {o.name for o in game.cli.options if command in o.flags}
    return {k: v for k, v in options.items() if k in mine}
