"""sweep.grid on any joblib backend (a local Dask cluster included) and its data-only cache:
keyed by everything the task reads, written safely, pruned, and never a reason to lose results."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import pickle
import shutil
import subprocess
import sys
import threading
import uuid
import warnings
from pathlib import Path

import cloudpickle
import joblib
import numpy as np
import pandas as pd
import pytest

import dpadmm_lite as dl
from dpadmm_book import sweep

# Workers cannot import this test module by name: ship its functions by value, as cloudpickle
# does for a function defined in a notebook.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def _where(epsilon, seed):
    """A cheap task that says where it ran."""
    return {"value": epsilon * 10 + seed, "pid": os.getpid(), "thread": threading.get_ident()}


def _private_run(epsilon, rho, seed):
    """A real private run: what a chapter's sweep does."""
    X, y, _ = dl.datasets.make_classification(300, 5, seed=1)
    problem = dl.problems.logistic(X[:240], y[:240], 1e-2, X_test=X[240:], y_test=y[240:])
    trace = dl.run("dp_admm", problem, epsilon=epsilon, delta=1e-5, rho=rho, iterations=15, seed=seed)
    return [{"iteration": k + 1, "gap": float(trace.objective_gap[k]), "accuracy": float(trace.test_accuracy[k]),
             "spent": trace.privacy.epsilon, "pid": os.getpid()} for k in range(0, 15, 7)]



def _files(cache):
    return sorted(cache.glob("*.parquet"))


def _note(log, *values):
    """Record one call of a task in a file: the count lives outside every value the task reads
    (a list the task appended to would itself be part of the key)."""
    with open(log, "a") as file:
        file.write(" ".join(map(str, values)) + "\n")


def _calls(log) -> int:
    return len(Path(log).read_text().splitlines()) if Path(log).exists() else 0


# ---------------------------------------------------------------------- backends
def test_default_runs_in_this_process(cache):
    frame = sweep.grid(_where, {"epsilon": [0.1, 1.0]}, seeds=(0, 1), name="here", cache=False, progress=False)
    assert set(frame["pid"]) == {os.getpid()} and set(frame["thread"]) == {threading.get_ident()}
    assert list(frame["value"]) == [1.0, 2.0, 10.0, 11.0]  # grid order, seeds innermost


def test_n_jobs_follows_the_active_backend(cache):
    with joblib.parallel_config(backend="threading", n_jobs=2):
        frame = sweep.grid(_where, {"epsilon": [0.1, 0.2, 0.3, 0.4]}, seeds=range(4), name="threads", cache=False,
                           progress=False)
    assert threading.get_ident() not in set(frame["thread"])  # ran on the backend's threads, not here
    serial = sweep.grid(_where, {"epsilon": [0.1, 0.2, 0.3, 0.4]}, seeds=range(4), name="threads", cache=False,
                        progress=False)
    pd.testing.assert_series_equal(frame["value"], serial["value"])


def test_an_explicit_n_jobs_still_works_and_bad_ones_are_named(cache):
    frame = sweep.grid(_where, {"epsilon": [0.1, 0.2]}, name="loky", cache=False, progress=False, n_jobs=2)
    assert os.getpid() not in set(frame["pid"])
    for bad in (0, 1.5, True, "2"):
        with pytest.raises(ValueError, match="n_jobs"):
            sweep.grid(_where, {"epsilon": [0.1]}, name="bad", n_jobs=bad)


def test_runs_go_seed_by_seed_and_the_frame_is_in_grid_order(cache):
    calls = []

    def task(epsilon, rho, seed):
        calls.append((epsilon, rho, seed))
        return {"value": len(calls)}

    frame = sweep.grid(task, {"epsilon": [0.1, 0.2], "rho": [1.0, 2.0]}, seeds=[7, 3], name="order", cache=False,
                       progress=False)
    settings = [(e, r) for e in (0.1, 0.2) for r in (1.0, 2.0)]
    assert calls == [(e, r, s) for s in (7, 3) for e, r in settings]  # every setting of seed 7, then of seed 3
    assert list(zip(frame["epsilon"], frame["rho"], frame["seed"])) == [(e, r, s) for e, r in settings for s in (7, 3)]
    assert frame["value"].tolist() == [1, 5, 2, 6, 3, 7, 4, 8]  # each row is its own run's result


