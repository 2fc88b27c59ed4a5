"""Run a grid of settings × seeds into one tidy DataFrame, with a progress bar and a disk cache.

The book's static charts are precomputed sweeps. :func:`grid` runs them through joblib, shows
progress with ``tqdm.auto``, and caches the result on disk so a rebuild of the book reuses it.

**Where it runs.** ``grid`` hands every (setting, seed) to :class:`joblib.Parallel`, so the same
call runs in this process (the default), on local worker processes, or on a Dask cluster,
chosen by the caller's joblib configuration and never by the chapter::

    import joblib
    from distributed import Client

    client = Client("tcp://scheduler:8786")          # or Client() for a local cluster
    with joblib.parallel_config(backend="dask"):
        frame = book.sweep.grid(task, {"epsilon": [0.1, 1.0]}, seeds=range(10), name="demo")

With ``n_jobs=None`` (the default) the number of workers follows the active backend: one (this
process) unless a ``joblib.parallel_config`` says otherwise, every worker thread of the cluster
under the Dask backend. Each task is seeded, so the result does not depend on where it ran. A
task should take small arguments (names and numbers) and build its data inside, so that only
those arguments travel to the workers.

In a worker process (any process but the caller's) the first task of a sweep first calls
:func:`prepare_worker`: a Dask nanny starts its workers with ``MALLOC_TRIM_THRESHOLD_=65536``,
which makes glibc map and fault in every array above 128 KiB afresh, and a numpy-heavy run then
took 1.25–2.1× its CPU time (the arena's full tuning sweep ran slower on two workers than in
one process); ``prepare_worker`` gives the worker glibc's usual thresholds back.

A whole book build goes to a cluster without touching a chapter: when the environment variable
``DPADMM_DASK_SCHEDULER`` is set and no joblib backend is configured, every ``grid`` call runs
under ``joblib.parallel_config(backend="dask")`` with a :class:`distributed.Client` connected to
that address (``tcp://host:8786``), or to a local cluster of N worker processes for
``local:N``. The client is made once per process (kernel) and reused. Dask is an optional
extra: ``pip install "dpadmm-lite[dask]"``.

**The cache** stores data, never code: one Parquet file per sweep, named
``<name>-<key>.<digest>.parquet``. The key is a SHA-256 of everything the result depends on:

* the sweep's arguments: its name, grid (values and order) and seeds;
* the task, by content: its code (bytecode and constants: a change of comments or layout does
  not count), its default and keyword-only default arguments, the contents of its closure
  cells, the module constants and notebook globals it reads, and the builtins it reads by value
  (``builtins.round = …`` counts) — and, recursively, the same for every function it calls or
  reads that is not installed code (a helper in the same notebook, a ``functools.partial``'s
  function and arguments, a bound method and its object, the function inside an ``lru_cache``).
  Values are hashed by content: numbers, strings, containers, numpy arrays (bytes, dtype, shape),
  pandas objects, sparse matrices, :class:`~dpadmm_lite.problems.Problem` objects and any other
  object through its pickled state (never an ``id`` or an address, so the key is the same in
  every process) — and, when its class is not installed code and chooses what its pickle holds
  (a ``__getstate__`` or ``__reduce__`` of its own), through its attributes as well, since its
  methods read the object and not its pickle. A class that is not installed code (one defined in a
  notebook cell or a module next to it) counts by its contents — its methods' code, its class
  attributes and its bases, recursively — so redefining it in a cell, or changing a class
  attribute, is another sweep. A module that is not installed code counts by its file and by
  what each of its globals holds at the call (so ``helpers.SCALE = 2`` after the import counts),
  whether the task reaches it as a global, through ``import`` inside a function, or through
  ``importlib.import_module("name")`` with the name spelled in the code. Functions of installed
  packages count by name and version; the library's by name, since
* the library counts as a whole: every file of ``dpadmm_lite`` and ``dpadmm_book`` (their code and the data
  they ship) as this process imported it, its version, the Python, numpy, scipy and pandas
  versions, and any algorithm registered from outside the library. (When the files change on
  disk after the import, a kernel still runs the code it imported: its results are then returned but
  not cached, with a :class:`CacheWarning`.)
* the library's state since its import (:mod:`dpadmm_book._state`): every public module-level
  value of the library, every function and class it defines, its classes' attributes and its
  private constants are compared with what each module's import left; what differs — a dict
  mutated in place (``dl.labels.PARAMETER_LABELS["rho"] = …``), a constant rebound
  (``star._ROUNDING_MARGIN = …`` too), a function monkeypatched or its ``__code__`` swapped — is
  hashed by content (a replacement function by its code).
* what the library's code and the task read outside them, where it differs from what it held when
  first seen (:func:`dpadmm_book._state.outside_changes`): the interpreter's builtin functions and
  types (``builtins.round = …``), and every public name of the loaded modules of the packages the
  library imports (numpy, scipy, pandas, the standard library's) or the task reaches, as the
  library's import (or the first sweep that reached them) found them: ``np.clip = …`` counts,
  whether the task calls ``np.clip`` or only the library does. A function or class of a notebook
  found there or in the builtins counts as well, so that a patch made before ``import dpadmm_lite``
  is seen too. The hooks of ``sys``, ``threading`` and ``warnings``, which kernels and test
  runners rebind, are not compared.
* the environment variables the sweep declares with ``grid(..., env=("NAME", …))``, by value.

A task that reads the environment (its code, or a function it reaches, names ``os.environ``,
``os.getenv``) without declaring ``env`` runs uncached, with a :class:`CacheWarning`; so does a
task that draws from a process-wide random generator (numpy's legacy ``np.random.normal`` and
the like, ``np.random.seed``, or the ``random`` module), whose state no key can see: seed a
``np.random.default_rng(seed)`` instead.

Change any of them and the sweep re-runs. Not in the key: files the task reads by name (other
than the library's data), state reached only through ``globals()``/``eval``, a module imported
under a name computed at run time, an environment variable read by installed code, the
library's private data changed in place (its memos, such as a loaded data set, fill in place;
a private name rebound counts), a name of an installed package rebound to another installed
package's value before the library or a sweep first saw it, a package reached only through
another installed package, and what an installed class's pickle leaves out. Memoised values are
left out of the key: the values of a ``functools.cached_property``, the contents of an
``lru_cache``, and the library's own private attributes (e.g. a problem's cached reference
optimum); a plain dict used as a memo counts with whatever it holds at the time of the call. So
that a memo never answers for values the key did not see, a sweep that runs for the cache first
empties the ``lru_cache``'d helpers and cached properties its task reaches whose values differ
from the last sweep that ran with them, or that gained entries since (see
:func:`_empty_stale_memos`), and the library's own ``lru_cache`` memos when the library's state
differs from the last sweep's. Not seen: a library memo filled outside a sweep while the
library's state differed from its import and was then restored, an ``lru_cache`` emptied by hand and refilled to
the same counts under values changed and then restored between two sweeps, and a library
object's private memo (a problem's reference optimum) computed before its arrays were changed in
place. A value that cannot be hashed by content (a lock, an open file, a generator, a widget)
makes the sweep run uncached with a :class:`CacheWarning` naming it: results are never served
for values the key did not see.

The digest is the SHA-256 of the file's bytes, checked before the file is parsed, and the file
carries its full key in its Parquet metadata, checked after; a file that fails either check,
is not a regular file (a symlink), or does not parse (truncated, corrupt, written by
something else) is reported with a :class:`CacheWarning`, deleted and recomputed. Files are
written to a fresh temporary file in the cache folder (``tempfile.mkstemp``, never a
predictable name) and renamed into place (``os.replace``, which replaces a planted symlink
instead of following it). A folder that cannot be read or written gives a
:class:`CacheWarning` naming it, and the results are returned uncached.

**Old files** are pruned on write: writing a sweep deletes the files of earlier keys of the
same sweep name, except keys this process has itself read or written (so a notebook that runs
one name with two grids keeps both). Files of sweeps that no chapter runs any more stay until
``make clean-cache`` (or :func:`clean_cache`). The cache lives in ``$DPADMM_CACHE`` (the book
build sets it to ``_build/cache/<mode>``), else in ``~/.cache/dpadmm_lite``.
"""

