"""The documentation: the site builds strict (a broken link or a missing page fails), the
README stays a landing page, and every command the README and the getting-started page
show runs, as written, so a stale path or flag fails here before a user meets it."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from locations import ROOT

from batchrl.cli import main

PAGES = [ROOT / "README.md", ROOT / "docs" / "getting-started.md"]


@pytest.mark.slow
def test_the_site_builds_strict(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="the docs need the docs extra (mkdocs)")
    for module, package in (("mkdocs_click", "mkdocs-click"), ("mkdocstrings", "mkdocstrings"),
                            ("mkdocs_jupyter", "mkdocs-jupyter")):
        pytest.importorskip(module, reason=f"the docs need the docs extra ({package})")
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                            "-f", str(ROOT / "mkdocs.yml"), "-d", str(tmp_path / "site")],
                           capture_output=True, text=True, cwd=ROOT,
                           env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert built.returncode == 0, built.stdout + built.stderr
    assert (tmp_path / "site" / "games" / "tressette" / "index.html").exists()
    commands = (tmp_path / "site" / "cli" / "index.html").read_text()
    with click.Context(main) as ctx:  # every command, those its modules define when asked
        for name in main.list_commands(ctx):
            assert f"batchrl {name}" in commands, name
    # the API reference is read from the docstrings: the Game protocol's methods are there
    games = (tmp_path / "site" / "reference" / "games" / "index.html").read_text()
    assert "sample_worlds" in games and "legal_actions" in games
    # docstrings in Google's style: the reference shows their parameters as tables
    for page in ("games", "store", "policy", "learners", "search"):
        html = (tmp_path / "site" / "reference" / page / "index.html").read_text()
        assert ">Parameters:<" in html and ">Returns:<" in html, page
    # every notebook is rendered, with the outputs it was committed with
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        page = tmp_path / "site" / "notebooks" / notebook.stem / "index.html"
        assert page.exists(), f"{notebook.name}: not in the site (link it under docs/notebooks)"


def test_every_notebook_is_linked_into_the_docs_and_listed_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        linked = ROOT / "docs" / "notebooks" / notebook.name
        assert linked.is_symlink() and linked.resolve() == notebook.resolve(), (
            f"docs/notebooks/{notebook.name} should link to ../../notebooks/{notebook.name}")
        assert f"notebooks/{notebook.name}" in nav, f"{notebook.name}: not in mkdocs.yml's nav"


def test_the_readme_is_a_landing_page_linking_into_the_docs() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).is_file(), link


def _blocks(page: Path, kinds: tuple[str, ...]) -> list[str]:
    return re.findall(rf"```(?:{'|'.join(kinds)})\n(.*?)```", page.read_text(), re.S)


def _commands(page: Path) -> list[tuple[list[str], list[str] | None]]:
    """Each ``batchrl`` command the page shows, with the lines it shows it printing: the
    ``$ batchrl …`` lines of its console blocks (each followed by its output, or by the
    next command where none is shown), and the ``.venv/bin/batchrl …`` steps of its shell
    one-liners (not the install steps, nor the test command, which is this suite; None:
    what they print is the text block after them, `_printed`)."""
    out: list[tuple[list[str], list[str] | None]] = []
    shown: list[str] = []
    for block in _blocks(page, ("console",)):
        for line in block.splitlines():
            if line.startswith("$ "):  # every command shown is one of ours, collected
                assert line.startswith("$ batchrl "), f"{page}: {line}: not run by this test"
                shown = []
                out.append((shlex.split(line[2:], comments=True)[1:], shown))
            else:
                shown.append(line)
    for block in _blocks(page, ("sh",)):
        for step in block.strip().split(" && "):
            if step.startswith(".venv/bin/batchrl "):
                out.append((shlex.split(step, comments=True)[1:], None))
    text = page.read_text()
    blocks = re.findall(r"```(\w*)\n", text)
    assert set(blocks) <= {"sh", "console", "python", "text", ""}, \
        f"{page}: a code block of another kind ({set(blocks)}): say how this test runs it"
    return out


def _printed(page: Path) -> list[str]:
    """The text block after the page's first shell one-liner: what its commands print
    (all of it, or the lines it ends with)."""
    after = page.read_text().split("```sh\n", 1)[1]
    return re.findall(r"```text\n(.*?)```", after, re.S)[0].splitlines()


def _steady(lines: list[str]) -> list[str]:
    """``lines`` with what varies from run to run masked (seconds, speeds, the seconds
    column of fqi's table), trailing blank lines gone."""
    out = [re.sub(r"\d[\d,]*(\.\d+)? (s\b|hands/s)", r"# \2", line) for line in lines]
    # the seconds column, its padding too: a slow iteration's 10.2 is a column wider
    out = [re.sub(r" +\d+\.\d+(  (frozen|refit))$", r" #\1", line) for line in out]
    while out and not out[-1].strip():
        out.pop()
    return out


def _base_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a base install (``pip install -e .``): matplotlib, the one extra library
    these commands look for (fqi's curves), is not there."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # find_spec None, import fails


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_command_a_page_shows_runs_as_written(page: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """In a copy of the repository's bundled samples, /tmp/demo standing for a folder of
    the test's own, on a base install; the commands in order, each ending well and
    printing what the page shows it print: a console block's output whole, the text
    block after the one-liner as the lines (all, or the last) its commands print."""
    commands = _commands(page)
    assert len(commands) >= 4
    work = tmp_path / "repo"
    shutil.copytree(ROOT / "datasets" / "samples", work / "datasets" / "samples")
    monkeypatch.chdir(work)
    _base_install(monkeypatch)
    demo = str(tmp_path / "demo")
    one_liner: list[str] = []
    for args, shown in commands:
        args = [a.replace("/tmp/demo", demo) for a in args]
        result = CliRunner().invoke(main, args, catch_exceptions=False)
        assert result.exit_code == 0, f"batchrl {shlex.join(args)}\n{result.output}"
        printed = _steady(result.output.splitlines())
        if shown is None:
            one_liner += printed
        elif shown:
            assert _steady([x.replace("/tmp/demo", demo) for x in shown]) == printed, \
                f"{page}: batchrl {shlex.join(args)} prints:\n" + result.output
    shown = _steady(_printed(page))
    assert shown and one_liner[-len(shown):] == shown, \
        f"{page}: the one-liner's commands print:\n" + "\n".join(one_liner)
    for block in _blocks(page, ("python",)):
        exec(compile(block.replace("/tmp/demo", demo), str(page), "exec"), {})


def test_a_recipe_s_model_is_the_one_its_fqi_line_writes() -> None:
    """Where a page runs ``batchrl fqi --store S`` with the game's own settings and then
    plays ``S/models/NAME.npz``, NAME is the default name of those settings (a recipe
    that names a file fqi no longer writes fails here)."""
    from batchrl.games import GAMES
    from batchrl.learners import get_learner
    from batchrl.learning import default_out

    checked = 0
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for block in _blocks(page, ("console",)):
            lines = [x[2:] for x in block.splitlines() if x.startswith("$ batchrl ")]
            for i, line in enumerate(lines):
                args = line.split("#")[0].split()
                if args[1:2] != ["fqi"] or len(args) != 4 or args[2] != "--store":
                    continue
                store = args[3]
                later = " ".join(lines[i + 1:])
                named = re.search(rf"{re.escape(store)}/models/([\w.-]+\.npz)", later)
                game = re.search(r"--game ([\w-]+)", " ".join(lines))
                if named is None:
                    continue
                # the recipes are of the games' default params
                s = GAMES[game.group(1) if game else "holdem"].learn.settings_for("fqi")
                fqi = get_learner("fqi")
                config = fqi.config(**{k: v for k, v in s.items()
                                       if k not in ("features", "drop")})
                path = default_out(Path(store), fqi, config, s.get("features"),
                                   s.get("drop", ()), ())
                assert path.name == named.group(1), f"{page}: {line}"
                checked += 1
    assert checked >= 4


def test_the_interop_pages_environment_snippet_runs_as_written() -> None:
    """The first Python block of docs/interop.md, as a user pastes it."""
    pytest.importorskip("pettingzoo", reason="the environments need the envs extra")
    pytest.importorskip("gymnasium", reason="the environments need the envs extra")
    page = (ROOT / "docs" / "interop.md").read_text()
    snippet = page.split("```python\n", 1)[1].split("```", 1)[0]
    scope: dict[str, object] = {}
    exec(compile(snippet, "docs/interop.md", "exec"), scope)
    assert scope["obs"] is not None and "seat" in scope


CPU_TORCH = "pip install torch --index-url https://download.pytorch.org/whl/cpu"
CPU_SECTION = "torch-on-a-machine-without-a-gpu"  # docs/interop.md's, by its anchor


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[;\s]", requirement.strip(), maxsplit=1)[0].lower()


def _brings_torch(requirement: str) -> bool:
    """Whether installing ``requirement`` installs torch: it is torch, or (as installed
    here) it requires torch."""
    if _name(requirement) == "torch":
        return True
    try:
        needs = metadata.requires(_name(requirement)) or []
    except metadata.PackageNotFoundError:
        return False
    return any(_name(r) == "torch" and "extra ==" not in r for r in needs)


def test_the_extras_that_bring_torch_say_how_to_get_its_cpu_build() -> None:
    """pip gives Linux PyPI's CUDA build of torch (gigabytes) for any extra that brings it.
    docs/interop.md shows the CPU build installed first, then each such extra; every
    page that installs one points there; the torch it measures is the test extra's pin;
    nothing tells a user to install torch from PyPI."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    torch_extras = {name for name, needs in extras.items()
                    if name != "test" and any(map(_brings_torch, needs))}
    assert {"export", "imitation"} <= torch_extras
    part = re.search(r"^#+ Torch on a machine without a GPU\n(.*?)(?=^#+ |\Z)",
                     (ROOT / "docs" / "interop.md").read_text(), re.M | re.S)
    assert part, f"docs/interop.md: no section '{CPU_SECTION}'"  # its links: a strict build
    section = part.group(1)
    recipe = next((b for b in re.findall(r"```sh\n(.*?)```", section, re.S) if CPU_TORCH in b),
                  None)
    assert recipe, f"docs/interop.md: the section shows no {CPU_TORCH}"
    for extra in torch_extras:
        assert re.search(rf"\.\[([\w,]+,)?{extra}[\],]", recipe.split(CPU_TORCH, 1)[1]), \
            f"docs/interop.md: the CPU recipe does not install the {extra} extra after torch"
    (pin,) = [r for r in extras["test"] if _name(r) == "torch"]
    assert f"torch {pin.split('==')[1]}" in section, f"the section measures another torch: {pin}"
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = page.read_text()
        if page.name != "interop.md" and any(f".[{e}]" in text for e in torch_extras):
            assert f"interop.md#{CPU_SECTION}" in text, \
                f"{page.relative_to(ROOT)}: installs torch's extra, not linking the CPU recipe"
    for path in [*sorted((ROOT / "batchrl").rglob("*.py")),
                 *sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]:
        for said in re.findall(r"pip install torch[^\s)\"'`,:;]*(?: --index-url https?://[\w./-]+)?",
                                path.read_text()):
            assert said == CPU_TORCH, f"{path.relative_to(ROOT)}: {said}: PyPI's CUDA torch"


def test_the_docs_extra_builds_the_site_as_the_tests_do() -> None:
    """The docs extra is the packages the tests build the site with, a formatter of
    signatures among them: mkdocstrings formats long signatures with Ruff or Black, and
    without either says so at every build (and shows them unformatted)."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    docs = {_name(r) for r in extras["docs"]}
    assert docs & {"ruff", "black"}, "the docs extra brings no formatter of signatures"
    assert docs <= {_name(r) for r in extras["test"]}
