"""How fast are DVP and PVP over a network? (issue 12, "Speed")

1. DVP, PVP and the non-private ``admm_graph`` on Adult (40,000 × 104), 20 nodes on a ring,
   100 iterations (the chapter's experiment). Target for DVP: ≤ 2 s.
2. Where an iteration goes, and the cost of the exact local solves (the f-update) as a ratio to the
   floor: two bare matrix–vector products over the data per iteration (margins ``Xw`` and gradient
   ``Xᵀr`` on the dense 40,000 × 104 matrix).
3. One live re-run of the chapter's panel (``book/zhang2017.ipynb``) at its default setting: DVP
   with the end-to-end ε = 4, 4 nodes, 60 iterations, plus the charts and the panel's output (the
   non-private reference curve is cached by the panel). Target: ≤ 300 ms.
4. One full-mode run of the chapter's sweeps (DVP, ε = 4, ring, 20 nodes, 100 iterations on 40,000
   rows) against its floor, measured in the same process right after it: the products it cannot
   avoid — as many (margins ``X_p f_p``, gradient ``X_pᵀ r_p``) pairs on the same block-diagonal
   sparse data as the run made passes over the data.
5. The chapter's sweeps on two threads (issue 26): eight such runs one after another, then under
   ``graph.parallel_runs(2)`` (the chapter asks for the free cores: two on an idle machine), with the
   rows checked equal bit for bit. Only meaningful on an idle machine (see the printed load).

Run: ``.venv/bin/python benchmarks/zhang2017.py`` (``--threads N`` for BLAS threads; the default 1 gives
stable numbers on a shared machine). The machine's load is printed: on a loaded machine every
wall time grows, the ratios much less; the CPU time of the fastest call (in brackets) leaves out
the time spent waiting for a core and is close to the unloaded wall time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict


def _parse():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions (median reported)")
    parser.add_argument("--parts", default="1,2,3,4,5", help="which parts to run (default all: 1,2,3,4,5)")
    return parser.parse_args()


ARGS = _parse() if __name__ == "__main__" else None
if ARGS is not None:  # before numpy loads its BLAS
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(ARGS.threads)

import numpy as np  # noqa: E402

import dpadmm_lite as dl  # noqa: E402
import dpadmm_book as book
from dpadmm_lite import datasets, problems  # noqa: E402
from dpadmm_lite.algorithms import zhang2017 as graph, zhang2017_perturbation as network# noqa: E402
from dpadmm_book.widgets import _display_data  # noqa: E402

# The chapter's settings (keep in sync with book/zhang2017.ipynb).
N_NODES, RHO, DELTA, TOPOLOGY = 20, 0.1, 1e-5, "ring"
LAM_DVP, LAM_PVP = 10 ** -2.5 / 1750, 0.1 / 146
LIVE = {"epsilon": 4.0, "delta": DELTA, "rho": RHO, "topology": TOPOLOGY, "n_agents": 4, "iterations": 60}  # live.zhang2017.DEFAULTS
LIVE_LAM = 1e-5


def _median_ms(fn, repeat):
    """Median and minimum wall time (ms) of ``repeat`` calls after a warm-up; the CPU time of the
    fastest call is kept in ``CPU_MS`` (on a loaded machine it is close to the unloaded wall time:
    it leaves out the time the process waited for a core)."""
    fn()  # warm-up (caches, imports)
    times, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        times.append(1000 * (time.perf_counter() - start))
        cpu.append(1000 * (time.process_time() - start_cpu))
    CPU_MS[fn] = min(cpu)
    return statistics.median(times), min(times)


CPU_MS: dict = {}


def adult(lam):
    X, y, X_test, y_test = datasets.load_adult()
    p = problems.logistic(X, y, lam, "l2", X_test=X_test, y_test=y_test)
    p.reference_optimum()
    return p


def floor_ms(problem, repeat, iterations=100):
    w = np.random.default_rng(0).standard_normal(problem.d) * 0.1
    r = np.random.default_rng(1).standard_normal(problem.n)
    X = problem.X

    def floor():
        for _ in range(iterations):
            X @ w  # margins
            r @ X  # gradient

    result = _median_ms(floor, repeat)
    FLOOR_CPU[0] = CPU_MS[floor]
    return result


FLOOR_CPU = [0.0]


class _Clock:
    """Adds up the time spent in selected functions while a run is timed (patched in, then restored)."""

    def __init__(self):
        self.seconds = defaultdict(float)
        self.calls = defaultdict(int)
        self._patches = []

    def wrap(self, owner, name, label):
        original = getattr(owner, name)

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[label] += time.perf_counter() - start
                self.calls[label] += 1

        setattr(owner, name, timed)
        self._patches.append((owner, name, original))

    def __enter__(self):
        self.wrap(graph.LocalSolver, "__call__", "f-update (all local solves)")
        self.wrap(graph.LocalData, "margins", "  margins X_p f_p")
        self.wrap(graph.LocalData, "rmatvec", "  gradients X_pᵀ r_p")
        self.wrap(graph.LocalData, "loss_slope", "  loss and slopes (elementwise)")
        self.wrap(graph.LocalData, "hessians", "  Hessians (batched, single precision)")
        self.wrap(graph.LocalSolver, "_remember", "  BFGS updates of the inverses")
        self.wrap(network, "finish", "trace evaluation (objective, errors, distances)")
        return self

    def __exit__(self, *exc):
        while self._patches:
            owner, name, original = self._patches.pop()
            setattr(owner, name, original)


def experiment(repeat):
    """Part 1 and 2: the chapter's runs, timed; then one DVP run with the clock on."""
    problems_ = {"dvp_graph": adult(LAM_DVP), "pvp_graph": adult(LAM_PVP), "admm_graph": adult(LAM_DVP)}
    kw = dict(rho=RHO, iterations=100, topology=TOPOLOGY, n_agents=N_NODES, seed=0)
    results = {}
    for name, eps in (("admm_graph", None), ("dvp_graph", 1.0), ("dvp_graph", 4.0), ("pvp_graph", 1.0),
                      ("pvp_graph", 4.0)):
        extra = {} if eps is None else {"epsilon": eps, "delta": DELTA}
        trace = dl.run(name, problems_[name], **kw, **extra)
        timed = lambda name=name, extra=extra: dl.run(name, problems_[name], **kw, **extra)  # noqa: E731
        results[(name, eps)] = (_median_ms(timed, repeat), trace, CPU_MS[timed])
    floor = floor_ms(problems_["dvp_graph"], repeat) + (FLOOR_CPU[0],)
    with _Clock() as clock:
        start = time.perf_counter()
        trace = dl.run("dvp_graph", problems_["dvp_graph"], epsilon=1.0, delta=DELTA, **kw)
        total = time.perf_counter() - start
    return results, floor, clock, total, trace


