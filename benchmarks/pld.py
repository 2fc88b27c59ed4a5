"""Benchmark: the unified accountant's PLD path against Google's dp-accounting PLD accountant.

Run with ``.venv/bin/python benchmarks/pld.py``. Prints, for every point of the grid of issue 15
(z = σ/Δ ∈ {0.5, 1, 2, 5}, q ∈ {1, 0.1, 0.01}, K ∈ {1, 10, 100, 1000}, δ ∈ {1e-5, 1e-6}):

1. ε from ``dpadmm_lite.accounting.gaussian_epsilon`` (the unified accountant: exact μ-GDP for
   q = 1, the PLD accountant of ``dpadmm_lite.accounting._pld`` otherwise, never more than RDP), its
   relative difference to dp-accounting's PLD value at the finest discretisation we could afford
   (read from ``tests/data/pld_reference.json``), and the RDP value for comparison;
2. the median time of one ε evaluation and of one calibration (``calibrate_noise`` for the ε
   just computed) next to the time of one dp-accounting PLD evaluation at its default
   discretisation (1e-4) — the machine is shared, so these are medians on a loaded machine;
3. the heterogeneous ledgers of the reference file (mixed events, time-varying noise, ℓ2-Laplace
   through randomized response) against dp-accounting's composition of different PLDs, and the
   time of ``calibrate_ledger`` on Huang-style ledgers of 100 and 500 events.

4. replace-one neighbours (issue 22): the grid q ∈ {0.01, 0.1, 0.5} × σ/C ∈ {1, 2, 4, 8} × K ∈ {100,
   1000} at δ = 1e-6, our exact replace-one PLD against dp-accounting's REPLACE_ONE PLD (read from
   ``tests/data/pld_replace_one_reference.json``) and against recording the same releases as
   add/remove with sensitivity 2C (what the library did before), with the time of one call of
   each side; and a ledger of many distinct subsampled releases with time-varying σ, timed as
   add/remove-2C (before) and as replace-one (now). ``--section replace`` prints only this part.

``--make-reference`` recomputes ``tests/data/pld_reference.json`` with dp-accounting (slow: its
PLD accountant takes up to ~20 s per point at fine discretisations; about 15–30 minutes in all).
For each point it refines the discretisation interval 1e-4 → 1e-5 → 1e-6 while the previous one
took under ``--budget`` seconds / 12, and stores the finest value with the one before it (so the
file shows how far dp-accounting had converged). ``--make-replace-reference`` does the same for
``tests/data/pld_replace_one_reference.json`` (dp-accounting's
``from_gaussian_mechanism(σ/C, sampling_prob=q, neighboring_relation=REPLACE_ONE)``, sensitivity 1,
composed K times; about 10–20 minutes).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import logging
import math
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
logging.getLogger("absl").setLevel(logging.ERROR)

import numpy as np  # noqa: E402

from _timing import median_ms  # noqa: E402

REFERENCE = ROOT / "tests" / "data" / "pld_reference.json"
REPLACE_REFERENCE = ROOT / "tests" / "data" / "pld_replace_one_reference.json"
REPLACE_QS = (0.01, 0.1, 0.5)
REPLACE_SCALES = (1.0, 2.0, 4.0, 8.0)  # σ/C
REPLACE_KS = (100, 1000)
REPLACE_DELTA = 1e-6
ZS = (0.5, 1.0, 2.0, 5.0)
QS = (1.0, 0.1, 0.01)
KS = (1, 10, 100, 1000)
DELTAS = (1e-5, 1e-6)
INTERVALS = (1e-4, 1e-5, 1e-6)

#: Heterogeneous ledgers: (mechanism, noise multiplier z = σ/Δ or pure ε₀ for "laplace",
#: sampling rate, count). The test rebuilds PrivacyEvents from these (Δ = 1).
LEDGERS = {
    "mixed Gaussian (sampled + full batch)": [
        ["gaussian", 1.0, 0.01, 100], ["gaussian", 2.0, 0.1, 10], ["gaussian", 5.0, 1.0, 20]],
    "time-varying sampled noise (50 steps, z from 0.8 to 3)": [
        ["gaussian", float(z), 0.05, 1] for z in np.linspace(0.8, 3.0, 50)],
    "Gaussian + l2-Laplace (pure eps0 = 0.1, via randomized response)": [
        ["gaussian", 3.0, 1.0, 10], ["laplace", 0.1, 1.0, 20], ["gaussian", 1.5, 0.02, 200]],
    "time-varying full-batch noise (Huang-style, 100 steps)": [
        ["gaussian", float(z), 1.0, 1] for z in np.linspace(2.0, 12.0, 100)],
}


# ------------------------------------------------------------------ dp-accounting side

def _dp():
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    return common, pld


def dp_pld(z: float, q: float, interval: float):
    _, pld = _dp()
    return pld.from_gaussian_mechanism(z, sampling_prob=q, value_discretization_interval=interval)


def dp_epsilons(z: float, q: float, K: int, interval: float) -> dict[float, float]:
    composed = dp_pld(z, q, interval).self_compose(K)
    return {d: float(composed.get_epsilon_for_delta(d)) for d in DELTAS}


def dp_ledger_epsilons(ledger, interval: float) -> dict[float, float]:
    common, pld = _dp()
    total = None
    for mechanism, value, q, count in ledger:
        if mechanism == "gaussian":
            one = dp_pld(value, q, interval)
        else:
            one = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(value, 0.0), interval)
        one = one.self_compose(count) if count > 1 else one
        total = one if total is None else total.compose(one)
    return {d: float(total.get_epsilon_for_delta(d)) for d in DELTAS}


def dp_replace_epsilons(scale: float, q: float, K: int, interval: float) -> dict[float, float]:
    """dp-accounting's REPLACE_ONE PLD of K Poisson-subsampled Gaussian releases, σ/C = ``scale``."""
    import dp_accounting

    _, pld = _dp()
    one = pld.from_gaussian_mechanism(scale, sampling_prob=q, value_discretization_interval=interval,
                                      neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    return {REPLACE_DELTA: float(one.self_compose(K).get_epsilon_for_delta(REPLACE_DELTA))}


def _refine(compute, budget: float) -> dict:
    """Run ``compute(interval)`` for finer and finer intervals while affordable."""
    done, last_time = [], 0.0
    for interval in INTERVALS:
        if done and last_time * 12 > budget:
            break
        start = time.perf_counter()
        values = compute(interval)
        last_time = time.perf_counter() - start
        done.append((interval, values, last_time))
        print(f"    interval {interval:g}: {values} ({last_time:.1f} s)", flush=True)
    interval, values, seconds = done[-1]
    previous = done[-2][1] if len(done) > 1 else None
    return {"interval": interval, "epsilon": {str(d): v for d, v in values.items()}, "seconds": round(seconds, 2),
            "previous_interval": done[-2][0] if previous else None,
            "previous_epsilon": {str(d): v for d, v in previous.items()} if previous else None}


def make_reference(budget: float) -> None:
    """Compute every point (resuming from the partial file a previous, interrupted run left)."""
    from dp_accounting import gaussian_mechanism as dp_gauss

    partial = REFERENCE.with_name(".pld_reference.partial.json")
    done = json.loads(partial.read_text()) if partial.exists() else {}

    def cached(key: str, compute):
        if key not in done:
            done[key] = compute()
            partial.write_text(json.dumps(done))
        return done[key]

    points = []
    for z in ZS:
        for q in QS:
            for K in KS:
                print(f"z={z} q={q} K={K}", flush=True)
                row = {"z": z, "q": q, "K": K,
                       **cached(f"{z}-{q}-{K}", lambda: _refine(lambda h: dp_epsilons(z, q, K, h), budget))}
                if q == 1.0:  # the closed form (analytic Gaussian of Balle & Wang)
                    row["exact"] = {str(d): float(dp_gauss.get_epsilon_gaussian(z / math.sqrt(K), d)) for d in DELTAS}
                points.append(row)
    ledgers = []
    for name, ledger in LEDGERS.items():
        print(name, flush=True)
        ledgers.append({"name": name, "events": ledger,
                        **cached(name, lambda: _refine(lambda h: dp_ledger_epsilons(ledger, h), budget))})
    data = {
        "about": ("dp-accounting PLD epsilons (pessimistic, connect-the-dots) at the finest discretisation "
                  "interval affordable, made by benchmarks/pld.py --make-reference; add/remove neighbours, "
                  "sensitivity 1, noise multiplier z"),
        "dp_accounting_version": importlib.metadata.version("dp-accounting"),
        "deltas": list(DELTAS),
        "grid": points,
        "ledgers": ledgers,
    }
    REFERENCE.parent.mkdir(parents=True, exist_ok=True)
    REFERENCE.write_text(json.dumps(data, indent=1) + "\n")
    partial.unlink()
    print(f"wrote {REFERENCE}")


def make_replace_reference(budget: float) -> None:
    """The replace-one grid of issue 22 (resuming from a partial file, like :func:`make_reference`)."""
    partial = REPLACE_REFERENCE.with_name(".pld_replace_one_reference.partial.json")
    done = json.loads(partial.read_text()) if partial.exists() else {}
    points = []
    for q in REPLACE_QS:
        for scale in REPLACE_SCALES:
            for K in REPLACE_KS:
                key = f"{q}-{scale}-{K}"
                print(f"q={q} σ/C={scale} K={K}", flush=True)
                if key not in done:
                    done[key] = _refine(lambda h: dp_replace_epsilons(scale, q, K, h), budget)
                    partial.write_text(json.dumps(done))
                points.append({"q": q, "noise_over_bound": scale, "K": K, **done[key]})
    data = {
        "about": ("dp-accounting REPLACE_ONE PLD epsilons (pessimistic, connect-the-dots) of K Poisson-subsampled "
                  "Gaussian releases with the pair q*N(+C) + (1-q)*N(0) vs q*N(-C) + (1-q)*N(0), sensitivity C = 1 and "
                  "noise sigma = noise_over_bound, at the finest discretisation interval affordable; made by "
                  "benchmarks/pld.py --make-replace-reference"),
        "dp_accounting_version": importlib.metadata.version("dp-accounting"),
        "deltas": [REPLACE_DELTA],
        "grid": points,
    }
    REPLACE_REFERENCE.write_text(json.dumps(data, indent=1) + "\n")
    partial.unlink()
    print(f"wrote {REPLACE_REFERENCE}")


# ------------------------------------------------------------------ our side

def ledger_events(ledger):
    from dpadmm_lite.privacy import PrivacyEvent

    events = []
    for mechanism, value, q, count in ledger:
        if mechanism == "gaussian":
            events.append(PrivacyEvent("gaussian", 1.0, float(value), count=int(count), sampling_rate=float(q)))
        else:  # pure ε₀ = ζΔ with Δ = 1
            events.append(PrivacyEvent("laplace_l2", 1.0, float(value), count=int(count), sampling_rate=float(q)))
    return events


def main() -> None:
    from dpadmm_lite import accounting as acc

    reference = json.loads(REFERENCE.read_text())
    print(f"dp-accounting {reference['dp_accounting_version']} reference: {REFERENCE.relative_to(ROOT)}")
    print("timings: medians of 7 (calibration 5) calls on a shared, loaded 2-core machine — wall time, and the")
    print("CPU time of this process in brackets; dp-accounting: one PLD evaluation at its default interval 1e-4\n")
    header = (f"{'z':>4} {'q':>5} {'K':>5} {'δ':>6} | {'ε ours':>10} {'ε dp-acc':>10} {'rel':>9} {'ε RDP':>10} | "
              f"{'ε ms (cpu)':>14} {'calib ms (cpu)':>15} {'dp-acc ms':>9}")
    print(header)
    print("-" * len(header))
    worst_above, worst_below, eps_times, cal_times, eps_cpu, cal_cpu = -math.inf, math.inf, [], [], [], []
    dp_times = {}
    for row in reference["grid"]:
        z, q, K = row["z"], row["q"], row["K"]
        key = (z, q, K)
        if key not in dp_times:  # one dp-accounting evaluation at its default interval (timed once)
            start = time.perf_counter()
            dp_epsilons(z, q, K, 1e-4)
            dp_times[key] = 1000 * (time.perf_counter() - start)
        for d in DELTAS:
            ref = row["epsilon"][str(d)]
            ours = acc.gaussian_epsilon(z, K, d, q)
            rdp = acc.rdp_gaussian_epsilon(z, K, d, q)
            rel = ours / ref - 1
            worst_above, worst_below = max(worst_above, rel), min(worst_below, rel)
            t_eps, c_eps = median_ms(lambda: acc.gaussian_epsilon(z, K, d, q))
            target = ours
            t_cal, c_cal = median_ms(lambda: acc.calibrate_noise(target, d, K, q), repeat=5)
            eps_times.append(t_eps)
            cal_times.append(t_cal)
            eps_cpu.append(c_eps)
            cal_cpu.append(c_cal)
            print(f"{z:4g} {q:5g} {K:5d} {d:6.0e} | {ours:10.5g} {ref:10.5g} {rel:+9.2e} {rdp:10.5g} | "
                  f"{t_eps:6.2f} ({c_eps:5.2f}) {t_cal:6.1f} ({c_cal:6.1f}) {dp_times[key]:9.1f}", flush=True)
    print()
    print(f"relative difference to dp-accounting over the grid: from {worst_below:+.3%} to {worst_above:+.3%} "
          f"(must lie in [-0.2 %, +1 %])")
    print(f"ε evaluation: median {statistics.median(eps_times):.2f} ms wall ({statistics.median(eps_cpu):.2f} ms CPU), "
          f"worst point {max(eps_times):.2f} ms wall ({max(eps_cpu):.2f} ms CPU) (target ≤ 10 ms)")
    print(f"calibration:  median {statistics.median(cal_times):.2f} ms wall ({statistics.median(cal_cpu):.2f} ms CPU), "
          f"worst point {max(cal_times):.2f} ms wall ({max(cal_cpu):.2f} ms CPU) (target ≤ 50 ms)")
    print()
    print("heterogeneous ledgers (ε at δ = 1e-5 / 1e-6)")
    for item in reference["ledgers"]:
        events = ledger_events(item["events"])
        parts = []
        for d in DELTAS:
            ours = acc.ledger_epsilon(events, d)
            ref = item["epsilon"][str(d)]
            parts.append(f"{ours:.5g} vs {ref:.5g} ({ours / ref - 1:+.2e})")
        t, c = median_ms(lambda: (acc.forget_ledgers(), acc.ledger_epsilon(events, 1e-5)))  # not a memo look-up
        print(f"  {item['name']}: {'; '.join(parts)}; {t:.2f} ms ({c:.2f} ms CPU); {acc.ledger_guarantee(events, 1e-5).source}")
    print()
    print("calibrate_ledger on heterogeneous ledgers (median ms)")
    from dpadmm_lite.privacy import PrivacyEvent

    for n in (100, 500):
        huang = [PrivacyEvent("gaussian", 1.0, 1.0 / (0.1 + 1.0 / eta)) for eta in np.linspace(0.5, 5.0, n)]
        sampled = [PrivacyEvent("gaussian", 1.0, float(s), sampling_rate=0.01) for s in np.linspace(0.5, 2.0, n)]
        mixed = huang[: n // 2] + sampled[: n // 2] + [PrivacyEvent("laplace_l2", 1.0, 0.05, count=10)]
        for label, events in [("full-batch, time-varying σ", huang), ("sampled q = 0.01, time-varying σ", sampled),
                              ("half and half + ℓ2-Laplace", mixed)]:
            t, c = median_ms(lambda: (acc.forget_ledgers(), acc.calibrate_ledger(events, 1.0, 1e-5)), repeat=5)
            s = acc.calibrate_ledger(events, 1.0, 1e-5)
            spent = acc.ledger_epsilon([e.scaled(s) for e in events], 1e-5)
            print(f"  {n:3d} events, {label:34s}: {t:7.2f} ms ({c:7.2f} ms CPU; spends ε = {spent:.4f} of 1)")


def replace_ledgers():
    """Ledgers of many distinct Poisson-subsampled releases with time-varying noise (σ/C from 1 to 4)."""
    return [(150, 0.05), (500, 0.01), (1000, 0.01)]


def replace_one_section() -> None:
    """Issue 22: exact replace-one accounting against dp-accounting's REPLACE_ONE PLD."""
    from dpadmm_lite import accounting as acc
    from dpadmm_lite.privacy import PrivacyEvent

    reference = json.loads(REPLACE_REFERENCE.read_text())
    print(f"\nreplace-one neighbours (issue 22), δ = {REPLACE_DELTA:g}: dp-accounting {reference['dp_accounting_version']} "
          f"REPLACE_ONE reference {REPLACE_REFERENCE.relative_to(ROOT)}")
    print("'as add/remove 2C': the same releases recorded as add/remove with twice the sensitivity (the library before);")
    print("times: median of 7 calls, CPU ms of this process (wall ms in brackets); dp-accounting: one evaluation at its")
    print("default interval 1e-4\n")
    header = (f"{'q':>5} {'σ/C':>4} {'K':>5} | {'ε ours':>9} {'ε dp-acc':>9} {'rel':>9} | {'as a/r 2C':>9} {'over':>6} | "
              f"{'ours ms':>14} {'dp-acc ms':>9}")
    print(header)
    print("-" * len(header))
    rels, cpus = [], []
    for row in reference["grid"]:
        q, scale, K = row["q"], row["noise_over_bound"], row["K"]
        ref = row["epsilon"][str(REPLACE_DELTA)]
        ours = acc.gaussian_epsilon(scale, K, REPLACE_DELTA, q, neighbours="replace_one")
        old = acc.gaussian_epsilon(scale / 2, K, REPLACE_DELTA, q)  # σ/(2C)
        wall, cpu = median_ms(lambda: acc.gaussian_epsilon(scale, K, REPLACE_DELTA, q, neighbours="replace_one"))
        start = time.perf_counter()
        dp_replace_epsilons(scale, q, K, 1e-4)
        dp_ms = 1000 * (time.perf_counter() - start)
        rels.append(ours / ref - 1)
        cpus.append(cpu)
        print(f"{q:5g} {scale:4g} {K:5d} | {ours:9.5g} {ref:9.5g} {ours / ref - 1:+9.2e} | {old:9.4g} {old / ours - 1:+6.0%} | "
              f"{cpu:6.2f} ({wall:6.2f}) {dp_ms:9.0f}", flush=True)
    print(f"\nrelative difference to dp-accounting over the grid: from {min(rels):+.3%} to {max(rels):+.3%} "
          f"(must lie in [-0.2 %, +1 %]); ε evaluation: median {statistics.median(cpus):.2f} ms CPU, worst "
          f"{max(cpus):.2f} ms CPU (target ≤ 10 ms)")
    print("\nledgers of many distinct subsampled releases, time-varying σ/C from 1 to 4 (ledger_epsilon at δ = 1e-6;")
    print("CPU ms, wall ms in brackets): recorded as add/remove with 2C (before) and as replace-one (now)")
    for n, q in replace_ledgers():
        sigmas = np.linspace(1.0, 4.0, n)
        before = [PrivacyEvent("gaussian", 2.0, float(x), sampling_rate=q) for x in sigmas]
        now = [PrivacyEvent("gaussian", 1.0, float(x), sampling_rate=q, neighbours="replace_one") for x in sigmas]
        parts = []
        for label, events in (("before", before), ("now", now)):
            wall, cpu = median_ms(lambda: acc.ledger_epsilon(events, REPLACE_DELTA))
            parts.append(f"{label}: ε = {acc.ledger_epsilon(events, REPLACE_DELTA):.4f} in {cpu:.1f} ms ({wall:.1f})")
        print(f"  {n:4d} releases at q = {q:g}: " + "; ".join(parts), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--make-reference", action="store_true", help="recompute tests/data/pld_reference.json")
    parser.add_argument("--make-replace-reference", action="store_true",
                        help="recompute tests/data/pld_replace_one_reference.json")
    parser.add_argument("--budget", type=float, default=120.0, help="seconds one dp-accounting point may take")
    parser.add_argument("--section", choices=("all", "replace"), default="all", help="print every section or one")
    args = parser.parse_args()
    if args.make_reference:
        make_reference(args.budget)
    elif args.make_replace_reference:
        make_replace_reference(args.budget)
    elif args.section == "replace":
        replace_one_section()
    else:
        main()
        replace_one_section()
