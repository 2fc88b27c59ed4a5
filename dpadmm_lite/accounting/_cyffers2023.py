"""Cyffers et al. (2023), private ADMM as a noisy fixed point: the paper's Theorems 2–4."""

from __future__ import annotations

import math

import numpy as np

from .. import _validate as check
from ._gaussian import gaussian_epsilon
from ._shared import _alpha_array, _ret

# Cyffers et al. (2023). Each theorem is proved for "the" γ of the algorithm it covers, and the
# printed algorithms and proofs do not use γ in the same units (see the docstrings): Thm 2's 1/n²
# holds when the per-record prox step is γ/n (App. C.2 normalises the data term by 1/n), Thms 3
# and 4 are proved from the local sensitivity 4λLγ of Alg. 3/4's prox_{γ f_i} (per-record step γ).
# The paper converts Rényi DP to (ε, δ) with ε + ln(1/δ)/(α − 1) (its Sec. 3.3); so do these.

#: Rényi orders for the paper's conversions: α − 1 from 1e-4 to 1e5, 0.46 % apart.
_CYFFERS2023_ORDERS = 1.0 + np.logspace(-4, 5, 4500)
_CYFFERS2023_ORDERS.setflags(write=False)


def _cyffers2023_classic_epsilon(rdp, delta: float) -> float:
    """The paper's RDP → (ε, δ) conversion (Sec. 3.3; Mironov 2017, Prop. 3), minimised over
    :data:`_CYFFERS2023_ORDERS`: ``ε = min_α RDP(α) + ln(1/δ)/(α − 1)``; ``inf`` where no order is valid."""
    eps = np.asarray(rdp, dtype=float) + math.log(1 / delta) / (_CYFFERS2023_ORDERS - 1)
    return float(np.min(eps))


def _cyffers2023_linear_epsilon(slope: float, delta: float) -> float:
    """The same conversion for a linear RDP curve ``slope · α``, in closed form (α − 1 = √(ln(1/δ)/slope))."""
    log_term = math.log(1 / delta)
    return slope + 2 * math.sqrt(slope * log_term)


def cyffers2023_centralized_rdp(alpha, *, iterations: int, lipschitz: float, gamma: float, sigma: float, n: int):
    """Cyffers et al. (2023), Theorem 2 (centralized private ADMM, Alg. 2): ``(α, 8αKL²γ²/(σ²n²))``-RDP.

    Parameters
    ----------
    alpha : float or array_like of float
        Rényi order(s) α, each in (1, ∞].
    iterations : int
        Number of iterations K, a whole number ≥ 1.
    lipschitz : float
        L, the Lipschitz constant of the loss, > 0 and finite.
    gamma : float
        γ, the prox step of the algorithm, > 0 and finite.
    sigma : float
        σ, the standard deviation of the noise, > 0 and finite.
    n : int
        Number of records (users), a whole number ≥ 1.

    Returns
    -------
    float or numpy.ndarray
        The RDP ε(α), a float for a scalar ``alpha``.

    Notes
    -----
    Record-level DP, L-Lipschitz loss, K iterations, noise σ; vectorised over α. The proof
    (App. C.2–C.3, Thm 8) composes K Gaussian releases of the u-update, whose sensitivity
    (25) is ``4λLγ/n`` against noise ``λσ``.

    **Units of γ.** The ``1/n`` of (25) needs ``‖x_i − x_i'‖ ≤ 2Lγ/n``, i.e. a per-record prox
    step ``γ/n`` — what App. C.2 gets by writing the data term as ``(1/n)Σ f`` and what
    :mod:`dpadmm_lite.algorithms.cyffers2023` calls γ. Taken literally, Alg. 2's
    ``prox_{γ f_i}`` (per-record step γ) moves x_i by up to ``2Lγ`` and the bound is n² times
    larger: ``8αKL²γ²/σ²``.
    """
    a = _alpha_array(alpha)
    K = check.count("iterations", iterations)
    L = check.positive("lipschitz", lipschitz)
    g = check.positive("gamma", gamma)
    s = check.positive("sigma", sigma)
    n = check.count("n", n)
    return _ret(8 * a * K * L**2 * g**2 / (s**2 * n**2))


