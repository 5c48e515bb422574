"""FQI against exact answers on small problems, and its contracts: legal max, terminals,
seeds, checkpoints and resume, the model artifact."""

import dataclasses

import numpy as np
import pytest

from batchrl.learners.fqi import extra_trees
from batchrl.learners.fqi.inputs import return_to_go
from batchrl.learners.fqi.iterations import FQI
from batchrl.learners.fqi.model import GreedyPolicy, ModelArtifact
from batchrl.store import Transitions


def transitions(state, action, reward, next_state, next_legal, terminal, episode=None,
                step=None, truncated=None, n_actions=2):
    n = len(action)
    return Transitions(
        state=np.asarray(state, np.float32).reshape(n, -1),
        action=np.asarray(action, np.int64),
        reward=np.asarray(reward, np.float64),
        next_state=np.asarray(next_state, np.float32).reshape(n, -1),
        next_legal=np.asarray(next_legal, bool).reshape(n, n_actions),
        terminal=np.asarray(terminal, bool),
        truncated=np.zeros(n, bool) if truncated is None else np.asarray(truncated, bool),
        episode=np.arange(n) if episode is None else np.asarray(episode),
        episode_ids=np.array([str(i) for i in range(n)], object),
        step=np.zeros(n, np.int32) if step is None else np.asarray(step, np.int32),
        player=np.zeros(n, np.int8),
        feature_names=tuple(f"x{i}" for i in range(np.asarray(state).reshape(n, -1).shape[1])),
        action_names=tuple(f"a{i}" for i in range(n_actions)),
    )


def chain(copies=5):
    """States 0 -> 1 -> 2 -> end. Action 1 ('go') moves on, paying 1 at the last state;
    action 0 ('stop') ends the episode paying 0.4 * state. Exact Q:
    Q(2, go) = 1, Q(2, stop) = 0.8; Q(1, go) = 1, Q(1, stop) = 0.4; Q(0, go) = 1, Q(0, stop) = 0.
    Each copy logs one episode going all the way and three that stop at once."""
    rows = []
    episode = 0
    for _ in range(copies):
        for s in (0, 1, 2):
            rows.append((s, 0, 0.4 * s, 0, (False, False), True, episode, 0))
            episode += 1
        for s in (0, 1, 2):
            last = s == 2
            rows.append((s, 1, 1.0 if last else 0.0, 0 if last else s + 1,
                         (False, False) if last else (True, True), last, episode, s))
        episode += 1
    state, action, reward, next_state, legal, terminal, ep, step = zip(*rows, strict=True)
    return transitions(state, action, reward, next_state, legal, terminal, ep, step)


EXACT = np.array([[0.0, 1.0], [0.4, 1.0], [0.8, 1.0]])


@pytest.mark.parametrize("per_action", [False, True])
@pytest.mark.parametrize("freeze_after", [None, 0])
def test_chain_q_is_exact(per_action, freeze_after):
    # Frozen trees average the targets of the rows sharing a leaf (here every "go" row:
    # their return-to-go is equal), which slows the backups down: cheap iterations, more
    # of them. Ernst et al. show the frozen iteration converges; it does, to the exact Q.
    iterations = 4 if freeze_after is None else 40
    model = FQI(extra_trees(trees=10, nmin=2), n_iterations=iterations, per_action=per_action,
                freeze_after=freeze_after, random_state=1).fit(chain())
    q = model.q_values(np.array([[0.0], [1.0], [2.0]]))
    np.testing.assert_allclose(q, EXACT, atol=1e-9)
    assert model.history_[-1].bellman_residual < 1e-6  # the fixed point


def test_each_iteration_looks_one_decision_further():
    stats = list(FQI(extra_trees(trees=5, nmin=2), n_iterations=3,
                     random_state=0).fit_iter(chain()))
    assert [s.iteration for s in stats] == [1, 2, 3]
    # after one iteration Q(0, go) is still the immediate reward, 0; after three, 1
    model = FQI(extra_trees(trees=5, nmin=2), n_iterations=1, random_state=0).fit(chain())
    assert model.q_values(np.array([[0.0]]))[0, 1] == pytest.approx(0.0)
    assert stats[0].bellman_residual > stats[1].bellman_residual > stats[2].bellman_residual


def test_max_runs_over_legal_next_actions_only():
    # From state 0, action 0 leads to state 1 where only action 0 (worth 1) is legal;
    # action 1 in state 1 pays 10 but is never legal after that move.
    data = transitions(
        state=[0, 1, 1] * 4, action=[0, 0, 1] * 4, reward=[0, 1, 10] * 4,
        next_state=[1, 0, 0] * 4, next_legal=[(True, False), (False, False), (False, False)] * 4,
        terminal=[False, True, True] * 4)
    model = FQI(extra_trees(trees=5, nmin=2), n_iterations=2, random_state=0).fit(data)
    assert model.q_values(np.array([[0.0]]))[0, 0] == pytest.approx(1.0)  # not 10