from __future__ import annotations

import atexit
import contextlib
import dis
import enum
import functools
import hashlib
import inspect
import io
import itertools
import json
import os
import pathlib
import re
import stat
import sys
import sysconfig
import tempfile
import time
import types
import warnings
import weakref
from pathlib import Path
from typing import Callable, Mapping, Sequence

import joblib
import numpy as np
import pandas as pd
from tqdm.auto import tqdm

if sys.platform == "emscripten":  # the JupyterLite edition: its kernel is no ZMQ shell, so tqdm.auto would
    from tqdm.notebook import tqdm  # draw a text bar on stderr; and its monitor thread cannot start there

    tqdm.monitor_interval = 0

import dpadmm_lite
from dpadmm_lite import _memory
from dpadmm_lite import _validate as check

from . import _state

__all__ = ["grid", "cache_dir", "cache_key", "clean_cache", "prepare_worker", "CacheWarning", "SCHEDULER_VARIABLE"]

#: Hex digits of the SHA-256 digest kept in a cache file's name.
DIGEST_LENGTH = 32
#: Hex digits of the key kept in a cache file's name (the file's metadata holds all 64).
KEY_LENGTH = 16
#: Parquet metadata entry that holds the sweep's name and full key.
_METADATA = b"dpadmm_book.sweep"
#: Changes when the meaning of a key changes (files of older formats are never read).
_KEY_FORMAT = "dpadmm_book.sweep key 5"


class CacheWarning(UserWarning):
    """A sweep cache file was rejected (and recomputed) or a result could not be cached."""


def cache_dir() -> Path:
    """Where sweeps are cached: ``$DPADMM_CACHE`` or ``~/.cache/dpadmm_lite``."""
    return Path(os.environ.get("DPADMM_CACHE", Path.home() / ".cache" / "dpadmm_lite"))


