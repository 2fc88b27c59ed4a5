"""Dask that pays: the arena's full tuning sweep, serial against a local 2-worker cluster (issue 26, item 4).

The sweep is the one ``book/arena.ipynb`` runs in full mode (``arena.tune``: every candidate of
every private algorithm on Adult and the Lasso, at 3 ε, 100 iterations, 228 runs). Each round
runs it three ways, one after another in this process, so that the machine's load is the same
for all three:

* ``serial``: ``book.sweep.grid`` in this process;
* ``dask``: the same call under ``joblib.parallel_config(backend="dask")`` on a local cluster of
  ``--workers`` processes (one thread each) — the sweep module's Dask path;
* ``dask, unprepared``: the same tasks handed to joblib's Dask backend directly, on a second
  cluster whose workers never ran a ``grid`` task — what ``grid`` did before
  :func:`dpadmm_book.sweep.prepare_worker` (a worker's allocator as the Dask nanny leaves it).

It prints wall and CPU seconds (CPU: this process, plus the workers' own CPU; the scheduler
and nannies of a local cluster live in this process), the page faults of the workers, the
ratios, ``uptime`` before each run, and checks that all three give the same rows (every
column but the runs' own wall-clock ``seconds``). Run: ``.venv/bin/python benchmarks/dask_sweep.py``.

Every run also records what it cost where it ran (:func:`timed_evaluate`: the running thread's CPU
seconds, the process's CPU seconds and page faults, wall seconds), and each round prints the
load-insensitive comparison (:func:`compare_tasks`): the same runs' thread CPU serially and in the
workers, by algorithm, their page faults, and how long a worker sat idle at the end of the sweep.
The unprepared variant's cluster is only started when that variant runs (``--no-unprepared`` and
``--auto-batches`` start one cluster): idle workers take ~2 % of a core each.

``--per-run`` measures the cause instead: four of the heaviest Adult runs (one candidate each of
private ADMM, its federated variant, PVP over a star and PVP over a graph, ε = 0.5), timed by
the CPU time of the thread that runs them and counted in page faults, in this process, in the
worker of a one-worker cluster as the nanny starts it, and in one prepared by
``book.sweep.prepare_worker`` — each run twice, the second kept.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import resource
import time
import warnings

import joblib
import numpy as np
import pandas as pd

import dpadmm_book as book
from dpadmm_book import arena

#: book/arena.ipynb in full mode (FAST = False)
EPSILONS = [float(e) for e in np.geomspace(0.05, 10, 7)]
TUNE_AT, BUDGET, TUNING_SEEDS, T, SIZE = EPSILONS[::3], 4, (0,), 100, "full"


def uptime() -> str:
    return os.popen("uptime").read().strip().split("load average:")[-1].strip()


def _usage():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime, r.ru_minflt


def _warm():
    for task in arena.TASKS:
        arena.problem(task, "validation", SIZE).reference_optimum()
    return os.getpid()


def _workers(client):
    usage = client.run(_usage)
    return sum(u[0] for u in usage.values()), sum(u[1] for u in usage.values())


def _grid(plan):
    return {"candidate": list(plan), "epsilon": TUNE_AT, "split": ["validation"], "size": [SIZE], "iterations": [T]}


#: Columns :func:`timed_evaluate` adds to a run's rows (left out when the sides are compared).
TASK_COLUMNS = ["task_cpu", "task_thread_cpu", "task_faults", "task_wall", "task_pid"]


def timed_evaluate(**setting):
    """``arena.evaluate`` and what the run cost where it ran: the process's CPU seconds (every thread:
    BLAS threads, a worker's event loop), the running thread's CPU seconds, the process's minor page
    faults and the wall seconds, in extra columns of the run's rows. Load-insensitive enough to
    compare one run in a worker with the same run in this process."""
    r0, t0, w0 = resource.getrusage(resource.RUSAGE_SELF), time.thread_time(), time.perf_counter()
    rows = arena.evaluate(**setting)
    r1, t1, w1 = resource.getrusage(resource.RUSAGE_SELF), time.thread_time(), time.perf_counter()
    cost = {"task_cpu": r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime, "task_thread_cpu": t1 - t0,
            "task_faults": r1.ru_minflt - r0.ru_minflt, "task_wall": w1 - w0, "task_pid": os.getpid()}
    return [{**row, **cost} for row in rows]


def serial(plan):
    return book.sweep.grid(timed_evaluate, _grid(plan), seeds=TUNING_SEEDS, name="bench serial", cache=False,
                         progress=False)


def prepared(plan, client):
    with joblib.parallel_config(backend="dask", client=client):
        return book.sweep.grid(timed_evaluate, _grid(plan), seeds=TUNING_SEEDS, name="bench dask", cache=False,
                             progress=False)


def _per_run(frame):
    """One row per run (its final row) with the cost columns."""
    return frame[frame["final"]].reset_index(drop=True)


def compare_tasks(serial_frame, dask_frame, dask_span=None):
    """Per-run cost in the workers against the same run in this process: totals, by algorithm (the
    running thread's CPU: this process's CPU during a serial run also counts the event loops of the
    local clusters it hosts, ~2 % of a core each), and how long each worker sat idle at the end."""
    s, d = _per_run(serial_frame), _per_run(dask_frame)
    ratio = d.task_thread_cpu / s.task_thread_cpu
    print(f"    per run (same runs): thread CPU serial Σ {s.task_thread_cpu.sum():.1f} s, workers Σ "
          f"{d.task_thread_cpu.sum():.1f} s (worker/serial per run: median {ratio.median():.2f}, quartiles "
          f"{ratio.quantile(.25):.2f}–{ratio.quantile(.75):.2f}, max {ratio.max():.2f}); process CPU during the runs "
          f"serial {s.task_cpu.sum():.1f} s, workers {d.task_cpu.sum():.1f} s; page faults serial "
          f"{s.task_faults.sum():,}, workers {d.task_faults.sum():,}")
    by = pd.DataFrame({"algorithm": s.algorithm, "task": s.task, "serial": s.task_thread_cpu,
                       "dask": d.task_thread_cpu, "serial_faults": s.task_faults,
                       "dask_faults": d.task_faults}).groupby(["task", "algorithm"])
    table = by.sum()
    table["ratio"] = table.dask / table.serial
    print("    by algorithm (Σ thread CPU s serial, workers, ratio; Σ page faults serial, workers):")
    for (task, algorithm), r in table.sort_values("serial", ascending=False).iterrows():
        print(f"      {task:6s} {algorithm:26s} {r.serial:6.1f} {r.dask:6.1f} {r.ratio:5.2f}   "
              f"{int(r.serial_faults):>9,} {int(r.dask_faults):>9,}")
    if dask_span is not None:
        start, ends = dask_span
        end = max(ends.values())
        print(f"    end of the sweep: the workers finished their last runs at "
              f"{', '.join(f'{e - start:.1f}' for e in sorted(ends.values()))} s (idle at the end: "
              f"{end - min(ends.values()):.1f} s); the longest run: {d.task_wall.max():.1f} s wall")


def unprepared(plan, client):
    """joblib's Dask backend with the bare task: the sweep module's Dask path before prepare_worker."""
    import itertools

    grid = _grid(plan)
    settings = [dict(zip(grid, combo), seed=s) for combo in itertools.product(*grid.values()) for s in TUNING_SEEDS]
    with joblib.parallel_config(backend="dask", client=client):
        results = joblib.Parallel()(joblib.delayed(arena.evaluate)(**s) for s in settings)
    return pd.concat([book.sweep._rows(r, s) for r, s in zip(results, settings)], ignore_index=True)


def auto_batches(plan, client):
    """The Dask path with joblib's automatic batching (``book.sweep.DASK_BATCH_SIZE = "auto"``)."""
    saved, book.sweep.DASK_BATCH_SIZE = book.sweep.DASK_BATCH_SIZE, "auto"
    try:
        return prepared(plan, client)
    finally:
        book.sweep.DASK_BATCH_SIZE = saved


