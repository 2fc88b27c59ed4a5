"""Huang et al. (2019), DP-ADMM over a star: the paper's own noise and ε (Theorems 1 and 2)."""

from __future__ import annotations

import math

import numpy as np

from .. import _validate as check


def huang2019_sigma(epsilon, delta, *, lipschitz, local_size, rho, eta):
    """Per-agent, per-iteration noise of DP-ADMM, Huang et al. (2019), Theorem 1, eq. (14).

    Parameters
    ----------
    epsilon : float
        Per-iteration ε, > 0 and finite (the theorem assumes ε ≤ 1).
    delta : float
        Per-iteration δ, in (0, 1).
    lipschitz : float
        c₁, the bound on the gradient of one record's loss, > 0 and finite.
    local_size : float or array_like of float
        m_i, the number of records of each agent, ≥ 1 and finite.
    rho : float
        ρ, the ADMM penalty, > 0 and finite.
    eta : float or array_like of float
        η_i^k, the step of the approximate update, in (0, ∞].

    Returns
    -------
    float or numpy.ndarray
        σ_{i,k}, broadcast over ``local_size`` and ``eta`` (a float when both are scalars).

    Notes
    -----
    ``σ_{i,k} = 2c₁√(2 ln(1.25/δ)) / (m_i ε (ρ + 1/η_i^k))`` — the classic Gaussian mechanism
    for the ℓ2-sensitivity ``2c₁/(m_i(ρ + 1/η_i^k))`` of the approximate agent update (12a);
    each iteration is then (ε, δ)-DP for ε ∈ (0, 1] (the theorem's assumption).

    Vectorised: ``local_size`` (m_i) and ``eta`` (η_i^k) may be arrays, e.g. ``(N,)`` or
    ``(T, N)``; the result broadcasts.
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit("delta", delta)
    c1 = check.positive("lipschitz", lipschitz)
    rho = check.positive("rho", rho)
    m = check.real_array("local_size", local_size)
    eta = check.real_array("eta", eta)
    if np.any(~np.isfinite(m)) or np.any(m < 1):
        raise ValueError(f"local_size must be whole numbers >= 1, got {local_size!r}")
    if np.any(np.isnan(eta)) or np.any(eta <= 0):
        raise ValueError(f"eta must be in (0, ∞], got {eta!r}")
    sigma = 2 * c1 * math.sqrt(2 * math.log(1.25 / delta)) / (m * epsilon * (rho + 1 / eta))  # (14)
    return float(sigma) if sigma.ndim == 0 else sigma


def huang2019_noise_multiplier(epsilon: float, delta: float) -> float:
    """σ/Δ of eq. (14): ``√(2 ln(1.25/δ))/ε`` — independent of c₁, m_i, ρ and η.

    Parameters
    ----------
    epsilon : float
        Per-iteration ε, > 0 and finite.
    delta : float
        Per-iteration δ, in (0, 1).

    Returns
    -------
    float
        The noise multiplier σ/Δ.
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit("delta", delta)
    return math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def huang2019_total_epsilon(epsilon: float, delta: float, iterations: int) -> float:
    """End-to-end ε̄ of Huang et al. (2019), Theorem 2: ``ε̄ = c₀ √t ε``, by the moments accountant.

    Parameters
    ----------
    epsilon : float
        Per-iteration ε, > 0 and finite.
    delta : float
        δ, in (0, 1), per iteration and end to end.
    iterations : int
        Number of iterations t, a whole number ≥ 1.

    Returns
    -------
    float
        ε̄.

    Notes
    -----
    The paper states ε̄ = c₀√t ε "for some constant c₀" and defers the proof to a supplement
    that is not part of the paper; c₀ is never given. The paper says it follows the moments
    accountant of Abadi et al. (2016) (its ref. [20]), which is what this function computes:
    t releases of the eq.-(14) noise, whose noise multiplier is ``z = √(2 ln(1.25/δ))/ε``
    (whatever c₁, m_i, ρ, η_i^k), have log-moments ``α(λ) = tλ(λ + 1)/(2z²)`` and the tail
    bound ``δ = min_λ exp(α(λ) − λε̄)`` over integer λ ≥ 1 (Abadi et al., Thm 2), i.e.

    ``ε̄ = min_λ [tλ(λ+1)/(2z²) + ln(1/δ)] / λ``.

    Hence ``c₀ = ε̄/(√t ε) ≈ √(ln(1/δ)/ln(1.25/δ)) + √t ε/(4 ln(1.25/δ))``: a constant (≈ 1)
    only while ``√t ε ≪ ln(1/δ)``, together with the theorem's ε ∈ (0, 1]. The same δ is
    used per iteration and end to end, as in the paper's experiments (Sec. VI).
    See :func:`huang2019_c0`.
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit("delta", delta)
    t = check.count("iterations", iterations)
    z = huang2019_noise_multiplier(epsilon, delta)
    L = math.log(1 / delta)
    lam_star = z * math.sqrt(2 * L / t)  # minimiser of the convex continuous relaxation
    lams = np.unique(np.clip([math.floor(lam_star), math.ceil(lam_star)], 1, None))
    values = (t * lams * (lams + 1) / (2 * z * z) + L) / lams
    return float(np.min(values))


def huang2019_c0(epsilon: float, delta: float, iterations: int) -> float:
    """The constant of Huang et al.'s Theorem 2 implied by the moments accountant: ``ε̄/(√t ε)``.

    Parameters
    ----------
    epsilon : float
        Per-iteration ε, > 0 and finite.
    delta : float
        δ, in (0, 1).
    iterations : int
        Number of iterations t, a whole number ≥ 1.

    Returns
    -------
    float
        c₀.
    """
    return huang2019_total_epsilon(epsilon, delta, iterations) / (math.sqrt(iterations) * epsilon)
