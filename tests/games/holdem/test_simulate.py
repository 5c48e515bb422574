"""The simulator, the bots and the evaluation: against the rules, the parser and each other."""

import dataclasses
import itertools
import json

import numpy as np
import pytest
from click.testing import CliRunner
from fqi_runs import FQIRun, run_fqi
from search_runs import recorded_search

from batchrl.cli import main
from batchrl.evaluation import mean_ci
from batchrl.games import GameError
from batchrl.games.holdem import gamedef
from batchrl.games.holdem.actions import legal as learner_legal
from batchrl.games.holdem.bots import EquityBot, HeroBot, RandomBot, RuleBot, preflop_group
from batchrl.games.holdem.evaluate import evaluate_bots, game_of_model
from batchrl.games.holdem.logs import generate
from batchrl.games.holdem.rules import FOLD, legal_actions, returns
from batchrl.games.holdem.simulate import play
from batchrl.store import Store, StoreError
from parsers.acpc import LoggedHand, read_acpc, read_glassfrog

GAME = gamedef.HEADS_UP_LIMIT


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


class Checked:
    """Wraps a bot and checks every action it returns is legal where it is taken."""

    def __init__(self, bot, legal=legal_actions):
        self.bot, self.name, self.decisions, self.legal = bot, bot.name, 0, legal
        self.first_preflop = []  # its move where it acts first in a hand, nobody folded

    def act(self, states, seats):
        actions = self.bot.act(states, seats)
        for s, p, a in zip(states, seats, actions.tolist(), strict=True):
            assert s.current == p and a in self.legal(s)
            if s.round == 0 and not any(s.folded) and s.raises[p] == 0 and \
                    s.spent[p] < s.max_spent:
                self.first_preflop.append(a)
        self.decisions += len(states)
        return actions


def test_payoffs_are_the_rules_returns_and_seats_rotate():
    rng = np.random.default_rng(5)
    bots = (Checked(RuleBot()), Checked(RandomBot(rng)))
    m = play(GAME, bots, 600, rng, batch=128, keep_states=True)
    assert bots[0].decisions > 600 and bots[1].decisions > 600
    assert (m.seat[:, 0] == np.arange(600) % 2).all()
    by_seat = m.seat_payoffs()
    for state, row in zip(m.states, by_seat.tolist(), strict=True):
        assert state.finished and tuple(row) == returns(state)
    assert (m.payoffs.sum(axis=1) == 0).all()


def test_duplicate_plays_each_deal_twice_with_the_seats_swapped():
    rng = np.random.default_rng(8)
    m = play(GAME, (RuleBot(), RuleBot()), 400, rng, duplicate=True, keep_states=True)
    assert (m.deal == np.repeat(np.arange(200), 2)).all()
    assert (m.seat[0::2, 0] == 0).all() and (m.seat[1::2, 0] == 1).all()
    first, second = m.states[0::2], m.states[1::2]
    assert all(x.hole == y.hole and x.board == y.board for x, y in zip(first, second, strict=True))
    # the rule bot is deterministic: against itself each deal's two hands cancel exactly
    assert (m.payoffs[0::2, 0] + m.payoffs[1::2, 0] == 0).all()
    with pytest.raises(ValueError, match="multiple of 2 hands, not 3"):
        play(GAME, (RuleBot(), RuleBot()), 3, rng, duplicate=True)


def test_the_same_seed_deals_the_same_hands_to_any_pair():
    from batchrl.games.holdem.evaluate import play_bots

    def cards(match):
        return [(s.hole, s.board) for s in match.states]

    a = play_bots("rule", "random", 200, seed=4, keep_states=True)
    b = play_bots("random", "random", 200, seed=4, keep_states=True)
    c = play_bots("random", "random", 200, seed=5, keep_states=True)
    assert cards(a) == cards(b) != cards(c)
    again = evaluate_bots("random", "random", 200, seed=4)
    assert again.chips == evaluate_bots("random", "random", 200, seed=4).chips


def test_evaluate_names_the_bots_when_the_opponent_is_unknown(hero):
    result = invoke("evaluate", "--model", str(hero), "--opponent", "rnadom")
    assert result.exit_code != 0 and "rnadom" in result.output
    assert "random" in result.output and "rule" in result.output


def test_rule_bot_beats_random_by_a_wide_margin():
    r = evaluate_bots("rule", "random", 4000, seed=2, duplicate=True)
    assert r.bb_per_hand.low > 0.8, r.table()
    assert set(r.by_position) == {"small blind", "big blind"}
    assert r.chips == pytest.approx(r.bb_per_hand.mean * 4000 * 10)


