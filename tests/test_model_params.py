"""A model's metadata cannot change the rules it is scored under: its game params are
checked against the game's own bounds (the ones a game file or ``generate`` is held
to), and what it says is printed with its escape sequences shown, not acted on."""

from __future__ import annotations

import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from batchrl.cli import main
from batchrl.games import GAMES, GameError
from batchrl.games.holdem import gamedef

SAMPLE = Path(__file__).resolve().parent.parent / "datasets" / "samples" / \
    "ROOM_90.dealer.summary"


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("model")
    runner = CliRunner()
    assert runner.invoke(main, ["ingest", str(SAMPLE), "--store",
                                str(where / "s")]).exit_code == 0
    got = runner.invoke(main, ["fqi", "--store", str(where / "s"), "--trees", "3", "--iters",
                               "1", "--out", str(where / "m.npz")])
    assert got.exit_code == 0, got.output
    return where / "m.npz"


def _edited(model: Path, to: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """``model`` with its metadata changed by ``change``, as an editor of the file would."""
    with zipfile.ZipFile(model) as z:
        members = {n: z.read(n) for n in z.namelist()}
    document = json.loads(members["model.json"])
    change(document["meta"])
    with zipfile.ZipFile(to, "w") as z:
        for name, data in members.items():
            z.writestr(name, json.dumps(document) if name == "model.json" else data)
    return to


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda meta: meta["game_params"].__setitem__(key, value)


@pytest.mark.parametrize(("change", "said"), [
    (_set("blind", [10**30, 10**29]), "blind 1000000000000000000000000000000 is outside 0 to "
                                      "2,147,483,647, the bounds of an ACPC game"),
    (_set("raise_size", [10**30] * 4), "raise_size 1000000000000000000000000000000 is outside"),
    (_set("max_raises", [10**9] * 4), "max_raises 1000000000 is outside 0 to 255"),
    (_set("blind", [-2, -1]), "blind -2 is outside 0 to"),
    (_set("raise_size", [float("nan")] * 4), "raise_size must be whole numbers, not (nan,"),
    (_set("num_players", 1000), "num_players 1000 is outside 2 to 10"),
    (lambda meta: meta.__setitem__("game", "holdem.limit.3p"),
     "holdem.limit.3p is a built-in game's name, but its num_players, blind, raise_size, "
     "first_player are not that game's")])
def test_a_models_game_params_outside_the_games_bounds_are_refused(
        model: Path, tmp_path: Path, change: Callable[[dict[str, Any]], None],
        said: str) -> None:
    edited = _edited(model, tmp_path / "edited.npz", change)
    got = CliRunner().invoke(main, ["evaluate", "--model", str(edited), "--opponent", "random",
                                    "--hands", "20"])
    assert got.exit_code == 1, got.output
    assert said in got.output and "Traceback" not in got.output


def test_a_game_file_is_held_to_the_same_bounds(tmp_path: Path) -> None:
    huge = gamedef.HEADS_UP_LIMIT.to_text().replace("maxRaises = 3 4 4 4",
                                                    "maxRaises = 3 4 4 1000")
    (tmp_path / "raises.game").write_text(huge)
    small = gamedef.HEADS_UP_LIMIT.to_text().replace("numRanks = 13", "numRanks = 2")
    (tmp_path / "small.game").write_text(small)
    with pytest.raises(gamedef.GameDefError, match="a hand deals 9 cards from a deck of 8"):
        gamedef.load(tmp_path / "small.game")
    with pytest.raises(gamedef.GameDefError, match="max_raises 1000 is outside 0 to 255"):
        gamedef.load(tmp_path / "raises.game")
    # a file named as a built-in game but of other rules would say one game and play another
    (tmp_path / "holdem.limit.3p.game").write_text(gamedef.HEADS_UP_LIMIT.to_text())
    with pytest.raises(gamedef.GameDefError, match=r"holdem.limit.3p is a built-in game's name"):
        gamedef.load(tmp_path / "holdem.limit.3p.game")
    shutil.copy(tmp_path / "holdem.limit.3p.game", tmp_path / "mine.game")
    assert gamedef.load(tmp_path / "mine.game").params() == gamedef.HEADS_UP_LIMIT.params()


@pytest.mark.parametrize(("game", "key", "value", "said"), [
    ("president", "pass_locks", 1_000_000_000, "pass_locks is 1000000000, not true or false"),
    ("president", "pass_locks", "x", "pass_locks is 'x', not true or false"),
    ("president", "match", True, "match is True, not a whole number"),
    ("sette-mezzo", "limit", True, "limit is True, not a number"),
    ("hanabi", "players", 2.5, "players is 2.5, not a whole number")])
def test_a_stored_params_type_is_the_fields(game: str, key: str, value: Any,
                                            said: str) -> None:
    with pytest.raises(GameError, match=said.replace("(", r"\(")):
        GAMES[game].log.params_from_store(game, {key: value})


def test_policy_show_and_info_print_escapes_shown_not_acted_on(model: Path,
                                                               tmp_path: Path) -> None:
    evil = "\x1b]0;pwned\x07\x1b[31mred"
    edited = _edited(model, tmp_path / "m.npz", lambda meta: meta.update(
        store=evil, action_names=[*meta["action_names"][:-1], "raise\x1b[2J"]))
    shown = CliRunner().invoke(main, ["policy", "show", str(edited)])
    assert shown.exit_code == 0, shown.output
    assert "\x1b" not in shown.output and "\x07" not in shown.output
    assert r"\x1b]0;pwned\x07\x1b[31mred" in shown.output and r"raise\x1b[2J" in shown.output
    log = tmp_path / f"x{evil}.dealer.summary"
    shutil.copy(SAMPLE, log)
    runner = CliRunner()
    assert runner.invoke(main, ["ingest", str(log), "--store", str(tmp_path / "s")]
                         ).exit_code == 0
    info = runner.invoke(main, ["info", str(tmp_path / "s")])
    assert info.exit_code == 0 and "\x1b" not in info.output and r"\x1b]0;pwned" in info.output
