"""A bigger stage (issue 26, item 5): the book's experiments scaled up, on the sweep module's Dask path.

Each experiment is one ``book.sweep.grid`` under ``joblib.parallel_config(backend="dask")`` on a
fresh local cluster (``--workers`` processes × 1 thread), so that the workers' peak memory is
the experiment's own. Printed per experiment: runs, wall seconds, CPU seconds (the workers'
own, plus this process's, which holds the local cluster's scheduler and nannies), the peak
resident memory of the largest worker and of this process, and the machine's load before and
after (``uptime``). On a shared machine the wall time follows the load; the CPU time is what
the work costs.

* ``huang``: Huang et al. (2019) DP-ADMM over a star, Adult (40,000 × 104, ℓ1 and ℓ2 as in the
  chapter, λ = 1e-6, ρ = 0.1), **1,000 agents** (40 rows each; the chapter's largest is 400),
  T = 100, ε ∈ {0.3, 1} end to end, δ = 1e-3, 2 seeds: 8 runs.
* ``zhang``: Zhang & Zhu (2017) DVP and PVP over a network, Adult, **1,000 nodes on a ring**
  (the chapter: 20), T = 100, ρ = 0.1, ε = 4 end to end, δ = 1e-5, the chapter's λ, ``--zhang-seeds``
  seeds (default 1): 2 runs a seed.
* ``arena``: the arena's full-mode tuning sweep (``arena.tune``: 76 candidates × 3 ε) with
  ``--arena-seeds`` seeds (default 10: **10× its runs**, 2,280 runs).

Every task gets small arguments and builds its problem in the worker, once per worker process
(the arena's ``arena.problem`` cache; here a per-process store for the Huang and Zhang data).

Run: ``.venv/bin/python benchmarks/stage.py [huang zhang arena] [--arena-seeds 10] [--zhang-seeds 1]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
import warnings

import joblib
import numpy as np

import dpadmm_lite as dl
import dpadmm_book as book
from dpadmm_book import arena

AGENTS = 1_000
HUANG = dict(lam=1e-6, rho=0.1, delta=1e-3, iterations=100, epsilons=[0.3, 1.0], seeds=(0, 1))
ZHANG = dict(rho=0.1, delta=1e-5, iterations=100, epsilon=4.0, topology="ring",
             lam={"dvp_graph": 10 ** -2.5 / 1750, "pvp_graph": 0.1 / 146})  # book/zhang2017.ipynb's LAM
ARENA_EPSILONS = [float(e) for e in np.geomspace(0.05, 10, 7)][::3]  # book/arena.ipynb, full mode


def _adult(regularizer: str, lam: float):
    """The Adult problem, built once per worker process (kept in a module of its own in
    ``sys.modules``: this script's functions travel to the workers by value)."""
    import sys
    import types

    store = sys.modules.setdefault("_dpadmm_stage_store", types.ModuleType("_dpadmm_stage_store"))
    problems = store.__dict__.setdefault("problems", {})
    if (regularizer, lam) not in problems:
        X, y, X_test, y_test = dl.datasets.load_adult()
        p = dl.problems.logistic(X, y, lam, regularizer, X_test=X_test, y_test=y_test)
        p.reference_optimum()
        problems[(regularizer, lam)] = p
    return problems[(regularizer, lam)]


def _row(trace, start_cpu):
    return {"test_error": float(1 - trace.test_accuracy[-1]), "objective_gap": float(trace.objective_gap[-1]),
            "spent_epsilon": float(trace.privacy.epsilon), "run_seconds": float(trace.wall_time),
            "run_cpu": time.process_time() - start_cpu}


def huang_task(regularizer, epsilon, seed):
    p = _adult(regularizer, HUANG["lam"])
    start = time.process_time()
    trace = dl.run("dp_admm_star", p, epsilon=epsilon, delta=HUANG["delta"], rho=HUANG["rho"],
                   iterations=HUANG["iterations"], n_agents=AGENTS, seed=seed)
    return _row(trace, start)


def zhang_task(algorithm, seed):
    p = _adult("l2", ZHANG["lam"][algorithm])
    start = time.process_time()
    trace = dl.run(algorithm, p, epsilon=ZHANG["epsilon"], delta=ZHANG["delta"], rho=ZHANG["rho"],
                   iterations=ZHANG["iterations"], topology=ZHANG["topology"], n_agents=AGENTS, seed=seed)
    return _row(trace, start)


def experiments(args):
    plan = arena.candidates(list(arena.TASKS), budget=4)
    return {
        "huang": (f"Huang et al. DP-ADMM (star), Adult, {AGENTS:,} agents, T = 100",
                  huang_task, {"regularizer": ["l1", "l2"], "epsilon": HUANG["epsilons"]}, HUANG["seeds"]),
        "zhang": (f"Zhang & Zhu DVP and PVP, Adult, {AGENTS:,} nodes on a ring, T = 100",
                  zhang_task, {"algorithm": ["dvp_graph", "pvp_graph"]}, tuple(range(args.zhang_seeds))),
        "arena": (f"arena tuning sweep (full mode) × {args.arena_seeds} seeds",
                  arena.evaluate, {"candidate": plan, "epsilon": ARENA_EPSILONS, "split": ["validation"],
                                   "size": ["full"], "iterations": [100]}, tuple(range(args.arena_seeds))),
    }


def _load() -> str:
    return ", ".join(f"{v:.2f}" for v in os.getloadavg())


def _usage():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime, r.ru_maxrss * 1024  # ru_maxrss is in KiB on Linux


def run_one(key, title, task, grid, seeds, workers):
    import distributed

    runs = int(np.prod([len(v) for v in grid.values()])) * len(seeds)
    load_before = _load()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=":0", silence_logs=40) as cluster, \
                distributed.Client(cluster) as client:
            before = client.run(_usage)
            cpu0 = time.process_time()
            start = time.perf_counter()
            with joblib.parallel_config(backend="dask"):
                frame = book.sweep.grid(task, grid, seeds=seeds, name=f"stage {key}", cache=False, progress=False)
            wall = time.perf_counter() - start
            after = client.run(_usage)
    cpu = time.process_time() - cpu0 + sum(after[w][0] - before[w][0] for w in after)
    worker_peak = max(u[1] for u in after.values())
    own_peak = _usage()[1]
    result = dict(experiment=key, title=title, runs=runs, wall=wall, cpu=cpu, worker_peak_mib=worker_peak / 2**20,
                  client_peak_mib=own_peak / 2**20, load_before=load_before, load_after=_load())
    print(f"{title}: {runs} runs, wall {wall:.1f} s, CPU {cpu:.1f} s, peak RSS: largest worker "
          f"{worker_peak / 2**20:.0f} MiB, this process {own_peak / 2**20:.0f} MiB; load {load_before} → {_load()}",
          flush=True)
    if "test_error" in frame:
        print(f"  per run: median {frame['run_seconds'].median():.2f} s wall, {frame['run_cpu'].median():.2f} s CPU; "
              f"spent ε ≤ target everywhere: {bool((frame['spent_epsilon'] <= frame.get('epsilon', ZHANG['epsilon']) * (1 + 1e-6)).all())}; "
              f"test error {frame['test_error'].min():.4f}–{frame['test_error'].max():.4f}")
    else:
        failed = int((frame["final"] & (frame["error"] != "")).sum())
        print(f"  {int(frame['final'].sum())} runs finished, {failed} reported an error (as in the chapter)")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("which", nargs="*", default=["huang", "zhang", "arena"], choices=["huang", "zhang", "arena"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--arena-seeds", type=int, default=10)
    parser.add_argument("--zhang-seeds", type=int, default=1)
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, {args.workers} Dask workers × 1 thread; load {_load()}")
    table = experiments(args)
    for key in args.which:
        run_one(key, *table[key], workers=args.workers)


if __name__ == "__main__":
    main()
