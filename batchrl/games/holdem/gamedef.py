"""ACPC game definitions: the ``.game`` files the dealer reads, and the built-ins.

A game file looks like this (the ACPC server's heads-up limit game)::

    GAMEDEF
    limit
    numPlayers = 2
    numRounds = 4
    blind = 10 5
    raiseSize = 10 10 20 20
    firstPlayer = 2 1 1 1
    maxRaises = 3 4 4 4
    numSuits = 4
    numRanks = 13
    numHoleCards = 2
    numBoardCards = 0 3 1 1
    END GAMEDEF

Players are numbered from 0 here; the file numbers ``firstPlayer`` from 1.
Logs name their game by a path that will not exist on the reader's machine, so
the standard ACPC files are recognised by their file name (``builtin_by_filename``).

>>> HEADS_UP_LIMIT.blind, HEADS_UP_LIMIT.raise_size, HEADS_UP_LIMIT.max_raises
((10, 5), (10, 10, 20, 20), (3, 4, 4, 4))
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from batchrl.records import printable, regular_file

# The ACPC server's "no stack" for limit games: nobody ever goes all-in.
UNLIMITED_STACK = 2**31 - 1
# what the ACPC dealer's game.h allows (MAX_PLAYERS, MAX_ROUNDS, MAX_SUITS, MAX_RANKS,
# MAX_HOLE_CARDS, MAX_BOARD_CARDS; maxRaises is a uint8), and chips within a stack
MAX_BOARD_CARDS = 7
BOUNDS: dict[str, tuple[int, int]] = {
    "num_players": (2, 10), "num_rounds": (1, 4), "num_suits": (1, 4),
    "num_ranks": (1, 13), "num_hole_cards": (1, 3), "num_board_cards": (0, MAX_BOARD_CARDS),
    "max_raises": (0, 255), "blind": (0, UNLIMITED_STACK),
    "raise_size": (1, UNLIMITED_STACK), "stack": (1, UNLIMITED_STACK),
    "ante": (0, UNLIMITED_STACK),
    "first_player": (0, 9)}


class GameDefError(ValueError):
    """A game definition that cannot be read or that batchrl cannot play."""


@dataclass(frozen=True, slots=True)
class GameDef:
    """One poker game as the ACPC dealer defines it (players numbered from 0)."""

    name: str
    betting: str  # "limit" or "nolimit"
    num_players: int
    num_rounds: int
    blind: tuple[int, ...]
    raise_size: tuple[int, ...]  # limit only: the fixed bet per round
    first_player: tuple[int, ...]  # who acts first in each round, from 0
    max_raises: tuple[int, ...]  # raises allowed per round (the blind is no raise)
    num_board_cards: tuple[int, ...]
    stack: tuple[int, ...] = ()
    num_suits: int = 4
    num_ranks: int = 13
    num_hole_cards: int = 2
    # antes (PHH's; an ACPC game has none): each seat's dead chips before the blinds.
    # ``ante_trimming`` as PHH's ``ante_trimming_status``: antes over the second largest
    # go back, and the rest count with the bets in the side pots; without it (a big
    # blind's ante) they are one dead pot that every seat still in contests
    ante: tuple[int, ...] = ()
    ante_trimming: bool = False
    # what one chip is worth in the logs' amounts, where they are decimal ("0.01": an
    # online hand's $0.25 blind is 25 chips); "" for whole chips
    chip: str = ""
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        self._check_bounds()
        per_player = {"blind": self.blind, "stack": self.stack, "ante": self.ante}
        for key, values in per_player.items():
            if values and len(values) != self.num_players:
                raise GameDefError(
                    f"{self.name}: {key} has {len(values)} values for {self.num_players} players"
                )
        per_round = {
            "firstPlayer": self.first_player,
            "maxRaises": self.max_raises,
            "numBoardCards": self.num_board_cards,
        }
        if self.betting == "limit":
            per_round["raiseSize"] = self.raise_size
        for key, values in per_round.items():
            if len(values) != self.num_rounds:
                raise GameDefError(
                    f"{self.name}: {key} has {len(values)} values for {self.num_rounds} rounds"
                )
        if self.betting not in ("limit", "nolimit"):
            raise GameDefError(f"{self.name}: betting must be limit or nolimit, not {self.betting}")
        if any(not 0 <= p < self.num_players for p in self.first_player):
            raise GameDefError(f"{self.name}: firstPlayer names a player who is not at the table")

    def _check_bounds(self) -> None:
        """Every number whole and within the bounds of the ACPC dealer's ``game.h``
        (`BOUNDS`), chips within a 32-bit stack: a game file, a store's or a model's
        params make no game the dealer could not deal."""
        for key, (low, high) in BOUNDS.items():
            value = getattr(self, key)
            values = value if isinstance(value, tuple) else (value,)
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
                raise GameDefError(f"{self.name}: {key} must be whole numbers, not "
                                   f"{printable(str(value), 60)}")
            if bad := [v for v in values if not low <= v <= high]:
                raise GameDefError(f"{self.name}: {key} {bad[0]} is outside {low} to "
                                   f"{high:,}, the bounds of an ACPC game")
        if sum(self.num_board_cards) > MAX_BOARD_CARDS:
            raise GameDefError(f"{self.name}: {sum(self.num_board_cards)} board cards, over "
                               f"an ACPC game's {MAX_BOARD_CARDS}")
        if not any(self.blind):
            raise GameDefError(f"{self.name}: no player posts a blind")
        if self.chip and not re.fullmatch(r"0\.0{0,7}1", self.chip):
            raise GameDefError(f"{self.name}: chip {printable(self.chip, 20)}: want a "
                               "decimal unit such as 0.01, or none")
        dealt = self.num_players * self.num_hole_cards + sum(self.num_board_cards)
        if dealt > self.num_suits * self.num_ranks:
            raise GameDefError(f"{self.name}: a hand deals {dealt} cards from a deck of "
                               f"{self.num_suits * self.num_ranks}")

    @property
    def is_limit(self) -> bool:
        return self.betting == "limit"

    @property
    def big_blind(self) -> int:
        return max(self.blind)

    @property
    def small_blind_player(self) -> int:
        """The seat that posts the smaller non-zero blind (the button, heads-up)."""
        posted = [(b, p) for p, b in enumerate(self.blind) if b > 0]
        return min(posted)[1]

    def board_cards_before(self, round_: int) -> int:
        """How many board cards are visible during ``round_``."""
        return sum(self.num_board_cards[: round_ + 1])

    def stacks(self) -> tuple[int, ...]:
        return self.stack or (UNLIMITED_STACK,) * self.num_players

    def posted_antes(self) -> tuple[int, ...]:
        """The antes each seat posts: none without antes; never more than the seat's
        stack; with ``ante_trimming``, then none over the second largest of those (the
        excess goes back, as PHH's trimming returns it)."""
        if not any(self.ante):
            return (0,) * self.num_players
        antes = tuple(min(a, s) for a, s in zip(self.ante, self.stacks(), strict=True))
        if self.ante_trimming:  # as pokerkit: what each can post, then trimmed
            cutoff = sorted(antes)[-2]
            antes = tuple(min(a, cutoff) for a in antes)
        return antes

    def behind(self) -> tuple[int, ...]:
        """Each seat's chips once its ante is posted: what it may bet with."""
        return tuple(s - a for s, a in zip(self.stacks(), self.posted_antes(), strict=True))

    def table(self) -> dict[str, Any]:
        """The params less what a hand history sets per hand (blinds, antes, stacks, who
        acts first): hands of one table may differ in those and share a store."""
        data = self.params()
        for key in ("blind", "ante", "ante_trimming", "stack", "first_player"):
            data.pop(key, None)
        return data

    def params(self) -> dict[str, Any]:
        """The game's identity as plain JSON data (stores compare it)."""
        data = asdict(self)
        data.pop("description")
        data.pop("name")
        if not self.stack:
            data.pop("stack")
        if not any(self.ante):  # the params of a game without antes are as they were
            data.pop("ante")
            data.pop("ante_trimming")
        if not self.chip:
            data.pop("chip")
        return data

    def to_text(self) -> str:
        """The game in the ACPC ``.game`` file format (round-trips through ``parse``)."""
        lines = ["GAMEDEF", self.betting, f"numPlayers = {self.num_players}"]
        lines.append(f"numRounds = {self.num_rounds}")
        if self.stack:
            lines.append("stack = " + " ".join(map(str, self.stack)))
        lines.append("blind = " + " ".join(map(str, self.blind)))
        if self.is_limit:
            lines.append("raiseSize = " + " ".join(map(str, self.raise_size)))
        lines.append("firstPlayer = " + " ".join(str(p + 1) for p in self.first_player))
        lines.append("maxRaises = " + " ".join(map(str, self.max_raises)))
        lines.append(f"numSuits = {self.num_suits}")
        lines.append(f"numRanks = {self.num_ranks}")
        lines.append(f"numHoleCards = {self.num_hole_cards}")
        lines.append("numBoardCards = " + " ".join(map(str, self.num_board_cards)))
        lines.append("END GAMEDEF")
        return "\n".join(lines) + "\n"


_KEYS = {
    "numplayers": "num_players",
    "numrounds": "num_rounds",
    "stack": "stack",
    "blind": "blind",
    "raisesize": "raise_size",
    "firstplayer": "first_player",
    "maxraises": "max_raises",
    "numsuits": "num_suits",
    "numranks": "num_ranks",
    "numholecards": "num_hole_cards",
    "numboardcards": "num_board_cards",
}
_SCALARS = {"num_players", "num_rounds", "num_suits", "num_ranks", "num_hole_cards"}
_ASSIGN = re.compile(r"^\s*([A-Za-z]+)\s*=\s*(.*)$")


def parse(text: str, name: str = "custom", description: str = "a custom game") -> GameDef:
    """Read a game in the ACPC ``.game`` format; the error names the line."""
    values: dict[str, Any] = {}
    betting = None
    inside = False
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        upper = line.upper()
        if upper == "GAMEDEF":
            inside = True
            continue
        if upper == "END GAMEDEF":
            break
        if not inside:
            raise GameDefError(f"{name}, line {lineno}: expected GAMEDEF, got {line!r}")
        if line.lower() in ("limit", "nolimit"):
            betting = line.lower()
            continue
        match = _ASSIGN.match(line)
        if not match or match.group(1).lower() not in _KEYS:
            raise GameDefError(f"{name}, line {lineno}: unknown setting {line!r}")
        key = _KEYS[match.group(1).lower()]
        try:
            numbers = tuple(int(v) for v in match.group(2).split())
        except ValueError:
            raise GameDefError(f"{name}, line {lineno}: {line!r} wants integers") from None
        if not numbers:
            raise GameDefError(f"{name}, line {lineno}: {line!r} has no value")
        values[key] = numbers[0] if key in _SCALARS else numbers
    else:
        if inside:
            raise GameDefError(f"{name}: no END GAMEDEF")
    if not inside:
        raise GameDefError(f"{name}: no GAMEDEF block")
    if betting is None:
        raise GameDefError(f"{name}: the game says neither limit nor nolimit")
    for required in ("num_players", "num_rounds", "blind", "num_board_cards"):
        if required not in values:
            raise GameDefError(f"{name}: missing {required}")
    rounds = values["num_rounds"]
    # The ACPC server's defaults: first player 1 every round, no raise cap.
    values.setdefault("first_player", (1,) * rounds)
    values["first_player"] = tuple(p - 1 for p in values["first_player"])
    values.setdefault("max_raises", (255,) * rounds)
    if betting == "limit" and "raise_size" not in values:
        raise GameDefError(f"{name}: a limit game needs raiseSize")
    values.setdefault("raise_size", ())
    return GameDef(name=name, betting=betting, description=description, **values)


MAX_GAME_FILE = 64 * 1024  # bytes: an ACPC .game file is a few hundred


def load(path: str | Path) -> GameDef:
    """Read a ``.game`` file; the game is named after the file (without ``.game``). Only a
    regular file of at most ``MAX_GAME_FILE`` bytes is read (a device or a pipe there
    would read forever, or wait)."""
    p = Path(path)
    if why := regular_file(p):
        raise GameDefError(f"game file {p}: {why}")
    try:
        with p.open("rb") as f:
            raw = f.read(MAX_GAME_FILE + 1)
    except OSError as exc:
        raise GameDefError(f"cannot read game file {p}: {exc.strerror}") from None
    if len(raw) > MAX_GAME_FILE:
        raise GameDefError(f"game file {p}: over {MAX_GAME_FILE:,} bytes, not a .game file")
    try:
        text = raw.decode()
    except UnicodeDecodeError:
        raise GameDefError(f"game file {p}: not text (UTF-8)") from None
    return builtin_or(parse(text, name=p.name.removesuffix(".game"),
                            description=f"game file {p}"))


HEADS_UP_LIMIT = GameDef(
    name="holdem.limit.2p.reverse_blinds",
    betting="limit",
    num_players=2,
    num_rounds=4,
    blind=(10, 5),
    raise_size=(10, 10, 20, 20),
    first_player=(1, 0, 0, 0),
    max_raises=(3, 4, 4, 4),
    num_board_cards=(0, 3, 1, 1),
    description="ACPC heads-up limit hold'em: blinds 10/5, bets 10/10/20/20",
)

# The AAAI/Glassfrog dealer's units for the same game: blinds 2/1, bets 2/2/4/4.
GLASSFROG_LIMIT = GameDef(
    name="glassfrog.limit.2p",
    betting="limit",
    num_players=2,
    num_rounds=4,
    blind=(2, 1),
    raise_size=(2, 2, 4, 4),
    first_player=(1, 0, 0, 0),
    max_raises=(3, 4, 4, 4),
    num_board_cards=(0, 3, 1, 1),
    description="Glassfrog dealer-summary units: blinds 1/2, bets 2/4",
)

HEADS_UP_NOLIMIT = GameDef(
    name="holdem.nolimit.2p.reverse_blinds",
    betting="nolimit",
    num_players=2,
    num_rounds=4,
    stack=(20000, 20000),
    blind=(100, 50),
    raise_size=(),
    first_player=(1, 0, 0, 0),
    max_raises=(255, 255, 255, 255),
    num_board_cards=(0, 3, 1, 1),
    description="ACPC heads-up no-limit hold'em: stacks 20000, blinds 100/50",
)

THREE_PLAYER_LIMIT = GameDef(
    name="holdem.limit.3p",
    betting="limit",
    num_players=3,
    num_rounds=4,
    blind=(5, 10, 0),
    raise_size=(10, 10, 20, 20),
    first_player=(2, 0, 0, 0),
    max_raises=(3, 4, 4, 4),
    num_board_cards=(0, 3, 1, 1),
    description="ACPC 3-player limit hold'em: blinds 5/10/0, bets 10/10/20/20",
)

THREE_PLAYER_NOLIMIT = GameDef(
    name="holdem.nolimit.3p",
    betting="nolimit",
    num_players=3,
    num_rounds=4,
    stack=(20000, 20000, 20000),
    blind=(50, 100, 0),
    raise_size=(),
    first_player=(2, 0, 0, 0),
    max_raises=(255, 255, 255, 255),
    num_board_cards=(0, 3, 1, 1),
    description="ACPC 3-player no-limit hold'em: stacks 20000, blinds 50/100/0",
)

BUILTINS: dict[str, GameDef] = {
    g.name: g
    for g in (HEADS_UP_LIMIT, GLASSFROG_LIMIT, HEADS_UP_NOLIMIT, THREE_PLAYER_LIMIT,
              THREE_PLAYER_NOLIMIT)
}


def builtin_by_filename(path_in_log: str) -> GameDef | None:
    """The built-in game a log's header names by path, or None if it is not standard.

    >>> builtin_by_filename("/home/x/project_acpc_server/holdem.limit.2p.reverse_blinds.game").name
    'holdem.limit.2p.reverse_blinds'
    """
    base = PureWindowsPath(PurePosixPath(path_in_log).name).name
    return BUILTINS.get(base.removesuffix(".game"))


def from_params(name: str, params: Mapping[str, Any], description: str = "") -> GameDef:
    """The game ``GameDef.params()`` described (a built-in when it is one).

    >>> from_params(HEADS_UP_LIMIT.name, HEADS_UP_LIMIT.params()) is HEADS_UP_LIMIT
    True
    """
    as_tuples = {k: tuple(v) if isinstance(v, list | tuple) else v for k, v in params.items()}
    game = GameDef(name=name, description=description, **as_tuples)  # type: ignore[arg-type]
    return builtin_or(game)


def builtin_or(game: GameDef) -> GameDef:
    """The built-in game ``game`` is, when it has a built-in's name; `GameDefError` when
    it has one's name but other rules (a name would say one game and the rules play
    another)."""
    builtin = BUILTINS.get(game.name)
    if builtin is None:
        return game
    if builtin != game:
        differ = [k for k, v in builtin.params().items() if game.params().get(k) != v]
        raise GameDefError(f"{game.name} is a built-in game's name, but its "
                           f"{', '.join(differ)} are not that game's "
                           f"({game.description or 'its params'}): a game of other rules "
                           "goes by another name")
    return builtin


def evaluable(game: GameDef) -> str | None:
    """Why batchrl's hand evaluator cannot score ``game``'s showdowns, or None if it can.

    It scores two hole cards and five board cards from the standard 52-card deck.
    """
    if (game.num_suits, game.num_ranks) != (4, 13):
        return f"a {game.num_suits}-suit, {game.num_ranks}-rank deck (want the 52-card deck)"
    if game.num_hole_cards != 2:
        return f"{game.num_hole_cards} hole cards (want 2)"
    if sum(game.num_board_cards) != 5:
        return f"{sum(game.num_board_cards)} board cards (want 5)"
    return None


def resolve(spec: str) -> GameDef:
    """A game from a built-in name or a ``.game`` file path (what ``--game`` takes)."""
    if spec in BUILTINS:
        return BUILTINS[spec]
    if spec.removesuffix(".game") in BUILTINS and not Path(spec).exists():
        return BUILTINS[spec.removesuffix(".game")]
    if not Path(spec).exists():
        names = ", ".join(sorted(BUILTINS))
        raise GameDefError(f"no game file {spec!r} and no built-in game of that name ({names})")
    return load(spec)
