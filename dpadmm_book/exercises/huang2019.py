"""Checks for the exercises of the chapter "Distributed DP-ADMM with time-varying noise" (Huang et al. 2019).

Each ``*_data()`` returns the inputs of an exercise; each ``check_*`` takes the student's answer
and returns a :class:`~dpadmm_book.exercises.Feedback`: ✓ with what the answer shows, or ✗ with
the typical mistake it recognises and a hint — never raising, never printing the solution. The
expected values are computed here, with the library, so the notebook does not give them away.
"""

from __future__ import annotations

import math

import numpy as np

from dpadmm_lite import accounting
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


def _agent_update(*, grad_sign=-1.0, dual_sign=1.0, divide=True, step_times=False) -> np.ndarray:
    """Eq. (12a) with one ingredient changed (the typical mistakes of exercise 1)."""
    W_tilde, subgrad, G, w, rho, eta = agent_update_data()
    inv = (eta if step_times else 1.0 / eta)[:, None]
    numerator = grad_sign * subgrad + dual_sign * G + rho * w + W_tilde * inv
    return numerator / (rho + inv) if divide else numerator


def check_agent_update(answer) -> Feedback:
    return check(
        "agent update (12a) of all five agents", answer, expected_agent_update(), rtol=1e-9, atol=1e-12,
        praise="one broadcast expression updates every agent: the step sizes as a column (5, 1) meet the (5, 4) "
               "stacks row by row, and the new local model is a weighted average of the global model and the "
               "agent's own noisy model, moved against its gradient.",
        mistakes={
            "the gradient term has the wrong sign: the agent moves *against* ℓ̄'ᵢ + (λ/n)R'":
                lambda e: _agent_update(grad_sign=1.0),
            "the dual term has the wrong sign: (12a) adds +γᵢᵏ⁻¹": lambda e: _agent_update(dual_sign=-1.0),
            "you stopped at the numerator: the minimiser of the quadratic divides it by its curvature ρ + 1/ηᵢᵏ":
                lambda e: _agent_update(divide=False),
            "you used ηᵢᵏ where its inverse belongs: the proximal term is ‖w − w̃ᵢᵏ⁻¹‖²/(2ηᵢᵏ), so its "
            "weight is 1/ηᵢᵏ": lambda e: _agent_update(step_times=True),
        },
        hint="set the gradient of the approximate augmented Lagrangian (12) to zero: the linear terms give the "
             "numerator, ρ + 1/ηᵢᵏ the denominator; make eta a column so that it broadcasts over the features.")


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
    v = sigma_data()
    delta, rho, m, eta = v["delta"], v["rho"], v["sizes"], v["eta"]
    return check(
        "σᵢ,ₖ of eq. (14) for the three agents", answer, expected_sigma(), rtol=1e-9,
        praise="σᵢ,ₖ is the classic Gaussian mechanism for the sensitivity 2c₁/(mᵢ(ρ + 1/ηᵢᵏ)) of the agent "
               "update: the small agent is the noisiest, yet σ/Δ — and the privacy — is the same for all three.",
        mistakes={
            "half the expected noise: the sensitivity of the agent update is 2c₁/(mᵢ(ρ + 1/ηᵢᵏ)) — replacing one "
            "record moves the mean gradient by up to 2c₁/mᵢ": lambda e: e / 2,
            "you used ln(1/δ): eq. (14) is the classic Gaussian mechanism, with ln(1.25/δ)":
                lambda e: e * np.sqrt(np.log(1 / delta) / np.log(1.25 / delta)),
            "the factor ρ + 1/ηᵢᵏ is missing: the proximal term divides the gradient's influence on wᵢᵏ by it, "
            "which is what bounds the sensitivity": lambda e: e * (rho + 1 / eta),
            "you multiplied by ρ + 1/ηᵢᵏ: it divides the sensitivity (a larger curvature moves the minimiser less)":
                lambda e: e * (rho + 1 / eta) ** 2,
            "you used the total number of records for every agent: the sensitivity of agent i's update depends on "
            "its own mᵢ": lambda e: e * m / m.sum(),
        },
        hint="eq. (14) is σ = Δ·√(2 ln(1.25/δ))/ε with Δ the ℓ2-sensitivity of agent i's update (12a); sizes and "
             "eta are arrays, so the whole computation is one vectorised expression.")


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
    epsilon, delta = 0.1, 1e-5
    paper = 1
    while accounting.huang2019_total_epsilon(epsilon, delta, paper + 1) <= 1.0:
        paper += 1
    return check(
        "iterations affordable at ε = 0.1 per iteration within an end-to-end ε ≤ 1 (δ = 1e-5)", answer, expected,
        rtol=0, atol=0.5,
        praise="every iteration is a Gaussian release with the same noise multiplier √(2 ln(1.25/δ))/ε₀, and the "
               "exact composition of t of them grows like √t — so a budget of ε = 1 pays for far more than "
               "1/ε₀ iterations.",
        mistakes={
            "that is basic composition (t·ε₀ ≤ 1): it adds up the per-iteration ε, while the accountant composes "
            "the Gaussian releases exactly": lambda e: math.floor(1.0 / epsilon + 1e-9),
            "that is the paper's moments-accountant bound ε̄ = c₀√t ε₀ (accounting.huang2019_total_epsilon); the "
            "exercise asks for the unified accountant, accounting.gaussian_epsilon": lambda e: paper,
            "one iteration too many: at that t the end-to-end ε already exceeds 1": lambda e: e + 1,
        },
        hint="every iteration releases with the same noise multiplier z = σ/Δ = √(2 ln(1.25/δ))/ε₀; the unified "
             "accountant's ε of t such releases grows with t — find the last t at which it is still ≤ 1.")
