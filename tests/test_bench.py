"""``batchrl bench``: every learner on every game's datasets, normalized between random
play (0) and the game's reference (100), each row with its interval; built datasets and
finished rows are kept, so a rerun goes on where it stopped; a learner registered
elsewhere is benchmarked by naming it."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from batchrl.cli import main
from batchrl.games import GAMES
from batchrl.learners import register_learner, unregister_learner
from batchrl.play.bench import (
    DEFAULT_LEARNERS,
    BenchError,
    LearnerSpec,
    Row,
    normalized,
    split_learners,
    table,
)

ROW_FIELDS = {"game", "dataset", "learner", "seed", "score", "score_ci", "normalized",
              "normalized_ci", "cpu_seconds"}


def invoke(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


# --quick's sizes over this: the module's grids check what the benchmark does, not how well
# the learners learn (--quick's own time is measured whole: docs/speed.md)
SMALLER = 4


@pytest.fixture(scope="module", autouse=True)
def smaller_grid() -> Iterator[None]:
    """Every game's quick datasets and scoring games a quarter of --quick's."""
    with pytest.MonkeyPatch.context() as patch:
        for game in GAMES.values():
            bench = game.bench
            patch.setattr(game, "bench", dataclasses.replace(
                bench, games=(bench.games[0], max(1, bench.games[1] // SMALLER)),
                datasets=tuple(dataclasses.replace(d, quick=max(1, d.quick // SMALLER))
                               for d in bench.datasets)))
        yield


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict]:
    """The whole grid, quick (at `smaller_grid`'s sizes), one training seed: every game
    and every tier."""
    root = tmp_path_factory.mktemp("bench")
    out, cache = root / "out", root / "cache"
    result = invoke("bench", "--quick", "--seeds", "1", "--json", "-o", out, "--cache", cache,
                    "-j", "1")
    assert result.exit_code == 0, result.output
    return out, cache, json.loads(result.stdout)


@pytest.mark.slow
def test_the_quick_grid_scores_every_learner_on_every_game_and_tier(quick) -> None:
    out, cache, document = quick
    every = document["rows"]
    rows = [r for r in every if not r["transfer"]]  # each against its logs' own players
    benched = {(name, d.tier) for name, g in GAMES.items() for d in g.bench.datasets}
    assert {(r["game"], r["dataset"]) for r in rows} == benched
    assert {"holdem", "hanabi", "president", "sette-mezzo", "tressette"} <= \
        {game for game, _ in benched}
    learned = [r for r in rows if r["seed"] is not None]
    assert {(r["game"], r["dataset"], r["learner"]) for r in learned} == \
        {(g, d, learner) for g, d in benched for learner in DEFAULT_LEARNERS}
    assert DEFAULT_LEARNERS == ("fqi", "fqi:support=0.3", "iql", "bc")
    for row in rows:
        assert set(row) >= ROW_FIELDS, row
        assert np.isfinite(row["score"]) and row["score_ci"] >= 0, row
    for r in learned:
        assert r["cpu_seconds"] > 0 and r["model"] == "", r  # scored, then removed
        assert np.isfinite(r["normalized"]) and r["normalized_ci"] >= 0, r
    for game, tier in benched:  # the baselines are 0 and 100 by construction
        base = [r for r in rows if (r["game"], r["dataset"]) == (game, tier)
                and r["seed"] is None]
        assert [r["learner"] for r in base] == ["random", GAMES[game].bench.reference]
        assert [round(r["normalized"], 9) for r in base] == [0.0, 100.0]
    exact = [r for r in rows if r["game"] == "sette-mezzo"]
    assert all(r["exact"] and r["score_ci"] == 0 for r in exact)
    optimal = next(r for r in exact if r["learner"] == "optimal")["score"]
    assert all(r["score"] <= optimal + 1e-12 for r in exact)  # nothing beats the optimum
    # fqi:support=0.3 and bc against fqi on each dataset
    assert {(p["game"], p["dataset"], p["learner"], p["versus"]) for p in document["paired"]
            if not p["transfer"]} == \
        {(g, d, learner, "fqi") for g, d in benched for learner in DEFAULT_LEARNERS[1:]}
    assert not list((out / "models").glob("*"))  # no --keep-models
    assert (out / "bench.json").is_file() and (out / "bench.png").stat().st_size > 1000
    transfer = [r for r in every if r["transfer"] and r["seed"] is not None]
    assert len((out / "results.jsonl").read_text().splitlines()) == \
        len(learned) + len(transfer)
    assert len(list((cache / "bench").glob("*/*/store/store.json"))) == len(benched)


@pytest.mark.slow
def test_each_dataset_is_scored_against_the_players_of_its_logs(quick) -> None:
    """D4RL's convention: a policy learned from a dataset takes the first seat against
    the players its logs were played against (hold'em's random logs against random
    play, Leduc's expert logs against `rule`, Tressette's other team); where the game's
    standard opponents are others, the transfer table scores it against them too, with
    its own baselines; Leduc's learned rows give their exact exploitability."""
    _, _, document = quick
    rows = document["rows"]

    def opponents(game: str, tier: str, transfer: bool) -> set[str]:
        return {r["opponents"] for r in rows if (r["game"], r["dataset"], r["transfer"])
                == (game, tier, transfer)}

    assert opponents("holdem", "random", False) == {"random"}
    assert opponents("holdem", "expert", False) == {"rule"}
    assert opponents("holdem", "random", True) == {"rule"}
    assert opponents("holdem", "expert", True) == set()  # the same players: no transfer
    assert opponents("leduc", "expert", False) == {"rule"}
    assert opponents("leduc", "expert", True) == {"random"}
    assert opponents("tressette", "mixed", False) == {"rule~0.3"}
    assert opponents("president", "mixed", False) == {"random,rule,random"}
    assert opponents("hanabi", "mixed", False) == {"simple"}
    assert opponents("sette-mezzo", "random", False) == {""}
    for game, tier in {(r["game"], r["dataset"]) for r in rows if r["transfer"]}:
        base = [r for r in rows if (r["game"], r["dataset"]) == (game, tier)
                and r["transfer"] and r["seed"] is None]
        assert [round(r["normalized"], 9) for r in base] == [0.0, 100.0]
    # the best response to `rule` is not the best response to random play
    best = {r["transfer"]: r["score"] for r in rows if (r["game"], r["dataset"], r["learner"])
            == ("leduc", "expert", "best-response")}
    assert best[False] != best[True]
    learned = [r for r in rows if r["seed"] is not None]
    assert all((r["exploitability"] is not None) == (r["game"] == "leduc") for r in learned)
    assert all(r["exploitability"] > 0 for r in learned if r["game"] == "leduc")  # no Nash
    shown = table([Row(**r) for r in rows], document["paired"])
    assert "\ntransfer: the same policies against each game's standard opponents" in shown
    assert "leduc        expert (rule)" in shown and "expl. " in shown


@pytest.mark.slow
def test_a_rerun_goes_on_where_it_stopped_and_redoes_a_cut_row(quick) -> None:
    """Every row is kept as it lands: run again, nothing is learned again; a row cut by a
    kill is learned again and the rest kept."""
    out, cache, document = quick
    results = out / "results.jsonl"
    kept = results.read_text().splitlines()
    cut = next(n for n, line in enumerate(kept) if '"sette-mezzo"' in line)
    results.write_text("\n".join([*kept[:cut], kept[cut][:40], *kept[cut + 1:]]) + "\n")
    args = ("bench", "--quick", "--seeds", "1", "--games", "sette-mezzo,holdem", "-o", out,
            "--cache", cache, "-j", "1")
    again = invoke(*args)
    assert again.exit_code == 0, again.output
    assert f"{results}:{cut + 1}: not a result" in again.output
    trained = [line for line in again.output.splitlines() if "trained in" in line]
    assert len(trained) == 1 and "sette-mezzo/" in trained[0], again.output
    assert "generating" not in again.output  # the datasets are the cache's
    third = invoke(*args)
    assert "trained in" not in third.output and "not a result" not in third.output
    table = [line for line in third.output.splitlines() if line.startswith("sette-mezzo")]
    before = {(r["dataset"], r["learner"]): r["score"] for r in document["rows"]
              if r["game"] == "sette-mezzo"}
    for line in table:  # the same scores: the same seeds learn the same models
        dataset, _vs, player = line.split()[1:4]  # "random (alone) fqi"
        assert f"{before[(dataset, player)]:+.4f}" in line, line


@pytest.mark.slow
def test_a_registered_learner_is_benchmarked_by_naming_it(quick, tmp_path: Path) -> None:
    """A learner that lives outside the package (tests/linearq.py): registered, named in
    --learners, with a setting over its defaults; it has no seed, so it learns once."""
    from linearq import LEARNER

    _, cache, _ = quick
    register_learner(LEARNER)
    try:
        result = invoke("bench", "--quick", "--games", "sette-mezzo", "--tiers", "random",
                        "--learners", "fqi,linear:ridge=0.5", "--seeds", "2", "--json",
                        "-o", tmp_path, "--cache", cache, "--keep-models")
    finally:
        unregister_learner(LEARNER.name)
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    linear = [r for r in rows if r["learner"] == "linear:ridge=0.5"]
    assert len(linear) == 1 and "ridge=0.5" in linear[0]["settings"], rows
    assert len([r for r in rows if r["learner"] == "fqi"]) == 2
    learned = [r for r in rows if r["seed"] is not None]
    assert all(Path(r["model"]).is_file() for r in learned), rows  # --keep-models


@pytest.mark.parametrize(("args", "message"), [
    (("--learners", "sarsa"), "no learner 'sarsa': the learners are"),
    (("--learners", "fqi:depth=3"), "'depth=3' is no SETTING=VALUE of fqi"),
    (("--learners", "fqi:trees=many"), "trees=many is not a whole number"),
    (("--learners", "fqi,bc,fqi"), "--learners names fqi twice"),
    (("--tiers", "random,expret"), "no tier expret: the tiers are random, mixed, expert"),
    (("--games", "sette-mezzo", "--tiers", "mixed"), "its tiers are expert, random"),
    (("--games", "chess"), "chess"),
])
def test_what_cannot_be_benchmarked_is_one_line(args, message, tmp_path: Path) -> None:
    result = invoke("bench", "--quick", *args, "-o", tmp_path / "out", "--cache",
                    tmp_path / "cache")
    assert result.exit_code == 1 and message in result.output, result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "cache").exists()  # refused before any work


