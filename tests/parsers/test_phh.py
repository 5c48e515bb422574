"""PHH hand histories (pokerkit's notation) read as hold'em hands: the dealer's betting
with raises as chips put in over the hand, the game each hand was played in, results
checked by the replay; other variants counted by name, what is not read yet refused with
its file, the other hands kept."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from fuzzing import SIX_SEATS

from batchrl.cli import main
from batchrl.games import Source
from batchrl.games.holdem.cards import parse_cards
from batchrl.games.holdem.records import LoggedHand
from batchrl.games.holdem.transitions import check_hands
from batchrl.records import BadLine, Skipped
from batchrl.store import Store
from parsers.phh import _read, phh_files, read_phh
from tests.locations import SHARED, needs

THREE = """\
# a comment, and double quotes as the historical hands have them
variant = "NT"
ante_trimming_status = true
antes = [0, 0, 0]
blinds_or_straddles = [50, 100, 0]
min_bet = 100
starting_stacks = [10000, 10000, 10000]
actions = [
  "d dh p1 Qh5c", "d dh p2 9h6h", "d dh p3 KcJh",
  "p3 cbr 210",  # the button opens
  "p1 f", "p2 cc",
  "d db 7s9cTc",
  "p2 cc", "p3 cbr 235", "p2 f",
]
hand = 7
players = ["Ann", "Bob", "Cy"]
finishing_stacks = [9950, 9790, 10260]
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_hand_in_the_dealers_notation(tmp_path: Path) -> None:
    (hand,) = read_phh(_write(tmp_path, "7.phh", THREE))
    assert isinstance(hand, LoggedHand)
    # a raise names what the seat has put in over the hand: 210, then 210 + 235
    assert hand.betting == "r210fc/cr445f"
    assert hand.hole == (parse_cards("Qh5c"), parse_cards("9h6h"), parse_cards("KcJh"))
    assert hand.board == (parse_cards("7s9cTc"),)
    assert hand.payoffs == (-50.0, -210.0, 260.0) and hand.names == ("Ann", "Bob", "Cy")
    assert hand.number == 7 and hand.game is not None
    game = hand.game
    assert (game.betting, game.num_players, game.blind, game.stack) == (
        "nolimit", 3, (50, 100, 0), (10000, 10000, 10000))
    assert game.first_player == (2, 0, 0, 0)  # after the big blind; then from p1


def test_many_hands_a_file_with_lines_other_variants_counted(tmp_path: Path) -> None:
    other = THREE.replace('"NT"', '"PO"')
    text = f"[1]\n{THREE}\n['2']\n{other}\n[3]\n{THREE.replace('p2 f', 'p2 f', 1)}"
    records = list(read_phh(_write(tmp_path, "s.phhs", text)))
    hands = [r for r in records if isinstance(r, LoggedHand)]
    skipped = [r for r in records if isinstance(r, Skipped)]
    assert [h.line for h in hands] == [1, text.splitlines().index("[3]") + 1]
    assert [s.kind for s in skipped] == ["variant 'PO'"]
    assert "not Texas hold'em (NT, FT)" in (skipped[0].message or "")


@pytest.mark.parametrize(("change", "kind", "said"), [
    (("[10000, 10000, 10000]", "[10000.000000001, 10000, 10000]"), "bad hand",
     "starting_stacks 10000.000000001: want 0 to 2,147,483,647 chips of 1e-09"),
    (("[10000, 10000, 10000]", "[1e30, 10000, 10000]"), "bad hand",
     "starting_stacks 1e+30: want an amount of chips"),
    (('"p3 cbr 210"', '"p3 cbr 2x"'), "bad hand", "action 4's amount '2x': want an amount"),
    (('"p3 cbr 210"', '"p9 cbr 210"'), "bad hand", "names seat p9; the hand has p1 to p3"),
    (('"p3 cbr 210"', '"p3 xyz"'), "bad hand", "action 4 'p3 xyz' is none PHH's"),
    (('"d dh p1 Qh5c"', '"d dh p1 Qh?c"'), "bad hand", "partly hidden"),
    (('"d dh p2 9h6h"', '"d dh p2 9h6h", "p2 sm 9h6d"'), "bad hand",
     "p2 shows 9h6d, and was dealt 9h6h"),
    (("min_bet = 100", "min_bet = 40"), "bad hand", "min_bet 40 is not the big blind 100"),
    (("10260]", "9" * 400 + "]"), "bad hand", "finishing_stacks [9950, 9790, 999"),
    (("10260]", "nan]"), "bad hand", "finishing_stacks [9950, 9790, nan]: want 3 numbers")])
