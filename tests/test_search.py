"""Search at decision time (`batchrl.games.search`): the worlds a seat cannot tell apart
(every game that samples them passes the conformance check, and their distribution is
the uniform one over the unseen cards), and the search player, which plays in
``evaluate`` wherever a game's players are named, and improves on a weak blueprint."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.stats import chisquare

from batchrl.cli import main
from batchrl.games import GAMES, GameError, get_game
from batchrl.games.conformance import check_worlds
from batchrl.games.play import make_player
from batchrl.games.search import SearchOptions, SearchPlayer, inner, parse

SEARCHED = sorted(name for name, game in GAMES.items() if game.can("sample_worlds"))


def test_the_games_that_sample_worlds() -> None:
    assert {"holdem", "leduc", "tressette"} <= set(SEARCHED)


@pytest.mark.parametrize("name", SEARCHED)
def test_every_world_is_one_its_seat_cannot_tell_from_the_state(name: str) -> None:
    assert check_worlds(get_game(name), playouts=6, worlds=3) > 100


def test_holdem_worlds_deal_the_unseen_cards_uniformly() -> None:
    """Before the flop seat 0 sees its two cards: each of the other 50 is the opponent's
    or on the board as often as any other, and seat 0's own never are."""
    game = get_game("holdem")
    state = game.new_game(np.random.default_rng(3), game.params())
    worlds = game.sample_worlds(state, 0, 4000, np.random.default_rng(4))
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
    state = game.new_game(np.random.default_rng(0), game.params())
    worlds = game.sample_worlds(state, 1, 5000, np.random.default_rng(1))
    assert all(w.cards[1] == state.cards[1] for w in worlds)
    pairs = Counter((w.cards[0], w.cards[2]) for w in worlds)
    assert len(pairs) == 20 and all(a != b for a, b in pairs)
    assert chisquare(list(pairs.values())).pvalue > 1e-3


def test_search_names_parse_and_bad_ones_are_refused() -> None:
    assert parse("search:model:m.npz") == (SearchOptions(), "model:m.npz")
    assert parse("search+worlds=4+seed=2:rule") == (SearchOptions(worlds=4, seed=2), "rule")
    assert parse("search+margin=0.5+z=2:bot2") == (SearchOptions(margin=0.5, z=2.0), "bot2")
    assert parse("search+more=48+top=2:bot2") == (SearchOptions(more=48, top=2), "bot2")
    assert parse("search+depth=1:m.npz") == (SearchOptions(depth=1), "m.npz")
    assert inner("search+worlds=4:search:model:m.npz") == "model:m.npz"
    assert parse("model:search.npz") is None
    for spec, message in [("search", "names the policy it searches over"),
                          ("search:", "names the policy it searches over"),
                          ("search+width=3:rule", "'width=3' is no option of search"),
                          ("search+depth=-1:rule", "depth=-1: at least 0"),
                          ("search+worlds=x:rule", "worlds=x is not a whole number"),
                          ("search+worlds=0:rule", "worlds=0: at least 1"),
                          ("search+margin=x:rule", "margin=x is not a number"),
                          ("search+z=-1:rule", "z=-1.0: 0 or more"),
                          ("search+more=-1:rule", "more=-1: at least 0"),
                          ("search+top=0:rule", "top=0: at least 1"),
                          ("search+top=2:rule", "give its worlds too")]:
        with pytest.raises(GameError, match=message):
            parse(spec)


def test_a_game_that_samples_no_worlds_is_refused_by_name() -> None:
    without = [name for name in GAMES if name not in SEARCHED]
    if not without:
        pytest.skip("every registered game samples worlds")
    game = get_game(without[0])
    with pytest.raises(GameError, match=f"{game.name} cannot search yet"):
        make_player(game, "search:random", game.params(), np.random.default_rng(0))


def test_search_over_random_takes_most_of_the_best_response_in_leduc() -> None:
    """Exact: random play wins 0 against random, the best response 2.3736 chips a hand;
    searching over random, with random as the other's model, takes most of it (69% with
    32 worlds, 93% with 64)."""
    leduc = get_game("leduc")
    best = np.mean(leduc.exact(("best-response", "random")))
    alone = np.mean(leduc.exact(("random", "random")))
    searched = np.mean(leduc.exact(("search+worlds=32+opponent=random:random", "random")))
    assert abs(alone) < 1e-9 and best > 2
    assert searched > 0.5 * best


