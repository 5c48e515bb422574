"""Fitted Q-iteration (Ernst, Geurts & Wehenkel 2005; the thesis's Fig. 3.1).

Q_0 = 0, and iteration N regresses ``r + gamma * max over legal a' of Q_{N-1}(s', a')``
on (s, a): terminal rows bootstrap nothing, truncated rows bootstrap as usual,
and the max runs over the stored ``next_legal`` mask only (MushroomRL's FQI maxes
over every action, which in a card game counts moves that cannot be made).

``FQI`` holds a scikit-learn regressor *instance* and clones it each iteration
(the learner's is ``batchrl.learners.fqi.extra_trees``: ``ExtraTreesRegressor(
n_estimators=M, min_samples_split=n_min, max_features=K)``, K = all inputs). Two
action models: one regressor on (state, action), as the thesis does, or one regressor
per action (``per_action=True``).

Fast mode (``freeze_after``) keeps the trees' structure after the first
``freeze_after`` refits and from then on only recomputes leaf values (Ernst et
al. §5.6.1): the leaves of every training input and of every next state are
found once, and an iteration is a weighted bincount. ``freeze_after=0`` grows
the structure once on the return-to-go (each row's own episode return), a
target without the ties of the first Bellman targets, so no iteration is a
full refit.

``fit_iter`` yields each iteration's diagnostics, so the CLI's progress bar, a
notebook and the tests share one loop; ``fit`` drains it.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl import forests, modelfile, modeltrees
from batchrl.cluster import workers
from batchrl.forests import lower_bound, predict
from batchrl.learners.fqi.checkpoint_data import data_key, what_changed
from batchrl.learners.fqi.checkpoints import (
    ASIDE,
    CHECKPOINT,
    OLD_CHECKPOINT,
    check_checkpoint,
    digest,
)
from batchrl.learners.fqi.cluster import RemoteFits, clone
from batchrl.learners.fqi.inputs import Inputs, return_to_go
from batchrl.learners.fqi.leaves import (
    Frozen,
    check_values,
    leaf_means,
    leaves_of,
    lower_values,
    mean_values,
)
from batchrl.learners.fqi.model import QFunction
from batchrl.store import Transitions


@dataclass(frozen=True, slots=True)
class IterationStats:
    """What one iteration did, measured on a fixed sample of rows (``inputs.PROBE_ROWS``).

    ``bellman_residual`` is the RMS of ``r + gamma max Q_{N-1}(s', .) - Q_{N-1}(s, a)``
    (zero at a fixed point); ``mean_abs_q`` and ``max_abs_q`` describe the new Q_N."""

    iteration: int
    bellman_residual: float
    mean_abs_q: float
    max_abs_q: float
    seconds: float
    frozen: bool


@dataclass(frozen=True)
class _Run:
    """What one run of `FQI.fit_iter` is given beside the data: run-time objects, never
    hyperparameters (scikit-learn's rule: ``__init__`` takes parameters only)."""

    checkpoints: str | Path | None = None
    on_step: Callable[[str, int, int], None] | None = None
    client: Any = None
    checkpoint_data: Mapping[str, Any] | None = None


class FQI:
    """Fitted Q-iteration over a store's transitions.

    >>> import numpy as np
    >>> from batchrl.store import Transitions
    >>> # a two-step chain: action 1 pays 1 now, action 0 pays 2 later
    >>> data = Transitions(
    ...     state=np.array([[0.], [0.], [1.]], np.float32), action=np.array([1, 0, 0]),
    ...     reward=np.array([1., 0., 2.]), next_state=np.array([[0.], [1.], [0.]], np.float32),
    ...     next_legal=np.array([[0, 0], [1, 0], [0, 0]], bool),
    ...     terminal=np.array([True, False, True]), truncated=np.zeros(3, bool),
    ...     episode=np.array([0, 1, 1]), episode_ids=np.array(["a", "b"], object),
    ...     step=np.array([0, 0, 1], np.int32), player=np.zeros(3, np.int8),
    ...     feature_names=("x",), action_names=("wait", "take"))
    >>> from batchrl.learners.fqi import extra_trees
    >>> model = FQI(extra_trees(trees=5, nmin=2), n_iterations=3, random_state=0).fit(data)
    >>> model.q_values(np.array([[0.]], np.float32)).round(2)
    array([[2., 1.]])
    """

    def __init__(
        self,
        regressor: Any,
        n_iterations: int = 11,
        gamma: float = 1.0,
        per_action: bool = False,
        freeze_after: int | None = None,
        random_state: int | None = None,
        pessimism: float = 0.0,
    ) -> None:
        self.regressor = regressor
        self.n_iterations = n_iterations
        self.gamma = gamma
        self.per_action = per_action
        self.freeze_after = freeze_after
        self.random_state = random_state
        # kappa: each next move is valued at its lower confidence bound, the forest's
        # prediction less kappa times its trees' spread (0: plain FQI)
        self.pessimism = pessimism
        self._run = _Run()
        self._remote: Any = None  # learners.fqi.cluster.RemoteFits while a run holds the cluster

    # --- the loop ------------------------------------------------------------

    def fit(self, data: Transitions, resume: bool = False, *,
            checkpoints: str | Path | None = None,
            on_step: Callable[[str, int, int], None] | None = None, client: Any = None,
            checkpoint_data: Mapping[str, Any] | None = None) -> FQI:
        """Fit to ``data``: `fit_iter` run to its end."""
        for _ in self.fit_iter(data, resume, checkpoints=checkpoints, on_step=on_step,
                               client=client, checkpoint_data=checkpoint_data):
            pass
        return self

    def fit_iter(self, data: Transitions, resume: bool = False, *,
                 checkpoints: str | Path | None = None,
                 on_step: Callable[[str, int, int], None] | None = None, client: Any = None,
                 checkpoint_data: Mapping[str, Any] | None = None
                 ) -> Iterator[IterationStats]:
        """Run the iterations, yielding each one's diagnostics as it completes.

        Args:
            data: the transitions to fit.
            resume: go on from the last iteration kept in ``checkpoints``.
            checkpoints: a directory where each iteration is kept (None: none kept).
            on_step: hears the progress inside an iteration, ``(what, done, of)``, e.g.
                ``("models fitted", 3, 40)``.
            client: a ``dask.distributed`` Client: the trees are grown on its workers
                (`batchrl.cluster`), the same trees as here.
            checkpoint_data: what the data is beyond its rows (the store's sources, the
                players chosen, ...): each checkpoint records it with the rows' own
                digest, and a resume on other data is refused, saying what changed.

        Yields:
            Each iteration's `IterationStats`.
        """
        self._check_params()
        self._release()  # inputs scattered for another fit's data are not these
        self._run = _Run(checkpoints, on_step, client, checkpoint_data)
        try:
            yield from self._iterations(data, resume)
        finally:
            self._release()  # ended, stopped early or failed: the workers let go
            self._run = _Run()

    def _iterations(self, data: Transitions, resume: bool) -> Iterator[IterationStats]:
        n_actions = len(data.action_names)
        seeds = np.random.SeedSequence(self.random_state).generate_state(self.n_iterations + 1)
        inputs = Inputs(data, n_actions, self.per_action, self.random_state)
        self.n_actions_ = n_actions
        start = 0
        self.history_: list[IterationStats] = []
        self.models_: list[Any] = []
        self._checkpoint_models: str | None = None  # the trees' file in the checkpoint
        self._values: Frozen | None = None  # the leaf values of trees set aside
        frozen: Frozen | None = None
        q_probe = np.zeros(len(inputs.probe))
        best_next = np.zeros(inputs.n_next)  # max over legal a' of Q_0(s', a') = 0
        self._data = data_key(data, self._run.checkpoint_data) if self._run.checkpoints else {}
        if resume:
            start, frozen = self._load_checkpoint(inputs)
            if start:
                q_probe, best_next = self._predict(inputs, frozen)
        for it in range(start, self.n_iterations):
            began = time.perf_counter()
            if self.freeze_after == 0 and frozen is None:
                frozen = self._freeze(inputs, return_to_go(data, self.gamma), int(seeds[-1]))
            target = data.reward.copy()
            target[inputs.has_next] += self.gamma * best_next
            residual = float(np.sqrt(np.mean((target[inputs.probe] - q_probe) ** 2)))
            if frozen is None:
                # the last Q's predictions are taken: its trees go before the new ones grow
                self.models_ = []
                self.models_ = self._fit_models(inputs, target, int(seeds[it]))
                if self.freeze_after is not None and it + 1 >= self.freeze_after:
                    frozen = self._freeze_fitted(inputs)
            else:
                frozen.values = [leaf_means(frozen.train[m], frozen.offsets[m],
                                             target[inputs.rows[m]])
                                 for m in range(len(frozen.train))]
                self._values = frozen
                # The trees themselves predict Q_N, even if the caller stops here.
                _write_leaf_values(self.models_, frozen)
            q_probe, best_next = self._predict(inputs, frozen)
            stats = IterationStats(it + 1, residual, float(np.mean(np.abs(q_probe))),
                                   float(np.max(np.abs(q_probe), initial=0.0)),
                                   time.perf_counter() - began, frozen is not None)
            self.history_.append(stats)
            self._save_checkpoint(it + 1, frozen)
            yield stats

    def _release(self) -> None:
        """Free the inputs a run scattered to the cluster's workers."""
        if self._remote is not None:
            self._remote.forget()
            self._remote = None

    # --- Q ---------------------------------------------------------------------

    def q_function(self) -> QFunction:
        """The fitted Q-function (what a model artifact holds); trees set aside on disk
        are read back and given the last iteration's leaf values."""
        if any(isinstance(m, _Aside) for m in self.models_):
            self.models_ = [m.load() if isinstance(m, _Aside) else m for m in self.models_]
            if self._values is not None:
                _write_leaf_values(self.models_, self._values)
        return QFunction(self.models_, self.per_action, self.n_actions_,
                         pessimism=self.pessimism)

    def q_values(self, states: NDArray[np.floating[Any]]) -> NDArray[np.float64]:
        """Q of every action in each state, shape (n, actions)."""
        return self.q_function().q_values(states)

    # --- steps -----------------------------------------------------------------

    def _check_params(self) -> None:
        if self.n_iterations < 1:
            raise ValueError(f"n_iterations must be at least 1, not {self.n_iterations}")
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1], not {self.gamma}")
        if self.freeze_after is not None and self.freeze_after < 0:
            raise ValueError(f"freeze_after must be 0 or more, not {self.freeze_after}")
        if not self.pessimism >= 0:
            raise ValueError(f"pessimism must be 0 or more, not {self.pessimism}")
        if self.freeze_after is not None and getattr(self._base(), "bootstrap", False):
            raise ValueError("fast mode recomputes leaf means from all rows: it needs trees "
                             "grown without bootstrap")

    def _step(self, what: str, done: int, total: int) -> None:
        if self._run.on_step is not None:
            self._run.on_step(what, done, total)

    def _base(self) -> Any:
        return self.regressor

    def _fit_one(self, inputs: Inputs, target: NDArray[np.float64], seed: int,
                 m: int) -> Any:
        """Model ``m`` fitted to ``target`` (None for an action no row took)."""
        rows = inputs.rows[m]
        if not len(rows):
            return None
        model = clone(self._base())
        if "random_state" in model.get_params():
            model.set_params(random_state=(seed + m) % 2**32)
        return forests.fit(model, inputs.x(m), target[rows])

    def _fit_models(self, inputs: Inputs, target: NDArray[np.float64], seed: int) -> list[Any]:
        models: list[Any] = []
        for m, model in enumerate(self._fitted(inputs, target, seed)):
            self._step("models fitted", m + 1, len(inputs.rows))
            models.append(model)
        return models

    def _fitted(self, inputs: Inputs, target: NDArray[np.float64], seed: int
                ) -> Iterator[Any]:
        """Each model fitted to ``target``, in order: here one at a time, or on the
        cluster all at once (each model's trees in shares), taken back in order."""
        if self._run.client is None:
            for m in range(len(inputs.rows)):
                yield self._fit_one(inputs, target, seed, m)
            return

        if self._remote is None:
            self._remote = RemoteFits(self._run.client)
        remote = self._remote
        n = len(inputs.rows)
        shares = max(1, -(-2 * workers(self._run.client) // n))
        pending: list[tuple[Any, list[Any]] | None] = []
        for m, rows in enumerate(inputs.rows):
            if not len(rows):
                pending.append(None)
                continue
            model = clone(self._base())
            if "random_state" in model.get_params():
                model.set_params(random_state=(seed + m) % 2**32)
            futures = remote.submit(model, m, functools.partial(inputs.x, m), target[rows],
                                    shares)
            pending.append((model, futures))
        features = inputs.n_inputs
        for item in pending:
            yield None if item is None else remote.gather(item[0], item[1], features)

    def _freeze(self, inputs: Inputs, target: NDArray[np.float64], seed: int) -> Frozen:
        """Fast mode's trees, grown once on ``target`` and frozen, one model at a time:
        grown, its leaves found, and (with a checkpoint directory) its trees set aside on
        disk until the end, so that only one model's trees are ever held (on 75,000
        Tressette hands, 2.6 GB of trees)."""
        parts = []
        self.models_ = []
        for m, model in enumerate(self._fitted(inputs, target, seed)):
            parts.append(self._freeze_one(inputs, m, model))
            self.models_.append(self._set_aside(m, model))
            self._step("models grown and frozen", m + 1, len(inputs.rows))
        return Frozen(*(list(p) for p in zip(*parts, strict=True)))

    def _freeze_fitted(self, inputs: Inputs) -> Frozen:
        """The leaves of the models in ``models_`` (trees set aside are read back one at a
        time, and set aside again)."""
        parts = []
        for m, model in enumerate(self.models_):
            self._step("models' leaves found", m, len(self.models_))
            held = model.load() if isinstance(model, _Aside) else model
            parts.append(self._freeze_one(inputs, m, held))
        return Frozen(*(list(p) for p in zip(*parts, strict=True)))

    def _freeze_one(self, inputs: Inputs, m: int, model: Any) -> tuple[Any, Any, Any, Any]:
        """Model ``m``'s leaves: of its training rows, its probe rows and the legal next
        inputs it scores; and its trees' offsets."""
        if model is None:
            empty = np.zeros((0, 0), np.int32)
            return empty, empty, {}, np.zeros(1, np.int64)
        sizes = [e.tree_.node_count for e in model.estimators_]
        offsets = np.cumsum([0, *sizes])
        train = leaves_of(model, inputs.x(m), offsets)
        nxt = {a: leaves_of(model, x, offsets) for a, x in inputs.next_inputs(m)}
        return train, train[inputs.probe_local[m]], nxt, offsets

    def _set_aside(self, m: int, model: Any) -> Any:
        """A frozen model's trees written to the checkpoint directory, and what stands for
        them in ``models_`` until the end (`_Aside`); the model itself without one."""
        if model is None or self._run.checkpoints is None:
            return model
        path = Path(self._run.checkpoints) / f"frozen-{m}.npz"
        specs, arrays = modeltrees.encode_models([model], str(path))
        modelfile.write(path, "fqi-models", {"models": specs}, arrays)
        return _Aside(path)

    def _predict(self, inputs: Inputs, frozen: Frozen | None
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Q on the probe rows, and each next state's max of Q over its legal actions (0
        where no model knows any of them), kept as a running max: never a (next states,
        actions) matrix."""
        q_probe = np.zeros(len(inputs.probe))
        best_next = np.full(inputs.n_next, -np.inf)
        kappa = self.pessimism  # Q is its lower bound (0: the forest's prediction)

        def leaf_q(values: Any, leaves: Any, offsets: Any) -> NDArray[np.float64]:
            return lower_values(values, leaves, offsets, kappa) if kappa else \
                mean_values(values, leaves, offsets)

        def tree_q(model: Any, x: NDArray[np.float32]) -> NDArray[np.float64]:
            return lower_bound(model, x, kappa) if kappa else predict(model, x)

        for m, model in enumerate(self.models_):
            if model is None:
                continue
            if frozen is not None and frozen.values:
                values, offsets = frozen.values[m], frozen.offsets[m]
                q_probe[inputs.probe_of[m]] = leaf_q(values, frozen.probe[m], offsets)
                for a, leaves in frozen.nxt[m].items():
                    _raise_to(best_next, inputs.next_rows[a], leaf_q(values, leaves, offsets))
            else:
                q_probe[inputs.probe_of[m]] = tree_q(model, inputs.probe_x(m))
                for a, x in inputs.next_inputs(m):
                    if len(x):
                        _raise_to(best_next, inputs.next_rows[a], tree_q(model, x))
        return q_probe, np.where(np.isfinite(best_next), best_next, 0.0)

    # --- checkpoints -----------------------------------------------------------

    def _params(self) -> dict[str, Any]:
        """What a checkpoint must agree on to be resumed; not the worker count, on which
        the results do not depend."""
        base = clone(self._base())
        if "n_jobs" in base.get_params():
            base.set_params(n_jobs=None)
        return {"regressor": repr(base), "n_iterations": self.n_iterations,
                "gamma": self.gamma, "per_action": self.per_action,
                "freeze_after": self.freeze_after, "random_state": self.random_state,
                **({"pessimism": self.pessimism} if self.pessimism else {})}

    def _save_checkpoint(self, done: int, frozen: Frozen | None) -> None:
        if self._run.checkpoints is None:
            return
        root = Path(self._run.checkpoints)
        # The trees change only until they freeze: save them once they stop changing.
        trees = self._checkpoint_models
        aside = [m for m, model in enumerate(self.models_) if isinstance(model, _Aside)]
        if aside:
            trees = ASIDE  # each model's trees in its frozen-M.npz, written as it froze
        elif frozen is None or trees is None or done == 1 or (
                self.freeze_after and done == self.freeze_after):
            trees = f"models-{done}.npz"
            specs, arrays = modeltrees.encode_models(self.models_, str(root / trees))
            modelfile.write(root / trees, "fqi-models", {"models": specs}, arrays)
        values = frozen.values if frozen is not None else None
        held = [trees] if trees != ASIDE else [f"frozen-{m}.npz" for m in aside]
        state = {"params": self._params(), "data": self._data, "done": done, "models": trees,
                 "aside": aside, "n_models": len(self.models_),
                 "history": [asdict(h) for h in self.history_],
                 "values": None if values is None else len(values),
                 "digests": {name: self._digest_of(root / name) for name in held}}
        modelfile.write(root / CHECKPOINT, "fqi-checkpoint", state,
                        {f"values{m}": v for m, v in enumerate(values or [])})
        self._checkpoint_models = trees
        for old in root.glob("models-*.npz"):
            if old.name != trees:
                old.unlink(missing_ok=True)

    def _digest_of(self, path: Path) -> str:
        """A checkpoint file's sha256, hashed once while its size and time stay the same
        (a frozen model's file never changes: it is not read again each iteration)."""
        stat = path.stat()
        key = (path.name, stat.st_size, stat.st_mtime_ns)
        cache: dict[tuple[str, int, int], str] = self.__dict__.setdefault("_digests", {})
        if key not in cache:
            cache[key] = digest(path)
        return cache[key]

    def _load_checkpoint(self, inputs: Inputs) -> tuple[int, Frozen | None]:
        if self._run.checkpoints is None:
            return 0, None
        root = Path(self._run.checkpoints)
        if not (root / CHECKPOINT).exists():
            if (root / OLD_CHECKPOINT).exists():
                raise ValueError(f"the checkpoint in {root} is a pickle from an older batchrl, "
                                 "which this one does not load: run without --resume")
            return 0, None
        try:
            if (root / CHECKPOINT).is_symlink():
                raise ValueError(f"the checkpoint in {root}: {CHECKPOINT} is a link, not the "
                                 "file the run wrote: run without --resume to start again")
            state, values = modelfile.read(root / CHECKPOINT, "fqi-checkpoint")
            check_checkpoint(root, state, self.n_iterations)
            if state.get("params") != self._params():
                raise ValueError(f"the checkpoint in {root} was made with other parameters "
                                 f"({str(state.get('params'))[:300]}): run without --resume "
                                 "to start again, or with those")
            if (saved_data := state.get("data")) != self._data:
                what = ("it does not record its data (an older batchrl's)" if saved_data
                        is None else what_changed(saved_data, self._data))
                raise ValueError(f"the checkpoint in {root} was made on other data than this "
                                 f"run's: {what}; run without --resume to start again on "
                                 "this data")
            name = str(state["models"])
            if name == ASIDE:
                aside = {int(m) for m in state["aside"]}
                models = [_Aside(root / f"frozen-{m}.npz") if m in aside else None
                          for m in range(int(state["n_models"]))]
            elif not re.fullmatch(r"models-\d+\.npz", name):
                raise KeyError(name)
            else:
                trees, arrays = modelfile.read(root / name, "fqi-models")
                models = modeltrees.decode_models(trees.get("models"), arrays, root / name,
                                                  scikit_learn=True)
            history = [IterationStats(**h) for h in state["history"]]
            done, n_values = int(state["done"]), state["values"]
            saved = None if n_values is None else [
                np.asarray(values[f"values{m}"], dtype=np.float64) for m in range(n_values)]
        except (FileNotFoundError, KeyError, TypeError, modelfile.ModelError) as exc:
            raise ValueError(f"the checkpoint in {root} is incomplete or damaged "
                             f"({str(exc)[:300]}): run without --resume to start again") \
                from None
        self.models_ = models
        self.history_ = history
        self._checkpoint_models = name
        frozen = None
        if saved is not None:
            frozen = self._freeze_fitted(inputs)
            if saved:  # none yet when the run stopped at the iteration the trees froze:
                check_values(root, saved, frozen)
                frozen.values = saved  # they predict with their own values, as it did
                self._values = frozen
                _write_leaf_values(self.models_, frozen)
        return done, frozen



@dataclass(frozen=True)
class _Aside:
    """A frozen model whose trees wait on disk (in the checkpoint directory) until the
    Q-function is asked for: fast mode needs only their leaf values meanwhile."""

    path: Path

    def load(self) -> Any:
        header, arrays = modelfile.read(self.path, "fqi-models")
        return modeltrees.decode_models(header.get("models"), arrays, self.path,
                                        scikit_learn=True)[0]


def _raise_to(best: NDArray[np.float64], rows: NDArray[np.intp],
              q: NDArray[np.float64]) -> None:
    """``best[rows]`` raised to ``q`` where ``q`` is larger (``rows`` distinct)."""
    best[rows] = np.maximum(best[rows], q)


def _write_leaf_values(models: list[Any], frozen: Frozen) -> None:
    """Put the frozen leaf values into the trees, so the model predicts with them."""
    for model, values in zip(models, frozen.values, strict=True):
        if model is None or isinstance(model, _Aside):
            continue
        start = 0
        for tree in model.estimators_:
            count = tree.tree_.node_count
            tree.tree_.value[:, 0, 0] = values[start : start + count]
            start += count
