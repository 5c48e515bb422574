"""Search at decision time over worlds a seat cannot tell apart, for any game that samples
them (``Rules.sample_worlds``): determinized (PIMC) search over a blueprint policy.

At each decision, the searching seat samples ``worlds`` full states that agree with
everything it has seen (the other hands, the deck to come), plays each legal action in
each of them, and plays every world out to the end: its own seat by the blueprint, the
other seats by their models (by default the blueprint too, as SPARTA's partner plays
it; or a bot named for them). It chooses the action with the best mean return over the
same worlds. The rollouts of every decision in a batch, every action and every world
advance in lockstep, so each step is one call of each policy, however many there are.

A player is named ``search:INNER`` (``search:model:M.npz``, ``search:rule``), with
options before the colon: ``search+worlds=64+opponent=random:model:M.npz`` (a model as
the others' model by its path, with no colon: ``opponent=o.npz``); ``margin=0.1``: play
the blueprint's move unless another is better by more than that (SPARTA's threshold);
``z=2``: and by two standard errors of the difference over the worlds. ``more=48``: a
second round (racing, as successive halving does): the moves whose mean beat the
blueprint's over the first worlds, the ``top`` best of them (3 by default), and the
blueprint's own move are played out in ``more`` new worlds each, and the choice between
them is made on those new worlds (the first round's would flatter the moves it picked);
the moves the first round left behind cost nothing more. ``depth=1``: a rollout stops at
the searcher's first decision after the move tried (``depth=2``: its second), and the
world's value is what the seat has banked there (`Rules.banked`) plus the blueprint's
value of that state (its best legal action's, a model with values: FQI's Q), where a
rollout to the end would play the blueprint on; 0, the default, plays to the end. In a
game of teams the searcher's partners play the blueprint in its rollouts, the others
their model.

>>> options, policy = parse("search+worlds=8+opponent=random+more=32:model:m.npz")
>>> options.worlds, options.opponent, options.more, options.top, policy
(8, 'random', 32, 3, 'model:m.npz')
>>> parse("rule") is None
True
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games.base import Game, GameError

PREFIX = "search"
# what a player's name can make a search do: worlds per decision (first round, second),
# the moves raced, the searcher's decisions before the value is taken, and a search over
# a search (two levels at most: each level multiplies the rollouts)
MOST = {"worlds": 1024, "more": 1024, "top": 64, "depth": 64, "seed": 2**63 - 1}
MOST_LEVELS = 2
# the rollouts one decision may take, all levels multiplied (each level's worlds and
# more): a search over a search at 1,024 worlds each would roll out a million games
MOST_ROLLOUTS = 4096


@dataclass(frozen=True)
class SearchOptions:
    """``worlds`` sampled per decision; ``opponent``: the other seats' model in the
    rollouts (a player's name; None: the blueprint); ``seed``: the worlds' draws;
    ``margin``: how much better than the blueprint's own move (in the game's return,
    the mean over the worlds) another must be to be played instead, as SPARTA's
    threshold (0: any better one); ``z``: and by at least that many standard errors of
    the difference over the same worlds (0: no test); ``more``: worlds of a second round
    for the ``top`` moves whose mean beat the blueprint's in the first, and for the
    blueprint's own (0: no second round); ``depth``: the searcher's decisions in a rollout
    after which the blueprint's value is taken (0: to the end)."""

    worlds: int = 16
    opponent: str | None = None
    seed: int = 0
    margin: float = 0.0
    z: float = 0.0
    more: int = 0
    top: int = 3
    depth: int = 0


