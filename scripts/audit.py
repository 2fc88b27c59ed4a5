"""Empirical privacy audit of the library: does any attack prove more ε than the library reports?

Runs :func:`dpadmm_lite.audit.standard_audits` — the Gaussian mechanism and the algorithms of
``dpadmm_lite.audit.STANDARD_AUDITS`` on tiny problems with a canary record, as calibrated and with
every noise draw deliberately halved — and prints a table: for each algorithm its design (canary and
settings), the runs per dataset, the power model's probability of catching halved noise at the
canary's reach (the fraction of the reported privacy loss it can expose), the lower bounds the attack
proves (95 % confidence) with honest and halved noise, the reported ε, and whether halved noise was
caught. Then the private algorithms no standard audit covers (``audit.NOT_AUDITED``), with the reason
and what checks them instead. A report proven wrong at full noise is a privacy bug; with halved noise
it shows that the audit has teeth.

The number of runs per dataset is, by default, what :func:`dpadmm_lite.audit.runs_needed` says the
test needs to catch noise cut to ``--detect`` (70 %) with 90 % probability for a canary that reaches
the whole sensitivity (vectorised: seconds). A smaller shortfall needs many more runs, and a canary of
reach r only sees a cut below r: see "What an audit can and cannot detect" in ``dpadmm_lite.audit``.

    python scripts/audit.py [--runs N] [--detect 0.7] [--epsilon 2] [--delta 1e-3] [--tuning N]

``--tuning N`` first audits ``dl.tune`` (:func:`dpadmm_lite.audit.audit_tuning`, N tunings a side) on what
it releases and on its diagnostics, as calibrated and with halved noise.

Exit status 1 if any report is proven wrong at full noise, 2 if halved noise goes unnoticed for any
audit (the audit lost its teeth).
"""

from __future__ import annotations

import argparse
import sys
import time

from dpadmm_lite import audit


def table(results, epsilon: float, delta: float) -> str:
    """One row per audited algorithm: its canary design, runs per dataset, the power model's probability
    of catching halved noise at the canary's reach, the lower bounds with honest and halved noise, the
    reported ε, and whether halved noise was caught."""
    honest = {r.name: r for r in results if r.noise_factor == 1}
    halved = {r.name: r for r in results if r.noise_factor == 0.5}
    options = {name: (kind, opts) for name, kind, opts in audit.STANDARD_AUDITS}
    header = (f"{'algorithm':<24} {'runs':>7} {'power':>6} {'reach':>6} {'ε ≥ (honest)':>13} "
              f"{'ε ≥ (halved)':>13} {'reported ε':>10}  {'caught?':<8} design")
    rows = [header, "-" * len(header)]
    for name, r in honest.items():
        reach = r.details.get("reach") or 1.0
        kind, opts = options.get(name, ("worst-case pair", {}))
        design = f"{kind}: " + ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                                         for k, v in opts.items()) if opts else kind
        power = audit.detection_power(epsilon, delta, 0.5, r.runs, reach=reach,
                                      sampling_rate=r.details.get("sampling_rate", 1.0))
        w = halved.get(name)
        caught = "—" if w is None else ("yes" if not w.passed else "NO")
        rows.append(f"{name:<24} {r.runs:>7} {power:>6.2f} {reach:>6.2f} {r.epsilon_lower:>13.3f} "
                    f"{(w.epsilon_lower if w else float('nan')):>13.3f} {r.epsilon_reported:>10.3f}  {caught:<8} {design}")
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=None,
                        help="runs per dataset (default: audit.runs_needed for --detect at 90 %% power)")
    parser.add_argument("--detect", type=float, default=0.7,
                        help="the noise cut (fraction of the calibrated noise) the default runs must catch")
    parser.add_argument("--epsilon", type=float, default=2.0)
    parser.add_argument("--delta", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tuning", type=int, default=0, metavar="N",
                        help="also audit dl.tune with N tunings a side (audit.audit_tuning), on its release and on "
                             "its diagnostics")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.tuning:
        for factor in (1.0, 0.5):
            t0 = time.perf_counter()
            a = audit.audit_tuning(args.tuning, epsilon=args.epsilon, delta=args.delta, noise_factor=factor,
                                   seed=args.seed)
            print(f"dl.tune, {a.runs:,} tunings a side, noise x{factor:g}: reported ε = {a.epsilon_reported:.3f}; "
                  f"the release proves ε ≥ {a.released['epsilon']:.3f}, the diagnostics (every run's score) "
                  f"ε ≥ {a.diagnostics['epsilon']:.3f} ({time.perf_counter() - t0:.0f} s)")
    results = audit.standard_audits(epsilon=args.epsilon, delta=args.delta, runs=args.runs, detect=args.detect,
                                    seed=args.seed, verbose=True)
    print()
    print(table(results, args.epsilon, args.delta))
    print("\nNot audited here (and what checks them instead):")
    for name, entry in audit.NOT_AUDITED.items():
        print(f"  {name}: {entry}")
    wrong = [r for r in results if r.noise_factor == 1 and not r.passed]
    caught = [r for r in results if r.noise_factor != 1 and not r.passed]
    missed = [r for r in results if r.noise_factor != 1 and r.passed]
    print(f"\n{len(results)} audits in {time.perf_counter() - start:.1f} s: "
          f"{len(wrong)} report(s) proven wrong as calibrated; weakened noise caught for "
          f"{', '.join(r.name for r in caught) or 'none'}; missed for {', '.join(r.name for r in missed) or 'none'}")
    return 1 if wrong else 2 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