def test_learner_specs_split_and_parse() -> None:
    assert split_learners(["fqi,bc", "fqi:support=0.3,trees=50"]) == \
        ("fqi", "bc", "fqi:support=0.3,trees=50")
    assert split_learners(["network:hidden=64,64,epochs=2,bc"]) == \
        ("network:hidden=64,64,epochs=2", "bc")
    assert LearnerSpec.parse("network:hidden=64,64,epochs=2").given == \
        {"hidden": "64,64", "epochs": 2}
    spec = LearnerSpec.parse("fqi:support=0.3,trees=50,per_action=true")
    assert dict(spec.given) == {"support": 0.3, "trees": 50, "per_action": True}
    with pytest.raises(BenchError, match="per_action=maybe is not true or false"):
        LearnerSpec.parse("fqi:per_action=maybe")


def test_the_normalized_score_s_interval_covers_the_truth() -> None:
    """The delta-method interval of a ratio of paired means: on 400 draws of 300 paired
    units whose true normalized score is 40, it covers 40 about 95% of the time; with no
    noise it is the ratio itself."""
    rng = np.random.default_rng(7)
    covered = 0
    for _ in range(400):
        random = rng.normal(0.0, 1.0, 300)
        reference = random + rng.normal(2.0, 1.5, 300)
        player = random + rng.normal(0.8, 1.5, 300)
        value, half = normalized(player, random, reference, exact=False)
        covered += abs(value - 40.0) <= half
    assert 0.92 <= covered / 400 <= 0.98, covered
    assert normalized(np.array([1.0]), np.array([0.0]), np.array([4.0]), exact=True) == \
        (25.0, 0.0)


