"""What ``batchrl evaluate --logs`` reads of a logged hand (`LogFace.chance_hands`): who
sat where, each seat's result, and each chance event with the features a value function
reads after what was dealt and after draws of what could have come
(`batchrl.play.luck`)."""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class ChanceEvent:
    """One chance event of a logged hand (the deal, a board card), for ``evaluate --logs``:
    the features a value function reads just after it, seat by seat, for what was dealt
    (``features[0]``) and for draws from what could have come (``features[1:]``, each as
    likely as the rules deal it: their mean estimates the expectation). ``seats``: the
    seats the event concerns (a folded seat's result no longer depends on the cards).

    A choice of a player whose strategy is known (a bot's, as probabilities) is an event
    too (AIVAT's action terms): ``features[1:]`` are every move it could have made,
    ``weights`` their probabilities (summing to 1: their weighted mean is the exact
    expectation), and ``features[0]`` is the move made, a copy of its alternative's row
    (the same numbers, noise included, so the correction's expectation is zero).
    ``exact``: a seat's result where an outcome settles it (a fold that ends the hand, a
    call to the showdown), in the results' unit, NaN where the value function values it."""

    features: NDArray[np.float64]  # (1 + draws, seats, features)
    seats: NDArray[np.bool_]  # (seats,)
    weights: NDArray[np.float64] | None = None  # (draws,): None, the draws equally likely
    exact: NDArray[np.float64] | None = None  # (1 + draws, seats)


@dataclass(frozen=True)
class ChanceHand:
    """A logged hand as ``evaluate --logs`` reads it: who sat where, each seat's result
    (in the plan's unit) and its chance events in order."""

    where: str  # "file, line N"
    names: tuple[str, ...]  # () where the log names nobody: the report says "seat N"
    results: NDArray[np.float64]  # (seats,)
    events: tuple[ChanceEvent, ...]
    # what chance dealt, whoever sat where (hold'em: the hole cards): hands dealt alike
    # (a duplicate match's, a dealer's repeated seed) are cross-fitted in one fold, so
    # no value function corrects a hand with what it learnt from its twin; None: its own
    deal: Hashable | None = None


@dataclass
class ChancePlan:
    """A source's hands for ``evaluate --logs`` (`LogFace.chance_hands`): ``hands`` yields
    `ChanceHand`, ``BadLine`` or ``Skipped`` records in order; ``feature_names`` name the
    columns of the events' features; ``unit`` is the results' (``mbb/hand``);
    ``variant`` names the game as the report does."""

    feature_names: tuple[str, ...]
    hands: Iterator[Any]
    unit: str
    variant: str = ""
