"""Off-policy evaluation against the exact truth: on the exact games' benchmark datasets
(sette e mezzo's and Leduc's), each learner's policy is valued from the logs alone
(``batchrl ope``: FQE, weighted importance sampling, doubly robust, 95% bootstrap) and
exactly through the game tree (the baseline, computed in the same run), against the
logs' own players in the seats it does not take (a mixed tier: it takes the first
player's decisions, by name, and meets the other). Printed: the exact value, each
estimate with its interval, its error, whether the interval covers the truth, the
weights' effective sample size and the share of decisions where the policy's move is
off the logs' support (where no estimator can know it).

    python benchmarks/ope_exact.py                          # fqi and bc, every tier
    python benchmarks/ope_exact.py --games leduc --tiers random --learners fqi,bc,iql
    python benchmarks/ope_exact.py --quick                  # a smoke run: small datasets

The datasets are the benchmark's (built once into its cache, ``$BATCHRL_CACHE``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _args import parse

from batchrl.games import GAMES
from batchrl.learning import learn, settings
from batchrl.play.bench import LearnerSpec, build_dataset, cache_dir, split_learners
from batchrl.play.ope import OPEConfig, evaluate_offline


def taken(players: tuple[str, ...]) -> tuple[str, ...]:
    """Whose decisions the policy takes: every seat's where one player played them all,
    else the first player's, by name (Leduc's logs alternate seats hand by hand)."""
    return () if len(set(players)) == 1 else (players[0],)


def exact(game_name: str, model: Path, players: tuple[str, ...]) -> float:
    """The model's exact value where the estimate puts it (`taken`), against the logs'
    other players, averaged over the seats it takes."""
    game = GAMES[game_name]
    if game_name == "sette-mezzo":
        return float(game.play.score((f"model:{model}",), 1, 0, {}).values[0])
    spec = f"model:{model}"
    others = players[1:] if taken(players) else players[:1]
    values = [game.play.exact((spec, other)) for other in others]
    return sum(v[seat] for v in values for seat in (0, 1)) / (2 * len(others))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default="sette-mezzo,leduc")
    parser.add_argument("--tiers", default=None, help="tiers, comma-separated (all)")
    parser.add_argument("--learners", default="fqi,bc",
                        help="learner specs, as bench --learners takes them")
    parser.add_argument("--boot", type=int, default=100)
    parser.add_argument("--count", type=int, default=None, help="games a dataset")
    parser.add_argument("--cache", type=Path, default=None)
    args = parse(parser, {"count": None}, {"count": 5_000})
    specs = [LearnerSpec.parse(s) for s in split_learners([args.learners])]
    cache = args.cache or cache_dir()
    print(f"{'dataset':<20} {'learner':<8} {'exact':>8}  {'estimator':<4} {'estimate':>8} "
          f"{'95% interval':>20} {'error':>8} {'covers':>6} {'ESS':>8} {'off':>6} {'s':>6}")
    for name in args.games.split(","):
        game = GAMES[name]
        for dataset in game.bench.datasets:
            if args.tiers and dataset.tier not in args.tiers.split(","):
                continue
            if args.count:
                dataset = replace(dataset, count=args.count)
            store = build_dataset(game, dataset, False, cache, lambda _: None)
            with tempfile.TemporaryDirectory() as tmp:
                for spec in specs:
                    path, _ = learn(spec.learner, store,
                                    settings(spec.learner, store, dict(spec.given)), jobs=-1,
                                    out=Path(tmp) / f"{spec.learner.name}.npz")
                    truth = exact(name, Path(path), dataset.players)
                    began = time.perf_counter()
                    report = evaluate_offline(OPEConfig(Path(path), store, boot=args.boot,
                                                        players=taken(dataset.players)))
                    took = time.perf_counter() - began
                    ess = min(s.ess for s in report.seats)
                    off = max(s.unsupported for s in report.seats)
                    for v in (report.mean or report.seats[0].values):
                        covers = v.low <= truth <= v.high
                        print(f"{name + '/' + dataset.tier:<20} {spec.label[:8]:<8} "
                              f"{truth:>+8.4f}  {v.estimator:<4} {v.value:>+8.4f} "
                              f"[{v.low:>+8.4f}, {v.high:>+8.4f}] {v.value - truth:>+8.4f} "
                              f"{'yes' if covers else 'NO':>6} {ess:>8.0f} {off:>6.1%} "
                              f"{took:>6.1f}",
                              flush=True)


if __name__ == "__main__":
    main()
