"""MushroomRL 1.10.2 FQI (ExtraTrees) as a speed baseline for batchrl's fitted Q-iteration.

Run with the bench venv made by ``benchmarks/setup_mushroom.sh`` (NOT the project venv)::

    .bench/mushroom/bin/python benchmarks/mushroom_fqi.py DATA.npz \\
        --trees 100 --nmin 20 --iters 11 --seed 0 --jobs 1 --out RESULT.npz

DATA.npz holds ``state`` (n, f) float32, ``action`` (n,) int, ``reward`` (n,) float64,
``next_state`` (n, f) float32, ``absorbing`` (n,) bool and the scalar ``n_actions``.
RESULT.npz gets ``greedy_action`` (n,) int64 and ``max_q`` (n,) float64 for every dataset
state (``approximator.predict(state)``), plus ``q`` (n, n_actions). One JSON line with the
timings goes to stdout.

How MushroomRL is driven (checked against the 1.10.2 source):

* ``FQI(mdp_info, policy, ExtraTreesRegressor, n_iterations=I, approximator_params=...,
  quiet=True)`` with ``approximator_params = dict(input_shape=(f,), n_actions=A,
  n_estimators=M, min_samples_split=N, max_features=K, random_state=S, n_jobs=J)``, as in
  MushroomRL's car-on-hill FQI example. ``Regressor`` gets ``n_actions`` and no
  ``output_shape`` -> ``output_shape=(1,)`` != ``n_actions`` -> **ActionRegressor**: one
  independent ExtraTreesRegressor per action, each fitted on the rows with that action
  (state features only, the action is not an input). Every per-action forest gets the same
  ``random_state=S`` and is re-fitted (same object) each iteration.
* 1.10.2 has no ``Dataset`` class: ``FQI.fit`` takes a list of transitions
  ``(state, action, reward, next_state, absorbing, last)`` with ``action`` of shape (1,)
  and runs ``mushroom_rl.utils.dataset.parse_dataset`` on it (a Python loop that copies
  everything into float64 arrays). We build the list with MushroomRL's own
  ``arrays_as_dataset``. ``last`` is set equal to ``absorbing`` (FQI ignores it).
* ``MDPInfo(Box(-inf, inf, (f,)), Discrete(A), gamma=1.0, horizon=...)``; FQI's target is
  ``reward + gamma * (1 - absorbing) * max_a Q(next_state, a)``, the first iteration
  fits ``reward``.

Timing: ``fit_s`` is ``agent.fit(dataset)`` measured with ``time.perf_counter``. Per
iteration timing comes from thin timing wrappers (instance attributes shadowing
``approximator.fit``/``approximator.predict`` and the ``parse_dataset`` name in FQI's
module); MushroomRL's code is not modified. Iteration i runs from the end of the previous
iteration's ``approximator.fit`` (or the end of ``parse_dataset``) to the end of its own
``approximator.fit``, so it includes the ``predict(next_state)`` and target computation.
Building the transition list (``arrays_as_dataset``) is reported separately as
``to_list_s``; ``parse_dataset`` (inside ``fit``) as ``parse_s``.

``--make-synthetic DATA.npz`` writes a poker-like synthetic dataset instead (see
``make_synthetic``) and exits.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # mushroom_rl imports pygame

import numpy as np


def make_synthetic(n: int, n_features: int, n_actions: int, seed: int) -> dict[str, np.ndarray]:
    """Poker-like transitions: small-integer features plus one uniform [0, 1] "equity".

    Rows form a chain of short episodes: a row is absorbing with probability 0.3 (mean
    episode length ~3.3); a non-absorbing row's next_state is the next row's state, an
    absorbing row's next_state is all zeros. Rewards are 0 except on absorbing rows:
    action 0 ("fold") loses -10..-20; other actions win/lose 10..100 (scaled by the action)
    with win probability = equity.
    """
    rng = np.random.default_rng(seed)
    n_int = n_features - 1
    cards = np.array([4, 2, 5, 3, 10, 6, 13, 13, 4, 8], dtype=np.int64)
    cards = np.resize(cards, n_int)
    states = np.empty((n + 1, n_features), dtype=np.float32)
    states[:, :n_int] = rng.integers(0, cards, size=(n + 1, n_int))
    states[:, n_int] = rng.random(n + 1, dtype=np.float32)
    state = states[:n]
    absorbing = rng.random(n) < 0.3
    next_state = np.where(absorbing[:, None], np.float32(0), states[1:]).astype(np.float32)
    action = rng.integers(0, n_actions, size=n).astype(np.int64)
    equity = state[:, n_int].astype(np.float64)
    win = rng.random(n) < equity
    size = rng.integers(10, 101, size=n).astype(np.float64)
    size = np.minimum(size * np.maximum(action, 1) / 1.5, 100.0).round()
    reward = np.where(action == 0, -rng.integers(10, 21, size=n), np.where(win, size, -size))
    reward = np.where(absorbing, reward, 0.0).astype(np.float64)
    return dict(state=state, action=action, reward=reward, next_state=next_state,
                absorbing=absorbing, n_actions=np.int64(n_actions))


def rss_now_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data", help="input .npz (or output path with --make-synthetic)")
    p.add_argument("--trees", type=int, default=100, help="n_estimators M")
    p.add_argument("--nmin", type=int, default=2, help="min_samples_split")
    p.add_argument("--k", type=int, default=None, help="max_features (default: all inputs)")
    p.add_argument("--iters", type=int, default=10, help="FQI iterations")
    p.add_argument("--seed", type=int, default=0, help="random_state")
    p.add_argument("--jobs", type=int, default=1, help="n_jobs for each ExtraTreesRegressor")
    p.add_argument("--out", default=None, help="RESULT.npz (greedy_action, max_q, q)")
    p.add_argument("--make-synthetic", action="store_true",
                   help="write a synthetic dataset to DATA and exit")
    p.add_argument("--rows", type=int, default=200_000, help="synthetic: rows")
    p.add_argument("--features", type=int, default=11, help="synthetic: features")
    p.add_argument("--actions", type=int, default=3, help="synthetic: actions")
    a = p.parse_args(argv)

    if a.make_synthetic:
        np.savez(a.data, **make_synthetic(a.rows, a.features, a.actions, a.seed))
        return 0

    import mushroom_rl
    import mushroom_rl.algorithms.value.batch_td.fqi as fqi_mod
    from mushroom_rl.algorithms.value import FQI
    from mushroom_rl.core import MDPInfo
    from mushroom_rl.policy import EpsGreedy
    from mushroom_rl.utils.dataset import arrays_as_dataset
    from mushroom_rl.utils.parameters import Parameter
    from mushroom_rl.utils.spaces import Box, Discrete
    from sklearn.ensemble import ExtraTreesRegressor

    rss_after_import = rss_now_mb()

    with np.load(a.data) as z:
        state = np.ascontiguousarray(z["state"], dtype=np.float32)
        action = np.asarray(z["action"]).astype(np.int64)
        reward = np.asarray(z["reward"], dtype=np.float64)
        next_state = np.ascontiguousarray(z["next_state"], dtype=np.float32)
        absorbing = np.asarray(z["absorbing"]).astype(bool)
        n_actions = int(z["n_actions"])
    n, f = state.shape
    assert action.shape == reward.shape == absorbing.shape == (n,)
    assert next_state.shape == (n, f) and action.min() >= 0 and action.max() < n_actions

    mdp_info = MDPInfo(Box(-np.inf, np.inf, shape=(f,)), Discrete(n_actions),
                       gamma=1.0, horizon=1_000_000)
    approximator_params = dict(
        input_shape=(f,), n_actions=n_actions, n_estimators=a.trees,
        min_samples_split=a.nmin, max_features=1.0 if a.k is None else a.k,
        random_state=a.seed, n_jobs=a.jobs,
    )
    agent = FQI(mdp_info, EpsGreedy(epsilon=Parameter(0.0)), ExtraTreesRegressor,
                n_iterations=a.iters, approximator_params=approximator_params, quiet=True)
    reg = agent.approximator
    wrapper = type(reg._impl).__name__
    model_type = type(reg.model[0] if isinstance(reg.model, list) else reg.model).__name__
    n_models = len(reg.model) if isinstance(reg.model, list) else 1

    # --- thin timing hooks (instance attributes / module-global name; no source changes) ---
    events: list[tuple[str, float, float]] = []

    def timed(name, fn):
        def wrapper_fn(*args, **kw):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kw)
            finally:
                events.append((name, t0, time.perf_counter()))
        return wrapper_fn

    orig_fit, orig_predict, orig_parse = reg.fit, reg.predict, fqi_mod.parse_dataset
    reg.fit = timed("fit", orig_fit)
    reg.predict = timed("predict", orig_predict)
    fqi_mod.parse_dataset = timed("parse", orig_parse)

    t0 = time.perf_counter()
    # FQI ignores ``last``; action must be shape (1,) per transition.
    dataset = arrays_as_dataset(state, action[:, None], reward, next_state, absorbing,
                                absorbing)
    to_list_s = time.perf_counter() - t0
    rss_before_fit = rss_now_mb()

    t_fit0 = time.perf_counter()
    agent.fit(dataset)
    fit_s = time.perf_counter() - t_fit0
    peak_fit_mb = peak_rss_mb()

    reg.fit, reg.predict, fqi_mod.parse_dataset = orig_fit, orig_predict, orig_parse
    del dataset

    t0 = time.perf_counter()
    q = np.asarray(agent.approximator.predict(state.astype(np.float64)), dtype=np.float64)
    predict_s = time.perf_counter() - t0
    greedy = q.argmax(axis=1).astype(np.int64)
    max_q = q.max(axis=1)

    parse = [e for e in events if e[0] == "parse"]
    fits = [e for e in events if e[0] == "fit"]
    preds = [e for e in events if e[0] == "predict"]
    parse_s = parse[0][2] - parse[0][1] if parse else None
    starts = [parse[0][2] if parse else t_fit0] + [e[2] for e in fits[:-1]]
    per_iter = [e[2] - s for s, e in zip(starts, fits, strict=True)]

    if a.out:
        np.savez(a.out, greedy_action=greedy, max_q=max_q, q=q)

    import sklearn
    import torch

    r3 = lambda x: round(x, 3)  # noqa: E731
    print(json.dumps(dict(
        impl="mushroom_rl.FQI", mushroom_rl=mushroom_rl.__version__,
        sklearn=sklearn.__version__, numpy=np.__version__, torch=torch.__version__,
        python=sys.version.split()[0],
        wrapper=wrapper, model=model_type, n_models=n_models,
        rows=n, features=f, n_actions=n_actions, trees=a.trees, nmin=a.nmin,
        k=a.k if a.k is not None else f, iters=a.iters, seed=a.seed, jobs=a.jobs,
        total_s=r3(fit_s),
        per_iter_s=[r3(x) for x in per_iter],
        iter_fit_s=[r3(e[2] - e[1]) for e in fits],
        iter_predict_next_s=[r3(e[2] - e[1]) for e in preds],
        parse_s=r3(parse_s) if parse_s is not None else None,
        to_list_s=r3(to_list_s),
        final_predict_s=r3(predict_s),
        peak_mb=round(peak_fit_mb, 1),
        rss_after_import_mb=round(rss_after_import, 1),
        rss_before_fit_mb=round(rss_before_fit, 1),
        peak_mb_end=round(peak_rss_mb(), 1),
    )))
    return 0


if __name__ == "__main__":
    sys.exit(main())