def test_what_is_not_read_yet_is_refused_with_its_file(tmp_path: Path,
                                                        change: tuple[str, str], kind: str,
                                                        said: str) -> None:
    path = _write(tmp_path, "h.phh", THREE.replace(*change))
    (bad,) = read_phh(path)
    assert isinstance(bad, BadLine) and bad.kind == kind and said in str(bad), str(bad)
    assert str(bad).startswith(f"{path}: ")


def test_a_file_that_is_no_toml_names_its_line(tmp_path: Path) -> None:
    (bad,) = read_phh(_write(tmp_path, "x.phh", 'variant = "NT"\nantes = = 3\nmore = 1\n'))
    assert isinstance(bad, BadLine) and bad.line == 2 and "not a PHH file" in str(bad)
    # a number of more digits than Python converts: tomllib's ValueError, one line
    (bad,) = read_phh(_write(tmp_path, "y.phh", THREE.replace("hand = 7", "hand = " + "9" * 5000)))
    assert isinstance(bad, BadLine) and "Exceeds the limit (4300 digits)" in str(bad)


def test_results_that_disagree_with_the_rules_are_refused_the_others_stored(
        tmp_path: Path) -> None:
    folder = tmp_path / "session"
    folder.mkdir()
    _write(folder, "1.phh", THREE)
    _write(folder, "2.phh", THREE.replace("[9950, 9790, 10260]", "[9950, 9790, 10262]"))
    _write(folder, "10.phh", THREE.replace("hand = 7", "hand = 8"))
    got = CliRunner().invoke(main, ["ingest", str(folder), "--store", str(tmp_path / "s"),
                                    "--on-error", "skip"])
    assert got.exit_code == 0, got.output
    assert "phh, holdem.nolimit.3p.phh: 2 hands" in got.output
    assert "2.phh" in got.output and "logged payoffs -50|-210|262 but the rules give " \
                                      "-50|-210|260" in got.output
    store = Store.open(tmp_path / "s")
    assert store.info().episodes == 2 and set(store.names()) == {"Ann", "Bob", "Cy"}


def test_a_source_with_no_hand_read_says_why_not_which_game(tmp_path: Path) -> None:
    path = _write(tmp_path, "h.phh", THREE.replace('"NT"', '"PO"'))
    got = CliRunner().invoke(main, ["ingest", str(path), "--store", str(tmp_path / "s"),
                                    "--on-error", "skip"])
    assert got.exit_code == 1
    assert "no hand could be read (1 variant 'PO')" in got.output
    assert "glassfrog" not in got.output


PLURIBUS = SHARED / "phh" / "pluribus"


@needs(PLURIBUS)
def test_a_pluribus_session_ingests_every_result_equal_to_the_log(tmp_path: Path) -> None:
    session = PLURIBUS / "100"
    got = CliRunner().invoke(main, ["ingest", str(session), "--store", str(tmp_path / "s")])
    assert got.exit_code == 0, got.output
    files = len(list(session.glob("*.phh")))
    assert f"phh, holdem.nolimit.6p.phh: {files} hands" in got.output
    store = Store.open(tmp_path / "s")
    assert "Pluribus" in store.names() and store.info().episodes == files
    t = store.arrays()
    assert (t.player < 6).all() and t.legal is not None


