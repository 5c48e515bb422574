"""Sette e mezzo against a dealer that draws to a fixed limit, solved exactly.

- ``game``: the rules core (``RULES``); ``faces``: its log and play faces; ``GAME`` here
  puts them together, as ``batchrl.games`` knows it.
- ``rules``: the game as pure functions over a frozen state, and the feature encoder.
- ``tree``, ``solver``: the decision states with exact card-removal probabilities,
  policy iteration to the optimal policy, and exact evaluation of any batched policy.
- ``logs``: games as JSON Lines, and a lockstep simulator (``parsers.sette_mezzo``
  reads the lines back, replaying each game through ``rules``).
- ``transitions``: logged games to store rows.
"""

from batchrl.games.base import BenchFace, CliFace, Dataset, Game, LearnFace, Option
from batchrl.games.sette_mezzo import rules
from batchrl.games.sette_mezzo.faces import SetteMezzoLog, SetteMezzoPlay
from batchrl.games.sette_mezzo.game import RULES

GAME = Game(
    RULES,
    log=SetteMezzoLog(RULES),
    play=SetteMezzoPlay(RULES),
    # the two features the optimum depends on (but for one cell): on 100,000 random
    # games, M=100 n_min=20 N=11 on them reach the optimum within 0.0012
    # (docs/games/sette-mezzo.md)
    # iql is the learner with no flags: within 0.1 of the best on both tiers, where FQI
    # falls to 64.8 on the optimum's games (docs/benchmark.md)
    learn=LearnFace(RULES, {"fqi": {"features": ("total", "opponent_card")},
                            "bc": {"features": ("total", "opponent_card")},
                            "iql": {"features": ("total", "opponent_card")}}, learner="iql"),
    # scored exactly (through the game tree): the reference is the optimum itself; the
    # stick's expected reward takes the dealer's draws' noise out of the data
    # (docs/games/sette-mezzo.md)
    bench=BenchFace(
        datasets=(Dataset("random", ("random",), 100_000, 0, 3_000, {"reward": "expected"}),
                  Dataset("expert", ("optimal",), 100_000, 1, 3_000, {"reward": "expected"})),
        reference="optimal",
        games=(1, 1)),
    cli=CliFace(
        title="Sette e mezzo against a dealer that draws to a limit",
        options=(
            Option("limit", {"generate": "--limit", "evaluate": "--limit", "solve": "--limit"},
                   type=float,
                   help="the opponent draws until its total reaches this [default: 5; "
                        "evaluate: the limit the model's data was played at]."),
            Option("reward", {"ingest": "--reward"}, choices=rules.REWARDS,
                   help="what a stick earns in the store: the game's "
                        "result as logged, or its expectation over the opponent's draws "
                        "given the player's cards and the up card, exact from the rules "
                        "(the seed's reward; the learner then sees none of the draws' "
                        "noise). [default: result]")),
        examples={
            "generate": "one player against the dealer:\n"
                        "  batchrl generate --game sette-mezzo --games 100000 --policy random \\\n"
                        "      -o random.jsonl",
            "evaluate": "exact, no sampling: the policy's expected reward per game, the optimal\n"
                        "one, the gap, and the share of decisions where it plays the optimal\n"
                        "action, weighted by how often it reaches each state."}))

__all__ = ["GAME"]
