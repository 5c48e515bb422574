"""The network learner, for any game's store: the split by episode, keep-best, the mask,
the class report, the numpy forward pass against torch's, the model file (no torch needed
to read or play it) and crafted files refused. Hanabi's views: tests/games/hanabi/."""

import dataclasses
import io
import sys
import zipfile

import numpy as np
import pytest

from batchrl.ingest import IngestConfig, ingest
from batchrl.learners import LearnerError, get_learner
from batchrl.learners.network import NetworkPolicy, read_network, widths
from batchrl.learners.network.report import class_report, table
from batchrl.learners.network.training import split_by_game
from batchrl.learning import learn, settings
from batchrl.modelfile import ModelError
from batchrl.store import Store

NETWORK = get_learner("network")


@pytest.fixture(scope="module")
def holdem_store(tmp_path_factory):
    from batchrl.games.holdem.logs import generate as holdem

    root = tmp_path_factory.mktemp("network")
    holdem(root / "h.log", ["random", "random"], 120, 1, "acpc", None, None)
    ingest(IngestConfig(paths=(root / "h.log",), store=root / "store", options={"pv": False}))
    return root / "store"


@pytest.fixture(scope="module")
def trained(holdem_store):
    pytest.importorskip("torch", reason="the network needs torch to train (the test extra)")
    chosen = settings(NETWORK, holdem_store, {"epochs": 4, "batch_size": 32, "hidden": "16"})
    return learn(NETWORK, holdem_store, chosen, jobs=1)


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


def test_class_report_matches_a_hand_count():
    confusion = np.array([[5, 0, 1], [2, 3, 0], [0, 0, 0]])
    r = class_report(confusion, ["a", "b", "c"])
    assert r[0]["precision"] == pytest.approx(5 / 7) and r[0]["recall"] == pytest.approx(5 / 6)
    assert r[1]["f1"] == pytest.approx(2 * 1.0 * 0.6 / 1.6) and r[2]["support"] == 0
    assert "accuracy                      0.500       11" in table(r, 0.5)


def test_a_config_refuses_what_no_network_is():
    assert widths("8, 4") == (8, 4)
    for bad, message in (({"hidden": "8,x"}, "want widths like"),
                         ({"hidden": "0"}, "want widths from 1 to"),
                         ({"dropout": 1.0}, "dropout in"), ({"batch_size": 1}, "batches of 2")):
        with pytest.raises(LearnerError, match=message):
            NETWORK.config(**bad)


def test_the_network_learns_any_games_store(trained, holdem_store):
    path, policy = trained
    meta = policy.meta
    assert path.name == "network-hidden16-epochs4-batch_size32.npz" and path.exists()
    assert meta["game"].startswith("holdem") and meta["learner"] == "network"
    val = [e["val_accuracy"] for e in meta["history"]]
    assert len(val) == 4 and meta["best_epoch"] == int(np.argmax(val)) + 1
    assert meta["split_rows"][2] > 0 and sum(meta["split_games"]) == \
        Store.open(holdem_store).info().episodes
    assert meta["history"][-1]["train_loss"] < meta["history"][0]["train_loss"]
    # the test accuracy recorded is the saved network's on the held-out episodes
    t = Store.open(holdem_store).arrays()
    test = split_by_game(t.episode, 0) == 2
    again = read_network(path)
    assert t.legal is not None  # the store records each row's legal moves: trained masked
    assert np.mean(again.act(t.state[test], t.legal[test]) == t.action[test]) == \
        pytest.approx(meta["test_accuracy"])
    np.testing.assert_array_equal(again.logits(t.state[:40]), policy.logits(t.state[:40]))


