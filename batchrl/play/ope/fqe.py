"""Fitted Q evaluation (Le, Voloshin & Yue 2019) on frozen extremely randomized trees:
Q of a fixed policy from a seat's logged steps, and its bootstrap.

One forest per move (FQI's per-action model), grown once on the rows that made the move
with their return-to-go as the target, then frozen: each row's leaf in each tree is
found once. An iteration sets each leaf's value to the (weighted) mean over its rows of
``r + gamma * Q(s', pi(s'))``, where ``s'`` is the seat's next step and ``pi(s')`` the
evaluated policy's move there; the forest's prediction is the mean of its trees' leaves.
Iterations go on until no value moves (the seat's steps are few: a fixed point in a few
dozen).

The bootstrap reweights episodes (Rubin's Bayesian bootstrap: an exponential weight per
episode, every leaf keeping its rows) and iterates again from the point estimate's
values: the interval holds the data's variance given the trees' partition, not the
partition's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
from numpy.typing import NDArray
from sklearn.ensemble import ExtraTreesRegressor

from batchrl.forests import fit
from batchrl.learners.fqi.inputs import return_to_go
from batchrl.play.ope.steps import SeatSteps

MAX_ITERATIONS = 200
TOLERANCE = 1e-5  # the largest change of Q, relative to the returns' scale, that stops


@dataclass
class _Forest:
    """One move's frozen forest. Rows of one state share every leaf, so the leaves are
    found once per distinct state (a card game's states repeat) and a row's weight and
    target are summed into its state's before they reach the leaves. Node indices carry
    their tree's offset into one vector of all the trees' nodes."""

    rows: NDArray[np.int64]  # the steps that made the move
    group: NDArray[np.int64]  # each row's distinct state
    leaves: NDArray[np.int64]  # (distinct states, trees)
    at: NDArray[np.int64]  # the steps where the policy plays the move
    at_group: NDArray[np.int64]
    at_leaves: NDArray[np.int64]  # (distinct states there, trees)
    nodes: int

    def values(self, target: NDArray[np.float64], weight: NDArray[np.float64]
               ) -> NDArray[np.float64]:
        """Each node's weighted mean of ``target`` over its rows (0 where none)."""
        distinct, trees = self.leaves.shape
        w = weight[self.rows]
        by_state = np.bincount(self.group, weights=w * target[self.rows], minlength=distinct)
        count = np.bincount(self.group, weights=w, minlength=distinct)
        flat = self.leaves.ravel()
        sums = np.bincount(flat, weights=np.repeat(by_state, trees), minlength=self.nodes)
        counts = np.bincount(flat, weights=np.repeat(count, trees), minlength=self.nodes)
        return np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)

    def logged(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        """The forest's prediction at each of its rows."""
        out: NDArray[np.float64] = values[self.leaves].mean(axis=1)[self.group]
        return out

    def played(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        """The forest's prediction where the policy plays the move."""
        out: NDArray[np.float64] = values[self.at_leaves].mean(axis=1)[self.at_group]
        return out


def _grown(model: ExtraTreesRegressor, states: NDArray[np.float32]
           ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Each state's distinct state, and the distinct states' leaves in every tree (node
    indices with their tree's offset)."""
    if not len(states):
        return np.zeros(0, np.int64), np.zeros((0, len(model.estimators_)), np.int64)
    distinct, group = np.unique(states, axis=0, return_inverse=True)
    offsets = np.cumsum([0, *(e.tree_.node_count for e in model.estimators_)])[:-1]
    return group.reshape(-1).astype(np.int64), model.apply(distinct).astype(np.int64) + offsets


class FrozenFQE:
    """Q of one policy over a seat's steps (`SeatSteps`), on per-move forests grown once.

    Args:
        steps: the seat's steps.
        policy_moves: the evaluated policy's move at each step's state.
        gamma: the discount.
        trees, nmin: each forest's size and the rows a node needs to be split.
        seed: the forests' randomness.
        jobs: threads that grow them.
    """

    def __init__(self, steps: SeatSteps, policy_moves: NDArray[np.int64], n_actions: int,
                 gamma: float = 1.0, trees: int = 50, nmin: int = 20, seed: int = 0,
                 jobs: int = -1) -> None:
        self.steps, self.gamma = steps, gamma
        self.policy_moves = np.asarray(policy_moves, dtype=np.int64)
        self.has_next = steps.nxt >= 0
        # each step's return to its chain's end: FQI's return-to-go over the chains (one
        # "player" a chain, its steps in order)
        self.returns = return_to_go(SimpleNamespace(  # type: ignore[arg-type]
            episode=steps.episode, player=np.zeros(len(steps), np.int8), step=steps.t,
            reward=steps.reward), gamma)
        self.scale = max(float(np.abs(self.returns).max(initial=0.0)), 1e-12)
        self.forests: list[_Forest | None] = []
        for a in range(n_actions):
            rows = np.flatnonzero(steps.action == a)
            if not len(rows):
                self.forests.append(None)
                continue
            model = ExtraTreesRegressor(n_estimators=trees, min_samples_split=nmin,
                                        max_features=1.0, n_jobs=jobs,
                                        random_state=(seed + a) % 2**32)
            fit(model, steps.state[rows], self.returns[rows])
            nodes = sum(e.tree_.node_count for e in model.estimators_)
            at = np.flatnonzero(self.policy_moves == a)
            self.forests.append(_Forest(rows, *_grown(model, steps.state[rows]), at,
                                        *_grown(model, steps.state[at]), nodes))
        self.unvalued = np.zeros(len(steps), dtype=bool)  # the policy's move was never made
        for a, forest in enumerate(self.forests):
            if forest is None:
                self.unvalued[self.policy_moves == a] = True
        self.iterations = 0

    def solve(self, weight: NDArray[np.float64] | None = None,
              start: NDArray[np.float64] | None = None
              ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Q at each step of its logged move and of the policy's, (steps,) each, with the
        episodes weighted by ``weight`` (per episode; None: all 1), iterated from the
        policy's values ``start`` (None: 0) to the fixed point. NaN where the policy's
        move was never made."""
        steps = self.steps
        w = np.ones(len(steps)) if weight is None else np.asarray(weight)[steps.episode]
        v = np.zeros(len(steps)) if start is None else np.where(np.isnan(start), 0.0, start)
        logged = np.zeros(len(steps))
        for it in range(1, MAX_ITERATIONS + 1):
            target = steps.reward.copy()
            target[self.has_next] += self.gamma * v[steps.nxt[self.has_next]]
            new = np.zeros(len(steps))
            for forest in self.forests:
                if forest is None:
                    continue
                values = forest.values(target, w)
                logged[forest.rows] = forest.logged(values)
                if len(forest.at):
                    new[forest.at] = forest.played(values)
            change = float(np.abs(new - v).max(initial=0.0))
            v = new
            if weight is None:  # the point estimate's count (a replicate's is its own)
                self.iterations = it
            if change <= TOLERANCE * self.scale:
                break
        return logged, np.where(self.unvalued, np.nan, v)

    def estimate(self, v: NDArray[np.float64], weight: NDArray[np.float64] | None = None
                 ) -> float:
        """The policy's value: each episode's reward before the seat's first step plus Q
        of its first step under the policy, averaged with ``weight``."""
        steps = self.steps
        per = steps.before + v[steps.first]
        w = np.ones(steps.episodes) if weight is None else weight
        return float(np.sum(w * per) / np.sum(w))

    def replicate(self, weight: NDArray[np.float64], start: NDArray[np.float64]) -> float:
        """The estimate with the episodes weighted by ``weight`` (a bootstrap draw),
        iterated from the point estimate's values ``start``."""
        return self.estimate(self.solve(weight, start)[1], weight)

