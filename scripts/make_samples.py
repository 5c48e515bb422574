"""Make the bundled sample logs in datasets/samples/ with batchrl's own rules and bots.

    python scripts/make_samples.py

Two random players (the thesis's 10% fold / 50% call / 40% raise) play
heads-up limit hold'em; the hands are written as an ACPC dealer log, and as a
Glassfrog dealer summary in Glassfrog units. Deterministic: the same seed gives
the same files.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from batchrl.games.holdem import gamedef
from batchrl.games.holdem.bots import random_match
from batchrl.games.holdem.logs import write_log

SAMPLES = Path(__file__).resolve().parent.parent / "datasets" / "samples"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=SAMPLES)
    parser.add_argument("--hands", type=int, default=500)
    parser.add_argument("--seed", type=int, default=90)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    write_log(args.out / "random_vs_random.2p.limit.log",
              random_match(gamedef.HEADS_UP_LIMIT, args.hands, rng),
              fmt="acpc", match="random_vs_random", seed=args.seed)
    write_log(args.out / "ROOM_90.dealer.summary",
              random_match(gamedef.GLASSFROG_LIMIT, args.hands // 2, rng), fmt="glassfrog")


if __name__ == "__main__":
    main()
