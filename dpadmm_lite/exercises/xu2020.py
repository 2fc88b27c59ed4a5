"""Checks for the exercises of the chapter "Centralized DP-ADMM and DP-AccADMM" (Xu et al. 2020).

Each ``*_data()`` returns the inputs of an exercise; each ``check_*`` takes the student's
answer, prints ✓/✗ (or "not answered yet") and returns a bool, never raising. The expected
values are computed here with the library, so the notebook does not give them away.
"""

from __future__ import annotations

import math

import numpy as np

from .. import datasets, problems
from ..registry import run
from . import Feedback, check

__all__ = ["x_update_data", "expected_x_update", "check_x_update", "expected_sigma_ratio", "check_sigma_ratio",
           "threshold_problem", "THRESHOLD_GRID", "expected_threshold", "check_threshold"]


# ---------------------------------------------------------------------- exercise 1: the x-update
def x_update_data():
    """``problem, rho, eta, gamma`` of exercise 1: a 4-feature fused lasso, one noise-free iteration.

    The feature graph is the path 0 – 1 – 2 – 3, so ``A = [W; I]`` is 7 × 4.
    """
    X, y, _ = datasets.make_classification(50, 4, seed=12)
    W = np.array([[1.0, -1.0, 0, 0], [0, 1.0, -1.0, 0], [0, 0, 1.0, -1.0]])
    problem = problems.graph_guided_fused_lasso(X, y, lam=0.01, W=W)
    rho, eta = 0.5, 2.0
    gamma = eta * rho * problem.norm_AtA + 1.0
    return problem, rho, eta, gamma


def expected_x_update() -> np.ndarray:
    """x₁ of linearized ADMM (Xu et al., Alg. 2 with σ = 0) from x₀ = 0, u₀ = −(1/ρ)(Aᵀ)^†∇f(x₀)."""
    problem, rho, eta, gamma = x_update_data()
    return run("admm_linearized", problem, rho=rho, iterations=1, eta=eta, gamma=gamma).model


def check_x_update(answer) -> Feedback:
    return check("first x-update x₁ of linearized ADMM", answer, expected_x_update(), rtol=1e-8, atol=1e-12)


# ---------------------------------------------------------------------- exercise 2: how σ scales
def expected_sigma_ratio() -> float:
    """σ(9T, 2n) / σ(T, n) under Theorem 1, read off the library (σ ∝ √T / n)."""
    X, y, _ = datasets.make_classification(400, 5, seed=3)
    small = problems.logistic(X[:200], y[:200], lam=1e-3, penalty="l1")
    large = problems.logistic(X, y, lam=1e-3, penalty="l1")
    options = dict(epsilon=0.5, delta=1e-3, rho=1.0, seed=0, calibration="paper")  # Theorem 1's σ, eq. (8)
    base = run("dp_admm", small, iterations=25, **options).noise["sigma"] / small.lipschitz
    scaled = run("dp_admm", large, iterations=225, **options).noise["sigma"] / large.lipschitz
    return scaled / base


def check_sigma_ratio(answer) -> Feedback:
    return check("σ(9T, 2n) / σ(T, n) under Theorem 1", answer, expected_sigma_ratio(), rtol=1e-6)


# ---------------------------------------------------------------------- exercise 3: the threshold ε
#: The ε grid of exercise 3 (log-spaced).
THRESHOLD_GRID = (0.3, 1.0, 3.0, 10.0, 30.0)


def threshold_problem():
    """ℓ1-logistic regression (A = I) on a synthetic set: 3,000 training rows, 20 features."""
    X, y, _ = datasets.make_classification(4000, 20, seed=21)
    X_train, y_train, X_test, y_test = datasets.train_test_split(X, y, test_fraction=0.25, seed=0)
    return problems.logistic(X_train, y_train, lam=1e-4, penalty="l1", X_test=X_test, y_test=y_test)


def expected_threshold(*, rho: float = 0.1, iterations: int = 100, seeds=(0, 1, 2), delta: float = 1e-3) -> float:
    """Smallest ε of :data:`THRESHOLD_GRID` from which DP-AccADMM's final objective (mean over
    seeds) is below DP-ADMM's at that ε and at every larger ε of the grid; ``inf`` if none."""
    problem = threshold_problem()
    better = []
    for epsilon in THRESHOLD_GRID:
        final = {name: np.mean([run(name, problem, epsilon=epsilon, delta=delta, rho=rho, iterations=iterations,
                                    seed=s).objective[-1] for s in seeds])
                 for name in ("dp_admm", "dp_acc_admm")}
        better.append(final["dp_acc_admm"] < final["dp_admm"])
    for i, epsilon in enumerate(THRESHOLD_GRID):
        if all(better[i:]):
            return float(epsilon)
    return math.inf


def check_threshold(answer, expected: float | None = None) -> Feedback:
    """``expected`` may be passed when the notebook has computed it already (it costs 30 runs)."""
    return check("threshold ε above which DP-AccADMM beats DP-ADMM (ℓ1-logistic, synthetic)", answer,
                 expected_threshold() if expected is None else expected, rtol=1e-9)
