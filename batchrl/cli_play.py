"""The playing commands: ``generate`` (bots into logs), ``solve`` and ``evaluate``.

``batchrl.cli`` registers them on the ``batchrl`` group.
"""

from __future__ import annotations

from pathlib import Path

import click

from batchrl.cli_common import GAMES, advancing, progress


@click.command()
@click.option("--game", type=click.Choice(GAMES), required=True, help="Which game to play.")
@click.option("--games", "--hands", "count", type=int, default=1000, show_default=True,
              help="Games (hands, for hold'em) to play.")
@click.option("--policy", "policy_name", default="random", show_default=True,
              help="sette-mezzo: random (hit or stick, 50/50), optimal (the exact solution), "
                   "or a model file from batchrl fqi.")
@click.option("--players", default="random,random", show_default=True, metavar="A,B",
              help="holdem: the two players, each random (the thesis's: 10% fold, 50% call, "
                   "40% raise), rule (a tight-aggressive rule bot) or a model file. "
                   "hanabi: random, simple, convention (bot1, bot2: the report's roles, "
                   "simple and convention) or model:PATH (a network from batchrl imitate). "
                   "tressette: four seats (or A,B for teams 0+2 and 1+3), each random, "
                   "seed-heuristic or rule.")
@click.option("--format", "fmt",
              type=click.Choice(["auto", "acpc", "glassfrog", "jsonl", "transcript"]),
              default="auto", show_default=True,
              help="holdem: ACPC dealer .log (STATE lines) or Glassfrog .dealer.summary; "
                   "tressette: batchrl's JSON lines or the seed's printed transcript; "
                   "auto: by the file name (.txt: a transcript).")
@click.option("--gamedef", "table", metavar="FILE|NAME", default=None,
              help="holdem: the game (an ACPC .game file or built-in name) [default: a model "
                   "player's game, else the format's usual units].")
@click.option("--limit", default=5.0, show_default=True,
              help="sette-mezzo: the opponent draws until its total reaches this.")
@click.option("--seed", default=0, show_default=True, help="Makes the deals repeatable.")
@click.option("--jobs", "-j", default=1, show_default=True,
              help="hanabi: processes playing games (-1: one per core); the games do not "
                   "depend on it.")
@click.option("-o", "--out", type=click.Path(path_type=Path), required=True,
              help="Log file to write (hanabi: a directory, two files per game).")
def generate(game: str, count: int, policy_name: str, players: str, fmt: str,
             table: str | None, limit: float, seed: int, jobs: int, out: Path) -> None:
    """Play games with bots and write them as logs that batchrl ingest reads.

    \b
    Examples:
      batchrl generate --game holdem --hands 5000 --players random,random --seed 10 \\
          -o ROOM_90.dealer.summary
      batchrl generate --game holdem --hands 50000 --players random,rule -o rule.log
      batchrl generate --game sette-mezzo --games 100000 --policy random -o random.jsonl
      batchrl generate --game hanabi --players bot2,bot2 --games 36000 -o hanabi-games
      batchrl generate --game tressette --players seed-heuristic,random,seed-heuristic,random \\
          --games 50000 -o tressette.jsonl
    """
    import numpy as np

    if game == "sette-mezzo":
        from batchrl.games.sette_mezzo.logs import play, write_log

        chooser: object = policy_name
        if policy_name not in ("random", "optimal"):
            from batchrl.policy import GreedyPolicy, ModelError

            try:
                learned = GreedyPolicy.load(policy_name)
            except ModelError as exc:
                raise click.ClickException(
                    f"--policy is random, optimal or a model file: {exc}") from None
            chooser = learned.act_batch
        rng = np.random.default_rng(seed)
        written = write_log(out, play(chooser, count, rng, limit))  # type: ignore[arg-type]
    elif game == "tressette":
        from batchrl.games.tressette.logs import play as play_tressette
        from batchrl.games.tressette.logs import write_log as write_tressette

        names = [p.strip() for p in players.split(",")]
        if len(names) == 2:
            names = names * 2  # A,B: seats 0 and 2 play A, seats 1 and 3 play B
        kind = "transcript" if fmt == "transcript" or (fmt == "auto" and out.suffix == ".txt") \
            else "jsonl"
        try:
            with progress(count, "playing") as advance:
                written = write_tressette(out, advancing(play_tressette(names, count, seed),
                                                          advance), kind)
        except ValueError as exc:
            raise click.ClickException(str(exc)) from None
        click.echo(f"{written:,} hands written to {out} ({kind})")
        return
    elif game == "hanabi":
        from batchrl.games.hanabi.logs import generate as generate_hanabi

        names = [p.strip() for p in players.split(",")]
        try:
            with progress(count, "playing") as advance:
                scores = generate_hanabi(out, names, count, seed, advance, jobs)
        except ValueError as exc:
            raise click.ClickException(str(exc)) from None
        click.echo(f"{count:,} games written to {out}/ (mean score {np.mean(scores):.2f} "
                   f"cards played)")
        return
    else:
        from batchrl.games.holdem import gamedef
        from batchrl.games.holdem.logs import generate as generate_holdem
        from batchrl.policy import ModelError

        names = [p.strip() for p in players.split(",")]
        try:
            chosen = gamedef.resolve(table) if table else None
            with progress(count, "playing") as advance:
                written = generate_holdem(out, names, count, seed, fmt, chosen, advance)
        except (ModelError, gamedef.GameDefError, ValueError) as exc:
            raise click.ClickException(str(exc)) from None
    click.echo(f"{written:,} games written to {out}")


