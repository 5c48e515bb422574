"""The shared data beside the checkout is named one way: its paths are made in
``tests/locations.py`` only, and every test that skips for want of it says why with
``locations.absent``, naming it from the checkout (``../shared/data/...``), as the docs do."""

from __future__ import annotations

import ast
from pathlib import Path

import locations
from locations import ROOT

TESTS = ROOT / "tests"


def _skips(tree: ast.AST) -> list[ast.expr]:
    """The reasons of every ``pytest.skip(...)`` and ``pytest.mark.skipif(...)`` call."""
    reasons: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            said = [k.value for k in node.keywords if k.arg in ("reason", "msg")]
            if node.func.attr == "skip":
                reasons += said or node.args[:1]
            elif node.func.attr == "skipif":
                reasons += said
    return reasons


def test_the_shared_data_is_named_one_way_in_every_skip_reason() -> None:
    checked = 0
    for path in sorted(TESTS.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        where = path.relative_to(ROOT)
        if path.name not in ("locations.py", Path(__file__).name):
            docs = {id(n.body[0].value) for n in ast.walk(tree)
                    if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef) and n.body
                    and isinstance(n.body[0], ast.Expr)}
            assert not any(isinstance(n, ast.Constant) and isinstance(n.value, str) and
                           (n.value == "shared" or "shared/data" in n.value) and
                           id(n) not in docs for n in ast.walk(tree)), \
                f"{where}: a path into the shared data of its own: take it from locations.py"
        checked += sum(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and
                       n.func.id in ("absent", "needs") for n in ast.walk(tree))
        for reason in _skips(tree):
            if isinstance(reason, ast.Call) and isinstance(reason.func, ast.Name) and \
                    reason.func.id == "absent":
                continue
            text = ast.unparse(reason)
            assert "shared" not in text.lower(), \
                f"{where}:{reason.lineno}: say it with locations.absent(PATH): {text}"
    assert checked >= 5  # the ACPC logs, the Hanabi exports and Eger's games, each skip
    for name in dir(locations):
        path = getattr(locations, name)
        if name.startswith("SHARED") and isinstance(path, Path):
            named = f"../{path.relative_to(ROOT.parent).as_posix()}"
            assert named.startswith("../shared/data"), name
            assert locations.absent(path).startswith(f"{named} is absent: "), name
