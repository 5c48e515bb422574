"""Tressette JSON lines read and checked in worker processes: the same store and the same
report as reading them in the ingesting process, whatever the blocks and the chunks."""

import dataclasses
import json
import multiprocessing

import numpy as np
import pytest

import parsers.tressette as reader
from batchrl.games import FORMATS, Source
from batchrl.games.tressette.ingest import DealRef
from batchrl.games.tressette.logs import Game, play, to_json
from batchrl.ingest import IngestConfig, IngestError, ingest
from batchrl.records import BadLine, LogLines
from batchrl.store import Store

SEATS = ("seed-heuristic", "random", "rule", "random")
FORK = "fork" in multiprocessing.get_all_start_methods()
needs_fork = pytest.mark.skipif(not FORK, reason="reading processes are forked; this "
                                                 "platform has no fork")


def _log(tmp_path):
    """30 games and every kind of line a reader can meet, the last one cut off."""
    games = list(play(SEATS, 30, seed=12))
    lines = [to_json(g) for g in games]
    lines[2] = "{not json"
    lines[4] = lines[4].replace('"hands": [["', '"hands": [["ZZ", "', 1)  # not a card
    swapped = json.loads(lines[7])
    swapped["points"] = swapped["points"][::-1]
    lines[7] = json.dumps(swapped)  # the rules' points differ: an illegal hand
    g = games[9]
    lines[9] = to_json(dataclasses.replace(g, plays=g.plays[:17], points=None, truncated=True))
    g = games[11]  # a deal known only by the cards played, as a cut transcript gives it
    seen = tuple(tuple(sorted(c for s, c in g.plays[:6] if s == seat)) for seat in range(4))
    lines[11] = to_json(dataclasses.replace(g, hands=seen, plays=g.plays[:6], points=None,
                                            truncated=True))
    lines[13] = ""
    g = games[14]
    lines[14] = to_json(dataclasses.replace(g, plays=(), points=None, truncated=True))
    g = games[19]
    lines[19] = to_json(dataclasses.replace(g, plays=(g.plays[1], g.plays[0], *g.plays[2:])))
    g = games[21]  # cut short and illegal: refused, not counted as a hand cut short and kept
    lines[21] = to_json(dataclasses.replace(g, plays=(g.plays[1], g.plays[0], *g.plays[2:17]),
                                            points=None, truncated=True))
    path = tmp_path / "hands.jsonl"
    path.write_text("\n".join(lines) + "\n" + to_json(games[0])[:60])
    return path


def _ingest(path, store, jobs, **kw):
    report, = ingest(IngestConfig(paths=(path,), store=store, options={"jobs": jobs}, **kw))
    table = Store.open(store).to_pandas()
    return report, table


@needs_fork
@pytest.mark.parametrize(("block", "chunk"), [(4, 5), (7, 3), (1024, 2048)])
def test_reading_processes_store_and_report_what_one_process_does(tmp_path, monkeypatch,
                                                                 fork_beside_threads,
                                                                 block, chunk):
    path = _log(tmp_path)
    monkeypatch.setattr(reader, "READ_BLOCK_LINES", block)
    blocks = []
    beside = reader._records
    monkeypatch.setattr(reader, "_records",
                        lambda *a: blocks.append(a) or beside(*a))
    results = [_ingest(path, tmp_path / f"s{jobs}", jobs, on_error="skip", chunk_size=chunk)
               for jobs in (0, 1, 2)]
    assert len(blocks) == 2  # read beside for jobs 1 and 2, here for 0
    (here, rows), *others = results
    # what the log holds: 2 bad lines, 4 hands refused, a blank line, a cut-off last line;
    # 2 hands cut short kept, one of them before its first play (no rows)
    assert here.hands == 23 and here.skipped == {"malformed line": 2, "illegal hand": 4,
                                                 "cut-off last line": 1}
    assert [f"line {n}" in e for n, e in zip((8, 12, 20), here.examples["illegal hand"],
                                             strict=True)] == [True] * 3
    assert any("2 hand(s) cut short" in n for n in here.notes)
    assert rows["truncated"].sum() == 4 and rows["episode"].nunique() == 22
    for report, table in others:
        assert (report.hands, report.rows, report.skipped, report.examples, report.notes) \
            == (here.hands, here.rows, here.skipped, here.examples, here.notes)
        assert table.columns.tolist() == rows.columns.tolist()
        for column in rows.columns:
            mine, theirs = rows[column].to_numpy(), table[column].to_numpy()
            if column in ("state", "next_state", "next_legal", "legal"):
                mine, theirs = np.stack(mine), np.stack(theirs)
            assert np.array_equal(mine, theirs), column


