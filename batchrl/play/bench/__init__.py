"""The benchmark: every learner on every game's datasets, scored between random play (0)
and the game's reference (100): what ``batchrl bench`` runs, callable from a notebook.

A game declares its datasets (`batchrl.games.Dataset`: tiers ``random``, ``mixed``,
``expert``, each a ``generate`` recipe and the ``ingest`` options the game recommends),
the player whose score is 100 (``BenchFace.reference``: the exact optimum where ``score`` has
one, else the best bot) and how many games score a player (``Game.bench_games``). Here,
for each (game, dataset, learner, training seed):

1. the dataset is built once into the cache (`cache_dir`) and reused;
2. the learner is trained on it with the game's recommended settings (`batchrl.learning`),
   its CPU seconds counted;
3. its policy plays the dataset's evaluation opponents (``Dataset.against``: by default
   the players its logs were played against, D4RL's convention that a dataset is scored
   where it was collected) on the deals of one evaluation seed, as ``random`` and the
   reference do: the three are paired deal by deal (``PlayFace.score``'s common random
   numbers), so the normalized score ``100 * (score - random) / (reference - random)``
   has an interval from the same deals (the delta method on the paired units) and
   learners compare as paired differences;
4. where the game's standard opponents (``PlayFace.ablation_players``) are others, it
   plays them too: the second table, "transfer" (how a policy learned against some
   players does against others); and where the game measures it exactly
   (``PlayFace.exploitability``: Leduc), the policy's exploitability.

The steps run as tasks (`batchrl.blocks.Tasks`): each dataset's build, then each
baseline, then each learner's training seed; here one after the other, or on a Dask
cluster (``BenchConfig.scheduler``), where a task carries names, paths and settings and
the rows are the ones made here. Each finished row is appended to ``OUT/results.jsonl``
as it lands, so a run that stops goes on where it stopped; ``OUT/bench.json`` holds the
whole, ``OUT/bench.png`` the plot. A learner added with
`batchrl.learners.register_learner` is benchmarked by naming it. The datasets' cache is
``datasets``; the rows, the table and the plot are ``report``; how a learner is
named (``NAME:SETTING=VALUE``) is ``specs``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.blocks import Task, Tasks
from batchrl.cluster import ClusterError, connect, workers
from batchrl.evaluation import mean_ci
from batchrl.export import ExportError
from batchrl.filenames import safe_name
from batchrl.games import GAMES, Dataset, Game, GameError, Scores, get_game
from batchrl.games import TIERS as TIER_MEANINGS
from batchrl.learning import Settings, settings
from batchrl.play.bench.datasets import (
    BenchError,
    build_dataset,
    cache_dir,
    dataset_folder,
    declares,
)
from batchrl.play.bench.minari import export_dataset
from batchrl.play.bench.offline import current, held_out, row_values, takers
from batchrl.play.bench.outputs import (
    Key,
    ResultsFile,
    load_scores,
    one_bench,
    replaceable,
)
from batchrl.play.bench.report import Row, json_default, ope_summary, plot, summary, table
from batchrl.play.bench.specs import LearnerSpec, split_learners
from batchrl.play.bench.tasks import EVAL_SEED, Job, as_scores, built, score, train_and_score
from batchrl.store import Store

__all__ = [
    "EVAL_SEED",
    "FULL_SEEDS",
    "PEERS",
    "QUICK_SEEDS",
    "QUICK_SETTINGS",
    "TIERS",
    "BenchConfig",
    "BenchError",
    "BenchResult",
    "LearnerSpec",
    "Row",
    "against",
    "build_dataset",
    "cache_dir",
    "dataset_folder",
    "normalized",
    "plot",
    "run_bench",
    "split_learners",
    "summary",
    "table",
    "units",
]

# what --quick changes in a learner's settings, where it takes them and they were not given
QUICK_SETTINGS: Mapping[str, Any] = {"trees": 10, "iters": 3, "epochs": 2, "steps": 200}
# training seeds per learner and dataset where none are asked for: the grid's own, and
# --quick's (a smoke run of every game, tier and learner: 204 trainings at three seeds
# took 7 min, 68 at one 2.5 min)
FULL_SEEDS, QUICK_SEEDS = 3, 1
# --peers: other libraries' learners, each a registered learner with its settings
PEERS: Mapping[str, tuple[str, ...]] = {
    "d3rlpy": ("d3rlpy:algo=cql", "d3rlpy:algo=bcq", "d3rlpy:algo=dqn", "d3rlpy:algo=bc")}
CONFIDENCE = 0.95
TIERS = tuple(TIER_MEANINGS)  # what each means: batchrl.games.TIERS
# the fewest games (full, --quick) whose mean return is a Minari dataset's reference score
MINARI_GAMES = (2_000, 100)


# FQI with the game's recommended settings, FQI under discrete BCQ's support constraint
# at its usual share (only moves the logs make at least 0.3 times as often as their
# likeliest, which on uniform logs is every move), implicit Q-learning on trees (no max
# over moves the logs did not make), and behaviour cloning.
DEFAULT_LEARNERS = ("fqi", "fqi:support=0.3", "iql", "bc")


@dataclass(frozen=True)
class BenchConfig:
    games: tuple[str, ...] = ()  # () : every game that declares datasets
    tiers: tuple[str, ...] = ()  # () : every tier
    learners: tuple[str, ...] = DEFAULT_LEARNERS
    peers: tuple[str, ...] = ()  # other libraries whose learners run too (PEERS)
    seeds: int | None = None  # training seeds per learner and dataset (None: QUICK_SEEDS
    # with quick, else FULL_SEEDS)
    quick: bool = False  # the whole grid small: small datasets, small learners, few games
    out: Path = Path("bench")
    cache: Path | None = None  # None: cache_dir()
    jobs: int = -1
    scheduler: str | None = None  # a Dask scheduler's address: the grid's steps as tasks
    minari: Path | None = None  # also each dataset as a Minari dataset under this root
    keep_models: bool = False  # each model file left under OUT/models once scored
    ope: bool = False  # each policy also valued from its dataset's logs alone

    @property
    def training_seeds(self) -> int:
        """The seeds each learner trains with: those asked for, else the grid's default."""
        return self.seeds if self.seeds is not None else \
            QUICK_SEEDS if self.quick else FULL_SEEDS


