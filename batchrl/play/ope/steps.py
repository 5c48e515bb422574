"""One seat's decisions in a store's episodes, laid out for off-policy evaluation: the
seat's steps in the order it took them, what it earned from each step up to its next
(or to the end), where its next step is, and the moves each step allowed.

A store row is one decision of one player. Where each row's next state is its own
seat's next decision (`batchrl.episodes.grouping` "seat": poker, Leduc, sette e mezzo,
Tressette, President) the seat's reward at a step is its row's. Where the next state is
the next mover's (Hanabi's team episodes), every row's reward is the team's: the seat's
reward at a step is the sum of the rewards from its row to its next decision, and what
the team earned before the seat's first decision is a constant of the episode (it does
not depend on the seat's policy) kept as ``before``.

An episode in which the seat never decides is left out and counted: its result does not
depend on the seat's policy, and the store does not record it for that seat.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from batchrl.episodes import episodes_of, grouping
from batchrl.store import Transitions


@dataclass(frozen=True, eq=False)
class SeatSteps:
    """A seat's steps, episode after episode, each episode's in the order taken.

    ``rows``: their store rows; ``state``/``action``/``legal``: the state (every stored
    feature), the logged move and the moves allowed there; ``reward``: what the seat
    earned from this step to its next; ``nxt``: the index of the seat's next step in the
    episode (-1: none); ``episode``: 0.. over the chains kept, a chain being one
    episode's decisions of one seat (a player by name who sits in both seats of an
    episode has two); ``t``: the step's number within its chain; ``first``: each chain's
    first step; ``before``: each chain's reward before its first step; ``left_out``:
    episodes where no step is taken."""

    who: str  # "seat 0", or "rule" (a player by name)
    rows: NDArray[np.int64]
    state: NDArray[np.float32]
    action: NDArray[np.int64]
    legal: NDArray[np.bool_]
    reward: NDArray[np.float64]
    nxt: NDArray[np.int64]
    episode: NDArray[np.int64]
    t: NDArray[np.int64]
    first: NDArray[np.int64]
    before: NDArray[np.float64]
    left_out: int
    team: bool

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def episodes(self) -> int:
        return len(self.first)

    @property
    def horizon(self) -> int:
        """The most steps the seat takes in one episode."""
        return int(self.t.max(initial=-1)) + 1


def seat_steps(data: Transitions, seat: int) -> SeatSteps:
    """``data``'s decisions of ``seat`` as `SeatSteps`; a ValueError where the seat takes
    none."""
    mine = data.player == seat
    if not mine.any():
        seats = ", ".join(str(int(s)) for s in np.unique(data.player))
        raise ValueError(f"seat {seat} takes no decision in these rows (the seats that do: "
                         f"{seats})")
    return player_steps(data, mine, f"seat {seat}")


def player_steps(data: Transitions, mine: NDArray[np.bool_], who: str) -> SeatSteps:
    """The decisions of the rows ``mine`` marks (one player's, in whatever seat it sits
    in each episode) as `SeatSteps`, ``who`` naming them."""
    team = grouping(data) == "episode"
    ordered = episodes_of(data, "seat")  # rows by (episode, seat, step), masks per step
    kept = mine[ordered.rows]
    rows = ordered.rows[kept]
    if not len(rows):
        raise ValueError(f"{who} takes no decision in these rows")
    legal = ordered.legal_mask[kept]
    codes = data.episode[rows]
    seats = data.player[rows]
    starts = np.ones(len(rows), dtype=bool)  # a chain: one episode's decisions of one seat
    starts[1:] = (codes[1:] != codes[:-1]) | (seats[1:] != seats[:-1])
    if team and len(np.unique(codes[starts])) < int(starts.sum()):
        raise ValueError(f"{who} sits in more than one seat of an episode of a team game: "
                         "take one seat (--seat) instead")
    episode = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    t = np.arange(len(rows)) - first[episode]
    nxt = np.arange(1, len(rows) + 1, dtype=np.int64)
    nxt[np.append(first[1:], len(rows)) - 1] = -1
    if team:
        reward, before = _team_rewards(data, mine, rows, codes[first])
    else:
        reward, before = data.reward[rows].astype(np.float64), np.zeros(len(first))
    return SeatSteps(who, rows, np.asarray(data.state[rows], dtype=np.float32),
                     data.action[rows].astype(np.int64), legal, reward, nxt,
                     episode.astype(np.int64), t.astype(np.int64), first.astype(np.int64),
                     before, len(data.episode_ids) - len(np.unique(codes)), team)


def _team_rewards(data: Transitions, mine: NDArray[np.bool_], rows: NDArray[np.int64],
                  kept: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each of the seat's steps' reward from its row up to its next decision (every row's
    reward is the team's), and each kept episode's reward before the seat's first."""
    order = np.argsort(data.episode, kind="stable")  # an episode's rows as played
    reward = data.reward[order].astype(np.float64)
    # each row of the played order belongs to the seat's latest decision at or before it
    is_mine = mine[order]
    codes = data.episode[order]
    new_episode = np.ones(len(order), dtype=bool)
    new_episode[1:] = codes[1:] != codes[:-1]
    # the last of the seat's rows so far, reset at each episode's start
    segment = np.cumsum(new_episode) - 1
    latest = np.maximum.accumulate(np.where(is_mine | new_episode, np.arange(len(order)), 0))
    owner = np.where(is_mine[latest], latest, -1)
    position = np.full(len(data.reward), -1, dtype=np.int64)
    position[rows] = np.arange(len(rows))
    step_of = np.where(owner >= 0, position[order[np.maximum(owner, 0)]], -1)
    out = np.bincount(step_of[step_of >= 0], weights=reward[step_of >= 0],
                      minlength=len(rows)).astype(np.float64)
    # rewards before the seat's first decision, per kept episode
    lead = step_of < 0
    sums = np.bincount(segment[lead], weights=reward[lead],
                       minlength=int(segment[-1]) + 1).astype(np.float64)
    segment_of = np.full(int(codes.max()) + 1, -1, dtype=np.int64)
    segment_of[codes[new_episode]] = np.arange(int(new_episode.sum()))
    return out, sums[segment_of[kept]]
