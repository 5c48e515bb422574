from hypothesis import given, settings
from hypothesis import strategies as st

from batchrl.games.holdem.cards import parse_cards
from parsers.acpc import (
    BadLine,
    Header,
    LoggedHand,
    read_acpc,
    read_glassfrog,
    sniff_format,
)

DEALER_LOG = [
    "# name/game/hands/seed 2p.limit.h1000.r0 /x/holdem.limit.2p.reverse_blinds.game 1000 0",
    "#--t_response 600000",
    "STATE:0:cc/crc/cc/cc:5d5c|9hQd/8dAs8s/4h/6d:20|-20:p1|p2",
    "STATE:3:rrrc/rrf:4s8s|6hJd/QhJs9d:-50|50:p2|p1",
    "SCORE:455|-455:p1|p2",
]
THESIS_SUMMARY = [
    "GGValuta|HyperboreanLimit-Eqm:0:rc/crc/cc/rc:8hTd|As9c/KsJcJh/Qc/8d:10|-10",
    "HyperboreanLimit-Eqm|GGValuta:1:rc/crf:5d6s|6dKd/ThTdJs:-4|4",
]


def hands(records):
    return [r for r in records if isinstance(r, LoggedHand)]


def test_dealer_log_fields():
    records = list(read_acpc(DEALER_LOG, "m.log"))
    assert isinstance(records[0], Header)
    assert records[0].game_path.endswith("holdem.limit.2p.reverse_blinds.game")
    assert records[0].hands == 1000 and records[0].seed == 0
    first, second = hands(records)
    assert (first.line, first.index, first.number) == (3, 0, 0)
    assert first.hole == (parse_cards("5d5c"), parse_cards("9hQd"))
    assert first.board == (parse_cards("8dAs8s"), parse_cards("4h"), parse_cards("6d"))
    assert first.payoffs == (20.0, -20.0) and first.names == ("p1", "p2")
    assert (second.line, second.index, second.number) == (4, 1, 3)
    assert not [r for r in records if isinstance(r, BadLine)]


def test_glassfrog_summary_fields():
    first, second = hands(read_glassfrog(THESIS_SUMMARY, "ROOM_90.dealer.summary"))
    assert first.names == ("GGValuta", "HyperboreanLimit-Eqm")
    assert first.betting == "rc/crc/cc/rc" and first.payoffs == (10.0, -10.0)
    assert second.board == (parse_cards("ThTdJs"),)


def test_format_is_sniffed_from_content():
    assert sniff_format(DEALER_LOG) == "acpc"
    assert sniff_format(DEALER_LOG[2:]) == "acpc"  # no header
    assert sniff_format(THESIS_SUMMARY) == "glassfrog"
    assert sniff_format(["hello world", "nothing here"]) is None


def test_timestamps_fractions_and_repeated_numbers():
    lines = [
        "STATE:0:f:As8d|8c3h:50|-50:qin|DeepStack # 1478520305.48839",
        "STATE:0:ccc/ccc:5d5c|9hQd|8dAs/8s4h6d5sJs:2.5|2.5|-5:a|b|c",
    ]
    first, second = hands(read_acpc(lines, "x.log"))
    assert first.names == ("qin", "DeepStack") and first.payoffs == (50.0, -50.0)
    assert second.payoffs == (2.5, 2.5, -5.0) and second.num_players == 3
    assert (first.index, second.index) == (0, 1)  # ordinal, not the logged number


def test_nolimit_betting_is_recognised():
    (hand,) = hands(read_acpc(["STATE:0:r300r900c/r2250f:AcJs|3d2d/Kc5sQc:900|-900:a|b"], "x"))
    assert hand.is_nolimit


def test_bad_lines_say_file_line_and_why():
    lines = [
        "STATE:1:cc/cc:5d5c|9hQd/8dAs8s:20|-20:p1|p2",
        "STATE:2:cx:5d5c|9hQd:20|-20:p1|p2",
        "STATE:3:cc:5d5c|9hQd:20:p1|p2",
        "STATE:4:cc:5d5c|9hXd:20|-20:p1|p2",
        "STATE:5:cc:5d5c|5dQd:20|-20:p1|p2",
        "STATE:six:cc:5d5c|9hQd:20|-20:p1|p2",
        "STATE:7:cc",
        "garbage",
    ]
    records = list(read_acpc(lines, "bad.log"))
    bad = [r for r in records if isinstance(r, BadLine)]
    assert [b.line for b in bad] == [2, 3, 4, 5, 6, 7, 8]
    assert all(str(b).startswith(f"bad.log, line {b.line}: ") for b in bad)
    reasons = " / ".join(b.reason for b in bad)
    for needle in ("'x'", "payoffs", "not a card", "same card twice", "hand number",
                   "fields", "expected a STATE"):
        assert needle in reasons
    assert len(hands(records)) == 1  # the good line survives its bad neighbours


LINE_ALPHABET = st.sampled_from(list("STAE:0123456789cfrb/|#. AKQJT98765432shdcx\t-"))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(LINE_ALPHABET, max_size=80), max_size=5))
def test_random_lines_never_raise(lines):
    for reader in (read_acpc, read_glassfrog):
        for record in reader(lines, "fuzz.log"):
            assert isinstance(record, LoggedHand | Header | BadLine)
            if isinstance(record, BadLine):
                assert 1 <= record.line <= len(lines)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_mutated_real_lines_never_raise(data):
    line = data.draw(st.sampled_from(DEALER_LOG[2:4] + THESIS_SUMMARY))
    pos = data.draw(st.integers(0, len(line)))
    cut = data.draw(st.integers(0, 3))
    insert = data.draw(st.text(LINE_ALPHABET, max_size=3))
    mutated = line[:pos] + insert + line[pos + cut:]
    for reader in (read_acpc, read_glassfrog):
        for record in reader([mutated], "fuzz.log"):
            assert isinstance(record, LoggedHand | Header | BadLine)


def test_the_formats_are_registered_for_holdem_and_read_what_the_readers_read(tmp_path):
    from batchrl.games import FORMATS, Source
    from batchrl.records import LogLines

    for name, lines, reader in (("acpc", DEALER_LOG, read_acpc),
                                ("glassfrog", THESIS_SUMMARY, read_glassfrog)):
        fmt = FORMATS[name]
        assert fmt.game == "holdem" and not fmt.directories
        path = tmp_path / f"{name}.txt"
        path.write_text("\n".join(lines) + "\n")
        assert fmt.sniff(path, lines) and not FORMATS[
            "glassfrog" if name == "acpc" else "acpc"].sniff(path, lines)
        records = list(fmt.read(Source(path, LogLines(path))))
        assert records == list(reader(lines, str(path))) and hands(records)
