"""The ``bench`` command: every learner on every game's datasets, normalized between
random play and the game's reference (``batchrl.play.bench`` does the work;
``batchrl.cli.main`` registers the command on the ``batchrl`` group)."""

from __future__ import annotations

import inspect
import json
import sys
import textwrap
from pathlib import Path

import click

from batchrl.cli.common import JOBS, OUT_DIR, split_names, stopped
from batchrl.cluster import ClusterError, scheduler_address
from batchrl.games import GAMES, TIERS
from batchrl.learners import LearnerError
from batchrl.play.bench import (
    DEFAULT_LEARNERS,
    FULL_SEEDS,
    PEERS,
    QUICK_SEEDS,
    QUICK_SETTINGS,
    BenchConfig,
    BenchError,
    against,
    cache_dir,
    run_bench,
    split_learners,
)


def _datasets_help() -> str:
    lines = ["The tiers, the same in every game:"]
    lines += [textwrap.fill(text, 88, initial_indent=f"  {tier:<8}", subsequent_indent=" " * 10)
              for tier, text in TIERS.items()]
    lines.append("The datasets (each scored against its logs' other players: vs):")
    for game in GAMES.values():
        if game.bench.datasets and game.bench.reference:
            lines.append(f"{game.name} (100 = {game.bench.reference}):")
            lines += [f"  {d.tier:<7} {d.count:>7,} {game.rules.unit} of {','.join(d.players)}"
                      + (f" ({', '.join(f'{k} {v}' for k, v in d.options.items())})"
                         if d.options else "")
                      + f"; vs {','.join(against(game, d)) or 'none (alone)'}"
                      for d in game.bench.datasets]
    return "\b\n" + "\n".join(lines)


@click.command("bench", context_settings={"max_content_width": 100})
@click.option("--games", multiple=True, metavar="GAME[,GAME...]",
              help="The games [default: every game with datasets].")
@click.option("--tiers", multiple=True, metavar="TIER[,TIER...]",
              help="The datasets' tiers: random, mixed, expert [default: all].")
@click.option("--learners", multiple=True, metavar="SPEC[,SPEC...]",
              help="The learners: a registered learner's name, or NAME:SETTING=VALUE,... "
                   "over the game's recommended settings; the first is the one the others' "
                   "paired differences are taken against [default: "
                   f"{','.join(DEFAULT_LEARNERS)}: FQI, FQI that plays only moves the logs "
                   "make (discrete BCQ's support constraint), implicit Q-learning on trees "
                   "(no max over moves the logs did not make), behaviour cloning].")
@click.option("--peers", multiple=True, metavar="LIBRARY", type=click.Choice(list(PEERS)),
              help="Other libraries' learners too: d3rlpy's DiscreteCQL, DiscreteBCQ, DQN "
                   "and DiscreteBC (the d3rlpy learner, batchrl learn d3rlpy --help; needs "
                   "the export extra), trained on the same rows, played masked.")
@click.option("--seeds", type=click.IntRange(1), default=None,
              help=f"Training seeds per learner and dataset [default: {FULL_SEEDS}; "
                   f"{QUICK_SEEDS} with --quick].")
@click.option("--quick", is_flag=True,
              help="The whole grid small: each dataset's small size, the learners' "
                   f"{', '.join(f'{k} {v}' for k, v in QUICK_SETTINGS.items())} where they "
                   f"take them, {QUICK_SEEDS} training seed where --seeds is not given, and "
                   "few games to score (a smoke run of a few minutes; what CI runs).")
@click.option("--json", "as_json", is_flag=True,
              help="Print bench.json's document instead of the table.")
@click.option("-o", "--out", type=OUT_DIR, default=Path("bench"),
              show_default=True,
              help="Where results.jsonl (a row as each lands; a rerun goes on from it), "
                   "bench.json, bench.png and the models' scores go (and the models, "
                   "with --keep-models).")
@click.option("--ope", is_flag=True,
              help="Also value each policy from its dataset's logs alone (batchrl ope: FQE, "
                   "weighted importance sampling, doubly robust) beside its measured score, "
                   "and report how well each estimator ranks and sizes the learners: rank "
                   "correlation, regret@1 and mean absolute error, per dataset and pooled, "
                   "in normalized points.")
@click.option("--keep-models", is_flag=True,
              help="Keep each trained model under OUT/models (to evaluate or search over "
                   "later); by default it is removed once scored: a full grid's forests "
                   "take tens of gigabytes. A row already in OUT/results.jsonl is not "
                   "learned again for it: give a new -o.")
