"""Rényi DP of single releases (Gaussian, Poisson-subsampled Gaussian, ℓ2-Laplace), the
RDP → (ε, δ) conversion, and the grouped RDP curve of a ledger."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import special

from .. import _validate as check
from ._pld import replace_pure_epsilon as _replace_pure_epsilon

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
    lengths = (alphas + 1).astype(np.intp)  # np.repeat takes platform ints: 32-bit in WebAssembly
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


def _log_a_integer_many(q: float, zs: np.ndarray, int_orders: tuple[int, ...]) -> np.ndarray:
    """:func:`_log_a_integer` for many noise multipliers with the same q at once: shape (len(zs), orders)."""
    alpha_rep, i, i2mi, log_comb, starts, lengths = _binomial_table(int_orders)
    base = log_comb + i * math.log(q) + (alpha_rep - i) * math.log1p(-q)
    out = np.empty((zs.size, len(int_orders)))
    chunk = max(1, 2**21 // base.size)  # bound the work array (~16 MB)
    for k in range(0, zs.size, chunk):
        w = 1.0 / (2.0 * zs[k:k + chunk] ** 2)
        terms = base + np.multiply.outer(w, i2mi)
        peak = np.maximum.reduceat(terms, starts, axis=1)
        total = np.add.reduceat(np.exp(terms - np.repeat(peak, lengths, axis=1)), starts, axis=1)
        out[k:k + chunk] = np.maximum(peak + np.log(total), 0.0)
    return out


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


def _replace_gaussian_rdp(z: float, q: float, orders: np.ndarray) -> np.ndarray:
    """A sound RDP bound for one Poisson-subsampled Gaussian release with replace-one neighbours.

    The pair is ``P = q·N(1, z²) + (1 − q)·N(0, z²)`` against ``Q = q·N(−1, z²) + (1 − q)·N(0, z²)``.
    With ``R = N(0, z²)`` and Cauchy–Schwarz under R,
    ``E_Q[(P/Q)^α] = E_R[(P/R)^α (R/Q)^{α−1}] ≤ √(E_R[(P/R)^{2α}] · E_Q[(R/Q)^{2α−1}])``. The first
    factor is the add/remove ``A_{2α}`` of Mironov, Talwar & Zhang (2019), the second (reflected)
    their ``B_{2α−1} ≤ A_{2α−1}`` (their Thm 5), so ``(α − 1)D_α ≤ (log A_{2α} + log A_{2α−1})/2``.
    Also ``D_α ≤ 2α/z²``, the unsampled Gaussian with sensitivity 2 (joint quasi-convexity); the
    smaller of the two is returned. Sound, but loose: against the pair's exact Rényi divergence
    (numerical integration, see the tests) it is 1.1–2× at orders ≤ 3 for z ≥ 1 and small q, and
    far looser at high orders when z is small (the doubled order leaves the range where
    subsampling helps: 39× at α = 5, 3 000× at α = 8 for z = 1, q = 0.01). It is only the
    fallback where the PLD is not attempted and the PLD's window estimate: the PLD is exact.
    """
    full = 2.0 * orders / (z * z)
    if math.isinf(z):
        return np.zeros_like(orders)
    if q == 1.0:
        return full
    doubled = np.concatenate([2.0 * orders, 2.0 * orders - 1.0])
    log_a = _sampled_gaussian_rdp(z, q, doubled) * (doubled - 1.0)
    k = orders.size
    return np.minimum((log_a[:k] + log_a[k:]) / (2.0 * (orders - 1.0)), full)


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
    """RDP of one Gaussian release with noise multiplier ``z = σ/Δ``: ``α / (2z²)`` (Mironov 2017).

    Parameters
    ----------
    noise_multiplier : float
        ``z = σ/Δ``, > 0 (``math.inf`` allowed: zero divergence).
    orders : array_like of float, optional
        Rényi orders, each in (1, ∞); :data:`ORDERS` by default.

    Returns
    -------
    numpy.ndarray
        The Rényi divergence at each order.
    """
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
    noise_multiplier : float
        ``z = σ/Δ`` (``math.inf`` gives zero).
    sampling_rate : float
        Poisson sampling probability ``q ∈ (0, 1]``; ``q = 1`` gives ``α/(2z²)``.
    orders : array_like of float, optional
        Rényi orders (> 1); default :data:`ORDERS`.
    """
    z = check.positive("noise_multiplier", noise_multiplier, allow_inf=True)
    q = check.half_open_unit("sampling_rate", sampling_rate)
    a = ORDERS if orders is None else _orders(orders)
    return _sampled_gaussian_rdp(z, q, a)


