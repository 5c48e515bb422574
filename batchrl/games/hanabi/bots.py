"""Hanabi bots: ``act(state) -> action`` from what the seat to act may know.

A bot reads its own cards only through the knowledge model (hints received and
cards seen), the other hands directly, and the public facts the rules keep
about hints (``State.clued``, ``hint_target``, ``hint_focus``).

* ``RandomBot``: a uniformly random legal move.
* ``SimpleBot``: plays a card it knows is playable; else hints a playable card
  of the partner's if it can; else discards its oldest card; else hints at
  random.
* ``ConventionBot``: adds one convention both players keep. A hint's *focus*
  is the newest card it touches for the first time (else the newest it
  touches): the receiver plays the focus unless its knowledge says it cannot
  be playable, so the giver only gives hints whose focus is playable; hints
  given for other reasons (saving a 5, or when 8 hints forbid a discard) are
  chosen so that their focus visibly cannot be played. It discards known
  useless cards first, then its oldest untouched card, and saves the
  partner's last copy of a card from the discard when it can.

>>> import numpy as np
>>> from batchrl.games.hanabi.rules import new_game, is_terminal, step
>>> s = new_game(np.random.default_rng(1))
>>> bots = (ConventionBot(), ConventionBot())
>>> while not is_terminal(s):
...     s = step(s, bots[s.current].act(s))
>>> 0 <= s.score_played <= 25
True
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.blocks import load_once
from batchrl.games.base import Bound
from batchrl.games.hanabi.belief import History
from batchrl.games.hanabi.knowledge import distributions, playable, unseen, useless
from batchrl.games.hanabi.rules import (
    MAX_HINTS,
    State,
    colour_of,
    decode,
    encode_hint,
    is_terminal,
    legal_actions,
    new_game,
    rank_of,
    step,
)
from batchrl.games.play import make_player
from batchrl.games.search import SearchPlayer, parse


def _own_knowledge(state: State, seat: int) -> NDArray[np.float64]:
    """P(identity) of each of ``seat``'s cards from its own view: (n, 5, 5)."""
    return distributions(unseen(state, seat), state.known[seat])


def _public_knowledge(state: State, seat: int) -> NDArray[np.float64]:
    """What everyone can tell ``seat`` knows of its cards (no hand subtracted)."""
    return distributions(unseen(state, None), state.known[seat])


class RandomBot:
    name = "random"

    def __init__(self, rng: np.random.Generator | None = None) -> None:
        self.rng = rng if rng is not None else np.random.default_rng()

    def act(self, state: State) -> int:
        legal = legal_actions(state)
        return int(legal[int(self.rng.integers(len(legal)))])


class SimpleBot:
    name = "simple"

    def __init__(self, rng: np.random.Generator | None = None) -> None:
        self.rng = rng if rng is not None else np.random.default_rng()

    def act(self, state: State) -> int:
        me, legal = state.current, legal_actions(state)
        play = playable(state)
        p = _own_knowledge(state, me)
        sure = np.flatnonzero((p * play).sum(axis=(1, 2)) > 0.999)
        if sure.size:
            return int(sure[0])
        if state.hints > 0:
            for hint in _play_hints(state):
                return hint
        if state.hints < MAX_HINTS and 5 in legal:
            return 5
        return int(legal[int(self.rng.integers(len(legal)))])


def _hints_touching(state: State, seat: int, slot: int) -> list[int]:
    """Hints to ``seat`` that touch its ``slot`` (the next player only: two players)."""
    offset = (seat - state.current) % state.players
    c = state.hands[seat][slot]
    return [encode_hint("hint_rank", offset, rank_of(c)),
            encode_hint("hint_colour", offset, colour_of(c))]


def _focus_after(state: State, seat: int, action: int) -> int:
    """The slot a hint would focus, by the convention (newest first-touched card)."""
    kind, _, value = decode(action, state.players)
    hand = state.hands[seat]
    hits = [i for i, c in enumerate(hand)
            if (rank_of(c) == value if kind == "hint_rank" else colour_of(c) == value)]
    new = [i for i in hits if not state.clued[seat][i]]
    return max(new or hits)


def _play_hints(state: State) -> list[int]:
    """Hints to the partner whose focus is a playable card it does not yet know is."""
    partner = (state.current + 1) % state.players
    play = playable(state)
    knows = (_public_knowledge(state, partner) * play).sum(axis=(1, 2)) > 0.999
    hand = state.hands[partner]
    out = []
    # lowest ranks first: they unlock the most
    for slot in sorted(range(len(hand)), key=lambda i: rank_of(hand[i])):
        c = hand[slot]
        if not play[colour_of(c), rank_of(c) - 1] or knows[slot]:
            continue
        if any(hand[j] == c for j in range(len(hand)) if j != slot and state.clued[partner][j]):
            continue  # a touched copy will be played already
        for hint in _hints_touching(state, partner, slot):
            if _focus_after(state, partner, hint) == slot:
                out.append(hint)
    return out


