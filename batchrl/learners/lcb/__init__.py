"""Pessimism from the forest itself: ``batchrl learn lcb``, fitted Q-iteration on the lower
confidence bound of Q.

An extremely randomized forest's trees agree where the logs hold many rows of a move
and disagree where they hold few: each tree's random cuts put a rarely tried move in
leaves of other moves' rows. So Q minus ``kappa`` times the standard deviation of the
trees' predictions is a lower confidence bound, and FQI on it, in every target's max
over the next moves and in the move played, values the moves the logs rarely try
cautiously (``kappa`` 0 is plain FQI). Everything else is FQI's (`batchrl.learners.fqi`:
fast mode, checkpoints, a Dask cluster, the support constraint); the model file (kind
``lcb``) is FQI's with the bound's ``kappa``.

>>> LEARNER.file_name(LCBConfig(kappa=2.0, trees=50), None, (), (), "")
'lcb-kappa2-M50-nmin20-N11'
>>> LEARNER.settings_from  # a game's FQI settings are its own where it names none
'fqi'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from batchrl.learners.fqi import FittedQIteration, FQIConfig

KIND = "lcb"


@dataclass(frozen=True, slots=True)
class LCBConfig(FQIConfig):
    """FQI's hyperparameters and the bound's width."""

    kappa: float = field(default=1.0, metadata={
        "help": "kappa: a move is valued at the forest's Q less kappa standard deviations "
                "of its trees' predictions, in the backups and at play (0: plain FQI).",
        "min": 0.0})


class PessimisticFQI(FittedQIteration):
    """Fitted Q-iteration on a lower confidence bound: the trees' spread as doubt.

    Each move's value is the forest's Q less KAPPA times the standard deviation of its
    trees' predictions, in every target's max over the next moves and in the move
    played: where the logs rarely try a move the trees disagree and it is valued
    cautiously. The rest is FQI's (batchrl learn fqi --help): the game's recommended
    settings, fast mode, checkpoints and --resume, a Dask cluster, --support.

    \b
    Examples:
      batchrl learn lcb --store datasets/store           # kappa 1
      batchrl learn lcb --kappa 2 --fast --store datasets/store
    """

    name = "lcb"
    kind = KIND
    title = "FQI on a lower confidence bound of Q, its trees' spread (pessimism)."
    Config: ClassVar[type] = LCBConfig
    settings_from = "fqi"  # a game's FQI settings suit it, where it names none for lcb

    def pessimism(self, config: Any) -> float:
        return float(config.kappa)

    def file_name(self, config: Any, features: Sequence[str] | None, drop: Sequence[str],
                  players: Sequence[str], view: str) -> str | None:
        """FQI's name, ``lcb`` and the bound's kappa in front: ``lcb-kappa1-M100-…``."""
        name = super().file_name(config, features, drop, players, view) or ""
        return f"lcb-kappa{config.kappa:g}{name.removeprefix('fqi')}"


LEARNER = PessimisticFQI()
