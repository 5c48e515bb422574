"""Eger et al.'s real Hanabi games: every deal rebuilt, every game replayed to its score."""

from collections import Counter

import pytest
from locations import SHARED_EGER, needs

from batchrl.games.hanabi.replay import hint_self
from batchrl.games.hanabi.rules import deal, is_terminal, step
from parsers.hanabi_eger import EgerError, _shuffle, read_eger

EGER = SHARED_EGER


def test_the_shuffle_is_a_seeded_permutation():
    deck = list(range(50))
    assert sorted(_shuffle(deck, 7)) == deck and _shuffle(deck, 7) == _shuffle(deck, 7)
    assert _shuffle(deck, 7) != _shuffle(deck, 8)


def test_a_broken_log_names_the_file_and_line(tmp_path):
    bad = tmp_path / "game1.log"
    bad.write_text("Treatment: ('full', 3)\n[(0, 1)]\nMOVE: 0 7 None 1 None 1\nScore 0\n")
    with pytest.raises(EgerError, match=r"game1.log:3: action 7"):
        read_eger(bad)
    bad.write_text("hello\n")
    with pytest.raises(EgerError, match="not an Eger"):
        read_eger(bad)


@needs(EGER)
def test_every_real_game_replays_to_its_logged_score():
    files = sorted(EGER.glob("game*.log"))
    assert len(files) == 2040
    scores, ais, self_hinting = Counter(), Counter(), 0
    for path in files:
        game = read_eger(path)  # every deal rebuilt from its seed leaves the logged pile
        state = deal(game.deck, 2, discard_at_max_hints=True)
        for number, (line, seat, action) in enumerate(game.moves):
            assert seat == state.current, f"{path}:{line}: seat {seat} moves out of turn"
            state = hint_self(state, action) if number in game.self_hints else \
                step(state, action)
        assert is_terminal(state), f"{path}: the log ends before the game does"
        assert state.score_played == game.score, f"{path}: {state.score_played} != {game.score}"
        scores[game.score] += 1
        ais[game.ai] += 1
        self_hinting += bool(game.self_hints)
    # 4 games have the AI hint itself, a move the rules do not have: replayed as their
    # program did, they too reach their logged score
    assert self_hinting == 4
    assert set(ais) == {"full", "intentional", "outer"} and max(scores) <= 25
