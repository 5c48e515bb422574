"""No-limit and three-player hold'em end to end: the simulator's logs against the parser,
pokerkit's replay of the same hands, the learner's actions and the bots."""

import json
import re
import warnings

import numpy as np
import pytest
from click.testing import CliRunner

from batchrl.cli import main
from batchrl.games.conformance import check_game
from batchrl.games.holdem import GAME, gamedef
from batchrl.games.holdem.actions import (
    NOLIMIT_NAMES,
    abstract,
    action_mask,
    concrete,
    pot_fraction,
)
from batchrl.games.holdem.evaluate import evaluate_bots
from batchrl.games.holdem.replay import replay_betting
from batchrl.games.holdem.rules import RAISE, new_hand, raise_bounds, step
from batchrl.store import Store
from parsers.acpc import LoggedHand, read_acpc

NL2, NL3, L3 = gamedef.HEADS_UP_NOLIMIT, gamedef.THREE_PLAYER_NOLIMIT, gamedef.THREE_PLAYER_LIMIT


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """Small generated logs of each kind: (game, path)."""
    out = tmp_path_factory.mktemp("nl")
    made = {}
    for game, players in ((NL2, "rule,random"), (NL3, "rule,random,random"),
                          (L3, "random,rule,random")):
        path = out / f"{game.name}.log"
        result = invoke("generate", "--game", "holdem", "--gamedef", game.name, "--players",
                        players, "--hands", 300, "--seed", 5, "-o", path)
        assert result.exit_code == 0, result.output
        made[game.name] = (game, path)
    return made


def _hands(path):
    lines = path.read_text().splitlines()
    return [r for r in read_acpc(lines, str(path)) if isinstance(r, LoggedHand)]


@pytest.mark.parametrize("name", [NL2.name, NL3.name, L3.name])
def test_generated_logs_ingest_back_and_every_seat_adds_up(logs, name, tmp_path):
    game, path = logs[name]
    hands = _hands(path)
    assert len(hands) == 300
    assert all(abs(sum(h.payoffs)) < 1e-9 for h in hands)
    result = invoke("ingest", path, "--store", tmp_path / "s")
    assert result.exit_code == 0, result.output
    frame = Store.open(tmp_path / "s").to_pandas(columns=["episode", "player", "reward"])
    sums = frame.groupby(["episode", "player"]).reward.sum()
    for (episode, seat), total in sums.items():
        assert total == pytest.approx(hands[int(episode.split(":")[1])].payoffs[seat])
    acted = sum(len({s.current for s, _ in replay_betting(game, h.betting).decisions})
                for h in hands)
    assert len(sums) == acted
    if not game.is_limit:  # the bots' raises reach every size, all-in included
        assert any(re.search(r"r\d+c/*$", h.betting) and "20000" in h.betting for h in hands)


