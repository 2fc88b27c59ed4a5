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
* **Every other ledger** (Poisson-subsampled Gaussian releases, ℓ2-Laplace releases, mixtures
  of all three) goes through its **privacy loss distribution** (PLD, :mod:`dpadmm_lite._pld`):
  each kind of release is replaced by a dominating pair of distributions — the Gaussian pair,
  the two pairs (remove and add) of the Poisson-subsampled Gaussian, binary randomized response
  with ε₀ for a pure ε₀-DP ℓ2-Laplace release (it dominates every ε₀-DP mechanism, Kairouz, Oh &
  Viswanath 2015) — discretised pessimistically (connect-the-dots, Doroshenko et al. 2022), and
  composed by one FFT with the tail mass it cannot hold counted as infinite loss. That is
  within 10⁻³ (relative; typically 10⁻⁵–10⁻⁴) of the true ε, never below it, in a few milliseconds.
* **Rényi DP** (Mironov 2017) is computed alongside, as a second sound bound and as the
  fallback where the PLD is not attempted (losses spread over more than 10⁴ nats): the RDP of
  the sampled Gaussian exactly at integer orders (Mironov, Talwar & Zhang 2019, the binomial
  expansion of ``A_α``), at fractional orders by a trapezoidal rule accurate to ~1e-16 and
  rounded up (with the convexity bound of ``(α − 1)·D_α`` as fallback; dp-accounting's
  fractional-order series over-estimates there); ℓ2-Laplace through randomized response; RDP
  curves add up and are converted with Canonne, Kamath & Steinke (2020) / Balle et al. (2020):
  ``ε = RDP(α) + log((α−1)/α) − (log δ + log α)/(α − 1)``, minimised over α.
* The accountant reports the **smallest** of the sound bounds it has (exact μ-GDP when it
  applies, PLD, RDP, pure-DP summation for pure ledgers); :class:`PrivacyGuarantee` says which
  one won (``source``) and lists the others (``statement``). Calibration (``calibrate_noise``,
  ``calibrate_ledger``) searches the noise against that same number.

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
``laplace_rdp``, ``rdp_to_epsilon``, ``rdp_gaussian_epsilon``, ``pld_gaussian_epsilon``,
``privacy_loss_distribution``,
``ledger_rdp``, ``ledger_bounds``, ``ledger_epsilon``, ``ledger_guarantee``, ``calibrate_ledger``,
and the papers' own statements ``xu2020_*``, ``huang2019_*``, ``cyffers2023_*``,
``liu2022_*``, ``zhang2017_*``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Iterable

import numpy as np
from scipy import optimize, special

from . import _pld
from . import _validate as check
from .privacy import PrivacyEvent, PrivacyGuarantee

