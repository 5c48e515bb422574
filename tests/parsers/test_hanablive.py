"""hanab.live exports: No Variant games replay through the rules; variants are refused."""

import json

import pytest
from locations import SHARED_HANABI, needs

from batchrl.games.hanabi.rules import card
from parsers.hanablive import HanabLiveError, read_hanablive, replay_live

LIVE = SHARED_HANABI
NEEDS_DATA = needs(LIVE)


def _export(tmp_path, **extra):
    # an unshuffled No Variant deck, suit by suit: red 1 1 1 2 2 3 3 4 4 5, yellow ...
    deck = [{"suitIndex": s, "rank": r} for s in range(5) for r, n in
            zip(range(1, 6), (3, 2, 2, 2, 1), strict=True) for _ in range(n)]
    data = {"players": ["a", "b"], "deck": deck, "actions": [
        {"type": 0, "target": 0, "value": 0},   # a plays deck card 0: red 1
        {"type": 3, "target": 0, "value": 1},   # b clues a's ones (rank 1)
        {"type": 4, "target": 0, "value": 1}]} | extra
    path = tmp_path / "g.json"
    path.write_text(json.dumps(data))
    return path


def test_a_small_game_replays(tmp_path):
    game = read_hanablive(_export(tmp_path))
    assert game.deck[0] == card(2, 1)  # hanab.live red is batchrl's colour 2
    states, _ = replay_live(game)
    assert len(states) == 3 and states[-1].fireworks[2] == 1 and states[-1].hints == 7


def test_variants_and_rule_options_are_refused_by_name(tmp_path):
    with pytest.raises(HanabLiveError, match="Rainbow"):
        read_hanablive(_export(tmp_path, options={"variant": "Rainbow (6 Suits)"}))
    with pytest.raises(HanabLiveError, match="deckPlays"):
        read_hanablive(_export(tmp_path, options={"deckPlays": True}))
    bad = _export(tmp_path, actions=[{"type": 1, "target": 30, "value": 0}])
    with pytest.raises(HanabLiveError, match=r"action 1 .*does not hold"):
        replay_live(read_hanablive(bad))


def test_bad_clues_and_decks_are_refused_not_misread(tmp_path):
    for move, why in (({"type": 3, "target": 1, "value": 0}, "rank 0"),
                      ({"type": 2, "target": 1, "value": 7}, "suit 7")):
        with pytest.raises(HanabLiveError, match=why):
            replay_live(read_hanablive(_export(tmp_path, actions=[move])))
    deck = [{"suitIndex": 0, "rank": 6}] * 50
    with pytest.raises(HanabLiveError, match="not the 50 cards"):
        read_hanablive(_export(tmp_path, deck=deck))


def test_an_unfinished_export_is_left_out_of_a_store_with_a_reason(tmp_path):
    from batchrl.records import BadLine
    from parsers.hanabi_sources import episodes

    # the small export ends by its game-over action after two moves: not a finished game
    out, = episodes([_export(tmp_path)], "hanablive")
    assert isinstance(out, BadLine) and out.kind == "unfinished game"
    assert "g.json" in str(out)


@NEEDS_DATA
def test_every_real_export_replays_or_is_refused_with_its_variant():
    files = sorted(LIVE.glob("hanablive_*/*.json"))
    assert files
    replayed, refused = [], []
    for path in files:
        try:
            states, _ = replay_live(read_hanablive(path))
        except HanabLiveError as exc:
            assert "variant" in str(exc) or "changes the rules" in str(exc), exc
            refused.append(path.name)
            continue
        assert states[-1].over, f"{path}: the export ends before the game does"
        replayed.append((path.name, len(states[0].hands), states[-1].score_played))
    # the No Variant games replay move by move: a 4- and a 5-player game
    assert sorted(n for _, n, _ in replayed) == [4, 5]
    assert all(0 < score <= 25 for _, _, score in replayed)
    assert "example_game.json" in refused  # No Variant, but with deckPlays


def test_a_variant_named_at_the_top_level_is_refused_by_name_too(tmp_path):
    """Some exports (hanab.live endgame fixtures) name their variant in a top-level key,
    not in options: read either way."""
    with pytest.raises(HanabLiveError, match="Funnels & Prism") as refused:
        read_hanablive(_export(tmp_path, variant="Funnels & Prism (4 Suits)"))
    assert refused.value.kind == "variant 'Funnels & Prism (4 Suits)'"
    assert read_hanablive(_export(tmp_path, variant="No Variant")).players == ("a", "b")


def test_a_folder_of_refused_exports_counts_its_refusals_per_reason(tmp_path):
    from batchrl.ingest import IngestConfig, ingest

    folder = tmp_path / "exports"
    folder.mkdir()
    made = [({"options": {"variant": "Orange (3 Suits)"}}, "o1"),
            ({"options": {"variant": "Orange (3 Suits)"}}, "o2"),
            ({"variant": "Orange (3 Suits)"}, "o3"),
            ({"options": {"deckPlays": True}}, "d1"),
            ({"players": ["a", "b", "c"]}, "p3")]
    for extra, name in made:
        _export(tmp_path, **extra).rename(folder / f"{name}.json")
    (report,) = ingest(IngestConfig(paths=(folder,), store=tmp_path / "store",
                                    on_error="skip"))
    said = str(report.error)
    assert "none of its 5 games could be read: 3 variant 'Orange (3 Suits)'" in said
    # a game of three is read now (a store holds one player count); this one stops early
    assert "1 option deckPlays (e.g. d1.json)" in said
    assert "1 unfinished game (e.g. p3.json)" in said
