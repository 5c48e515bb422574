import gc
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from locations import HEADS_UP_LIMIT_LOGS, ROOT

from batchrl.games.holdem import gamedef
from batchrl.ingest import IngestConfig, IngestError, ingest
from batchrl.store import Store, StoreError
from parsers.acpc import LoggedHand, read_acpc, read_glassfrog


def run(paths, store, **kw):
    # hold'em's own options: --game is the option "gamedef", --pv/--no-pv "pv"
    options = {"gamedef" if k == "game" else k: kw.pop(k) for k in ("game", "pv") if k in kw}
    return ingest(IngestConfig(paths=tuple(Path(p) for p in paths), store=store,
                               options=options, **kw))


def logged_hands(path, reader=read_acpc):
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [r for r in reader(lines, str(path)) if isinstance(r, LoggedHand)]


def assert_rewards_add_up(store_dir, path, reader=read_acpc):
    """For every seat that acts in a hand, its rewards sum to its logged payoff."""
    frame = Store.open(store_dir).to_pandas(columns=["episode", "player", "reward"])
    sums = frame.groupby(["episode", "player"]).reward.sum()
    hands = logged_hands(path, reader)
    by_index = {h.index: h for h in hands}
    checked = 0
    for (episode, seat), total in sums.items():
        hand = by_index[int(episode.split(":")[1])]
        assert total == pytest.approx(hand.payoffs[seat], abs=1e-9), (hand.line, seat)
        checked += 1
    acted = sum(len({0, 1} if len(h.betting.replace("/", "")) > 1 else {1}) for h in hands)
    assert checked == acted
    return len(hands)


@pytest.mark.parametrize("name", HEADS_UP_LIMIT_LOGS)
def test_every_real_heads_up_limit_hand_adds_up(shared_acpc, tmp_path, name):
    (report,) = run([shared_acpc / name], tmp_path / "store")
    assert report.hands == 1000 and not report.skipped
    assert report.game == "holdem.limit.2p.reverse_blinds"
    assert assert_rewards_add_up(tmp_path / "store", shared_acpc / name) == 1000


def test_custom_game_needs_its_file_and_then_adds_up(shared_acpc, tmp_path):
    log = shared_acpc / "Michael-Z__poker-2__foo.log"
    with pytest.raises(IngestError, match=r"wvholdem\.limit\.2p\.game.*--game FILE"):
        run([log], tmp_path / "refused")
    # Two rounds, the whole board on the second; sizes read off the logged payoffs.
    game_file = tmp_path / "wvholdem.limit.2p.game"
    game_file.write_text("GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 2\nblind = 10 5\n"
                         "raiseSize = 10 20\nfirstPlayer = 2 1\nmaxRaises = 3 4\n"
                         "numSuits = 4\nnumRanks = 13\nnumHoleCards = 2\n"
                         "numBoardCards = 0 5\nEND GAMEDEF\n")
    (report,) = run([log], tmp_path / "store", game=str(game_file))
    assert report.hands == 1100  # two appended runs, hand numbers repeated
    assert assert_rewards_add_up(tmp_path / "store", log) == 1100
    info = Store.open(tmp_path / "store").info()
    assert "bet_round1" in info.features and "bet_river" not in info.features


def test_a_log_of_an_unknown_game_is_told_what_a_game_file_holds(tmp_path):
    """A header naming a game batchrl does not know (as Michael-Z's log names
    ./wvholdem.limit.2p.game, shipped with no log): the error names the flag, says what
    such a file holds and shows one, which taken as it is ingests a log of that game."""
    sample = (ROOT / "datasets" / "samples" / "random_vs_random.2p.limit.log").read_text()
    log = tmp_path / "custom.log"
    log.write_text(sample.replace("holdem.limit.2p.reverse_blinds.game", "./mine.game", 1))
    with pytest.raises(IngestError) as refused:
        run([log], tmp_path / "refused")
    said = str(refused.value)
    assert "./mine.game" in said and "--game FILE" in said and "blinds" in said
    shown = said[said.index("GAMEDEF"):said.index("END GAMEDEF") + len("END GAMEDEF")]
    (tmp_path / "mine.game").write_text(shown + "\n")
    (report,) = run([log], tmp_path / "store", game=str(tmp_path / "mine.game"))
    assert report.hands == 500


