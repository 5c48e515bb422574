"""d3rlpy's discrete offline learners as a batchrl learner: DiscreteCQL, DiscreteBCQ, DQN
and DiscreteBC, trained by d3rlpy on a store's rows, played here in numpy.

``batchrl learn d3rlpy --algo cql`` (or ``bcq``, ``dqn``, ``bc``) hands the rows to d3rlpy
as episodes (each seat's decisions in order, or each episode's where the store's next
states are the next mover's: told from the rows themselves), trains its algorithm for
``steps`` gradient steps and keeps the networks' weights, not d3rlpy's pickled objects:
the model file is arrays and JSON (`batchrl.modelfile`) and plays with numpy alone,
masked to the legal moves (d3rlpy's own play knows no masks). Training needs the
``export`` extra (d3rlpy and torch); playing needs neither.

What plays: CQL's and DQN's Q-values, BC's logits, and BCQ's Q-values among the moves
whose imitator probability is at least ``flexibility`` times the likeliest legal one's.

>>> layers = [(np.eye(2, dtype=np.float32), np.zeros(2, np.float32))]
>>> head = (np.array([[1, 0], [0, 1], [1, 1]], np.float32), np.zeros(3, np.float32))
>>> p = D3rlpyPolicy("dqn", {"q": (layers, head)}, 0.3,
...                  {"feature_names": ["x", "y"], "action_names": ["a", "b", "c"]})
>>> p.act(np.array([[1., 2.], [1., 2.]], np.float32),
...       np.array([[1, 1, 1], [1, 1, 0]], bool)).tolist()
[2, 1]
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from batchrl import modelfile
from batchrl.foreign import import_d3rlpy
from batchrl.learners.base import Learner, LearnerError, ScoredPolicy
from batchrl.modelfile import ModelError
from batchrl.store import Transitions

KIND = "d3rlpy"
VERSION = 1
ALGOS = ("cql", "bcq", "dqn", "bc")
# each algorithm's networks, as d3rlpy's modules name them: what plays
NETWORKS = {"cql": ("q",), "dqn": ("q",), "bcq": ("q", "imitator"), "bc": ("imitator",)}

Net = tuple[list[tuple[NDArray[np.float32], NDArray[np.float32]]],
            tuple[NDArray[np.float32], NDArray[np.float32]]]


@dataclass(frozen=True, slots=True)
class D3rlpyConfig:
    """The d3rlpy algorithm and its hyperparameters."""

    algo: str = field(default="cql", metadata={
        "help": "cql (DiscreteCQL), bcq (DiscreteBCQ), dqn (DQN) or bc (DiscreteBC)."})
    steps: int = field(default=10_000, metadata={"help": "Gradient steps."})
    batch_size: int = field(default=256, metadata={"help": "Transitions per step."})
    gamma: float = field(default=1.0, metadata={
        "help": "Discount (1: a game's return, as fqi's default)."})
    learning_rate: float = field(default=6.25e-5, metadata={
        "help": "Adam's learning rate (d3rlpy's default for these)."})
    target_interval: int = field(default=1000, metadata={
        "help": "Steps between target network updates (cql, bcq, dqn)."})
    alpha: float = field(default=1.0, metadata={"help": "CQL's conservative weight."})
    flexibility: float = field(default=0.3, metadata={
        "help": "BCQ's threshold: moves at least this likely, relative to the likeliest."})
    hidden: str = field(default="256,256", metadata={
        "help": "The encoder's hidden widths, comma-separated (d3rlpy's default)."})
    seed: int = field(default=0, metadata={"help": "Makes a run repeatable."})

    def __post_init__(self) -> None:
        if self.algo not in ALGOS:
            raise ValueError(f"algo {self.algo!r}: want one of {', '.join(ALGOS)}")
        _widths(self.hidden)
        if self.steps < 1 or self.batch_size < 1 or not 0 < self.gamma <= 1 or \
                self.learning_rate <= 0 or self.target_interval < 1 or self.alpha < 0 or \
                not 0 < self.flexibility <= 1:
            raise ValueError(f"{self}: want steps and batches of at least 1, gamma in (0, 1], "
                             "a rate above 0, a target interval of 1 or more, alpha 0 or "
                             "more, flexibility in (0, 1]")


def _widths(hidden: str) -> list[int]:
    try:
        out = [int(w) for w in str(hidden).split(",")]
    except ValueError:
        out = []
    if not out or not all(0 < w <= 4096 for w in out):
        raise ValueError(f"hidden {hidden!r}: want widths like 256,256 (each 1 to 4,096)")
    return out


def _forward(net: Net, x: NDArray[np.float32]) -> NDArray[np.float32]:
    layers, (weight, bias) = net
    for w, b in layers:
        x = np.maximum(x @ w.T + b, 0)
    out: NDArray[np.float32] = x @ weight.T + bias
    return out


class D3rlpyPolicy(ScoredPolicy):
    """A d3rlpy algorithm's networks, played in numpy among the legal moves."""

    def __init__(self, algo: str, nets: Mapping[str, Net], flexibility: float,
                 meta: Mapping[str, Any]) -> None:
        super().__init__(meta)
        self.algo, self.nets, self.flexibility = algo, dict(nets), flexibility

    def values(self, states: NDArray[np.floating[Any]]) -> NDArray[np.float64]:
        """The Q-values (cql, bcq, dqn) or the logits (bc) of each move, (n, actions)."""
        x = np.asarray(states, dtype=np.float32)
        return _forward(self.nets["q" if "q" in self.nets else "imitator"], x).astype(
            np.float64)

    def scores(self, states: NDArray[np.floating[Any]]) -> NDArray[np.float64]:
        return self.values(states)

    def act(self, states: NDArray[np.floating[Any]],
            legal: NDArray[np.bool_] | None = None) -> NDArray[np.int64]:
        if self.algo != "bcq":
            return super().act(states, legal)
        x = np.asarray(states, dtype=np.float32)
        logits = _forward(self.nets["imitator"], x).astype(np.float64)
        allowed = np.ones(logits.shape, bool) if legal is None else np.asarray(legal, bool)
        logits = np.where(allowed, logits, -np.inf)
        ratio = logits - logits.max(axis=1, keepdims=True)  # log of p / p_max
        keep = allowed & (ratio >= np.log(self.flexibility))
        return super().act(x, keep)

    def save(self, path: str | Path) -> Path:
        arrays: dict[str, NDArray[Any]] = {}
        for name, (layers, (weight, bias)) in self.nets.items():
            for i, (w, b) in enumerate(layers):
                arrays[f"{name}_layer{i}_weight"], arrays[f"{name}_layer{i}_bias"] = w, b
            arrays[f"{name}_head_weight"], arrays[f"{name}_head_bias"] = weight, bias
        depth = len(next(iter(self.nets.values()))[0])
        return modelfile.write(path, KIND, {
            "version": VERSION, "algo": self.algo, "depth": depth,
            "flexibility": self.flexibility,
            "meta": modelfile.to_json(self.meta, f"{path}: meta")}, arrays)


