import numpy as np

from batchrl.games.holdem import gamedef
from batchrl.games.holdem.bots import RandomBot, random_action
from batchrl.games.holdem.cards import cards_str
from batchrl.games.holdem.logs import write_log
from batchrl.games.holdem.rules import FOLD, deal, legal_actions, returns
from batchrl.games.holdem.simulate import play
from parsers.acpc import LoggedHand, read_acpc, read_glassfrog


def test_written_logs_read_back_to_the_same_hands(tmp_path):
    for fmt, reader, game in (("acpc", read_acpc, gamedef.HEADS_UP_LIMIT),
                              ("glassfrog", read_glassfrog, gamedef.GLASSFROG_LIMIT)):
        rng = np.random.default_rng(3)
        match = play(game, (RandomBot(rng), RandomBot(rng)), 200, rng, keep_states=True)
        played = list(zip(match.states, match.seat_payoffs().tolist(), strict=True))
        path = tmp_path / f"m.{fmt}"
        assert write_log(path, played, fmt=fmt) == 200
        hands = [r for r in reader(path.read_text().splitlines(), str(path))
                 if isinstance(r, LoggedHand)]
        assert len(hands) == 200
        for hand, (state, payoff) in zip(hands, played, strict=True):
            assert hand.betting == state.betting
            assert hand.hole == state.hole
            shown = [c for g in hand.board for c in g]
            assert shown == list(state.visible_board())
            assert hand.payoffs == tuple(payoff) == returns(state)
            assert cards_str(hand.hole[0]) in hand.cards


def test_random_bot_never_folds_for_free_and_mixes_its_actions():
    rng = np.random.default_rng(0)
    s = deal(gamedef.HEADS_UP_LIMIT, ((0, 1), (2, 3)), (4, 5, 6, 7, 8))
    s = s._replace(current=0, spent=(10, 10))  # nothing to call
    assert FOLD not in legal_actions(s)
    picks = [random_action(s, rng) for _ in range(2000)]
    assert FOLD not in picks
    # the 10% fold goes to calling: about 60% call, 40% raise
    assert 0.55 < picks.count(1) / 2000 < 0.65