def test_preflop_groups_cover_the_chart():
    combos = list(itertools.combinations(range(52), 2))
    groups = [preflop_group(c) for c in combos]
    # group 1 is AA, KK, QQ, JJ and AK: 4 * 6 + 16 combinations
    assert groups.count(1) == 40
    assert sorted(set(groups)) == [1, 2, 3, 4, 5]
    assert all(groups.count(g) < groups.count(5) for g in (1, 2, 3, 4))


def test_duplicate_interval_is_the_paired_one():
    x = np.array([3.0, -3.0, 1.0, 1.0, -2.0, 4.0])
    paired = mean_ci(x, per_unit=2)
    assert paired.n == 3 and paired.mean == pytest.approx(x.mean())
    assert paired.sd == pytest.approx(np.std([0.0, 1.0, 1.0], ddof=1))
    with pytest.raises(ValueError):
        mean_ci(x[:5], per_unit=2)


@pytest.mark.parametrize("name,reader,game", [
    ("m.log", read_acpc, gamedef.HEADS_UP_LIMIT),
    ("ROOM_90.dealer.summary", read_glassfrog, gamedef.GLASSFROG_LIMIT),
])
def test_generated_logs_ingest_back_to_the_same_hands(tmp_path, name, reader, game):
    path = tmp_path / name
    assert generate(path, ["random", "rule"], 300, seed=10) == 300
    # the hands as the simulator played them, from the same seed
    seeds = np.random.SeedSequence(10).spawn(3)
    m = play(game, (RandomBot(np.random.default_rng(seeds[1])), RuleBot()), 300,
             np.random.default_rng(seeds[0]), keep_states=True)
    hands = [r for r in reader(path.read_text().splitlines(), str(path))
             if isinstance(r, LoggedHand)]
    assert len(hands) == 300
    for hand, state, payoff in zip(hands, m.states, m.seat_payoffs().tolist(), strict=True):
        assert hand.betting == state.betting and hand.hole == state.hole
        assert [c for g in hand.board for c in g] == list(state.visible_board())
        assert hand.payoffs == tuple(payoff)
    store = tmp_path / "store"
    result = invoke("ingest", str(path), "--store", str(store))
    assert result.exit_code == 0 and "300 hands" in result.output, result.output
    names = Store.open(store).names()
    assert set(names) == {"random", "rule"} and sum(names.values()) == len(Store.open(store)
                                                                             .arrays())


def test_learning_from_one_players_decisions(tmp_path):
    path = tmp_path / "rule.log"
    generate(path, ["random", "rule"], 400, seed=3)
    store = tmp_path / "store"
    assert invoke("ingest", str(path), "--store", str(store)).exit_code == 0
    s = Store.open(store)
    everyone, randoms = s.arrays(), s.arrays(players=["random"])
    assert len(randoms) == s.names()["random"] < len(everyone)
    # the random player's rows: the seat alternates with the hand, as the log rotates it
    hand = np.array([int(e.split(":")[1]) for e in randoms.episode_ids])[randoms.episode]
    assert (randoms.player == hand % 2).all()
    with pytest.raises(StoreError, match=r"no decisions by \['alice'\].*random"):
        s.arrays(players=["alice"])
    result = invoke("info", str(store))
    assert "random (" in result.output and "rule (" in result.output


@pytest.fixture(scope="module")
def hero(tmp_path_factory):
    """A small hero trained on 1,500 random-vs-random hands, without the pot feature."""
    root = tmp_path_factory.mktemp("hero")
    log = root / "rr.log"
    generate(log, ["random", "random"], 1500, seed=10)
    assert invoke("ingest", str(log), "--store", str(root / "store")).exit_code == 0
    out, _ = run_fqi(FQIRun(root / "store", trees=10, nmin=20, iters=6, drop=("pot",),
                               freeze_after=0, out=root / "hero.npz"))
    return out


