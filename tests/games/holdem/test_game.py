"""Hold'em through the Game protocol: its options, its store side, its rewards, and the
model loader."""

import numpy as np
import pytest
from sklearn.dummy import DummyRegressor

from batchrl.games import FORMATS, GAMES, GameError, SourceContext, game_for, sniff_format
from batchrl.games.holdem import GAME, HoldemParams, gamedef
from batchrl.games.holdem.bots import HeroBot
from batchrl.games.holdem.gamedef import GameDef
from batchrl.games.holdem.records import LoggedHand
from batchrl.learners.fqi.model import ModelArtifact, QFunction
from batchrl.records import Skipped
from batchrl.store import RowsBatch
from parsers.acpc import read_acpc, read_glassfrog

HU = gamedef.HEADS_UP_LIMIT


def test_the_registry_knows_holdem_and_its_formats(sample_log, sample_summary):
    assert GAMES["holdem"] is GAME and GAME.name == "holdem" and GAME.rules.unit == "hands"
    assert GAME.play.default_count == 3000 and GAME.play.bots == ("random", "rule")
    assert GAME.learn.recommended["fqi"] == {"trees": 100, "nmin": 20, "iters": 11}  # the thesis's
    assert {FORMATS[f].game for f in GAME.play.log_formats} == {"holdem"}
    assert sniff_format(sample_log) is FORMATS["acpc"]
    assert sniff_format(sample_summary) is FORMATS["glassfrog"]
    assert FORMATS["acpc"].description.startswith("an ACPC dealer log")


def test_stores_name_their_game_definition():
    for game in (HU, gamedef.GLASSFROG_LIMIT):
        assert game_for(game.name, game.params()) is GAME
        assert GAME.log.params_from_store(game.name, game.params()) == HoldemParams(game)
    assert not GAME.log.owns("sette-mezzo", {"limit": 5.0})
    assert not GAME.log.owns("tressette", {"reward": "points", "suits": "dealt"})
    custom = GAME.log.params_from_store("wvholdem.limit.2p", {**HU.params(), "num_rounds": 2,
                                                           "raise_size": [10, 20],
                                                           "first_player": [1, 0],
                                                           "max_raises": [3, 4],
                                                           "num_board_cards": [0, 5]})
    assert custom.gamedef.name == "wvholdem.limit.2p" and custom.gamedef.num_rounds == 2
    assert GAME.log.schema(custom).feature_names[-2:] == ("bet_round0", "bet_round1")
    # params name a game definition by name, as --game does
    assert GAME.rules.params(gamedef="glassfrog.limit.2p").gamedef is gamedef.GLASSFROG_LIMIT
    with pytest.raises(GameError, match="no game file 'nope'"):
        GAME.rules.params(gamedef="nope")


def test_the_options_and_what_prepare_makes_of_them(tmp_path):
    flags = {o.name: dict(o.flags) for o in GAME.cli.options}
    assert flags == {"gamedef": {"ingest": "--game", "generate": "--gamedef",
                                 "evaluate": "--gamedef"},
                     "pv": {"ingest": "--pv/--no-pv"}, "duplicate": {"evaluate": "--duplicate"}}
    assert GAME.log.prepare("ingest", {}) == {}
    assert GAME.log.prepare("ingest", {"gamedef": "glassfrog.limit.2p"})["gamedef"] \
        is gamedef.GLASSFROG_LIMIT
    assert GAME.log.prepare("ingest", {"gamedef": "holdem.limit.3p"})["gamedef"] \
        is gamedef.THREE_PLAYER_LIMIT
    four = tmp_path / "four.game"
    four.write_text(gamedef.THREE_PLAYER_LIMIT.to_text().replace("numPlayers = 3",
                                                                 "numPlayers = 4")
                    .replace("blind = 5 10 0", "blind = 5 10 0 0"))
    # four seats become transitions (PHH's six-seat hands do); three hole cards do not
    assert GAME.log.prepare("ingest", {"gamedef": str(four)})["gamedef"].num_players == 4
    omaha = tmp_path / "three.game"
    omaha.write_text(gamedef.THREE_PLAYER_LIMIT.to_text().replace("numHoleCards = 2",
                                                                  "numHoleCards = 3"))
    with pytest.raises(GameError, match=r"three\.game: .*3 hole cards \(want 2\)"):
        GAME.log.prepare("ingest", {"gamedef": str(omaha)})
    with pytest.raises(GameError, match=r"no game file 'nothing\.game' and no built-in"):
        GAME.log.prepare("ingest", {"gamedef": "nothing.game"})
    split = tmp_path / "split.game"
    split.write_text("GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 3\nblind = 10 5\n"
                     "raiseSize = 10 20 20\nfirstPlayer = 2 1 1\nnumBoardCards = 0 2 3\n"
                     "END GAMEDEF\n")
    with pytest.raises(GameError, match="pv needs 0, 3, 4 or 5"):
        GAME.log.prepare("ingest", {"gamedef": str(split)})
    prepared = GAME.log.prepare("ingest", {"gamedef": str(split), "pv": False})
    assert prepared["gamedef"].name == "split"


