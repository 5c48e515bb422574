"""Leduc hold'em: the standard small poker game, with exact values of any policy and an
exact best response (``exact``). Its rules core is ``game``, its faces ``faces``."""

from batchrl.games.base import BenchFace, CliFace, Dataset, Game, LearnFace
from batchrl.games.leduc.faces import BEST_RESPONSE, LeducLog, LeducPlay
from batchrl.games.leduc.game import RULES

GAME = Game(
    RULES,
    log=LeducLog(RULES),
    play=LeducPlay(RULES),
    # iql is the learner with no flags: the benchmark's best or level on every tier
    # (docs/benchmark.md); beta 3 keeps it near the logs' moves where they are a bot's
    learn=LearnFace(RULES, {"fqi": {"trees": 100, "nmin": 20, "iters": 6, "fast": True},
                            "iql": {"beta": 3.0}}, learner="iql"),
    bench=BenchFace(
        datasets=(Dataset("random", ("random", "random"), 100_000, 1, 2_000),
                  Dataset("mixed", ("rule", "random"), 100_000, 2, 2_000),
                  Dataset("expert", ("rule", "rule"), 100_000, 3, 2_000)),
        reference=BEST_RESPONSE,
        games=(1, 1)),  # exact: no hand is played
    cli=CliFace(
        title="Leduc hold'em",
        examples={
            "generate": "two seats (random, rule, model:PATH), ACPC-style STATE lines:\n"
                        "  batchrl generate --game leduc --players rule,random --hands 100000 \\\n"
                        "      -o leduc.log",
            "evaluate": "exact, no hands played: the first player's expected chips per hand\n"
                        "from both seats, the best response to the others and how much of\n"
                        "it the player takes, and the player's own exploitability:\n"
                        "  batchrl evaluate --game leduc --players model:M.npz,random"}))

__all__ = ["GAME"]
