"""A store's rows as episodes, as the field's offline-RL libraries want them
(`batchrl.export` writes them): which rows make an episode, in what order, and the
legal mask of each observation.

Episodes
--------
A store row is one decision of one player. An exported episode is the decisions of one
seat in one store episode (``by="seat"``), in the order of their ``step``; or, where a
store's next state is the next *mover's* state (Hanabi's team episodes), all the decisions
of one store episode in the order the store keeps them (``by="episode"``). ``by="auto"``
(the default) takes the seat's episodes when every row's next state is the same seat's
next decision, the store's episodes when every row's next state is the next row's state,
and the seat's otherwise (the metadata then counts the steps whose next observation is
not their row's next state). An episode of T decisions has T + 1 observations: the T
states and the last row's ``next_state`` (zeros after a terminal decision, as the store
keeps it); T actions and rewards; the terminations and truncations the rows record.

The legal mask
--------------
A store made by this batchrl records each row's own legal actions (``legal_<action>``,
`batchrl.store.StoreSchema.legal`): every observation's mask is its row's, the first
decision of each seat included, and the last observation's is the last row's
``next_legal``. An older store records only the legal actions of each row's *next*
state (``next_legal``); there, the mask of an observation is the ``next_legal`` of the
row whose next state it is:
the previous decision of the episode (checked: that row's ``next_state`` equals this
state exactly, the row is not terminal, and the action taken here is in its mask), or,
failing that, the previous row of the store episode (checked the same way: how a Hanabi
seat's decisions find theirs, in the partner's rows before them). The last
observation's mask is the last row's ``next_legal`` (all False after a terminal one).
An observation no row leads to (the first decision of a seat, in hold'em, Tressette and
sette e mezzo) has no recorded mask, and the game cannot give it: ``legal_mask``
needs the game's state, and the store holds only its features. Its mask is written as
all ones with ``legal_known`` False, and the metadata says so (``legal_mask_unknown``)
and counts them (``legal_unknown_steps``); the action taken there was legal, the others
are unknown.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.store import Transitions

GROUPINGS = ("auto", "seat", "episode")
# rows compared (or written, for RLlib) at a time: bounded memory on big stores
CHUNK_ROWS = 65_536


class ExportError(Exception):
    """An export that cannot be done as asked; ``option`` names the option at fault."""

    def __init__(self, message: str, option: str | None = None) -> None:
        super().__init__(message)
        self.option = option


@dataclass(frozen=True, eq=False)
class Episodes:
    """A store's rows as episodes (see the module doc): ``rows`` are the store rows in
    export order, episode after episode; episode ``i`` is ``rows[starts[i]:starts[i+1]]``.
    ``legal_mask``/``legal_known`` follow ``rows``: the mask of each step's observation."""

    data: Transitions
    by: str
    rows: NDArray[np.int64]
    starts: NDArray[np.int64]
    legal_mask: NDArray[np.bool_]
    legal_known: NDArray[np.bool_]
    # steps (not the last of their episode) whose next observation is not their row's
    # next_state: 0 when the episodes follow the store's own next states
    mismatched: int
    mask_sources: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.starts) - 1

    @property
    def steps(self) -> int:
        return len(self.rows)

    @property
    def lengths(self) -> NDArray[np.int64]:
        return np.diff(self.starts)

    @property
    def last_rows(self) -> NDArray[np.int64]:
        return self.rows[self.starts[1:] - 1]

    @property
    def episode_ids(self) -> NDArray[np.str_]:
        first = self.rows[self.starts[:-1]]
        return np.asarray(self.data.episode_ids[self.data.episode[first]], dtype=str)

    @property
    def players(self) -> NDArray[np.int16]:
        """Each episode's seat; -1 for a store episode (``by="episode"``)."""
        if self.by == "episode":
            return np.full(len(self), -1, np.int16)
        return self.data.player[self.rows[self.starts[:-1]]].astype(np.int16)

    def final_observations(self, lo: int = 0, hi: int | None = None) -> NDArray[np.float32]:
        """The last observation of episodes ``lo:hi``: their last row's next state."""
        return _take(self.data.next_state, self.last_rows[lo:hi])

    def final_legal(self, lo: int = 0, hi: int | None = None) -> NDArray[np.bool_]:
        return self.data.next_legal[self.last_rows[lo:hi]]

    def step_arrays(self, lo: int, hi: int, new_obs: bool = True) -> dict[str, NDArray[Any]]:
        """Steps ``starts[lo]:starts[hi]`` (whole episodes ``lo:hi``) as arrays: ``obs``,
        ``new_obs`` (unless not asked for), ``actions``, ``rewards``, ``terminals``, ``truncated``,
        ``legal_mask``, ``next_legal_mask``, ``legal_known``, ``t`` (index in the
        episode), ``last`` (the episode's last step)."""
        a, b = int(self.starts[lo]), int(self.starts[hi])
        rows, d = self.rows[a:b], self.data
        obs = d.state[rows]
        mask = self.legal_mask[a:b]
        ends = self.starts[lo + 1:hi + 1] - a - 1
        last = np.zeros(b - a, bool)
        last[ends] = True
        following = {}
        if new_obs:
            following["new_obs"] = np.empty_like(obs)
            following["new_obs"][:-1] = obs[1:]
            following["new_obs"][ends] = self.final_observations(lo, hi)
        next_mask = np.empty_like(mask)
        next_mask[:-1] = mask[1:]
        next_mask[ends] = self.final_legal(lo, hi)
        t = np.arange(b - a) - np.repeat(self.starts[lo:hi] - a, self.lengths[lo:hi])
        return {"obs": obs, **following, "actions": d.action[rows],
                "rewards": d.reward[rows], "terminals": d.terminal[rows],
                "truncated": d.truncated[rows], "legal_mask": mask,
                "next_legal_mask": next_mask, "legal_known": self.legal_known[a:b],
                "t": t, "last": last}

    def chunks(self, rows: int) -> Iterator[tuple[int, int]]:
        """Runs of whole episodes ``(lo, hi)`` of about ``rows`` steps (at least one)."""
        lo = 0
        while lo < len(self):
            hi = int(np.searchsorted(self.starts, self.starts[lo] + rows, side="right")) - 1
            hi = min(max(hi, lo + 1), len(self))
            yield lo, hi
            lo = hi