def _plan(path, options=None, fmt="acpc"):
    reader = read_acpc if fmt == "acpc" else read_glassfrog
    records = reader(path.read_text().splitlines(), str(path))
    context = SourceContext(path, FORMATS[fmt], "0123456789abcdef:", options or {}, [])
    return GAME.log.open_source(records, context), context


def test_a_run_of_another_game_appended_is_skipped_and_a_short_one_noted(sample_log,
                                                                           tmp_path):
    lines = sample_log.read_text().splitlines()
    lines += ["# name/game/hands/seed other holdem.nolimit.2p.reverse_blinds.game 5 0",
              "STATE:0:r300c/cc/cc/cc:5d5c|9hQd/8dAs8s/4h/6d:300|-300:a|b",
              "STATE:1:f:5d5c|9hQd:50|-50:a|b"]
    path = tmp_path / "appended.log"
    path.write_text("\n".join(lines) + "\n")
    plan, context = _plan(path)
    assert plan.variant == HU.name and plan.unit == "hands"
    assert plan.schema == GAME.log.schema(GAME.rules.params())
    assert context.notes == [f"game {HU.name} from the header"]
    records = list(plan.records)
    hands = [r for r in records if isinstance(r, LoggedHand)]
    skipped = [r for r in records if isinstance(r, Skipped)]
    assert len(hands) == 500 and records[-3:] == skipped
    assert skipped[0].kind == "another game appended" and skipped[0].message == (
        f"{path}, line 506: a run of 'holdem.nolimit.2p.reverse_blinds.game' appended to a "
        f"log of {HU.name}: its hands are left out")
    assert skipped[1:] == [Skipped("another game appended")] * 2
    assert context.notes[1:] == ["the run from line 506 promises 5 hands and holds 2: the "
                                 "match was cut off"]
    batch = plan.rows(hands[:10])
    assert isinstance(batch, RowsBatch) and batch.records == 10 and not batch.rejected
    assert sorted(batch.rows.audit) == ["betting", "cards", "name"]
    assert batch.rows.state.shape == (len(batch.rows), len(plan.schema.feature_names))


def test_a_forced_game_keeps_every_run_and_without_pv_leaves_it_out(sample_log, tmp_path):
    plan, context = _plan(sample_log, {"gamedef": HU.name, "pv": False})
    assert context.notes == [f"game {HU.name} as given ({HU.description})"]
    assert "pv" not in plan.schema.feature_names
    assert sum(isinstance(r, LoggedHand) for r in plan.records) == 500


ANTES = [  # six seats: a big blind's dead ante, short stacks; trimmed uniform antes
    GameDef("ante.bb", "nolimit", 6, 4, (50, 100, 0, 0, 0, 0), (), (2, 0, 0, 0), (255,) * 4,
            (0, 3, 1, 1), stack=(10000, 90, 400, 10000, 130, 2000), ante=(0, 100, 0, 0, 0, 0)),
    GameDef("ante.all", "nolimit", 6, 4, (50, 100, 0, 0, 0, 0), (), (2, 0, 0, 0),
            (255,) * 4, (0, 3, 1, 1), stack=(10000, 90, 400, 10000, 130, 2000),
            ante=(20,) * 6, ante_trimming=True)]


@pytest.mark.parametrize("game", [None, *ANTES], ids=["limit", "bb-ante", "uniform-ante"])
def test_rewards_add_up_to_the_returns_and_follow_the_stores_model(game):
    rng = np.random.default_rng(3)
    params = GAME.rules.params() if game is None else GAME.rules.params(gamedef=game)
    for _ in range(300):
        state = GAME.rules.new_game(rng, params)
        totals = np.zeros(state.game.num_players)
        while not GAME.rules.is_terminal(state):
            legal = GAME.rules.legal_actions(state)
            after = GAME.rules.step(state, legal[int(rng.integers(len(legal)))])
            totals += GAME.rules.rewards(state, after)
            state = after
        assert totals.tolist() == pytest.approx(GAME.rules.returns(state))
        assert sum(GAME.rules.returns(state)) == pytest.approx(0.0, abs=1e-6)  # antes too
        assert state.pot == sum(state.spent) + sum(min(a, s) for a, s in zip(
            state.game.posted_antes(), state.game.stacks(), strict=True))


