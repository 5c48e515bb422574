"""``batchrl learn lcb``: FQI on the lower confidence bound of Q, the forest's trees'
spread as doubt: a move the logs rarely try, with noisy returns, is valued cautiously;
kappa 0 is FQI exactly; the bound travels in the model file (kind ``lcb``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from test_support import one_decision

from batchrl.forests import lower_bound
from batchrl.learners import get_learner
from batchrl.learners.fqi.leaves import leaves_of, lower_values
from batchrl.modelfile import ModelError
from batchrl.policy import load_policy
from batchrl.store import Transitions


def noisy_data(n: int = 4000, seed: int = 0) -> Transitions:
    """One decision: 'safe' pays 1; 'gamble', taken once in 100, pays -1 on average with
    a spread of 30, so wherever its few tries happened to pay well it looks best."""
    rng = np.random.default_rng(seed)
    state = rng.random((n, 2)).astype(np.float32)
    action = (rng.random(n) < 0.01).astype(np.int64)
    reward = np.where(action == 0, 1.0, rng.normal(-1.0, 30.0, n))
    return one_decision(state, action, reward)


def _gambles(name: str, **given: object) -> float:
    """The share of 500 states where the learned policy gambles."""
    learner = get_learner(name)
    policy = learner.fit(learner.config(trees=50, nmin=2, iters=1, per_action=True, **given),
                         noisy_data(), jobs=1)
    grid = np.random.default_rng(1).random((500, 2)).astype(np.float32)
    return float(policy.act(grid, np.ones((500, 2), bool)).mean())


def test_a_rare_noisy_move_is_valued_at_its_lower_bound() -> None:
    """Plain FQI gambles wherever a lucky try fell (most states); the bound's width
    takes that away step by step."""
    plain, one, two = _gambles("fqi"), _gambles("lcb", kappa=1.0), _gambles("lcb", kappa=2.0)
    assert plain > 0.5 and plain > one > two and two < 0.1, (plain, one, two)


def test_kappa_zero_is_fqi() -> None:
    data = noisy_data(800)
    states = np.random.default_rng(2).random((50, 2)).astype(np.float32)
    fqi, lcb = get_learner("fqi"), get_learner("lcb")
    a = fqi.fit(fqi.config(trees=5, nmin=2, iters=2), data, jobs=1).values(states)
    b = lcb.fit(lcb.config(trees=5, nmin=2, iters=2, kappa=0.0), data, jobs=1).values(states)
    assert np.array_equal(a, b)


def test_the_bound_from_frozen_leaves_is_the_forest_s() -> None:
    """Fast mode's bound (leaf values tree by tree) and play's (each tree's prediction)
    are one number: the mean less kappa standard deviations of the trees' outputs."""
    from sklearn.ensemble import ExtraTreesRegressor

    rng = np.random.default_rng(4)
    x = rng.random((300, 3)).astype(np.float32)
    model = ExtraTreesRegressor(n_estimators=7, min_samples_split=5, random_state=0).fit(
        x, rng.normal(size=300))
    each = np.stack([t.predict(x) for t in model.estimators_])
    want = each.mean(axis=0) - 1.5 * each.std(axis=0)
    assert np.allclose(lower_bound(model, x, 1.5), want)
    offsets = np.cumsum([0, *(t.tree_.node_count for t in model.estimators_)])
    values = np.concatenate([t.tree_.value[:, 0, 0] for t in model.estimators_])
    assert np.allclose(lower_values(values, leaves_of(model, x, offsets), offsets, 1.5), want)


def test_the_model_file_keeps_the_bound(tmp_path: Path) -> None:
    lcb = get_learner("lcb")
    policy = lcb.fit(lcb.config(trees=5, nmin=2, iters=1, kappa=2.0), noisy_data(400), jobs=1)
    path = policy.save(tmp_path / "m.npz")
    back = load_policy(path)  # by its kind, to the lcb learner
    states = np.random.default_rng(3).random((20, 2)).astype(np.float32)
    assert np.array_equal(back.values(states), policy.values(states))
    assert back.meta["params"]["kappa"] == 2.0 and back.meta["learner"] == "lcb"
    with pytest.raises(ModelError):
        get_learner("fqi").read(path)  # an FQI reader would play it without its bound
    assert lcb.file_name(lcb.config(kappa=2.0), None, (), (), "") == \
        "lcb-kappa2-M100-nmin20-N11"


def two_step_data(n: int = 4000, seed: int = 0) -> Transitions:
    """Step one: a single move ('safe', action 0) into step two, where the rare noisy
    'gamble' waits: a backup's max over step two's moves carries its lucky tries back."""
    one = noisy_data(n, seed)
    x = np.random.default_rng(seed + 1).random((n, 1)).astype(np.float32)
    first = np.column_stack([x, np.zeros((n, 1), np.float32)])
    second = np.column_stack([x, np.ones((n, 1), np.float32)])
    both = np.ones((n, 2), bool)
    return Transitions(
        state=np.concatenate([first, second]), action=np.concatenate([np.zeros(n, int),
                                                                      one.action]),
        reward=np.concatenate([np.zeros(n), one.reward]),
        next_state=np.concatenate([second, second]),
        next_legal=np.concatenate([both, np.zeros((n, 2), bool)]),
        terminal=np.concatenate([np.zeros(n, bool), np.ones(n, bool)]),
        truncated=np.zeros(2 * n, bool), episode=np.concatenate([np.arange(n)] * 2),
        episode_ids=np.array([str(i) for i in range(n)], object),
        step=np.concatenate([np.zeros(n, np.int32), np.ones(n, np.int32)]),
        player=np.zeros(2 * n, np.int8), feature_names=("x", "step"),
        action_names=("safe", "gamble"))


@pytest.mark.parametrize("fast", [False, True], ids=["refit", "fast"])
def test_the_backup_takes_the_bound_over_the_next_moves(fast: bool) -> None:
    """The first step's value is a backup over the second step's moves: FQI carries the
    gamble's lucky tries back (most first states worth more than the 1 'safe' pays),
    the lower bound does not; in full refits and in fast mode's frozen leaves."""
    data = two_step_data()
    states = np.column_stack([np.random.default_rng(5).random(300),
                              np.zeros(300)]).astype(np.float32)

    def first_step(name: str, **given: object) -> float:
        """The first move's value by the forest's mean (no bound at play): what the
        targets it was fitted to carried back."""
        learner = get_learner(name)
        config = learner.config(trees=50, nmin=2, iters=2, per_action=True,
                                freeze_after=0 if fast else None, **given)
        policy = learner.fit(config, data, jobs=1)
        policy.artifact.q = dataclasses.replace(policy.artifact.q, pessimism=0.0)
        return float(policy.values(states)[:, 0].mean())

    plain, bounded = first_step("fqi"), first_step("lcb", kappa=2.0)
    assert plain > 1.5 and bounded < plain - 1.0, (plain, bounded)


def test_a_bound_its_file_does_not_account_for_is_refused(tmp_path: Path) -> None:
    """An FQI file (kind ``model``) carries no bound, and an lcb file's bound is the kappa
    its settings record: either way round, one that differs is refused."""
    from batchrl.learners.fqi.model import ModelArtifact

    lcb = get_learner("lcb")
    policy = lcb.fit(lcb.config(trees=3, nmin=2, iters=1, kappa=2.0), noisy_data(200), jobs=1)
    as_fqi = dataclasses.replace(policy.artifact, kind="model")
    with pytest.raises(ModelError, match=r"pessimism \(2.0\) is not the kappa"):
        ModelArtifact.load(as_fqi.save(tmp_path / "f.npz"))
    other = dataclasses.replace(policy.artifact, q=dataclasses.replace(policy.artifact.q,
                                                                        pessimism=1.0))
    with pytest.raises(ModelError, match=r"pessimism \(1.0\) is not the kappa"):
        lcb.read(other.save(tmp_path / "l.npz"))
