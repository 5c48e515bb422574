"""FQI's checkpoints on disk: what they are, and the check a resume makes before it
trusts one (`batchrl.learners.fqi.iterations` writes and reads them).

A checkpoint is model files (arrays and JSON, no pickle: `batchrl.modelfile`): the
iteration's state, written last, names the trees' file, ``models-ITERATION.npz``, written
only while the trees change; a kill between the two leaves the state and its trees. Each
trees' file's digest is in the state, and a resume refuses a checkpoint whose files are
not the ones it wrote.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path
from typing import Any

from batchrl import modelfile

CHECKPOINT = "checkpoint.npz"
OLD_CHECKPOINT = "checkpoint.joblib"  # a pickle, from before: not read
ASIDE = "frozen"  # a checkpoint whose frozen trees are set aside, one file a model


def digest(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def checkpoint_done(root: Path, iterations: int) -> int | None:
    """How many iterations the checkpoint in ``root`` has done, once it is checked whole
    (`check_checkpoint`) for a run of ``iterations``; None where there is none to resume
    or it does not pass (the resume then says why)."""
    try:
        state = modelfile.read(root / CHECKPOINT, "fqi-checkpoint", with_arrays=False)[0]
        check_checkpoint(root, state, iterations)
    except (FileNotFoundError, modelfile.ModelError, ValueError):
        return None
    done = state.get("done")
    return done if type(done) is int else None


def check_checkpoint(root: Path, state: dict[str, Any], iterations: int) -> None:
    """A checkpoint checked whole before a resume trusts it: its count of iterations done
    against its history and the run's, its trees' files named as it wrote them, regular
    files of the directory (no link out of it, no pipe) whose digests it recorded. A
    ValueError says what is wrong."""
    where = f"the checkpoint in {root}"
    done, history, name = state.get("done"), state.get("history"), state.get("models")
    if type(done) is int and done > iterations >= 1 and isinstance(history, list) and \
            len(history) == done:  # a sound checkpoint of a longer run
        raise ValueError(f"{where} has {done} iterations done, more than this run's "
                         f"--iters {iterations}: resume with --iters {done} or more, or run "
                         "without --resume to start again")
    if type(done) is not int or not 1 <= done <= iterations:
        raise ValueError(f"{where} says {str(done)[:20]} iterations are done, of the run's "
                         f"{iterations}: it was changed; run without --resume to start again")
    if not isinstance(history, list) or len(history) != done or \
            not all(isinstance(h, dict) for h in history):
        raise ValueError(f"{where} says {done} iterations are done but holds the figures of "
                         f"{len(history) if isinstance(history, list) else 'no'} iterations: "
                         "it was changed; run without --resume to start again")
    aside, n_models, values = state.get("aside"), state.get("n_models"), state.get("values")
    if type(n_models) is not int or not 1 <= n_models <= modelfile.MAX_ACTIONS or \
            not isinstance(aside, list) or \
            not all(type(m) is int and 0 <= m < n_models for m in aside) or \
            (values is not None and not (type(values) is int and 0 <= values <= n_models)):
        raise ValueError(f"{where}: its models are not what it says it holds")
    if name == ASIDE:
        if not aside or values is None:
            raise ValueError(f"{where}: its trees are set aside, but it keeps no leaf values")
        held = [f"frozen-{m}.npz" for m in aside]
    else:
        match = re.fullmatch(r"models-(\d+)\.npz", str(name))
        if match is None or int(match.group(1)) > done:
            raise ValueError(f"{where} names {str(name)[:40]!r} as its trees, not a file it "
                             f"writes by iteration {done}")
        held = [str(name)]
    digests = state.get("digests")
    if not isinstance(digests, dict):
        raise ValueError(f"{where} records no digests of its trees (an older batchrl's): run "
                         "without --resume to start again")
    for file in held:
        path = root / file
        if path.is_symlink() or not path.is_file():
            raise ValueError(f"{where}: {file} is not a file of the checkpoint (a link, a "
                             "pipe, or missing): run without --resume to start again")
        if digests.get(file) != digest(path):
            raise ValueError(f"{where}: {file} is not the file it wrote (its digest differs: "
                             "another run's, or changed): run without --resume to start "
                             "again")


CHECKPOINT_MARKER = "batchrl-fqi-checkpoints"  # in every checkpoint directory fqi made


def _checkpoint_files(path: Path) -> bool:
    """Whether ``path`` holds nothing but what an fqi checkpoint holds (an earlier batchrl
    made its checkpoints without the marker); an empty directory holds nothing to lose."""
    return all(p.is_file() and not p.is_symlink() and re.fullmatch(
        r"checkpoint\.npz|(models|frozen)-\d+\.npz|\.[^/]+\.tmp-\d+", p.name)
        for p in path.iterdir())


def checkpoint_directory(path: Path, resume: bool) -> None:
    """Make fqi's checkpoint directory ``path`` (emptied unless ``resume``), with its
    marker: a directory fqi did not make (no marker, something in it), a link or a file
    is never deleted nor written into; a ValueError says what to do."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        kind = "a symbolic link" if path.is_symlink() else "not a directory"
        raise ValueError(f"{path} is {kind}, not a checkpoint directory batchrl fqi made: "
                         "move it away, or give another --out")
    if path.is_dir() and not (path / CHECKPOINT_MARKER).is_file() and \
            not _checkpoint_files(path):
        raise ValueError(f"{path} exists and batchrl fqi did not make it (no "
                         f"{CHECKPOINT_MARKER} in it): fqi never deletes or writes into a "
                         "directory it did not make; move it away, or give another --out")
    if not resume and path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True, exist_ok=True)
    (path / CHECKPOINT_MARKER).write_text("checkpoints of a batchrl fqi run, removed when "
                                          "it ends; --resume goes on from them\n")
