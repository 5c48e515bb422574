"""``batchrl ope``: a model's value from the logs alone (`batchrl.play.ope`).
``batchrl.cli.main`` registers it on the ``batchrl`` group."""

from __future__ import annotations

import json
from pathlib import Path

import click

from batchrl.cli.common import JOBS, STORE, STORE_HELP, progress
from batchrl.games import GameError
from batchrl.play.ope import ESTIMATORS, TITLES, OPEConfig, evaluate_offline, takers
from batchrl.policy import ModelError
from batchrl.store import StoreError, default_store_path

MODEL_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


def _seats(text: str | None) -> tuple[int, ...]:
    if not text:
        return ()
    try:
        return tuple(int(s) for s in text.split(","))
    except ValueError:
        raise click.BadParameter(f"{text!r}: seat numbers, comma-separated (0,1)",
                                 param_hint="--seat") from None


def _estimators(text: str) -> tuple[str, ...]:
    names = tuple(s.strip() for s in text.split(",") if s.strip())
    if unknown := [n for n in names if n not in ESTIMATORS]:
        raise click.BadParameter(f"no estimator {', '.join(unknown)}: "
                                 f"{', '.join(ESTIMATORS)}", param_hint="--estimators")
    return names


@click.command(context_settings={"max_content_width": 100})
@click.option("--model", type=MODEL_FILE, required=True,
              help="The model whose policy is valued (batchrl learn's or fqi's).")
@click.option("--store", type=STORE, default=None, help=STORE_HELP)
@click.option("--seat", "seats", default=None, metavar="N[,N...]",
              help="The seats the policy takes, one at a time, the others playing as "
                   "logged [default: every seat that decides in the logs].")
@click.option("--player", "players", multiple=True, metavar="NAME",
              help="A logged player, by name, whose decisions the policy takes (in whatever "
                   "seat it sat), the others playing as logged; repeat for more, each valued "
                   "alone (the store's names: batchrl info).")
@click.option("--estimators", default=",".join(ESTIMATORS), show_default=True,
              metavar="NAMES", help="Of: " + "; ".join(f"{k}, {v}" for k, v in
                                                      TITLES.items()) + ".")
@click.option("--boot", type=click.IntRange(min=0), default=100, show_default=True,
              help="Bootstrap replicates for the 95% intervals (0: none).")
@click.option("--behaviour", type=MODEL_FILE, default=None,
              help="A clone of the logged players (batchrl learn bc) whose move "
                   "probabilities weight the episodes [default: one fitted on each seat's "
                   "rows].")
@click.option("--clip", type=click.FloatRange(0, 1, min_open=True), default=0.01,
              show_default=True,
              help="The floor of a logged move's probability: no ratio is above 1/clip; a "
                   "policy's move under it counts as unsupported.")
@click.option("--trees", type=click.IntRange(min=1), default=50, show_default=True,
              help="Trees of each forest (FQE's per move, and the clone's).")
@click.option("--nmin", type=click.IntRange(min=2), default=20, show_default=True,
              help="Rows a node needs to be split.")
@click.option("--gamma", type=click.FloatRange(0, 1), default=1.0, show_default=True,
              help="The discount.")
@click.option("--seed", default=0, show_default=True,
              help="The bootstrap's and the forests' randomness.")
@click.option("--jobs", "-j", type=JOBS, default=-1, show_default=True,
              help="Threads that grow the forests (-1: every core).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object, for scripts.")
def ope(model: Path, store: Path | str | None, seats: str | None, players: tuple[str, ...],
        estimators: str,
        boot: int, behaviour: Path | None, clip: float, trees: int, nmin: int, gamma: float,
        seed: int, jobs: int, as_json: bool) -> None:
    """Value a policy from the logs alone: off-policy evaluation.

    The model's policy takes a seat of the store's logged episodes while the other seats
    play as logged, and its value there is estimated from the logs, in the game's unit,
    with no simulator of the logged players: fitted Q evaluation (FQE), per-decision
    weighted importance sampling toward the policy (WIS, the logged players' moves
    cloned as the behaviour policy) and weighted doubly robust (DR, FQE's values as the
    weights' control variate). Each comes with a 95% bootstrap interval over episodes.

    The report says how far the logs support the policy: where it plays moves the
    logged players hardly make (a clone's probability under --clip), the weights are 0
    there and FQE extrapolates; the effective sample size says how many episodes the
    weights rest on.

    \b
    Example:
      batchrl ope --model models/fqi.npz --store datasets/store
      batchrl ope --model bc.npz --store logs/store --seat 0 --json
      batchrl ope --model fqi.npz --store room/store --player Pluribus
    """
    try:
        config = OPEConfig(model, store if store is not None else default_store_path(),
                           _seats(seats), players, _estimators(estimators), boot, seed,
                           gamma, trees, nmin, clip, behaviour, jobs)
        # a bar of the bootstrap's replicates, every seat's (none without a bootstrap)
        with progress(boot * takers(config), "bootstrap",
                      lines=not as_json and boot > 0) as advance:

            def heard(what: str, done: int, total: int) -> None:
                if what.endswith("bootstrap"):
                    advance(1)

            report = evaluate_offline(config, heard)
    except (StoreError, ModelError, GameError, ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(report.as_dict()) if as_json else report.table())