def test_the_thesis_hands_rewards_follow_the_stores_model():
    # the thesis's hand (Fig. 4.5) in ACPC units: the small blind completes (blind counted:
    # -10), the big blind checks (its blind: -10), the flop bet and call, ...
    state = gamedef_deal("8sAs", "Ac2h", "8h4h2s5c6s")
    seen = []
    for letter in "cc/rc/cc/crrrc".replace("/", ""):
        after = GAME.rules.step(state, "fcr".index(letter))
        seen.append(GAME.rules.rewards(state, after))
        state = after
    assert seen[:4] == [(0, -10), (-10, 0), (-10, 0), (0, -10)]
    # the river's last call: the big blind puts in 20 and each seat takes its pot share
    assert seen[-1] == (-20 + 160, 0)


def gamedef_deal(big_blind, small_blind, board):
    from batchrl.games.holdem.cards import parse_cards
    from batchrl.games.holdem.rules import deal

    return deal(HU, (parse_cards(big_blind), parse_cards(small_blind)), parse_cards(board))


def _artifact(tmp_path, name, game, game_params, features, actions):
    models = [DummyRegressor(strategy="constant", constant=0.0).fit([[0] * (len(features) + 1)],
                                                                    [0])]
    meta = {"game": game, "game_params": game_params, "feature_names": list(features),
            "action_names": list(actions)}
    return ModelArtifact(QFunction(models, False, len(actions)), meta).save(tmp_path / name)


def test_load_model_refuses_other_games_models(tmp_path):
    sette = _artifact(tmp_path, "sette.npz", "sette-mezzo", {"limit": 5.0},
                      ("total", "cards"), ("stick", "hit"))
    with pytest.raises(GameError, match=r"sette\.npz was trained on sette-mezzo, not holdem"):
        GAME.load_model(sette)
    tressette = _artifact(tmp_path, "tre.npz", "tressette", {"reward": "points"},
                          ("trick",), tuple(f"card{i}" for i in range(40)))
    with pytest.raises(GameError, match=r"tre\.npz was trained on tressette, not holdem"):
        GAME.load_model(tressette)
    with pytest.raises(GameError, match=r"tre\.npz was trained on tressette, not holdem"):
        GAME.play.evaluate([(f"model:{tressette}", "random")], 10, 0, {})


def test_a_model_without_pv_plays_without_computing_it(tmp_path):
    names = GAME.rules.feature_names(HoldemParams(HU, pv=False))
    path = _artifact(tmp_path, "nopv.npz", HU.name, HU.params(), names[:3],
                     ("fold", "call", "raise"))
    model = GAME.load_model(path)
    assert model.params == HoldemParams(HU, pv=False) and model.columns.tolist() == [0, 1, 2]
    assert not HeroBot(model).pv
    # asked to play with pv, it still plays on the features it has
    assert GAME.load_model(path, GAME.rules.params()).params.pv is False
    with pytest.raises(GameError, match="in other units or rules than glassfrog"):
        GAME.load_model(path, GAME.rules.params(gamedef=gamedef.GLASSFROG_LIMIT))
    with_pv = _artifact(tmp_path, "pv.npz", HU.name, HU.params(), ("pv", "pot"),
                        ("fold", "call", "raise"))
    bound = GAME.load_model(with_pv, HoldemParams(HU, pv=False))
    assert bound.params.pv and bound.columns.tolist() == [5, 6]


def test_generate_and_evaluate_through_the_protocol(tmp_path):
    out = tmp_path / "rr.dealer.summary"
    line = GAME.play.generate(out, ("random", "rule"), 40, 5, {})
    assert line == f"40 hands written to {out}"
    assert sniff_format(out) is FORMATS["glassfrog"]
    assert _plan(out, fmt="glassfrog")[0].variant == gamedef.GLASSFROG_LIMIT.name
    forced = tmp_path / "forced.log"  # a summary, in the ACPC game's units
    GAME.play.generate(forced, ("random", "rule"), 40, 5, {"format": "glassfrog",
                                                      "gamedef": HU.name})
    assert sniff_format(forced) is FORMATS["glassfrog"]
    assert _plan(forced, fmt="glassfrog")[0].variant == HU.name
    with pytest.raises(GameError, match="'nobody' is neither a bot"):
        GAME.play.generate(tmp_path / "x.log", ("random", "nobody"), 10, 0, {})
    report = GAME.play.evaluate([("rule", "random")], 200, 1, {"duplicate": True})
    assert report.hands == 200 and report.duplicate and report.as_dict()["hero"] == "rule"
    assert "95% CI" in report.table()
    with pytest.raises(GameError, match="seats 2 to 10 players, not 1"):
        GAME.play.evaluate([("rule",)], 10, 1, {})


def test_models_play_from_a_path_with_or_without_the_prefix(tmp_path):
    path = _artifact(tmp_path, "m.npz", HU.name, HU.params(), ("pot",),
                     ("fold", "call", "raise"))
    for spec in (str(path), f"model:{path}"):
        report = GAME.play.evaluate([(spec, "random")], 20, 2, {})
        assert report.hero == "m" and report.game == HU.name
