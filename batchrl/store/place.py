"""Where a store lives: a local directory, or a URL on any filesystem pyarrow reads.

A store is read by URL as it is read from a directory: ``s3://bucket/acpc``,
``gs://bucket/acpc``, ``hdfs://namenode/acpc`` or ``file:///data/acpc`` through
`pyarrow.fs` (credentials and options as pyarrow takes them: the environment, or the
URL's query, ``s3://bucket/acpc?region=eu-west-1``); any other scheme fsspec knows
(``memory://``, ``gcs://``…) through fsspec, where it is installed (its options from its
environment: a query is refused). Messages, models and exports name a URL by
`recorded`: no query, no password.
A store by URL is read-only here: its parts are written, and replaced whole, by an
ingest into a local directory, which is then copied there (``aws s3 sync``).

>>> Place.of("datasets/store") / "parts"
Place('datasets/store/parts')
>>> (Place.of("file:///data/acpc?x=1") / "parts").shown
'file:///data/acpc/parts'
>>> is_url("s3://bucket/acpc"), is_url("C:/logs"), is_url(Path("s3://bucket"))
(True, False, False)
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pyarrow import ArrowException
from pyarrow.fs import FileSelector, FileSystem, FileType, FSSpecHandler, PyFileSystem

from batchrl.store.schema import StoreError, first_line

# a scheme of two letters or more, so a Windows drive (C:/) is a path
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")


def is_url(root: str | Path) -> bool:
    """Whether ``root`` names a store by URL (a `Path` never does)."""
    return isinstance(root, str) and bool(_URL.match(root))


def store_root(text: str | Path) -> str | Path:
    """A ``--store`` value as a store's root: a URL kept as given, else a `Path`."""
    return text if is_url(text) else Path(text).expanduser()


def writable(root: str | Path) -> Path:
    """``root`` as the local directory a writer needs; a URL refused, saying what to do."""
    if is_url(root):
        raise StoreError(f"the store {recorded(root)} is read here, not written: ingest "
                         "into a local directory (--store DIR), then copy that directory there")
    return Path(root)


def recorded(root: str | Path) -> str:
    """How messages, models and exports name a store: a directory as given, a URL without
    its query, its fragment or a password (``user:password@``, keys where pyarrow reads
    them).

    >>> recorded("s3://AKIA:SECRET@bucket/acpc?region=eu-west-1")
    's3://bucket/acpc'
    >>> recorded("abfs://container@account.dfs.core.windows.net/acpc#x")
    'abfs://container@account.dfs.core.windows.net/acpc'
    """
    if not is_url(root):
        return str(root)
    parts = urlsplit(str(root))
    user, at, host = parts.netloc.rpartition("@")
    netloc = f"{user}@{host}" if at and ":" not in user else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def default_store_path() -> Path | str:
    """``$BATCHRL_STORE`` if set (a directory, or a URL), else ``datasets/store`` under
    the current directory."""
    env = os.environ.get("BATCHRL_STORE")
    return store_root(env) if env else Path("datasets") / "store"


def outputs_beside(root: str | Path) -> Path:
    """Where a command writes what it makes from a store (models, ablation results): the
    store's own directory, or, for a store by URL, the current directory."""
    return Path(".") if is_url(root) else Path(root)


@dataclass(frozen=True, slots=True)
class Place:
    """A file or directory of a store: ``path`` in ``fs`` (a `pyarrow.fs.FileSystem`, or
    None for a local path, read by path as before), named in messages by ``shown``."""

    path: str
    shown: str
    fs: Any = None
    local: Path | None = None

    @classmethod
    def of(cls, root: str | Path) -> Place:
        """The place of a store's root, the URL's filesystem made (once, here)."""
        if not is_url(root):
            return cls(str(root), str(root), None, Path(root))
        url = str(root)
        fs, path = _filesystem(url)
        return cls(path.rstrip("/"), recorded(url).rstrip("/"), fs, None)

    def __truediv__(self, name: str) -> Place:
        if self.local is not None:
            child = self.local / name
            return Place(str(child), str(child), None, child)
        return Place(f"{self.path}/{name}", f"{self.shown}/{name}", self.fs, None)

    def __str__(self) -> str:
        return self.shown

    def __repr__(self) -> str:
        return f"Place({self.shown!r})"

    @property
    def name(self) -> str:
        return self.shown.rsplit("/", 1)[-1]

    @property
    def stem(self) -> str:
        return self.name.rsplit(".", 1)[0]

    def read_text(self) -> str:
        """The file's text; FileNotFoundError when there is none."""
        if self.local is not None:
            return self.local.read_text()

        try:
            with self.fs.open_input_stream(self.path) as f:
                return bytes(f.read()).decode()
        except FileNotFoundError:
            raise
        except (OSError, ArrowException) as e:
            if "not found" in str(e).lower() or "no such" in str(e).lower():
                raise FileNotFoundError(self.shown) from e
            raise OSError(first_line(e)) from e

    def files(self, suffix: str) -> list[Place]:
        """The files directly in this directory whose names end in ``suffix``, sorted; none
        whose name starts with a dot (a writer's temporary file)."""
        if self.local is not None:
            return [Place(str(p), str(p), None, p)
                    for p in sorted(self.local.glob(f"*{suffix}")) if not p.name.startswith(".")]

        try:
            found = self.fs.get_file_info(FileSelector(self.path, allow_not_found=True))
        except (OSError, ArrowException) as e:
            raise StoreError(f"cannot list {self.shown} ({first_line(e)})") from None
        names = sorted(info.base_name for info in found if info.type == FileType.File)
        return [self / n for n in names if n.endswith(suffix) and not n.startswith(".")]

    def size(self) -> int:
        """The file's size in bytes; 0 where it is not there."""
        if self.local is not None:
            return self.local.stat().st_size if self.local.exists() else 0

        try:
            return int(self.fs.get_file_info(self.path).size or 0)
        except (OSError, ArrowException) as e:
            raise StoreError(f"cannot read {self.shown} ({first_line(e)})") from None


def _filesystem(url: str) -> tuple[Any, str]:
    """The pyarrow filesystem of ``url`` and the path in it: pyarrow's own where it knows
    the scheme, else fsspec's wrapped for pyarrow."""
    shown = recorded(url)
    try:
        return FileSystem.from_uri(url)  # type: ignore[no-any-return]
    except (OSError, ArrowException) as e:
        if "unrecognized" not in str(e).lower():
            raise StoreError(f"cannot open the store {shown}: {first_line(e)}") from None
    scheme = url.split("://", 1)[0]
    if urlsplit(url).query:
        raise StoreError(f"{scheme}:// is read through fsspec here, whose URLs take no "
                         f"options after '?' ({shown}): set them in its environment instead")
    try:
        import fsspec  # fsspec: optional, only for URLs pyarrow does not read
    except ImportError:
        raise StoreError(f"pyarrow reads no {scheme}:// URLs, and fsspec, which might, is not "
                         f"installed: pip install fsspec (and its package for {scheme}), or "
                         "copy the store to a local directory") from None
    try:
        fs, path = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError, OSError) as e:
        raise StoreError(f"cannot open the store {shown}: {first_line(e)}") from None
    return PyFileSystem(FSSpecHandler(fs)), str(path)
