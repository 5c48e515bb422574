"""``batchrl ope``: off-policy evaluation held to the exact games' true values (sette e
mezzo's and Leduc's game trees), its estimators to their definitions on small hand-made
episodes, and its command line to what a user types."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from exact_games import bench_store, learned

from batchrl.cli import main
from batchrl.games import GAMES
from batchrl.learners import get_learner
from batchrl.learning import learn, settings
from batchrl.play.ope import OPEConfig, _on_store, evaluate_offline
from batchrl.play.ope.fqe import FrozenFQE
from batchrl.play.ope.steps import seat_steps
from batchrl.play.ope.weighting import ratios, weighted
from batchrl.store import Store, StoreError, Transitions


def _rows(episodes: list[list[tuple[int, int, float]]], n_actions: int = 2) -> Transitions:
    """Hand-made rows: each episode a list of (player, action, reward), in play order;
    the state is (episode, step of the player); each row's next state is its seat's."""
    state, action, reward, player, episode, step = [], [], [], [], [], []
    for e, rows in enumerate(episodes):
        taken: dict[int, int] = {}
        for p, a, r in rows:
            state.append([e, taken.get(p, 0)])
            action.append(a)
            reward.append(r)
            player.append(p)
            episode.append(e)
            step.append(taken.get(p, 0))
            taken[p] = taken.get(p, 0) + 1
    n = len(action)
    nxt = np.zeros((n, 2), np.float32)
    terminal = np.ones(n, bool)
    for i in range(n):
        later = [j for j in range(i + 1, n) if episode[j] == episode[i] and
                 player[j] == player[i]]
        if later:
            nxt[i], terminal[i] = state[later[0]], False
    return Transitions(
        state=np.asarray(state, np.float32), action=np.asarray(action), reward=np.asarray(
            reward, float), next_state=nxt, next_legal=np.repeat(~terminal[:, None],
                                                                   n_actions, axis=1),
        terminal=terminal, truncated=np.zeros(n, bool), episode=np.asarray(episode),
        episode_ids=np.asarray([str(e) for e in range(len(episodes))], object),
        step=np.asarray(step, np.int32), player=np.asarray(player, np.int8),
        feature_names=("episode", "step"), action_names=tuple("ab"[:n_actions]),
        legal=np.ones((n, n_actions), bool))


def test_a_seat_s_steps_chain_its_own_decisions_and_rewards() -> None:
    """Seat 1's steps are its own, in order, each pointing at its next; an episode where it
    never decides is left out and counted."""
    data = _rows([[(0, 1, 0.0), (1, 0, 1.0), (0, 0, 2.0), (1, 1, -1.0)],
                  [(0, 0, 5.0)],
                  [(1, 1, 3.0)]])
    steps = seat_steps(data, 1)
    assert steps.action.tolist() == [0, 1, 1]
    assert steps.reward.tolist() == [1.0, -1.0, 3.0]
    assert steps.nxt.tolist() == [1, -1, -1]
    assert steps.t.tolist() == [0, 1, 0]
    assert steps.first.tolist() == [0, 2]
    assert steps.left_out == 1
    with pytest.raises(ValueError, match="seat 2 takes no decision"):
        seat_steps(data, 2)


def test_a_team_seat_earns_every_reward_up_to_its_next_decision() -> None:
    """Where each row's next state is the next mover's (Hanabi's team episodes), the
    seat's step earns its row's reward and its partners' up to its next decision; what
    the team earned before the seat first decides is the episode's constant."""
    data = _rows([[(1, 0, 0.5), (0, 1, 1.0), (1, 0, 2.0), (0, 0, 4.0), (1, 1, 8.0)],
                  [(0, 0, 16.0), (1, 1, 32.0)]])
    following = np.vstack([data.state[1:], np.zeros((1, 2), np.float32)])
    last = np.r_[data.episode[1:] != data.episode[:-1], True]
    following[last] = 0
    data = Transitions(**{**data.__dict__, "next_state": following, "terminal": last,
                          "next_legal": np.repeat(~last[:, None], 2, axis=1)})
    steps = seat_steps(data, 0)
    assert steps.team
    assert steps.reward.tolist() == [1.0 + 2.0, 4.0 + 8.0, 16.0 + 32.0]
    assert steps.before.tolist() == [0.5, 0.0]
    assert steps.nxt.tolist() == [1, -1, -1]


def test_weighted_importance_sampling_is_its_definition() -> None:
    """Per-decision WIS against a loop over its formula, on random episodes of uneven
    length with weights that the bootstrap would give; where the logged players are the
    policy (each logged move had probability 1), WIS is the plain mean of the returns."""
    rng = np.random.default_rng(0)
    episodes = [[(0, int(rng.integers(2)), float(rng.normal())) for _ in range(
        int(rng.integers(1, 4)))] for _ in range(40)]
    data = _rows(episodes)
    steps = seat_steps(data, 0)
    policy = (steps.t % 2).astype(np.int64)
    mu = rng.uniform(0.2, 0.8, len(steps))
    w_episode = rng.exponential(size=steps.episodes)
    got = weighted(steps, ratios(steps, policy, mu, 0.01), gamma=0.9).wis(w_episode)
    horizon = steps.horizon
    total = 0.0
    for t in range(horizon):
        num = den = 0.0
        for e in range(steps.episodes):
            mine = [i for i in range(len(steps)) if steps.episode[i] == e]
            upto = [i for i in mine if steps.t[i] <= t]
            w = np.prod([(policy[i] == steps.action[i]) / mu[i] for i in upto])
            r = sum(steps.reward[i] for i in mine if steps.t[i] == t)
            num += w_episode[e] * w * r
            den += w_episode[e] * w
        total += 0.9 ** t * (num / den if den else 0.0)
    assert got == pytest.approx(total, rel=1e-12)
    on_policy = weighted(steps, ratios(steps, steps.action, np.ones(len(steps)), 0.01))
    returns = np.bincount(steps.episode, weights=steps.reward)
    assert on_policy.wis() == pytest.approx(returns.mean(), rel=1e-12)


def test_fqe_values_a_known_chain_exactly() -> None:
    """Two steps, deterministic rewards: the policy that waits then takes earns 0 + 2; FQE
    on frozen trees finds it exactly, and the logged move's Q beside it; WDR, with those
    values, adds nothing to them."""
    # each episode: step 0 (wait: 0, take: 1, episode ends), step 1 (take: 2)
    episodes = [[(0, 0, 0.0), (0, 1, 2.0)], [(0, 1, 1.0)]] * 30
    data = _rows(episodes)
    data = Transitions(**{**data.__dict__, "state": np.column_stack(
        [np.zeros(len(data)), data.state[:, 1]]).astype(np.float32)})
    steps = seat_steps(data, 0)
    policy = np.where(steps.t == 0, 0, 1).astype(np.int64)
    fqe = FrozenFQE(steps, policy, 2, trees=5, nmin=2, seed=0, jobs=1)
    logged, v = fqe.solve()
    assert fqe.estimate(v) == pytest.approx(2.0)
    assert logged[steps.t == 0][steps.action[steps.t == 0] == 1] == pytest.approx(1.0)
    tables = weighted(steps, ratios(steps, policy, np.full(len(steps), 0.5), 0.01),
                      logged_q=logged, policy_v=v)
    assert tables.dr() == pytest.approx(2.0)
    assert tables.wis() == pytest.approx(2.0)


def test_a_move_the_logs_never_make_has_no_fqe_value() -> None:
    """A policy that plays a move no logged row makes: FQE says it cannot value it, and
    how often, rather than a number."""
    data = _rows([[(0, 0, 1.0)]] * 30)
    steps = seat_steps(data, 0)
    fqe = FrozenFQE(steps, np.ones(len(steps), np.int64), 2, trees=5, nmin=2, jobs=1)
    _, v = fqe.solve()
    assert np.isnan(fqe.estimate(v)) and fqe.unvalued.all()


@pytest.fixture(scope="module")
def sette(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("ope-sette")
    return tmp, bench_store(tmp, "sette-mezzo", ("random",), 20_000, 0, {"reward": "expected"})


@pytest.mark.slow
@pytest.mark.parametrize("learner", ["fqi", "bc"])
def test_sette_e_mezzo_fqe_is_the_exact_value(sette, learner: str) -> None:
    """From 20,000 random games (the benchmark's recipe, a fifth of its size), FQE's value
    of a learned policy is within 0.02 of its exact value through the game tree, and its
    interval covers it; WIS and DR cover it too."""
    tmp, store = sette
    model = learned(store, tmp / f"{learner}.npz", learner)
    truth = float(GAMES["sette-mezzo"].play.score((f"model:{model}",), 1, 0, {}).values[0])
    report = evaluate_offline(OPEConfig(model, store, boot=40, jobs=1))
    fqe = report.value("fqe")
    assert abs(fqe.value - truth) < 0.02, (fqe, truth)
    for name in ("fqe", "wis", "dr"):
        v = report.value(name)
        assert v.low <= truth <= v.high, (v, truth)


@pytest.mark.slow
def test_leduc_fqe_covers_the_exact_value_over_both_seats(tmp_path: Path) -> None:
    """Leduc from 20,000 random hands: the policy in each seat against the logged random
    player, valued from the logs; FQE over both seats is near the exact value (0.05 chips
    needs the benchmark's 100,000 hands: benchmarks/ope_exact.py) and its interval holds
    it."""
    store = bench_store(tmp_path, "leduc", ("random", "random"), 20_000, 1)
    model = learned(store, tmp_path / "bc.npz", "bc")
    truth = float(np.mean(GAMES["leduc"].play.exact((f"model:{model}", "random"))))
    report = evaluate_offline(OPEConfig(model, store, boot=40, jobs=1,
                                        estimators=("fqe",)))
    assert [s.who for s in report.seats] == ["seat 0", "seat 1"]
    fqe = report.value("fqe")
    assert abs(fqe.value - truth) < 0.15 and fqe.low <= truth <= fqe.high, (fqe, truth)


@pytest.mark.slow
def test_a_player_by_name_is_valued_against_the_others_and_off_support_is_said(
        tmp_path: Path) -> None:
    """Leduc's mixed logs (rule and random, seats alternating hand by hand): a clone of
    rule's moves takes rule's decisions by name, in both seats, and is valued against the
    logged random player, as exactly; FQI's policy leaves rule's moves in many states,
    and the report says that there no estimator sees what it earns."""
    store = bench_store(tmp_path, "leduc", ("rule", "random"), 20_000, 2)
    learner = get_learner("bc")
    clone, _ = learn(learner, store, settings(learner, store, {"trees": 20}),
                     players=("rule",), jobs=1, out=tmp_path / "rule.npz")
    truth = float(np.mean(GAMES["leduc"].play.exact((f"model:{clone}", "random"))))
    report = evaluate_offline(OPEConfig(Path(clone), store, players=("rule",), boot=30,
                                        jobs=1))
    (rule,) = report.seats
    assert rule.who == "rule" and rule.episodes == 20_000 and rule.unsupported == 0
    fqe = report.value("fqe")
    assert fqe.low <= truth <= fqe.high, (fqe, truth)
    fqi = learned(store, tmp_path / "fqi.npz", "fqi")
    off = evaluate_offline(OPEConfig(fqi, store, players=("rule",), boot=0, jobs=1,
                                     estimators=("fqe",)))
    assert off.seats[0].unsupported > 0.1
    assert "no estimator sees what it earns" in off.table()
    with pytest.raises(StoreError, match="nobody"):
        evaluate_offline(OPEConfig(fqi, store, players=("nobody",), boot=0, jobs=1))


@pytest.mark.slow
def test_a_zero_sum_seat_s_hands_without_a_decision_count_at_their_result(
        tmp_path: Path) -> None:
    """Hold'em heads-up: where the other seat folds at once, a seat made no decision but
    won the blind (minus the others' rewards). Those hands count at that result: the
    value is FQE's over the hands where the seat decides, averaged with them."""
    store = bench_store(tmp_path, "holdem", ("random", "random"), 2_000, 4)
    model = learned(store, tmp_path / "bc.npz", "bc")
    report = evaluate_offline(OPEConfig(model, store, boot=0, jobs=1, estimators=("fqe",)))
    data = Store.open(store).arrays()
    loaded = _on_store(GAMES["holdem"].load_model(model), data)
    totals = np.bincount(data.episode, weights=data.reward, minlength=len(data.episode_ids))
    counted = 0
    for result in report.seats:
        seat = int(result.who.removeprefix("seat "))
        has = np.zeros(len(data.episode_ids), bool)
        has[data.episode[data.player == seat]] = True
        outside = -totals[~has]
        assert result.counted == len(outside) and result.left_out == 0
        assert (outside > 0).all()  # the blind it won
        steps = seat_steps(data, seat)
        fqe = FrozenFQE(steps, loaded.act_batch(steps.state, steps.legal), 3, trees=50,
                        nmin=20, seed=0, jobs=1)
        decided = fqe.estimate(fqe.solve()[1])
        assert result.values[0].value == pytest.approx(
            (decided * steps.episodes + outside.sum()) / 2_000)
        counted += result.counted
    assert counted > 0


@pytest.mark.slow
def test_the_command_line_values_a_model_and_refuses_a_seat_that_never_decides(
        sette) -> None:
    tmp, store = sette
    model = tmp / "bc.npz"
    if not model.exists():
        learned(store, model, "bc")
    runner = CliRunner()
    out = runner.invoke(main, ["ope", "--model", str(model), "--store", str(store),
                               "--boot", "5", "--json", "-j", "1"])
    assert out.exit_code == 0, out.output
    got = json.loads(out.output)
    assert got["game"] == "sette-mezzo" and len(got["seats"]) == 1
    assert [v["estimator"] for v in got["seats"][0]["values"]] == ["fqe", "wis", "dr"]
    assert got["seats"][0]["episodes"] == 20_000
    table = runner.invoke(main, ["ope", "--model", str(model), "--store", str(store),
                                 "--boot", "0", "--estimators", "wis", "-j", "1"])
    assert table.exit_code == 0 and "weighted importance sampling" in table.output
    assert "effective sample size" in table.output
    bad = runner.invoke(main, ["ope", "--model", str(model), "--store", str(store),
                               "--seat", "3"])
    assert bad.exit_code != 0 and "seat 3 takes no decision" in bad.output
    wrong = runner.invoke(main, ["ope", "--model", str(model), "--store", str(store),
                                 "--estimators", "ips"])
    assert wrong.exit_code != 0 and "no estimator ips" in wrong.output
