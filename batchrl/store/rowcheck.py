"""The rules a row keeps before anything learns from it or exports it: its action one of
the store's and legal where the row records its legal actions, a move due where one is
(a legal action in its own state, and in its next state unless the episode ends there),
its reward and float features finite, its player one of the game's seats.

The writer checks most of these as rows come in; a part written by another tool, by an
older batchrl or by hand has not been through it, and a learner would fit such rows
without a word (an action past the last is an index error in one learner, a silent
column in an export's file in another). `check_rows` is run on each part's rows as
`Store.arrays` reads them: the first bad row is named with its part, its row and its
log's line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from batchrl.store.schema import StoreError, StoreSchema

READ = ("no rule of the game allows it, and a learner or an export would take it as it "
        "is; re-ingest that log (the ingest checks each row), or delete the part")
WRITTEN = ("no rule of the game allows it: the game's reader made a row it should not "
           "have; nothing of this log is stored")


def check_rows(where: str, table: pa.Table, schema: StoreSchema, features: Sequence[str],
               seats: int | None = None, then: str = READ) -> None:
    """`StoreError` at the first row of ``table`` (rows of ``where``: a part read, a
    batch written; ``features``' columns among them, and their next-state columns in a
    store that keeps them) that breaks a rule a row keeps, saying ``then`` what to do;
    ``seats``: the game's seats, where the caller knows them."""
    if not table.num_rows:
        return
    actions = len(schema.action_names)
    action = _column(table, "action").astype(np.int64)
    player = _column(table, "player").astype(np.int64)
    reward = _column(table, "reward")
    # each rule: the rows that break it, and what to say of one of them
    rules: list[tuple[NDArray[Any], Callable[[int], str]]] = [
        ((action < 0) | (action >= actions),
         lambda r: f"action {action[r]} is none of the store's {actions} "
                   f"({', '.join(schema.action_names)})"),
        ((player < 0) | ((player >= seats) if seats else False),
         lambda r: f"player {player[r]} is no seat of the game"
                   + (f" (seats 0 to {seats - 1})" if seats else "")),
        (~np.isfinite(reward), lambda r: f"its reward is {reward[r]}")]
    if schema.state_dtype == "float32":
        rules += [_finite(name, _column(table, name)) for name in features]
        following = dict(zip(schema.feature_names, schema.columns()["next_state"],
                             strict=False))
        rules += [_finite(following[name], _column(table, following[name])) for name in features
                  if name in following and following[name] in table.schema.names]
    ends = _column(table, "terminal") | _column(table, "truncated")
    nexts = np.column_stack([_column(table, c) for c in schema.columns()["next_legal"]])
    rules.append((~ends & ~nexts.any(axis=1),
                  lambda r: "its episode goes on, but its next state allows no action"))
    if schema.columns()["legal"]:
        legal = np.column_stack([_column(table, c) for c in schema.columns()["legal"]])
        known = (action >= 0) & (action < actions)
        rules += [(~np.any(legal, axis=1), lambda r: "its state allows no action, yet it has one"),
                  (known & ~legal[np.arange(len(action)), np.where(known, action, 0)],
                   lambda r: f"its action {schema.action_names[action[r]]!r} is not legal "
                             "in its state")]
    bad = [(int(np.argmax(rows)), say) for rows, say in rules if rows.any()]
    if not bad:
        return
    row, say = min(bad, key=lambda b: b[0])
    line = int(_column(table, "line")[row])
    raise StoreError(f"{where}, row {row + 1:,} (line {line:,} of its log): {say(row)}: "
                     f"{then}")


def _finite(name: str, values: NDArray[Any]) -> tuple[NDArray[Any], Callable[[int], str]]:
    return ~np.isfinite(values), lambda r: f"its feature {name!r} is {values[r]}"


def _column(table: pa.Table, name: str) -> NDArray[Any]:
    column = table.column(name)
    values: NDArray[Any] = (column.chunk(0).to_numpy(zero_copy_only=False)
                            if column.num_chunks == 1 else column.to_numpy())
    return values