def test_progress_bar_names_the_sweep(cache, capsys):
    sweep.grid(_where, {"epsilon": [0.1, 0.2]}, name="shown", cache=False, progress=True)
    err = capsys.readouterr().err
    assert "shown" in err and "2/2" in err


def test_sweep_on_a_local_dask_cluster_equals_the_serial_result(cache):
    distributed = pytest.importorskip("distributed")  # a skip fails the suite (conftest): dask is a dev dependency
    grid = {"epsilon": [0.1, 1.0, 10.0], "rho": [0.5, 2.0]}
    serial = sweep.grid(_private_run, grid, seeds=(0, 1), name="serial", cache=False, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                      silence_logs=40) as cluster, distributed.Client(cluster) as client:
            workers = set(client.run(os.getpid).values())
            with joblib.parallel_config(backend="dask"):
                assert joblib.effective_n_jobs() == 2  # n_jobs=None follows the cluster
                on_dask = sweep.grid(_private_run, grid, seeds=(0, 1), name="dask", cache=False, progress=False)
    assert len(workers) == 2 and os.getpid() not in workers
    assert set(on_dask["pid"]) <= workers and len(set(on_dask["pid"])) == 2, "both worker processes took tasks"
    pd.testing.assert_frame_equal(serial.drop(columns="pid"), on_dask.drop(columns="pid"), check_exact=True)


# ---------------------------------------------------------------------- the cache: files
def test_cache_is_parquet_named_by_its_digest_and_reused(cache, tmp_path):
    log = tmp_path / "calls"

    def task(epsilon, seed):
        _note(log, epsilon)
        return {"gap": 1 / epsilon, "label": f"ε={epsilon}", "ok": epsilon > 0.5, "k": 3}

    first = sweep.grid(task, {"epsilon": [0.1, 1.0]}, name="Data only", progress=False)
    (path,) = _files(cache)
    assert path.read_bytes()[:4] == b"PAR1" and path.read_bytes()[-4:] == b"PAR1"
    assert path.name.startswith("data-only-")
    again = sweep.grid(task, {"epsilon": [0.1, 1.0]}, name="Data only", progress=False)
    assert _calls(log) == 2
    pd.testing.assert_frame_equal(first, again, check_exact=True)
    assert list(again.dtypes.astype(str)) == list(first.dtypes.astype(str))


def _damage_task(log):
    def task(epsilon, seed):
        _note(log, epsilon, seed)
        return {"gap": 1 / epsilon, "seed_seen": seed}
    return task


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "rename", "another key", "symlink"])
def test_damaged_cache_file_is_detected_and_recomputed(cache, tmp_path, damage):
    log = tmp_path / "calls"
    task = _damage_task(log)
    grid = {"epsilon": [0.1, 1.0, 3.0]}
    first = sweep.grid(task, grid, seeds=(0, 1), name="d", progress=False)
    (path,) = _files(cache)
    data = path.read_bytes()
    target = tmp_path / "elsewhere.parquet"
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        middle = len(data) // 2
        path.write_bytes(data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1:])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "rename":  # another file's content under this name
        path.write_bytes(pd.DataFrame({"gap": [0.0]}).to_parquet())
    elif damage == "another key":
        # a genuine, intact cache file of another sweep (another grid: other numbers), copied under
        # this sweep's key with the digest of its own bytes: the digest passes, the key must not
        path.unlink()
        sweep.grid(task, {"epsilon": [7.0]}, seeds=(0, 1), name="d", progress=False)
        (other,) = _files(cache)
        path = cache / (path.name.rsplit(".", 2)[0] + "." + other.name.rsplit(".", 2)[1] + ".parquet")
        shutil.copyfile(other, path)
        other.unlink()
    else:  # a symlink to the true file's bytes, kept elsewhere: never read through a link
        shutil.move(path, target)
        path.symlink_to(target)
    calls = _calls(log)
    with pytest.warns(sweep.CacheWarning, match="rejected"):
        again = sweep.grid(task, grid, seeds=(0, 1), name="d", progress=False)
    assert _calls(log) == calls + 6  # recomputed, not trusted
    pd.testing.assert_frame_equal(first, again)
    (fresh,) = _files(cache)  # the bad file is gone; a good one took its place
    assert not fresh.is_symlink()
    if damage == "symlink":
        assert target.read_bytes() == data  # the link's target is left alone
    with warnings.catch_warnings():
        warnings.simplefilter("error", sweep.CacheWarning)
        sweep.grid(task, grid, seeds=(0, 1), name="d", progress=False)
    assert _calls(log) == calls + 6