def test_the_search_player_batches_its_rollouts_and_plays_legal_moves() -> None:
    game = get_game("leduc")
    params = game.params()
    player = make_player(game, "search+worlds=6:random", params, np.random.default_rng(0))
    assert isinstance(player, SearchPlayer)
    rng = np.random.default_rng(5)
    states = [game.new_game(rng, params) for _ in range(50)]
    chosen = player.act(states, [game.current_player(s) for s in states])
    assert all(int(a) in game.legal_actions(s) for s, a in zip(states, chosen, strict=True))
    assert player.decisions == 50 and player.rollout_steps > 50 * 6


def test_holdem_evaluate_plays_a_search_player_the_same_on_a_seed(tmp_path) -> None:
    run = CliRunner().invoke
    args = ["evaluate", "--game", "holdem", "--hands", "40", "--seed", "3", "--duplicate"]
    first = run(main, [*args, "--players", "search+worlds=4:random,random"])
    again = run(main, [*args, "--players", "search+worlds=4:random,random"])
    alone = run(main, [*args, "--players", "random,random"])
    assert first.exit_code == 0, first.output
    line = next(x for x in first.output.splitlines() if x.startswith("all"))
    assert line in again.output and line not in alone.output


def _tressette_after(plays: int, seed: int):
    from batchrl.games.tressette.rules import deal, legal_cards, step

    rng = np.random.default_rng(seed)
    state = deal(rng, leader=0)
    while len(state.plays) < plays:
        legal = legal_cards(state)
        state = step(state, legal[int(rng.integers(len(legal)))])
    return state


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
    params = game.params(gamedef=getattr(gamedef, table))
    rng = np.random.default_rng(11)
    streets = set()
    for _ in range(40):
        state = game.new_game(rng, params)
        while not game.is_terminal(state):
            seat = state.current
            shown = state.game.board_cards_before(state.round)
            worlds = game.sample_worlds(state, seat, 20, rng)
            for w in worlds:
                assert w.hole[seat] == state.hole[seat] and w.folded == state.folded
                assert w.board[:shown] == state.board[:shown]
                assert len(w.board) == len(state.board)
                cards = [c for h in w.hole for c in h] + list(w.board)
                assert len(set(cards)) == len(cards)
            others = [p for p in range(len(state.hole)) if p != seat]
            assert len({tuple(w.hole[p] for p in others) for w in worlds}) > 1
            streets.add(state.round)
            legal = game.legal_actions(state)
            state = game.step(state, int(legal[int(rng.integers(len(legal)))]))
    assert {0, 1, 2} <= streets  # random no-limit play seldom reaches the river


def test_leduc_worlds_after_the_public_card_keep_it() -> None:
    game = get_game("leduc")
    params = game.params()
    state = game.new_game(np.random.default_rng(4), params)
    while "/" not in state.history:
        state = game.step(state, 1)  # call (check) to the second round
    worlds = game.sample_worlds(state, 0, 4000, np.random.default_rng(1))
    assert all(w.cards[0] == state.cards[0] and w.cards[2] == state.cards[2] for w in worlds)
    theirs = Counter(w.cards[1] for w in worlds)
    assert set(theirs) == set(range(6)) - {state.cards[0], state.cards[2]}
    assert chisquare(list(theirs.values())).pvalue > 1e-3


def test_search_names_are_not_model_files_but_their_inner_one_is(tmp_path, monkeypatch) -> None:
    from batchrl.games.play import absolute_player, is_model, player_file

    monkeypatch.chdir(tmp_path)
    assert not is_model("search+worlds=8:model:m.npz") and is_model("model:m.npz")
    assert str(player_file("search+worlds=8:model:m.npz")) == "m.npz"
    assert player_file("search:rule") is None
    assert absolute_player("search+worlds=8:model:m.npz") == \
        f"search+worlds=8:model:{tmp_path.resolve() / 'm.npz'}"
    assert absolute_player("search:rule") == "search:rule"
    assert absolute_player("search+opponent=o.npz:rule") == \
        f"search+opponent={tmp_path.resolve() / 'o.npz'}:rule"
    with pytest.raises(GameError, match="by its path, with no colon"):
        parse("search+opponent=model:o.npz:model:h.npz")
    with pytest.raises(GameError, match="seed=-1: at least 0"):
        parse("search+seed=-1:rule")


def test_in_a_game_of_teams_the_partner_plays_the_blueprint_in_the_rollouts() -> None:
    game = get_game("tressette")
    params = game.params()

    class Recorder:
        def __init__(self, name: str) -> None:
            self.name, self.seats = name, set()

        def act(self, states, seats):
            self.seats |= set(seats)
            return np.array([game.legal_actions(s)[0] for s in states], dtype=np.int64)

    blueprint, others = Recorder("blueprint"), Recorder("others")
    player = SearchPlayer(game, params, blueprint, others, SearchOptions(worlds=2), "s")
    state = game.new_game(np.random.default_rng(0), params)
    player.act([state], [game.current_player(state)])
    mine = game.current_player(state)
    assert blueprint.seats == {mine, (mine + 2) % 4}
    assert others.seats == {(mine + 1) % 4, (mine + 3) % 4}