REAL_LOGS = {  # every real ACPC log but Michael-Z's custom game (above): its game, hands
    "bunny-sleepy__Poker_Project__logs__matchName.178390c.log": ("nolimit.2p", 100),
    "bunny-sleepy__Poker_Project__logs__matchName.6bdc9b9.log": ("nolimit.2p", 100),
    "bunny-sleepy__Poker_Project__logs__matchName.c9b540b.log": ("nolimit.2p", 1000),
    "bunny-sleepy__Poker_Project__logs__matchName.d0727f8.log": ("nolimit.2p", 61),  # cut off
    "bunny-sleepy__Poker_Project__logs__matchName.da62e6a.log": ("nolimit.2p", 100),
    "dmorrill10__acpc_backend__test__support__match.TestingBot.TestingBot"
    ".two_player_nolimit.10h.log": ("nolimit.2p", 10),  # no SCORE line
    "dmorrill10__acpc_poker_gui_client__spec__support__dealer_logs__2p.limit.h1000.r0.log":
        ("limit.2p", 1000),
    "dmorrill10__acpc_poker_gui_client__spec__support__dealer_logs__2p.nolimit.h1000.r0.log":
        ("nolimit.2p", 1000),
    "dmorrill10__acpc_poker_gui_client__spec__support__dealer_logs__3p.limit.h1000.r0.log":
        ("limit.3p", 1000),  # two fractional payoffs
    "dmorrill10__acpc_poker_gui_client__spec__support__dealer_logs__3p.nolimit.h1000.r0.log":
        ("nolimit.3p", 1000),
    "ethansbrown__acpc__project_acpc_server__matchName.log": ("nolimit.2p", 1000),
    "fding__evilpoker__project_acpc_server__matchName.log": ("limit.2p", 1000),
    "liuxinyuanxy__ACPCServer__qwq.log": ("nolimit.3p", 1000),
    # DeepStack against professionals: no header, " # time" suffixes, CRLF, hand numbers
    # restarting per table; recognised from its betting
    "obventio56__approximating_deepstack__ACPC__all_hands.log": ("nolimit.2p", 45037),
    "zhourunlong__TexasHoldemProject__logs__matchName.log": ("nolimit.2p", 1000),
}


def assert_every_seat_adds_up(store_dir, path, game):
    """Every hand of ``path`` is in the store, and each seat that acts in it has rewards
    adding up to its logged payoff (its seats found by replaying the betting)."""
    from batchrl.games.holdem.replay import replay_betting

    frame = Store.open(store_dir).to_pandas(columns=["episode", "player", "reward"])
    sums = frame.groupby(["episode", "player"]).reward.sum()
    hands = logged_hands(path)
    by_index = {h.index: h for h in hands}
    for (episode, seat), total in sums.items():
        hand = by_index[int(episode.split(":")[1])]
        assert total == pytest.approx(hand.payoffs[seat], abs=1e-9), (hand.line, seat)
    acted = sum(len({s.current for s, _ in replay_betting(game, h.betting).decisions})
                for h in hands)
    assert len(sums) == acted
    return len(hands)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(REAL_LOGS))
def test_every_real_acpc_log_ingests_and_adds_up(shared_acpc, tmp_path, name):
    kind, hands = REAL_LOGS[name]
    (report,) = run([shared_acpc / name], tmp_path / "store")
    assert report.hands == hands and not report.skipped
    game = next(g for g in gamedef.BUILTINS.values() if g.name.startswith(f"holdem.{kind}"))
    assert report.game == game.name
    assert assert_every_seat_adds_up(tmp_path / "store", shared_acpc / name, game) == hands
    if hands == 61:
        assert any("promises 100 hands and holds 61" in note for note in report.notes)
    info = Store.open(tmp_path / "store").info()
    if game.is_limit:
        assert info.actions == ("fold", "call", "raise")
    else:
        assert info.actions[-1] == "raise_allin" and "spr" in info.features
    assert ("pv2" in info.features) == (game.num_players == 3)


