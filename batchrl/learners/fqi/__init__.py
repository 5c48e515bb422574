"""Fitted Q-iteration as a learner: ``batchrl learn fqi`` is ``batchrl fqi``.

The package holds FQI whole: the iterations (``iterations.FQI``: extremely randomized
trees, the max over the stored legal next actions, fast mode, checkpoints, a Dask
cluster), what a checkpoint records of its data (``checkpoint_data``) and the support
constraint (``support``); ``batchrl fqi`` runs it on a store (``batchrl.training``). Here the
learner protocol over them: a config of hyperparameters, ``fit`` on transitions (the
run-time things, checkpoints and a cluster, as arguments) returning the greedy
`batchrl.policy.GreedyPolicy`, and the reader of its model files (kind ``model``).

>>> import numpy as np
>>> from batchrl.store import Transitions
>>> one = np.ones(4, bool)  # four one-step hands: action 1 pays 1, action 0 nothing
>>> data = Transitions(
...     np.zeros((4, 1), np.float32), np.array([0, 1, 0, 1]), np.array([0., 1., 0., 1.]),
...     np.zeros((4, 1), np.float32), np.zeros((4, 2), bool), one, ~one, np.arange(4),
...     np.array(list("abcd"), object), np.zeros(4, np.int32), np.zeros(4, np.int8),
...     ("x",), ("pass", "bet"))
>>> policy = LEARNER.fit(FQIParams(trees=5, nmin=2, iters=2), data, jobs=1)
>>> policy.values(np.zeros((1, 1))).round(2), policy.act(np.zeros((1, 1)))
(array([[0., 1.]]), array([1]))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from batchrl.learners import Learner
from batchrl.learners.bc import behaviour_model
from batchrl.learners.fqi.iterations import FQI, IterationStats, extra_trees
from batchrl.policy import KIND, GreedyPolicy, ModelArtifact, supported
from batchrl.store import Transitions

# Fast mode's default: grow the trees once on each row's return-to-go, then only refit
# leaf values (see batchrl.learners.fqi.iterations and docs/speed.md for the measurements).
FAST_FREEZE_AFTER = 0


@dataclass(frozen=True, slots=True)
class FQIParams:
    """Fitted Q-iteration's hyperparameters (the fqi command's flags of the same names)."""

    trees: int = field(default=100, metadata={"help": "M: trees in the forest."})
    nmin: int = field(default=20, metadata={"help": "n_min: rows a node needs to be split."})
    k: int | None = field(default=None, metadata={
        "help": "K: candidate attributes tried at each split [default: all inputs]."})
    iters: int = field(default=11, metadata={"help": "N: iterations."})
    gamma: float = field(default=1.0, metadata={"help": "Discount per decision."})
    per_action: bool = field(default=False, metadata={
        "help": "One regressor per action, rather than one on (state, action)."})
    freeze_after: int | None = field(default=None, metadata={
        "help": "Fast mode after K full refits (0: trees grown once)."})
    support: float | None = field(default=None, metadata={
        "help": "The support constraint's share TAU (discrete BCQ)."})
    seed: int = field(default=0, metadata={"help": "Makes a run repeatable."})


class FittedQIteration(Learner):
    name = "fqi"
    kind = KIND
    title = "Fitted Q-iteration on extremely randomized trees (the thesis's learner)."
    Config: ClassVar[type] = FQIParams
    command = "fqi"  # batchrl learn fqi is batchrl fqi, with its own options

    def takes(self, name: str) -> bool:
        return name == "fast" or super().takes(name)

    def config(self, **values: Any) -> Any:
        """The config; ``fast`` (a game's `FQISettings`) is ``freeze_after`` 0 unless that
        is given (``EXPLICIT_NONE`` included: never freeze)."""
        if values.pop("fast", None) and values.get("freeze_after") is None:
            values["freeze_after"] = FAST_FREEZE_AFTER
        return super().config(**values)

    def fit(self, config: Any, data: Transitions | Callable[[], Transitions], *,
            progress: Callable[[str, int, int], None] | None = None, jobs: int = -1,
            on_iteration: Callable[[IterationStats], None] | None = None,
            checkpoints: Path | None = None, resume: bool = False, client: Any = None,
            checkpoint_data: Mapping[str, Any] | None = None) -> GreedyPolicy:
        """The greedy policy of the Q-function fitted to ``data`` (a function that reads
        them: its rows are let go before the trees set aside come back).
        ``on_iteration`` hears each iteration's diagnostics; ``checkpoints`` is where
        each iteration is kept (``resume``: go on from there); ``client`` a Dask client
        the trees are grown on."""
        rows = self.rows(data)
        behaviour = None
        if config.support is not None:
            behaviour = behaviour_model(rows.state, rows.action, len(rows.action_names),
                                        config.trees, config.nmin, config.seed, jobs)
            rows = dataclasses.replace(rows, next_legal=supported(
                behaviour, rows.next_state, rows.next_legal, config.support))
        fqi = FQI(
            extra_trees(config.trees, config.nmin, config.k, jobs),
            n_iterations=config.iters,
            gamma=config.gamma,
            per_action=config.per_action,
            freeze_after=config.freeze_after,
            random_state=config.seed,
            checkpoint_dir=checkpoints,
            on_step=progress,
            client=client,
            checkpoint_data=checkpoint_data,
        )
        for stats in fqi.fit_iter(rows, resume=resume):
            if on_iteration is not None:
                on_iteration(stats)
        features, actions, count = list(rows.feature_names), list(rows.action_names), len(rows)
        del rows, data  # the rows' matrices go before the trees set aside on disk come back
        q = dataclasses.replace(fqi.q_function(), behaviour=behaviour,
                                support=None if behaviour is None else float(config.support))
        return GreedyPolicy(ModelArtifact(q, {
            "learner": self.name, "feature_names": features, "action_names": actions,
            "rows": count, "params": asdict(config),
            "history": [asdict(h) for h in fqi.history_]}))

    def read(self, path: str | Path) -> GreedyPolicy:
        return GreedyPolicy.load(path)

    def meta_of(self, path: str | Path) -> dict[str, Any]:
        return ModelArtifact.meta_of(path)


LEARNER = FittedQIteration()
