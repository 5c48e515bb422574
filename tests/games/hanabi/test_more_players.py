"""Hanabi of three to five players: the state (`batchrl.games.hanabi.observation`), its
worlds, the hanab.live exports ``generate`` writes and ``ingest`` reads, the real
exports of 4 and 5 players, and a learner's model in play at its own player count."""

import json

import numpy as np
import pytest
from locations import SHARED_HANABI, needs

from batchrl.games import get_game
from batchrl.games.conformance import check_worlds
from batchrl.games.hanabi.bots import ConventionBot, make_bot
from batchrl.games.hanabi.logs import generate, live_record, play_game
from batchrl.games.hanabi.observation import encode, encode_many, feature_names
from batchrl.games.hanabi.rules import decode, new_game, step
from batchrl.games.hanabi.view import hanabi_view
from batchrl.ingest import IngestConfig, ingest
from batchrl.store import Store, StoreError
from parsers.hanablive import read_hanablive, replay_live

GAME = get_game("hanabi")
LIVE = SHARED_HANABI
needs_live = needs(LIVE)


def _game(players, seed):
    return play_game((ConventionBot(),) * players, np.random.default_rng(seed))


@pytest.mark.parametrize("players", [3, 4, 5])
def test_the_state_is_named_and_batched_and_hides_only_the_own_cards(players):
    states, _ = _game(players, players)
    before = states[:-1]
    x = encode_many(before, [s.current for s in before])
    assert x.shape == (len(before), len(feature_names(players)))
    assert len(set(feature_names(players))) == x.shape[1]
    for i in (0, len(before) // 2, len(before) - 1):
        assert np.array_equal(x[i], encode(before[i], before[i].current))
    # every world of the seat's view (its own hand and the deck redrawn) encodes alike
    check_worlds(GAME, GAME.rules.params(players=players), playouts=3, worlds=4, seed=players)


def test_the_last_moves_say_who_hinted_whom_what_and_which_cards():
    s = new_game(np.random.default_rng(4), 4)
    names = feature_names(4)
    # seat 0 hints seat 2 (two seats on) a colour it holds; seat 1 then plays slot 0
    hint = next(a for a in range(25, 30) if a in GAME.rules.legal_actions(s))
    colour = decode(hint, 4)[2]
    touched = [i for i, c in enumerate(s.hands[2]) if c // 5 == colour]
    s = step(s, hint)
    played = s.hands[1][0]
    t = step(s, 0)
    x = dict(zip(names, encode(t, 2), strict=True))  # seat 2 acts: seat 1 moved last
    assert x["last1_play"] == 1 and x[f"last1_value{played % 5 + 1}"] == 1
    assert x["last2_hint_colour"] == 1 and x["last2_target_current"] == 1
    assert [i for i in range(4) if x[f"last2_touched{i}"]] == touched
    assert x["last3_play"] == x["last3_hint_rank"] == 0  # no third move yet
    y = dict(zip(names, encode(t, 3), strict=True))  # seen from seat 3, the hint went to next3
    assert y["last2_target_next3"] == 1 and y["last2_target_current"] == 0


def test_a_game_written_as_a_hanablive_export_replays_to_the_same_states(tmp_path):
    states, actions = _game(3, 7)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(live_record(states, actions, ("a", "b", "c"), "g")))
    replayed, moves = replay_live(read_hanablive(path))
    assert moves == list(actions)
    assert replayed[-1] == states[-1]


def test_generate_then_ingest_three_players_and_one_count_a_store(tmp_path):
    scores = generate(tmp_path / "logs", ["bot2", "bot2", "bot2"], 6, seed=2)
    assert len(scores) == 6 and len(list((tmp_path / "logs").glob("*.json"))) == 6
    report = ingest(IngestConfig(paths=(tmp_path / "logs",), store=tmp_path / "store"))[0]
    store = Store.open(tmp_path / "store")
    assert store.schema.game_params == {"players": 3}
    assert store.schema.feature_names == feature_names(3)
    t = store.arrays()
    assert len(t) == report.rows and t.legal.shape[1] == 30
    assert t.reward.sum() == sum(scores)
    # a four-player game among them is left out, named; the others land
    generate(tmp_path / "four", ["bot2"] * 4, 1, seed=3)
    (tmp_path / "logs" / "game000009.json").write_text(
        (tmp_path / "four" / "game000000.json").read_text())
    mixed = ingest(IngestConfig(paths=(tmp_path / "logs",), store=tmp_path / "mixed",
                                  on_error="skip"))[0]
    assert mixed.hands == 6 and mixed.skipped["another player count"] == 1
    # and a store of three players takes no games of four
    with pytest.raises(StoreError, match=r"game_params \{'players': 3\} \(not \{'players': 4"):
        ingest(IngestConfig(paths=(tmp_path / "four",), store=tmp_path / "store"))


def test_views_of_more_players_read_the_state_whole_and_refuse_the_colour_order():
    view = hanabi_view({"features": "convention"}, players=3)
    assert view.columns == feature_names(3)
    assert len(view.input_names) == len(feature_names(3)) + 78
    states, _ = _game(3, 1)
    x = encode_many(states[:-1], [s.current for s in states[:-1]])
    inputs, order = view.read(x)
    assert inputs.shape == (len(x), len(view.input_names)) and order is None
    assert inputs[:, len(feature_names(3)):].any()  # the convention's facts are there
    with pytest.raises(ValueError, match="colour order"):
        hanabi_view({"colour_order": True}, players=4)
    with pytest.raises(ValueError, match="two-player"):
        hanabi_view({"features": "report"}, players=5)
    params = GAME.rules.params(players=3)
    assert GAME.learn.settings_for("network", params)["view"]["colour_order"] is False
    assert GAME.learn.settings_for("network")["view"]["colour_order"] is True


def test_a_model_plays_at_its_own_player_count_and_says_so_elsewhere(tmp_path):
    from batchrl.learners import get_learner
    from batchrl.learning import learn, settings

    generate(tmp_path / "logs", ["bot2"] * 3, 20, seed=5)
    ingest(IngestConfig(paths=(tmp_path / "logs",), store=tmp_path / "store"))
    bc = get_learner("bc")
    path, _ = learn(bc, tmp_path / "store", settings(bc, tmp_path / "store", {"trees": 5}),
                    out=tmp_path / "bc.npz")
    spec = f"model:{path}"
    bot = make_bot(spec, np.random.default_rng(0), 3)
    s = new_game(np.random.default_rng(9), 3)
    assert bot.act(s) in GAME.rules.legal_actions(s)
    with pytest.raises(ValueError, match="3-player games, not 2-player"):
        make_bot(spec, np.random.default_rng(0), 2)
    report = GAME.play.evaluate([(spec, "bot2", "bot2")], 4, 33, {})
    assert report.pairs[0].played.mean.mean > 0


@needs_live
@pytest.mark.parametrize(("name", "players"), [("hanablive_misc/194321.json", 4),
                                               ("hanablive_testdata/no_variant.json", 5)])
def test_the_real_no_variant_exports_of_four_and_five_players_ingest(tmp_path, name, players):
    path = LIVE / name
    game = read_hanablive(path)
    states, actions = replay_live(game)
    assert len(actions) == len(game.actions) and GAME.rules.is_terminal(states[-1])
    report = ingest(IngestConfig(paths=(path,), store=tmp_path / "s"))[0]
    assert report.rows == len(actions)
    assert Store.open(tmp_path / "s").schema.game_params == {"players": players}


@needs_live
def test_the_export_with_a_rule_option_is_refused_by_name(tmp_path):
    report = ingest(IngestConfig(paths=(LIVE / "hanablive_testdata",), store=tmp_path / "s",
                                   on_error="skip"))[0]
    assert report.skipped["option deckPlays"] == 1
    assert report.hands == 1  # no_variant.json, the only No Variant export of the standard rules
    assert all(kind.startswith(("variant", "option")) for kind in report.skipped)


def test_the_environment_of_three_players_passes_pettingzoo_s_api_test():
    pytest.importorskip("pettingzoo", reason="the envs extra (pettingzoo) is not installed")
    from pettingzoo.test import api_test

    import batchrl

    env = batchrl.env("hanabi", players=3)
    api_test(env, num_cycles=30)
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    assert obs["observation"].shape == (len(feature_names(3)),)
    assert obs["action_mask"].shape == (30,)


@pytest.mark.parametrize("players", [3, 4, 5])
def test_the_projection_puts_the_next_seat_where_the_two_player_partner_is(players):
    """The focus convention's facts read the two-player layout: each of its columns holds
    the number of the same name, the partner being the next seat (``next1``)."""
    from batchrl.games.hanabi.names import FEATURE_NAMES
    from batchrl.games.hanabi.observation import two_player_projection

    states, _ = _game(players, 11)
    x = encode_many(states[:-1], [s.current for s in states[:-1]])
    projected = two_player_projection(x, players)
    names = feature_names(players)
    renamed = {"handentropy_other": "handentropy_next1"}
    checked = 0
    for j, two in enumerate(FEATURE_NAMES):
        mine = renamed.get(two, two)
        if mine.startswith("other"):  # other3_value -> next1_3_value
            slot, rest = mine[5], mine[7:]
            mine = f"next1_{slot}_{rest}"
        if mine in names:
            assert np.array_equal(projected[:, j], x[:, names.index(mine)]), two
            checked += 1
        else:  # a fifth slot of a hand of four: empty
            assert players > 3 and not projected[:, j].any(), two
    assert checked == (210 if players == 3 else 210 - 35)  # 13 + 19 + 3 of a fifth slot


def test_imitate_s_test_report_masks_with_the_store_s_legal_moves(tmp_path):
    """At 3-5 players the view says nothing of which moves a state allows: the report's
    predictions are masked by the moves the store recorded, as in training."""
    pytest.importorskip("torch", reason="training the network needs torch")
    from batchrl.cli.learn import test_report
    from batchrl.learners import get_learner
    from batchrl.learning import learn, settings

    generate(tmp_path / "logs", ["bot2"] * 3, 30, seed=6)
    ingest(IngestConfig(paths=(tmp_path / "logs",), store=tmp_path / "store"))
    network = get_learner("network")
    chosen = settings(network, tmp_path / "store", {"epochs": 1})
    _, policy = learn(network, tmp_path / "store", chosen, out=tmp_path / "n.npz")
    masks = []

    class Watched:
        def __getattr__(self, name):
            return getattr(policy, name)

        def act(self, states, legal):
            masks.append(legal)
            return policy.act(states, legal)

    test_report(tmp_path / "store", Watched(), chosen, ())
    assert masks and masks[0] is not None and masks[0].shape[1] == 30