def grid(
    task: Callable[..., object],
    grid: Mapping[str, Sequence],
    *,
    seeds: Sequence[int] = (0,),
    name: str,
    n_jobs: int | None = None,
    cache: bool = True,
    progress: bool = True,
    env: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Run ``task(**setting, seed=s)`` for every setting of the grid and every seed.

    Parameters
    ----------
    task
        Returns a dict (one row), a list of dicts, or a DataFrame for one setting and seed.
        Under a parallel backend it is pickled to the workers (cloudpickle: a function defined
        in a notebook works), so give it small arguments and let it build its data itself.
    grid
        Setting name → values; the sweep covers their Cartesian product.
    seeds
        Seeds to repeat each setting with (spread across seeds is what charts shade). The runs go
        seed by seed (every setting of the first seed, then of the next), so that the runs of one
        seed follow one another; the frame is in grid order all the same.
    name
        Name of the sweep (part of the cache key and the progress-bar label).
    n_jobs
        Workers, as in :class:`joblib.Parallel`. ``None`` (default): follow the active joblib
        backend — this process alone, unless ``joblib.parallel_config(...)`` sets a backend or a
        number of jobs (under ``backend="dask"``: every worker thread of the cluster).
    cache
        Read and write the on-disk cache (see the module doc: the key covers the task's code and
        every value it reads; a task reading a value that cannot be hashed by content runs
        uncached, with a :class:`CacheWarning`).
    progress
        Show a ``tqdm.auto`` progress bar (it advances as results arrive, in grid order).
    env
        The environment variables the task reads (``os.environ``/``os.getenv``): their values go
        into the key. A task that reads the environment without declaring it runs uncached, with
        a :class:`CacheWarning`.

    Returns
    -------
    pandas.DataFrame
        One row per result row, with the setting and ``seed`` as columns, in grid order
        (settings in the order of their Cartesian product, seeds innermost) whatever the backend.
    """
    if not grid:
        raise ValueError("grid must name at least one setting")
    for key, values in grid.items():
        if len(values) == 0:
            raise ValueError(f"grid[{key!r}] must hold at least one value")
    seeds = [check.count("seed", s, minimum=0) for s in seeds]
    if not seeds:
        raise ValueError("seeds must hold at least one seed")
    if env is not None and (isinstance(env, str) or not all(isinstance(v, str) and v for v in env)):
        raise ValueError(f"env must be a sequence of environment variable names, e.g. env=(\"MY_SETTING\",), "
                         f"got {env!r}")
    if n_jobs is not None:
        if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0:
            raise ValueError(f"n_jobs must be None (follow the joblib backend) or a non-zero integer "
                             f"(-1: every core), got {n_jobs!r}")
    settings = [dict(zip(grid, combo), seed=s) for combo in itertools.product(*grid.values()) for s in seeds]

    key = hasher = None
    if cache and _parquet_available():
        try:
            key, hasher = _key(task, grid, seeds=seeds, name=name, env=env)
        except _Unhashable as exc:
            warnings.warn(CacheWarning(f"sweep {name!r} not cached: {exc}; it runs every time (pass cache=False to "
                                       f"say so, or let the task read values that can be hashed)"), stacklevel=2)
        except Exception as exc:  # never lose a sweep to its key: run it, uncached, and say why
            warnings.warn(CacheWarning(f"sweep {name!r} not cached: its key could not be computed "
                                       f"({type(exc).__name__}: {exc})"), stacklevel=2)
    if key is not None:
        cached = _read_cache(cache_dir(), name, key)
        if cached is not None:
            return cached
        _empty_stale_memos(hasher)  # a memo filled under other values would be written under this key

    with _cluster_from_environment(n_jobs):
        shipped = _InWorker(task)  # prepares a worker process's allocator before its first task
        backend, _ = joblib.parallel.get_active_backend()
        batch_size = DASK_BATCH_SIZE if type(backend).__name__ == "DaskDistributedBackend" else "auto"
        # seed by seed: every setting of the first seed, then of the next. The runs of one seed share its deal
        # of the records to the agents, which the algorithms keep from one run to the next (a star run
        # restacks every record at each new deal, so seed by seed it restacks once per seed, not once per
        # run); the frame is in grid order all the same
        order = sorted(range(len(settings)), key=lambda i: i % len(seeds))
        done = joblib.Parallel(n_jobs=n_jobs, return_as="generator", batch_size=batch_size)(
            joblib.delayed(shipped)(**settings[i]) for i in order)
        results = [None] * len(settings)
        for result, i in zip(tqdm(done, total=len(settings), desc=name, disable=not progress), order):
            results[i] = result
    frame = pd.concat([_rows(r, s) for r, s in zip(results, settings)], ignore_index=True)

    if key is not None:
        _remember_memos(hasher)
        _write_cache(cache_dir(), name, key, frame)
    return frame


def cache_key(task: Callable[..., object], grid: Mapping[str, Sequence], *, seeds: Sequence[int] = (0,),
              name: str, env: Sequence[str] | None = None) -> str:
    """The cache key (64 hex digits) of ``grid(task, grid, seeds=seeds, name=name)``.

    The same in every process for the same code and values (see the module doc for what it
    covers). Raises :class:`TypeError` naming the value when the task reads one that cannot be
    hashed by content.
    """
    return _key(task, grid, seeds=seeds, name=name, env=env)[0]


def _key(task, grid, *, seeds, name, env) -> tuple[str, _Hasher]:
    """The cache key, and the hasher that computed it (what it read: the memos the task reaches)."""
    hasher = _Hasher(env)
    parts = [
        _h("format", _KEY_FORMAT),
        hasher.digest(str(name), "the sweep's name"),
        hasher.digest([(str(k), list(v)) for k, v in grid.items()], "the grid"),
        hasher.digest([int(s) for s in seeds], "the seeds"),
        hasher.digest(task, "the task"),
        _library_fingerprint(),
    ]
    library = _library_state(hasher)
    outside = _outside_state(hasher)  # after the task and the library's state: the packages they reached
    hasher.state = _h("process state", library, outside)
    parts += [library, outside]
    if env is not None:  # declared, read or not
        parts.append(hasher._environment(None))
    return hashlib.sha256(b"".join(parts)).hexdigest(), hasher


#: Environment variable naming the Dask scheduler every sweep runs on (see the module doc).
SCHEDULER_VARIABLE = "DPADMM_DASK_SCHEDULER"
_CLIENTS: dict[str, object] = {}


def _cluster_from_environment(n_jobs):
    """``joblib.parallel_config(backend="dask")`` on the scheduler of ``$DPADMM_DASK_SCHEDULER``,
    when it is set and the caller configured neither a backend nor ``n_jobs``; else nothing."""
    address = os.environ.get(SCHEDULER_VARIABLE, "").strip()
    backend, configured_jobs = joblib.parallel.get_active_backend()
    default = joblib.parallel.BACKENDS[joblib.parallel.DEFAULT_BACKEND]
    if not address or n_jobs is not None or configured_jobs is not None or type(backend) is not default:
        return contextlib.nullcontext()
    try:
        import distributed
    except ImportError as exc:
        raise ValueError(f"{SCHEDULER_VARIABLE}={address!r} needs Dask: pip install 'dpadmm-lite[dask]'") from exc
    client = _CLIENTS.get(address)
    if client is None or client.status not in ("running", "connecting"):
        if address.startswith("local:"):
            workers = check.count(f"the worker count of {SCHEDULER_VARIABLE}", int(address.split(":", 1)[1]))
            cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                               dashboard_address=":0")
            client = distributed.Client(cluster)
        else:
            client = distributed.Client(address)
        if not _CLIENTS:
            atexit.register(close_clients)
        _CLIENTS[address] = client
    return joblib.parallel_config(backend="dask", client=client)


#: Runs per Dask task: one (a Dask task costs far less than a run, so batching runs saves little, and
#: the arena's tuning sweep ran slower with joblib's automatic batches than with one run a task:
#: benchmarks/dask_sweep.py --auto-batches, docs/benchmarks.md).
DASK_BATCH_SIZE: int | str = 1


class _InWorker:
    """The task as ``grid`` ships it: in any process other than the caller's (a Dask or loky
    worker) it first calls :func:`prepare_worker`, once per process."""

    def __init__(self, task: Callable[..., object]):
        self.task = task
        self.caller = os.getpid()

    def __call__(self, **setting):
        if os.getpid() != self.caller:
            prepare_worker()
        return self.task(**setting)

    def __reduce__(self):
        # the task travels as cloudpickle sends it (a notebook's function, or one of a module
        # registered to travel by value, by value): Dask pickles this wrapper with plain pickle
        return _in_worker, (_cloudpickle().dumps(self.task), self.caller)


def _cloudpickle():
    try:
        import cloudpickle
    except ImportError:  # pragma: no cover - joblib's copy
        from joblib.externals import cloudpickle
    return cloudpickle


def _in_worker(task: bytes, caller: int) -> _InWorker:
    import pickle

    shipped = _InWorker(pickle.loads(task))
    shipped.caller = caller
    return shipped


def prepare_worker() -> bool:
    """Let a worker process reuse freed numpy buffers instead of faulting in fresh pages.

    A Dask nanny starts its worker with ``MALLOC_TRIM_THRESHOLD_=65536`` (the default
    ``distributed.nanny.pre-spawn-environ``, to hand memory back to the OS). Setting it also
    switches off glibc's dynamic mmap threshold, so every array above 128 KiB is a fresh
    ``mmap`` whose pages are faulted in and zeroed at each use, and every free is an
    ``munmap``. A numpy-heavy run then pays more in page faults than in arithmetic (the arena's
    Adult runs in a worker against a plain process: ``benchmarks/dask_sweep.py --per-run``,
    docs/benchmarks.md). The worker's thresholds are set with ``mallopt``
    (:func:`dpadmm_lite._memory.keep_freed_memory`) to the values glibc reaches by itself in a plain
    process: a worker keeps up to 64 MiB of freed memory per malloc arena for reuse. Called by
    :func:`grid` in each worker process before its first task; returns whether the thresholds were
    set (``False`` off glibc, where nothing is changed).
    """
    return _memory.keep_freed_memory()


def close_clients() -> None:
    """Close the Dask clients (and local clusters) opened for ``$DPADMM_DASK_SCHEDULER``."""
    while _CLIENTS:
        _, client = _CLIENTS.popitem()
        cluster = client.cluster
        client.close()
        if cluster is not None:
            cluster.close()


def _rows(result, setting: dict) -> pd.DataFrame:
    if isinstance(result, pd.DataFrame):
        rows = result.copy()
    elif isinstance(result, Mapping):
        rows = pd.DataFrame([result])
    elif isinstance(result, list):
        rows = pd.DataFrame(result)
    else:
        raise ValueError(f"task must return a dict, a list of dicts or a DataFrame, got {type(result).__name__}")
    for key, value in setting.items():
        if key not in rows.columns:
            rows[key] = value
    return rows



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


# ---------------------------------------------------------------------- the key: values by content
class _Unhashable(TypeError):
    """A value the task reads cannot be hashed by content."""


def _h(tag: str, *parts) -> bytes:
    """SHA-256 of a tag and length-prefixed parts (bytes, or anything ``str`` spells exactly)."""
    h = hashlib.sha256()
    for part in (tag, *parts):
        if isinstance(part, memoryview):
            h.update(part.nbytes.to_bytes(8, "little"))
        else:
            part = part if isinstance(part, (bytes, bytearray)) else str(part).encode("utf-8", "surrogatepass")
            h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.digest()


def _installed_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    with contextlib.suppress(Exception):
        import site

        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    return tuple(sorted(os.path.realpath(r) + os.sep for r in roots if r))


_INSTALLED = _installed_roots()


@functools.lru_cache(maxsize=None)
def _origin(module_name: str) -> str:
    """``"library"`` (dpadmm_lite: its files are in the key), ``"installed"`` (stdlib or
    site-packages: counted by name and version) or ``"user"`` (a notebook, a script, a module
    next to them: hashed by content)."""
    top = module_name.partition(".")[0]
    if top in _state._OURS:
        return "library"
    if not module_name or module_name == "__main__":
        return "user"
    if top in sys.stdlib_module_names or module_name in sys.builtin_module_names:
        return "installed"
    module = sys.modules.get(module_name) or sys.modules.get(top)
    file = getattr(module, "__file__", None) if module is not None else None
    if file is None:
        return "user" if module is None else "installed"
    return "installed" if os.path.realpath(file).startswith(_INSTALLED) else "user"


def _version(module_name: str) -> str:
    top = module_name.partition(".")[0]
    if top in sys.stdlib_module_names or top == "builtins":
        return "python " + ".".join(map(str, sys.version_info[:3]))
    return str(getattr(sys.modules.get(top), "__version__", ""))


@functools.lru_cache(maxsize=4096)
def _global_names(code: types.CodeType) -> tuple[str, ...]:
    """Names a code object (and the functions, lambdas and comprehensions inside it) reads as globals."""
    names = []
    for instruction in dis.get_instructions(code):
        if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME") and instruction.argval not in names:
            names.append(instruction.argval)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names += [n for n in _global_names(const) if n not in names]
    return tuple(names)


def _codes(code: types.CodeType):
    """A code object and every code object inside it (functions, lambdas, comprehensions)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