@click.command()
@click.argument("game", type=click.Choice(["sette-mezzo"]))
@click.option("--limit", default=5.0, show_default=True,
              help="The opponent draws until its total reaches this.")
def solve(game: str, limit: float) -> None:
    """Solve a game exactly and print the optimal strategy as a table.

    sette-mezzo: policy iteration over the exact card-removal probabilities.
    """
    from batchrl.games.sette_mezzo.solver import solve as solve_exactly
    from batchrl.games.sette_mezzo.solver import strategy_table

    solution = solve_exactly(limit)
    click.echo(strategy_table(solution))
    click.echo(f"optimal expected reward per game: {solution.expected_reward:+.6f} "
               f"({solution.rounds} rounds of policy iteration, "
               f"{len(solution.action):,} states)")


@click.command()
@click.option("--game", type=click.Choice(GAMES), default=None,
              help="The game [default: the model's]; given, it must be the model's.")
@click.option("--model", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="The hero: a model file from batchrl fqi (holdem, "
                                 "sette-mezzo).")
@click.option("--players", "pairs", multiple=True, metavar="A,B",
              help="hanabi: a pair of players (random, simple, convention, bot1, bot2, "
                   "model:PATH); repeat for more pairs, all on the same deals "
                   "[default: bot2,bot2].")
@click.option("--games", default=None, type=int,
              help="hanabi: games per pair [1000]; tressette: hands, each deal played from "
                   "both sides [20000].")
@click.option("--team", default=None, metavar="PLAYER",
              help="tressette: the team's player (both seats): random, seed-heuristic, rule "
                   "or model:PATH (an FQI model of a Tressette store).")
@click.option("--vs", "versus", default="random", show_default=True, metavar="PLAYER",
              help="tressette: the other team's player.")
@click.option("--opponent", default="random", show_default=True, metavar="random|rule|MODEL",
              help="holdem: the thesis's random bot, the rule bot, or another model file.")
@click.option("--hands", default=3000, show_default=True,
              help="holdem: hands to play (the thesis played 3,000).")
@click.option("--seed", default=33, show_default=True,
              help="holdem: deals and the bots' randomness (the same seed, the same cards).")
@click.option("--duplicate", is_flag=True,
              help="holdem: play every deal twice with the seats swapped, cutting the "
                   "variance the cards add.")
@click.option("--limit", type=float, default=None,
              help="sette-mezzo: the opponent's limit [default: the one the model's data "
                   "was played at].")
