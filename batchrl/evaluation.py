"""Estimates with confidence intervals, for every game's evaluation.

A mean over thousands of independent hands is close to normal, so the interval
is the normal one: ``mean ± z * sd / sqrt(n)`` with z = 1.96 for 95%. Duplicate
play makes the two hands of one deal dependent; their sum is one sample
(``per_unit``), and the mean per hand is that sample's mean over two.

>>> e = mean_ci([1.0, 2.0, 3.0, 4.0])
>>> round(e.mean, 3), round(e.half_width, 3), e.n
(2.5, 1.265, 4)
>>> e.low < 2.5 < e.high
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import ArrayLike


@dataclass(frozen=True, slots=True)
class Estimate:
    """A mean with its two-sided confidence interval ``mean ± half_width``."""

    mean: float
    half_width: float
    sd: float
    n: int
    confidence: float = 0.95

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width

    def excludes(self, value: float = 0.0) -> bool:
        return not self.low <= value <= self.high

    def scaled(self, factor: float) -> Estimate:
        return Estimate(self.mean * factor, self.half_width * abs(factor), self.sd * abs(factor),
                        self.n, self.confidence)

    def as_dict(self) -> dict[str, Any]:
        return {"mean": self.mean, "half_width": self.half_width, "low": self.low,
                "high": self.high, "sd": self.sd, "n": self.n, "confidence": self.confidence}

    def __str__(self) -> str:
        return f"{self.mean:+.3f} ± {self.half_width:.3f}"


def mean_ci(values: ArrayLike, confidence: float = 0.95, per_unit: int = 1) -> Estimate:
    """The mean of ``values`` and its confidence interval.

    With ``per_unit`` k > 1, consecutive groups of k values are one sample (the two
    hands of a duplicate deal): the estimate is of the mean per value.
    """
    x = np.asarray(values, dtype=np.float64).ravel()
    if per_unit > 1:
        if len(x) % per_unit:
            raise ValueError(f"{len(x)} values do not split into units of {per_unit}")
        x = x.reshape(-1, per_unit).sum(axis=1) / per_unit
    n = len(x)
    if n == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0, confidence)
    sd = float(x.std(ddof=1)) if n > 1 else float("nan")
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    return Estimate(float(x.mean()), z * sd / float(np.sqrt(n)), sd, n, confidence)


def draw_intervals(unit: str, intervals: Sequence[Any], title: str, path: Path) -> Path:
    """A report's figures with their 95% intervals (``Interval`` s: label, mean, low,
    high) as a chart at ``path`` (PNG, SVG or PDF by its suffix): a point each, its
    interval as whiskers (none for an exact figure). Needs matplotlib."""
    from matplotlib.figure import Figure  # no pyplot: a notebook's backend stays its own

    labels = [i.label if len(i.label) <= 40 else "…" + i.label[-39:] for i in intervals]
    means = [i.mean for i in intervals]
    below = [i.mean - i.low for i in intervals]
    above = [i.high - i.mean for i in intervals]
    fig = Figure(figsize=(8, 0.6 * len(intervals) + 1.6))
    ax = fig.subplots()
    ys = list(range(len(intervals)))[::-1]
    ax.errorbar(means, ys, xerr=[below, above], fmt="o", capsize=4)
    for y, i in zip(ys, intervals, strict=True):
        shown = f"{i.mean:.4g}" if i.low == i.high else \
            f"{i.mean:.4g} [{i.low:.4g}, {i.high:.4g}]"
        ax.annotate(shown, (i.mean, y), textcoords="offset points", xytext=(0, 8),
                    ha="center", fontsize=8)
    ax.set_yticks(ys, labels)
    ax.set_ylim(-0.8, len(intervals) - 0.2)
    ax.set(xlabel=f"{unit} (95% interval)", title=title)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path