def test_nolimit_and_three_player_lines_made_by_hand(tmp_path):
    # heads-up no-limit as DeepStack's log has it: no header, CRLF, " # <time>" suffixes
    path = tmp_path / "nl.log"
    path.write_bytes(b"".join(line.encode() + b" # 1478520223.88\r\n" for line in [
        "STATE:0:r250r800c/r1500f:KcJs|3d2d/Kd5sQc:800|-800:a|b",
        "STATE:1:r20000c///:AhAd|KhKd/2c3c4s/9h/Tc:20000|-20000:b|a",  # all-in, run out
        "STATE:0:f:As8d|8c3h:50|-50:a|b",  # hand numbers restart (another table)
        "STATE:3:r250r300:As8d|8c3h:50|-50:a|b",  # a re-raise of 50 is under the minimum
    ]))
    with pytest.raises(IngestError, match=r"nl\.log, line 4: .*cannot raise to 300: a raise "
                                          r"goes to between 400 and 20000"):
        run([path], tmp_path / "fail")
    (report,) = run([path], tmp_path / "nl", on_error="skip")
    assert report.game == gamedef.HEADS_UP_NOLIMIT.name and report.hands == 3
    rows = Store.open(tmp_path / "nl").to_pandas().sort_values(["episode", "player", "step"])
    first = rows[rows.episode.str.endswith(":0")]
    assert first.move.tolist() == ["r800", "r1500", "r250", "c", "f"]
    names = Store.open(tmp_path / "nl").info().actions
    # r800 over a raise to 250: 550 over the call of 150 into a pot of 500 (1.1 pots)
    assert [names[a] for a in first.action] == ["raise_pot", "raise_half", "raise_pot",
                                                "call", "fold"]
    assert first.groupby("player").reward.sum().tolist() == [800, -800]
    shove = rows[rows.episode.str.endswith(":1")]
    assert [names[a] for a in shove.action] == ["call", "raise_allin"]
    assert shove.groupby("player").reward.sum().tolist() == [20000, -20000]
    # three-player limit: blinds 5/10/0, seat 2 opens; a split pot pays halves
    path = write(tmp_path, "3p.log", [
        "STATE:0:rfc/cc/cc/cc:8cAs|5s6c|5d6d/2c9h4c/Kc/Ks:-5|2.5|2.5:x|y|z",
        "STATE:1:ccc/ccc/ccc/ccc:2c3d|4h5s|Kd9c/AsAhAd/7c/Jh:-10|-10|20:x|y|z",
        "STATE:2:rff:2c3d|4h5s|Kd9c:-5|-10|15:x|y|z",
    ])
    (report,) = run([path], tmp_path / "3p")
    assert report.game == gamedef.THREE_PLAYER_LIMIT.name and report.hands == 3
    assert assert_every_seat_adds_up(tmp_path / "3p", path, gamedef.THREE_PLAYER_LIMIT) == 3
    frame = Store.open(tmp_path / "3p").to_pandas()
    names = Store.open(tmp_path / "3p").info().features
    pv, pv2 = (np.stack(frame.state)[:, names.index(n)] for n in ("pv", "pv2"))
    # two hands are harder to beat than one (pv2 is drawn: within its noise)
    assert (pv2 <= pv + 0.02).all() and pv2.mean() < pv.mean() - 0.1


def test_bundled_sample_ingests_and_reingest_is_idempotent(sample_log, tmp_path):
    (first,) = run([sample_log], tmp_path / "s")
    store = Store.open(tmp_path / "s")
    rows = store.info().rows
    assert first.rows == rows > 0 and first.hands == 500
    run([sample_log], tmp_path / "s")
    assert Store.open(tmp_path / "s").info().rows == rows
    assert assert_rewards_add_up(tmp_path / "s", sample_log) == 500