#: Names through which code reads the process environment.
_ENVIRONMENT_NAMES = frozenset({"environ", "environb", "getenv", "getenvb"})


@functools.lru_cache(maxsize=4096)
def _reads_environment(code: types.CodeType) -> bool:
    """Whether the code names ``os.environ``/``os.getenv`` (or reads them as globals)."""
    return any(_ENVIRONMENT_NAMES.intersection(c.co_names) for c in _codes(code))


_random_module = __import__("random")
#: The functions of numpy's legacy global generator (``np.random.normal``, ``np.random.seed``, …)
#: and of the standard library's (``random.random``, ``random.seed``, …): they read and advance a
#: state shared by the whole process, which no key can see.
_LEGACY_RNG = frozenset(
    {n for n in dir(np.random) if getattr(getattr(np.random, n, None), "__self__", None) is np.random.mtrand._rand}
    | {n for n in dir(_random_module) if getattr(getattr(_random_module, n, None), "__self__", None)
       is getattr(_random_module, "_inst", None)}
    | {"seed", "sample", "ranf", "get_state", "set_state", "getstate", "setstate"})
_RNG_MESSAGE = ("it draws from the process's global random generator (numpy's legacy np.random.<function> or the "
                "random module), whose state the key cannot see and which makes the results depend on what ran "
                "before: draw from np.random.default_rng(seed) instead")


_RNG_MODULES = ("random", "numpy.random")
_STORES = ("STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF")


@functools.lru_cache(maxsize=4096)
def _reads_global_rng(code: types.CodeType, aliases: frozenset) -> bool:
    """Whether the code calls a legacy global-generator function: an attribute ``random`` then one
    of :data:`_LEGACY_RNG` (``np.random.normal``); a global in ``aliases`` (the names bound to
    ``numpy.random`` or the ``random`` module: ``random.gauss``, ``npr.normal``) or a local bound by
    an import inside the code (``import random``) then one of them; or an import of one of them
    (``from numpy.random import normal`` inside the code)."""
    for c in _codes(code):
        previous, imported, local = None, None, set()
        for instruction in dis.get_instructions(c):
            op, arg = instruction.opname, instruction.argval
            if op == "IMPORT_NAME":
                imported = arg
            elif op == "IMPORT_FROM":
                if imported in _RNG_MODULES and arg in _LEGACY_RNG:
                    return True
                imported = f"{imported}.{arg}"
            elif op in _STORES and imported is not None:
                if imported in _RNG_MODULES:
                    local.add(arg)
                imported = None
            elif (previous is not None and op in ("LOAD_ATTR", "LOAD_METHOD") and arg in _LEGACY_RNG
                    and ((previous.opname in ("LOAD_ATTR", "LOAD_METHOD") and previous.argval == "random")
                         or (previous.opname in ("LOAD_GLOBAL", "LOAD_NAME") and previous.argval in aliases)
                         or (previous.opname in ("LOAD_FAST", "LOAD_DEREF", "LOAD_NAME")
                             and previous.argval in local))):
                return True
            previous = instruction
    return False


def _global_rng(obj) -> bool:
    """Whether ``obj`` is a function of a global generator (``from numpy.random import normal``)."""
    owner = getattr(obj, "__self__", None)
    if owner is not None and (owner is np.random.mtrand._rand or owner is getattr(_random_module, "_inst", None)):
        return True
    return obj is np.random.seed or obj is np.random.mtrand._rand


_MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


@functools.lru_cache(maxsize=4096)
def _imported_modules(code: types.CodeType) -> tuple[str, ...]:
    """Module names the code imports (``import helpers`` inside a function) or spells in a string
    constant (``importlib.import_module("helpers")``); the loaded ones among them are hashed."""
    names = []
    for c in _codes(code):
        for instruction in dis.get_instructions(c):
            if instruction.opname == "IMPORT_NAME" and instruction.argval not in names:
                names.append(instruction.argval)
        names += [const for const in c.co_consts
                  if isinstance(const, str) and _MODULE_NAME.fullmatch(const) and const not in names]
    return tuple(names)


_DESCRIPTORS = (types.WrapperDescriptorType, types.MethodDescriptorType, types.ClassMethodDescriptorType,
                types.GetSetDescriptorType, types.MemberDescriptorType)
#: Entries of a class's __dict__ that describe its layout rather than its behaviour.
_CLASS_LAYOUT = {"__dict__", "__weakref__", "__module__", "__qualname__", "__doc__", "_abc_impl",
                 "__dataclass_fields__", "__dataclass_params__", "__match_args__", "__annotations__",
                 "__parameters__", "__orig_bases__", "__slots__"}