def parse(spec: str) -> tuple[SearchOptions, str] | None:
    """``(options, inner spec)`` of a search player's name, None for any other name;
    `GameError` for a search name that cannot be read."""
    head, colon, inner = spec.partition(":")
    _, *pieces = head.split("+")
    if not _searches(spec):
        return None
    if not colon or not inner:
        raise GameError(f"{spec!r}: a search player names the policy it searches over, "
                        "search:INNER (search:model:M.npz, search:rule)")
    types = {f.name: f.type for f in fields(SearchOptions)}
    given: dict[str, Any] = {}
    for piece in pieces:
        key, eq, value = piece.partition("=")
        if not eq or key not in types:
            raise GameError(f"{spec!r}: {piece!r} is no option of search (its options: "
                            f"{', '.join(types)}, as search+worlds=32+opponent=rule:INNER)")
        if key == "opponent":
            if value in ("model", "python"):
                raise GameError(f"{spec!r}: give a model opponent by its path, with no "
                                "colon: search+opponent=o.npz:INNER")
            given[key] = value
            continue
        number = float if key in ("margin", "z") else int
        try:
            given[key] = number(value)
        except ValueError:
            raise GameError(f"{spec!r}: {key}={value} is not a "
                            f"{'number' if number is float else 'whole number'}") from None
    options = SearchOptions(**given)
    for key in ("margin", "z"):
        if not 0 <= getattr(options, key) < float("inf"):
            raise GameError(f"{spec!r}: {key}={getattr(options, key)}: 0 or more")
    for key, least in (("worlds", 1), ("seed", 0), ("more", 0), ("top", 1), ("depth", 0)):
        if not least <= getattr(options, key) <= MOST[key]:
            raise GameError(f"{spec!r}: {key}={getattr(options, key)}: from {least} to "
                            f"{MOST[key]:,}")
    levels, below = 1, inner
    while _searches(below):
        levels, below = levels + 1, below.partition(":")[2]
        if levels > MOST_LEVELS:
            raise GameError(f"{spec[:80]!r}: a search over a search over a search: at most "
                            f"{MOST_LEVELS} levels (each multiplies the rollouts)")
    rollouts, below = options.worlds + options.more, inner
    while (deeper := parse(below)) is not None:
        rollouts, below = rollouts * (deeper[0].worlds + deeper[0].more), deeper[1]
    if rollouts > MOST_ROLLOUTS:
        raise GameError(f"{spec[:80]!r}: {rollouts:,} rollouts a decision, all levels' "
                        f"worlds and more multiplied: at most {MOST_ROLLOUTS:,}")
    if "top" in given and not options.more:
        raise GameError(f"{spec!r}: top={options.top} picks the moves of a second round: "
                        "give its worlds too (search+more=48+top=2:INNER)")
    return options, inner


def inner(spec: str) -> str:
    """The policy a player's name plays through: a search player's inner name, else the
    name itself (what loads a model file, for instance)."""
    while (parsed := parse(spec)) is not None:
        spec = parsed[1]
    return spec


def _searches(spec: str) -> bool:
    """Whether a player's name is a search player's (``search[+OPTION=VALUE...]:INNER``)."""
    return spec.partition(":")[0].split("+", 1)[0] == PREFIX