@click.option("--cache", type=click.Path(path_type=Path), default=None,
              help="Where the datasets are built once and kept [default: $BATCHRL_CACHE, "
                   f"else {cache_dir()}].")
@click.option("-j", "--jobs", type=JOBS, default=-1,
              help="Parallel jobs for the learners (threads or processes, as each learner "
                   "uses) [default: all cores].")
@click.option("--scheduler", envvar="BATCHRL_SCHEDULER", default=None, metavar="ADDRESS",
              help="Run the grid on a Dask cluster (tcp://HOST:8786; or set "
                   "BATCHRL_SCHEDULER): each dataset's build, each baseline and each "
                   "learner's training seed one task, the rows kept as they land; the same "
                   "table as here. The cache and --out must be on a filesystem the workers "
                   "share; start workers with --nthreads 1 for CPU seconds of one task "
                   "alone. Needs pip install 'batchrl[dask]'.")
@click.option("--minari", type=click.Path(file_okay=False, path_type=Path), default=None,
              metavar="DIR",
              help="Also export each dataset to Minari under DIR (a Minari datasets root: "
                   "MINARI_DATASETS_PATH=DIR, then minari.load_dataset(ID)) as "
                   "batchrl/<game>/<tier>-v0 (-quick-v0 with --quick), with ref_min_score "
                   "and ref_max_score: random's and the reference's mean return of an "
                   "episode against the evaluation opponents, in the dataset's rewards, "
                   "for minari.get_normalized_score. Needs the export extra.")
@stopped("every row that landed is in OUT/results.jsonl, every dataset built in the cache: "
         "run the same command to go on from there.")
def bench(games: tuple[str, ...], tiers: tuple[str, ...], learners: tuple[str, ...],
          peers: tuple[str, ...], seeds: int | None, quick: bool, as_json: bool, out: Path,
          cache: Path | None, jobs: int, scheduler: str | None, minari: Path | None,
          ope: bool, keep_models: bool) -> None:
    """Score every learner on every game's datasets, between random play and the best.

    For each game, dataset, learner and training seed: the dataset is generated and
    ingested once (into the cache), the learner trains on it with the game's
    recommended settings, and its policy takes the first seat against the players its
    logs were played against (D4RL's convention: a dataset is scored where it was
    collected), on the same deals as random play (normalized 0) and the game's
    reference (100: the exact optimum or best response where the game has one, else
    its best bot). Each row gives the score in the game's unit with its 95% interval,
    the normalized score with its interval (paired on the deals), and the CPU seconds
    of training; a learner after the first is compared with the first as a paired
    difference. Where the game's standard opponents are others, the same policies
    play them too: the second table, "transfer". Leduc's rows give each policy's
    exact exploitability.

    \b
    Example:
      batchrl bench --quick                            # every game, small (minutes)
      batchrl bench --games sette-mezzo,holdem --learners bc,fqi:support=0.5
      batchrl bench --games leduc --peers d3rlpy       # and d3rlpy's four
      batchrl bench --scheduler tcp://HOST:8786        # the full grid on a Dask cluster
      batchrl bench --quick --minari ~/.minari/datasets   # and each dataset for Minari
      batchrl bench --games leduc --ope                # and each policy's value from its logs

    --quick plays fewer games of each dataset, and one training seed of each learner.
    """
    say = (lambda line: click.echo(line, err=True)) if as_json else click.echo
    try:
        config = BenchConfig(games=split_names(games), tiers=split_names(tiers),
                             learners=split_learners(learners) or DEFAULT_LEARNERS,
                             peers=peers, seeds=seeds, quick=quick, out=out, cache=cache, jobs=jobs,
                             scheduler=scheduler_address(scheduler), minari=minari,
                             keep_models=keep_models, ope=ope)
    except ClusterError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        result = run_bench(config, say=say)
    except (BenchError, LearnerError) as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        json.dump(result.as_dict(), sys.stdout, indent=2)
        click.echo()
        return
    click.echo(result.table())
    for note in result.notes:
        click.echo(note)
    click.echo(f"written: {out / 'results.jsonl'}, {out / 'bench.json'}"
               + ("" if result.notes else f", {out / 'bench.png'}"))


bench.help = f"{inspect.cleandoc(bench.help or '')}\n\n{_datasets_help()}"