@needs_fork
@pytest.mark.parametrize("jobs", [0, 1])
def test_fail_mode_names_the_first_bad_line_and_stores_nothing(tmp_path, monkeypatch, jobs,
                                                               fork_beside_threads):
    path = _log(tmp_path)
    monkeypatch.setattr(reader, "READ_BLOCK_LINES", 2)
    with pytest.raises(IngestError, match="line 3: not JSON") as failed:
        ingest(IngestConfig(paths=(path,), store=tmp_path / "s", options={"jobs": jobs},
                            chunk_size=2))
    assert "line 5" not in str(failed.value)
    assert not (tmp_path / "s").exists()  # nothing stored, no empty store left
    lines = path.read_text().splitlines()
    clean = tmp_path / "later.jsonl"  # the first fault an illegal hand, in a later block
    clean.write_text("\n".join(lines[:2] + lines[5:12] + ["{bad"]) + "\n")
    with pytest.raises(IngestError, match="line 5: the rules' points differ") as failed:
        ingest(IngestConfig(paths=(clean,), store=tmp_path / "t", options={"jobs": jobs},
                            chunk_size=2))
    assert "line 10" not in str(failed.value)
    assert not (tmp_path / "t").exists()


def test_without_fork_the_lines_are_read_here(tmp_path, monkeypatch):
    path = _log(tmp_path)
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    report, table = _ingest(path, tmp_path / "s", 1, on_error="skip")
    assert report.hands == 23 and len(table) == report.rows


def test_a_count_of_processes_is_asked_and_one_reads_beside_on_two_cores(tmp_path,
                                                                         monkeypatch):
    with pytest.raises(IngestError, match=r"--jobs -2: want 0 \(read in this process\)"):
        ingest(IngestConfig(paths=(), store=tmp_path / "s", options={"jobs": -2}))
    monkeypatch.setattr(reader, "usable_cores", lambda: 1)
    assert reader.default_jobs() == 0
    monkeypatch.setattr(reader, "usable_cores", lambda: 8)
    assert reader.default_jobs() == 1  # the rows' lockstep check is this process's work


def test_a_game_read_in_a_block_is_the_game_read_whole():
    games = list(play(SEATS, 3, seed=2))
    texts = [to_json(g) for g in games]
    deals, records = reader._read_block(texts, "x.jsonl", 7)
    assert records == [(7, 0), (8, 1), (9, 2)]
    assert deals.line.tolist() == [7, 8, 9]
    for i, g in enumerate(games):
        assert sorted(deals.hands[i].ravel().tolist()) == list(range(40))
        assert [tuple(h) for h in deals.hands[i].tolist()] == [tuple(h) for h in g.hands]
        assert list(zip(deals.seats[i].tolist(), deals.cards[i].tolist(),
                        strict=True)) == [tuple(p) for p in g.plays]
        assert tuple(deals.points[i]) == g.points
        assert tuple(deals.names[i]) == g.names
    assert Game.from_json(texts[0]) == games[0]


@pytest.mark.parametrize("jobs", [0, 1])
def test_numbers_no_seat_or_team_can_have_are_refused_hands_not_crashes(tmp_path, jobs,
                                                                        fork_beside_threads):
    """Seats and points past int8 and int64, negative points: each refuses its own hand
    (as the rules would: out of turn, points that differ), in skip and in fail mode."""
    games = list(play(SEATS, 8, seed=5))
    lines = [json.loads(to_json(g)) for g in games]
    lines[1]["plays"][0][0] = 300
    lines[2]["plays"][5][0] = 10 ** 30
    lines[3]["points"] = [-1, -1]
    lines[4]["points"] = [-3, 14]
    lines[5]["points"] = [10 ** 30, 0]
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    report, table = _ingest(path, tmp_path / "s", jobs, on_error="skip")
    assert report.hands == 3 and report.skipped == {"illegal hand": 5}
    messages = report.examples["illegal hand"] + [""] * 2
    assert "line 2: a seat plays out of turn" in messages[0]
    assert "line 3: a seat plays out of turn" in messages[1]
    assert "line 4: the rules' points differ" in messages[2]
    assert table["episode"].nunique() == 3
    bad = tmp_path / "bad.jsonl"  # a bad line before a hand that cannot be numbered
    bad.write_text("\n".join([json.dumps(lines[0]), "{", json.dumps(lines[1])]) + "\n")
    with pytest.raises(IngestError, match="line 2: not JSON"):
        ingest(IngestConfig(paths=(bad,), store=tmp_path / "f", options={"jobs": jobs}))


@needs_fork
def test_the_formats_reader_stops_its_processes_when_closed_or_done(tmp_path, monkeypatch,
                                                                    fork_beside_threads,
                                                                    counted_pools):
    """The "tressette" format reads beside with the ingest's jobs: games as DealRef, in
    line order, and its processes end when the records do or when they are closed."""
    path = _log(tmp_path)
    monkeypatch.setattr(reader, "READ_BLOCK_LINES", 4)
    pools = counted_pools
    fmt = FORMATS["tressette"]
    every = list(fmt.read(Source(path, LogLines(path), {"jobs": 1})))
    assert len(pools) == 1 and pools[0].closed
    lines = [r.line for r in every]
    assert lines == sorted(lines) and lines[0] == 1
    assert {type(r) for r in every} == {DealRef, BadLine}
    assert [r.index for r in every if isinstance(r, DealRef)] == list(range(27))
    records = fmt.read(Source(path, LogLines(path), {"jobs": 1}))
    assert isinstance(next(records), DealRef)
    assert len(pools) == 2 and not pools[1].closed
    records.close()
    assert pools[1].closed
    here = list(fmt.read(Source(path, LogLines(path), {"jobs": 0})))  # no process
    assert len(pools) == 2 and [r.line for r in here] == lines
