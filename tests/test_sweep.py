"""sweep.grid on any joblib backend (a local Dask cluster included) and its data-only cache."""

from __future__ import annotations

import os
import pickle
import sys
import threading
import warnings

import cloudpickle
import joblib
import numpy as np
import pandas as pd
import pytest

import dpadmm_lite as dl
from dpadmm_lite import sweep

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


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DPADMM_CACHE", str(tmp_path))
    return tmp_path


def _files(cache):
    return sorted(cache.glob("*.parquet"))


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


# ---------------------------------------------------------------------- the cache
def test_cache_is_parquet_named_by_its_digest_and_reused(cache):
    calls = []

    def task(epsilon, seed):
        calls.append(epsilon)
        return {"gap": 1 / epsilon, "label": f"ε={epsilon}", "ok": epsilon > 0.5, "k": 3}

    first = sweep.grid(task, {"epsilon": [0.1, 1.0]}, name="Data only", progress=False)
    (path,) = _files(cache)
    assert path.read_bytes()[:4] == b"PAR1" and path.read_bytes()[-4:] == b"PAR1"
    assert path.name.startswith("data-only-")
    again = sweep.grid(task, {"epsilon": [0.1, 1.0]}, name="Data only", progress=False)
    assert calls == [0.1, 1.0]
    pd.testing.assert_frame_equal(first, again, check_exact=True)
    assert list(again.dtypes.astype(str)) == list(first.dtypes.astype(str))


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "rename"])
def test_damaged_cache_file_is_detected_and_recomputed(cache, damage):
    calls = []

    def task(epsilon, seed):
        calls.append(epsilon)
        return {"gap": 1 / epsilon, "seed_seen": seed}

    first = sweep.grid(task, {"epsilon": [0.1, 1.0, 3.0]}, seeds=(0, 1), name="d", progress=False)
    (path,) = _files(cache)
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        middle = len(data) // 2
        path.write_bytes(data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1:])
    elif damage == "empty":
        path.write_bytes(b"")
    else:  # another file's content under this name
        path.write_bytes(pd.DataFrame({"gap": [0.0]}).to_parquet())
    with pytest.warns(sweep.CacheWarning, match="rejected"):
        again = sweep.grid(task, {"epsilon": [0.1, 1.0, 3.0]}, seeds=(0, 1), name="d", progress=False)
    assert len(calls) == 12  # recomputed, not trusted
    pd.testing.assert_frame_equal(first, again)
    (fresh,) = _files(cache)  # the bad file is gone; a good one took its place
    with warnings.catch_warnings():
        warnings.simplefilter("error", sweep.CacheWarning)
        sweep.grid(task, {"epsilon": [0.1, 1.0, 3.0]}, seeds=(0, 1), name="d", progress=False)
    assert len(calls) == 12


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
    import hashlib
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


def test_cache_key_follows_grid_seeds_and_task_source(cache):
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
