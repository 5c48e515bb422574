"""The report's Hanabi games read and checked in worker processes: the same store, the same
report and the same first error as reading them in the ingesting process."""

import multiprocessing

import pytest

import batchrl.forked as forked
import parsers.hanabi_sources as sources
from batchrl.games.hanabi.logs import generate
from batchrl.ingest import IngestConfig, IngestError, ingest
from batchrl.store import Store

needs_fork = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                                reason="reading processes are forked; this platform has no "
                                       "fork")


def _games(tmp_path):
    """Seven games: one with a line that is no JSON, one with a move the rules refuse,
    one without its actions file."""
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
    return games


@needs_fork
def test_reading_processes_store_report_and_refuse_what_one_process_does(
        tmp_path, monkeypatch, fork_beside_threads):
    games = _games(tmp_path)
    monkeypatch.setattr(sources, "FILES_A_BLOCK", 2)
    pools = []

    class Counted(forked.ProcessPoolExecutor):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            pools.append(args[0])

    monkeypatch.setattr(forked, "ProcessPoolExecutor", Counted)
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
    assert pools == [2, 2]  # processes for jobs 2 only, in each ingest
    (here, rows, bytes_read, error), beside = runs[0], runs[2]
    assert here.hands == 4 and here.skipped == {"bad game": 3}
    assert "game000002.states.jsonl, line 2: not JSON" in error
    assert bytes_read == sum(p.stat().st_size for p in games.glob("*.states.jsonl"))
    report, table, *rest = beside
    assert (report.hands, report.rows, report.skipped, report.examples, report.notes) \
        == (here.hands, here.rows, here.skipped, here.examples, here.notes)
    assert table.equals(rows) and rest == [bytes_read, error]


def test_a_count_of_processes_is_asked_and_every_core_reads(tmp_path, monkeypatch):
    with pytest.raises(IngestError, match="--jobs -1: want 0"):
        ingest(IngestConfig(paths=(tmp_path,), store=tmp_path / "s", options={"jobs": -1}))
    monkeypatch.setattr(sources, "usable_cores", lambda: 1)
    assert sources.default_jobs() == 0
    monkeypatch.setattr(sources, "usable_cores", lambda: 4)
    assert sources.default_jobs() == 4  # reading is the work: the rows are a small part
