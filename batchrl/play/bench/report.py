"""The benchmark's rows and how they are shown: each scored player's `Row`, the summary
over training seeds, the table and the plot (``bench.png``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray


@dataclass
class Row:
    """One scored player on one dataset (a learner's training seed, or a baseline)."""

    game: str
    dataset: str
    learner: str
    seed: int | None
    score: float
    score_ci: float
    normalized: float
    normalized_ci: float
    cpu_seconds: float
    unit: str
    games: int
    exact: bool
    settings: str = ""
    model: str = ""
    quick: bool = False
    seconds: float = 0.0  # training's wall-clock seconds
    # what the row was measured in (the dataset's recipe and size, the evaluation's
    # games, seed and opponents): a rerun reuses a row only where all of it is the same
    setup: str = ""
    scores: str = ""  # the file of its scores game by game
    opponents: str = ""  # whom it was scored against, comma-separated
    transfer: bool = False  # against the game's standard opponents, not the logs' own
    # the policy's exact exploitability where its game measures it (Leduc)
    exploitability: float | None = None
    # its value from the logs alone (bench --ope): per estimator [value, low, high,
    # normalized] (None where it has none), "unsupported" (the largest share of decisions
    # where the policy leaves the logs' support) and "ess" (the weights' smallest
    # effective sample size); None: not asked
    ope: dict[str, Any] | None = None

    def key(self) -> tuple[str, str, str, int | None, str, bool, str]:
        """What makes a row the same as one done before: its settings and its setup too,
        so a row is done again when a game's recommended settings or datasets change."""
        return (self.game, self.dataset, self.learner, self.seed, self.settings, self.quick,
                self.setup)


def json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def summary(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Per (game, dataset, learner, table): the mean over its seeds of the score and of
    the normalized score, and the normalized score's spread over the seeds (sd)."""
    groups: dict[tuple[str, str, str, bool], list[Row]] = {}
    for row in rows:
        groups.setdefault((row.game, row.dataset, row.learner, row.transfer), []).append(row)
    out = []
    for (g, d, learner, transfer), held in groups.items():
        norms = np.array([r.normalized for r in held])
        worth = [r.exploitability for r in held if r.exploitability is not None]
        out.append({"game": g, "dataset": d, "learner": learner, "seeds": len(held),
                    "transfer": transfer, "opponents": held[0].opponents,
                    "exploitability": float(np.mean(worth)) if worth else None,
                    "score": float(np.mean([r.score for r in held])),
                    "score_ci": float(np.mean([r.score_ci for r in held])),
                    "normalized": float(norms.mean()),
                    "normalized_sd": float(norms.std(ddof=1)) if len(held) > 1 else 0.0,
                    "normalized_ci": float(np.mean([r.normalized_ci for r in held])),
                    "cpu_seconds": float(np.mean([r.cpu_seconds for r in held])),
                    "unit": held[0].unit, "exact": all(r.exact for r in held)})
    return out


def table(rows: Sequence[Row], paired: Sequence[Mapping[str, Any]] = ()) -> str:
    """The summary as text: one line per game, dataset and player, each dataset scored
    against its logs' own opponents; then the transfer table, where a game's standard
    opponents are others."""
    lines = _table([r for r in rows if not r.transfer],
                   [p for p in paired if not p.get("transfer")])
    if transfer := [r for r in rows if r.transfer]:
        lines += ["", "transfer: the same policies against each game's standard opponents "
                      "(not the logs' own)",
                  *_table(transfer, [p for p in paired if p.get("transfer")])]
    units_seen = sorted({f"{r.game}: {r.unit}" for r in rows})
    lines.append("scores in " + "; ".join(units_seen) + "; normalized: 0 = random, 100 = "
                 "the reference (the row after random), each against the opponents named "
                 "after the dataset; a learner's score and CI are its "
                 "seeds' means, sd their spread over the seeds; its difference from the "
                 "first learner is on the same deals, its seeds' scores averaged; expl.: "
                 "the policy's exact exploitability, where the game measures it")
    return "\n".join([*lines, *ope_table(rows)])


def _table(rows: Sequence[Row], paired: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = [f"{'game':<12} {'dataset (vs)':<22} {'player':<22} {'seeds':>5} "
             f"{'score ± 95% CI':>22} {'normalized ± CI':>18} {'sd':>6} {'CPU s':>8}"]
    against = {(p["game"], p["dataset"], p["learner"]): p for p in paired}
    for s in summary(rows):
        # an exact score (a solved game's value) has no interval to show
        raw = f"{s['score']:+.4f} " + ("exact" if s["exact"] else f"± {s['score_ci']:.4f}")
        norm = f"{s['normalized']:6.1f} " + ("exact" if s["exact"] else
                                             f"± {s['normalized_ci']:.1f}")
        cpu = f"{s['cpu_seconds']:.1f}" if s["cpu_seconds"] else ""
        sd = f"{s['normalized_sd']:.1f}" if s["seeds"] > 1 else ""
        dataset = f"{s['dataset']} ({s['opponents'] or 'alone'})"
        line = (f"{s['game']:<12} {dataset[:22]:<22} {s['learner'][:22]:<22} "
                f"{s['seeds']:>5} {raw:>22} {norm:>18} {sd:>6} {cpu:>8}")
        if s["exploitability"] is not None:
            line += f"  expl. {s['exploitability']:.4f}"
        if (p := against.get((s["game"], s["dataset"], s["learner"]))) is not None:
            line += (f"  vs {p['versus']}: {p['difference']:+.4f} ± "
                     f"{p['difference_ci']:.4f}")
        lines.append(line)
    return lines


REGRET_POINTS = 5.0  # regret@1 this small or smaller: the estimates chose well


def ope_summary(rows: Sequence[Row]) -> dict[str, Any]:
    """How well the values from the logs alone (``bench --ope``) rank and size the
    measured scores (DOPE's yardsticks, Fu et al. 2021), per estimator: on each dataset
    over its learners (each the mean over its seeds, normalized points), Spearman's rank
    correlation, regret@1 (the best learner's measured score less that of the one the
    estimates put first) and the mean absolute error, on the learners every estimator
    valued (a dataset with fewer than two is left out); pooled, the rank correlation and
    error over every dataset's learners and the share of datasets whose regret@1 is
    at most `REGRET_POINTS`. {} where no row has values from the logs."""
    held = [r for r in rows if r.ope is not None and r.seed is not None and not r.transfer]
    if not held:
        return {}
    estimators = list(dict.fromkeys(k for r in held for k in (r.ope or {})["estimates"]))
    per: dict[tuple[str, str], dict[str, list[tuple[float, float]]]] = {}
    for (game, dataset, _), group in _groups(held).items():
        measured = float(np.mean([r.normalized for r in group]))
        values = {name: [(r.ope or {})["estimates"].get(name, [None] * 4)[3] for r in group]
                  for name in estimators}
        if any(v is None for vs in values.values() for v in vs):
            continue  # each estimator is compared on the learners every one valued
        for name in estimators:
            per.setdefault((game, dataset), {}).setdefault(name, []).append(
                (measured, float(np.mean(values[name]))))
    out: dict[str, Any] = {"datasets": [], "pooled": {}}
    pooled: dict[str, list[tuple[float, float]]] = {}
    regrets: dict[str, list[float]] = {}
    for (game, dataset), by_name in per.items():
        entry: dict[str, Any] = {"game": game, "dataset": dataset}
        for name, pairs in by_name.items():
            if len(pairs) < 2:  # nothing to choose between: no regret to count
                continue
            truth, guess = np.array(pairs).T
            regret = float(truth.max() - truth[int(np.argmax(guess))])
            entry[name] = {"learners": len(pairs), "rank_correlation": _spearman(truth, guess),
                           "regret_at_1": regret,
                           "mean_abs_error": float(np.mean(np.abs(guess - truth)))}
            pooled.setdefault(name, []).extend(pairs)
            regrets.setdefault(name, []).append(regret)
        if len(entry) > 2:
            out["datasets"].append(entry)
    if not pooled:
        return {}
    for name, pairs in pooled.items():
        truth, guess = np.array(pairs).T
        out["pooled"][name] = {
            "pairs": len(pairs), "rank_correlation": _spearman(truth, guess),
            "mean_abs_error": float(np.mean(np.abs(guess - truth))),
            "regret_within": float(np.mean(np.array(regrets[name]) <= REGRET_POINTS))}
    return out


def _groups(rows: Sequence[Row]) -> dict[tuple[str, str, str], list[Row]]:
    out: dict[tuple[str, str, str], list[Row]] = {}
    for r in rows:
        out.setdefault((r.game, r.dataset, r.learner), []).append(r)
    return out


def _spearman(a: NDArray[np.float64], b: NDArray[np.float64]) -> float | None:
    """Spearman's rank correlation (ties at their mean rank); None from fewer than 3
    points or a constant side."""
    if len(a) < 3:
        return None
    ra, rb = (pd.Series(x).rank().to_numpy() for x in (a, b))
    if ra.std() == 0 or rb.std() == 0:
        return None
    return float(np.corrcoef(ra, rb)[0, 1])


def ope_table(rows: Sequence[Row]) -> list[str]:
    """`ope_summary` as text lines ([] where no row has values from the logs)."""
    got = ope_summary(rows)
    if not got:
        return []

    def shown(x: float | None, form: str) -> str:
        return "" if x is None else format(x, form)

    lines = ["", "values from the logs alone (--ope), against the measured scores, "
                 "normalized points: rank correlation, regret@1, mean absolute error",
             f"{'game':<12} {'dataset':<10} {'estimator':<9} {'learners':>8} {'rank corr':>9} "
             f"{'regret@1':>9} {'abs error':>9}"]
    for entry in got["datasets"]:
        for name, m in entry.items():
            if name in ("game", "dataset"):
                continue
            lines.append(f"{entry['game']:<12} {entry['dataset']:<10} {name:<9} "
                         f"{m['learners']:>8} {shown(m['rank_correlation'], '.2f'):>9} "
                         f"{m['regret_at_1']:>9.1f} {m['mean_abs_error']:>9.1f}")
    for name, m in got["pooled"].items():
        lines.append(f"{'pooled':<12} {'':<10} {name:<9} {m['pairs']:>8} "
                     f"{shown(m['rank_correlation'], '.2f'):>9} "
                     f"{m['regret_within']:>8.0%}* {m['mean_abs_error']:>9.1f}")
    lines.append(f"* pooled regret@1: the share of datasets where it is at most "
                 f"{REGRET_POINTS:g} points")
    return lines


def plot(rows: Sequence[Row], path: Path) -> str | None:
    """The normalized score of each learner on each dataset (mean over seeds, the bars
    their 95% interval); a note instead where matplotlib is not installed."""
    try:
        import matplotlib  # matplotlib: optional, loaded only to draw

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # after use("Agg"): no display needed
    except ImportError:
        return "no plot: pip install matplotlib to draw bench.png"
    learned = summary([r for r in rows if r.seed is not None and not r.transfer])
    if not learned:
        return None
    datasets = list(dict.fromkeys((s["game"], s["dataset"]) for s in learned))
    learners = list(dict.fromkeys(s["learner"] for s in learned))
    width = 0.8 / len(learners)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(datasets) + 2), 4))
    for j, learner in enumerate(learners):
        xs, ys, es = [], [], []
        for i, d in enumerate(datasets):
            s = next((s for s in learned if (s["game"], s["dataset"]) == d
                      and s["learner"] == learner), None)
            if s is not None:
                xs.append(i + (j - (len(learners) - 1) / 2) * width)
                ys.append(s["normalized"])
                es.append(s["normalized_ci"])
        ax.bar(xs, ys, width, yerr=es, label=learner, capsize=2)
    ax.axhline(0, color="grey", lw=0.8)
    ax.axhline(100, color="grey", lw=0.8, ls="--")
    ax.set_xticks(range(len(datasets)), [f"{g}\n{d}" for g, d in datasets], fontsize=8)
    ax.set_ylabel("normalized score (0 random, 100 reference)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}.png")
    fig.savefig(tmp, dpi=120)
    plt.close(fig)
    os.replace(tmp, path)
    return None
