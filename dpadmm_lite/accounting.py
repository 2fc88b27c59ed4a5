"""Privacy accounting: one accountant for every algorithm, and each paper's own guarantee.

The book reports every run's privacy twice: as the paper states it and under the one
accountant of this module, applied to the run's ledger of noisy releases
(:class:`~dpadmm_lite.trace.PrivacyEvent`). The accountant is *sound first* — it never reports
an ε smaller than the truth — and *tight second*:

* **Gaussian releases on the full data** (sampling rate 1) compose exactly: ``k`` releases with
  noise multipliers ``z_i = σ_i/Δ_i`` are together one Gaussian mechanism with
  ``μ = √(Σ 1/z_i²)`` (μ-GDP, Dong, Roth & Su 2022), whose exact (ε, δ) curve is the analytic
  Gaussian mechanism of Balle & Wang (2018):
  ``δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)``. This is the true ε, not a bound.
* **Poisson-subsampled Gaussian releases** go through Rényi DP (Mironov 2017): the RDP of the
  sampled Gaussian mechanism is computed exactly at integer orders (Mironov, Talwar & Zhang
  2019, the binomial expansion of ``A_α``); at fractional orders the same expectation is
  integrated by a trapezoidal rule whose error is ~1e-16 (the integrand is analytic with
  Gaussian tails) and rounded up, with the always-sound convexity bound of
  ``(α − 1)·D_α`` (a log-moment generating function) as the fallback. dp-accounting's
  fractional-order series sums absolute values of the terms and so over-estimates there.
* **ℓ2-Laplace releases** (density ``∝ exp(−ζ‖x‖)``, Zhang & Zhu 2017) are pure
  ``ε₀ = ζΔ``-DP; their RDP is bounded by that of binary randomized response with ε₀, which
  dominates every ε₀-DP mechanism (Kairouz, Oh & Viswanath 2015).
* RDP curves add up over releases (on one fixed grid of orders, vectorised) and are converted
  to (ε, δ) with the tighter conversion of Canonne, Kamath & Steinke (2020) / Balle et al.
  (2020): ``ε = RDP(α) + log((α−1)/α) − (log δ + log α)/(α − 1)``, minimised over α.

Neighbouring relation. Every sensitivity is "how much one record can move the released
quantity" and is taken as given. For sampled events (``sampling_rate < 1``) the amplification
analysis is the one of Poisson subsampling with add/remove-one neighbours (Mironov et al. 2019;
what DP-SGD uses); pass the sensitivity of adding or removing one record.

Ledgers and agents. The accountant composes *all* events of a ledger as if they touched the
same record. When agents hold disjoint data, record the releases of the most exposed agent
only (recording everything is safe, merely pessimistic).

Public surface
--------------
``classic_gaussian_sigma``, ``gaussian_epsilon``, ``calibrate_noise``, ``gaussian_delta``,
``gdp_epsilon``, ``advanced_composition``, ``basic_composition``, ``composition_epsilons``,
``noise_for_budget``, ``gaussian_rdp``, ``sampled_gaussian_rdp``,
``laplace_rdp``, ``rdp_to_epsilon``, ``ledger_rdp``, ``ledger_epsilon``, ``ledger_guarantee``,
``calibrate_ledger``,
and the papers' own statements ``xu2020_*``, ``huang2019_*``, ``cyffers2023_*``,
``liu2022_*``, ``zhang2017_*``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Iterable

import numpy as np
from scipy import optimize, special

from . import _validate as check
from .privacy import PrivacyEvent, PrivacyGuarantee

__all__ = [
    "ORDERS",
    "classic_gaussian_sigma",
    "gaussian_epsilon",
    "gaussian_delta",
    "calibrate_noise",
    "gdp_epsilon",
    "basic_composition",
    "advanced_composition",
    "composition_epsilons",
    "noise_for_budget",
    "gaussian_rdp",
    "sampled_gaussian_rdp",
    "laplace_rdp",
    "rdp_to_epsilon",
    "ledger_rdp",
    "ledger_epsilon",
    "ledger_guarantee",
    "calibrate_ledger",
    "xu2020_sigma",
    "xu2020_epsilon",
    "huang2019_sigma",
    "huang2019_noise_multiplier",
    "huang2019_total_epsilon",
    "huang2019_c0",
    "cyffers2023_centralized_rdp",
    "cyffers2023_centralized_epsilon",
    "cyffers2023_federated_local_rdp",
    "cyffers2023_federated_central_rdp",
    "cyffers2023_federated_central_epsilon",
    "cyffers2023_network_rdp",
    "cyffers2023_network_epsilon",
    "liu2022_vradmm_sigma",
    "liu2022_sadmm_sigma",
    "liu2022_sadmm_conditions",
    "zhang2017_dvp_zeta",
    "zhang2017_pvp_zeta",
    "zhang2017_pvp_sensitivity",
    "zhang2017_total_epsilon",
]

# --------------------------------------------------------------------------------------------
# Rényi orders: a fixed coarse grid (curves of different events add up on it), refined locally
# --------------------------------------------------------------------------------------------

_LADDER = [80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896, 1024]
#: The coarse grid of Rényi orders α: 1.1, 1.25, 1.5, 1.75, every integer 2 … 32, even
#: integers to 64, then a ladder up to 1024. After the best coarse order is found, the
#: accountant evaluates ~40 more orders between its two neighbours (fractional below 11,
#: integers above), so the optimum over all α ∈ (1, 1024] is found to a fraction of a percent.
ORDERS = np.array([1.1, 1.25, 1.5, 1.75] + list(range(2, 33)) + list(range(34, 65, 2)) + _LADDER, dtype=float)
ORDERS.setflags(write=False)
_SMALL = ORDERS[ORDERS <= 64]  # evaluated first
_LARGE = ORDERS[ORDERS > 64]  # evaluated only when the optimum may lie above 64
_SMALL.setflags(write=False)
_LARGE.setflags(write=False)
_MAX_QUADRATURE_POINTS = 40_000


@lru_cache(maxsize=256)
def _int_split(orders_bytes: bytes):
    orders = np.frombuffer(orders_bytes, dtype=float)
    is_int = orders == np.round(orders)
    return is_int, tuple(int(a) for a in orders[is_int])


@lru_cache(maxsize=128)
def _binomial_table(int_orders: tuple[int, ...]):
    """Flattened binomial expansion of A_α for integer orders (ragged rows, one per order)."""
    alphas = np.asarray(int_orders, dtype=np.int64)
    lengths = alphas + 1
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    alpha_rep = np.repeat(alphas, lengths).astype(float)
    i = (np.arange(lengths.sum()) - np.repeat(starts, lengths)).astype(float)
    log_comb = special.gammaln(alpha_rep + 1) - special.gammaln(i + 1) - special.gammaln(alpha_rep - i + 1)
    return alpha_rep, i, i * i - i, log_comb, starts, lengths


def _log_a_integer(q: float, z: float, int_orders: tuple[int, ...]) -> np.ndarray:
    """log A_α of the Poisson-subsampled Gaussian at integer α (Mironov, Talwar & Zhang 2019).

    ``A_α = Σ_{i=0}^{α} C(α, i) (1−q)^{α−i} q^i exp((i² − i)/(2z²))``, evaluated as one
    segmented log-sum-exp over all orders at once (no Python loop).
    """
    alpha_rep, i, i2mi, log_comb, starts, lengths = _binomial_table(int_orders)
    terms = log_comb + i * math.log(q) + (alpha_rep - i) * math.log1p(-q) + i2mi / (2.0 * z * z)
    peak = np.maximum.reduceat(terms, starts)
    total = np.add.reduceat(np.exp(terms - np.repeat(peak, lengths)), starts)
    return np.maximum(peak + np.log(total), 0.0)  # A_α ≥ 1; rounding never lowers the bound


def _log_a_fractional(q: float, z: float, alphas: np.ndarray) -> np.ndarray:
    """log A_α of the Poisson-subsampled Gaussian at fractional α, by trapezoidal quadrature.

    ``A_α = E_{x~N(0,z²)}[(1 − q + q·exp((2x − 1)/(2z²)))^α]`` (Mironov et al. 2019, Sec. 3.3).
    The integrand is analytic in a strip of half-width ``min(πz², ∞)`` around the real axis and
    has Gaussian tails, so the trapezoidal rule with step ``min(z/2, z²/2)`` over
    ``[−14z − 1, α + 14z + 1]`` is accurate to ~1e-16 relative (error ∝ exp(−2π·width/step)).
    A relative margin of 1e-9 is added on top. When the grid would be too large (z tiny,
    where fractional orders do not matter) the convexity bound of :func:`_log_a_interpolated`
    is used instead; both are upper bounds up to floating-point rounding.
    """
    step = min(z / 2, z * z / 2)
    lo, hi = -14 * z - 1, float(np.max(alphas)) + 14 * z + 1
    n_points = int((hi - lo) / step) + 1
    if n_points * len(alphas) > _MAX_QUADRATURE_POINTS * 4 or n_points > _MAX_QUADRATURE_POINTS:
        return _log_a_interpolated(q, z, alphas)
    x = lo + step * np.arange(n_points)
    log_ratio = np.logaddexp(math.log1p(-q), math.log(q) + (2 * x - 1) / (2 * z * z))  # log μ/μ₀
    log_phi = -x * x / (2 * z * z) - math.log(z * math.sqrt(2 * math.pi))
    terms = alphas[:, None] * log_ratio[None, :] + log_phi[None, :]
    peak = terms.max(axis=1)
    log_a = peak + np.log(np.exp(terms - peak[:, None]).sum(axis=1)) + math.log(step)
    return np.maximum(log_a, 0.0) * (1 + 1e-9) + 1e-15


def _log_a_interpolated(q: float, z: float, alphas: np.ndarray) -> np.ndarray:
    """Sound bound from the convexity of α ↦ log A_α (a log-moment generating function):
    ``log A_α ≤ (k + 1 − α) log A_k + (α − k) log A_{k+1}`` for k = ⌊α⌋ (``log A_1 = 0``)."""
    k = np.floor(alphas).astype(int)
    needed = tuple(sorted(set((k[k >= 2]).tolist()) | set((k + 1).tolist())))
    table = dict(zip(needed, _log_a_integer(q, z, needed)))
    table[1] = 0.0
    lo = np.array([table[int(j)] for j in k])
    hi = np.array([table[int(j) + 1] for j in k])
    t = alphas - k
    return (1 - t) * lo + t * hi


def _sampled_gaussian_rdp(z: float, q: float, orders: np.ndarray) -> np.ndarray:
    """RDP of one Poisson-subsampled Gaussian release at ``orders`` (no argument checks)."""
    if math.isinf(z):
        return np.zeros_like(orders)
    if q == 1.0:
        return orders / (2.0 * z * z)
    is_int, int_tuple = _int_split(np.ascontiguousarray(orders, dtype=float).tobytes())
    log_a = np.empty_like(orders)
    if np.any(is_int):
        log_a[is_int] = _log_a_integer(q, z, int_tuple)
    if np.any(~is_int):
        log_a[~is_int] = _log_a_fractional(q, z, orders[~is_int])
    return log_a / (orders - 1)


def _laplace_rdp(e0: float, q: float, orders: np.ndarray) -> np.ndarray:
    if q < 1:
        e0 = math.log1p(q * math.expm1(e0))
    rdp = (np.logaddexp(orders * e0, (1 - orders) * e0) - np.logaddexp(0.0, e0)) / (orders - 1)
    return np.minimum(np.maximum(rdp, 0.0), e0)


@lru_cache(maxsize=None)
def _refined_orders(best: int) -> np.ndarray:
    """Orders strictly between the coarse neighbours of ORDERS[best] (cached, read-only):
    40 fractional ones below 11 (cheap quadrature), ~10 integers above (binomial sums)."""
    lo = ORDERS[best - 1] if best > 0 else 1.0
    hi = ORDERS[best + 1] if best + 1 < len(ORDERS) else 2 * ORDERS[best]
    if hi <= 12:
        fine = np.linspace(lo, hi, 42)[1:-1]
        fine = np.where(fine >= 11, np.round(fine), fine)
    else:
        fine = np.round(np.linspace(lo, hi, 12)[1:-1])
    fine = np.unique(fine[fine > 1])
    fine = fine[~np.isin(fine, ORDERS)]
    fine.setflags(write=False)
    return fine


# --------------------------------------------------------------------------------------------
# RDP curves of single releases (public, checked)
# --------------------------------------------------------------------------------------------


def gaussian_rdp(noise_multiplier: float, orders=None) -> np.ndarray:
    """RDP of one Gaussian release with noise multiplier ``z = σ/Δ``: ``α / (2z²)`` (Mironov 2017)."""
    z = check.positive("noise_multiplier", noise_multiplier, allow_inf=True)
    a = ORDERS if orders is None else _orders(orders)
    return a / (2.0 * z * z)


def sampled_gaussian_rdp(noise_multiplier: float, sampling_rate: float, orders=None) -> np.ndarray:
    """RDP of one Poisson-subsampled Gaussian release (add/remove-one neighbours).

    Exact at integer orders (Mironov, Talwar & Zhang 2019: ``A_α`` as a binomial sum,
    ``D_α = log A_α/(α − 1)``); at fractional orders ``A_α`` is the same expectation computed by
    a quadrature accurate to ~1e-16 and rounded up (see ``_log_a_fractional``), falling back to
    the sound convexity bound ``log A_α ≤ (k+1−α) log A_k + (α−k) log A_{k+1}`` when z is tiny.

    Parameters
    ----------
    noise_multiplier
        ``z = σ/Δ`` (``math.inf`` gives zero).
    sampling_rate
        Poisson sampling probability ``q ∈ (0, 1]``; ``q = 1`` gives ``α/(2z²)``.
    orders
        Rényi orders (> 1); default :data:`ORDERS`.
    """
    z = check.positive("noise_multiplier", noise_multiplier, allow_inf=True)
    q = check.half_open_unit("sampling_rate", sampling_rate)
    a = ORDERS if orders is None else _orders(orders)
    return _sampled_gaussian_rdp(z, q, a)


def laplace_rdp(epsilon0: float, orders=None, *, sampling_rate: float = 1.0) -> np.ndarray:
    """RDP bound of one pure ``ε₀``-DP release (e.g. ℓ2-Laplace noise with ``ε₀ = ζΔ``).

    Every ε₀-DP mechanism is a post-processing of binary randomized response with ε₀
    (Kairouz, Oh & Viswanath 2015), so its Rényi divergence is at most
    ``D_α = log[(e^{αε₀} + e^{(1−α)ε₀}) / (1 + e^{ε₀})] / (α − 1)`` (≤ ε₀ and ≤ αε₀²/2).
    With Poisson sampling at rate q, ε₀ is first amplified to ``log(1 + q(e^{ε₀} − 1))``.
    """
    e0 = check.positive("epsilon0", epsilon0)
    q = check.half_open_unit("sampling_rate", sampling_rate)
    a = ORDERS if orders is None else _orders(orders)
    return _laplace_rdp(e0, q, a)


def _orders(orders) -> np.ndarray:
    a = np.atleast_1d(np.asarray(orders, dtype=float))
    if a.ndim != 1 or a.size == 0 or not np.all(np.isfinite(a)) or np.any(a <= 1):
        raise ValueError(f"orders must be a non-empty 1-D array of Rényi orders in (1, ∞), got {orders!r}")
    return a


# --------------------------------------------------------------------------------------------
# RDP → (ε, δ)
# --------------------------------------------------------------------------------------------


def rdp_to_epsilon(orders, rdp, delta: float) -> float:
    """Smallest ε over the orders such that the RDP curve implies (ε, δ)-DP.

    Uses the conversion of Canonne, Kamath & Steinke (2020, Prop. 12) / Balle et al. (2020,
    Thm 21): ``ε = D_α + log((α−1)/α) − (log δ + log α)/(α − 1)``, which is never larger than
    the classical ``D_α + log(1/δ)/(α − 1)`` (Mironov 2017, Prop. 3). Orders where
    ``δ ≥ √(1 − e^{−D_α})`` give ε = 0 (total-variation bound, as in dp-accounting).
    """
    delta = check.open_unit("delta", delta)
    a = _orders(orders)
    r = np.asarray(rdp, dtype=float)
    if r.shape != a.shape:
        raise ValueError(f"rdp must have one value per order ({a.shape}), got shape {r.shape}")
    return float(max(0.0, np.min(_eps_per_order(a, r, delta))))


def _eps_per_order(a: np.ndarray, r: np.ndarray, delta: float) -> np.ndarray:
    r = np.maximum(r, 0.0)
    with np.errstate(invalid="ignore", over="ignore"):
        eps = r + np.log1p(-1.0 / a) - (math.log(delta) + np.log(a)) / (a - 1)
        eps = np.where(np.isnan(eps), np.inf, eps)
        tv_zero = delta * delta + np.expm1(-r) > 0  # δ ≥ √(1 − e^{−KL}) ⇒ (0, δ)-DP
    return np.maximum(np.where(tv_zero, 0.0, eps), 0.0)


def _rdp_to_epsilon(a: np.ndarray, r: np.ndarray, delta: float) -> float:
    return float(np.min(_eps_per_order(a, r, delta)))


def _curve_epsilon(rdp_of, delta: float, *, refine: bool = True, with_orders: bool = False):
    """ε at δ of an RDP curve given as a function of the orders.

    Orders ≤ 64 first; the ladder above 64 only when the best small order is ≥ 48 (the
    conversion is unimodal in α in practice; skipping orders can only cost tightness, never
    soundness); then ~40 orders between the neighbours of the best one. ``with_orders`` also
    returns the orders around the optimum (for calibration).
    """
    eps_small = _eps_per_order(_SMALL, np.asarray(rdp_of(_SMALL), dtype=float), delta)
    if _SMALL[int(np.argmin(eps_small))] >= 48:
        eps_large = _eps_per_order(_LARGE, np.asarray(rdp_of(_LARGE), dtype=float), delta)
        eps = np.concatenate([eps_small, eps_large])
    else:
        eps = eps_small
    best = int(np.argmin(eps))
    value = float(eps[best])
    fine = _refined_orders(best) if refine else np.empty(0)
    if fine.size:
        value = min(value, float(np.min(_eps_per_order(fine, np.asarray(rdp_of(fine), dtype=float), delta))))
    if with_orders:
        around = np.union1d(ORDERS[max(best - 1, 0): best + 2], fine)
        return value, around
    return value


class _Composition:
    """A ledger reduced to groups whose RDP curves can be evaluated at any orders."""

    def __init__(self):
        self.full_inv_z2 = 0.0  # Σ count/z² over unsampled Gaussian releases
        self.sampled: dict[tuple[float, float], int] = {}
        self.laplace: dict[tuple[float, float], int] = {}

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        total = orders * self.full_inv_z2 / 2.0
        for (z, q), c in self.sampled.items():
            total = total + c * _sampled_gaussian_rdp(z, q, orders)
        for (e0, q), c in self.laplace.items():
            total = total + c * _laplace_rdp(e0, q, orders)
        return total

    def epsilon(self, delta: float, *, refine: bool = True, with_orders: bool = False):
        """min over the coarse grid, then over ~40 orders around the coarse optimum."""
        return _curve_epsilon(self.rdp, delta, refine=refine, with_orders=with_orders)


# --------------------------------------------------------------------------------------------
# The exact Gaussian (μ-GDP / analytic Gaussian) curve
# --------------------------------------------------------------------------------------------


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
    log_mu = optimize.brentq(f, lo, hi, xtol=1e-14, rtol=1e-14)
    return math.exp(log_mu) * (1 - 1e-11)


# --------------------------------------------------------------------------------------------
# Gaussian mechanism: ε of T (subsampled) releases, and calibration
# --------------------------------------------------------------------------------------------


def classic_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """The classic Gaussian mechanism: ``σ = Δ √(2 ln(1.25/δ)) / ε`` gives (ε, δ)-DP.

    Dwork & Roth (2014), Thm A.1 — proved for ``ε < 1``; for ε ≥ 1 the formula is still
    returned (the papers use it that way) but it is *not* a guarantee: use
    :func:`calibrate_noise` (exact) instead.
    """
    sensitivity = check.positive("sensitivity", sensitivity)
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit("delta", delta)
    return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def gaussian_epsilon(noise_multiplier: float, steps: int, delta: float, sampling_rate: float = 1.0) -> float:
    """End-to-end ε of ``steps`` releases of the (Poisson-subsampled) Gaussian mechanism.

    Parameters
    ----------
    noise_multiplier
        ``z = σ/Δ`` (σ the noise standard deviation, Δ the ℓ2-sensitivity); ``math.inf`` → 0.
    steps
        Number of releases T ≥ 1 (composed adaptively).
    delta
        Target δ ∈ (0, 1).
    sampling_rate
        Poisson sampling probability q ∈ (0, 1] of each record in each release.

    Returns
    -------
    float
        For ``q = 1`` the exact ε (μ-GDP with ``μ = √T/z``, analytic Gaussian curve). For
        ``q < 1`` the RDP bound (exact integer orders, sound fractional orders, tight
        conversion), and never more than the ``q = 1`` value.

    Examples
    --------
    >>> round(gaussian_epsilon(1.0, 1, 1e-5), 4)
    4.3772
    """
    z = check.positive("noise_multiplier", noise_multiplier, allow_inf=True)
    steps = check.count("steps", steps)
    delta = check.open_unit("delta", delta)
    q = check.half_open_unit("sampling_rate", sampling_rate)
    return _gaussian_epsilon(z, steps, delta, q)


def _gaussian_epsilon(z: float, steps: int, delta: float, q: float, *, refine: bool = True, full: bool = True) -> float:
    """ε of T sampled-Gaussian releases; ``full=False`` skips the (q = 1) exact-GDP candidate."""
    if math.isinf(z):
        return 0.0
    if q == 1.0:
        return _gdp_epsilon(math.sqrt(steps) / z, delta)
    comp = _Composition()
    comp.sampled[(z, q)] = steps
    eps = comp.epsilon(delta, refine=refine)
    return min(_gdp_epsilon(math.sqrt(steps) / z, delta), eps) if full else eps


def calibrate_noise(epsilon: float, delta: float, steps: int, sampling_rate: float = 1.0) -> float:
    """Smallest noise multiplier ``z = σ/Δ`` whose ``steps`` releases are (ε, δ)-DP.

    For ``q = 1`` solved in closed form through the exact Gaussian curve (``z = √T/μ`` with
    ``δ_μ(ε) = δ``); otherwise a monotone root search on ``log z`` of :func:`gaussian_epsilon`.
    The result always satisfies ``gaussian_epsilon(z, steps, delta, q) ≤ epsilon`` (checked).
    ``epsilon = math.inf`` returns 0 (no noise).

    Examples
    --------
    >>> z = calibrate_noise(1.0, 1e-5, 100)
    >>> gaussian_epsilon(z, 100, 1e-5) <= 1.0
    True
    """
    epsilon = check.positive("epsilon", epsilon, allow_inf=True)
    delta = check.open_unit("delta", delta)
    steps = check.count("steps", steps)
    q = check.half_open_unit("sampling_rate", sampling_rate)
    if math.isinf(epsilon):
        return 0.0
    z_full = math.sqrt(steps) / _gdp_mu_for(epsilon, delta)  # exact answer for q = 1
    if q == 1.0:
        return _round_up(z_full, steps, delta, q, epsilon)
    # Below z_full the exact q = 1 candidate exceeds ε, so only the RDP bound can decide.
    comp = _Composition()

    def rdp_eps(log_z: float, orders=None, refine=False):
        comp.sampled = {(math.exp(log_z), q): steps}
        if orders is None:
            return comp.epsilon(delta, refine=refine, with_orders=refine)
        return float(np.min(_eps_per_order(orders, comp.rdp(orders), delta)))

    log_hi = math.log(z_full) + 1e-9
    if rdp_eps(log_hi, refine=True)[0] > epsilon:  # RDP never beats the exact q = 1 value here
        return _round_up(z_full, steps, delta, q, epsilon)
    # 1) coarse orders (cheap): the root is feasible, since refining orders only lowers ε
    f = _memo(lambda lz: rdp_eps(lz) - epsilon)
    if f(log_hi) > 0:  # only refined orders get below ε at z_full: search from there
        log_c = log_hi
    else:
        bracket = _step_down_until_infeasible(f, log_hi, 1.0)
        if bracket is None:  # pragma: no cover - astronomically small noise suffices
            return _round_up(math.exp(log_hi - 60), steps, delta, q, epsilon, fallback=z_full)
        lo, hi = bracket
        log_c = min(optimize.brentq(f, lo, hi, xtol=2e-3) + 2e-3, hi)  # step to the feasible side
        while f(log_c) > 0:  # pragma: no cover - brentq's tolerance is 2e-3 at most
            log_c = min(log_c + 2e-3, hi)
    # 2) the orders around the optimum at log_c (fixed set), in a narrow bracket below log_c
    _, around = rdp_eps(log_c, refine=True)
    g = _memo(lambda lz: rdp_eps(lz, around) - epsilon)
    log_z = log_c
    if g(log_c) <= 0:
        bracket = _step_down_until_infeasible(g, log_c, 0.01)
        if bracket is not None:
            log_z = optimize.brentq(g, *bracket, xtol=1e-12, rtol=1e-13)
    return _round_up(math.exp(log_z), steps, delta, q, epsilon, fallback=math.exp(log_c))


def _memo(f):
    cache = {}

    def wrapped(x):
        if x not in cache:
            cache[x] = f(x)
        return cache[x]

    return wrapped


def _step_down_until_infeasible(f, hi: float, step: float):
    """A bracket ``(lo, hi')`` with ``f(lo) > 0 ≥ f(hi')`` below ``hi``, or None within 60 nats."""
    lo = hi - step
    while not f(lo) > 0:
        if lo < hi - 60:
            return None
        hi, lo = lo, lo - 2 * step
        step *= 2
    return lo, hi


def _round_up(z: float, steps: int, delta: float, q: float, epsilon: float, fallback: float | None = None) -> float:
    """Nudge ``z`` up until the guarantee provably holds (never return an infeasible z)."""
    for _ in range(40):
        if _gaussian_epsilon(z, steps, delta, q) <= epsilon:
            return z
        z *= 1 + 1e-9
    if fallback is not None and _gaussian_epsilon(fallback, steps, delta, q) <= epsilon:
        return fallback
    raise RuntimeError("calibrate_noise did not converge")  # pragma: no cover


# --------------------------------------------------------------------------------------------
# Composition of per-step (ε, δ) guarantees
# --------------------------------------------------------------------------------------------


def basic_composition(epsilon: float, delta: float, k: int) -> tuple[float, float]:
    """k-fold composition of (ε, δ)-DP mechanisms: ``(kε, kδ)`` (Dwork & Roth 2014, Thm 3.16)."""
    epsilon = check.positive("epsilon", epsilon)
    delta = check.nonnegative("delta", delta)
    k = check.count("k", k)
    return k * epsilon, min(1.0, k * delta)


def advanced_composition(epsilon: float, delta: float, k: int, delta_prime: float) -> tuple[float, float]:
    """Advanced composition (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Thm 3.20).

    k adaptive (ε, δ)-DP mechanisms are together
    ``(ε√(2k ln(1/δ')) + kε(e^ε − 1), kδ + δ')``-DP for any ``δ' ∈ (0, 1)``.

    Returns
    -------
    (epsilon_total, delta_total)
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.nonnegative("delta", delta)
    k = check.count("k", k)
    delta_prime = check.open_unit("delta_prime", delta_prime)
    eps_total = epsilon * math.sqrt(2 * k * math.log(1 / delta_prime)) + k * epsilon * math.expm1(epsilon)
    return eps_total, min(1.0, k * delta + delta_prime)


def composition_epsilons(noise_multiplier: float, steps: int, delta: float, sampling_rate: float = 1.0) -> dict[str, float]:
    """ε after ``steps`` Gaussian releases, at the same total δ, under three analyses.

    * ``"basic"`` — each release is (ε₀, δ/T)-DP (ε₀ exact for one release), and
      :func:`basic_composition` adds them up: ``T ε₀``;
    * ``"advanced"`` — each release is (ε₀, δ/(2T))-DP and :func:`advanced_composition` with
      δ' = δ/2;
    * ``"unified"`` — :func:`gaussian_epsilon` (exact Gaussian composition for q = 1, RDP for
      q < 1).

    The per-release ε₀ is the exact one in both classical rows, so the differences are due to
    the composition theorem alone.
    """
    z = check.positive("noise_multiplier", noise_multiplier)
    T = check.count("steps", steps)
    delta = check.open_unit("delta", delta)
    q = check.half_open_unit("sampling_rate", sampling_rate)
    eps_basic = T * _gaussian_epsilon(z, 1, delta / T, q)
    eps0 = _gaussian_epsilon(z, 1, delta / (2 * T), q)
    eps_adv = eps0 * math.sqrt(2 * T * math.log(2 / delta)) + T * eps0 * math.expm1(eps0) if eps0 > 0 else 0.0
    return {"basic": eps_basic, "advanced": eps_adv, "unified": _gaussian_epsilon(z, T, delta, q)}


def noise_for_budget(epsilon: float, delta: float, steps: int, sampling_rate: float = 1.0) -> dict[str, float]:
    """Noise multiplier σ/Δ that T releases need to be (ε, δ)-DP together, per analysis.

    * ``"classic + basic"`` — split the budget evenly, (ε/T, δ/T) per release, and use the
      classic formula ``√(2 ln(1.25 T/δ)) T/ε`` (ignores subsampling; a guarantee only when
      ε/T < 1);
    * ``"exact + basic"`` — the same split, with the exact per-release calibration;
    * ``"exact + advanced"`` — per-release (ε₀, δ/(2T)) with ε₀ solving
      ``advanced_composition(ε₀, δ/(2T), T, δ/2) = ε``;
    * ``"unified"`` — :func:`calibrate_noise` over all T releases.
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit("delta", delta)
    T = check.count("steps", steps)
    q = check.half_open_unit("sampling_rate", sampling_rate)
    classic = math.sqrt(2 * math.log(1.25 * T / delta)) * T / epsilon
    exact_basic = calibrate_noise(epsilon / T, delta / T, 1, q)
    d0 = delta / (2 * T)
    adv = lambda e0: e0 * math.sqrt(2 * T * math.log(2 / delta)) + T * e0 * math.expm1(e0) - epsilon
    eps0 = optimize.brentq(adv, 0.0, max(epsilon, 1.0), xtol=1e-14)
    exact_adv = calibrate_noise(eps0, d0, 1, q)
    return {"classic + basic": classic, "exact + basic": exact_basic, "exact + advanced": exact_adv,
            "unified": calibrate_noise(epsilon, delta, T, q)}


# --------------------------------------------------------------------------------------------
# The ledger
# --------------------------------------------------------------------------------------------


def _check_events(events) -> list[PrivacyEvent]:
    events = list(events)
    for e in events:
        if not isinstance(e, PrivacyEvent):
            raise ValueError(f"events must be PrivacyEvent records, got {type(e).__name__}")
    return events


def _composition(events: list[PrivacyEvent]) -> _Composition:
    comp = _Composition()
    for e in events:
        if e.mechanism == "gaussian":
            z = e.noise / e.sensitivity
            if e.sampling_rate == 1.0:
                comp.full_inv_z2 += e.count / (z * z)
            else:
                key = (z, e.sampling_rate)
                comp.sampled[key] = comp.sampled.get(key, 0) + e.count
        else:  # laplace_l2: pure ε₀ = ζΔ per release
            key = (e.noise * e.sensitivity, e.sampling_rate)
            comp.laplace[key] = comp.laplace.get(key, 0) + e.count
    return comp


def ledger_rdp(events: Iterable[PrivacyEvent], orders=None) -> np.ndarray:
    """Composed RDP curve of a ledger (sum over events × counts), on :data:`ORDERS` by default."""
    a = ORDERS if orders is None else _orders(orders)
    return _composition(_check_events(events)).rdp(a)


def _ledger(events, delta) -> tuple[float, str]:
    events = _check_events(events)
    delta = check.open_unit("delta", delta)
    if not events:
        return math.inf, "no noisy release recorded: nothing is guaranteed"
    candidates = [(_composition(events).epsilon(delta), "RDP composition")]
    if all(e.mechanism == "gaussian" and e.sampling_rate == 1.0 for e in events):
        mu = math.sqrt(sum(e.count * (e.sensitivity / e.noise) ** 2 for e in events))
        candidates.append((_gdp_epsilon(mu, delta), f"exact Gaussian composition (μ-GDP, μ = {mu:.4g})"))
    if all(e.mechanism == "laplace_l2" for e in events):
        pure = sum(
            e.count * (e.noise * e.sensitivity if e.sampling_rate == 1.0
                       else math.log1p(e.sampling_rate * math.expm1(e.noise * e.sensitivity)))
            for e in events
        )
        candidates.append((pure, "pure-DP basic composition"))
    eps, how = min(candidates, key=lambda c: c[0])
    n = sum(e.count for e in events)
    return eps, f"{n} noisy releases in {len(events)} ledger entries; {how}"


def ledger_epsilon(events: Iterable[PrivacyEvent], delta: float) -> float:
    """End-to-end ε at δ of every release in ``events``, under the unified accountant.

    The smallest of several *sound* upper bounds: the composed RDP curve (always); the exact
    μ-GDP value when every event is an unsampled Gaussian (then it is the true ε); plain
    summation when every event is pure DP (ℓ2-Laplace). An empty ledger gives ``math.inf``
    (nothing noisy was recorded, so nothing is guaranteed).
    """
    return _ledger(events, delta)[0]


def ledger_guarantee(events: Iterable[PrivacyEvent], delta: float) -> PrivacyGuarantee:
    """:func:`ledger_epsilon` as a :class:`~dpadmm_lite.trace.PrivacyGuarantee`."""
    eps, statement = _ledger(events, delta)
    return PrivacyGuarantee(eps, float(delta), "unified RDP accountant", statement)


def calibrate_ledger(events: Iterable[PrivacyEvent], epsilon: float, delta: float, *, rtol: float = 5e-3) -> float:
    """Factor ``s`` by which to scale every release's noise so that the ledger spends (ε, δ).

    ``events`` is the run's ledger at *unit scale*: the noise shape an algorithm wants (Huang et
    al.'s σ_{i,k} ∝ 1/(ρ + 1/η_i^k), one σ for all of DP-ADMM's releases, …) with an arbitrary
    overall size. The answer is the smallest ``s`` (to relative ``rtol``) with
    ``ledger_epsilon([e.scaled(s) for e in events], delta) ≤ epsilon``; the run then draws
    ``s`` times its unit noise. Because ε falls continuously as the noise grows, the spent ε is
    within a fraction of ``rtol`` below the budget: nothing is wasted and nothing is overspent
    (both checked). ``epsilon = math.inf`` returns 0 (no noise).

    Every algorithm's default ``calibration="accountant"`` goes through this function, so that
    ``epsilon``, ``delta`` mean the end-to-end budget of the whole run in every algorithm.

    Examples
    --------
    >>> unit = [PrivacyEvent("gaussian", 0.01, 1.0, count=100)]
    >>> s = calibrate_ledger(unit, 1.0, 1e-5)
    >>> 0.97 <= ledger_epsilon([e.scaled(s) for e in unit], 1e-5) <= 1.0
    True
    """
    events = _check_events(events)
    epsilon = check.positive("epsilon", epsilon, allow_inf=True)
    delta = check.open_unit("delta", delta)
    rtol = check.open_unit("rtol", rtol)
    if not events:
        raise ValueError("events must hold at least one release to calibrate")
    if math.isinf(epsilon):
        return 0.0

    def spent(log_s: float) -> float:
        s = math.exp(log_s)
        return ledger_epsilon([e.scaled(s) for e in events], delta)

    # bracket: ε(s) is decreasing in s; find lo (ε > target) and hi (ε ≤ target)
    lo = hi = 0.0
    if spent(0.0) > epsilon:
        while spent(hi) > epsilon:
            lo, hi = hi, hi + 1.0
            if hi > 200:  # pragma: no cover - would need noise e^200 times the unit
                raise RuntimeError("calibrate_ledger: no noise scale meets the budget")
    else:
        while spent(lo) <= epsilon:
            hi, lo = lo, lo - 1.0
            if lo < -200:  # the budget is met without noise: not a meaningful ledger
                raise ValueError("calibrate_ledger: the unit ledger spends almost nothing; give it a larger unit noise")
    # bisection on log s to relative tolerance, keeping the feasible end
    while hi - lo > rtol / 4:
        mid = 0.5 * (lo + hi)
        if spent(mid) > epsilon:
            lo = mid
        else:
            hi = mid
    return math.exp(hi)


# --------------------------------------------------------------------------------------------
# The papers' own guarantees
# --------------------------------------------------------------------------------------------


def xu2020_sigma(epsilon: float, delta: float, *, iterations: int, n: int, lipschitz: float, mu: float = 0.5) -> float:
    """Noise σ of DP-ADMM, Xu et al. (2020), Theorem 1, eq. (8).

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
    """
    sigma = check.positive("sigma", sigma)
    delta = check.open_unit("delta", delta)
    T = check.count("iterations", iterations)
    n = check.count("n", n)
    c = check.positive("lipschitz", lipschitz)
    rho = T * c * c / (2 * n * n * sigma * sigma)  # RDP slope: ε(α) = ρ α
    L = math.log(1 / delta)
    return rho + 2 * math.sqrt(rho * L)  # at α − 1 = √(L/ρ)


def huang2019_sigma(epsilon, delta, *, lipschitz, local_size, rho, eta):
    """Per-agent, per-iteration noise of DP-ADMM, Huang et al. (2019), Theorem 1, eq. (14).

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
    m = np.asarray(local_size, dtype=float)
    eta = np.asarray(eta, dtype=float)
    if np.any(~np.isfinite(m)) or np.any(m < 1):
        raise ValueError(f"local_size must be whole numbers >= 1, got {local_size!r}")
    if np.any(np.isnan(eta)) or np.any(eta <= 0):
        raise ValueError(f"eta must be in (0, ∞], got {eta!r}")
    sigma = 2 * c1 * math.sqrt(2 * math.log(1.25 / delta)) / (m * epsilon * (rho + 1 / eta))  # (14)
    return float(sigma) if sigma.ndim == 0 else sigma


def huang2019_noise_multiplier(epsilon: float, delta: float) -> float:
    """σ/Δ of eq. (14): ``√(2 ln(1.25/δ))/ε`` — independent of c₁, m_i, ρ and η."""
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit("delta", delta)
    return math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def huang2019_total_epsilon(epsilon: float, delta: float, iterations: int) -> float:
    """End-to-end ε̄ of Huang et al. (2019), Theorem 2: ``ε̄ = c₀ √t ε``, by the moments accountant.

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
    """The constant of Huang et al.'s Theorem 2 implied by the moments accountant: ``ε̄/(√t ε)``."""
    return huang2019_total_epsilon(epsilon, delta, iterations) / (math.sqrt(iterations) * epsilon)


def _alpha_array(alpha) -> np.ndarray:
    a = np.asarray(alpha, dtype=float)
    if np.any(np.isnan(a)) or np.any(a <= 1):
        raise ValueError(f"alpha (Rényi order) must be in (1, ∞), got {alpha!r}")
    return a


def _ret(x):
    return float(x) if np.ndim(x) == 0 else x


def cyffers2023_centralized_rdp(alpha, *, iterations: int, lipschitz: float, gamma: float, sigma: float, n: int):
    """Cyffers et al. (2023), Theorem 2 (centralized private ADMM, Alg. 2): ``(α, 8αKL²γ²/(σ²n²))``-RDP.

    Record-level DP, L-Lipschitz loss, K iterations, prox parameter γ, noise σ; vectorised
    over α. The proof (App. C.3, Thm 8) is K Gaussian releases with sensitivity
    ``4λLγ/n`` of the u-update (25) against noise ``λσ``.
    """
    a = _alpha_array(alpha)
    K = check.count("iterations", iterations)
    L = check.positive("lipschitz", lipschitz)
    g = check.positive("gamma", gamma)
    s = check.positive("sigma", sigma)
    n = check.count("n", n)
    return _ret(8 * a * K * L**2 * g**2 / (s**2 * n**2))


def cyffers2023_centralized_epsilon(delta: float, *, iterations: int, lipschitz: float, gamma: float, sigma: float, n: int) -> float:
    """Theorem 2 converted to (ε, δ) on the accountant's order grid (tight conversion)."""
    delta = check.open_unit("delta", delta)
    return _curve_epsilon(
        lambda a: cyffers2023_centralized_rdp(a, iterations=iterations, lipschitz=lipschitz, gamma=gamma, sigma=sigma, n=n),
        delta,
    )


def cyffers2023_federated_local_rdp(alpha, *, participations: int, lipschitz: float, gamma: float, sigma: float):
    """Cyffers et al. (2023), Theorem 3, local model: ``(α, 8αK_iL²γ²/σ²)``-RDP for user i.

    User-level DP against the server, which sees every update of user i (K_i participations);
    App. C.4, Thm 9 / eq. (27).
    """
    a = _alpha_array(alpha)
    K = check.count("participations", participations)
    L = check.positive("lipschitz", lipschitz)
    g = check.positive("gamma", gamma)
    s = check.positive("sigma", sigma)
    return _ret(8 * a * K * L**2 * g**2 / s**2)


def cyffers2023_federated_central_rdp(alpha, *, iterations: int, lipschitz: float, gamma: float, sigma: float, n: int, m: int):
    """Cyffers et al. (2023), Theorem 3, central model, closed form: ``(α, 16αKL²γ²/(σ²n²))``-RDP.

    Valid only when ``m < n/5``, ``σ ≥ 4`` and
    ``α ≤ (M²σ²/2 − log(5σ²)) / (M + log(mα/n) + 1/(2σ²))`` with ``M = log(1 + 1/((m/n)(α−1)))``
    (Lemma C.1, Altschuler & Talwar 2022); orders outside that range get ``inf`` (no claim).
    The paper itself does the accounting numerically: see
    :func:`cyffers2023_federated_central_epsilon`.
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
    M = np.log1p(1 / (q * (a - 1)))
    bound = (M**2 * s**2 / 2 - math.log(5 * s**2)) / (M + np.log(q * a) + 1 / (2 * s**2))
    valid = (q < 0.2) & (s >= 4) & (a <= bound)
    return _ret(np.where(valid, 16 * a * K * L**2 * g**2 / (s**2 * n**2), np.inf))


def cyffers2023_federated_central_epsilon(delta: float, *, iterations: int, lipschitz: float, gamma: float, sigma: float, n: int, m: int) -> float:
    """Cyffers et al. (2023), Theorem 3, central model, with the subsampling computed numerically.

    Follows the proof (App. C.4, Thm 10): per round the m sampled users' aggregate has the
    local loss divided by m², i.e. a Gaussian release with noise multiplier ``z = mσ/(4Lγ)``;
    users are sampled with rate ``q = m/n``; K rounds. The sampled-Gaussian RDP is computed
    exactly (integer orders) instead of with Lemma C.1, then converted to (ε, δ).

    Notes
    -----
    The 1/m² step treats the aggregate's noise as one N(0, σ²) draw. If each of the m users
    adds its own N(0, σ²) noise, the sum's noise is ``σ√m`` and the per-round loss is
    divided by m, not m² — the unified ledger, which records the noise actually added,
    reports that.
    """
    K = check.count("iterations", iterations)
    L = check.positive("lipschitz", lipschitz)
    g = check.positive("gamma", gamma)
    s = check.positive("sigma", sigma)
    n = check.count("n", n)
    m = check.count("m", m)
    if m > n:
        raise ValueError(f"m (users sampled per round) must be in [1, n={n}], got {m}")
    delta = check.open_unit("delta", delta)
    return _gaussian_epsilon(m * s / (4 * L * g), K, delta, m / n)


def cyffers2023_network_rdp(alpha, *, participations: int, lipschitz: float, gamma: float, sigma: float, n: int):
    """Cyffers et al. (2023), Theorem 4: ``(α, 8αK_iL²γ² ln n/(σ²n))``-network RDP (Alg. 4).

    Fully decentralized random walk on the **complete graph** (the only graph the theorem
    covers), user-level DP against the view of another user; requires
    ``σ > 2Lγ√(α(α − 1))`` — orders that violate it get ``inf`` (no claim).
    """
    a = _alpha_array(alpha)
    K = check.count("participations", participations)
    L = check.positive("lipschitz", lipschitz)
    g = check.positive("gamma", gamma)
    s = check.positive("sigma", sigma)
    n = check.count("n", n, minimum=2)
    valid = s > 2 * L * g * np.sqrt(a * (a - 1))
    return _ret(np.where(valid, 8 * a * K * L**2 * g**2 * math.log(n) / (s**2 * n), np.inf))


def cyffers2023_network_epsilon(delta: float, *, participations: int, lipschitz: float, gamma: float, sigma: float, n: int) -> float:
    """Theorem 4 converted to (ε, δ) over the orders where it holds (tight conversion)."""
    delta = check.open_unit("delta", delta)
    return _curve_epsilon(
        lambda a: cyffers2023_network_rdp(a, participations=participations, lipschitz=lipschitz, gamma=gamma, sigma=sigma, n=n),
        delta,
    )


def liu2022_vradmm_sigma(epsilon: float, delta: float, *, lipschitz: float, n: int, epochs: int, inner: int, c2: float = 80.0) -> float:
    """Noise σ of DP-VRADMM, Liu et al. (2022), Theorem 1: ``σ² = c₂ l² S m ln(1/δ)/(n² ε²)``.

    S epochs of m inner iterations, l-Lipschitz components, n samples; the theorem requires
    ``ε ≤ c₁Sm/n²``. The paper leaves the constant c₂ unspecified (Algorithm 1 calls it c₁).
    Default ``c₂ = 80``: the value that the paper's own DP-SADMM argument (Theorem 2,
    ``σ² = 20αTl²/(θεn²)`` with ``α ≈ ln(1/δ)/((1−θ)ε)``, θ = ½) gives for T = S·m noisy
    minibatch steps. The ε reported for a run comes from the unified ledger, not from c₂.
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit("delta", delta)
    l = check.positive("lipschitz", lipschitz)
    n = check.count("n", n)
    S = check.count("epochs", epochs)
    m = check.count("inner", inner)
    c2 = check.positive("c2", c2)
    return math.sqrt(c2 * l * l * S * m * math.log(1 / delta) / (n * n * epsilon * epsilon))


