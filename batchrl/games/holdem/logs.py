"""Writing hands as ACPC dealer logs: ``STATE`` lines and Glassfrog summary lines.

The same formats ``parsers.acpc`` reads, so a written log ingests back to the
same hands. Payoffs are printed as the dealer prints them: integers when whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from batchrl.games.holdem.cards import cards_str
from batchrl.games.holdem.gamedef import GameDef
from batchrl.games.holdem.rules import HandState


def cards_field(state: HandState) -> str:
    """Hole cards per seat, then the board by round, up to the round reached."""
    game = state.game
    groups = ["|".join(cards_str(h) for h in state.hole)]
    for r in range(1, state.round + 1):
        start = game.board_cards_before(r - 1)
        groups.append(cards_str(state.board[start : start + game.num_board_cards[r]]))
    return "/".join(groups)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def state_line(number: int, state: HandState, payoffs: Sequence[float],
               names: Sequence[str]) -> str:
    """``STATE:<hand>:<betting>:<cards>:<payoffs>:<names>``, fields in seat order."""
    return ":".join([
        "STATE", str(number), state.betting, cards_field(state),
        "|".join(_number(v) for v in payoffs), "|".join(names),
    ])


def summary_line(number: int, state: HandState, payoffs: Sequence[float],
                 names: Sequence[str]) -> str:
    """A Glassfrog dealer-summary line: ``<names>:<hand>:<betting>:<cards>:<payoffs>``."""
    return ":".join([
        "|".join(names), str(number), state.betting, cards_field(state),
        "|".join(_number(v) for v in payoffs),
    ])


def header_lines(match: str, game: GameDef, hands: int, seed: int) -> list[str]:
    """The dealer's header, naming the game by its standard file name."""
    return [
        f"# name/game/hands/seed {match} {game.name}.game {hands} {seed}",
        "#--t_response 600000",
        "#--t_hand 600000",
        "#--t_per_hand 7000",
    ]


def write_log(path: Path, hands: Iterable[tuple[HandState, Sequence[float]]],
              fmt: str = "acpc", match: str = "match", seed: int = 0,
              players: tuple[str, str] = ("alice", "bob")) -> int:
    """Write finished heads-up hands as a dealer log (``"acpc"``) or summary (``"glassfrog"``).

    Seats rotate every hand, as the dealer rotates them, so the names alternate.
    Returns the number of hands written.
    """
    played = list(hands)
    lines = []
    if fmt == "acpc" and played:
        lines += header_lines(match, played[0][0].game, len(played), seed)
    totals = dict.fromkeys(players, 0.0)
    for number, (state, payoff) in enumerate(played):
        names = players if number % 2 == 0 else players[::-1]
        for name, value in zip(names, payoff, strict=True):
            totals[name] += value
        write = state_line if fmt == "acpc" else summary_line
        lines.append(write(number, state, payoff, names))
    if fmt == "acpc":
        lines.append("SCORE:" + "|".join(_number(totals[p]) for p in players) + ":"
                     + "|".join(players))
    path.write_text("\n".join(lines) + "\n")
    return len(played)
