"""Hanabi's imitation network: the report's network, the moves a state can allow, the
colour order, and ``NetworkBot``, which plays a trained network through the rules.

The report's network (its Figure 3): Dense 195 -> 195 -> 128 -> 64 -> 32 (ReLU,
dropout 0.1 after the first three), batch normalisation, Dense -> 20 with a
softmax. ``imitation_spec(options)`` (``Hanabi.imitation``) gives ``batchrl
imitate``'s loop (``batchrl.imitation``) what is Hanabi's:

- the features (``features``): ``report``, the report's 195 numbers; ``hints``,
  those and the 15 public hint facts the store keeps after them (which cards hints
  touched; the focus of the partner's hint just before), which the conventions of
  the bots that make the data read and the report's state lacks;
  ``convention``, those 210 and the facts the bots' focus convention decides on,
  computed from them (``batchrl.games.hanabi.focus``);
- the moves a state can allow (a slot the hand no longer has, a hint that touches
  no card, a hint with no token left are masked out of the softmax), as the rules
  give them from the 195 numbers; at play time ``NetworkBot`` masks with the rules'
  exact legal moves, so it never plays an illegal one;
- ``colour_order``: train on the colour-ordered states (see
  ``batchrl.games.hanabi.symmetry``): each state's colours sorted, hint-colour moves
  renamed, and renamed back at play time.

A saved network is weights and JSON, loaded with ``torch.load(weights_only=True)``:
no code runs. torch is an optional extra, imported only when a network is built or
played.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from batchrl.games.base import GameError
from batchrl.games.hanabi.rules import State
from batchrl.games.hanabi.transitions import ACTION_NAMES
from batchrl.policy import ModelError

REPORT_HIDDEN = (195, 128, 64, 32)  # the report's hidden widths


def torch_module() -> Any:
    try:
        import torch
    except ImportError:
        raise ModelError("the imitation network needs torch: pip install -e "
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
    """The untrained torch module ``config`` (hidden widths, dropout, batchnorm) describes
    (``hidden`` None: the report's)."""
    torch = torch_module()
    nn = torch.nn
    layers: list[Any] = []
    width = inputs
    hidden = REPORT_HIDDEN if config.hidden is None else tuple(config.hidden)
    for i, h in enumerate(hidden):
        layers += [nn.Linear(width, h), nn.ReLU()]
        if i < len(hidden) - 1 and config.dropout > 0:
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


FEATURE_SETS = ("report", "hints", "convention")


def feature_set(name: str) -> tuple[str, ...]:
    """The stored columns a network reads: ``report``, the report's 195 numbers;
    ``hints``, those and the 15 public hint facts (``knowledge.HINT_FEATURES``);
    ``convention``, the same 210, to which ``focus.convention_facts`` adds the focus
    convention's facts computed from them."""
    from batchrl.games.hanabi import knowledge

    if name == "report":
        return knowledge.feature_names()
    if name in ("hints", "convention"):
        return (*knowledge.feature_names(), *knowledge.HINT_FEATURES)
    raise GameError(f"features {name!r}: want one of {', '.join(FEATURE_SETS)}")


def inputs(x: NDArray[np.float32], colour_order: bool, features: str,
           moves: NDArray[np.int64] | None = None
           ) -> tuple[NDArray[np.float32], NDArray[np.int64] | None, NDArray[np.intp] | None]:
    """The network's inputs from stored rows (``feature_set(features)``'s columns): the
    colour-ordered states if asked, then the convention's facts if asked; the moves
    renamed to match (given), and the colour order (None without it). Training and play
    both read states through here."""
    xs, ys, perm = prepare(np.asarray(x, dtype=np.float32), moves, colour_order)
    if features == "convention":
        from batchrl.games.hanabi.focus import convention_facts

        xs = np.hstack([xs, convention_facts(x)])  # per slot: the colour order keeps them
    return xs, ys, perm


def input_width(features: str) -> int:
    """How many numbers the network reads for ``features``, as ``inputs`` makes them."""
    blank = np.zeros((1, len(feature_set(features))), dtype=np.float32)
    return int(inputs(blank, False, features)[0].shape[1])


@dataclass(frozen=True)
class HanabiImitation:
    """What ``batchrl imitate``'s loop needs of Hanabi (``batchrl.imitation.ImitationSpec``).

    >>> spec = imitation_spec({"colour_order": True, "features": "hints"})
    >>> len(spec.columns), spec.tag, spec.record()
    (210, '-colour-hints', {'colour_order': True, 'features': 'hints'})
    >>> imitation_spec({"features": "convention"}).tag
    '-convention'
    """

    colour_order: bool = False
    features: str = "report"

    hidden: ClassVar[tuple[int, ...]] = REPORT_HIDDEN
    store_kind: ClassVar[str] = "two-player Hanabi store"
    inputs: ClassVar[str] = "the report's 195 numbers and 20 moves"

    @property
    def columns(self) -> tuple[str, ...]:
        return feature_set(self.features)

    @property
    def tag(self) -> str:
        return ("-colour" if self.colour_order else "") + \
            ("" if self.features == "report" else f"-{self.features}")

    def record(self) -> dict[str, Any]:
        """What ``NetworkBot`` reads back from the saved file's config."""
        return {"colour_order": self.colour_order, "features": self.features}

    def encode(self, states: NDArray[np.float32], moves: NDArray[np.int64]
               ) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
        x, y, _ = inputs(states, self.colour_order, self.features, moves)
        assert y is not None
        return x, np.asarray(y, dtype=np.int64)

    def possible(self, x: NDArray[np.float32]) -> NDArray[np.bool_]:
        return possible_moves(x[:, :195])

    def played(self, states: NDArray[np.float32], moves: NDArray[np.int64]
               ) -> NDArray[np.int64]:
        """The network's moves renamed back to the colours of ``states`` (as stored)."""
        if not self.colour_order:
            return moves
        from batchrl.games.hanabi import symmetry

        perm = symmetry.colour_order(np.asarray(states)[:, :195])
        return np.asarray(symmetry.original_actions(moves, perm), dtype=np.int64)

    def network(self, config: Any, inputs: int, outputs: int) -> Any:
        return network(config, inputs, outputs)


def imitation_spec(options: Mapping[str, Any]) -> HanabiImitation:
    """Hanabi's network as ``batchrl imitate``'s options ask (``colour_order``, a bool;
    ``features``, ``report``, ``hints`` or ``convention``), for ``batchrl.imitation.train``."""
    features = str(options.get("features") or "report")
    feature_set(features)  # a GameError names the sets
    return HanabiImitation(bool(options.get("colour_order", False)), features)


class NetworkBot:
    """A trained network as a Hanabi player: the most likely legal move in each state."""

    name = "network"

    def __init__(self, model: Any, mean: NDArray[np.float32], std: NDArray[np.float32],
                 meta: dict[str, Any]) -> None:
        self.model, self.mean, self.std, self.meta = model, mean, std, meta
        self.colour_order = bool(meta["config"].get("colour_order", False))
        self.features = str(meta["config"].get("features") or "report")
        self.model.eval()

    @classmethod
    def load(cls, path: str | Path) -> NetworkBot:
        torch = torch_module()
        try:
            blob = torch.load(path, weights_only=True)
            meta = json.loads(blob["meta"])
            saved = meta["config"]
            config = SimpleNamespace(hidden=tuple(saved["hidden"]), dropout=saved["dropout"],
                                     batchnorm=saved["batchnorm"])
            names = meta["feature_names"], meta["action_names"]
        except pickle.UnpicklingError:  # torch's message suggests weights_only=False: never
            raise ModelError(f"{path}: not a network from batchrl imitate (not weights and "
                             "JSON alone)") from None
        except (OSError, RuntimeError, KeyError, TypeError, ValueError) as exc:
            raise ModelError(f"{path}: not a network from batchrl imitate ({exc})") from None
        if meta.get("game", "hanabi") != "hanabi" or tuple(names[1]) != ACTION_NAMES or \
                tuple(names[0]) not in (feature_set("report"), feature_set("hints")):
            raise ModelError(f"{path}: a network of {meta.get('game')!r} stores "
                             f"({len(names[0])} features, {len(names[1])} moves), not of "
                             "two-player Hanabi's")
        features = str(saved.get("features") or "report")
        if features not in FEATURE_SETS:
            raise ModelError(f"{path}: features {features!r}: this batchrl reads "
                             f"{', '.join(FEATURE_SETS)}")
        if tuple(names[0]) != feature_set(features):
            raise ModelError(f"{path}: features {features!r} read {len(feature_set(features))} "
                             f"stored numbers, but the file names {len(names[0])}")
        model = network(config, input_width(features), len(names[1]))
        try:
            model.load_state_dict(blob["state_dict"])
        except (RuntimeError, KeyError) as exc:
            raise ModelError(f"{path}: its weights do not fit its network ({exc})") from None
        return cls(model, blob["mean"].numpy(), blob["std"].numpy(), meta)

    def scores(self, x: NDArray[np.float32]) -> NDArray[np.float32]:
        """The network's logits for states as the store holds them (before reordering)."""
        torch = torch_module()
        xs, _, perm = inputs(np.asarray(x, dtype=np.float32), self.colour_order, self.features)
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
