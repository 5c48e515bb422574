"""The report's Hanabi games read and checked in worker processes: the same store, the same
report and the same first error as reading them in the ingesting process."""

import multiprocessing

import pytest

import parsers.hanabi_sources as sources
from batchrl.games import FORMATS, Source
from batchrl.games.hanabi.logs import generate
from batchrl.ingest import IngestConfig, IngestError, ingest
from batchrl.store import Store

needs_fork = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                                reason="reading processes are forked; this platform has no "
                                       "fork")


def _games(tmp_path):
    """Seven games: one with a line that is no JSON, one with a move the rules refuse,
    one without its actions file; and a link to a game out of the directory."""
    games = tmp_path / "games"
    generate(games, ("bot2", "simple"), 7, seed=8)
    bad = games / "game000002.states.jsonl"
    lines = bad.read_text().splitlines()
    bad.write_text("\n".join([lines[0], "{not json", *lines[2:]]) + "\n")
    illegal = games / "game000004.actions.jsonl"
    lines = illegal.read_text().splitlines()
    lines[3] = '{"type": "play", "player": "simple", "card": 7}'
    illegal.write_text("\n".join(lines) + "\n")
    (games / "game000006.actions.jsonl").unlink()
    outside = tmp_path / "elsewhere.states.jsonl"  # a link out of the directory: not read
    outside.write_text((games / "game000000.states.jsonl").read_text())
    (games / "game000007.states.jsonl").symlink_to(outside)
    return games


@needs_fork
def test_reading_processes_store_report_and_refuse_what_one_process_does(
        tmp_path, monkeypatch, fork_beside_threads, counted_pools):
    games = _games(tmp_path)
    monkeypatch.setattr(sources, "FILES_A_BLOCK", 2)
    runs = {}
    for jobs in (0, 2):
        read = []
        report, = ingest(IngestConfig(paths=(games,), store=tmp_path / f"s{jobs}",
                                      options={"jobs": jobs}, on_error="skip"),
                         progress=read.append)
        runs[jobs] = (report, Store.open(tmp_path / f"s{jobs}").to_pandas(), sum(read))
        with pytest.raises(IngestError) as failed:
            ingest(IngestConfig(paths=(games,), store=tmp_path / f"f{jobs}",
                                options={"jobs": jobs}))
        runs[jobs] += (str(failed.value),)
    # processes for jobs 2 only, in each ingest, which read every block of 2 files there
    # (after the task that starts them; the failing ingest's are read ahead too)
    assert [(p._max_workers, p.tasks) for p in counted_pools] == [(2, 1 + 4)] * 2
    (here, rows, bytes_read, error), beside = runs[0], runs[2]
    assert here.hands == 4 and here.skipped == {"bad game": 3, "file not read": 1}
    assert "game000002.states.jsonl, line 2: not JSON" in error
    assert bytes_read == sum(p.stat().st_size for p in games.glob("*.states.jsonl")
                             if not p.is_symlink())
    report, table, *rest = beside
    assert (report.hands, report.rows, report.skipped, report.examples, report.notes) \
        == (here.hands, here.rows, here.skipped, here.examples, here.notes)
    assert table.equals(rows) and rest == [bytes_read, error]


def test_a_count_of_processes_is_asked_and_every_core_reads(tmp_path, monkeypatch):
    with pytest.raises(IngestError, match=r"--jobs -2: want 0 \(read in this process\)"):
        ingest(IngestConfig(paths=(tmp_path,), store=tmp_path / "s", options={"jobs": -2}))
    monkeypatch.setattr(sources, "usable_cores", lambda: 1)
    assert sources.default_jobs() == 0
    monkeypatch.setattr(sources, "usable_cores", lambda: 4)
    assert sources.default_jobs() == 4  # reading is the work: the rows are a small part
    monkeypatch.setattr(sources, "usable_cores", lambda: 64)
    assert sources.default_jobs() == sources.READERS_AT_MOST


@needs_fork
def test_the_reader_stops_its_processes_when_closed_or_done(tmp_path, monkeypatch,
                                                            fork_beside_threads,
                                                            counted_pools):
    games = tmp_path / "games"
    generate(games, ("bot2", "bot2"), 4, seed=3)
    monkeypatch.setattr(sources, "FILES_A_BLOCK", 1)
    fmt = FORMATS["hanabi-json"]
    assert len(list(fmt.read(Source(games, None, {"jobs": 2})))) == 4
    assert len(counted_pools) == 1 and counted_pools[0].closed
    records = fmt.read(Source(games, None, {"jobs": 2}))
    assert next(records).key == "game000000"
    assert len(counted_pools) == 2 and not counted_pools[1].closed
    records.close()
    assert counted_pools[1].closed
    # one file: read here, with no process to start
    assert len(list(fmt.read(Source(games / "game000001.states.jsonl", None,
                                    {"jobs": 2})))) == 1
    assert len(counted_pools) == 2