@pytest.mark.slow
def test_a_row_is_reused_only_where_it_was_measured_the_same_way(quick, monkeypatch) -> None:
    """Scored on other games (a game's bench_games changed), a learner's row is learned
    and scored again, into files of its own; the rows measured before stay as they were."""
    out, cache, document = quick
    before = [r for r in document["rows"] if r["game"] == "holdem" and r["dataset"] == "random"
              and r["learner"] == "fqi" and not r["transfer"]]
    monkeypatch.setattr(GAMES["holdem"], "bench",
                        dataclasses.replace(GAMES["holdem"].bench, games=(4_000, 20)))
    args = ("bench", "--quick", "--seeds", "1", "--games", "holdem", "--tiers", "random",
            "--learners", "fqi", "--json", "-o", out, "--cache", cache, "-j", "1")
    again = invoke(*args)
    assert again.exit_code == 0, again.output
    rows = json.loads(again.stdout)["rows"]
    fqi = [r for r in rows if r["learner"] == "fqi" and not r["transfer"]]
    assert "trained in" in again.stderr and len(fqi) == 1 and fqi[0]["games"] == 20
    assert fqi[0]["scores"] != before[0]["scores"] and Path(before[0]["scores"]).is_file()
    assert before[0]["games"] == 200 // SMALLER


