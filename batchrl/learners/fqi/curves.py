"""What an FQI run's iterations say, drawn and checked: the Bellman residual and the mean
and largest |Q| per iteration (``MODEL.png`` beside the model, where matplotlib is
installed), and a warning when |Q| goes past every return the logs hold.

A Q-value is an expected return, so no |Q| should pass the largest |return-to-go| of
any logged decision by much: one that does means the iterations over-estimate (the max
over next actions the logs never took) or diverge (the residual rises with it).

>>> history = [{"iteration": 1, "bellman_residual": 0.7, "mean_abs_q": 3.0, "max_abs_q": 9.0},
...            {"iteration": 2, "bellman_residual": 1.9, "mean_abs_q": 31.0, "max_abs_q": 60.0}]
>>> print(out_of_range(history, 25.0)[:80])
the largest |Q| is 60 after iteration 2, past the largest |return| of any logged
>>> out_of_range(history[:1], 25.0) is None
True
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from batchrl.records import check_writable

SLACK = 1.05  # how far past the logs' largest |return| a |Q| may go before a warning


def out_of_range(history: Sequence[Mapping[str, Any]], largest: float) -> str | None:
    """The warning for a run whose last |Q| passes ``largest`` (the largest |return-to-go|
    of a logged decision), else None."""
    if not history or largest <= 0:
        return None
    last = history[-1]
    if last["max_abs_q"] <= SLACK * largest:
        return None
    first, final = history[0]["bellman_residual"], last["bellman_residual"]
    trend = (f"the Bellman residual rose from {first:.3g} to {final:.3g}" if final > first
             else f"the Bellman residual {first:.3g} to {final:.3g}")
    return (f"the largest |Q| is {last['max_abs_q']:.4g} after iteration {last['iteration']}, "
            f"past the largest |return| of any logged decision ({largest:.4g}): the "
            f"iterations over-estimate or diverge ({trend}). Try --support 0.3 (only moves "
            f"the logs made), a larger --nmin, or fewer --iters.")


def can_draw() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def draw(model: Path, history: Sequence[Mapping[str, Any]], largest: float | None
         ) -> Path | None:
    """``MODEL.png``: the residual, and the mean and largest |Q| against the logs' largest
    |return|, per iteration; None where matplotlib is not installed."""
    if not history or not can_draw():
        return None
    from matplotlib.figure import Figure  # no pyplot: a notebook's backend stays its own

    its = [h["iteration"] for h in history]
    fig = Figure(figsize=(10, 3.8))
    left, right = fig.subplots(1, 2)
    left.plot(its, [h["bellman_residual"] for h in history], marker="o")
    left.set(xlabel="iteration", ylabel="RMS Bellman error", title="Bellman residual")
    right.plot(its, [h["mean_abs_q"] for h in history], marker="o", label="mean |Q|")
    right.plot(its, [h["max_abs_q"] for h in history], marker="o", label="largest |Q|")
    if largest:
        right.axhline(largest, color="grey", ls=":",
                      label=f"largest |return| logged ({largest:.4g})")
    right.set(xlabel="iteration", ylabel="|Q|", title="Q's size")
    right.legend()
    for ax in (left, right):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    plot = check_writable(model.with_suffix(".png"))
    fig.savefig(plot, dpi=110)
    return plot
