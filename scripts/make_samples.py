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

from batchrl.games.holdem.logs import generate

SAMPLES = Path(__file__).resolve().parent.parent / "datasets" / "samples"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=SAMPLES)
    parser.add_argument("--hands", type=int, default=500)
    parser.add_argument("--seed", type=int, default=90)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    # What `batchrl generate --game holdem --players random,random` writes.
    generate(args.out / "random_vs_random.2p.limit.log", ["random", "random"], args.hands,
             seed=args.seed)
    generate(args.out / "ROOM_90.dealer.summary", ["random", "random"], args.hands // 2,
             seed=args.seed)


if __name__ == "__main__":
    main()
