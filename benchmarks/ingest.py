"""Ingest speed, against pokerkit's ACPC parser as the baseline, measured in the same run.

    python benchmarks/ingest.py [--hands 100000] [--pokerkit-hands 5000]

Needs the benchmark extra (``pip install -e '.[bench]'`` brings pokerkit).

What it times, each in a fresh process so no cache carries over:

1. ``repeated``: the real heads-up limit logs in ``../shared/data/acpc`` (the
   bundled sample where those are absent), repeated to ``--hands`` hands,
   ingested without PV and with PV. The real logs share their deals (both were
   dealt with seed 0), and a repeated log repeats them again, so PV mostly hits
   its cache here;
2. ``fresh``: ``--hands`` new hands of two random players (every deal
   different), ingested with PV: the cold-cache figure;
3. ``pokerkit``: ``HandHistory.from_acpc_protocol`` on the first
   ``--pokerkit-hands`` hands of the same repeated text (it parses a few hundred
   hands a second, so the whole text would take minutes).

Prints hands/s for each and the ratio to pokerkit, and the peak memory of each
ingest (resident set size of its process).
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data" / "acpc"
SAMPLE = ROOT / "datasets" / "samples" / "random_vs_random.2p.limit.log"


def heads_up_limit_logs() -> list[Path]:
    found = []
    if SHARED.is_dir():
        for path in sorted(SHARED.glob("*.log")):
            with open(path, encoding="utf-8", errors="replace") as f:
                if "holdem.limit.2p.reverse_blinds.game" in f.readline():
                    found.append(path)
    return found or [SAMPLE]


def repeated_log(sources: list[Path], hands: int, out: Path) -> int:
    lines = [t for p in sources for t in p.read_text(encoding="utf-8").splitlines()
             if t.startswith("STATE:")]
    copies = -(-hands // len(lines))
    body = "\n".join(lines) + "\n"
    with open(out, "w") as f:
        f.write("# name/game/hands/seed bench holdem.limit.2p.reverse_blinds.game 0 0\n")
        for _ in range(copies):
            f.write(body)
    return copies * len(lines)


def fresh_log(hands: int, out: Path) -> int:
    from batchrl.games.holdem.logs import generate

    return generate(out, ["random", "random"], hands, seed=1)


def _ingest_child(path: str, store: str, pv: bool, queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    sys.path.insert(0, str(ROOT))
    from batchrl.ingest import IngestConfig, ingest

    started = time.perf_counter()
    (report,) = ingest(IngestConfig(paths=(Path(path),), store=Path(store), options={"pv": pv}))
    seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put((report.hands, report.rows, seconds, peak_mb))


def time_ingest(path: Path, store: Path, pv: bool) -> tuple[int, int, float, float]:
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_ingest_child, args=(str(path), str(store), pv, queue))
    proc.start()
    result = queue.get()
    proc.join()
    return result  # type: ignore[no-any-return]


def time_pokerkit(path: Path, hands: int) -> tuple[int, float]:
    from pokerkit import FixedLimitTexasHoldem, HandHistory

    lines = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("STATE:"):
                lines.append(line)
                if len(lines) == hands:
                    break
    text = "".join(lines)
    game = FixedLimitTexasHoldem(automations=(), ante_trimming_status=True, raw_antes=0,
                                 raw_blinds_or_straddles=(5, 10), small_bet=10, big_bet=20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a hand pokerkit cannot parse would flatter it
        started = time.perf_counter()
        parsed = sum(1 for _ in HandHistory.from_acpc_protocol(game, 10**9, text))
        seconds = time.perf_counter() - started
    return parsed, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=100_000)
    parser.add_argument("--fresh-hands", type=int, default=100_000,
                        help="hands of new deals (simulating them costs about 1 ms each)")
    parser.add_argument("--pokerkit-hands", type=int, default=5_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sources = heads_up_limit_logs()
        n_rep = repeated_log(sources, args.hands, work / "repeated.log")
        n_fresh = fresh_log(args.fresh_hands, work / "fresh.log")
        print(f"repeated: {n_rep:,} hands from {', '.join(p.name for p in sources)}")
        print(f"fresh:    {n_fresh:,} hands of two random players, every deal new")
        parsed, pk_seconds = time_pokerkit(work / "repeated.log", args.pokerkit_hands)
        baseline = parsed / pk_seconds
        print(f"\n{'run':<28}{'hands/s':>12}{'x pokerkit':>12}{'peak MB':>10}")
        print(f"{'pokerkit from_acpc_protocol':<28}{baseline:>12,.0f}{1.0:>12.1f}{'':>10}")
        runs = [("repeated, no PV", work / "repeated.log", False),
                ("repeated, exact PV", work / "repeated.log", True),
                ("fresh deals, exact PV", work / "fresh.log", True)]
        for k, (name, path, pv) in enumerate(runs):
            hands, _rows, seconds, peak = time_ingest(path, work / f"store{k}", pv)
            rate = hands / seconds
            print(f"{name:<28}{rate:>12,.0f}{rate / baseline:>12.1f}{peak:>10,.0f}")


if __name__ == "__main__":
    main()
