"""A learned model played exactly against sette e mezzo's optimum (no sampling)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games.sette_mezzo.rules import DEFAULT_LIMIT, FEATURE_NAMES
from batchrl.games.sette_mezzo.solver import PolicyReport, evaluate_policy
from batchrl.games.sette_mezzo.transitions import GAME_NAME
from batchrl.policy import GreedyPolicy, ModelError


def evaluate_model(path: str | Path, limit: float | None = None) -> PolicyReport:
    """The greedy policy of the model at ``path``: exact value, regret and agreement.

    The limit is the one the model's data was played at, unless ``limit`` is given.
    """
    policy = GreedyPolicy.load(path)
    meta = policy.artifact.meta
    if meta.get("game") != GAME_NAME:
        raise ModelError(f"{path} was trained on {meta.get('game')}, not {GAME_NAME}")
    missing = [f for f in policy.feature_names if f not in FEATURE_NAMES]
    if missing:
        raise ModelError(f"{path} uses features sette e mezzo does not encode: {missing}")
    columns = [FEATURE_NAMES.index(f) for f in policy.feature_names]
    if limit is None:
        limit = float(meta.get("game_params", {}).get("limit", DEFAULT_LIMIT))

    def choose(states: NDArray[np.float32]) -> NDArray[Any]:
        return policy.act_batch(states[:, columns])

    return evaluate_policy(choose, limit)
