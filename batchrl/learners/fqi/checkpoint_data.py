"""What an FQI checkpoint records of the data it was made on, and how other data differ
from it, in words: a resume on other data is refused saying what changed."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from batchrl.records import excerpt
from batchrl.store import Transitions


def data_key(data: Transitions, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What a checkpoint records of the data it was made on: the rows (their count, and a
    digest of their actions, rewards, ends, episodes and next legal actions), the feature
    and action names, and ``given`` (a caller's own: the store's sources, the players)."""
    rows = hashlib.blake2b(digest_size=8)
    for column in (data.action, data.reward, data.terminal, data.truncated, data.episode,
                   data.next_legal):
        rows.update(np.ascontiguousarray(column).data)
    key = {"rows": len(data), "features": list(data.feature_names),
           "actions": list(data.action_names), **dict(given or {}),
           "row_values": rows.hexdigest()}
    loaded: dict[str, Any] = json.loads(json.dumps(key))  # as a checkpoint reads it back
    return loaded


def what_changed(saved: Mapping[str, Any], now: Mapping[str, Any]) -> str:
    """How ``now`` differs from ``saved`` (two `data_key`), in words.

    >>> what_changed({"rows": 5, "sources": {"a.log": 1}, "players": ["x"], "row_values": "1"},
    ...              {"rows": 9, "sources": {"a.log": 1, "b.log": 2}, "players": ["y"],
    ...               "row_values": "2"})
    "rows 5 then, 9 now; sources: added b.log; players ['x'] then, ['y'] now"
    """
    said = []
    for key in dict.fromkeys([*saved, *now]):
        old, new = saved.get(key), now.get(key)
        if old == new or key == "row_values":
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            said.append(f"{key}: " + "; ".join(
                f"{how} {', '.join(names)}" for how, names in (
                    ("added", [k for k in new if k not in old]),
                    ("removed", [k for k in old if k not in new]),
                    ("changed", [k for k in new if k in old and old[k] != new[k]])) if names))
        elif isinstance(old, list) and isinstance(new, list) and len(old) + len(new) > 8:
            gone, added = [x for x in old if x not in new], [x for x in new if x not in old]
            said.append(f"{key}: " + ("; ".join(
                f"{how} {', '.join(map(str, names))}" for how, names in (
                    ("added", added), ("removed", gone)) if names) or "another order"))
        else:
            said.append(f"{key} {old!r} then, {new!r} now")
    if not said and saved.get("row_values") != now.get("row_values"):
        said.append("as many rows, with other actions, rewards or episodes")
    return excerpt("; ".join(said), 600)
