"""The network: a multilayer perceptron that learns which move the logged players make.

``batchrl learn network`` (and ``batchrl imitate``, its command with a report) trains a
classifier of the store's moves: dense layers with ReLU and dropout, batch normalisation
before the output layer, cross-entropy with Adam, the moves a state cannot allow masked
out of the softmax when the data say which (``Transitions.legal``: a game's view gives
them, `batchrl.policy.FeatureView`). It plays the likeliest legal move. Hanabi's
recommended settings make it the report's network (its Figure 3) on the colour-ordered
states and the focus convention's facts; what it reads is the game's view, never this
package's.

Episodes are split 70/20/10 into training, validation and test sets, never rows
(``Transitions.group``: episodes dealt the same cards stay together). Inputs are
standardised with the training set's mean and deviation. The network kept is the one of
the epoch with the best validation accuracy (``keep_best``); the test episodes are scored
once, at the end; every figure is in the model's ``meta``.

Training needs torch, an optional extra (``pip install -e '.[imitation]'``; without a GPU,
first ``pip install torch --index-url https://download.pytorch.org/whl/cpu``, as
docs/interop.md says); playing does not: the model file is arrays and JSON
(`batchrl.modelfile`, kind ``network``) and the forward pass is numpy's.

>>> import numpy as np
>>> layers = [Layer("linear", {"weight": np.eye(2, dtype=np.float32),
...                            "bias": np.zeros(2, np.float32)})]
>>> net = NetworkPolicy(layers, np.zeros(2, np.float32), np.ones(2, np.float32),
...                     {"feature_names": ["x", "y"], "action_names": ["a", "b"]})
>>> net.act(np.array([[0., 1.], [2., 1.], [2., 1.]], np.float32),
...         np.array([[1, 1], [1, 1], [0, 1]], bool)).tolist()
[1, 0, 1]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, ClassVar

from batchrl.learners.base import Learner
from batchrl.learners.network.model import (
    KIND,
    SPLIT,
    Layer,
    NetworkConfig,
    NetworkPolicy,
    read_network,
    widths,
)
from batchrl.learners.network.training import train
from batchrl.store import Transitions

__all__ = ["KIND", "LEARNER", "SPLIT", "Layer", "Network", "NetworkConfig", "NetworkPolicy",
           "read_network", "widths"]


class Network(Learner):
    name = "network"
    kind = KIND
    title = "A neural network that imitates the logged players (needs torch to train)."
    Config: ClassVar[type] = NetworkConfig
    uses_next_state = False
    holds_out = True

    def fit(self, config: Any, data: Transitions | Callable[[], Transitions], *,
            progress: Callable[[str, int, int], None] | None = None,
            jobs: int = -1) -> NetworkPolicy:
        rows = self.rows(data)
        layers, mean, std, figures = train(config, rows, progress, jobs)
        return NetworkPolicy(layers, mean, std, {
            "learner": self.name, "feature_names": list(rows.feature_names),
            "action_names": list(rows.action_names), "params": asdict(config), **figures})

    def read(self, path: str | Path) -> NetworkPolicy:
        return read_network(path)


LEARNER = Network()