class ConventionBot:
    name = "convention"
    RULES = ("play focus", "play known", "hint playable", "save", "discard useless",
             "discard chop", "discard likeliest useless", "hint safe", "play likeliest")

    def act(self, state: State) -> int:
        return self.decide(state)[0]

    def decide(self, state: State) -> tuple[int, str]:
        """The move and the rule that chose it (``RULES``: which step of the convention)."""
        me = state.current
        partner = (me + 1) % state.players
        play, dead = playable(state), useless(state)
        p = _own_knowledge(state, me)
        playability = (p * play).sum(axis=(1, 2))
        uselessness = (p * dead).sum(axis=(1, 2))
        # 1. the partner's hint focused one of my cards: play it unless it cannot be played
        if state.hint_target == me and state.hint_focus:
            focus = max(state.hint_focus)
            if focus < len(state.hands[me]) and playability[focus] > 0:
                return focus, "play focus"
        # 2. a card I know is playable
        sure = np.flatnonzero(playability > 0.999)
        if sure.size:
            return int(sure[0]), "play known"
        # 3. tell the partner about a playable card
        if state.hints > 0 and (hints := _play_hints(state)):
            return hints[0], "hint playable"
        # 4. save the partner's critical chop card (a last copy) from being discarded
        if state.hints > 0 and (save := self._save(state, partner, dead)) is not None:
            return save, "save"
        # 5. discard: known useless first, then the oldest untouched card
        if state.hints < MAX_HINTS or state.discard_at_max_hints:
            junk = np.flatnonzero(uselessness > 0.999)
            if junk.size:
                return 5 + int(junk[0]), "discard useless"
            untouched = [i for i, c in enumerate(state.clued[me]) if not c]
            if untouched:
                return 5 + untouched[0], "discard chop"
            if state.hints < MAX_HINTS:
                return 5 + int(np.argmax(uselessness)), "discard likeliest useless"
        # 6. nothing to do: a hint whose focus cannot be read as a play
        # (the hint's own target: with more than two players a hint may go past the
        # next seat)
        safe = [a for a in legal_actions(state)
                if a >= 10 and not self._misread(
                    state, (me + decode(a, state.players)[1]) % state.players, a)]
        if safe:
            return safe[0], "hint safe"
        # 7. the least risky play
        return int(np.argmax(playability)), "play likeliest"

    @staticmethod
    def _misread(state: State, seat: int, action: int) -> bool:
        """Would the partner take this hint's focus for a playable card?"""
        after = step(state, action)
        focus = max(after.hint_focus)
        p = _public_knowledge(after, seat)[focus]
        return bool((p * playable(after)).sum() > 0)

    def _save(self, state: State, seat: int, dead: NDArray[np.bool_]) -> int | None:
        untouched = [i for i, c in enumerate(state.clued[seat]) if not c]
        if not untouched or state.deck == ():
            return None
        chop = untouched[0]
        c = state.hands[seat][chop]
        colour, rank = colour_of(c), rank_of(c)
        if dead[colour, rank - 1]:
            return None
        # copies not yet seen by the giver (its own hand it cannot see), this one included
        left = unseen(state, state.current)[colour, rank - 1] - 1
        if left > 0:
            return None  # another copy is still to come
        for hint in _hints_touching(state, seat, chop):
            if not self._misread(state, seat, hint):
                return hint
        return None


# Hanabi's `Game` (its model binding, its params): this module sits below the game's own,
# so the package binds it on import
HANABI = Bound("hanabi")

# The report's two rule bots had roles: Bot2 the teacher, Bot1 a weaker partner.
ALIASES = {"bot1": "simple", "bot2": "convention"}
BOT_NAMES = ("random", "simple", "convention", *ALIASES)


def make_bot(spec: str, rng: np.random.Generator, players: int = 2) -> object:
    """A player by name: ``random``, ``simple``, ``convention`` (``bot1``/``bot2``: the
    report's roles, simple and convention), or ``model:PATH``, any learner's model file
    (``batchrl learn``, ``fqi``, ``imitate``), or ``python:MODULE:CALLABLE``, or
    ``search:NAME``, any of them searched over (`SearchBot`), in a game of ``players``."""
    if parse(spec) is not None:
        return SearchBot(spec, rng, players)
    name = ALIASES.get(spec, spec)
    if name == "random":
        return RandomBot(rng)
    if name == "simple":
        return SimpleBot(rng)
    if name == "convention":
        return ConventionBot()
    if spec.startswith(("model:", "python:")) or spec.endswith(".npz"):
        bot = load_once(ModelBot, spec.removeprefix("model:"))  # stateless
        trained = getattr(bot.model.params, "players", players)
        if trained != players:
            raise ValueError(f"{spec}: learned from {trained}-player games, not "
                             f"{players}-player ones: its state would mean something else "
                             f"(seat it among {trained}: --players "
                             f"{','.join([spec, *['bot2'] * (trained - 1)])})")
        return bot
    raise ValueError(f"unknown Hanabi player {spec!r}: want one of {', '.join(BOT_NAMES)} or "
                     f"model:PATH (a model from batchrl learn, fqi or imitate)")


