"""President's rules, after the seed (``../shared/seeds/president-card-game-dqn.txt``).

A 40-card Spanish deck (suits oros/golds, copas/cups, espadas/swords, bastos/clubs;
ranks 1–7, 10, 11, 12) dealt evenly to 2, 4, 5 or 8 players. Cards rank by value
``1 > 3 > 12 > 11 > 10 > 7 > 6 > 5 > 4 > 2``; here a rank is its *value* index, 0 (the
2s) to 9 (the aces). The holder of the 2 of golds leads the game, and its first play
holds the 2 of golds (alone, or with other 2s). On a turn a player passes or plays a set
of cards of one rank: leading, any set (a leader may not pass); following, as many cards
as the set on the table, of strictly greater value. A round ends when every other player
still holding cards has passed on the last set; its player leads the next, or, if that
player's hand is empty, the next player still holding cards. The first player out is the
president, the last (the one left holding cards, when the game ends) the servant.

Where the seed is silent: a player who passed may play again later in the same round,
as long as the round goes on (the common rule, and what the seed's round-ending rule
implies); ``Rules(pass_locks=True)`` makes a pass final for the round instead.

A match (``Rules(match=k)``, k games; single games by default) adds the seed's economy:
before each game after the first, the servant of the game before gives the president
its best card (the highest, the suit breaking ties), and the president returns a card
of its choice: a decision of its own (``exchange``), whose moves are the ``<rank>x1``
actions ("return a card of this rank"; of several, the one of the highest suit goes,
so the 2 of golds stays while another 2 can go). The holder of the 2 of golds leads
every game. The rewards of every game add up; the episode is the match.

Suits matter only for the 2 of golds, so a move is a (rank, count): action 0 is ``pass``
and ``1 + 4·rank + count − 1`` plays ``count`` cards of ``rank``: 41 actions. A state is
immutable; `step` returns a new one and raises `IllegalMove` for an illegal action.

The seed's reward is a time penalty: −1 for each decision that does not empty the hand,
``3 − p`` for the play that empties it at placement p (0 the president), nothing after;
the servant's hand never empties; the president's card returned in a match's exchange
earns nothing. ``reward="placement"`` gives ``n − 1 − p`` on the play
that empties the hand (the servant: 0) and nothing else.

>>> state = deal(np.random.default_rng(1), Rules(players=4))
>>> state.turn, [action_name(a) for a in legal_actions(state)]
(0, ['2x1'])
>>> state = step(state, play_action(0, 1))
>>> state.table, state.last, state.turn, len(legal_actions(state)) > 1
((0, 1), 0, 1, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import chain

import numpy as np

RANKS = (2, 4, 5, 6, 7, 10, 11, 12, 3, 1)  # by value, lowest first: rank index -> card rank
SUITS = ("o", "c", "e", "b")  # oros (golds), copas (cups), espadas (swords), bastos (clubs)
SUIT_NAMES = ("golds", "cups", "swords", "clubs")
N_RANKS, N_SUITS = len(RANKS), len(SUITS)
CARDS = N_RANKS * N_SUITS  # card id = 4·rank index + suit
TWO_OF_GOLDS = 0
PASS = 0
N_ACTIONS = 1 + N_RANKS * N_SUITS  # pass, and (rank, count 1-4)
PLAYER_COUNTS = (2, 4, 5, 8)
REWARDS = ("time", "placement")
MAX_MATCH = 100


class IllegalMove(ValueError):
    """A move the rules do not allow now; the message says why."""


@dataclass(frozen=True, slots=True)
class Rules:
    """One game's rules: the players, whether a pass is final for the round, and the
    reward each decision earns (``"time"``, the seed's, or ``"placement"``)."""

    players: int = 4
    pass_locks: bool = False
    reward: str = "time"
    match: int = 1  # games per match; 1: single games

    def __post_init__(self) -> None:
        if not 1 <= self.match <= MAX_MATCH:
            raise ValueError(f"a match of {self.match} games: want 1 to {MAX_MATCH}")
        if self.players not in PLAYER_COUNTS:
            raise ValueError(f"president is dealt to {', '.join(map(str, PLAYER_COUNTS))} "
                             f"players (40 cards evenly), not {self.players}")
        if self.reward not in REWARDS:
            raise ValueError(f"reward {self.reward!r}: want one of {', '.join(REWARDS)}")


@dataclass(frozen=True, slots=True)
class State:
    """A game between decisions. ``hands[s][r]``: seat s's cards of rank r; ``table``:
    the set to beat as (rank, count), (-1, 0) when the seat to act leads; ``last``: who
    played it (-1 when leading); ``passed``: bits of the seats that passed on it (with
    ``pass_locks``, that passed in this round);
    ``turn``: the seat to act (-1 once over); ``order``: the seats out, first first
    (the servant last once over); ``scores``: each seat's rewards so far."""

    rules: Rules
    dealt: tuple[tuple[int, ...], ...]  # each seat's card ids as dealt
    hands: tuple[tuple[int, ...], ...]
    played: tuple[int, ...]  # cards of each rank played so far
    table: tuple[int, int]
    last: int
    passed: int
    turn: int
    order: tuple[int, ...]
    scores: tuple[float, ...]
    first: bool = True  # the game's first play (the 2 of golds) is still to come
    moves: int = 0
    # a match: the deals of the games still to come, the orders of the games done, and
    # whether the president is to return a card before the game's first play
    upcoming: tuple[tuple[tuple[int, ...], ...], ...] = ()
    results: tuple[tuple[int, ...], ...] = ()
    exchange: bool = False

    @property
    def game_no(self) -> int:
        """The game of the match being played, 0 the first."""
        return len(self.results)


def card_name(card: int) -> str:
    """``2o`` is the 2 of golds (oros); ``12b`` the king (12) of clubs (bastos)."""
    return f"{RANKS[card // N_SUITS]}{SUITS[card % N_SUITS]}"


def parse_card(text: str) -> int:
    """A card id from its name (`card_name`); `ValueError` names what is wrong."""
    text = text.strip()
    if len(text) < 2 or text[-1] not in SUITS or not text[:-1].isdigit() \
            or len(text) > 3 or int(text[:-1]) not in RANKS:
        raise ValueError(f"{text[:12]!r} is not a card: want a rank of "
                         f"{' '.join(map(str, sorted(RANKS)))} and a suit of "
                         f"{''.join(SUITS)} (oros, copas, espadas, bastos), e.g. 2o or 12b")
    return RANKS.index(int(text[:-1])) * N_SUITS + SUITS.index(text[-1])


def play_action(rank: int, count: int) -> int:
    """The action playing ``count`` cards of rank index ``rank``."""
    return 1 + N_SUITS * rank + count - 1


def action_rank_count(action: int) -> tuple[int, int]:
    """(rank index, count) of a play; (-1, 0) for pass."""
    if action == PASS:
        return -1, 0
    return (action - 1) // N_SUITS, (action - 1) % N_SUITS + 1


def action_name(action: int) -> str:
    """``pass``, or ``<rank>x<count>``: ``12x2`` plays two kings."""
    if action == PASS:
        return "pass"
    rank, count = action_rank_count(action)
    return f"{RANKS[rank]}x{count}"


ACTION_NAMES = tuple(action_name(a) for a in range(N_ACTIONS))


def parse_action(text: str) -> int:
    """An action from its name (`action_name`); `ValueError` names what is wrong."""
    try:
        return ACTION_NAMES.index(text)
    except ValueError:
        raise ValueError(f"{str(text)[:12]!r} is not a move: want pass or <rank>x<count>, "
                         "e.g. 12x2") from None


def counts(cards: tuple[int, ...] | list[int]) -> tuple[int, ...]:
    """Cards per rank index."""
    out = [0] * N_RANKS
    for c in cards:
        out[c // N_SUITS] += 1
    return tuple(out)


def from_deal(dealt: tuple[tuple[int, ...], ...], rules: Rules,
              upcoming: tuple[tuple[tuple[int, ...], ...], ...] = ()) -> State:
    """The state before the first move of a game dealt ``dealt`` (card ids per seat):
    the holder of the 2 of golds to act. A match's later games are ``upcoming``."""
    if len(upcoming) != rules.match - 1:
        raise ValueError(f"a match of {rules.match} games is {rules.match} deals, not "
                         f"{len(upcoming) + 1}")
    for later in upcoming:
        _check_deal(later, rules)
    _check_deal(dealt, rules)
    holder = next(s for s, hand in enumerate(dealt) if TWO_OF_GOLDS in hand)
    return State(rules, tuple(tuple(sorted(h)) for h in dealt),
                 tuple(counts(h) for h in dealt), (0,) * N_RANKS, (-1, 0), -1, 0, holder,
                 (), (0.0,) * rules.players, upcoming=tuple(upcoming))


def _check_deal(dealt: tuple[tuple[int, ...], ...], rules: Rules) -> None:
    n = rules.players
    if len(dealt) != n:
        raise ValueError(f"a deal to {n} players, not {len(dealt)}")
    cards = [c for hand in dealt for c in hand]
    if sorted(cards) != list(range(CARDS)):
        raise ValueError("the deal is not the 40 cards, each once")
    if len({len(h) for h in dealt}) != 1:
        raise ValueError(f"the deal is not even: {[len(h) for h in dealt]} cards")


def deal(rng: np.random.Generator, rules: Rules) -> State:
    """A new game (a match: its every deal), the deck shuffled by ``rng``."""
    n = rules.players
    size = CARDS // n
    deals = []
    for _ in range(rules.match):
        deck = rng.permutation(CARDS)
        deals.append(tuple(tuple(int(c) for c in deck[s * size:(s + 1) * size])
                           for s in range(n)))
    return from_deal(deals[0], rules, tuple(deals[1:]))


def is_terminal(state: State) -> bool:
    return state.turn < 0


def legal_actions(state: State) -> tuple[int, ...]:
    """The moves of the seat to act, in action order (pass first where allowed)."""
    if state.turn < 0:
        return ()
    if state.exchange:  # the president returns a card of a rank it holds
        return tuple(play_action(r, 1) for r, c in enumerate(state.hands[state.turn]) if c)
    return _legal(state.hands[state.turn], state.table, state.first)


# The moves as tables: leading with k cards of rank r, opening with k 2s of which one is the
# 2 of golds, following a set of `count` cards with rank r
_LEAD = tuple(tuple(tuple(1 + N_SUITS * r + c for c in range(k)) for k in range(N_SUITS + 1))
              for r in range(N_RANKS))
_FOLLOW = tuple(tuple(1 + N_SUITS * r + count - 1 for r in range(N_RANKS))
                for count in range(1, N_SUITS + 1))


@lru_cache(maxsize=1 << 16)
def _legal(hand: tuple[int, ...], table: tuple[int, int], first: bool) -> tuple[int, ...]:
    """The moves from a hand's rank counts (kept: a game meets the same ones often)."""
    if first:  # the 2 of golds, alone or with other 2s
        return _LEAD[0][hand[0]]
    rank, count = table
    if rank < 0:  # leading: any set, no pass
        return tuple(chain.from_iterable([_LEAD[r][k] for r, k in enumerate(hand)]))
    moves = _FOLLOW[count - 1]
    return (PASS, *[moves[r] for r in range(rank + 1, N_RANKS) if hand[r] >= count])


def is_legal(state: State, action: int) -> bool:
    if state.turn < 0 or not 0 <= action < N_ACTIONS:
        return False
    if state.exchange:
        rank, count = action_rank_count(action)
        return count == 1 and state.hands[state.turn][rank] > 0
    if action == PASS:
        return state.table[0] >= 0 and not state.first
    rank, count = action_rank_count(action)
    if state.hands[state.turn][rank] < count:
        return False
    if state.first:
        return rank == 0
    return state.table[0] < 0 or (count == state.table[1] and rank > state.table[0])


def _why_illegal(state: State, action: int) -> str:
    if state.turn < 0:
        return "the game is over"
    if not 0 <= action < N_ACTIONS:
        return f"moves are 0..{N_ACTIONS - 1}"
    name, seat = action_name(action), state.turn
    if state.exchange:
        return (f"seat {seat}, the president, returns one card to the servant: "
                f"<rank>x1 of a rank it holds, not {name}")
    if action == PASS:
        return f"seat {seat} leads and must play a set" if not state.first else \
            f"seat {seat} holds the 2 of golds and must lead it"
    rank, count = action_rank_count(action)
    if state.hands[seat][rank] < count:
        return f"seat {seat} holds {state.hands[seat][rank]} of rank {RANKS[rank]}"
    if state.first:
        return f"the first play holds the 2 of golds, not {name}"
    return (f"the table has {action_name(play_action(*state.table))}: follow with "
            f"{state.table[1]} cards of a higher value, or pass")


def _next_seat(state_hands: tuple[tuple[int, ...], ...], seat: int, skip: int) -> int:
    """The next seat after ``seat`` holding cards and not in the bits ``skip``."""
    n = len(state_hands)
    for k in range(1, n + 1):
        s = (seat + k) % n
        if not skip >> s & 1 and any(state_hands[s]):
            return s
    return -1


def step(state: State, action: int) -> State:
    """The state after the seat to act plays ``action``; `IllegalMove` if it may not."""
    action = int(action)
    if not is_legal(state, action):
        raise IllegalMove(f"{action_name(action) if 0 <= action < N_ACTIONS else action}: "
                          f"{_why_illegal(state, action)}")
    if state.exchange:
        return _returned(state, action)
    rules, seat, n = state.rules, state.turn, state.rules.players
    hands, played, order = state.hands, state.played, state.order
    table, last, passed = state.table, state.last, state.passed
    scores = list(state.scores)
    if action == PASS:
        passed |= 1 << seat
        earned = -1.0 if rules.reward == "time" else 0.0
    else:
        rank, count = action_rank_count(action)
        hand = list(hands[seat])
        hand[rank] -= count
        hands = (*hands[:seat], tuple(hand), *hands[seat + 1:])
        counted = list(played)
        counted[rank] += count
        played = tuple(counted)
        table, last = (rank, count), seat
        passed = passed if rules.pass_locks else 0  # locked: out until the round ends
        if any(hand):
            earned = -1.0 if rules.reward == "time" else 0.0
        else:
            place = len(order)
            order = (*order, seat)
            earned = 3.0 - place if rules.reward == "time" else float(n - 1 - place)
    scores[seat] += earned
    holding = [s for s in range(n) if any(hands[s])]
    if len(holding) <= 1:  # over: the one left holding cards is the servant
        order = (*order, *holding)
        if state.upcoming:
            return _next_game(state, order, tuple(scores))
        return State(rules, state.dealt, hands, played, (-1, 0), -1, 0, -1, order,
                     tuple(scores), False, state.moves + 1, (), state.results)
    others = [s for s in holding if s != last]
    if all(passed >> s & 1 for s in others):  # the round is over
        turn = last if last in holding else _next_seat(hands, last, 0)
        table, last, passed = (-1, 0), -1, 0
    else:
        turn = _next_seat(hands, seat, passed if rules.pass_locks else 0)
    return State(rules, state.dealt, hands, played, table, last, passed, turn, order,
                 tuple(scores), False, state.moves + 1, state.upcoming, state.results)


def _next_game(state: State, order: tuple[int, ...], scores: tuple[float, ...]) -> State:
    """A match's next game, dealt: the servant of the game just over gives the president
    its best card, and the president is to return one."""
    president, servant = order[0], order[-1]
    cards = [list(h) for h in state.upcoming[0]]
    best = max(cards[servant])
    cards[servant].remove(best)
    cards[president].append(best)
    dealt = tuple(tuple(sorted(h)) for h in cards)
    return State(state.rules, dealt, tuple(counts(h) for h in dealt), (0,) * N_RANKS,
                 (-1, 0), -1, 0, president, (), scores, True, state.moves + 1,
                 state.upcoming[1:], (*state.results, order), exchange=True)


def _returned(state: State, action: int) -> State:
    """The president has returned a card of the action's rank (of several, the highest
    suit's) to the servant; the holder of the 2 of golds leads."""
    rank, _ = action_rank_count(action)
    president, servant = state.turn, state.results[-1][-1]
    cards = [list(h) for h in state.dealt]
    card = max(c for c in cards[president] if c // N_SUITS == rank)
    cards[president].remove(card)
    cards[servant].append(card)
    dealt = tuple(tuple(sorted(h)) for h in cards)
    holder = next(s for s, hand in enumerate(dealt) if TWO_OF_GOLDS in hand)
    return State(state.rules, dealt, tuple(counts(h) for h in dealt), state.played,
                 (-1, 0), -1, 0, holder, (), state.scores, True, state.moves + 1,
                 state.upcoming, state.results)


def placements(state: State, order: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """Each seat's placement in a finished game (``order``, default the last game's):
    0 the president, n-1 the servant."""
    order = state.order if order is None else order
    if len(order) != state.rules.players:
        raise ValueError("the game is not over")
    out = [0] * state.rules.players
    for place, seat in enumerate(order):
        out[seat] = place
    return tuple(out)


def game_orders(state: State) -> tuple[tuple[int, ...], ...]:
    """The finishing order of every game of a finished match (one, for a single game)."""
    return (*state.results, state.order)
