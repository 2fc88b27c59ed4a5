"""The sweep cache's files: one Parquet file per sweep and key, read back only when it is what it says.

A file holds the frame of one sweep and, in its Parquet metadata, the sweep's name and its full key; a file
that does not parse, holds another key or another name is recomputed with a :class:`CacheWarning`; a write
goes to a temporary file renamed into place, so a reader never sees half a file.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import stat
import sys
import tempfile
import time
import warnings
from pathlib import Path

import pandas as pd

from ._hashing import _library_changed

#: Hex digits of the SHA-256 digest kept in a cache file's name.
DIGEST_LENGTH = 32
#: Hex digits of the key kept in a cache file's name (the file's metadata holds all 64).
KEY_LENGTH = 16
#: Parquet metadata entry that holds the sweep's name and full key.
_METADATA = b"dpadmm_book.sweep"


class CacheWarning(UserWarning):
    """A sweep cache file was rejected (and recomputed) or a result could not be cached."""


def cache_dir() -> Path:
    """Where sweeps are cached: ``$DPADMM_CACHE`` or ``~/.cache/dpadmm_lite``."""
    return Path(os.environ.get("DPADMM_CACHE", Path.home() / ".cache" / "dpadmm_lite"))


# ---------------------------------------------------------------------- the cache files
#: Keys (first KEY_LENGTH hex digits) this process has read or written, per file-name slug:
#: pruning never deletes them (a notebook may run one sweep name with two grids).
_USED: dict[str, set[str]] = {}
_HEX = "0123456789abcdef"


def _parquet_available() -> bool:
    """Whether the cache can be read and written here. In the browser (Pyodide: the book's
    JupyterLite edition) the cache is off, without a warning: Pyodide's file system is in memory and
    gone with the page, and its pyarrow (a 10.9 MB download) is not loaded for it: every sweep is computed."""
    if sys.platform != "emscripten":
        return True  # pyarrow is a dependency of the library: a missing one is reported on write
    try:
        import pyarrow.parquet  # noqa: F401  (a Pyodide that has it loaded)
    except ImportError:
        return False
    return True


def _file_pattern(slug: str) -> re.Pattern:
    return re.compile(rf"{re.escape(slug)}-([0-9a-f]{{{KEY_LENGTH}}})\.([0-9a-f]{{{DIGEST_LENGTH}}})\.parquet")


def _read_cache(directory: Path, name: str, key: str) -> pd.DataFrame | None:
    """The cached frame of this sweep and key, or ``None``; a file that fails its checks is deleted."""
    stem = f"{_slug(name)}-{key[:KEY_LENGTH]}"
    try:
        entries = sorted(e.name for e in os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):  # nothing cached yet (a write says if it cannot be)
        return None
    except OSError as exc:
        warnings.warn(CacheWarning(f"sweep {name!r}: the cache folder {directory} cannot be read "
                                   f"({exc.strerror or exc}); computing the sweep"), stacklevel=3)
        return None
    for entry in entries:
        if not (entry.startswith(f"{stem}.") and entry.endswith(".parquet")):
            continue
        path = directory / entry
        frame, problem = _load(path, stem, key)
        if frame is not None:
            _USED.setdefault(_slug(name), set()).add(key[:KEY_LENGTH])
            return frame
        warnings.warn(CacheWarning(f"sweep cache file {path.name} rejected: {problem}; recomputing"), stacklevel=3)
        with contextlib.suppress(OSError):
            path.unlink()  # a symlink itself, never its target
    return None


def _load(path: Path, stem: str, key: str) -> tuple[pd.DataFrame | None, str]:
    """``(frame, "")`` when ``path`` is a regular file whose bytes match the digest in its name
    and whose metadata holds ``key``; else ``(None, why not)``. Nothing is unpickled."""
    digest = path.name[len(stem) + 1: -len(".parquet")]
    if len(digest) != DIGEST_LENGTH or any(c not in _HEX for c in digest):
        return None, "its name carries no digest"
    try:  # never through a symlink, never blocking on a FIFO or a device
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if os.path.islink(path):
            return None, "it is a symbolic link, not a regular file"
        return None, f"it cannot be read ({exc.strerror or exc})"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, "it is not a regular file"
        with os.fdopen(fd, "rb") as file:
            fd = None
            data = file.read()
    except OSError as exc:
        return None, f"it cannot be read ({exc.strerror or exc})"
    finally:
        if fd is not None:
            os.close(fd)
    if hashlib.sha256(data).hexdigest()[:DIGEST_LENGTH] != digest:
        return None, "its bytes do not match the digest in its name (truncated or corrupt)"
    try:
        import pyarrow.parquet as pq

        stored = (pq.read_metadata(io.BytesIO(data)).metadata or {}).get(_METADATA)
        frame = pd.read_parquet(io.BytesIO(data), engine="pyarrow")
    except Exception as exc:  # a file that passed the digest but does not parse
        return None, f"it does not parse as Parquet ({type(exc).__name__}: {exc})"
    try:
        stored_key = json.loads(stored)["key"] if stored is not None else None
    except (ValueError, TypeError, KeyError):
        stored_key = None
    if stored_key != key:
        return None, "its content was written for another key (a renamed or copied file)"
    if not isinstance(frame, pd.DataFrame) or not len(frame):
        return None, "it holds no rows"
    return frame, ""


def _write_cache(directory: Path, name: str, key: str, frame: pd.DataFrame) -> None:
    """Write ``frame`` as Parquet under a name that carries its digest: a fresh temporary file in
    ``directory``, renamed into place; then prune the older keys of this sweep name."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(frame, preserve_index=None)
        metadata = {**(table.schema.metadata or {}), _METADATA: json.dumps({"name": str(name), "key": key}).encode()}
        if frame.attrs:  # as pandas' own to_parquet stores them
            metadata[b"PANDAS_ATTRS"] = json.dumps(frame.attrs).encode()
        table = table.replace_schema_metadata(metadata)
        buffer = io.BytesIO()
        pq.write_table(table, buffer)
        data = buffer.getvalue()
        if not pd.read_parquet(io.BytesIO(data), engine="pyarrow").equals(frame):
            raise ValueError("the frame does not survive a Parquet round trip")
    except Exception as exc:  # e.g. a column of mixed Python objects: run fine, just not cached
        warnings.warn(CacheWarning(f"sweep {name!r} not cached: {type(exc).__name__}: {exc}"), stacklevel=3)
        return
    if _library_changed():
        warnings.warn(CacheWarning(f"sweep {name!r} not cached: the files of dpadmm_lite changed on disk since this "
                                   f"process imported it, so the key may not describe the code that ran (restart "
                                   f"the kernel to cache again)"), stacklevel=3)
        return
    slug = _slug(name)
    stem = f"{slug}-{key[:KEY_LENGTH]}"
    path = directory / f"{stem}.{hashlib.sha256(data).hexdigest()[:DIGEST_LENGTH]}.parquet"
    tmp = None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{stem}.", suffix=".tmp")  # O_EXCL, mode 0600
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.replace(tmp, path)  # atomic; a symlink at `path` is replaced, never followed
        tmp = None
    except OSError as exc:
        warnings.warn(CacheWarning(f"sweep {name!r} not cached: the cache folder {directory} cannot be written "
                                   f"({exc.strerror or exc}); the results are returned, and computed again next "
                                   f"time (set DPADMM_CACHE to a writable folder, or pass cache=False)"), stacklevel=3)
        return
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    used = _USED.setdefault(slug, set())
    used.add(key[:KEY_LENGTH])
    _prune(directory, slug, keep=used, written=path.name)


