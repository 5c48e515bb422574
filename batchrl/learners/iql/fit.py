"""Expectile fitted Q-iteration on frozen extremely randomized trees: implicit Q-learning
(Kostrikov, Nair & Levine 2022) with trees in place of networks.

No target ever takes a max over moves: Q(s, a) regresses ``r + gamma V(s')`` on the
logged (state, action) pairs, and V(s) is the ``tau``-expectile of Q(s, a) over the
moves the logs made in s. At ``tau`` 0.5, V is the logged players' own value (SARSA);
as ``tau`` goes to 1 it goes to the best logged move's, and Q to the optimal Q within
the logs' support, without valuing a move the logs never tried.

Both forests are grown once on each row's return-to-go and frozen, as FQI's fast mode
(`batchrl.learners.fqi.leaves`): an iteration is a weighted bincount for Q's leaves and
a few reweighted ones for V's expectiles (the expectile of the rows in a leaf is the
fixed point of their asymmetrically weighted mean, warm-started from the last
iteration's).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from batchrl.episodes import grouping
from batchrl.forests import fit
from batchrl.learners.fqi.inputs import return_to_go
from batchrl.learners.fqi.leaves import leaf_means, leaves_of, mean_values
from batchrl.store import Transitions

if TYPE_CHECKING:
    from sklearn.ensemble import ExtraTreesRegressor

# reweighting rounds of a leaf's expectile per iteration, from the last iteration's
EXPECTILE_ROUNDS = 6


@dataclass(frozen=True, slots=True)
class Step:
    """One iteration's diagnostics over the logged rows."""

    iteration: int
    mean_q: float  # mean Q(s, a) of the logged moves
    mean_v: float  # mean V(s)
    mean_abs_advantage: float  # mean |Q(s, a) - V(s)|
    change: float  # RMS change of Q(s, a) since the last iteration
    seconds: float


@dataclass
class Values:
    """What the iterations leave: Q of each logged move and V of its state, row by row."""

    q: NDArray[np.float64]
    v: NDArray[np.float64]
    history: list[Step]


def _forest(trees: int, nmin: int, k: int | None, seed: int, jobs: int) -> ExtraTreesRegressor:
    # scikit-learn loads in seconds: only when a forest is made
    from sklearn.ensemble import ExtraTreesRegressor

    return ExtraTreesRegressor(n_estimators=trees, min_samples_split=nmin,
                               max_features=1.0 if k is None else k, n_jobs=jobs,
                               random_state=seed)


def _offsets(model: ExtraTreesRegressor) -> NDArray[np.int64]:
    return np.cumsum([0, *(e.tree_.node_count for e in model.estimators_)]).astype(np.int64)


def leaf_expectiles(leaves: NDArray[np.integer[Any]], offsets: NDArray[np.int64],
                    target: NDArray[np.float64], tau: float, start: NDArray[np.float64],
                    rounds: int = EXPECTILE_ROUNDS) -> NDArray[np.float64]:
    """The ``tau``-expectile of the targets in each leaf, tree by tree: the value m where
    ``tau`` times the rows above it weigh as much as ``1 - tau`` times the rows below
    (a weighted mean, reweighted ``rounds`` times from ``start``).

    >>> leaves = np.zeros((4, 1), np.uint16)
    >>> got = leaf_expectiles(leaves, np.array([0, 1]), np.array([0., 0., 0., 4.]), 0.9,
    ...                       np.zeros(1), rounds=30)
    >>> round(float(got[0]), 4)  # 0.9 (4 - m) = 0.1 * 3m
    3.0
    """
    values = start.copy()
    for t in range(leaves.shape[1]):
        lo, hi = int(offsets[t]), int(offsets[t + 1])
        local = leaves[:, t]
        m = values[lo:hi]
        for _ in range(rounds):
            w = np.where(target > m[local], tau, 1.0 - tau)
            weight = np.bincount(local, weights=w, minlength=hi - lo)
            total = np.bincount(local, weights=w * target, minlength=hi - lo)
            m = np.divide(total, weight, out=np.zeros(hi - lo), where=weight > 0)
        values[lo:hi] = m
    return values


def iterate(rows: Transitions, x_q: NDArray[np.float32], *, trees: int, nmin: int,
            k: int | None, iters: int, gamma: float, tau: float, seed: int, jobs: int,
            progress: Callable[[str, int, int], None] | None = None) -> Iterator[Step | Values]:
    """Grow the two forests, then run ``iters`` iterations, yielding each one's `Step`;
    last, the `Values` of every row."""
    say = progress or (lambda *_: None)
    has_next = ~rows.terminal & rows.next_legal.any(axis=1)
    g = return_to_go(rows, gamma, grouping(rows))
    say("forests grown", 0, 2)
    q_model = fit(_forest(trees, nmin, None if k is None else min(k, x_q.shape[1]),
                              seed, jobs), x_q, g)
    q_off = _offsets(q_model)
    q_leaves = leaves_of(q_model, x_q, q_off)
    del q_model
    say("forests grown", 1, 2)
    v_model = fit(_forest(trees, nmin,
                              None if k is None else min(k, rows.state.shape[1]), seed + 1,
                              jobs), rows.state, g)
    v_off = _offsets(v_model)
    v_leaves = leaves_of(v_model, rows.state, v_off)
    v_next = leaves_of(v_model, np.asarray(rows.next_state[has_next], dtype=np.float32),
                       v_off)
    del v_model
    say("forests grown", 2, 2)
    v_values = leaf_means(v_leaves, v_off, g)  # V_0: the logged players' returns
    q_sa = g
    history: list[Step] = []
    for it in range(iters):
        began = time.perf_counter()
        target = rows.reward.astype(np.float64).copy()
        target[has_next] += gamma * mean_values(v_values, v_next, v_off)
        q_values = leaf_means(q_leaves, q_off, target)
        q_new = mean_values(q_values, q_leaves, q_off)
        v_values = leaf_expectiles(v_leaves, v_off, q_new, tau, v_values)
        v_s = mean_values(v_values, v_leaves, v_off)
        step = Step(it + 1, float(q_new.mean()), float(v_s.mean()),
                    float(np.abs(q_new - v_s).mean()),
                    float(np.sqrt(np.mean((q_new - q_sa) ** 2))), time.perf_counter() - began)
        q_sa = q_new
        history.append(step)
        say("iterations", it + 1, iters)
        yield step
    yield Values(q_sa, mean_values(v_values, v_leaves, v_off), history)


def awr_weights(advantage: NDArray[np.float64], beta: float, clip: float
                ) -> NDArray[np.float64]:
    """Advantage-weighted regression's weights: ``exp(A / (beta * sd(A)))``, capped at
    ``clip`` (the temperature in units of the advantages' spread, so one setting suits
    every game's rewards).

    >>> awr_weights(np.array([-1., 0., 1.]), beta=1.0, clip=2.0).round(3).tolist()
    [0.294, 1.0, 2.0]
    """
    spread = float(advantage.std())
    if spread == 0:
        return np.ones_like(advantage)
    z = advantage / (beta * spread)
    cap = np.log(clip)
    weights: NDArray[np.float64] = np.where(z >= cap, clip, np.exp(np.minimum(z, cap)))
    return weights