def test_terminals_bootstrap_nothing_and_truncated_rows_do():
    common = dict(state=[0, 1] * 4, action=[0, 0] * 4, reward=[0, 5] * 4,
                  next_state=[1, 0] * 4, next_legal=[(True, False), (False, False)] * 4)
    ended = transitions(**common, terminal=[True, True] * 4)
    cut = transitions(**common, terminal=[False, True] * 4, truncated=[True, False] * 4)
    for data, expected in ((ended, 0.0), (cut, 5.0)):
        model = FQI(extra_trees(trees=5, nmin=2), n_iterations=2, random_state=0).fit(data)
        assert model.q_values(np.array([[0.0]]))[0, 0] == pytest.approx(expected)


def noisy(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.random((n, 3))
    a = rng.integers(0, 3, n)
    terminal = rng.random(n) < 0.3
    return transitions(s, a, rng.normal(s[:, 0] - a * 0.1, 1.0), rng.random((n, 3)),
                       np.ones((n, 3), bool), terminal, n_actions=3)


def test_seeds_make_runs_repeatable():
    data = noisy()
    probe = np.random.default_rng(9).random((50, 3))

    def q(seed):
        return FQI(extra_trees(trees=5, nmin=10), n_iterations=3,
                   random_state=seed).fit(data).q_values(probe)

    np.testing.assert_array_equal(q(3), q(3))
    assert not np.array_equal(q(3), q(4))


@pytest.mark.parametrize("freeze_after", [None, 0, 2])
def test_resume_gives_the_uninterrupted_result(tmp_path, freeze_after):
    data = noisy()
    probe = np.random.default_rng(9).random((50, 3))

    def fqi():
        return FQI(extra_trees(trees=5, nmin=10), n_iterations=5, freeze_after=freeze_after,
                   random_state=7)

    whole = fqi().fit(data, checkpoints=tmp_path / "whole")
    killed = fqi()
    for stats in killed.fit_iter(data, checkpoints=tmp_path / "killed"):
        if stats.iteration == 3:
            break  # the run dies after its third checkpoint
    resumed = fqi()
    resumed_stats = list(resumed.fit_iter(data, resume=True, checkpoints=tmp_path / "killed"))
    assert [s.iteration for s in resumed_stats] == [4, 5]
    np.testing.assert_array_equal(resumed.q_values(probe), whole.q_values(probe))
    assert [h.bellman_residual for h in resumed.history_] == \
        [h.bellman_residual for h in whole.history_]


def test_resume_refuses_other_parameters(tmp_path):
    data = noisy(500)
    FQI(extra_trees(trees=3, nmin=10), n_iterations=2, random_state=1).fit(
        data, checkpoints=tmp_path)
    with pytest.raises(ValueError, match="other parameters"):
        FQI(extra_trees(trees=3, nmin=10), n_iterations=2, random_state=2).fit(
            data, resume=True, checkpoints=tmp_path)


def test_resume_with_another_worker_count_gives_the_uninterrupted_result(tmp_path):
    data = noisy(800)
    probe = np.random.default_rng(9).random((50, 3))

    def fqi(jobs):
        return FQI(extra_trees(trees=4, nmin=10, jobs=jobs), n_iterations=4, random_state=5)

    whole = fqi(1).fit(data, checkpoints=tmp_path / "whole")
    for stats in fqi(1).fit_iter(data, checkpoints=tmp_path / "killed"):
        if stats.iteration == 2:
            break
    resumed = fqi(2)
    assert [s.iteration for s in resumed.fit_iter(data, resume=True,
                                                  checkpoints=tmp_path / "killed")] == [3, 4]
    np.testing.assert_array_equal(resumed.q_values(probe), whole.q_values(probe))


def test_fast_mode_needs_trees_without_bootstrap():
    from sklearn.ensemble import ExtraTreesRegressor
    with pytest.raises(ValueError, match="bootstrap"):
        FQI(ExtraTreesRegressor(bootstrap=True), freeze_after=0).fit(noisy(100))


def test_return_to_go_sums_each_players_later_rewards():
    data = transitions(state=[0] * 5, action=[0] * 5, reward=[1, 2, 4, 8, 16],
                       next_state=[0] * 5, next_legal=[(False, False)] * 5,
                       terminal=[False, True, False, True, True],
                       episode=[0, 0, 1, 1, 2], step=[0, 1, 0, 1, 0])
    np.testing.assert_array_equal(return_to_go(data), [3, 2, 12, 8, 16])
    np.testing.assert_allclose(return_to_go(data, gamma=0.5), [2, 2, 8, 8, 16])


def test_artifact_round_trip_and_greedy_policy(tmp_path):
    model = FQI(extra_trees(trees=10, nmin=2), n_iterations=4, random_state=1).fit(chain())
    path = ModelArtifact(model.q_function(), {"feature_names": ["x0"],
                                              "action_names": ["stop", "go"]}).save(
        tmp_path / "m.npz")
    policy = GreedyPolicy.load(path)
    states = np.array([[0.0], [1.0], [2.0]])
    np.testing.assert_allclose(policy.q_values(states), EXACT, atol=1e-9)
    assert policy.act_batch(states).tolist() == [1, 1, 1]
    assert policy.act_batch(states, np.array([[True, False]] * 3)).tolist() == [0, 0, 0]
    assert policy.act_one([2.0], [True, True]) == 1


def test_threads_do_not_change_the_result():
    # scikit-learn sums a forest's trees as its threads finish; FQI feeds those sums
    # back as targets, so one last bit can change every later split.
    data = noisy(4000)
    probe = np.random.default_rng(9).random((200, 3))
    q = [FQI(extra_trees(trees=8, nmin=5, jobs=jobs), n_iterations=6,
             random_state=2).fit(data).q_values(probe) for jobs in (1, 2, -1, 2)]
    for other in q[1:]:
        np.testing.assert_array_equal(other, q[0])


def test_fast_mode_sets_its_trees_aside_on_disk_and_gets_the_same_q(tmp_path):
    """With a checkpoint directory, each frozen model's trees wait on disk (only the leaf
    values stay in memory); the Q-function read back is the one kept in memory."""
    from batchrl.learners.fqi.iterations import _Aside

    data = noisy()
    probe = np.random.default_rng(9).random((50, 3))

    def fqi():
        return FQI(extra_trees(trees=5, nmin=10), n_iterations=4, freeze_after=0,
                   per_action=True, random_state=7)

    in_memory = fqi().fit(data)
    assert not any(isinstance(m, _Aside) for m in in_memory.models_)
    on_disk = fqi()
    for _ in on_disk.fit_iter(data, checkpoints=tmp_path / "ckpt"):
        aside = [m for m in on_disk.models_ if isinstance(m, _Aside)]
        assert aside and all(m.path.exists() for m in aside)
    np.testing.assert_array_equal(on_disk.q_values(probe), in_memory.q_values(probe))
    assert not any(isinstance(m, _Aside) for m in on_disk.models_)


@pytest.mark.parametrize("per_action", [False, True])
def test_q_of_only_the_legal_actions_is_q_there_and_the_greedy_choice_is_unchanged(
        per_action):
    # act_batch predicts only the legal actions' values (a per-action forest on only the
    # rows where its action is legal): the values there and every choice are as before
    data = noisy(600, seed=3)
    model = FQI(extra_trees(trees=5, nmin=5), n_iterations=2, per_action=per_action,
                random_state=0).fit(data)
    function = model.q_function()
    rng = np.random.default_rng(4)
    states = rng.random((300, data.state.shape[1])).astype(np.float32)
    legal = rng.random((300, function.n_actions)) < 0.5
    legal[np.arange(300), rng.integers(function.n_actions, size=300)] = True
    full, part = function.q_values(states), function.q_values(states, only=legal)
    np.testing.assert_array_equal(part[legal], full[legal])
    assert np.isnan(part[~legal]).all()
    policy = GreedyPolicy(ModelArtifact(function, {"feature_names": list(data.feature_names),
                                                   "action_names": list(data.action_names)}))
    expected = np.argmax(np.where(legal, full, -np.inf), axis=1)
    assert policy.act_batch(states, legal).tolist() == expected.tolist()
    with pytest.raises(ValueError, match="want one mask of"):
        policy.act_batch(states, legal[:, :1])


def test_a_team_episode_s_return_is_every_later_reward_of_the_episode(tmp_path):
    """Where a row's next state is the next mover's (Hanabi), FQI's targets chain the
    episode's rows, not a seat's: the return the |Q| warning compares with is the team's
    (a seat's own share of a Hanabi game's cards would make a right Q look too large)."""
    from batchrl.episodes import grouping
    from batchrl.games.hanabi.logs import generate
    from batchrl.ingest import IngestConfig, ingest
    from batchrl.store import Store

    scores = generate(tmp_path / "logs", ["bot2", "bot2"], 3, seed=1)
    ingest(IngestConfig(paths=(tmp_path / "logs",), store=tmp_path / "store"))
    data = Store.open(tmp_path / "store").arrays()
    assert grouping(data) == "episode"
    team = return_to_go(data, by="episode")
    assert sorted(team[data.step == 0].tolist()) == sorted(float(s) for s in scores)
    assert return_to_go(data).max() < team.max()  # a seat's share is less
    # each seat's next state is its own next decision's: seat 0 plays states 0 then 2
    seats = dataclasses.replace(
        transitions(state=[0, 1, 2, 3], action=[0] * 4, reward=[1, 2, 4, 8],
                    next_state=[2, 3, 0, 0], next_legal=[(False, False)] * 4,
                    terminal=[False, False, True, True], episode=[0, 0, 0, 0],
                    step=[0, 0, 1, 1]), player=np.array([0, 1, 0, 1], np.int8))
    assert grouping(seats) == "seat"
    assert return_to_go(seats).tolist() == [5, 10, 4, 8]
