"""Where Hanabi games come from: a source (a file, or a directory of games) -> episodes,
as the three Hanabi formats this module registers.

Three formats, told apart by ``sniff``:

* ``hanabi-json``: the report's logs, ``<game>.states.jsonl`` + ``<game>.actions.jsonl``
  (``batchrl generate --game hanabi`` writes them; ``parsers.hanabi`` reads them);
* ``hanabi-eger``: Eger et al.'s ``game<ID>.log`` (an AI in seat 0, a human in seat
  1), each deal rebuilt from its seed and replayed under their house rule (a
  discard with 8 hints is allowed); the replayed score must equal the logged one;
* ``hanablive``: hanab.live JSON exports, replayed through the rules; only
  No Variant games of the standard rules are read, of 2 to 5 players (a store holds
  one player count); the others are refused, naming the variant or the option.

A directory is one source: its games land in the store together, and the
source's digest covers every game file in it. A game that cannot be read or
replayed comes out as a ``batchrl.records.BadLine`` naming the file and line; the
others are unaffected. Only the directory's regular files are read: a pipe or a
device among them, or a symbolic link that leaves the directory, comes out as a
``BadLine`` naming it, never opened (a pipe would block the read; a link out would
read what the directory does not hold).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from batchrl.forked import AHEAD, in_order, jobs_wanted, reading_processes, usable_cores
from batchrl.games import Format, Source, register_format
from batchrl.games.hanabi.replay import hint_self
from batchrl.games.hanabi.rules import IllegalMove, deal, is_terminal, step
from batchrl.games.hanabi.transitions import Episode, replayed
from batchrl.records import BadLine, directory_files, excerpt, regular_file
from batchrl.store import file_digest
from parsers.hanabi import HanabiLogError, actions_path, read_game
from parsers.hanabi_eger import EgerError, read_eger
from parsers.hanablive import HanabLiveError, read_hanablive, replay_live

_PATTERNS = {"hanabi-json": "*.states.jsonl", "hanabi-eger": "game*.log",
             "hanablive": "*.json"}


def GameError(kind: str, message: str) -> BadLine:
    """A game left out, and why: ``message`` names the file and the line itself."""
    return BadLine(message.split(":", 1)[0].split(", line ")[0], -1, message, "", kind)


def _sniff_file(path: Path) -> str | None:
    if regular_file(path):
        return None
    if path.name.endswith(".states.jsonl"):
        return "hanabi-json"
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = f.read(4096)
    except OSError:
        return None
    if "Treatment: (" in head and "\nMOVE: " in head:
        return "hanabi-eger"
    if path.suffix == ".json" and '"deck"' in head and '"actions"' in head:
        return "hanablive"
    return None


def sniff(path: Path) -> str | None:
    """The Hanabi format of a file or a directory of games, or None."""
    if not path.is_dir():
        return _sniff_file(path)
    for fmt, pattern in _PATTERNS.items():
        found, _ = directory_files(path, pattern)
        if found and any(_sniff_file(f) == fmt for f in found[:5]):
            return fmt
    return None


def game_files(path: Path, fmt: str) -> list[Path]:
    """The files of a source's games, in name order (a states file stands for its pair):
    a directory's regular files only (``source_files``)."""
    return [f for f, why in source_files(path, fmt) if not why]


def source_files(path: Path, fmt: str) -> list[tuple[Path, str]]:
    """The files of a source's games in name order, each with why it is not read ("" if
    it is): in a directory, a pipe, a device or a link out of it (a pair's actions file
    too); none of those is opened."""
    if not path.is_dir():
        return [(path, "")]
    files, refused = directory_files(path, _PATTERNS[fmt])
    found = [(f, _pair_refused(f, path)) for f in files
             if fmt != "hanablive" or _sniff_file(f) == "hanablive"]
    return sorted([*found, *refused])


def _pair_refused(f: Path, directory: Path) -> str:
    """Why a states file's actions file is not read, with its name; "" if it is."""
    if not f.name.endswith(".states.jsonl"):
        return ""
    actions = actions_path(f)
    if not actions.exists() and not actions.is_symlink():
        return ""  # read_game says so
    why = regular_file(actions, directory)
    return f"its actions file {actions.name}: {why}" if why else ""


def digest(files: Sequence[Path], directory: Path | None = None) -> str:
    """A sha256 over the games' files, their names and bytes (a pair's both files; one
    that is missing, no regular file, or a link out of ``directory``: its name only,
    never opened)."""
    h = hashlib.sha256()
    for f in files:
        pair = [f]
        if f.name.endswith(".states.jsonl"):
            pair.append(actions_path(f))
        for p in pair:
            h.update(p.name.encode() + b"\0")
            if p.exists() and not regular_file(p, directory):
                h.update(file_digest(p).encode())
    return h.hexdigest()


def episodes(files: Sequence[Path], fmt: str) -> Iterator[Episode | BadLine]:
    """Each game of ``files`` as an episode, or the reason it is left out (never an
    exception: one bad file never stops the others)."""
    read = {"hanabi-json": _report, "hanabi-eger": _eger, "hanablive": _live}[fmt]
    for f in files:
        try:
            yield read(f)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError,
                OverflowError) as exc:
            yield GameError("bad game", f"{f}: cannot be read ({type(exc).__name__}: "
                            f"{excerpt(str(exc))})")
        except RecursionError:
            yield GameError("bad game", f"{f}: cannot be read (nested too deep)")
        except OSError as exc:
            yield GameError("unreadable file", f"{f}: {exc.strerror}")


