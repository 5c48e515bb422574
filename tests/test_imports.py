"""The import direction the design fixes: parsers -> batchrl.games -> batchrl.store; the
command modules on top, nothing below importing them; no cycles between files.

Every import statement counts, those inside functions too (they run when the function
does), and for cycles those under ``if TYPE_CHECKING:`` too (a cycle only the type
checker walks is a cycle of the design all the same). So do the imports a module makes
by name at run time (a registry finding its packages, ``parsers`` importing its
formats): such a module declares them in ``__lazy_imports__`` (``"batchrl.games.*"``: each
module or package directly under ``batchrl.games``), and a module that imports by name
without declaring what is a failure here.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from locations import ROOT

# the commands, and the orchestrators at their level: ingest, and the benchmark (which
# builds its datasets by generating and ingesting logs, then learns and plays)
COMMANDS = ("batchrl.cli", "batchrl.cli.main", "batchrl.cli.common", "batchrl.cli.play",
            "batchrl.cli.export", "batchrl.cli.learn", "batchrl.cli.bench", "batchrl.ingest",
            "batchrl.play.bench", "batchrl.play.bench.datasets", "batchrl.play.bench.tasks",
            "batchrl.play.bench.outputs", "batchrl.play.bench.specs")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for folder in ("batchrl", "parsers")
            for p in sorted((ROOT / folder).rglob("*.py"))}


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def declared(tree: ast.AST) -> tuple[str, ...] | None:
    """A module's ``__lazy_imports__``: the modules it imports by name at run time (None:
    it declares none)."""
    for node in getattr(tree, "body", []):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__lazy_imports__" for t in targets):
                value = ast.literal_eval(node.value) if node.value is not None else ()
                return tuple(value)
    return None


def _expand(pattern: str, known: set[str]) -> set[str]:
    """``pkg.*``: the modules directly under ``pkg``; a name: itself."""
    if not pattern.endswith(".*"):
        return {pattern} & known
    prefix = pattern[:-1]
    return {k for k in known if k.startswith(prefix) and "." not in k[len(prefix):]}


def imports_by_name(tree: ast.AST) -> bool:
    """Whether a module imports modules by name at run time (``importlib.import_module``,
    ``pkgutil.iter_modules``, ``__import__``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            called = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if called in ("import_module", "iter_modules", "__import__"):
                return True
    return False


def imports_of(name: str, path: Path, known: set[str], typing: bool = False) -> set[str]:
    """The modules of ours that ``name`` imports (resolved to modules, not names), those
    it declares it imports by name at run time too; ``typing``: those imported for the
    type checker only too."""
    tree = ast.parse(path.read_text())
    skip = set() if typing else _type_checking_lines(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", 0) in skip:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([base] if base else [])])
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                       for a in node.names]
        out.update(t for t in targets if t in known and t != name)
    for pattern in declared(tree) or ():
        out.update(t for t in _expand(pattern, known) if t != name)
    return out


def graph(typing: bool = False) -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: imports_of(name, path, known, typing) for name, path in modules.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles_between_files():
    assert cycles(graph(typing=True)) == []


def test_games_import_neither_parsers_nor_the_commands_nor_a_cluster():
    """A game's evaluation runs its blocks through the `batchrl.blocks.Tasks` it is
    handed; the connection to a cluster is the commands' business."""
    wrong = {(name, target) for name, targets in graph(typing=True).items()
             if name.startswith("batchrl.games") for target in targets
             if target.split(".")[0] == "parsers" or target == "batchrl.cluster"
             or any(target == c or target.startswith(c + ".") for c in COMMANDS)}
    assert wrong == set()


def _command(name: str) -> bool:
    """A module of the commands' layer: every module under batchrl.cli, and the others
    COMMANDS names."""
    return name in COMMANDS or name.startswith("batchrl.cli.")


def test_nothing_below_the_commands_imports_them():
    below = [n for n in graph() if n.startswith("batchrl.") and not _command(n)
             and n not in ("batchrl.__main__",)]
    edges = graph()
    wrong = {(n, t) for n in below for t in edges[n] if _command(t)}
    # batchrl.play.experiments is a library of the thesis's experiments that ingests logs
    assert {(n, t) for n, t in wrong if n != "batchrl.play.experiments"} == set()


def test_games_import_no_learner_and_learners_no_game():
    """A game holds no learner code (it says which settings suit it, as data), and a
    learner knows no game: both meet in ``batchrl.policy`` and the store."""
    edges = graph(typing=True)
    wrong = {(n, t) for n, ts in edges.items() for t in ts
             if (n.startswith("batchrl.games") and t.startswith("batchrl.learners"))
             or (n.startswith("batchrl.learners")
                 and (t == "batchrl.games" or t.startswith("batchrl.games.")))}
    assert wrong == set()
    assert any(n.startswith("batchrl.learners.") for n in edges)  # the rule has subjects


def test_the_store_imports_no_game():
    wrong = {(n, t) for n, ts in graph().items() if n.startswith("batchrl.store")
             for t in ts if t.startswith("batchrl.games") or t.startswith("parsers")}
    assert wrong == set()


def test_the_graph_sees_imports_inside_functions(tmp_path: Path):
    module = tmp_path / "m.py"
    module.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a\n"
                      "def f():\n    import b\n    from c import d\n")
    assert imports_of("m", module, {"a", "b", "c", "c.d"}) == {"b", "c.d"}
    assert imports_of("m", module, {"a", "b", "c", "c.d"}, typing=True) == {"a", "b", "c.d"}


