"""The fast reader of one-value-a-line TOML gives exactly what ``tomllib`` gives, or
leaves the text to it: on hand histories as written, and mutated (bit flips, lines
deleted, doubled, huge numbers, bytes that are no UTF-8 ...)."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest
from fuzzing import ANTES_HAND, MUTATIONS, Mutation
from hypothesis import given, settings
from hypothesis import strategies as st

from parsers.toml_lines import loads
from tests.locations import SHARED, needs
from tests.parsers.test_phh import CENTS, THREE

# one value a line, as the Pluribus hands and batchrl's own are written
PLURIBUS_LIKE = """variant = 'NT'
ante_trimming_status = true
antes = [0, 0, 0, 0, 0, 0]
blinds_or_straddles = [50, 100, 0, 0, 0, 0]
min_bet = 100
starting_stacks = [10000, 10000, 10000, 10000, 10000, 10000]
actions = ['d dh p1 Qh5c', 'd dh p2 9h6h', 'p3 cbr 210', 'p4 f', 'd db 7s9cTc', 'p2 f']
hand = 1
players = ['MrBlonde', 'MrWhite', 'MrPink', 'MrBrown', 'Pluribus', 'MrBlue']
finishing_stacks = [9950, 9555, 10495, 10000, 10000, 10000]
"""
ONE_LINE = [PLURIBUS_LIKE,
            'variant = "NT"\nactions = ["d dh p1 AsKs", "p1 cbr 6" ,]  # a comment\n'
            "players = [ ]\nx = -0\ny = 0.25\nok = false\n",
            "[1]\n" + PLURIBUS_LIKE + "\n['2']\n" + PLURIBUS_LIKE + '\n  [ "3" ]  # c\n'
            + PLURIBUS_LIKE.replace("10495", "104.95")]
# and the multi-line arrays and comments of the historical hands: tomllib's
SEEDS = [*ONE_LINE, THREE, CENTS, ANTES_HAND]


def _typed(value: Any) -> Any:
    """``value`` with every scalar's type beside it: 1, 1.0 and True differ."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


def _tomllib(text: str) -> Any:
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return "an error"


def test_the_usual_files_read_fast_and_the_same() -> None:
    for text in ONE_LINE:
        fast = loads(text)
        assert fast is not None and _typed(fast) == _typed(tomllib.loads(text))


@settings(max_examples=300, deadline=None, database=None)
@given(seed=st.sampled_from(SEEDS), changes=st.lists(st.builds(
    Mutation, kind=st.sampled_from(MUTATIONS), at=st.floats(0, 1, exclude_max=True),
    size=st.sampled_from((1, 16, 1000)), pick=st.integers(0, 1 << 30)), min_size=1,
    max_size=3))
def test_mutated_files_read_the_same_or_go_to_tomllib(seed: str, changes: list[Mutation]
                                                      ) -> None:
    data = seed.encode()
    for change in changes:
        data = change.apply(data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return  # the reader stops before either parser
    fast = loads(text)
    if fast is not None:
        assert _typed(fast) == _typed(_tomllib(text))


@needs(SHARED / "phh" / "pluribus")
def test_a_pluribus_session_reads_fast_and_the_same() -> None:
    files = sorted((SHARED / "phh" / "pluribus" / "100").glob("*.phh"))
    for path in files:
        text = path.read_text()
        assert _typed(loads(text)) == _typed(tomllib.loads(text)), path


@pytest.mark.parametrize("text", ['a = "x\\ty"', "a = 1e5", "a = 1_000", "a = 007",
                                  "a = [1,\n 2]", "a.b = 1", "a = 1\na = 2", "[t]\n[t]",
                                  "a = 'x'\r\n", "a = 1979-05-27", "a = {b = 1}", "a = inf"])
def test_more_of_toml_goes_to_tomllib(text: str) -> None:
    assert loads(text) is None
