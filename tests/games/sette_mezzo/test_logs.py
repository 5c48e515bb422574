import json

import numpy as np
import pytest

from batchrl.games.sette_mezzo.logs import Game, ReplayError, play, write_log
from batchrl.records import BadLine
from parsers.sette_mezzo import LoggedGame, read_file, read_sette_mezzo


@pytest.mark.parametrize("policy", ["random", "optimal"])
def test_written_games_read_back_the_same(tmp_path, policy):
    games = play(policy, 300, np.random.default_rng(5), limit=5)
    path = tmp_path / "games.jsonl"
    assert write_log(path, games) == 300
    records = list(read_file(path))
    assert all(isinstance(r, LoggedGame) for r in records)
    assert [r.game for r in records] == games
    assert [r.line for r in records] == list(range(1, 301))
    assert [r.index for r in records] == list(range(300))
    assert {r.source for r in records} == {str(path)}


def test_play_is_seeded_and_takes_any_batched_policy():
    a = play("random", 50, np.random.default_rng(1), limit=4)
    b = play("random", 50, np.random.default_rng(1), limit=4)
    assert a == b and {g.limit for g in a} == {4.0}
    batches = []

    def to_six(x):
        batches.append(len(x))
        return (x[:, 0] < 6).astype(int)

    games = play(to_six, 100, np.random.default_rng(2))
    assert batches[0] == 100 and len(batches) < 20  # one call per round, not per game
    for g in games:
        totals = np.cumsum([0.5 if k == 0 else k for k in g.player])
        assert g.actions[-1] == 0 or totals[-1] > 7.5
        assert all(t < 6 for t in totals[:-1])
    with pytest.raises(ValueError, match="shape"):
        play(lambda x: np.zeros((len(x), 2)), 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="policy 'greedy'"):
        play("greedy", 3, np.random.default_rng(0))


GOOD = {"seed": None, "limit": 5, "player": [3, 0.5], "opponent": [3, 1, 7],
        "actions": "hs", "reward": 1}


def line(**change):
    return json.dumps(GOOD | change)


BAD = [
    ("not json", "not JSON"),
    ("[1, 2]", "JSON object"),
    (json.dumps({k: v for k, v in GOOD.items() if k != "reward"}), "missing fields ['reward']"),
    (line(player=[3, 0.7]), "0.7 is not a card value"),
    (line(player="3"), "not a list"),
    (line(actions="hx"), "'h' (hit) and 's' (stick)"),
    (line(seed=True), "seed True"),
    (line(limit=9), "limit"),
    (line(reward=-1), "the rules give the player 1; the log says -1"),
    (line(actions="hss"), "after 2 of the actions: the game is over"),
    (line(actions="h"), "not over after the logged actions (h)"),
    (line(actions="s"), "the opponent [3, 0.5, 1, 7]"),  # the player's hit went to the opponent
    (line(opponent=[3, 1, 7, 2]), "the log says [3, 0.5] and [3, 1, 7, 2]"),
    (line(player=[7, 7, 7], opponent=[7, 7], actions="hh", reward=-1), "5 cards worth 7"),
    (line(opponent=[3, 1]), "no card is left"),
    (line(player=[], opponent=[3]), "at least its first card"),
]


def test_bad_lines_name_file_line_and_reason(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(("\n".join([line(), *(text for text, _ in BAD), "", line()]) + "\n")
                     .encode() + b'{"limit": 5, "player": [\xff]}\n')
    records = list(read_file(path))
    good = [r for r in records if isinstance(r, LoggedGame)]
    bad = [r for r in records if isinstance(r, BadLine)]
    assert [(g.line, g.index) for g in good] == [(1, 0), (len(BAD) + 3, 1)]
    assert len(bad) == len(BAD) + 1
    for record, (_, reason) in zip(bad, BAD, strict=False):
        assert record.source == str(path)
        assert reason in record.reason, (record.line, record.reason)
        assert str(record).startswith(f"{path}, line {record.line}: ")
    assert [b.line for b in bad[:-1]] == list(range(2, len(BAD) + 2))
    assert bad[-1].line == len(BAD) + 4 and "not JSON" in bad[-1].reason


def test_replay_gives_each_decision_then_the_end():
    states = Game.from_json(line()).replay()
    assert [s.total for s in states] == [3.0, 3.5, 3.5]
    assert states[-1].opponent == (3, 1, 7)
    with pytest.raises(ReplayError, match="the log says 0"):
        Game.from_json(line(reward=0)).replay()


def test_reader_never_raises_on_garbage():
    lines = ["{", "null", '{"limit": "5"}', "\x00\x01", '{"limit": 1e999, "player": [1], '
             '"opponent": [1], "actions": "s", "reward": 0}']
    records = list(read_sette_mezzo(lines, "junk"))
    assert len(records) == len(lines) and all(isinstance(r, BadLine) for r in records)
