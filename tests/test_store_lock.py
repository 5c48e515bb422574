"""One writer at a time: ingests started together into one store, as separate processes,
leave a store that reads; a store of one game refuses the other game's ingest by name."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from locations import ROOT, SAMPLES

from batchrl.games.sette_mezzo.logs import play, write_log
from batchrl.ingest import IngestConfig, ingest
from batchrl.store import Store, StoreError, StoreSchema
from batchrl.store.lock import LOCK_NAME, StoreBusy, store_lock

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="stores lock with fcntl")

HOLDEM = SAMPLES / "random_vs_random.2p.limit.log"
ENV = os.environ | {"PYTHONPATH": str(ROOT)}


def sette_mezzo_log(path: Path, games: int, seed: int) -> Path:
    write_log(path, play("random", games, np.random.default_rng(seed)))
    return path


def start_ingest(log: Path, store: Path, out: Path) -> subprocess.Popen[bytes]:
    with out.open("wb") as sink:
        return subprocess.Popen([sys.executable, "-m", "batchrl", "ingest", str(log),
                                 "--store", str(store)], cwd=ROOT, env=ENV, stdout=sink,
                                stderr=subprocess.STDOUT)


def ingest_together(logs: list[Path], store: Path, work: Path) -> list[tuple[int, str]]:
    """Start one ``batchrl ingest`` per log while this process holds the store, so that
    every one of them is under way (waiting) before any writes; then let them race."""
    outs = [work / f"ingest-{i}.out" for i in range(len(logs))]
    with store_lock(store):
        procs = [start_ingest(log, store, out) for log, out in zip(logs, outs, strict=True)]
        deadline = time.monotonic() + 120
        while not all("waiting for it to finish" in out.read_text() for out in outs):
            assert all(p.poll() is None for p in procs), [o.read_text() for o in outs]
            assert time.monotonic() < deadline, "the ingests never came to the lock"
            time.sleep(0.05)
    for p in procs:
        p.wait(timeout=300)
    return [(p.returncode, out.read_text()) for p, out in zip(procs, outs, strict=True)]


def alone(log: Path, store: Path) -> int:
    (report,) = ingest(IngestConfig(paths=(log,), store=store))
    return report.rows


@pytest.mark.slow
def test_two_ingests_of_one_game_into_a_fresh_store_keep_every_row_once(
        tmp_path: Path) -> None:
    a = sette_mezzo_log(tmp_path / "a.jsonl", 400, 1)
    b = sette_mezzo_log(tmp_path / "b.jsonl", 300, 2)
    store = tmp_path / "store"
    results = ingest_together([a, b, a], store, tmp_path)  # a twice: its part, once
    assert [rc for rc, _ in results] == [0, 0, 0], results
    assert all("is being written by pid" in out for _, out in results)
    opened = Store.open(store)
    expected = {str(a): alone(a, tmp_path / "only-a"), str(b): alone(b, tmp_path / "only-b")}
    assert {s.path: s.rows for s in opened.sources()} == expected
    rows = opened.to_pandas(["episode", "player", "step"])
    assert len(rows) == sum(expected.values()) == opened.info().rows
    assert not rows.duplicated().any()
    assert sorted(p.name for p in store.iterdir()) == [LOCK_NAME, "parts", "store.json"]


@pytest.mark.slow
def test_two_games_into_a_fresh_store_one_lands_the_other_is_refused_by_name(
        tmp_path: Path) -> None:
    sm = sette_mezzo_log(tmp_path / "sm.jsonl", 300, 3)
    store = tmp_path / "store"
    results = ingest_together([HOLDEM, sm], store, tmp_path)
    assert sorted(rc for rc, _ in results) == [0, 1], results
    opened = Store.open(store)
    held = opened.schema.game
    assert held in ("holdem.limit.2p.reverse_blinds", "sette-mezzo")
    (refused,) = [out for rc, out in results if rc == 1]
    other = "sette-mezzo" if held != "sette-mezzo" else "holdem.limit.2p.reverse_blinds"
    assert f"Error: store {store} holds game {held}, not {other}" in refused
    assert "use another --store directory" in refused and "Traceback" not in refused
    assert len(opened.sources()) == 1 and opened.info().rows > 0
    info = subprocess.run([sys.executable, "-m", "batchrl", "info", str(store)], cwd=ROOT,
                          env=ENV, capture_output=True, text=True, timeout=120)
    assert info.returncode == 0 and f"game      {held}" in info.stdout, info.stderr


HOLD = """
import sys, time
from batchrl.store.lock import store_lock
with store_lock(sys.argv[1]):
    print("held", flush=True)
    if sys.argv[2] == "die":
        import os, signal
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(120)
"""


def hold(store: Path, then: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(store), then], env=ENV,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def test_a_writer_that_will_not_wait_is_refused_naming_the_holder(tmp_path: Path) -> None:
    store = tmp_path / "store"
    holder = hold(store, "sleep")
    try:
        heard: list[str] = []
        with pytest.raises(StoreBusy, match=rf"store {store} is being written by pid "
                                            rf"{holder.pid} .*--wait 0.2 s ran out"):
            ingest(IngestConfig(paths=(HOLDEM,), store=store, wait=0.2), on_wait=heard.append)
        (said,) = heard
        assert said.startswith(f"store {store} is being written by pid {holder.pid} (")
        assert said.endswith("waiting for it to finish (for 0.2 s at most)")
        with pytest.raises(StoreBusy):
            Store.create(store, StoreSchema("g", ("x",), ("a",)), wait=0)
    finally:
        holder.kill()
        holder.wait()
    ingest(IngestConfig(paths=(HOLDEM,), store=store, wait=0))
    assert Store.open(store).info().rows > 0


def test_a_killed_writer_leaves_no_lock_behind(tmp_path: Path) -> None:
    store = tmp_path / "store"
    dead = hold(store, "die")
    assert dead.wait(timeout=60) == -signal.SIGKILL
    with store_lock(store, wait=0):  # the kernel let it go with the process
        pass


FORK = """
import os, sys
from batchrl.store.lock import StoreBusy, store_lock
told, tell = os.pipe()
up, said_up = os.pipe()
with store_lock(sys.argv[1]):
    child = os.fork()
    if child == 0:  # a reading process: it runs on after the lock's holder let go
        os.close(tell)
        os.write(said_up, b"u")  # under way (what a fork does to its files is done)
        os.read(told, 1)
        os._exit(0)
    os.read(up, 1)
