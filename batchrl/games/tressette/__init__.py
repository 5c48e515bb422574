"""Tressette: the seed project's rules, its heuristic and our own bots, and simulation;
``game`` is the rules core (``RULES``), ``faces`` its other faces, and ``GAME`` here puts
them together, as ``batchrl.games`` knows it."""

from batchrl.games.base import BenchFace, CliFace, Dataset, Game, LearnFace, Option
from batchrl.games.tressette import evaluate
from batchrl.games.tressette import names as tt
from batchrl.games.tressette.faces import TressetteLog, TressettePlay
from batchrl.games.tressette.game import RULES, Hand, TressetteParams

GAME = Game(
    RULES,
    log=TressetteLog(RULES),
    play=TressettePlay(RULES),
    # the recipe of docs/games/tressette.md (79% of hands won against random): N = 20,
    # twice a seat's ten decisions, learned better than 10 from 20,000 and 75,000 hands
    learn=LearnFace(RULES, {
        "fqi": {"trees": 50, "nmin": 20, "k": 30, "iters": 20, "per_action": True,
                "fast": True, "drop": ("played_*", "table_*")},
        "bc": {"k": 30, "drop": ("played_*", "table_*")},
        "iql": {"k": 30, "drop": ("played_*", "table_*")}}),
    bench=BenchFace(
        datasets=(Dataset("random", ("random",) * 4, 10_000, 1, 200, {"suits": "canonical"}),
                  # mixed: `rule`'s team against an ε-random one (rule~0.3: tries every
                  # move)
                  Dataset("mixed", ("rule", "rule~0.3") * 2, 10_000, 2, 200,
                          {"suits": "canonical"}),
                  Dataset("expert", ("rule",) * 4, 10_000, 3, 200, {"suits": "canonical"})),
        reference="rule",
        games=(2_000, 40)),
    cli=CliFace(
        title="Tressette (four seats, two teams)",
        options=(
            Option("reward", {"ingest": "--reward"},
                   "the team's points at the end of the hand, or the seed's shaped per-card "
                   "reward on top of them. [default: points]", choices=tt.REWARDS),
            Option("suits", {"ingest": "--suits"},
                   "name the suits as dealt, or put each state's suits in a canonical order "
                   "(led suit, then most cards held, ...): there are no trumps, so a learner "
                   "then sees 24 suit orders of a situation as one. [default: dealt]",
                   choices=tt.SUIT_ORDERS),
            Option("jobs", {"ingest": "--jobs"},
                   "processes that read and check JSON lines while this one makes and "
                   "writes the rows (0: read here; -1: one per core). Default: 1 on a "
                   "machine with two cores or more, else 0.", type=int, short="-j"),
        ),
        examples={
            "generate": "four seats, or A,B for teams 0+2 and 1+3:\n"
                        "  batchrl generate --game tressette --players seed-heuristic,random "
                        "\\\n"
                        "      --games 50000 -o tressette.jsonl",
            "evaluate": "a team against another, each deal played from both sides and the "
                        "lead\n"
                        "rotating: hands won and points per hand with 95% intervals:\n"
                        "  batchrl evaluate --game tressette --team model:M.npz --vs random \\\n"
                        "      --games 20000"}))

evaluate.TRESSETTE.bind(GAME)

__all__ = ["GAME", "Hand", "TressetteParams"]
