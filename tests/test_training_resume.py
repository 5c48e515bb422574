"""A checkpoint is tied to its data: ``fqi --resume`` on other data (rows added, another
player, other features) is refused, saying what changed; on the same data it gives what
an uninterrupted run gives."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from fqi_runs import FQIRun, run_fqi
from locations import SAMPLES

from batchrl.cli import main
from batchrl.games.holdem.logs import generate
from batchrl.ingest import IngestConfig, ingest
from batchrl.learners.fqi.model import ModelArtifact
from batchrl.store import Store


class Killed(Exception):
    """The run dies after its first iteration (its checkpoint written)."""


def die_after_first(config: FQIRun) -> None:
    def die(_: object) -> None:
        raise Killed

    with pytest.raises(Killed):
        run_fqi(config, on_iteration=die)
    assert (config.out.with_name(config.out.name + ".ckpt") / "checkpoint.npz").exists()


def q_of(artifact: ModelArtifact, store: Path) -> np.ndarray:
    data = Store.open(store).arrays(features=artifact.meta["feature_names"])
    return artifact.q.q_values(data.state)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    ingest(IngestConfig(paths=(SAMPLES / "random_vs_random.2p.limit.log",), store=root))
    return root


def test_resume_on_the_same_data_gives_the_uninterrupted_model(store: Path,
                                                               tmp_path: Path) -> None:
    config = FQIRun(store=store, trees=3, nmin=20, iters=3, players=("random-1",), jobs=1,
                       out=tmp_path / "resumed.npz")
    die_after_first(config)
    _, resumed = run_fqi(replace(config, resume=True))
    _, whole = run_fqi(replace(config, out=tmp_path / "whole.npz"))
    np.testing.assert_array_equal(q_of(resumed, store), q_of(whole, store))
    assert resumed.meta["history"][1:] == [
        h | {"seconds": r["seconds"]} for h, r in zip(whole.meta["history"][1:],
                                                      resumed.meta["history"][1:], strict=True)]


def test_resume_on_other_data_is_refused_saying_what_changed(store: Path,
                                                             tmp_path: Path) -> None:
    config = FQIRun(store=store, trees=3, nmin=20, iters=3, players=("random-1",), jobs=1,
                       out=tmp_path / "m.npz")
    die_after_first(config)
    resume = replace(config, resume=True)
    with pytest.raises(ValueError, match=r"made on other data than this run's: rows \d+ then, "
                                         r"\d+ now; players \['random-1'\] then, "
                                         r"\['random-2'\] now; run without --resume"):
        run_fqi(replace(resume, players=("random-2",)))
    with pytest.raises(ValueError, match=r"other data than this run's: features: removed pv;"):
        run_fqi(replace(resume, drop=("pv",)))
    with pytest.raises(ValueError, match=r"other data than this run's: support None then, "
                                         r"0.5 now"):
        run_fqi(replace(resume, support=0.5))
    more = tmp_path / "more.log"
    generate(more, ["random", "random"], 200, seed=5)
    ingest(IngestConfig(paths=(more,), store=store))
    with pytest.raises(ValueError, match=rf"rows \d+ then, \d+ now; sources: added {more}"):
        run_fqi(resume)
    # the command says it in one line, before any iteration
    result = CliRunner().invoke(main, ["fqi", "--store", str(store), "--trees", "3", "--nmin",
                                       "20", "--iters", "3", "--player", "random-1", "--jobs",
                                       "1", "--out", str(config.out), "--resume"],
                                catch_exceptions=False)
    assert result.exit_code == 1 and "bellman residual" not in result.output
    assert f"Error: the checkpoint in {config.out}.ckpt was made on other data" in result.output


def test_fqi_never_deletes_or_writes_into_a_directory_it_did_not_make(tmp_path):
    """``--out X`` checkpoints into ``X.ckpt``: a directory of the user's there (or a link,
    or a file) is refused by name and left as it was."""
    from batchrl.learners.fqi.checkpoints import CHECKPOINT_MARKER, checkpoint_directory

    mine = tmp_path / "m.npz.ckpt"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work")
    with pytest.raises(ValueError, match=r"m\.npz\.ckpt exists and batchrl fqi did not make it"):
        checkpoint_directory(mine, resume=False)
    assert (mine / "thesis.tex").read_text() == "years of work"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "l.npz.ckpt"
    link.symlink_to(elsewhere)
    with pytest.raises(ValueError, match="is a symbolic link, not a checkpoint directory"):
        checkpoint_directory(link, resume=False)
    (tmp_path / "f.npz.ckpt").write_text("a file")
    with pytest.raises(ValueError, match="is not a directory"):
        checkpoint_directory(tmp_path / "f.npz.ckpt", resume=True)
    made = tmp_path / "ok.npz.ckpt"
    checkpoint_directory(made, resume=False)  # made, marked, and emptied when run again
    (made / "checkpoint.npz").write_text("stale")
    checkpoint_directory(made, resume=False)
    assert sorted(p.name for p in made.iterdir()) == [CHECKPOINT_MARKER]
    empty = tmp_path / "empty.npz.ckpt"
    empty.mkdir()  # an empty directory holds nothing to lose: taken
    checkpoint_directory(empty, resume=False)
    assert (empty / CHECKPOINT_MARKER).is_file() and elsewhere.exists()


def test_a_checkpoint_is_checked_whole_before_a_resume_trusts_it(store: Path,
                                                                 tmp_path: Path) -> None:
    """Each edit an attacker (or an accident) can make to a checkpoint: its count of
    iterations, its trees swapped for another run's, a link or a pipe in their place,
    its trees said to be set aside with no values, its digests gone. Each is refused in
    one line before any iteration; the untouched checkpoint resumes."""
    import os
    import shutil

    from batchrl.learners.fqi.checkpoints import ASIDE, CHECKPOINT
    from batchrl.modelfile import read, write

    config = FQIRun(store=store, trees=3, nmin=20, iters=3, jobs=1, out=tmp_path / "m.npz")
    die_after_first(config)
    other = replace(config, out=tmp_path / "o.npz", seed=9)
    die_after_first(other)
    ckpt, kept = tmp_path / "m.npz.ckpt", tmp_path / "kept"
    shutil.copytree(ckpt, kept)

    def edited(change):
        shutil.rmtree(ckpt)
        shutil.copytree(kept, ckpt)
        state, arrays = read(ckpt / CHECKPOINT, "fqi-checkpoint")
        state.pop("format"), state.pop("kind")
        change(state)
        write(ckpt / CHECKPOINT, "fqi-checkpoint", state, arrays)
        with pytest.raises(ValueError) as caught:
            run_fqi(replace(config, resume=True))
        return str(caught.value)

    for done in (2, 99, -1, 10 ** 18, "x", 0):
        assert "says" in edited(lambda s, d=done: s.update(done=d)) and "iterations" in \
            edited(lambda s, d=done: s.update(done=d))
    assert "holds the figures of 0 iterations" in edited(lambda s: s.update(history=[]))
    assert "keeps no leaf values" in edited(lambda s: s.update(models=ASIDE, aside=[0]))
    assert "records no digests" in edited(lambda s: s.pop("digests"))
    assert "not a file it writes by iteration 1" in edited(
        lambda s: s.update(models="models-2.npz"))

    def swapped(state):
        (ckpt / "models-1.npz").unlink()
        shutil.copy(tmp_path / "o.npz.ckpt" / "models-1.npz", ckpt / "models-1.npz")

    assert "its digest differs: another run's, or changed" in edited(swapped)
    assert "a link, a pipe, or missing" in edited(
        lambda s: ((ckpt / "models-1.npz").unlink(),
                   (ckpt / "models-1.npz").symlink_to(tmp_path / "o.npz.ckpt" / "models-1.npz")))
    assert "a link, a pipe, or missing" in edited(
        lambda s: ((ckpt / "models-1.npz").unlink(), os.mkfifo(ckpt / "models-1.npz")))
    shutil.rmtree(ckpt)
    shutil.copytree(kept, ckpt)
    _, resumed = run_fqi(replace(config, resume=True))  # the untouched one goes on
    assert len(resumed.meta["history"]) == 3


def test_fast_mode_stopped_where_its_trees_froze_resumes_to_the_same_model(
        store: Path, tmp_path: Path) -> None:
    """Stopped after the iteration whose trees freeze (no leaf values recorded yet): the
    resume failed with zip()'s error before; it now gives the uninterrupted model."""
    config = FQIRun(store=store, trees=3, nmin=20, iters=3, jobs=1, per_action=True,
                       freeze_after=1, out=tmp_path / "fast.npz")
    die_after_first(config)
    _, resumed = run_fqi(replace(config, resume=True))
    _, whole = run_fqi(replace(config, out=tmp_path / "whole.npz"))
    np.testing.assert_array_equal(q_of(resumed, store), q_of(whole, store))


