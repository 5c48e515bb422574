"""Where the tests find data: the bundled samples, and the real logs beside the checkout
(``../shared/data``, named so in every skip reason: `absent`)."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "datasets" / "samples"
SHARED = ROOT.parent / "shared" / "data"
SHARED_ACPC = SHARED / "acpc"
SHARED_HANABI = SHARED / "hanabi"
SHARED_EGER = SHARED_HANABI / "eger_hanabidata" / "log"

HEADS_UP_LIMIT_LOGS = (
    "dmorrill10__acpc_poker_gui_client__spec__support__dealer_logs__2p.limit.h1000.r0.log",
    "fding__evilpoker__project_acpc_server__matchName.log",
)


def absent(path: Path) -> str:
    """Why a test that reads ``path`` of the shared data skips: ``path`` named from the
    checkout (``../shared/data/hanabi``), the same on every machine."""
    return (f"../{path.relative_to(ROOT.parent).as_posix()} is absent: the real logs live "
            "beside the team's checkouts, not in a user's clone")


def needs(path: Path) -> pytest.MarkDecorator:
    """Skip a test where ``path`` of the shared data is absent, saying so (`absent`)."""
    return pytest.mark.skipif(not path.is_dir(), reason=absent(path))