def liu2022_sadmm_sigma(epsilon: float, delta: float, *, iterations: int, n: int, lipschitz: float, theta: float = 0.5) -> float:
    """Noise σ of DP-SADMM, Liu et al. (2022), Theorem 2 (Algorithm 2, line 1).

    ``σ² = 20αTl²/(θεn²)`` with ``α = log(1/δ)/((1 − θ)ε) + 1``, θ ∈ (0, 1). Derivation:
    Lemma 2 (subsampled Gaussian, rate ς = b/n, ``5ς²αΔ²/σ²``-RDP with Δ = 2l/b) composed over
    T steps equals θε, then the classic conversion. Valid only under the conditions of
    :func:`liu2022_sadmm_conditions`.
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit("delta", delta)
    T = check.count("iterations", iterations)
    n = check.count("n", n)
    l = check.positive("lipschitz", lipschitz)
    theta = check.open_unit("theta", theta)
    alpha = math.log(1 / delta) / ((1 - theta) * epsilon) + 1
    return math.sqrt(20 * alpha * T * l * l / (theta * epsilon * n * n))


def liu2022_sadmm_conditions(epsilon: float, delta: float, *, iterations: int, n: int, batch_size: int, theta: float = 0.5) -> bool:
    """Whether Liu et al.'s Theorem 2 applies: ``α ≤ log(θεn³/(5αb³T + θεbn²))`` and ``5αb²T/(θεn²) ≥ 1.5``."""
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit("delta", delta)
    T = check.count("iterations", iterations)
    n = check.count("n", n)
    b = check.count("batch_size", batch_size)
    theta = check.open_unit("theta", theta)
    alpha = math.log(1 / delta) / ((1 - theta) * epsilon) + 1
    first = alpha <= math.log(theta * epsilon * n**3 / (5 * alpha * b**3 * T + theta * epsilon * b * n**2))
    second = 5 * alpha * b**2 * T / (theta * epsilon * n**2) >= 1.5
    return bool(first and second)


