"""The cluster recipe of docs/cluster.md, for real: a `dask scheduler` and two `dask worker` processes on
localhost (the command-line tools, started as subprocesses), a `distributed.Client`, and a sweep
through `book.sweep.grid`'s Dask path that equals the serial sweep exactly (issue 26, item 4).

Every process is started in its own session and torn down with its process group (the workers'
nannies and worker processes included), also when the test fails; the test then checks that
none of them is left. Ports are chosen by the scheduler (`--port 0`), which writes its address
to a scheduler file."""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import cloudpickle
import joblib
import numpy as np
import pandas as pd
import pytest

import dpadmm_lite as dl
from dpadmm_book import sweep

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this module

DASK = Path(sys.executable).with_name("dask")  # the CLI of the same environment
START_TIMEOUT = 40.0


def _private_run(epsilon, rho, seed):
    """A real private run, as a chapter's sweep makes it."""
    X, y, _ = dl.datasets.make_classification(400, 6, seed=3)
    problem = dl.problems.logistic(X[:320], y[:320], 1e-2, X_test=X[320:], y_test=y[320:])
    trace = dl.run("dp_admm", problem, epsilon=epsilon, delta=1e-5, rho=rho, iterations=20, seed=seed)
    return [{"iteration": k + 1, "gap": float(trace.objective_gap[k]), "accuracy": float(trace.test_accuracy[k]),
             "spent": trace.privacy.epsilon, "pid": os.getpid()} for k in range(0, 20, 6)]


#: One numpy-heavy task's temporaries: 8 MB arrays, far above the 128 KiB mmap threshold the
#: nanny's MALLOC_TRIM_THRESHOLD_ fixes in an unprepared worker.
_ARRAY, _REPEATS, _PAGE = 1_000_000, 40, resource.getpagesize()


def _page_faults(k, seed):
    """Page faults of this thread while it makes and drops 40 arrays of 8 MB (a numpy-heavy run's
    temporaries): about one array's pages when freed memory is reused, several times that when
    every array is a fresh mmap."""
    before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
    total = 0.0
    for i in range(_REPEATS):
        a = np.full(_ARRAY, float(i + k + seed))
        total += a[-1]
        del a
    faults = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before
    return {"faults": faults, "total": total, "pid": os.getpid(),
            "trim_env": os.environ.get("MALLOC_TRIM_THRESHOLD_", "")}


_PRCTL = ctypes.CDLL(None).prctl  # looked up before any fork


def _die_with_this_process():
    """In the child, before exec: SIGTERM when the test process dies (a killed pytest runs no
    fixture teardown), so that a scheduler or worker never outlives the test."""
    _PRCTL(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG


def _stop(processes):
    """SIGTERM to each process group, then SIGKILL to what is left after 15 s; reap the CLIs."""
    for p in processes:
        if p.poll() is None:
            with _gone():
                os.killpg(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    for p in processes:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for p in processes:
        if _group_alive(p.pid):
            with _gone():
                os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=10)


class _gone:
    """Ignore ProcessLookupError (the group has already gone)."""

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        return kind is ProcessLookupError


def _group_alive(pgid) -> bool:
    """Whether any live (non-zombie) process is in process group ``pgid``."""
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = status.read_text().rsplit(")", 1)[1].split()
        except OSError:  # exited while we looked
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


@pytest.fixture
def cluster(tmp_path):
    """docs/cluster.md's recipe on localhost: `dask scheduler`, then two `dask worker <address>`."""
    assert DASK.exists(), f"the dask CLI is missing from {DASK.parent}: pip install -e '.[dask]'"
    scheduler_file = tmp_path / "scheduler.json"
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "DASK_DISTRIBUTED__LOGGING__DISTRIBUTED": "error"}
    log = lambda name: open(tmp_path / f"{name}.log", "wb")  # noqa: E731
    processes = []
    try:
        processes.append(subprocess.Popen(
            [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address", ":0",
             "--scheduler-file", str(scheduler_file)],
            stdout=subprocess.DEVNULL, stderr=log("scheduler"), env=env, start_new_session=True,
            preexec_fn=_die_with_this_process))
        deadline = time.monotonic() + START_TIMEOUT
        while not scheduler_file.exists() or not scheduler_file.read_text().strip():
            assert processes[0].poll() is None, (tmp_path / "scheduler.log").read_text()
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.1)
        address = json.loads(scheduler_file.read_text())["address"]
        for i in range(2):
            processes.append(subprocess.Popen(
                [str(DASK), "worker", address, "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard",
                 "--name", f"worker-{i}"],
                stdout=subprocess.DEVNULL, stderr=log(f"worker-{i}"), env=env, start_new_session=True,
            preexec_fn=_die_with_this_process))
        yield address, processes
    finally:
        _stop(processes)
        left = [p.pid for p in processes if _group_alive(p.pid)]
        assert not left, f"processes left behind in the groups of {left}"


def test_readme_cluster_recipe_runs_a_sweep_equal_to_the_serial_one(cluster, tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")  # a skip fails the suite (conftest)
    monkeypatch.setenv("DPADMM_CACHE", str(tmp_path / "cache"))
    address, processes = cluster
    grid = {"epsilon": [0.1, 1.0, 10.0], "rho": [0.5, 2.0]}
    serial = sweep.grid(_private_run, grid, seeds=(0, 1), name="serial", cache=False, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with distributed.Client(address, timeout=START_TIMEOUT) as client:
            client.wait_for_workers(2, timeout=START_TIMEOUT)
            workers = set(client.run(os.getpid).values())
            with joblib.parallel_config(backend="dask"):
                assert joblib.effective_n_jobs() == 2  # n_jobs=None follows the cluster
                on_dask = sweep.grid(_private_run, grid, seeds=(0, 1), name="dask", cache=False, progress=False)
                faults = sweep.grid(_page_faults, {"k": [0, 1, 2, 3, 4, 5]}, name="faults", cache=False,
                                    progress=False)
    assert len(workers) == 2 and os.getpid() not in workers
    assert set(on_dask["pid"]) <= workers and len(set(on_dask["pid"])) == 2, "both workers took tasks"
    pd.testing.assert_frame_equal(serial.drop(columns="pid"), on_dask.drop(columns="pid"), check_exact=True)
    # the sweep's Dask path prepares each worker (sweep.prepare_worker): freed arrays are reused
    # instead of faulted in anew (unprepared, under the nanny's MALLOC_TRIM_THRESHOLD_: 8.6 arrays' pages
    # a task, measured; not 40, as the kernel backs part of each fresh mapping with huge pages)
    one_array = _ARRAY * 8 // _PAGE
    assert set(faults["pid"]) <= workers
    assert (faults["faults"] < 4 * one_array).all(), (
        f"page faults per task {faults['faults'].tolist()} (one array: {one_array} pages; "
        f"MALLOC_TRIM_THRESHOLD_={faults['trim_env'].iloc[0]!r} on the workers)")