_MAX_DEPTH = 120


class _Hasher:
    """Content digests of values (Merkle style: a container's digest is that of its parts'),
    the same in every process: no ``id``, no address, no set or hash-seed order."""

    def __init__(self, env: Sequence[str] | None = None):
        #: the environment variables the task declared it reads (``grid(..., env=…)``), or None
        self._env = None if env is None else tuple(env)
        self._memo: dict[int, bytes] = {}
        self._alive: list = []  # keeps hashed objects alive so that their ids stay theirs
        self._active: dict[int, int] = {}
        self._path: list[str] = []
        #: top-level names of the installed packages reached (their names are compared, see _outside_state)
        self.packages: set[str] = set()
        #: (holder, attribute, digest of what fills it) of the memos reached: an lru_cache'd helper outside
        #: installed code and the library (attribute None), a cached_property of an object whose class is
        #: not installed code
        self.memos: list[tuple[object, str | None, bytes]] = []
        #: digest of the library's state and of the names it and the task read outside it (set by _key)
        self.state = b""

    def _installed(self, module_name: str) -> str:
        """The version of an installed package reached; its names are compared as well."""
        self.packages.add(module_name.partition(".")[0])
        return _version(module_name)

    def digest(self, value, label: str | None = None) -> bytes:
        if label is not None:
            self._path.append(label)
        try:
            return self._value(value)
        except RecursionError:
            raise self._fail(value, "it is nested too deeply") from None
        finally:
            if label is not None:
                self._path.pop()

    def _environment(self, value) -> bytes:
        """A read of ``os.environ``: the declared variables' values, or the task runs uncached."""
        if self._env is None:
            raise self._fail(value, "it reads the environment (os.environ or os.getenv), which the key does not "
                                    "see unless the sweep declares the variables it reads: grid(..., env=(\"NAME\",))")
        return _h("environment", *(p for v in sorted(set(self._env)) for p in (v, repr(os.environ.get(v)))))

    def _fail(self, value, why: str) -> _Unhashable:
        where = " → ".join(self._path) or "a value"
        return _Unhashable(f"{where} (a {type(value).__module__}.{type(value).__qualname__}) cannot be hashed by "
                           f"content: {why}")

    # ------------------------------------------------------------------ dispatch
    def _value(self, obj) -> bytes:
        if obj is None or obj is Ellipsis or obj is NotImplemented:
            return _h("const", repr(obj))
        t = type(obj)
        if t is bool:
            return _h("bool", int(obj))
        if t is int:
            return _h("int", hex(obj))
        if t is float:
            return _h("float", obj.hex())
        if t is complex:
            return _h("complex", obj.real.hex(), obj.imag.hex())
        if t is str:
            return _h("str", obj)
        if t is bytes or t is bytearray:
            return _h(t.__name__, bytes(obj))
        if isinstance(obj, np.generic) and not obj.dtype.hasobject:
            return _h("numpy scalar", np.lib.format.dtype_to_descr(obj.dtype), obj.tobytes())
        if isinstance(obj, type):  # its own memo and cycle marks: marked here first, it read as a cycle
            return self._type(obj)
        key = id(obj)
        if key in self._memo:
            return self._memo[key]
        if key in self._active:  # a cycle: say how far up it points (the same in every process)
            return _h("cycle", len(self._active) - self._active[key])
        if len(self._active) > _MAX_DEPTH:
            raise self._fail(obj, "it is nested too deeply")
        self._active[key] = len(self._active)
        self._alive.append(obj)
        try:
            digest = self._composite(obj)
        finally:
            del self._active[key]
        self._memo[key] = digest
        return digest

    def _composite(self, obj) -> bytes:
        t = type(obj)
        if isinstance(obj, enum.Enum):
            return _h("enum", self._type(t), obj.name, self.digest(obj.value, ".value"))
        if isinstance(obj, np.ndarray):
            return self._array(obj)
        if isinstance(obj, np.dtype):
            return _h("dtype", np.lib.format.dtype_to_descr(obj))
        if isinstance(obj, (pd.DataFrame, pd.Series, pd.Index)):
            return self._pandas(obj)
        if "scipy.sparse" in sys.modules and sys.modules["scipy.sparse"].issparse(obj):
            csr = obj.tocsr(copy=True)
            csr.sum_duplicates()
            csr.sort_indices()
            return _h("sparse", self._type(t), csr.shape, self._array(csr.data), self._array(csr.indices),
                      self._array(csr.indptr))
        if isinstance(obj, (tuple, list)):
            kind = "list" if isinstance(obj, list) else "tuple"
            head = (kind, self._type(t) if t not in (tuple, list) else kind)
            return _h(*head, *(self.digest(item, f"[{i}]") for i, item in enumerate(obj)))
        if isinstance(obj, (dict, types.MappingProxyType)):
            extra = (self.digest(obj.default_factory, ".default_factory"),) if hasattr(obj, "default_factory") else ()
            items = [(self.digest(k, "a key"), self.digest(v, f"[{k!r}]" if type(k) in (str, int) else "an item"))
                     for k, v in obj.items()]
            return _h("dict", self._type(t) if t is not dict else "dict", *extra, *(p for kv in items for p in kv))
        if isinstance(obj, (set, frozenset)):
            return _h("set", t.__name__, *sorted(self.digest(item, "an element") for item in obj))
        if isinstance(obj, (range, slice)):
            return _h(t.__name__, self.digest(obj.start), self.digest(obj.stop), self.digest(obj.step))
        if isinstance(obj, pathlib.PurePath):
            return _h("path", t.__name__, str(obj))
        if isinstance(obj, types.ModuleType):
            return self._module(obj)
        if obj is os.environ or obj is os.environb or obj is os.getenv:
            return self._environment(obj)
        if _global_rng(obj):
            raise self._fail(obj, _RNG_MESSAGE)
        if isinstance(obj, types.FunctionType):
            return self._function(obj)
        if isinstance(obj, types.MethodType):
            return _h("method", self.digest(obj.__func__, f"{obj.__func__.__qualname__}"),
                      self.digest(obj.__self__, "its object"))
        if isinstance(obj, functools.partial):
            return _h("partial", self.digest(obj.func, "partial function"), self.digest(obj.args, "partial arguments"),
                      self.digest(obj.keywords, "partial keywords"), self.digest(getattr(obj, "__dict__", {})))
        if t.__name__ == "_lru_cache_wrapper" and hasattr(obj, "__wrapped__"):
            # the cache's contents are derived from the wrapped function: only that counts, and grid empties
            # a memo filled under other values before it runs (_empty_stale_memos)
            reads = self.digest(obj.__wrapped__, "lru_cache function")
            if _user_defined(obj.__wrapped__):
                self.memos.append((obj, None, reads))
            return _h("lru_cache", str(obj.cache_parameters()), reads)
        if isinstance(obj, (staticmethod, classmethod)):
            return _h(t.__name__, self.digest(obj.__func__))
        if isinstance(obj, property):
            return _h("property", self.digest(obj.fget), self.digest(obj.fset), self.digest(obj.fdel))
        if isinstance(obj, functools.cached_property):
            return _h("cached_property", self.digest(obj.func))
        if isinstance(obj, types.CodeType):
            return self._code(obj)
        if isinstance(obj, types.BuiltinFunctionType):
            owner = obj.__self__
            if owner is None or isinstance(owner, types.ModuleType):
                module = getattr(obj, "__module__", None) or getattr(owner, "__name__", "") or ""
                return _h("builtin", module, obj.__qualname__, self._installed(module))
            return _h("builtin method", obj.__name__, self.digest(owner, "its object"))
        if isinstance(obj, types.MethodWrapperType):
            return _h("method-wrapper", obj.__name__, self.digest(obj.__self__, "its object"))
        if isinstance(obj, _DESCRIPTORS):
            return _h("descriptor", self._type(obj.__objclass__), obj.__name__)
        if isinstance(obj, np.ufunc):
            return _h("ufunc", obj.__name__, self._installed("numpy"))
        return self._object(obj)

    # ------------------------------------------------------------------ data
    def _array(self, a: np.ndarray) -> bytes:
        head = ("ndarray", self._type(type(a)) if type(a) is not np.ndarray else "", a.shape)
        if a.dtype == object:
            return _h(*head, "object", *(self.digest(x, f"[{i}]") for i, x in enumerate(a.reshape(-1))))
        if a.dtype.hasobject:
            raise self._fail(a, "a structured dtype with Python objects inside")
        extra = (self._array(np.ma.getmaskarray(a)),) if isinstance(a, np.ma.MaskedArray) else ()
        a = np.ascontiguousarray(a)
        try:
            data = memoryview(a).cast("B")
        except (TypeError, ValueError):  # dtypes the buffer protocol does not export (datetime64, …)
            data = a.tobytes()
        return _h(*head, np.lib.format.dtype_to_descr(a.dtype), data, *extra)

    def _values(self, values, dtype) -> bytes:
        """A pandas column's or index's values, with its dtype."""
        if isinstance(dtype, pd.CategoricalDtype):
            return _h("categorical", self._array(np.asarray(values.codes)),
                      self._pandas(dtype.categories), int(bool(dtype.ordered)))
        if isinstance(dtype, np.dtype):
            return _h("values", self._array(np.asarray(values)))
        return _h("values", str(dtype), self._array(np.asarray(values, dtype=object)))

    def _pandas(self, obj) -> bytes:
        if isinstance(obj, pd.DataFrame):
            return _h("DataFrame", self._type(type(obj)), self._pandas(obj.columns), self._pandas(obj.index),
                      *(self.digest(obj.iloc[:, i], f"column {c!r}") for i, c in enumerate(obj.columns)),
                      self.digest(dict(obj.attrs), "attrs"))
        if isinstance(obj, pd.Series):
            return _h("Series", self._type(type(obj)), self.digest(obj.name, "name"), str(obj.dtype),
                      self._pandas(obj.index), self._values(obj.array, obj.dtype))
        if isinstance(obj, pd.MultiIndex):
            return _h("MultiIndex", self.digest(list(obj.names), "names"),
                      *(self._pandas(level) for level in obj.levels), *(self._array(np.asarray(c)) for c in obj.codes))
        return _h("Index", self._type(type(obj)), self.digest(obj.name, "name"), str(obj.dtype),
                  self._values(obj.array if not isinstance(obj.dtype, pd.CategoricalDtype) else obj.values, obj.dtype))

    # ------------------------------------------------------------------ code
    def _module(self, module: types.ModuleType) -> bytes:
        name = module.__name__
        origin = _origin(name)
        if origin == "library":
            return _h("module", name)
        if origin == "installed":
            return _h("module", name, self._installed(name))
        file = getattr(module, "__file__", None)
        try:
            source = Path(file).read_bytes() if file else b""
        except OSError:
            source = b""
        # and what its names hold now, by value: a global of the module changed after its import
        # (``helpers.SCALE = 2``) counts, however the task reaches it (``helpers.SCALE``,
        # ``getattr(importlib.import_module("helpers"), "SCALE")``)
        parts = []
        for attribute, value in sorted(vars(module).items()):
            if not (attribute.startswith("__") and attribute.endswith("__")):
                parts += [attribute, self.digest(value, f"{name}.{attribute}")]
        return _h("module", name, source, *parts)

    def _type(self, cls: type) -> bytes:
        module, name = getattr(cls, "__module__", "") or "", cls.__qualname__
        origin = _origin(module)
        if origin != "user":
            return _h("class", module, name, self._installed(module) if origin == "installed" else "")
        key = id(cls)
        if key in self._memo:
            return self._memo[key]
        if key in self._active:
            return _h("cycle", len(self._active) - self._active[key])
        self._active[key] = len(self._active)
        self._alive.append(cls)
        try:
            parts = [self._type(base) for base in cls.__bases__]
            for attribute, value in sorted(vars(cls).items()):
                if attribute not in _CLASS_LAYOUT and not isinstance(value, _DESCRIPTORS):
                    parts += [attribute, self.digest(value, f"{cls.__qualname__}.{attribute}")]
            digest = _h("user class", module, name, *parts)
        finally:
            del self._active[key]
        self._memo[key] = digest
        return digest

    def _code(self, code: types.CodeType) -> bytes:
        return _h("code", code.co_name, code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount,
                  code.co_flags, code.co_code, code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars,
                  *(self.digest(const) for const in code.co_consts))

    def _function(self, fn: types.FunctionType) -> bytes:
        # where its code runs, not its __module__ (functools.wraps copies that from the function a
        # wrapper wraps: the registry's argument checks wrap notebook functions too)
        module, name = fn.__globals__.get("__name__", fn.__module__) or "", fn.__qualname__
        origin = _origin(module)
        if origin == "installed":
            return _h("function", module, name, self._installed(module))
        parts = [self.digest(fn.__defaults__, f"defaults of {name}"),
                 self.digest(fn.__kwdefaults__, f"keyword-only defaults of {name}")]
        for variable, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                content = cell.cell_contents
            except ValueError:  # not yet assigned
                parts += [variable, _h("empty cell")]
            else:
                parts += [variable, self.digest(content, f"closure variable {variable!r} of {name}")]
        if origin == "library":  # its code and module globals: the library fingerprint
            return _h("library function", module, name, *parts)
        parts.append(self._code(fn.__code__))
        namespace, builtins = fn.__globals__, fn.__builtins__
        if _reads_environment(fn.__code__):
            parts.append(self._environment(fn))
        aliases = {v for v in _global_names(fn.__code__)
                   if namespace.get(v) is np.random or namespace.get(v) is _random_module}
        if _reads_global_rng(fn.__code__, frozenset(aliases)):
            raise self._fail(fn, _RNG_MESSAGE)
        for imported in _imported_modules(fn.__code__):  # `import helpers` inside it, import_module("helpers")
            module = sys.modules.get(imported)
            if isinstance(module, types.ModuleType) and _origin(imported) == "user" and imported != "__main__":
                parts += [imported, self.digest(module, f"module {imported!r} imported by {name}")]
        for variable in _global_names(fn.__code__):
            if variable in namespace:
                parts += [variable, self.digest(namespace[variable], f"global {variable!r} read by {name}")]
            elif variable in builtins:  # by value: builtins.round = … or builtins.SCALE = … counts
                parts += [variable, self.digest(builtins[variable], f"builtin {variable!r} read by {name}")]
            else:
                parts += [variable, _h("undefined name")]
        if fn.__dict__:
            parts.append(self.digest(dict(fn.__dict__), f"attributes of {name}"))
        return _h("function", module, name, *parts)

    # ------------------------------------------------------------------ any other object
    def _object(self, obj) -> bytes:
        cls = type(obj)
        try:
            reduced = obj.__reduce_ex__(4)
        except Exception as exc:
            raise self._fail(obj, f"it cannot be pickled ({type(exc).__name__}: {exc})") from None
        if isinstance(reduced, str):  # a module-level singleton, by name
            return _h("named object", cls.__module__, reduced)
        if not isinstance(reduced, tuple) or len(reduced) < 2:
            raise self._fail(obj, f"its __reduce_ex__ returned {type(reduced).__name__}")
        constructor, args, state, items, pairs = (tuple(reduced) + (None,) * 5)[:5]
        derived = _cached_properties(cls)
        if isinstance(state, dict):
            state = self._state(cls, state, derived)
        elif isinstance(state, tuple) and len(state) == 2 and all(s is None or isinstance(s, dict) for s in state):
            state = tuple(None if s is None else self._state(cls, s, derived) for s in state)
        origin = _origin(cls.__module__ or "")
        attributes = ()
        if origin != "installed" and _own_pickling(cls):
            # its pickle holds what its __getstate__ or __reduce__ chose, its methods read the object: its
            # attributes count too (an installed class's pickle is trusted to hold what its code reads)
            attributes = (self.digest(self._state(cls, _attributes(obj), derived), f"{cls.__qualname__} attributes"),)
        digest = _h("object", self._type(cls), self.digest(constructor, "its constructor"),
                    self.digest(args, f"{cls.__qualname__} arguments"), self.digest(state, f"{cls.__qualname__} state"),
                    self.digest(None if items is None else list(items), f"{cls.__qualname__} items"),
                    self.digest(None if pairs is None else dict(pairs), f"{cls.__qualname__} items"), *attributes)
        if origin != "installed" and getattr(obj, "__dict__", None) is not None:
            # its cached properties are memos of the object and its class (this digest): grid empties one
            # filled under other values (_empty_stale_memos)
            self.memos += [(obj, attribute, digest) for attribute in derived]
        return digest

    @staticmethod
    def _state(cls: type, state: dict, derived: Mapping[str, object]) -> dict:
        """An object's attributes without the ones derived from the others: the values of its
        ``cached_property`` attributes and, for the library's classes, its private attributes
        (memoised results such as a problem's reference optimum, working buffers)."""
        library = _origin(cls.__module__ or "") == "library"
        return {k: v for k, v in state.items() if k not in derived and not (library and str(k).startswith("_"))}


