import dataclasses
from pathlib import Path

import pytest

from batchrl.games.holdem import gamedef
from batchrl.games.holdem.gamedef import GameDefError

ACPC_LIMIT_TEXT = """\
GAMEDEF
limit
numPlayers = 2
numRounds = 4
blind = 10 5
raiseSize = 10 10 20 20
firstPlayer = 2 1 1 1
maxRaises = 3 4 4 4
numSuits = 4
numRanks = 13
numHoleCards = 2
numBoardCards = 0 3 1 1
END GAMEDEF
"""


def test_the_acpc_heads_up_limit_file_reads_as_the_builtin():
    parsed = gamedef.parse(ACPC_LIMIT_TEXT, name="holdem.limit.2p.reverse_blinds")
    assert parsed == gamedef.HEADS_UP_LIMIT
    assert parsed.first_player == (1, 0, 0, 0)  # the file counts from 1
    assert parsed.small_blind_player == 1 and parsed.big_blind == 10


def test_every_builtin_round_trips_through_the_file_format():
    for game in gamedef.BUILTINS.values():
        assert gamedef.parse(game.to_text(), name=game.name) == game


def test_nolimit_file_with_stacks():
    text = ACPC_LIMIT_TEXT.replace("limit\n", "nolimit\n", 1).replace(
        "raiseSize = 10 10 20 20\n", "stack = 20000 20000\n")
    game = gamedef.parse(text)
    assert game.betting == "nolimit" and game.stack == (20000, 20000)


def test_defaults_follow_the_acpc_server():
    text = "GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 2\nblind = 10 5\n" \
           "raiseSize = 10 20\nnumBoardCards = 0 5\nEND GAMEDEF\n"
    game = gamedef.parse(text)
    assert game.first_player == (0, 0)
    assert game.max_raises == (255, 255)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("limit\n", "expected GAMEDEF"),
        ("GAMEDEF\nlimit\nnumPlayers = two\nEND GAMEDEF\n", "line 3"),
        ("GAMEDEF\nlimit\nbogus = 1\nEND GAMEDEF\n", "unknown setting"),
        ("GAMEDEF\nnumPlayers = 2\nEND GAMEDEF\n", "neither limit nor nolimit"),
        (ACPC_LIMIT_TEXT.replace("blind = 10 5", "blind = 10 5 1"), "blind has 3 values"),
        (ACPC_LIMIT_TEXT.replace("END GAMEDEF\n", ""), "no END GAMEDEF"),
    ],
)
def test_bad_game_files_name_the_problem(text, needle):
    with pytest.raises(GameDefError, match=needle):
        gamedef.parse(text)


def test_logs_name_games_by_a_path_from_another_machine():
    found = gamedef.builtin_by_filename(
        "/home/dmorrill/.rvm/gems/ruby-1.9.3-p194/gems/acpc_dealer-0.0.1/vendor/"
        "project_acpc_server/holdem.limit.3p.game")
    assert found is gamedef.THREE_PLAYER_LIMIT
    assert gamedef.builtin_by_filename("./wvholdem.limit.2p.game") is None


def test_resolve_takes_names_and_files(tmp_path: Path):
    assert gamedef.resolve("holdem.limit.2p.reverse_blinds") is gamedef.HEADS_UP_LIMIT
    path = tmp_path / "mine.game"
    path.write_text(ACPC_LIMIT_TEXT)
    assert gamedef.resolve(str(path)).name == "mine"
    with pytest.raises(GameDefError, match="no game file"):
        gamedef.resolve(str(tmp_path / "missing.game"))


def test_antes_are_params_only_where_a_game_has_them():
    """A game without antes has the params it always had (stores and models of it still
    match); one with them round-trips, and its antes are checked like its blinds."""
    from batchrl.games.holdem.gamedef import HEADS_UP_NOLIMIT, GameDef, from_params

    assert "ante" not in HEADS_UP_NOLIMIT.params()
    with_antes = GameDef("x", "nolimit", 3, 4, (50, 100, 0), (), (2, 0, 0, 0), (255,) * 4,
                         (0, 3, 1, 1), stack=(500, 80, 500), ante=(0, 100, 0))
    assert from_params("x", with_antes.params()) == with_antes
    assert with_antes.posted_antes() == (0, 80, 0)  # no more than the stack
    trimmed = dataclasses.replace(with_antes, ante=(30, 60, 10), ante_trimming=True)
    assert trimmed.posted_antes() == (30, 30, 10)  # none over the second largest
    assert trimmed.table() == with_antes.table() != HEADS_UP_NOLIMIT.table()
    with pytest.raises(GameDefError, match="ante has 2 values for 3 players"):
        dataclasses.replace(with_antes, ante=(1, 2))
    with pytest.raises(GameDefError, match="ante -1 is outside"):
        dataclasses.replace(with_antes, ante=(0, -1, 0))
    cents = dataclasses.replace(with_antes, chip="0.01")
    assert cents.params()["chip"] == "0.01" and "chip" not in with_antes.params()
    assert cents.table() != with_antes.table()  # rewards in other units: other stores
    with pytest.raises(GameDefError, match=r"chip 0\.5: want a decimal unit"):
        dataclasses.replace(with_antes, chip="0.5")