def read_policy(path: str | Path) -> D3rlpyPolicy:
    """A d3rlpy learner's model back from its file, every shape checked."""
    document, arrays, meta = modelfile.read_learned(
        path, KIND, VERSION, "d3rlpy model", "train it again with batchrl learn d3rlpy")
    algo, depth, flexibility = (document.get(k) for k in ("algo", "depth", "flexibility"))
    if algo not in ALGOS or type(depth) is not int or not 1 <= depth <= 16 or \
            not isinstance(flexibility, float) or not 0 < flexibility <= 1:
        raise ModelError(f"{path}: its algo, depth or flexibility is not one d3rlpy's "
                         "learner writes")

    def array(name: str, shape: tuple[int, ...]) -> NDArray[np.float32]:
        return modelfile.finite_array(path, arrays, name, shape)

    nets: dict[str, Net] = {}
    for name in NETWORKS[algo]:
        width, layers = len(meta["feature_names"]), []
        for i in range(depth):
            w = arrays.get(f"{name}_layer{i}_weight")
            out = w.shape[0] if w is not None and w.ndim == 2 else -1
            layers.append((array(f"{name}_layer{i}_weight", (out, width)),
                           array(f"{name}_layer{i}_bias", (out,))))
            width = out
        actions = len(meta["action_names"])
        nets[name] = (layers, (array(f"{name}_head_weight", (actions, width)),
                               array(f"{name}_head_bias", (actions,))))
    return D3rlpyPolicy(algo, nets, flexibility, meta)


def episodes_of(rows: Transitions) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """The rows in d3rlpy's order and where each episode ends: each seat's decisions in
    order where a row's next state is its seat's next (a "following" store), else each
    episode's in the stored order (the next mover's: Hanabi's). Told by which order's next
    rows hold the stored next states."""
    seat = np.lexsort((rows.step, rows.player, rows.episode))
    for order, keys in ((seat, (rows.episode, rows.player)),
                        (np.arange(len(rows)), (rows.episode,))):
        ends = _ends(order, keys)
        inner, nxt = order[:-1][~ends[:-1]], order[1:][~ends[:-1]]
        if np.array_equal(rows.next_state[inner], rows.state[nxt]):
            return order, ends
    return seat, _ends(seat, (rows.episode, rows.player))  # neither: each seat's, as most


def _ends(order: NDArray[np.int64], keys: tuple[NDArray[Any], ...]) -> NDArray[np.bool_]:
    """Where a run of rows equal in every key ends, the rows taken in ``order``."""
    same = np.ones(max(len(order) - 1, 0), bool)
    for k in keys:
        same &= k[order][1:] == k[order][:-1]
    out: NDArray[np.bool_] = np.r_[~same, True] if len(order) else np.zeros(0, bool)
    return out


