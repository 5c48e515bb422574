"""Writing hands as ACPC dealer logs: ``STATE`` lines and Glassfrog summary lines (and,
through ``handhistory``, as PHH hand histories).

The same formats ``parsers.acpc`` reads, so a written log ingests back to the
same hands. Payoffs are printed as the dealer prints them: integers when whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from batchrl.games.holdem import gamedef, handhistory
from batchrl.games.holdem.bots import PLAYABLE, load_models, make_bot, players_game
from batchrl.games.holdem.cards import cards_str
from batchrl.games.holdem.gamedef import GameDef
from batchrl.games.holdem.rules import HandState
from batchrl.games.holdem.simulate import play


def cards_field(state: HandState) -> str:
    """Hole cards per seat, then the board by round, up to the round reached."""
    groups = ["|".join(cards_str(h) for h in state.hole)]
    groups += [cards_str(state.board_dealt(r)) for r in range(1, state.round + 1)]
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
              players: Sequence[str] = ("alice", "bob")) -> int:
    """Write finished hands as a dealer log (``"acpc"``) or, heads-up limit, a Glassfrog
    summary (``"glassfrog"``).

    Seats rotate every hand, as the dealer rotates them: player ``b`` sits in seat
    ``(b + i) % n`` at hand ``i``. Returns the number of hands written.
    """
    played = list(hands)
    n = len(players)
    if fmt == "glassfrog" and played and (n != 2 or not played[0][0].game.is_limit):
        raise ValueError("a Glassfrog summary holds heads-up limit hands: write an ACPC log")
    lines = []
    if fmt == "acpc" and played:
        lines += header_lines(match, played[0][0].game, len(played), seed)
    totals = dict.fromkeys(players, 0.0)
    for number, (state, payoff) in enumerate(played):
        names = [players[(s - number) % n] for s in range(n)]
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
        if fmt not in ("acpc", "glassfrog", "phh"):
            raise ValueError(f"log format {fmt!r}: want acpc, glassfrog or phh")
        return fmt
    if path.suffix in handhistory.SUFFIXES:
        return "phh"
    return "glassfrog" if path.name.endswith(".dealer.summary") else "acpc"


def generate(
    path: Path, players: Sequence[str], hands: int, seed: int = 0, fmt: str | None = None,
    game: GameDef | None = None, progress: Callable[[int], None] | None = None,
) -> int:
    """Play ``hands`` hands between bots (``random``, ``rule`` or a model file), one per
    seat, and write them as a dealer log; what ``batchrl generate --game holdem`` runs.

    The game is ``game``, else a model player's, else heads-up limit in the format's
    usual units: Glassfrog summaries in blinds 1/2, ACPC logs in the ACPC game (blinds
    5/10). ``fmt`` ``phh`` (or a ``.phh``/``.phhs`` path) writes PHH hand histories of a
    no-limit game (`handhistory.write_phh`).
    """

    if len(players) not in PLAYABLE:
        raise ValueError(f"hold'em seats {PLAYABLE[0]} to {PLAYABLE[-1]} players, not "
                         f"{len(players)}")
    fmt = log_format(path, fmt)
    models = load_models(players)
    if game is None:
        game = players_game(models, gamedef.GLASSFROG_LIMIT if fmt == "glassfrog"
                            else gamedef.HEADS_UP_LIMIT)
        if len(players) > 2 and game.num_players == 2:
            raise ValueError(f"{len(players)} players: say which game with --gamedef "
                             "(holdem.limit.3p, holdem.nolimit.3p or a .game file)")
    if len(players) != game.num_players:
        raise ValueError(f"{game.name} seats {game.num_players} players, not {len(players)}")
    if fmt == "phh" and (why := handhistory.writable(game)):
        raise ValueError(why)
    deals, *bot_seeds = np.random.SeedSequence(seed).spawn(1 + len(players))
    bots = [make_bot(p, game, np.random.default_rng(s), models=models)
            for p, s in zip(players, bot_seeds, strict=True)]
    match = play(game, bots, hands, np.random.default_rng(deals), keep_states=True,
                 progress=progress)
    assert match.states is not None
    names = [b.name.replace("|", "_").replace(":", "_").replace(" ", "_") for b in bots]
    if len(set(names)) < len(names):
        names = [f"{name}-{k}" for k, name in enumerate(names, 1)]
    played = zip(match.states, match.seat_payoffs().tolist(), strict=True)
    if fmt == "phh":
        return handhistory.write_phh(path, played, names)
    return write_log(path, played, fmt=fmt, match=path.name.split(".")[0], seed=seed,
                     players=names)
