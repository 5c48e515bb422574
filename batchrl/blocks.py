"""Work in blocks: an evaluation's games (or an ablation's heroes, a benchmark's tasks)
cut into blocks whose results depend on their arguments alone, run here one after the
other or as tasks on a Dask cluster (`Tasks`), and put back together in order.

A block's cards and its players' draws come from seeds derived from the run's one seed
(`block_entropy`, `block_rngs`), so the blocks give the same results wherever they are
played, and a run here plays the same blocks one after the other. A worker reads each
model file once (`load_once`). What a game's evaluation needs of this is here; the
connection to a cluster (``--scheduler``) is `batchrl.cluster`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

_T = TypeVar("_T")


class ClusterError(RuntimeError):
    """A cluster that cannot be reached or used, or that lost a task; the message says
    what to do."""


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

    def run(self, tasks: Sequence[Task],
            landed: Callable[[int, Any], None] | None = None) -> list[Any]:
        """The tasks' results in order; ``landed(i, result)`` is told of each as it
        lands (here in order, on a cluster as each finishes)."""
        if self.client is None:
            out = []
            for i, t in enumerate(tasks):
                out.append(t.fn(*t.args, progress=self.progress))
                if landed is not None:
                    landed(i, out[-1])
            return out
        from distributed import as_completed  # dask: the cluster extra, loaded only with a cluster

        futures = [self.client.submit(t.fn, *t.args, pure=False) for t in tasks]
        size = {f.key: t.size for f, t in zip(futures, tasks, strict=True)}
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for future in as_completed(futures):  # type: ignore[no-untyped-call]
                if future.status == "error":
                    future.result()  # raises the task's error, here
                if future.status == "cancelled":
                    raise ClusterError(f"the cluster dropped a task ({future.key}): a worker "
                                       "died or the scheduler went away; run again")
                if self.progress is not None:
                    self.progress(size[future.key])
                if landed is not None:
                    landed(index[future.key], future.result())
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
