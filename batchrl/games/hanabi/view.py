"""Hanabi's views of its stored features for a learner (`batchrl.policy.FeatureView`):
which numbers it reads, the colour order, the convention's facts, and the moves a state
can allow.

``Hanabi.view(options)`` gives a `HanabiView` (``batchrl learn network --colour-order
--inputs convention``, or ``batchrl imitate``'s flags); any learner fits on it and its
model plays through it:

- the inputs (``features``): ``report``, the report's 195 numbers; ``hints``, those and
  the 15 public hint facts the store keeps after them (which cards hints touched; the
  focus of the partner's hint just before), which the conventions of the bots that make
  the data read and the report's state lacks; ``convention``, those 210 and the facts the
  bots' focus convention decides on, computed from them (`batchrl.games.hanabi.focus`);
- ``colour_order``: the colour-ordered states (`batchrl.games.hanabi.symmetry`): each
  state's colours sorted, hint-colour moves renamed, and renamed back at play time;
- the moves a state can allow (a slot the hand no longer has, a hint that touches no
  card, a hint with no token left are out), as the 195 numbers give them: what the
  network masks out of its softmax in training; at play the rules' exact legal moves
  mask, so no move played is illegal.

With three to five players the stored state is `batchrl.games.hanabi.observation`'s:
``hints`` reads it whole, ``convention`` adds the same facts read with the next seat as
the partner (the bots' play and save hints go to the next seat); the colour order and
``report`` are of the two-player numbers, and the moves a state allows are the store's
legal masks.

The report's network (its Figure 3: Dense 195 -> 195 -> 128 -> 64 -> 32, ReLU, dropout
0.1 after the first three, batch normalisation, Dense -> 20) is the ``network`` learner
(`batchrl.learners.network`) with Hanabi's recommended widths, ``REPORT_HIDDEN``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games.base import GameError
from batchrl.games.hanabi import knowledge, symmetry
from batchrl.games.hanabi.focus import FACT_NAMES, convention_facts
from batchrl.games.hanabi.observation import feature_names, two_player_projection

REPORT_HIDDEN = (195, 128, 64, 32)  # the report's hidden widths


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


def prepare(x: NDArray[np.float32], y: NDArray[np.int64] | None,
             colour_order: bool) -> tuple[NDArray[np.float32], NDArray[np.int64] | None,
                                          NDArray[np.intp] | None]:
    """Colour-ordered states (the report's 195 numbers reordered; hint facts, colour-free,
    kept) and moves; unchanged without ``colour_order``."""
    if not colour_order:
        return x, y, None

    perm = symmetry.colour_order(x[:, :195])
    xs = np.array(x, dtype=np.float32)
    xs[:, :195] = symmetry.canonical_states(x[:, :195], perm)
    ys = symmetry.canonical_actions(y, perm) if y is not None else None
    return xs, ys, perm


FEATURE_SETS = ("report", "hints", "convention")


def feature_set(name: str, players: int = 2) -> tuple[str, ...]:
    """The stored columns a network reads: ``report``, the report's 195 numbers;
    ``hints``, those and the 15 public hint facts (``knowledge.HINT_FEATURES``);
    ``convention``, the same 210, to which ``focus.convention_facts`` adds the focus
    convention's facts computed from them. With more players, ``hints`` and
    ``convention`` read the whole stored state."""
    if players != 2:
        if name in ("hints", "convention"):
            return feature_names(players)
        if name == "report":
            raise GameError(f"features report: the report's 195 numbers are of two-player "
                            f"states, not {players}-player ones: use hints or convention")
    if name == "report":
        return knowledge.feature_names()
    if name in ("hints", "convention"):
        return (*knowledge.feature_names(), *knowledge.HINT_FEATURES)
    raise GameError(f"features {name!r}: want one of {', '.join(FEATURE_SETS)}")


def inputs(x: NDArray[np.float32], colour_order: bool, features: str,
           moves: NDArray[np.int64] | None = None, players: int = 2
           ) -> tuple[NDArray[np.float32], NDArray[np.int64] | None, NDArray[np.intp] | None]:
    """The network's inputs from stored rows (``feature_set(features)``'s columns): the
    colour-ordered states if asked, then the convention's facts if asked; the moves
    renamed to match (given), and the colour order (None without it). Training and play
    both read states through here."""
    xs, ys, perm = prepare(np.asarray(x, dtype=np.float32), moves, colour_order)
    if features == "convention":
        if players != 2:
            x = two_player_projection(x, players)
        xs = np.hstack([xs, convention_facts(x)])  # per slot: the colour order keeps them
    return xs, ys, perm


@dataclass(frozen=True)
class HanabiView:
    """A view of Hanabi's stored features (`batchrl.policy.FeatureView`), of a store of
    ``players`` (the colour order and ``report`` are of two-player stores only).

    >>> view = hanabi_view({"colour_order": True, "features": "hints"})
    >>> len(view.columns), len(view.input_names), view.tag, view.record()
    (210, 210, 'colour-hints', {'colour_order': True, 'features': 'hints'})
    >>> len(hanabi_view({"features": "convention"}).input_names)
    288
    """

    colour_order: bool = False
    features: str = "hints"  # the stored 210
    players: int = 2  # the store's player count

    @property
    def columns(self) -> tuple[str, ...]:
        return feature_set(self.features, self.players)

    @property
    def input_names(self) -> tuple[str, ...]:
        if self.features != "convention":
            return self.columns

        return (*self.columns, *FACT_NAMES)

    @property
    def tag(self) -> str:
        return "-".join([*(["colour"] if self.colour_order else []), self.features])

    def record(self) -> dict[str, Any]:
        return {"colour_order": self.colour_order, "features": self.features}

    def read(self, states: NDArray[np.float32]
             ) -> tuple[NDArray[np.float32], NDArray[np.intp] | None]:
        """The inputs and each stored move's number in them, the colour order found once."""
        xs, _, perm = inputs(states, self.colour_order, self.features, players=self.players)
        return xs, None if perm is None else _move_order(perm)

    def inputs(self, states: NDArray[np.float32]) -> NDArray[np.float32]:
        return self.read(states)[0]

    def order(self, states: NDArray[np.float32]) -> NDArray[np.intp] | None:
        """Each stored move's number in the colour-ordered state (None without it)."""
        if not self.colour_order:
            return None

        return _move_order(symmetry.colour_order(np.asarray(states)[:, :195]))

    def possible(self, states: NDArray[np.float32]) -> NDArray[np.bool_] | None:
        if self.players != 2:
            return None  # the store's legal masks
        return possible_moves(np.asarray(states)[:, :195])