@dataclass
class BenchResult:
    rows: list[Row]
    paired: list[dict[str, Any]]
    config: BenchConfig
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"quick": self.config.quick, "seeds": self.config.training_seeds,
                "evaluation_seed": EVAL_SEED, "rows": [dataclasses.asdict(r) for r in self.rows],
                "paired": self.paired, "summary": summary(self.rows),
                **({"ope": got} if (got := ope_summary(self.rows)) else {})}

    def table(self) -> str:
        return table(self.rows, self.paired)


def plan(config: BenchConfig) -> list[tuple[Game, Dataset]]:
    """The (game, dataset) pairs to run, refused with what exists when a name is not."""
    benched = {name: g for name, g in GAMES.items() if g.bench.datasets and g.bench.reference}
    names = config.games or tuple(benched)
    if unknown := [n for n in names if n not in benched]:
        raise BenchError(f"no benchmark datasets for {', '.join(unknown)}: the games with "
                         f"datasets are {', '.join(benched) or 'none'}")
    if unknown := [t for t in config.tiers if t not in TIERS]:
        raise BenchError(f"no tier {', '.join(unknown)}: the tiers are {', '.join(TIERS)}")
    pairs = [(benched[n], d) for n in names for d in benched[n].bench.datasets
             if not config.tiers or d.tier in config.tiers]
    for game, dataset in pairs:  # a dataset's options are the game's, for its logs
        if unknown := [k for k in dataset.options if not declares(game, k, "generate")
                       and not declares(game, k, "ingest")]:
            raise BenchError(f"{game.name}'s {dataset.tier} dataset gives {', '.join(unknown)}"
                             f", which neither its generate nor its ingest takes")
    if not pairs:
        held = sorted({d.tier for n in names for d in benched[n].bench.datasets})
        raise BenchError(f"no dataset of tier {', '.join(config.tiers)} in "
                         f"{', '.join(names)}: its tiers are {', '.join(held)}")
    return pairs


