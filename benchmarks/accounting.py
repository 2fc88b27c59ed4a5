"""Benchmark: dpadmm_lite.accounting next to Google's dp-accounting (RDP and PLD accountants).

Run with ``.venv/bin/python benchmarks/accounting.py``. Prints

1. the time of one ``gaussian_epsilon`` and one ``calibrate_noise`` call (the unified
   accountant: exact μ-GDP for q = 1, the privacy loss distribution for q < 1) and of our RDP
   bound alone (``rdp_gaussian_epsilon``), best of several runs, next to dp-accounting's RDP
   accountant, its PLD accountant, and its generic calibration
   (``mechanism_calibration.calibrate_dp_mechanism`` with the RDP accountant);
2. the largest relative difference to dp-accounting's RDP ε over the grid used in
   ``tests/test_accounting.py`` (positive = ours larger), for the unified accountant and for our
   RDP bound, and the smallest margin over the true ε (exact Gaussian composition for q = 1,
   optimistic PLD for q < 1).

The PLD path against dp-accounting's PLD accountant, over the grid of issue 15, with medians
on the loaded machine: ``benchmarks/pld.py``.
"""

from __future__ import annotations

import logging
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
logging.getLogger("absl").setLevel(logging.ERROR)  # dp-accounting's fractional-order warnings

import dp_accounting as dpa  # noqa: E402
from dp_accounting import gaussian_mechanism as dp_gauss  # noqa: E402
from dp_accounting import mechanism_calibration as dp_cal  # noqa: E402
from dp_accounting.pld import pld_privacy_accountant as dp_pld_acc  # noqa: E402
from dp_accounting.pld import privacy_loss_distribution as dp_pld  # noqa: E402
from dp_accounting.rdp import rdp_privacy_accountant as dp_rdp  # noqa: E402

from dpadmm_lite import accounting as acc  # noqa: E402
from _timing import best_time  # noqa: E402

DELTA = 1e-5
GRID = [(z, T, q) for z in (0.7, 1.0, 2.0, 5.0) for T in (1, 50, 1000) for q in (1.0, 0.1, 0.01)]



def event(z, q):
    return dpa.GaussianDpEvent(z) if q == 1 else dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(z))


def dp_rdp_epsilon(z, T, q, delta=DELTA):
    a = dp_rdp.RdpAccountant()
    a.compose(event(z, q), T)
    return a.get_epsilon(delta)


def dp_pld_epsilon(z, T, q, delta=DELTA):
    a = dp_pld_acc.PLDAccountant(value_discretization_interval=1e-3)
    a.compose(event(z, q), T)
    return a.get_epsilon(delta)


def dp_calibrate(eps, delta, T, q):
    return dp_cal.calibrate_dp_mechanism(
        lambda: dp_rdp.RdpAccountant(), lambda z: dpa.SelfComposedDpEvent(event(z, q), T), eps, delta,
        dp_cal.LowerEndpointAndGuess(0.1, 1.0), tol=1e-4,
    )


def timing_table() -> list[tuple[str, str, float]]:
    rows = []
    for (z, T, q) in [(1.1, 1000, 0.01), (1.1, 1000, 1.0)]:
        label = f"ε of T={T} steps, z={z}, q={q}"
        rows.append((label, "dpadmm_lite.gaussian_epsilon", best_time(lambda: acc.gaussian_epsilon(z, T, DELTA, q))))
        rows.append((label, "dpadmm_lite.rdp_gaussian_epsilon", best_time(lambda: acc.rdp_gaussian_epsilon(z, T, DELTA, q))))
        rows.append((label, "dp-accounting RDP accountant", best_time(lambda: dp_rdp_epsilon(z, T, q))))
        rows.append((label, "dp-accounting PLD accountant", best_time(lambda: dp_pld_epsilon(z, T, q), repeat=2)))
    for (eps, T, q) in [(1.0, 1000, 0.01), (1.0, 1000, 1.0)]:
        label = f"calibrate z for ε={eps}, T={T}, q={q}"
        rows.append((label, "dpadmm_lite.calibrate_noise", best_time(lambda: acc.calibrate_noise(eps, DELTA, T, q))))
        rows.append((label, "dp-accounting calibrate (RDP)", best_time(lambda: dp_calibrate(eps, DELTA, T, q), repeat=2)))
    return rows


def accuracy_table():
    worst_vs_rdp, worst_case = -math.inf, None
    worst_rdp_vs_rdp, worst_rdp_case = -math.inf, None
    min_margin, min_case = math.inf, None
    for z, T, q in GRID:
        ours = acc.gaussian_epsilon(z, T, DELTA, q)
        theirs = dp_rdp_epsilon(z, T, q)
        rel = ours / theirs - 1
        if rel > worst_vs_rdp:
            worst_vs_rdp, worst_case = rel, (z, T, q)
        rel_rdp = acc.rdp_gaussian_epsilon(z, T, DELTA, q) / theirs - 1
        if rel_rdp > worst_rdp_vs_rdp:
            worst_rdp_vs_rdp, worst_rdp_case = rel_rdp, (z, T, q)
        if q == 1:
            truth = dp_gauss.get_epsilon_gaussian(z / math.sqrt(T), DELTA)
        else:
            pld = dp_pld.from_gaussian_mechanism(z, sampling_prob=q, value_discretization_interval=2e-3,
                                                 pessimistic_estimate=False, use_connect_dots=False)
            truth = pld.self_compose(T).get_epsilon_for_delta(DELTA)
        margin = ours - truth
        if margin < min_margin:
            min_margin, min_case = margin, (z, T, q)
    return worst_vs_rdp, worst_case, worst_rdp_vs_rdp, worst_rdp_case, min_margin, min_case


def main():
    print(f"{'task':42s} {'implementation':32s} {'time':>10s}")
    print("-" * 86)
    for label, impl, t in timing_table():
        print(f"{label:42s} {impl:32s} {1000 * t:8.2f} ms")
    worst, case, worst_rdp, rdp_case, margin, mcase = accuracy_table()
    print()
    print(f"grid: z ∈ {{0.7, 1, 2, 5}} × T ∈ {{1, 50, 1000}} × q ∈ {{1, 0.1, 0.01}}, δ = {DELTA:g}")
    print(f"largest relative difference to dp-accounting RDP (ours − theirs)/theirs: {worst:+.4%} at (z, T, q) = {case}")
    print(f"  … of our RDP bound alone: {worst_rdp:+.4%} at (z, T, q) = {rdp_case}")
    print(f"smallest margin over the true ε (ours − truth): {margin:+.3g} at (z, T, q) = {mcase}  (must be ≥ 0)")


if __name__ == "__main__":
    main()
