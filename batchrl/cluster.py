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
tasks (`batchrl.blocks.Tasks`, made with the client `connect` gives) and puts their
results together in order (`batchrl.blocks`: a block's seeds, the tasks, a model read
once per worker).

"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from batchrl.blocks import ClusterError as ClusterError
from batchrl.records import printable, redacted

ENV = "BATCHRL_SCHEDULER"
INSTALL = "pip install 'batchrl[dask]'"


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
    batchrl.blocks.ClusterError: --scheduler tcp://ann:***@10.0.0.5:8786: a Dask ...
    """
    address = given or os.environ.get(ENV) or None
    if address is None:
        return None

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
        from distributed import Client  # dask: the cluster extra, loaded only to connect
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