def test_a_search_decides_the_same_with_its_speed_ups_undone(hero, monkeypatch):
    """A search over the hero: the rollouts' showdowns scored in one batch, each repeated
    state asked of the model once, the bettings' features remembered and the forest's
    trees handed out a few to a task only save time. With those undone (the protocol's
    returns one state at a time, every row predicted, no betting remembered, a tree a
    task), every rollout returns the same and every move is the same. (The rules' step,
    the legal masks, the payoffs' shortcut and the one-call prediction are held to their
    one-at-a-time forms by their own tests.)"""
    # the modules whose speed-ups are undone: this test's alone
    from batchrl import forests
    from batchrl.games import PlayFace
    from batchrl.games.holdem import GAME as HOLDEM
    from batchrl.games.holdem import features
    from batchrl.learners.fqi import model

    params = HOLDEM.rules.params()
    rng = np.random.default_rng(6)
    states = []
    for k in range(12):
        s = HOLDEM.rules.new_game(rng, params)
        for _ in range(k % 6):
            if not HOLDEM.rules.is_terminal(s):
                s = HOLDEM.rules.step(s, int(rng.choice(HOLDEM.rules.legal_actions(s))))
        if not HOLDEM.rules.is_terminal(s):
            states.append(s)
    seats = [HOLDEM.rules.current_player(s) for s in states]

    spec = f"search+worlds=8+opponent=random+more=16+top=1:model:{hero}"
    fast, fast_returns, fast_player = recorded_search(HOLDEM, spec, params, states, seats)
    monkeypatch.setattr(type(HOLDEM.play), "returns_batch", PlayFace.returns_batch)
    monkeypatch.setattr(model, "DISTINCT_ROWS", 1 << 40)
    monkeypatch.setattr(features, "public_features", features._thesis_features)
    monkeypatch.setattr(forests, "CHUNK_BYTES", 1)
    slow, slow_returns, slow_player = recorded_search(HOLDEM, spec, params, states, seats)
    assert fast == slow and len(set(fast)) > 1
    assert fast_player.contested == slow_player.contested > 0  # a second round was raced
    assert len(fast_returns) == len(slow_returns) == 2 and all(
        np.array_equal(a, b) for a, b in zip(fast_returns, slow_returns, strict=True))


@pytest.mark.parametrize("game", [gamedef.HEADS_UP_LIMIT, gamedef.HEADS_UP_NOLIMIT,
                                  gamedef.THREE_PLAYER_NOLIMIT])
def test_the_bots_legal_masks_are_each_states_action_mask(game):
    """The masks the bots act on, made for a batch, are `action_mask` state by state; the
    random bot's fallback to a call is a call exactly where its choice is not legal; a
    choice out of the actions is refused."""
    # the bots' private helpers, and the one mask they must agree with
    from batchrl.games.holdem.actions import action_mask, action_names
    from batchrl.games.holdem.bots import _legal_or_call, _masks
    from batchrl.games.holdem.rules import RAISE, new_hand, raise_bounds, step

    rng = np.random.default_rng(5)
    states = []
    for _ in range(300):
        s = new_hand(game, rng)
        while True:
            states.append(s)
            if s.finished:
                break
            action = int(rng.choice(legal_actions(s)))
            size = int(rng.choice(raise_bounds(s))) if action == RAISE and \
                not game.is_limit else 0
            s = step(s, action, size)
    width = len(action_names(game))
    expected = np.array([action_mask(s) for s in states], dtype=bool).reshape(-1, width)
    assert np.array_equal(_masks(states), expected)
    assert expected[:, 0].any() and not expected[:, 0].all() and not expected[:, -1].all()
    for _ in range(3):
        choice = rng.integers(0, width, len(states))
        legal = expected[np.arange(len(states)), choice]
        assert np.array_equal(_legal_or_call(states, choice), np.where(legal, choice, 1))
    with pytest.raises(ValueError, match="out of the"):
        _legal_or_call(states[:2], np.array([1, width]))


def test_hero_acts_legally_and_beats_random(hero):
    bot = HeroBot.load(hero, GAME)
    assert "pot" not in bot.policy.feature_names and len(bot.columns) == 10
    rng = np.random.default_rng(1)
    checked = Checked(bot)
    play(GAME, (checked, RandomBot(rng)), 300, rng)
    assert checked.decisions > 300
    r = evaluate_bots(str(hero), "random", 2000, seed=33, duplicate=True)
    assert r.game == GAME.name and r.hero == "hero"
    assert r.bb_per_hand.low > 0, r.table()


def test_hero_needs_its_own_game(hero, tmp_path):
    assert game_of_model(hero) is GAME
    two_rounds = dataclasses.replace(GAME, name="two", num_rounds=2, raise_size=(10, 20),
                                     first_player=(1, 0), max_raises=(3, 4),
                                     num_board_cards=(0, 5))
    with pytest.raises(GameError, match="in other units or rules than two"):
        HeroBot.load(hero, two_rounds)


def test_a_model_plays_only_in_its_own_games_units(hero, tmp_path):
    with pytest.raises(GameError, match=r"trained on holdem\.limit\.2p\.reverse_blinds"):
        generate(tmp_path / "x.log", [str(hero), "random"], 10, game=gamedef.GLASSFROG_LIMIT)
    assert generate(tmp_path / "x.log", [str(hero), "random"], 10) == 10


