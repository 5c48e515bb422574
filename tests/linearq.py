"""A learner that is not a forest, outside the package: linear fitted Q-iteration.

Q(s, a) = w_a · s + b_a, each iteration a ridge regression per action of the Bellman
target on the rows that took it. Registered through the public API alone
(``batchrl.learners.register_learner``), it learns, plays, shows and saves as the
package's own learners do; its model file is arrays and JSON, of kind ``linear-q``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from batchrl import modelfile
from batchrl.learners import Learner, LearnerError
from batchrl.store import Transitions


@dataclass(frozen=True)
class LinearConfig:
    ridge: float = field(default=1.0, metadata={"help": "The ridge penalty."})
    iters: int = field(default=3, metadata={"help": "Iterations of the Bellman backup."})


class LinearPolicy:
    def __init__(self, weights: np.ndarray, meta: Mapping[str, Any]) -> None:
        self.weights = weights  # (actions, features + 1): the last column the bias
        self.meta = dict(meta)
        self.feature_names = tuple(meta["feature_names"])
        self.action_names = tuple(meta["action_names"])

    def values(self, states: np.ndarray) -> np.ndarray:
        x = np.asarray(states, dtype=np.float64)
        return x @ self.weights[:, :-1].T + self.weights[:, -1]

    def act(self, states: np.ndarray, legal: np.ndarray | None = None) -> np.ndarray:
        q = self.values(states)
        if legal is not None:
            q = np.where(legal, q, -np.inf)
        return np.argmax(q, axis=1).astype(np.int64)

    def save(self, path: str | Path) -> Path:
        return modelfile.write(path, LinearQ.kind, {"meta": self.meta}, {"weights": self.weights})


class LinearQ(Learner):
    name = "linear"
    kind = "linear-q"
    title = "Linear fitted Q-iteration (a test's learner)."
    Config: ClassVar[type] = LinearConfig

    def fit(self, config: Any, data: Transitions | Callable[[], Transitions], *,
            progress: Callable[[str, int, int], None] | None = None,
            jobs: int = -1) -> LinearPolicy:
        rows = data() if callable(data) else data
        n, actions = len(rows), len(rows.action_names)
        x = np.column_stack([rows.state, np.ones(n)])
        nxt = np.column_stack([np.asarray(rows.next_state[0:n], dtype=np.float64), np.ones(n)])
        w = np.zeros((actions, x.shape[1]))
        for i in range(config.iters):
            q_next = np.where(rows.next_legal, nxt @ w.T, -np.inf).max(axis=1)
            target = rows.reward + np.where(rows.terminal | ~np.isfinite(q_next), 0.0, q_next)
            for a in range(actions):
                mine = rows.action == a
                if mine.any():
                    xa = x[mine]
                    w[a] = np.linalg.solve(xa.T @ xa + config.ridge * np.eye(x.shape[1]),
                                           xa.T @ target[mine])
            if progress is not None:
                progress("iterations", i + 1, config.iters)
        return LinearPolicy(w, {"feature_names": list(rows.feature_names),
                                "action_names": list(rows.action_names),
                                "params": asdict(config)})

    def read(self, path: str | Path) -> LinearPolicy:
        document, arrays = modelfile.read(path, self.kind)
        meta, weights = document.get("meta"), arrays.get("weights")
        if not isinstance(meta, dict) or weights is None or weights.shape != (
                len(meta.get("action_names", [])), len(meta.get("feature_names", [])) + 1):
            raise modelfile.ModelError(f"{path}: not a linear Q model")
        return LinearPolicy(weights, meta)


LEARNER = LinearQ()
assert not isinstance(LEARNER, type) and LearnerError
