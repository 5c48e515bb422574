"""What a store says of itself: each ingested source as its part's footer records it
(`SourceInfo`), and the whole (`StoreInfo`, from `Store.info`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from batchrl.store.content import part_digest


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """One ingested source file, as recorded in its part's footer."""

    path: str
    digest: str
    rows: int
    episodes: int
    extra: Mapping[str, Any]
    resolved_path: str = ""
    players: tuple[int, ...] = ()
    ingested_at: str = ""
    # each column's digest as written (`batchrl.store.content`); empty in a part written
    # before parts recorded them
    content: Mapping[str, str] = field(default_factory=dict)

    @property
    def content_digest(self) -> str:
        """One digest for the rows the part holds ("" where it records none)."""
        return part_digest(self.content) if self.content else ""


@dataclass(frozen=True, slots=True)
class StoreInfo:
    root: Path | str
    game: str
    schema_version: int
    rows: int
    episodes: int
    players: tuple[int, ...]
    features: tuple[str, ...]
    actions: tuple[str, ...]
    sources: list[SourceInfo]
    bytes_on_disk: int