class SearchPlayer:
    """A `batchrl.games.play.Player` that searches at each decision: worlds its seat
    cannot tell apart (`Rules.sample_worlds`), each legal move tried in each, the games
    played out by the blueprint and the others, the move with the best mean made.

    Args:
        game: the game; it must sample worlds (and, for ``depth``, say what a seat has
            banked: `Rules.banked`).
        params: the game's params.
        blueprint: the `Player` of its own seat (and its partners') in the rollouts.
        others: the other seats' player in the rollouts.
        options: worlds, depth, a second round, the seed (`SearchOptions`).
        name: what a log and a report call it.

    Raises:
        GameError: a game that samples no worlds, or a depth over a blueprint without
            values.
    """

    def __init__(self, game: Game, params: Any, blueprint: Any, others: Any,
                 options: SearchOptions, name: str) -> None:
        if not game.can("sample_worlds"):
            raise GameError(f"{game.name} cannot search yet: it samples no worlds "
                            "(Rules.sample_worlds)")
        if options.depth:
            if not game.can("banked"):
                game.rules.banked(None, 0)  # says why
            model = getattr(blueprint, "model", None)  # a model file's player: its policy's
            if not callable(getattr(blueprint, "value", None)) or (
                    model is not None and getattr(model.policy, "values", None) is None):
                raise GameError(f"{name}: a search to a depth takes the blueprint's value "
                                "at its leaves: search over a model file with values "
                                "(fqi's), not a bot or a policy without them")
        self.game, self.params, self.options, self.name = game, params, options, name
        self.blueprint, self.others = blueprint, others
        self.spec = name  # the name it was made from (search_player sets it)
        # each seat's partners (themselves included): they play the blueprint
        self.partners: dict[int, frozenset[int]] = {
            seat: frozenset(team) for team in game.rules.teams for seat in team}
        self.rng = np.random.default_rng(options.seed)
        self.decisions = 0
        self.rollout_steps = 0
        # a filter of sampled worlds, ``keep(state, seat, worlds) -> the worlds kept``
        # (those a seat's history leaves possible: Hanabi's, SPARTA's); worlds are drawn
        # again while fewer than wanted are kept, up to ``DRAWS`` times as many
        self.keep: Callable[[Any, int, list[Any]], list[Any]] | None = None
        self.unfiltered = 0  # decisions where no drawn world was kept (the blueprint's move)
        self.contested = 0  # decisions that went to a second round (``more``)
        self.leaves = 0  # rollouts stopped at ``depth``, valued by the blueprint

    DRAWS = 64

    def worlds(self, state: Any, seat: int, n: int | None = None) -> list[Any]:
        """The worlds of one decision: ``n`` (``worlds``) drawn, or with a filter
        (``keep``) up to that many of those it keeps."""
        n = self.options.worlds if n is None else n
        if self.keep is None:
            return list(self.game.rules.sample_worlds(state, seat, n, self.rng))
        kept: list[Any] = []
        drawn = 0
        while len(kept) < n and drawn < self.DRAWS * n:
            batch = list(self.game.rules.sample_worlds(state, seat, 4 * n, self.rng))
            drawn += len(batch)
            kept += self.keep(state, seat, batch)
        if not kept:
            self.unfiltered += 1
        return kept[:n]

    def act(self, states: Sequence[Any], seats: Sequence[int]) -> NDArray[np.int64]:
        game = self.game
        roots: list[Any] = []
        searcher: list[int] = []  # the searching seat of each rollout
        legal_of: list[tuple[int, ...]] = []
        count: list[int] = []  # the worlds of each decision
        for state, seat in zip(states, seats, strict=True):
            legal = tuple(game.rules.legal_actions(state))
            worlds = self.worlds(state, seat) if len(legal) > 1 else []
            legal_of.append(legal)
            count.append(len(worlds))
            for a in legal if worlds else ():
                for world in worlds:
                    roots.append(game.rules.step(world, a))
                    searcher.append(seat)
        values = self.rollout(roots, searcher)
        searched = [i for i, legal in enumerate(legal_of) if len(legal) > 1]
        own = dict(zip(searched, self.blueprint.act([states[i] for i in searched],
                                                    [seats[i] for i in searched]).tolist(),
                       strict=True)) if searched else {}
        # each decision's returns, actions × worlds (the rollouts were made action by
        # action, the worlds in order)
        tables: dict[int, tuple[tuple[int, ...], NDArray[np.float64]]] = {}
        start = 0
        for i in searched:
            if count[i]:
                size = len(legal_of[i]) * count[i]
                tables[i] = legal_of[i], values[start : start + size].reshape(
                    len(legal_of[i]), count[i])
                start += size
        if self.options.more:
            tables.update(self.second_round(states, seats, own, tables))
        out = np.empty(len(states), dtype=np.int64)
        for i, legal in enumerate(legal_of):
            if len(legal) < 2:
                out[i] = legal[0]
            elif i not in tables:  # no world kept: the blueprint's move
                out[i] = own[i]
            else:
                moves, table = tables[i]
                out[i] = self.choose(moves, own[i], table)
        self.decisions += len(states)
        return out

    def second_round(self, states: Sequence[Any], seats: Sequence[int], own: dict[int, int],
                     tables: dict[int, tuple[tuple[int, ...], NDArray[np.float64]]]
                     ) -> dict[int, tuple[tuple[int, ...], NDArray[np.float64]]]:
        """``more`` new worlds for the moves of each decision whose mean beat the
        blueprint's (its ``top`` best) and for the blueprint's own, all rolled out in one
        lockstep: each contested decision's moves and their returns in the new worlds.
        The first round only picks the contenders: judged again on its own worlds, the
        moves it picked for beating the blueprint there would be flattered."""
        game, top = self.game, self.options.top
        roots: list[Any] = []
        searcher: list[int] = []
        plan: list[tuple[int, tuple[int, ...], int]] = []
        for i, (legal, values) in tables.items():
            if own[i] not in legal:
                continue
            means = values.mean(axis=1)
            mine = legal.index(own[i])
            ahead = [a for a in np.argsort(-means, kind="stable").tolist()
                     if means[a] > means[mine]][:top]
            if not ahead:
                continue  # the blueprint's move led: no move to race it
            worlds = self.worlds(states[i], seats[i], self.options.more)
            if not worlds:  # none kept: judged on no world, the blueprint's move stands
                plan.append((i, (own[i],), 0))
                continue
            rows = [mine, *ahead]
            for r in rows:
                for world in worlds:
                    roots.append(game.rules.step(world, legal[r]))
                    searcher.append(seats[i])
            plan.append((i, tuple(legal[r] for r in rows), len(worlds)))
        self.contested += len(plan)
        if not plan:
            return {}
        values = self.rollout(roots, searcher)
        out = {}
        start = 0
        for i, moves, n in plan:
            size = len(moves) * n
            out[i] = moves, values[start : start + size].reshape(len(moves), n) if n else \
                np.zeros((1, 1))
            start += size
        return out

    def choose(self, legal: tuple[int, ...], own: int, values: NDArray[np.float64]) -> int:
        """The move among ``legal`` given each one's return in each world (``values``,
        actions × worlds): the blueprint's ``own`` unless another's mean beats it by more
        than ``margin`` and, with ``z``, by at least z standard errors of the difference
        over the same worlds (on a tie, the blueprint's)."""
        means = values.mean(axis=1)
        best = int(np.argmax(means))
        if own not in legal:
            return legal[best]
        mine = legal.index(own)
        gain = values[best] - values[mine]
        slack = max(self.options.margin, 1e-9)
        if gain.mean() <= slack:
            return own
        z = self.options.z  # with one world, no error is told: the blueprint's move
        if z and (len(gain) < 2 or gain.mean() < z * gain.std(ddof=1) / np.sqrt(len(gain))):
            return own
        return legal[best]

    def rollout(self, roots: Sequence[Any], searcher: Sequence[int]) -> NDArray[np.float64]:
        """Each root played to the end (or, with ``depth``, to the searcher's depth-th
        decision, then its banked return and the blueprint's value there),
        ``searcher[j]``'s seat by the blueprint and the others by their model, in
        lockstep: its return to ``searcher[j]``. Python's cycle collector waits until it
        is over: the rollouts make millions of states and no cycles, and each of its
        full passes would walk every state alive."""
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._rollout(roots, searcher)
        finally:
            if collecting:
                gc.enable()

    def _rollout(self, roots: Sequence[Any], searcher: Sequence[int]) -> NDArray[np.float64]:
        game, depth = self.game, self.options.depth
        # the rules' methods bound once: they are called for every state at every step
        step, is_terminal = game.rules.step, game.rules.is_terminal
        current_player = game.rules.current_player
        states = list(roots)
        value = np.zeros(len(states))  # a leaf's, where a rollout stopped short
        stopped = np.zeros(len(states), dtype=bool)
        met = np.zeros(len(states), dtype=np.int64)  # the searcher's decisions reached
        live = [j for j, s in enumerate(states) if not is_terminal(s)]
        while live:
            turn = [current_player(states[j]) for j in live]
            if depth:
                leaves = []
                for j, p in zip(live, turn, strict=True):
                    if p == searcher[j]:
                        met[j] += 1
                        if met[j] >= depth:
                            leaves.append(j)
                if leaves:
                    self.leaf_values(states, searcher, leaves, value)
                    stopped[leaves] = True
                    turn = [p for j, p in zip(live, turn, strict=True) if not stopped[j]]
                    live = [j for j in live if not stopped[j]]
                    if not live:
                        break
            ours = [p == searcher[j] or p in self.partners.get(searcher[j], ())
                    for j, p in zip(live, turn, strict=True)]
            mine = [j for j, o in zip(live, ours, strict=True) if o]
            mine_seats = [p for p, o in zip(turn, ours, strict=True) if o]
            theirs = [(j, p) for j, p, o in zip(live, turn, ours, strict=True) if not o]
            groups = [(self.blueprint, mine, mine_seats),
                      (self.others, [j for j, _ in theirs], [p for _, p in theirs])]
            if self.others is self.blueprint:
                groups = [(self.blueprint, mine + groups[1][1], groups[0][2] + groups[1][2])]
            for player, ids, who in groups:
                if not ids:
                    continue
                chosen = player.act([states[j] for j in ids], who)
                for j, a in zip(ids, chosen.tolist(), strict=True):
                    states[j] = step(states[j], int(a))
            self.rollout_steps += len(live)
            live = [j for j in live if not is_terminal(states[j])]
        ended = np.flatnonzero(~stopped)
        if len(ended):  # the returns of the rollouts played to the end, in one batch
            table = game.play.returns_batch([states[j] for j in ended.tolist()])
            value[ended] = table[np.arange(len(ended)), np.asarray(searcher)[ended]]
        return value

    def leaf_values(self, states: Sequence[Any], searcher: Sequence[int],
                    leaves: Sequence[int], value: NDArray[np.float64]) -> None:
        """``value[j]`` of each leaf ``j``: what its searcher has banked there and the
        blueprint's value of the state, in one call of the blueprint."""
        seats = [searcher[j] for j in leaves]
        learned = self.blueprint.value([states[j] for j in leaves], seats)
        for j, seat, v in zip(leaves, seats, np.asarray(learned, np.float64).tolist(),
                              strict=True):
            value[j] = self.game.rules.banked(states[j], seat) + v
            if not np.isfinite(value[j]):
                raise GameError(f"{self.name}: a leaf of the search to depth "
                                f"{self.options.depth} is worth {value[j]} (the blueprint's "
                                f"value {v}): a value must be a number")
        self.leaves += len(leaves)


def search_player(game: Game, params: Any, spec: str, make: Callable[[str], Any],
                  rng: np.random.Generator) -> SearchPlayer | None:
    """The search player a name gives.

    Args:
        game: the game.
        params: the game's params.
        spec: a player's name: ``search[+OPTION=VALUE...]:INNER`` searches over INNER.
        make: the game's own player factory, ``make(name)``: the blueprint and the
            ``opponent=`` option's player.
        rng: its worlds are drawn from it and the ``seed`` option.

    Returns:
        The `SearchPlayer`, or None for a name that is no search player's.
    """
    parsed = parse(spec)
    if parsed is None:
        return None
    options, inside = parsed
    blueprint = make(inside)
    others = blueprint if options.opponent is None else make(options.opponent)
    # a name a log can hold (no colon): search-, then the blueprint's
    name = f"search-{getattr(blueprint, 'name', 'policy')}"
    player = SearchPlayer(game, params, blueprint, others, options, name)
    player.spec = spec
    player.rng = np.random.default_rng([options.seed, int(rng.integers(1 << 32))])
    return player
