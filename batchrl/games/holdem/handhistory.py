"""Writing no-limit hands as PHH hand histories (pokerkit's notation; Kim 2023), the
format ``parsers.phh`` reads, so that others' tools read what batchrl plays.

One hand is one TOML document::

    variant = "NT"
    ante_trimming_status = false
    antes = [0, 0, 0]
    blinds_or_straddles = [50, 100, 0]
    min_bet = 100
    starting_stacks = [20000, 20000, 20000]
    actions = ["d dh p1 Qh5c", "d dh p2 9h6h", "d dh p3 KcJh", "p3 cbr 210", "p1 f",
               "p2 cc", "d db 7s9cTc", "p2 cc", "p3 cbr 235", "p2 f"]
    hand = 1
    players = ["rule", "random-2", "random-3"]
    finishing_stacks = [19950, 19790, 20260]

A raise names what the seat has in front of it in the round after it (``cbr``), where
the dealer's notation names its chips over the hand; heads-up, the blinds and antes are
listed as pokerkit reads them, reversed (`seat_order`); the cards shown at a showdown
(``sm``) come in the order pokerkit asks for them (from the last round's last raiser,
else its first seat to act), before an all-in's remaining board. A split pot's odd chip
is written as the rules pay it, in halves, as the Pluribus logs write it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from batchrl.games.holdem.cards import cards_str
from batchrl.games.holdem.gamedef import GameDef
from batchrl.games.holdem.replay import replay_betting, tokens
from batchrl.games.holdem.rules import CALL, FOLD, HandState, showdown_seats

SUFFIXES = (".phh", ".phhs")


def phh_first_player(blinds: Sequence[int]) -> tuple[int, ...]:
    """Who acts first each round in PHH's (pokerkit's) order, from each seat's blind:
    pre-flop the seat after the largest blind or straddle, after it the first seat from
    p1. ``parsers.phh`` makes its games with it, and a game is written as PHH only where
    its order is this one."""
    if not any(blinds):
        raise ValueError("no seat posts a blind")
    top = max(range(len(blinds)), key=lambda s: (blinds[s], s))
    return ((top + 1) % len(blinds), 0, 0, 0)


def seat_order(values: Sequence[int]) -> tuple[int, ...]:
    """PHH's blinds or antes as each seat posts them, or back: heads-up, pokerkit reads
    the list reversed (``[50, 100]``: p1 posts the big blind, p2 the small one, and p1
    acts first after the flop), at other tables in seat order."""
    return tuple(values[::-1]) if len(values) == 2 else tuple(values)


def writable(game: GameDef) -> str | None:
    """Why ``game``'s hands cannot be written as PHH no-limit hold'em, or None."""
    if game.is_limit:
        return f"{game.name} is a limit game: PHH's NT is no-limit (write an ACPC log)"
    if (game.num_rounds, game.num_board_cards, game.num_hole_cards, game.num_suits,
            game.num_ranks) != (4, (0, 3, 1, 1), 2, 4, 13):
        return f"{game.name} is not Texas hold'em's deal (2 hole cards, boards 3, 1, 1)"
    if any(m < 255 for m in game.max_raises):
        return f"{game.name} caps the raises per round, and PHH's NT does not"
    if game.first_player != phh_first_player(game.blind):
        return (f"{game.name}'s seats act in another order than PHH's (pre-flop after the "
                "last blind, then from p1)")
    return None


def hand_document(state: HandState, payoffs: Sequence[float], names: Sequence[str],
                  number: int) -> dict[str, Any]:
    """A finished hand as PHH's fields (in the order the format lists them)."""
    game = state.game
    n = game.num_players
    actions = [f"d dh p{s + 1} {cards_str(state.hole[s])}" for s in range(n)]
    replayed = replay_betting(game, state.betting)
    moves = [m for sequence in tokens(state.betting, game) for m in sequence]
    at_round_start = [0] * n
    current = 0
    opener = game.first_player[0]
    for (before, action), (_, size) in zip(replayed.decisions, moves, strict=True):
        if before.round != current:
            actions += [_board(state, r) for r in range(current + 1, before.round + 1)]
            at_round_start, current = list(before.spent), before.round
            opener = game.first_player[current]
        seat = before.current
        if action == FOLD:
            actions.append(f"p{seat + 1} f")
        elif action == CALL:
            actions.append(f"p{seat + 1} cc")
        else:
            actions.append(f"p{seat + 1} cbr {size - at_round_start[seat]}")
            opener = seat
    shown = showdown_seats(replayed.final)
    for seat in sorted(shown, key=lambda s: (s - opener) % n):
        actions.append(f"p{seat + 1} sm {cards_str(state.hole[seat])}")
    actions += [_board(state, r) for r in range(current + 1, replayed.final.round + 1)]
    stacks = game.stacks()
    return {
        "variant": "NT", "ante_trimming_status": game.ante_trimming,
        "antes": list(seat_order(game.ante or (0,) * n)),
        "blinds_or_straddles": list(seat_order(game.blind)),
        "min_bet": game.big_blind, "starting_stacks": list(stacks), "actions": actions,
        "hand": number, "players": list(names),
        "finishing_stacks": [_number(s + p) for s, p in zip(stacks, payoffs, strict=True)],
    }


def _board(state: HandState, round_: int) -> str:
    return f"d db {cards_str(state.board_dealt(round_))}"


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def to_toml(document: dict[str, Any]) -> str:
    """``document`` as TOML lines: strings and lists as JSON writes them (a JSON string
    is a TOML basic string), booleans lower case."""
    lines = []
    for key, value in document.items():
        text = ("true" if value else "false") if isinstance(value, bool) else \
            json.dumps(value, ensure_ascii=False)
        lines.append(f"{key} = {text}")
    return "\n".join(lines) + "\n"


def write_phh(path: Path, hands: Iterable[tuple[HandState, Sequence[float]]],
              players: Sequence[str]) -> int:
    """Finished hands as PHH: a ``.phhs`` file of tables ``[1]``, ``[2]`` …, a ``.phh``
    file of one hand, or a folder of ``1.phh``, ``2.phh`` … (any other path). Seats
    rotate every hand as in the dealer's logs (player ``b`` in seat ``(b + i) % n`` at
    hand ``i``). Returns the number of hands written."""
    played = list(hands)
    if played and (why := writable(played[0][0].game)):
        raise ValueError(why)
    if path.suffix == ".phh" and len(played) != 1:
        raise ValueError(f"{path}: a .phh file holds one hand, and {len(played):,} were "
                         "played: write a .phhs file, or a folder")
    n = len(players)
    documents = [hand_document(state, payoffs, [players[(s - k) % n] for s in range(n)],
                               k + 1) for k, (state, payoffs) in enumerate(played)]
    if path.suffix == ".phhs":
        path.write_text("".join(f"[{k}]\n{to_toml(d)}\n" for k, d in
                                enumerate(documents, 1)), encoding="utf-8")
    elif path.suffix == ".phh":
        path.write_text(to_toml(documents[0]), encoding="utf-8")
    else:
        path.mkdir(parents=True, exist_ok=True)
        for k, document in enumerate(documents, 1):
            (path / f"{k}.phh").write_text(to_toml(document), encoding="utf-8")
    return len(played)