def test_president_worlds_at_a_match_s_exchange_deal_the_sampled_hands() -> None:
    """At the exchange between a match's games the rules deal the game's hands again
    from ``dealt``: a world's must be its sampled hands, not the real deal."""
    game = get_game("president")
    params = game.params(match=2)
    assert check_worlds(game, params, playouts=3, worlds=3) > 100
    rng = np.random.default_rng(3)
    state = game.new_game(rng, params)
    while not state.exchange:
        legal = game.legal_actions(state)
        state = game.step(state, int(legal[int(rng.integers(len(legal)))]))
    seat = state.turn
    worlds = game.sample_worlds(state, seat, 30, rng)
    assert any(w.hands != state.hands for w in worlds)
    for w in worlds:
        after = game.step(w, int(game.legal_actions(w)[0]))
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
    worlds = game.sample_worlds(state, seat, 20_000, np.random.default_rng(2))
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
    blueprint = make_player(game, "bot2", game.params(), np.random.default_rng(0))
    history = History(0, blueprint)
    state, rng, kept, drawn = new_game(np.random.default_rng(7)), np.random.default_rng(8), 0, 0
    while not state.over and state.moves < 40:
        if state.current == 0:
            history.observe(state)
            if history.decisions:
                assert history.keep(state, 0, [state]) == [state]
                worlds = game.sample_worlds(state, 0, 50, rng)
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


def test_hanabi_evaluate_plays_a_search_bot_the_same_on_a_seed() -> None:
    run = CliRunner().invoke
    args = ["evaluate", "--game", "hanabi", "--games", "2", "--seed", "5", "--players"]
    first = run(main, [*args, "search+worlds=2+z=1:bot2,bot2"])
    again = run(main, [*args, "search+worlds=2+z=1:bot2,bot2"])
    assert first.exit_code == 0, first.output
    row = next(x for x in first.output.splitlines() if x.startswith("search"))
    assert row in again.output


def test_the_search_leaves_the_blueprint_only_for_a_gain_past_its_margin_and_its_noise() -> None:
    game = get_game("leduc")

    def chooser(**options):
        return SearchPlayer(game, game.params(), None, None, SearchOptions(**options), "s")

    values = np.array([[1.0, 1.0, 1.0, 1.0],  # the blueprint's move (action 0)
                       [2.0, 2.2, 1.8, 2.0],  # better by 1.0, 12 standard errors
                       [0.0, 0.0, 0.0, 8.0]])  # better by 1.0 too, but 0.5 of them
    legal = (0, 1, 2)
    assert chooser().choose(legal, 0, values) == 1  # the first of the best
    assert chooser(margin=1.0).choose(legal, 0, values) == 0  # not past the margin
    assert chooser(margin=0.9, z=2).choose(legal, 0, values) == 1
    noisy = values[[0, 2]]
    assert chooser().choose((0, 2), 0, noisy) == 2
    assert chooser(z=0.4).choose((0, 2), 0, noisy) == 2
    assert chooser(z=1).choose((0, 2), 0, noisy) == 0
    assert chooser(z=1).choose((0, 2), 0, noisy[:, 3:]) == 0  # one world: no error told
    assert chooser().choose((0, 2), 0, noisy[:, :3]) == 0  # worse
    assert chooser().choose((0, 2), 0, np.ones((2, 3))) == 0  # a tie: the blueprint's
    assert chooser().choose((1, 2), 0, noisy) == 2  # the blueprint's move is not legal