def _report(path: Path) -> Episode | BadLine:
    try:
        g = read_game(path)
    except HanabiLogError as exc:
        return GameError("bad game", str(exc))
    n = len(g.actions)
    seats = [i % 2 for i in range(n)]
    other = {g.names[i]: g.names[i + 1] for i in range(n - 1)}
    return Episode(key=path.name.removesuffix(".states.jsonl"), features=g.features,
                   actions=g.actions, rewards=g.rewards, legal=g.legal,
                   seats=np.asarray(seats, dtype=np.int8), names=g.names,
                   partners=tuple(other.get(name, name) for name in g.names), hands=g.hands,
                   lines=tuple(range(1, n + 1)))


def _eger(path: Path) -> Episode | BadLine:
    try:
        game = read_eger(path)
    except EgerError as exc:
        kind = "the AI hints itself" if "hints itself" in str(exc) else "bad game"
        return GameError(kind, str(exc))
    state = deal(game.deck, 2, discard_at_max_hints=True)
    states, actions, lines = [state], [], []
    for number, (line, seat, action) in enumerate(game.moves):
        if seat != state.current:
            return GameError("bad game", f"{path}, line {line}: seat {seat} moves out of turn")
        try:
            state = hint_self(state, action) if number in game.self_hints else \
                step(state, action)
        except IllegalMove as exc:
            return GameError("illegal move", f"{path}, line {line}: {exc}")
        states.append(state)
        actions.append(action)
        lines.append(line)
    if not is_terminal(state) or state.score_played != game.score:
        return GameError("score differs", f"{path}: the replay ends with "
                         f"{state.score_played} cards played (over: {is_terminal(state)}); "
                         f"the log says {game.score}")
    if game.self_hints:
        line = game.moves[game.self_hints[0]][0]
        return GameError("the AI hints itself", f"{path}, line {line}: the AI hints itself, "
                         f"a move no rule has; with it the game replays to its logged score "
                         f"{game.score}, but no action class holds it: left out")
    return replayed(states, actions, (game.ai, "human"), key=game.game_id, lines=lines,
                    deal=f"eger-seed-{game.seed}")


def _live(path: Path) -> Episode | BadLine:
    try:
        game = read_hanablive(path)
        states, actions = replay_live(game)
    except HanabLiveError as exc:
        return GameError(exc.kind, str(exc))
    if not is_terminal(states[-1]):
        return GameError("unfinished game", f"{path}: the export stops after {len(actions)} "
                         f"moves, before the rules end the game (ended early on the site?): a "
                         f"store keeps finished games only")
    return replayed(states, actions, tuple(game.players), key=path.stem)


# A block of games read at a time: where processes read beside the ingest, each takes a
# block (a few MB of the report's JSON) and sends back its games' arrays.
FILES_A_BLOCK = 8


# the most processes that read by default (more cores than this: ask with --jobs)
READERS_AT_MOST = 8


def default_jobs() -> int:
    """Processes that read beside the ingest: one per core on a machine with two or more
    (the ingesting process only makes and writes the rows: reading is the work), at most
    `READERS_AT_MOST`; else none."""
    cores = usable_cores()
    return min(cores, READERS_AT_MOST) if cores >= 2 else 0


def _read_files(fmt: str, block: list[tuple[Path, str]]) -> list[Episode | BadLine]:
    """A block of a source's game files, each as its episode or why it is left out."""
    return [GameError("file not read", f"{f}: {why}") if why else next(episodes([f], fmt))
            for f, why in block]


def _format(name: str, description: str) -> Format:
    def sniffs(path: Path, head: Sequence[str]) -> bool:
        return sniff(path) == name

    def read(source: Source) -> Iterator[Episode | BadLine]:
        files = source_files(source.path, name)
        blocks = [files[i:i + FILES_A_BLOCK] for i in range(0, len(files), FILES_A_BLOCK)]
        jobs = min(jobs_wanted(source.options.get("jobs"), default_jobs()), len(blocks))
        with reading_processes(jobs if len(blocks) > 1 else 0) as readers:
            read = functools.partial(_read_files, name)
            # every process a block or two ahead of the one taken
            for block, games in zip(blocks, map(read, blocks) if readers is None else
                                    in_order(readers, read, blocks, max(AHEAD, 2 * jobs)),
                                    strict=True):
                for (f, why), game in zip(block, games, strict=True):
                    if source.progress is not None and not why:
                        source.progress(f.stat().st_size)
                    yield game

    return Format(name, "hanabi", description, sniffs, read, directories=True,
                  digest=lambda path: digest(game_files(path, name),
                                             path if path.is_dir() else None), priority=10)


for _name, _description in (
        ("hanabi-json", "the report's Hanabi JSON state/action pairs (*.states.jsonl)"),
        ("hanabi-eger", "Eger et al.'s Hanabi game logs (game*.log)"),
        ("hanablive", "hanab.live JSON exports")):
    register_format(_format(_name, _description))
