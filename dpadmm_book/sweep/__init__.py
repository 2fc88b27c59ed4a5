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
import hashlib
import itertools
import os
import sys
import warnings
from typing import Callable, Mapping, Sequence

import joblib
import pandas as pd
from tqdm.auto import tqdm

if sys.platform == "emscripten":  # the JupyterLite edition: its kernel is no ZMQ shell, so tqdm.auto would
    from tqdm.notebook import tqdm  # draw a text bar on stderr; and its monitor thread cannot start there

    tqdm.monitor_interval = 0

from dpadmm_lite import _memory
from dpadmm_lite import _validate as check

from ._files import (DIGEST_LENGTH, KEY_LENGTH, _METADATA, CacheWarning, _parquet_available,  # noqa: F401
                     _read_cache, _write_cache, cache_dir, clean_cache)
from ._hashing import (_Hasher, _Unhashable, _empty_stale_memos, _h, _library_fingerprint, _library_state,
                   _outside_state, _remember_memos)

__all__ = ["grid", "cache_dir", "cache_key", "clean_cache", "prepare_worker", "CacheWarning", "SCHEDULER_VARIABLE"]

#: Changes when the meaning of a key changes (files of older formats are never read).
_KEY_FORMAT = "dpadmm_book.sweep key 5"


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



