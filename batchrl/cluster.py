"""The same commands on a Dask cluster: ``--scheduler tcp://HOST:8786`` (or
``BATCHRL_SCHEDULER``).

batchrl does not schedule work of its own across machines: it hands tasks to a Dask
scheduler (``dask.distributed``, the optional ``[dask]`` extra, imported only when a
scheduler is named) and takes their results back in a fixed order, so a run on a
cluster gives the result the local run gives with the same seeds.

What runs where (FQI): the driver (the ``batchrl fqi`` process) reads the store, keeps
the Bellman targets and the iteration loop, and finds leaves and predictions; the
workers grow the trees. Each model's inputs are scattered to the workers once, each
iteration's targets once per model, and a task grows a share of one forest's trees
from the seeds scikit-learn would give them (``forest_seeds``), so the forest put
together from the tasks' trees is the forest one ``fit`` makes, tree for tree.

What runs where (evaluate): the ``batchrl evaluate`` process sends blocks of hands as
tasks (`Tasks`, `Task`) and puts their results together in order; a block's cards and
its players' draws come from seeds derived from the one seed (`block_entropy`), so the
blocks give the same results wherever they are played, and a run here plays the same
blocks one after the other. The workers read the model files themselves (once per
process: `load_once`).

joblib's Dask backend was the other way: scikit-learn's forests would run each tree as
a joblib task on the cluster unchanged. It ships a forest's data with each batch of
tasks unless told what to scatter, and what it scatters by itself it hashes and sends
again on every ``fit`` (a forest per model, per iteration); tasks of our own scatter each
model's inputs once for the whole run and keep the trees' seeds, and so the result, in
our hands.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray
from sklearn.base import clone

ENV = "BATCHRL_SCHEDULER"
_T = TypeVar("_T")
INSTALL = "pip install 'batchrl[dask]'"


class ClusterError(RuntimeError):
    """A scheduler that cannot be used; the message says why and what to do."""


def scheduler_address(given: str | None) -> str | None:
    """The scheduler named by ``--scheduler``, else by ``BATCHRL_SCHEDULER``, else None."""
    return given or os.environ.get(ENV) or None


@contextmanager
def connect(address: str | None) -> Iterator[Any]:
    """A ``distributed.Client`` on ``address`` for the block (None: no cluster)."""
    if address is None:
        yield None
        return
    try:
        from distributed import Client
    except ImportError:
        raise ClusterError(f"--scheduler {address}: dask.distributed is not installed "
                           f"({INSTALL})") from None
    try:
        client = Client(address, timeout="20s")  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError) as exc:
        raise ClusterError(f"--scheduler {address}: no Dask scheduler answers there "
                           f"({exc}); start one with `dask scheduler` and workers with "
                           f"`dask worker {address}`") from None
    try:
        yield client
    finally:
        client.close()  # type: ignore[no-untyped-call]


def workers(client: Any) -> int:
    """How many worker processes the cluster has (at least one)."""
    return max(1, len(client.scheduler_info().get("workers", {})))


def forest_seeds(forest: Any) -> NDArray[np.int64]:
    """The random states scikit-learn's ``fit`` gives the trees of ``forest``, in order."""
    state = forest.random_state
    rng = state if isinstance(state, np.random.RandomState) else np.random.RandomState(state)
    seeds: NDArray[np.int64] = rng.randint(np.iinfo(np.int32).max, size=forest.n_estimators)
    return seeds


def can_split(forest: Any) -> bool:
    """Whether ``forest``'s trees can be grown as separate tasks to the same forest: a
    scikit-learn forest without bootstrap (ExtraTrees' default)."""
    return hasattr(forest, "estimator_params") and hasattr(forest, "n_estimators") and \
        not getattr(forest, "bootstrap", True)


def _grow(template: Any, seeds: Sequence[int], x: NDArray[np.float32],
          y: NDArray[np.float64]) -> list[Any]:
    """A worker's task: the trees of ``template`` (a forest) for ``seeds``."""
    params = {p: getattr(template, p) for p in template.estimator_params
              if p != "random_state"}
    trees = []
    for seed in seeds:
        tree = clone(template.estimator).set_params(**params, random_state=int(seed))
        trees.append(tree.fit(x, y))
    return trees


