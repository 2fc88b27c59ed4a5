"""Speed of the chapter "Private ADMM as a noisy fixed-point iteration" (book/cyffers2023.ipynb).

Run with ``.venv/bin/python benchmarks/cyffers2023.py``. Prints

* one live re-run of the chapter's default panel (federated private ADMM and DP-SGD, ε = 1,
  δ = 1e-6, q = 0.1, T = 200 rounds on the paper's n = 1000, p = 64 Lasso) — the budget is 300 ms;
* one run of each mode (centralized, federated, walk) at the paper's size;
* last, the whole Figure 1 experiment of the paper (App. E): 7 values of ε from 0.01 to 5 × 10
  repetitions × both methods (federated private ADMM and proximal DP-SGD, 10 % of the users per
  round) × 1000 rounds, with the noise calibrated to each ε. Every run of a method goes through one
  batched call (:func:`dpadmm_lite.algorithms.cyffers2023.released_models`), which vectorises over
  users *and* over ε × repetitions: the runs are split into fixed groups of about 512 (run, user)
  pairs per round, each round of a group makes one pass per line of the update in work arrays reused
  by every round, each run's noise is drawn per (round, run) block straight into its rows and scaled
  in place, and ``fixed_point.THREADS`` threads share the groups; the only public implementation
  loops over users and takes about 7 minutes.
* next to it, in the same run, its **noise-draw floor** (issue 26, item 2): drawing the experiment's
  float64 Gaussians — as many as its runs drew, counted from their schedules — with one
  ``standard_normal(out=…)`` per 2²² numbers into one preallocated buffer, on one core, measured
  just before and just after the experiment (the load drifts; the ratio uses their mean). The target
  is the experiment's wall time within 1.5× of the floor; both sides are printed with the machine's
  load (``uptime``) before and after, the CPU times too, and the experiment's CPU time on one thread.

The problem, step sizes and clipping thresholds are the chapter's (tuned there on a validation split).
"""

from __future__ import annotations

import os
import subprocess
import time

import numpy as np

import dpadmm_lite as dl
from dpadmm_lite.algorithms import cyffers2023 as fixed_point
from _timing import median_ms

N, P, DELTA, ROUNDS, REPETITIONS = 1000, 64, 1e-6, 1000, 10
EPSILONS = np.geomspace(0.01, 5, 7)
# The options the chapter's tuning picks at the smallest budget (the speed does not depend on them).
ADMM = dict(gamma=3000.0, relaxation=0.1, clip=0.001, sampling_rate=0.1)
SGD = dict(step=0.03, clip=0.001, sampling_rate=0.1)


def lasso_problem():
    """The paper's App. E data: rows on the unit sphere, support 8, label noise N(0, 0.01), a fresh test set."""
    X, y, _ = dl.datasets.make_lasso(3 * N, P, seed=0)
    return dl.problems.lasso(X[:N], y[:N], 3e-4, X_test=X[2 * N:], y_test=y[2 * N:])


def load() -> str:
    """The machine's load averages, as ``uptime`` prints them."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "load " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def gaussians_drawn(settings) -> int:
    """The float64 Gaussians the Figure 1 experiment draws: p per participation of every ADMM run (each
    participant adds its own noise) and p per round of every DP-SGD run (the server's noise)."""
    admm = sum(int(fixed_point._Schedule(fixed_point._streams([s["seed"]])[0][0], ADMM["sampling_rate"], N)
                   .take(ROUNDS * N).size) for s in settings)
    return (admm + ROUNDS * len(settings)) * P


def draw_floor(count: int) -> tuple[float, float]:
    """Wall and CPU seconds to draw ``count`` standard Gaussians (float64) into one buffer, one core."""
    rng = np.random.default_rng(0)
    block = 1 << 22
    buffer = np.empty(block)
    start, start_cpu = time.perf_counter(), time.process_time()
    for k0 in range(0, count, block):  # a loop over blocks of 2²² numbers
        rng.standard_normal(out=buffer[: min(block, count - k0)])
    return time.perf_counter() - start, time.process_time() - start_cpu


def main() -> None:
    problem = lasso_problem()
    problem.reference_optimum()

    def live():
        common = dict(epsilon=1.0, delta=DELTA, iterations=200, seed=0)
        dl.run("private_admm_federated", problem, **common, **ADMM)
        dl.run("dp_prox_sgd", problem, **common, **SGD)

    wall, cpu = median_ms(live)
    print(f"live re-run (federated ADMM + DP-SGD, T = 200, n = {N}, p = {P}): {wall:.0f} ms wall, {cpu:.0f} ms CPU "
          "(budget 300 ms)")
    for name, options, T in (("private_admm", {k: v for k, v in ADMM.items() if k != "sampling_rate"}, 100),
                             ("private_admm_federated", ADMM, 1000),
                             ("private_admm_walk", {k: v for k, v in ADMM.items() if k != "sampling_rate"}, 10_000)):
        wall, cpu = median_ms(lambda: dl.run(name, problem, epsilon=1.0, delta=DELTA, iterations=T, seed=0, **options), 3)
        print(f"one run of {name}, {T} iterations: {wall:.0f} ms wall, {cpu:.0f} ms CPU")

    settings = [dict(epsilon=float(e), seed=r) for e in EPSILONS for r in range(REPETITIONS)]
    count = gaussians_drawn(settings)

    def figure_1(threads=None):
        scores = {}
        for name, options in (("private_admm_federated", ADMM), ("dp_prox_sgd", SGD)):
            models, _ = fixed_point.released_models(name, problem, [{**s, **options} for s in settings], delta=DELTA,
                                                    iterations=ROUNDS, threads=threads)
            test = problem.data_loss(models, problem.X_test, problem.y_test) + problem.lam * np.abs(models).sum(1)
            scores[name] = test.reshape(len(EPSILONS), REPETITIONS).mean(1)
        return scores

    def timed(f):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = f()
        return result, time.perf_counter() - start, time.process_time() - start_cpu

    _, _, one_thread_cpu = timed(lambda: figure_1(threads=1))  # also warms the calibration caches
    print(f"load before the Figure 1 experiment: {load()}")
    floor_before = draw_floor(count)
    scores, elapsed, cpu = timed(figure_1)
    floor_after = draw_floor(count)
    print(f"load after: {load()}")
    floor_wall, floor_cpu = (floor_before[0] + floor_after[0]) / 2, (floor_before[1] + floor_after[1]) / 2
    for i, eps in enumerate(EPSILONS):
        print(f"  ε = {eps:6.3f}: test objective ADMM {scores['private_admm_federated'][i]:.4g}, "
              f"DP-SGD {scores['dp_prox_sgd'][i]:.4g}")
    print(f"Figure 1 experiment ({len(EPSILONS)} ε × {REPETITIONS} repetitions × 2 methods × {ROUNDS} rounds, "
          f"n = {N}, q = 0.1, {fixed_point.THREADS} thread(s)): {elapsed:.1f} s wall, {cpu:.1f} s CPU "
          f"(on one thread, just before: {one_thread_cpu:.1f} s CPU)")
    print(f"its noise-draw floor ({count / 1e6:.0f} M float64 Gaussians, one core), before / after: "
          f"{floor_before[0]:.1f} / {floor_after[0]:.1f} s wall, {floor_before[1]:.1f} / {floor_after[1]:.1f} s CPU")
    print(f"ratio to the floor: {elapsed / floor_wall:.2f}× wall (target ≤ 1.5×), {cpu / floor_cpu:.2f}× CPU "
          f"({one_thread_cpu / floor_cpu:.2f}× on one thread)")


if __name__ == "__main__":
    main()
