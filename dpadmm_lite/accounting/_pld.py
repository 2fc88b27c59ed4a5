"""Privacy loss distributions: the tight (ε, δ) of a ledger, in milliseconds.

A private module of :mod:`dpadmm_lite.accounting`, which decides when to use it.

Background
----------
For the output distributions P = M(D), Q = M(D') of a mechanism on neighbouring datasets, the
*privacy loss* is ``L = log(P(o)/Q(o))`` with ``o ~ P``, and its law is the privacy loss
distribution (PLD). The pair is (ε, δ)-indistinguishable exactly when
``δ ≥ H(ε) = E[(1 − e^{ε−L})₊]`` (the hockey-stick divergence; loss mass at +∞ counts in full).
The losses of independent releases add up, so the PLD of a composition is the convolution of
the releases' PLDs (Meiser & Mohammadi 2018; Sommer, Meiser & Mohammadi 2019), which an FFT
computes at once for thousands of releases (Koskela, Jälkö & Honkela 2020). Each release is
represented by a *dominating pair* (Zhu, Dong & Wang 2022), whose hockey-stick curve is at least
the mechanism's for every ε, and composing dominating pairs dominates the composition:

* **Gaussian** with ``μ = Δ/σ``: ``N(μ, 1)`` vs ``N(0, 1)``, ``L ~ N(μ²/2, μ²)``,
  ``H_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)``; unsampled releases merge into one μ = √(Σμ_i²).
* **Poisson-subsampled Gaussian** (rate q, noise multiplier z = σ/Δ, add/remove neighbours).
  *Remove*: P = (1 − q)N(0, z²) + qN(1, z²) against Q = N(0, z²), whose curve is
  ``H(ε) = q·H_{1/z}(log(1 + (e^ε − 1)/q))`` for ``ε > log(1 − q)`` and ``1 − e^ε`` below;
  *add*: the same pair reversed, ``H(ε) = (1 − (1 − q)e^ε)·H_{1/z}(−log(1 + (e^{−ε} − 1)/q))`` for
  ``ε < −log(1 − q)`` and 0 above. As in dp-accounting, both directions are composed separately
  and the larger ε is reported.
* **Poisson-subsampled Gaussian, replace-one neighbours** (per-record bound C, ``m = C/σ``):
  P = qN(m, 1) + (1 − q)N(0, 1) against Q = qN(−m, 1) + (1 − q)N(0, 1) (dp-accounting's REPLACE_ONE
  pair). Its loss is increasing in x and equals ε at ``x_ε = (ε/2 + asinh(α sinh(ε/2)))/m``,
  ``α = (1 − q)e^{m²/2}/q``, so ``H(ε) = P(X > x_ε) − e^ε Q(X > x_ε)`` in closed form. The pair is
  symmetric (x ↦ −x swaps P and Q): it enters both directions unchanged. Recording the same
  release as add/remove with sensitivity 2C overstates ε by 3–600 % (q = 0.01, σ/C from 8 to 1).
* **Pure ε₀-DP** (the ℓ2-Laplace releases): binary randomized response with ε₀, which dominates
  every ε₀-DP mechanism (Kairouz, Oh & Viswanath 2015): ``H(ε) = (e^{ε₀} − e^ε)₊/(1 + e^{ε₀})``.

Never below the truth
---------------------
* Discretisation is the pessimistic *connect-the-dots* construction of Doroshenko, Ghazi,
  Kamath, Kumar & Manurangsi (2022): on a grid of step h, the discrete PLD whose hockey-stick
  curve interpolates the exact one linearly in ``e^ε`` between grid points — above the exact
  curve everywhere, since ``H`` is convex in ``e^ε`` — and whose mass at +∞ is ``H`` at the top of
  the grid. Its error is second order in h (the privacy-buckets rounding is first order).
* Composition is one FFT of length ≥ the window ``[lo, hi]`` of the composed loss; the window
  comes from Chernoff bounds on the *discretised* PMFs (exact moment generating functions,
  bounded blockwise), and the composed mass above ``hi`` (which the circular convolution would
  fold onto small losses) is bounded by the same Chernoff bound and added to δ in full. Mass
  below ``lo`` folds onto larger losses, which can only increase δ.
* FFT rounding: negative entries of the result are set to zero and the size of the most negative
  one, times the length, is added to δ.
* ε solves ``H(ε) = δ`` exactly on the discrete PLD (piecewise in ``e^ε``) and is rounded up.

Speed: each distinct release costs one vector of exact hockey-stick values (``log_ndtr``) and
one real FFT; equal releases are grouped and composed by raising their FFT to the power of the
count (repeated squaring). Only grid points within ``_CORE_T`` noise standard deviations of a
release's noise means carry mass at every step; in the far tails every ``_STRIDE``-th point does
(the same pessimistic construction on fewer points; ε moves by at most 3e-5, relative, and only
upwards, over the accuracy grids), which cuts the curve evaluations of a ledger of many distinct
releases about fivefold. The Chernoff window bounds are evaluated for all releases at once. About 2¹⁴ grid points per direction give ε within 10⁻³ (relative;
typically 10⁻⁵–10⁻⁴) of the limit, in a few milliseconds. The "add" direction is skipped when
its largest composed loss cannot reach the "remove" ε, or when a 4× coarser (still pessimistic)
pass shows it below.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

import numpy as np
from scipy import fft, special

__all__ = ["Releases", "group", "epsilon", "distribution", "gaussian_hockey_stick", "sampled_hockey_stick",
           "replace_hockey_stick", "replace_pure_epsilon", "pure_hockey_stick"]

#: Grid points across the composed window (per direction): error below 1e-3 relative (typically
#: 1e-5–1e-4, growing with the number of releases), a few ms.
POINTS = 2**14
#: Share of δ given away to truncation: tail mass above the window and mass moved to +∞.
_TAIL_SHARE = 1e-4
#: Above this window width (in nats) the PLD is not attempted (the RDP bound is used).
_MAX_WIDTH = 1e4
#: At most this many distinct releases per ledger are discretised; beyond, releases are grouped
#: on a geometric grid of noise levels and each group takes its members' least noise (and
#: largest sampling rate, largest pure ε₀) — a pessimistic grouping.
MAX_PIECES = 128
#: Grid points within _CORE_T noise standard deviations of the mean of a release's noise get their
#: own mass; in the far tails beyond, every _STRIDE-th point does (see ``_connect_the_dots``).
_CORE_T = 4.0
_STRIDE = 16
_LAMBDAS = np.logspace(-3.0, 3.5, 27)  # Chernoff orders (per nat of loss)
_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(96)
_GH_W = _GH_W / _GH_W.sum()


# --------------------------------------------------------------------------------------------
# Exact hockey-stick curves H(ε) of the dominating pairs (vectorised over ε)
# --------------------------------------------------------------------------------------------


def gaussian_hockey_stick(eps, mu: float) -> np.ndarray:
    """``H_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)`` for every real ε (Balle & Wang 2018).

    Computed as ``e^{la}(1 − e^{ε + lb − la})`` with ``la, lb`` the two ``log Φ`` terms, so the
    far tail keeps its relative precision.
    """
    eps = np.asarray(eps, dtype=float)
    finite = np.where(np.isfinite(eps), eps, 0.0)
    la = special.log_ndtr(-finite / mu + mu / 2)
    lb = special.log_ndtr(-finite / mu - mu / 2)
    value = np.exp(la) * -np.expm1(np.minimum(finite + lb - la, 0.0))
    return np.where(np.isfinite(eps), value, np.where(eps > 0, 0.0, 1.0))


def sampled_hockey_stick(eps, z: float, q: float, direction: str) -> np.ndarray:
    """Hockey-stick curve of the Poisson-subsampled Gaussian (``"remove"`` or ``"add"``)."""
    eps = np.asarray(eps, dtype=float)
    mu = 1.0 / z
    log1mq = math.log1p(-q)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if direction == "remove":  # H = q·H_μ(log(1 + (e^ε − 1)/q)) for ε > log(1 − q)
            inner = _shifted_log(eps, q)
            inside = eps > log1mq
            value = q * gaussian_hockey_stick(np.where(inside, inner, 0.0), mu)
            return np.where(inside, value, -np.expm1(np.minimum(eps, 0.0)))
        # add: H = (1 − (1 − q)e^ε)·H_μ(−log(1 + (e^{−ε} − 1)/q)) for ε < −log(1 − q)
        inside = eps < -log1mq
        inner = -_shifted_log(-eps, q)
        factor = -np.expm1(eps + log1mq)
        value = factor * gaussian_hockey_stick(np.where(inside, inner, 0.0), mu)
        return np.where(inside, np.maximum(value, 0.0), 0.0)


def _shifted_log(x: np.ndarray, q: float) -> np.ndarray:
    """``log(1 + (e^x − 1)/q)`` without overflow (``x − log q + log1p(−(1 − q)e^{−x})`` for x > 0)."""
    positive = np.maximum(x, 0.0)
    big = positive - math.log(q) + np.log1p(-(1 - q) * np.exp(-positive))
    small = np.log1p(np.expm1(np.minimum(x, 0.0)) / q)
    return np.where(x > 0, big, small)


def replace_loss(x, z: float, q: float) -> np.ndarray:
    """Privacy loss ``log(P(x)/Q(x))`` of the replace-one pair at ``x``, in units of σ (``P = q·N(m, 1) +
    (1 − q)·N(0, 1)``, ``Q = q·N(−m, 1) + (1 − q)·N(0, 1)``, ``m = C/σ = 1/z``):
    ``log(1 − q + q e^{mx − m²/2}) − log(1 − q + q e^{−mx − m²/2})``, increasing in x."""
    m = 1.0 / z
    log1mq = math.log1p(-q) if q < 1 else -math.inf
    x = np.asarray(x, dtype=float)
    return (np.logaddexp(log1mq, math.log(q) + m * x - m * m / 2)
            - np.logaddexp(log1mq, math.log(q) - m * x - m * m / 2))


def _replace_threshold(eps: np.ndarray, m: float, q: float) -> np.ndarray:
    """The x with ``replace_loss(x) = ε``: ``(ε/2 + asinh(α sinh(ε/2)))/m``, ``α = (1 − q)e^{m²/2}/q``
    (``u = e^{mx}`` solves a quadratic), with ``asinh(e^t)`` in logs so nothing overflows."""
    if q == 1.0:
        return eps / (2 * m)
    log_alpha = m * m / 2 + math.log1p(-q) - math.log(q)
    half = np.abs(eps) / 2
    with np.errstate(divide="ignore"):
        t = log_alpha + half + np.log(-np.expm1(-2 * half)) - math.log(2.0)  # log(α sinh|ε/2|)
    top = np.maximum(t, 0.0)
    asinh = np.where(t > 0, top + np.log1p(np.sqrt(1 + np.exp(-2 * top))), np.arcsinh(np.exp(np.minimum(t, 0.0))))
    return (eps / 2 + np.sign(eps) * asinh) / m


def _replace_curve(z: float, q: float):
    """:func:`replace_hockey_stick` as a function of finite ε only, with the constants computed once
    (the PLD evaluates it on thousands of grid points per release)."""
    m = 1.0 / z
    log_q, log1mq = math.log(q), math.log1p(-q)
    log_alpha = m * m / 2 + log1mq - log_q

    def curve(eps: np.ndarray) -> np.ndarray:
        half = np.abs(eps) / 2
        with np.errstate(divide="ignore"):
            t = log_alpha + half + np.log(-np.expm1(-2 * half)) - math.log(2.0)  # log(α sinh|ε/2|)
        if t.size and t.max() > 700:  # pragma: no cover - ε or m huge: the overflow-free path
            return replace_hockey_stick(eps, z, q)
        x = (eps / 2 + np.copysign(np.arcsinh(np.exp(t)), eps)) / m
        common = log1mq + special.log_ndtr(-x)
        log_p = np.logaddexp(log_q + special.log_ndtr(m - x), common)
        log_ratio = np.logaddexp(log_q + special.log_ndtr(-m - x), common) - log_p
        return np.exp(log_p) * -np.expm1(np.minimum(eps + log_ratio, 0.0))

    return curve


def replace_hockey_stick(eps, z: float, q: float) -> np.ndarray:
    """Hockey-stick curve of the Poisson-subsampled Gaussian with replace-one neighbours.

    The pair ``P = q·N(m, 1) + (1 − q)·N(0, 1)``, ``Q = q·N(−m, 1) + (1 − q)·N(0, 1)`` (``m = C/σ =
    1/z``): its loss is increasing in x, so ``H(ε) = P(X > x_ε) − e^ε Q(X > x_ε)`` with ``x_ε`` the
    point where the loss is ε (:func:`replace_loss`). The pair is symmetric (x ↦ −x swaps P and Q),
    so one direction is the whole story. As in :func:`gaussian_hockey_stick` the two tails are
    taken in logs and subtracted with ``expm1``.
    """
    eps = np.asarray(eps, dtype=float)
    m = 1.0 / z
    finite = np.where(np.isfinite(eps), eps, 0.0)
    x = _replace_threshold(finite, m, q)
    log1mq = math.log1p(-q) if q < 1 else -math.inf
    common = log1mq + special.log_ndtr(-x)  # the N(0) component, in both
    log_p = np.logaddexp(math.log(q) + special.log_ndtr(m - x), common)
    log_q = np.logaddexp(math.log(q) + special.log_ndtr(-m - x), common)
    value = np.exp(log_p) * -np.expm1(np.minimum(finite + log_q - log_p, 0.0))
    return np.where(np.isfinite(eps), value, np.where(eps > 0, 0.0, 1.0))


def replace_pure_epsilon(e0: float, q: float) -> float:
    """ε of a pure release (ε₀-DP for adding or removing one record) under Poisson sampling at
    rate q and replace-one neighbours: ``ε₀ + log(1 + q(e^{ε₀} − 1)) − log(1 + (1 − q)(e^{ε₀} − 1))``.

    With ``A, A'`` the output densities with the replaced record (old, new) sampled and ``B``
    without it, ``A ≤ e^{ε₀}B`` and ``B ≤ e^{ε₀}A'``, so ``(qA + (1 − q)B)/(qA' + (1 − q)B)`` is
    at most the value above (its maximum over the constraints; ``2ε₀`` at q = 1, about
    ``2q·sinh ε₀`` for small q, against ``log(1 + q(e^{2ε₀} − 1))`` when recorded as add/remove
    with twice the sensitivity).
    """
    em1 = math.expm1(e0)
    return e0 + math.log1p(q * em1) - math.log1p((1 - q) * em1)


def pure_hockey_stick(eps, e0: float) -> np.ndarray:
    """Randomized response with ε₀: ``(e^{ε₀} − e^ε)₊/(1 + e^{ε₀})`` for ε ≥ −ε₀, ``1 − e^ε`` below."""
    eps = np.asarray(eps, dtype=float)
    above = -np.expm1(np.minimum(eps - e0, 0.0)) / (1.0 + math.exp(-e0))
    return np.where(eps >= -e0, above, -np.expm1(eps))


# --------------------------------------------------------------------------------------------
# A ledger, reduced to what the PLD needs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Releases:
    """A ledger with the sensitivities divided out.

    Attributes
    ----------
    gaussian_mu2
        ``Σ count·(Δ/σ)²`` over Gaussian releases on the full data: they compose exactly into
        one Gaussian with ``μ = √gaussian_mu2`` (μ-GDP).
    sampled
        ``(z, q, count)``: Poisson-subsampled Gaussian releases, noise multiplier ``z = σ/Δ``.
    pure
        ``(ε₀, q, count)``: pure ε₀-DP releases (ℓ2-Laplace with ``ε₀ = ζΔ``), sampled at rate q.
    replaced
        ``(z, q, count)``: Poisson-subsampled Gaussian releases with replace-one neighbours,
        ``z = σ/C`` for the per-record bound C (the pair of :func:`replace_hockey_stick`).
    pure_replaced
        ``(ε₀, q, count)``: pure releases with replace-one neighbours, ``ε₀ = ζC`` (each one is
        :func:`replace_pure_epsilon` ``(ε₀, q)``-DP).
    """

    gaussian_mu2: float = 0.0
    sampled: tuple[tuple[float, float, int], ...] = ()
    pure: tuple[tuple[float, float, int], ...] = ()
    grouped: str = field(default="", compare=False)
    replaced: tuple[tuple[float, float, int], ...] = ()
    pure_replaced: tuple[tuple[float, float, int], ...] = ()

    def scaled(self, factor: float) -> "Releases":
        """Every noise ``factor`` times larger (σ·factor, ζ/factor)."""
        return Releases(self.gaussian_mu2 / factor**2,
                        tuple((z * factor, q, c) for z, q, c in self.sampled),
                        tuple((e0 / factor, q, c) for e0, q, c in self.pure), self.grouped,
                        replaced=tuple((z * factor, q, c) for z, q, c in self.replaced),
                        pure_replaced=tuple((e0 / factor, q, c) for e0, q, c in self.pure_replaced))

    @property
    def count(self) -> int:
        return sum(c for *_, c in self.sampled + self.pure + self.replaced + self.pure_replaced)

    @property
    def only_gaussian(self) -> bool:
        """Only unsampled Gaussian releases (one μ-GDP mechanism: its exact curve is known)."""
        return not (self.sampled or self.pure or self.replaced or self.pure_replaced)


def group(gaussian_mu2: float, sampled: dict, pure: dict, *, max_pieces: int = MAX_PIECES,
          replaced: dict | None = None, pure_replaced: dict | None = None) -> Releases:
    """Group releases; beyond ``max_pieces`` distinct ones of a kind, round to a geometric grid.

    Rounding is pessimistic: noise multipliers down, sampling rates and pure ε₀ up (less noise,
    more sampling and larger ε₀ each dominate — the other mechanism is a post-processing; for
    the replace-one pair too: smaller q mixes in fresh N(0) draws, more noise is added noise and
    a rescaling). Replace-one releases are grouped apart from add/remove ones.
    """
    notes = []

    def rounded(items: dict, rounder, what: str, how: str):
        items = sorted(items.items())
        if len(items) <= max_pieces:
            return items
        out, ratio = rounder(items, max_pieces)
        notes.append(f"{len(items)} distinct {what} grouped in {len(out)} " + how.format(ratio - 1))
        return out

    least_noise = "(noise levels within {:.2%}; each group takes its least noise)"
    sampled_items = rounded(sampled, _round_sampled, "sampled releases", least_noise)
    pure_items = rounded(pure, _round_pure, "pure-DP releases", "(each group takes its largest ε₀)")
    replaced_items = rounded(replaced or {}, _round_sampled, "sampled replace-one releases", least_noise)
    pure_replaced_items = rounded(pure_replaced or {}, _round_pure, "pure-DP replace-one releases",
                                  "(each group takes its largest ε₀)")
    return Releases(float(gaussian_mu2), tuple((z, q, c) for (z, q), c in sampled_items),
                    tuple((e, q, c) for (e, q), c in pure_items), "; ".join(notes),
                    replaced=tuple((z, q, c) for (z, q), c in replaced_items),
                    pure_replaced=tuple((e, q, c) for (e, q), c in pure_replaced_items))


def _buckets(noise: np.ndarray, rate: np.ndarray, max_pieces: int) -> tuple[np.ndarray, float]:
    """Bucket index of each release on a geometric grid of (noise, rate), the finest grid
    (ratio 1.0005, growing) with at most ``max_pieces`` occupied buckets."""
    log_noise = np.log(noise / noise.min())
    log_rate = np.log(rate / rate.min())
    ratio = 1.0005
    while True:
        step = math.log(ratio)
        noise_cell = np.floor(log_noise / step + 1e-9).astype(np.int64)
        rate_cell = np.floor(log_rate / step + 1e-9).astype(np.int64)
        # one integer key per (noise, rate) cell: a 1-D unique instead of a row-wise one
        _, inverse = np.unique(noise_cell * (int(rate_cell.max()) + 1) + rate_cell, return_inverse=True)
        inverse = inverse.ravel()
        if inverse.max() + 1 <= max_pieces:
            return inverse, ratio
        ratio = ratio**1.25


def _round_sampled(items, max_pieces):
    z = np.array([k[0] for k, _ in items])
    q = np.array([k[1] for k, _ in items])
    c = np.array([v for _, v in items])
    bucket, ratio = _buckets(1.0 / z, q, max_pieces)
    n = bucket.max() + 1
    z_min = np.full(n, np.inf)
    q_max = np.zeros(n)
    np.minimum.at(z_min, bucket, z)  # the least noise of the bucket …
    np.maximum.at(q_max, bucket, q)  # … and its largest sampling rate
    counts = np.bincount(bucket, weights=c, minlength=n).astype(int)
    return [((float(a), float(b)), int(k)) for a, b, k in zip(z_min, q_max, counts)], ratio


def _round_pure(items, max_pieces):
    e = np.array([k[0] for k, _ in items])
    q = np.array([k[1] for k, _ in items])
    c = np.array([v for _, v in items])
    bucket, ratio = _buckets(e, q, max_pieces)
    n = bucket.max() + 1
    e_max, q_max = np.zeros(n), np.zeros(n)
    np.maximum.at(e_max, bucket, e)
    np.maximum.at(q_max, bucket, q)
    counts = np.bincount(bucket, weights=c, minlength=n).astype(int)
    return [((float(a), float(b)), int(k)) for a, b, k in zip(e_max, q_max, counts)], ratio


# --------------------------------------------------------------------------------------------
# Pieces: one kind of release in one direction (curve, loss support, moments, count)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Piece:
    curve: Callable[[np.ndarray], np.ndarray]
    low: float  # losses below have negligible mass (they are rounded up to the grid's start)
    high: float  # H(high) ≤ the piece's tail share: mass above goes to +∞
    mean: float
    var: float
    count: int
    core: tuple[float, float] | None = None  # losses discretised at every grid point (tails: every _STRIDE-th)


def _tail_t(tail: float) -> float:
    """t with ``Φ̄(t) ≤ e^{−t²/2}/2 ≤ tail``."""
    return math.sqrt(2.0 * math.log(0.5 / tail)) if tail < 0.5 else 0.0


def _gaussian_piece(mu: float, tail: float) -> _Piece:
    t = _tail_t(tail)
    m = mu * mu / 2
    return _Piece(lambda e: gaussian_hockey_stick(e, mu), m - mu * (t + 2.0), m + mu * t, m, mu * mu, 1,
                  (m - mu * _CORE_T, m + mu * _CORE_T))


@lru_cache(maxsize=512)
def _sampled_moments(z: float, q: float, direction: str) -> tuple[float, float]:
    """Mean and variance of the loss under P (Gauss–Hermite; for the window estimate only)."""
    log1mq, logq = math.log1p(-q), math.log(q)
    if direction == "remove":
        parts = [(0.0, 1.0 - q, 1.0), (1.0, q, 1.0)]
    else:
        parts = [(0.0, 1.0, -1.0)]
    m = m2 = 0.0
    for centre, weight, sign in parts:
        x = centre + z * _GH_X
        loss = sign * np.logaddexp(log1mq, logq + (2 * x - 1) / (2 * z * z))
        m += weight * float(_GH_W @ loss)
        m2 += weight * float(_GH_W @ (loss * loss))
    return m, max(m2 - m * m, 0.0)


def _sampled_piece(z: float, q: float, count: int, direction: str, tail: float) -> _Piece:
    mu = 1.0 / z
    t = _tail_t(tail)
    mean, var = _sampled_moments(z, q, direction)
    if direction == "remove":
        x = -z * (t + 2.0)  # P(x < −z(t + 2)) is far below the tail share (and L → log(1 − q) only as x → −∞)
        low = float(np.logaddexp(math.log1p(-q), math.log(q) + (2 * x - 1) / (2 * z * z)))
        t_q = _tail_t(tail / q)  # H ≤ q·Φ̄(·) above
        high = float(np.logaddexp(math.log1p(-q), math.log(q) + mu * mu / 2 + mu * t_q))
    else:
        # the largest loss is −log(1 − q), reached only as x → −∞: truncate where P(x < −zt) ≤ tail
        high = min(-math.log1p(-q), -float(np.logaddexp(math.log1p(-q), math.log(q) + (-2 * z * t - 1) / (2 * z * z))))
        x = z * (t + 2.0)  # P(x > z(t + 2)) is far below the tail share
        low = -float(np.logaddexp(math.log1p(-q), math.log(q) + (2 * x - 1) / (2 * z * z)))
    # the core: the noise within _CORE_T standard deviations of either component's mean
    ends = np.logaddexp(math.log1p(-q), math.log(q) + (2 * np.array([-z * _CORE_T, 1 + z * _CORE_T]) - 1) / (2 * z * z))
    core = (float(ends[0]), float(ends[1])) if direction == "remove" else (-float(ends[1]), -float(ends[0]))
    return _Piece(lambda e: sampled_hockey_stick(e, z, q, direction), low, max(high, low), mean, var, count, core)


@lru_cache(maxsize=512)
def _replace_moments(z: float, q: float) -> tuple[float, float]:
    """Mean and variance of the replace-one loss under P (Gauss–Hermite; for the window estimate only)."""
    m = m2 = 0.0
    for centre, weight in ((0.0, 1.0 - q), (1.0 / z, q)):
        loss = replace_loss(centre + _GH_X, z, q)
        m += weight * float(_GH_W @ loss)
        m2 += weight * float(_GH_W @ (loss * loss))
    return m, max(m2 - m * m, 0.0)


def _replace_piece(z: float, q: float, count: int, tail: float) -> _Piece:
    m = 1.0 / z
    t = _tail_t(tail)
    # P(X < −(t + 2)) ≤ Φ(−t − 2) is far below the tail share (both components have mean ≥ 0);
    # above x_hi, P(X > x_hi) ≤ q·Φ̄(x_hi − m) + (1 − q)·Φ̄(x_hi) ≤ tail, and H ≤ P(X > x_ε)
    x_hi = max(m + _tail_t(tail / (2 * q)), _tail_t(tail / 2))
    low, high, *core = replace_loss(np.array([-(t + 2.0), x_hi, -_CORE_T, m + _CORE_T]), z, q).tolist()
    mean, var = _replace_moments(z, q)
    return _Piece(_replace_curve(z, q), low, max(high, low), mean, var, count, tuple(core))


def _pure_piece(e0: float, q: float, count: int, *, replace_one: bool = False) -> _Piece:
    if replace_one:
        e0 = replace_pure_epsilon(e0, q)
    elif q < 1:
        e0 = math.log1p(q * math.expm1(e0))  # amplification by Poisson sampling of a pure-DP release
    mean = e0 * math.tanh(e0 / 2)
    return _Piece(lambda e: pure_hockey_stick(e, e0), -e0, e0, mean, max(e0 * e0 - mean * mean, 0.0), count)


def _pieces(releases: Releases, direction: str, tail: float) -> list[_Piece]:
    """The dominating pairs of one direction; the replace-one and pure pairs are symmetric and
    enter both directions unchanged."""
    n = 1 + len(releases.sampled) + len(releases.pure) + len(releases.replaced) + len(releases.pure_replaced)
    pieces = []
    if releases.gaussian_mu2 > 0:
        pieces.append(_gaussian_piece(math.sqrt(releases.gaussian_mu2), tail / n))
    for z, q, c in releases.sampled:
        pieces.append(_sampled_piece(z, q, c, direction, tail / (n * c)))
    for z, q, c in releases.replaced:
        pieces.append(_replace_piece(z, q, c, tail / (n * c)))
    for e0, q, c in releases.pure:
        pieces.append(_pure_piece(e0, q, c))
    for e0, q, c in releases.pure_replaced:
        pieces.append(_pure_piece(e0, q, c, replace_one=True))
    return pieces


# --------------------------------------------------------------------------------------------
# Discretisation, composition, ε
# --------------------------------------------------------------------------------------------


def _connect_the_dots(curve, ia: int, ib: int, h: float, core: tuple[int, int] | None = None,
                      stride: int | None = None) -> tuple[np.ndarray, float]:
    """Pessimistic PMF on the losses ``ia·h … ib·h`` and its mass at +∞ (Doroshenko et al. 2022).

    With ``H_i`` the exact curve at ``ε_i = i·h``: mass ``1 − H_a + (H_{a+1} − H_a)/(e^h − 1)`` at
    the first point, ``((H_{i+1} − H_i) − e^h (H_i − H_{i−1}))/(e^h − 1)`` inside,
    ``(H_b − H_{b−1})/(e^{−h} − 1)`` at the last, ``H_b`` at +∞.

    ``core = (ic, jc)``: only the grid points ``ic … jc`` carry mass at every point; outside, every
    ``stride``-th point (default :data:`_STRIDE`). The construction is the same on any set of
    points ``ε_0 < … < ε_k`` — with ``g_j = (H_{j+1} − H_j)/(e^{ε_{j+1} − ε_j} − 1)`` the masses are
    ``1 − H_0 + g_0``, ``g_j − e^{ε_j − ε_{j−1}} g_{j−1}`` and ``−e^{ε_k − ε_{k−1}} g_{k−1}`` — and as
    pessimistic (the curve is convex in ``e^ε``); the error, second order in the spacing, stays
    where the far tails carry little mass, and the curve is evaluated at a fraction of the points.
    """
    stride = _STRIDE if stride is None else stride
    if core is not None and stride > 1:
        ic, jc = max(core[0], ia), min(core[1], ib)
        if ic < jc and (ic - ia) + (ib - jc) > 4 * stride:
            index = np.concatenate([np.arange(ia, ic, stride), np.arange(ic, jc + 1),
                                    np.arange(jc + stride, ib, stride), [ib] if jc < ib else []]).astype(np.int64)
            return _connect_the_dots_on(curve, index, ia, ib, h)
    d = curve(np.arange(ia, ib + 1) * h)
    d = np.maximum.accumulate(np.clip(d, 0.0, 1.0)[::-1])[::-1]  # non-increasing, rounding up
    if d.size == 1:
        return np.array([1.0 - d[0]]), float(d[0])
    dd = np.diff(d)
    em1 = math.expm1(h)
    p = np.empty_like(d)
    p[0] = 1.0 - d[0] + dd[0] / em1
    p[1:-1] = (dd[1:] - dd[:-1] * math.exp(h)) / em1
    p[-1] = dd[-1] / math.expm1(-h)
    return np.maximum(p, 0.0), float(d[-1])


def _connect_the_dots_on(curve, index: np.ndarray, ia: int, ib: int, h: float) -> tuple[np.ndarray, float]:
    """:func:`_connect_the_dots` on the grid points ``index`` (sorted, from ``ia`` to ``ib``): the
    PMF on ``ia … ib`` (zero between the points) and the mass at +∞."""
    d = curve(index * h)
    d = np.maximum.accumulate(np.clip(d, 0.0, 1.0)[::-1])[::-1]  # non-increasing, rounding up
    gap = np.diff(index) * h
    g = np.diff(d) / np.expm1(gap)
    p = np.empty_like(d)
    p[0] = 1.0 - d[0] + g[0]
    p[1:-1] = g[1:] - np.exp(gap[:-1]) * g[:-1]
    p[-1] = -math.exp(gap[-1]) * g[-1]
    out = np.zeros(ib - ia + 1)
    out[index - ia] = np.maximum(p, 0.0)
    return out, float(d[-1])


def _chernoff_orders(tables, lam: np.ndarray, log_tail: float) -> tuple[np.ndarray, np.ndarray]:
    """Orders λ (one sign, index units) and upper bounds on the composed ``log E[e^{λS}]``.

    A first pass over all of ``lam`` uses the coarse blocks of ``tables`` (about 64 per
    release: cheap, looser); a second pass evaluates the bound with blocks of ``64 // count``
    near the best order of the first. Every value returned is a valid bound; the caller takes
    the best.
    """
    rough_table, fine_table = tables
    rough = _log_mgf(rough_table, lam)
    with np.errstate(invalid="ignore"):
        score = (rough + log_tail) / np.abs(lam)
    if not np.any(np.isfinite(score)):
        return lam, rough
    best = lam[int(np.nanargmin(np.where(np.isfinite(score), score, np.nan)))]
    fine = best * np.array([0.55, 0.75, 1.0, 1.35, 1.8])
    return np.concatenate([lam, fine]), np.concatenate([rough, _log_mgf(fine_table, fine)])


@dataclass(frozen=True)
class _Blocks:
    """The releases' PMFs merged in blocks, all in one flat array (segment k: release k)."""

    p: np.ndarray  # block masses
    base: np.ndarray  # index (relative to the release's first loss) of each block's first point
    top: np.ndarray  # block size − 1, per block
    starts: np.ndarray  # first block of each release
    lengths: np.ndarray
    offset: np.ndarray  # the release's first loss index ``ia``
    count: np.ndarray


