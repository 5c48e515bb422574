"""Teams in play: hands won and points per hand, with 95% intervals.

Each deal is played twice, the teams swapping seats (so each team holds each
hand's cards once), and the leader rotates from deal to deal: neither the
cards nor the lead favour a team. A pair of plays of one deal counts as one
sample for the intervals. Hands run in lockstep, so a learned player (an FQI
model, ``model:PATH``, loaded by ``load_model``: ``Tressette.load_model``) decides
for every hand at once.

>>> r = evaluate_teams("rule", "random", hands=200, seed=1)
>>> r.hands, 0.5 < r.won.mean <= 1.0, round(r.points.mean + r.their_points, 6)
(200, True, 11.0)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from batchrl.blocks import Task, Tasks, block_entropy, load_once, spans
from batchrl.evaluation import Estimate, mean_ci
from batchrl.games.base import Bound, Interval
from batchrl.games.play import is_model, make_player
from batchrl.games.search import inner, parse
from batchrl.games.tressette.bots import make_bot
from batchrl.games.tressette.features import Tracker
from batchrl.games.tressette.rules import deal, step, team_points
from batchrl.games.tressette.symmetry import canonical, to_cards

if TYPE_CHECKING:
    from batchrl.policy import LoadedModel

ModelLoader = Callable[[str], "LoadedModel"]


@dataclass(frozen=True)
class TeamReport:
    team: str
    vs: str
    hands: int  # hands played (twice the deals)
    seed: int
    won: Estimate  # share of hands won
    points: Estimate  # the team's points per hand (of 11)
    their_points: float

    def table(self) -> str:
        w, p = self.won, self.points
        return (f"{self.team} vs {self.vs}: {self.hands:,} hands ({self.hands // 2:,} deals, "
                f"each played from both sides), seed {self.seed}\n"
                f"  hands won        {w.mean:7.2%}  95% CI [{w.low:.2%}, {w.high:.2%}]\n"
                f"  points per hand  {p.mean:7.3f}  95% CI [{p.low:.3f}, {p.high:.3f}]  "
                f"(theirs {self.their_points:.3f}; 11 a hand)")

    def intervals(self) -> tuple[str, list[Interval]]:
        w = self.won
        return (f"share of hands won against {self.vs}",
                [Interval(self.team, w.mean, w.low, w.high)])

    def as_dict(self) -> dict[str, Any]:
        return {"team": self.team, "vs": self.vs, "hands": self.hands, "seed": self.seed,
                "won": self.won.mean, "won_low": self.won.low, "won_high": self.won.high,
                "points": self.points.mean, "points_low": self.points.low,
                "points_high": self.points.high, "their_points": self.their_points}


# Tressette's `Game` (for a search player's worlds): this module sits below the game's
# own, so the package binds it on import
TRESSETTE = Bound("tressette")

class _Player:
    """A seat's player: a bot acting on rules states, or a model acting on features."""

    def __init__(self, spec: str, rng: np.random.Generator,
                 load_model: ModelLoader | None) -> None:
        self.spec = spec
        self.model: LoadedModel | None = None
        self.bot: Any = None
        self.search: Any = None  # a search player (batchrl.games.search), on Hands
        self.canonical = False  # the model names each state's suits in canonical order

        if parse(spec) is not None:
            game = TRESSETTE()
            path = inner(spec).removeprefix("model:")
            params = (game.rules.params() if not is_model(inner(spec)) else
                      load_once(game.load_model, path).params)
            self.search = make_player(game, spec, params, rng)
            self.game = game
            # the game's own state (a rules state and its params), to put states in
            self.template = game.rules.new_game(np.random.default_rng(0), params)
        elif is_model(spec):
            if load_model is None:
                raise ValueError(f"{spec}: a model player needs a model loader "
                                 f"(batchrl.games.tressette.GAME.load_model)")
            self.model = load_once(load_model, spec.removeprefix("model:"))
            self.canonical = getattr(self.model.params, "suits", "dealt") == "canonical"
        else:
            self.bot = make_bot(spec, rng)

    def act(self, x: NDArray[np.float32], legal: NDArray[np.bool_]) -> NDArray[np.int64]:
        """A model's cards for states ``x`` (every feature, as dealt) with ``legal``
        cards."""
        assert self.model is not None
        if not self.canonical:
            return self.model.act_batch(x, legal)
        xc, lc, order = canonical(x, legal)
        return to_cards(self.model.act_batch(xc, lc), order)


BLOCK = 10_000  # deals a block (a task on a cluster) plays, its bots drawing from its own seed