@needs(SHARED / "phh" / "wsop")
def test_the_wsop_final_table_stores_every_nt_hand_and_counts_the_rest(
        tmp_path: Path) -> None:
    """Its eleven NT hands have a big blind's ante, and blinds and stacks that change
    from hand to hand: each replays in its own game, all in one store, pokerkit's
    results the same."""
    from phh_crosscheck import cross_check

    wsop = SHARED / "phh" / "wsop"
    got = CliRunner().invoke(main, ["ingest", str(wsop), "--store", str(tmp_path / "s"),
                                    "--on-error", "skip"])
    assert got.exit_code == 0, got.output
    nt = [p for p in wsop.rglob("*.phh") if "variant = 'NT'" in p.read_text()]
    assert f"phh, holdem.nolimit.5p.phh: {len(nt)} hands" in got.output and len(nt) == 11
    for variant in ("FO/8", "F7S", "FR", "PO", "N2L1D", "F2L3D"):
        assert f"(variant '{variant}')" in got.output, variant
    # its fixed-limit hands are read, and are another table's: a source of their own
    assert "skipped 7 (a hand of another game)" in got.output
    assert store_sums_are_the_logs(tmp_path / "s", nt) == 11
    check = cross_check(wsop)
    assert check.hands == 11 + 7  # its NT and FT hands
    assert check.batchrl_differs == [] and check.pokerkit_differs == []


def store_sums_are_the_logs(store_path: Path, files: list[Path]) -> int:
    """Every seat with rows: its rewards over the hand add up to the hand's result as
    its file logs it (or as the replay gives it, where it logs none); the hands
    compared."""
    frame = Store.open(store_path).to_pandas(["episode", "player", "reward", "cards"])
    sums = frame.groupby(["cards", "player"])["reward"].sum()
    checked = 0
    for path in files:
        (hand,) = [r for r in read_phh(path) if isinstance(r, LoggedHand)]
        accepted, _ = check_hands(hand.game, [hand])
        result = accepted[0][0].payoffs
        for seat, total in sums[hand.cards].items():
            assert total == pytest.approx(result[int(seat)]), (path, seat)
        checked += 1
    return checked


@needs(PLURIBUS)
def test_batchrl_replays_a_session_as_the_log_and_pokerkit_pay_it() -> None:
    """Every hand of a session: batchrl's results are the log's; pokerkit's too, but
    where a split pot's odd chip is paid in halves (``python benchmarks/phh_ingest.py
    --cross-check`` runs all 10,000 hands and names those)."""
    from phh_crosscheck import cross_check  # the tests' helper: pokerkit beside batchrl

    got = cross_check(PLURIBUS / "100")
    assert got.hands == len(list((PLURIBUS / "100").glob("*.phh"))) > 50
    assert got.batchrl_differs == []
    assert got.pokerkit_differs == []  # this session has no odd-chip split


# a big blind's ante (not trimmed: one dead pot), and a short stack all-in for less than
# the blind after its ante; a uniform ante, trimmed, with a seat all-in for less than
# the others' bets (its ante counted in the side pots)
BB_ANTE = THREE.replace("ante_trimming_status = true", "ante_trimming_status = false") \
    .replace("antes = [0, 0, 0]", "antes = [0, 100, 0]") \
    .replace("finishing_stacks = [9950, 9790, 10260]", "")
SHORT = BB_ANTE.replace("[10000, 10000, 10000]", "[10000, 150, 10000]").replace(
    '"p1 f", "p2 cc",\n  "d db 7s9cTc",\n  "p2 cc", "p3 cbr 235", "p2 f",',
    '"p1 cc",\n  "d db 7s9cTc",\n  "p1 cc", "p3 cc", "d db 2c", "p1 cc", "p3 cc",'
    ' "d db 3d", "p1 cc", "p3 cc", "p1 sm Qh5c", "p3 sm KcJh", "p2 sm 9h6h",')
UNIFORM = SHORT.replace("ante_trimming_status = false", "ante_trimming_status = true") \
    .replace("antes = [0, 100, 0]", "antes = [30, 30, 30]").replace("150, 10000]", "130, 10000]")


@pytest.mark.parametrize("text", [BB_ANTE, SHORT, UNIFORM], ids=["bb-ante", "short",
                                                                  "uniform"])
def test_antes_pay_as_pokerkit_pays_them(tmp_path: Path, text: str) -> None:
    from phh_crosscheck import cross_check

    folder = tmp_path / "hands"
    folder.mkdir()
    _write(folder, "1.phh", text)
    check = cross_check(folder)
    assert check.hands == 1 and check.batchrl_differs == [], check
    assert check.pokerkit_differs == []
    got = CliRunner().invoke(main, ["ingest", str(folder), "--store", str(tmp_path / "s")])
    assert got.exit_code == 0, got.output
    assert store_sums_are_the_logs(tmp_path / "s", [folder / "1.phh"]) == 1


