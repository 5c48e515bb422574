"""Fuzzing the ingest: the project's own logs of every format it reads, mutated, each
case ingested and judged. Shared by ``tests/test_fuzz.py`` (hypothesis draws the
mutations) and ``benchmarks/fuzz.py`` (a seeded generator draws them, by the thousand).

A case passes when the ingest either stores rows or stops with the project's own
error (``IngestError``, ``StoreError``: what the CLI prints as one line), within its
time; when every message it keeps (errors, skipped lines' examples, notes) is short;
and when every stored episode adds up to the result its (mutated) log line gives:
payoffs (ACPC, Glassfrog), reward (sette e mezzo), returns (President), team points
(Tressette), score (the report's Hanabi, Eger's), finishing stacks (PHH). hanab.live
exports log no result.

The seed logs come from the project's own players: ``batchrl generate`` for the
formats it writes, and for Eger et al.'s logs and hanab.live exports, games of the
Hanabi bots written in those formats here (``write_eger``, ``write_hanablive``).
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import re
import shutil
import signal
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

FORMATS = ("acpc", "glassfrog", "hanabi-json", "hanabi-eger", "hanablive", "tressette",
           "tressette-transcript", "sette-mezzo", "president", "phh")
MUTATIONS = ("bit flip", "delete line", "duplicate line", "truncate", "swap lines",
             "binary garbage", "huge number", "deep nesting", "invalid utf-8", "huge field")
# What a number becomes under "huge number": past every range, past a float, past what
# int() converts, digits that are not ASCII, numbers JSON has and logs should not.
HUGE_NUMBERS = ("9" * 400, "-" + "9" * 400, "1e400", "-1e400", "9" * 5000, "3²", "٣",
                "NaN", "Infinity", "1" * 19, "18446744073709551616", "1e-400", "0x10",
                "1_000", "-0")
NESTING = (100, 990, 1000, 5000, 100_000)
BAD_BYTES = (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x00",
             b"\xef\xbb\xbf", b"\r", b"\x1c", "\u2028".encode())
# Every message a case may show: errors, examples of skipped lines, notes (the path and
# the hint lines come on top of the 400 characters a reader's message may have).
MAX_SHOWN = 1_500
CASE_SECONDS = 30.0


@dataclass(frozen=True)
class Mutation:
    """One change to one file of a seed: ``kind`` (one of ``MUTATIONS``), where (``at``,
    0 to 1 of the file), ``size`` and ``pick`` (which variant, which other line)."""

    kind: str
    at: float
    size: int = 1
    pick: int = 0
    file: int = 0  # which file of a directory seed

    def apply(self, data: bytes) -> bytes:
        rng = random.Random(self.pick)
        pos = min(int(self.at * len(data)), max(len(data) - 1, 0))
        lines = data.split(b"\n")
        line = min(int(self.at * len(lines)), len(lines) - 1)
        kind = self.kind
        if kind == "bit flip":
            if not data:
                return data
            return data[:pos] + bytes([data[pos] ^ (1 << (self.pick % 8))]) + data[pos + 1:]
        if kind == "delete line":
            return b"\n".join(lines[:line] + lines[line + 1:])
        if kind == "duplicate line":
            return b"\n".join(lines[:line + 1] + lines[line:])
        if kind == "truncate":
            return data[:pos]
        if kind == "swap lines":
            other = self.pick % len(lines)
            lines[line], lines[other] = lines[other], lines[line]
            return b"\n".join(lines)
        if kind == "binary garbage":
            return data[:pos] + rng.randbytes(self.size) + data[pos:]
        if kind == "invalid utf-8":
            return data[:pos] + BAD_BYTES[self.pick % len(BAD_BYTES)] + data[pos:]
        if kind == "huge field":
            return data[:pos] + b"x" * self.size + data[pos:]
        # a number of the file (the one nearest ``at``) replaced, or text inserted at ``at``
        if kind == "huge number":
            new = HUGE_NUMBERS[self.pick % len(HUGE_NUMBERS)].encode()
        elif kind == "deep nesting":
            depth = NESTING[self.pick % len(NESTING)]
            new = b"[" * depth + b"]" * depth
        else:
            raise ValueError(f"mutation {kind!r}: want one of {MUTATIONS}")
        numbers = [m.span() for m in re.finditer(rb"-?[0-9]+(?:\.[0-9]+)?", data)]
        if not numbers:
            return data[:pos] + new + data[pos:]
        start, end = numbers[min(int(self.at * len(numbers)), len(numbers) - 1)]
        return data[:start] + new + data[end:]


def random_mutations(rng: np.random.Generator, files: int, most: int = 3,
                     big: bool = True) -> list[Mutation]:
    """1 to ``most`` mutations drawn from ``rng`` (the script's cases); ``big``: a huge
    field may be past the longest line a reader reads."""
    sizes = (1, 16, 1000, 100_000, 1_100_000) if big else (1, 16, 1000)
    return [Mutation(MUTATIONS[int(rng.integers(len(MUTATIONS)))], float(rng.random()),
                     int(sizes[int(rng.integers(len(sizes)))]), int(rng.integers(1 << 30)),
                     int(rng.integers(files)))
            for _ in range(int(rng.integers(1, most + 1)))]


# ---- the seed logs -------------------------------------------------------------------

def seed_logs(folder: Path) -> dict[str, list[Path]]:
    """Small logs of every format in ``FORMATS``, written by the project's own players
    under ``folder``: a format's seeds (a file, or a directory of games)."""
    from click.testing import CliRunner

    from batchrl.cli import main

    folder.mkdir(parents=True, exist_ok=True)

    def generate(*args: str) -> None:
        result = CliRunner().invoke(main, ["generate", *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output

    out: dict[str, list[Path]] = {}
    generate("--game", "holdem", "--hands", "12", "--seed", "1", "-o", str(folder / "l2.log"))
    generate("--game", "holdem", "--gamedef", "holdem.nolimit.3p", "--players",
             "rule,random,rule", "--hands", "8", "--seed", "2", "-o", str(folder / "n3.log"))
    out["acpc"] = [folder / "l2.log", folder / "n3.log"]
    generate("--game", "holdem", "--hands", "12", "--seed", "3", "-o",
             str(folder / "gf.dealer.summary"))
    out["glassfrog"] = [folder / "gf.dealer.summary"]
    generate("--game", "hanabi", "--players", "bot2,bot1", "--games", "2", "--seed", "4",
             "-o", str(folder / "hanabi"))
    out["hanabi-json"] = [folder / "hanabi"]
    rng = np.random.default_rng(5)
    (folder / "eger").mkdir()
    for k in range(2):
        write_eger(folder / "eger" / f"game{k:04d}abcd.log", int(rng.integers(10_000)), rng)
    out["hanabi-eger"] = [folder / "eger"]
    (folder / "live").mkdir()
    for k in range(2):
        write_hanablive(folder / "live" / f"{k}.json", rng)
    out["hanablive"] = [folder / "live"]
    generate("--game", "tressette", "--players", "seed-heuristic,random", "--games", "3",
             "--seed", "6", "-o", str(folder / "t.jsonl"))
    out["tressette"] = [folder / "t.jsonl"]
    generate("--game", "tressette", "--games", "3", "--seed", "7", "-o", str(folder / "t.txt"))
    out["tressette-transcript"] = [folder / "t.txt"]
    generate("--game", "sette-mezzo", "--games", "15", "--seed", "8", "-o",
             str(folder / "s.jsonl"))
    out["sette-mezzo"] = [folder / "s.jsonl"]
    generate("--game", "president", "--players", "rule,random,random,random", "--games", "2",
             "--seed", "9", "-o", str(folder / "p.jsonl"))
    generate("--game", "president", "--players", "rule,random", "--games", "2", "--match", "2",
             "--seed", "10", "-o", str(folder / "pm.jsonl"))
    out["president"] = [folder / "p.jsonl", folder / "pm.jsonl"]
    (folder / "six.game").write_text(SIX_SEATS)
    generate("--game", "holdem", "--gamedef", str(folder / "six.game"), "--players",
             "rule,random,rule,random,random,rule", "--hands", "8", "--seed", "11",
             "-o", str(folder / "six.phhs"))
    generate("--game", "holdem", "--gamedef", "holdem.nolimit.2p.reverse_blinds",
             "--players", "rule,random", "--hands", "6", "--seed", "12", "--format", "phh",
             "-o", str(folder / "hu"))
    (folder / "antes").mkdir()
    (folder / "antes" / "1.phh").write_text(ANTES_HAND)
    (folder / "fixed.phhs").write_text(FIXED_HANDS)
    out["phh"] = [folder / "six.phhs", folder / "hu", folder / "antes", folder / "fixed.phhs"]
    return out


# a six-seat no-limit table, Pluribus's (an ACPC game file)
SIX_SEATS = """GAMEDEF
nolimit
numPlayers = 6
numRounds = 4
stack = 10000 10000 10000 10000 10000 10000
blind = 50 100 0 0 0 0
firstPlayer = 3 1 1 1
numBoardCards = 0 3 1 1
END GAMEDEF
"""
# fixed-limit hold'em: a raise a street, a capped round, a short stack all-in
FIXED_HANDS = """[1]
variant = 'FT'
antes = [0, 0, 0]
blinds_or_straddles = [50, 100, 0]
small_bet = 100
big_bet = 200
starting_stacks = [10000, 10000, 10000]
actions = ['d dh p1 Qh5c', 'd dh p2 9h6h', 'd dh p3 KcJh', 'p3 cbr 200', 'p1 f', 'p2 cc',
           'd db 7s9cTc', 'p2 cc', 'p3 cbr 100', 'p2 f']
finishing_stacks = [9950, 9800, 10250]

[2]
variant = 'FT'
antes = [0, 0, 0]
blinds_or_straddles = [50, 100, 0]
small_bet = 100
big_bet = 200
starting_stacks = [10000, 10000, 500]
actions = ['d dh p1 AsAd', 'd dh p2 KsKd', 'd dh p3 2c7d', 'p3 cbr 200', 'p1 cbr 300',
           'p2 cbr 400', 'p3 cbr 500', 'p1 cc', 'p2 cc', 'd db 3h8h9c', 'p1 cbr 100', 'p2 cc',
           'd db Jd', 'p1 cbr 200', 'p2 cc', 'd db 4s', 'p1 cc', 'p2 cc', 'p1 sm AsAd',
           'p2 sm KsKd', 'p3 sm 2c7d']
finishing_stacks = [11300, 9200, 0]
"""
# a big blind's ante, a seat whose cards stay hidden, one shown only at the showdown
ANTES_HAND = """# a hand as the televised ones are written
variant = 'NT'
ante_trimming_status = false
antes = [0, 120, 0, 0]
blinds_or_straddles = [40, 80, 0, 0]
min_bet = 80
starting_stacks = [7380, 2500, 5110, 10170]
actions = ['d dh p1 7s4s', 'd dh p2 ????', 'd dh p3 ????', 'd dh p4 6d5h', 'p3 f',
           'p4 cbr 170', 'p1 f', 'p2 cc', 'd db JcTs2d', 'p2 cc', 'p4 cbr 140', 'p2 cc',
           'd db As', 'p2 cc', 'p4 cbr 325', 'p2 cc', 'd db Qs', 'p2 cc', 'p4 cbr 600',
           'p2 cc', 'p4 sm 6d5h', 'p2 sm Js8h']
players = ["Ann", "Bob", "Cy", "Di"]
finishing_stacks = [7340, 3775, 5110, 8935]
"""


def _bots(rng: np.random.Generator) -> list[Any]:
    from batchrl.games.hanabi.bots import make_bot

    return [make_bot("simple", rng), make_bot("convention", rng)]


def write_eger(path: Path, seed: int, rng: np.random.Generator) -> int:
    """A game of the Hanabi bots as Eger et al.'s log (deck from ``seed`` as their game
    shuffled it); returns its score."""
    from batchrl.games.hanabi.rules import deal, decode, is_terminal, step
    from parsers.hanabi_eger import _LOG_COLOUR, _card, _log_deck, _shuffle

    to_log = {ours: log for log, ours in _LOG_COLOUR.items()}
    shuffled = _shuffle(_log_deck(), seed)
    state = deal(tuple(_card(p) for p in shuffled), 2, discard_at_max_hints=True)
    lines = ["Old GID: 0123456789abcdef", f"Treatment: ('full', {seed})", str(shuffled[10:])]
    bots = _bots(rng)
    while not is_terminal(state):
        seat = state.current
        action = int(bots[seat].act(state))
        kind, a, b = decode(action, 2)
        if kind in ("play", "discard"):
            lines.append(f"MOVE: {seat} {2 if kind == 'play' else 3} {a} None None None")
        elif kind == "hint_rank":
            lines.append(f"MOVE: {seat} 1 None {1 - seat} None {b}")
        else:
            lines.append(f"MOVE: {seat} 0 None {1 - seat} {to_log[b]} None")
        lines.append(f"seat {seat} does {kind}")
        state = step(state, action)
    lines.append(f"Score {state.score_played}")
    path.write_text("\n".join(lines) + "\n")
    return state.score_played


def write_hanablive(path: Path, rng: np.random.Generator) -> int:
    """A two-player game of the Hanabi bots as a hanab.live export; returns its score."""
    from batchrl.games.hanabi.rules import (
        colour_of,
        deal,
        decode,
        full_deck,
        is_terminal,
        rank_of,
        step,
    )
    from parsers.hanablive import _SUIT

    to_live = {ours: live for live, ours in _SUIT.items()}
    deck = tuple(full_deck()[i] for i in rng.permutation(50).tolist())
    state = deal(deck, 2)
    slots = [list(range(5)), list(range(5, 10))]
    next_card, actions = 10, []
    bots = _bots(rng)
    while not is_terminal(state):
        seat = state.current
        action = int(bots[seat].act(state))
        kind, a, b = decode(action, 2)
        after = step(state, action)
        if kind in ("play", "discard"):
            actions.append({"type": 0 if kind == "play" else 1, "target": slots[seat][a]})
            slots[seat].pop(a)
            if len(after.hands[seat]) > len(slots[seat]):
                slots[seat].append(next_card)
                next_card += 1
        elif kind == "hint_rank":
            actions.append({"type": 3, "target": 1 - seat, "value": b})
        else:
            actions.append({"type": 2, "target": 1 - seat, "value": to_live[b]})
        state = after
    actions.append({"type": 4, "target": 0, "value": 1})
    export = {"id": 1000 + next_card, "players": ["alice", "bob"],
              "deck": [{"suitIndex": to_live[colour_of(c)], "rank": rank_of(c)} for c in deck],
              "actions": actions, "options": {"variant": "No Variant"}}
    path.write_text(json.dumps(export, indent=1))
    return state.score_played


# ---- one case ------------------------------------------------------------------------

class Hang(Exception):
    """A case that ran past its time."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """``Hang`` raised in this (the main) thread after ``seconds``: a blocked open of a
    pipe, or a loop, is interrupted."""
    def fire(signum: int, frame: Any) -> None:
        raise Hang(f"still running after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Outcome:
    """What one case did: rows stored, or the clean error it stopped with, or what
    escaped (a traceback, a hang), and the checks that failed (``problems``)."""

    rows: int = 0
    error: str = ""
    escape: str = ""
    hung: bool = False  # the escape is a hang
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.escape and not self.problems


def case_files(seed: Path) -> list[Path]:
    """The files a mutation may change: the seed, or its directory's files."""
    return sorted(f for f in seed.iterdir()) if seed.is_dir() else [seed]


def prepare(seed: Path, mutations: Sequence[Mutation], folder: Path) -> Path:
    """A copy of ``seed`` under ``folder`` with ``mutations`` applied; its path."""
    case = folder / seed.name
    if seed.is_dir():
        shutil.copytree(seed, case)
    else:
        shutil.copyfile(seed, case)
    files = case_files(case)
    for m in mutations:
        target = files[m.file % len(files)]
        target.write_bytes(m.apply(target.read_bytes()))
    return case


def run_case(fmt: str, seed: Path, mutations: Sequence[Mutation], folder: Path,
             forced: bool = False, seconds: float = CASE_SECONDS) -> Outcome:
    """Ingest ``seed`` mutated (under ``folder``, which it empties afterwards), with
    ``--on-error skip`` and, if that skipped anything, ``fail``; ``forced``: with
    ``--format fmt`` rather than told from the content."""
    from batchrl.ingest import IngestConfig, IngestError, ingest
    from batchrl.store import StoreError

    folder.mkdir(parents=True, exist_ok=True)
    outcome = Outcome()
    try:
        case = prepare(seed, mutations, folder)
        # President's judge reads the logged returns: the seed's time reward adds up to them
        options = {"jobs": 0} if fmt == "tressette" else \
            {"placement": False} if fmt == "president" else {}
        for on_error in ("skip", "fail"):
            store = folder / f"store-{on_error}"
            config = IngestConfig(paths=(case,), store=store, fmt=fmt if forced else "auto",
                                  on_error=on_error, options=options)
            try:
                with time_limit(seconds):
                    reports = ingest(config)
            except (IngestError, StoreError) as exc:
                outcome.error = outcome.error or str(exc)
                _check_message(str(exc), case, outcome)
                break
            except BaseException as exc:
                if isinstance(exc, KeyboardInterrupt):
                    raise
                outcome.escape = "".join(traceback.format_exception(exc))
                outcome.hung = isinstance(exc, Hang)
                break
            stored = [r for r in reports if not r.error]
            for report in reports:
                _check_report(report, case, outcome)
                outcome.error = outcome.error or report.error
            if on_error == "skip":
                outcome.rows = sum(r.rows for r in stored)
                if stored:
                    _check_results(fmt, case, store, outcome)
                if not any(r.skipped for r in reports) and not any(r.error for r in reports):
                    break
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return outcome


def _check_message(message: str, case: Path, outcome: Outcome) -> None:
    if len(message) > MAX_SHOWN:
        outcome.problems.append(f"a message of {len(message):,} characters: "
                                f"{message[:200]!r}")
    if str(case) not in message:
        outcome.problems.append(f"an error that does not name {case}: {message[:200]!r}")


def _check_report(report: Any, case: Path, outcome: Outcome) -> None:
    # a source's error (a file of a directory passed over) is shown after its path
    for text in [report.error, *report.notes,
                 *(e for ex in report.examples.values() for e in ex)]:
        if len(text) > MAX_SHOWN:
            outcome.problems.append(f"a kept message of {len(text):,} characters: "
                                    f"{text[:200]!r}")


# ---- every stored episode against its logged result ----------------------------------

def _log_lines(path: Path) -> list[str]:
    """A log's lines as ``batchrl.records.LogLines`` reads them (numbered from 1)."""
    lines = [raw.decode("utf-8", "replace").rstrip("\r\n \t")
             for raw in path.read_bytes().split(b"\n")]
    if lines:
        lines[0] = lines[0].removeprefix("\ufeff")
    return lines


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _check_results(fmt: str, case: Path, store: Path, outcome: Outcome) -> None:
    import pyarrow.parquet as pq

    if fmt == "phh":
        return _check_phh(case, pq.read_table(store / "parts", columns=[
            "episode", "player", "reward", "cards"]), outcome)
    rows = pq.read_table(store / "parts", columns=["episode", "player", "reward", "line"])
    sums: dict[tuple[str, int], list[float]] = {}
    for episode, player, reward, line in zip(*(rows.column(c).to_pylist() for c in
                                               ("episode", "player", "reward", "line")),
                                             strict=True):
        # Hanabi's score is the team's: every move's reward adds to it
        key = (episode, 0 if fmt.startswith("hanab") else player)
        sums.setdefault(key, [0.0, line])[0] += reward
    lines = _log_lines(case) if case.is_file() else []
    for (episode, player), (total, line) in sums.items():
        try:
            logged = _logged(fmt, case, lines, episode, int(line), player)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, OSError) as exc:
            outcome.problems.append(f"{fmt}: episode {episode} (line {line}) is stored, "
                                    f"but its line gives no result ({exc!r})")
            continue
        if logged is not None and not math.isclose(total, logged, abs_tol=1e-6):
            outcome.problems.append(f"{fmt}: episode {episode}, seat {player} (line {line}): "
                                    f"rewards add up to {total}, the log says {logged}")


def _logged(fmt: str, case: Path, lines: list[str], episode: str, line: int,
            player: int) -> float | None:
    """The result the log gives ``player`` in the game stored as ``episode`` (at
    ``line``), or None where it gives none."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    if fmt in ("acpc", "glassfrog"):
        cut = text.find(" #")
        fields = (text if cut < 0 else text[:cut].rstrip()).split(":")
        return float(fields[4].split("|")[player])
    if fmt == "sette-mezzo":
        return float(_json(text)["reward"])
    if fmt == "president":
        return float(_json(text)["returns"][player])
    if fmt == "tressette":
        points = _json(text).get("points")
        return None if points is None else float(points[player % 2])
    if fmt == "tressette-transcript":
        points = _transcript_points(lines, line)
        return None if points is None or player % 2 not in points else points[player % 2]
    key = episode.split(":", 1)[1]
    if fmt == "hanabi-json":
        actions = (case / f"{key}.actions.jsonl").read_text(encoding="utf-8-sig").splitlines()
        while actions and not actions[-1].strip():
            actions.pop()
        last = _json(actions[-1]) if actions else None
        score = last.get("score") if isinstance(last, dict) else None
        return None if score is None else float(score)
    if fmt == "hanabi-eger":
        text = (case / f"game{key}.log").read_text(encoding="utf-8", errors="replace")
        scores = [t.split()[1] for t in text.splitlines() if t.startswith("Score")]
        return float(scores[-1])
    return None  # hanab.live exports log no score


def _check_phh(case: Path, rows: Any, outcome: Outcome) -> None:
    """PHH hands are told apart by their cards (a folder's hands all start at line 1):
    each stored seat's rewards against its finishing stack less its starting one, as
    the (mutated) file gives them; a hand that logs neither has no result to check."""
    sums: dict[tuple[str, str, int], float] = {}
    for episode, player, reward, cards in zip(*(rows.column(c).to_pylist() for c in
                                                ("episode", "player", "reward", "cards")),
                                              strict=True):
        key = (episode, cards, player)
        sums[key] = sums.get(key, 0.0) + reward
    logged = _phh_results(case)
    for (episode, cards, player), total in sums.items():
        if cards not in logged:
            outcome.problems.append(f"phh: episode {episode} ({cards}) is stored, but no "
                                    "hand of the file deals those cards")
            continue
        result = logged[cards]
        if result is not None and not math.isclose(total, result[player], abs_tol=1e-6):
            outcome.problems.append(f"phh: episode {episode}, seat {player} ({cards}): "
                                    f"rewards add up to {total}, the log says "
                                    f"{result[player]}")


def _phh_results(case: Path) -> dict[str, list[float] | None]:
    """Each hand's result per seat (None where it logs none), by its cards as the store's
    ``cards`` column writes them: the hole cards (``????`` where hidden, unless shown at
    the showdown), then each board."""
    import tomllib

    from batchrl.games.holdem.cards import cards_str, parse_cards

    out: dict[str, list[float] | None] = {}
    for path in sorted(case.rglob("*")) if case.is_dir() else [case]:
        try:
            document = tomllib.loads(path.read_bytes().decode("utf-8"))
        except (ValueError, OSError, RecursionError):  # the reader reads none of it
            continue
        hands = [v for v in document.values() if isinstance(v, dict)] \
            if path.suffix == ".phhs" else [document]
        for hand in hands:
            try:
                hole: dict[int, str] = {}
                boards = []
                for action in hand["actions"]:
                    words = action.split("#", 1)[0].split()
                    if words[:2] == ["d", "dh"]:
                        hole[int(words[2][1:])] = words[3]
                    elif words[:2] == ["d", "db"]:
                        boards.append(cards_str(parse_cards(words[2])))
                    elif len(words) == 3 and words[1] == "sm" and words[2] != "????":
                        hole[int(words[0][1:])] = words[2]
                seats = len(hand["starting_stacks"])
                cards = "/".join(["|".join(
                    "????" if hole.get(s, "????") == "????" else
                    cards_str(parse_cards(hole[s])) for s in range(1, seats + 1)), *boards])
                final = hand.get("finishing_stacks")
                out[cards] = None if final is None else [
                    float(b) - float(a) for a, b in zip(hand["starting_stacks"], final,
                                                        strict=True)]
            except (KeyError, TypeError, ValueError, IndexError, AttributeError,
                    OverflowError):
                continue
    return out


_TEAM = re.compile(r"^Team ([01]) \(seat \S+\) (?:→|->) ([0-9]+) punti$")


def _transcript_points(lines: list[str], first: int) -> dict[int, float] | None:
    """The team points a transcript's game (from line ``first``) logs after its end line
    (the lines its reader reads: none over ``MAX_TRANSCRIPT_LINE``), or None if it logs
    none."""
    from parsers.tressette import MAX_TRANSCRIPT_LINE

    plays = 0
    for n in range(first - 1, len(lines)):
        text = lines[n].strip()
        if text.startswith("[DEBUG]") and n > first - 1:
            return None
        if text.startswith("Giocatore "):
            plays += 1
            if plays > 40:
                return None
        if text == "== Fine partita ==":
            points: dict[int, float] = {}
            for later in lines[n + 1:]:
                if not later.strip() or len(later) > MAX_TRANSCRIPT_LINE:
                    continue
                if not (m := _TEAM.match(later.strip())):
                    break
                points.setdefault(int(m.group(1)), float(m.group(2)))
            return points
    return None
