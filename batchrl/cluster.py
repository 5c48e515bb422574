"""The same commands on a Dask cluster: ``--scheduler tcp://HOST:8786`` (or
``BATCHRL_SCHEDULER``).

batchrl does not schedule work of its own across machines: it hands tasks to a Dask
scheduler (``dask.distributed``, the optional ``[dask]`` extra, imported only when a
scheduler is named) and takes their results back in a fixed order, so a run on a
cluster gives the result the local run gives with the same seeds.

What runs where (FQI): ``batchrl.learners.fqi.cluster`` (the forests grown on the
workers, tree for tree the forest one ``fit`` makes); here the connection and the
tasks every command shares.

What runs where (evaluate): the ``batchrl evaluate`` process sends blocks of hands as
tasks (`Tasks`, `Task`) and puts their results together in order; a block's cards and
its players' draws come from seeds derived from the one seed (`block_entropy`), so the
blocks give the same results wherever they are played, and a run here plays the same
blocks one after the other. The workers read the model files themselves (once per
process: `load_once`).

"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

ENV = "BATCHRL_SCHEDULER"
_T = TypeVar("_T")
INSTALL = "pip install 'batchrl[dask]'"


class ClusterError(RuntimeError):
    """A scheduler that cannot be used; the message says why and what to do."""


# the schemes Dask's comms take; a bare HOST:PORT is tcp
SCHEMES = ("tcp", "tls", "ws", "wss", "inproc", "ucx")
CONNECT_SECONDS = 20.0  # how long a scheduler has to answer, handshake and all


def scheduler_address(given: str | None) -> str | None:
    """The scheduler named by ``--scheduler``, else by ``BATCHRL_SCHEDULER``, else None,
    parsed here: a scheme Dask takes, a host and a port; `ClusterError` (showing no
    password) for anything else.

    >>> scheduler_address("tcp://10.0.0.5:8786"), scheduler_address("10.0.0.5:8786")
    ('tcp://10.0.0.5:8786', '10.0.0.5:8786')
    >>> scheduler_address("tcp://ann:s3cret@10.0.0.5:8786")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    batchrl.cluster.ClusterError: --scheduler tcp://ann:***@10.0.0.5:8786: a Dask ...
    """
    address = given or os.environ.get(ENV) or None
    if address is None:
        return None
    from urllib.parse import urlsplit

    shown = shown_address(address)
    spelled = address if "://" in address else f"tcp://{address}"
    try:
        parts = urlsplit(spelled)
        port = parts.port
    except ValueError as exc:
        raise ClusterError(f"--scheduler {shown}: not an address ({exc}); give "
                           "tcp://HOST:PORT, as `dask scheduler` prints it") from None
    if parts.username is not None or parts.password is not None:
        raise ClusterError(f"--scheduler {shown}: a Dask scheduler's address holds no user "
                           "or password (Dask's TLS settings carry credentials)")
    if parts.scheme not in SCHEMES:
        raise ClusterError(f"--scheduler {shown}: {parts.scheme!r} is not a scheme Dask "
                           f"takes ({', '.join(SCHEMES)}); give tcp://HOST:PORT")
    if parts.scheme != "inproc" and (not parts.hostname or port is None or
                                     parts.path not in ("", "/") or parts.query):
        raise ClusterError(f"--scheduler {shown}: want SCHEME://HOST:PORT (tcp://HOST:8786, "
                           "as `dask scheduler` prints it)")
    return address


def shown_address(address: str) -> str:
    """An address as a message shows it: any password replaced by ``***``, the whole cut
    short and control characters escaped.

    >>> shown_address("tcp://ann:s3cret@host:8786"), shown_address("file://bo:pw@h/x")
    ('tcp://ann:***@host:8786', 'file://bo:***@h/x')
    """
    from batchrl.records import printable, redacted

    return printable(redacted(address), 120)


@contextmanager
def connect(address: str | None) -> Iterator[Any]:
    """A ``distributed.Client`` on ``address`` for the block (None: no cluster); one that
    does not answer as a scheduler within ``CONNECT_SECONDS`` (a web server there, say)
    is a `ClusterError`, never a wait without end."""
    if address is None:
        yield None
        return
    shown = shown_address(address)
    try:
        from distributed import Client
    except ImportError:
        raise ClusterError(f"--scheduler {shown}: dask.distributed is not installed "
                           f"({INSTALL})") from None
    made: dict[str, Any] = {}
    guard = threading.Lock()

    def make() -> None:
        try:
            client = Client(  # type: ignore[no-untyped-call]
                address, timeout=f"{CONNECT_SECONDS}s")
        except BaseException as exc:  # handed to the caller's thread
            made["error"] = exc
            return
        with guard:
            late = made.get("gave_up", False)
            if not late:
                made["client"] = client
        if late:  # the caller gave up on it: it must not linger as the default client
            client.close()  # type: ignore[no-untyped-call]

    maker = threading.Thread(target=make, name="batchrl-connect", daemon=True)
    maker.start()
    maker.join(CONNECT_SECONDS + 5)
    with guard:
        if "client" not in made and "error" not in made:
            made["gave_up"] = True
    if made.get("gave_up"):
        raise ClusterError(f"--scheduler {shown}: something listens there but did not answer "
                           f"as a Dask scheduler within {CONNECT_SECONDS + 5:g} s; start one "
                           f"with `dask scheduler` and workers with `dask worker {shown}`")
    if (exc := made.get("error")) is not None:
        if isinstance(exc, (OSError, TimeoutError, ValueError)):
            why = shown_address((str(exc).splitlines() or [type(exc).__name__])[0])
            raise ClusterError(f"--scheduler {shown}: no Dask scheduler answers there "
                               f"({why}); start one with `dask scheduler` and workers with "
                               f"`dask worker {shown}`") from None
        raise exc
    client = made["client"]
    try:
        yield client
    finally:
        client.close()


def workers(client: Any) -> int:
    """How many worker processes the cluster has (at least one)."""
    return max(1, len(client.scheduler_info().get("workers", {})))


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
        from distributed import as_completed

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