def test_hidden_hole_cards_replay_and_get_no_rows(tmp_path: Path) -> None:
    folder = tmp_path / "hands"
    folder.mkdir()
    _write(folder, "1.phh", THREE.replace('"d dh p1 Qh5c"', '"d dh p1 ????"'))
    # hidden when dealt, shown at the showdown: known, so it has rows
    _write(folder, "2.phh", SHORT.replace('"d dh p2 9h6h"', '"d dh p2 ????"').replace(
        '"d db 3d", "p1 cc", "p3 cc",', '"d db 3d", "p1 cc", "p3 cc", "p2 sm 9h6h",'))
    _write(folder, "3.phh", THREE.replace('"d dh p1 Qh5c", "d dh p2 9h6h", "d dh p3 KcJh"',
                                          '"d dh p1 ????", "d dh p2 ????", "d dh p3 ????"'))
    got = CliRunner().invoke(main, ["ingest", str(folder), "--store", str(tmp_path / "s"),
                                    "--on-error", "skip"])
    assert got.exit_code == 0, got.output
    assert ": 2 hands" in got.output
    assert "1 seats of 1 hands hide their hole cards" in got.output
    assert "skipped 1 (no hole cards shown)" in got.output
    frame = Store.open(tmp_path / "s").to_pandas(["player", "cards"])
    first = frame[frame.cards.str.startswith("????")]
    assert len(first) and 0 not in set(first.player)  # p1 acted (folded): no row
    assert store_sums_are_the_logs(tmp_path / "s", [folder / "1.phh", folder / "2.phh"]) == 2


@needs(SHARED / "phh")
def test_the_historical_hands_parse() -> None:
    """Comments, double quotes, a hidden seat, cards shown before the river, and no
    result logged (the replay's, pokerkit's too); the other variants by name."""
    from phh_crosscheck import cross_check

    kinds = {}
    for path in sorted((SHARED / "phh").glob("*.phh")):
        (record,) = read_phh(path)
        kinds[path.name] = record.kind if isinstance(record, Skipped) else "NT"
    assert kinds == {"alice-carol-wikipedia.phh": "variant 'FB'",
                     "antonius-blom-2009.phh": "variant 'PO'",
                     "arieh-yockey-2019.phh": "variant 'F2L3D'", "dwan-ivey-2009.phh": "NT",
                     "phua-xuan-2019.phh": "variant 'NS'"}
    check = cross_check(SHARED / "phh", sorted((SHARED / "phh").glob("*.phh")))
    assert check.hands == 1
    assert check.batchrl_differs == [] and check.pokerkit_differs == []


@pytest.mark.parametrize("players", ["rule,random", "rule,random,random,rule,random,random"])
def test_generated_hands_load_in_pokerkit_and_ingest_back(tmp_path: Path, players: str) -> None:
    """``generate --format phh``: pokerkit replays every hand to the finishing stacks
    written (but a split pot's odd chip, which the file pays in fractions as the Pluribus
    logs do, and pokerkit to one seat), and the ingest stores them, every seat's rewards
    adding up to its result."""
    pytest.importorskip("pokerkit", reason="the round trip needs pokerkit (the test extra)")
    from phh_crosscheck import cross_check

    game = "holdem.nolimit.2p.reverse_blinds"
    if players.count(",") == 5:
        game = str(_write(tmp_path, "six.game", SIX_SEATS))
    folder = tmp_path / "hands"
    got = CliRunner().invoke(main, ["generate", "--game", "holdem", "--gamedef", game,
                                    "--players", players, "--hands", "120", "--seed", "5",
                                    "--format", "phh", "--out", str(folder)])
    assert got.exit_code == 0 and "120 hands written" in got.output, got.output
    check = cross_check(folder)
    assert check.hands == 120 and check.batchrl_differs == []
    for name in check.pokerkit_differs:  # only where the result is no whole chips
        stacks = tomllib.loads((folder / name).read_text())["finishing_stacks"]
        assert not all(float(s).is_integer() for s in stacks), name
    got = CliRunner().invoke(main, ["ingest", str(folder), "--store", str(tmp_path / "s")])
    assert got.exit_code == 0 and ": 120 hands" in got.output, got.output
    assert store_sums_are_the_logs(tmp_path / "s", sorted(folder.glob("*.phh"))) == 120


