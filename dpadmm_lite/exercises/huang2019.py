"""Checks for the exercises of the chapter "Distributed DP-ADMM with time-varying noise" (Huang et al. 2019).

Each ``*_data()`` returns the inputs of an exercise; each ``check_*`` takes the student's
answer, prints ✓/✗ (or "not answered yet") and returns a bool, never raising. The expected
values are computed here, with the library, so the notebook does not give them away.
"""

from __future__ import annotations

import math

import numpy as np

from .. import accounting
from . import Feedback, check

__all__ = ["agent_update_data", "expected_agent_update", "check_agent_update", "sigma_data", "expected_sigma",
           "check_sigma", "expected_max_iterations", "check_max_iterations"]


# ---------------------------------------------------------------------- exercise 1: eq. (12a) for all agents
def agent_update_data():
    """``W_tilde, subgrad, G, w, rho, eta`` of exercise 1: five agents in d = 4.

    ``W_tilde`` (5, 4): the noisy local models w̃_i^{k−1}; ``subgrad`` (5, 4): each agent's
    ``ℓ̄'_i(w̃_i^{k−1}) + (λ/n)R'(w̃_i^{k−1})``; ``G`` (5, 4): duals γ_i^{k−1}; ``w`` (4,): the
    aggregator's w^{k−1}; ``rho``: ρ; ``eta`` (5,): the step sizes η_i^k.
    """
    rng = np.random.default_rng(2019)
    W_tilde = np.round(rng.normal(size=(5, 4)), 2)
    subgrad = np.round(rng.normal(scale=0.3, size=(5, 4)), 2)
    G = np.round(rng.normal(scale=0.1, size=(5, 4)), 2)
    w = np.round(rng.normal(size=4), 2)
    eta = np.array([0.5, 1.0, 2.0, 4.0, 8.0])
    return W_tilde, subgrad, G, w, 0.1, eta


def expected_agent_update() -> np.ndarray:
    """Eq. (12a) for every agent: ``(−subgrad + γ + ρw + w̃/η) / (ρ + 1/η)``, row by row."""
    W_tilde, subgrad, G, w, rho, eta = agent_update_data()
    inv = 1.0 / eta[:, None]
    return (-subgrad + G + rho * w + W_tilde * inv) / (rho + inv)


def check_agent_update(answer) -> Feedback:
    return check("agent update (12a) of all five agents", answer, expected_agent_update(), rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------------- exercise 2: σ of eq. (14)
def sigma_data() -> dict:
    """Inputs of exercise 2: three agents of different sizes at one iteration."""
    return {"epsilon": 0.1, "delta": 1e-4, "rho": 0.1, "lipschitz": 1.0, "sizes": np.array([100, 400, 1600]),
            "eta": np.array([0.5, 0.5, 2.0])}


def expected_sigma() -> np.ndarray:
    """σ_{i,k} of Huang et al.'s eq. (14) for the three agents of :func:`sigma_data`."""
    v = sigma_data()
    return np.asarray(accounting.huang2019_sigma(v["epsilon"], v["delta"], lipschitz=v["lipschitz"],
                                                 local_size=v["sizes"], rho=v["rho"], eta=v["eta"]))


def check_sigma(answer) -> Feedback:
    return check("σ_{i,k} of eq. (14) for the three agents", answer, expected_sigma(), rtol=1e-9)


# ---------------------------------------------------------------------- exercise 3: how many iterations?
def expected_max_iterations(epsilon: float = 0.1, delta: float = 1e-5, budget: float = 1.0,
                            limit: int = 100_000) -> int:
    """Largest t with end-to-end ε ≤ ``budget`` (unified accountant at δ) for t releases of eq. (14).

    Every release has the noise multiplier ``σ/Δ = √(2 ln(1.25/δ))/ε`` (the same at every
    iteration), so the answer depends on ε and δ only. Found by bisection on t.
    """
    z = accounting.huang2019_noise_multiplier(epsilon, delta)
    if accounting.gaussian_epsilon(z, 1, delta) > budget:
        return 0
    lo, hi = 1, limit
    while lo < hi:  # invariant: lo is affordable
        mid = (lo + hi + 1) // 2
        if accounting.gaussian_epsilon(z, mid, delta) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


def check_max_iterations(answer) -> Feedback:
    expected = expected_max_iterations()
    if answer is not None and answer is not Ellipsis:
        try:
            if isinstance(answer, float) and not math.isfinite(answer):
                raise TypeError
            answer = int(answer)
        except (TypeError, ValueError):
            pass
    return check("iterations affordable at ε = 0.1 per iteration within an end-to-end ε ≤ 1 (δ = 1e-5)",
                 answer, expected, rtol=0, atol=0.5)
