"""Hanabi's views of its features (the colour order, the convention's facts), the network
and the other learners fitted on them, models that play through them and stay legal, and
files that are not Hanabi's refused."""

from typing import ClassVar

import numpy as np
import pytest
from hanabi_support import midgame_states

from batchrl.games import get_game
from batchrl.games.base import GameError
from batchrl.games.hanabi.bots import make_bot
from batchrl.games.hanabi.knowledge import encode
from batchrl.games.hanabi.logs import generate
from batchrl.games.hanabi.rules import is_terminal, legal_actions, new_game, step
from batchrl.games.hanabi.view import hanabi_view, possible_moves
from batchrl.ingest import IngestConfig, ingest
from batchrl.learners import get_learner
from batchrl.learners.network.training import split_by_game
from batchrl.learning import deal_groups, learn, settings
from batchrl.policy import ModelError, ViewedPolicy
from batchrl.store import Store

HANABI = get_game("hanabi")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("view")
    generate(root / "games", ("bot2", "simple"), 30, seed=8)
    ingest(IngestConfig(paths=(root / "games",), store=root / "store"))
    return root / "store"


def _network(store, view, tmp_path, epochs=2):
    pytest.importorskip("torch", reason="the network needs torch to train (the test extra)")
    learner = get_learner("network")
    chosen = settings(learner, store, {"epochs": epochs, "batch_size": 64}, view=view)
    return learn(learner, store, chosen, jobs=1, out=tmp_path / "net.npz")


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


def test_the_options_make_the_view_and_a_bad_one_is_refused():
    plain = hanabi_view({"features": "report"})
    assert (plain.colour_order, plain.features, plain.tag, len(plain.columns)) == \
        (False, "report", "report", 195)
    assert hanabi_view({"colour_order": True}).tag == "colour-hints"  # the stored 210
    assert len(hanabi_view({"colour_order": True}).columns) == 210
    # the stored features as they are are no view: a model of them reads them plainly
    assert HANABI.learn.view({"colour_order": False}) is None
    assert HANABI.learn.view({"features": "hints"}) is None
    convention = hanabi_view({"features": "convention"})
    assert convention.columns == hanabi_view({"features": "hints"}).columns  # computed facts
    assert len(convention.input_names) == len(set(convention.input_names)) == 288
    with pytest.raises(GameError, match="want one of report, hints, convention"):
        hanabi_view({"features": "everything"})
    with pytest.raises(GameError, match="take colour_order, features, not size"):
        hanabi_view({"size": 3})
    assert HANABI.learn.view({}) is None and HANABI.can("view")
    with pytest.raises(GameError, match="holdem has no views of its features"):
        get_game("holdem").learn.view({"colour_order": True})


def test_the_colour_order_renames_moves_and_back():
    rng = np.random.default_rng(3)
    view = hanabi_view({"colour_order": True})
    states = np.stack([encode(s, s.current) for s in midgame_states(rng, make_bot(
        "bot2", rng), 60, 20)])[:, :195]
    order = view.order(states)
    assert (np.sort(order, axis=1) == np.arange(20)).all()  # a permutation in every row
    assert (order[:, :15] == np.arange(15)).all()  # plays, discards, rank hints: unrenamed
    assert (order[:, 15:] != np.arange(15, 20)).any()  # colour hints: renamed somewhere

    class Last:  # an inner policy: the last move it is allowed, in the view's numbering
        feature_names = view.input_names
        action_names = tuple(f"a{i}" for i in range(20))
        meta: ClassVar[dict] = {}

        def act(self, x, legal):
            return (19 - np.argmax(legal[:, ::-1], axis=1)).astype(np.int64)

    legal = possible_moves(states)
    chosen = ViewedPolicy(Last(), view).act(states, legal)
    assert legal[np.arange(len(states)), chosen].all()  # renamed back: a stored legal move
    assert (order[np.arange(len(states)), chosen] ==
            19 - np.argmax(np.take_along_axis(legal, np.argsort(order, 1), 1)[:, ::-1], 1)).all()


@pytest.mark.parametrize(("colour_order", "features"), [(False, "report"), (True, "report"),
                                                       (True, "hints"), (True, "convention")])
def test_a_network_on_a_view_saves_loads_and_never_plays_an_illegal_move(
        store, tmp_path, colour_order, features):
    path, policy = _network(store, {"colour_order": colour_order, "features": features},
                            tmp_path)
    meta = policy.meta
    assert meta["view"] == {"colour_order": colour_order, "features": features}
    assert sum(meta["split_games"]) == 30 and len(meta["history"]) == 2
    assert meta["params"]["hidden"] == "195,128,64,32"  # Hanabi's recommendation
    assert len(policy.feature_names) == (195 if features == "report" else 210)
    bot = make_bot(f"model:{path}", np.random.default_rng(0))  # as evaluate loads players
    assert isinstance(bot.model.policy, ViewedPolicy)
    rng = np.random.default_rng(2)
    for _ in range(3):
        s = new_game(rng)
        while not is_terminal(s):
            action = bot.act(s)
            assert action in legal_actions(s)
            s = step(s, action)
    # the recorded test accuracy is the loaded model's, moves as played, through the view
    opened = Store.open(store)
    t = opened.arrays(features=list(policy.feature_names))
    groups = deal_groups(opened, t, ())
    test = split_by_game(t.episode if groups is None else groups, 0) == 2
    loaded = HANABI.load_model(path).policy
    guess = loaded.act(t.state[test], possible_moves(t.state[test]))
    assert np.mean(guess == t.action[test]) == pytest.approx(meta["test_accuracy"])