def test_what_phh_cannot_hold_is_refused_by_name(tmp_path: Path) -> None:
    got = CliRunner().invoke(main, ["generate", "--game", "holdem", "--hands", "3",
                                    "--out", str(tmp_path / "x.phhs")])
    assert got.exit_code == 1 and "is a limit game: PHH's NT is no-limit" in got.output
    got = CliRunner().invoke(main, ["generate", "--game", "holdem", "--gamedef",
                                    "holdem.nolimit.3p", "--players", "rule,rule,random",
                                    "--hands", "3", "--out", str(tmp_path / "x.phh")])
    assert got.exit_code == 1 and "a .phh file holds one hand" in got.output, got.output


CENTS = THREE.replace("[50, 100, 0]", "[0.5, 1.00, 0]").replace("min_bet = 100", "min_bet = 1") \
    .replace("[10000, 10000, 10000]", "[100, 100, 100]").replace("cbr 210", "cbr 2.10") \
    .replace("cbr 235", "cbr 2.35").replace("[9950, 9790, 10260]", "[99.5, 97.9, 102.6]")


def test_decimal_amounts_are_chips_of_the_unit_the_game_states(tmp_path: Path) -> None:
    """An online hand's cents: the source's first hand decides its chip (0.01 here),
    every amount becomes whole chips of it, and the game says what a chip is worth; a
    later hand of finer amounts is refused by name, the others kept."""
    folder = tmp_path / "online"
    folder.mkdir()
    _write(folder, "1.phh", CENTS)
    _write(folder, "2.phh", THREE)  # whole dollars: whole numbers of cents too
    _write(folder, "3.phh", CENTS.replace("cbr 2.35", "cbr 2.355")
           .replace("[99.5, 97.9, 102.6]", "[99.5, 97.9, 102.605]"))
    records = _read_source(folder)
    first, second, third = records
    assert isinstance(first, LoggedHand) and first.game is not None
    assert first.game.chip == "0.01" and first.game.blind == (50, 100, 0)
    assert first.game.stack == (10000,) * 3 and first.betting == "r210fc/cr445f"
    assert first.payoffs == pytest.approx((-50.0, -210.0, 260.0))
    assert isinstance(second, LoggedHand) and second.game is not None
    assert second.game.stack == (1_000_000,) * 3 and second.game.chip == "0.01"
    assert isinstance(third, BadLine) and third.kind == "chips finer than the source's"
    assert "amounts in 0.001s, and the source's first hand is in 0.01s" in str(third)
    got = CliRunner().invoke(main, ["ingest", str(folder), "--store", str(tmp_path / "s"),
                                    "--on-error", "skip"])
    assert got.exit_code == 0 and ": 2 hands" in got.output, got.output
    assert "in chips of 0.01" in got.output
    from batchrl.games.holdem import GAME

    schema = Store.open(tmp_path / "s").schema
    params = GAME.log.params_from_store(schema.game, schema.game_params)
    assert "a chip worth 0.01 of the logs' amounts" in GAME.log.reward_unit(params)


def _read_source(folder: Path) -> list[object]:
    from batchrl.games import FORMATS, Source

    return list(FORMATS["phh"].read(Source(folder, None, {}, None)))


def test_a_card_dealt_twice_is_refused_by_the_replay(tmp_path: Path) -> None:
    """A hand whose deal repeats a card (a bit flipped in a file) is named; it reached
    the equities before, which refuse it with a traceback."""
    path = _write(tmp_path, "1.phh", THREE.replace('"d dh p2 9h6h"', '"d dh p2 9h9h"'))
    got = CliRunner().invoke(main, ["ingest", str(path), "--store", str(tmp_path / "s"),
                                    "--on-error", "skip"])
    assert got.exit_code == 0 and "card 9h is dealt twice" in got.output, got.output
    assert ": 0 hands" in got.output


FIXED = THREE.replace('"NT"', '"FT"').replace("min_bet = 100", "small_bet = 100\nbig_bet = 200") \
    .replace("cbr 210", "cbr 200").replace("cbr 235", "cbr 100") \
    .replace("[9950, 9790, 10260]", "[9950, 9800, 10250]")