def zhang2017_dvp_zeta(alpha, *, local_size, lam: float, rho: float, n_neighbors, loss_weight: float = 1.0, c1: float = 0.25):
    """Noise rate ζ_p(t) and extra penalty Φ of DVP, Zhang & Zhu (2017), Algorithm 2.

    Book notation: ``lam`` = the paper's regulariser weight ρ, ``rho`` = the paper's ADMM
    penalty η, ``loss_weight`` = C^R, ``local_size`` = B_p, ``n_neighbors`` = N_p, ``c1`` = the
    bound on |ℒ''| (1/4 for the logistic loss). For target per-iteration privacy α_p(t):

    ``α̂ = α_p(t) − ln(1 + c₁/((B_p/C^R)(ρ + 2ηN_p)))²``; if ``α̂ > 0``: Φ = 0; otherwise
    ``Φ = c₁/((B_p/C^R)(e^{α_p(t)/4} − 1)) − ρ − 2ηN_p`` and ``α̂ = α_p(t)/2``.

    The noise ε_p of (14) has density ∝ exp(−ζ‖ε‖). Algorithm 2 writes ``ζ_p(t) = α̂``, but the
    proof (Appendix A) needs ``ζ_p(t) = α̂/2`` (the scaled noise difference has norm ≤ 2);
    privacy first, this function returns the proof's ``ζ = α̂/2``.

    Vectorised over α (e.g. ``(T, N)``), ``local_size`` and ``n_neighbors`` (``(N,)``).

    Returns
    -------
    (zeta, Phi)
    """
    a = np.asarray(alpha, dtype=float)
    if np.any(~np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"alpha (per-iteration privacy α_p(t)) must be in (0, ∞), got {alpha!r}")
    B = np.asarray(local_size, dtype=float)
    if np.any(~np.isfinite(B)) or np.any(B < 1):
        raise ValueError(f"local_size must be whole numbers >= 1, got {local_size!r}")
    Np = np.asarray(n_neighbors, dtype=float)
    if np.any(~np.isfinite(Np)) or np.any(Np < 0):
        raise ValueError(f"n_neighbors must be whole numbers >= 0, got {n_neighbors!r}")
    lam = check.positive("lam", lam)
    rho = check.positive("rho", rho)
    CR = check.positive("loss_weight", loss_weight)
    c1 = check.positive("c1", c1)
    alpha_hat = a - 2 * np.log1p(c1 / ((B / CR) * (lam + 2 * rho * Np)))
    ok = alpha_hat > 0
    with np.errstate(divide="ignore", over="ignore"):
        phi_needed = c1 / ((B / CR) * np.expm1(a / 4)) - lam - 2 * rho * Np
    phi = np.where(ok, 0.0, np.maximum(phi_needed, 0.0))
    alpha_hat = np.where(ok, alpha_hat, a / 2)
    zeta = alpha_hat / 2  # Appendix A: ζ_p(t) = α̂_p / 2
    return _ret(zeta), _ret(phi)


