"""Hanabi bots: legal, honest (own cards unseen), and the convention bot's strength."""


import numpy as np
from hanabi_support import midgame_states, swap_unseen_own_cards

from batchrl.games.hanabi.bots import ConventionBot, RandomBot, SimpleBot, play_games
from batchrl.games.hanabi.rules import is_terminal, legal_actions, new_game, step


def test_every_bot_plays_legal_moves_to_the_end():
    rng = np.random.default_rng(2)
    for bots in [(RandomBot(rng), SimpleBot(rng)), (ConventionBot(), ConventionBot())]:
        s = new_game(rng)
        while not is_terminal(s):
            a = bots[s.current].act(s)
            assert a in legal_actions(s)
            s = step(s, a)


def test_a_bot_never_looks_at_its_own_cards():
    rng = np.random.default_rng(3)
    bot = ConventionBot()
    checked = 0
    for s in midgame_states(rng, bot, 40, 40):
        swapped = swap_unseen_own_cards(s)
        if swapped is None:
            continue
        assert bot.act(swapped) == bot.act(s)
        checked += 1
    assert checked >= 10


def test_the_convention_bot_scores_at_least_17_in_two_player_self_play():
    scores = play_games((ConventionBot(), ConventionBot()), 200, np.random.default_rng(5))
    assert scores.mean() >= 17, scores.mean()
    simple = play_games((SimpleBot(np.random.default_rng(1)), SimpleBot(np.random.default_rng(2))),
                        200, np.random.default_rng(5))
    assert simple.mean() < scores.mean()


def test_decide_names_the_rule_behind_each_of_the_convention_bots_moves():
    rng = np.random.default_rng(6)
    bot, used = ConventionBot(), set()
    for _ in range(20):
        s = new_game(rng)
        while not is_terminal(s):
            action, rule = bot.decide(s)
            assert rule in ConventionBot.RULES and action in legal_actions(s)
            if rule.startswith("play"):
                assert action < 5
            elif rule.startswith("discard"):
                assert 5 <= action < 10
            else:
                assert action >= 10
            used.add(rule)
            s = step(s, action)
    assert {"play focus", "hint playable", "save", "discard chop"} <= used


def test_the_teacher_agrees_with_itself_and_a_simpler_bot_does_not():
    from batchrl.games.hanabi.evaluate import agreement

    itself = agreement(("bot2", "bot2"), games=10, seed=2)
    assert itself.agree == itself.moves and sum(itself.misplays.values()) == 0
    simple = agreement(("simple", "bot2"), games=10, seed=2)
    assert sum(simple.agree.values()) < sum(simple.moves.values())
    assert "play focus" in simple.moves and simple.table().count("\n") == len(simple.moves)


def test_players_that_draw_nothing_play_the_same_games_in_lockstep(tmp_path) -> None:
    """A tree model (fqi, bc) and the convention bot draw nothing, so their games are played in
    lockstep, each bot asked once a step for every game: the same games, move for
    move, as one game after the other (the figures published from these seeds stand)."""
    from click.testing import CliRunner

    from batchrl.blocks import block_entropy
    from batchrl.cli import main
    from batchrl.games.hanabi import evaluate
    from batchrl.games.hanabi.bots import make_bot, play_game

    run = CliRunner().invoke
    logs, store = tmp_path / "logs", tmp_path / "store"
    assert run(main, ["generate", "--game", "hanabi", "--players", "bot2,bot2", "--games",
                      "30", "-o", str(logs)]).exit_code == 0
    assert run(main, ["ingest", str(logs), "--store", str(store)]).exit_code == 0
    made = run(main, ["learn", "bc", "--store", str(store), "--trees", "5", "--out",
                      str(tmp_path / "bc.npz")])
    assert made.exit_code == 0, made.output
    for specs in ((f"model:{tmp_path / 'bc.npz'}", "bot2"), ("bot2", "bot2")):
        lockstep = evaluate.play_block(specs, 7, 0, 0, 25)
        deals = np.random.default_rng(block_entropy([7, 1], 0))
        bots = [make_bot(s, np.random.default_rng(0)) for s in specs]
        one_by_one = [play_game(bots, deals)[0][-1].score_played for _ in range(25)]
        assert lockstep[:, 0].tolist() == one_by_one
    assert lockstep[:, 0].std() > 0  # games that differ: the deals are the block's


def test_three_to_five_players_evaluate_and_the_convention_bot_beats_simple() -> None:
    """Hanabi's rules and bots play 2 to 5: ``evaluate`` takes a group of each size (a
    hint may then go past the next seat: the convention bot reads its target from it)."""
    from batchrl.games.hanabi.evaluate import evaluate_pairs

    for n in (3, 4, 5):
        bot2, simple = evaluate_pairs([("bot2",) * n, ("simple",) * n], 40, seed=n)
        assert bot2.played.mean.low > simple.played.mean.high
        assert bot2.players == ("bot2",) * n and bot2.games == 40
