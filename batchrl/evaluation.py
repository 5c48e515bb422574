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

from dataclasses import dataclass
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