def laplace_rdp(epsilon0: float, orders=None, *, sampling_rate: float = 1.0) -> np.ndarray:
    """RDP bound of one pure ``ε₀``-DP release (e.g. ℓ2-Laplace noise with ``ε₀ = ζΔ``).

    Parameters
    ----------
    epsilon0 : float
        ε₀ of the pure release, > 0 and finite.
    orders : array_like of float, optional
        Rényi orders, each in (1, ∞); :data:`ORDERS` by default.
    sampling_rate : float, default 1.0
        Poisson sampling rate q of each release, in (0, 1].

    Returns
    -------
    numpy.ndarray
        The bound on the Rényi divergence at each order.

    Notes
    -----
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
    a = np.atleast_1d(check.real_array("orders", orders))
    if a.ndim != 1 or a.size == 0 or not np.all(np.isfinite(a)) or np.any(a <= 1):
        raise ValueError(f"orders must be a non-empty 1-D array of Rényi orders in (1, ∞), got {orders!r}")
    return a


# --------------------------------------------------------------------------------------------
# RDP → (ε, δ)
# --------------------------------------------------------------------------------------------


def rdp_to_epsilon(orders, rdp, delta: float) -> float:
    """Smallest ε over the orders such that the RDP curve implies (ε, δ)-DP.

    Parameters
    ----------
    orders : array_like of float
        Rényi orders, a non-empty 1-D array with each order in (1, ∞).
    rdp : array_like of float
        The Rényi divergence at each order, in [0, ∞] (no NaN), the same shape as ``orders``.
    delta : float
        Target δ, in (0, 1).

    Returns
    -------
    float
        The smallest ε (≥ 0) over the orders.

    Notes
    -----
    Uses the conversion of Canonne, Kamath & Steinke (2020, Prop. 12) / Balle et al. (2020,
    Thm 21): ``ε = D_α + log((α−1)/α) − (log δ + log α)/(α − 1)``, which is never larger than
    the classical ``D_α + log(1/δ)/(α − 1)`` (Mironov 2017, Prop. 3). Orders where
    ``δ ≥ √(1 − e^{−D_α})`` give ε = 0 (total-variation bound, as in dp-accounting).
    """
    delta = check.open_unit("delta", delta)
    a = _orders(orders)
    r = np.atleast_1d(check.real_array("rdp", rdp))
    if r.shape != a.shape:
        raise ValueError(f"rdp must have one value per entry of orders ({a.size} orders), got shape {r.shape}")
    if np.any(np.isnan(r)) or np.any(r < 0):  # a NaN order would otherwise be skipped silently
        raise ValueError(f"rdp must hold Rényi divergences in [0, ∞] (no NaN), got {rdp!r}")
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
        self.replaced: dict[tuple[float, float], int] = {}  # sampled Gaussian, replace-one: (σ/C, q)
        self.laplace_replaced: dict[tuple[float, float], int] = {}  # sampled ℓ2-Laplace, replace-one: (ζC, q)

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        total = orders * self.full_inv_z2 / 2.0
        if np.all(orders == np.round(orders)):  # integer orders: every z of a sampling rate at once
            total = total + _sum_by_rate(self.sampled, orders, replace_one=False)
            total = total + _sum_by_rate(self.replaced, orders, replace_one=True)
        else:
            for (z, q), c in self.sampled.items():
                total = total + c * _sampled_gaussian_rdp(z, q, orders)
            for (z, q), c in self.replaced.items():
                total = total + c * _replace_gaussian_rdp(z, q, orders)
        for (e0, q), c in self.laplace.items():
            total = total + c * _laplace_rdp(e0, q, orders)
        for (e0, q), c in self.laplace_replaced.items():
            total = total + c * _laplace_rdp(_replace_pure_epsilon(e0, q), 1.0, orders)
        return total

    def epsilon(self, delta: float, *, refine: bool = True, with_orders: bool = False):
        """min over the coarse grid, then over ~40 orders around the coarse optimum."""
        return _curve_epsilon(self.rdp, delta, refine=refine, with_orders=with_orders)


def _sum_by_rate(groups: dict, orders: np.ndarray, *, replace_one: bool) -> np.ndarray:
    """``Σ count · RDP`` over ``{(z, q): count}`` at integer orders, one binomial table per q
    (the same values as :func:`_sampled_gaussian_rdp` / :func:`_replace_gaussian_rdp`, key by key)."""
    total = np.zeros_like(orders)
    by_rate: dict[float, list[tuple[float, int]]] = {}
    for (z, q), c in groups.items():
        by_rate.setdefault(q, []).append((z, c))
    for q, items in by_rate.items():
        zs = np.array([z for z, _ in items])
        counts = np.array([c for _, c in items], dtype=float)
        finite = np.isfinite(zs)
        zs, counts = zs[finite], counts[finite]  # z = ∞: no noise is no release
        if zs.size == 0:
            continue
        if q == 1.0:
            rdp = np.multiply.outer(1.0 / zs**2, orders) * (2.0 if replace_one else 0.5)
        elif replace_one:
            doubled = np.concatenate([2.0 * orders, 2.0 * orders - 1.0])
            log_a = _log_a_integer_many(q, zs, tuple(int(a) for a in doubled))
            k = orders.size
            rdp = np.minimum((log_a[:, :k] + log_a[:, k:]) / (2.0 * (orders - 1.0)),
                             np.multiply.outer(2.0 / zs**2, orders))
        else:
            rdp = _log_a_integer_many(q, zs, tuple(int(a) for a in orders)) / (orders - 1.0)
        total = total + counts @ rdp
    return total
