"""The network as it plays: its layers in numpy (`NetworkPolicy`), its config and its
model file (`read_network`). Training, which needs torch, is ``training``."""


from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl import modelfile
from batchrl.learners.base import ScoredPolicy
from batchrl.modelfile import ModelError

KIND = "network"
VERSION = 1
SPLIT = (0.7, 0.2, 0.1)  # training, validation, test: episodes, never rows
# bounds on what a setting or a model file can make a network allocate: a layer of 4,096
# (the report's widest is 195; a game's widest state 357 features), some million weights
MAX_WIDTH = 4096
MAX_WEIGHTS = 50_000_000
MAX_EPOCHS = 100_000
MAX_BATCH = 16_384  # moves per step: a batch of a layer of 4,096 is 256 MB


@dataclass(frozen=True, slots=True)
class NetworkConfig:
    """The network's hyperparameters."""

    hidden: str = field(default="128,64", metadata={
        "help": "Hidden layer widths, comma-separated (Hanabi's: the report's 195,128,64,32)."})
    dropout: float = field(default=0.1, metadata={
        "help": "Dropout after each hidden layer but the last."})
    batchnorm: bool = field(default=True, metadata={
        "help": "Batch normalisation before the output layer."})
    epochs: int = field(default=30, metadata={"help": "Passes over the training episodes."})
    batch_size: int = field(default=256, metadata={"help": "Moves per gradient step."})
    learning_rate: float = field(default=1e-3, metadata={"help": "Adam's learning rate."})
    mask: bool = field(default=True, metadata={
        "help": "Mask the moves a state cannot allow out of the softmax (where the game's "
                "view says which)."})
    keep_best: bool = field(default=True, metadata={
        "help": "Keep the network of the epoch best on the validation episodes (else the "
                "last)."})
    seed: int = field(default=0, metadata={"help": "The split and the weights."})

    def __post_init__(self) -> None:
        widths(self.hidden)  # a ValueError says what a width list is
        if not 0 <= self.dropout < 1 or not 1 <= self.epochs <= MAX_EPOCHS or \
                not 2 <= self.batch_size <= MAX_BATCH or not 0 < self.learning_rate <= 1:
            raise ValueError(f"dropout {self.dropout}, epochs {self.epochs}, batch_size "
                             f"{self.batch_size}, learning_rate {self.learning_rate}: want "
                             f"dropout in [0, 1), 1 to {MAX_EPOCHS:,} epochs, batches of 2 "
                             f"to {MAX_BATCH:,} and a rate in (0, 1]")


def widths(hidden: str) -> tuple[int, ...]:
    """``"195,128"`` as widths; a ValueError for anything else.

    >>> widths("195, 128,64")
    (195, 128, 64)
    """
    try:
        out = tuple(int(w) for w in str(hidden).split(","))
    except ValueError:
        raise ValueError(f"hidden {hidden!r}: want widths like 195,128,64,32") from None
    if not out or min(out) < 1 or max(out) > MAX_WIDTH:
        raise ValueError(f"hidden {hidden!r}: want widths from 1 to {MAX_WIDTH:,}")
    if sum(a * b for a, b in pairwise(out)) > MAX_WEIGHTS:
        raise ValueError(f"hidden {hidden!r}: more than {MAX_WEIGHTS:,} weights between "
                         "its layers")
    return out


@dataclass(frozen=True)
class Layer:
    """One layer of a trained network: ``linear`` (weight (out, in), bias), ``relu``, or
    ``batchnorm`` (weight, bias, running_mean, running_var; ``eps``)."""

    type: str
    arrays: Mapping[str, NDArray[np.float32]] = field(default_factory=dict)
    eps: float = 1e-5

    def __call__(self, x: NDArray[np.float32]) -> NDArray[np.float32]:
        a = self.arrays
        if self.type == "linear":
            out: NDArray[np.float32] = x @ a["weight"].T + a["bias"]
            return out
        if self.type == "relu":
            relu: NDArray[np.float32] = np.maximum(x, np.float32(0))
            return relu
        scale = a["weight"] / np.sqrt(a["running_var"] + np.float32(self.eps))
        normed: NDArray[np.float32] = ((x - a["running_mean"]) * scale + a["bias"]).astype(
            np.float32)
        return normed