def live_rerun(repeat):
    """Part 3: the chapter's live cell at its default setting (same calls as book/zhang2017.ipynb)."""
    import altair as alt

    p = adult(LIVE_LAM)
    settings = {k: LIVE[k] for k in ("rho", "iterations", "topology", "n_agents")}
    reference = dl.run("admm_graph", p, seed=0, **settings)  # cached by the panel

    def once():
        trace = dl.run("dvp_graph", p, epsilon=LIVE["epsilon"], delta=LIVE["delta"], seed=0, **settings)
        runs = {"DVP": trace, "non-private": reference}
        size = dict(width=220, height=170)
        chart = alt.hconcat(book.viz.convergence(runs, "empirical_loss", **size),
                            book.viz.convergence(runs, "test_error", log_y=False, **size),
                            book.viz.topology_chart(trace.params["graph"], values=trace.params["node_loss"][-1],
                                                  value_title="local loss", size=170))
        _display_data(chart)  # the panel's one output, as the frontend receives it
        return trace

    book.viz.use_book_theme()
    def run():
        return dl.run("dvp_graph", p, epsilon=LIVE["epsilon"], delta=LIVE["delta"], seed=0, **settings)

    run_only = _median_ms(run, repeat)
    total = _median_ms(once, repeat)
    return run_only + (CPU_MS[run],), total + (CPU_MS[once],)


def full_run_against_floor(repeat):
    """Part 4: one DVP run of the chapter's full mode, and the sparse products it cannot avoid."""
    p = adult(LAM_DVP)
    kw = dict(epsilon=4.0, delta=DELTA, rho=RHO, iterations=100, topology=TOPOLOGY, n_agents=N_NODES, seed=0)
    trace = dl.run("dvp_graph", p, **kw)
    run = lambda: dl.run("dvp_graph", p, **kw)  # noqa: E731
    run_med, run_min = _median_ms(run, repeat)
    run_cpu = CPU_MS[run]
    data = graph.network(p, topology=TOPOLOGY, n_agents=N_NODES, seed=0).data  # the run's split (cached)
    passes = trace.params["passes"]
    F = np.random.default_rng(0).standard_normal((N_NODES, p.d)) * 0.1
    R = np.random.default_rng(1).standard_normal(data.agents.mask.shape)

    def floor():
        for _ in range(passes):
            data.margins(F)
            data.rmatvec(R)

    floor_med, floor_min = _median_ms(floor, repeat)
    return (run_med, run_min, run_cpu), (floor_med, floor_min, CPU_MS[floor]), passes


def threads(repeat_unused=None):
    """Part 5: eight chapter runs serially and on two threads (graph.parallel_runs), same rows."""
    p = adult(LAM_DVP)

    def task(epsilon, seed):
        t = dl.run("dvp_graph", p, epsilon=epsilon, delta=DELTA, rho=RHO, iterations=100, topology=TOPOLOGY,
                   n_agents=N_NODES, seed=seed)
        return {"models": t.params["local_models"].tobytes(), "error": t.metrics["test_error"][-1]}

    grid = {"epsilon": [1.0, 4.0]}
    out = {}
    for label, workers in (("one after another", None), ("graph.parallel_runs(2)", 2)):
        start, start_cpu = time.perf_counter(), time.process_time()
        if workers is None:
            frame = book.sweep.grid(task, grid, seeds=range(4), name="bench", cache=False, progress=False)
        else:
            with graph.parallel_runs(workers):
                frame = book.sweep.grid(task, grid, seeds=range(4), name="bench", cache=False, progress=False)
        out[label] = (time.perf_counter() - start, time.process_time() - start_cpu, frame)
    same = out["one after another"][2].equals(out["graph.parallel_runs(2)"][2])
    return out, same


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"load average {os.getloadavg()}"