os.close(told)
try:
    with store_lock(sys.argv[1], wait=0):
        print("free")
except StoreBusy:
    print("held")
finally:
    os.write(tell, b"x")
    os.waitpid(child, 0)
"""


def test_a_forked_child_keeps_no_copy_of_the_lock(tmp_path: Path) -> None:
    # the Tressette ingest forks a reading process while it holds the lock; a flock lasts
    # while any copy of its descriptor is open, so a killed ingest's orphan kept the store
    # held. (In a process of its own: the test is about what a fork inherits.)
    out = subprocess.run([sys.executable, "-c", FORK, str(tmp_path / "store")], env=ENV,
                         capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout == "free\n", out.stderr


def test_a_foreign_directory_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    photos = tmp_path / "photos"
    photos.mkdir()
    (photos / "cat.jpg").write_bytes(b"")
    with pytest.raises(StoreError, match=r"not a batchrl store \(no store.json; it holds "
                                         r"cat.jpg\)"):
        ingest(IngestConfig(paths=(HOLDEM,), store=photos))
    assert [p.name for p in photos.iterdir()] == ["cat.jpg"]


def test_a_lock_that_is_a_link_or_a_fifo_is_never_written_through_nor_waited_on(
        tmp_path: Path) -> None:
    """Anyone who can write a shared store could plant ``.lock`` as a link to a victim's
    file (the next writer would overwrite it) or as a FIFO (it would block forever)."""
    from batchrl.store.lock import holder

    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    root = tmp_path / "s"
    root.mkdir()
    (root / ".lock").symlink_to(victim)
    with pytest.raises(StoreError, match=r"\.lock is a symbolic link, not the store's lock"), \
            store_lock(root, wait=0):
        pass
    assert victim.read_text() == "precious\n"
    assert holder(root) == "another batchrl process"  # the victim's text is not shown
    (root / ".lock").unlink()
    os.mkfifo(root / ".lock")
    with pytest.raises(StoreError, match=r"\.lock is not a regular file"), \
            store_lock(root, wait=0):
        pass
    (root / ".lock").unlink()
    with store_lock(root, wait=0):  # a real lock file is made and held as before
        assert (root / ".lock").is_file() and not (root / ".lock").is_symlink()
    (root / ".lock").write_text("pid 1 (batchrl ingest \x1b[31mred), since now\nmore")
    assert holder(root) == "pid 1 (batchrl ingest \\x1b[31mred), since now"


def test_a_lock_that_is_a_hard_link_to_another_file_is_refused(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    root = tmp_path / "s"
    root.mkdir()
    os.link(victim, root / ".lock")
    with pytest.raises(StoreError, match=r"\.lock is a hard link to another file"), \
            store_lock(root, wait=0):
        pass
    assert victim.read_text() == "precious\n"
