"""The imitation network: split by game, masks, artifact, and a player that stays legal."""

import numpy as np
import pytest
from hanabi_support import midgame_states

from batchrl.games.hanabi.knowledge import encode
from batchrl.games.hanabi.logs import generate
from batchrl.games.hanabi.network import ImitationError, NetworkBot, feature_set, possible_moves
from batchrl.games.hanabi.rules import is_terminal, legal_actions, new_game, step
from batchrl.imitation import NetworkConfig, class_report, split, split_by_game, train
from batchrl.ingest import IngestConfig, ingest
from batchrl.store import Store

torch = pytest.importorskip("torch", reason="the imitation network needs torch (the "
                            "'imitation' or 'test' extra)")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("imitation")
    generate(root / "games", ("bot2", "simple"), 30, seed=8)
    ingest(IngestConfig(paths=(root / "games",), store=root / "store"))
    return root / "store"


def test_the_split_never_puts_one_game_on_two_sides():
    rng = np.random.default_rng(0)
    episode = np.sort(rng.integers(0, 500, 20_000))
    part = split_by_game(episode, seed=3)
    for k in range(3):
        for j in range(k + 1, 3):
            assert not set(episode[part == k]) & set(episode[part == j])
    share = np.bincount(part, minlength=3) / len(part)
    assert np.allclose(share, (0.7, 0.2, 0.1), atol=0.05)
    assert not np.array_equal(part, split_by_game(episode, seed=4))


def test_possible_moves_contain_every_legal_move_and_no_missing_slot():
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(30):
        s = new_game(rng)
        while not is_terminal(s):
            legal = legal_actions(s)
            allowed = possible_moves(encode(s, s.current)[None])[0]
            assert allowed[list(legal)].all()
            hand = len(s.hands[s.current])
            assert not allowed[hand:5].any() and not allowed[5 + hand:10].any()
            hints = [a for a in range(10, 20) if a not in legal]
            assert not allowed[hints].any()
            checked += 1
            s = step(s, legal[int(rng.integers(len(legal)))])
    assert checked > 200


def test_class_report_matches_a_hand_count():
    confusion = np.array([[5, 0, 1], [2, 3, 0], [0, 0, 0]])
    r = class_report(confusion, ["a", "b", "c"])
    assert r[0]["precision"] == pytest.approx(5 / 7) and r[0]["recall"] == pytest.approx(5 / 6)
    assert r[1]["f1"] == pytest.approx(2 * 1.0 * 0.6 / 1.6) and r[2]["support"] == 0


@pytest.mark.parametrize(("colour_order", "features"), [(False, "report"), (True, "report"),
                                                       (True, "hints")])
def test_a_trained_network_saves_loads_and_never_plays_an_illegal_move(store, tmp_path,
                                                                      colour_order, features):
    out = tmp_path / "net.pt"
    config = NetworkConfig(epochs=2, batch_size=64, colour_order=colour_order, threads=1,
                           features=features)
    result = train(store, out, config)
    assert len(result.history) == 2 and sum(result.split_games) == 30
    assert result.history[-1].train_loss < result.history[0].train_loss
    assert 0 < result.test_accuracy <= 1 and result.confusion.sum() == result.split_rows[2]
    bot = NetworkBot.load(out)
    assert len(bot.meta["feature_names"]) == (195 if features == "report" else 210)
    t = Store.open(store).arrays(features=bot.meta["feature_names"])
    first = bot.scores(t.state[:50])
    assert np.allclose(first, NetworkBot.load(out).scores(t.state[:50]))  # eval mode: no dropout
    rng = np.random.default_rng(2)
    for _ in range(3):
        s = new_game(rng)
        while not is_terminal(s):
            action = bot.act(s)
            assert action in legal_actions(s)
            s = step(s, action)


def test_the_network_kept_is_the_best_validation_epochs(store, tmp_path):
    result = train(store, tmp_path / "n.pt", NetworkConfig(epochs=4, batch_size=64, threads=1))
    val = [e.val_accuracy for e in result.history]
    assert result.extra["best_epoch"] == int(np.argmax(val)) + 1
    # the saved network scores the test games as the result says
    t = Store.open(store).arrays(features=feature_set("report"))
    part = split(store, t, (), 0)
    bot = NetworkBot.load(tmp_path / "n.pt")
    x, y = t.state[part == 2], t.action[part == 2]
    guess = bot.act_batch(x, possible_moves(x))
    assert np.mean(guess == y) == pytest.approx(result.test_accuracy)


def test_a_colour_ordered_network_plays_the_same_game_under_any_colour_names(store, tmp_path):
    from batchrl.games.hanabi.symmetry import relabel_action, relabel_state

    out = tmp_path / "net.pt"
    train(store, out, NetworkConfig(epochs=1, batch_size=64, colour_order=True, threads=1))
    bot = NetworkBot.load(out)
    plain = tmp_path / "plain.pt"
    train(store, plain, NetworkConfig(epochs=1, batch_size=64, threads=1))
    other = NetworkBot.load(plain)
    rng = np.random.default_rng(4)
    moved_plain = 0
    for s in midgame_states(rng, bot, 40, 30):
        sigma = [int(v) for v in rng.permutation(5)]
        renamed = relabel_state(s, sigma)
        x, y = encode(s, s.current)[None], encode(renamed, renamed.current)[None]
        scores, renamed_scores = bot.scores(x)[0], bot.scores(y)[0]
        # colours tied in every number are the partner's absent ones: their hints are
        # illegal and may take either name, so compare the legal moves
        legal = list(legal_actions(s))
        renamed_legal = [relabel_action(a, sigma) for a in legal]
        assert np.allclose(renamed_scores[renamed_legal], scores[legal], atol=1e-5)
        moved_plain += not np.allclose(other.scores(y)[0][renamed_legal],
                                       other.scores(x)[0][legal], atol=1e-5)
    assert moved_plain > 0  # the plain network is not invariant: the check can fail


def test_a_store_of_another_game_is_refused(tmp_path):
    from batchrl.games.holdem.logs import generate as holdem

    holdem(tmp_path / "h.log", ["random", "random"], 50, 1, "acpc", None, None)
    ingest(IngestConfig(paths=(tmp_path / "h.log",), store=tmp_path / "store",
                        options={"pv": False}))
    with pytest.raises(ImitationError, match="two-player Hanabi stores"):
        train(tmp_path / "store", tmp_path / "n.pt", NetworkConfig(epochs=1))