def test_numpy_plays_the_network_torch_trained():
    torch = pytest.importorskip("torch")
    from batchrl.learners.network.training import layers_of, network

    torch.manual_seed(0)
    model = network(NETWORK.config(hidden="12,6", dropout=0.5), 5, 3)
    bn = model[-2]
    bn.running_mean.uniform_(-1, 1)
    bn.running_var.uniform_(0.5, 2)
    model.eval()
    x = np.random.default_rng(0).normal(size=(64, 5)).astype(np.float32)
    with torch.no_grad():
        expected = model(torch.from_numpy(x)).numpy()
    ours = NetworkPolicy(layers_of(model), np.zeros(5, np.float32), np.ones(5, np.float32),
                         {"feature_names": list("abcde"), "action_names": list("xyz")})
    np.testing.assert_allclose(ours.logits(x), expected, rtol=1e-5, atol=1e-5)


def test_the_mask_trains_only_where_moves_are_allowed(holdem_store):
    pytest.importorskip("torch")
    t = Store.open(holdem_store).arrays()
    allowed = np.ones((len(t), len(t.action_names)), dtype=bool)
    allowed[:, 0] = False  # folds "impossible": the data say otherwise
    with pytest.raises(LearnerError, match=r"\d+ moves are not among the moves their states "
                                           "allow"):
        NETWORK.fit(NETWORK.config(epochs=1), dataclasses.replace(t, legal=allowed))
    allowed[:, 0] = True
    allowed[:, 2] = t.action == 2  # raises allowed only where raised
    policy = NETWORK.fit(NETWORK.config(epochs=1, hidden="8"), dataclasses.replace(
        t, legal=allowed), jobs=1)
    unmasked = NETWORK.fit(NETWORK.config(epochs=1, hidden="8", mask=False),
                           dataclasses.replace(t, legal=allowed), jobs=1)
    assert policy.meta["test_loss"] != unmasked.meta["test_loss"]  # the mask took part


def test_too_few_episodes_to_split_is_one_line(holdem_store):
    pytest.importorskip("torch")
    t = Store.open(holdem_store).arrays()
    with pytest.raises(LearnerError, match=r"too few episodes to split 70/20/10 \(2 apart"):
        NETWORK.fit(NETWORK.config(epochs=1), t.rows(t.episode < 2))


def test_reading_and_playing_a_network_needs_no_torch(trained, monkeypatch):
    path, policy = trained
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now fails
    states = np.zeros((3, len(policy.feature_names)), dtype=np.float32)
    assert read_network(path).act(states).tolist() == policy.act(states).tolist()
    from batchrl.learners.network.training import torch_module

    with pytest.raises(LearnerError, match="needs torch to train: pip install"):
        torch_module()


def _rewrite(src, dst, change):
    """A copy of the model file ``src`` at ``dst`` with ``change(name, bytes)`` applied."""
    import json

    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for name in zin.namelist():
            data = zin.read(name)
            if name.endswith(".json"):
                data = json.dumps(change(name, json.loads(data))).encode()
            else:
                data = change(name, data)
            zout.writestr(name, data)


@pytest.mark.parametrize(("change", "message"), [
    (lambda n, d: {**d, "layers": [*d["layers"], {"type": "conv"}]}
     if isinstance(d, dict) else d, "is 'conv', not one of"),
    (lambda n, d: {**d, "layers": d["layers"][:-1]} if isinstance(d, dict) else d,
     "ends in 16 numbers, not its 3 actions"),
    (lambda n, d: {**d, "version": 9} if isinstance(d, dict) else d, "version 9 network"),
    (lambda n, d: _array(d, np.full(16, np.nan, np.float32)) if n == "layer2_bias.npy" else d,
     "layer2_bias is not"),
    (lambda n, d: _array(d, -np.ones(1, np.float32)) if n == "std.npy" else d,
     "std is not"),
    (lambda n, d: _array(d, -np.load(io.BytesIO(d))) if n == "std.npy" else d,
     "its deviations are not all above 0"),
])
def test_a_crafted_network_file_is_refused(trained, tmp_path, change, message):
    path, _ = trained
    crafted = tmp_path / "crafted.npz"
    _rewrite(path, crafted, change)
    with pytest.raises(ModelError, match=message):
        read_network(crafted)


def _array(data, value):
    import io

    out = io.BytesIO()
    np.lib.format.write_array(out, value, allow_pickle=False)
    return out.getvalue()
