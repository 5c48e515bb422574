"""The benchmark's datasets as Minari datasets: ``batchrl/<game>/<tier>-v0``, with the
reference scores Minari normalizes by (``minari.get_normalized_score``).

Minari's ``ref_min_score`` and ``ref_max_score`` are the mean return of an episode of
a random policy and of an expert in the dataset's environment. Here they are measured
as the benchmark measures players, in the dataset's own rewards (``Rules.rewards``, what
its rows and the Gymnasium environment of a seat, ``batchrl.env``, pay): random play and
the game's reference each play ``count`` games against the game's evaluation opponents,
in every seat in turn, and their episodes' returns are averaged. Where the benchmark's
scores are exact (sette e mezzo's stake per game, Leduc's chips per hand: expected
returns of an episode, in the rewards' unit) they are the reference scores themselves,
so Leduc's best response, which is measured rather than played, has one too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from batchrl.export import export
from batchrl.games import Dataset, Game
from batchrl.games.play import make_player, play

SEED = 2_000_011  # the reference games' deals, apart from the benchmark's own


def dataset_id(game: Game, dataset: Dataset, quick: bool) -> str:
    """``batchrl/<game>/<tier>-v0`` (``<tier>-quick-v0`` for --quick's small ones)."""
    return f"batchrl/{game.name}/{dataset.tier}{'-quick' if quick else ''}-v0"


def mean_return(game: Game, params: Any, player: str, opponents: Sequence[str], count: int,
                seed: int = SEED) -> float:
    """The mean return of ``player``'s episodes (a game from its seat: its rewards
    added up) against ``opponents``, seats rotating game by game."""
    n = game.rules.num_players(params)
    names = [player, *opponents]
    rng = np.random.default_rng(seed)
    players = [make_player(game, name, params, r)
               for name, r in zip(names, rng.spawn(n), strict=True)]

    def seating(i: int) -> list[int]:  # the player in each seat: player 0 in seat i % n
        return [(s - i) % n for s in range(n)]

    games = play(game, params, players, max(count, n), rng, seats=seating)
    total = 0.0
    for i, g in enumerate(games):
        seat = i % n
        for before, after in zip(g.states, g.states[1:], strict=False):
            if (earned := game.rules.rewards(before, after)) is not None:
                total += float(earned[seat])
    return total / len(games)


def export_dataset(game: Game, dataset: Dataset, store: Path, stored: tuple[str, Any],
                   opponents: Sequence[str], count: int, quick: bool, out: Path,
                   exact: tuple[float, float] | None = None,
                   say: Callable[[str], None] = lambda _: None) -> str:
    """The dataset's store exported under ``out`` as a Minari dataset with its reference
    scores (``exact``: random's and the reference's exact expected returns; else measured
    on ``count`` games); kept if there already; its id."""
    name = dataset_id(game, dataset, quick)
    if (out / name).exists():
        return name
    params = game.log.params_from_store(*stored)
    reference = game.bench.reference or "random"
    if exact is not None:
        low, high = exact
        say(f"{game.name}/{dataset.tier}: the Minari dataset {name}, its reference scores "
            "exact")
    else:
        say(f"{game.name}/{dataset.tier}: the Minari dataset {name}: measuring random and "
            f"{reference} on {count:,} {game.rules.unit} against "
            f"{','.join(opponents) or 'the dealer'}")
        low, high = (mean_return(game, params, p, opponents, count)
                     for p in ("random", reference))
    more: Mapping[str, Any] = {"ref_min_score": low, "ref_max_score": high,
                               "num_episodes_average_score": max(count, 1)}
    export(store, "minari", out, dataset_id=name, minari_metadata=more)
    say(f"{game.name}/{dataset.tier}: {out / name} (ref_min_score {low:+.4f}, "
        f"ref_max_score {high:+.4f})")
    return name