#: The methods through which a class chooses what its pickle holds.
_PICKLING = ("__reduce_ex__", "__reduce__", "__getstate__")


def _own_pickling(cls: type) -> bool:
    """Whether ``cls`` (or a base other than ``object``) chooses what its pickle holds."""
    return any(getattr(cls, method, None) is not getattr(object, method) for method in _PICKLING)


def _attributes(obj) -> dict:
    """An object's instance attributes: its ``__dict__`` and the slots that are set."""
    found = dict(getattr(obj, "__dict__", None) or {})
    for klass in type(obj).__mro__:
        slots = vars(klass).get("__slots__", ())
        for slot in [slots] if isinstance(slots, str) else slots:
            if slot.startswith("__") and not slot.endswith("__"):  # stored under its mangled name
                slot = f"_{klass.__name__.lstrip('_')}{slot}"
            descriptor = vars(klass).get(slot)
            if isinstance(descriptor, types.MemberDescriptorType):
                with contextlib.suppress(AttributeError):  # a slot never set
                    found[slot] = descriptor.__get__(obj, klass)
    return found


def _cached_properties(cls: type) -> dict[str, functools.cached_property]:
    """Name → ``cached_property`` of a class (the one its instances resolve: the first along the MRO)."""
    found: dict[str, object] = {}
    for klass in cls.__mro__:
        for name, value in vars(klass).items():
            found.setdefault(name, value)
    return {name: value for name, value in found.items() if isinstance(value, functools.cached_property)}