class _Boom:
    def __reduce__(self):
        return (open, (os.environ["BOOM_PATH"], "w"))


def test_a_pickle_in_the_cache_is_never_run(cache, tmp_path, monkeypatch):
    """A file written by someone else, even one whose name carries its true digest, is only ever
    parsed as Parquet: a pickle in its place does not run."""
    def task(epsilon, seed):
        return {"gap": epsilon}

    sweep.grid(task, {"epsilon": [0.5]}, name="p", progress=False)
    (path,) = _files(cache)
    boom = tmp_path / "pwned"
    monkeypatch.setenv("BOOM_PATH", str(boom))
    payload = pickle.dumps(_Boom())
    stem = path.name.split(".")[0]
    path.unlink()
    forged = cache / f"{stem}.{hashlib.sha256(payload).hexdigest()[:sweep.DIGEST_LENGTH]}.parquet"
    forged.write_bytes(payload)
    (cache / f"{stem}.pkl").write_bytes(payload)  # the old cache format is not even looked at
    with pytest.warns(sweep.CacheWarning, match="does not parse"):
        frame = sweep.grid(task, {"epsilon": [0.5]}, name="p", progress=False)
    assert not boom.exists()
    assert frame["gap"].tolist() == [0.5]


def test_a_result_parquet_cannot_hold_is_returned_uncached(cache):
    def task(epsilon, seed):
        return {"mixed": [1, "a"] if epsilon > 1 else 2.5}

    with pytest.warns(sweep.CacheWarning, match="not cached"):
        frame = sweep.grid(task, {"epsilon": [0.5, 2.0]}, name="mixed", progress=False)
    assert len(frame) == 2 and not _files(cache)


def test_writing_never_follows_a_symlink_planted_in_the_cache_folder(cache, tmp_path):
    """An attacker who can write to the cache folder plants symlinks at the names a write would
    use (the final name, and the temporary name the old code derived from it and the pid): the
    files they point at stay untouched, and the cache file is a regular file of its own."""
    def task(epsilon, seed):
        return {"gap": epsilon * 2}

    sweep.grid(task, {"epsilon": [0.5]}, name="planted", progress=False)
    (path,) = _files(cache)
    path.unlink()
    victims = []
    for i, name in enumerate([path.name, f".{path.name}.{os.getpid()}.tmp"]):
        victim = tmp_path / f"victim{i}"
        victim.write_text("precious")
        (cache / name).symlink_to(victim)
        victims.append(victim)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sweep.CacheWarning)  # the planted link at the final name is rejected
        frame = sweep.grid(task, {"epsilon": [0.5]}, name="planted", progress=False)
    assert frame["gap"].tolist() == [1.0]
    assert [v.read_text() for v in victims] == ["precious", "precious"]
    assert path.exists() and not path.is_symlink() and path.read_bytes()[:4] == b"PAR1"
    assert not [p for p in cache.iterdir() if p.name.endswith(".tmp") and not p.is_symlink()], "no temporary file left"