def test_a_module_that_imports_by_name_declares_what():
    """A registry's packages, found at run time, are arrows of the graph too: the module
    says which in ``__lazy_imports__`` (an empty one: only other people's modules)."""
    undeclared = [name for name, path in _modules().items()
                  if imports_by_name(ast.parse(path.read_text()))
                  and declared(ast.parse(path.read_text())) is None]
    assert undeclared == []


def test_the_registries_lazy_loads_are_followed():
    edges = graph()
    assert {"batchrl.learners.fqi", "batchrl.learners.bc"} <= edges["batchrl.learners"]
    assert {"batchrl.games.holdem", "batchrl.games.hanabi"} <= edges["batchrl.games"]
    assert "parsers.acpc" in edges["parsers"]


def test_the_graph_follows_declared_lazy_imports(tmp_path: Path):
    module = tmp_path / "m.py"
    module.write_text('import importlib\n__lazy_imports__ = ("p.*", "q")\n'
                      'def f(n):\n    return importlib.import_module(n)\n')
    known = {"p", "p.a", "p.b", "p.a.c", "q", "r"}
    assert imports_of("m", module, known) == {"p.a", "p.b", "q"}
    assert imports_by_name(ast.parse(module.read_text()))


def test_nothing_under_games_imports_the_play_wing():
    """Measuring policies by play (ablation, experiments, the benchmark) sits above the
    games: a game's own play face lives in its package."""
    wrong = {(n, t) for n, ts in graph(typing=True).items() if n.startswith("batchrl.games")
             for t in ts if t == "batchrl.play" or t.startswith("batchrl.play.")}
    assert wrong == set()
    assert "batchrl.play.bench" in graph()  # the rule has subjects


# what a game's rules core may not reach: the store, the policies and the learners, a
# cluster, the command line, the game's other faces and what plays them
NOT_BELOW_THE_RULES = ("batchrl.store", "batchrl.policy", "batchrl.learners", "batchrl.cluster",
                       "batchrl.blocks", "batchrl.cli", "batchrl.play", "batchrl.games.base",
                       "batchrl.games.play", "batchrl.games.search", "batchrl.evaluation")


def reach(edges: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others (not the packages above
    a module, which Python imports first: they are not arrows of the design)."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in edges.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_each_games_rules_core_imports_nothing_above_the_rules():
    """A game's ``game.py`` (its `batchrl.games.Rules`) stands below the store, the
    policies and every other face: anything can play the rules."""
    edges = graph(typing=True)
    cores = sorted(n for n in edges if n.startswith("batchrl.games.") and n.endswith(".game"))
    assert len(cores) >= 6  # the rule has subjects
    wrong = {(core, t) for core in cores for t in reach(edges, core)
             if any(t == m or t.startswith(m + ".") for m in NOT_BELOW_THE_RULES)
             or t.endswith(".faces") or (t in cores and t != core)}
    assert wrong == set()


def test_reach_follows_arrows_through_other_modules():
    assert reach({"a": {"b"}, "b": {"c"}, "c": {"a"}}, "a") == {"a", "b", "c"}


def imports_inside_functions(tree: ast.AST) -> list[ast.stmt]:
    return [n for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
            for n in ast.walk(fn) if isinstance(n, ast.Import | ast.ImportFrom)]


def test_an_import_inside_a_function_says_why():
    """Imports sit at the top of a module, where a reader sees them; one stays inside a
    function only to defer a heavy or optional dependency, with the reason beside it (on
    its line, or a comment line just above its block)."""
    silent = []
    for name, path in _modules().items():
        lines = path.read_text().splitlines()
        for node in imports_inside_functions(ast.parse(path.read_text())):
            above = [lines[i].strip() for i in range(node.lineno - 2, -1, -1)]
            block = next((a for a in above if not a.startswith(("import ", "from "))), "")
            if "#" not in lines[node.lineno - 1] and not block.startswith("#"):
                silent.append(f"{name}:{node.lineno}")
    assert silent == []


def test_a_silent_import_inside_a_function_is_found():
    tree = ast.parse("def f():\n    import json\n    return json\n")
    assert [n.lineno for n in imports_inside_functions(tree)] == [2]


def test_every_game_and_learner_loads_without_the_heavy_libraries():
    """A command that finds a game or a model's learner loads every package of both
    registries; none of them loads scikit-learn (seconds: `batchrl evaluate` of a network,
    or any command that only reads a model's kind, would wait for it), torch, matplotlib
    or Dask. A fresh interpreter: this one has them all loaded by now."""
    heavy = ("sklearn", "scipy", "torch", "matplotlib", "dask", "d3rlpy")
    code = ("import sys\n"
            "from batchrl.games import GAMES\n"
            "from batchrl.learners import LEARNERS\n"
            "assert len(list(GAMES.values())) >= 6 and 'fqi' in LEARNERS\n"
            f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
