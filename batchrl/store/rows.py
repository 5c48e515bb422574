"""Rows on their way into a store: `Rows` (one per decision, as columns) and `RowsBatch`
(what a game makes of a batch of records: the rows, how many records gave them, and the
records it refused, with why).

Every game's store side returns a `RowsBatch`; the ingest writes its rows and reports
the refused records. The columns are the store's (see ``batchrl.store``)::

    >>> import numpy as np
    >>> rows = Rows.from_columns({
    ...     "episode": ["0123456789abcdef:0"] * 2, "step": [0, 1], "player": [0, 0],
    ...     "state": np.zeros((2, 3)), "action": [1, 0], "reward": [0.0, 1.0],
    ...     "next_state": np.zeros((2, 3)), "next_legal": np.zeros((2, 2), bool),
    ...     "terminal": [False, True], "truncated": [False, False], "line": [1, 1],
    ...     "cards": ["3F", "3F"]})
    >>> len(rows), sorted(rows.audit)
    (2, ['cards'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.records import RejectedRecord
from batchrl.store.schema import CORE_COLUMNS, StoreError

# the columns every row has (``source`` is the writer's to fill)
CORE = tuple(c for c in CORE_COLUMNS if c != "source")


@dataclass(frozen=True, slots=True)
class Rows:
    """Store rows as columns: one entry per decision (``state``, ``next_state``,
    ``next_legal``: one row of a 2-D array each). ``episode`` and the ``audit`` columns
    hold strings (a sequence, or a ``pyarrow.DictionaryArray`` of strings); the writer
    checks every column's shape, type and range."""

    episode: Any
    step: Any
    player: Any
    state: Any
    action: Any
    reward: Any
    next_state: Any
    next_legal: Any
    terminal: Any
    truncated: Any
    line: Any
    audit: Mapping[str, Any] = field(default_factory=dict)
    # each row's own legal actions, (n, actions) booleans: a store that records them
    # (StoreSchema.legal) needs them; None where the game does not give them
    legal: Any = None

    def __len__(self) -> int:
        return len(self.action)

    @classmethod
    def from_columns(cls, columns: Mapping[str, Any]) -> Rows:
        """From a mapping of column name to values: the core columns, the rest audit."""
        missing = [c for c in CORE if c not in columns]
        if missing:
            raise StoreError(f"rows lack the columns {missing}; a row has {list(CORE)} and "
                             "the store's audit columns")
        return cls(**{c: columns[c] for c in CORE},
                   audit={k: v for k, v in columns.items() if k not in (*CORE, "legal")},
                   legal=columns.get("legal"))

    def columns(self) -> dict[str, Any]:
        """Column name -> values, the audit columns after the core ones."""
        return {c: getattr(self, c) for c in CORE} | dict(self.audit) | (
            {"legal": self.legal} if self.legal is not None else {})

    @classmethod
    def empty(cls, features: int, actions: int, audit: Sequence[str] = ()) -> Rows:
        """No rows, in the shapes of a store with ``features`` and ``actions``."""
        none = np.zeros(0)
        return cls(episode=[], step=none.astype(np.int32), player=none.astype(np.int8),
                   state=np.zeros((0, features), np.float32), action=none.astype(np.int8),
                   reward=none, next_state=np.zeros((0, features), np.float32),
                   next_legal=np.zeros((0, actions), bool), terminal=none.astype(bool),
                   truncated=none.astype(bool), line=none.astype(np.int64),
                   audit={name: [] for name in audit}, legal=np.zeros((0, actions), bool))


@dataclass(frozen=True, slots=True)
class RowsBatch:
    """What a game made of a batch of records: ``rows``; ``records``, how many of the
    records they came from; ``rejected``, each refused record with why."""

    rows: Rows
    records: int
    rejected: Sequence[tuple[Any, RejectedRecord]] = ()


def following_rows(episode: NDArray[np.integer[Any]], player: NDArray[np.integer[Any]]
                   ) -> NDArray[np.int64]:
    """For each row, the next row of the same episode and player, or -1 where none
    follows. A store's episodes are contiguous runs of rows (the writer sees to it), so
    a player's next row of the same episode is its next row, if it is of that episode.

    >>> following_rows(np.array([0, 0, 0, 0, 1]), np.array([0, 1, 0, 1, 0])).tolist()
    [2, 3, -1, -1, -1]
    """
    follower = np.full(len(player), -1, dtype=np.int64)
    if not len(player):
        return follower
    for p in np.flatnonzero(np.bincount(np.asarray(player, dtype=np.int64))):
        rows = np.flatnonzero(player == p)
        same = episode[rows[1:]] == episode[rows[:-1]]
        follower[rows[:-1][same]] = rows[1:][same]
    return follower
