"""Tressette records into store rows, for the ingest: a source's plan and the rows of each
chunk of games.

Every game reaches the rows as a ``DealRef``: its place in a ``transitions.Deals`` (the
whole deals of a block of records, as arrays), or why it cannot be encoded (a cut
transcript's partial deal). The reader of JSON lines (``parsers.tressette``) makes them in
worker processes, a block of lines at a time (``whole_deals``, then ``deal_ref``); records
read here (a transcript, or JSON lines read without workers) become ``DealRef`` s a chunk
at a time (``deal_refs``). Either way the rows are the same.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from batchrl.games.base import SourceContext, SourcePlan
from batchrl.games.tressette import transitions as tt
from batchrl.records import BadLine, RejectedRecord
from batchrl.store import Rows, RowsBatch


@dataclass(frozen=True, slots=True)
class DealRef:
    """A game on its way to the rows: its place ``at`` in ``deals``, or why it cannot be
    encoded (``refused``)."""

    source: str
    line: int
    index: int  # its place among the log's games: its episode's number
    deals: tt.Deals
    at: int
    refused: str | None = None


def whole_deals(records: Iterable[Any]) -> tuple[tt.Deals, list[Any]]:
    """The whole deals among ``records`` (games with ``game``, ``line`` and ``index``, and
    ``BadLine`` s) as one ``Deals``, and each record in order: a bad line as it is, a game
    as (its line, its place in the deals or -1 for a deal that is not whole)."""
    games: list[Any] = []
    entries: list[Any] = []
    for record in records:
        if isinstance(record, BadLine):
            entries.append(record)
        elif record.game.whole_deal:
            entries.append((record.line, len(games)))
            games.append(record)
        else:
            entries.append((record.line, -1))
    return tt.Deals.of(games), entries


def deal_ref(source: str, line: int, index: int, deals: tt.Deals, at: int) -> DealRef:
    """The game at ``at`` in ``deals`` (-1: a deal that is not whole, refused)."""
    return DealRef(source, line, index, deals, at, None if at >= 0 else tt.CUT_TRANSCRIPT)


def deal_refs(games: list[Any]) -> list[DealRef]:
    """Games read here, each as a ``DealRef`` into one ``Deals`` of the whole deals."""
    deals, entries = whole_deals(games)
    return [deal_ref(g.source, g.line, g.index, deals, at)
            for g, (_, at) in zip(games, entries, strict=True)]


def open_source(records: Iterator[Any], context: SourceContext, reward: str = "points",
                suits: str = "dealt") -> SourcePlan:
    """The store's schema and the rows of a chunk of games (records or ``DealRef``): every
    play checked in lockstep, one row per card played. ``ValueError`` for an unknown
    reward or suit order."""
    schema = tt.schema(reward, suits)
    notes = context.notes
    if reward != "points":
        notes.append(f"rewards: {reward} (the seed's per-card shaping, plus the "
                     f"team's points at the end)")
    cut = [0]  # hands cut short kept so far, over every chunk

    def rows(chunk: list[Any]) -> RowsBatch:
        refs = chunk if isinstance(chunk[0], DealRef) else deal_refs(chunk)
        whole = [r for r in refs if r.refused is None]
        deals = _deals(whole)
        columns, places = tt.deal_rows(deals, context.prefix, reward, suits,
                                       dictionaries=True)
        refused = [(r, r.refused) for r in refs if r.refused is not None] \
            + [(whole[i], why) for i, why in places]
        kept = np.ones(len(deals), dtype=bool)
        kept[[i for i, _ in places]] = False
        cut[0] += int(((deals.lengths < 40) & kept).sum())
        if cut[0]:
            note = f"{cut[0]:,} hand(s) cut short: kept, each seat's last row truncated"
            notes[:] = [n for n in notes if "cut short: kept" not in n] + [note]
        return RowsBatch(Rows.from_columns(columns), len(refs) - len(refused),
                         [(r, RejectedRecord(why, "illegal hand")) for r, why in refused])

    return SourcePlan(schema, records, rows, unit="hands")


def _deals(refs: list[DealRef]) -> tt.Deals:
    """The deals of ``refs`` (whole ones), in order, numbered as their log numbers them.
    Runs of refs into one block's deals are taken together (the refs hold the blocks, so
    no two live blocks share an id)."""
    parts = [block[0].deals.take(np.fromiter((r.at for r in block), np.int64))
             for _, group in itertools.groupby(refs, key=lambda r: id(r.deals))
             for block in [list(group)]]
    deals = tt.Deals.concat(parts)
    return dataclasses.replace(deals, index=np.fromiter((r.index for r in refs), np.int64,
                                                        count=len(refs)))