def _move_order(perm: NDArray[np.intp]) -> NDArray[np.intp]:
    """Each of the 20 moves' number in the states that ``perm`` colour-orders."""
    n = len(perm)
    return np.stack([symmetry.canonical_actions(np.full(n, a), perm) for a in range(20)],
                    axis=1).astype(np.intp)


VIEW_OPTIONS = ("colour_order", "features")


def hanabi_view(options: Mapping[str, Any], players: int = 2) -> HanabiView:
    """The view ``options`` ask for (``colour_order``, a bool, default False;
    ``features``, ``report``, ``hints`` or ``convention``, default ``hints``: the stored
    210) of a store of ``players``; a `GameError` names what is not one."""
    if unknown := sorted(set(options) - set(VIEW_OPTIONS)):
        raise GameError(f"Hanabi's views take {', '.join(VIEW_OPTIONS)}, not "
                        f"{', '.join(unknown)}")
    features = str(options.get("features") or "hints")
    feature_set(features, players)  # a GameError names the sets
    colour = options.get("colour_order", False)
    if not isinstance(colour, bool):
        raise GameError(f"colour_order {colour!r}: want true or false")
    if colour and players != 2:
        raise GameError(f"the colour order is of the two-player numbers, not of a "
                        f"{players}-player state: give --no-colour-order")
    return HanabiView(colour, features, players)