def test_fixed_limit_hands_read_into_a_limit_game(tmp_path: Path) -> None:
    """``FT``: the limit game of the hand's blinds and small and big bets (four bets and
    raises a round, as pokerkit's), a raise the dealer's ``r``; pokerkit pays it alike,
    and a raise of another size than the game's is refused by name."""
    from phh_crosscheck import cross_check

    folder = tmp_path / "limit"
    folder.mkdir()
    _write(folder, "1.phh", FIXED)
    (hand,) = read_phh(folder / "1.phh")
    assert isinstance(hand, LoggedHand) and hand.game is not None
    assert hand.betting == "rfc/crf" and hand.game.is_limit
    assert hand.game.raise_size == (100, 100, 200, 200) and hand.game.max_raises == (4,) * 4
    check = cross_check(folder)
    assert check.hands == 1 and check.batchrl_differs == [] and check.pokerkit_differs == []
    _write(folder, "2.phh", FIXED.replace("cbr 100", "cbr 150"))
    got = CliRunner().invoke(main, ["ingest", str(folder), "--store", str(tmp_path / "s"),
                                    "--on-error", "skip"])
    assert got.exit_code == 0 and "holdem.limit.3p.phh: 1 hand," in got.output, got.output
    assert "p3 raises to 150, and the fixed limit raises to 100" in got.output, got.output


@needs(SHARED / "phh" / "wsop")
def test_the_wsop_fixed_limit_hands_as_a_source_of_their_own(tmp_path: Path) -> None:
    from phh_crosscheck import cross_check

    wsop = SHARED / "phh" / "wsop"
    fixed = [p for p in wsop.rglob("*.phh") if "variant = 'FT'" in p.read_text()]
    folder = tmp_path / "ft"
    folder.mkdir()
    for path in fixed:  # a copy for the test's run, in its temporary folder
        (folder / path.name).write_bytes(path.read_bytes())
    got = CliRunner().invoke(main, ["ingest", str(folder), "--store", str(tmp_path / "s")])
    assert got.exit_code == 0 and "holdem.limit.5p.phh: 7 hands" in got.output, got.output
    check = cross_check(folder)
    assert check.hands == 7 and check.batchrl_differs == [] and check.pokerkit_differs == []
    assert store_sums_are_the_logs(tmp_path / "s", sorted(folder.glob("*.phh"))) == 7


def test_seats_all_in_from_their_antes_run_the_board_out(tmp_path: Path) -> None:
    """Every stack no more than its ante: nobody can bet, the board runs out, the best
    hand takes the antes (as pokerkit pays it). The deal looked for a seat to act forever
    before (found by a review's differential run against pokerkit)."""
    from fuzzing import time_limit
    from phh_crosscheck import cross_check

    folder = tmp_path / "hands"
    folder.mkdir()
    _write(folder, "1.phh", """variant = 'NT'
antes = [5, 5, 5]
blinds_or_straddles = [1, 2, 0]
min_bet = 2
starting_stacks = [5, 5, 5]
actions = ['d dh p1 AsKs', 'd dh p2 7c2d', 'd dh p3 QhQd', 'p1 sm AsKs', 'p2 sm 7c2d',
           'p3 sm QhQd', 'd db 2h3h4c', 'd db 9s', 'd db Td']
""")
    with time_limit(20):
        check = cross_check(folder)
    assert check.hands == 1 and check.batchrl_differs == [] and check.pokerkit_differs == []
    (hand,) = read_phh(folder / "1.phh")
    assert isinstance(hand, LoggedHand) and hand.game is not None
    ((accepted, _),), _ = check_hands(hand.game, [hand])
    assert accepted.payoffs == (-5.0, -5.0, 10.0) and hand.betting == "///"