@pytest.mark.slow
def test_settings_a_learner_cannot_fit_with_are_one_line(quick, tmp_path: Path) -> None:
    _, cache, _ = quick
    result = invoke("bench", "--quick", "--games", "sette-mezzo", "--tiers", "random",
                    "--learners", "fqi:trees=-5", "-o", tmp_path, "--cache", cache)
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    # refused as it is read, before any dataset is built: the setting and its bound
    assert "Error: fqi:trees=-5: fqi: setting trees -5: want at least 1" in result.output


def test_a_dataset_option_its_game_does_not_take_is_refused(monkeypatch, tmp_path) -> None:
    from batchrl.games import Dataset

    game = GAMES["sette-mezzo"]
    monkeypatch.setattr(game, "bench", dataclasses.replace(
        game.bench, datasets=(Dataset("random", ("random",), 100, 0, 50, {"limt": 5.0}),)))
    result = invoke("bench", "--quick", "--games", "sette-mezzo", "-o", tmp_path / "o",
                    "--cache", tmp_path / "c")
    assert result.exit_code == 1, result.output
    assert "sette-mezzo's random dataset gives limt, which neither its generate nor its " \
           "ingest takes" in result.output


@pytest.mark.slow
def test_minari_datasets_carry_the_reference_scores(quick, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """--minari exports each dataset as batchrl/<game>/<tier>(-quick)-v0 with
    ref_min_score and ref_max_score in its rewards' unit: Leduc's exact (the bench's
    random and best response, chips a hand), hold'em's measured in chips (the bench's
    scores are big blinds), so minari.get_normalized_score maps them to 0 and 1."""
    minari = pytest.importorskip("minari", reason="the export extra is not installed")
    _, cache, document = quick
    root = tmp_path / "minari"
    args = ("bench", "--quick", "--seeds", "1", "--games", "leduc,holdem", "--tiers", "random",
            "--learners", "fqi", "--json", "-o", tmp_path / "out", "--cache", cache,
            "--minari", root)
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(root))
    leduc = minari.load_dataset("batchrl/leduc/random-quick-v0")
    holdem = minari.load_dataset("batchrl/holdem/random-quick-v0")
    rows = {(r["game"], r["learner"]): r for r in document["rows"]
            if r["dataset"] == "random" and not r["transfer"]}
    meta = leduc.storage.metadata
    assert meta["ref_min_score"] == pytest.approx(rows["leduc", "random"]["score"])
    assert meta["ref_max_score"] == pytest.approx(rows["leduc", "best-response"]["score"])
    low, high = holdem.storage.metadata["ref_min_score"], holdem.storage.metadata["ref_max_score"]
    random_bb = rows["holdem", "random"]
    assert abs(low / 10 - random_bb["score"]) < 3 * random_bb["score_ci"] + 0.2  # blinds 5/10
    assert high > 0 and high > low  # rule takes chips from random play
    scores = minari.get_normalized_score(holdem, np.array([low, high]))
    assert scores.tolist() == pytest.approx([0.0, 1.0])
    assert holdem.total_episodes > 0 and leduc.total_episodes > 0
    again = invoke(*args)  # there already: kept, nothing measured again
    assert again.exit_code == 0 and "measuring" not in again.output