_ARRAYS = {"linear": ("weight", "bias"), "relu": (),
           "batchnorm": ("weight", "bias", "running_mean", "running_var")}


class NetworkPolicy(ScoredPolicy):
    """A trained network: the likeliest legal move of each state (ties: the lowest)."""

    def __init__(self, layers: Sequence[Layer], mean: NDArray[np.float32],
                 std: NDArray[np.float32], meta: Mapping[str, Any]) -> None:
        super().__init__(meta)
        self.layers, self.mean, self.std = list(layers), mean, std

    def scores(self, states: NDArray[np.floating[Any]]) -> NDArray[np.float32]:
        return self.logits(states)

    def logits(self, states: NDArray[np.floating[Any]]) -> NDArray[np.float32]:
        """The network's scores of every move, (n, actions), before the softmax."""
        x = ((np.asarray(states, dtype=np.float32) - self.mean) / self.std).astype(np.float32)
        for layer in self.layers:
            x = layer(x)
        return x

    def save(self, path: str | Path) -> Path:
        """Arrays and JSON (`batchrl.modelfile`), written atomically."""
        arrays: dict[str, NDArray[Any]] = {"mean": self.mean, "std": self.std}
        specs = []
        for i, layer in enumerate(self.layers):
            specs.append({"type": layer.type, **({"eps": layer.eps}
                                                 if layer.type == "batchnorm" else {})})
            arrays |= {f"layer{i}_{k}": v for k, v in layer.arrays.items()}
        return modelfile.write(path, KIND, {"version": VERSION, "layers": specs,
                                            "meta": modelfile.to_json(self.meta,
                                                                      f"{path}: meta")},
                               arrays)


def read_network(path: str | Path) -> NetworkPolicy:
    """A network back from its model file, every shape checked (a crafted file is a
    `ModelError`, never a crash at play)."""
    document, arrays, meta = modelfile.read_learned(
        path, KIND, VERSION, "network", "train it again with batchrl learn network")
    specs = document.get("layers")
    if not isinstance(specs, list) or not specs:
        raise ModelError(f"{path} has no layers")

    def array(name: str, shape: tuple[int, ...]) -> NDArray[np.float32]:
        return modelfile.finite_array(path, arrays, name, shape)

    width = len(meta["feature_names"])
    mean, std = array("mean", (width,)), array("std", (width,))
    if (std <= 0).any():
        raise ModelError(f"{path}: its deviations are not all above 0")
    layers = []
    for i, spec in enumerate(specs):
        kind = spec.get("type") if isinstance(spec, dict) else None
        if kind not in _ARRAYS:
            raise ModelError(f"{path}: layer {i} is {kind!r}, not one of {', '.join(_ARRAYS)}")
        if kind == "linear":
            weight = arrays.get(f"layer{i}_weight")
            out = weight.shape[0] if weight is not None and weight.ndim == 2 else -1
            if weight is not None and not 1 <= out <= MAX_WIDTH:
                raise ModelError(f"{path}: layer {i} is {out:,} wide: a network here has "
                                 f"layers of 1 to {MAX_WIDTH:,}")
            held = {"weight": array(f"layer{i}_weight", (out, width)),
                    "bias": array(f"layer{i}_bias", (out,))}
            width = out
        else:
            held = {k: array(f"layer{i}_{k}", (width,)) for k in _ARRAYS[kind]}
        eps = spec.get("eps", 1e-5)
        if not isinstance(eps, float) or not eps > 0:
            raise ModelError(f"{path}: layer {i}'s eps is {eps!r}")
        layers.append(Layer(kind, held, eps))
    if width != len(meta["action_names"]):
        raise ModelError(f"{path}: its network ends in {width} numbers, not its "
                         f"{len(meta['action_names'])} actions")
    return NetworkPolicy(layers, mean, std, meta)


def _names(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)
