"""Hold'em logs into store rows: which game a log plays, and its hands' rows.

A log names its game in a dealer header (``# name/game/hands/seed``); without one, the
first hands tell (amounts in the betting mean no-limit; otherwise the game is the
built-in whose rules give the logged payoffs, which picks a Glassfrog summary's units),
and ``--game`` overrides both. A run of another game appended to a log is left out
(``batchrl.records.Skipped``), and a run with fewer hands than its header promises is
noted. A PHH hand carries its own game (`LoggedHand.game`): the first decides the
source's, a hand of other blinds, antes or stacks replays in its own, and a hand of
another table (seats, betting, deck) is left out. Limit and no-limit
games of 2 to 10 players become transitions; what batchrl cannot (a deck the evaluator
cannot score) is refused, naming the game.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator, MutableSequence
from typing import Any

from batchrl.games.base import SourceContext, SourceError, SourcePlan
from batchrl.games.holdem import actions, features, gamedef
from batchrl.games.holdem.gamedef import GameDef
from batchrl.games.holdem.records import Header, LoggedHand
from batchrl.games.holdem.transitions import audit_columns, check_hands, process_chunk
from batchrl.records import Skipped, shown
from batchrl.store import RowsBatch, StoreSchema

# Hands read ahead, at most, to tell a log's game or units from its payoffs.
LOOKAHEAD_HANDS = 1000
# PV is defined for these numbers of visible board cards.
PV_BOARDS = frozenset({0, 3, 4, 5})
PLAYERS = tuple(range(2, 11))  # the features and equities are defined for these
APPENDED = "another game appended"
OTHER_GAME = "a hand of another game"  # a PHH hand of other seats or betting
GAME_FILE = "ingest --game FILE, evaluate --gamedef FILE"  # the flags naming a game file


def schema_for(game: GameDef, pv: bool = True) -> StoreSchema:
    return StoreSchema(
        game=game.name,
        feature_names=features.feature_names(game, pv),
        action_names=actions.action_names(game),
        audit_columns=audit_columns(game),
        game_params=game.params(),
        # a row's next state is its player's next decision: the store derives it
        next_state="following",
        legal=True,  # each row's own legal actions (Template.legal)
    )


def unsupported(where: str, game: GameDef, pv: bool) -> str | None:
    """Why batchrl cannot turn ``game``'s hands into transitions yet, naming the game, or
    None if it can."""
    if game.num_players not in PLAYERS:
        return (f"{where}: a {game.num_players}-player game ({game.name}: "
                f"{game.description}); batchrl turns games of {PLAYERS[0]} to "
                f"{PLAYERS[-1]} players into transitions")
    problem = gamedef.evaluable(game)
    if problem is None and pv:
        seen = {game.board_cards_before(r) for r in range(game.num_rounds)}
        if not seen <= PV_BOARDS:
            problem = (f"rounds showing {sorted(seen)} board cards, and pv needs 0, 3, 4 or 5 "
                       f"(--no-pv leaves it out)")
    if problem is not None:
        return f"{where}: {game.name} has {problem}; batchrl cannot score it"
    return None


def open_source(records: Iterator[Any], context: SourceContext, forced: GameDef | None,
                pv: bool) -> SourcePlan:
    """The plan of one hold'em log: its game (read ahead to decide, the records read
    coming out first), its schema and the rows of a chunk of hands. ``forced``: the game
    ``--game`` gave (checked already), else None."""
    game, pending = decide_game(context, records, forced)
    if forced is None and (why := unsupported(str(context.path), game, pv)) is not None:
        raise SourceError(why)

    def rows(chunk: list[Any]) -> RowsBatch:
        return process_chunk(game, chunk, context.prefix, pv)

    return SourcePlan(schema_for(game, pv), runs(itertools.chain(pending, records), game,
                                                 forced is not None, context.notes),
                      rows, variant=game.name, unit="hands", rows_beside=False)


def runs(records: Iterator[Any], game: GameDef, forced: bool,
         notes: MutableSequence[str]) -> Iterator[Any]:
    """The records of a log of ``game`` for the rows: a header starts a run; a run of
    another game (unless the game was ``forced``) becomes a ``Skipped`` with the example,
    then one count-only ``Skipped`` per hand; a run cut short of the hands its header
    promises is noted when the next begins, or at the end."""
    header: Header | None = None
    hands = hidden_seats = hidden_hands = 0
    foreign = False
    for record in records:
        if isinstance(record, Header):
            _promised(header, hands, notes)
            header, hands, foreign = record, 0, False
            named = None if forced else gamedef.builtin_by_filename(record.game_path)
            if not forced and (named is None or named.name != game.name):
                foreign = True
                yield Skipped(APPENDED, f"{record.source}, line {record.line}: a run of "
                                        f"{shown(record.game_path)} appended to a log of "
                                        f"{game.name}: its hands are left out")
            continue
        if isinstance(record, LoggedHand):
            hands += 1
            if foreign:
                yield Skipped(APPENDED)
                continue
            if record.game is not None and not forced and record.game != game and \
                    record.game.table() != game.table():
                yield Skipped(OTHER_GAME, f"{record.source}: a hand of "
                                          f"{record.game.description}, in a source of "
                                          f"{game.description}: left out (its table's "
                                          "hands store as a source of their own)")
                continue
            if not all(record.hole):
                hidden_seats += sum(1 for h in record.hole if not h)
                hidden_hands += 1
        yield record
    _promised(header, hands, notes)
    if hidden_hands:
        notes.append(f"{hidden_seats:,} seats of {hidden_hands:,} hands hide their hole "
                     "cards: their moves replay, and they have no rows of their own")


def _promised(header: Header | None, hands: int, notes: MutableSequence[str]) -> None:
    if header is not None and header.hands is not None and hands < header.hands:
        notes.append(f"the run from line {header.line} promises {header.hands:,} hands and "
                     f"holds {hands:,}: the match was cut off")


def decide_game(context: SourceContext, records: Iterator[Any],
                forced: GameDef | None) -> tuple[GameDef, list[Any]]:
    """The game of a source, and the records read ahead to find it (to be processed first).

    A header names the game. Without one, the first hands tell: amounts in the
    betting mean no-limit, and otherwise the game is the built-in whose rules
    give the logged payoffs (for Glassfrog summaries, this picks the units).
    """
    notes, path = context.notes, context.path
    pending: list[Any] = []
    if forced is not None:
        notes.append(f"game {forced.name} as given ({forced.description})")
        return forced, pending
    candidates: tuple[GameDef, ...]
    if context.format.name == "acpc":
        candidates = (gamedef.HEADS_UP_LIMIT,)
    else:
        candidates = (gamedef.GLASSFROG_LIMIT, gamedef.HEADS_UP_LIMIT)
    moved_chips = False
    hands = 0
    for record in records:
        pending.append(record)
        if isinstance(record, Header):
            game = gamedef.builtin_by_filename(record.game_path)
            if game is None:
                raise SourceError(
                    f"{path}, line {record.line}: the log plays {shown(record.game_path)}, not a "
                    f"standard ACPC game: pass its game file ({GAME_FILE}). A .game file "
                    f"is the ACPC dealer's game definition: limit or no-limit, the players, "
                    f"rounds, blinds, raise sizes (limit) or stacks (no-limit), who acts "
                    f"first each round, the raises allowed, the deck and the cards dealt. "
                    f"Heads-up limit hold'em, for instance, reads:\n"
                    f"{gamedef.HEADS_UP_LIMIT.to_text().rstrip()}\n"
                    f"(if the log played that game, save those lines as a file and pass it)")
            notes.append(f"game {game.name} from the header")
            return game, pending
        if not isinstance(record, LoggedHand):
            continue
        hands += 1
        if record.game is not None:  # the hand says (a PHH hand)
            notes.append(f"game {record.game.name}: each hand's own blinds, antes and "
                         f"stacks (the first's: {record.game.description})")
            return record.game, pending
        if record.is_nolimit or record.num_players != 2:
            game = builtin_like(record)
            notes.append(f"game {game.name}: line {record.line} is a "
                         f"{record.num_players}-player {game.betting} hand")
            return game, pending
        if any(record.payoffs):
            moved_chips = True
            fits = [g for g in candidates if not check_hands(g, [record])[1]]
            if fits:
                game = fits[0]
                notes.append(f"game {game.name}: {game.description} (line "
                             f"{record.line}'s payoffs {_payoffs(record)} fit it)")
                return game, pending
        if hands >= LOOKAHEAD_HANDS:
            break
    if not hands and pending:  # only what could not be read: no game to assume
        counts = Counter(getattr(r, "kind", type(r).__name__) for r in pending)
        raise SourceError(f"{path}: no hand could be read ("
                          + ", ".join(f"{n:,} {k}" for k, n in counts.most_common())
                          + f"); the first: {pending[0]}")
    if moved_chips:
        raise SourceError(
            f"{path}: the payoffs of its first {hands:,} hands fit no built-in game "
            f"({', '.join(g.description for g in candidates)}): pass {GAME_FILE}")
    game = candidates[0]
    notes.append(f"game {game.name}: no hand moved chips, so the game is assumed "
                 f"({game.description})")
    return game, pending


def builtin_like(hand: LoggedHand) -> GameDef:
    """The built-in game of a hand's betting and number of players."""
    betting = "nolimit" if hand.is_nolimit else "limit"
    for game in gamedef.BUILTINS.values():
        if game.betting == betting and game.num_players == hand.num_players:
            return game
    raise SourceError(f"{hand.source}, line {hand.line}: a {hand.num_players}-player "
                      f"{betting} hand, and no built-in game of that kind: pass {GAME_FILE}")


def _payoffs(hand: LoggedHand) -> str:
    return "|".join(f"{v:g}" for v in hand.payoffs)
