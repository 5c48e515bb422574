"""What FQI's regressors learn from, laid out once per fit: each model's rows and inputs
(the state, with the action as a last column for the joint model), the legal next
states each model scores, the probe rows the diagnostics are measured on; and each
row's return-to-go, fast mode's first target (`batchrl.learners.fqi.iterations`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.store import Transitions

# Rows on which each iteration's diagnostics are measured: predicting every training
# row would add a sixth to a full iteration's time, for a number a sample gives as well.
PROBE_ROWS = 20_000


class Inputs:
    """The regression inputs: per model the rows it learns from; for the rows that
    bootstrap, where their next states are and which actions are legal there; and a
    fixed sample of rows (the probe) on which the diagnostics are measured.

    Memory is the data's, once: a per-action model's inputs are gathered from the state
    matrix when it is fitted and dropped after, and next states are gathered per action
    when their leaves or values are needed (a "following" store's are rows of the same
    matrix). Only the joint model keeps a second matrix, the states with the action as a
    last column, which scikit-learn needs in one piece."""

    def __init__(self, data: Transitions, n_actions: int, per_action: bool,
                 seed: int | None) -> None:
        self.n = len(data)
        self.n_actions = n_actions
        self.per_action = per_action
        self.has_next = ~data.terminal & data.next_legal.any(axis=1)
        self.next_legal = data.next_legal[self.has_next]
        self.n_next = int(self.has_next.sum())
        self._state = data.state
        self.n_inputs = data.state.shape[1] + (0 if per_action else 1)
        self._next_states = data.next_state  # gathered from on demand
        self._next_at = np.flatnonzero(self.has_next)
        # Q is only ever needed where the action is legal: predict nothing else.
        self.next_rows = [np.flatnonzero(self.next_legal[:, a]) for a in range(n_actions)]
        if per_action:
            self.rows = [np.flatnonzero(data.action == a) for a in range(n_actions)]
            self._joint: NDArray[np.float32] | None = None
        else:
            self.rows = [np.arange(self.n)]
            self._joint = with_action(data.state, data.action)
        rng = np.random.default_rng(seed)
        self.probe = np.sort(rng.choice(self.n, min(self.n, PROBE_ROWS), replace=False))
        in_probe = np.zeros(self.n, dtype=bool)
        in_probe[self.probe] = True
        position = np.cumsum(in_probe) - 1  # a probe row's index in self.probe
        self.probe_local = [np.flatnonzero(in_probe[r]) for r in self.rows]
        self.probe_of = [position[r[local]] for r, local in zip(self.rows, self.probe_local,
                                                                 strict=True)]

    def x(self, model: int) -> NDArray[np.float32]:
        """``model``'s regression inputs (per action: gathered now, a copy to drop after)."""
        if self._joint is not None:
            return self._joint
        return self._state[self.rows[model]]

    def probe_x(self, model: int) -> NDArray[np.float32]:
        """The inputs of ``model``'s probe rows."""
        if self._joint is not None:
            return self._joint[self.probe_local[model]]
        return self._state[self.rows[model][self.probe_local[model]]]

    def next_inputs(self, model: int) -> Iterator[tuple[int, NDArray[np.float32]]]:
        """(action, inputs) pairs that ``model`` predicts for the legal next states, each
        gathered when it is reached."""
        actions = [model] if self.per_action else range(self.n_actions)
        for a in actions:
            states = np.asarray(self._next_states[self._next_at[self.next_rows[a]]],
                                dtype=np.float32)
            if self.per_action:
                yield a, states
            else:
                yield a, with_action(states, np.full(len(states), a))


def with_action(states: NDArray[np.float32], actions: NDArray[Any]) -> NDArray[np.float32]:
    """The joint model's inputs: each state with its action as a last column."""
    return np.column_stack([states, actions.astype(np.float32)]).astype(np.float32)


def return_to_go(data: Transitions, gamma: float = 1.0, by: str = "seat"
                 ) -> NDArray[np.float64]:
    """Each row's discounted sum of its own and its player's later rewards in the episode
    (``by="seat"``), or of every later reward in the episode (``by="episode"``: where a
    row's next state is the next mover's, as in Hanabi's team episodes; see
    `batchrl.episodes.grouping`).

    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> rows = SimpleNamespace(episode=np.array([0, 0, 0, 1]), player=np.array([0, 1, 0, 0]),
    ...                        step=np.array([0, 0, 1, 0]), reward=np.array([-1., 5., 3., 2.]))
    >>> return_to_go(rows).tolist()  # type: ignore[arg-type]
    [2.0, 5.0, 3.0, 2.0]
    >>> return_to_go(rows, by="episode").tolist()  # type: ignore[arg-type]
    [7.0, 8.0, 3.0, 2.0]
    """
    if by not in ("seat", "episode"):
        raise ValueError(f"by {by!r}: seat or episode")
    if by == "seat":
        order = np.lexsort((data.step, data.player, data.episode))
        ep, pl = data.episode[order], data.player[order]
    else:  # the store keeps an episode's rows in the order they were played
        order = np.argsort(data.episode, kind="stable")
        ep = data.episode[order]
        pl = np.zeros_like(ep)
    starts = np.ones(len(order), dtype=bool)
    starts[1:] = (ep[1:] != ep[:-1]) | (pl[1:] != pl[:-1])
    run = np.cumsum(starts) - 1
    ends = np.append(np.flatnonzero(starts)[1:], len(order)) - 1
    from_end = ends[run] - np.arange(len(order))
    reward = data.reward[order].astype(np.float64)
    acc = reward.copy()
    # One vectorized pass per depth: the rows d steps before their run's end.
    for d in range(1, int(from_end.max(initial=0)) + 1):
        rows = np.flatnonzero(from_end == d)
        acc[rows] = reward[rows] + gamma * acc[rows + 1]
    out = np.empty(len(order))
    out[order] = acc
    return out

