"""Rows for the store's tests (`tests/test_store.py`, `tests/test_store_writing.py`): a
small poker-like schema, batches of its rows, log files to ingest them as, and what a
store's parts folder hides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from batchrl.store import (
    Store,
    StoreSchema,
    episode_id,
    file_digest,
)

FEATURES = ("hand_strength", "pot", "round", "raises")
ACTIONS = ("fold", "call", "raise")
SCHEMA = StoreSchema(game="test.limit.2p", feature_names=FEATURES, action_names=ACTIONS,
                     audit_columns=("cards",), game_params={"big_blind": 2, "bets": [2, 4]})


def make_batch(digest: str, episodes: range, *, seed: int = 0, rows: int = 4) -> dict[str, Any]:
    """``rows`` decisions per episode, players alternating; each player's last one is terminal."""
    rng = np.random.default_rng(seed)
    n = len(episodes) * rows
    index = np.repeat(np.asarray(episodes, dtype=np.int64), rows)
    k = np.tile(np.arange(rows), len(episodes))
    terminal = k >= rows - 2
    next_legal = ~terminal[:, None] & (rng.random((n, len(ACTIONS))) < 0.5)
    next_legal[~terminal, 1] = True
    return {
        "episode": np.array([episode_id(digest, int(i)) for i in index]),
        "step": (k // 2).astype(np.int32),
        "player": (k % 2).astype(np.int8),
        "state": rng.integers(0, 5, (n, len(FEATURES))).astype(np.float32) + 0.25,
        "action": rng.integers(0, len(ACTIONS), n).astype(np.int8),
        "reward": np.where(terminal, rng.integers(-4, 5, n) * 0.5, 0.0),
        "next_state": np.where(terminal[:, None], 0, rng.random((n, len(FEATURES)))
                               ).astype(np.float32),
        "next_legal": next_legal,
        "terminal": terminal,
        "truncated": np.zeros(n, dtype=bool),
        "line": 1 + index * rows + k,
        "cards": np.array([f"As{i}|Kd{j}" for i, j in zip(index, k, strict=True)]),
    }


def source(tmp_path: Path, name: str, content: str = "") -> tuple[Path, str]:
    path = tmp_path / "logs" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(content or f"log {name}\n")
    return path, file_digest(path)


def ingest(store: Store, path: Path, digest: str, *batches: dict[str, Any]) -> None:
    with store.writer(path, digest) as w:
        for batch in batches:
            w.write(batch)


def hidden_files(store: Store) -> list[str]:
    return [p.name for p in store.parts_dir.iterdir() if p.name.startswith(".")]