def test_a_second_round_races_only_the_moves_that_beat_the_blueprint() -> None:
    """``more``: the moves whose first-round mean beat the blueprint's (the ``top`` best)
    and the blueprint's own get that many new worlds, and the choice is made on them; a
    batch mixes decisions that race, that the blueprint led, and that have one move."""

    class Game:
        """Decisions of four moves (one for "single"), the blueprint's move 0; a world
        is (decision, round, index), the round told by how many are drawn (4, then 6)."""

        name = "race"
        teams = ((0,), (1,))
        drawn = 0

        def can(self, what: str) -> bool:
            return True

        def legal_actions(self, state):
            return (0,) if state == "single" else (0, 1, 2, 3)

        def sample_worlds(self, state, seat, n, rng):
            self.drawn += n
            return [(state, 1 if n == 4 else 2, k) for k in range(n)]

        def step(self, world, action):
            return (*world, action)

        def is_terminal(self, state):
            return True

        def returns(self, state):
            decision, round_, k, action = state
            if decision == "led":  # the blueprint's move leads: no second round
                return ({0: 3.0, 1: 1.0, 2: 2.0, 3: 0.0}[action], 0.0)
            # first round: 2 leads, 1 beats the blueprint, 3 trails it; second round:
            # 1 is the best, 2 falls behind the blueprint, 3 (never raced) would win
            first = {0: 1.0, 1: 1.5, 2: 2.0, 3: 0.0}
            second = {0: 1.0, 1: 1.8 + 0.01 * k, 2: 0.5, 3: 9.0}
            return ((first if round_ == 1 else second)[action], 0.0)

    class Blueprint:
        def act(self, states, seats):
            return np.zeros(len(states), dtype=np.int64)

    def player(**options):
        return SearchPlayer(Game(), None, Blueprint(), Blueprint(),
                            SearchOptions(worlds=4, **options), "s")

    batch = ["root", "single", "led", "root"]
    alone = player()
    assert alone.act(batch, [0] * 4).tolist() == [2, 0, 0, 2] and alone.contested == 0
    raced = player(more=6)
    assert raced.act(batch, [0] * 4).tolist() == [1, 0, 0, 1]
    assert raced.contested == 2 and raced.game.drawn == 3 * 4 + 2 * 6
    assert player(more=6, top=1).act(batch, [0] * 4).tolist() == [0, 0, 0, 0]  # 2 lost
    empty = player(more=6)  # a filter that keeps none of the second round's worlds
    first = empty.worlds
    empty.worlds = lambda state, seat, n=None: [] if n == 6 else first(state, seat, n)
    assert empty.act(batch, [0] * 4).tolist() == [0, 0, 0, 0]  # judged on none: its own


def test_hanabi_s_filter_is_for_blueprints_that_decide_without_drawing() -> None:
    from batchrl.games.hanabi.bots import make_bot

    rng = np.random.default_rng(0)
    assert make_bot("search:bot2", rng).filtered
    assert make_bot("search:convention", rng).filtered
    for spec in ("search:simple", "search:random", "search:search:bot2"):
        assert not make_bot(spec, rng).filtered, spec
    assert not make_bot("search:bot2", rng, players=3).filtered


def _earned(game, state, seat: int, act) -> float:
    """What ``seat``'s store rows earn from ``state`` to the end of the hand, ``act``
    playing every seat (`Game.rewards`, the rows' rewards)."""
    total = 0.0
    while not game.is_terminal(state):
        after = game.step(state, int(act([state], [game.current_player(state)])[0]))
        got = game.rewards(state, after)
        total += got[seat] if got is not None else 0.0
        state = after
    return total


@pytest.mark.parametrize("name", ["holdem", "leduc"])
def test_what_a_seat_banked_and_what_its_rows_earn_after_add_up_to_its_return(name) -> None:
    """`Game.banked` at every state of random hands: plus the rewards the seat's rows earn
    from there (its blind counted on its first decision in hold'em, nothing before the
    end in Leduc), the seat's return."""
    game = get_game(name)
    params = game.params()
    rng = np.random.default_rng(11)
    rand = make_player(game, "random", params, rng)
    checked = 0
    for _ in range(60):
        state = game.new_game(rng, params)
        path = [state]
        while not game.is_terminal(state):
            state = game.step(state, int(rand.act([state], [game.current_player(state)])[0]))
            path.append(state)
        final = game.returns(state)
        for k, s in enumerate(path[:-1]):
            for seat in range(len(final)):
                later = 0.0
                for before, after in zip(path[k:], path[k + 1:], strict=False):
                    got = game.rewards(before, after)
                    later += got[seat] if got is not None else 0.0
                assert game.banked(s, seat) + later == pytest.approx(final[seat]), (k, seat)
                checked += 1
    assert checked > 200


class _PlayedOut:
    """``rule`` as a blueprint whose value is exact: what the seat's rows earn from a
    state on when ``rule`` plays every seat to the end (deterministic)."""

    def __init__(self, game, params) -> None:
        self.game = game
        self.rule = make_player(game, "rule", params, np.random.default_rng(0))
        self.name = "played-out"

    def act(self, states, seats):
        return self.rule.act(states, seats)

    def value(self, states, seats):
        return np.asarray([_earned(self.game, s, seat, self.act)
                           for s, seat in zip(states, seats, strict=True)])