def main():
    repeat = ARGS.repeat if ARGS else 3
    print(f"BLAS threads: {os.environ.get('OPENBLAS_NUM_THREADS', 'default')}; median of {repeat} (min in brackets)")
    print(f"machine load: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; uptime: {_uptime()}\n")

    parts = {int(x) for x in (ARGS.parts if ARGS else "1,2,3,4,5").split(",")}
    if parts & {1, 2}:
        _experiment_report(repeat)
    if 3 in parts:
        _live_report(repeat)
    if 4 in parts:
        _floor_report(repeat)
    if 5 in parts:
        _threads_report()
    return 0


def _experiment_report(repeat):
    results, (floor_med, floor_min, floor_cpu), clock, total, trace = experiment(repeat)
    print(f"1. Adult, {N_NODES} nodes on a {TOPOLOGY}, 100 iterations, ρ = {RHO}, δ = {DELTA:g} (the chapter's runs)")
    for (name, eps), ((med, best), tr, cpu) in results.items():
        what = "no noise" if eps is None else f"ε = {eps:g}"
        verdict = "  target ≤ 2 s: " + ("OK" if med <= 2000 else "over") if name == "dvp_graph" else ""
        print(f"   {name:10s} {what:9s} {med:8.0f} ms  [{best:.0f}; CPU {cpu:.0f}]   {tr.params['passes'] / 100:.2f} passes "
              f"per iteration, {tr.params['hessians']} Hessian(s) per run{verdict}")

    per_iteration = {k: 1000 * v / 100 for k, v in clock.seconds.items()}
    pair = floor_med / 100
    f_update = per_iteration["f-update (all local solves)"]
    print(f"\n2. Where one DVP iteration goes (ε = 1; one run with the clock on: {1000 * total:.0f} ms)")
    print(f"   floor: one bare pair (Xw, Xᵀr) on the dense data   {pair:7.2f} ms  [{floor_min / 100:.2f}; "
          f"CPU {floor_cpu / 100:.2f}]")
    for label, ms in per_iteration.items():
        calls = clock.calls[label] / 100
        print(f"   {label:52s} {ms:7.2f} ms  ({calls:.2f} calls per iteration)")
    other = 1000 * total / 100 - f_update - per_iteration["trace evaluation (objective, errors, distances)"]
    print(f"   {'the rest (neighbour sums, duals, noise, records)':52s} {other:7.2f} ms")
    print(f"   f-update / floor pair: {f_update / pair:.2f}  (admm_graph before issue 12: 9.4)")
    print(f"   passes per iteration: {trace.params['passes'] / 100:.2f}; each pass is one margins and one gradient "
          "product on the block-diagonal sparse data (Adult: 12 % non-zeros)")


def _live_report(repeat):
    (run_med, run_min, run_cpu), (tot_med, tot_min, tot_cpu) = live_rerun(repeat)
    print(f"\n3. live re-run of the chapter's default setting {LIVE} (λ = {LIVE_LAM:g})")
    print(f"   dvp_graph alone          {run_med:7.1f} ms  [{run_min:.1f}; CPU {run_cpu:.1f}]")
    print(f"   run + charts + output    {tot_med:7.1f} ms  [{tot_min:.1f}; CPU {tot_cpu:.1f}]   target ≤ 300 ms: "
          + ("OK" if tot_med <= 300 else "over"))


def _floor_report(repeat):
    (run_med, run_min, run_cpu), (fl_med, fl_min, fl_cpu), passes = full_run_against_floor(repeat)
    print(f"\n4. one full-mode run of the chapter: DVP, ε = 4, {N_NODES} nodes on a {TOPOLOGY}, 100 iterations, "
          f"40,000 rows (uptime: {_uptime()})")
    print(f"   the run                                   {run_med:8.0f} ms  [{run_min:.0f}; CPU {run_cpu:.0f}]")
    print(f"   floor: {passes} (margins, gradient) pairs on its sparse data {fl_med:5.0f} ms  [{fl_min:.0f}; CPU "
          f"{fl_cpu:.0f}]")
    print(f"   run / floor: {run_med / fl_med:.2f} wall, {run_cpu / max(fl_cpu, 1e-9):.2f} CPU")


def _threads_report():
    out, same = threads()
    print(f"\n5. eight such runs (ε = 1, 4 × seeds 0–3), the chapter's sweeps (uptime: {_uptime()})")
    for label, (wall, cpu, _) in out.items():
        print(f"   {label:24s} {wall:6.2f} s wall, {cpu:6.2f} s CPU")
    serial, parallel = out["one after another"][0], out["graph.parallel_runs(2)"][0]
    print(f"   speed-up {serial / parallel:.2f}× on {os.cpu_count()} cores; rows identical bit for bit: {same}")


if __name__ == "__main__":
    sys.exit(main())