def measure(label, run, client=None):
    load = uptime()
    cpu0, _ = _usage()
    w0 = _workers(client) if client else (0.0, 0)
    start = time.perf_counter()
    if client is not None:
        import distributed

        with distributed.get_task_stream(client) as stream:
            frame = run()
        batches = [int(re.search(r"_(\d+)_calls", str(t["key"])).group(1)) for t in stream.data
                   if re.search(r"_(\d+)_calls", str(t["key"]))]
        busy, ends, first = {}, {}, math.inf
        for t in stream.data:
            for part in t["startstops"]:
                if part["action"] == "compute":
                    busy[t["worker"]] = busy.get(t["worker"], 0.0) + part["stop"] - part["start"]
                    ends[t["worker"]] = max(ends.get(t["worker"], 0.0), part["stop"])
                    first = min(first, part["start"])
        measure.span = (first, ends)
        print(f"    {len(batches)} Dask tasks, runs per task: max {max(batches, default=0)}, "
              f"median {np.median(batches) if batches else 0:g}; compute seconds per worker: "
              f"{', '.join(f'{b:.1f}' for b in sorted(busy.values()))}")
    else:
        frame = run()
    wall = time.perf_counter() - start
    cpu1, _ = _usage()
    w1 = _workers(client) if client else (0.0, 0)
    cpu = cpu1 - cpu0 + w1[0] - w0[0]
    print(f"  {label:18s} wall {wall:7.1f} s   CPU {cpu:7.1f} s   worker page faults {w1[1] - w0[1]:>9,}   "
          f"load before: {load}", flush=True)
    return frame, wall, cpu


