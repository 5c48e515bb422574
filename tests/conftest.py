"""Shared fixtures: the bundled samples, and the real logs in ../shared/data when present."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from locations import SAMPLES, SHARED_ACPC, absent


@pytest.fixture
def shared_acpc() -> Path:
    if not SHARED_ACPC.is_dir():
        pytest.skip(absent(SHARED_ACPC))
    return SHARED_ACPC


@pytest.fixture
def fork_beside_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Earlier tests leave joblib's idle pool threads in this process, and an ingest's
    readers are not forked beside other threads (tests/test_forked.py): let them be
    forked here anyway."""
    # the check is private: the readers' own tests hold it to its word
    import batchrl.forked

    monkeypatch.setattr(batchrl.forked, "_alone", lambda: True)


@pytest.fixture
def counted_pools(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every pool of reading processes started while the test runs, in order, each with
    the tasks handed to it (``tasks``, the one that starts it included) and whether it
    was shut down (``closed``)."""
    # the pool class is the readers' own: counted where they make it
    import batchrl.forked

    pools: list[Any] = []

    class Counted(batchrl.forked.ProcessPoolExecutor):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.tasks, self.closed = 0, False
            pools.append(self)

        def submit(self, *args: Any, **kwargs: Any) -> Any:
            self.tasks += 1
            return super().submit(*args, **kwargs)

        def shutdown(self, *args: Any, **kwargs: Any) -> None:
            self.closed = True
            super().shutdown(*args, **kwargs)

    monkeypatch.setattr(batchrl.forked, "ProcessPoolExecutor", Counted)
    return pools


@pytest.fixture
def sample_log() -> Path:
    return SAMPLES / "random_vs_random.2p.limit.log"


@pytest.fixture
def sample_summary() -> Path:
    return SAMPLES / "ROOM_90.dealer.summary"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true",
                     help="Also run the tests marked slow (training, notebooks, clusters, "
                          "fuzzers at CI size): CI and the README's test command do; a "
                          "developer's loop leaves them out.")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave the slow tests out unless ``--slow`` is given, or a ``-m`` or ``-k``
    expression or a test named by its id (``file.py::test``) chooses for itself."""
    if config.getoption("--slow") or config.getoption("markexpr") or \
            config.getoption("keyword") or any("::" in arg for arg in config.args):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]
