"""No-limit ingest against pokerkit's ACPC parser, on DeepStack's 45,037 hands, in one run.

    python benchmarks/acpc_nolimit.py [--hands 45037] [--pokerkit-hands 5000] [--repeat 3]
                                      [--workers 2]
    python benchmarks/acpc_nolimit.py --cross-check      # payoffs, every real ACPC log

Needs the real logs (``../shared/data/acpc``) and pokerkit (the test and bench extras).

* ``batchrl ingest``: the first ``--hands`` hands of DeepStack's log (the whole log by
  default) ingested with PV into a fresh store, in a fresh process (no cache carries
  over), timed end to end inside it: reading, replaying and checking every hand, the
  features and PVs, writing the store. Its peak memory is the process's resident set.
* ``pokerkit (baseline)``: ``HandHistory.from_acpc_protocol`` on the first
  ``--pokerkit-hands`` hands of the same text (the log's lines without their ``# time``
  suffixes): pokerkit builds each hand's state and applies its actions, the part of
  the work that parses and replays, with no features and no store.

* ``batchrl ingest --scheduler`` (with ``--workers N``): the same ingest with its chunks
  made on a Dask LocalCluster of N worker processes on this machine (the dask extra);
  the cluster is started before the timing.

Runs alternate ``--repeat`` times; the medians are printed as hands/s and as a ratio
to pokerkit. ``--cross-check`` replays every hand of every real log with pokerkit too
and compares its payoffs with the logged ones (which batchrl's rules reproduce on every
hand: the tests check it), printing where the two disagree.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data" / "acpc"
DEEPSTACK = SHARED / "obventio56__approximating_deepstack__ACPC__all_hands.log"


def _lines(path: Path, hands: int) -> list[str]:
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("STATE:"):
                out.append(line.split(" #")[0].rstrip("\r\n"))
                if len(out) == hands:
                    break
    return out


def _ingest_child(path: str, store: str, queue: Any, scheduler: str | None = None) -> None:
    sys.path.insert(0, str(ROOT))
    from batchrl.ingest import IngestConfig, ingest

    started = time.perf_counter()
    (report,) = ingest(IngestConfig(paths=(Path(path),), store=Path(store),
                                    scheduler=scheduler))
    seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put((report.hands, report.rows, seconds, peak_mb))


def time_ingest(path: Path, scheduler: str | None = None) -> tuple[int, int, float, float]:
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    with tempfile.TemporaryDirectory() as tmp:
        proc = ctx.Process(target=_ingest_child, args=(str(path), f"{tmp}/s", queue,
                                                       scheduler))
        proc.start()
        result = queue.get()
        proc.join()
    return result  # type: ignore[no-any-return]


def pokerkit_game(game: Any) -> tuple[Any, int]:
    """pokerkit's game for one of batchrl's built-in game definitions, and its stack."""
    from pokerkit import FixedLimitTexasHoldem, NoLimitTexasHoldem

    blinds = tuple(sorted(b for b in game.blind if b)) if game.num_players == 2 \
        else tuple(game.blind[:2])
    if game.is_limit:
        return FixedLimitTexasHoldem(
            automations=(), ante_trimming_status=True, raw_antes=0,
            raw_blinds_or_straddles=blinds, small_bet=game.raise_size[0],
            big_bet=game.raise_size[2]), 10**9
    return NoLimitTexasHoldem(automations=(), ante_trimming_status=True, raw_antes=0,
                              raw_blinds_or_straddles=blinds,
                              min_bet=game.big_blind), game.stacks()[0]


def time_pokerkit(lines: list[str]) -> tuple[int, float]:
    from pokerkit import HandHistory

    from batchrl.games.holdem.gamedef import HEADS_UP_NOLIMIT

    poker, stack = pokerkit_game(HEADS_UP_NOLIMIT)
    text = "\n".join(lines)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a hand pokerkit cannot parse would flatter it
        started = time.perf_counter()
        parsed = sum(1 for _ in HandHistory.from_acpc_protocol(poker, stack, text))
        seconds = time.perf_counter() - started
    return parsed, seconds


def cross_check() -> None:
    """pokerkit's payoffs against the logged ones, every hand of every real log."""
    from pokerkit import HandHistory

    from batchrl.games.holdem import gamedef
    from batchrl.games.holdem.records import Header, LoggedHand
    from parsers.acpc import read_acpc

    print(f"{'log':<62}{'game':<34}{'hands':>7}{'equal':>7}{'differ':>7}{'unparsed':>9}")
    for path in sorted(SHARED.glob("*.log")):
        records = list(read_acpc(path.read_text(encoding="utf-8").splitlines(), str(path)))
        header = next((r for r in records if isinstance(r, Header)), None)
        game = gamedef.builtin_by_filename(header.game_path) if header else \
            gamedef.HEADS_UP_NOLIMIT
        if game is None:
            print(f"{path.name[:60]:<62}custom game: pokerkit has no such game")
            continue
        poker, stack = pokerkit_game(game)
        equal = differ = unparsed = 0
        examples = []
        for hand in (r for r in records if isinstance(r, LoggedHand)):
            line = ":".join(["STATE", str(hand.number), hand.betting, hand.cards,
                             "|".join(f"{v:g}" for v in hand.payoffs),
                             "|".join(hand.names) or "|".join(f"p{k}" for k in
                                                              range(len(hand.hole)))])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    parsed = list(HandHistory.from_acpc_protocol(poker, stack, line))
                except Exception:  # whatever it raises, it did not parse
                    parsed = []
            if not parsed:
                unparsed += 1
                continue
            *_, final = parsed[0]
            theirs = list(final.payoffs)
            if all(abs(a - b) < 1e-6 for a, b in zip(theirs, hand.payoffs, strict=True)):
                equal += 1
            else:
                differ += 1
                examples.append(f"    line {hand.line}: logged {list(hand.payoffs)}, "
                                f"pokerkit {theirs}")
        print(f"{path.name[:60]:<62}{game.name:<34}{equal + differ + unparsed:>7,}"
              f"{equal:>7,}{differ:>7,}{unparsed:>9,}")
        for example in examples[:3]:
            print(example)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=45_037)
    parser.add_argument("--pokerkit-hands", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cross-check", action="store_true")
    parser.add_argument("--workers", type=int, default=0,
                        help="also ingest on a LocalCluster of this many workers")
    args = parser.parse_args()
    if not DEEPSTACK.exists():
        sys.exit(f"{DEEPSTACK} is missing: this benchmark reads the real logs")
    if args.cross_check:
        cross_check()
        return
    lines = _lines(DEEPSTACK, args.hands)
    cluster: Any = None
    if args.workers:
        import logging

        from distributed import LocalCluster

        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address=None,
                               silence_logs=logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "deepstack.log"
        log.write_text("\n".join(lines) + "\n")
        ours, theirs, spread = [], [], []
        for _ in range(args.repeat):
            ours.append(time_ingest(log))
            theirs.append(time_pokerkit(lines[: args.pokerkit_hands]))
            if cluster is not None:
                spread.append(time_ingest(log, cluster.scheduler_address))
    if cluster is not None:
        cluster.close()
    hands, rows = ours[0][0], ours[0][1]
    rate = statistics.median(h / s for h, _, s, _ in ours)
    base = statistics.median(n / s for n, s in theirs)
    peak = max(p for *_, p in ours)
    print(f"DeepStack's log, heads-up no-limit; runs: {args.repeat}, the median\n")
    print(f"{'run':<46}{'hands':>8}{'hands/s':>10}{'x pokerkit':>12}   every run")
    each = ", ".join(f"{n / s:,.0f}" for n, s in theirs)
    print(f"{'pokerkit from_acpc_protocol (baseline)':<46}{theirs[0][0]:>8,}{base:>10,.0f}"
          f"{1:>12.2f}   {each}")
    each = ", ".join(f"{h / s:,.0f}" for h, _, s, _ in ours)
    print(f"{'batchrl ingest, with PV (' + f'{rows:,} rows)':<46}{hands:>8,}{rate:>10,.0f}"
          f"{rate / base:>12.2f}   {each}")
    if spread:
        rate2 = statistics.median(h / s for h, _, s, _ in spread)
        each = ", ".join(f"{h / s:,.0f}" for h, _, s, _ in spread)
        label = f"the same, --scheduler: {args.workers} workers"
        print(f"{label:<46}{hands:>8,}{rate2:>10,.0f}{rate2 / base:>12.2f}   {each}")
    print(f"\npeak memory of the ingest: {peak:,.0f} MB (its process's resident set)")
    print(f"targets: >= 10x pokerkit: {rate / base:.1f}x, "
          f"{'met' if rate >= 10 * base else 'NOT met'}; under 1 GB: "
          f"{'met' if peak < 1024 else 'NOT met'}")


if __name__ == "__main__":
    main()
