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
    """δ(ε) of μ-GDP, i.e. of one Gaussian release with ``Δ/σ = μ`` (exact).

    Parameters
    ----------
    epsilon : float
        ε at which δ is evaluated, in [0, ∞).
    mu : float
        μ = Δ/σ, > 0 and finite.

    Returns
    -------
    float
        δ(ε).
    """
    epsilon = check.nonnegative("epsilon", epsilon)
    mu = check.positive("mu", mu)
    return math.exp(_log_delta_gdp(epsilon, mu))


def gdp_epsilon(mu: float, delta: float) -> float:
    """Exact ε at δ of a μ-GDP mechanism (e.g. ``k`` Gaussian releases, ``μ = √(Σ 1/z_i²)``).

    Solves ``δ(ε) = δ`` for the analytic-Gaussian curve (Balle & Wang 2018) to 1e-12 and
    rounds *up*, so the value returned is never below the true ε.

    Parameters
    ----------
    mu : float
        μ of the mechanism, > 0 (``math.inf`` allowed).
    delta : float
        Target δ, in (0, 1).

    Returns
    -------
    float
        ε at ``delta``, rounded up.
    """
    mu = check.positive("mu", mu, allow_inf=True)
    delta = check.open_unit("delta", delta)
    return _gdp_epsilon(mu, delta)


#: Beyond this μ the exact curve is not evaluated: δ(ε) subtracts terms of size μ²/2 (5e11 at μ = 1e6)
#: whose rounding error reaches the log-ratio it measures, and 10³⁰ releases at z = 1 (μ = 1e15) gave
#: an ε 2e-8 below μ²/2, under the truth. There the RDP bound μ²/2 + μ√(2 log(1/δ)) is reported:
#: sound, and within 1e-5 relative of the exact value (ε > 5e11).
_MU_EXACT_LIMIT = 1e6


def _gdp_epsilon(mu: float, delta: float) -> float:
    if mu == 0:
        return 0.0
    if math.isinf(mu):
        return math.inf
    log_delta = math.log(delta)
    if _log_delta_gdp(0.0, mu) <= log_delta:
        return 0.0
    hi = mu * mu / 2 + mu * math.sqrt(2 * math.log(1 / delta))  # RDP bound: δ(hi) ≤ δ
    if mu > _MU_EXACT_LIMIT:  # the curve's terms cancel beyond float precision: the RDP bound, rounded up
        return float(hi * (1 + 1e-12))
    while _log_delta_gdp(hi, mu) > log_delta:  # pragma: no cover - guard against rounding
        hi *= 2
    root = _brentq(lambda e: _log_delta_gdp(e, mu) - log_delta, 0.0, hi, xtol=1e-13, rtol=1e-13)
    epsilon = root * (1 + 1e-11) + 1e-12  # round up: never report less than the truth
    while _log_delta_gdp(epsilon, mu) > log_delta:  # pragma: no cover - and check it on the curve itself
        epsilon = epsilon * (1 + 1e-11) + 1e-12
    return float(epsilon)  # a Python float, as scipy's brentq gave (glued values print as numbers)


def _gdp_mu_for(epsilon: float, delta: float) -> float:
    """Largest μ with δ_μ(ε) ≤ δ (μ-GDP meeting (ε, δ)), rounded down."""
    log_delta = math.log(delta)
    f = lambda log_mu: _log_delta_gdp(epsilon, math.exp(log_mu)) - log_delta  # increasing
    lo, hi = -1.0, 1.0
    while f(lo) > 0:
        lo -= 2.0
    while f(hi) < 0:
        hi += 2.0
    log_mu = _brentq(f, lo, hi, xtol=1e-14, rtol=1e-14)
    mu = math.exp(log_mu) * (1 - 1e-11)  # round down: never more than (ε, δ) allows
    while _log_delta_gdp(epsilon, mu) > log_delta:  # pragma: no cover - and check it on the curve itself
        mu *= 1 - 1e-11
    return float(mu)


