"""Imitation training speed: seconds per epoch over the report's 2.7M states, on CPU.

    python benchmarks/imitation.py [--store DIR] [--rows 400000] [--threads 2]
                                   [--baseline-rows 60000] [--repeat 3]

The issue's target: <= 60 s per epoch over 2.7M states on 2 CPU cores. One
training pass (``learners.network.training.train_epoch``: forward, masked cross-entropy,
backward, Adam) of the report's network is timed on ``--rows`` states and
scaled to 2,700,000. The baseline, timed in the same run on
``--baseline-rows`` states, is the same network with batches of 32, Keras's
default and so what the report's ``fit`` used unless told otherwise; ours
trains with batches of 256 (``batchrl imitate --batch-size``).

States come from ``--store`` (a Hanabi store), else from bot2 self-play made
here with ``simulate.play`` (about 70 moves a game). Each figure is the median
of ``--repeat`` passes.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

REPORT_STATES = 2_700_000


def _states(store: Path | None, rows: int) -> tuple[np.ndarray, np.ndarray]:
    if store is not None:
        from batchrl.games.hanabi.view import hanabi_view
        from batchrl.store import Store

        t = Store.open(store).arrays(features=hanabi_view({"features": "report"}).columns)
        return t.state[:rows], t.action[:rows]
    from batchrl.games.hanabi.bots import ConventionBot
    from batchrl.games.hanabi.simulate import play

    games = max(1, rows // 65)
    played = play(games, np.random.default_rng(0), bots=(ConventionBot(), ConventionBot()))
    return played.features[:rows], played.actions[:rows]


def _pass_seconds(x: np.ndarray, y: np.ndarray, batch: int, repeat: int) -> float:
    import torch

    from batchrl.games.hanabi.view import REPORT_HIDDEN, possible_moves
    from batchrl.learners.network import NetworkConfig
    from batchrl.learners.network.training import network, train_epoch

    allowed = possible_moves(x)  # the report's move mask
    data = (torch.from_numpy(((x - x.mean(0)) / (x.std(0) + 1e-6)).astype(np.float32)),
            torch.from_numpy(y.astype(np.int64)), torch.from_numpy(allowed))
    times = []
    for r in range(repeat):
        torch.manual_seed(r)
        config = NetworkConfig(hidden=",".join(map(str, REPORT_HIDDEN)))
        model = network(config, x.shape[1], 20)  # the report's network
        optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
        started = time.perf_counter()
        train_epoch(model, optimiser, data, batch, True, torch.Generator().manual_seed(r))
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, default=None)
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--baseline-rows", type=int, default=60_000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    x, y = _states(args.store, args.rows)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; {len(y):,} states "
          f"from {args.store or 'bot2 self-play'}; median of {args.repeat} passes")
    ours = _pass_seconds(x, y, 256, args.repeat) / len(y) * REPORT_STATES
    n = min(args.baseline_rows, len(y))
    base = _pass_seconds(x[:n], y[:n], 32, args.repeat) / n * REPORT_STATES
    print(f"\n{'run':<36} {'s/epoch at 2.7M':>16} {'x baseline':>11}")
    print(f"{'batch 32 (Keras default; baseline)':<36} {base:>16.1f} {1.0:>11.2f}")
    print(f"{'batch 256 (batchrl imitate)':<36} {ours:>16.1f} {base / ours:>11.2f}")
    verdict = "met" if ours <= 60 else "NOT met"
    print(f"\ntarget <= 60 s per epoch over 2.7M states on {args.threads} cores: {verdict}")


if __name__ == "__main__":
    main()