@pytest.mark.parametrize("name", ["holdem", "leduc"])
def test_a_search_to_a_depth_adds_the_blueprint_s_value_to_what_the_seat_banked(name) -> None:
    """With a value that is exact for the blueprint (what the rows earn from there on),
    rollouts cut at the searcher's next decision (``depth=1``) or the one after are worth
    what rollouts to the end are: the leaves add what the seat banked (hold'em: minus its
    chips in) to the value, and stop where they should."""
    game = get_game(name)
    params = game.params()
    blueprint = _PlayedOut(game, params)
    rng = np.random.default_rng(3)
    roots, seats = [], []
    for _ in range(40):
        state = game.new_game(rng, params)
        seat = game.current_player(state)
        for action in game.legal_actions(state):
            roots.append(game.step(state, action))
            seats.append(seat)
    full = SearchPlayer(game, params, blueprint, blueprint, SearchOptions(), "s")
    to_end = full.rollout(roots, seats)
    for depth in (1, 2):
        cut = SearchPlayer(game, params, blueprint, blueprint, SearchOptions(depth=depth), "s")
        assert np.allclose(cut.rollout(roots, seats), to_end)
        assert cut.leaves > 0 and cut.rollout_steps < full.rollout_steps


def test_a_search_to_a_depth_needs_a_blueprint_with_values_and_a_game_that_banks() -> None:
    leduc = get_game("leduc")
    with pytest.raises(GameError, match="search over a model file with values"):
        make_player(leduc, "search+depth=1:rule", leduc.params(), np.random.default_rng(0))
    tressette = get_game("tressette")
    with pytest.raises(GameError, match="tressette cannot be searched to a depth"):
        make_player(tressette, "search+depth=1:rule", tressette.params(),
                    np.random.default_rng(0))


@pytest.mark.parametrize("name", ["holdem", "leduc"])
def test_a_learned_model_searched_to_a_depth_is_valued_by_its_best_legal_q(
        name, tmp_path) -> None:
    """A model player's value (hold'em's hero, any game's model player) is the Q of the
    move it plays (its best legal one, with no support constraint), and a search over it
    to a depth plays in ``evaluate``; a policy without values (bc's) is refused."""
    run = CliRunner().invoke
    log = tmp_path / ("hands.log" if name == "holdem" else "hands.jsonl")
    for args in (["generate", "--game", name, "--hands", "300", "--seed", "4", "-o", str(log)],
                 ["ingest", str(log), "--store", str(tmp_path / "s")],
                 ["fqi", "--store", str(tmp_path / "s"), "--trees", "5", "--iters", "2",
                  "--out", str(tmp_path / "m.npz")]):
        result = run(main, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
    game = get_game(name)
    params = game.params()
    player = make_player(game, f"search+depth=1+worlds=4:model:{tmp_path / 'm.npz'}", params,
                         np.random.default_rng(0))
    assert isinstance(player, SearchPlayer)
    rng = np.random.default_rng(2)
    states = [game.new_game(rng, params) for _ in range(30)]
    seats = [game.current_player(s) for s in states]
    values = player.blueprint.value(states, seats)
    x, legal = game.encode_batch(states, seats, params)
    model = game.load_model(tmp_path / "m.npz", params)
    q = np.where(legal, model.q_values(x), -np.inf)  # no support constraint: the best Q
    assert np.allclose(values, q.max(axis=1))
    chosen = player.act(states, seats)
    assert all(int(a) in game.legal_actions(s) for s, a in zip(states, chosen, strict=True))
    assert player.leaves > 0
    result = run(main, ["learn", "bc", "--store", str(tmp_path / "s"), "--trees", "3",
                        "--out", str(tmp_path / "bc.npz")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    with pytest.raises(GameError, match="a policy without them"):  # bc has no values
        make_player(game, f"search+depth=1:model:{tmp_path / 'bc.npz'}", params,
                    np.random.default_rng(0))
    hands = ["--hands", "20"] if name == "holdem" else []  # Leduc's is exact: no hands
    result = run(main, ["evaluate", "--game", name, *hands, "--players",
                        f"search+depth=1+worlds=4:model:{tmp_path / 'm.npz'},random"],
                 catch_exceptions=False)
    assert result.exit_code == 0 and "search" in result.output, result.output


def test_the_players_help_teaches_the_search_player() -> None:
    for command in ("evaluate", "generate"):
        result = CliRunner().invoke(main, [command, "--help"])
        assert result.exit_code == 0 and "search:NAME" in result.output, command
    assert "more=48" in CliRunner().invoke(main, ["evaluate", "--help"]).output