def _user_defined(value) -> bool:
    """Whether ``value`` was defined outside installed code and the library (in a notebook, a script,
    a module next to them): a function by where its code runs, a class by its module, a bound method or
    a ``functools.partial`` by its function, any other object by its class."""
    if type(value) in _PLAIN:
        return False
    while isinstance(value, (types.MethodType, functools.partial)):
        value = value.__func__ if isinstance(value, types.MethodType) else value.func
    if isinstance(value, types.FunctionType):
        module = value.__globals__.get("__name__", value.__module__) or ""
        if module not in sys.modules:  # its module is gone (or never was one): where its code is
            return not os.path.realpath(value.__code__.co_filename).startswith(_INSTALLED)
    else:  # a class's, an extension function's or an instance's own __module__, else its class's
        module = getattr(value, "__module__", None)
        if not isinstance(module, str):
            module = type(value).__module__
        if module.partition(".")[0] not in sys.modules:  # named after no loaded module: an extension's
            return False
    return _origin(module) == "user"


#: Types whose values are data, never code of a notebook's.
_PLAIN = frozenset({type(None), bool, int, float, complex, str, bytes, tuple, list, dict, set, frozenset})


def _unwrapped(function):
    """The function a ``functools.wraps`` wrapper (the registry's argument checks) wraps."""
    return inspect.unwrap(function) if callable(function) else function


#: Roots of the packages whose files the key covers: the library and the book's instruments (a module
#: constant so that tests can point it elsewhere).
_LIBRARY_ROOTS: tuple[Path, ...] = (Path(dpadmm_lite.__file__).parent, Path(__file__).parent)
#: The packages' files as this process imported them (roots → digest): the key describes the code
#: that runs, even if the files change on disk later (a kernel keeps the modules it imported).
_LIBRARY_SNAPSHOT: dict[tuple[Path, ...], bytes] = {}


def _library_files(roots: tuple[Path, ...]) -> bytes:
    """Digest of every file of the packages under ``roots`` (code and shipped data; no caches)."""
    h = hashlib.sha256()
    for root in roots:
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root)
            if (any(p.startswith(".") or p == "__pycache__" for p in relative.parts) or path.suffix in (".pyc", ".pyo")
                    or not path.is_file()):
                continue
            with contextlib.suppress(OSError):  # a file deleted while we list
                h.update(_h("file", root.name, relative.as_posix(), path.read_bytes()))
    return h.digest()


