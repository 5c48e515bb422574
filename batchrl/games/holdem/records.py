"""What a hold'em log holds, as the parsers of ``parsers.acpc`` read it and the store side
takes it: a hand (`LoggedHand`) and a dealer log's run header (`Header`).

The records live here, beside the game, because the game's store side reads them and a
game never imports ``parsers``; the parsers import them from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from batchrl.games.holdem.gamedef import GameDef


@dataclass(frozen=True, slots=True)
class LoggedHand:
    """One hand as a log line tells it (players in the log's player order)."""

    source: str
    line: int  # 1-based
    index: int  # ordinal among the file's hands: hand numbers repeat in real logs
    number: int  # the hand number as logged
    betting: str  # as logged, e.g. "rc/crc/cc/rc"
    hole: tuple[tuple[int, ...], ...]  # per player; () where the log hides them
    board: tuple[tuple[int, ...], ...]  # board cards per '/'-group after the hole cards
    payoffs: tuple[float, ...]
    names: tuple[str, ...]
    cards: str  # the cards field as logged (for audit)
    # the game it was played in, where the hand says (a PHH hand's seats, blinds and
    # stacks); None where the log names it elsewhere (a dealer log's header) or not at all
    game: GameDef | None = None

    @property
    def num_players(self) -> int:
        return len(self.hole)

    @property
    def is_nolimit(self) -> bool:
        """Raise sizes (``r300``) and blind tokens (``b50``) carry amounts: no-limit only."""
        return any(ch.isdigit() for ch in self.betting)


@dataclass(frozen=True, slots=True)
class Header:
    """A dealer log's ``# name/game/hands/seed`` line; runs appended to a file repeat it."""

    source: str
    line: int
    match: str
    game_path: str
    hands: int | None
    seed: int | None