def cyffers2023_centralized_epsilon(delta: float, *, iterations: int, lipschitz: float, gamma: float, sigma: float,
                                    n: int) -> float:
    """Theorem 2 in (ε, δ), with the paper's conversion ``ε + ln(1/δ)/(α − 1)`` (its Sec. 3.3).

    The RDP curve ``cα`` (``c = 8KL²γ²/(σ²n²)``) is linear, so the best order is
    ``α = 1 + √(ln(1/δ)/c)`` and ``ε = c + 2√(c ln(1/δ))``.

    Parameters
    ----------
    delta : float
        Target δ, in (0, 1).
    iterations : int
        Number of iterations K, a whole number ≥ 1.
    lipschitz : float
        L, the Lipschitz constant of the loss, > 0 and finite.
    gamma : float
        γ, the prox step of the algorithm, > 0 and finite.
    sigma : float
        σ, the standard deviation of the noise, > 0 and finite.
    n : int
        Number of records (users), a whole number ≥ 1.

    Returns
    -------
    float
        ε at ``delta``.
    """
    delta = check.open_unit("delta", delta)
    slope = cyffers2023_centralized_rdp(2.0, iterations=iterations, lipschitz=lipschitz, gamma=gamma,
                                        sigma=sigma, n=n) / 2.0  # RDP per unit of α
    return _cyffers2023_linear_epsilon(float(slope), delta)


def cyffers2023_federated_local_rdp(alpha, *, participations: int, lipschitz: float, gamma: float, sigma: float):
    """Cyffers et al. (2023), Theorem 3, local model: ``(α, 8αK_iL²γ²/σ²)``-RDP for user i.

    User-level DP against the server, which sees every update of user i (K_i participations);
    App. C.4, Thm 9 / eq. (27). Here γ is Alg. 3's: ``prox_{γ f_i}``, a per-record step γ (the
    local sensitivity of one update is ``4λLγ``).

    Parameters
    ----------
    alpha : float or array_like of float
        Rényi order(s) α, each in (1, ∞].
    participations : int
        Number of participations K_i of the user, a whole number ≥ 1.
    lipschitz : float
        L, the Lipschitz constant of the loss, > 0 and finite.
    gamma : float
        γ, the prox step of the algorithm, > 0 and finite.
    sigma : float
        σ, the standard deviation of the noise, > 0 and finite.

    Returns
    -------
    float or numpy.ndarray
        The RDP ε(α), a float for a scalar ``alpha``.
    """
    a = _alpha_array(alpha)
    K = check.count("participations", participations)
    L = check.positive("lipschitz", lipschitz)
    g = check.positive("gamma", gamma)
    s = check.positive("sigma", sigma)
    return _ret(8 * a * K * L**2 * g**2 / s**2)


def cyffers2023_federated_local_epsilon(delta: float, *, participations: int, lipschitz: float, gamma: float,
                                        sigma: float) -> float:
    """Theorem 3's local guarantee in (ε, δ), with the paper's conversion (closed form, linear curve).

    Parameters
    ----------
    delta : float
        Target δ, in (0, 1).
    participations : int
        Number of participations K_i of the user, a whole number ≥ 1.
    lipschitz : float
        L, the Lipschitz constant of the loss, > 0 and finite.
    gamma : float
        γ, the prox step of the algorithm, > 0 and finite.
    sigma : float
        σ, the standard deviation of the noise, > 0 and finite.

    Returns
    -------
    float
        ε at ``delta``.
    """
    delta = check.open_unit("delta", delta)
    slope = cyffers2023_federated_local_rdp(2.0, participations=participations, lipschitz=lipschitz,
                                            gamma=gamma, sigma=sigma) / 2.0  # RDP per unit of α
    return _cyffers2023_linear_epsilon(float(slope), delta)


