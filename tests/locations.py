"""Where the tests find data: the bundled samples, and the real logs beside the checkout."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "datasets" / "samples"
SHARED_ACPC = ROOT.parent / "shared" / "data" / "acpc"

HEADS_UP_LIMIT_LOGS = (
    "dmorrill10__acpc_poker_gui_client__spec__support__dealer_logs__2p.limit.h1000.r0.log",
    "fding__evilpoker__project_acpc_server__matchName.log",
)
