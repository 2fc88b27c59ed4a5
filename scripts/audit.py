"""Empirical privacy audit of the library: does any attack prove more ε than the library reports?

Runs :func:`dpadmm_lite.audit.standard_audits` — the Gaussian mechanism and the algorithms of
``dpadmm_lite.audit.STANDARD_AUDITS`` on tiny problems with a canary record, as calibrated and with
every noise draw deliberately halved — and prints, for each, the ε every run reports, the lower bound
the attack proves (95 % confidence) and the canary's reach (the fraction of the reported privacy loss
it can expose). A report proven wrong at full noise is a privacy bug; with halved noise it shows that
the audit has teeth.

The number of runs per dataset is, by default, what :func:`dpadmm_lite.audit.runs_needed` says the
test needs to catch noise cut to ``--detect`` (70 %) with 90 % probability for a canary that reaches
the whole sensitivity (vectorised: seconds). A smaller shortfall needs many more runs, and a canary of
reach r only sees a cut below r: see "What an audit can and cannot detect" in ``dpadmm_lite.audit``.

    python scripts/audit.py [--runs N] [--detect 0.7] [--epsilon 2] [--delta 1e-3]

Exit status 1 if any report is proven wrong at full noise, 2 if halved noise goes unnoticed for any
audit (the audit lost its teeth).
"""

from __future__ import annotations

import argparse
import sys
import time

from dpadmm_lite import audit


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=None,
                        help="runs per dataset (default: audit.runs_needed for --detect at 90 %% power)")
    parser.add_argument("--detect", type=float, default=0.7,
                        help="the noise cut (fraction of the calibrated noise) the default runs must catch")
    parser.add_argument("--epsilon", type=float, default=2.0)
    parser.add_argument("--delta", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    results = audit.standard_audits(epsilon=args.epsilon, delta=args.delta, runs=args.runs, detect=args.detect,
                                    seed=args.seed, verbose=True)
    print()
    for r in results:
        reach = r.details.get("reach")
        if r.noise_factor == 1 and reach is not None:
            print(f"{r.name}: the canary exposes {reach:.2f} of the reported privacy loss (reach)")
    wrong = [r for r in results if r.noise_factor == 1 and not r.passed]
    caught = [r for r in results if r.noise_factor != 1 and not r.passed]
    missed = [r for r in results if r.noise_factor != 1 and r.passed]
    print(f"\n{len(results)} audits in {time.perf_counter() - start:.1f} s: "
          f"{len(wrong)} report(s) proven wrong as calibrated; weakened noise caught for "
          f"{', '.join(r.name for r in caught) or 'none'}; missed for {', '.join(r.name for r in missed) or 'none'}")
    return 1 if wrong else 2 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
