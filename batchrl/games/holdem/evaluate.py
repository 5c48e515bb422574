"""How much one bot wins from another, with a confidence interval: ``batchrl evaluate``.

The thesis reported total chips over 3,000 hands from single runs. Here the
same total is reported with the mean in big blinds per hand (and thousandths
of a big blind, mbb), its 95% confidence interval, and the split by position.
Duplicate play (``duplicate=True``) deals every hand twice with the seats
swapped; the pair's sum is one sample, which takes the cards' luck out.

>>> r = evaluate_bots("rule", "random", hands=400, seed=1)
>>> r.hands, r.bb_per_hand.n, r.chips == r.bb_per_hand.mean * 400 * r.big_blind
(400, 400, True)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from batchrl.evaluation import Estimate, mean_ci
from batchrl.games.holdem import gamedef
from batchrl.games.holdem.bots import load_models, make_bot, players_game
from batchrl.games.holdem.gamedef import GameDef
from batchrl.games.holdem.simulate import Match, play

if TYPE_CHECKING:
    from batchrl.policy import GreedyPolicy, LoadedModel


@dataclass(frozen=True)
class HoldemReport:
    """The hero's (bot 0's) results against the opponent; money in the game's chips."""

    hero: str
    opponent: str
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

    def table(self) -> str:
        b = self.bb_per_hand
        lines = [
            f"hero       {self.hero}",
            f"opponent   {self.opponent}",
            f"game       {self.game} (big blind {self.big_blind})",
            f"hands      {self.hands:,}" + (" (duplicate: each deal twice, seats swapped)"
                                           if self.duplicate else "") + f", seed {self.seed}",
            f"chips won  {self.chips:+,.0f}",
            "",
            f"{'':16}{'bb/hand':>9}  {'95% CI':>18}  {'mbb/hand':>9}  {'hands':>7}",
        ]
        for label, e in [("all", b), *self.by_position.items()]:
            n = self.hands if label == "all" else e.n
            lines.append(f"{label:16}{e.mean:+9.3f}  [{e.low:+7.3f}, {e.high:+7.3f}]  "
                         f"{e.mean * 1000:+9.0f}  {n:>7,}")
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
    overall = mean_ci(won, per_unit=2 if match.duplicate else 1)
    positions = {}
    for seat, label in ((game.small_blind_player, "small blind"),
                        (1 - game.small_blind_player, "big blind")):
        positions[label] = mean_ci(won[match.seat[:, 0] == seat])
    return HoldemReport(match.names[0], match.names[1], game.name, bb, len(match),
                        match.duplicate, seed, float(match.payoffs[:, 0].sum()), overall,
                        positions, seconds)


def play_bots(
    hero: str, opponent: str, hands: int = 3000, seed: int = 33, *,
    game: GameDef | None = None, duplicate: bool = False, batch: int = 4096,
    progress: Callable[[int], None] | None = None, keyed: bool = False,
    keep_states: bool = False,
    models: Mapping[str, LoadedModel | GreedyPolicy] | None = None,
) -> Match:
    """Play ``hero`` against ``opponent`` (each ``random``, ``rule`` or a model file).

    The game is the hero model's (else the opponent model's, else ACPC heads-up
    limit) unless given. Deals and each bot's randomness come from children of
    one ``SeedSequence(seed)``: the same seed deals the same cards to any pair,
    which makes two heroes' results on one seed common random numbers (and with
    ``keyed``, a random bot's decisions too: see ``RandomBot``). ``models`` holds model
    players already loaded (a model file is read once either way).
    """
    loaded = load_models((hero, opponent), models)
    if game is None:
        game = players_game(loaded, gamedef.HEADS_UP_LIMIT)
    deals, hero_rng, opponent_rng = (np.random.default_rng(s)
                                     for s in np.random.SeedSequence(seed).spawn(3))
    bots = (make_bot(hero, game, hero_rng, keyed, loaded),
            make_bot(opponent, game, opponent_rng, keyed, loaded))
    return play(game, bots, hands, deals, duplicate=duplicate, batch=batch, progress=progress,
                keep_states=keep_states)


def evaluate_bots(
    hero: str, opponent: str, hands: int = 3000, seed: int = 33, *,
    game: GameDef | None = None, duplicate: bool = False, batch: int = 4096,
    progress: Callable[[int], None] | None = None,
    models: Mapping[str, LoadedModel | GreedyPolicy] | None = None,
) -> HoldemReport:
    """``play_bots``, summarised from the hero's side."""
    started = time.perf_counter()
    match = play_bots(hero, opponent, hands, seed, game=game, duplicate=duplicate, batch=batch,
                      progress=progress, models=models)
    return report(match, seed, time.perf_counter() - started)
