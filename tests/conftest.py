"""Shared fixtures: the bundled samples, and the real logs in ../shared/data when present."""

from __future__ import annotations

from pathlib import Path

import pytest
from locations import SAMPLES, SHARED_ACPC, absent


@pytest.fixture
def shared_acpc() -> Path:
    if not SHARED_ACPC.is_dir():
        pytest.skip(absent(SHARED_ACPC))
    return SHARED_ACPC


@pytest.fixture
def sample_log() -> Path:
    return SAMPLES / "random_vs_random.2p.limit.log"


@pytest.fixture
def sample_summary() -> Path:
    return SAMPLES / "ROOM_90.dealer.summary"
