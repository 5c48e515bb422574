"""Hostile inputs around the commands (issue 30), each one line and nothing leaked: a
store URL's password, a resume with nothing to resume, a store that grows while a model
learns from it, player names that would drive a terminal."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from locations import SAMPLES

from batchrl.cli import main
from batchrl.ingest import IngestConfig, ingest


def invoke(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_a_store_urls_password_is_never_shown() -> None:
    result = invoke("info", "file://alice:S3CRETPW@localhost/data/store")
    assert result.exit_code == 1 and "S3CRETPW" not in result.output
    assert "alice:***@localhost" in result.output


def test_a_resume_with_no_checkpoint_says_it_starts_at_the_first_iteration(
        tmp_path: Path) -> None:
    store = tmp_path / "s"
    ingest(IngestConfig(paths=(SAMPLES / "random_vs_random.2p.limit.log",), store=store))
    result = invoke("fqi", "--store", store, "--trees", 2, "--iters", 1, "--resume",
                    "--out", tmp_path / "m.npz")
    assert result.exit_code == 0, result.output
    assert f"--resume: no checkpoint at {tmp_path / 'm.npz.ckpt'}: starting at iteration 1" \
        in result.output


def test_a_model_records_the_store_as_it_read_it_not_as_it_grew(tmp_path: Path,
                                                                monkeypatch) -> None:
    """An ingest that lands while the trees grow is not recorded as data the model saw."""
    from fqi_runs import FQIRun, run_fqi

    from batchrl.games.holdem.logs import generate
    from batchrl.learners.fqi import FittedQIteration
    from batchrl.store import Store

    store = tmp_path / "s"
    ingest(IngestConfig(paths=(SAMPLES / "random_vs_random.2p.limit.log",), store=store))
    before = Store.open(store).info()
    more = tmp_path / "more.log"
    generate(more, ["random", "random"], 50, seed=3)
    fit = FittedQIteration.fit

    def fit_while_an_ingest_lands(self, *args, **kwargs):
        ingest(IngestConfig(paths=(more,), store=store))
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(FittedQIteration, "fit", fit_while_an_ingest_lands)
    _, artifact = run_fqi(FQIRun(store=store, trees=2, iters=1, jobs=1,
                                    out=tmp_path / "m.npz"))
    assert Store.open(store).info().episodes > before.episodes  # the store did grow
    assert artifact.meta["episodes"] == before.episodes
    assert artifact.meta["rows"] == before.rows


def test_player_names_are_shown_escaped_and_cut_short(tmp_path: Path) -> None:
    log = tmp_path / "h.log"
    lines = (SAMPLES / "random_vs_random.2p.limit.log").read_text().splitlines()
    evil = "\x1b[31m" + "\u202e" + "x" * 9800
    log.write_text("\n".join(line.replace("random-1", evil) for line in lines) + "\n")
    assert invoke("ingest", log, "--store", tmp_path / "s").exit_code == 0
    shown = invoke("info", tmp_path / "s").output
    names = next(line for line in shown.splitlines() if line.startswith("names"))
    assert "\x1b" not in names and "\u202e" not in names and "\\x1b[31m\\u202e" in names
    assert len(names) < 400 and "… (9,814 characters)" in names  # counted escaped
