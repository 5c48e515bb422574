"""Fitted Q-iteration as a learner: ``batchrl learn fqi`` (and its alias ``batchrl fqi``).

The package holds FQI whole: the iterations (``iterations.FQI``: extremely randomized
trees, the max over the stored legal next actions, fast mode, checkpoints, a Dask
cluster), its model (``model``: the Q-function, its file and the greedy policy), its
checkpoints on disk (``checkpoints``, ``checkpoint_data``), the support constraint
(``support``) and its curves (``curves``). Here the learner protocol over them: one
config of hyperparameters (`FQIConfig`: the command's options, the model file's
``params`` and a game's recommended settings are all read from it), ``fit`` on
transitions (run-time things, checkpoints and a cluster, as arguments) returning the
greedy `batchrl.learners.fqi.model.GreedyPolicy`, and the reader of its model files
(kind ``model``).

>>> import numpy as np
>>> from batchrl.store import Transitions
>>> one = np.ones(4, bool)  # four one-step hands: action 1 pays 1, action 0 nothing
>>> data = Transitions(
...     np.zeros((4, 1), np.float32), np.array([0, 1, 0, 1]), np.array([0., 1., 0., 1.]),
...     np.zeros((4, 1), np.float32), np.zeros((4, 2), bool), one, ~one, np.arange(4),
...     np.array(list("abcd"), object), np.zeros(4, np.int32), np.zeros(4, np.int8),
...     ("x",), ("pass", "bet"))
>>> policy = LEARNER.fit(FQIConfig(trees=5, nmin=2, iters=2), data, jobs=1)
>>> policy.values(np.zeros((1, 1))).round(2), policy.act(np.zeros((1, 1)))
(array([[0., 1.]]), array([1]))
>>> LEARNER.file_name(FQIConfig(), None, (), ("../../../../tmp/x",), "")
'fqi-M100-nmin20-N11-player-tmp_x-6e26be7d'
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from batchrl.cluster import connect, scheduler_address
from batchrl.episodes import grouping
from batchrl.filenames import safe_name
from batchrl.learners.base import Learner, LearnerError, RunOption
from batchrl.learners.bc import behaviour_model
from batchrl.learners.fqi.checkpoints import checkpoint_directory, checkpoint_done
from batchrl.learners.fqi.curves import draw, out_of_range
from batchrl.learners.fqi.inputs import return_to_go
from batchrl.learners.fqi.iterations import FQI
from batchrl.learners.fqi.model import KIND, GreedyPolicy, ModelArtifact
from batchrl.learners.fqi.support import supported
from batchrl.store import Transitions

if TYPE_CHECKING:
    from sklearn.ensemble import ExtraTreesRegressor

# Fast mode's default: grow the trees once on each row's return-to-go, then only refit
# leaf values (see batchrl.learners.fqi.iterations and docs/speed.md for the measurements).
FAST_FREEZE_AFTER = 0


@dataclass(frozen=True, slots=True)
class FQIConfig:
    """Fitted Q-iteration's hyperparameters: the options of ``batchrl learn fqi`` (and
    ``batchrl fqi``), the ``params`` a model file records, and what a game recommends
    (``{"fqi": {"trees": 50, "fast": True}}``) are all read from these fields."""

    trees: int = field(default=100, metadata={
        "help": "M: trees in the forest.", "short": "-M", "min": 1})
    nmin: int = field(default=20, metadata={
        "help": "n_min: rows a node needs to be split (bigger: smoother Q, and smaller "
                "trees: their nodes go as rows / n_min; on millions of rows try 200 or "
                "more, docs/scale.md: Memory).", "min": 2})
    k: int | None = field(default=None, metadata={
        "help": "K: candidate attributes tried at each split (all inputs, as the thesis "
                "and Ernst et al., unless given).", "min": 1, "unset": "all"})
    iters: int = field(default=11, metadata={
        "help": "N: iterations; Q then looks N decisions ahead (11 covers a limit hold'em "
                "hand).", "short": "-N", "min": 1})
    gamma: float = field(default=1.0, metadata={
        "help": "Discount per decision.", "min": 0.0, "max": 1.0, "min_open": True})
    per_action: bool = field(default=False, metadata={
        "help": "One regressor per action, or one on (state, action).",
        "flag": "--per-action/--joint"})
    freeze_after: int | None = field(default=None, metadata={
        "help": "Fast mode after K full refits (0 is --fast).", "min": 0, "metavar": "K"})
    support: float | None = field(default=None, metadata={
        "help": "Act only where the logs did (discrete BCQ): an action is chosen, and "
                "counted in each target's max over the next actions, only where the "
                "logged players took it with at least TAU times the probability of their "
                "likeliest action there (a behaviour model, trees on the same features, "
                "kept in the model file). 1 imitates them; off by default.",
        "min": 0.0, "max": 1.0, "min_open": True, "metavar": "TAU"})
    seed: int = field(default=0, metadata={"help": "Makes a run repeatable."})


def extra_trees(trees: int = 100, nmin: int = 20, k: int | float | None = None,
                jobs: int = 1) -> ExtraTreesRegressor:
    """The thesis's regressor: M trees, K candidate attributes (None: all), n_min to split
    (FQI's `FQIConfig` read into scikit-learn's parameters, here alone)."""
    # scikit-learn loads in seconds: only when a forest is made
    from sklearn.ensemble import ExtraTreesRegressor

    return ExtraTreesRegressor(n_estimators=trees, min_samples_split=nmin,
                               max_features=1.0 if k is None else k, n_jobs=jobs)


FAST_HELP = ("Grow the trees once on the return-to-go, then only refit leaf values: each "
             "iteration is a fraction of a refit (freeze_after 0).")


class FittedQIteration(Learner):
    """Fitted Q-iteration on a store: learn Q(state, action) with extremely randomized trees.

    Each iteration regresses reward + gamma * max over the legal next actions of
    the previous Q. Every iteration is checkpointed beside the model, so a killed
    run continues with --resume.

    Every game recommends its settings (the thesis's M=100, n_min=20, N=11 for
    hold'em; for the others the recipes of their pages in docs/games): with no
    flags fqi uses the store's game's and prints them; any flag given wins.

    \b
    Examples:
      batchrl fqi                             # the default store, the game's settings
      batchrl fqi --trees 100 --nmin 20 --iters 11
      batchrl fqi --drop pv --fast --out models/no_pv.npz
      batchrl fqi --player random-1 --fast    # learn from the seat facing the bot
      batchrl fqi --player DeepStack --support 0.3   # only moves DeepStack made
      batchrl learn fqi --store datasets/store   # the same command by its other name
    """

    name = "fqi"
    kind = KIND
    title = "Fitted Q-iteration on extremely randomized trees (the thesis's learner)."
    Config: ClassVar[type] = FQIConfig
    run_options = (
        RunOption("scheduler", str, "Grow the trees on a Dask cluster (tcp://HOST:8786; or "
                  "set BATCHRL_SCHEDULER): the same model as here. Needs pip install "
                  "'batchrl[dask]'; see docs/scale.md.", envvar="BATCHRL_SCHEDULER",
                  metavar="ADDRESS"),
        RunOption("resume", bool, "Continue a killed run from its last complete iteration "
                  "(same result as an uninterrupted run); refused, saying what changed, "
                  "where the store's logs, the players, the features or --support are not "
                  "the killed run's."))
    checkpoints = True
    history_header = (f"{'iter':>4} {'bellman residual':>17} {'mean |Q|':>10} "
                      f"{'max |Q|':>10} {'seconds':>8}  trees")

    def settings(self) -> list[tuple[str, type, Any, str]]:
        """The config's settings and ``fast`` (``freeze_after`` 0), a game's word for it."""
        return [*super().settings(), ("fast", bool, None, FAST_HELP)]

    def takes(self, name: str) -> bool:
        return name == "fast" or super().takes(name)

    def config(self, **values: Any) -> Any:
        """The config; ``fast`` is ``freeze_after`` 0 unless that is given
        (``EXPLICIT_NONE`` included: never freeze)."""
        if values.pop("fast", None) and values.get("freeze_after") is None:
            values["freeze_after"] = FAST_FREEZE_AFTER
        return super().config(**values)

    def file_name(self, config: Any, features: Sequence[str] | None, drop: Sequence[str],
                  players: Sequence[str], view: str) -> str | None:
        """``fqi-M…-nmin…-N…`` with the settings that differ from the thesis's and the
        players (the features are not in the name: a run refuses to replace a model
        made with others)."""
        fast = "" if config.freeze_after is None else f"-fast{config.freeze_after}"
        per = "-peraction" if config.per_action else ""
        k = "" if config.k is None else f"-K{config.k}"
        tau = "" if config.support is None else f"-support{config.support:g}"
        gamma = "" if config.gamma == 1.0 else f"-gamma{config.gamma:g}"
        seed = "" if config.seed == 0 else f"-seed{config.seed}"
        tag = f"-{safe_name(view)}" if view else ""
        who = "".join(f"-player-{safe_name(p)}" for p in players)
        return (f"fqi-M{config.trees}-nmin{config.nmin}{k}-N{config.iters}{fast}{per}{tau}"
                f"{gamma}{seed}{tag}{who}")

    def fit(self, config: Any, data: Transitions | Callable[[], Transitions], *,
            progress: Callable[[str, int, int], None] | None = None, jobs: int = -1,
            on_iteration: Callable[[dict[str, Any]], None] | None = None,
            checkpoints: Path | None = None, resume: bool = False,
            scheduler: str | None = None, client: Any = None,
            checkpoint_data: Mapping[str, Any] | None = None, **run: Any) -> GreedyPolicy:
        """The greedy policy of the Q-function fitted to ``data`` (see `Learner.fit`).

        Args:
            on_iteration: hears each iteration's diagnostics (`IterationStats` as a dict).
            checkpoints: where each iteration is kept (``resume``: go on from there).
            scheduler: a Dask scheduler's address, or ``client`` a Dask client: the
                trees are grown on its workers (the same model as here).
            checkpoint_data: what a checkpoint records of the data beyond its rows.
        """
        rows = self.rows(data)
        if config.k is not None:  # K beyond the inputs would silently mean all of them
            features = len(rows.feature_names)
            inputs = features + (0 if config.per_action else 1)
            if config.k > inputs:
                seen = f"{features} features" + ("" if config.per_action else " and the action")
                raise LearnerError(f"--k {config.k}: the trees see {inputs} inputs here "
                                   f"({seen}), so K is at most {inputs}")
        # the largest |return| of a logged decision: no |Q| should go far past it (curves)
        largest = float(np.abs(return_to_go(rows, config.gamma, grouping(rows))
                               ).max(initial=0.0))
        behaviour = None
        if config.support is not None:
            behaviour = behaviour_model(rows.state, rows.action, len(rows.action_names),
                                        config.trees, config.nmin, config.seed, jobs)
            rows = dataclasses.replace(rows, next_legal=supported(
                behaviour, rows.next_state, rows.next_legal, config.support))
        fqi = FQI(extra_trees(config.trees, config.nmin, config.k, jobs),
                  n_iterations=config.iters, gamma=config.gamma,
                  per_action=config.per_action, freeze_after=config.freeze_after,
                  random_state=config.seed, pessimism=self.pessimism(config))
        if checkpoints is not None:
            checkpoint_directory(checkpoints, resume)
            # --support changes the legal next actions: a resume with another is refused
            checkpoint_data = {**(checkpoint_data or {}), "support": config.support}
        # a cluster only where one is named (the command line reads BATCHRL_SCHEDULER
        # into --scheduler): a library call, an ablation's hero or a bench task on a
        # worker stays where it runs
        with connect(scheduler_address(scheduler)) if scheduler is not None else \
                contextlib.nullcontext(client) as held:
            for stats in fqi.fit_iter(rows, resume=resume, checkpoints=checkpoints,
                                      on_step=progress, client=held,
                                      checkpoint_data=checkpoint_data):
                if on_iteration is not None:
                    on_iteration(asdict(stats))
        names, actions, count = list(rows.feature_names), list(rows.action_names), len(rows)
        del rows, data  # the rows' matrices go before the trees set aside on disk come back
        q = dataclasses.replace(fqi.q_function(), behaviour=behaviour,
                                support=None if behaviour is None else float(config.support))
        return GreedyPolicy(ModelArtifact(q, {
            "learner": self.name, "feature_names": names, "action_names": actions,
            "rows": count, "params": asdict(config),
            "history": [asdict(h) for h in fqi.history_], "max_abs_return": largest},
            kind=self.kind))

    def pessimism(self, config: Any) -> float:
        """How many of its trees' standard deviations a move's value is lowered by, in
        the backups and at play (0: FQI's plain forest; `batchrl.learners.lcb`)."""
        return 0.0

    def history_length(self, config: Any) -> int | None:
        return int(config.iters)

    def history_row(self, entry: Mapping[str, Any]) -> str:
        return (f"{entry['iteration']:>4} {entry['bellman_residual']:>17.4f} "
                f"{entry['mean_abs_q']:>10.3f} {entry['max_abs_q']:>10.3f} "
                f"{entry['seconds']:>8.2f}  {'frozen' if entry['frozen'] else 'refit'}")

    def notes(self, path: Path, policy: Any) -> tuple[list[str], list[str]]:
        """Where the curves were drawn, and a warning where |Q| went past the returns."""
        history, largest = policy.meta["history"], policy.meta.get("max_abs_return")
        warnings: list[str] = []
        if largest is not None and (warning := out_of_range(history, largest)):
            warnings.append(warning)
        plot = draw(path, history, largest)
        return [f"curves: {plot}" if plot else
                "curves: not drawn (pip install matplotlib to draw them beside the model)"
                ], warnings

    def resume_note(self, checkpoints: Path, config: Any) -> str | None:
        done = self.resumed(checkpoints, config)
        if done:
            return (f"--resume: going on from iteration {done + 1} of {config.iters} "
                    f"({checkpoints})")
        if not (checkpoints / "checkpoint.npz").exists():
            return f"--resume: no checkpoint at {checkpoints}: starting at iteration 1"
        return None

    def resumed(self, checkpoints: Path, config: Any) -> int:
        return checkpoint_done(checkpoints, config.iters) or 0

    def read(self, path: str | Path) -> GreedyPolicy:
        return GreedyPolicy.load(path, self.kind)

    def meta_of(self, path: str | Path) -> dict[str, Any]:
        return ModelArtifact.meta_of(path, self.kind)


LEARNER = FittedQIteration()
