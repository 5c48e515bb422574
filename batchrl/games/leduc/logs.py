"""Leduc hold'em logs: one hand a line, as the ACPC dealer writes its STATE lines.

``STATE:<hand>:<betting>:<card0>|<card1>[/<public>]:<chips0>|<chips1>:<name0>|<name1>``,
fields in position order (position 0 acts first in both rounds); the betting is the
history (``c`` call or check, ``r`` raise, ``f`` fold, ``/`` between the rounds), the
public card is shown when the second round was reached, the chips are what each won.
The players change positions hand by hand.

>>> from batchrl.games.leduc.rules import LeducState
>>> state_line(3, LeducState((5, 2, 0), "rc/rc"), ("alice", "bob"))
'STATE:3:rc/rc:Kh|Qs/Js:7|-7:alice|bob'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from batchrl.games.core import GameError
from batchrl.games.leduc import rules
from batchrl.games.leduc.rules import LeducState
from batchrl.games.play import make_player, play


def state_line(hand: int, state: LeducState, names: Sequence[str]) -> str:
    won = "|".join(f"{v:g}" for v in rules.returns(state))
    return f"STATE:{hand}:{state.history}:{rules.cards_text(state)}:{won}:{'|'.join(names)}"


def write_log(game: Any, out: Path, players: tuple[str, ...], count: int, seed: int,
              progress: Callable[[int], None] | None = None) -> int:
    """``count`` hands of ``players`` (two) as a log at ``out``, seats alternating hand
    by hand, dealt from ``seed``; the number written."""
    if len(players) != 2:
        raise GameError(f"leduc is played by two: give two players, not {len(players)}")
    params = game.rules.params()
    rngs = np.random.SeedSequence(seed).spawn(3)
    chosen = [make_player(game, p, params, np.random.default_rng(r))
              for p, r in zip(players, rngs[1:], strict=True)]

    def seats(i: int) -> list[int]:  # seats(i)[s]: the player in seat s
        return [(s + i) % 2 for s in range(2)]

    games = play(game, params, chosen, count, np.random.default_rng(rngs[0]), seats,
                 progress=progress)
    tmp = out.with_name(f".{out.name}.tmp")
    with open(tmp, "w") as f:
        f.write(f"# leduc hold'em, {count} hands of {','.join(players)}, seed {seed}\n")
        for i, g in enumerate(games):
            names = tuple(players[p] for p in seats(i))
            f.write(state_line(i, g.states[-1], names) + "\n")
    tmp.replace(out)
    return count