def cyffers2023_federated_central_rdp(alpha, *, iterations: int, lipschitz: float, gamma: float, sigma: float, n: int,
                                      m: int):
    """Cyffers et al. (2023), Theorem 3, central model, as stated: ``(α, 16αKL²γ²/(σ²n²))``-RDP.

    Parameters
    ----------
    alpha : float or array_like of float
        Rényi order(s) α, each in (1, ∞].
    iterations : int
        Number of iterations K, a whole number ≥ 1.
    lipschitz : float
        L, the Lipschitz constant of the loss, > 0 and finite.
    gamma : float
        γ, the prox step of the algorithm, > 0 and finite.
    sigma : float
        σ, the standard deviation of the noise, > 0 and finite.
    n : int
        Number of records (users), a whole number ≥ 1.
    m : int
        Number of users sampled per round, a whole number in [1, n].

    Returns
    -------
    float or numpy.ndarray
        The RDP ε(α) (``inf`` where the theorem makes no claim), a float for a scalar ``alpha``.

    Notes
    -----
    γ is Alg. 3's (per-record step), as in the local bound the proof starts from. The proof
    (App. C.4, Thm 10) divides the local loss ``8αL²γ²/σ²`` by m² ("aggregation of the m
    sampled users"), i.e. treats one round as a Gaussian release with noise multiplier
    ``z = mσ/(4Lγ)``, and amplifies it by subsampling with ``q = m/n`` (Lemma C.1). The
    theorem holds only where the lemma does: ``m < n/5``, ``z ≥ 4`` and
    ``α ≤ (M²z²/2 − log(5z²)) / (M + log(qα) + 1/(2z²))``, ``M = log(1 + 1/(q(α−1)))`` — the
    lemma is stated for unit sensitivity, so its σ is the noise multiplier z. Orders outside
    that range get ``inf`` (no claim).

    Two steps of the proof do not follow (the chapter discusses both): the m users each add
    their own N(0, σ²) noise, so the aggregate's noise is ``σ√m`` and the division is by m, not
    m²; and Lemma C.1's ``2αq²Δ²/σ²`` gives ``32αKL²γ²/(σ²n²)``, twice the stated value.
    """
    a = _alpha_array(alpha)
    K = check.count("iterations", iterations)
    L = check.positive("lipschitz", lipschitz)
    g = check.positive("gamma", gamma)
    s = check.positive("sigma", sigma)
    n = check.count("n", n)
    m = check.count("m", m)
    if m > n:
        raise ValueError(f"m (users sampled per round) must be in [1, n={n}], got {m}")
    q = m / n
    z = m * s / (4 * L * g)  # noise multiplier of the aggregate, as the proof reads it
    with np.errstate(divide="ignore", invalid="ignore"):
        M = np.log1p(1 / (q * (a - 1)))
        denominator = M + np.log(q * a) + 1 / (2 * z * z)
        bound = (M**2 * z**2 / 2 - math.log(5 * z * z)) / denominator
    valid = (q < 0.2) & (z >= 4) & (denominator > 0) & (a <= bound)
    return _ret(np.where(valid, 16 * a * K * L**2 * g**2 / (s**2 * n**2), np.inf))


def cyffers2023_federated_central_epsilon(delta: float, *, iterations: int, lipschitz: float, gamma: float,
                                          sigma: float, n: int, m: int, method: str = "closed form") -> float:
    """Theorem 3's central guarantee in (ε, δ).

    Parameters
    ----------
    delta : float
        Target δ, in (0, 1).
    iterations : int
        Number of iterations K, a whole number ≥ 1.
    lipschitz : float
        L, the Lipschitz constant of the loss, > 0 and finite.
    gamma : float
        γ, the prox step of the algorithm, > 0 and finite.
    sigma : float
        σ, the standard deviation of the noise, > 0 and finite.
    n : int
        Number of records (users), a whole number ≥ 1.
    m : int
        Number of users sampled per round, a whole number in [1, n].
    method : {"closed form", "numerical"}, default "closed form"
        The theorem as stated, or the proof's argument with the exact subsampled-Gaussian RDP.

    Returns
    -------
    float
        ε at ``delta`` (``inf`` if no order satisfies the theorem's conditions).

    Notes
    -----
    ``method="closed form"``: the theorem as stated (:func:`cyffers2023_federated_central_rdp`),
    converted with the paper's ``ε + ln(1/δ)/(α − 1)`` over the orders where it holds
    (``inf`` if none). ``method="numerical"``: what App. C.4 says is done in practice — the
    proof's argument (one Gaussian release per round with noise multiplier ``mσ/(4Lγ)``, users
    Poisson-sampled with ``q = m/n``) with the exact subsampled-Gaussian RDP instead of
    Lemma C.1 (:func:`gaussian_epsilon`). Both keep the proof's m² aggregation gain.
    """
    delta = check.open_unit("delta", delta)
    check.choice("method", method, ("closed form", "numerical"))
    if method == "closed form":
        rdp = cyffers2023_federated_central_rdp(_CYFFERS2023_ORDERS, iterations=iterations, lipschitz=lipschitz,
                                                gamma=gamma, sigma=sigma, n=n, m=m)
        return _cyffers2023_classic_epsilon(rdp, delta)
    K = check.count("iterations", iterations)
    L = check.positive("lipschitz", lipschitz)
    g = check.positive("gamma", gamma)
    s = check.positive("sigma", sigma)
    n = check.count("n", n)
    m = check.count("m", m)
    if m > n:
        raise ValueError(f"m (users sampled per round) must be in [1, n={n}], got {m}")
    return gaussian_epsilon(m * s / (4 * L * g), K, delta, m / n)