@pytest.mark.parametrize("how", ["a file in the way", "permission denied"])
def test_an_unwritable_cache_folder_warns_naming_it_and_returns_the_results(tmp_path, monkeypatch, how):
    log = tmp_path / "calls"
    if how == "a file in the way":
        blocker = tmp_path / "not-a-folder"
        blocker.write_text("")
        folder = blocker / "cache"
    else:  # a read-only folder (the tests may run as root, whom chmod does not stop: refuse as the OS would)
        folder = tmp_path / "read-only"
        folder.mkdir()

        def refuse(*args, **kwargs):
            raise PermissionError(13, "Permission denied", str(folder))

        monkeypatch.setattr(sweep._files.tempfile, "mkstemp", refuse)
    monkeypatch.setenv("DPADMM_CACHE", str(folder))
    monkeypatch.setattr(sweep._hashing, "_LIBRARY_SNAPSHOT", {})  # as in the cache fixture

    def task(epsilon, seed):
        _note(log, epsilon)
        return {"gap": 1 / epsilon}

    for run in (1, 2):
        with pytest.warns(sweep.CacheWarning, match="cannot be written") as caught:
            frame = sweep.grid(task, {"epsilon": [0.5, 2.0]}, name="ro", progress=False)
        assert frame["gap"].tolist() == [2.0, 0.5]
        assert _calls(log) == 2 * run
        assert any(str(folder) in str(w.message) for w in caught), "the warning names the folder"
    assert not folder.is_dir() or not list(folder.iterdir())


def test_prune_on_write_removes_older_keys_of_the_same_sweep_only(cache, monkeypatch):
    """Writing a sweep deletes the files its earlier keys left (a rebuild after a change), but
    not keys this process used (one notebook may run one name with two grids), nor other
    sweeps, nor files that are not sweep cache files."""
    def task(epsilon, seed):
        return {"v": epsilon}

    sweep.grid(task, {"epsilon": [0.5]}, name="pruned", progress=False)
    sweep.grid(task, {"epsilon": [0.6]}, name="pruned", progress=False)  # same process: both kept
    sweep.grid(task, {"epsilon": [0.5]}, name="pruned other", progress=False)
    (cache / "notes.parquet").write_bytes(b"mine")
    assert len(_files(cache)) == 4
    monkeypatch.setattr(sweep._files, "_USED", {})  # the next build
    sweep.grid(task, {"epsilon": [0.7]}, name="pruned", progress=False)
    names = sorted(p.name for p in _files(cache))
    assert len(names) == 3 and "notes.parquet" in names
    assert sum(n.startswith("pruned-other-") for n in names) == 1
    (newest,) = [n for n in names if n.startswith("pruned-") and not n.startswith("pruned-other-")]
    assert newest.startswith(f"pruned-{sweep.cache_key(task, {'epsilon': [0.7]}, name='pruned')[:16]}.")


def test_clean_cache_removes_sweep_files_and_nothing_else(cache):
    def task(epsilon, seed):
        return {"v": epsilon}

    sweep.grid(task, {"epsilon": [0.5]}, name="a", progress=False)
    sweep.grid(task, {"epsilon": [0.5]}, name="b", progress=False)
    (cache / ".a-0123456789abcdef.x1y2_z3.tmp").write_bytes(b"left by a crash")
    keep = [cache / "mine.parquet", cache / "notes.txt", cache / "a-1.parquet"]
    for path in keep:
        path.write_bytes(b"not a sweep")
    assert sweep.clean_cache(cache) == 3
    assert sorted(cache.iterdir()) == sorted(keep)
    assert sweep.clean_cache(cache / "missing") == 0


# ---------------------------------------------------------------------- the cache: the key
_CHAPTER = """
import functools
import math

import numpy as np
import pandas as pd

import dpadmm_lite as dl
from dpadmm_lite import datasets, problems

LOG = None
RHO = 1.0
SCALE = 2.0
WEIGHTS = np.linspace(0.0, 1.0, 50)
TABLE = pd.DataFrame({"epsilon": [0.5, 1.0], "factor": [1.0, 1.5]})
X, y, _ = datasets.make_lasso(60, 4, seed=0)
problem = problems.lasso(X, y, 0.1)
CALIBRATION = {"double": lambda v: 2 * v * SCALE}
SHOWN = {"dvp_graph", "pvp_graph", "admm_graph", "dp_admm"}  # a set: its order follows the hash seed


def helper(epsilon):
    return SCALE * epsilon + float(WEIGHTS.sum())


@functools.lru_cache(maxsize=None)
def small_problem(lam, rows=40):
    return problems.lasso(X[:rows], y[:rows], lam)


def task(epsilon, seed):
    if LOG is not None:
        with open(LOG, "a") as log:
            log.write(f"{epsilon} {seed}\\n")
    p = small_problem(0.1)
    factor = float(TABLE.set_index("epsilon").factor.get(epsilon, 1.0))
    return {"v": RHO * helper(epsilon) * factor + CALIBRATION["double"](1.0) + problem.lam + p.n + math.pi
            + len(SHOWN)}
"""


