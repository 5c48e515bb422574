"""The worlds a seat cannot tell apart (`Rules.sample_worlds`), what search at decision
time plays out: every game that samples them passes the conformance check (each world
encodes as the state does for the seat), their distribution is the uniform one over
the deals of the unseen cards that fit what the seat has seen (chi-square tests against
the enumerated belief), and Hanabi's SPARTA filter keeps the true hand."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from scipy.stats import chisquare

from batchrl.games import GAMES, get_game
from batchrl.games.conformance import check_worlds
from batchrl.games.play import make_player

SEARCHED = sorted(name for name, game in GAMES.items() if game.can("sample_worlds"))


def test_the_games_that_sample_worlds() -> None:
    assert {"holdem", "leduc", "tressette"} <= set(SEARCHED)


@pytest.mark.slow
@pytest.mark.parametrize("name", SEARCHED)
def test_every_world_is_one_its_seat_cannot_tell_from_the_state(name: str) -> None:
    assert check_worlds(get_game(name), playouts=6, worlds=3) > 100


def test_holdem_worlds_deal_the_unseen_cards_uniformly() -> None:
    """Before the flop seat 0 sees its two cards: each of the other 50 is the opponent's
    or on the board as often as any other, and seat 0's own never are."""
    game = get_game("holdem")
    state = game.rules.new_game(np.random.default_rng(3), game.rules.params())
    worlds = game.rules.sample_worlds(state, 0, 4000, np.random.default_rng(4))
    held = Counter(c for w in worlds for c in w.hole[1])
    assert not set(held) & set(state.hole[0])
    unseen = [c for c in range(52) if c not in state.hole[0]]
    counts = [held[c] for c in unseen]
    assert sum(counts) == 8000
    assert chisquare(counts).pvalue > 1e-3
    boards = Counter(c for w in worlds for c in w.board)
    assert chisquare([boards[c] for c in unseen]).pvalue > 1e-3
    assert len({w.hole[1] for w in worlds}) > 900  # not one world again and again


def test_leduc_worlds_match_the_exact_distribution() -> None:
    """Seat 1 holds one card: the other's card is each of the five others with chance
    1/5, and the public card, not yet turned, one of the four left."""
    game = get_game("leduc")
    state = game.rules.new_game(np.random.default_rng(0), game.rules.params())
    worlds = game.rules.sample_worlds(state, 1, 5000, np.random.default_rng(1))
    assert all(w.cards[1] == state.cards[1] for w in worlds)
    pairs = Counter((w.cards[0], w.cards[2]) for w in worlds)
    assert len(pairs) == 20 and all(a != b for a, b in pairs)
    assert chisquare(list(pairs.values())).pvalue > 1e-3


def _tressette_after(plays: int, seed: int):
    from batchrl.games.tressette.rules import deal, legal_cards, step

    rng = np.random.default_rng(seed)
    state = deal(rng, leader=0)
    while len(state.plays) < plays:
        legal = legal_cards(state)
        state = step(state, legal[int(rng.integers(len(legal)))])
    return state


@pytest.mark.slow
def test_tressette_worlds_are_uniform_over_the_deals_the_seat_cannot_rule_out() -> None:
    """After 28 cards (seed 1) the seat to play sees 9 cards it does not hold in three
    hands of 3: of the 1,680 deals of them, the voids and signals leave 20; the worlds
    are those 20, each as often as the others."""
    import dataclasses
    import itertools

    from batchrl.games.tressette.worlds import consistent, sample

    state = _tressette_after(28, 1)
    seat = state.current
    others = [p for p in range(4) if p != seat]
    unseen = sorted(c for p in others for c in state.hands[p])
    allowed = set()
    for a in itertools.combinations(unseen, 3):
        rest = [c for c in unseen if c not in a]
        for b in itertools.combinations(rest, 3):
            hands = list(state.hands)
            hands[others[0]], hands[others[1]] = a, b
            hands[others[2]] = tuple(c for c in rest if c not in b)
            if consistent(dataclasses.replace(state, hands=tuple(hands)), state, seat):
                allowed.add(tuple(hands[p] for p in others))
    assert len(allowed) == 20
    worlds = sample(state, seat, 4000, np.random.default_rng(2))
    drawn = Counter(tuple(w.hands[p] for p in others) for w in worlds)
    assert set(drawn) == allowed
    assert chisquare([drawn[d] for d in sorted(allowed)]).pvalue > 1e-3


