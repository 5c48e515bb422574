"""Acting only where the logs did: the support constraint of discrete BCQ.

Learning offline, a Q-function is trusted only where the data show what an action led
to. Where the logged players (almost) never took an action, its Q is the trees'
extrapolation, and the maximum over actions favours whichever extrapolation came out
high: the greedy policy then plays moves nobody played, on the strength of noise
(Fujimoto, Meger & Precup 2019, extrapolation error; Fujimoto, Conti, Ghavamzadeh &
Pineau 2019, discrete BCQ). The remedy here is theirs: a behaviour model estimates
how likely the logged players were to take each action in a state, and an action
counts (as a choice, and in the maximum each FQI target takes over the next state's
actions) only where its probability is at least ``tau`` times the likeliest legal
action's. ``tau = 0`` is plain FQI; ``tau = 1`` keeps only the players' likeliest
action, so the policy imitates them.

The behaviour model is behaviour cloning's (``batchrl.learners.bc``, ``batchrl learn
bc``): extremely randomized trees on the same features, regressing the one-hot action
(so each leaf holds the actions' frequencies among its rows); it is kept
in the model file beside the Q-function, and the greedy policy applies the same mask
when it plays.

>>> import numpy as np
>>> x = np.repeat(np.arange(2, dtype=np.float32)[:, None], 50, axis=0)
>>> acts = np.r_[np.zeros(49), [1], np.ones(50)].astype(int)   # action 1 once in state 0
>>> b = behaviour_model(x, acts, 2, trees=5, nmin=2, seed=0)
>>> supported(b, np.array([[0.], [1.]], np.float32), np.ones((2, 2), bool), 0.3).tolist()
[[True, False], [False, True]]
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.learners.bc import behaviour_model, probabilities

__all__ = ["behaviour_model", "supported"]


def supported(behaviour: Any, states: Any, legal: NDArray[np.bool_],
              tau: float) -> NDArray[np.bool_]:
    """The legal actions the logged players took often enough: probability at least
    ``tau`` times the likeliest legal action's. A state keeps at least its likeliest
    legal action, and a state with no legal action keeps none."""
    legal = np.asarray(legal, dtype=bool)
    p = np.where(legal, probabilities(behaviour, states), -1.0)
    best = p.max(axis=1, keepdims=True)
    mask: NDArray[np.bool_] = legal & (p >= tau * best)
    empty = legal.any(axis=1) & ~mask.any(axis=1)  # every legal action unseen there
    mask[empty] = legal[empty]
    return mask
