"""Nothing from a log becomes a path: a player named like one gives file names, under the
store (or the --out given), that hold no separator and lead nowhere else."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from locations import SAMPLES

from batchrl.cli import main
from batchrl.filenames import inside, safe_name
from batchrl.learners import get_learner
from batchrl.learning import default_out
from batchrl.play.experiments import Hero
from batchrl.store import Store

EVIL = "../../../../tmp/x"


def invoke(*args: object) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


def test_a_player_named_like_a_path_writes_only_under_the_store(tmp_path: Path) -> None:
    # an ACPC STATE log whose second seat is named like a path
    log = tmp_path / "evil.log"
    log.write_text("".join(line.replace("random-2", EVIL) + "\n" for line in
                           (SAMPLES / "random_vs_random.2p.limit.log").read_text().splitlines()))
    store = tmp_path / "deep" / "er" / "store"
    invoke("ingest", log, "--store", store)
    assert EVIL in Store.open(store).names()
    before = files(tmp_path)

    said = invoke("fqi", "--store", store, "--player", EVIL, "--trees", "2", "--iters", "1")
    invoke("fqi", "--store", store, "--player", f"!{EVIL}", "--trees", "2", "--iters", "1")
    invoke("ablate", "--store", store, "--player", EVIL, "--trees", "2", "--iters", "1",
           "--hands", "4", "--features", "pv")
    made = files(tmp_path) - before
    assert (f"model in {store}/models/fqi-M2-nmin20-N1-player-{safe_name(EVIL)}.npz\n"
            in said)
    allowed = (store / "models", store / "ablation")
    assert made and all(p.is_relative_to(allowed[0]) or p.is_relative_to(allowed[1])
                        for p in made), sorted(map(str, made))
    # one folder deep in models/, results/ or ablation/ itself: no name made a folder
    assert all(p.parent in (store / "models", store / "ablation", store / "ablation" /
                            "models", store / "ablation" / "results") for p in made)
    assert not any(p.name.startswith("x") for p in made)
    assert not (tmp_path / "tmp").exists() and not (store / "tmp").exists()


def test_the_default_names_of_every_command_hold_no_path() -> None:
    store = Path("s")
    network = get_learner("network")
    out = default_out(store, network, network.config(hidden="8"),
                      [EVIL], [EVIL], [EVIL], EVIL)
    assert out.parent == store / "models" and "/" not in out.name
    hero = Hero(players=(EVIL,), drop=("../pv",))
    assert "/" not in hero.name and ".." not in hero.name
    assert safe_name(EVIL) != safe_name(EVIL.replace("/", "_"))  # no two names, one file


@pytest.mark.parametrize("name", ["../x", "a/b", "..", ""])
def test_inside_refuses_a_name_that_leads_out(name: str) -> None:
    with pytest.raises(ValueError, match="never becomes a path"):
        inside(Path("models"), name)