def play_deals(specs: tuple[str, str, str, str], deals: int, seed: int,
               progress: Callable[[int], None] | None = None, batch: int = 2048,
               load_model: ModelLoader | None = None) -> NDArray[np.int64]:
    """Points (deals, 2) of ``deals`` hands with seat s played by ``specs[s]``, block by
    block here (`play_block`)."""
    return np.concatenate([play_block(specs, seed, b, lo, hi, load_model, batch, progress)
                           for b, lo, hi in spans(deals, BLOCK)])


def play_block(specs: tuple[str, str, str, str], seed: int, block: int, lo: int, hi: int,
               load_model: ModelLoader | None = None, batch: int = 2048,
               progress: Callable[[int], None] | None = None) -> NDArray[np.int64]:
    """Points (hi - lo, 2) of deals ``lo`` to ``hi`` - 1 of ``seed``, seat s played by
    ``specs[s]``; deal i is ``rules.deal(default_rng([seed, i]), leader=i % 4)``, and the
    bots draw from the block's seed (``block_entropy([seed, 1 << 20], block)``), so a
    block's points are the same wherever it is played. ``load_model(path)`` loads a
    model player's model (once per process: `batchrl.blocks.load_once`)."""
    rng = np.random.default_rng(block_entropy([seed, 1 << 20], block))
    players = [_Player(s, rng, load_model) for s in specs]
    learned = any(p.model is not None for p in players)
    out = np.zeros((hi - lo, 2), dtype=np.int64)
    for start in range(lo, hi, batch):
        ids = range(start, min(start + batch, hi))
        states = [deal(np.random.default_rng([seed, i]), leader=i % 4) for i in ids]
        tracker = Tracker.deal(states)
        for _ in range(40):
            cards = np.zeros(len(states), dtype=np.int64)
            seat = tracker.current
            # once a play, for every learned seat: the features and legal cards of all hands
            x, legal = (tracker.features(), tracker.legal()) if learned else (None, None)
            for s, player in enumerate(players):
                rows = np.flatnonzero(seat == s)
                if not len(rows):
                    continue
                if player.model is not None:
                    assert x is not None and legal is not None
                    cards[rows] = player.act(x[rows], legal[rows])
                elif player.search is not None:
                    hands = [dataclasses.replace(player.template, state=states[r])
                             for r in rows]
                    chosen = player.search.act(hands, [s] * len(rows))
                    # the game's action (canonical suits: a card of the seat's own order)
                    # as the card it plays
                    cards[rows] = [player.game.rules.step(h, int(a)).state.plays[-1][1]
                                   for h, a in zip(hands, chosen, strict=True)]
                else:
                    for r in rows:
                        cards[r] = player.bot.act(states[r])
            tracker.play(cards, legal=legal)
            states = [step(st, int(c)) for st, c in zip(states, cards, strict=True)]
        out[start - lo : start - lo + len(ids)] = [team_points(st) for st in states]
        if progress is not None:
            progress(len(states))
    return out


def sides_points(team: str, vs: str, hands: int, seed: int,
                 progress: Callable[[int], None] | None = None,
                 load_model: ModelLoader | None = None,
                 tasks: Tasks | None = None) -> NDArray[np.int64]:
    """``team``'s points (deal, side) in ``hands`` hands against ``vs``, each deal played
    from both sides (`evaluate_teams`)."""
    if hands < 4 or hands % 2:
        raise ValueError(f"--games {hands}: want an even number, at least 4 (each deal is "
                         f"played from both sides)")
    deals = hands // 2
    sides = ((team, vs, team, vs), (vs, team, vs, team))
    blocks = spans(deals, BLOCK)
    points = Tasks.of(tasks, progress).run(
        [Task(play_block, specs, seed, b, lo, hi, load_model, size=hi - lo)
         for specs in sides for b, lo, hi in blocks])
    first = np.concatenate(points[: len(blocks)])
    second = np.concatenate(points[len(blocks) :])
    ours: NDArray[np.int64] = np.stack([first[:, 0], second[:, 1]], axis=1)
    return ours


def evaluate_teams(team: str, vs: str, hands: int, seed: int,
                   progress: Callable[[int], None] | None = None,
                   load_model: ModelLoader | None = None,
                   tasks: Tasks | None = None) -> TeamReport:
    """``team`` (both its seats) against ``vs``: ``hands`` hands, each deal from both
    sides. ``load_model(path)``: a model player's model (``Tressette.load_model``).
    ``tasks``: where the blocks (`play_block`, each side's) are played [here]."""
    ours = sides_points(team, vs, hands, seed, progress, load_model, tasks)
    won = (ours > 11 - ours).astype(np.float64)
    # a deal's two sides are one sample (values deal-major: side 0, side 1, next deal)
    return TeamReport(team, vs, hands, seed, mean_ci(won.ravel(), per_unit=2),
                      mean_ci(ours.ravel().astype(np.float64), per_unit=2),
                      float(11 - ours.mean()))
