"""The games batchrl plays, one package each, and the log formats that feed them.

``GAMES`` maps a game's name to the one `Game` object its package exports as ``GAME``;
the packages under ``batchrl/games/`` are found on first use, so adding a game adds no
line anywhere else. Another package (or a notebook, or a test) adds one with
``register_game``. ``FORMATS`` maps a log format's name to the `Format` a module of
``parsers/`` registers with ``register_format`` when it is imported (``batchrl.ingest``
imports ``parsers``; parsers import batchrl, never the other way round).

>>> "sette-mezzo" in GAMES and GAMES["sette-mezzo"].name == "sette-mezzo"
True
>>> get_game("chess")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
batchrl.games.core.GameError: no game 'chess': the games are hanabi, holdem, ..., tressette
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from batchrl.games.base import (
    TIERS,
    BenchFace,
    CliFace,
    Dataset,
    Format,
    Game,
    GameError,
    Interval,
    LearnFace,
    LogFace,
    Option,
    PlayFace,
    Report,
    Scores,
    Source,
    SourceContext,
    SourceError,
    SourcePlan,
    single_group,
)
from batchrl.games.core import Rules, can, legal_mask
from batchrl.records import head_lines
from batchrl.registry import Registry

__all__ = [
    "FORMATS",
    "GAMES",
    "TIERS",
    "BenchFace",
    "CliFace",
    "Dataset",
    "Format",
    "Game",
    "GameError",
    "Interval",
    "LearnFace",
    "LogFace",
    "Option",
    "PlayFace",
    "Report",
    "Rules",
    "Scores",
    "Source",
    "SourceContext",
    "SourceError",
    "SourcePlan",
    "can",
    "game_for",
    "get_format",
    "get_game",
    "legal_mask",
    "register_format",
    "register_game",
    "seats_of",
    "single_group",
    "sniff_format",
    "unregister_format",
    "unregister_game",
]


# the registry imports each game package below on first use
__lazy_imports__ = ("batchrl.games.*",)
GAMES: Registry[Game] = Registry(Game, "GAME", __name__, __path__, "game", GameError)
FORMATS: dict[str, Format] = {}


def register_game(game: Game, replace: bool = False) -> Game:
    """Add ``game`` to ``GAMES`` (every command then offers it); returns it."""
    return GAMES.add(game, replace)


def unregister_game(name: str) -> None:
    GAMES.remove(name)


def register_format(fmt: Format, replace: bool = False) -> Format:
    """Add a log format (what a module of ``parsers/`` does when imported)."""
    if fmt.name in FORMATS and not replace and not _same(FORMATS[fmt.name], fmt):
        raise GameError(f"a format named {fmt.name!r} is registered already")
    FORMATS[fmt.name] = fmt
    return fmt


def _same(a: Format, b: Format) -> bool:
    """The same format, from one module imported twice (pytest's importlib mode does)."""
    return (a.name, a.game, a.read.__module__, a.read.__qualname__) == \
        (b.name, b.game, b.read.__module__, b.read.__qualname__)


def unregister_format(name: str) -> None:
    FORMATS.pop(name, None)


def get_game(name: str) -> Game:
    """The game called ``name``; `GameError` names the games there are."""
    if name not in GAMES:
        raise GameError(f"no game {name!r}: the games are {', '.join(GAMES)}")
    return GAMES[name]


def get_format(name: str) -> Format:
    if name not in FORMATS:
        raise GameError(f"unknown format {name!r}: the formats are "
                        f"{', '.join(sorted(FORMATS)) or 'none (import parsers)'}")
    return FORMATS[name]


def game_for(stored_game: str, game_params: Mapping[str, Any] | None = None) -> Game:
    """The registered game a store or model of ``stored_game`` belongs to."""
    params = game_params or {}
    if stored_game in GAMES:
        return GAMES[stored_game]
    for game in GAMES.values():
        if game.log.owns(stored_game, params):
            return game
    raise GameError(f"{stored_game!r} is not a game batchrl knows: the games are "
                    f"{', '.join(GAMES)}")


def seats_of(stored_game: str, game_params: Mapping[str, Any]) -> int | None:
    """How many seats a store's (or a model's) game has; None where batchrl cannot say
    (a game it does not know, params its game refuses: what reads it says so)."""
    try:
        game = game_for(stored_game, game_params)
        return game.rules.num_players(game.log.params_from_store(stored_game, game_params))
    except GameError:
        return None


def sniff_format(path: Path) -> Format | None:
    """The registered format a file (or a directory of game files) is in, or None."""
    head = [] if path.is_dir() else [t for t in head_lines(path) if t.strip()]
    candidates = sorted(FORMATS.values(), key=lambda f: -f.priority)
    for fmt in candidates:
        if path.is_dir() and not fmt.directories:
            continue
        if fmt.sniff(path, head):
            return fmt
    return None
