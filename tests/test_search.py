"""The search player (`batchrl.games.search`): its names and options, its rollouts
(batched, a second round, to a depth with `Rules.banked`), the choice it makes over
them, and its play in ``evaluate`` wherever a game's players are named. The worlds it
samples are `tests/test_worlds.py`'s."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from batchrl.cli import main
from batchrl.games import GAMES, GameError, PlayFace, get_game
from batchrl.games.play import make_player
from batchrl.games.search import SearchOptions, SearchPlayer, inner, parse


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
                          ("search+depth=-1:rule", "depth=-1: from 0 to"),
                          ("search+worlds=x:rule", "worlds=x is not a whole number"),
                          ("search+worlds=0:rule", "worlds=0: from 1 to"),
                          ("search+margin=x:rule", "margin=x is not a number"),
                          ("search+z=-1:rule", "z=-1.0: 0 or more"),
                          ("search+more=-1:rule", "more=-1: from 0 to"),
                          ("search+top=0:rule", "top=0: from 1 to"),
                          ("search+top=2:rule", "give its worlds too")]:
        with pytest.raises(GameError, match=message):
            parse(spec)


def test_a_game_that_samples_no_worlds_is_refused_by_name() -> None:
    without = [name for name, game in GAMES.items() if not game.can("sample_worlds")]
    if not without:
        pytest.skip("every registered game samples worlds")
    game = get_game(without[0])
    with pytest.raises(GameError, match=f"{game.name} cannot search yet"):
        make_player(game, "search:random", game.rules.params(), np.random.default_rng(0))


def test_search_over_random_takes_most_of_the_best_response_in_leduc() -> None:
    """Exact: random play wins 0 against random, the best response 2.3736 chips a hand;
    searching over random, with random as the other's model, takes most of it (69% with
    32 worlds, 93% with 64)."""
    leduc = get_game("leduc")
    best = np.mean(leduc.play.exact(("best-response", "random")))
    alone = np.mean(leduc.play.exact(("random", "random")))
    searched = np.mean(leduc.play.exact(("search+worlds=32+opponent=random:random", "random")))
    assert abs(alone) < 1e-9 and best > 2
    assert searched > 0.5 * best


def test_the_search_player_batches_its_rollouts_and_plays_legal_moves() -> None:
    game = get_game("leduc")
    params = game.rules.params()
    player = make_player(game, "search+worlds=6:random", params, np.random.default_rng(0))
    assert isinstance(player, SearchPlayer)
    rng = np.random.default_rng(5)
    states = [game.rules.new_game(rng, params) for _ in range(50)]
    chosen = player.act(states, [game.rules.current_player(s) for s in states])
    assert all(int(a) in game.rules.legal_actions(s) for s, a in zip(states, chosen, strict=True))
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
    with pytest.raises(GameError, match="seed=-1: from 0 to"):
        parse("search+seed=-1:rule")


def test_in_a_game_of_teams_the_partner_plays_the_blueprint_in_the_rollouts() -> None:
    game = get_game("tressette")
    params = game.rules.params()

    class Recorder:
        def __init__(self, name: str) -> None:
            self.name, self.seats = name, set()

        def act(self, states, seats):
            self.seats |= set(seats)
            return np.array([game.rules.legal_actions(s)[0] for s in states], dtype=np.int64)

    blueprint, others = Recorder("blueprint"), Recorder("others")
    player = SearchPlayer(game, params, blueprint, others, SearchOptions(worlds=2), "s")
    state = game.rules.new_game(np.random.default_rng(0), params)
    player.act([state], [game.rules.current_player(state)])
    mine = game.rules.current_player(state)
    assert blueprint.seats == {mine, (mine + 2) % 4}
    assert others.seats == {(mine + 1) % 4, (mine + 3) % 4}


def test_the_cycle_collector_waits_out_a_rollout_and_is_left_as_it_was() -> None:
    """Python's cycle collector is paused while the rollouts run (they make millions of
    states and no cycles) and left as the caller had it, even when a player fails."""
    import gc  # this test's alone: what the rollouts do to the collector

    game = get_game("leduc")
    params = game.rules.params()
    seen: list[bool] = []

    class Watcher:
        name = "watcher"

        def act(self, states, seats):
            seen.append(gc.isenabled())
            return np.array([game.rules.legal_actions(s)[0] for s in states], dtype=np.int64)

    player = SearchPlayer(game, params, Watcher(), Watcher(), SearchOptions(worlds=2), "s")
    state = game.rules.new_game(np.random.default_rng(0), params)
    assert gc.isenabled()
    player.act([state], [game.rules.current_player(state)])
    assert gc.isenabled() and seen and not any(seen[:-1])  # the last: the blueprint's own

    class Failing(Watcher):
        def act(self, states, seats):
            raise RuntimeError("a player that fails")

    failing = SearchPlayer(game, params, Failing(), Failing(), SearchOptions(worlds=2), "s")
    with pytest.raises(RuntimeError, match="fails"):
        failing.act([state], [game.rules.current_player(state)])
    assert gc.isenabled()
    gc.disable()
    try:
        player.act([state], [game.rules.current_player(state)])
        assert not gc.isenabled()  # the caller's choice kept
    finally:
        gc.enable()


@pytest.mark.slow
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
        return SearchPlayer(game, game.rules.params(), None, None, SearchOptions(**options), "s")

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

        @property
        def rules(self):  # its own rules core
            return self

        @property
        def play(self):  # the protocol's play face: the returns one state at a time
            return PlayFace(self)

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

        def current_player(self, state):
            return -1  # every world is over after one move

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
    playing every seat (`Rules.rewards`, the rows' rewards)."""
    total = 0.0
    while not game.rules.is_terminal(state):
        after = game.rules.step(state, int(act([state], [game.rules.current_player(state)])[0]))
        got = game.rules.rewards(state, after)
        total += got[seat] if got is not None else 0.0
        state = after
    return total


