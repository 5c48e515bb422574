"""Hanabi's imitation network: the move mask, the options, a saved network that loads and
stays legal, and the colour order's invariance."""

import json

import numpy as np
import pytest
from hanabi_support import midgame_states

from batchrl.games import get_game
from batchrl.games.base import GameError
from batchrl.games.hanabi.bots import make_bot
from batchrl.games.hanabi.knowledge import encode
from batchrl.games.hanabi.logs import generate
from batchrl.games.hanabi.network import NetworkBot, imitation_spec, possible_moves
from batchrl.games.hanabi.rules import is_terminal, legal_actions, new_game, step
from batchrl.imitation import NetworkConfig, train
from batchrl.ingest import IngestConfig, ingest
from batchrl.policy import ModelError
from batchrl.store import Store


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    pytest.importorskip("torch", reason="the imitation network needs torch (the "
                        "'imitation' or 'test' extra)")
    root = tmp_path_factory.mktemp("network")
    generate(root / "games", ("bot2", "simple"), 30, seed=8)
    ingest(IngestConfig(paths=(root / "games",), store=root / "store"))
    return root / "store"


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


def test_the_options_make_the_spec_and_a_bad_feature_set_is_refused():
    plain = imitation_spec({})
    assert (plain.colour_order, plain.features, plain.tag, len(plain.columns)) == \
        (False, "report", "", 195)
    assert imitation_spec({"colour_order": True}).tag == "-colour"
    assert imitation_spec({"features": "convention"}).columns == \
        imitation_spec({"features": "hints"}).columns  # the facts are computed, not stored
    with pytest.raises(GameError, match="want one of report, hints, convention"):
        imitation_spec({"features": "everything"})
    game = get_game("hanabi")
    assert game.can("imitation")


@pytest.mark.parametrize(("colour_order", "features"), [(False, "report"), (True, "report"),
                                                       (True, "hints"), (True, "convention")])
def test_a_trained_network_saves_loads_and_never_plays_an_illegal_move(store, tmp_path,
                                                                      colour_order, features):
    out = tmp_path / "net.pt"
    spec = imitation_spec({"colour_order": colour_order, "features": features})
    result = train(store, out, NetworkConfig(epochs=2, batch_size=64, threads=1), spec)
    assert len(result.history) == 2 and sum(result.split_games) == 30
    assert result.history[-1].train_loss < result.history[0].train_loss
    assert 0 < result.test_accuracy <= 1 and result.confusion.sum() == result.split_rows[2]
    bot = make_bot(f"model:{out}", np.random.default_rng(0))  # as evaluate's players load it
    assert isinstance(bot, NetworkBot)
    assert len(bot.meta["feature_names"]) == (195 if features == "report" else 210)
    assert bot.meta["config"]["hidden"] == [195, 128, 64, 32]  # the report's, by default
    assert bot.colour_order == colour_order and bot.meta["game"] == "hanabi"
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


@pytest.mark.parametrize("options", [{}, {"colour_order": True, "features": "convention"}])
def test_the_saved_network_scores_the_test_games_as_the_result_says(store, tmp_path, options):
    from batchrl.imitation import split

    spec = imitation_spec(options)
    result = train(store, tmp_path / "n.pt", NetworkConfig(epochs=2, batch_size=64, threads=1),
                   spec)
    t = Store.open(store).arrays(features=spec.columns)
    part = split(store, t, (), 0)
    bot = NetworkBot.load(tmp_path / "n.pt")
    x, y = t.state[part == 2], t.action[part == 2]
    guess = bot.act_batch(x, possible_moves(x))
    assert np.mean(guess == y) == pytest.approx(result.test_accuracy)


def test_a_file_that_is_not_a_hanabi_network_is_refused(store, tmp_path):
    import torch

    out = tmp_path / "net.pt"
    train(store, out, NetworkConfig(epochs=1, batch_size=64, threads=1), imitation_spec({}))
    blob = torch.load(out, weights_only=True)
    meta = json.loads(blob["meta"])
    torch.save(blob | {"meta": json.dumps(meta | {"game": "kuhn"})}, tmp_path / "kuhn.pt")
    with pytest.raises(ModelError, match="a network of 'kuhn' stores"):
        NetworkBot.load(tmp_path / "kuhn.pt")
    for config, message in (({"features": "everything"}, "features 'everything': this batchrl "
                             "reads report, hints, convention"),
                            ({"features": "convention"}, "features 'convention' read 210 "
                             "stored numbers, but the file names 195")):
        crafted = meta | {"config": meta["config"] | config}
        torch.save(blob | {"meta": json.dumps(crafted)}, tmp_path / "crafted.pt")
        with pytest.raises(ModelError, match=message):
            NetworkBot.load(tmp_path / "crafted.pt")
    (tmp_path / "junk.pt").write_bytes(b"not torch")
    with pytest.raises(ModelError, match="not a network from batchrl imitate"):
        NetworkBot.load(tmp_path / "junk.pt")


class _Payload:
    """What a crafted file does when unpickled: create a marker file."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return open, (str(self.marker), "w")


def test_a_crafted_pickle_is_refused_and_never_run(tmp_path):
    import pickle

    import torch

    marker = tmp_path / "marker"
    torch.save({"meta": _Payload(marker)}, tmp_path / "zipped.pt")  # torch's zip format
    (tmp_path / "plain.pt").write_bytes(pickle.dumps(_Payload(marker), protocol=2))
    for name in ("zipped.pt", "plain.pt"):
        with pytest.raises(ModelError, match=rf"{name}: not a network from batchrl imitate"):
            NetworkBot.load(tmp_path / name)
    assert not marker.exists()


def test_a_colour_ordered_network_plays_the_same_game_under_any_colour_names(store, tmp_path):
    from batchrl.games.hanabi.symmetry import relabel_action, relabel_state

    config = NetworkConfig(epochs=1, batch_size=64, threads=1)
    out = tmp_path / "net.pt"
    train(store, out, config, imitation_spec({"colour_order": True}))
    bot = NetworkBot.load(out)
    plain = tmp_path / "plain.pt"
    train(store, plain, config, imitation_spec({}))
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
