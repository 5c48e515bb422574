"""Tressette's faces beside its rules core: its logs into store rows (`TressetteLog`), and
its players, logs written, team matches and reports (`TressettePlay`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from batchrl.forked import jobs_refused
from batchrl.games.base import (
    GameError,
    LogFace,
    PlayFace,
    Report,
    Scores,
    SourceContext,
    SourcePlan,
    single_group,
)
from batchrl.games.core import legal_mask
from batchrl.games.play import OneAtATime
from batchrl.games.tressette import transitions as tt
from batchrl.games.tressette.bots import BOT_NAMES, make_bot
from batchrl.games.tressette.evaluate import evaluate_teams, sides_points
from batchrl.games.tressette.features import N_FEATURES
from batchrl.games.tressette.game import Hand, TressetteParams, lockstep
from batchrl.games.tressette.ingest import open_source
from batchrl.games.tressette.logs import play, write_log
from batchrl.games.tressette.rules import (
    CARDS,
    is_terminal,
)
from batchrl.games.tressette.symmetry import canonical, canonical_cards
from batchrl.policy import ModelError
from batchrl.store import StoreSchema

if TYPE_CHECKING:
    from batchrl.blocks import Tasks


def _advancing(items: Iterable[Any], progress: Callable[[int], None] | None
               ) -> Iterator[Any]:
    for item in items:
        yield item
        if progress is not None:
            progress(1)


class CanonicalBot:
    """A bot (it plays real cards) as a `batchrl.games.play.Player` of canonical suits:
    the game's actions name cards in the seat's canonical suits (a tied suit's card by
    the first of the tie: alike). A batch of states is renamed in one tracker
    (`lockstep`: a state one card on from the last batch's is not replayed from its deal),
    and each state's suit order is kept for the ``step`` that follows: a search's rollouts
    ask a bot for thousands of states at once."""

    def __init__(self, name: str, bot: Any) -> None:
        self.name, self.bot = name, bot

    def act(self, states: Sequence[Hand], seats: Sequence[int]) -> NDArray[np.int64]:
        cards = np.fromiter((self.bot.act(h.state) for h in states), np.int64,
                            count=len(states))
        if not len(states):
            return cards
        x = lockstep(states).features()  # the seat to play's view
        order, renamed = canonical_cards(x, cards)
        for h, o in zip(states, order.tolist(), strict=True):
            h.seen.order = o  # for the ``step`` that follows
        return renamed


class TressetteLog(LogFace):
    """JSON lines and the seed's transcripts into rows, suits as dealt or canonical."""

    def reward_unit(self, params: Any) -> str:
        points = ("the team's points at the end of the hand (0-11, both teams' adding up to "
                  "11), on each seat's last card")
        if params.reward == "shaped":
            return ("the seed's shaped per-card reward (an ace -0.2, a 2 or 3 -0.1, another "
                    "card +0.05; +0.5 or -0.5 on the card that closes a trick, +0.3 per 2, 3 "
                    f"or ace the team takes) plus {points}")
        return points

    def schema(self, params: Any) -> StoreSchema:
        return tt.schema(params.reward, params.suits)

    def prepare(self, command: str, options: Mapping[str, Any]) -> Mapping[str, Any]:
        self._params_of(options)
        if why := jobs_refused(options):
            raise GameError(why)
        return options

    def open_source(self, records: Iterator[Any], context: SourceContext) -> SourcePlan:
        params = self._params_of(context.options)
        return open_source(records, context, params.reward, params.suits)

    def _params_of(self, options: Mapping[str, Any]) -> TressetteParams:
        chosen = {k: options[k] for k in ("reward", "suits") if options.get(k) is not None}
        params: TressetteParams = self.rules.params(**chosen)
        return params


class TressettePlay(PlayFace):
    """Bots and model players (canonical suits too), logs written, a team against a team."""

    bots = BOT_NAMES
    default_players = ("random", "random", "random", "random")
    default_count = 20_000
    log_formats = ("jsonl", "transcript")

    def encode_batch(self, states: Sequence[Hand], players: Sequence[int], params: Any
                     ) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
        """Every state in one tracker (`lockstep`: a state one card on from the last
        batch's is played on from there, any other replayed from its deal), not a tracker
        per state; a canonical state's suit order is kept for ``step``."""
        live = [i for i, h in enumerate(states) if not is_terminal(h.state)]
        x = np.empty((len(states), N_FEATURES), dtype=np.float32)
        legal = np.zeros((len(states), CARDS), dtype=bool)
        for i in sorted(set(range(len(states))) - set(live)):  # a hand over: as encode
            x[i] = self.rules.encode(states[i], players[i], params)
        if not live:
            return x, legal
        tracker = lockstep([states[i] for i in live])
        seats = np.asarray(players, dtype=np.int64)[live]
        xs, ls = tracker.features(seats=seats), tracker.legal()
        own = seats == tracker.current  # the seat to play's own view
        if params.suits == "canonical":
            xs, renamed, order = canonical(xs, ls)
            assert renamed is not None
            ls = renamed
            orders = order.tolist()
            for j in np.flatnonzero(own).tolist():
                states[live[j]].seen.order = orders[j]  # for the ``step`` that follows
        x[live] = xs
        legal[live] = ls
        for j in np.flatnonzero(~own).tolist():  # the mask: the seat to play's, its suits
            legal[live[j]] = legal_mask(self.rules, states[live[j]], params)
        return x, legal

    def check_model_params(self, path: str | Path, trained: Any, playing: Any) -> Any:
        """A model plays whatever reward its store had; its suits must be the game's."""
        if trained.suits != playing.suits:
            raise GameError(f"{path} names the suits {trained.suits}, not {playing.suits}: "
                            f"its features would not mean what it learned")
        return playing

    def bot(self, name: str, params: Any, rng: np.random.Generator) -> Any:
        bot = make_bot(name, rng)
        if params.suits != "canonical":
            return OneAtATime(name, lambda hand: int(bot.act(hand.state)))
        return CanonicalBot(name, bot)

    def generate(self, out: Path, players: Sequence[str], count: int, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None) -> str:
        """``count`` hands of ``players`` (four seats, or A,B: seats 0 and 2 play A, 1 and 3
        play B) as JSON lines, or as the seed's transcript (``format`` "transcript", or
        "auto" and a ``.txt`` file)."""
        names = [p.strip() for p in players]
        if len(names) == 2:
            names = names * 2
        fmt = options.get("format") or "auto"
        if fmt not in ("auto", *self.log_formats):
            raise GameError(f"tressette writes {', '.join(self.log_formats)}, not {fmt}")
        kind = "transcript" if fmt == "transcript" or (fmt == "auto" and out.suffix == ".txt") \
            else "jsonl"
        written = write_log(out, _advancing(play(names, count, seed), progress), kind)
        return f"{written:,} hands written to {out} ({kind})"

    ablation_opponents = ("rule",)

    def opponents_of(self, players: Sequence[str]) -> tuple[str, ...]:
        """The other team: the second seat's player (seats 1 and 3 are a team; a team is
        scored playing both its seats, so both must be one player)."""
        if len(players) != 4 or players[1] != players[3]:
            raise GameError(f"tressette scores a team against a team: {', '.join(players)} "
                            "seat two players in the second team (seats 2 and 4)")
        return (players[1],)

    def score_count(self, count: int, params: Any) -> str | None:
        return None if count >= 4 and count % 2 == 0 else \
            "want an even number, at least 4 (each deal is played from both sides)"

    def score(self, players: Sequence[str], count: int, seed: int,
              options: Mapping[str, Any],
              progress: Callable[[int], None] | None = None, params: Any = None) -> Scores:
        """Hands won by the first player's team (both its seats) against the second's,
        each deal played from both sides."""
        if len(players) != 2:
            raise GameError(f"tressette scores a team against another: give two players, "
                            f"not {len(players)}")
        try:
            ours = sides_points(players[0], players[1], count, seed, progress,
                                load_model=self.game.load_model)
        except (ModelError, ValueError) as exc:
            raise GameError(str(exc)) from None
        return Scores((ours > 11 - ours).astype(np.float64).ravel(), "hands_won",
                      "share of hands won", per_unit=2)

    def evaluate(self, groups: Sequence[Sequence[str]], count: int | None, seed: int,
                 options: Mapping[str, Any],
                 progress: Callable[[int], None] | None = None,
                 tasks: Tasks | None = None) -> Report:
        """A team (both its seats) against another: the group (team, vs)."""
        group = single_group(self.game, groups)
        if len(group) != 2:
            raise GameError(f"tressette plays a team against another: give two players "
                            f"(the team, then its opponents), not {len(group)}")
        team, vs = group
        try:
            return evaluate_teams(team, vs, count or self.default_count, seed, progress,
                                  load_model=self.game.load_model, tasks=tasks)
        except ModelError as exc:
            raise GameError(str(exc)) from None
