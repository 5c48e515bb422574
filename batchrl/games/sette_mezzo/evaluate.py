"""A learned model played exactly against sette e mezzo's optimum (no sampling)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games.base import Interval
from batchrl.games.sette_mezzo.solver import PolicyReport, Solution, evaluate_policy, strategy_table
from batchrl.policy import LoadedModel


def evaluate_model(model: LoadedModel, limit: float) -> PolicyReport:
    """The greedy policy of ``model`` (bound to the game's features): exact value, regret
    and agreement against an opponent that draws to ``limit``."""

    def choose(states: NDArray[np.float32]) -> NDArray[Any]:
        return model.act_batch(states)

    return evaluate_policy(choose, limit)


@dataclass(frozen=True)
class ModelReport:
    """What ``batchrl evaluate`` prints of a sette e mezzo model."""

    model: str
    report: PolicyReport

    def table(self) -> str:
        r = self.report
        return "\n".join([
            f"model                      {self.model}",
            f"opponent draws to          {r.limit:g}",
            f"expected reward per game   {r.expected_reward:+.6f}",
            f"optimal                    {r.optimal_reward:+.6f}",
            f"gap                        {r.regret:.6f}",
            f"optimal action             {r.agreement:.2%} of its decisions "
            f"({r.agreement_optimal_visits:.2%} of the optimal policy's, "
            f"{r.agreement_states:.2%} of all {r.states:,} states)"])

    def as_dict(self) -> dict[str, Any]:
        return asdict(self.report) | {"regret": self.report.regret, "model": self.model}

    def intervals(self) -> tuple[str, list[Interval]]:
        r = self.report  # exact: no interval
        return ("expected stake per game (exact)",
                [Interval(self.model, r.expected_reward, r.expected_reward, r.expected_reward),
                 Interval("optimal", r.optimal_reward, r.optimal_reward, r.optimal_reward)])


@dataclass(frozen=True)
class SolutionReport:
    """What ``batchrl solve sette-mezzo`` prints: the optimal strategy as a table."""

    solution: Solution

    def table(self) -> str:
        s = self.solution
        return (f"{strategy_table(s)}\noptimal expected reward per game: "
                f"{s.expected_reward:+.6f} ({s.rounds} rounds of policy iteration, "
                f"{len(s.action):,} states)")

    def as_dict(self) -> dict[str, Any]:
        s = self.solution
        return {"limit": s.limit, "expected_reward": s.expected_reward, "rounds": s.rounds,
                "states": len(s.action), "seconds": s.seconds}
