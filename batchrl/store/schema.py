"""A store's identity: its schema, the ids and keys of what it holds, and its errors.

`StoreSchema` fixes a store's game, features, actions, audit columns and the dtype its
states are kept in; every part's footer and ``store.json`` carry its
`~StoreSchema.identity`, and a store accepts only rows of an equal schema.

A part's columns are plain Parquet columns that any reader takes by name (DuckDB,
Polars, pandas; `StoreSchema.arrow_schema` lists them):

- ``episode``, ``step``, ``player``, ``action``, ``reward``, ``terminal``,
  ``truncated``, ``source``, ``line``: one value per row (one decision);
- one column per feature, named as the feature: the row's ``state``;
- ``next_legal_<action>``, one boolean per action: which actions are legal in the
  row's next state;
- ``legal_<action>``, one boolean per action, in a store that records them
  (`~StoreSchema.legal`; stores made before it did not): which actions were legal in
  the row's own state, the first decision of each seat included;
- the next state: in a store whose `~StoreSchema.next_state` is ``"following"`` it is
  the state of the following row of the same episode and player (zeros where none
  follows), so it is not written twice; otherwise (``"stored"``) one column per
  feature, named ``next_<feature>``;
- the audit columns (strings).

``SELECT avg(pv) FROM 'STORE/parts/*.parquet' WHERE action = 2`` runs as it reads.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pyarrow as pa

from batchrl.records import excerpt, redacted

# 3: a column per feature and per legal action, next_state derived where it follows
# (2: vector columns as fixed-size binary rows, which only pyarrow read; 1: lists of float32)
SCHEMA_VERSION: int = 3
# the dtypes a store may keep its states in; integer ones hold whole numbers in their range
STATE_DTYPES = ("float32", "int8", "uint8")
# how a store keeps next_state: the following row's state, or columns of its own
NEXT_STATE_MODES = ("following", "stored")
# the prefixes of the per-feature next-state and per-action legal-mask columns
NEXT_PREFIX, LEGAL_PREFIX = "next_", "next_legal_"
NOW_LEGAL_PREFIX = "legal_"  # the row's own legal actions (StoreSchema.legal)

META_KEY = b"batchrl"
STRING_DICT = pa.dictionary(pa.int32(), pa.string())
# numeric core columns and their dtypes as written and read back (``state``,
# ``next_state`` and ``next_legal`` as matrices, kept as `StoreSchema.columns` says);
# episode and source are dictionary strings
NUMERIC: dict[str, type[np.generic]] = {
    "step": np.int32, "player": np.int8, "state": np.float32, "action": np.int8,
    "reward": np.float64, "next_state": np.float32, "next_legal": np.bool_,
    "terminal": np.bool_, "truncated": np.bool_, "line": np.int64, "legal": np.bool_}
CORE_COLUMNS = ("episode", "step", "player", "state", "action", "reward", "next_state",
                 "next_legal", "terminal", "truncated", "source", "line")
# the core columns that are matrices: a row of several values, kept as several columns
MATRICES = ("state", "next_state", "next_legal", "legal")  # legal: where StoreSchema.legal


class StoreError(Exception):
    """A store cannot be used as asked; the message says what is wrong and what to do."""


def first_line(error: BaseException | str) -> str:
    """An error's first line, for a one-line message (its type's name when it has none)."""
    return redacted((str(error).strip().splitlines() or [type(error).__name__])[0])


DIGEST_BLOCK = 1 << 20  # bytes a read: a hand history's file is a few KB, taken whole


def file_digest(path: str | Path) -> str:
    """Full sha256 hex of a file's bytes, read in blocks (a small file's in one block: a
    folder of ten thousand hand histories is digested in half the time)."""
    with open(path, "rb") as f:
        h = hashlib.sha256(f.read(DIGEST_BLOCK))
        while block := f.read(DIGEST_BLOCK):
            h.update(block)
    return h.hexdigest()


def episode_id(digest: str, index: int) -> str:
    """The stable id of the ``index``-th hand of the source whose sha256 is ``digest``.

    >>> episode_id("ab" * 32, 7)
    'abababababababab:7'
    """
    return f"{digest[:16]}:{index}"


def source_key(source_path: str | Path) -> str:
    """A part's name: where the file is, not what it holds, so a changed log replaces it."""
    return source_key_of(str(Path(source_path).resolve()))


