"""Importance weighting of a seat's logged steps toward a deterministic policy:
per-decision weighted importance sampling (Precup, Sutton & Singh 2000) and weighted
doubly robust (Thomas & Brunskill 2016; Jiang & Li 2016), each under any episode
weights (the bootstrap's).

A step's ratio is ``1[a = pi(s)] / mu(a | s)``, ``mu`` the behaviour model's propensity
of the logged move, floored at ``clip`` (a ratio is at most 1 / clip); an episode's
weight at step t is the product of its ratios up to t. The episodes are laid out as an
(episodes, horizon) table; an episode that ended keeps its last weight and adds nothing
after (the usual padding), so each step's weights are normalized over every episode.

    WIS = mean(before) + sum_t gamma^t sum_e w[e,t] r[e,t] / sum_e w[e,t]
    WDR = mean(before + V(s_e0)) + sum_t gamma^t sum_e w[e,t] (r + gamma V(s') - Q(s, a))[e,t]
                                               / sum_e w[e,t]

with ``Q`` and ``V`` fitted Q evaluation's (`batchrl.play.ope.fqe`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from batchrl.play.ope.steps import SeatSteps


@dataclass(frozen=True, eq=False)
class Weighted:
    """A seat's steps as (episodes, horizon) tables: cumulative weights ``w``, rewards
    ``r`` and, for doubly robust, the correction ``r + gamma V(s') - Q(s, a)``."""

    w: NDArray[np.float64]
    r: NDArray[np.float64]
    before: NDArray[np.float64]
    discount: NDArray[np.float64]
    correction: NDArray[np.float64] | None = None
    start: NDArray[np.float64] | None = None  # V of each episode's first step

    def wis(self, weight: NDArray[np.float64] | None = None) -> float:
        """Per-decision weighted importance sampling, episodes weighted by ``weight``; NaN
        where no episode follows the policy throughout (its weights say nothing)."""
        if not self.w.size or not (self.w[:, -1] > 0).any():
            return float("nan")
        return self._mean(self.before, weight) + self._weighted(self.r, weight)

    def dr(self, weight: NDArray[np.float64] | None = None) -> float:
        """Weighted doubly robust (needs ``correction`` and ``start``)."""
        if self.correction is None or self.start is None:
            raise ValueError("doubly robust needs a Q-function's values")
        return self._mean(self.before + self.start, weight) + \
            self._weighted(self.correction, weight)

    def ess(self) -> float:
        """Kish's effective sample size of the episodes' final weights."""
        final = self.w[:, -1] if self.w.shape[1] else np.ones(len(self.w))
        total = float(final.sum())
        return total * total / float(np.sum(final * final)) if total > 0 else 0.0

    def _mean(self, x: NDArray[np.float64], weight: NDArray[np.float64] | None) -> float:
        return float(np.average(x, weights=weight))

    def _weighted(self, table: NDArray[np.float64], weight: NDArray[np.float64] | None
                  ) -> float:
        c = np.ones(len(self.w)) if weight is None else weight
        num = c @ (self.w * table)
        den = c @ self.w
        terms = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
        return float(self.discount @ terms)


def ratios(steps: SeatSteps, policy_moves: NDArray[np.int64],
           propensity: NDArray[np.float64], clip: float) -> NDArray[np.float64]:
    """Each step's importance ratio toward the deterministic policy."""
    follows = steps.action == policy_moves
    return np.where(follows, 1.0 / np.maximum(propensity, clip), 0.0)


def weighted(steps: SeatSteps, ratio: NDArray[np.float64], gamma: float = 1.0,
             logged_q: NDArray[np.float64] | None = None,
             policy_v: NDArray[np.float64] | None = None) -> Weighted:
    """The tables of `Weighted` for ``steps`` with the step ``ratio``; with FQE's Q of
    each logged move and V (Q of the policy's move) at each step, doubly robust's too."""
    shape = (steps.episodes, max(steps.horizon, 1))
    w = np.zeros(shape)
    w[steps.episode, steps.t] = ratio
    # padded: an episode that ended keeps its last weight
    w = np.cumprod(np.where(_taken(steps, shape), w, 1.0), axis=1, dtype=np.float64)
    r = np.zeros(shape)
    r[steps.episode, steps.t] = steps.reward
    discount = gamma ** np.arange(shape[1], dtype=np.float64)
    correction = start = None
    if logged_q is not None and policy_v is not None:
        v = np.where(np.isnan(policy_v), 0.0, policy_v)
        after = np.zeros(len(steps))
        has = steps.nxt >= 0
        after[has] = v[steps.nxt[has]]
        correction = np.zeros(shape)
        correction[steps.episode, steps.t] = steps.reward + gamma * after - logged_q
        start = v[steps.first]
    return Weighted(w, r, steps.before, discount, correction, start)


def _taken(steps: SeatSteps, shape: tuple[int, int]) -> NDArray[np.bool_]:
    """Where an episode has a step (False: padding after its end)."""
    out = np.zeros(shape, dtype=bool)
    out[steps.episode, steps.t] = True
    return out