def episodes_of(data: Transitions, by: str = "auto") -> Episodes:
    """The episodes of ``data`` (``by``: ``"seat"``, ``"episode"`` or ``"auto"``; see the
    module doc), with the legal mask of every observation."""
    if by not in GROUPINGS:
        raise ExportError(f"--by {by!r}: want one of {', '.join(GROUPINGS)}", "by")
    if not len(data):
        raise ExportError("the store has no rows: nothing to export")
    if by == "auto":
        by = grouping(data)
    rows, starts = _order(data, by)
    mismatched = _mismatched(data, rows, starts)
    mask, known, sources = _masks(data, rows, starts)
    return Episodes(data, by, rows, starts, mask, known, mismatched, sources)


def grouping(data: Transitions) -> str:
    """How ``data``'s next states chain its rows: ``"seat"`` where each row's next state
    is its seat's next decision (or where neither grouping fits every row), ``"episode"``
    where it is the next row of the store episode (Hanabi's team episodes): the returns
    an FQI's Bellman targets add up follow that chain."""
    if not _mismatched(data, *_order(data, "seat")):
        return "seat"
    return "episode" if not _mismatched(data, *_order(data, "episode")) else "seat"


def _order(data: Transitions, by: str) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Store rows in export order and the episodes' start offsets (plus the end)."""
    if by == "seat":
        rows = np.lexsort((data.step, data.player, data.episode)).astype(np.int64)
        key = data.episode[rows] * 256 + data.player[rows].astype(np.int64)
    else:
        rows = np.argsort(data.episode, kind="stable").astype(np.int64)
        key = data.episode[rows]
    cut = np.flatnonzero(key[1:] != key[:-1]) + 1
    return rows, np.concatenate([[0], cut, [len(rows)]]).astype(np.int64)


def _take(matrix: Any, rows: NDArray[np.int64]) -> NDArray[Any]:
    """Rows of a matrix or of a store's `FollowingStates` (gathered as indexed)."""
    return np.asarray(matrix[rows])


def _same_rows(data: Transitions, before: NDArray[np.int64],
               after: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Whether ``next_state[before[i]]`` equals ``state[after[i]]``, a chunk at a time."""
    out = np.zeros(len(before), bool)
    for at in range(0, len(before), CHUNK_ROWS):
        b, a = before[at:at + CHUNK_ROWS], after[at:at + CHUNK_ROWS]
        out[at:at + len(b)] = (_take(data.next_state, b) == data.state[a]).all(axis=1)
    return out


def _mismatched(data: Transitions, rows: NDArray[np.int64], starts: NDArray[np.int64]) -> int:
    """Steps, not the last of their episode, whose row's next state is not the next step's
    state."""
    inner = np.ones(len(rows), bool)
    inner[starts[1:] - 1] = False
    k = np.flatnonzero(inner)
    return int((~_same_rows(data, rows[k], rows[k + 1])).sum())


def _masks(data: Transitions, rows: NDArray[np.int64], starts: NDArray[np.int64]
           ) -> tuple[NDArray[np.bool_], NDArray[np.bool_], dict[str, int]]:
    """The legal mask of each step's observation (see the module doc) and whether it was
    recorded, with how many came from where."""
    n = len(rows)
    if data.legal is not None:  # the store records every row's own legal actions
        return data.legal[rows], np.ones(n, bool), {"recorded": n, "unknown": 0}
    mask = np.ones((n, len(data.action_names)), bool)
    known = np.zeros(n, bool)
    first = np.zeros(n, bool)
    first[starts[:-1]] = True
    in_episode = np.full(n, -1, np.int64)  # the episode's previous step's row
    in_episode[1:] = rows[:-1]
    in_episode[first] = -1
    store_prev = rows - 1  # the previous row of the store episode
    store_prev[(rows == 0) | (data.episode[np.maximum(rows - 1, 0)] != data.episode[rows])] = -1
    sources = {}
    for name, source in (("previous step", in_episode), ("previous store row", store_prev)):
        k = np.flatnonzero(~known & (source >= 0))
        k = k[~data.terminal[source[k]]]
        ok = np.zeros(len(k), bool)
        if len(k):
            q, r = source[k], rows[k]
            ok = _same_rows(data, q, r) & data.next_legal[q, data.action[r]]
        mask[k[ok]] = data.next_legal[source[k[ok]]]
        known[k[ok]] = True
        sources[name] = int(ok.sum())
    sources["unknown"] = int((~known).sum())
    return mask, known, sources
