"""`batchrl.games.jsonlines.parse_json`: orjson's values where it is installed, json's
where it is not, and the same errors either way."""

from __future__ import annotations

import json

import pytest

from batchrl.games import jsonlines
from batchrl.games.hanabi.logs import generate

LINES = [
    '{"a": 1, "b": [1.5, -0.0, 1e-300, 12345678901234567], "c": null, "d": true}',
    '{"x": NaN, "y": Infinity}',  # json reads them, orjson does not
    '{"big": 123456789012345678901234567890}',  # past 64 bits: json's int
    '[-9223372036854775809, 18446744073709551616, 9223372036854775807]',  # the edges
    '{"name": "ok \\ud83d\\ude00", "é": "ünï"}',
    '[0.1, 0.2, 0.30000000000000004, 2.2250738585072014e-308]',
]
BAD = [
    ('{"name": "bad \\udc80"}', "lone surrogate"),
    ('{"a": ', "not JSON"),
    ("[" * 101 + "]" * 101, "nest"),
]


@pytest.fixture(params=["orjson", "json"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "orjson":
        pytest.importorskip("orjson", reason="the fast extra is not installed")
        assert jsonlines._compiled() is not None  # the lines below go through orjson
    else:
        monkeypatch.setattr(jsonlines, "_compiled", lambda: None)
    return str(request.param)


def _same(a: object, b: object) -> bool:
    # NaN is no value equal to itself: compare the JSON json writes of both
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_the_values_are_json_s(parser: str, tmp_path) -> None:
    for line in LINES:
        assert _same(jsonlines.parse_json(line), json.loads(line)), (parser, line)
    generate(tmp_path, ["bot2", "bot2"], 2, seed=3)
    for path in tmp_path.iterdir():
        for line in path.read_text().splitlines():
            # as JSON text, so an int read as a float (1 == 1.0) is seen
            assert _same(jsonlines.parse_json(line), json.loads(line))


def test_the_errors_are_json_s(parser: str) -> None:
    for line, message in BAD:
        with pytest.raises(ValueError, match=message):
            jsonlines.parse_json(line)


def test_a_file_s_line_parser_reads_each_line_as_parse_json_does(parser: str) -> None:
    """The checks `line_parser` makes once for a whole file (ASCII, no escape, no number
    past 64 bits) leave every line's value and error as `parse_json` gives them."""
    files = [[line] for line in LINES] + [LINES, ["[1]", '{"a": NaN}'], ['{"a": "x"}', "[2]"]]
    for lines in files:
        parse = jsonlines.line_parser("\n".join(lines) + "\n")
        for line in lines:
            assert _same(parse(line), jsonlines.parse_json(line)), (parser, line)
    for line, message in BAD:
        for text in (line, f"[1]\n{line}\n"):
            with pytest.raises(ValueError, match=message):
                jsonlines.line_parser(text)(line)
    # a plain file's lines skip the per-line checks where orjson reads them; a file with
    # a long number, an escape or text not ASCII is read line by line as parse_json does
    assert (jsonlines.line_parser('{"a": 1}\n[2.5]\n') is jsonlines.parse_json) == \
        (parser == "json")
    for text in ('{"n": 123456789012345678901}\n[1]\n', '["\\u00e9"]\n', '["é"]\n'):
        assert jsonlines.line_parser(text) is jsonlines.parse_json