def test_evaluate_command_prints_the_table_and_json(hero):
    shown = invoke("evaluate", "--model", str(hero), "--opponent", "rule", "--hands", "400")
    assert shown.exit_code == 0, shown.output
    assert "95% CI" in shown.output and "small blind" in shown.output
    data = json.loads(invoke("evaluate", "--model", str(hero), "--hands", "400",
                             "--duplicate", "--json").output)
    assert data["duplicate"] and data["bb_per_hand"]["n"] == 200
    assert data["mbb_per_hand"]["mean"] == pytest.approx(1000 * data["bb_per_hand"]["mean"])
    wrong = invoke("evaluate", "--game", "tressette", "--model", str(hero))
    assert wrong.exit_code != 0 and "not tressette" in wrong.output


def test_generate_refuses_unknown_players(tmp_path):
    result = invoke("generate", "--game", "holdem", "--players", "random,nobody", "--hands",
                    "10", "-o", str(tmp_path / "x.log"))
    assert result.exit_code != 0 and "nobody" in result.output


KEYED_SCRIPT = """
import numpy as np
from batchrl.games.holdem import gamedef
from batchrl.games.holdem.bots import RandomBot
from batchrl.games.holdem.simulate import play
rng = np.random.default_rng(7)
m = play(gamedef.HEADS_UP_LIMIT, (RandomBot(np.random.default_rng(1), keyed=True),
                                  RandomBot(np.random.default_rng(2), keyed=True)), 200, rng)
print(m.payoffs[:, 0].tolist())
"""


def test_keyed_random_bot_is_the_same_in_every_process_and_still_10_50_40():
    import os
    import subprocess
    import sys

    from locations import ROOT

    runs = [subprocess.run([sys.executable, "-c", KEYED_SCRIPT], capture_output=True, text=True,
                           cwd=ROOT, env=os.environ | {"PYTHONHASHSEED": seed}, check=True).stdout
            for seed in ("1", "2")]
    assert runs[0] == runs[1] and len(runs[0]) > 100
    # many distinct states: the marginal choices are the thesis's
    rng = np.random.default_rng(3)
    bot = RandomBot(np.random.default_rng(4), keyed=True)
    from batchrl.games.holdem.rules import deal

    fresh = [deal(GAME, ((c[0], c[1]), (c[2], c[3])), c[4:9])
             for c in (rng.permutation(52)[:9].tolist() for _ in range(3000))]
    picks = bot.act(fresh, [s.current for s in fresh])
    shares = np.bincount(picks, minlength=3) / len(picks)
    assert abs(shares[0] - 0.1) < 0.02 and abs(shares[1] - 0.5) < 0.03
    # the same state gets the same number; another seed, another one
    assert (bot.act(fresh, [s.current for s in fresh]) == picks).all()
    other = RandomBot(np.random.default_rng(5), keyed=True).act(fresh, [s.current for s in fresh])
    assert (other != picks).mean() > 0.3


SIX = gamedef.GameDef("six", "nolimit", 6, 4, (50, 100, 0, 0, 0, 0), (), (2, 0, 0, 0),
                      (255,) * 4, (0, 3, 1, 1), stack=(10000,) * 6)


def test_six_seats_rotate_over_every_seat_and_the_rule_bot_folds_its_junk():
    """A six-seat table: duplicate deals played once from each seat, the payoffs zero-sum,
    every bot's move legal; the equity bot, facing five random hands, folds most hands
    pre-flop rather than raising them (its equity against k hands, not two)."""
    rng = np.random.default_rng(4)
    rule = Checked(EquityBot(), learner_legal)
    bots = (rule,
            *(Checked(RandomBot(np.random.default_rng(k)), learner_legal) for k in range(5)))
    m = play(SIX, bots, 600, rng, duplicate=True, keep_states=True)
    assert (m.seat[:6, 0] == np.arange(6)).all()
    assert (m.deal == np.repeat(np.arange(100), 6)).all()
    assert np.allclose(m.payoffs.sum(axis=1), 0.0)
    first = np.array(rule.first_preflop)  # its first move of each hand, facing five
    assert len(first) > 400 and (first == FOLD).mean() > 0.5 and (first >= 2).mean() < 0.3


def test_six_seat_logs_generate_ingest_and_evaluate(tmp_path):
    game_file = tmp_path / "six.game"
    game_file.write_text(SIX.to_text())
    log = tmp_path / "six.log"
    players = "rule,random,random,random,random,random"
    got = invoke("generate", "--game", "holdem", "--gamedef", str(game_file), "--players",
                 players, "--hands", "60", "--out", str(log))
    assert got.exit_code == 0, got.output
    got = invoke("ingest", str(log), "--store", str(tmp_path / "s"), "--game", str(game_file))
    assert got.exit_code == 0 and "60 hands" in got.output, got.output
    got = invoke("evaluate", "--game", "holdem", "--gamedef", str(game_file), "--players",
                 "rule,random", "--hands", "60", "--duplicate")
    assert got.exit_code == 0, got.output
    assert "rule" in got.output and "seat 5" in got.output and "95% CI" in got.output