def _chapter(tmp_path, name=None):
    """A notebook-like module: constants, data, a Problem, helpers, a dict of lambdas, an lru_cache."""
    name = name or f"chapter_{uuid.uuid4().hex}"
    path = tmp_path / f"{name}.py"
    path.write_text(_CHAPTER)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.LOG = str(tmp_path / f"{name}.calls")
    return module


def _v(module, epsilon=0.5):
    return sweep.grid(module.task, {"epsilon": [epsilon]}, name="chapter", progress=False)["v"].item()


@pytest.mark.parametrize("change", ["RHO", "SCALE", "WEIGHTS", "TABLE", "problem.lam", "X"])
def test_a_global_the_task_reads_directly_or_through_its_helpers_is_in_the_key(cache, tmp_path, change):
    """A module constant (ρ, a scale read through a helper and through a lambda in a dict, an array,
    a DataFrame, a Problem's λ, the data an lru_cache'd helper reads) changed between two builds
    re-runs the sweep and gives the new numbers; changed back, the old file serves again."""
    chapter = _chapter(tmp_path)
    before = _v(chapter)
    assert _calls(chapter.LOG) == 1
    if change == "RHO":
        chapter.RHO = 3.0
    elif change == "SCALE":
        chapter.SCALE = 5.0
    elif change == "WEIGHTS":
        chapter.WEIGHTS = chapter.WEIGHTS.copy()
        chapter.WEIGHTS[25] += 1.0  # one element in the middle: invisible to a truncated repr
    elif change == "TABLE":
        chapter.TABLE = chapter.TABLE.assign(factor=[2.0, 1.5])
    elif change == "problem.lam":
        chapter.problem = dl.problems.lasso(chapter.X, chapter.y, 0.3)
    else:
        chapter.X = chapter.X * 2.0  # read by small_problem inside the lru_cache: same n, other data
    after = _v(chapter)
    assert _calls(chapter.LOG) == 2, f"changing {change} must re-run the sweep"
    if change != "X":
        assert after != before
    assert len(_files(cache)) == 2


def test_derived_and_memoised_values_do_not_change_the_key(tmp_path):
    """What a run computes and keeps (a problem's reference optimum and cached properties, an
    lru_cache's contents) is derived from values already in the key: keys before and after agree,
    so a chapter whose earlier sweep was a cache hit still hits the next one."""
    chapter = _chapter(tmp_path)
    key = sweep.cache_key(chapter.task, {"epsilon": [0.5]}, name="chapter")
    chapter.problem.reference_optimum()
    _ = chapter.problem.smoothness, chapter.problem.max_row_norm  # computes the cached_property values
    chapter.task(0.5, 0)  # fills the lru_cache
    assert chapter.small_problem.cache_info().currsize == 1
    assert sweep.cache_key(chapter.task, {"epsilon": [0.5]}, name="chapter") == key
    chapter.problem.feature_bound = 2.0  # a public attribute: counts
    assert sweep.cache_key(chapter.task, {"epsilon": [0.5]}, name="chapter") != key


def _scaled(epsilon, seed, weights, rho=1.0, log=None):
    if log is not None:
        _note(log, epsilon, seed)
    return {"v": float(np.sum(weights)) * rho * epsilon}


def _make_closure(rho, log):
    def task(epsilon, seed):
        _note(log, epsilon)
        return {"v": rho * epsilon}
    return task


def _make_default(rho, log):
    def task(epsilon, seed, rho=rho):
        _note(log, epsilon)
        return {"v": rho * epsilon}
    return task


