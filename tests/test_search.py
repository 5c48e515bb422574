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
    assert {"holdem", "leduc"} <= set(SEARCHED)


@pytest.mark.parametrize("name", SEARCHED)
def test_every_world_is_one_its_seat_cannot_tell_from_the_state(name: str) -> None:
    assert check_worlds(get_game(name), playouts=15, worlds=4) > 100


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
    assert inner("search+worlds=4:search:model:m.npz") == "model:m.npz"
    assert parse("model:search.npz") is None
    for spec, message in [("search", "names the policy it searches over"),
                          ("search:", "names the policy it searches over"),
                          ("search+depth=3:rule", "'depth=3' is no option of search"),
                          ("search+worlds=x:rule", "worlds=x is not a whole number"),
                          ("search+worlds=0:rule", "worlds=0: at least 1")]:
        with pytest.raises(GameError, match=message):
            parse(spec)


def test_a_game_that_samples_no_worlds_is_refused_by_name() -> None:
    game = get_game("tressette")
    with pytest.raises(GameError, match="tressette cannot search yet"):
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