def test_a_fast_mode_checkpoint_s_leaf_values_are_checked_against_its_trees(
        store: Path, tmp_path: Path) -> None:
    """The leaf values a fast-mode checkpoint keeps beside its frozen trees: too few, too
    many, or not finite, each refused in one line (a shorter array was taken in part and a
    longer one cut short without a word); the untouched one resumes to the whole run."""
    import shutil

    from batchrl.learners.fqi.checkpoints import CHECKPOINT
    from batchrl.modelfile import read, write

    config = FQIRun(store=store, trees=3, nmin=20, iters=3, jobs=1, per_action=True,
                       freeze_after=1, out=tmp_path / "fast.npz")
    seen = []

    def die_after_second(_: object) -> None:
        seen.append(1)
        if len(seen) == 2:
            raise Killed

    with pytest.raises(Killed):
        run_fqi(config, on_iteration=die_after_second)
    ckpt, kept = tmp_path / "fast.npz.ckpt", tmp_path / "kept"
    shutil.copytree(ckpt, kept)
    state, arrays = read(ckpt / CHECKPOINT, "fqi-checkpoint")
    assert state["values"] and "values0" in arrays  # the leaf values are kept

    def edited(change):
        shutil.rmtree(ckpt)
        shutil.copytree(kept, ckpt)
        state, arrays = read(ckpt / CHECKPOINT, "fqi-checkpoint")
        state.pop("format"), state.pop("kind")
        arrays = dict(arrays)
        change(arrays)
        write(ckpt / CHECKPOINT, "fqi-checkpoint", state, arrays)
        with pytest.raises(ValueError) as caught:
            run_fqi(replace(config, resume=True))
        return str(caught.value)

    n = len(arrays["values0"])
    assert f"model 0's leaf values are {n - 1} numbers, for {n:,} nodes" in edited(
        lambda a: a.update(values0=a["values0"][:-1]))
    assert f"model 0's leaf values are {n + 1} numbers, for {n:,} nodes" in edited(
        lambda a: a.update(values0=np.append(a["values0"], 0.0)))
    assert "not all finite" in edited(
        lambda a: a.update(values0=np.where(np.arange(n) == 0, np.nan, a["values0"])))
    shutil.rmtree(ckpt)
    shutil.copytree(kept, ckpt)
    _, resumed = run_fqi(replace(config, resume=True))
    _, whole = run_fqi(replace(config, out=tmp_path / "whole.npz"))
    np.testing.assert_array_equal(q_of(resumed, store), q_of(whole, store))