def _make_keyword_default(rho, log):
    def task(epsilon, seed, *, rho=rho):
        _note(log, epsilon)
        return {"v": rho * epsilon}
    return task


class _Scaler:
    def __init__(self, factor, log):
        self.factor, self.log = factor, log

    def run(self, epsilon, seed):
        _note(self.log, epsilon)
        return {"v": self.factor * epsilon}


@pytest.mark.parametrize("kind", ["closure", "default", "keyword default", "partial array", "partial keyword",
                                  "bound method"])
def test_closures_defaults_partials_and_bound_methods_are_in_the_key(cache, tmp_path, kind):
    """Two tasks with the same source that read different values (closure cells, default and
    keyword-only default arguments, a partial's arguments — an array differing in one middle
    element — or a bound method's object) are two sweeps, not one."""
    log = str(tmp_path / "calls")
    big = np.arange(2000.0)
    other = big.copy()
    other[1000] += 0.5
    make = {
        "closure": lambda r: _make_closure(r, log),
        "default": lambda r: _make_default(r, log),
        "keyword default": lambda r: _make_keyword_default(r, log),
        "partial array": lambda r: functools.partial(_scaled, weights=big if r == 1.0 else other, log=log),
        "partial keyword": lambda r: functools.partial(_scaled, weights=big, rho=r, log=log),
    }
    if kind == "bound method":
        scaler = _Scaler(1.0, log)
        first = sweep.grid(scaler.run, {"epsilon": [0.5]}, name="same", progress=False)["v"].item()
        scaler.factor = 2.0
        second = sweep.grid(scaler.run, {"epsilon": [0.5]}, name="same", progress=False)["v"].item()
    else:
        first = sweep.grid(make[kind](1.0), {"epsilon": [0.5]}, name="same", progress=False)["v"].item()
        second = sweep.grid(make[kind](2.0), {"epsilon": [0.5]}, name="same", progress=False)["v"].item()
    assert _calls(log) == 2 and first != second
    again = sweep.grid(make[kind](1.0) if kind != "bound method" else _Scaler(1.0, log).run, {"epsilon": [0.5]},
                       name="same", progress=False)["v"].item()
    assert again == first and _calls(log) == 2  # the same values again: served from the cache


def test_cache_key_follows_grid_seeds_name_and_task_source(cache):
    def task(epsilon, seed):
        return {"v": epsilon + seed}

    sweep.grid(task, {"epsilon": [0.5]}, name="k", progress=False)
    sweep.grid(task, {"epsilon": [0.5]}, seeds=(0, 1), name="k", progress=False)
    sweep.grid(task, {"epsilon": [0.5, 1.0]}, name="k", progress=False)

    def task(epsilon, seed):  # noqa: F811  (same name, other source)
        return {"v": epsilon - seed}

    sweep.grid(task, {"epsilon": [0.5]}, name="k", progress=False)
    assert len(_files(cache)) == 4
    assert np.isfinite(sweep.grid(task, {"epsilon": [0.5]}, name="k", progress=False)["v"]).all()
    key = sweep.cache_key(task, {"epsilon": [0.5]}, name="k")
    assert key != sweep.cache_key(task, {"epsilon": [0.5]}, name="k2")
    assert key != sweep.cache_key(task, {"epsilon": [0.5]}, seeds=(1,), name="k")


def test_grid_values_are_hashed_by_content():
    """Sweep arguments count by content, not by a repr numpy shortens: grids whose values differ
    in one middle element of an array, in dtype or shape, in a setting's name or in the order of
    the settings (the order of the result) are different sweeps."""
    task = functools.partial(_scaled, log=None)
    a = np.arange(2000.0)
    b = a.copy()
    b[1000] = -1.0
    grids = [{"weights": [a]}, {"weights": [b]}, {"weights": [a.astype(np.float32)]},
             {"weights": [a.reshape(40, 50)]}, {"w": [a]}, {"weights": [a], "epsilon": [1.0]},
             {"epsilon": [1.0], "weights": [a]}, {"epsilon": [1]}, {"epsilon": [1.0]}, {"epsilon": [True]}]
    keys = [sweep.cache_key(task, g, name="n") for g in grids]
    assert len(set(keys)) == len(grids)
    assert keys[0] == sweep.cache_key(task, {"weights": [a.copy()]}, name="n")  # by content, not identity


