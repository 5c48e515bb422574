"""Hanabi's imitation network: the report's network, the moves a state can allow, the
colour order, and ``NetworkBot``, which plays a trained network through the rules.

``batchrl imitate`` (``batchrl.imitation``, the training loop) trains it; a saved
network is weights and JSON, loaded with ``torch.load(weights_only=True)``: no code runs.
torch is an optional extra, imported only when a network is built or played.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games.hanabi.rules import State


class ImitationError(ValueError):
    """Training or loading cannot go on; the message says why."""


def torch_module() -> Any:
    try:
        import torch
    except ImportError:
        raise ImitationError("the imitation network needs torch: pip install -e "
                             "'.[imitation]' (or pip install torch==2.13.0)") from None
    return torch


def possible_moves(x: NDArray[np.float32]) -> NDArray[np.bool_]:
    """The moves the rules could allow in each two-player state, read off its 195 numbers:
    a play or discard of a slot the hand holds (discards at 8 hints left to be learnt:
    some logs allow them), a hint that touches one of the partner's cards, if a token
    is left.

    >>> from batchrl.games.hanabi.knowledge import encode
    >>> from batchrl.games.hanabi.rules import deal, full_deck, legal_actions
    >>> s = deal(full_deck(), 2)
    >>> np.flatnonzero(possible_moves(encode(s, 0)[None])[0]).tolist()
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 14, 15]
    >>> list(legal_actions(s))
    [0, 1, 2, 3, 4, 12, 13, 14, 15]
    """
    x = np.asarray(x)
    n = len(x)
    own = x[:, 35:100].reshape(n, 5, 13)[:, :, 3:8].sum(axis=2) > 0.5  # poss_values sum 1
    other = x[:, 100:195].reshape(n, 5, 19)
    held = other[:, :, 18] > 0
    out = np.zeros((n, 20), dtype=bool)
    out[:, :5] = own
    out[:, 5:10] = own
    tokens = x[:, 0] > 0
    values = other[:, :, 18].astype(np.int64)
    for r in range(1, 6):
        out[:, 9 + r] = tokens & ((values == r) & held).any(axis=1)
    out[:, 15:20] = tokens[:, None] & (other[:, :, 13:18] > 0.5).any(axis=1)
    return out


def network(config: Any, inputs: int = 195, outputs: int = 20) -> Any:
    """The untrained torch module ``config`` (hidden widths, dropout, batchnorm) describes."""
    torch = torch_module()
    nn = torch.nn
    layers: list[Any] = []
    width = inputs
    for i, h in enumerate(config.hidden):
        layers += [nn.Linear(width, h), nn.ReLU()]
        if i < len(config.hidden) - 1 and config.dropout > 0:
            layers.append(nn.Dropout(config.dropout))
        width = h
    if config.batchnorm:
        layers.append(nn.BatchNorm1d(width))
    layers.append(nn.Linear(width, outputs))
    return nn.Sequential(*layers)


def prepare(x: NDArray[np.float32], y: NDArray[np.int64] | None,
             colour_order: bool) -> tuple[NDArray[np.float32], NDArray[np.int64] | None,
                                          NDArray[np.intp] | None]:
    """Colour-ordered states (the report's 195 numbers reordered; hint facts, colour-free,
    kept) and moves; unchanged without ``colour_order``."""
    if not colour_order:
        return x, y, None
    from batchrl.games.hanabi import symmetry

    perm = symmetry.colour_order(x[:, :195])
    xs = np.array(x, dtype=np.float32)
    xs[:, :195] = symmetry.canonical_states(x[:, :195], perm)
    ys = symmetry.canonical_actions(y, perm) if y is not None else None
    return xs, ys, perm


FEATURE_SETS = ("report", "hints")


def feature_set(name: str) -> tuple[str, ...]:
    """The features a network reads: ``report``, the report's 195 numbers; ``hints``,
    those and the 15 public hint facts (``knowledge.HINT_FEATURES``)."""
    from batchrl.games.hanabi import knowledge

    if name == "report":
        return knowledge.feature_names()
    if name == "hints":
        return (*knowledge.feature_names(), *knowledge.HINT_FEATURES)
    raise ImitationError(f"features {name!r}: want one of {', '.join(FEATURE_SETS)}")


class NetworkBot:
    """A trained network as a Hanabi player: the most likely legal move in each state."""

    name = "network"

    def __init__(self, model: Any, mean: NDArray[np.float32], std: NDArray[np.float32],
                 meta: dict[str, Any]) -> None:
        self.model, self.mean, self.std, self.meta = model, mean, std, meta
        self.colour_order = bool(meta["config"]["colour_order"])
        self.model.eval()

    @classmethod
    def load(cls, path: str | Path) -> NetworkBot:
        torch = torch_module()
        try:
            blob = torch.load(path, weights_only=True)
            meta = json.loads(blob["meta"])
        except (OSError, RuntimeError, KeyError, ValueError) as exc:
            raise ImitationError(f"{path}: not a network from batchrl imitate ({exc})") from None
        saved = meta["config"]
        config = SimpleNamespace(hidden=tuple(saved["hidden"]), dropout=saved["dropout"],
                                 batchnorm=saved["batchnorm"])
        model = network(config, len(meta["feature_names"]), len(meta["action_names"]))
        model.load_state_dict(blob["state_dict"])
        return cls(model, blob["mean"].numpy(), blob["std"].numpy(), meta)

    def scores(self, x: NDArray[np.float32]) -> NDArray[np.float32]:
        """The network's logits for states as the store holds them (before reordering)."""
        torch = torch_module()
        xs, _, perm = prepare(np.asarray(x, dtype=np.float32), None, self.colour_order)
        with torch.no_grad():
            logits = self.model(torch.from_numpy(((xs - self.mean) / self.std)
                                                 .astype(np.float32))).numpy()
        if perm is not None:  # back to the original colours: canonical hint j names perm[j]
            from batchrl.games.hanabi import symmetry

            out = np.empty_like(logits)
            for a in range(20):
                orig = symmetry.original_actions(np.full(len(x), a), perm)
                out[np.arange(len(x)), orig] = logits[:, a]
            logits = out
        return np.asarray(logits, dtype=np.float32)

    def act_batch(self, x: NDArray[np.float32], legal: NDArray[np.bool_]) -> NDArray[np.int64]:
        """The best legal move of each state (``legal``: the rules' mask)."""
        logits = np.where(legal, self.scores(x), -np.inf)
        return np.asarray(logits.argmax(axis=1), dtype=np.int64)

    def act(self, state: State) -> int:
        from batchrl.games.hanabi.knowledge import encode, hint_features
        from batchrl.games.hanabi.transitions import mask

        x = encode(state, state.current)
        if len(self.meta["feature_names"]) > len(x):
            x = np.concatenate([x, hint_features(state, state.current)])
        return int(self.act_batch(x[None], mask(state)[None])[0])
