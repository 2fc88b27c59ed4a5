"""Benchmark: what ``dl.tune`` costs beyond the runs it makes.

Run with ``.venv/bin/python benchmarks/tuning.py``. For a few algorithms, problem sizes and both
methods it prints the tuner's own time split as :class:`dpadmm_lite.tuning.TuningResult` ``seconds``
reports it — the runs (including the noise-shape probes, which stop each candidate at its call to the
accountant) and the accounting (the per-run ε search and the total from the recorded ledgers) — and
the **accounting share** of the whole, median over repeats. A share is a ratio measured within one
call, so it holds on a loaded machine; the load (``os.getloadavg``) is printed with it. The
accountant's memo is emptied before every call (``accounting.forget_ledgers``) so that the
calibration is timed, not looked up.
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dpadmm_lite as dl  # noqa: E402
from dpadmm_lite import accounting  # noqa: E402

CASES = [  # algorithm, rows, iterations, extra options
    ("dp_admm", 2_000, 50, {}),
    ("dp_admm", 8_000, 100, {}),
    ("dp_prox_sgd", 2_000, 50, {"clip": 1.0, "sampling_rate": 0.1, "step": 0.1}),
    ("dp_prox_sgd", 8_000, 200, {"clip": 1.0, "sampling_rate": 0.1, "step": 0.1}),
    ("dp_admm_star", 2_000, 30, {"n_agents": 10}),
]
RHOS = [{"rho": r} for r in (0.1, 0.3, 1.0, 3.0, 10.0, 30.0)]


def main(repeat: int = 3) -> None:
    X, y, _ = dl.datasets.make_classification(10_000, 20, seed=0)
    print(f"load average at start: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")
    print(f"{'algorithm':14s} {'rows':>6s} {'T':>4s} {'method':16s} {'runs':>4s} {'run s':>7s} {'acct s':>7s} "
          f"{'acct share':>10s} {'ε':>6s}")
    for algorithm, n, T, extra in CASES:
        problem = dl.problems.logistic(X[:n], y[:n], 1e-3)
        validation = (X[n:n + 1000], y[n:n + 1000])
        for method in ("fixed", "random_stopping"):
            shares, runs_s, acct_s = [], [], []
            for r in range(repeat):
                accounting.forget_ledgers()
                result = dl.tune(algorithm, problem, RHOS, epsilon=1.0, delta=1e-6, validation=validation,
                                 method=method, iterations=T, seed=r, **extra)
                s = result.seconds
                shares.append(s["accounting"] / s["total"])
                runs_s.append(s["runs"])
                acct_s.append(s["accounting"])
            print(f"{algorithm:14s} {n:6d} {T:4d} {method:16s} {result.repetitions:4d} "
                  f"{statistics.median(runs_s):7.3f} {statistics.median(acct_s):7.3f} "
                  f"{statistics.median(shares):10.1%} {result.privacy.epsilon:6.3f}")
    print(f"load average at end: {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