def against(game: Game, dataset: Dataset) -> tuple[str, ...]:
    """Whom a policy learned from ``dataset`` meets when it is scored: the dataset's
    ``opponents``, else the players its logs were played against (the seats after the
    first, which the policy takes: `PlayFace.opponents_of`)."""
    if dataset.opponents is not None:
        return tuple(dataset.opponents)
    try:
        return game.play.opponents_of(dataset.players)
    except GameError as exc:
        raise BenchError(f"{game.name}'s {dataset.tier} dataset: {exc}") from None


def units(scores: Scores) -> NDArray[np.float64]:
    """The independent samples of ``scores``: each ``per_unit`` values' mean."""
    values = np.asarray(scores.values, dtype=np.float64)
    out: NDArray[np.float64] = values.reshape(-1, scores.per_unit).mean(axis=1)
    return out


def normalized(player: NDArray[np.float64], random: NDArray[np.float64],
               reference: NDArray[np.float64], exact: bool) -> tuple[float, float]:
    """``100 * (player - random) / (reference - random)`` on paired units, with the
    half-width of its interval by the delta method: the ratio of two paired means, whose
    linearized units ``(d - R D) / mean(D)`` give its standard error (exact: none).

    >>> p, r, e = np.array([1., 2., 3.]), np.zeros(3), np.array([2., 4., 6.])
    >>> normalized(p, r, e, exact=False)
    (50.0, 0.0)
    """
    d, big_d = player - random, reference - random
    scale = float(big_d.mean())
    if scale == 0:
        return float("nan"), float("nan")
    ratio = float(d.mean()) / scale
    if exact or len(d) < 2:
        return 100 * ratio, 0.0
    linear = (d - ratio * big_d) / scale
    z = NormalDist().inv_cdf(0.5 + CONFIDENCE / 2)
    return 100 * ratio, 100 * z * float(linear.std(ddof=1)) / float(np.sqrt(len(d)))


