"""Adding a game is one package plus one parser module, registered through the public API.

Kuhn poker (``tests/kuhn``) lives in the tests only: registered here, it runs
generate -> ingest -> fqi -> evaluate through the command line, and no file of the
package names it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from locations import ROOT

from batchrl.cli import main
from batchrl.games import (
    GAMES,
    get_game,
    register_format,
    register_game,
    unregister_format,
    unregister_game,
)
from batchrl.games.conformance import check_game


def invoke(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def kuhn():
    from kuhn import GAME
    from kuhn.parser import FORMAT

    register_game(GAME)
    register_format(FORMAT)
    yield GAME
    unregister_format(FORMAT.name)
    unregister_game(GAME.name)


def test_the_toy_game_passes_the_conformance_check(kuhn):
    check_game(kuhn, playouts=50)
    assert get_game("kuhn") is kuhn and "kuhn" in GAMES


def test_generate_ingest_fqi_evaluate_through_the_command_line(kuhn, tmp_path: Path):
    log, store = tmp_path / "kuhn.log", tmp_path / "store"
    result = invoke("generate", "--game", "kuhn", "--games", 3000, "--seed", 1, "-o", log)
    assert result.exit_code == 0, result.output
    assert "3,000 hands written" in result.output
    assert log.read_text().count("\n") == 3000

    result = invoke("ingest", log, "--store", store)
    assert result.exit_code == 0, result.output
    assert "kuhn" in result.output and "3,000 hands" in result.output
    result = invoke("info", store)
    assert "card, history" in result.output and "pass, bet" in result.output

    result = invoke("fqi", "--store", store)  # no flags: the game's recommended settings
    assert result.exit_code == 0, result.output
    assert ("settings: trees=20, nmin=4, k=None, iters=4, gamma=1.0, per_action=False, "
            "freeze_after=None, support=None, seed=0 (kuhn's recommended settings)"
            ) in result.output
    model = store / "models" / "fqi-M20-nmin4-N4.npz"
    assert model.is_file()

    # the game comes from the model; the other seat defaults to random
    result = invoke("evaluate", "--model", model, "--games", 4000, "--json")
    assert result.exit_code == 0, result.output
    learned = json.loads(result.output)
    assert learned["game"] == "kuhn" and learned["players"][1] == "random"
    baseline = json.loads(invoke("evaluate", "--game", "kuhn", "--players", "random,random",
                                 "--games", 4000, "--json").output)
    # the learned player beats random by far more than chance: random against random is
    # even, up to its interval
    assert baseline["mean"]["low"] < 0 < baseline["mean"]["high"]
    assert learned["mean"]["low"] > baseline["mean"]["high"]


def test_a_bad_line_of_the_toy_game_is_named(kuhn, tmp_path: Path):
    log = tmp_path / "bad.log"
    log.write_text("KJ pbb\nQQ pp\nJK bp\n")
    result = invoke("ingest", log, "--store", tmp_path / "s", "--format", "kuhn")
    assert result.exit_code == 1
    assert "bad.log, line 2" in result.output and "two different cards" in result.output
    result = invoke("ingest", log, "--store", tmp_path / "s", "--format", "kuhn",
                    "--on-error", "skip")
    assert result.exit_code == 0 and "2 hands" in result.output


def test_no_file_of_the_package_names_the_toy_game():
    named = [p for folder in ("batchrl", "parsers") for p in (ROOT / folder).rglob("*.py")
             if "kuhn" in p.read_text().lower()]
    assert named == []


def test_an_unknown_game_or_capability_is_one_clear_line():
    result = invoke("generate", "--game", "chess", "-o", "x.log")
    assert result.exit_code == 2
    assert "no game 'chess': the games are" in result.output
    solvable = [n for n, g in GAMES.items() if g.can("solve")]
    unsolvable = [n for n, g in GAMES.items() if not g.can("solve")]
    if unsolvable:
        result = invoke("solve", unsolvable[0])
        assert result.exit_code == 2 and "has no exact solver" in result.output
        assert all(n in result.output for n in solvable)


def rules_members(rules: object) -> set[str]:
    """The public members a game's rules core has: its own, its protocol's (attributes
    declared without a value counted too)."""
    return {n for c in type(rules).__mro__ if c is not object
            for n in (*vars(c), *getattr(c, "__annotations__", {})) if not n.startswith("_")}


@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_games_rules_core_is_small(name: str):
    """The facts and the rules, and what search needs of them: every other face of a game
    (its logs, its players, its settings, its options) is beside the core, not in it."""
    members = rules_members(GAMES[name].rules)
    assert len(members) <= 20, sorted(members)
    assert {"new_game", "legal_actions", "step", "returns", "encode"} <= members


def test_the_toy_games_rules_core_is_the_protocol(kuhn):
    from batchrl.games import Rules

    assert rules_members(kuhn.rules) == rules_members(Rules())
    assert kuhn.rules.name == kuhn.name == "kuhn" and kuhn.log.rules is kuhn.rules


def test_a_face_made_with_other_rules_is_refused(kuhn):
    from batchrl.games import Game, GameError, PlayFace

    with pytest.raises(GameError, match="made with holdem's rules"):
        Game(kuhn.rules, play=PlayFace(GAMES["holdem"].rules))
