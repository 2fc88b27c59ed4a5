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
        frame = dl.sweep.grid(task, {"epsilon": [0.1, 1.0]}, seeds=range(10), name="demo")

With ``n_jobs=None`` (the default) the number of workers follows the active backend: one (this
process) unless a ``joblib.parallel_config`` says otherwise, every worker thread of the cluster
under the Dask backend. Each task is seeded, so the result does not depend on where it ran. A
task should take small arguments (names and numbers) and build its data inside, so that only
those arguments travel to the workers.

A whole book build goes to a cluster without touching a chapter: when the environment variable
``DPADMM_DASK_SCHEDULER`` is set and no joblib backend is configured, every ``grid`` call runs
under ``joblib.parallel_config(backend="dask")`` with a :class:`distributed.Client` connected to
that address (``tcp://host:8786``), or to a local cluster of N worker processes for
``local:N``. The client is made once per process (kernel) and reused. Dask is an optional
extra: ``pip install "dpadmm-lite[dask]"``.

**The cache** stores data, never code: one Parquet file per sweep, named
``<name>-<key>.<digest>.parquet``. The key covers the sweep's name, grid, seeds, the task's
source code and the library's source code (change any of them and the sweep re-runs); the
digest is the SHA-256 of the file's bytes, checked before the file is parsed. A file that fails
the check or does not parse (truncated, corrupt, written by something else) is reported with a
:class:`CacheWarning`, deleted and recomputed. The cache lives in ``$DPADMM_CACHE`` (the book
build sets it to ``_build/cache/<mode>``), else in ``~/.cache/dpadmm_lite``.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import inspect
import io
import itertools
import os
import warnings
from pathlib import Path
from typing import Callable, Mapping, Sequence

import joblib
import pandas as pd
from tqdm.auto import tqdm

from . import _validate as check

__all__ = ["grid", "cache_dir", "CacheWarning", "SCHEDULER_VARIABLE"]

#: Hex digits of the SHA-256 digest kept in a cache file's name.
DIGEST_LENGTH = 32


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
        Seeds to repeat each setting with (spread across seeds is what charts shade).
    name
        Name of the sweep (part of the cache key and the progress-bar label).
    n_jobs
        Workers, as in :class:`joblib.Parallel`. ``None`` (default): follow the active joblib
        backend — this process alone, unless ``joblib.parallel_config(...)`` sets a backend or a
        number of jobs (under ``backend="dask"``: every worker thread of the cluster).
    cache
        Read and write the on-disk cache (see the module doc).
    progress
        Show a ``tqdm.auto`` progress bar (it advances as results arrive, in grid order).

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
    if n_jobs is not None:
        if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0:
            raise ValueError(f"n_jobs must be None (follow the joblib backend) or a non-zero integer "
                             f"(-1: every core), got {n_jobs!r}")
    settings = [dict(zip(grid, combo), seed=s) for combo in itertools.product(*grid.values()) for s in seeds]

    stem = f"{_slug(name)}-{_key(task, grid, seeds, name)}"
    if cache:
        cached = _read_cache(cache_dir(), stem)
        if cached is not None:
            return cached

    with _cluster_from_environment(n_jobs):
        results = joblib.Parallel(n_jobs=n_jobs, return_as="generator")(joblib.delayed(task)(**s) for s in settings)
        results = list(tqdm(results, total=len(settings), desc=name, disable=not progress))
    frame = pd.concat([_rows(r, s) for r, s in zip(results, settings)], ignore_index=True)

    if cache:
        _write_cache(cache_dir(), stem, frame)
    return frame


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


# ---------------------------------------------------------------------- the cache
def _read_cache(directory: Path, stem: str) -> pd.DataFrame | None:
    """The cached frame of ``stem``, or ``None``; a file that fails its checks is deleted."""
    for path in sorted(directory.glob(f"{stem}.*.parquet")):
        problem = _check_file(path, stem)
        if problem is None:
            try:
                frame = pd.read_parquet(io.BytesIO(path.read_bytes()), engine="pyarrow")
            except Exception as exc:  # a file that passed the digest but does not parse
                problem = f"it does not parse as Parquet ({type(exc).__name__}: {exc})"
            else:
                if isinstance(frame, pd.DataFrame) and len(frame):
                    return frame
                problem = "it holds no rows"
        warnings.warn(CacheWarning(f"sweep cache file {path.name} rejected: {problem}; recomputing"), stacklevel=3)
        path.unlink(missing_ok=True)
    return None


def _check_file(path: Path, stem: str) -> str | None:
    """Why ``path`` cannot be trusted, or ``None`` when its bytes match the digest in its name."""
    digest = path.name[len(stem) + 1: -len(".parquet")]
    if len(digest) != DIGEST_LENGTH or any(c not in "0123456789abcdef" for c in digest):
        return "its name carries no digest"
    try:
        data = path.read_bytes()
    except OSError as exc:
        return f"it cannot be read ({exc})"
    if hashlib.sha256(data).hexdigest()[:DIGEST_LENGTH] != digest:
        return "its bytes do not match the digest in its name (truncated or corrupt)"
    return None


def _write_cache(directory: Path, stem: str, frame: pd.DataFrame) -> None:
    """Write ``frame`` as Parquet under a name that carries its digest (atomically)."""
    buffer = io.BytesIO()
    try:
        frame.to_parquet(buffer, engine="pyarrow")
        data = buffer.getvalue()
        if not pd.read_parquet(io.BytesIO(data), engine="pyarrow").equals(frame):
            raise ValueError("the frame does not survive a Parquet round trip")
    except Exception as exc:  # e.g. a column of mixed Python objects: run fine, just not cached
        warnings.warn(CacheWarning(f"sweep {stem!r} not cached: {type(exc).__name__}: {exc}"), stacklevel=3)
        return
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{stem}.{hashlib.sha256(data).hexdigest()[:DIGEST_LENGTH]}.parquet"
    tmp = directory / f".{path.name}.{os.getpid()}.tmp"
    tmp.write_bytes(data)
    tmp.replace(path)
    for stale in directory.glob(f"{stem}.*.parquet"):
        if stale != path:
            stale.unlink(missing_ok=True)


def _key(task, grid, seeds, name) -> str:
    h = hashlib.sha256()
    h.update(name.encode())
    h.update(repr([(k, list(v)) for k, v in grid.items()]).encode())
    h.update(repr(list(seeds)).encode())
    try:
        h.update(inspect.getsource(task).encode())
    except (OSError, TypeError):
        h.update(getattr(task, "__qualname__", repr(task)).encode())
    h.update(_library_fingerprint().encode())
    return h.hexdigest()[:16]


def _library_fingerprint() -> str:
    """Hash of the library's source files, so a changed algorithm invalidates the cache."""
    h = hashlib.sha256()
    root = Path(__file__).parent
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-") or "sweep"