def _fit(model: Any, x: NDArray[np.float32], y: NDArray[np.float64]) -> Any:
    """A worker's task: ``model`` fitted whole (a regressor whose trees cannot be split)."""
    return model.fit(x, y)


class RemoteFits:
    """Models fitted on the cluster: each model's inputs scattered once, its trees grown
    in shares, the forests put together in the order asked."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._inputs: dict[int, Any] = {}

    def submit(self, model: Any, key: int, x: Callable[[], NDArray[np.float32]],
               y: NDArray[np.float64], shares: int) -> list[Any]:
        """Futures that fit ``model`` (a fresh estimator, its random state set) on the
        inputs ``x()`` makes (scattered once for ``key``: later fits reuse them) and
        ``y``, in up to ``shares`` tasks."""
        if key not in self._inputs:
            self._inputs[key] = self.client.scatter(x(), broadcast=False)
        xf = self._inputs[key]
        yf = self.client.scatter(y, broadcast=False)
        if not can_split(model):
            return [self.client.submit(_fit, model, xf, yf, pure=False)]
        seeds = forest_seeds(model)
        size = math.ceil(len(seeds) / max(1, min(shares, len(seeds))))
        return [self.client.submit(_grow, model, seeds[lo : lo + size].tolist(), xf, yf,
                                   pure=False)
                for lo in range(0, len(seeds), size)]

    def gather(self, model: Any, futures: list[Any], n_features: int) -> Any:
        """The fitted model from its tasks' results: the forest, tree for tree."""
        results = self.client.gather(futures)
        if not can_split(model):
            return results[0]
        forest = model
        forest.estimators_ = [tree for part in results for tree in part]
        forest.estimator_ = clone(forest.estimator)
        forest.n_features_in_ = n_features
        forest.n_outputs_ = 1
        return forest

    def forget(self) -> None:
        """Release the scattered inputs on the workers."""
        for future in self._inputs.values():
            future.release()
        self._inputs.clear()


# ---- evaluations in blocks: here one after the other, or as tasks on the cluster ----------

BLOCK_TAG = 0x626C6B  # "blk": marks a block's seed apart from the others a game derives


def block_entropy(key: int | Sequence[int], block: int) -> int | list[int]:
    """The seed of block ``block`` of a run seeded ``key``: ``key`` itself for block 0, so
    a run of one block plays what it played before runs had blocks (and the figures
    published from it stand); ``[*key, BLOCK_TAG, block]`` for the others.

    >>> block_entropy(33, 0), block_entropy(33, 2), block_entropy([33, 1], 1)
    (33, [33, 6450283, 2], [33, 1, 6450283, 1])
    """
    if block == 0:
        return key if isinstance(key, int) else list(key)
    return [*([key] if isinstance(key, int) else key), BLOCK_TAG, block]


def block_rngs(seed: int, block: int, players: int) -> list[np.random.Generator]:
    """The generators of a block's ``players``: children 1 to ``players`` of the block's
    seed (`block_entropy`); child 0 of the run's seed is its deals. For block 0 they are
    the run's own players' generators.

    >>> a = block_rngs(5, 0, 2)[1].random()
    >>> a == np.random.default_rng(np.random.SeedSequence(5).spawn(3)[2]).random()
    True
    """
    children = np.random.SeedSequence(block_entropy(seed, block)).spawn(players + 1)
    return [np.random.default_rng(s) for s in children[1:]]


def after(seeds: np.random.SeedSequence, children: int) -> np.random.SeedSequence:
    """``seeds`` as it is once ``children`` children have been spawned from it: its next
    child is the one ``spawn`` would give then, without making the ones before.

    >>> a, b = np.random.SeedSequence(7), np.random.SeedSequence(7)
    >>> _ = a.spawn(5)
    >>> sixth = a.spawn(1)[0].generate_state(2)
    >>> (after(b, 5).spawn(1)[0].generate_state(2) == sixth).all()
    np.True_
    """
    return np.random.SeedSequence(seeds.entropy, spawn_key=seeds.spawn_key,
                                  pool_size=seeds.pool_size, n_children_spawned=children)


