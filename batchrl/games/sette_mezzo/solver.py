"""The exact solution of sette e mezzo against a fixed-limit opponent, by policy iteration.

A decision state is the multiset of the player's card values and the opponent's up
card: together they fix what is left in the deck, so every probability is exact,
card removal included. Hitting only adds cards, so the states form a DAG: a policy
is evaluated exactly by one backward pass over the number of cards held, and
improved by comparing, in each state, the value of sticking with the expected value
of the *successor* states under the current policy. Rounds repeat until the policy
no longer changes. (The seed this follows compared sticking with the current state's
own value, not the successors': from "always stick" that sees nothing to improve.)

>>> sol = solve(5)
>>> round(sol.expected_reward, 4), len(sol.action)
(0.002, 1752)
>>> report = evaluate_policy(lambda x: (x[:, 0] < 5).astype(int), limit=5)
>>> report.expected_reward < sol.expected_reward
True
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from batchrl.games.sette_mezzo import tree as _t
from batchrl.games.sette_mezzo.rules import (
    BUST,
    CARD_CHARS,
    DEFAULT_LIMIT,
    HALVES,
    HIT,
    KINDS,
    STICK,
    GameState,
    cards_str,
    encode,
    encode_counts,
    limit_halves,
)

# Improvement switches action only when the other is better by more than this, so
# rounding cannot make the policy flip back and forth.
EPS = 1e-12

ChooseFn = Callable[[NDArray[np.float32]], ArrayLike]


@dataclass(frozen=True, eq=False)
class Solution:
    """The optimal policy: one entry per decision state (arrays are read-only).

    ``counts[i]`` holds the player's number of cards of each value (0.5, 1, ..., 7)
    and ``opponent_card[i]`` the kind of the up card (0 a face, else its value).
    """

    limit: float
    counts: NDArray[np.int8]
    opponent_card: NDArray[np.int8]
    action: NDArray[np.int8]  # the optimal action (STICK where both are worth the same)
    value: NDArray[np.float64]  # the optimal expected reward from the state
    stick: NDArray[np.float64]  # expected reward of sticking
    hit: NDArray[np.float64]  # expected reward of hitting, then playing optimally
    expected_reward: float  # per game, over the initial deal
    rounds: int  # policy-iteration rounds, the last one changing nothing
    seconds: float
    _lookup: _t.Lookup = field(repr=False)

    def features(self) -> NDArray[np.float32]:
        """The encoded states ``(n, n_features)``, in the order of the arrays."""
        return encode_counts(self.counts, self.opponent_card)

    def index(self, features: ArrayLike) -> NDArray[np.int64]:
        """Rows of the states whose features are given; raises on an unknown state."""
        return self._lookup.find(np.asarray(features, dtype=np.float32))

    def choose(self, features: ArrayLike) -> NDArray[np.int8]:
        """The optimal actions for a batch of encoded states ``(n, n_features)``."""
        return self.action[self.index(features)]

    def act(self, state: GameState) -> int:
        """The optimal action in one game state."""
        return int(self.choose(encode(state)[None])[0])


@dataclass(frozen=True, slots=True)
class PolicyReport:
    """A policy's exact worth, and how often it plays as the optimal policy does.

    An action "agrees" when it is optimal in the state (where sticking and hitting
    are worth the same, both agree). ``agreement`` weights each state by how often
    the *evaluated* policy visits it, so it is the share of that policy's own
    decisions that are optimal; ``agreement_optimal_visits`` weights by the optimal
    policy's visits; ``agreement_states`` counts every state once.
    """

    limit: float
    expected_reward: float  # per game
    optimal_reward: float
    agreement: float
    agreement_optimal_visits: float
    agreement_states: float
    decisions_per_game: float  # under the evaluated policy
    states: int

    @property
    def regret(self) -> float:
        return self.optimal_reward - self.expected_reward


@functools.lru_cache(maxsize=8)
def solve(limit: float = DEFAULT_LIMIT) -> Solution:
    """Policy iteration from "always stick" to the optimal policy (cached per limit)."""
    started = time.perf_counter()
    tree = _t.build(limit_halves(limit))
    hit = np.zeros(tree.size, dtype=bool)
    rounds = 0
    while True:
        rounds += 1
        value = _t.evaluate(tree, hit)
        q_hit = _t.hit_values(tree, value)
        better = np.where(q_hit > tree.stick + EPS, True, hit)
        better = np.where(tree.stick > q_hit + EPS, False, better)
        if np.array_equal(better, hit):
            break
        hit = better
    # Where the two are equal either is optimal; report STICK, whatever the start.
    action = np.where(q_hit > tree.stick + EPS, HIT, STICK).astype(np.int8)
    value = value[: tree.size].copy()
    for a in (action, value, q_hit):
        a.flags.writeable = False
    return Solution(float(limit), tree.counts, tree.up, action, value, tree.stick, q_hit,
                    float(tree.start @ value), rounds, time.perf_counter() - started,
                    _t.Lookup(tree.counts, tree.up))


def evaluate_policy(choose: ChooseFn, limit: float = DEFAULT_LIMIT) -> PolicyReport:
    """Evaluate any policy exactly: its expected reward per game and its agreement.

    ``choose`` maps a batch of encoded states ``(n, n_features)`` to actions ``(n,)``;
    it is called once, with every decision state, so a batched learner runs at speed.
    """
    sol = solve(limit)
    tree = _t.build(limit_halves(limit))
    actions = np.asarray(choose(sol.features()))
    if actions.shape != (tree.size,) or not np.isin(actions, (STICK, HIT)).all():
        raise ValueError(f"choose must return {tree.size} actions, each 0 (stick) or 1 "
                         f"(hit), for {tree.size} states; it returned shape {actions.shape}")
    hit = actions == HIT
    value = _t.evaluate(tree, hit)
    optimal = (actions == sol.action) | (np.abs(sol.hit - sol.stick) <= EPS)
    visits = _t.visits(tree, hit)
    best_visits = _t.visits(tree, sol.action == HIT)
    return PolicyReport(
        limit=float(limit),
        expected_reward=float(tree.start @ value[: tree.size]),
        optimal_reward=sol.expected_reward,
        agreement=_share(visits, optimal),
        agreement_optimal_visits=_share(best_visits, optimal),
        agreement_states=float(optimal.mean()),
        decisions_per_game=float(visits.sum()),
        states=tree.size)


def random_value(limit: float = DEFAULT_LIMIT, p_hit: float = 0.5) -> float:
    """The exact expected reward per game of the player that hits with probability
    ``p_hit`` in every state (the ``random`` bot: a fair coin)."""
    tree = _t.build(limit_halves(limit))
    value = _t.evaluate(tree, np.full(tree.size, p_hit))
    return float(tree.start @ value[: tree.size])


def strategy_table(solution: Solution) -> str:
    """The optimal play by the player's total (rows) and the opponent's up card (columns).

    ``H`` hit, ``S`` stick. Where the cards that make up the total change the decision,
    the cell shows the action of most of the probability mass under optimal play in
    lower case, then the share of that mass in the other action (``s/12%``): the
    lines under the table list those hands.
    """
    tree = _t.build(limit_halves(solution.limit))
    weight = _t.visits(tree, solution.action == HIT)
    totals = solution.counts.astype(np.int64) @ np.asarray(HALVES)
    ups = [0, *range(1, KINDS)]
    head = ("total | opponent's up card (F: a face, worth 0.5)\n      |"
            + "".join(f"{_card_name(u):>7}" for u in ups))
    lines = [head, "-" * len(head.splitlines()[-1])]
    notes: list[str] = []
    for halves in range(1, BUST + 1):
        cells = []
        for u in ups:
            rows = np.flatnonzero((totals == halves) & (solution.opponent_card == u))
            if not len(rows):
                cells.append("")
                continue
            hits = solution.action[rows] == HIT
            if hits.all() or not hits.any():
                cells.append("H" if hits.all() else "S")
                continue
            w = weight[rows]
            share_hit = float(w[hits].sum() / w.sum()) if w.sum() > 0 else float(hits.mean())
            major = "h" if share_hit >= 0.5 else "s"
            cells.append(f"{major}/{round(100 * min(share_hit, 1 - share_hit))}%")
            minority = rows[hits] if major == "s" else rows[~hits]
            hands = ", ".join(_hand_name(solution.counts[i]) for i in minority[:6])
            more = f" and {len(minority) - 6} more" if len(minority) > 6 else ""
            notes.append(f"  {halves / 2:g} vs {_card_name(u)}: "
                         f"{'H' if major == 's' else 'S'} with {hands}{more}")
        lines.append(f"{halves / 2:>5g} |" + "".join(f"{c:>7}" for c in cells))
    if notes:
        lines += ["", "where the cards change the decision (the minority action):", *notes]
    return "\n".join(lines)


def _card_name(kind: int) -> str:
    return CARD_CHARS[kind]


def _hand_name(counts: NDArray[np.int8]) -> str:
    return "+".join(cards_str(np.repeat(np.arange(KINDS), counts).tolist()))


def _share(weight: NDArray[np.float64], agree: NDArray[np.bool_]) -> float:
    # one minus the disagreeing mass, so that full agreement is exactly 1.0
    return 1.0 - float(weight[~agree].sum() / weight.sum())