def test_tressette_worlds_keep_every_void_and_signal_through_whole_hands() -> None:
    from batchrl.games.tressette.worlds import consistent, knowledge, sample

    voids = 0
    for seed in range(6):
        for plays in (9, 17, 25, 33):
            state = _tressette_after(plays, seed)
            voids += sum(len(f) for f in knowledge(state).forbidden)
            for seat in range(4):
                worlds = sample(state, seat, 5, np.random.default_rng(seed))
                assert all(consistent(w, state, seat) for w in worlds)
    assert voids > 0  # the hands played did show voids


@pytest.mark.parametrize("table", ["HEADS_UP_LIMIT", "THREE_PLAYER_LIMIT",
                                   "THREE_PLAYER_NOLIMIT"])
def test_holdem_worlds_keep_the_seat_s_cards_the_board_shown_and_the_folds(table: str) -> None:
    """On every street: the seat's hole cards, the board shown so far, the board's length
    and who folded are the state's; the other hands and the board to come are not
    always (so nothing hidden leaks through)."""
    from batchrl.games.holdem import gamedef

    game = get_game("holdem")
    params = game.rules.params(gamedef=getattr(gamedef, table))
    rng = np.random.default_rng(11)
    streets = set()
    for _ in range(40):
        state = game.rules.new_game(rng, params)
        while not game.rules.is_terminal(state):
            seat = state.current
            shown = state.game.board_cards_before(state.round)
            worlds = game.rules.sample_worlds(state, seat, 20, rng)
            for w in worlds:
                assert w.hole[seat] == state.hole[seat] and w.folded == state.folded
                assert w.board[:shown] == state.board[:shown]
                assert len(w.board) == len(state.board)
                cards = [c for h in w.hole for c in h] + list(w.board)
                assert len(set(cards)) == len(cards)
            others = [p for p in range(len(state.hole)) if p != seat]
            assert len({tuple(w.hole[p] for p in others) for w in worlds}) > 1
            streets.add(state.round)
            legal = game.rules.legal_actions(state)
            state = game.rules.step(state, int(legal[int(rng.integers(len(legal)))]))
    assert {0, 1, 2} <= streets  # random no-limit play seldom reaches the river


def test_leduc_worlds_after_the_public_card_keep_it() -> None:
    game = get_game("leduc")
    params = game.rules.params()
    state = game.rules.new_game(np.random.default_rng(4), params)
    while "/" not in state.history:
        state = game.rules.step(state, 1)  # call (check) to the second round
    worlds = game.rules.sample_worlds(state, 0, 4000, np.random.default_rng(1))
    assert all(w.cards[0] == state.cards[0] and w.cards[2] == state.cards[2] for w in worlds)
    theirs = Counter(w.cards[1] for w in worlds)
    assert set(theirs) == set(range(6)) - {state.cards[0], state.cards[2]}
    assert chisquare(list(theirs.values())).pvalue > 1e-3


def test_president_worlds_at_a_match_s_exchange_deal_the_sampled_hands() -> None:
    """At the exchange between a match's games the rules deal the game's hands again
    from ``dealt``: a world's must be its sampled hands, not the real deal."""
    game = get_game("president")
    params = game.rules.params(match=2)
    assert check_worlds(game, params, playouts=3, worlds=3) > 100
    rng = np.random.default_rng(3)
    state = game.rules.new_game(rng, params)
    while not state.exchange:
        legal = game.rules.legal_actions(state)
        state = game.rules.step(state, int(legal[int(rng.integers(len(legal)))]))
    seat = state.turn
    worlds = game.rules.sample_worlds(state, seat, 30, rng)
    assert any(w.hands != state.hands for w in worlds)
    for w in worlds:
        after = game.rules.step(w, int(game.rules.legal_actions(w)[0]))
        kept = [p for p in range(4) if p != seat and after.hands[p] == w.hands[p]]
        assert len(kept) >= 2, (w.hands, after.hands)  # only the servant's changed


def _hanabi_exact_hands(state, seat):
    """Every hand ``seat`` may hold and its chance: the identities slot by slot that its
    hints allow, each weighed by the unseen copies left of it (a deal of physical cards)."""
    from batchrl.games.hanabi.knowledge import allowed, unseen

    fits = allowed(state.known[seat]).reshape(-1, 25) > 0
    weights: Counter = Counter()

    def deal(i, pool, ids, weight):
        if i == len(fits):
            weights[tuple(ids)] += weight
            return
        for c in np.flatnonzero(fits[i] & (pool > 0)).tolist():
            copies = int(pool[c])
            pool[c] -= 1
            deal(i + 1, pool, [*ids, c], weight * copies)
            pool[c] += 1

    deal(0, unseen(state, seat).reshape(25).astype(np.int64), [], 1)
    total = sum(weights.values())
    return {hand: w / total for hand, w in weights.items()}


