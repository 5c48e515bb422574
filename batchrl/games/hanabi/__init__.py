"""Hanabi: rules for 2-5 players, the knowledge model and the report's state, bots, the
report's JSON logs, store rows, and its views of them (the colour order, the convention's
facts).

``game`` is the rules core (``RULES``), ``faces`` its other faces; ``GAME`` here puts
them together, as ``batchrl.games`` knows it.
"""

from batchrl.games.base import BenchFace, CliFace, Dataset, Game, Option
from batchrl.games.hanabi import bots
from batchrl.games.hanabi.faces import HanabiLearn, HanabiLog, HanabiPlay
from batchrl.games.hanabi.game import RULES

GAME = Game(
    RULES,
    log=HanabiLog(RULES),
    play=HanabiPlay(RULES),
    learn=HanabiLearn(RULES, {
        # fast mode, one forest per move class, 30 trees: the 2,036 Eger games (102,901
        # rows, 210 features) train in 20 s (the thesis's full refits showed nothing for 11
        # minutes); 60 iterations look as far ahead as a two-player game is long (60 moves
        # cost 9 s)
        "fqi": {"trees": 30, "nmin": 50, "k": 30, "iters": 60, "per_action": True,
                "fast": True},
        "bc": {"k": 30},
        "iql": {"k": 30},
        # the report's network (its Figure 3) on the colour-ordered states and the focus
        # convention's facts: 99.7% of the teacher's moves, 1.00x its score
        # (docs/games/hanabi.md)
        "network": {"hidden": "195,128,64,32", "epochs": 30,
                    "view": {"colour_order": True, "features": "convention"}}}),
    bench=BenchFace(
        # mixed: the best bot beside a weaker one (its partner plays as the simple bot)
        datasets=(Dataset("random", ("random", "random"), 2_000, 1, 60),
                  Dataset("mixed", ("bot2", "simple"), 2_000, 2, 60),
                  Dataset("expert", ("bot2", "bot2"), 2_000, 3, 60)),
        reference="bot2",
        games=(1_000, 60)),
    cli=CliFace(
        title="Hanabi",
        options=(
            Option("jobs", {"generate": "--jobs"}, type=int, short="-j",
                   help="processes playing games (-1: one per core); the games do not "
                        "depend on it."),
            Option("jobs", {"ingest": "--jobs"}, type=int, short="-j",
                   help="processes that read and check the game files while this one "
                        "makes and writes the rows (0: read here; -1: one per core); the "
                        "store does not depend on it. Default: one per core on a machine "
                        "with two or more (at most 8), else 0."),
            Option("colour_order", {"imitate": "--colour-order/--no-colour-order",
                                    "learn": "--colour-order/--no-colour-order"}, type=bool,
                   help="learn on colour-ordered states (colours sorted per state, hint moves "
                        "renamed); the model renames its moves back when it plays "
                        "[default: the game's view for the learner: the network's is "
                        "colour-ordered]."),
            Option("features", {"imitate": "--features", "learn": "--inputs"},
                   choices=("report", "hints", "convention"),
                   help="report: the report's 195 numbers; hints: those and 15 public facts "
                        "about hints (which cards hints touched, the focus of the hint just "
                        "before), with 3-5 players the whole stored state; convention: those "
                        "and 78 facts the bots' focus convention reads, computed from them "
                        "(which card a hint would focus, chops, critical cards; with 3-5 "
                        "players, of the next seat) [default: the game's view for the "
                        "learner: the network's reads convention, the others the stored "
                        "features]."),
        ),
        examples={
            "generate": "a directory of games, two files each (the report's format); with 3\n"
                        "to 5 players, one hanab.live export each (game000000.json):\n"
                        "  batchrl generate --game hanabi --players bot2,bot2 --games 36000 \\\n"
                        "      -o hanabi-games\n"
                        "  batchrl generate --game hanabi --players bot2,bot2,bot2 \\\n"
                        "      --games 10000 -o hanabi-3p",
            "evaluate": "groups of 2 to 5 players on the same deals, the report's Table 2\n"
                        "(mean, sd, max, min) in both score conventions; model:PATH is any\n"
                        "learner's model (batchrl learn network, bc, fqi; batchrl imitate),\n"
                        "seated among as many players as its store's games had:\n"
                        "  batchrl evaluate --game hanabi --players model:net.npz,bot2 \\\n"
                        "      --players bot2,bot2 --players bot2,bot2,bot2 --games 1000"}))

bots.HANABI.bind(GAME)

__all__ = ["GAME"]