class D3rlpyLearner(Learner):
    name = "d3rlpy"
    kind = KIND
    title = "d3rlpy's DiscreteCQL, DiscreteBCQ, DQN or DiscreteBC, played masked in numpy."
    Config: ClassVar[type] = D3rlpyConfig

    def fit(self, config: Any, data: Transitions | Callable[[], Transitions], *,
            progress: Callable[[str, int, int], None] | None = None,
            jobs: int = -1) -> D3rlpyPolicy:
        try:
            d3rlpy = import_d3rlpy()
            import torch  # the d3rlpy extra's torch
        except ImportError:
            raise LearnerError("d3rlpy: training needs d3rlpy and torch: pip install "
                               "'batchrl[export]'") from None
        rows = self.rows(data)
        order, ends = episodes_of(rows)
        real = sys.stdout

        def heard(what: str, done: int, of: int) -> None:  # to the real output
            if progress is not None:
                with contextlib.redirect_stdout(real):
                    progress(what, done, of)

        with contextlib.redirect_stdout(io.StringIO()):  # d3rlpy's log lines
            return self._fit(d3rlpy, torch, rows, order, ends, config, heard, jobs)

    def _fit(self, d3rlpy: Any, torch: Any, rows: Transitions, order: NDArray[np.int64],
             ends: NDArray[np.bool_], config: Any,
             progress: Callable[[str, int, int], None] | None, jobs: int) -> D3rlpyPolicy:
        terminal = rows.terminal[order]
        dataset = d3rlpy.dataset.MDPDataset(
            observations=rows.state[order].astype(np.float32), actions=rows.action[order],
            rewards=rows.reward[order].astype(np.float32), terminals=ends & terminal,
            timeouts=ends & ~terminal, action_space=d3rlpy.ActionSpace.DISCRETE,
            action_size=len(rows.action_names))
        if jobs > 0:
            torch.set_num_threads(jobs)
        d3rlpy.seed(config.seed)
        encoder = d3rlpy.models.VectorEncoderFactory(hidden_units=_widths(config.hidden))
        common = {"batch_size": config.batch_size, "learning_rate": config.learning_rate,
                  "gamma": config.gamma}
        made = {
            "cql": lambda: d3rlpy.algos.DiscreteCQLConfig(
                **common, target_update_interval=config.target_interval, alpha=config.alpha,
                encoder_factory=encoder),
            "dqn": lambda: d3rlpy.algos.DQNConfig(
                **common, target_update_interval=config.target_interval,
                encoder_factory=encoder),
            "bcq": lambda: d3rlpy.algos.DiscreteBCQConfig(
                **common, target_update_interval=config.target_interval,
                action_flexibility=config.flexibility, encoder_factory=encoder),
            "bc": lambda: d3rlpy.algos.DiscreteBCConfig(
                batch_size=config.batch_size, learning_rate=config.learning_rate,
                encoder_factory=encoder),
        }[config.algo]()
        algo = made.create(device="cpu")
        per_epoch = min(config.steps, 1000)

        def heard(_: Any, epoch: int, step: int) -> None:
            if progress is not None and (step % 100 == 0 or step == config.steps):
                progress("gradient steps", step, config.steps)

        algo.fit(dataset, n_steps=config.steps, n_steps_per_epoch=per_epoch,
                 show_progress=False, save_interval=config.steps + 1,
                 logger_adapter=d3rlpy.logging.NoopAdapterFactory(), callback=heard)
        modules = algo.impl.modules
        nets: dict[str, Net] = {}
        for name in NETWORKS[config.algo]:
            module = modules.q_funcs[0] if name == "q" else modules.imitator
            nets[name] = _weights(module)
        meta = {"learner": self.name, "feature_names": list(rows.feature_names),
                "action_names": list(rows.action_names), "params": asdict(config),
                "d3rlpy": d3rlpy.__version__}
        return D3rlpyPolicy(config.algo, nets, config.flexibility, meta)

    def read(self, path: str | Path) -> D3rlpyPolicy:
        return read_policy(path)


def _weights(module: Any) -> Net:
    """A d3rlpy network's weights: its encoder's linear layers (each followed by a ReLU,
    d3rlpy's default vector encoder) and its head."""
    import torch  # the d3rlpy extra's torch

    layers = []
    for layer in module._encoder._layers:
        if isinstance(layer, torch.nn.Linear):
            layers.append((layer.weight.detach().numpy().astype(np.float32).copy(),
                           layer.bias.detach().numpy().astype(np.float32).copy()))
        elif not isinstance(layer, torch.nn.ReLU):
            raise LearnerError(f"d3rlpy: its encoder holds a {type(layer).__name__}, which "
                               "this learner does not play")
    fc = module._fc
    return layers, (fc.weight.detach().numpy().astype(np.float32).copy(),
                    fc.bias.detach().numpy().astype(np.float32).copy())


LEARNER = D3rlpyLearner()