@pytest.mark.parametrize("name", ["holdem", "leduc"])
def test_what_a_seat_banked_and_what_its_rows_earn_after_add_up_to_its_return(name) -> None:
    """`Rules.banked` at every state of random hands: plus the rewards the seat's rows earn
    from there (its blind counted on its first decision in hold'em, nothing before the
    end in Leduc), the seat's return."""
    game = get_game(name)
    params = game.rules.params()
    rng = np.random.default_rng(11)
    rand = make_player(game, "random", params, rng)
    checked = 0
    for _ in range(60):
        state = game.rules.new_game(rng, params)
        path = [state]
        while not game.rules.is_terminal(state):
            seat = game.rules.current_player(state)
            state = game.rules.step(state, int(rand.act([state], [seat])[0]))
            path.append(state)
        final = game.rules.returns(state)
        for k, s in enumerate(path[:-1]):
            for seat in range(len(final)):
                later = 0.0
                for before, after in zip(path[k:], path[k + 1:], strict=False):
                    got = game.rules.rewards(before, after)
                    later += got[seat] if got is not None else 0.0
                assert game.rules.banked(s, seat) + later == pytest.approx(final[seat]), (k, seat)
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
    params = game.rules.params()
    blueprint = _PlayedOut(game, params)
    rng = np.random.default_rng(3)
    roots, seats = [], []
    for _ in range(40):
        state = game.rules.new_game(rng, params)
        seat = game.rules.current_player(state)
        for action in game.rules.legal_actions(state):
            roots.append(game.rules.step(state, action))
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
        make_player(leduc, "search+depth=1:rule", leduc.rules.params(), np.random.default_rng(0))
    tressette = get_game("tressette")
    with pytest.raises(GameError, match="tressette cannot be searched to a depth"):
        make_player(tressette, "search+depth=1:rule", tressette.rules.params(),
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
    params = game.rules.params()
    player = make_player(game, f"search+depth=1+worlds=4:model:{tmp_path / 'm.npz'}", params,
                         np.random.default_rng(0))
    assert isinstance(player, SearchPlayer)
    rng = np.random.default_rng(2)
    states = [game.rules.new_game(rng, params) for _ in range(30)]
    seats = [game.rules.current_player(s) for s in states]
    values = player.blueprint.value(states, seats)
    x, legal = game.play.encode_batch(states, seats, params)
    model = game.load_model(tmp_path / "m.npz", params)
    q = np.where(legal, model.q_values(x), -np.inf)  # no support constraint: the best Q
    assert np.allclose(values, q.max(axis=1))
    chosen = player.act(states, seats)
    assert all(int(a) in game.rules.legal_actions(s) for s, a in zip(states, chosen, strict=True))
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