class Bench:
    """One benchmark run: its folders, the rows already done, and how each step says so."""

    def __init__(self, config: BenchConfig, say: Callable[[str], None] = lambda _: None
                 ) -> None:
        self.config, self.say = config, say
        # absolute: a cluster's workers read and write them from their own directories
        self.cache = (config.cache or cache_dir()).resolve()
        self.out = config.out.resolve()
        self.results = ResultsFile(self.out / "results.jsonl", say)
        self.scores = self.out / "scores"

    def run(self) -> BenchResult:
        if unknown := [p for p in self.config.peers if p not in PEERS]:
            raise BenchError(f"no peer {', '.join(unknown)}: the peers are "
                             f"{', '.join(PEERS)}")
        named = [*self.config.learners, *(s for p in self.config.peers for s in PEERS[p])]
        specs = [LearnerSpec.parse(s) for s in named]
        if twice := sorted({s.label for s in specs if
                            [t.label for t in specs].count(s.label) > 1}):
            raise BenchError(f"--learners names {', '.join(twice)} twice: name each once "
                             "(--seeds gives a learner more training seeds)")
        pairs = plan(self.config)
        self.out.mkdir(parents=True, exist_ok=True)
        for path in (self.results.path, self.out / "bench.json", self.out / "bench.png"):
            replaceable(path)
        if self.scores.exists() and not self.scores.is_dir():
            raise BenchError(f"{self.scores} is not a directory: remove it and run again")
        self.scores.mkdir(exist_ok=True)

        try:
            with connect(self.config.scheduler) as client:
                here = client is None
                if not here:
                    self.say(f"on the cluster at {self.config.scheduler} ({workers(client)} "
                             "workers): datasets, baselines and learners as tasks; the "
                             "workers must see the cache and the output folder at these "
                             "paths")
                    threads = [w.get("nthreads", 1) for w in
                               client.scheduler_info().get("workers", {}).values()]
                    if any(t > 1 for t in threads):
                        self.say("the workers run several threads each: a task's CPU "
                                 "seconds count the others' on its worker too (start "
                                 "them with --nthreads 1 for figures of one task)")
                say = self.say if here else None
                tasks = Tasks(client)
                stores = tasks.run([Task(built, g.name, d, self.config.quick, self.cache,
                                         say, size=1) for g, d in pairs])
                sets = [self._setup(g, d, Path(s)) for (g, d), s in
                        zip(pairs, stores, strict=True)]
                valued = [s for s in sets if s.ope is not None]
                held = tasks.run([Task(built, s.game.name, held_out(s.dataset),
                                       self.config.quick, self.cache, say, size=1)
                                  for s in valued])
                for s, store in zip(valued, held, strict=True):
                    s.ope_store = Path(store)
                self._baselines(sets, tasks, say)
                if self.config.minari is not None:
                    self._minari(sets, self.config.minari)
                self._learners(sets, specs, tasks, say)
        except ClusterError as exc:
            raise BenchError(str(exc)) from None
        rows: list[Row] = []
        paired: list[dict[str, Any]] = []
        for setup in sets:
            for e in setup.evaluations:
                ours = [*e.baselines, *(self.results.done[k] for k in e.keys)]
                rows += ours
                paired += self._paired(setup.game, setup.dataset, e, ours, specs)
        result = BenchResult(rows, paired, self.config)
        document = result.as_dict()
        tmp = self.out / f".bench.json.tmp-{os.getpid()}"
        tmp.write_text(json.dumps(document, indent=2, default=json_default))
        os.replace(tmp, self.out / "bench.json")
        if (note := plot(rows, self.out / "bench.png")) is not None:
            result.notes.append(note)
        with contextlib.suppress(OSError):  # no models kept: no empty folder left
            (self.out / "models").rmdir()
        return result

    def _setup(self, game: Game, dataset: Dataset, store: Path) -> _Setup:
        """What every player of the dataset is scored on: the games, the deals, and each
        set of opponents (the logs' own; the game's standard ones, where they are
        others) with the setup its rows record."""
        schema = Store.open(store).schema
        params = game.log.params_from_store(schema.game, schema.game_params)
        count = game.bench.games[1 if self.config.quick else 0]
        if (why := game.play.score_count(count, params)) is not None:
            raise BenchError(f"{game.name}: bench_games {count}: {why}")
        own, standard = against(game, dataset), tuple(game.play.ablation_players(params))
        if len(own) != len(standard):
            raise BenchError(f"{game.name}'s {dataset.tier} dataset is scored against "
                             f"{len(own)} opponents ({', '.join(own) or 'none'}), its game "
                             f"against {len(standard)}: give the dataset opponents= for "
                             "the store's seats")
        folder = dataset_folder(game, dataset, self.config.quick, self.cache).name
        evaluations = []
        for opponents, transfer in ((own, False), (standard, True))[:1 + (standard != own)]:
            evaluation = json.dumps({"games": count, "seed": EVAL_SEED,
                                     "opponents": opponents, "params": schema.game_params},
                                    sort_keys=True, default=str)
            evaluations.append(_Evaluation(opponents, transfer, evaluation,
                                           f"{folder} {evaluation}"))
        return _Setup(game, dataset, store, (schema.game, dict(schema.game_params)), count,
                      evaluations,
                      takers(game, dataset, params, schema, self.say) if self.config.ope
                      else None)

    def _baselines(self, sets: Sequence[_Setup], tasks: Any,
                   say: Callable[[str], None] | None) -> None:
        """Random play's and the reference's scores on each game's deals (the same for
        every tier of a game: each scored once, kept in the scores folder)."""
        wanted: dict[Path, Task] = {}
        for s in sets:
            for e in s.evaluations:
                for name in ("random", s.game.bench.reference or "random"):
                    path = self.scores / f"{s.game.name}-{safe_name(name)}-" \
                                         f"{_digest(e.evaluation)}.npz"
                    e.baseline_paths.append(path)
                    wanted.setdefault(path, Task(score, str(path), s.game.name, name,
                                                 e.opponents, s.count, s.params, say, size=1))
        got = dict(zip(wanted, tasks.run(list(wanted.values())), strict=True))
        for s in sets:
            for e in s.evaluations:
                base = [as_scores(got[p]) for p in e.baseline_paths]
                e.random, e.reference = units(base[0]), units(base[1])
                e.exact = base[0].exact and base[1].exact
                for name, scores, path in zip(("random", s.game.bench.reference or "random"),
                                              base, e.baseline_paths, strict=True):
                    e.baselines.append(self._row(s.game, s.dataset, e, name, None, scores,
                                                 units(scores), 0.0, scores=str(path)))

    def _minari(self, sets: Sequence[_Setup], root: Path) -> None:
        """Each dataset exported under ``root`` as ``batchrl/<game>/<tier>-v0``, its
        reference scores set (`batchrl.play.bench.minari`)."""
        for s in sets:
            own = s.evaluations[0]
            exact = (float(own.random.mean()), float(own.reference.mean())) \
                if own.exact else None
            count = max(s.count, MINARI_GAMES[self.config.quick])
            try:
                export_dataset(s.game, s.dataset, s.store, s.params, own.opponents, count,
                               self.config.quick, root, exact, self.say)
            except ExportError as exc:
                raise BenchError(f"--minari: {exc}") from None

    def _learners(self, sets: Sequence[_Setup], specs: Sequence[LearnerSpec], tasks: Any,
                  say: Callable[[str], None] | None) -> None:
        """Each learner's training seeds on each dataset not done before: trained and
        scored against each set of opponents whose row is not done (a task each), each
        row kept as it lands."""
        todo: list[tuple[_Setup, LearnerSpec, int, list[_Evaluation], Task]] = []
        for s in sets:
            for spec in specs:
                seeds = range(self.config.training_seeds) if spec.learner.takes("seed") \
                    else range(1)
                for seed in seeds:
                    chosen = self._settings(spec, s.store, seed)
                    said = chosen.said.removeprefix("settings: ")
                    wanted: list[_Evaluation] = []
                    for e in s.evaluations:
                        key = (s.game.name, s.dataset.tier, spec.label, seed, said,
                               self.config.quick, e.setup)
                        e.keys.append(key)
                        if (held := self.results.done.get(key)) is not None:
                            if not (why := self._disagrees(held, s, e)) and not (
                                    s.ope is not None and not e.transfer
                                    and not current(held.ope, s.ope_store)):
                                continue
                            why = why or "has no value from the logs (--ope)"
                            self.say(f"{s.game.name}/{s.dataset.tier} {spec.label} seed "
                                     f"{seed}: the row in {self.results.path} {why}: "
                                     "trained and scored again")
                            self.results.drop(key)
                        wanted.append(e)
                    if not wanted:
                        continue
                    stem = f"{s.game.name}-{s.dataset.tier}-{safe_name(spec.label)}-seed{seed}"
                    scored = tuple((str(self.scores / self._file(stem, e, said)), e.opponents)
                                   for e in wanted)
                    model = self.out / "models" / self._file(stem, s.evaluations[0], said)
                    job = Job(s.game.name, s.dataset.tier, spec.label, spec.learner, seed,
                              str(s.store), chosen, str(model.resolve()),
                              scored, s.count, s.params,
                              all(e.exact for e in wanted), self.config.jobs,
                              self.config.keep_models,
                              s.ope if any(not e.transfer for e in wanted) else None,
                              str(s.ope_store or ""),
                              20 if self.config.quick else 50,
                              10 if self.config.quick else 50)
                    todo.append((s, spec, seed, wanted,
                                 Task(train_and_score, job, say, size=1)))
        if not todo:
            return
        if say is None:
            self.say(f"{len(todo)} learners' training seeds as tasks on the cluster")

        def landed(i: int, got: Mapping[str, Any]) -> None:
            s, spec, seed, wanted, task = todo[i]
            job = task.args[0]
            for e, made, (path, _) in zip(wanted, got["scores"], job.evaluations,
                                          strict=True):
                mine = as_scores(made)
                row = self._row(s.game, s.dataset, e, spec.label, seed, mine, units(mine),
                                got["cpu"], job.settings.said.removeprefix("settings: "),
                                got["model"], self.config.quick, round(got["wall"], 3),
                                path, got.get("exploitability"),
                                ope=None if e.transfer else row_values(
                                    s.game, s.game.log.params_from_store(*s.params),
                                    float(e.random.mean()), float(e.reference.mean()),
                                    got.get("ope"), s.ope_store))
                self.results.append(row)
                versus = " (transfer: against " + ",".join(e.opponents) + ")" \
                    if e.transfer else ""
                worth = "" if row.exploitability is None else \
                    f", exploitability {row.exploitability:.4f}"
                self.say(f"{s.game.name}/{s.dataset.tier} {spec.label} seed {seed}{versus}: "
                         f"{row.score:+.4f} {row.unit}, normalized {row.normalized:.1f} ± "
                         f"{row.normalized_ci:.1f}{worth}")

        tasks.run([t for *_, t in todo], landed=landed)

    def _file(self, stem: str, e: _Evaluation, said: str) -> str:
        """A model's, or its scores', file name: named by all it was measured in."""
        return f"{stem}-{_digest(f'{e.setup} {said} {self.config.quick}')}.npz"

    def _disagrees(self, row: Row, s: _Setup, e: _Evaluation) -> str:
        """Why a row read back from the results is not what its scores file and the
        baselines give ("" if it is): a row edited by hand, or scores replaced."""
        got = load_scores(self._own(row.scores))
        if got is None:
            return "has no sound scores file (missing, not a regular file, or not scores)"
        mine = units(as_scores(got))
        again = self._row(s.game, s.dataset, e, row.learner, row.seed, as_scores(got), mine,
                          0.0, exact=bool(got["exact"]))
        for name in ("score", "score_ci", "normalized", "normalized_ci", "games"):
            held, made = getattr(row, name), getattr(again, name)
            if not (math.isclose(held, made, rel_tol=1e-9, abs_tol=1e-9) or
                    (math.isnan(held) and math.isnan(made))):
                return (f"says {name} {getattr(row, name)}, its scores file "
                        f"{getattr(again, name)}")
        return ""

    def _own(self, scores: str) -> Path:
        """A row's scores file, in this output folder (a folder moved or copied keeps its
        rows' files, not the paths they were written at)."""
        return self.scores / Path(scores).name

    def _settings(self, spec: LearnerSpec, store: Path, seed: int) -> Settings:
        """The learner's settings on ``store``: the game's recommended ones, with the
        spec's given over them, the training seed, and --quick's small sizes."""
        given = dict(spec.given)
        if spec.learner.takes("seed"):
            given["seed"] = seed
        if self.config.quick:
            given = {**{k: v for k, v in QUICK_SETTINGS.items() if spec.learner.takes(k)},
                     **given}
        return settings(spec.learner, store, given)

    def _row(self, game: Game, dataset: Dataset, e: _Evaluation, learner: str,
             seed: int | None, got: Scores, mine: NDArray[np.float64], cpu: float,
             said: str = "", model: str = "", quick: bool = False, wall: float = 0.0,
             scores: str = "", exploitability: float | None = None,
             exact: bool | None = None, ope: dict[str, Any] | None = None) -> Row:
        """A scored player's row against ``e``'s opponents, normalized between their
        random and reference scores."""
        exact = e.exact and (got.exact if exact is None else exact)
        raw = mean_ci(mine)
        norm, norm_ci = normalized(mine, e.random, e.reference, exact)
        return Row(game.name, dataset.tier, learner, seed, raw.mean,
                   0.0 if exact or len(mine) < 2 else raw.half_width, norm, norm_ci,
                   round(cpu, 3), got.unit, len(got.values), exact, said, model, quick,
                   wall, e.setup if seed is not None else "", scores, ",".join(e.opponents),
                   e.transfer, exploitability, ope)

    def _paired(self, game: Game, dataset: Dataset, e: _Evaluation, rows: Sequence[Row],
                specs: Sequence[LearnerSpec]) -> list[dict[str, Any]]:
        """Each learner against the first, on the same deals: the difference of their
        scores (each learner's mean over its seeds, deal by deal), with its interval."""
        if len(specs) < 2:
            return []
        def averaged(label: str) -> NDArray[np.float64] | None:
            held = []
            for row in rows:
                if row.learner == label and row.seed is not None:
                    if (got := load_scores(self._own(row.scores))) is None:
                        return None  # its scores were deleted: no paired difference
                    held.append(units(as_scores(got)))
            return np.mean(held, axis=0) if held else None

        first = averaged(specs[0].label)
        out = []
        for spec in specs[1:]:
            other = averaged(spec.label)
            if first is None or other is None:
                continue
            diff = mean_ci(other - first)
            out.append({"game": game.name, "dataset": dataset.tier, "learner": spec.label,
                        "versus": specs[0].label, "difference": diff.mean,
                        "difference_ci": 0.0 if diff.n < 2 else diff.half_width,
                        "transfer": e.transfer})
        return out