def test_a_team_game_s_dataset_is_scored_against_the_other_team() -> None:
    """Tressette scores a team (both its seats) against a team: a dataset's opponents are
    the second seat's player, and logs whose second team seats two players are refused
    (there is no one player to score against)."""
    from batchrl.games import Dataset
    from batchrl.play.bench import against

    tressette = GAMES["tressette"]
    assert against(tressette, Dataset("mixed", ("rule", "rule~0.3") * 2, 10, 0, 4)) == \
        ("rule~0.3",)
    assert against(GAMES["president"], Dataset("mixed", ("rule", "random") * 2, 10, 0, 4)) == \
        ("random", "rule", "random")
    with pytest.raises(BenchError, match="tressette's mixed dataset: tressette scores a team "
                                         "against a team: rule, random, rule, rule seat two "
                                         "players in the second team"):
        against(tressette, Dataset("mixed", ("rule", "random", "rule", "rule"), 10, 0, 4))
    # given, a dataset's opponents are its own
    assert against(tressette, Dataset("x", ("rule",) * 4, 10, 0, 4, opponents=("random",))) \
        == ("random",)


def test_an_older_batchrl_s_row_is_measured_again_saying_why(tmp_path: Path) -> None:
    """A row written before rows named their opponents (its digest taken without the
    fields added since) is done again, and the line says it is an older batchrl's, not
    that it was edited."""
    from batchrl.play.bench.outputs import LATER_FIELDS, _digest, load_rows

    row = Row("leduc", "random", "fqi", 0, 1.0, 0.0, 50.0, 0.0, 1.0, "u", 2, True)
    old = {k: v for k, v in dataclasses.asdict(row).items() if k not in LATER_FIELDS}
    edited = old | {"score": 2.0}
    results = tmp_path / "results.jsonl"
    results.write_text(json.dumps(old | {"digest": _digest(old)}) + "\n"
                       + json.dumps(edited | {"digest": _digest(old)}) + "\n")
    said: list[str] = []
    rows, cut = load_rows(results, said.append)
    assert rows == [] and cut
    assert "results.jsonl:1: not a result (an older batchrl's row (before rows named whom " \
           "they were scored against))" in said[0]
    assert "results.jsonl:2: not a result (edited since it was written" in said[1]


@pytest.mark.slow
def test_quick_trains_one_seed_unless_seeds_are_asked_for(quick, tmp_path: Path) -> None:
    _, cache, _ = quick
    common = ("bench", "--quick", "--games", "sette-mezzo", "--tiers", "random", "--learners",
              "bc", "--json", "--cache", cache)
    for extra, seeds in (((), 1), (("--seeds", "2"), 2)):
        result = invoke(*common, *extra, "-o", tmp_path / str(seeds))
        assert result.exit_code == 0, result.output
        got = json.loads(result.stdout)
        assert got["seeds"] == seeds and got["quick"]
        assert sorted(r["seed"] for r in got["rows"] if r["learner"] == "bc") == \
            list(range(seeds))