def _blocks(parts, size_of) -> _Blocks | None:
    """Merge each release's PMF in blocks of ``size_of(pmf, count)`` points, trimmed to the blocks
    with mass (None if a release has no finite mass)."""
    ps, sizes, firsts, lengths, offsets, counts = [], [], [], [], [], []
    for p, ia, _, c in parts:
        b = size_of(p, c)
        if b > 1:
            p = np.add.reduceat(p, np.arange(0, p.size, b))
        nonzero = np.flatnonzero(p)
        if nonzero.size == 0:
            return None
        first, last = int(nonzero[0]), int(nonzero[-1])
        ps.append(p[first:last + 1])
        sizes.append(b)
        firsts.append(first)
        lengths.append(last + 1 - first)
        offsets.append(ia)
        counts.append(c)
    lengths = np.array(lengths)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    size = np.repeat(np.array(sizes, dtype=float), lengths)
    block = np.arange(lengths.sum()) - np.repeat(starts - np.array(firsts), lengths)  # block index in its release
    return _Blocks(np.concatenate(ps), size * block, size - 1.0, starts, lengths, np.array(offsets, dtype=float),
                   np.array(counts, dtype=float))


def _mgf_tables(parts) -> tuple[_Blocks | None, _Blocks | None]:
    """Coarse blocks (≤ ~64 a release, at most 64 points each) and fine ones (``64 // count`` points)."""
    return (_blocks(parts, lambda p, c: min(64, max(1, p.size // 64))),
            _blocks(parts, lambda p, c: max(1, 64 // max(c, 1))))


def _log_mgf(table: _Blocks | None, lam: np.ndarray) -> np.ndarray:
    """Upper bounds on ``Σ_k count_k · log Σ_i p_{k,i} e^{λ(ia_k + i)}`` (index units), for λ of one sign.

    Each block's mass sits at its top (λ > 0) or bottom (λ < 0) index; with the fine blocks the
    composed bound is loose by at most ``e^{64|λ|}`` (|λ| per index is ~1e-3 at the orders that
    matter). Sums are taken relative to each release's extreme block (nothing overflows) and
    exponents below −80 are raised to −80 (an upper bound, and fast). All releases at once.
    """
    if table is None:  # a release without finite mass
        return np.full(lam.shape, -np.inf)
    up = lam[0] > 0
    position = table.base + table.top if up else table.base
    ref = position[table.starts + table.lengths - 1] if up else position[table.starts]
    relative = position - np.repeat(ref, table.lengths)
    terms = np.exp(np.maximum(np.multiply.outer(lam, relative), -80.0)) * table.p
    sums = np.add.reduceat(terms, table.starts, axis=1)
    return (table.count * (np.multiply.outer(lam, table.offset + ref) + np.log(sums))).sum(axis=1)


@dataclass
class _Composed:
    pmf: np.ndarray  # finite losses (lo … hi)·h
    lo: int
    h: float
    extra: float  # δ added for mass at +∞, above the window and FFT rounding
    below: float  # bound on the mass below the window


def _compose(pieces: list[_Piece], delta: float, upper: float | None, points: int) -> _Composed | None:
    tail = _TAIL_SHARE * delta
    mean = sum(pc.count * pc.mean for pc in pieces)
    spread = math.sqrt(sum(pc.count * pc.var for pc in pieces))
    floor_ = sum(pc.count * pc.low for pc in pieces)
    ceiling = sum(pc.count * pc.high for pc in pieces)
    lo_est = max(floor_, mean - 14 * spread)
    hi_est = min(ceiling, upper if upper is not None else mean + 14 * spread)
    width = hi_est - lo_est
    if not math.isfinite(width) or width > _MAX_WIDTH:
        return None
    if width <= 0:
        width = max(ceiling - floor_, 1e-9)
    for _attempt in range(2):
        h = width / points
        parts = []
        for pc in pieces:
            ia, ib = math.floor(pc.low / h), math.ceil(pc.high / h)
            if ib - ia > 64 * points:
                return None
            core = None if pc.core is None else (math.floor(pc.core[0] / h), math.ceil(pc.core[1] / h))
            p, inf_mass = _connect_the_dots(pc.curve, ia, max(ib, ia + 1), h, core)
            if not (np.all(np.isfinite(p)) and math.isfinite(inf_mass)):
                return None  # pragma: no cover - the curves are finite for every finite ε
            parts.append((p, ia, inf_mass, pc.count))
        top = sum(c * (ia + p.size - 1) for p, ia, _, c in parts)
        bottom = sum(c * ia for p, ia, _, c in parts)
        log_tail = math.log(1.0 / tail)
        tables = _mgf_tables(parts)
        lam_up, log_up = _chernoff_orders(tables, _LAMBDAS * h, log_tail)
        lam_down, log_down = _chernoff_orders(tables, -_LAMBDAS * h, log_tail)
        with np.errstate(invalid="ignore"):
            up = (log_up + log_tail) / lam_up
            down = (log_down + log_tail) / lam_down
        up, down = up[np.isfinite(up)], down[np.isfinite(down)]
        hi = top if up.size == 0 else int(min(top, math.ceil(up.min())))
        lo = bottom if down.size == 0 else int(max(bottom, math.floor(down.max())))
        lo = min(lo, hi)
        if hi - lo + 1 <= max(4 * points, 2**16):
            break
        width *= (hi - lo + 1) / (2 * points)  # the estimate was far off: coarser grid, once
    above = 0.0 if hi >= top else float(np.exp(np.min(np.minimum(log_up - lam_up * (hi + 1), 0.0))))
    below = 0.0 if lo <= bottom else float(np.exp(np.min(np.minimum(log_down - lam_down * (lo - 1), 0.0))))
    size = hi - lo + 1
    n = _fft_length(size)
    spectrum = None
    log_finite = 0.0
    for p, ia, inf_mass, c in parts:
        buffer = np.zeros(n)
        start = ia % n
        if p.size <= n - start:
            buffer[start:start + p.size] = p
        elif p.size <= n:  # wraps around once
            buffer[start:] = p[:n - start]
            buffer[:p.size - (n - start)] = p[n - start:]
        else:
            np.add.at(buffer, (ia + np.arange(p.size)) % n, p)
        s = _power(fft.rfft(buffer), c)
        spectrum = s if spectrum is None else spectrum * s
        log_finite += c * math.log1p(-min(inf_mass, 1.0 - 1e-300))
    out = fft.irfft(spectrum, n)
    rounding = float(max(-out.min(), 0.0))
    out = np.maximum(np.roll(out, -(lo % n))[:size], 0.0)
    extra = -math.expm1(log_finite) + above + 4.0 * n * max(rounding, 1e-18)
    return _Composed(out, lo, h, extra, below)


def _fft_length(size: int) -> int:
    """The cheapest FFT length ≥ size among ``2^k·{1, 3, 5}`` (pocketfft is fastest on these: 5·2^12
    takes 70 % of the time of 3^9, which ``next_fast_len`` picks for 19 683)."""
    return min(f << max(0, math.ceil(math.log2(size / f))) for f in (1, 3, 5))


def _power(s: np.ndarray, count: int) -> np.ndarray:
    """``s**count`` for an integer count, by repeated squaring (5× faster than complex ``**``)."""
    result = None
    while True:
        if count & 1:
            result = s if result is None else result * s
        count >>= 1
        if not count:
            return result
        s = s * s


def _discounted_tails(p: np.ndarray, h: float) -> np.ndarray:
    """``out[k] = Σ_{j > k} p_j e^{−(j−k)h}``, by cumulative sums over chunks of ≤ 600 nats."""
    out = np.empty_like(p)
    chunk = max(1, int(600.0 / h))
    carry = 0.0  # Σ_{j ≥ end} p_j e^{−(j−end)h}
    end = p.size
    while end > 0:
        start = max(0, end - chunk)
        k = np.arange(end - start, dtype=float)  # k − start
        weighted = p[start:end] * np.exp(-h * k)
        after = np.cumsum(weighted[::-1])[::-1]  # Σ_{j ≥ k} p_j e^{−(j−start)h}
        strictly_after = np.append(after[1:], 0.0)
        out[start:end] = strictly_after * np.exp(h * k) + carry * np.exp(-h * (end - start - k))
        carry = after[0] + carry * math.exp(-h * (end - start))
        end = start
    return out


def _solve(comp: _Composed, delta: float) -> float:
    """Smallest ε ≥ 0 with ``Σ_{l_j > ε} p_j (1 − e^{ε − l_j}) + extra ≤ δ`` (rounded up)."""
    p, lo, h, extra = comp.pmf, comp.lo, comp.h, comp.extra
    if extra >= delta:
        return math.inf
    size = p.size
    reverse = p[::-1]
    after = np.cumsum(reverse)[::-1]  # after[k] = Σ_{j ≥ k} p_j
    decay = _discounted_tails(p, h)  # Σ_{j > k} p_j e^{−(j−k)h}
    after_next = np.append(after[1:], 0.0)
    at_grid = after_next - decay + extra  # δ at ε = (lo + k)h
    k0 = max(0, -lo)  # first grid point with loss ≥ 0
    if k0 >= size:
        return 0.0
    if at_grid[k0] <= delta:
        if lo > 0:  # ε may lie below the window: the mass below it is at most comp.below
            rest = after[0] + extra + comp.below - delta
            if rest <= 0:
                return 0.0
            return max(0.0, lo * h + math.log(rest / (p[0] + decay[0]))) * (1 + 1e-12) + 1e-15
        return 0.0
    k = k0 + int(np.nonzero(at_grid[k0:] > delta)[0][-1])
    if k >= size - 1:
        return math.inf
    # on ((lo + k)h, (lo + k + 1)h]: δ(ε) = after_next[k] − e^{ε − (lo+k)h}·decay[k] + extra
    step = math.log((after_next[k] + extra - delta) / decay[k])
    return ((lo + k) * h + min(max(step, 0.0), h)) * (1 + 1e-12) + 1e-15


def distribution(releases: Releases, delta: float, direction: str = "remove", *, upper: float | None = None,
                 points: int = POINTS) -> tuple[np.ndarray, np.ndarray, float] | None:
    """The composed (discretised, pessimistic) PLD in one direction: losses, their probabilities
    and the probability of an infinite loss plus the other additions to δ (or None, as in
    :func:`epsilon`)."""
    comp = _compose(_pieces(releases, direction, _TAIL_SHARE * delta), delta, upper, points)
    if comp is None:
        return None
    return (comp.lo + np.arange(comp.pmf.size)) * comp.h, comp.pmf, comp.extra


def epsilon(releases: Releases, delta: float, *, upper: float | None = None, points: int = POINTS) -> float | None:
    """ε at δ of the composition of ``releases`` (an upper bound on the true ε), or None.

    ``upper`` is an estimate of where the composed loss distribution ends (e.g. the RDP bound at
    a tiny δ); it only sets the grid step. None is returned when the PLD cannot be computed at a
    sensible size (losses spread over more than 10⁴ nats): use another bound.
    """
    directions = ("remove", "add") if releases.sampled else ("remove",)
    tail = _TAIL_SHARE * delta
    worst = 0.0
    for direction in directions:
        pieces = _pieces(releases, direction, tail)
        if not pieces:
            return 0.0
        if direction == "add":
            # usually dominated by "remove": the add losses stay below Σ count·high (up to the
            # mass at +∞, which is < δ), or a coarse (still pessimistic) pass settles it
            if sum(pc.count * pc.high for pc in pieces) <= worst:
                continue
            coarse = _compose(pieces, delta, upper, points // 4)
            if coarse is not None and _solve(coarse, delta) <= worst:
                continue
        comp = _compose(pieces, delta, upper, points)
        if comp is None:
            return None
        worst = max(worst, _solve(comp, delta))
    return worst