__all__ = [
    "ORDERS",
    "classic_gaussian_sigma",
    "gaussian_epsilon",
    "rdp_gaussian_epsilon",
    "pld_gaussian_epsilon",
    "privacy_loss_distribution",
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
    "ledger_bounds",
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
    "cyffers2023_federated_local_epsilon",
    "cyffers2023_federated_central_rdp",
    "cyffers2023_federated_central_epsilon",
    "cyffers2023_network_rdp",
    "cyffers2023_network_epsilon",
    "liu2022_vradmm_sigma",
    "liu2022_sadmm_sigma",
    "liu2022_sadmm_conditions",
    "liu2022_sadmm_side_conditions",
    "liu2022_sadmm_epsilon",
    "liu2022_vradmm_epsilon",
    "zhang2017_dvp_zeta",
    "zhang2017_pvp_zeta",
    "zhang2017_pvp_sensitivity",
    "zhang2017_total_epsilon",
    "zhang2017_dvp_jacobian",
    "zhang2017_dvp_spent",
    "zhang2017_pvp_hidden_sensitivity",
    "zhang2017_alpha_for_budget",
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
        Poisson sampling probability q ∈ (0, 1] of each record in each release
        (add/remove-one neighbours, both directions).

    Returns
    -------
    float
        For ``q = 1`` the exact ε (μ-GDP with ``μ = √T/z``, analytic Gaussian curve). For
        ``q < 1`` the privacy-loss-distribution value (within 10⁻³ of the true ε and never
        below it), or the RDP bound if smaller; never more than the ``q = 1`` value.
        :func:`rdp_gaussian_epsilon` and :func:`pld_gaussian_epsilon` give the two bounds alone.

    Examples
    --------
    >>> round(gaussian_epsilon(1.0, 1, 1e-5), 4)
    4.3772
    >>> round(gaussian_epsilon(1.0, 100, 1e-5, sampling_rate=0.01), 3)  # PLD; RDP says 1.214
    0.718
    """
    z = check.positive("noise_multiplier", noise_multiplier, allow_inf=True)
    steps = check.count("steps", steps)
    delta = check.open_unit("delta", delta)
    q = check.half_open_unit("sampling_rate", sampling_rate)
    return _gaussian_epsilon(z, steps, delta, q)


def _gaussian_epsilon(z: float, steps: int, delta: float, q: float) -> float:
    if math.isinf(z):
        return 0.0
    if q == 1.0:
        return _gdp_epsilon(math.sqrt(steps) / z, delta)
    return min(_bounds(*_single(z, q, steps), delta).values())


def _single(z: float, q: float, steps: int):
    comp = _Composition()
    if q == 1.0:
        comp.full_inv_z2 = steps / (z * z)
        return comp, _pld.Releases(steps / (z * z))
    comp.sampled[(z, q)] = steps
    return comp, _pld.Releases(0.0, ((z, q, steps),))


def rdp_gaussian_epsilon(noise_multiplier: float, steps: int, delta: float, sampling_rate: float = 1.0) -> float:
    """The Rényi-DP bound alone for :func:`gaussian_epsilon`'s setting (what DP-SGD libraries report).

    The RDP curve of the (sampled) Gaussian on :data:`ORDERS`, refined around the best order,
    converted with the tight conversion — sound, but looser than the PLD (by 2–70 %).
    """
    z = check.positive("noise_multiplier", noise_multiplier, allow_inf=True)
    steps = check.count("steps", steps)
    delta = check.open_unit("delta", delta)
    q = check.half_open_unit("sampling_rate", sampling_rate)
    if math.isinf(z):
        return 0.0
    return _single(z, q, steps)[0].epsilon(delta)


def pld_gaussian_epsilon(noise_multiplier: float, steps: int, delta: float, sampling_rate: float = 1.0,
                         *, points: int = _pld.POINTS) -> float:
    """The privacy-loss-distribution bound alone for :func:`gaussian_epsilon`'s setting.

    Also for ``q = 1``, where it is within discretisation error of the exact μ-GDP value
    (a check of the PLD machinery). ``points``: grid points across the composed loss window
    (the error shrinks like ``points⁻²``). ``math.inf`` if the PLD is not computable (losses
    spread over more than 10⁴ nats).
    """
    z = check.positive("noise_multiplier", noise_multiplier, allow_inf=True)
    steps = check.count("steps", steps)
    delta = check.open_unit("delta", delta)
    q = check.half_open_unit("sampling_rate", sampling_rate)
    points = check.count("points", points, minimum=64)
    if math.isinf(z):
        return 0.0
    comp, releases = _single(z, q, steps)
    value = _pld.epsilon(releases, delta, upper=_window_hint(comp, delta), points=points)
    return math.inf if value is None else value


def privacy_loss_distribution(noise_multiplier: float, steps: int, sampling_rate: float = 1.0, *,
                              direction: str = "remove", delta: float = 1e-5,
                              points: int = _pld.POINTS) -> tuple[np.ndarray, np.ndarray, float]:
    """The privacy loss distribution of ``steps`` (sampled) Gaussian releases, as the accountant has it.

    Returns ``(losses, probabilities, at_infinity)``: the composed loss ``L = log(P/Q)`` on a
    uniform grid (connect-the-dots, pessimistic), the probability of each grid value, and the
    mass counted as an infinite loss (tails beyond the grid, at most ~1e-4·δ). Then
    ``δ(ε) = at_infinity + Σ p·(1 − e^{ε − L})₊`` is what :func:`pld_gaussian_epsilon` solves.
    ``direction``: ``"remove"`` (P = output with the record) or ``"add"``; equal when q = 1.
    ``delta`` only sets how much tail may be cut.
    """
    z = check.positive("noise_multiplier", noise_multiplier)
    steps = check.count("steps", steps)
    q = check.half_open_unit("sampling_rate", sampling_rate)
    direction = check.choice("direction", direction, ("remove", "add"))
    delta = check.open_unit("delta", delta)
    points = check.count("points", points, minimum=64)
    comp, releases = _single(z, q, steps)
    result = _pld.distribution(releases, delta, direction, upper=_window_hint(comp, delta), points=points)
    if result is None:
        raise ValueError(f"the losses of noise_multiplier={z:g} spread over more than 1e4 nats: no PLD grid at this size")
    return result


def calibrate_noise(epsilon: float, delta: float, steps: int, sampling_rate: float = 1.0) -> float:
    """Smallest noise multiplier ``z = σ/Δ`` whose ``steps`` releases are (ε, δ)-DP.

    For ``q = 1`` solved in closed form through the exact Gaussian curve (``z = √T/μ`` with
    ``δ_μ(ε) = δ``); otherwise a secant search on ``log z`` of :func:`gaussian_epsilon` (PLD),
    started from the central-limit approximation ``μ ≈ q√(T(e^{1/z²} − 1))`` (Bu et al. 2020).
    The result always satisfies ``gaussian_epsilon(z, steps, delta, q) ≤ epsilon`` (it is the
    feasible end of the final bracket) and is minimal to ~1e-4 (relative).
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
    mu = _gdp_mu_for(epsilon, delta)
    z_full = math.sqrt(steps) / mu  # exact answer for q = 1, feasible for every q
    if q == 1.0:
        return _round_up(z_full, steps, delta, q, epsilon)
    ratio = (mu / q) ** 2 / steps  # central-limit guess: e^{1/z²} − 1 = μ²/(q²T)
    z_clt = 1.0 / math.sqrt(math.log1p(ratio)) if ratio > 0 else z_full
    start = math.log(min(z_full, max(z_clt, 1e-3 * z_full)))

    def spent_at(log_z: float, points: int) -> float:
        return min(_bounds(*_single(math.exp(log_z), q, steps), delta, points=points).values())

    log_z = _calibrate(spent_at, epsilon, start, tol=1e-4, feasible=math.log(z_full) + 1e-6)
    return math.exp(log_z)  # feasible: the search's last feasible point, by this very evaluation


def _calibrate(spent_at, target: float, start: float, *, tol: float, feasible: float | None = None,
               span: float = 60.0) -> float:
    """:func:`_search_scale` twice: on a 4× coarser PLD grid to 0.5 % (cheap steps), then with the
    accountant's own evaluation from there (two or three steps). ``spent_at(x, points)``."""
    floor = start - span
    rough = _search_scale(lambda x: spent_at(x, _pld.POINTS // 4), target, start, tol=0.005, feasible=feasible,
                          floor=floor)
    if rough < floor:
        return rough
    return _search_scale(lambda x: spent_at(x, _pld.POINTS), target, rough, tol=tol, feasible=feasible, floor=floor)


def _search_scale(spent, target: float, start: float, *, tol: float, feasible: float | None = None,
                  floor: float | None = None) -> float:
    """Smallest ``x`` (a log noise scale) with ``spent(x) ≤ target``, for ``spent`` non-increasing.

    Safeguarded secant iteration on ``g(x) = log(spent(x)/target)`` (``log ε`` is nearly linear
    in ``log σ``, so it converges in a handful of steps), each step aimed a hair past the root
    towards more noise, with bisection of the bracket when a step leaves it. Stops at a feasible
    point spending more than ``e^{−tol}·target`` (or a bracket narrower than ``tol``) and
    returns it, so ``spent(result) ≤ target`` always holds. ``feasible``: a point known to be
    feasible (no step goes beyond it). If the search reaches ``floor`` (default ``start − 60``)
    and is still feasible, that point is returned (the caller decides what it means).
    """
    floor = start - 60.0 if floor is None else floor
    cache: dict[float, float] = {}

    def g(x: float) -> float:
        if x not in cache:
            e = spent(x)
            cache[x] = math.log(e / target) if 0 < e < math.inf else (-math.inf if e <= 0 else math.inf)
        return cache[x]

    lo = hi = None  # largest infeasible, smallest feasible point seen
    x0, g0 = start, g(start)
    x1 = None
    for _ in range(200):
        for x, gx in ((x0, g0),) if x1 is None else ((x1, g(x1)),):
            if gx > 0:
                lo = x if lo is None else max(lo, x)
            elif hi is None or x < hi:
                hi = x
        if hi is not None and (-tol < g(hi) <= 0 or (lo is not None and hi - lo <= tol)):
            return hi
        if hi is not None and lo is None and hi < floor:
            return hi
        if x1 is None:  # first step: the slope of log ε against log σ is about −1 to −2
            gx = g0
            step = gx / 1.5 if math.isfinite(gx) else (4.0 if gx > 0 else -4.0)
            x_new = x0 + max(-4.0, min(4.0, step))
        else:
            g1 = g(x1)
            if math.isfinite(g0) and math.isfinite(g1) and g1 != g0 and x1 != x0:
                x_new = x1 - g1 * (x1 - x0) / (g1 - g0)
                x_new += tol / 4 if x_new > x1 else -tol / 4 if g1 < -tol else tol / 4
                x_new = x1 + max(-4.0, min(4.0, x_new - x1))
            else:
                x_new = x1 + (4.0 if g1 > 0 else -4.0)
            x0, g0 = x1, g1
        if feasible is not None:
            x_new = min(x_new, feasible)
        if lo is not None and hi is not None and not lo < x_new < hi:
            x_new = 0.5 * (lo + hi)
        if x_new in cache:  # no progress (e.g. capped at `feasible`): step by the tolerance
            x_new = (x_new + tol) if cache[x_new] > 0 else (x_new - tol)
        x1 = x_new
    raise RuntimeError("no noise scale meets the budget")  # pragma: no cover


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
    * ``"unified"`` — :func:`gaussian_epsilon` (exact Gaussian composition for q = 1, the
      privacy loss distribution for q < 1).

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
    return _reduce(events)[0]


def _reduce(events: list[PrivacyEvent]) -> tuple[_Composition, _pld.Releases]:
    """Group a ledger: the RDP groups (exact keys) and the PLD releases (≤ 64 distinct pieces)."""
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
    return comp, _pld.group(comp.full_inv_z2, comp.sampled, comp.laplace)


def _scaled(comp: _Composition, releases: _pld.Releases, s: float) -> tuple[_Composition, _pld.Releases]:
    """The same ledger with every noise ``s`` times larger (σ·s, ζ/s)."""
    out = _Composition()
    out.full_inv_z2 = comp.full_inv_z2 / (s * s)
    out.sampled = {(z * s, q): c for (z, q), c in comp.sampled.items()}
    out.laplace = {(e0 / s, q): c for (e0, q), c in comp.laplace.items()}
    return out, releases.scaled(s)


#: Names of the bounds, as ``PrivacyGuarantee.source`` reports the one that won.
GDP, PLD, RDP, PURE, FULL_BATCH = (
    "exact Gaussian composition (μ-GDP)",
    "privacy loss distribution (PLD)",
    "Rényi DP (RDP)",
    "pure-DP basic composition",
    "μ-GDP of the same noise without sampling",
)
_INT_ORDERS = ORDERS[ORDERS >= 2]
_INT_ORDERS.setflags(write=False)


def _window_hint(comp: _Composition, delta: float, rdp: np.ndarray | None = None) -> float:
    """Where the composed privacy loss ends: the Chernoff (classical RDP) bound at the PLD's tail share."""
    r = comp.rdp(_INT_ORDERS) if rdp is None else rdp
    with np.errstate(invalid="ignore"):
        values = r + math.log(1.0 / (_pld._TAIL_SHARE * delta)) / (_INT_ORDERS - 1)
    return float(np.nanmin(values))


def _bounds(comp: _Composition, releases: _pld.Releases, delta: float, *, refine_rdp: bool = False,
            points: int = _pld.POINTS) -> dict[str, float]:
    """Every sound bound on the ledger's ε at δ the accountant has, by name (see :func:`ledger_bounds`)."""
    if not releases.sampled and not releases.pure:  # full-batch Gaussians only: the truth
        return {GDP: _gdp_epsilon(math.sqrt(releases.gaussian_mu2), delta)}
    bounds: dict[str, float] = {}
    r = comp.rdp(_INT_ORDERS)
    value = _pld.epsilon(releases, delta, upper=_window_hint(comp, delta, r), points=points)
    if value is not None:
        bounds[PLD] = value
    if value is None or refine_rdp:
        bounds[RDP] = comp.epsilon(delta)
    else:  # integer orders only: sound, a little looser, and ~10x cheaper
        bounds[RDP] = _rdp_to_epsilon(_INT_ORDERS, r, delta)
    if not comp.laplace:  # sampled Gaussians are dominated by the same Gaussians on the full data
        mu2 = comp.full_inv_z2 + sum(c / (z * z) for (z, _), c in comp.sampled.items())
        bounds[FULL_BATCH] = _gdp_epsilon(math.sqrt(mu2), delta)
    elif not comp.sampled and comp.full_inv_z2 == 0:  # pure DP only: plain summation
        bounds[PURE] = sum(c * (e0 if q == 1.0 else math.log1p(q * math.expm1(e0)))
                           for (e0, q), c in comp.laplace.items())
    return bounds


def ledger_rdp(events: Iterable[PrivacyEvent], orders=None) -> np.ndarray:
    """Composed RDP curve of a ledger (sum over events × counts), on :data:`ORDERS` by default."""
    a = ORDERS if orders is None else _orders(orders)
    return _composition(_check_events(events)).rdp(a)


def ledger_bounds(events: Iterable[PrivacyEvent], delta: float) -> dict[str, float]:
    """Every sound bound on the ledger's ε at δ, by name; the accountant reports the smallest.

    Keys (the module constants): :data:`GDP` — the exact value, when every release is a Gaussian
    on the full data (then it is the only entry); :data:`PLD` — the privacy loss distribution;
    :data:`RDP` — Rényi DP (refined orders); :data:`FULL_BATCH` — μ-GDP of the same Gaussian
    noise as if nothing were sampled (sampling only helps); :data:`PURE` — plain summation, for
    ledgers of pure-DP releases only. An empty ledger gives ``{}``.
    """
    events = _check_events(events)
    delta = check.open_unit("delta", delta)
    if not events:
        return {}
    return _bounds(*_reduce(events), delta, refine_rdp=True)


def _ledger(events, delta) -> tuple[float, str, str]:
    events = _check_events(events)
    delta = check.open_unit("delta", delta)
    if not events:
        return math.inf, "nothing", "no noisy release recorded: nothing is guaranteed"
    comp, releases = _reduce(events)
    bounds = _bounds(comp, releases, delta)
    best = min(bounds, key=bounds.get)
    n = sum(e.count for e in events)
    statement = f"{n} noisy releases in {len(events)} ledger entries; smallest bound: {best}"
    if best == GDP:
        statement += f", μ = {math.sqrt(releases.gaussian_mu2):.4g} (the exact ε)"
    others = [f"{name} ε = {value:.4g}" for name, value in bounds.items() if name != best]
    if others:
        statement += "; also " + ", ".join(others)
    if releases.grouped:
        statement += f" ({releases.grouped})"
    return bounds[best], best, statement


def ledger_epsilon(events: Iterable[PrivacyEvent], delta: float) -> float:
    """End-to-end ε at δ of every release in ``events``, under the unified accountant.

    The smallest of the *sound* upper bounds of :func:`ledger_bounds`: the exact μ-GDP value
    when every event is an unsampled Gaussian (then it is the true ε); otherwise the privacy
    loss distribution (within 10⁻³ of the true ε, never below it), Rényi DP, and for pure
    ledgers plain summation. An empty ledger gives ``math.inf`` (nothing noisy was recorded,
    so nothing is guaranteed).
    """
    return _ledger(events, delta)[0]


def ledger_guarantee(events: Iterable[PrivacyEvent], delta: float) -> PrivacyGuarantee:
    """:func:`ledger_epsilon` as a :class:`~dpadmm_lite.trace.PrivacyGuarantee`.

    ``source`` is ``"unified accountant: "`` and the name of the bound that won (e.g.
    ``"unified accountant: privacy loss distribution (PLD)"``); ``statement`` counts the
    releases and lists the other bounds.
    """
    eps, best, statement = _ledger(events, delta)
    return PrivacyGuarantee(eps, float(delta), f"unified accountant: {best}", statement)


def calibrate_ledger(events: Iterable[PrivacyEvent], epsilon: float, delta: float, *, rtol: float = 5e-3) -> float:
    """Factor ``s`` by which to scale every release's noise so that the ledger spends (ε, δ).

    ``events`` is the run's ledger at *unit scale*: the noise shape an algorithm wants (Huang et
    al.'s σ_{i,k} ∝ 1/(ρ + 1/η_i^k), one σ for all of DP-ADMM's releases, …) with an arbitrary
    overall size. The answer is the smallest ``s`` (to relative ``rtol``) with
    ``ledger_epsilon([e.scaled(s) for e in events], delta) ≤ epsilon``; the run then draws
    ``s`` times its unit noise. The spent ε is within a fraction of ``rtol`` below the budget:
    nothing is wasted and nothing is overspent (both checked). ``epsilon = math.inf`` returns
    0 (no noise).

    The ledger is grouped once and the search runs on the grouped form: a ledger of full-batch
    Gaussians (Huang et al.: one event per iteration, each its own σ) is solved in closed form
    through μ-GDP (``s = μ_unit/μ(ε, δ)``), any other by a secant search on ``log s`` against
    the PLD (a few milliseconds per step).

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
    comp, releases = _reduce(events)
    if not releases.sampled and not releases.pure:  # μ(s) = μ_unit/s: closed form
        s = math.sqrt(releases.gaussian_mu2) / _gdp_mu_for(epsilon, delta)
        log_s = math.log(s)
    else:
        # the coarse phase of the search may group releases more coarsely (it only finds a start)
        rough = _pld.group(comp.full_inv_z2, comp.sampled, comp.laplace, max_pieces=16)

        def spent_at(x: float, points: int) -> float:
            grouped = releases if points >= _pld.POINTS else rough
            return min(_bounds(*_scaled(comp, grouped, math.exp(x)), delta, points=points).values())

        log_s = _calibrate(spent_at, epsilon, 0.0, tol=rtol / 4, span=200.0)
        if log_s < -150:  # the budget is met without noise
            raise ValueError("calibrate_ledger: the unit ledger spends almost nothing; give it a larger unit noise")
    # the check the caller will make, on the scaled events themselves (nudge up on rounding)
    for _ in range(20):
        if ledger_epsilon([e.scaled(math.exp(log_s)) for e in events], delta) <= epsilon:
            return math.exp(log_s)
        log_s += rtol / 50
    raise RuntimeError("calibrate_ledger did not converge")  # pragma: no cover


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

    Record-level DP, L-Lipschitz loss, K iterations, noise σ; vectorised over α. The proof
    (App. C.2–C.3, Thm 8) composes K Gaussian releases of the u-update, whose sensitivity
    (25) is ``4λLγ/n`` against noise ``λσ``.

    **Units of γ.** The ``1/n`` of (25) needs ``‖x_i − x_i'‖ ≤ 2Lγ/n``, i.e. a per-record prox
    step ``γ/n`` — what App. C.2 gets by writing the data term as ``(1/n)Σ f`` and what
    :mod:`dpadmm_lite.algorithms.fixed_point` calls γ. Taken literally, Alg. 2's
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
    """
    a = _alpha_array(alpha)
    K = check.count("participations", participations)
    L = check.positive("lipschitz", lipschitz)
    g = check.positive("gamma", gamma)
    s = check.positive("sigma", sigma)
    return _ret(8 * a * K * L**2 * g**2 / s**2)


def cyffers2023_federated_local_epsilon(delta: float, *, participations: int, lipschitz: float, gamma: float,
                                        sigma: float) -> float:
    """Theorem 3's local guarantee in (ε, δ), with the paper's conversion (closed form, linear curve)."""
    delta = check.open_unit("delta", delta)
    slope = cyffers2023_federated_local_rdp(2.0, participations=participations, lipschitz=lipschitz,
                                            gamma=gamma, sigma=sigma) / 2.0  # RDP per unit of α
    return _cyffers2023_linear_epsilon(float(slope), delta)


def cyffers2023_federated_central_rdp(alpha, *, iterations: int, lipschitz: float, gamma: float, sigma: float, n: int,
                                      m: int):
    """Cyffers et al. (2023), Theorem 3, central model, as stated: ``(α, 16αKL²γ²/(σ²n²))``-RDP.

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
    """Theorem 4 in (ε, δ): the paper's conversion over the orders where the theorem holds."""
    delta = check.open_unit("delta", delta)
    rdp = cyffers2023_network_rdp(_CYFFERS2023_ORDERS, participations=participations, lipschitz=lipschitz,
                                  gamma=gamma, sigma=sigma, n=n)
    return _cyffers2023_classic_epsilon(rdp, delta)


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


def liu2022_sadmm_side_conditions(epsilon: float, delta: float, *, iterations: int, n: int, batch_size: int,
                                  theta: float = 0.5) -> dict:
    """Both side conditions of Liu et al.'s Theorem 2, evaluated (numbers, not just a verdict).

    Theorem 2 holds "if there exists θ ∈ (0, 1) such that ``α ≤ log(θεn³/(5αb³T + θεbn²))`` and
    ``5αb²T/(θεn²) ≥ 1.5``", with ``α = log(1/δ)/((1 − θ)ε) + 1``. They come from Lemma 2
    (Wang et al. 2019's subsampled-RDP bound, ``5ς²αΔ²/σ²`` for ``σ²/Δ² ≥ 1.5`` and
    ``α ≤ log(1/(ς(1 + σ²/Δ²)))``, ς = b/n, Δ = 2l/b) at the σ of the theorem.

    Since the right-hand side of the first condition is below ``log(n/b)`` and
    ``α > log(1/δ)/ε + 1`` for every θ, the theorem cannot apply when
    ``log(1/δ)/ε + 1 ≥ log(n/b)``: at the paper's δ = 5·10⁻⁴ and ε ≤ 1 that needs
    ``n/b > e^{8.6} ≈ 5,400`` at ε = 1 and ``n/b > e^{153}`` at ε = 0.05 — none of its datasets.

    Returns
    -------
    dict
        ``alpha``, ``alpha_bound`` (the right-hand side of the first condition),
        ``variance_ratio`` (``σ²/Δ² = 5αb²T/(θεn²)``), ``first``, ``second`` (bools) and ``holds``.
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit("delta", delta)
    T = check.count("iterations", iterations)
    n = check.count("n", n)
    b = check.count("batch_size", batch_size)
    if b > n:
        raise ValueError(f"batch_size must be in [1, n = {n}], got {b}")
    theta = check.open_unit("theta", theta)
    alpha = math.log(1 / delta) / ((1 - theta) * epsilon) + 1
    alpha_bound = math.log(theta * epsilon * n**3 / (5 * alpha * b**3 * T + theta * epsilon * b * n**2))
    ratio = 5 * alpha * b**2 * T / (theta * epsilon * n**2)  # σ²/Δ² at Theorem 2's σ
    first, second = alpha <= alpha_bound, ratio >= 1.5
    return {"alpha": alpha, "alpha_bound": alpha_bound, "variance_ratio": ratio, "first": bool(first),
            "second": bool(second), "holds": bool(first and second)}


def liu2022_sadmm_conditions(epsilon: float, delta: float, *, iterations: int, n: int, batch_size: int,
                             theta: float | None = 0.5) -> bool:
    """Whether Liu et al.'s Theorem 2 applies: ``α ≤ log(θεn³/(5αb³T + θεbn²))`` and ``5αb²T/(θεn²) ≥ 1.5``.

    ``theta=None`` asks the theorem's own question, "does some θ ∈ (0, 1) satisfy both?"
    (searched on a grid of 999 values). See :func:`liu2022_sadmm_side_conditions` for the numbers.
    """
    thetas = np.linspace(0.001, 0.999, 999) if theta is None else [theta]
    return any(liu2022_sadmm_side_conditions(epsilon, delta, iterations=iterations, n=n, batch_size=batch_size,
                                             theta=float(t))["holds"] for t in thetas)


def liu2022_sadmm_epsilon(sigma: float, delta: float, *, iterations: int, n: int, lipschitz: float,
                          theta: float | None = None) -> float:
    """Theorem 2 read backwards: the ε that Liu et al.'s DP-SADMM guarantee claims for noise σ.

    ``σ² = 20αTl²/(θεn²)`` with ``α = log(1/δ)/((1 − θ)ε) + 1`` is, for ``K = σ²n²/(20Tl²)``, the
    quadratic ``Kθ(1 − θ)ε² − (1 − θ)ε − log(1/δ) = 0``, whose positive root is the claimed ε;
    ``theta=None`` takes the best θ ∈ (0, 1) (what the theorem allows). The claim stands only
    where :func:`liu2022_sadmm_conditions` holds.
    """
    sigma = check.positive("sigma", sigma)
    delta = check.open_unit("delta", delta)
    T = check.count("iterations", iterations)
    n = check.count("n", n)
    l = check.positive("lipschitz", lipschitz)
    K = sigma**2 * n**2 / (20 * T * l**2)
    L = math.log(1 / delta)

    def eps(th):
        a = K * th * (1 - th)
        return ((1 - th) + math.sqrt((1 - th) ** 2 + 4 * a * L)) / (2 * a)

    if theta is not None:
        return eps(check.open_unit("theta", theta))
    best = optimize.minimize_scalar(eps, bounds=(1e-6, 1 - 1e-6), method="bounded", options={"xatol": 1e-10})
    return float(min(best.fun, eps(0.5)))


def liu2022_vradmm_epsilon(sigma: float, delta: float, *, lipschitz: float, n: int, epochs: int, inner: int,
                           c2: float = 80.0) -> float:
    """Theorem 1 read backwards: ``ε = l√(c₂ S m ln(1/δ))/(nσ)`` — with the assumed constant c₂.

    The paper gives no value for c₂ (nor for c₁ of the condition ``ε ≤ c₁Sm/n²``), so this is
    the claim only up to that unknown constant; see :func:`liu2022_vradmm_sigma`.
    """
    sigma = check.positive("sigma", sigma)
    delta = check.open_unit("delta", delta)
    l = check.positive("lipschitz", lipschitz)
    n = check.count("n", n)
    S = check.count("epochs", epochs)
    m = check.count("inner", inner)
    c2 = check.positive("c2", c2)
    return l * math.sqrt(c2 * S * m * math.log(1 / delta)) / (n * sigma)


# Zhang & Zhu (2017). Book notation throughout: ``lam`` = the paper's regulariser weight ρ, ``rho`` =
# its ADMM penalty η, ``loss_weight`` = C^R (the book's w_p = N m_p/n, 1 for equal sizes),
# ``local_size`` = B_p (m_p), ``n_neighbors`` = N_p, ``c1`` = the bound on |ℒ''|‖x‖² (¼ for the
# logistic loss on rows of norm ≤ 1). Every function is vectorised over the per-node arrays.

#: DVP's three noise rates: the proof of Thm 1 (ζ = α̂/Δ, Δ = 2 for |ℒ'| ≤ 1), Algorithm 2 as
#: printed (ζ = α̂) and Appendix E (ζ = α/4).
ZHANG2017_DVP_RULES = ("proof", "algorithm", "appendix")


def _zhang2017_nodes(name: str, value, minimum: float) -> np.ndarray:
    a = np.asarray(value, dtype=float)
    if np.any(~np.isfinite(a)) or np.any(a < minimum):
        raise ValueError(f"{name} must be whole numbers >= {minimum:g}, got {value!r}")
    return a


def _zhang2017_positive(name: str, value) -> np.ndarray:
    a = np.asarray(value, dtype=float)
    if np.any(~np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"{name} must be in (0, ∞), got {value!r}")
    return a


def _zhang2017_alpha(alpha) -> np.ndarray:
    a = np.asarray(alpha, dtype=float)
    if a.size == 0 or np.any(np.isnan(a)) or np.any(a <= 0):
        raise ValueError(f"alpha (per-iteration privacy α_p(t)) must be in (0, ∞], got {alpha!r}")
    return a


def zhang2017_dvp_jacobian(*, local_size, lam: float, rho: float, n_neighbors, extra=0.0, loss_weight=1.0,
                           c1: float = 0.25):
    """The Jacobian term ``ᾱ = 2 ln(1 + c₁/((B_p/C^R)(λ + Φ + 2ρN_p)))`` of DVP (Zhang & Zhu, eq. 30).

    Objective perturbation releases the exact minimiser f of (13); the density of f is the noise
    density times ``|det ∂ε/∂f|``, and replacing one record changes that determinant by at most
    the factor ``e^ᾱ`` (a rank-2 change of the Hessian, Chaudhuri et al. 2011). ``ᾱ`` does not
    depend on the noise: it is spent whatever ζ is. (The factor is ``(1 + x)²`` as in the paper;
    ``1 + x`` would do for one replaced record, so this is conservative.)
    """
    B = _zhang2017_nodes("local_size", local_size, 1)
    Np = _zhang2017_nodes("n_neighbors", n_neighbors, 0)
    lam = check.nonnegative("lam", lam)
    rho = check.positive("rho", rho)
    Phi = _zhang2017_nodes("extra", extra, 0)
    CR = _zhang2017_nodes("loss_weight", loss_weight, 0)
    c1 = check.positive("c1", c1)
    return _ret(2 * np.log1p(c1 * CR / (B * (lam + Phi + 2 * rho * Np))))


def zhang2017_dvp_zeta(alpha, *, local_size, lam: float, rho: float, n_neighbors, loss_weight=1.0, c1: float = 0.25,
                       sensitivity: float = 2.0, rule: str = "proof"):
    """Noise rate ζ_p(t) and extra penalty Φ of DVP, Zhang & Zhu (2017), Algorithm 2.

    For a target per-iteration privacy α_p(t) (pure DP of the broadcast f_p(t+1))::

        α̂ = α_p(t) − ln(1 + c₁/((B_p/C^R)(ρ + 2ηN_p)))²   (paper's symbols: ρ = λ here, η = ρ here)
        if α̂ > 0:  Φ = 0
        else:      Φ = c₁/((B_p/C^R)(e^{α_p(t)/4} − 1)) − ρ − 2ηN_p,  α̂ = α_p(t)/2

    (in the second branch Φ makes the Jacobian term exactly α_p(t)/2). The noise ε_p of (14) has
    density ∝ exp(−ζ‖ε‖); the paper gives three different ζ (``rule``):

    * ``"proof"`` (default): ``ζ = α̂/Δ`` — Appendix A bounds the change of the noise that
      explains a given f_p(t+1) by ``Δ = 2`` (``|ℒ'| ≤ 1``, ``‖x‖ ≤ 1``, one record replaced),
      and "by selecting ζ_p(t) = α̂_p/2" the noise spends ``ζΔ = α̂``, the Jacobian ``ᾱ = α − α̂``:
      α in total. ``sensitivity`` is that Δ (``2·problem.lipschitz`` in general; larger in PVP's
      final step, where an unreleased state enters; a number or one per node).
    * ``"algorithm"``: ``ζ = α̂``, as printed in Algorithm 2 — spends ``2α̂ + ᾱ = α + α̂ > α``.
    * ``"appendix"``: ``ζ = α/4``, as in the proof of Theorem 4 (Appendix E) — spends
      ``α/2 + ᾱ``, which is ≤ α only when ``ᾱ ≤ α/2`` (the Φ branch, where it equals the proof's).

    :func:`zhang2017_dvp_spent` gives what any ζ truly spends. Vectorised over α (e.g.
    ``(T, N)``), ``local_size``, ``loss_weight`` and ``n_neighbors`` (``(N,)``); ``α = ∞`` gives
    ζ = ∞ (no noise) and Φ = 0.

    Returns
    -------
    (zeta, Phi)
    """
    a = _zhang2017_alpha(alpha)
    check.choice("rule", rule, ZHANG2017_DVP_RULES)
    sensitivity = _zhang2017_positive("sensitivity", sensitivity)
    jac = np.asarray(zhang2017_dvp_jacobian(local_size=local_size, lam=lam, rho=rho, n_neighbors=n_neighbors,
                                            loss_weight=loss_weight, c1=c1))
    B = np.asarray(local_size, float)
    CR = np.asarray(loss_weight, float)
    Np = np.asarray(n_neighbors, float)
    alpha_hat = a - jac
    ok = alpha_hat > 0
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        phi_needed = c1 * CR / (B * np.expm1(a / 4)) - lam - 2 * rho * Np
    phi = np.where(ok, 0.0, np.maximum(phi_needed, 0.0))
    alpha_hat = np.where(ok, alpha_hat, a / 2)
    if rule == "proof":
        zeta = alpha_hat / sensitivity  # Appendix A: ζ_p(t) = α̂_p / 2 for Δ = 2
    elif rule == "algorithm":
        zeta = alpha_hat  # Algorithm 2 as printed
    else:
        zeta = a / 4  # Appendix E
    return _ret(zeta), _ret(phi)


def zhang2017_dvp_spent(zeta, *, local_size, lam: float, rho: float, n_neighbors, extra=0.0, loss_weight=1.0,
                        c1: float = 0.25, sensitivity: float = 2.0):
    """Pure ε that one DVP update with noise rate ``zeta`` and extra penalty ``extra`` (Φ) spends.

    ``ζΔ + ᾱ`` (proof of Theorem 1: the noise density ratio ``e^{ζΔ}``, eq. 31, times the
    Jacobian ratio ``e^ᾱ`` of :func:`zhang2017_dvp_jacobian`), ``Δ = sensitivity``.
    """
    z = np.asarray(zeta, dtype=float)
    if np.any(np.isnan(z)) or np.any(z <= 0):
        raise ValueError(f"zeta must be in (0, ∞], got {zeta!r}")
    sensitivity = _zhang2017_positive("sensitivity", sensitivity)
    jac = zhang2017_dvp_jacobian(local_size=local_size, lam=lam, rho=rho, n_neighbors=n_neighbors, extra=extra,
                                 loss_weight=loss_weight, c1=c1)
    return _ret(z * sensitivity + np.asarray(jac))


def zhang2017_pvp_sensitivity(*, local_size, lam: float, loss_weight=1.0):
    """ℓ2-sensitivity of the PVP primal update (18): ``2C^R/(λB_p)`` (Zhang & Zhu, App. B, eq. 33).

    The paper's bound: one replaced record moves the minimiser of the λ-strongly convex (18) by at
    most ``2C^R/(λB_p)`` — with the state ``f_p(t)`` held fixed. See
    :func:`zhang2017_pvp_hidden_sensitivity` for what it is when ``f_p(t)``, never released,
    is allowed to differ too.
    """
    B = _zhang2017_nodes("local_size", local_size, 1)
    lam = check.positive("lam", lam)
    CR = _zhang2017_nodes("loss_weight", loss_weight, 0)
    return _ret(2 * CR / (lam * B))


def zhang2017_pvp_zeta(alpha, *, local_size, lam: float, loss_weight=1.0):
    """Noise rate of PVP, Zhang & Zhu (2017), Algorithm 3: ``ζ_p(t) = λB_pα_p(t)/(2C^R)``.

    (Paper: ``ρB_pα_p(t)/(2C^R)`` with ρ its regulariser weight = the book's λ.) Then
    ``ζ · sensitivity = α_p(t)``: each broadcast V_p(t) is pure α_p(t)-DP (App. B).
    Vectorised over α and ``local_size``.
    """
    a = _zhang2017_alpha(alpha)
    return _ret(a / np.asarray(zhang2017_pvp_sensitivity(local_size=local_size, lam=lam, loss_weight=loss_weight)))


def zhang2017_pvp_hidden_sensitivity(iterations: int, *, local_size, lam: float, rho: float, n_neighbors,
                                     loss_weight=1.0, lipschitz: float = 1.0, form: str = "text",
                                     residual=0.0) -> np.ndarray:
    """Sensitivity of PVP's broadcasts ``V_p(t) = f_p(t) + ε_p(t)``, t = 1 … T, with ``f_p(t)`` unreleased.

    Appendix B compares the minimisers of (18) for D and D′ *with the same* ``f_p(t)``. But
    ``f_p(t)`` is never released: an observer of the broadcasts sees the same transcript under D
    and D′ while the two runs' hidden ``f_p(t)`` differ. Both hidden states are functions of the
    data and the transcript (the update is deterministic given them), so the release of step t
    is an ℓ2-Laplace mechanism with sensitivity ``E_t``, the largest possible distance of the two
    runs' ``f_p(t)`` given the same transcript. Strong convexity of (18) in f (modulus
    ``μ = λ + 2ρN_p``, the ADMM penalty included) gives the recursion

        E_0 = 0,   E_t = (2C^R c/B_p + κ ρ N_p E_{t−1}) / μ + 2r,

    with ``c = lipschitz`` (``|ℒ'|‖x‖ ≤ c``), ``κ = 1`` when (18) is centred at
    ``½(f_p(t) + V_j(t))`` (``form="text"``, the text's (9) with the neighbours' broadcasts) and
    ``κ = 2`` for the printed ``½(f_p(t) + V_j(t) − ε_p(t))`` (``form="eq18"``: ``ε_p(t) = V_p(t) − f_p(t)``
    doubles the weight of the hidden state), and ``r`` a certified bound on the distance of the
    computed to the exact minimiser (``residual``). The fixed point ``2C^Rc/(B_p(λ + (2−κ)ρN_p))``
    (plus the residual terms) is at most the paper's ``2C^Rc/(λB_p)``: the paper's noise is safe
    despite the hidden state, and much larger than needed when ``ρN_p ≫ λ``.

    Returns ``E_1 … E_T``, shape ``(T,)`` (or ``(T, N)`` for per-node arrays).
    """
    T = check.count("iterations", iterations)
    check.choice("form", form, ("text", "eq18"))
    B = _zhang2017_nodes("local_size", local_size, 1)
    Np = _zhang2017_nodes("n_neighbors", n_neighbors, 0)
    lam = check.nonnegative("lam", lam)
    rho = check.positive("rho", rho)
    CR = _zhang2017_nodes("loss_weight", loss_weight, 0)
    c = check.positive("lipschitz", lipschitz)
    r = _zhang2017_nodes("residual", residual, 0)
    kappa = 1.0 if form == "text" else 2.0
    mu = lam + 2 * rho * Np
    g = 2 * CR * c / B
    E = np.zeros(np.broadcast(B, Np, CR, r).shape)
    out = []
    for _ in range(T):  # the recursion over iterations (vectorised over nodes)
        E = (g + kappa * rho * Np * E) / mu + 2 * r
        out.append(E)
    return np.array(out)


def zhang2017_alpha_for_budget(epsilon: float, delta: float, iterations: int, *, schedule=None) -> np.ndarray:
    """Per-iteration privacy α_p(t), t = 1 … T, whose T pure-DP iterations spend exactly (ε, δ) end to end.

    Zhang & Zhu state privacy per iteration ("dynamic" α_p(t)-DP, Definition 1); the book's ε is
    the end-to-end budget. ``schedule`` (default constant) is the shape of α_p(t); it is scaled so
    that the unified accountant (:func:`ledger_epsilon` of T pure α_p(t)-DP releases, each
    dominated by randomized response with that ε₀) gives ε at δ, within 0.5 % below
    (:func:`calibrate_ledger`).
    ``epsilon = ∞`` gives α = ∞ (no noise).
    """
    epsilon = check.positive("epsilon", epsilon, allow_inf=True)
    delta = check.open_unit("delta", delta)
    T = check.count("iterations", iterations)
    shape = np.ones(T) if schedule is None else np.asarray(schedule, dtype=float)
    if shape.shape != (T,) or np.any(~np.isfinite(shape)) or np.any(shape <= 0):
        raise ValueError(f"schedule must hold {T} positive numbers (the shape of α_p(t)), got {schedule!r}")
    if math.isinf(epsilon):
        return np.full(T, np.inf)
    values, counts = np.unique(shape, return_counts=True)
    unit = [PrivacyEvent("laplace_l2", float(v), 1.0, count=int(c), note="unit α shape") for v, c in zip(values, counts)]
    s = calibrate_ledger(unit, epsilon, delta)
    return shape / s * (1 - 1e-9)  # pure ε₀ = ζΔ = shape/s per iteration (the 1e-9: rounding of ζ·Δ later)


def zhang2017_total_epsilon(alpha) -> float:
    """End-to-end pure ε of a schedule α_p(t) by basic composition: the worst node's sum over iterations.

    Zhang & Zhu state only the per-iteration ("dynamic") guarantee α_p(t) (Theorems 1–2);
    composed over the iterations by basic composition, node p's data is
    ``Σ_t α_p(t)``-DP. ``alpha`` of shape ``(T,)`` or ``(T, N)``.
    """
    a = np.asarray(alpha, dtype=float)
    if a.size == 0 or np.any(~np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"alpha must be a non-empty array of values in (0, ∞), got {alpha!r}")
    a = a.reshape(a.shape[0], -1)
    return float(np.max(a.sum(axis=0)))
