"""The suite's two runs: ``pytest`` leaves the tests marked slow out (a developer's loop),
``pytest --slow`` (CI, the README's test command) runs them too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _collected(*args: str) -> list[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:cacheprovider", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if "::" in line]


@pytest.mark.slow
def test_the_loop_leaves_the_slow_tests_out_and_ci_runs_them() -> None:
    fast = _collected("tests/test_luck.py")
    every = _collected("tests/test_luck.py", "--slow")
    slow = set(every) - set(fast)
    assert fast and slow and set(fast) < set(every)
    assert "tests/test_luck.py::test_the_luck_goes_and_the_mean_stays" in slow
    # a slow test named by its id runs without --slow
    named = _collected("tests/test_luck.py::test_the_luck_goes_and_the_mean_stays")
    assert named == ["tests/test_luck.py::test_the_luck_goes_and_the_mean_stays"]


def test_ci_and_the_readme_run_the_slow_tests() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    command = next(line for line in ci.splitlines() if "pytest" in line)
    assert "pytest --slow -n auto" in command and command in readme
