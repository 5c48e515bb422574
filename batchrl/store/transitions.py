"""What a store reads back (`Store.arrays`): its rows as numpy arrays (`Transitions`),
and the next states of a store whose next state follows, gathered from the states as
they are asked for (`FollowingStates`). Import from `batchrl.store`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray


class FollowingStates:
    """The next states of a "following" store's rows, gathered only when asked for: row
    ``i``'s is the state of row ``index[i]``, zeros where ``index[i]`` is -1.

    ``next_state[rows]`` gathers just those rows; ``np.asarray(next_state)`` all of them.
    FQI takes the next states of the rows that bootstrap, so no second matrix of states is
    ever held whole.

    >>> nxt = FollowingStates(np.array([[1.], [2.], [3.]], np.float32), np.array([1, -1, -1]))
    >>> nxt[np.array([True, True, False])].tolist(), np.asarray(nxt).ravel().tolist()
    ([[2.0], [0.0]], [2.0, 0.0, 0.0])
    """

    def __init__(self, state: NDArray[np.float32],
                 index: NDArray[np.int64] | Callable[[], NDArray[np.int64]]) -> None:
        """``index``: the rows, or how to find them on first use (`following_rows`)."""
        self.state = state
        self._index = index
        self.shape, self.dtype = state.shape, state.dtype
        self.ndim = state.ndim

    @property
    def index(self) -> NDArray[np.int64]:
        if callable(self._index):
            self._index = self._index()
        return self._index

    def __len__(self) -> int:
        return len(self.state)

    def __getitem__(self, rows: Any) -> NDArray[np.float32]:
        index = self.index[rows]
        if np.ndim(index) == 0:
            return self.state[index] if index >= 0 else np.zeros_like(self.state[0])
        out: NDArray[np.float32] = np.take(self.state, np.maximum(index, 0), axis=0)
        out[index < 0] = 0
        return out

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> NDArray[Any]:
        whole = self[slice(None)]
        return whole if dtype is None else whole.astype(dtype, copy=False)

    def rows(self, mask: NDArray[np.bool_], state: NDArray[np.float32]
             ) -> FollowingStates | NDArray[np.float32]:
        """Those of ``mask``'s rows, whose states are ``state``: still gathered on demand
        when every kept row's next row is kept too (whole episodes, whole players)."""
        index = self.index[mask]
        if not (index[index >= 0].size == 0 or mask[index[index >= 0]].all()):
            return self[mask]
        moved = np.cumsum(mask) - 1
        return FollowingStates(state, np.where(index >= 0, moved[np.maximum(index, 0)], -1))


@dataclass(frozen=True, eq=False)
class Transitions:
    """A store's rows as numpy arrays for fitted Q-iteration.

    ``state``/``next_state`` hold the selected features in store order; in a store whose
    next state follows (see `batchrl.store.schema`), ``next_state`` is a
    `FollowingStates`, gathered from ``state`` as it is indexed. ``episode`` holds int64
    codes into ``episode_ids``: split train/test on these, never on rows.
    """

    state: NDArray[np.float32]
    action: NDArray[np.int64]
    reward: NDArray[np.float64]
    next_state: NDArray[np.float32] | FollowingStates
    next_legal: NDArray[np.bool_]
    terminal: NDArray[np.bool_]
    truncated: NDArray[np.bool_]
    episode: NDArray[np.int64]
    episode_ids: NDArray[np.object_]
    step: NDArray[np.int32]
    player: NDArray[np.int8]
    feature_names: tuple[str, ...]
    action_names: tuple[str, ...]
    # the moves each state allows: the store's record (`StoreSchema.legal`), or as a
    # game's view reads them off the features (`batchrl.learning`; None: not known); and
    # the group of each row's episode (episodes dealt the same cards share one; None: each
    # episode its own), which a learner's held-out split keeps on one side
    legal: NDArray[np.bool_] | None = None
    group: NDArray[np.int64] | None = None

    def __len__(self) -> int:
        return len(self.action)

    def rows(self, mask: NDArray[np.bool_]) -> Transitions:
        """The rows where ``mask`` is true (``episode_ids`` and the names kept whole)."""
        per_row = ("state", "action", "reward", "next_legal", "terminal", "truncated",
                   "episode", "step", "player")
        kept = {name: getattr(self, name)[mask] for name in per_row}
        kept |= {name: value[mask] for name in ("legal", "group")
                 if (value := getattr(self, name)) is not None}
        nxt = self.next_state
        kept["next_state"] = (nxt.rows(mask, kept["state"]) if isinstance(nxt, FollowingStates)
                              else nxt[mask])
        return replace(self, **kept)