def _library_changed() -> bool:
    """Whether the packages' files differ from the ones this process imported (then a result
    computed by the imported code must not be stored under the key of the code on disk)."""
    return _LIBRARY_ROOTS in _LIBRARY_SNAPSHOT and _library_files(_LIBRARY_ROOTS) != _LIBRARY_SNAPSHOT[_LIBRARY_ROOTS]


def _library_fingerprint() -> bytes:
    """Digest of the library: its files as this process imported them, its version, the Python
    and numerical-stack versions, and algorithms registered from outside the library (their
    code and values, by content)."""
    import scipy

    from dpadmm_lite import __version__
    from dpadmm_lite import registry

    if _LIBRARY_ROOTS not in _LIBRARY_SNAPSHOT:
        _LIBRARY_SNAPSHOT[_LIBRARY_ROOTS] = _library_files(_LIBRARY_ROOTS)
    h = hashlib.sha256(_LIBRARY_SNAPSHOT[_LIBRARY_ROOTS])
    h.update(_h("versions", __version__, sys.version_info[:3], np.__version__, scipy.__version__, pd.__version__))
    outside = [(name, info) for name, info in sorted(registry._REGISTRY.items())
               if _origin(getattr(_unwrapped(info.function), "__module__", "") or "") != "library"]
    if outside:
        h.update(_Hasher().digest(outside, "algorithms registered outside the library"))
    return h.digest()



def _library_state(hasher: _Hasher) -> bytes:
    """Digest of what the library's modules hold now that their import did not leave there
    (:mod:`dpadmm_book._state`): a setting mutated in place or rebound, a function replaced or
    its code swapped, by content; nothing (a constant) when the library is as imported."""
    parts = []
    for module, name, value, how in _state.changes():
        label = f"{module}.{name} ({how} since the library's import)"
        parts += [module, name, how, hasher.digest(value, label)]
        if how == "code":  # a library function hashes by name (its file): its swapped code by content
            parts.append(hasher._code(value.__code__))
    return _h("library state", *parts)


def _outside_state(hasher: _Hasher) -> bytes:
    """Digest of what the library's code and the task read outside the library that differs from
    what it held when first seen (:func:`dpadmm_book._state.outside_changes`): a builtin rebound or a
    notebook's function put in the builtins, a function of numpy or of another installed package the
    library imports or the task reached monkeypatched (``np.clip = …``), by content; nothing when all
    are as first seen."""
    parts = []
    for module, name, value, how in _state.outside_changes(sorted(hasher.packages), _user_defined):
        label = f"{module}.{name} ({how})"
        if isinstance(value, types.MethodType) and not _user_defined(value):
            # an installed object's method (a kernel's builtins.input): by its function and class, not by
            # the object's state (a kernel's sockets)
            parts += [module, name, how, hasher.digest(value.__func__, label), hasher._type(type(value.__self__))]
        else:
            parts += [module, name, how, hasher.digest(value, label)]
    return _h("outside state", *parts)


# ---------------------------------------------------------------------- memos
#: The process state (library, builtins, packages) when nothing differs from what the import found.
_AS_IMPORTED = _h("process state", _h("library state"), _h("outside state"))
#: The process state under which the library's own memos were last emptied (or filled, from the import on).
_LIBRARY_MEMOS_FILLED_UNDER = [_AS_IMPORTED]
#: Per memo a sweep ran with: (id of its holder, attribute) → (weak reference to the holder, digest of
#: what fills it, its fill marker after the sweep ran).
_MEMOS: dict[tuple[int, str | None], tuple] = {}
_ABSENT = object()


def _fill_marker(holder, attribute):
    """What changes when a memo gains an entry: an lru_cache's (size, misses, hits), a cached
    property's value (compared by identity: the record keeps it alive)."""
    if attribute is None:
        info = holder.cache_info()
        return info.currsize, info.misses, info.hits
    return (getattr(holder, "__dict__", None) or {}).get(attribute, _ABSENT)


def _unchanged(marker, before, attribute) -> bool:
    if attribute is not None:
        return marker is before
    # no entry added (the same size and misses), and not emptied and refilled (which restarts the hits at 0)
    return marker[:2] == before[:2] and marker[2] >= before[2]


def _empty_stale_memos(hasher: _Hasher) -> None:
    """Before a sweep runs for the cache, empty every memo whose entries may have been computed from
    other values than the ones its key holds: the sweep would write them under this key.

    A memo the task reaches (an ``lru_cache``'d helper outside installed code and the library, the
    ``cached_property`` of an object whose class is not installed code) is kept only if the last sweep
    that ran with it saw the same values (the helper's code and globals, or the object and its class;
    and the process state) and it gained no entry since; any other is emptied, one filled in a cell
    before any sweep saw it included. The library's own ``lru_cache`` memos are emptied when the
    library's state, or what it reads outside itself, differs from the last sweep's (from the
    import's, before the first)."""
    for holder, attribute, reads in hasher.memos:
        marker = _fill_marker(holder, attribute)
        if (marker[0] == 0) if attribute is None else marker is _ABSENT:
            continue  # empty
        seen = _MEMOS.get((id(holder), attribute))
        if (seen is None or seen[0]() is not holder or seen[1] != _h("memo", reads, hasher.state)
                or not _unchanged(marker, seen[2], attribute)):
            if attribute is None:
                holder.cache_clear()
            else:
                holder.__dict__.pop(attribute, None)
    if hasher.state != _LIBRARY_MEMOS_FILLED_UNDER[0]:
        for memo in _library_memos():
            memo.cache_clear()
        _LIBRARY_MEMOS_FILLED_UNDER[0] = hasher.state


def _remember_memos(hasher: _Hasher) -> None:
    """After a sweep ran: what each memo it reached was filled under, for the next sweep's check."""
    for holder, attribute, reads in hasher.memos:
        where = (id(holder), attribute)
        try:
            ref = weakref.ref(holder, lambda _, where=where: _MEMOS.pop(where, None))
        except TypeError:  # no weak reference to it: emptied before every sweep that runs with it
            continue
        _MEMOS[where] = (ref, _h("memo", reads, hasher.state), _fill_marker(holder, attribute))


def _library_memos():
    """The library's ``lru_cache`` memos, module-level and in its classes (not the sweep's own, which
    memoise facts about code objects and module names)."""
    for name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType) or _origin(name) != "library" or name == __name__:
            continue
        for value in list(vars(module).values()):
            inner = list(vars(value).values()) if isinstance(value, type) and value.__module__ == name else []
            for memo in [value, *inner]:
                memo = memo.__func__ if isinstance(memo, (staticmethod, classmethod)) else memo
                if type(memo).__name__ == "_lru_cache_wrapper" and hasattr(memo, "cache_clear"):
                    yield memo


_LIBRARY_SNAPSHOT[_LIBRARY_ROOTS] = _library_files(_LIBRARY_ROOTS)
