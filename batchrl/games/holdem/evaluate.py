"""How much one bot wins from another, with a confidence interval: ``batchrl evaluate``.

The thesis reported total chips over 3,000 hands from single runs. Here the
same total is reported with the mean in big blinds per hand (and thousandths
of a big blind, mbb), its 95% confidence interval, and the split by position.
Duplicate play (``duplicate=True``) deals every hand once per rotation of the
seats (twice heads-up, three times at a three-player table); the set's sum is one
sample, which takes the cards' luck out. In a three-player game the hero plays
against two opponents (the one named, in both other seats, unless two are named).

>>> r = evaluate_bots("rule", "random", hands=400, seed=1)
>>> r.hands, r.bb_per_hand.n, r.chips == r.bb_per_hand.mean * 400 * r.big_blind
(400, 400, True)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from batchrl.blocks import Task, Tasks, block_rngs, spans
from batchrl.evaluation import Estimate, mean_ci
from batchrl.games.base import Interval
from batchrl.games.holdem import gamedef
from batchrl.games.holdem.bots import load_models, make_bot, models_game, players_game
from batchrl.games.holdem.gamedef import GameDef
from batchrl.games.holdem.simulate import Match, play

if TYPE_CHECKING:
    from batchrl.policy import LoadedModel, Policy


@dataclass(frozen=True)
class HoldemReport:
    """The hero's (bot 0's) results against the opponents; money in the game's chips."""

    hero: str
    opponent: str  # the others, seat order of the first hand: "rule" or "rule, random"
    game: str
    big_blind: int
    hands: int
    duplicate: bool
    seed: int
    chips: float  # the hero's total, the thesis's figure
    bb_per_hand: Estimate
    by_position: dict[str, Estimate] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def mbb_per_hand(self) -> Estimate:
        return self.bb_per_hand.scaled(1000)

    @property
    def hands_per_second(self) -> float:
        return self.hands / self.seconds if self.seconds else float("nan")

    def as_dict(self) -> dict[str, Any]:
        return {
            "hero": self.hero, "opponent": self.opponent, "game": self.game,
            "big_blind": self.big_blind, "hands": self.hands, "duplicate": self.duplicate,
            "seed": self.seed, "chips": self.chips, "bb_per_hand": self.bb_per_hand.as_dict(),
            "mbb_per_hand": self.mbb_per_hand.as_dict(),
            "by_position": {k: v.as_dict() for k, v in self.by_position.items()},
            "seconds": self.seconds, "hands_per_second": self.hands_per_second,
        }

    def intervals(self) -> tuple[str, list[Interval]]:
        rows = [("all", self.bb_per_hand), *self.by_position.items()]
        return (f"bb/hand, {self.hero} against {self.opponent}",
                [Interval(name, e.mean, e.low, e.high) for name, e in rows])

    def table(self) -> str:
        b = self.bb_per_hand
        lines = [
            f"hero       {self.hero}",
            f"opponent   {self.opponent}",
            f"game       {self.game} (big blind {self.big_blind})",
            f"hands      {self.hands:,}" + (" (duplicate: each deal once per seating)"
                                           if self.duplicate else "") + f", seed {self.seed}",
            f"chips won  {self.chips:+,.0f}",
            "",
            f"{'':16}{'bb/hand':>9}  {'95% CI':>18}  {'mbb/hand':>9}  {'hands':>7}",
        ]
        for label, e in [("all", b), *self.by_position.items()]:
            n = self.hands if label == "all" else e.n
            mbb = round(e.mean * 1000)  # both columns from one rounding: 0.532 beside 532
            lines.append(f"{label:16}{mbb / 1000:+9.3f}  [{e.low:+7.3f}, {e.high:+7.3f}]  "
                         f"{mbb:+9d}  {n:>7,}")
        lines.append("")
        lines.append(f"{self.hands_per_second:,.0f} hands/s")
        return "\n".join(lines)


def game_of_model(path: str | Path) -> GameDef:
    """The hold'em game a model file's rows were played in."""
    return players_game(load_models([str(path)]), gamedef.HEADS_UP_LIMIT)


def report(match: Match, seed: int, seconds: float) -> HoldemReport:
    """The summary of a played match from bot 0's side."""
    game, bb = match.game, match.game.big_blind
    won = match.payoffs[:, 0] / bb
    n = game.num_players
    overall = mean_ci(won, per_unit=n if match.duplicate else 1)
    positions = {}
    for seat, label in sorted(enumerate(position_labels(game)),
                              key=lambda sl: _ORDER.index(sl[1].split(" ")[0])):
        positions[label] = mean_ci(won[match.seat[:, 0] == seat])
    others = match.names[1:]
    opponent = others[0] if len(set(others)) == 1 else ", ".join(others)
    return HoldemReport(match.names[0], opponent, game.name, bb, len(match),
                        match.duplicate, seed, float(match.payoffs[:, 0].sum()), overall,
                        positions, seconds)