def source_key_of(resolved_path: str) -> str:
    """The part's name of the log at ``resolved_path`` (a footer's ``resolved_path``)."""
    return hashlib.sha256(resolved_path.encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class StoreSchema:
    """What a store holds; a store accepts only rows of an equal schema."""

    game: str
    feature_names: tuple[str, ...]
    action_names: tuple[str, ...]
    audit_columns: tuple[str, ...] = ()
    game_params: Mapping[str, Any] = field(default_factory=dict, hash=False)
    # how ``state`` and ``next_state`` are kept on disk; they are read back as float32
    state_dtype: str = "float32"
    # "following": each row's next_state is the state of the next row of its episode and
    # player, zeros where none follows (the writer checks it); "stored": columns of its own
    next_state: str = "stored"
    # whether each row records its own legal actions (``legal_<action>``): the first
    # decision of a seat has no earlier row whose next_legal says them
    legal: bool = False

    def __post_init__(self) -> None:
        for name in ("feature_names", "action_names", "audit_columns"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
            if not all(isinstance(n, str) for n in getattr(self, name)):
                raise StoreError(f"{excerpt(str(self.game), 100)}: its {name} are not all "
                                 "names (strings)")
        if not isinstance(self.game, str):
            raise StoreError(f"its game is {excerpt(str(self.game), 100)}, not a name")
        names = (*CORE_COLUMNS, *self.audit_columns)
        if (len(set(self.feature_names)) < len(self.feature_names) or not self.feature_names
                or len(set(names)) < len(names) or not 0 < len(self.action_names) < 128
                or len(set(self.action_names)) < len(self.action_names)):
            raise StoreError(f"{self.game}: feature and action names must be distinct, audit "
                             "columns must not repeat core columns, and there must be 1..127 "
                             "actions")
        if self.next_state not in NEXT_STATE_MODES:
            raise StoreError(f"{self.game}: next_state {self.next_state!r} is not one of "
                             f"{', '.join(NEXT_STATE_MODES)}")
        columns = [*names, *(c for cs in self.columns().values() for c in cs)]
        if clash := sorted(c for c, n in Counter(columns).items() if n > 1):
            raise StoreError(f"{self.game}: the columns {clash} would appear twice in a part "
                             "(a feature named like a core or audit column, or like another "
                             "feature's next_ column): rename the feature")
        try:  # the JSON round trip makes a schema read back from disk compare equal
            params = json.loads(json.dumps(dict(self.game_params), sort_keys=True))
        except (TypeError, ValueError) as e:
            raise StoreError(f"{self.game}: game_params must be JSON-able ({e})") from e
        object.__setattr__(self, "game_params", MappingProxyType(params))
        if self.state_dtype not in STATE_DTYPES:
            raise StoreError(f"{self.game}: state_dtype {self.state_dtype!r} is not one of "
                             f"{', '.join(STATE_DTYPES)}")

    def identity(self) -> dict[str, Any]:
        """The JSON written to store.json and to every part's footer."""
        return {"schema_version": SCHEMA_VERSION, "game": self.game,
                "game_params": dict(self.game_params), "feature_names": list(self.feature_names),
                "action_names": list(self.action_names), "audit_columns": list(self.audit_columns),
                "state_dtype": self.state_dtype, "next_state": self.next_state,
                "columns": {k: list(v) if v else self.next_state_text()
                            for k, v in self.columns().items() if v or k != "legal"},
                **({"legal": True} if self.legal else {})}

    @classmethod
    def from_identity(cls, meta: Mapping[str, Any]) -> StoreSchema:
        return cls(meta["game"], tuple(meta["feature_names"]), tuple(meta["action_names"]),
                   tuple(meta["audit_columns"]), meta["game_params"], meta["state_dtype"],
                   meta["next_state"], meta.get("legal") is True)

    def columns(self) -> dict[str, tuple[str, ...]]:
        """The part's columns that hold each matrix, in order: ``state`` (the features'
        names), ``next_state`` (``next_<feature>``, or none when it is the following
        row's state), ``next_legal`` (``next_legal_<action>``) and ``legal``
        (``legal_<action>``, or none in a store that does not record them).

        >>> schema = StoreSchema("g", ("pv", "pot"), ("fold", "call"), next_state="following")
        >>> for matrix, columns in schema.columns().items():
        ...     print(matrix, columns)
        state ('pv', 'pot')
        next_state ()
        next_legal ('next_legal_fold', 'next_legal_call')
        legal ()
        """
        stored = self.next_state == "stored"
        return {"state": self.feature_names,
                "next_state": tuple(NEXT_PREFIX + f for f in self.feature_names) if stored
                else (),
                "next_legal": tuple(LEGAL_PREFIX + a for a in self.action_names),
                "legal": tuple(NOW_LEGAL_PREFIX + a for a in self.action_names) if self.legal
                else ()}

    def next_state_text(self) -> str:
        """Where a row's next state is, in words (the footer says it to other readers)."""
        return ("the state of the following row of the same episode and player; zeros "
                "where none follows" if self.next_state == "following" else
                "the next_<feature> columns")

    def matrix_dtype(self, matrix: str) -> np.dtype[Any]:
        """How a matrix's columns are kept: the state's dtype, booleans for the masks."""
        return np.dtype(np.bool_ if matrix in ("next_legal", "legal") else self.state_dtype)

    def arrow_schema(self) -> pa.Schema:
        """A part's columns, with `identity` under ``b"batchrl"`` in the metadata: the
        scalar core columns, the matrices' columns (`columns`), the audit columns."""
        fields = [pa.field(n, pa.from_numpy_dtype(NUMERIC[n]) if n in NUMERIC else STRING_DICT,
                           nullable=False)
                  for n in CORE_COLUMNS if n not in MATRICES]
        for matrix, names in self.columns().items():
            kind = pa.from_numpy_dtype(self.matrix_dtype(matrix))
            fields += [pa.field(n, kind, nullable=False) for n in names]
        fields += [pa.field(n, pa.string(), nullable=False) for n in self.audit_columns]
        return pa.schema(fields, metadata={META_KEY: json.dumps(self.identity())})


def describe_difference(held: StoreSchema, new: StoreSchema) -> str:
    """What sets a store's schema apart from the one asked for, in words."""
    if held.game != new.game:
        return f"game {excerpt(str(held.game), 100)}, not {excerpt(str(new.game), 100)}"
    if held.game_params != new.game_params:  # the features and actions follow from them
        return (f"game {excerpt(str(held.game), 100)} with game_params "
                f"{excerpt(str(held.game_params), 120)} (not "
                f"{excerpt(str(new.game_params), 120)})")
    parts = []
    if held.feature_names != new.feature_names:
        only_held = [f for f in held.feature_names if f not in new.feature_names]
        only_new = [f for f in new.feature_names if f not in held.feature_names]
        if only_held:
            parts.append(f"{excerpt(', '.join(only_held), 300)} among its features, which "
                         "this ingest "
                         "leaves out")
        if only_new:
            parts.append(f"no {excerpt(', '.join(only_new), 300)} among its features")
        if not only_held and not only_new:
            parts.append("the same features in another order")
    old, now = held.identity(), new.identity()
    if held.legal != new.legal:
        parts.append(("" if held.legal else "no ") + "legal_<action> columns (each row's own "
                     "legal actions)")
    parts += [f"{k} {excerpt(str(old.get(k)), 120)} (not {excerpt(str(now.get(k)), 120)})"
              for k in dict.fromkeys([*old, *now])
              if old.get(k) != now.get(k) and k not in ("game", "feature_names", "columns",
                                                         "legal")]
    return f"game {excerpt(str(held.game), 100)} with " + "; ".join(parts)


def schema_of(meta: Mapping[str, Any], what: str, sources: Sequence[str] = (),
              root: Path | None = None) -> StoreSchema:
    """The schema in ``meta`` (store.json's or a part's footer), refused, saying what to
    do, when it is another version's or no batchrl store's. ``sources``, the logs the
    store was built from, make the refusal the command that rebuilds it."""
    if (version := meta.get("schema_version")) != SCHEMA_VERSION:
        new = f"{root}-v{SCHEMA_VERSION}" if root is not None else "NEW_DIR"
        logs = " ".join(shlex.quote(s) for s in sources) if sources else "..."
        params = meta.get("game_params")
        options = (f", with the options that gave its game params "
                   f"{excerpt(json.dumps(params), 200)}"
                   if params else "")
        newer = ("upgrade batchrl, or " if isinstance(version, int) and version > SCHEMA_VERSION
                 else "")
        raise StoreError(f"{what} was written by schema version {version}; this batchrl reads "
                         f"version {SCHEMA_VERSION}: {newer}re-ingest the logs into a new store"
                         f"{options}: batchrl ingest {logs} --store {shlex.quote(new)}")
    try:
        return StoreSchema.from_identity(meta)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise StoreError(f"{what} lacks {excerpt(str(e), 100)}, or holds it in another "
                         "form: it is not a batchrl store; use another --store directory") \
            from None
    except StoreError as e:
        raise StoreError(f"{what} is not a batchrl store ({excerpt(str(e), 300)}); use "
                         "another --store directory") from None
