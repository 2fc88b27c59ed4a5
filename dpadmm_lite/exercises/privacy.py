"""Checks for the exercises of the chapter "Differential privacy for optimizers".

Each ``check_*`` takes the student's answer, prints ✓/✗ (or "not answered yet") and returns a
bool; it never raises. The expected values are computed here, not typed in the notebook, so
the exercise cell does not give the answer away.
"""

from __future__ import annotations

from .. import accounting
from . import Feedback, check


def expected_classic_sigma() -> float:
    """σ of the classic Gaussian mechanism for Δ = 0.1, ε = 0.5, δ = 1e-5."""
    return accounting.classic_gaussian_sigma(0.1, 0.5, 1e-5)


def check_classic_sigma(answer) -> Feedback:
    return check("σ of the classic Gaussian mechanism (Δ = 0.1, ε = 0.5, δ = 1e-5)", answer,
                 expected_classic_sigma(), rtol=1e-3)


def expected_mean_sensitivity(n: int = 1000) -> float:
    """ℓ2-sensitivity of the mean of n points of the unit ball when one point is replaced."""
    return 2.0 / n


def check_mean_sensitivity(answer) -> Feedback:
    return check("ℓ2-sensitivity of the mean of 1000 points in the unit ball (replace one)", answer,
                 expected_mean_sensitivity(1000), rtol=1e-9)


def expected_max_steps(noise_multiplier: float = 10.0, epsilon: float = 1.0, delta: float = 1e-5) -> int:
    """Largest T with ``gaussian_epsilon(noise_multiplier, T, delta) ≤ epsilon`` (q = 1)."""
    lo, hi = 1, 2
    while accounting.gaussian_epsilon(noise_multiplier, hi, delta) <= epsilon:
        lo, hi = hi, 2 * hi
    while hi - lo > 1:  # invariant: lo feasible, hi not
        mid = (lo + hi) // 2
        if accounting.gaussian_epsilon(noise_multiplier, mid, delta) <= epsilon:
            lo = mid
        else:
            hi = mid
    return lo


def check_max_steps(answer) -> Feedback:
    return check("largest number of full-batch steps with σ/Δ = 10 at (ε, δ) = (1, 1e-5)", answer,
                 expected_max_steps(), rtol=0.0)