def test_many_logs_read_each_stored_part_once(tmp_path, monkeypatch):
    """Before each log, an ingest reads the parts already stored (a log already in the
    store is refused); each part's footer is read once a run, not again for every log
    after it (which grew as the square of the logs: 200 Eger games given file by file
    took 129 s, 17.7 s read once)."""
    from batchrl.games.holdem.logs import generate  # hold'em's generator: distinct logs
    from batchrl.store import store as store_module  # the footer reader, counted

    paths = [tmp_path / f"hands{seed}.log" for seed in range(6)]
    for seed, path in enumerate(paths):
        generate(path, ["random", "random"], 4, seed=seed)
    reads: list[str] = []
    read_footer = store_module.footer
    monkeypatch.setattr(store_module, "footer",
                        lambda part, root: reads.append(part.name) or read_footer(part, root))
    reports = run(paths, tmp_path / "s", pv=False)
    assert [r.hands for r in reports] == [4] * 6 and not any(r.error for r in reports)
    assert sorted(reads) == sorted(set(reads)) and len(reads) == 5  # all but the last's
    copy = tmp_path / "copy.log"  # and a copy of a stored log is still refused
    copy.write_bytes(paths[2].read_bytes())
    reports = run([paths[0], copy], tmp_path / "s", pv=False, on_error="skip")
    assert "has the same content as" in reports[1].error and not reports[0].error


def test_a_store_taken_over_by_another_schema_is_not_written_as_before(tmp_path):
    """The store opened for one log is kept for the next only while it is the same store:
    a first log that stores nothing leaves the store to a second of other parameters
    (store.json written again), and a third like the first is refused, not written beside
    the second's rows (a review found the kept store writing it there)."""
    import json  # Hanabi's own logs: the parameters (players) make the schema

    from batchrl.games.hanabi.logs import generate

    refused = tmp_path / "refused"
    refused.mkdir()
    deck = [{"suitIndex": s, "rank": r} for s in range(5)
            for r, n in zip(range(1, 6), (3, 2, 2, 2, 1), strict=True) for _ in range(n)]
    (refused / "o1.json").write_text(json.dumps({
        "players": ["a", "b"], "deck": deck, "actions": [],
        "options": {"variant": "Orange (3 Suits)"}}))
    generate(tmp_path / "three", ["random"] * 3, 2, seed=1)
    generate(tmp_path / "two", ["random"] * 2, 2, seed=2)
    reports = run([refused, tmp_path / "three", tmp_path / "two"], tmp_path / "s",
                  on_error="skip")
    assert [bool(r.error) for r in reports] == [True, False, True], reports
    assert "holds game hanabi with game_params {'players': 3}" in reports[2].error
    assert len(Store.open(tmp_path / "s").check()) == 1


def test_glassfrog_units_are_inferred(sample_summary, tmp_path):
    (report,) = run([sample_summary], tmp_path / "gf")
    assert report.game == gamedef.GLASSFROG_LIMIT.name
    assert any("blinds 1/2" in note for note in report.notes)
    assert_rewards_add_up(tmp_path / "gf", sample_summary, read_glassfrog)


