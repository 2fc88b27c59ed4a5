"""Run a grid of settings × seeds into one tidy DataFrame, with a progress bar and a disk cache.

The book's static charts are precomputed sweeps. :func:`grid` runs them (in parallel with
joblib when asked), shows progress with ``tqdm.auto``, and caches the result on disk so a
rebuild of the book reuses it. The cache key covers the sweep's name, grid, seeds, the
task's source code and the library's source code: change any of them and the sweep re-runs.

The cache lives in ``$DPADMM_CACHE`` (the book build sets it to ``_build/cache``), else in
``~/.cache/dpadmm_lite``.
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import os
import pickle
from pathlib import Path
from typing import Callable, Mapping, Sequence

import joblib
import pandas as pd
from tqdm.auto import tqdm

from . import _validate as check


def cache_dir() -> Path:
    """Where sweeps are cached: ``$DPADMM_CACHE`` or ``~/.cache/dpadmm_lite``."""
    return Path(os.environ.get("DPADMM_CACHE", Path.home() / ".cache" / "dpadmm_lite"))


def grid(
    task: Callable[..., object],
    grid: Mapping[str, Sequence],
    *,
    seeds: Sequence[int] = (0,),
    name: str,
    n_jobs: int = 1,
    cache: bool = True,
    progress: bool = True,
) -> pd.DataFrame:
    """Run ``task(**setting, seed=s)`` for every setting of the grid and every seed.

    Parameters
    ----------
    task
        Returns a dict (one row), a list of dicts, or a DataFrame for one setting and seed.
    grid
        Setting name → values; the sweep covers their Cartesian product.
    seeds
        Seeds to repeat each setting with (spread across seeds is what charts shade).
    name
        Name of the sweep (part of the cache key and the progress-bar label).
    n_jobs
        Parallel workers (joblib); 1 runs in this process.
    cache
        Read and write the on-disk cache.

    Returns
    -------
    pandas.DataFrame
        One row per result row, with the setting and ``seed`` as columns.
    """
    if not grid:
        raise ValueError("grid must name at least one setting")
    for key, values in grid.items():
        if len(values) == 0:
            raise ValueError(f"grid[{key!r}] must hold at least one value")
    seeds = [check.count("seed", s, minimum=0) for s in seeds]
    if not seeds:
        raise ValueError("seeds must hold at least one seed")
    n_jobs = check.count("n_jobs", n_jobs)
    settings = [dict(zip(grid, combo), seed=s) for combo in itertools.product(*grid.values()) for s in seeds]

    path = cache_dir() / f"{_slug(name)}-{_key(task, grid, seeds, name)}.pkl"
    if cache and path.exists():
        with open(path, "rb") as fh:
            return pickle.load(fh)

    bar = tqdm(settings, desc=name, disable=not progress)
    if n_jobs == 1:
        results = [task(**s) for s in bar]
    else:
        results = joblib.Parallel(n_jobs=n_jobs)(joblib.delayed(task)(**s) for s in bar)
    frame = pd.concat([_rows(r, s) for r, s in zip(results, settings)], ignore_index=True)

    if cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as fh:
            pickle.dump(frame, fh)
        tmp.replace(path)
    return frame


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
