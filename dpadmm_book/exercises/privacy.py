"""Checks for the exercises of the chapter "Differential privacy for optimizers".

Each ``check_*`` takes the student's answer and returns a :class:`~dpadmm_book.exercises.Feedback`:
✓ with what the answer shows, or ✗ with the typical mistake it recognises and a hint — never
raising, never printing the solution. The expected values are computed here, not typed in the
notebook, so the exercise cell does not give the answer away.
"""

from __future__ import annotations

import math

from dpadmm_lite import accounting
from . import Feedback, check

__all__ = ["expected_classic_sigma", "check_classic_sigma", "expected_mean_sensitivity", "check_mean_sensitivity",
           "expected_max_steps", "check_max_steps"]

# ---------------------------------------------------------------------- exercise 1: the classic Gaussian σ
#: Δ, ε, δ of exercise 1.
CLASSIC = (0.1, 0.5, 1e-5)


def expected_classic_sigma() -> float:
    """σ of the classic Gaussian mechanism for Δ = 0.1, ε = 0.5, δ = 1e-5."""
    return accounting.classic_gaussian_sigma(*CLASSIC)


def check_classic_sigma(answer) -> Feedback:
    sens, eps, delta = CLASSIC
    return check(
        "σ of the classic Gaussian mechanism (Δ = 0.1, ε = 0.5, δ = 1e-5)", answer, expected_classic_sigma(),
        rtol=1e-3,
        praise="σ = Δ·√(2 ln(1.25/δ))/ε makes one release (ε, δ)-DP for ε < 1: the noise grows with the "
               "sensitivity and with the privacy asked for (small ε, small δ).",
        mistakes={
            "you left out the sensitivity: that σ fits a query with Δ = 1; the noise must scale with how far one "
            "record moves the answer": lambda e: e / sens,
            "you used ln(1/δ) where the classic formula has ln(1.25/δ)":
                lambda e: sens * math.sqrt(2 * math.log(1 / delta)) / eps,
            "the square root is missing: σ grows like √(2 ln(1.25/δ)), not like 2 ln(1.25/δ)":
                lambda e: sens * 2 * math.log(1.25 / delta) / eps,
            "you multiplied by ε: more privacy (smaller ε) needs *more* noise, so ε divides":
                lambda e: sens * math.sqrt(2 * math.log(1.25 / delta)) * eps,
            "you used log10: the formula's logarithm is the natural one (math.log)":
                lambda e: sens * math.sqrt(2 * math.log10(1.25 / delta)) / eps,
            "that is the exact (analytic) calibration — less noise, and the better choice in practice, but the "
            "exercise asks for the classic formula": lambda e: accounting.calibrate_noise(eps, delta, 1) * sens,
        },
        hint="the classic Gaussian mechanism (Dwork & Roth, Theorem A.1) needs Δ, ε and δ; write it with "
             "math.sqrt and math.log.")


# ---------------------------------------------------------------------- exercise 2: sensitivity of a mean
def expected_mean_sensitivity(n: int = 1000) -> float:
    """ℓ2-sensitivity of the mean of n points of the unit ball when one point is replaced."""
    return 2.0 / n


def check_mean_sensitivity(answer) -> Feedback:
    n = 1000
    return check(
        "ℓ2-sensitivity of the mean of 1000 points in the unit ball (replace one)", answer,
        expected_mean_sensitivity(n), rtol=1e-9,
        praise="replacing one point moves the mean by ‖xⱼ − xⱼ′‖/n, and two points of the unit ball can be "
               "2 apart: Δ = 2/n, the replace-one sensitivity the whole book calibrates with.",
        mistakes={
            "half the expected value: 1/n is the add/remove sensitivity of a sum divided by a fixed n; replacing a "
            "point can move it twice as far (xⱼ and xⱼ′ may point in opposite directions)": lambda e: e / 2,
            "you gave the sensitivity of the *sum* (2): the mean divides it by n": lambda e: e * n,
            "you gave the add/remove sensitivity of the sum (1): the exercise releases the mean, and replaces a "
            "point": lambda e: 1.0,
            "you divided by n − 1: with one point *replaced* the mean still has n points": lambda e: 2.0 / (n - 1),
        },
        hint="write mean(D) − mean(D′) for datasets that differ only in xⱼ versus xⱼ′, then bound "
             "‖xⱼ − xⱼ′‖ for two points of the unit ball.")


# ---------------------------------------------------------------------- exercise 3: steps within a budget
def expected_max_steps(noise_multiplier: float = 10.0, epsilon: float = 1.0, delta: float = 1e-5) -> int:
    """Largest T with ``gaussian_epsilon(noise_multiplier, T, delta) ≤ epsilon`` (q = 1)."""
    return _largest(lambda T: accounting.gaussian_epsilon(noise_multiplier, T, delta) <= epsilon)


def _largest(affordable) -> int:
    """Largest T ≥ 1 with ``affordable(T)`` for a monotone predicate (0 if T = 1 already fails)."""
    if not affordable(1):
        return 0
    lo, hi = 1, 2
    while affordable(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:  # invariant: lo feasible, hi not
        mid = (lo + hi) // 2
        if affordable(mid):
            lo = mid
        else:
            hi = mid
    return lo


def check_max_steps(answer) -> Feedback:
    z, eps, delta = 10.0, 1.0, 1e-5
    basic = _largest(lambda T: T * accounting.gaussian_epsilon(z, 1, delta / T) <= eps)
    rdp = _largest(lambda T: accounting.rdp_gaussian_epsilon(z, T, delta) <= eps)
    mistakes = {
        "one step too many: with that T the whole run already costs more than ε = 1 — the answer is the last T "
        "that still fits": lambda e: e + 1,
        "that is what basic composition allows (T steps of ε₀ each, at δ/T): valid, but it adds the ε of every "
        "step, while the exact composition of Gaussian steps grows only like √T": lambda e: basic,
    }
    if rdp != basic:
        mistakes["that is what the Rényi-DP bound allows (acc.rdp_gaussian_epsilon): valid, but its conversion to "
                 "(ε, δ) over-reports ε; acc.gaussian_epsilon composes Gaussian steps exactly"] = lambda e: rdp
    return check(
        "largest number of full-batch steps with σ/Δ = 10 at (ε, δ) = (1, 1e-5)", answer, expected_max_steps(),
        rtol=0.0,
        praise="composed exactly, T Gaussian steps of multiplier z behave like one step of multiplier z/√T, so a "
               "budget buys several times more steps than adding up the per-step ε suggests.",
        mistakes=mistakes,
        hint="the ε that acc.gaussian_epsilon reports for T steps grows with T: find the last T at which the whole "
             "run still costs ε ≤ 1.")