def write(tmp_path, name, lines):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_thesis_lines_give_the_rows_worked_out_by_hand(tmp_path):
    # Thesis Fig. 4.5: blinds 5/10, bets 10/20, so the ACPC heads-up limit game.
    path = write(tmp_path, "thesis.dealer.summary",
                 ["PLAYER1|PLAYER2:0:cc/rc/cc/crrrc:8sAs|Ac2h/8h4h2s/5c/6s:80|-80"])
    (report,) = run([path], tmp_path / "t")
    assert report.game == gamedef.HEADS_UP_LIMIT.name
    rows = Store.open(tmp_path / "t").to_pandas().sort_values(["player", "step"])
    names = Store.open(tmp_path / "t").info().features
    assert names == ("stage", "raises", "raises_sb", "facing_raise", "to_act", "pv", "pot",
                     "bet_preflop", "bet_flop", "bet_turn", "bet_river")
    # (stage, raises, raises_sb, facing_raise, to_act, pot, 4 betting codes), action, reward
    big_blind = [
        ((0, 0, 0, 0, 0, 20, 2, 0, 0, 0), 1, -10),   # SB called: BB checks, blind counted
        ((1, 0, 0, 0, 0, 20, 4, 1, 0, 0), 2, -10),   # flop: bets 10
        ((2, 1, 0, 0, 0, 40, 4, 6, 1, 0), 1, 0),     # turn: checks
        ((3, 1, 0, 0, 0, 40, 4, 6, 4, 1), 1, 0),     # river: checks
        ((3, 2, 1, 1, 0, 60, 4, 6, 4, 5), 2, -40),   # SB bet 20: raises to 60
        ((3, 4, 2, 1, 0, 140, 4, 6, 4, 23), 1, 140),  # calls 20 and wins the pot of 160
    ]
    small_blind = [
        ((0, 0, 0, 1, 1, 15, 1, 0, 0, 0), 1, -10),   # completes the blind: 5 + 5
        ((1, 1, 0, 1, 1, 30, 4, 3, 0, 0), 1, -10),   # calls the flop bet
        ((2, 1, 0, 0, 1, 40, 4, 6, 2, 0), 1, 0),
        ((3, 1, 0, 0, 1, 40, 4, 6, 4, 2), 2, -20),   # bets the river
        ((3, 3, 1, 1, 1, 100, 4, 6, 4, 11), 2, -40),  # re-raises 40, then loses
    ]
    pv_col = names.index("pv")
    for seat, expected in ((0, big_blind), (1, small_blind)):
        mine = rows[rows.player == seat]
        assert len(mine) == len(expected)
        for (_, row), (feats, action, reward) in zip(mine.iterrows(), expected, strict=True):
            state = np.delete(np.asarray(row.state), pv_col)
            assert tuple(state) == feats
            assert 0.0 < row.state[pv_col] < 1.0
            assert row.action == action and row.reward == reward
        assert list(mine.terminal) == [False] * (len(expected) - 1) + [True]
        # next_state is the seat's own next decision state
        states = [np.asarray(s) for s in mine.state]
        for k in range(len(states) - 1):
            assert np.array_equal(np.asarray(mine.next_state.iloc[k]), states[k + 1])
        assert not np.asarray(mine.next_state.iloc[-1]).any()
    assert rows.reward[rows.player == 0].sum() == 80 and rows.reward[rows.player == 1].sum() == -80


def test_thesis_glassfrog_units_lines(tmp_path):
    path = write(tmp_path, "ROOM_90.dealer.summary", [
        "GGValuta|HyperboreanLimit-Eqm:0:rc/crc/cc/rc:8hTd|As9c/KsJcJh/Qc/8d:10|-10",
        "HyperboreanLimit-Eqm|GGValuta:1:rc/crf:5d6s|6dKd/ThTdJs:-4|4",
    ])
    (report,) = run([path], tmp_path / "t")
    assert report.game == gamedef.GLASSFROG_LIMIT.name and report.hands == 2
    rows = Store.open(tmp_path / "t").to_pandas()
    first = rows[rows.episode.str.endswith(":0")].sort_values(["player", "step"])
    assert list(first.reward[first.player == 0]) == [-4, 0, -2, 0, 16]
    assert list(first.reward[first.player == 1]) == [-4, -2, 0, -4]
    assert list(first.action[first.player == 1]) == [2, 2, 1, 1]