HEAVY = ("private_admm", "private_admm_federated", "pvp_star", "pvp_graph")


def _thread_cost(candidate, prepare):
    """CPU seconds and page faults of this thread for one arena run (the second of two)."""
    if prepare:
        book.sweep.prepare_worker()
    _warm()
    for _ in range(2):
        r0, t0 = resource.getrusage(resource.RUSAGE_THREAD), time.thread_time()
        arena.evaluate(candidate, 0, "validation", SIZE, T, epsilon=0.5)
        r1, t1 = resource.getrusage(resource.RUSAGE_THREAD), time.thread_time()
    return t1 - t0, r1.ru_minflt - r0.ru_minflt


def per_run():
    import distributed

    chosen = {}
    for entry in arena.candidates(["adult"], budget=BUDGET):
        chosen.setdefault(json.loads(entry)["algorithm"], entry)
    plan = {name: chosen[name] for name in HEAVY}
    print(f"per-run cost (thread CPU s, page faults) of {len(plan)} Adult runs; load {uptime()}")
    home = {name: _thread_cost(entry, False) for name, entry in plan.items()}
    results = {"this process": home}
    for label, prepare in (("worker, as started", False), ("worker, prepared", True)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0",
                                          silence_logs=40) as cluster, distributed.Client(cluster) as client:
                env = client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_"))
                results[label] = {name: client.submit(_thread_cost, entry, prepare, pure=False).result()
                                  for name, entry in plan.items()}
    print(f"  worker environment: MALLOC_TRIM_THRESHOLD_={list(env.values())[0]}")
    print("  | run | " + " | ".join(results) + " |")
    print("  |---|" + "---|" * len(results))
    for name in plan:
        cells = [f"{r[name][0]:.2f} s, {r[name][1] / 1000:.0f} k faults ({r[name][0] / home[name][0]:.2f}×)"
                 for r in results.values()]
        print(f"  | {name} | " + " | ".join(cells) + " |")
    print(f"  load after: {uptime()}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="rounds of (serial, dask, dask unprepared)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--auto-batches", action="store_true",
                        help="third variant: the Dask path with joblib's automatic batches instead of the unprepared one")
    parser.add_argument("--no-unprepared", action="store_true", help="skip the unprepared cluster (serial vs dask only)")
    parser.add_argument("--per-run", action="store_true", help="measure the cause: one run's CPU and page faults")
    args = parser.parse_args()
    if args.per_run:
        return per_run()
    import distributed

    plan = arena.candidates(list(arena.TASKS), budget=BUDGET)
    print(f"arena tuning sweep, full mode: {len(plan)} candidates × {len(TUNE_AT)} ε × {len(TUNING_SEEDS)} seed "
          f"= {len(plan) * len(TUNE_AT) * len(TUNING_SEEDS)} runs; {args.workers} workers × 1 thread; "
          f"{os.cpu_count()} cores; load {uptime()}")
    _warm()
    kwargs = dict(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                  silence_logs=40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with contextlib.ExitStack() as stack:
            # the unprepared variant's cluster only when it runs: idle workers are not free (heartbeats,
            # memory monitor, event-loop ticks: ~2 % of a core each, measured at load 20) and would
            # take CPU from the measured cluster's workers on a 2-core machine
            clusters = [after := stack.enter_context(distributed.Client(stack.enter_context(
                distributed.LocalCluster(**kwargs))))]
            before = None
            if not (args.no_unprepared or args.auto_batches):
                before = stack.enter_context(distributed.Client(stack.enter_context(distributed.LocalCluster(**kwargs))))
                clusters.append(before)
            start = time.perf_counter()
            for client in clusters:
                client.run(_warm)  # each worker builds its problems once (as in a book build)
            print(f"  worker warm-up (load Adult, build both problems and their optima, {len(clusters)} "
                  f"cluster{'s' if len(clusters) > 1 else ''}): {time.perf_counter() - start:.1f} s")
            rows = []
            for r in range(args.rounds):
                print(f"round {r + 1}")
                s, sw, sc = measure("serial", lambda: serial(plan))
                d, dw, dc = measure("dask", lambda: prepared(plan, after), after)
                span = measure.span
                if args.no_unprepared or args.auto_batches:
                    u, uw, uc = d, float("nan"), float("nan")
                else:
                    u, uw, uc = measure("dask, unprepared", lambda: unprepared(plan, before), before)
                if args.auto_batches:
                    u, uw, uc = measure("dask, auto batches", lambda: auto_batches(plan, after), after)
                compare_tasks(s, d, span)
                for other in (d, u):
                    pd.testing.assert_frame_equal(s.drop(columns=["seconds", *TASK_COLUMNS], errors="ignore"),
                                                  other.drop(columns=["seconds", *TASK_COLUMNS], errors="ignore"),
                                                  check_exact=True)
                rows.append(dict(serial_wall=sw, dask_wall=dw, unprepared_wall=uw, serial_cpu=sc, dask_cpu=dc,
                                 unprepared_cpu=uc))
                print(f"  speed-up serial/dask {sw / dw:.2f}×, serial/unprepared {sw / uw:.2f}×; CPU dask/serial "
                      f"{dc / sc:.2f}, unprepared/serial {uc / sc:.2f}; rows identical (all columns but 'seconds')")
    table = pd.DataFrame(rows)
    print(f"median over {args.rounds} rounds: serial/dask {np.median(table.serial_wall / table.dask_wall):.2f}×, "
          f"serial/unprepared {np.median(table.serial_wall / table.unprepared_wall):.2f}×; "
          f"CPU dask/serial {np.median(table.dask_cpu / table.serial_cpu):.2f}, "
          f"unprepared/serial {np.median(table.unprepared_cpu / table.serial_cpu):.2f}; load after: {uptime()}")


if __name__ == "__main__":
    main()
