"""Xu et al. (2020), DP-ADMM: the paper's own noise and ε (Theorem 1)."""

from __future__ import annotations

import math

from .. import _validate as check


def xu2020_sigma(epsilon: float, delta: float, *, iterations: int, n: int, lipschitz: float, mu: float = 0.5) -> float:
    """Noise σ of DP-ADMM, Xu et al. (2020), Theorem 1, eq. (8).

    Parameters
    ----------
    epsilon : float
        ε, > 0 and finite.
    delta : float
        δ, in (0, 1).
    iterations : int
        Number of x-updates T, a whole number ≥ 1.
    n : int
        Number of records, a whole number ≥ 1.
    lipschitz : float
        c = max_i ‖∇f_i‖, > 0 and finite.
    mu : float, default 0.5
        μ, the share of ε spent by the RDP composition, in (0, 1).

    Returns
    -------
    float
        σ.

    Notes
    -----
    ``σ² = c² α T / (2 n² ε μ)`` with ``α = log(1/δ)/((1 − μ)ε) + 1`` and μ ∈ (0, 1).

    Proof (Appendix A): each x-update is a Gaussian release of the mean gradient with
    sensitivity ``Δ = c/n`` (``c = max_i ‖∇f_i‖``), so ``(α, αc²/(2n²σ²))``-RDP; T of them
    give ``β = αTc²/(2n²σ²) = με`` and the classic conversion ``β + log(1/δ)/(α − 1) = ε``
    (eqs. 12–14). ``Δ = c/n`` is the add/remove-one sensitivity of the mean with n fixed;
    for replace-one neighbours it is ``2c/n`` — the unified ledger should record the one the
    chapter adopts.
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit("delta", delta)
    T = check.count("iterations", iterations)
    n = check.count("n", n)
    c = check.positive("lipschitz", lipschitz)
    mu = check.open_unit("mu", mu)
    alpha = math.log(1 / delta) / ((1 - mu) * epsilon) + 1  # (13)
    return math.sqrt(c * c * alpha * T / (2 * n * n * epsilon * mu))  # (8) / (14)


def xu2020_epsilon(sigma: float, delta: float, *, iterations: int, n: int, lipschitz: float) -> float:
    """ε that Xu et al.'s own argument (Appendix A: Gaussian RDP + classic conversion) gives for σ.

    ``min_α αTc²/(2n²σ²) + log(1/δ)/(α − 1)`` over real α > 1 (closed form), i.e. Theorem 1
    read backwards with the best μ.

    Parameters
    ----------
    sigma : float
        σ of the noise, > 0 and finite.
    delta : float
        δ, in (0, 1).
    iterations : int
        Number of x-updates T, a whole number ≥ 1.
    n : int
        Number of records, a whole number ≥ 1.
    lipschitz : float
        c = max_i ‖∇f_i‖, > 0 and finite.

    Returns
    -------
    float
        ε.
    """
    sigma = check.positive("sigma", sigma)
    delta = check.open_unit("delta", delta)
    T = check.count("iterations", iterations)
    n = check.count("n", n)
    c = check.positive("lipschitz", lipschitz)
    rho = T * c * c / (2 * n * n * sigma * sigma)  # RDP slope: ε(α) = ρ α
    L = math.log(1 / delta)
    return rho + 2 * math.sqrt(rho * L)  # at α − 1 = √(L/ρ)
