"""FQI speed and quality, against MushroomRL's FQI as the baseline, measured in the same run.

    bash benchmarks/setup_mushroom.sh          # once: MushroomRL in its own venv (.bench/)
    python benchmarks/fqi.py [--rows 200000] [--trees 100] [--nmin 20] [--iters 11]

1. Poker rows: the real heads-up limit logs in ``../shared/data/acpc`` (the
   bundled sample where those are absent) repeated until the store holds
   ``--rows`` decisions, ingested with exact PV.
2. Each fit runs in a fresh process (peak memory is that process's), single
   threaded like MushroomRL's: batchrl's default mode (one regressor on state
   and action), per-action mode (what MushroomRL's ``ActionRegressor`` does),
   fast mode (trees grown once on the return-to-go, then leaf values only) and
   fast mode after 2 refits; then default and fast mode on every core (what
   ``batchrl fqi`` does unless told ``--jobs``); then MushroomRL's ``FQI`` with
   the same ExtraTrees settings.
3. Policy quality on poker: the share of states where each fit's greedy legal
   action equals the default mode's (there is no exact poker value to compare).
   On sette e mezzo, where the optimum is known exactly, each mode is trained
   on the same random-play games and evaluated exactly: expected reward per
   game and optimal-action share.

Prints seconds, ratio to MushroomRL (its time / ours: >1 is faster) and peak MB, and
the floor beside each: the seconds spent inside scikit-learn's ``fit`` of the forests
(MushroomRL's regressor's ``fit``; batchrl's `batchrl.forests.fit`), the rest being
each FQI's own work (targets, predictions, bookkeeping). Like for like, the same forests
on the same rows, no FQI can be faster than MushroomRL by more than MushroomRL's time
over that floor. ``--modes per-action --skip-sette`` times that comparison alone.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
MUSHROOM = ROOT / ".bench" / "mushroom" / "bin" / "python"

MODES: dict[str, dict[str, Any]] = {
    "batchrl default": {},
    "batchrl per-action": {"per_action": True},
    "batchrl fast": {"freeze_after": 0},
    "batchrl fast, 2 refits": {"freeze_after": 2},
}
# batchrl fqi's own default runs the trees on every core; results are the same.
ALL_CORES: dict[str, dict[str, Any]] = {
    "batchrl default, all cores": {"jobs": -1},
    "batchrl fast, all cores": {"freeze_after": 0, "jobs": -1},
}


def poker_store(rows: int, work: Path) -> Path:
    from ingest import heads_up_limit_logs  # benchmarks/ingest.py

    from batchrl.ingest import IngestConfig, ingest

    lines = [t for p in heads_up_limit_logs() for t in p.read_text().splitlines()
             if t.startswith("STATE:")]
    copies = max(1, -(-rows // (len(lines) * 9)))  # about 9 decisions a hand
    log = work / "poker.log"
    log.write_text("\n".join(lines * copies) + "\n")
    store = work / "poker"
    (report,) = ingest(IngestConfig(paths=(log,), store=store))
    print(f"poker store: {report.hands:,} hands, {report.rows:,} decisions")
    return store


def sette_mezzo_store(games: int, work: Path) -> Path:
    from batchrl.games.sette_mezzo.logs import play, write_log
    from batchrl.ingest import IngestConfig, ingest

    log = work / "sette.jsonl"
    write_log(log, play("random", games, np.random.default_rng(0)))
    store = work / "sette"
    (report,) = ingest(IngestConfig(paths=(log,), store=store))
    print(f"sette e mezzo store: {report.hands:,} random games, {report.rows:,} decisions")
    return store


def _fit_child(store: str, params: dict[str, Any], out: str, queue: Any) -> None:
    sys.path.insert(0, str(ROOT))
    from batchrl import forests
    from batchrl.learners.fqi import extra_trees
    from batchrl.learners.fqi.iterations import FQI
    from batchrl.learners.fqi.model import ModelArtifact
    from batchrl.store import Store

    inside = [0.0]  # seconds in the forests' fit
    grow = forests.fit

    def timed(*args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return grow(*args, **kwargs)
        finally:
            inside[0] += time.perf_counter() - began

    forests.fit = timed  # FQI calls forests.fit at each refit
    data = Store.open(store).arrays()
    fqi = FQI(extra_trees(params["trees"], params["nmin"], None, params.get("jobs", 1)),
              params["iters"],
              per_action=params.get("per_action", False),
              freeze_after=params.get("freeze_after"), random_state=0)
    started = time.perf_counter()
    fqi.fit(data)
    seconds = time.perf_counter() - started
    ModelArtifact(fqi.q_function(), {"feature_names": list(data.feature_names),
                                     "action_names": list(data.action_names),
                                     "game": Store.open(store).schema.game,
                                     "game_params": dict(Store.open(store).schema.game_params)}
                  ).save(out)
    queue.put((seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, inside[0]))


def fit(store: Path, params: dict[str, Any], out: Path) -> tuple[float, float, float]:
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_fit_child, args=(str(store), params, str(out), queue))
    proc.start()
    result = queue.get()
    proc.join()
    return result  # type: ignore[no-any-return]


def mushroom(store: Path, args: argparse.Namespace, work: Path) -> dict[str, Any] | None:
    if not MUSHROOM.exists():
        print("MushroomRL: not set up; run `bash benchmarks/setup_mushroom.sh` first")
        return None
    from batchrl.store import Store

    data = Store.open(store).arrays()
    npz = work / "mushroom.npz"
    np.savez(npz, state=data.state, action=data.action, reward=data.reward,
             next_state=data.next_state, absorbing=data.terminal,
             n_actions=len(data.action_names))
    out = subprocess.run(
        [str(MUSHROOM), str(ROOT / "benchmarks" / "mushroom_fqi.py"), str(npz),
         "--trees", str(args.trees), "--nmin", str(args.nmin), "--iters", str(args.iters),
         "--seed", "0", "--jobs", "1", "--out", str(work / "mushroom_result.npz")],
        capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def greedy(model: Path, store: Path) -> np.ndarray:
    from batchrl.learners.fqi.model import GreedyPolicy
    from batchrl.store import Store

    data = Store.open(store).arrays()
    legal = np.ones((len(data), len(data.action_names)), dtype=bool)
    # A decision's own legal actions: its predecessor row's next_legal, or all for a first.
    follows = np.flatnonzero(~data.terminal[:-1])
    legal[follows + 1] = data.next_legal[follows]
    return GreedyPolicy.load(model).act_batch(data.state, legal)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--nmin", type=int, default=20)
    parser.add_argument("--iters", type=int, default=11)
    parser.add_argument("--sette-games", type=int, default=100_000)
    parser.add_argument("--skip-mushroom", action="store_true")
    parser.add_argument("--skip-sette", action="store_true")
    parser.add_argument("--modes", default=None,
                        help="comma-separated: some of " + ", ".join(
                            m.removeprefix("batchrl ") for m in MODES | ALL_CORES)
                        + " (default: all; the same actions are then compared with the "
                          "first)")
    args = parser.parse_args()
    params = {"trees": args.trees, "nmin": args.nmin, "iters": args.iters}
    every = MODES | ALL_CORES
    wanted = every if args.modes is None else {
        f"batchrl {m.strip()}": every[f"batchrl {m.strip()}"] for m in args.modes.split(",")}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        store = poker_store(args.rows, work)
        times: dict[str, tuple[float, float, float]] = {}
        for name, extra in wanted.items():
            times[name] = fit(store, params | extra, work / f"{name}.npz")
            print(f"  {name}: {times[name][0]:.1f} s")
        base = None if args.skip_mushroom else mushroom(store, args, work)
        first = next(iter(times))
        reference = greedy(work / f"{first}.npz", store)
        print(f"\nM={args.trees}, n_min={args.nmin}, {args.iters} iterations, "
              f"{len(reference):,} poker rows")
        print(f"{'fit':<26}{'seconds':>9}{'x MushroomRL':>14}{'peak MB':>9}"
              f"{'in fit s':>10}{'the rest s':>11}{f'same action as {first[8:]}':>24}")
        if base is not None:
            inside = sum(base["iter_fit_s"])
            print(f"{'MushroomRL FQI':<26}{base['total_s']:>9.1f}{1.0:>14.2f}"
                  f"{base['peak_mb']:>9.0f}{inside:>10.1f}{base['total_s'] - inside:>11.1f}")
        for name, (seconds, peak, inside) in times.items():
            ratio = f"{base['total_s'] / seconds:.2f}" if base else "-"
            same = float(np.mean(greedy(work / f"{name}.npz", store) == reference))
            print(f"{name:<26}{seconds:>9.1f}{ratio:>14}{peak:>9.0f}{inside:>10.1f}"
                  f"{seconds - inside:>11.1f}{same:>24.2%}")
        if args.skip_sette:
            return
        sette = sette_mezzo_store(args.sette_games, work)
        from batchrl.games.sette_mezzo.evaluate import evaluate_model

        print(f"\nsette e mezzo, exact evaluation (M={args.trees}, n_min={args.nmin}, "
              f"{args.iters} iterations)")
        print(f"{'fit':<26}{'seconds':>9}{'reward/game':>13}{'gap':>9}{'optimal action':>16}")
        for name, extra in MODES.items():
            model = work / f"sette {name}.npz"
            seconds, _, _ = fit(sette, params | extra, model)
            report = evaluate_model(model)
            print(f"{name:<26}{seconds:>9.1f}{report.expected_reward:>+13.4f}"
                  f"{report.regret:>9.4f}{report.agreement:>16.2%}")
        print(f"{'optimal':<26}{'':>9}{report.optimal_reward:>+13.4f}")


if __name__ == "__main__":
    main()
