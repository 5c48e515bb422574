"""Other libraries' noise stays out of a user's terminal and folders: d3rlpy loaded by
batchrl prints neither gym's "unmaintained" notice nor d3rlpy's info lines, and the
interop page's training leaves no ``d3rlpy_logs/`` in the current directory."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from locations import ROOT, SAMPLES

from batchrl.export import export
from batchrl.ingest import IngestConfig, ingest

GYM_NOTICE = "Gym has been unmaintained"
INFO = re.compile(r"\[\s*info\s*\]")  # a structlog info line (d3rlpy's log)
SHOWN = "--- shown ---"


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter (d3rlpy not yet imported), from ``cwd``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(cwd)])}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                          text=True, env=env, timeout=300)


def _plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


@pytest.mark.slow
def test_d3rlpy_as_the_interop_page_uses_it_is_quiet_and_writes_no_logs(tmp_path: Path) -> None:
    """The page's d3rlpy lines as written (a short fit): the load prints nothing at all,
    the fit writes no d3rlpy_logs/; then its foreign policy plays in ``evaluate``
    without gym's notice or d3rlpy's info lines."""
    pytest.importorskip("d3rlpy", reason="the export extra (d3rlpy) is not installed")
    page = (ROOT / "docs" / "interop.md").read_text()
    block = re.findall(r"```python\n(.*?)```", page, re.S)[1]
    lines = block[block.index("from batchrl.export import load_d3rlpy"):].splitlines()
    load, fit = [], []
    for line in lines[:next(i for i, x in enumerate(lines) if x.startswith("import pandas"))]:
        (fit if fit or line.startswith("import d3rlpy") else load).append(line)
    ingest(IngestConfig(paths=(SAMPLES / "ROOM_90.dealer.summary",), store=tmp_path / "st"))
    export(tmp_path / "st", "d3rlpy", tmp_path / "exports" / "demo-d3rlpy")
    shown = f"print({SHOWN!r}); print({SHOWN!r}, file=sys.stderr)"
    code = "\n".join(["import sys", *load, shown, *fit, 'algo.save("cql.d3")'])
    assert "n_steps=10_000" in code
    ran = _python(code.replace("n_steps=10_000", "n_steps=10, n_steps_per_epoch=10"),
                  tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith(SHOWN) and ran.stderr.startswith(SHOWN), \
        f"loading an export printed:\n{ran.stdout}{ran.stderr}"
    assert not (tmp_path / "d3rlpy_logs").exists()
    play = re.search(r"```python\n# play.py\n(.*?)```", page, re.S)
    assert play is not None
    (tmp_path / "play.py").write_text(play.group(1))
    ran = _python("from batchrl.cli import main; main(['evaluate', '--model', "
                  "'python:play:cql', '--hands', '20'])", tmp_path)
    said = _plain(ran.stdout + ran.stderr)
    assert "hands      20" in said, said
    assert GYM_NOTICE not in said and not INFO.search(said), said
    assert not (tmp_path / "d3rlpy_logs").exists()
