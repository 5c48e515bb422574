"""Behaviour cloning: a classifier of the logged players' moves over the store's features.

``batchrl learn bc`` fits extremely randomized trees to the one-hot action of every row
(each leaf then holds the frequencies of the actions among its rows) and plays the
likeliest legal action. It is the learner for "play as the logs' players did", the
baseline every offline learner is measured against, and the behaviour model of FQI's
support constraint (``batchrl fqi --support``) is this learner's forest.

>>> import numpy as np
>>> x = np.repeat(np.arange(2, dtype=np.float32)[:, None], 50, axis=0)
>>> acts = np.r_[np.zeros(49), [1], np.ones(50)].astype(int)   # action 1 once in state 0
>>> model = behaviour_model(x, acts, 2, trees=5, nmin=2, seed=0)
>>> policy = ClonedPolicy(model, {"feature_names": ["x"], "action_names": ["a", "b"]})
>>> policy.act(np.array([[0.], [1.], [1.]], np.float32),
...            np.array([[1, 1], [1, 1], [1, 0]], bool)).tolist()
[0, 1, 0]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from batchrl import modelfile, modeltrees
from batchrl.forests import fit, predict
from batchrl.learners.base import Learner, LearnerError, ScoredPolicy
from batchrl.modelfile import ModelError
from batchrl.store import Transitions

if TYPE_CHECKING:
    from sklearn.ensemble import ExtraTreesRegressor

KIND = "bc"
VERSION = 1


@dataclass(frozen=True, slots=True)
class BCConfig:
    """Behaviour cloning's hyperparameters."""

    trees: int = field(default=50, metadata={"help": "M: trees in the forest."})
    nmin: int = field(default=20, metadata={
        "help": "n_min: rows a node needs to be split (bigger: smoother frequencies)."})
    k: int | None = field(default=None, metadata={
        "help": "K: candidate features tried at each split (none given: all of them).",
        "unset": "all"})
    seed: int = field(default=0, metadata={"help": "Makes a run repeatable."})

    def __post_init__(self) -> None:
        if self.trees < 1 or self.nmin < 2 or (self.k is not None and self.k < 1):
            raise ValueError(f"trees {self.trees}, nmin {self.nmin}, k {self.k}: want at "
                             "least 1 tree, nmin 2 and k 1")


def behaviour_model(states: NDArray[np.float32], actions: NDArray[np.int64], n_actions: int,
                    trees: int = 50, nmin: int = 20, seed: int = 0, jobs: int = -1,
                    k: int | None = None, weights: NDArray[np.float64] | None = None
                    ) -> ExtraTreesRegressor:
    """How likely the logged players were to take each action in a state: trees on the
    one-hot actions (``k`` None: every feature is a candidate at each split); with
    ``weights``, each row counts as much as its weight (advantage-weighted cloning)."""
    # scikit-learn loads in seconds: only when a forest is made
    from sklearn.ensemble import ExtraTreesRegressor

    onehot = np.zeros((len(actions), n_actions), dtype=np.float32)
    onehot[np.arange(len(actions)), actions] = 1
    model = ExtraTreesRegressor(n_estimators=trees, min_samples_split=nmin,
                                max_features=1.0 if k is None else k, n_jobs=jobs,
                                random_state=seed)
    return fit(model, states, onehot, sample_weight=weights)



SUPPORT_CHUNK = 65_536  # rows whose action frequencies are predicted at a time


def probabilities(behaviour: Any, states: Any) -> NDArray[np.float64]:
    """The behaviour model's action frequencies for ``states`` (an array, or anything that
    slices to one), a chunk at a time."""
    n = len(states)
    out = np.empty((n, behaviour.n_outputs_), dtype=np.float64)
    for lo in range(0, n, SUPPORT_CHUNK):
        part = np.asarray(states[lo : lo + SUPPORT_CHUNK], dtype=np.float32)
        out[lo : lo + SUPPORT_CHUNK] = predict(behaviour, part).reshape(len(part), -1)
    return out

class ClonedPolicy(ScoredPolicy):
    """The likeliest legal action under the behaviour model (ties: the lowest index);
    ``kind``: what its files say they are (a weighted clone's, its learner's own)."""

    def __init__(self, model: ExtraTreesRegressor, meta: Mapping[str, Any],
                 kind: str = KIND) -> None:
        super().__init__(meta)
        self.model = model
        self.kind = kind

    def scores(self, states: NDArray[np.floating[Any]]) -> NDArray[np.float64]:
        return self.probabilities(states)

    def probabilities(self, states: NDArray[np.floating[Any]]) -> NDArray[np.float64]:
        """The logged players' frequency of every action in each state, (n, actions)."""
        return probabilities(self.model, np.asarray(states, dtype=np.float32))

    def importances(self) -> NDArray[np.float64]:
        """The forest's impurity importance of each feature."""
        return np.asarray(self.model.feature_importances_, dtype=np.float64)

    def save(self, path: str | Path) -> Path:
        """Arrays and JSON (`batchrl.modelfile`), written atomically."""
        specs, arrays = modeltrees.encode_models([self.model], f"{path}")
        return modelfile.write(path, self.kind, {"version": VERSION, "model": specs[0],
                                            "meta": modelfile.to_json(self.meta,
                                                                      f"{path}: meta")},
                               arrays)


class BehaviourCloning(Learner):
    name = "bc"
    kind = KIND
    title = "Behaviour cloning: play the logged players' likeliest legal move."
    Config: ClassVar[type] = BCConfig
    uses_next_state = False

    def fit(self, config: Any, data: Transitions | Callable[[], Transitions], *,
            progress: Callable[[str, int, int], None] | None = None,
            jobs: int = -1) -> ClonedPolicy:
        rows = self.rows(data)
        features = rows.state.shape[1]
        if config.k is not None and config.k > features:
            raise LearnerError(f"bc: k {config.k} is more than the {features} features read "
                               "(the game's recommended k, unless --k was given): give --k "
                               f"{features} or fewer")
        if progress is not None:
            progress("forests fitted", 0, 1)
        model = behaviour_model(rows.state, rows.action, len(rows.action_names), config.trees,
                                config.nmin, config.seed, jobs, config.k)
        if progress is not None:
            progress("forests fitted", 1, 1)
        return ClonedPolicy(model, {"learner": self.name,
                                    "feature_names": list(rows.feature_names),
                                    "action_names": list(rows.action_names),
                                    "params": asdict(config)})

    def read(self, path: str | Path) -> ClonedPolicy:
        return read_forest(path, KIND, self.name)


def read_forest(path: str | Path, kind: str, learner: str) -> ClonedPolicy:
    """A cloned policy's forest back from a model file of ``kind`` (``learner`` trains
    one again), checked against its feature and action names."""
    document, arrays, meta = modelfile.read_learned(
        path, kind, VERSION, f"{learner} model", f"retrain it with batchrl learn {learner}")
    (model,) = modeltrees.decode_models([document.get("model")], arrays, path)
    if model is None or model.n_features_in_ != len(meta["feature_names"]) or \
            model.n_outputs_ != len(meta["action_names"]):
        raise ModelError(f"{path}: its forest does not map its {len(meta['feature_names'])} "
                         f"features to its {len(meta['action_names'])} actions")
    return ClonedPolicy(model, meta, kind)


LEARNER = BehaviourCloning()