def test_the_library_version_is_in_the_key(cache, tmp_path, monkeypatch):
    """The library counts as a whole: any of its files (code, and the data it ships, which the
    old key missed), its version, and algorithms registered from outside the library."""
    root = tmp_path / "library"
    (root / "data").mkdir(parents=True)
    (root / "__init__.py").write_text("x = 1\n")
    (root / "data" / "adult.npz").write_bytes(b"rows v1")
    (root / "__pycache__").mkdir()
    book_root = tmp_path / "book"  # the book's package counts as the library does
    book_root.mkdir()
    (book_root / "__init__.py").write_text("y = 1\n")
    monkeypatch.setattr(sweep._hashing, "_LIBRARY_ROOTS", (root, book_root))
    log = str(tmp_path / "calls")
    task = _make_closure(1.0, log)

    def run_in_a_new_process():  # the library's files are read once per process
        monkeypatch.setattr(sweep._hashing, "_LIBRARY_SNAPSHOT", {})
        return sweep.grid(task, {"epsilon": [0.5]}, name="lib", progress=False)

    run_in_a_new_process()
    (root / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"bytecode cache")  # not the library's content
    run_in_a_new_process()
    assert _calls(log) == 1
    (root / "data" / "adult.npz").write_bytes(b"rows v2")
    run_in_a_new_process()
    assert _calls(log) == 2, "a changed data file of the library re-runs the sweep"
    (root / "__init__.py").write_text("x = 2\n")
    run_in_a_new_process()
    assert _calls(log) == 3, "a changed source file of the library re-runs the sweep"
    (book_root / "__init__.py").write_text("y = 2\n")
    run_in_a_new_process()
    assert _calls(log) == 4, "a changed source file of the book's package re-runs the sweep"
    monkeypatch.setattr(dl, "__version__", "99.0")
    run_in_a_new_process()
    assert _calls(log) == 5, "another library version re-runs the sweep"

    from dpadmm_lite import registry

    def outside(problem, **options):
        return options.get("scale", 1.0)

    def info(function):
        return registry.AlgorithmInfo("outside", function, "mine", True, "centralized", "registered by a notebook")

    key = sweep.cache_key(task, {"epsilon": [0.5]}, name="lib")
    monkeypatch.setitem(registry._REGISTRY, "outside", info(outside))
    with_outside = sweep.cache_key(task, {"epsilon": [0.5]}, name="lib")
    monkeypatch.setitem(registry._REGISTRY, "outside", info(functools.partial(outside, scale=2.0)))
    assert len({key, with_outside, sweep.cache_key(task, {"epsilon": [0.5]}, name="lib")}) == 3


def test_a_library_edited_after_import_is_not_cached_under_the_new_code(cache, tmp_path, monkeypatch):
    """A kernel runs the library it imported: edited on disk later, the key still describes the
    imported code, and a fresh result is returned but not written (it would be served to a
    process running the edited code)."""
    root = tmp_path / "library"
    root.mkdir()
    (root / "algorithm.py").write_text("STEP = 1\n")
    monkeypatch.setattr(sweep._hashing, "_LIBRARY_ROOTS", (root,))
    monkeypatch.setattr(sweep._hashing, "_LIBRARY_SNAPSHOT", {(root,): sweep._hashing._library_files((root,))})  # "imported"
    log = str(tmp_path / "calls")
    task = _make_closure(1.0, log)
    key = sweep.cache_key(task, {"epsilon": [0.5]}, name="edited")
    (root / "algorithm.py").write_text("STEP = 2\n")
    assert sweep.cache_key(task, {"epsilon": [0.5]}, name="edited") == key
    with pytest.warns(sweep.CacheWarning, match="changed on disk"):
        frame = sweep.grid(task, {"epsilon": [0.5]}, name="edited", progress=False)
    assert frame["v"].tolist() == [0.5] and not _files(cache)
    monkeypatch.setattr(sweep._hashing, "_LIBRARY_SNAPSHOT", {})  # a new process imports the edited library
    with warnings.catch_warnings():
        warnings.simplefilter("error", sweep.CacheWarning)
        sweep.grid(task, {"epsilon": [0.5]}, name="edited", progress=False)
    assert len(_files(cache)) == 1 and sweep.cache_key(task, {"epsilon": [0.5]}, name="edited") != key


