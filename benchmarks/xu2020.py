"""Speed of the chapter "Centralized DP-ADMM and DP-AccADMM" (book/xu2020.ipynb).

Run with ``.venv/bin/python benchmarks/xu2020.py``. Prints

* one live re-run of the chapter's default panel setting (ε = 0.1 end to end, δ = 1e-3, ρ = 0.1,
  T = 100 on the 4,000-row Adult subsample the panel uses, the library's default
  ``calibration="accountant"``): cold (all four algorithms) and warm (the two private ones; the
  panel caches the non-private twins, which do not depend on ε, δ, μ or the seed) — the budget
  is 200 ms;
* the accountant's calibration alone (``accounting.calibrate_ledger`` on the run's unit ledger,
  which every private run now does once);
* the same with BLAS limited to one thread (on a busy 2-core machine multi-threaded OpenBLAS
  matrix-vector products are often slower, not faster);
* the cost per iteration against its floor: the two matrix-vector products over the data
  (``X x`` and ``Xᵀr``) that one gradient cannot avoid, on the matrix the gradient uses (a CSR
  copy when the features are sparse enough: the full Adult set is 12 % non-zero);
* one run of the paper experiment (full Adult, 40,000 × 104, T = 100).

The live-panel problem below is built exactly as in the chapter's live cell.
"""

from __future__ import annotations

import math
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_limits

import dpadmm_lite as dl
from _timing import median_ms
from dpadmm_lite.algorithms.xu2020 import _data_matrix, noise_scale

LIVE_ROWS = 4_000  # the chapter's live panel: a seeded 4,000-row subsample of the Adult training set
DEFAULT = dict(epsilon=0.1, delta=1e-3, rho=0.1, iterations=100, seed=0)  # ε end to end (calibration="accountant")
REPEATS = 7


def wall_ms(f, repeats: int = REPEATS) -> float:
    """Median wall time of ``f()`` in ms (after one warm-up call)."""
    return median_ms(f, repeats)[0]



def adult_problem(rows: int | None):
    """The chapter's problem: the feature graph estimated on its public sample of 2,000 rows."""
    X, y, X_test, y_test = dl.datasets.load_adult()
    X_public, X, y = dl.datasets.public_split(X, y, public_rows=2_000, seed=2020)
    if rows is not None:
        keep = np.random.default_rng(0).choice(len(y), rows, replace=False)
        X, y = X[keep], y[keep]
    return dl.problems.graph_guided_fused_lasso(X, y, lam=1e-5, public_features=X_public, X_test=X_test, y_test=y_test)


def live_rerun(problem, *, cold: bool) -> None:
    """What the panel computes after one slider move."""
    public = dict(rho=DEFAULT["rho"], iterations=DEFAULT["iterations"])
    if cold:
        dl.run("admm_linearized", problem, **public)
        dl.run("acc_admm", problem, **public)
    dl.run("dp_admm", problem, **DEFAULT)
    dl.run("dp_acc_admm", problem, **DEFAULT)


def floor_per_iteration(problem) -> float:
    """Seconds of the two unavoidable products over the data of one gradient (on the matrix the
    gradient uses: a CSR copy when the features are sparse, as Adult's full training set)."""
    X, x = _data_matrix(problem), np.full(problem.d, 0.01)
    r = np.ones(problem.n)

    def once():
        start = time.perf_counter()
        for _ in range(50):
            X @ x
            X.T @ r
        return (time.perf_counter() - start) / 50

    return statistics.median(once() for _ in range(REPEATS))


def main() -> None:
    live = adult_problem(LIVE_ROWS)
    full = adult_problem(None)
    live.reference_optimum(), full.reference_optimum()  # computed once per problem, cached
    T = DEFAULT["iterations"]
    print(f"live panel problem: Adult subsample n = {live.n}, d = {live.d}, A = {live.A.shape}, T = {T}")
    for label, limit in (("BLAS threads as configured", None), ("BLAS limited to 1 thread", 1)):
        with threadpool_limits(limits=limit, user_api="blas"):
            cold = wall_ms(lambda: live_rerun(live, cold=True))
            warm = wall_ms(lambda: live_rerun(live, cold=False))
            one = wall_ms(lambda: dl.run("dp_admm", live, **DEFAULT))
            calibration = wall_ms(lambda: noise_scale(live, epsilon=DEFAULT["epsilon"], delta=DEFAULT["delta"],
                                                        iterations=T))
            floor = floor_per_iteration(live)
            print(f"[{label}]")
            print(f"  live re-run, cold (4 runs): {cold:7.1f} ms   budget 200 ms  {'OK' if cold <= 200 else 'OVER'}")
            print(f"  live re-run, warm (2 runs): {warm:7.1f} ms   budget 200 ms  {'OK' if warm <= 200 else 'OVER'}")
            print(f"  one dp_admm run:            {one:7.1f} ms = {one / T * 1000:6.0f} µs/iteration "
                  f"(floor X·x + rᵀX: {floor * 1e6:5.0f} µs, ratio {one / T / 1000 / floor:4.1f})")
            print(f"  of which the calibration:   {calibration:7.1f} ms (calibrate_ledger, {T + 1} releases)")
    with threadpool_limits(limits=1, user_api="blas"):
        full_ms = wall_ms(lambda: dl.run("dp_acc_admm", full, **DEFAULT), repeats=3)
        floor = floor_per_iteration(full)
    print(f"paper experiment, one run on full Adult (n = {full.n}), T = {T}: {full_ms:.0f} ms "
          f"({full_ms / T * 1000:.0f} µs/iteration, floor {floor * 1e6:.0f} µs)")
    trace = dl.run("dp_admm", full, **DEFAULT)
    print(trace.summary())
    assert math.isfinite(trace.objective[-1])


if __name__ == "__main__":
    main()