@dataclass
class _Evaluation:
    """One set of opponents a dataset's players are scored against (the logs' own, or
    the game's standard ones: ``transfer``), its baselines and its rows as they come."""

    opponents: tuple[str, ...]
    transfer: bool
    evaluation: str  # the games, seed, opponents and params, as JSON
    setup: str  # the dataset's folder and the evaluation: what a row was measured in
    baseline_paths: list[Path] = field(default_factory=list)
    baselines: list[Row] = field(default_factory=list)
    keys: list[Key] = field(default_factory=list)
    random: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    reference: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    exact: bool = False


@dataclass
class _Setup:
    """One dataset as the benchmark scores it: the logs' own opponents first."""

    game: Game
    dataset: Dataset
    store: Path
    params: tuple[str, dict[str, Any]]  # the store's game and game_params
    count: int
    evaluations: list[_Evaluation]
    ope: tuple[str, ...] | None = None  # whose decisions --ope takes (None: not valued)
    ope_store: Path | None = None  # the held-out logs --ope values on (offline.held_out)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def run_bench(config: BenchConfig, say: Callable[[str], None] = lambda _: None
              ) -> BenchResult:
    """Run the benchmark (see the module's doc), resumed where it stopped.

    Args:
        config: the games, tiers, learners, seeds, size and where results go
            (`BenchConfig`).
        say: hears each step's line as it lands.

    Returns:
        `BenchResult`: a row per game, dataset, learner and seed, and the paired
        differences against the first learner.

    Raises:
        BenchError: a game it does not know, or fewer than one seed.
    """
    if config.training_seeds < 1:
        raise BenchError(f"--seeds {config.training_seeds}: at least 1")
    for name in config.games:
        try:
            get_game(name)
        except GameError as exc:
            raise BenchError(str(exc)) from None
    with one_bench(config.out.resolve()):
        return Bench(config, say).run()
