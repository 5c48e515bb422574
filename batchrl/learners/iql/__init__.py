"""In-sample learning: ``batchrl learn iql``, expectile fitted Q-iteration on frozen
extremely randomized trees, and its policy extracted by advantage-weighted cloning.

FQI's targets take a max over every legal next move, so on a good player's logs it
values moves the logs never try and falls below cloning them. Here no target takes a
max (`batchrl.learners.iql.fit`): Q(s, a) regresses ``r + gamma V(s')`` on the logged
moves and V(s) is the ``expectile``-expectile of Q over the moves the logs made in s.
The policy is the logs' moves cloned with each row weighted ``exp(A / beta)`` (A =
Q(s, a) - V(s), beta in units of the advantages' spread, weights capped at ``clip``):
a large ``beta`` clones the logs, a small one plays their best moves. The model file
(kind ``iql``) holds the weighted clone's forest, read from arrays and JSON.

>>> import numpy as np
>>> from batchrl.store import Transitions
>>> one = np.ones(40, bool)  # one-step hands: move 1 pays 1, move 0 nothing, both logged
>>> acts = np.arange(40) % 2
>>> data = Transitions(
...     np.zeros((40, 1), np.float32), acts, acts.astype(float), np.zeros((40, 1), np.float32),
...     np.zeros((40, 2), bool), one, ~one, np.arange(40), np.array([str(i) for i in range(40)],
...     object), np.zeros(40, np.int32), np.zeros(40, np.int8), ("x",), ("pass", "bet"))
>>> policy = LEARNER.fit(IQLConfig(trees=5, nmin=2, iters=2), data, jobs=1)
>>> policy.act(np.zeros((1, 1), np.float32)).tolist()
[1]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from batchrl.filenames import safe_name
from batchrl.learners.base import Learner, LearnerError
from batchrl.learners.bc import ClonedPolicy, behaviour_model, read_forest
from batchrl.learners.fqi.inputs import with_action
from batchrl.learners.iql.fit import Values, awr_weights, iterate
from batchrl.store import Transitions

KIND = "iql"


@dataclass(frozen=True, slots=True)
class IQLConfig:
    """Expectile FQI's and its advantage-weighted cloning's hyperparameters."""

    trees: int = field(default=50, metadata={
        "help": "M: trees in each forest (Q, V and the policy).", "short": "-M", "min": 1})
    nmin: int = field(default=20, metadata={
        "help": "n_min: rows a node needs to be split.", "min": 2})
    k: int | None = field(default=None, metadata={
        "help": "K: candidate attributes tried at each split (all, unless given).",
        "min": 1, "unset": "all"})
    iters: int = field(default=11, metadata={
        "help": "N: iterations; Q then looks N decisions ahead.", "short": "-N", "min": 1})
    gamma: float = field(default=1.0, metadata={
        "help": "Discount per decision.", "min": 0.0, "max": 1.0, "min_open": True})
    expectile: float = field(default=0.9, metadata={
        "help": "tau: V(s) is the tau-expectile of Q over the logged moves in s (0.5: the "
                "logs' own value; towards 1: their best move's).", "min": 0.5, "max": 1.0,
        "max_open": True, "metavar": "TAU"})
    beta: float = field(default=0.3, metadata={
        "help": "The policy's temperature, in units of the advantages' spread: each logged "
                "move is cloned with weight exp(A / beta) (large: the logs' moves; small: "
                "their best).", "min": 0.0, "min_open": True})
    clip: float = field(default=100.0, metadata={
        "help": "The largest weight a logged move gets.", "min": 1.0})
    seed: int = field(default=0, metadata={"help": "Makes a run repeatable."})


class ImplicitQLearning(Learner):
    """Implicit Q-learning with trees: learn from the moves the logs made, never a max.

    Expectile fitted Q-iteration on extremely randomized trees (grown once on the
    returns, then only their leaf values refitted), and a policy that clones the logs'
    moves weighted by how much better than the state's value each was. It never values
    a move the logs did not make, so on a good player's logs it stays near cloning them,
    and on logs that try every move it plays their best.

    \b
    Examples:
      batchrl learn iql --store datasets/store
      batchrl learn iql --expectile 0.7 --beta 1.0   # closer to the logs' own play
    """

    name = "iql"
    kind = KIND
    title = ("Implicit Q-learning on trees: expectile FQI over the logged moves, "
             "advantage-weighted cloning.")
    Config: ClassVar[type] = IQLConfig
    history_header = (f"{'iter':>4} {'mean Q':>10} {'mean V':>10} {'mean |A|':>10} "
                      f"{'Q change':>10} {'seconds':>8}")

    def file_name(self, config: Any, features: Sequence[str] | None, drop: Sequence[str],
                  players: Sequence[str], view: str) -> str | None:
        k = "" if config.k is None else f"-K{config.k}"
        gamma = "" if config.gamma == 1.0 else f"-gamma{config.gamma:g}"
        seed = "" if config.seed == 0 else f"-seed{config.seed}"
        tag = f"-{safe_name(view)}" if view else ""
        who = "".join(f"-player-{safe_name(p)}" for p in players)
        return (f"iql-M{config.trees}-nmin{config.nmin}{k}-N{config.iters}-tau"
                f"{config.expectile:g}-beta{config.beta:g}-clip{config.clip:g}{gamma}{seed}"
                f"{tag}{who}")

    def fit(self, config: Any, data: Transitions | Callable[[], Transitions], *,
            progress: Callable[[str, int, int], None] | None = None, jobs: int = -1,
            on_iteration: Callable[[dict[str, Any]], None] | None = None) -> ClonedPolicy:
        rows = self.rows(data)
        inputs = rows.state.shape[1] + 1
        if config.k is not None and config.k > inputs:
            raise LearnerError(f"iql: k {config.k} is more than the {inputs} inputs of Q "
                               f"(the {inputs - 1} features and the move): give --k "
                               f"{inputs} or fewer")
        x_q = with_action(rows.state, rows.action)
        values: Values | None = None
        for got in iterate(rows, x_q, trees=config.trees, nmin=config.nmin, k=config.k,
                           iters=config.iters, gamma=config.gamma, tau=config.expectile,
                           seed=config.seed, jobs=jobs, progress=progress):
            if isinstance(got, Values):
                values = got
            elif on_iteration is not None:
                on_iteration(asdict(got))
        assert values is not None
        del x_q
        weights = awr_weights(values.q - values.v, config.beta, config.clip)
        if progress is not None:
            progress("policy fitted", 0, 1)
        model = behaviour_model(rows.state, rows.action, len(rows.action_names), config.trees,
                                config.nmin, config.seed, jobs, config.k
                                if config.k is None or config.k < inputs else None, weights)
        if progress is not None:
            progress("policy fitted", 1, 1)
        return ClonedPolicy(model, {
            "learner": self.name, "feature_names": list(rows.feature_names),
            "action_names": list(rows.action_names), "rows": len(rows),
            "params": asdict(config), "history": [asdict(h) for h in values.history],
            "weights": {"mean": float(weights.mean()), "max": float(weights.max()),
                        "clipped": float((weights >= config.clip).mean())}}, KIND)

    def history_length(self, config: Any) -> int | None:
        return int(config.iters)

    def history_row(self, entry: Mapping[str, Any]) -> str:
        return (f"{entry['iteration']:>4} {entry['mean_q']:>10.4f} {entry['mean_v']:>10.4f} "
                f"{entry['mean_abs_advantage']:>10.4f} {entry['change']:>10.4f} "
                f"{entry['seconds']:>8.2f}")

    def read(self, path: str | Path) -> ClonedPolicy:
        return read_forest(path, KIND, self.name)


LEARNER = ImplicitQLearning()