def _prune(directory: Path, slug: str, *, keep: set[str], written: str) -> int:
    """Delete the files of this sweep name whose key is not in ``keep`` (older versions of the
    sweep), other digests of the file just written, and its temporary files left by a crash."""
    pattern = _file_pattern(slug)
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        stale = match is not None and entry.name != written and (
            match.group(1) not in keep or written.startswith(f"{slug}-{match.group(1)}."))
        if not stale and entry.name.startswith(f".{slug}-") and entry.name.endswith(".tmp"):
            with contextlib.suppress(OSError):  # a crashed writer's, not one being written now
                stale = _TEMP_PATTERN.fullmatch(entry.name) is not None and \
                    entry.stat(follow_symlinks=False).st_mtime < time.time() - _TEMP_AGE
        if stale:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed += 1
    return removed


#: Sweep cache files and their temporary files (what clean_cache deletes, and nothing else).
_CACHE_FILE = re.compile(rf"[a-z0-9-]+-[0-9a-f]{{{KEY_LENGTH}}}\.[0-9a-f]{{{DIGEST_LENGTH}}}\.parquet")
_TEMP_PATTERN = re.compile(rf"\.[a-z0-9-]+-[0-9a-f]{{{KEY_LENGTH}}}\.[A-Za-z0-9_]+\.tmp")
#: A temporary file older than this (seconds) was left by a writer that crashed.
_TEMP_AGE = 3600.0


def clean_cache(directory: str | os.PathLike | None = None) -> int:
    """Delete every cached sweep in ``directory`` (default :func:`cache_dir`) and return how many
    files went; only files named like sweep cache files (and their temporary files) are touched,
    anything else in the folder stays. ``make clean-cache`` runs this and empties ``_build/cache``."""
    directory = cache_dir() if directory is None else Path(directory)
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return 0
    for entry in entries:
        if _CACHE_FILE.fullmatch(entry.name) or _TEMP_PATTERN.fullmatch(entry.name):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)
                removed += 1
    _USED.clear()
    return removed


def _slug(name: str) -> str:
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in name.lower()).strip("-") or "sweep"