# found by a review's differential run against pokerkit: a big blind short after its
# ante (its call and the later raises counted from what it has behind), a result logged
# as winnings with antes, antes over a short stack trimmed after what it can post
SHORT_AFTER_ANTE = """variant = 'NT'
ante_trimming_status = true
antes = [1, 1, 1]
blinds_or_straddles = [1, 2, 0]
min_bet = 2
starting_stacks = [100, 2, 100]
actions = ['d dh p1 AsKs', 'd dh p2 7c2d', 'd dh p3 QhQd', 'p3 cc', 'p1 cc', 'd db 2h3h4c',
           'p1 cbr 10', 'p3 cc', 'd db 9s', 'p1 cc', 'p3 cc', 'd db Td', 'p1 cc', 'p3 cc',
           'p1 sm AsKs', 'p3 sm QhQd', 'p2 sm 7c2d']
"""
WINNINGS = """variant = 'NT'
ante_trimming_status = true
antes = [1, 1, 1]
blinds_or_straddles = [1, 2, 0]
min_bet = 2
starting_stacks = [100, 100, 100]
actions = ['d dh p1 AsKs', 'd dh p2 7c2d', 'd dh p3 QhQd', 'p3 f', 'p1 f']
winnings = [0, 6, 0]
"""
TRIMMED_SHORT = """variant = 'NT'
ante_trimming_status = true
antes = [5, 5, 1]
blinds_or_straddles = [1, 2, 0]
min_bet = 2
starting_stacks = [2, 100, 100]
actions = ['d dh p1 7c2d', 'd dh p2 AsKs', 'd dh p3 QhQd', 'p3 cc', 'p2 cc', 'd db 2h3h4c',
           'p2 cbr 96', 'p3 cc', 'p2 sm AsKs', 'p3 sm QhQd', 'p1 sm 7c2d', 'd db 9s',
           'd db Td']
"""  # p2's ante trimmed to 2 (p1 posts 2 of its 5): all-in for 96 more on the flop


@pytest.mark.parametrize("text", [SHORT_AFTER_ANTE, WINNINGS, TRIMMED_SHORT],
                         ids=["short-after-ante", "winnings", "trimmed-short"])
def test_short_stacks_and_antes_as_pokerkit_plays_them(tmp_path: Path, text: str) -> None:
    from phh_crosscheck import cross_check

    folder = tmp_path / "hands"
    folder.mkdir()
    _write(folder, "1.phh", text)
    check = cross_check(folder)
    assert check.hands == 1 and check.batchrl_differs == [] and check.pokerkit_differs == []


def test_a_board_after_the_river_and_a_chunk_of_no_hand_are_named(tmp_path: Path) -> None:
    (bad,) = read_phh(_write(tmp_path, "x.phh", FIXED.replace(
        '"d db 7s9cTc",', '"d db 7s9cTc", "d db 2c", "d db 3c", "d db 4c",')))
    assert isinstance(bad, BadLine) and "a board dealt after the river" in str(bad)
    # the only hand refused, its table's first seat all-in from its ante: the rows of
    # no hand take their shapes from the game's names, not from a replayed betting
    text = SHORT_AFTER_ANTE.replace("[100, 2, 100]", "[1, 100, 100]")
    path = _write(tmp_path, "1.phh", text + "finishing_stacks = [1, 2, 3]\n")
    got = CliRunner().invoke(main, ["ingest", str(path), "--store", str(tmp_path / "s"),
                                    "--on-error", "skip"])
    assert got.exit_code == 0 and ": 0 hands" in got.output, got.output


def test_a_folder_reads_in_natural_order_passing_hidden_ones_and_linked_folders(
        tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    for name in ("10.phh", "2.phh", "day 2/1.phh", "day 10/1.phh", ".old/3.phh",
                 "day 2/.4.phh", "notes.txt", "01.phh", "1²2.phh"):  # ² no number
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(THREE)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "5.phh").write_text(THREE)
    (folder / "linked").symlink_to(outside)  # a folder's link: not entered
    (folder / "7.phh").symlink_to(outside / "5.phh")  # a file's: listed, then refused
    assert [str(f.relative_to(folder)) for f in phh_files(folder)] == [
        "01.phh", "1²2.phh", "2.phh", "7.phh", "10.phh", "day 2/1.phh", "day 10/1.phh"]
    records = list(_read(Source(folder, None, {}, None)))
    assert [r.line for r in records if isinstance(r, LoggedHand)] == [1] * 6
    (refused,) = [r for r in records if isinstance(r, BadLine)]
    assert "7.phh" in refused.source and "a symbolic link to outside" in str(refused)