_ORDER = ("small", "big", "button", "seat")


def position_labels(game: GameDef) -> list[str]:
    """Each seat's name at the table: small blind, big blind, button (no blind)."""
    top = max(game.blind)
    labels = ["big blind" if b == top else "small blind" if b > 0 else "button"
              for b in game.blind]
    return [label if labels.count(label) == 1 else f"seat {s}"
            for s, label in enumerate(labels)]


BLOCK = 10_000  # deals a block (a task on a cluster) plays, its bots drawing from its own seed


def play_bots(
    hero: str, opponent: str, hands: int = 3000, seed: int = 33, *,
    game: GameDef | None = None, duplicate: bool = False, batch: int = 4096,
    progress: Callable[[int], None] | None = None, keyed: bool = False,
    keep_states: bool = False,
    models: Mapping[str, LoadedModel | Policy] | None = None,
    opponents: Sequence[str] | None = None, tasks: Tasks | None = None,
) -> Match:
    """Play ``hero`` against ``opponent`` (each ``random``, ``rule`` or a model file); at a
    three-player table the opponent takes both other seats, unless ``opponents`` names
    them.

    The game is the hero model's (else an opponent model's, else ACPC heads-up
    limit) unless given. Deals and each bot's randomness come from children of
    one ``SeedSequence(seed)``: the same seed deals the same cards to any pair,
    which makes two heroes' results on one seed common random numbers (and with
    ``keyed``, a random bot's decisions too: see ``RandomBot``). ``models`` holds model
    players already loaded (a model file is read once either way). The deals are
    played in blocks of ``BLOCK`` (`play_block`) by ``tasks`` [here].
    """
    named = (hero, opponent, *(opponents or ()))
    on_cluster = tasks is not None and tasks.client is not None
    # a model file that is none is named before any hand: on a cluster, whose workers read
    # the models, from the files' headers; here, by loading them
    found = (models_game(named, gamedef.HEADS_UP_LIMIT) if on_cluster else
             players_game(load_models(named, models), gamedef.HEADS_UP_LIMIT))
    game = found if game is None else game
    others = list(opponents) if opponents else [opponent] * (game.num_players - 1)
    if len(others) != game.num_players - 1:
        raise ValueError(f"{game.name} seats {game.num_players} players: the hero and "
                         f"{game.num_players - 1} opponents, not {len(others)}")
    if duplicate and hands % game.num_players:
        raise ValueError(f"duplicate play of {game.num_players} players needs a multiple of "
                         f"{game.num_players} hands, not {hands}")
    per_deal = game.num_players if duplicate else 1
    specs = (hero, *others)
    held = None if on_cluster else models  # a cluster loads its own
    parts = Tasks.of(tasks, progress).run(
        [Task(play_block, specs, game, seed, b, lo, hi, duplicate, keyed, batch, keep_states,
              held, size=(hi - lo) * per_deal)
         for b, lo, hi in spans(hands // per_deal, BLOCK)])
    return Match.join(parts)


def play_block(specs: Sequence[str], game: GameDef, seed: int, block: int, lo: int, hi: int,
               duplicate: bool = False, keyed: bool = False, batch: int = 4096,
               keep_states: bool = False,
               models: Mapping[str, LoadedModel | Policy] | None = None,
               progress: Callable[[int], None] | None = None) -> Match:
    """Deals ``lo`` to ``hi`` - 1 of ``seed`` (all of ``SeedSequence(seed)``'s first child's
    deals, in order), played by ``specs`` (the hero first). The bots draw from the
    block's seed (`batchrl.blocks.block_entropy`); keyed random bots draw from the
    state and one key of the whole match, whatever the block."""
    n = game.num_players
    deals = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    rngs = block_rngs(seed, 0 if keyed else block, n)  # keyed: one key for the match
    loaded = load_models(specs, models)
    bots = [make_bot(spec, game, rng, keyed, loaded) for spec, rng in zip(specs, rngs, strict=True)]
    return play(game, bots, (hi - lo) * (n if duplicate else 1), deals, duplicate=duplicate,
                batch=batch, progress=progress, keep_states=keep_states, first=lo)


def evaluate_bots(
    hero: str, opponent: str, hands: int = 3000, seed: int = 33, *,
    game: GameDef | None = None, duplicate: bool = False, batch: int = 4096,
    progress: Callable[[int], None] | None = None,
    models: Mapping[str, LoadedModel | Policy] | None = None,
    opponents: Sequence[str] | None = None, tasks: Tasks | None = None,
) -> HoldemReport:
    """``play_bots``, summarised from the hero's side."""
    started = time.perf_counter()
    match = play_bots(hero, opponent, hands, seed, game=game, duplicate=duplicate, batch=batch,
                      progress=progress, models=models, opponents=opponents, tasks=tasks)
    return report(match, seed, time.perf_counter() - started)
