"""Search at decision time against its blueprint alone: strength and speed, in one run.

    python benchmarks/search.py --game holdem --blueprint model:HERO.npz --vs random
        [--search search+worlds=16:model:HERO.npz ...] [--games 2000] [--seed 7] [--quick]

For each player (the blueprint, then each ``--search`` spec; by default
``search:BLUEPRINT`` and ``search+opponent=VS:BLUEPRINT``): its score against ``--vs``
on the same deals (``PlayFace.score``: hold'em's duplicate deals with keyed random bots,
Tressette's deals from both sides, ...), the paired difference from the blueprint with
its 95% interval, and the speed: the seconds of the whole scoring, as a ratio to the
blueprint's measured here in the same run (the baseline), and the searched decisions
(those with a choice) per second. Nothing else should load the machine while it runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import _args  # benchmarks/, the script's own folder

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import parsers  # noqa: F401  (registers the log formats)
from batchrl.evaluation import mean_ci
from batchrl.games import get_game
from batchrl.games.search import SearchPlayer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", required=True)
    parser.add_argument("--blueprint", required=True, help="the player searched over")
    parser.add_argument("--vs", default="random", help="the opponents' name (every seat)")
    parser.add_argument("--search", action="append", default=[],
                        help="a search player's name (repeat for more)")
    parser.add_argument("--games", type=int, default=None)
    parser.add_argument("--seed", type=int, default=7)
    args = _args.parse(parser, {"games": 2000}, {"games": 40})
    game = get_game(args.game)
    specs = args.search or [f"search:{args.blueprint}",
                            f"search+opponent={args.vs}:{args.blueprint}"]
    params = None
    counted: dict[str, int] = {}
    timed: dict[str, float] = {}
    original = SearchPlayer.act

    def counting(self: SearchPlayer, states, seats):  # type: ignore[no-untyped-def]
        counted[self.spec] = counted.get(self.spec, 0) + len(states)
        return original(self, states, seats)

    SearchPlayer.act = counting  # type: ignore[method-assign]
    print(f"{game.name}: {args.games:,} {game.rules.unit} against {args.vs}, seed {args.seed}")
    print(f"{'player':<48} {'score':>9} {'95% CI':>9} {'vs blueprint':>22} "
          f"{'seconds':>8} {'ratio':>6}")
    base = None
    base_seconds = 0.0
    for spec in [args.blueprint, *specs]:
        opponents = [args.vs] * len(game.play.ablation_players(game.rules.params()))
        started = time.perf_counter()
        scores = game.play.score([spec, *opponents], args.games, args.seed, {}, params=params)
        seconds = time.perf_counter() - started
        timed[spec] = seconds
        units = scores.values.reshape(-1, scores.per_unit).mean(axis=1)
        mine = mean_ci(units)
        width = 0.0 if scores.exact else mine.half_width  # exact: no interval
        if base is None:
            base, base_seconds = units, seconds
            versus = ""
        else:
            diff = mean_ci(units - base)
            versus = f"{diff.mean:+.4f} ± {0.0 if scores.exact else diff.half_width:.4f}"
        ratio = seconds / base_seconds if base_seconds else float("nan")
        print(f"{spec[:48]:<48} {mine.mean:>+9.4f} {width:>9.4f} {versus:>22} "
              f"{seconds:>8.1f} {ratio:>5.1f}×")
    for name, n in counted.items():
        print(f"{name}: {n:,} decisions asked of the search, {n / timed[name]:,.1f} a second")
    print(f"(scores in {scores.unit}; seconds: the whole scoring, the blueprint's the "
          "baseline)")


if __name__ == "__main__":
    main()