def zhang2017_pvp_sensitivity(*, local_size, lam: float, loss_weight: float = 1.0):
    """ℓ2-sensitivity of the PVP primal update (18): ``2C^R/(λB_p)`` (Zhang & Zhu, App. B, eq. 33)."""
    B = np.asarray(local_size, dtype=float)
    if np.any(~np.isfinite(B)) or np.any(B < 1):
        raise ValueError(f"local_size must be whole numbers >= 1, got {local_size!r}")
    lam = check.positive("lam", lam)
    CR = check.positive("loss_weight", loss_weight)
    return _ret(2 * CR / (lam * B))


def zhang2017_pvp_zeta(alpha, *, local_size, lam: float, loss_weight: float = 1.0):
    """Noise rate of PVP, Zhang & Zhu (2017), Algorithm 3: ``ζ_p(t) = λB_pα_p(t)/(2C^R)``.

    (Paper: ``ρB_pα_p(t)/(2C^R)`` with ρ its regulariser weight = the book's λ.) Then
    ``ζ · sensitivity = α_p(t)``: each broadcast V_p(t) is pure α_p(t)-DP (App. B).
    Vectorised over α and ``local_size``.
    """
    a = np.asarray(alpha, dtype=float)
    if np.any(~np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"alpha (per-iteration privacy α_p(t)) must be in (0, ∞), got {alpha!r}")
    return _ret(a / zhang2017_pvp_sensitivity(local_size=local_size, lam=lam, loss_weight=loss_weight))


def zhang2017_total_epsilon(alpha) -> float:
    """End-to-end pure ε of a schedule α_p(t): the worst node's sum over iterations.

    Zhang & Zhu state only the per-iteration ("dynamic") guarantee α_p(t) (Theorems 1–2);
    composed over the iterations by basic composition, node p's data is
    ``Σ_t α_p(t)``-DP. ``alpha`` of shape ``(T,)`` or ``(T, N)``.
    """
    a = np.asarray(alpha, dtype=float)
    if a.size == 0 or np.any(~np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"alpha must be a non-empty array of values in (0, ∞), got {alpha!r}")
    a = a.reshape(a.shape[0], -1)
    return float(np.max(a.sum(axis=0)))

