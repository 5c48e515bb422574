"""The rules a row keeps before anything learns from it or exports it: its action one of
the store's and legal where the row records its legal actions, a move due where one is
(a legal action in its own state, and in its next state unless the episode ends there),
its reward and float features finite, its player one of the game's seats.

The writer holds each batch to them; a part written by another tool, by an
older batchrl or by hand has not been through it, and a learner would fit such rows
without a word (an action past the last is an index error in one learner, a silent
column in an export's file in another). `first_broken` finds the first bad row of the
arrays `Store.arrays` makes (named with its part, its row and its log's line) and of each
batch the writer takes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.store.schema import StoreSchema

READ = ("no rule of the game allows it, and a learner or an export would take it as it "
        "is; re-ingest that log (the ingest checks each row), or delete the part")
WRITTEN = ("no rule of the game allows it: the game's reader made a row it should not "
           "have; nothing of this log is stored")


def first_broken(schema: StoreSchema, rows: Mapping[str, Any], features: Sequence[str],
                 seats: int | None = None) -> tuple[int, str] | None:
    """The first of ``rows`` (numpy arrays: ``action``, ``player``, ``reward``,
    ``terminal``, ``truncated``, the ``next_legal`` matrix, and the ``legal``, ``state``
    and ``next_state`` matrices where there are: ``features`` name the states' columns)
    that breaks a rule a row keeps, with what is wrong; None if none does. ``seats``: the
    game's seats, where the caller knows them."""
    action = np.asarray(rows["action"]).astype(np.int64)
    if not len(action):
        return None
    actions = len(schema.action_names)
    player = np.asarray(rows["player"]).astype(np.int64)
    reward = np.asarray(rows["reward"])
    # each rule: the rows that break it, and what to say of one of them
    rules: list[tuple[NDArray[Any], Callable[[int], str]]] = [
        ((action < 0) | (action >= actions),
         lambda r: f"action {action[r]} is none of the store's {actions} "
                   f"({', '.join(schema.action_names)})"),
        ((player < 0) | ((player >= seats) if seats else False),
         lambda r: f"player {player[r]} is no seat of the game"
                   + (f" (seats 0 to {seats - 1})" if seats else "")),
        (~np.isfinite(reward), lambda r: f"its reward is {reward[r]}")]
    for key, prefix in (("state", ""), ("next_state", "next ")):
        matrix = rows.get(key)
        if schema.state_dtype == "float32" and isinstance(matrix, np.ndarray):
            rules.append(_finite(matrix, features, prefix))
    ends = np.asarray(rows["terminal"]) | np.asarray(rows["truncated"])
    rules.append((~ends & ~np.asarray(rows["next_legal"]).any(axis=1),
                  lambda r: "its episode goes on, but its next state allows no action"))
    legal = rows.get("legal")
    if legal is not None:
        known = (action >= 0) & (action < actions)
        rules += [(~legal.any(axis=1), lambda r: "its state allows no action, yet it has one"),
                  (known & ~legal[np.arange(len(action)), np.where(known, action, 0)],
                   lambda r: f"its action {schema.action_names[action[r]]!r} is not legal "
                             "in its state")]
    bad = [(int(np.argmax(broken)), say) for broken, say in rules if broken.any()]
    if not bad:
        return None
    row, say = min(bad, key=lambda b: b[0])
    return row, say(row)


def _finite(matrix: NDArray[Any], features: Sequence[str], prefix: str
            ) -> tuple[NDArray[Any], Callable[[int], str]]:
    broken = ~np.isfinite(matrix)
    return broken.any(axis=1), lambda r: (
        f"its {prefix}feature {features[int(np.argmax(broken[r]))]!r} is "
        f"{matrix[r, int(np.argmax(broken[r]))]}")