class ModelBot:
    """A model file of any learner (``batchrl learn``, ``batchrl fqi``) playing Hanabi: each
    state encoded as the store's rows are, the model's features taken by name
    (``Game.load_model``)."""

    def __init__(self, path: str | Path) -> None:
        self.game = HANABI()
        self.model = self.game.load_model(path)

    def act(self, state: State) -> int:
        return int(self.act_many([state])[0])

    def act_many(self, states: Sequence[State]) -> NDArray[np.int64]:
        """The moves in many states at once: one call of the model (it draws nothing,
        so the games may be played in lockstep)."""
        x, legal = self.game.play.encode_batch(states, [s.current for s in states],
                                          self.model.params)
        return np.asarray(self.model.act_batch(x, legal), dtype=np.int64)


class SearchBot:
    """A search player (`batchrl.games.search`, ``search:bot2``) as a bot: at each move it
    draws its own hand and the deck from what it has seen and hints received
    (`batchrl.games.hanabi.worlds`), tries each legal move in each world, the game played
    out by the blueprint in every seat, and makes the move with the best mean score
    (SPARTA's single-agent search). Where the blueprint decides without drawing (bot2, a
    model file) and two play, a world is kept only if the blueprint in the partner's
    seat would have made the partner's moves there (`batchrl.games.hanabi.belief`)."""

    def __init__(self, spec: str, rng: np.random.Generator, players: int = 2) -> None:
        game = HANABI()
        player = make_player(game, spec, game.rules.params(players=players), rng)
        assert isinstance(player, SearchPlayer)
        self.player = player
        self.name = self.player.name
        self.histories: dict[int, History] = {}
        # SPARTA's filter, where the blueprint decides without drawing, each state alone:
        # bot2, or a model of a learner in BATCH_EXACT (not random, simple, another
        # library's code, nor a search player itself)
        blueprint = self.player.blueprint
        model = getattr(blueprint, "model", None)
        self.filtered = players == 2 and (
            getattr(blueprint, "name", None) in ("convention", "bot2")
            or (model is not None and model.meta.get("learner") in BATCH_EXACT))

    def act(self, state: State) -> int:
        seat = state.current
        if not self.filtered:
            return int(self.player.act([state], [seat])[0])
        history = self.histories.setdefault(seat, History(seat, self.player.blueprint))
        history.observe(state)
        self.player.keep = history.keep
        move = int(self.player.act([state], [seat])[0])
        history.moved(state, move)
        return move


def play_game(bots: Sequence[Any], rng: np.random.Generator) -> tuple[list[State], list[int]]:
    """One game of ``bots`` in seat order (objects with ``act(state)``), dealt from
    ``rng``: every state, the final one included, and every move."""
    state = new_game(rng, len(bots))
    states, actions = [state], []
    while not is_terminal(state):
        action = int(bots[state.current].act(state))
        state = step(state, action)
        states.append(state)
        actions.append(action)
    return states, actions


def play_lockstep(bots: Sequence[Any], games: int, rng: np.random.Generator
                  ) -> list[State]:
    """The last states of ``games`` games of ``bots`` that draw nothing (each ``act_many``
    or a `ConventionBot`), dealt from ``rng`` one after the other as `play_game` deals
    them, played in lockstep: each bot is asked once a step for every game where it is to
    act. The same games `play_game` plays, game by game, at a batched model's speed."""
    states = [new_game(rng, len(bots)) for _ in range(games)]
    live = [g for g in range(games) if not is_terminal(states[g])]
    while live:
        for seat, bot in enumerate(bots):
            mine = [g for g in live if states[g].current == seat
                    and not is_terminal(states[g])]
            if not mine:
                continue
            many = getattr(bot, "act_many", None)
            moves = many([states[g] for g in mine]) if many is not None else \
                [bot.act(states[g]) for g in mine]
            for g, a in zip(mine, moves, strict=True):
                states[g] = step(states[g], int(a))
        live = [g for g in live if not is_terminal(states[g])]
    return states


# learners whose models decide each state alone, the same in any batch (trees: each row's
# prediction is its own sum); a network's matrix products may differ in the last bits
# with the batch's size, and another library's policy may draw or keep memory
BATCH_EXACT = ("fqi", "bc")


def draws_nothing(bot: Any) -> bool:
    """Whether ``bot`` decides without drawing, each state alone and the same in any batch
    (so games may be played in lockstep and stay the same games): the convention bot,
    and a model of a learner in ``BATCH_EXACT``."""
    if type(bot) is ConventionBot:
        return True
    if type(bot) is ModelBot:
        return bot.model.policy.meta.get("learner") in BATCH_EXACT
    return False


def play_games(bots: Sequence[Any], games: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Scores (cards played) of ``games`` games of ``bots`` in seat order."""
    return np.asarray([play_game(bots, rng)[0][-1].score_played for _ in range(games)],
                      dtype=np.int64)
