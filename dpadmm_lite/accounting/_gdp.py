"""The exact Gaussian (μ-GDP / analytic Gaussian) privacy curve of Balle & Wang (2018)."""

from __future__ import annotations

import math

from scipy import special

from .. import _validate as check


def _log_delta_gdp(eps: float, mu: float) -> float:
    """log δ(ε) of μ-GDP: δ = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Balle & Wang 2018, Thm 8)."""
    la = special.log_ndtr(-eps / mu + mu / 2)
    lb = special.log_ndtr(-eps / mu - mu / 2)
    x = eps + lb - la  # < 0
    if x >= 0:
        return -math.inf
    return la + math.log(-math.expm1(x))


def gaussian_delta(epsilon: float, mu: float) -> float:
    """δ(ε) of μ-GDP, i.e. of one Gaussian release with ``Δ/σ = μ`` (exact)."""
    epsilon = check.nonnegative("epsilon", epsilon)
    mu = check.positive("mu", mu)
    return math.exp(_log_delta_gdp(epsilon, mu))


def gdp_epsilon(mu: float, delta: float) -> float:
    """Exact ε at δ of a μ-GDP mechanism (e.g. ``k`` Gaussian releases, ``μ = √(Σ 1/z_i²)``).

    Solves ``δ(ε) = δ`` for the analytic-Gaussian curve (Balle & Wang 2018) to 1e-12 and
    rounds *up*, so the value returned is never below the true ε.
    """
    mu = check.positive("mu", mu, allow_inf=True)
    delta = check.open_unit("delta", delta)
    return _gdp_epsilon(mu, delta)


def _gdp_epsilon(mu: float, delta: float) -> float:
    if mu == 0:
        return 0.0
    if math.isinf(mu):
        return math.inf
    log_delta = math.log(delta)
    if _log_delta_gdp(0.0, mu) <= log_delta:
        return 0.0
    hi = mu * mu / 2 + mu * math.sqrt(2 * math.log(1 / delta))  # RDP bound: δ(hi) ≤ δ
    while _log_delta_gdp(hi, mu) > log_delta:  # pragma: no cover - guard against rounding
        hi *= 2
    from scipy import optimize  # here, not at the top: a live re-run without it skips its import
    root = optimize.brentq(lambda e: _log_delta_gdp(e, mu) - log_delta, 0.0, hi, xtol=1e-13, rtol=1e-13)
    return root * (1 + 1e-11) + 1e-12  # round up: never report less than the truth


def _gdp_mu_for(epsilon: float, delta: float) -> float:
    """Largest μ with δ_μ(ε) ≤ δ (μ-GDP meeting (ε, δ)), rounded down."""
    log_delta = math.log(delta)
    f = lambda log_mu: _log_delta_gdp(epsilon, math.exp(log_mu)) - log_delta  # increasing
    lo, hi = -1.0, 1.0
    while f(lo) > 0:
        lo -= 2.0
    while f(hi) < 0:
        hi += 2.0
    from scipy import optimize  # here, not at the top: a live re-run without it skips its import
    log_mu = optimize.brentq(f, lo, hi, xtol=1e-14, rtol=1e-14)
    return math.exp(log_mu) * (1 - 1e-11)