def test_learn_with_no_flags_takes_hanabis_view_and_any_learner_takes_one(store, tmp_path):
    bc = get_learner("bc")
    chosen = settings(bc, store, {"trees": 3})
    assert chosen.view is None  # bc's recommendation names no view
    chosen = settings(bc, store, {"trees": 3}, view={"features": "convention",
                                                     "colour_order": True})
    assert "view colour_order=True,features=convention" in chosen.said
    path, policy = learn(bc, store, chosen, jobs=1)
    assert path.name == "bc-trees3-k30-colour-convention.npz"
    assert isinstance(policy, ViewedPolicy) and len(policy.policy.feature_names) == 288
    network = settings(get_learner("network"), store, {})
    assert network.view == {"colour_order": True, "features": "convention"}
    assert "view colour_order=True,features=convention (hanabi's recommended" in network.said
    given = settings(get_learner("network"), store, {}, view={"colour_order": False})
    assert given.view == {"colour_order": False, "features": "convention"}  # over the game's
    assert settings(get_learner("network"), store, {}, features=("hints",)).view is None
    with pytest.raises(ValueError, match="give either its options or --features/--drop"):
        settings(bc, store, {}, features=("hints",), view={"colour_order": True})


def test_a_colour_ordered_network_plays_the_same_game_under_any_colour_names(store, tmp_path):
    from batchrl.games.hanabi.symmetry import relabel_action, relabel_state

    coloured = HANABI.load_model(_network(store, {"colour_order": True, "features": "report"},
                                          tmp_path, 1)[0])
    plain = HANABI.load_model(_network(store, {"colour_order": False, "features": "report"},
                                       tmp_path / "p", 1)[0])

    def scores(model, x):  # the logits of the stored moves, through the view
        view = model.policy.view
        order = view.order(x)
        logits = model.policy.policy.logits(view.inputs(x))
        return logits if order is None else np.take_along_axis(logits, order, axis=1)

    rng = np.random.default_rng(4)
    moved_plain = 0
    for s in midgame_states(rng, make_bot("bot2", rng), 40, 30):
        sigma = [int(v) for v in rng.permutation(5)]
        renamed = relabel_state(s, sigma)
        x, y = encode(s, s.current)[None, :195], encode(renamed, renamed.current)[None, :195]
        # colours tied in every number are the partner's absent ones: their hints are
        # illegal and may take either name, so compare the legal moves
        legal = list(legal_actions(s))
        renamed_legal = [relabel_action(a, sigma) for a in legal]
        assert np.allclose(scores(coloured, y)[0][renamed_legal],
                           scores(coloured, x)[0][legal], atol=1e-5)
        moved_plain += not np.allclose(scores(plain, y)[0][renamed_legal],
                                       scores(plain, x)[0][legal], atol=1e-5)
    assert moved_plain > 0  # the plain network is not invariant: the check can fail


def test_a_model_whose_view_the_game_cannot_make_is_refused(store, tmp_path):
    _, policy = learn(get_learner("bc"), store, settings(
        get_learner("bc"), store, {"trees": 2}, view={"features": "report"}), jobs=1)
    inner = policy.policy
    for view, message in (({"features": "everything"}, "fitted on the view .*want one of"),
                          ({"features": "convention"}, "reads 195 features, not the 288"),
                          ({"features": "hints"}, "fitted on a view of the features .* that "
                                                  "the game does not make")):
        inner.meta["view"] = view
        inner.save(tmp_path / "crafted.npz")
        with pytest.raises(ModelError, match=message):
            HANABI.load_model(tmp_path / "crafted.npz")


def test_an_old_torch_network_or_a_crafted_pickle_is_one_line_and_never_runs(tmp_path):
    import pickle

    torch = pytest.importorskip("torch")
    marker = tmp_path / "marker"

    class Payload:
        def __reduce__(self):
            return open, (str(marker), "w")

    torch.save({"state_dict": {}, "meta": "{}"}, tmp_path / "old.pt")
    with pytest.raises(ModelError, match=r"a torch file .* train it again with batchrl "
                                         r"learn network"):
        make_bot(f"model:{tmp_path / 'old.pt'}", np.random.default_rng(0))
    (tmp_path / "plain.pt").write_bytes(pickle.dumps(Payload(), protocol=2))
    with pytest.raises(ModelError, match=r"plain\.pt"):
        make_bot(f"model:{tmp_path / 'plain.pt'}", np.random.default_rng(0))
    assert not marker.exists()
