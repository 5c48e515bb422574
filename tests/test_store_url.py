"""A store read by URL (`batchrl.store.place`): the rows, the checks and the commands are
those of the same store read from its directory, and writing it is refused by name.

``file://`` URLs go through pyarrow's own filesystem; ``memory://`` through fsspec's
in-memory filesystem, wrapped for pyarrow, standing in for an object store.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from locations import SAMPLES

from batchrl.cli import main
from batchrl.games.sette_mezzo.logs import play, write_log
from batchrl.ingest import IngestConfig, ingest
from batchrl.learners.fqi.model import GreedyPolicy
from batchrl.store import Store, StoreError, default_store_path

fsspec = pytest.importorskip("fsspec", reason="the test extra brings fsspec (memory:// stores)")


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("url") / "store"
    ingest(IngestConfig(paths=(SAMPLES / "random_vs_random.2p.limit.log",), store=root))
    return root


def in_memory(root: Path) -> str:
    """A copy of the store at ``root`` in fsspec's memory filesystem; its URL."""
    name = f"store-{uuid.uuid4().hex[:8]}"
    fsspec.filesystem("memory").put(str(root), f"/{name}", recursive=True)
    return f"memory://{name}"


def same_rows(a: Store, b: Store) -> None:
    x, y = a.arrays(), b.arrays()
    assert len(x) == len(y) > 0
    for name in ("state", "action", "reward", "terminal", "truncated", "episode", "next_legal"):
        np.testing.assert_array_equal(getattr(x, name), getattr(y, name), err_msg=name)
    np.testing.assert_array_equal(np.asarray(x.next_state), np.asarray(y.next_state))
    assert list(x.episode_ids) == list(y.episode_ids)


@pytest.mark.parametrize("kind", ["file", "memory"])
def test_a_store_by_url_reads_as_its_directory_does(local: Path, kind: str) -> None:
    url = f"file://{local.resolve()}" if kind == "file" else in_memory(local)
    here, there = Store.open(local), Store.open(url)
    assert there.root == url and there.schema == here.schema
    same_rows(here, there)
    assert there.check(pages=True) == here.check(pages=True)
    assert there.info().rows == here.info().rows
    assert there.info().bytes_on_disk == here.info().bytes_on_disk - (
        (local / ".lock").stat().st_size if (local / ".lock").exists() else 0)
    assert there.to_pandas(["action", "reward"]).equals(here.to_pandas(["action", "reward"]))
    assert sum(b.num_rows for b in there.iter_batches(["action"])) == here.info().rows


def test_a_store_whose_next_states_follow_reads_the_same(tmp_path: Path) -> None:
    log = tmp_path / "games.jsonl"
    write_log(log, play("random", 200, np.random.default_rng(5)))
    ingest(IngestConfig(paths=(log,), store=tmp_path / "store"))
    here = Store.open(tmp_path / "store")
    assert here.schema.next_state == "following"
    same_rows(here, Store.open(in_memory(tmp_path / "store")))


def test_a_store_by_url_is_never_written(local: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    url = in_memory(local)
    store = Store.open(url)
    for write in (lambda: Store.create(url, store.schema), store.lock,
                  lambda: store.writer("x.log", "0" * 64), lambda: store.remove_source("x.log")):
        with pytest.raises(StoreError, match=rf"the store {url} is read here, not written: "
                                             r"ingest into a local directory"):
            write()
    monkeypatch.chdir(tmp_path)
    result = invoke("ingest", str(SAMPLES / "random_vs_random.2p.limit.log"), "--store",
                    "s3://bucket/acpc")
    assert result.exit_code == 1
    assert "the store s3://bucket/acpc is read here, not written" in result.output
    assert list(tmp_path.iterdir()) == []  # no directory named after the URL
    keyed = invoke("ingest", str(SAMPLES / "random_vs_random.2p.limit.log"), "--store",
                   "s3://AKIA:SECRET@bucket/acpc?region=eu-west-1")
    assert "the store s3://bucket/acpc is read here" in keyed.output
    assert "SECRET" not in keyed.output and "region" not in keyed.output


def test_a_missing_or_unknown_url_is_one_line() -> None:
    with pytest.raises(StoreError, match=r"^no batchrl store at memory://nothing-here "
                                         r"\(no store.json\): copy a store there$"):
        Store.open("memory://nothing-here")
    with pytest.raises(StoreError, match=r"^cannot open the store nosuch://x/y: "):
        Store.open("nosuch://x/y")
    with pytest.raises(StoreError, match=r"^memory:// is read through fsspec here, whose URLs "
                                         r"take no options after '\?' \(memory://x\)"):
        Store.open("memory://x?token=SECRET")


def test_a_damaged_part_by_url_is_named_by_its_url(local: Path) -> None:
    url = in_memory(local)
    memory = fsspec.filesystem("memory")
    [part] = [p for p in memory.ls(url.removeprefix("memory://") + "/parts", detail=False)]
    data = bytearray(memory.cat_file(part))
    data[len(data) // 3: len(data) // 3 + 64] = bytes(64)  # a page's bytes overwritten
    memory.pipe_file(part, bytes(data))
    name = f"{url}/parts/{Path(part).name}"
    with pytest.raises(StoreError, match=rf"^part {name} is damaged \(.*\); it holds the rows "
                                         r"of .*random_vs_random.2p.limit.log: copy the store "
                                         r"here again"):
        Store.open(url).check(pages=True)


def test_the_commands_take_a_url(local: Path, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"file://{local.resolve()}"
    monkeypatch.chdir(tmp_path)
    shown = invoke("info", url, "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["rows"] == Store.open(local).info().rows
    settings = ["--trees", "4", "--iters", "2", "--jobs", "1", "--seed", "3"]
    there = invoke("fqi", "--store", url, *settings)
    assert there.exit_code == 0, there.output
    [model] = (tmp_path / "models").glob("*.npz")  # beside the command, not at the URL
    here = invoke("fqi", "--store", str(local), *settings, "--out", str(tmp_path / "here.npz"))
    assert here.exit_code == 0, here.output
    a, b = GreedyPolicy.load(model), GreedyPolicy.load(tmp_path / "here.npz")
    assert a.artifact.meta["store"] == url
    states = Store.open(local).arrays().state[:200]
    np.testing.assert_array_equal(a.q_values(states), b.q_values(states))
    monkeypatch.setenv("BATCHRL_STORE", url)
    assert default_store_path() == url
    assert invoke("info", "--quick").output.startswith(f"store     {url}\n")
