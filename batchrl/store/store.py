"""Reading a store: `Store` opens or creates one and reads its parts back.

`Store.sources` reads footers only; `Store.arrays` gives the numpy arrays FQI needs.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import secrets
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray

from batchrl.records import printable, regular_file
from batchrl.store.columns import (
    column_codes,
    column_values,
    decisions_by_name,
    matrix_of,
    select_names,
)
from batchrl.store.content import CONTENT_KEY, ContentDigest
from batchrl.store.files import file_key, fsync, now
from batchrl.store.info import SourceInfo, StoreInfo
from batchrl.store.lock import LOCK_NAME, store_lock
from batchrl.store.parts import (
    check_digests,
    check_pages,
    damaged,
    footer,
    mismatch,
    open_part,
    read_part,
    recorded_content,
    recorded_sources,
)
from batchrl.store.place import Place, is_url, writable
from batchrl.store.rowcheck import READ, first_broken
from batchrl.store.rows import following_rows
from batchrl.store.schema import (
    CORE_COLUMNS,
    MATRICES,
    NUMERIC,
    SCHEMA_VERSION,
    StoreError,
    StoreSchema,
    describe_difference,
    first_line,
    schema_of,
    source_key,
    source_key_of,
)
from batchrl.store.transitions import FollowingStates, Transitions
from batchrl.store.writer import SourceWriter

if TYPE_CHECKING:
    import pandas as pd


class Store:
    """A directory of Parquet parts; get one with `Store.create` or `Store.open`.

    ``root`` is a local directory (a `Path`) or a URL (a `str`; `batchrl.store.place`):
    a store by URL is read as a local one is, and refuses to be written."""

    def __init__(self, root: Path | str, schema: StoreSchema, place: Place | None = None,
                 store_id: str | None = None) -> None:
        self.root, self.schema, self.store_id = root, schema, store_id
        self.place = place if place is not None else Place.of(root)
        # each local part's source digest as `writer` read it, by the file it was read from
        self._digests: dict[str, tuple[tuple[int, ...], str, str]] = {}

    @property
    def parts_dir(self) -> Path:
        """The local directory of the parts, where a writer puts them."""
        return self._local() / "parts"

    @classmethod
    def create(cls, root: str | Path, schema: StoreSchema, wait: float | None = None,
               on_wait: Callable[[str], None] | None = None) -> Store:
        """A new store at ``root``, or the one already there if its schema is equal.

        Under the store's lock (`batchrl.store.lock`), so of two ingests into a fresh
        store one makes it and the other finds it made: with another game, it is refused,
        naming the game the store holds.

        Args:
            root: the store's directory.
            schema: what its rows hold (game, params, features, actions).
            wait: seconds to wait for another writer's lock (None: as long as it takes).
            on_wait: hears, once, whom it waits for.

        Returns:
            The store.

        Raises:
            StoreError: a store of another schema is there.
        """
        root = writable(root)
        with store_lock(root, wait, on_wait):
            if (root / "store.json").exists():
                store = cls.open(root)
                if store.schema == schema or (store.schema.legal is False and
                                              store.schema == replace(schema, legal=False)):
                    # a store made before stores recorded each row's legal actions takes
                    # more rows as it is (the writer leaves their legal actions out)
                    (root / "parts").mkdir(exist_ok=True)
                    return store
                if store._part_files():
                    raise StoreError(f"store {root} holds "
                                     f"{describe_difference(store.schema, schema)}: "
                                     "use another --store directory, or ingest with the "
                                     "options its rows were ingested with (a game's "
                                     "default may have changed: batchrl ingest --help)")
                # A store without parts has no rows to protect: it takes the new schema.
            tmp = root / f".store.json.tmp-{os.getpid()}"
            # the store's own name, which each part it writes carries: a part another store
            # wrote is known for one, whatever it holds
            store_id = secrets.token_hex(8)
            tmp.write_text(json.dumps(schema.identity() | {"store_id": store_id,
                                                           "created_at": now()}, indent=2))
            fsync(tmp)
            os.replace(tmp, root / "store.json")
            (root / "parts").mkdir(exist_ok=True)
            fsync(root)
        return cls(root, schema, store_id=store_id)

    def lock(self, wait: float | None = None,
             on_wait: Callable[[str], None] | None = None) -> AbstractContextManager[None]:
        """Hold this store for writing (see `batchrl.store.lock`): what changes it takes
        this, and a reader never needs it."""
        return store_lock(self._local(), wait, on_wait)

    @classmethod
    def open(cls, root: str | Path) -> Store:
        """The store at ``root``.

        Args:
            root: a directory, or a URL to read one from (`batchrl.store.place`).

        Returns:
            The store, its schema read from ``store.json``.

        Raises:
            StoreError: no store there, an unreadable or foreign ``store.json``, or a store
                of another schema version (the message says what to do).
        """
        root = root if is_url(root) else Path(root)
        place = Place.of(root)
        try:
            if place.local is not None and (place.local / "store.json").exists() and \
                    (why := regular_file(place.local / "store.json")):
                raise ValueError(why.removesuffix(": not opened"))
            meta = json.loads((place / "store.json").read_text())
            if not isinstance(meta, dict):
                raise ValueError("not a JSON object")
        except FileNotFoundError:
            first = ("copy a store there" if place.local is None else
                     f"ingest logs first (batchrl ingest ... --store {root})")
            raise StoreError(f"no batchrl store at {place} (no store.json): {first}") from None
        except RecursionError:
            raise StoreError(f"{place / 'store.json'} nests deeper than any store's does: "
                             "point --store at a batchrl store or a new directory") from None
        except (OSError, ValueError) as e:
            then = ("check the URL, the network and the credentials" if place.local is None
                    else "point --store at a batchrl store or a new directory")
            raise StoreError(f"{place / 'store.json'} is unreadable ({first_line(e)}): "
                             f"{then}") from e
        if meta.get("schema_version") != SCHEMA_VERSION:  # the logs it came from, if told
            schema_of(meta, f"store {place}", recorded_sources(place / "parts"), place.local)
        store_id = meta.get("store_id")  # none in a store made before stores were named
        if store_id is not None and not (isinstance(store_id, str) and
                                         re.fullmatch(r"[0-9a-f]{16}", store_id)):
            raise StoreError(f"{place / 'store.json'}: its store_id is "
                             f"{printable(str(store_id), 40)}, not 16 hex digits: restore "
                             "store.json, or re-ingest the logs into a new --store")
        return cls(root, schema_of(meta, f"store {place}"), place, store_id)

    def writer(self, source_path: str | Path, digest: str) -> SourceWriter:
        """A context manager that (re)writes ``source_path``'s part; see `SourceWriter`."""
        key = source_key(source_path)
        for part in self._part_files():
            if part.stem == key:
                continue  # the part this one replaces, damaged or not
            try:
                held, path = self._digest_of(part)
            except StoreError:
                continue  # a damaged part: its readers say so; it does not stop an ingest
            if held == digest:
                raise StoreError(
                    f"{source_path} has the same content as {path}, already in store "
                    f"{self.place}; ingesting both would count its hands twice: skip it, or "
                    f"remove {path} from the store first")
        return SourceWriter(self.schema, self.parts_dir, source_path, digest, self.store_id)

    def sources(self) -> list[SourceInfo]:
        """Each part's source, as its footer records it; `StoreError` for two parts of one
        log (a part copied beside itself: its rows would count twice)."""
        parts = self._part_files()
        found = [self._read_source(part) for part in parts]
        first: dict[str, Place] = {}
        for part, source in zip(parts, found, strict=True):
            if (other := first.setdefault(source.digest, part)) is not part:
                raise StoreError(f"parts {other} and {part} both hold the rows of "
                                 f"{printable(source.path, 120)} (sha256 "
                                 f"{source.digest[:12]}): one is a copy, and its rows would "
                                 "count twice; delete one of them")
        return found

    def check(self, pages: bool = False) -> list[SourceInfo]:
        """The store's sources, once every part is found sound; else a `StoreError` that
        names the first bad part and what to do (what every reader runs before its work).

        Always, from the footers (milliseconds a part): each part reads, counts the rows
        it has, and holds the game, params and features of ``store.json`` (a store.json
        that disagrees with every part is named as the one edited). With ``pages``, every
        page of every part is read, decoded and checked against the CRC32 its writer put in
        its header, one row group at a time: a full read of the store (1.7 s for 3,000,000
        Tressette rows of 338 columns, 130 MB, where the footers took 7 ms). Readers need
        not ask for it: each page they read is checked so, and named as here when bad.
        """
        sources = self.sources()
        if pages:
            for part in self._part_files():
                check_pages(part, self.place)
        return sources

    def remove_source(self, source_path: str | Path) -> bool:
        """Delete a source's part, found by its path now or as recorded; False if none."""
        with self.lock():
            part = self.parts_dir / f"{source_key(source_path)}.parquet"
            if not part.exists():  # the log may have moved since its ingest: the recorded path
                recorded = [p for p in self._part_files()
                            if _recorded_path(self, p) == str(source_path)]
                if not recorded:
                    return False
                part = Path(recorded[0].path)
            part.unlink()
            fsync(self.parts_dir)
        return True

    def info(self) -> StoreInfo:
        """What the store holds (`StoreInfo`): rows, episodes, players, features, actions,
        sources and bytes on disk, from the parts' footers."""
        sources, parts = self.sources(), self._part_files()
        return StoreInfo(
            root=self.root, game=self.schema.game, schema_version=SCHEMA_VERSION,
            rows=sum(s.rows for s in sources), episodes=sum(s.episodes for s in sources),
            players=tuple(sorted({p for s in sources for p in s.players})),
            features=self.schema.feature_names, actions=self.schema.action_names,
            sources=sources,
            bytes_on_disk=sum(p.size() for p in [
                self.place / "store.json", *parts, *([self.place / LOCK_NAME]
                                                     if self.place.local is not None else [])]))

    def iter_batches(self, columns: Sequence[str] | None = None,
                     batch_size: int = 65_536) -> Iterator[pa.RecordBatch]:
        """Record batches of the parts' own columns (each feature its own column; see
        `batchrl.store.schema`), part by part, in bounded memory."""
        valid = self.schema.arrow_schema().names
        if unknown := [c for c in columns or () if c not in valid]:
            raise StoreError(f"unknown columns {unknown}; the parts' columns are {valid}")
        for part in self._part_files():
            try:
                f = open_part(part)
                found = ContentDigest(columns if columns is not None else valid)
                for batch in f.iter_batches(batch_size=batch_size, columns=columns):
                    found.update(batch)
                    yield batch
            except (OSError, pa.ArrowException) as e:
                raise damaged(part, self.place, e) from None
            # a changed value is named once its part is read through: the caller (an
            # export) writes beside its output and lands it only when all went well
            if (recorded := recorded_content(f)) is not None:
                check_digests(part, self.place, recorded, found.hexdigests())

    def to_pandas(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """All rows as a DataFrame.

        ``state``, ``next_state`` and ``next_legal`` are object columns of 1-D numpy arrays
        (use `arrays` for matrices); ``episode`` and ``source`` are categorical.
        """
        from pandas import Series  # pandas loads only for this

        names = self._logical(columns)
        matrices = [n for n in names if n in MATRICES]
        scalars = [n for n in names if n not in MATRICES]
        wanted = [*scalars, *(["episode", "player"] if "next_state" in matrices else [])]
        wanted += [c for m in matrices for c in self.schema.columns()[m]]
        if "next_state" in matrices:
            wanted += list(self.schema.feature_names)
        table = self._read_table(list(dict.fromkeys(wanted)))
        frame: pd.DataFrame = table.select(scalars).to_pandas()
        for name in matrices:
            # object dtype even with no rows (a bare empty list would make it float64)
            frame[name] = Series(list(np.asarray(self._matrix(table, name))),
                                 index=frame.index, dtype=object)
        return frame[names]

    def arrays(self, features: Sequence[str] | None = None,
               drop: Sequence[str] = (), players: Sequence[str] = (),
               seats: int | None = None) -> Transitions:
        """The rows as numpy arrays, what every learner reads; only the kept features are
        read.

        Args:
            features: the features to keep, names or shell patterns (``hand_*``); None:
                all of them.
            drop: the features to leave out, likewise.
            players: keep only the decisions of the players of these names (a store whose
                logs name players, hold'em's say, has a ``name`` column); ``!NAME``
                leaves one out.
            seats: the game's seats, where the caller knows them: a row of another
                player is refused.

        Returns:
            `Transitions`: states, actions, rewards, next states and their legal masks,
            terminal and truncated flags, episodes and the names of the features kept.

        Raises:
            StoreError: a feature or player that matches nothing, or no feature left; a
                row that breaks a rule rows keep (`batchrl.store.rowcheck`), named.
        """
        names = self.schema.feature_names
        keep = self.select_features(features, drop)
        scalars = ["episode", *(n for n in NUMERIC if n not in MATRICES and n != "line")]
        stored = self.schema.columns()
        matrix_columns = [*(names[i] for i in keep), *(stored["next_state"][i] for i in keep
                                                          if stored["next_state"]),
                          *stored["next_legal"], *stored["legal"]]
        self._check_names(players)
        lengths: list[int] = []  # each part's rows, in the order read
        table = self._read_table(
            [*scalars, "line", *matrix_columns, *(["name"] if players else [])], lengths)
        if players:
            table = self._only_players(table, players)
        table = table.unify_dictionaries()
        out: dict[str, Any] = {}
        for name in scalars[1:]:  # concatenating onto an empty block: a fresh, writable array
            out[name] = np.concatenate([np.empty(0, NUMERIC[name]), *(
                c.to_numpy(zero_copy_only=False) for c in table.column(name).chunks)])
        out["action"] = out["action"].astype(np.int64)
        episodes = table.column("episode").chunks
        out["episode"] = column_codes(table.column("episode"))
        out["state"] = self._matrix(table, "state", keep)
        out["next_state"] = self._matrix(table, "next_state", keep, out["state"],
                                         out["episode"], out["player"])
        out["next_legal"] = self._matrix(table, "next_legal")
        if stored["legal"]:  # a store that records each row's own legal actions
            out["legal"] = self._matrix(table, "legal")
        ids = episodes[0].dictionary.to_pylist() if episodes else []
        line = column_values(table.column("line"))
        del table, episodes
        rows = {**out, "next_state": out["next_state"] if isinstance(out["next_state"],
                                                                      np.ndarray) else None}
        kept = [names[i] for i in keep]
        if (broken := first_broken(self.schema, rows, kept, seats)) is not None:
            where = self._row_named(broken[0], lengths, ids, out["episode"], line,
                                    bool(players))
            raise StoreError(f"{where}: {broken[1]}: {READ}")
        # Arrow's allocator keeps what it freed for later: the columns were copied into
        # the matrices, so hand it back (on 3M rows of 206 features, 1.4 GB)
        pa.default_memory_pool().release_unused()
        return Transitions(**out, episode_ids=np.array(ids, dtype=object),
                           feature_names=tuple(names[i] for i in keep),
                           action_names=self.schema.action_names)

    def select_features(self, features: Sequence[str] | None = None,
                        drop: Sequence[str] = ()) -> list[int]:
        """The indices of the features `arrays` keeps for ``features`` and ``drop`` (names
        or shell patterns), in store order; refused, naming them, when a name matches
        nothing or nothing is left."""
        names = self.schema.feature_names
        picked = {p: [n for n in names if fnmatch.fnmatchcase(n, p)]
                  if any(c in p for c in "*?[") else [p] if p in names else []
                  for p in (*(features or ()), *drop)}
        if unknown := [p for p, hits in picked.items() if not hits]:
            raise StoreError(f"unknown features {unknown}; the store's features are "
                             f"{list(names)}")
        wanted = set(names if features is None else
                     [n for p in features for n in picked[p]]) - {
                         n for p in drop for n in picked[p]}
        if not (keep := [i for i, n in enumerate(names) if n in wanted]):
            raise StoreError(f"no feature left after selecting {features} and dropping {drop}")
        return keep

    def audit(self, column: str, players: Sequence[str] = ()) -> NDArray[np.object_]:
        """An audit column's values, row for row as ``arrays(players=players)`` gives them."""
        if column not in self.schema.audit_columns:
            raise StoreError(f"{self.place} has no audit column {column!r}; it has "
                             f"{list(self.schema.audit_columns)}")
        self._check_names(players)
        table = self._read_table(list(dict.fromkeys([column, *(["name"] if players else [])])))
        if players:  # picked as arrays picks them: patterns and !NAME too
            table = self._only_players(table, players, keep_name=column == "name")
        return np.asarray(table.column(column).to_pylist(), dtype=object)

    def names(self) -> dict[str, int]:
        """Decisions per player name, for stores that record names; else empty."""
        if "name" not in self.schema.audit_columns:
            return {}
        return decisions_by_name(self._read_table(["name"]).column("name"))

    def _matrix(self, table: pa.Table, name: str, keep: Sequence[int] | None = None,
                state: NDArray[np.float32] | None = None,
                episode: NDArray[np.int64] | None = None,
                player: NDArray[np.int8] | None = None
                ) -> NDArray[Any] | FollowingStates:
        """A matrix (``state``, ``next_state``, ``next_legal``) from its columns, as the
        float32 or bool matrix callers get, whatever it is kept as; a following
        ``next_state`` as a `FollowingStates` over ``state`` (read here when not given)."""
        columns = self.schema.columns()[name]
        if name == "next_state" and not columns:
            if state is None:
                state = self._matrix(table, "state", keep)  # type: ignore[assignment]
            if episode is None or player is None:
                episode = column_codes(table.unify_dictionaries().column("episode"))
                player = table.column("player").to_numpy()
            rows = episode, player
            return FollowingStates(state, lambda: following_rows(*rows))  # type: ignore[arg-type]
        if keep is not None:
            columns = tuple(columns[i] for i in keep)
        return matrix_of([column_values(table.column(c)) for c in columns], NUMERIC[name])

    def _check_names(self, players: Sequence[str]) -> None:
        if players and "name" not in self.schema.audit_columns:
            raise StoreError(f"{self.place} does not record player names ({self.schema.game} "
                             "logs have none): learn from every row instead")

    def rows_of(self, players: Sequence[str]) -> NDArray[np.bool_]:
        """Which of `arrays`'s rows (read without ``players``, in its order) are decisions
        of the players named (as ``arrays``'s ``players`` takes them): a player's rows
        among everyone's, where what follows a decision matters (a team's rewards).

        Raises:
            StoreError: a store that records no names, or a name it does not hold.
        """
        self._check_names(players)
        names = self._read_table(["name"]).column("name")
        chosen = self._chosen(names, players)
        return np.asarray(pc.is_in(names, value_set=pa.array(chosen, pa.string()))
                          .to_numpy(zero_copy_only=False), dtype=bool)

    def _chosen(self, names: Any, players: Sequence[str]) -> list[str]:
        known = decisions_by_name(names)
        chosen = select_names(players, list(known))
        if isinstance(chosen, str):
            raise StoreError(f"{chosen} in {self.place}; its players are "
                             + ", ".join(f"{printable(n)} ({c:,} decisions)"
                                         for n, c in known.items()))
        return chosen

    def _only_players(self, table: pa.Table, players: Sequence[str],
                      keep_name: bool = False) -> pa.Table:
        names = table.column("name")
        chosen = self._chosen(names, players)
        kept = table.filter(pc.is_in(names, value_set=pa.array(chosen, pa.string())))
        return kept if keep_name else kept.drop_columns(["name"])

    def _part_files(self) -> list[Place]:
        """The parts (temp parts are named .<key>.tmp-<pid>: never a half-written one);
        in a local store, `StoreError` for one that is not a regular file of the store's
        (a pipe would block every reader; a link out of the store is not its data)."""
        parts = (self.place / "parts").files(".parquet")
        for part in parts:
            if part.local is not None and (why := regular_file(part.local,
                                                               self.parts_dir.parent)):
                what = why.removesuffix(": not opened")
                then = ("copy the file it leads to into the store if it is this store's "
                        "part" if "link" in what else "delete it (batchrl ingest writes a "
                        "log's part again)")
                raise StoreError(f"part {part} is {what}: a store's parts are the files its "
                                 f"ingest wrote; {then}")
        return parts

    def _local(self) -> Path:
        """The store's directory, for what writes it; refused for a store by URL."""
        return writable(self.root)

    def _logical(self, columns: Sequence[str] | None) -> list[str]:
        """The row's columns (``state`` etc. as one each), checked."""
        valid = [*CORE_COLUMNS, *(["legal"] if self.schema.legal else []),
                 *self.schema.audit_columns]
        if unknown := [c for c in columns or () if c not in valid]:
            raise StoreError(f"unknown columns {unknown}; the store's columns are {valid}")
        return valid if columns is None else list(columns)

    def _read_table(self, columns: list[str], lengths: list[int] | None = None) -> pa.Table:
        """``columns`` of every part, checked (pages, digests); each part's rows counted
        into ``lengths``, where given."""
        if not (parts := self._part_files()):
            return self.schema.arrow_schema().empty_table().select(columns)
        tables = [read_part(p, columns, self.place) for p in parts]
        if lengths is not None:
            lengths += [t.num_rows for t in tables]
        return pa.concat_tables(tables)

    def _row_named(self, row: int, lengths: Sequence[int], ids: Sequence[str],
                   episode: NDArray[np.int64], line: NDArray[Any], chosen: bool) -> str:
        """Where row ``row`` of `arrays` comes from: its part and its row there (its part
        found by its episode's source when only some players' rows were kept), and the
        line of its log."""
        where = f"line {int(line[row]):,} of its log"
        if not chosen:
            index = int(np.searchsorted(np.cumsum(lengths), row, side="right"))
            part = self._part_files()[index]
            return f"part {part}, row {row - sum(lengths[:index]) + 1:,} ({where})"
        prefix = str(ids[int(episode[row])]).split(":", 1)[0]
        parts = [p for p, s in zip(self._part_files(), self.sources(), strict=True)
                 if s.digest.startswith(prefix)]
        return f"part {parts[0] if parts else self.place}, {where}"

    def _digest_of(self, part: Place) -> tuple[str, str]:
        """A part's source's digest and path, a local part's read once per file: an
        ingest of many logs asks for every part's before each log's (a log already in the
        store is refused), which read afresh grew as the square of the logs."""
        held = self._digests.get(str(part))
        if (seen := file_key(part.local)) is not None and held is not None and held[0] == seen:
            return held[1], held[2]
        info = self._read_source(part)
        if seen is not None:
            self._digests[str(part)] = (seen, info.digest, info.path)
        return info.digest, info.path

    def _read_source(self, part: Place) -> SourceInfo:
        meta = footer(part, self.place)
        if (schema := schema_of(meta, f"part {part}")) != self.schema:
            raise mismatch(part, schema, self.schema, self._part_files(), self.place)
        try:
            s = meta["source"]
            content = s.get(CONTENT_KEY, {})
            if not (isinstance(content, dict) and all(isinstance(v, str)
                                                      for v in content.values())):
                raise damaged(part, self.place, f"its footer's {CONTENT_KEY} is not a table "
                                                "of column digests")
            info = SourceInfo(s["path"], s["digest"], s["rows"], s["episodes"], s["extra"],
                              s["resolved_path"], tuple(s["players"]), s["ingested_at"],
                              content)
        except (KeyError, TypeError) as e:
            raise damaged(part, self.place, f"its footer lacks {e}") from None
        if self.store_id is not None and meta.get("store_id") != self.store_id:
            found = meta.get("store_id")
            other = (f"store {printable(str(found), 40)}" if found is not None else
                     "another store (one made before stores were named)")
            parts = self._part_files()
            if found is not None and len(parts) > 1 and all(_store_id_of(p) == found
                                                             for p in parts):
                raise StoreError(
                    f"{self.place / 'store.json'} names store {self.store_id}, but every part "
                    f"was written by store {printable(str(found), 40)}: store.json was "
                    "replaced (another store's?); restore it, or re-ingest the logs into a "
                    "new --store")
            raise StoreError(
                f"part {part} was written by {other}, not by this one "
                f"({self.store_id}): it is no part of this store; delete it, and ingest "
                f"{printable(info.path, 120)} into this store if its rows belong here")
        if part.stem != source_key_of(info.resolved_path):
            raise StoreError(
                f"part {part} holds the rows of {printable(info.path, 120)}, whose part is "
                f"named {source_key_of(info.resolved_path)}.parquet: it was renamed or copied; "
                "delete it, and ingest that log again if its rows belong here")
        return info


def _store_id_of(part: Place) -> Any:
    """The store_id a part's footer records (None where none or unreadable)."""
    try:
        return footer(part, part).get("store_id")
    except StoreError:
        return None


def _recorded_path(store: Store, part: Place) -> str | None:
    """The source path a part records, None for a part that does not read as the
    store's (another's, renamed, damaged: removing a log passes over it)."""
    try:
        return store._read_source(part).path
    except StoreError:
        return None
