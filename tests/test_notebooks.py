"""The notebooks run (at a tiny scale, so they cannot rot) and their committed outputs are a
full run's."""

import importlib.util

import nbformat
import pytest
from locations import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _runner():
    spec = importlib.util.spec_from_file_location("run_notebook", ROOT / "scripts" /
                                                  "run_notebook.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_at_tiny_scale(path, tmp_path):
    out = _runner().run(path, scale="tiny", out=tmp_path / path.name, timeout=600)
    nb = nbformat.read(out, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.outputs for c in code)
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    assert "scale tiny" in "".join(o.get("text", "") for o in code[0].outputs)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_notebook_holds_a_full_run(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs for c in code), "execute it: python scripts/run_notebook.py " + str(path)
    assert "scale full" in "".join(o.get("text", "") for o in code[0].outputs)
    figures = [o for c in code for o in c.outputs if "image/png" in o.get("data", {})]
    assert len(figures) >= 2