def test_a_value_that_cannot_be_hashed_runs_uncached_with_a_warning_naming_it(cache, tmp_path):
    log = str(tmp_path / "calls")
    lock = threading.Lock()

    def task(epsilon, seed):
        with lock:
            _note(log, epsilon)
        return {"v": epsilon}

    for run in (1, 2):
        with pytest.warns(sweep.CacheWarning, match=r"not cached: .*closure variable 'lock'.*_thread.lock"):
            frame = sweep.grid(task, {"epsilon": [0.5]}, name="locked", progress=False)
        assert frame["v"].tolist() == [0.5] and _calls(log) == run
    assert not _files(cache)
    with pytest.raises(TypeError, match="cannot be hashed by content"):
        sweep.cache_key(task, {"epsilon": [0.5]}, name="locked")
    with warnings.catch_warnings():
        warnings.simplefilter("error", sweep.CacheWarning)
        sweep.grid(task, {"epsilon": [0.5]}, name="locked", progress=False, cache=False)


_KEY_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
import test_sweep
from dpadmm_book import sweep

chapter = test_sweep._chapter(__import__("pathlib").Path({folder!r}), name="chapter")
chapter.LOG = None
task = chapter.task
print(sweep._hashing._library_fingerprint().hex())
print(sweep.cache_key(task, {{"epsilon": [0.5, 1.0], "label": ["a"]}}, seeds=(0, 1), name="chapter-like"))
"""


def _key_in_a_fresh_process(tmp_path, hash_seed):
    folder = tmp_path / f"run-{hash_seed}-{uuid.uuid4().hex[:6]}"
    folder.mkdir()
    script = _KEY_SCRIPT.format(tests=str(Path(__file__).parent), folder=str(folder))
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    library, key = done.stdout.strip().splitlines()[-2:]
    return library, key


def test_the_key_of_a_chapter_like_task_is_the_same_in_two_fresh_processes(tmp_path):
    """No id(), no address, no hash-seed order in the key: two fresh interpreters (other hash
    seeds, the chapter's file in another folder) compute the same key."""
    for attempt in range(3):  # the library's files may be edited between the two runs (a shared tree)
        (library_1, key_1), (library_2, key_2) = (_key_in_a_fresh_process(tmp_path, seed) for seed in ("1", "2"))
        if library_1 == library_2:
            break
    assert library_1 == library_2, "the library's files kept changing: cannot compare keys"
    assert len(key_1) == 64 and key_1 == key_2


def test_scheduler_variable_sends_every_sweep_to_a_cluster(cache, monkeypatch):
    """What `DPADMM_DASK_SCHEDULER=local:2 make book` does inside each notebook's kernel."""
    pytest.importorskip("distributed")
    grid = {"epsilon": [0.5, 5.0], "rho": [1.0]}
    serial = sweep.grid(_private_run, grid, seeds=(0, 1, 2), name="env", cache=False, progress=False)
    monkeypatch.setenv(sweep.SCHEDULER_VARIABLE, "local:2")
    try:
        on_dask = sweep.grid(_private_run, grid, seeds=(0, 1, 2), name="env", cache=False, progress=False)
        with joblib.parallel_config(backend="threading", n_jobs=2):  # an explicit backend wins
            threads = sweep.grid(_where, {"epsilon": [0.1]}, name="t", cache=False, progress=False)
    finally:
        sweep.close_clients()
    assert os.getpid() not in set(on_dask["pid"])
    assert set(threads["pid"]) == {os.getpid()}
    pd.testing.assert_frame_equal(serial.drop(columns="pid"), on_dask.drop(columns="pid"), check_exact=True)