def _pokerkit_payoffs(game, hand):
    """pokerkit's payoffs for one logged hand, or None where it cannot parse it."""
    from pokerkit import FixedLimitTexasHoldem, HandHistory, NoLimitTexasHoldem

    blinds = tuple(sorted(b for b in game.blind if b)) if game.num_players == 2 \
        else tuple(game.blind[:2])
    if game.is_limit:
        poker = FixedLimitTexasHoldem(automations=(), ante_trimming_status=True, raw_antes=0,
                                      raw_blinds_or_straddles=blinds,
                                      small_bet=game.raise_size[0], big_bet=game.raise_size[2])
        stack = 10**9
    else:
        poker = NoLimitTexasHoldem(automations=(), ante_trimming_status=True, raw_antes=0,
                                   raw_blinds_or_straddles=blinds, min_bet=game.big_blind)
        stack = game.stacks()[0]
    line = ":".join(["STATE", str(hand.number), hand.betting, hand.cards,
                     "|".join(f"{v:g}" for v in hand.payoffs), "|".join(hand.names)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parsed = list(HandHistory.from_acpc_protocol(poker, stack, line))
    if not parsed:
        return None
    *_, final = parsed[0]
    return list(final.payoffs)


@pytest.mark.parametrize("name", [NL2.name, NL3.name, L3.name])
def test_pokerkit_replays_the_same_payoffs(logs, name):
    """Cross-checked against pokerkit's ACPC parser, a second implementation of the rules.
    It splits a pot in whole chips where the ACPC dealer pays halves: those hands agree
    to within the odd chip."""
    pytest.importorskip("pokerkit")
    game, path = logs[name]
    compared = odd_chip = 0
    for hand in _hands(path):
        theirs = _pokerkit_payoffs(game, hand)
        if theirs is None:
            continue
        compared += 1
        if any(v != int(v) for v in hand.payoffs):
            odd_chip += 1
            assert sum(theirs) == 0 and max(abs(a - b) for a, b in
                                            zip(theirs, hand.payoffs, strict=True)) <= 0.5
        else:
            assert theirs == pytest.approx(hand.payoffs), hand.line
    assert compared == 300 and odd_chip < 10


def test_raise_bins_round_trip_through_concrete():
    rng = np.random.default_rng(3)
    seen = set()
    for _ in range(300):
        s = new_hand(NL2, rng)
        while not s.finished:
            mask = action_mask(s)
            legal = [a for a, ok in enumerate(mask) if ok]
            a = int(rng.choice(legal))
            move = concrete(s, a)
            if move[0] == RAISE:
                low, high = raise_bounds(s)
                assert low <= move[1] <= high
                back = abstract(s, *move)
                # a bin played at its size is read back as itself, unless the minimum
                # raise or the stack moved it
                if low < move[1] < high:
                    assert back == a, (s.betting, a, move, pot_fraction(s, move[1]))
                seen.add(back)
            s = step(s, *move)
    assert seen == set(range(2, len(NOLIMIT_NAMES)))


@pytest.mark.parametrize("game", [NL2, NL3])
def test_conformance_of_nolimit_games(game):
    check_game(GAME, GAME.rules.params(gamedef=game), playouts=30)


def test_rule_beats_random_and_the_intervals_say_so():
    for game in (NL2, NL3, L3):
        report = evaluate_bots("rule", "random", 600, seed=4, game=game, duplicate=True)
        assert report.bb_per_hand.low > 0, (game.name, report.table())
        assert set(report.by_position) == ({"small blind", "big blind"} if
                                           game.num_players == 2 else
                                           {"small blind", "big blind", "button"})


def test_a_three_player_hero_end_to_end_from_the_command_line(logs, tmp_path):
    _, path = logs[NL3.name]
    assert invoke("ingest", path, "--store", tmp_path / "s").exit_code == 0
    model = tmp_path / "m.npz"
    result = invoke("fqi", "--store", tmp_path / "s", "--trees", 4, "--iters", 2, "--out",
                    model)
    assert result.exit_code == 0, result.output
    result = invoke("evaluate", "--model", model, "--opponent", "rule", "--hands", 60,
                    "--duplicate", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["game"] == NL3.name and report["opponent"] == "rule"
    assert report["hands"] == 60 and "mbb_per_hand" in report
    # a third player named: the two others differ
    result = invoke("evaluate", "--game", "holdem", "--players", f"model:{model},rule,random",
                    "--hands", 30, "--json")
    assert json.loads(result.output)["opponent"] == "rule, random"
    result = invoke("evaluate", "--game", "holdem", "--players", "rule,random,random",
                    "--hands", 30)
    assert result.exit_code != 0 and "--gamedef" in result.output
    result = invoke("evaluate", "--game", "holdem", "--gamedef", "holdem.limit.3p",
                    "--players", f"model:{model},random,random", "--hands", 30)
    assert result.exit_code != 0 and "trained on holdem.nolimit.3p" in result.output