@click.option("--json", "as_json", is_flag=True, help="One JSON object, for notebooks.")
def evaluate(game: str | None, model: Path | None, pairs: tuple[str, ...], games: int | None,
             team: str | None, versus: str, opponent: str, hands: int, seed: int,
             duplicate: bool, limit: float | None, as_json: bool) -> None:
    """Measure a learned policy, in the game its model was trained on.

    \b
    holdem: plays the model against an opponent and reports the chips it won
    (the thesis's figure), big blinds and mbb per hand with a 95% confidence
    interval, and the split by position:
      batchrl evaluate --model M.joblib --opponent rule --hands 20000 --duplicate
    \b
    sette-mezzo: exact, no sampling: the policy's expected reward per game,
    the optimal one, the gap, and the share of decisions where it plays the
    optimal action, weighted by how often it reaches each state.
    \b
    tressette: a team against another, each deal played from both sides and
    the lead rotating: hands won and points per hand with 95% intervals:
      batchrl evaluate --game tressette --team model:M.joblib --vs random \\
          --games 20000
    \b
    hanabi: pairs of players on the same deals, the report's Table 2 (mean,
    sd, max, min) in both score conventions:
      batchrl evaluate --game hanabi --players model:net.pt,bot2 \\
          --players bot2,bot2 --games 1000
    """
    import json

    from batchrl.policy import GreedyPolicy, ModelError

    if game == "hanabi" or pairs:
        _evaluate_hanabi(pairs or ("bot2,bot2",), games or 1000, seed, as_json)
        return
    if game == "tressette" or team is not None:
        _evaluate_tressette(team or (f"model:{model}" if model else "rule"), versus,
                            games or 20000, seed, as_json)
        return
    if model is None:
        raise click.UsageError("--model is needed (for hanabi give --game hanabi --players)")
    try:
        hero = GreedyPolicy.load(model)  # read once: a forest file can take seconds to load
        trained = hero.artifact.meta.get("game", "")
        kind = "sette-mezzo" if trained == "sette-mezzo" else "holdem"
        if game is not None and game != kind:
            raise ModelError(f"{model} was trained on {trained}, not {game}")
        if kind == "sette-mezzo":
            _evaluate_sette_mezzo(model, limit, as_json)
            return
        from batchrl.games.holdem.evaluate import evaluate_bots

        with progress(hands, "playing") as advance:
            result = evaluate_bots(str(model), opponent, hands, seed, duplicate=duplicate,
                                   progress=advance, models={str(model): hero})
    except (ModelError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps(result.as_dict() | {"model": str(model)}))
    else:
        click.echo(result.table())


def _evaluate_hanabi(pairs: tuple[str, ...], games: int, seed: int, as_json: bool) -> None:
    import json

    from batchrl.games.hanabi.evaluate import HEADER, evaluate_players

    reports = []
    try:
        for pair in pairs:
            names = tuple(p.strip() for p in pair.split(","))
            with progress(games, " + ".join(names)) as advance:
                reports.append(evaluate_players(names, games, seed, advance))
    except ValueError as exc:  # an unknown player, an unreadable network file
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps([r.as_dict() for r in reports]))
        return
    click.echo(f"{games:,} games per pair, seed {seed} (the same deals for every pair)")
    click.echo(HEADER)
    for r in reports:
        click.echo(r.row())


def _evaluate_tressette(team: str, versus: str, hands: int, seed: int, as_json: bool) -> None:
    import json

    from batchrl.games.tressette.evaluate import evaluate_teams
    from batchrl.policy import ModelError

    try:
        with progress(hands, f"{team} vs {versus}") as advance:
            report = evaluate_teams(team, versus, hands, seed, advance)
    except (ValueError, ModelError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(report.as_dict()) if as_json else report.table())


def _evaluate_sette_mezzo(model: Path, limit: float | None, as_json: bool) -> None:
    import json
    from dataclasses import asdict

    from batchrl.games.sette_mezzo.evaluate import evaluate_model

    report = evaluate_model(model, limit)
    if as_json:
        click.echo(json.dumps(asdict(report) | {"regret": report.regret, "model": str(model)}))
        return
    click.echo(f"model                      {model}")
    click.echo(f"opponent draws to          {report.limit:g}")
    click.echo(f"expected reward per game   {report.expected_reward:+.6f}")
    click.echo(f"optimal                    {report.optimal_reward:+.6f}")
    click.echo(f"gap                        {report.regret:.6f}")
    click.echo(f"optimal action             {report.agreement:.2%} of its decisions "
               f"({report.agreement_optimal_visits:.2%} of the optimal policy's, "
               f"{report.agreement_states:.2%} of all {report.states:,} states)")
