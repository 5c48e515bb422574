"""hanab.live's and Leduc's readers refuse what their format does not allow (#45): one
line naming the file, the game or line and what was wrong, the other games kept."""

import json

import numpy as np
from fuzzing import write_hanablive

from batchrl.games.hanabi.transitions import Episode
from batchrl.records import BadLine
from parsers.hanabi_sources import episodes
from parsers.leduc import read_leduc


def _live_games(tmp_path, count=3):
    """``count`` finished two-player exports of the bots, and their JSON."""
    rng = np.random.default_rng(0)  # game 0 has a red clue
    paths = [tmp_path / f"good{k}.json" for k in range(count)]
    for path in paths:
        write_hanablive(path, rng)
    return paths, [json.loads(p.read_text()) for p in paths]


def _read_with(tmp_path, changed):
    """The good games and the first one ``changed`` (a function of its JSON, edited in
    place, that picks and returns the action number it changed) as ``bad.json``, all
    read as one source: the bad game's one message, and the good games' episodes."""
    paths, data = _live_games(tmp_path)
    number = changed(data[0])
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data[0]))
    out = list(episodes([paths[0], bad, *paths[1:]], "hanablive"))
    refused = [r for r in out if isinstance(r, BadLine)]
    assert [type(r) for r in out] == [Episode, BadLine, Episode, Episode], refused
    message = str(refused[0])
    assert "\n" not in message and message.startswith(f"{bad}: "), message
    return message, number


def _first(game, test):
    """The number (from 1) of the first action of ``game`` that passes ``test``."""
    return next(n for n, a in enumerate(game["actions"], 1) if test(n, a))


def test_hanablive_players_must_be_a_list_not_a_string(tmp_path):
    def players_as_text(game):
        game["players"] = "ab"  # two letters: read as two players before
        return 0

    message, _ = _read_with(tmp_path, players_as_text)
    assert "players 'ab': want a list of names" in message


def test_hanablive_a_clue_to_a_seat_out_of_range_is_refused_not_wrapped(tmp_path):
    for seat, target in ((0, -1), (1, 2)):  # both wrap round to the other seat of two
        def clue_out_of_range(game, seat=seat, target=target):
            # the actions alternate seats: action n is seat (n - 1) % 2's
            number = _first(game, lambda n, a: a["type"] in (2, 3) and (n - 1) % 2 == seat)
            game["actions"][number - 1]["target"] = target
            return number

        message, number = _read_with(tmp_path, clue_out_of_range)
        assert f"action {number} (" in message, message
        assert f"seat {seat} clues seat {target}, not one of 0-1" in message


def test_hanablive_a_card_out_of_the_deck_is_refused_as_such(tmp_path):
    def play_card_minus_one(game):
        number = _first(game, lambda n, a: a["type"] in (0, 1))
        game["actions"][number - 1]["target"] = -1
        return number

    message, number = _read_with(tmp_path, play_card_minus_one)
    assert f"action {number} (" in message and "deck card -1, not one of 0-49" in message


def test_hanablive_a_clue_without_its_value_is_refused_not_read_as_0(tmp_path):
    def red_clue_without_value(game):
        # a red clue (suit 0) read the same without its value before: no error at all
        number = _first(game, lambda n, a: a["type"] == 2 and a["value"] == 0)
        del game["actions"][number - 1]["value"]
        return number

    message, number = _read_with(tmp_path, red_clue_without_value)
    assert f"action {number} (" in message and "a colour clue (type 2) has no value" in message


def test_hanablive_a_rank_clue_without_its_value_says_so(tmp_path):
    def rank_clue_without_value(game):
        number = _first(game, lambda n, a: a["type"] == 3)
        del game["actions"][number - 1]["value"]
        return number

    message, number = _read_with(tmp_path, rank_clue_without_value)
    assert f"action {number} (" in message and "a rank clue (type 3) has no value" in message


def test_hanablive_a_play_may_leave_its_value_out_as_the_format_does(tmp_path):
    paths, (game,) = _live_games(tmp_path, 1)
    for action in game["actions"]:
        if action["type"] in (0, 1, 4):
            action.pop("value", None)
    paths[0].write_text(json.dumps(game))
    (out,) = episodes(paths, "hanablive")
    assert isinstance(out, Episode)


def test_hanablive_options_that_are_no_object_are_refused_not_taken_for_none(tmp_path):
    def options_as_list(game):
        game["options"] = []
        return 0

    message, _ = _read_with(tmp_path, options_as_list)
    assert "options []: want an object" in message


def test_hanablive_actions_that_are_no_objects_are_refused_by_number(tmp_path):
    def action_as_list(game):
        game["actions"][2] = [0, 1]
        return 3

    message, _ = _read_with(tmp_path, action_as_list)
    assert "action 3 ([0, 1]): want an object" in message


def test_leduc_a_repeated_hand_number_is_refused_the_first_kept():
    lines = ["# leduc", "STATE:0:rc/rc:Kh|Qs/Js:7|-7:a|b", "STATE:1:rc/rc:Kh|Qs/Js:7|-7:b|a",
             "STATE:1:cc/cc:Qh|Ks/Js:-1|1:b|a", "STATE:2:rc/rc:Kh|Qs/Js:7|-7:a|b",
             "STATE:001:rf:Kh|Qs:1|-1:a|b"]
    records = list(read_leduc(lines, "l.log"))
    assert [type(r).__name__ for r in records] == ["LeducHand", "LeducHand", "BadLine",
                                                   "LeducHand", "BadLine"]
    assert [r.line for r in records if not isinstance(r, BadLine)] == [2, 3, 5]
    assert records[1].states[-1].history == "rc/rc"  # the first hand 1 is the one kept
    assert str(records[2]) == "l.log, line 4: hand 1 again: line 3 has it, and a hand is " \
                              "numbered once in a log"
    assert str(records[4]).startswith("l.log, line 6: hand 1 again: line 3 has it")


def test_hanablive_a_deck_of_no_card_objects_is_refused_whatever_its_first_item(tmp_path):
    def deck_with_a_zero(game):
        game["deck"][0] = 0
        return 0

    message, _ = _read_with(tmp_path, deck_with_a_zero)
    assert "want a list of cards (objects)" in message