def cyffers2023_network_rdp(alpha, *, participations: int, lipschitz: float, gamma: float, sigma: float, n: int):
    """Cyffers et al. (2023), Theorem 4: ``(α, 8αK_iL²γ² ln n/(σ²n))``-network RDP (Alg. 4).

    Parameters
    ----------
    alpha : float or array_like of float
        Rényi order(s) α, each in (1, ∞].
    participations : int
        Number of participations K_i of the user, a whole number ≥ 1.
    lipschitz : float
        L, the Lipschitz constant of the loss, > 0 and finite.
    gamma : float
        γ, the prox step of the algorithm, > 0 and finite.
    sigma : float
        σ, the standard deviation of the noise, > 0 and finite.
    n : int
        Number of users on the complete graph, a whole number ≥ 2.

    Returns
    -------
    float or numpy.ndarray
        The network RDP ε(α) (``inf`` where ``σ ≤ 2Lγ√(α(α − 1))``), a float for a scalar ``alpha``.

    Notes
    -----
    Fully decentralized random walk on the **complete graph** (the only graph the proof
    covers: it needs the walk to reach any user after m steps with the geometric law of
    parameter 1/n), user-level DP against the view of another user; γ is Alg. 4's
    (per-record step). Requires ``σ > 2Lγ√(α(α − 1))`` — orders that violate it get ``inf``.
    """
    a = _alpha_array(alpha)
    K = check.count("participations", participations)
    L = check.positive("lipschitz", lipschitz)
    g = check.positive("gamma", gamma)
    s = check.positive("sigma", sigma)
    n = check.count("n", n, minimum=2)
    valid = s > 2 * L * g * np.sqrt(a * (a - 1))
    return _ret(np.where(valid, 8 * a * K * L**2 * g**2 * math.log(n) / (s**2 * n), np.inf))


def cyffers2023_network_epsilon(delta: float, *, participations: int, lipschitz: float, gamma: float, sigma: float,
                                n: int) -> float:
    """Theorem 4 in (ε, δ): the paper's conversion over the orders where the theorem holds.

    Parameters
    ----------
    delta : float
        Target δ, in (0, 1).
    participations : int
        Number of participations K_i of the user, a whole number ≥ 1.
    lipschitz : float
        L, the Lipschitz constant of the loss, > 0 and finite.
    gamma : float
        γ, the prox step of the algorithm, > 0 and finite.
    sigma : float
        σ, the standard deviation of the noise, > 0 and finite.
    n : int
        Number of users on the complete graph, a whole number ≥ 2.

    Returns
    -------
    float
        ε at ``delta`` (``inf`` if no order satisfies the theorem's condition).
    """
    delta = check.open_unit("delta", delta)
    rdp = cyffers2023_network_rdp(_CYFFERS2023_ORDERS, participations=participations, lipschitz=lipschitz,
                                  gamma=gamma, sigma=sigma, n=n)
    return _cyffers2023_classic_epsilon(rdp, delta)
