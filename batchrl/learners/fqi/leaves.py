"""Fast mode's frozen trees (`batchrl.learners.fqi.iterations`): once a model's trees
stop being regrown, each row's leaf in each tree is found once, and every later
iteration only averages its targets over those leaves.

The leaves are kept per tree, numbered within it (uint16 where every tree has fewer than
65,536 nodes, else int32); they are found, and the forest's predictions made from them,
``CHUNK_ROWS`` rows at a time to bound memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.forests import alone_if_small

# Rows per block when finding leaves and averaging them: bounds fast mode's memory.
CHUNK_ROWS = 16_384


@dataclass
class Frozen:
    """Frozen trees: the leaf of each training row, probe row and legal next input in each
    tree, numbered within its tree (uint16 where every tree has fewer than 65,536 nodes,
    else int32: half the memory of the largest arrays fast mode holds); tree t's values
    sit at ``offsets[t]`` in a model's value vector."""

    train: list[NDArray[np.integer[Any]]]  # per model: (rows, trees), column-major
    probe: list[NDArray[np.integer[Any]]]  # per model: the probe rows' leaves
    nxt: list[dict[int, NDArray[np.integer[Any]]]]  # per model, per action: (next rows, trees)
    offsets: list[NDArray[np.int64]]  # per model: (trees + 1,)
    values: list[NDArray[np.float64]] = field(default_factory=list)


def check_values(root: Path, saved: list[NDArray[np.float64]], frozen: Frozen) -> None:
    """The leaf values a checkpoint kept, one finite value for each node of each model's
    frozen trees; a ValueError says which model's are not."""
    if len(saved) != len(frozen.offsets):
        raise ValueError(f"the checkpoint in {root} keeps the leaf values of {len(saved)} "
                         f"models, not {len(frozen.offsets)}: run without --resume to start "
                         "again")
    for m, (values, offsets) in enumerate(zip(saved, frozen.offsets, strict=True)):
        if values.shape != (int(offsets[-1]),) or not np.isfinite(values).all():
            raise ValueError(f"the checkpoint in {root}: model {m}'s leaf values are "
                             f"{values.shape[0] if values.ndim == 1 else values.shape} "
                             f"numbers{'' if np.isfinite(values).all() else ', not all finite'}"
                             f", for {int(offsets[-1]):,} nodes of its trees: run without "
                             "--resume to start again")


def leaves_of(model: Any, x: NDArray[np.float32], offsets: NDArray[np.int64]
            ) -> NDArray[np.integer[Any]]:
    """The leaf of each row of ``x`` in each tree, numbered within the tree, column-major;
    built in chunks to bound memory."""
    biggest = int(np.diff(offsets).max(initial=0))
    dtype = np.uint16 if biggest <= np.iinfo(np.uint16).max else np.int32
    out = np.empty((len(x), len(offsets) - 1), dtype=dtype, order="F")
    with alone_if_small(model, len(x)):
        for lo in range(0, len(x), CHUNK_ROWS):
            out[lo : lo + CHUNK_ROWS] = model.apply(x[lo : lo + CHUNK_ROWS])
    return out


def leaf_means(leaves: NDArray[np.integer[Any]], offsets: NDArray[np.int64],
                target: NDArray[np.float64]) -> NDArray[np.float64]:
    """Mean target of the rows in each leaf, tree by tree (0 for nodes no row reaches)."""
    sums = np.zeros(int(offsets[-1]))
    counts = np.zeros(int(offsets[-1]))
    for t in range(leaves.shape[1]):
        size = int(offsets[t + 1] - offsets[t])
        local = leaves[:, t]
        sums[offsets[t] : offsets[t + 1]] = np.bincount(local, weights=target, minlength=size)
        counts[offsets[t] : offsets[t + 1]] = np.bincount(local, minlength=size)
    return np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)


def lower_values(values: NDArray[np.float64], leaves: NDArray[np.integer[Any]],
                 offsets: NDArray[np.int64], kappa: float) -> NDArray[np.float64]:
    """The forest's prediction less ``kappa`` times the standard deviation of its trees'
    leaf values (`batchrl.forests.lower_bound` from frozen leaves), in chunks."""
    out = np.empty(len(leaves))
    trees = leaves.shape[1]
    for lo in range(0, len(leaves), CHUNK_ROWS):
        block = leaves[lo : lo + CHUNK_ROWS]
        total = np.zeros(len(block))
        squares = np.zeros(len(block))
        for t in range(trees):
            part = values[offsets[t] : offsets[t + 1]][block[:, t]]
            total += part
            squares += part * part
        mean = total / trees
        out[lo : lo + CHUNK_ROWS] = mean - kappa * np.sqrt(
            np.maximum(squares / trees - mean * mean, 0.0))
    return out


def mean_values(values: NDArray[np.float64], leaves: NDArray[np.integer[Any]],
                 offsets: NDArray[np.int64]) -> NDArray[np.float64]:
    """The forest's prediction: the mean over trees of each row's leaf value, in chunks."""
    out = np.empty(len(leaves))
    trees = leaves.shape[1]
    for lo in range(0, len(leaves), CHUNK_ROWS):
        block = leaves[lo : lo + CHUNK_ROWS]
        total = np.zeros(len(block))
        for t in range(trees):
            total += values[offsets[t] : offsets[t + 1]][block[:, t]]
        out[lo : lo + CHUNK_ROWS] = total / trees
    return out