def test_bad_hands_fail_with_file_and_line_or_are_skipped(sample_log, tmp_path):
    lines = sample_log.read_text().splitlines()
    hand_lines = [i for i, t in enumerate(lines) if t.startswith("STATE:")]
    broken = list(lines)
    k = hand_lines[10]
    fields = broken[k].split(":")
    fields[4] = "|".join(str(float(v) + 1) for v in fields[4].split("|"))  # wrong payoffs
    broken[k] = ":".join(fields)
    broken[hand_lines[20]] = "STATE:20:crf:5d5c"  # cut off
    path = write(tmp_path, "broken.log", broken)
    with pytest.raises(IngestError, match=rf"broken\.log, line {k + 1}: logged payoffs"):
        run([path], tmp_path / "fail")
    (report,) = run([path], tmp_path / "skip", on_error="skip")
    assert report.hands == 498
    assert report.skipped == {"payoffs disagree": 1, "malformed line": 1}


@pytest.mark.parametrize("beside", [False, True], ids=["between-reads", "on-a-thread"])
def test_rows_made_between_reads_or_on_a_thread_are_stored_and_refused_alike(
        sample_log, tmp_path, monkeypatch, beside):
    """A game's plan says whether its chunks' rows are made on a worker thread while the
    next chunk is read (hold'em's are not: the threads cost more than they overlap).
    Either way, with chunks of 64 hands: the same rows, the same first error, the same
    hands refused; and the rows are made on the thread the plan asks for."""
    import dataclasses
    import threading

    from batchrl.games.holdem import ingest as holdem_ingest

    reference = tmp_path / "reference"
    run([sample_log], reference)  # the plan as hold'em makes it
    made_on: set[str] = set()
    plan_of = holdem_ingest.SourcePlan

    def spied(*args, **kwargs):
        plan = plan_of(*args, **kwargs)
        assert plan.rows_beside is False  # hold'em's own choice

        def rows(chunk):
            made_on.add(threading.current_thread().name)
            return plan.rows(chunk)
        return dataclasses.replace(plan, rows=rows, rows_beside=beside)

    monkeypatch.setattr(holdem_ingest, "SourcePlan", spied)
    (report,) = run([sample_log], tmp_path / "again", chunk_size=64)
    assert report.hands == 500 and made_on
    assert all(name.startswith("batchrl-rows") == beside for name in made_on)
    assert (Store.open(tmp_path / "again").to_pandas()
            .equals(Store.open(reference).to_pandas()))
    lines = sample_log.read_text().splitlines()
    hand_lines = [i for i, t in enumerate(lines) if t.startswith("STATE:")]
    k = hand_lines[100]  # in the second chunk
    fields = lines[k].split(":")
    fields[4] = "|".join(str(float(v) + 1) for v in fields[4].split("|"))
    lines[k] = ":".join(fields)
    lines[hand_lines[300]] = "STATE:300:crf:5d5c"
    path = write(tmp_path, "broken.log", lines)
    with pytest.raises(IngestError, match=rf"broken\.log, line {k + 1}: logged payoffs"):
        run([path], tmp_path / "fail", chunk_size=64)
    (report,) = run([path], tmp_path / "skip", on_error="skip", chunk_size=64)
    assert report.hands == 498
    assert report.skipped == {"payoffs disagree": 1, "malformed line": 1}


def test_the_collector_is_given_back_as_it_was_even_after_a_failed_ingest(sample_log,
                                                                          tmp_path):
    broken = write(tmp_path, "broken.log", [*sample_log.read_text().splitlines()[:40],
                                             "STATE:20:crf:5d5c"])
    assert gc.get_freeze_count() == 0
    with pytest.raises(IngestError, match="broken"):
        run([broken], tmp_path / "a")
    assert gc.get_freeze_count() == 0  # unfrozen on the way out
    gc.freeze()  # a caller's own frozen objects (a server before it forks) stay frozen
    try:
        assert gc.get_freeze_count() > 0
        (report,) = run([sample_log], tmp_path / "b")
        # not given back: an unfreeze empties the permanent generation (objects frozen and
        # freed since leave it one by one, so the count itself may fall a little)
        assert report.hands > 0 and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