@pytest.mark.slow
def test_hanabi_worlds_draw_the_own_hand_from_the_exact_belief() -> None:
    """Forty moves into a game of bot2 (seed 1) the seat to act has had hints: its hand
    is one of 104 that fit them, and the worlds give each as often as the unseen copies
    say (a chi-square test against the exact chances); the deck is the rest."""
    from batchrl.games.hanabi.bots import ConventionBot
    from batchrl.games.hanabi.knowledge import unseen
    from batchrl.games.hanabi.rules import new_game, step

    game, bot = get_game("hanabi"), ConventionBot()
    state = new_game(np.random.default_rng(1))
    for _ in range(41):
        state = step(state, bot.act(state))
    seat = state.current
    exact = _hanabi_exact_hands(state, seat)
    assert len(exact) == 104 and state.hands[seat] in exact
    worlds = game.rules.sample_worlds(state, seat, 20_000, np.random.default_rng(2))
    seen = Counter(w.hands[seat] for w in worlds)
    assert set(seen) <= set(exact)
    hands = sorted(exact)
    assert chisquare([seen[h] for h in hands],
                     [exact[h] * len(worlds) for h in hands]).pvalue > 1e-3
    left = unseen(state, seat).reshape(25)
    for w in worlds[:50]:
        dealt = np.bincount([*w.hands[seat], *w.deck], minlength=25)
        assert np.array_equal(dealt, left) and w.hands[1 - seat] == state.hands[1 - seat]


def test_hanabi_worlds_weigh_a_hand_by_its_copies_not_by_the_order_slots_are_drawn() -> None:
    """Unseen: two w1, a w2 and a b1; slot 0's hints allow w1 or w2, slot 1's w1 or b1.
    Of the 7 deals of those physical cards, (w1, w1), (w1, b1) and (w2, w1) take 2 each
    and (w2, b1) one; drawing slot 0 then slot 1 without the acceptance step would give
    1/3, 1/3, 2/9, 1/9."""
    from batchrl.games.hanabi.rules import ALL, State, card, full_deck
    from batchrl.games.hanabi.worlds import sample

    w1, w2, b1 = card(0, 1), card(0, 2), card(1, 1)
    partner = (card(2, 1), card(2, 2), card(2, 3), card(2, 4), card(2, 5))
    rest = list(full_deck())
    for c in (w1, w1, w2, b1, *partner):
        rest.remove(c)
    white_low = (0b00001, 0b00011)  # white, rank 1 or 2
    ones = (0b00011, 0b00001)  # white or blue, rank 1
    state = State(hands=((w1, w2), partner), known=((white_low, ones), ((ALL, ALL),) * 5),
                  deck=(w1, b1), fireworks=(0,) * 5, discards=tuple(rest), turns_left=3,
                  clued=((True, True), (False,) * 5))
    worlds = sample(state, 0, 14_000, np.random.default_rng(0))
    seen = Counter(w.hands[0] for w in worlds)
    hands = [(w1, w1), (w1, b1), (w2, w1), (w2, b1)]
    assert set(seen) == set(hands)
    assert chisquare([seen[h] for h in hands], [4000, 4000, 4000, 2000]).pvalue > 1e-3
    assert all(sorted((*w.hands[0], *w.deck)) == sorted((w1, w1, w2, b1)) for w in worlds)


def test_hanabi_s_belief_keeps_the_true_hand_and_drops_worlds_the_partner_rules_out() -> None:
    """SPARTA's filter (`batchrl.games.hanabi.belief`): with bot2 as the partner, the
    real hand always agrees with the partner's moves, and most worlds drawn from the
    hints alone do not (a hint's focus is playable, by the convention)."""
    from batchrl.games.hanabi.belief import History
    from batchrl.games.hanabi.bots import ConventionBot
    from batchrl.games.hanabi.rules import new_game, step

    game, bot = get_game("hanabi"), ConventionBot()
    blueprint = make_player(game, "bot2", game.rules.params(), np.random.default_rng(0))
    history = History(0, blueprint)
    state, rng, kept, drawn = new_game(np.random.default_rng(7)), np.random.default_rng(8), 0, 0
    while not state.over and state.moves < 40:
        if state.current == 0:
            history.observe(state)
            if history.decisions:
                assert history.keep(state, 0, [state]) == [state]
                worlds = game.rules.sample_worlds(state, 0, 50, rng)
                kept += len(history.keep(state, 0, worlds))
                drawn += len(worlds)
            history.moved(state, bot.act(state))
            state = step(state, history.last_action)
        else:
            state = step(state, bot.act(state))
    assert len(history.decisions) >= 15 and drawn == 50 * (len(history.decisions))
    assert 0 < kept < 0.8 * drawn
    history.observe(new_game(np.random.default_rng(9)))  # another game: starts anew
    assert history.decisions == []