def test_a_checkpoint_of_an_earlier_batchrl_or_a_longer_run_is_told_apart(
        store: Path, tmp_path: Path) -> None:
    """A checkpoint directory from before the marker (only checkpoint files in it) is
    fqi's own: run again, it is replaced; resumed, it is refused for its missing digests.
    A sound checkpoint of a run with more iterations says to give --iters."""
    from batchrl.learners.fqi.checkpoints import CHECKPOINT, CHECKPOINT_MARKER
    from batchrl.modelfile import read, write

    config = FQIRun(store=store, trees=3, nmin=20, iters=3, jobs=1, out=tmp_path / "m.npz")
    die_after_first(config)
    ckpt = tmp_path / "m.npz.ckpt"
    longer = replace(config, out=tmp_path / "long.npz")
    seen = []

    def die_after_second(stats: object) -> None:
        seen.append(stats)
        if len(seen) == 2:
            raise Killed

    with pytest.raises(Killed):
        run_fqi(longer, on_iteration=die_after_second)
    with pytest.raises(ValueError, match="has 2 iterations done, more than this run's "
                                         "--iters 1: resume with --iters 2 or more"):
        run_fqi(replace(longer, iters=1, resume=True))
    (ckpt / CHECKPOINT_MARKER).unlink()  # as an earlier batchrl left it
    state, arrays = read(ckpt / CHECKPOINT, "fqi-checkpoint")
    for key in ("format", "kind", "digests"):
        state.pop(key)
    write(ckpt / CHECKPOINT, "fqi-checkpoint", state, arrays)
    with pytest.raises(ValueError, match=r"records no digests of its trees \(an older "
                                         r"batchrl's\)"):
        run_fqi(replace(config, resume=True))
    _, fresh = run_fqi(config)  # without --resume: its directory is fqi's, and replaced
    assert len(fresh.meta["history"]) == 3


def test_a_stopped_fqi_names_its_checkpoint_and_a_resume_counts_from_it(
        store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C after iteration 1 names the checkpoint directory itself (not a placeholder);
    the resumed run's heartbeat (every step, here) names the iteration the table is at,
    on stderr, each line before its iteration's row and after the one before."""
    import batchrl.cli.learn as learn_command
    from batchrl.learners.fqi.iterations import FQI

    save = FQI._save_checkpoint

    def save_then_stop(self: FQI, done: int, frozen: object) -> None:
        save(self, done, frozen)  # type: ignore[arg-type]
        if done == 1:
            raise KeyboardInterrupt

    monkeypatch.setattr(FQI, "_save_checkpoint", save_then_stop)
    monkeypatch.setattr(learn_command, "STEP_EVERY", 0.0)
    out = tmp_path / "m.npz"
    args = ["fqi", "--store", str(store), "--trees", "3", "--iters", "3", "--jobs", "1",
            "--out", str(out)]
    stopped = CliRunner().invoke(main, args, catch_exceptions=False)
    assert stopped.exit_code == 130
    assert f"checkpointed in {out}.ckpt" in stopped.stderr and "MODEL" not in stopped.stderr
    resumed = CliRunner().invoke(main, [*args, "--resume"], catch_exceptions=False)
    assert resumed.exit_code == 0, resumed.output
    beats = [line for line in resumed.output.splitlines() if line.startswith("  ... ")]
    assert beats and all(line in resumed.stderr for line in beats)
    said = [line.split(":")[0].split()[-1] if line in beats else f"row {line.split()[0]}"
            for line in resumed.output.splitlines() if line in beats or line[:4].strip().isdigit()]
    assert said == ["2", "row 2", "3", "row 3"], resumed.output
