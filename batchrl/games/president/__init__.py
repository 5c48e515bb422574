"""President, the fifth seed game: 2, 4, 5 or 8 players shed a Spanish deck (see
``rules``); learned offline from logs of ``random`` and ``rule`` play. Its rules core is
``game``, its faces ``faces``."""

from __future__ import annotations

from collections.abc import Sequence

from batchrl.games.base import BenchFace, CliFace, Dataset, Game, Option
from batchrl.games.president.faces import (
    PresidentLearn,
    PresidentLog,
    PresidentPlay,
    iter_games,
)
from batchrl.games.president.game import RULES
from batchrl.games.president.logs import LoggedGame

GAME = Game(
    RULES,
    log=PresidentLog(RULES),
    play=PresidentPlay(RULES),
    # N=20 with four players (64.69% first places against random from
    # rule,random,random,random logs at N=12, 65.88% at 20); N=12 for two-player single
    # games with the placement reward: from 20,000 random games FQI won 86.64%, 88.73%,
    # 90.61%, 91.71%, 92.19% against random at N=30, 20, 15, 12, 10 (each iteration's max
    # over 41 moves' forests adds its bias), and from rule,random logs 94.43% at 12
    # against 93.91% at 20 (10, within 12's interval on random logs, was not measured
    # there; docs/games/president.md)
    learn=PresidentLearn(
        RULES, {"fqi": {"trees": 50, "nmin": 20, "iters": 20, "per_action": True,
                        "fast": True}},
        two_players={"fqi": {"iters": 12}}),
    bench=BenchFace(
        datasets=(Dataset("random", ("random",) * 4, 10_000, 1, 300, {"placement": True}),
                  Dataset("mixed", ("rule", "random", "rule", "random"), 10_000, 2, 300,
                          {"placement": True}),
                  Dataset("expert", ("rule",) * 4, 10_000, 3, 300, {"placement": True})),
        reference="rule",
        games=(4_000, 200)),
    cli=CliFace(
        title="President (2, 4, 5 or 8 players, the seed's Spanish-deck rules)",
        options=(
            Option("placement", {"ingest": "--placement/--time-reward"},
                   "reward n - 1 - p for the play that empties the hand at placement p (0 "
                   "first) and nothing else (the default: FQI learns the game's goal from "
                   "it, 93.9% against random where the seed's reward gives 72.8%, "
                   "docs/games/president.md), or the seed's time penalty (-1 a decision, "
                   "3 - p for that play).", type=bool),
            Option("pass_locks", {"generate": "--pass-locks", "evaluate": "--pass-locks"},
                   "a pass is final for the round (by default a player who passed may play "
                   "again while the round goes on).", type=bool),
            Option("match", {"generate": "--match", "evaluate": "--match"},
                   "play matches of K games: before each game after the first the servant "
                   "gives the president its best card and the president returns one of its "
                   "choice (a decision of the president's); the episode is the match. "
                   "[default: 1, single games]", type=int, metavar="K"),
        ),
        examples={
            "generate": "2, 4, 5 or 8 seats (random, rule, model:PATH), JSON lines; --match K\n"
                        "plays matches of K games with the cards exchanged between games:\n"
                        "  batchrl generate --game president --players rule,random,random,"
                        "random \\\n"
                        "      --games 20000 -o president.jsonl",
            "evaluate": "the players take every seat in turn on the same deals: each one's\n"
                        "first-place rate, mean placement and top-half rate, 95% intervals:\n"
                        "  batchrl evaluate --game president \\\n"
                        "      --players model:M.npz,random,random,random --games 10000"}))


def play_games(players: Sequence[str], count: int, seed: int, pass_locks: bool = False,
               match: int = 1) -> list[LoggedGame]:
    """``count`` games (matches) of ``players`` (a list, for tests and notebooks)."""
    params = RULES.params(players=len(players), pass_locks=pass_locks, match=match)
    return list(iter_games(GAME, params, players, count, seed))


__all__ = ["GAME", "play_games"]
