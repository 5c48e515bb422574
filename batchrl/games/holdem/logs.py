"""Writing hands as ACPC dealer logs: ``STATE`` lines and Glassfrog summary lines.

The same formats ``parsers.acpc`` reads, so a written log ingests back to the
same hands. Payoffs are printed as the dealer prints them: integers when whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
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


def log_format(path: Path, fmt: str | None = None) -> str:
    """``fmt`` if given, else told from the name: ``.dealer.summary`` is Glassfrog, else ACPC."""
    if fmt not in (None, "auto"):
        if fmt not in ("acpc", "glassfrog"):
            raise ValueError(f"log format {fmt!r}: want acpc or glassfrog")
        return fmt
    return "glassfrog" if path.name.endswith(".dealer.summary") else "acpc"


def generate(
    path: Path, players: Sequence[str], hands: int, seed: int = 0, fmt: str | None = None,
    game: GameDef | None = None, progress: Callable[[int], None] | None = None,
) -> int:
    """Play ``hands`` hands between two bots (``random``, ``rule`` or a model file) and
    write them as a dealer log; what ``batchrl generate --game holdem`` runs.

    The game is ``game``, else a model player's, else the format's usual units:
    Glassfrog summaries in blinds 1/2, ACPC logs in the ACPC game (blinds 5/10).
    """
    import numpy as np

    from batchrl.games.holdem import gamedef
    from batchrl.games.holdem.bots import load_models, make_bot, players_game
    from batchrl.games.holdem.simulate import play

    if len(players) != 2:
        raise ValueError(f"heads-up hold'em needs two players, not {len(players)}")
    fmt = log_format(path, fmt)
    models = load_models(players)
    if game is None:
        game = players_game(models, gamedef.GLASSFROG_LIMIT if fmt == "glassfrog"
                            else gamedef.HEADS_UP_LIMIT)
    deals, *bot_seeds = np.random.SeedSequence(seed).spawn(3)
    bots = tuple(make_bot(p, game, np.random.default_rng(s), models=models)
                 for p, s in zip(players, bot_seeds, strict=True))
    match = play(game, (bots[0], bots[1]), hands, np.random.default_rng(deals),
                 keep_states=True, progress=progress)
    assert match.states is not None
    names = [b.name.replace("|", "_").replace(":", "_").replace(" ", "_") for b in bots]
    if names[0] == names[1]:
        names = [f"{names[0]}-1", f"{names[1]}-2"]
    return write_log(path, zip(match.states, match.seat_payoffs().tolist(), strict=True),
                     fmt=fmt, match=path.name.split(".")[0], seed=seed,
                     players=(names[0], names[1]))
