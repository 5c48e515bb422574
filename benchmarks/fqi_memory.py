"""FQI's peak memory and time against rows, hold'em and Tressette, on generated stores.

    python benchmarks/fqi_memory.py [--rows 100000,1000000,3000000] [--games holdem,tressette]
                                    [--work DIR] [--quick]

For each game and row count it generates a log (hold'em: two random bots, heads-up
limit; Tressette: the seed's heuristic against random players, the README's recipe
log), ingests it (Tressette with canonical suits), and runs ``batchrl fqi`` with the
game's recommended settings in a child process, sampling the child's resident set
every 0.1 s. Printed per run: rows, features, the size of the float32 state matrix and
of a state and a next-state matrix together, the peak resident set, the peak over
those two matrices, and the wall time. Stores are kept under ``--work`` (default
``.bench/fqi_memory``, ignored by git) and reused.

The hold'em rows are the thesis's (11 features, joint model, full refits); Tressette's
the README's recipe (per-action, fast, 206 features after the drops).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BATCHRL = [sys.executable, "-m", "batchrl"]


def rss_peak(argv: list[str]) -> tuple[int, float, str]:
    """Run ``argv``; its peak resident set in bytes (sampled, and the kernel's high-water
    mark at the end), its wall time, and its output."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = 0

    def sample() -> None:
        nonlocal peak
        status = Path(f"/proc/{proc.pid}/status")
        while proc.poll() is None:
            try:
                for line in status.read_text().splitlines():
                    if line.startswith(("VmHWM:", "VmRSS:")):
                        peak = max(peak, int(line.split()[1]) * 1024)
            except (OSError, ValueError):
                pass
            time.sleep(0.1)

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    out, _ = proc.communicate()
    watcher.join()
    if proc.returncode:
        raise SystemExit(f"{' '.join(argv)} failed:\n{out[-2000:]}")
    return peak, time.perf_counter() - started, out


def store_for(game: str, rows: int, work: Path) -> Path:
    """A store of ``game`` with at least ``rows`` rows (generated, ingested, reused)."""
    per_game = {"holdem": 7.6, "tressette": 40}[game]  # decisions a game, about
    games = int(rows / per_game) + 1
    store = work / f"{game}-{rows}"
    if (store / "store.json").exists():
        return store
    log = work / (f"{game}-{rows}.log" if game == "holdem" else f"{game}-{rows}.jsonl")
    players = "random,random" if game == "holdem" else \
        "seed-heuristic,random,seed-heuristic,random"
    subprocess.run([*BATCHRL, "generate", "--game", game, "--players", players, "--games",
                    str(games), "--seed", "1", "-o", str(log)], check=True,
                   stdout=subprocess.DEVNULL)
    extra = ["--suits", "canonical"] if game == "tressette" else []
    subprocess.run([*BATCHRL, "ingest", str(log), "--store", str(store), *extra], check=True,
                   stdout=subprocess.DEVNULL)
    log.unlink()
    return store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="100000,1000000,3000000")
    parser.add_argument("--games", default="holdem,tressette")
    parser.add_argument("--work", type=Path, default=ROOT / ".bench" / "fqi_memory")
    parser.add_argument("--quick", action="store_true", help="20,000 rows, hold'em only")
    args = parser.parse_args()
    sizes = [20_000] if args.quick else [int(r) for r in args.rows.split(",")]
    games = ["holdem"] if args.quick else args.games.split(",")
    args.work.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT))
    from batchrl.store import Store

    print(f"{'game':<10}{'rows':>11}{'features':>9}{'state MB':>10}{'s+next MB':>10}"
          f"{'peak MB':>9}{'peak/s+next':>12}{'seconds':>9}")
    for game in games:
        for rows in sizes:
            store = store_for(game, rows, args.work)
            opened = Store.open(store)
            total = opened.info().rows
            keep = opened.select_features(*_recipe(store))
            state_mb = total * len(keep) * 4 / 2**20
            peak, seconds, _ = rss_peak([*BATCHRL, "fqi", "--store", str(store), "--out",
                                         str(args.work / f"{game}-{rows}.npz")])
            peak_mb = peak / 2**20
            print(f"{game:<10}{total:>11,}{len(keep):>9}{state_mb:>10,.0f}"
                  f"{2 * state_mb:>10,.0f}{peak_mb:>9,.0f}{peak_mb / (2 * state_mb):>12.2f}"
                  f"{seconds:>9.1f}")


def _recipe(store: Path) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
    from batchrl.learners import get_learner
    from batchrl.learning import settings

    chosen = settings(get_learner("fqi"), store, {})
    return chosen.features, chosen.drop


if __name__ == "__main__":
    main()
