"""Execute a notebook in place, outputs and all, at a given scale.

    python scripts/run_notebook.py notebooks/thesis_reproduction.ipynb            # full run
    python scripts/run_notebook.py notebooks/thesis_reproduction.ipynb --scale tiny \
        --out /tmp/x.ipynb

The notebook reads the scale from ``BATCHRL_NOTEBOOK_SCALE``; it runs with the
notebooks/ folder as its working directory, so its cached runs land in
notebooks/runs/ (ignored by git).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient
from nbformat.v4 import new_notebook

# The notebooks' way to run the command line, a cell's source: what a user types, cached
# (a step whose result ``out`` exists is not run again)
CLI_HELPER = '''\
def batchrl(*args, out=None):
    """Run a batchrl command unless ``out`` (its result) exists; its output."""
    if out is not None and Path(out).exists():
        return f"(cached) {out}"
    done = subprocess.run([sys.executable, "-m", "batchrl", *map(str, args)],
                          capture_output=True, text=True)
    if done.returncode:
        print(done.stdout[-3000:], done.stderr[-3000:])
        raise RuntimeError(f"batchrl {args[0]} failed ({done.returncode})")
    return done.stdout'''


def write(cells: list[Any], out: Path) -> Path:
    """A notebook of ``cells`` (no outputs) for the python3 kernel, written to ``out``."""
    nb = new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}})
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out)
    return out


def run(path: Path, scale: str = "full", out: Path | None = None, timeout: int = 7200) -> Path:
    nb = nbformat.read(path, as_version=4)
    before = os.environ.get("BATCHRL_NOTEBOOK_SCALE")
    os.environ["BATCHRL_NOTEBOOK_SCALE"] = scale  # the kernel inherits it
    try:
        NotebookClient(nb, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    finally:
        if before is None:
            os.environ.pop("BATCHRL_NOTEBOOK_SCALE", None)
        else:
            os.environ["BATCHRL_NOTEBOOK_SCALE"] = before
    target = out or path
    nbformat.write(nb, target)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--scale", default="full", choices=["full", "tiny"])
    parser.add_argument("--out", type=Path, default=None, help="default: in place")
    args = parser.parse_args()
    started = time.perf_counter()
    target = run(args.notebook, args.scale, args.out)
    print(f"{target}: executed at {args.scale} scale in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