def _brentq(f, a: float, b: float, xtol: float, rtol: float, maxiter: int = 100) -> float:
    """A root of ``f`` in the bracket [a, b] (``f(a)``, ``f(b)`` of opposite signs), to within
    ``xtol + rtol·|x|``: Brent's method (Brent 1973, ch. 4) in the steps of ``scipy.optimize.brentq``,
    so it returns the same float as scipy (tests/test_accounting_gdp.py) without importing
    scipy.optimize, which costs seconds of a live panel's start in the browser. Each step keeps a
    bracket [x, x_blk] of the root: an inverse-interpolation step when it shrinks the bracket fast
    enough, a bisection otherwise."""
    x_pre, x_cur = float(a), float(b)
    f_pre, f_cur = float(f(x_pre)), float(f(x_cur))
    if math.isnan(f_pre) or math.isnan(f_cur):
        raise ValueError(f"f(a) and f(b) must be numbers, got f({a}) = {f_pre}, f({b}) = {f_cur}")
    if f_pre == 0:
        return x_pre
    if f_cur == 0:
        return x_cur
    if math.copysign(1.0, f_pre) == math.copysign(1.0, f_cur):
        raise ValueError(f"f(a) and f(b) must have opposite signs, got f({a}) = {f_pre}, f({b}) = {f_cur}")
    x_blk = f_blk = s_pre = s_cur = 0.0
    for _ in range(maxiter):
        if f_pre != 0 and f_cur != 0 and math.copysign(1.0, f_pre) != math.copysign(1.0, f_cur):
            x_blk, f_blk = x_pre, f_pre  # the root lies between x_cur and x_blk
            s_pre = s_cur = x_cur - x_pre
        if abs(f_blk) < abs(f_cur):  # x_cur: the end with the smaller |f|
            x_pre, x_cur, x_blk = x_cur, x_blk, x_cur
            f_pre, f_cur, f_blk = f_cur, f_blk, f_cur
        tol = (xtol + rtol * abs(x_cur)) / 2
        s_bis = (x_blk - x_cur) / 2
        if f_cur == 0 or abs(s_bis) < tol:
            return x_cur
        if abs(s_pre) > tol and abs(f_cur) < abs(f_pre):
            if x_pre == x_blk:  # secant
                s_try = _over(-f_cur * (x_cur - x_pre), f_cur - f_pre)
            else:  # inverse quadratic interpolation
                d_pre = _over(f_pre - f_cur, x_pre - x_cur)
                d_blk = _over(f_blk - f_cur, x_blk - x_cur)
                s_try = _over(-f_cur * (f_blk * d_blk - f_pre * d_pre), d_blk * d_pre * (f_blk - f_pre))
            if 2 * abs(s_try) < min(abs(s_pre), 3 * abs(s_bis) - tol):  # a short step: take it
                s_pre, s_cur = s_cur, s_try
            else:
                s_pre = s_cur = s_bis
        else:
            s_pre = s_cur = s_bis
        x_pre, f_pre = x_cur, f_cur
        x_cur += s_cur if abs(s_cur) > tol else (tol if s_bis > 0 else -tol)
        f_cur = float(f(x_cur))
        if math.isnan(f_cur):
            raise ValueError(f"f({x_cur}) is NaN: no root can be bracketed")
    raise RuntimeError(f"no root to {xtol} + {rtol}·|x| after {maxiter} steps")  # pragma: no cover


def _over(numerator: float, denominator: float) -> float:
    """``numerator / denominator`` as C's doubles divide (what scipy's brentq computes): NaN or ±∞
    when the denominator is 0, where Python raises (a NaN step is refused, so Brent bisects)."""
    if denominator != 0:
        return numerator / denominator
    if numerator == 0 or math.isnan(numerator):
        return math.nan
    return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)