LINE_CHARS = st.sampled_from(list("STAE:0123456789cfr/|AKQJT98765432shdc -#"))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_mutated_logs_give_clean_errors_only(sample_log, tmp_path_factory, data):
    lines = sample_log.read_text().splitlines()[:40]
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(lines) - 1))
        pos = data.draw(st.integers(0, len(lines[i])))
        cut = data.draw(st.integers(0, 4))
        lines[i] = lines[i][:pos] + data.draw(st.text(LINE_CHARS, max_size=4)) + \
            lines[i][pos + cut:]
    tmp = tmp_path_factory.mktemp("fuzz")
    path = write(tmp, "fuzz.log", lines)
    game = "holdem.limit.2p.reverse_blinds"
    (report,) = run([path], tmp / "skip", on_error="skip", game=game)
    hands = sum(1 for t in lines if t.startswith("STATE:"))
    assert report.hands <= hands
    firsts = [int(re.search(r", line (\d+):", ex[0]).group(1))  # type: ignore[union-attr]
              for kind, ex in report.examples.items() if kind != "cut-off last line"]
    if firsts:
        # fail mode stops at the first line that skip mode left out, naming it
        with pytest.raises(IngestError, match=rf"^{re.escape(str(path))}, line {min(firsts)}:"):
            run([path], tmp / "fail", game=game)
    else:
        (clean,) = run([path], tmp / "fail", game=game)
        assert clean.hands == report.hands
    try:
        run([path], tmp / "auto")  # the game guessed from the content
    except IngestError as exc:
        assert str(exc).startswith(str(path))


