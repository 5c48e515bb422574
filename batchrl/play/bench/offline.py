"""``batchrl bench --ope``: each policy also valued from its dataset's logs alone
(`batchrl.play.ope`), on held-out logs, as a row keeps it: whose decisions it takes,
the logs it is valued on, the task that values it, and its values normalized as the
scores are."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from batchrl.games import Dataset, Game
from batchrl.play.ope import OPEConfig, evaluate_offline

# --ope values each policy on logs of the dataset's recipe dealt from this far past its
# seed: a policy valued on the hands it learned from is valued too well (the winner's
# curse: FQI of hold'em's random logs, +1.81 bb/hand against random, is valued +2.99 on
# its own logs and +1.66 on others)
HELD_OUT_SEED = 1_000_003
SEAT = "seat "  # a taker that is a seat ("seat 0"), not a player's name


def held_out(dataset: Dataset) -> Dataset:
    """The dataset's recipe dealt from another seed: the logs --ope values policies on."""
    return dataclasses.replace(dataset, seed=dataset.seed + HELD_OUT_SEED)


def folder_of(store: Path | None) -> str:
    """A store's dataset folder's name (what a row records of the logs it was valued on)."""
    return "" if store is None else store.parent.name


def takers(game: Game, dataset: Dataset, params: Any, schema: Any,
           say: Callable[[str], None]) -> tuple[str, ...] | None:
    """Whose decisions a policy takes when it is valued from the dataset's logs (() every
    seat's; ("seat 0",) the first seat's where the game scores a player from that seat
    only; the first player's by name where the logs mix players); None where it is not
    valued, said: a score that is not what the rewards add up to
    (`PlayFace.return_of_score`), other opponents than the logs' own, or mixed logs that
    do not name players."""
    if game.play.return_of_score(params) is None:
        say(f"{game.name}/{dataset.tier}: --ope leaves it out (its score is another "
            "quantity than its rewards add up to)")
        return None
    if dataset.opponents is not None and \
            tuple(dataset.opponents) != game.play.opponents_of(dataset.players):
        say(f"{game.name}/{dataset.tier}: --ope leaves it out (it is scored against other "
            "players than its logs' own)")
        return None
    if len(set(dataset.players)) == 1:
        # every seat's decisions where the score averages the seats, else the first's
        return () if game.play.score_rotates_seats else (f"{SEAT}0",)
    if "name" not in schema.audit_columns:
        say(f"{game.name}/{dataset.tier}: --ope leaves it out (its logs mix players and do "
            "not name them)")
        return None
    return (dataset.players[0],)


def value(model: Path, store: str, taken: tuple[str, ...], boot: int, trees: int,
          jobs: int) -> dict[str, Any]:
    """A task's part: the model's value from the logs at ``store``, taking ``taken``
    (`takers`), each estimator's with its interval (over the seats or players taken), the
    largest share of decisions off the logs' support and the smallest effective sample
    size."""
    seats = tuple(int(w.removeprefix(SEAT)) for w in taken if w.startswith(SEAT))
    report = evaluate_offline(OPEConfig(model, store, seats=seats,
                                        players=() if seats else taken, boot=boot,
                                        trees=trees, jobs=jobs))
    values = report.mean or report.seats[0].values
    return {"values": {v.estimator: [v.value, v.low, v.high] for v in values},
            "unsupported": max(s.unsupported for s in report.seats),
            "ess": min(s.ess for s in report.seats)}


def row_values(game: Game, params: Any, random: float, reference: float,
               got: Mapping[str, Any] | None, store: Path | None) -> dict[str, Any] | None:
    """A task's values as a row keeps them: each estimate normalized as the scores are,
    random's and the reference's mean scores turned into the rows' rewards
    (`PlayFace.return_of_score`), and the logs' folder."""
    if got is None:
        return None
    a, b = game.play.return_of_score(params) or (1, 0)
    low, high = a * random + b, a * reference + b

    def number(x: float) -> float | None:
        return float(x) if math.isfinite(x) else None

    estimates = {}
    for name, (v, lo, hi) in got["values"].items():
        norm = 100 * (v - low) / (high - low) if high != low else float("nan")
        estimates[name] = [number(v), number(lo), number(hi), number(norm)]
    return {"estimates": estimates, "unsupported": float(got["unsupported"]),
            "ess": float(got["ess"]), "logs": folder_of(store)}


def current(ope: Mapping[str, Any] | None, store: Path | None) -> bool:
    """Whether a row's values from the logs are those --ope asks for now: made on the
    held-out logs at ``store``."""
    return ope is not None and ope.get("logs") == folder_of(store)
