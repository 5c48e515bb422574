"""Texas hold'em as the ACPC plays it: game definitions, rules, features; ``game`` is the
rules core (``RULES``), ``faces`` its other faces, and ``GAME`` here puts them together,
as ``batchrl.games`` knows it."""

from batchrl.games.base import BenchFace, CliFace, Dataset, Game, LearnFace, Option
from batchrl.games.holdem import bots, gamedef
from batchrl.games.holdem.faces import HoldemLog, HoldemPlay
from batchrl.games.holdem.game import RULES, HoldemParams

GAME = Game(
    RULES,
    log=HoldemLog(RULES),
    play=HoldemPlay(RULES),
    # FQI: the thesis's M=100, n_min=20, N=11, one joint model, full refits
    # iql is the learner with no flags: within 3 points of the best on every tier of the
    # benchmark, where FQI falls to 75.6 on the mixed tier (docs/benchmark.md)
    learn=LearnFace(RULES, {"fqi": {"trees": 100, "nmin": 20, "iters": 11},
                            "iql": {"beta": 0.1}}, learner="iql"),
    bench=BenchFace(
        datasets=(Dataset("random", ("random", "random"), 20_000, 1, 400),
                  Dataset("mixed", ("rule", "random"), 20_000, 2, 400),
                  Dataset("expert", ("rule", "rule"), 20_000, 3, 400)),
        reference="rule",
        games=(4_000, 200)),
    cli=CliFace(
        title="Texas hold'em (ACPC limit and no-limit poker)",
        options=(
            Option("gamedef", {"ingest": "--game", "generate": "--gamedef",
                               "evaluate": "--gamedef"},
                   help="the game: an ACPC .game file, or a built-in game: "
                        f"{', '.join(gamedef.BUILTINS)}. Default: for ingest, the game the "
                        "log's header names, else the built-in whose rules give the logged "
                        "payoffs (this picks a Glassfrog summary's units); for generate and "
                        "evaluate, a model player's game, else heads-up limit in the "
                        "format's usual units (three players: name the game).",
                   metavar="FILE|NAME"),
            Option("pv", {"ingest": "--pv/--no-pv"}, type=bool,
                   help="compute pv, the exact probability of victory, for every decision. "
                        "--no-pv leaves the feature out: ingest runs several times faster "
                        "[default: --pv]."),
            Option("duplicate", {"evaluate": "--duplicate"}, type=bool,
                   help="play every deal once per seating (twice heads-up, three times "
                        "with three players), cutting the variance the cards add."),
        ),
        examples={
            "generate": "ACPC STATE logs, or Glassfrog's (a .dealer.summary name):\n"
                        "  batchrl generate --game holdem --hands 5000 --players random,random "
                        "\\\n"
                        "      --seed 10 -o ROOM_90.dealer.summary\n"
                        "  batchrl generate --game holdem --hands 50000 --players random,rule "
                        "\\\n"
                        "      -o rule.log\n"
                        "  batchrl generate --game holdem --gamedef holdem.nolimit.3p \\\n"
                        "      --players rule,random,rule --hands 20000 -o nl3.log",
            "evaluate": "plays the model against an opponent and reports the chips it won "
                        "(the\n"
                        "thesis's figure), big blinds and mbb per hand with a 95% confidence\n"
                        "interval, and the split by position:\n"
                        "  batchrl evaluate --model M.npz --opponent rule --hands 20000 "
                        "--duplicate"}))

bots.HOLDEM.bind(GAME)

__all__ = ["GAME", "HoldemParams"]