def spans(total: int, size: int) -> list[tuple[int, int, int]]:
    """``(block, lo, hi)`` for the blocks of ``size`` that cover ``range(total)``.

    >>> spans(25, 10)
    [(0, 0, 10), (1, 10, 20), (2, 20, 25)]
    """
    return [(b, lo, min(total, lo + size)) for b, lo in enumerate(range(0, total, size))]


class Task:
    """One call of a task: ``fn(*args, progress=...)``, which makes ``size`` units of
    progress (hands, games) by the time it returns."""

    __slots__ = ("args", "fn", "size")

    def __init__(self, fn: Callable[..., Any], *args: Any, size: int) -> None:
        self.fn, self.args, self.size = fn, args, size


class Tasks:
    """Runs tasks and gives their results in the order given: here, one after the other
    (each told of ``progress``), or on a Dask cluster (``client``), where each result
    advances ``progress`` as it arrives. A task's result depends only on its arguments,
    so both ways give the same results."""

    def __init__(self, client: Any = None,
                 progress: Callable[[int], None] | None = None) -> None:
        self.client, self.progress = client, progress

    @classmethod
    def of(cls, tasks: Tasks | None, progress: Callable[[int], None] | None) -> Tasks:
        """``tasks``, else tasks run here that report to ``progress``."""
        return tasks if tasks is not None else cls(None, progress)

    def run(self, tasks: Sequence[Task]) -> list[Any]:
        if self.client is None:
            return [t.fn(*t.args, progress=self.progress) for t in tasks]
        from distributed import as_completed

        futures = [self.client.submit(t.fn, *t.args, pure=False) for t in tasks]
        size = {f.key: t.size for f, t in zip(futures, tasks, strict=True)}
        try:
            for future in as_completed(futures):  # type: ignore[no-untyped-call]
                if future.status == "error":
                    future.result()  # raises the task's error, here
                if future.status == "cancelled":
                    raise ClusterError(f"the cluster dropped a task ({future.key}): a worker "
                                       "died or the scheduler went away; run again")
                if self.progress is not None:
                    self.progress(size[future.key])
            return list(self.client.gather(futures))
        except Exception as exc:
            if type(exc).__module__.startswith("distributed"):  # KilledWorker, cancelled
                raise ClusterError(f"the cluster lost a task: {exc}") from None
            raise
        finally:
            for future in futures:
                future.release()


_LOADED: dict[tuple[Any, ...], Any] = {}
_KEEP_LOADED = 4  # a table of four models; big forests are not kept longer
_LOADING = threading.Lock()  # a worker's threads share the cache


def load_once(load: Callable[..., _T], path: str | os.PathLike[str], *args: Any) -> _T:
    """``load(path, *args)``, kept for the process while the file is unchanged (its path,
    mtime and size; the loader and the class it is bound to): a model read once per
    worker process (or per run here), whatever number of blocks it plays. The model is
    shared: its users only read it. A policy named by code (``python:MODULE:CALLABLE``)
    is kept by its name."""
    if str(path).startswith("python:"):
        version: tuple[Any, ...] = (str(path),)
    else:
        stat = os.stat(path)
        version = (os.path.abspath(path), stat.st_mtime_ns, stat.st_size)
    owner = getattr(load, "__self__", None)
    key = (getattr(load, "__module__", None), getattr(load, "__qualname__", repr(load)),
           None if owner is None else type(owner).__qualname__, *version, repr(args))
    with _LOADING:
        if key not in _LOADED:
            while len(_LOADED) >= _KEEP_LOADED:
                del _LOADED[next(iter(_LOADED))]
            _LOADED[key] = load(path, *args)
        held: _T = _LOADED[key]
    return held
