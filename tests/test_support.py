"""The support constraint (discrete BCQ): an action the logs barely show is neither chosen
nor bootstrapped from, and the constraint travels in the model file."""

import dataclasses

import numpy as np

from batchrl.learners.fqi import extra_trees
from batchrl.learners.fqi.iterations import FQI
from batchrl.learners.fqi.model import GreedyPolicy, ModelArtifact
from batchrl.learners.fqi.support import behaviour_model, supported
from batchrl.store import Transitions


def lucky_data(n=4000, seed=0):
    """One decision: 'safe' (action 0) pays 1; 'gamble' (action 1), taken once in 200,
    pays -1 on average, but its few logged tries happened to pay 30 in the high states."""
    rng = np.random.default_rng(seed)
    state = rng.random((n, 2)).astype(np.float32)
    action = (rng.random(n) < 0.005).astype(np.int64)
    reward = np.where(action == 0, 1.0, -1.0)
    lucky = (action == 1) & (state[:, 0] > 0.5)
    reward[lucky] = 30.0
    return one_decision(state, action, reward)


def one_decision(state, action, reward):
    """Hands of one decision each, 'safe' or 'gamble', on two features: a row a hand."""
    n = len(state)
    return Transitions(
        state=state, action=action, reward=reward, next_state=np.zeros_like(state),
        next_legal=np.zeros((n, 2), bool), terminal=np.ones(n, bool),
        truncated=np.zeros(n, bool), episode=np.arange(n),
        episode_ids=np.array([str(i) for i in range(n)], object),
        step=np.zeros(n, np.int32), player=np.zeros(n, np.int8), feature_names=("x", "y"),
        action_names=("safe", "gamble"))


def test_plain_fqi_trusts_a_lucky_rare_action_and_the_support_constraint_does_not(tmp_path):
    data = lucky_data()
    fqi = FQI(extra_trees(trees=20, nmin=2), n_iterations=1, per_action=True,
              random_state=0).fit(data)
    high = np.array([[0.9, 0.5], [0.8, 0.2]], np.float32)
    both = np.ones((2, 2), bool)
    plain = ModelArtifact(fqi.q_function(), {"feature_names": ["x", "y"],
                                             "action_names": ["safe", "gamble"]})
    assert GreedyPolicy(plain).act_batch(high, both).tolist() == [1, 1]
    behaviour = behaviour_model(data.state, data.action, 2, trees=20, nmin=20, seed=0)
    assert supported(behaviour, high, both, 0.3).tolist() == [[True, False]] * 2
    constrained = dataclasses.replace(plain, q=dataclasses.replace(
        plain.q, behaviour=behaviour, support=0.3))
    assert GreedyPolicy(constrained).act_batch(high, both).tolist() == [0, 0]
    # an illegal likeliest action leaves the legal one, however rare
    only_gamble = np.array([[False, True]] * 2)
    assert GreedyPolicy(constrained).act_batch(high, only_gamble).tolist() == [1, 1]
    # the behaviour model and the share are saved with the Q-function, and loaded back
    path = constrained.save(tmp_path / "m.npz")
    back = ModelArtifact.load(path)
    assert back.q.support == 0.3 and back.q.behaviour is not None
    assert GreedyPolicy(back).act_batch(high, both).tolist() == [0, 0]
    assert ModelArtifact.load(plain.save(tmp_path / "p.npz")).q.behaviour is None


def test_fqi_support_from_the_command_line(sample_log, tmp_path):
    from click.testing import CliRunner

    from batchrl.cli import main

    def invoke(*args):
        return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)

    assert invoke("ingest", sample_log, "--store", tmp_path / "s").exit_code == 0
    result = invoke("fqi", "--store", tmp_path / "s", "--trees", 5, "--iters", 2,
                    "--support", 0.5)
    assert result.exit_code == 0, result.output
    model = tmp_path / "s" / "models" / "fqi-M5-nmin20-N2-support0.5.npz"
    assert model.exists() and ModelArtifact.load(model).q.support == 0.5
    result = invoke("evaluate", "--model", model, "--hands", 100)
    assert result.exit_code == 0, result.output
    result = invoke("fqi", "--store", tmp_path / "s", "--support", 0)
    assert result.exit_code != 0 and "--support" in result.output