def test_killed_ingest_leaves_whole_sources_only(sample_log, tmp_path):
    store_dir = tmp_path / "store"
    run([sample_log], store_dir)
    before = Store.open(store_dir).info().rows
    big = tmp_path / "big.log"
    body = [t for t in sample_log.read_text().splitlines() if t.startswith("STATE:")]
    big.write_text("\n".join(body * 200) + "\n")  # 100,000 hands: seconds to ingest
    proc = subprocess.Popen(
        [sys.executable, "-m", "batchrl", "ingest", str(big), "--store", str(store_dir)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    parts = store_dir / "parts"
    deadline = time.monotonic() + 120
    while not any(p.name.startswith(".") for p in parts.iterdir()):
        assert proc.poll() is None, "the ingest ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    after = Store.open(store_dir)
    assert [s.path for s in after.sources()] == [str(sample_log)]
    assert after.info().rows == before
    run([sample_log], store_dir)
    assert Store.open(store_dir).info().rows == before


def test_a_cut_off_last_line_is_dropped_with_a_note(sample_log, tmp_path):
    text = sample_log.read_text()
    body = text[: text.rindex("SCORE")]  # a run cut off: no SCORE
    path = tmp_path / "cut.log"
    path.write_text(body + "STATE:500:rrc/cr")  # the dealer died mid-line
    (report,) = run([path], tmp_path / "s")  # on_error=fail: still no error
    assert report.hands == 500 and report.skipped == {"cut-off last line": 1}
    assert any("line 505 is cut off" in note for note in report.notes)


def test_a_run_shorter_than_its_header_says_is_noted(sample_log, tmp_path):
    lines = sample_log.read_text().splitlines()
    lines[0] = lines[0].replace(" 500 90", " 1000 90")
    path = write(tmp_path, "short.log", lines)
    (report,) = run([path], tmp_path / "s")
    assert any("promises 1,000 hands and holds 500" in note for note in report.notes)


def test_byte_order_mark_and_crlf(sample_log, tmp_path):
    path = tmp_path / "windows.log"
    path.write_bytes(b"\xef\xbb\xbf" + sample_log.read_text().replace("\n", "\r\n").encode())
    (report,) = run([path], tmp_path / "s")
    assert report.hands == 500 and report.game == gamedef.HEADS_UP_LIMIT.name


def test_limit_logs_may_write_bets_as_b_and_checks_as_k(tmp_path):
    path = write(tmp_path, "bk.log", ["STATE:0:bc/kk/kk/kk:5d5c|9hQd/8dAs8s/4h/6d:20|-20:p1|p2"])
    (report,) = run([path], tmp_path / "s")
    assert report.hands == 1 and report.game == gamedef.HEADS_UP_LIMIT.name


def test_headerless_nolimit_is_told_by_payoffs_even_before_an_amount(tmp_path):
    path = write(tmp_path, "deepstack.log", [
        "STATE:2:f:As8d|8c3h:50|-50:qin|DeepStack # 1478520305.48839",
        "STATE:3:r20000f:Jd2c|2d2h:-100|100:DeepStack|qin # 1478520319.01331",
    ])
    (report,) = run([path], tmp_path / "s")
    assert report.game == "holdem.nolimit.2p.reverse_blinds" and report.hands == 2
    assert any("line 2 is a 2-player nolimit hand" in note for note in report.notes)


def test_games_the_evaluator_cannot_score_are_refused_cleanly(tmp_path):
    three_card_board = tmp_path / "short.game"
    three_card_board.write_text("GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 2\nblind = 10 5\n"
                                "raiseSize = 10 20\nfirstPlayer = 2 1\nnumBoardCards = 0 3\n"
                                "END GAMEDEF\n")
    log = write(tmp_path, "x.log", ["STATE:0:cc/cc:5d5c|9hQd/8dAs8s:0|0:a|b"])
    with pytest.raises(IngestError, match="3 board cards"):
        run([log], tmp_path / "s", game=str(three_card_board), pv=False)
    split_board = tmp_path / "split.game"
    split_board.write_text(three_card_board.read_text().replace(
        "numRounds = 2", "numRounds = 3").replace("raiseSize = 10 20", "raiseSize = 10 20 20")
        .replace("firstPlayer = 2 1", "firstPlayer = 2 1 1")
        .replace("numBoardCards = 0 3", "numBoardCards = 0 2 3"))
    with pytest.raises(IngestError, match="pv needs 0, 3, 4 or 5"):
        run([log], tmp_path / "s", game=str(split_board))
    four = tmp_path / "four.game"
    four.write_text(gamedef.THREE_PLAYER_NOLIMIT.to_text().replace("numPlayers = 3",
                                                                   "numPlayers = 4")
                    .replace("stack = 20000 20000 20000", "stack = 20000 20000 20000 20000")
                    .replace("blind = 50 100 0", "blind = 50 100 0 0"))
    # a game of four seats is one batchrl reads (PHH's six-seat hands are), so a log of
    # two players under it is refused hand by hand
    with pytest.raises(IngestError, match=r"2 players in the log, 4 in four"):
        run([log], tmp_path / "s", game=str(four))


def test_a_failed_first_ingest_does_not_pin_the_store(sample_summary, tmp_path):
    bad = write(tmp_path, "bad.log", ["STATE:0:cc/cc/cc/cc/:5d5c|9hQd/8dAs8s/4h/6d:0|0:a|b"])
    with pytest.raises(IngestError, match=r"bad\.log, line 1"):
        run([bad], tmp_path / "s")
    (report,) = run([sample_summary], tmp_path / "s")
    assert report.game == gamedef.GLASSFROG_LIMIT.name


def test_with_and_without_pv_do_not_mix(sample_log, tmp_path):
    run([sample_log], tmp_path / "s")
    with pytest.raises(StoreError, match="pv among its features, which this ingest leaves out"):
        run([sample_log], tmp_path / "s", pv=False)


def test_another_game_appended_is_left_out_as_a_run(sample_log, tmp_path):
    lines = sample_log.read_text().splitlines()
    lines += ["# name/game/hands/seed other holdem.nolimit.2p.reverse_blinds.game 2 0",
              "STATE:0:r300c/cc/cc/cc:5d5c|9hQd/8dAs8s/4h/6d:300|-300:a|b",
              "STATE:1:f:5d5c|9hQd:50|-50:a|b"]
    path = write(tmp_path, "appended.log", lines)
    with pytest.raises(IngestError, match=r"line 506: a run of 'holdem.nolimit"):
        run([path], tmp_path / "fail")
    (report,) = run([path], tmp_path / "skip", on_error="skip")
    assert report.hands == 500 and report.skipped == {"another game appended": 3}
