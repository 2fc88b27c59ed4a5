"""Laplacian smoothing ``Q_ν⁻¹ v`` (Osher et al. 2018; Liu et al. 2022, Sec. III-A), by FFT.

Liu et al. smooth the noisy gradient of their private stochastic ADMMs with the operator

    ``Q_ν = I − νΔ``,   Δ the 1-D periodic second-difference matrix (−2 on the diagonal, 1 on
    the two cyclic off-diagonals),

so that ``Q_ν`` has ``1 + 2ν`` on its diagonal and ``−ν`` next to it and in the two corners
(the matrix printed in their Sec. III-A). ``Q_ν`` is circulant, so the discrete Fourier
transform diagonalises it: its eigenvalues are

    ``λ_k = 1 + 2ν − 2ν cos(2πk/d)``,   k = 0, …, d − 1,

and ``Q_ν⁻¹ v = ifft(fft(v) / λ)`` (their eq. 2, written there as ``1 − ν·fft(φ)`` with
``φ = [−2, 1, 0, …, 0, 1]``: the same numbers, since ``fft(φ)_k = −2 + 2cos(2πk/d)``). Every
``λ_k ≥ 1``, so smoothing never amplifies a frequency; it damps the high ones, and the low
frequency ``k = 0`` (the mean of the coordinates) passes unchanged.

Public functions
----------------
* :func:`laplacian_smooth` — ``Q_ν⁻¹ v`` along the last axis of a batch: a product with the cached
  dense inverse (itself built by the FFT) up to d = 512, a real FFT above.
* :func:`eigenvalues`, :func:`operator_norm` — the spectrum of ``Q_ν`` and ``‖Q_ν‖₂``.
* :func:`second_difference`, :func:`smoothing_matrix` — Δ and ``Q_ν`` as dense matrices (for
  teaching and for tests; the algorithms never form them).
* :func:`noise_variance`, :func:`variance_limit` — per-coordinate variance of smoothed white
  noise ``Q_ν⁻¹u``, ``u ~ N(0, σ²I)``: ``σ² · mean_k λ_k⁻²``, and its ``d → ∞`` limit
  ``(1 + 2ν)/(1 + 4ν)^{3/2}``.
* :func:`tau`, :func:`tau_closed_form` — the paper's ``τ = mean_k λ_k⁻¹`` (eq. 12, Theorems 3–6:
  ``E‖u‖²_{Q_ν⁻¹} = τ d σ²``) and its closed form of Remark 1.

Reference: Y. Liu, J. Geng, F. Shang, W. An, H. Liu, Q. Zhu, W. Feng, "Laplacian smoothing
stochastic ADMMs with differential privacy guarantees", IEEE TIFS 17, 2022; S. Osher et al.,
"Laplacian smoothing gradient descent", arXiv:1806.06317.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import scipy.fft

from . import _validate as check

__all__ = ["laplacian_smooth", "eigenvalues", "operator_norm", "second_difference", "smoothing_matrix",
           "noise_variance", "variance_limit", "tau", "tau_closed_form"]

#: Batches with at least this many numbers are transformed with two FFT threads.
_THREADED_SIZE = 1 << 18

#: Vectors up to this length are smoothed by the dense inverse (below): for one short vector a product
#: with the cached inverse is several times faster than scipy.fft's dispatch (natively and in the
#: browser), and DP-SADMM smooths one vector per step.
_DENSE_D = 512


def _nu(nu) -> float:
    """ν as a float, or a ValueError that names it."""
    try:
        return check.nonnegative("nu", nu)
    except ValueError:
        raise ValueError(f"nu (the smoothing strength ν) must be in [0, ∞), got {nu!r}") from None


def _dimension(d, *, dense: bool = False) -> int:
    """d as an int, refused (naming ``d``) when its d-vectors, or d × d matrices, would not fit in memory."""
    d = check.count("d", d)
    per = 40.0 * d if dense else 40.0  # a handful of temporaries
    check.fits_in_memory("d", d, per * d, what=f"{'d × d matrices' if dense else 'vectors'} of d = {d:,}",
                         limit=math.isqrt(check.MEMORY_BUDGET // 40) if dense else check.MEMORY_BUDGET // 40)
    return d


@lru_cache(maxsize=64)
def _inverse_half_spectrum(d: int, nu: float) -> np.ndarray:
    """``1/λ_k`` for the rfft frequencies k = 0 … ⌊d/2⌋ (cached, read-only)."""
    k = np.arange(d // 2 + 1)
    inverse = 1.0 / (1.0 + 2.0 * nu - 2.0 * nu * np.cos(2.0 * np.pi * k / d))
    inverse.setflags(write=False)
    return inverse


@lru_cache(maxsize=32)
def _inverse_matrix(d: int, nu: float) -> np.ndarray:
    """``Q_ν⁻¹`` as a dense d × d matrix (cached, read-only): the FFT path applied to the identity.
    ``Q_ν`` is symmetric, so ``v @ Q_ν⁻¹`` smooths every row of ``v``."""
    spectrum = scipy.fft.rfft(np.eye(d), axis=-1)
    spectrum *= _inverse_half_spectrum(d, nu)
    inverse = scipy.fft.irfft(spectrum, n=d, axis=-1)
    inverse.setflags(write=False)
    return inverse


def laplacian_smooth(v, nu: float) -> np.ndarray:
    """Laplacian smoothing ``Q_ν⁻¹ v`` of every vector along the last axis of ``v``.

    Parameters
    ----------
    v : array_like of float
        Array ``(..., d)``, d ≥ 1: one vector, or a batch of them (iterations, samples, agents)
        on the leading axes. All vectors are smoothed at once: one product with the cached dense
        ``Q_ν⁻¹`` for d ≤ 512, one real FFT above.
    nu : float
        Smoothing strength ν ≥ 0. ``ν = 0`` returns ``v`` itself, as a float array (``Q_0 = I``),
        so an algorithm with ν = 0 is exactly the unsmoothed one.

    Returns
    -------
    numpy.ndarray
        ``Q_ν⁻¹ v``, same shape as ``v``: the solution ``x`` of ``Q_ν x = v`` for each vector,
        exact (to rounding) for every d — including d = 1 (``Q_ν = 1``) and d = 2.

    Notes
    -----
    ``Q_ν x = v`` reads ``(1 + 2ν)x_i − ν(x_{i−1} + x_{i+1}) = v_i`` with indices modulo d. By the
    convolution theorem ``x = irfft(rfft(v) / λ)`` with ``λ_k = 1 + 2ν − 2ν cos(2πk/d)`` on the
    ``⌊d/2⌋ + 1`` non-negative frequencies (Liu et al. 2022, eq. 2): ``O(d log d)`` per vector, used
    above d = 512; below, ``Q_ν⁻¹`` itself (built once by that FFT, cached) multiplies the batch,
    ``O(d²)`` per vector but without the FFT's fixed cost per call.

    Examples
    --------
    >>> from dpadmm_lite.smoothing import laplacian_smooth
    >>> laplacian_smooth(np.array([0.0, 0.0, 3.0, 0.0, 0.0]), 1.0).round(3)
    array([0.273, 0.545, 1.364, 0.545, 0.273])
    >>> float(laplacian_smooth(np.ones(7), 5.0).sum())  # the mean passes unchanged
    7.0
    """
    nu = _nu(nu)
    v = check.real_array("v", v)
    if v.ndim == 0 or v.shape[-1] < 1:
        raise ValueError(f"v must have a last axis of length d >= 1 (the vector dimension), got shape {v.shape}")
    return smooth_checked(v, nu)


def smooth_checked(v: np.ndarray, nu: float) -> np.ndarray:
    """:func:`laplacian_smooth` of a float array ``v`` whose last axis is non-empty and a float ν ≥ 0
    that the caller has already checked (an algorithm's inner loop smooths thousands of small
    vectors: the checks were a third of a DP-SADMM step)."""
    if nu == 0.0:
        return v
    d = v.shape[-1]
    if d <= _DENSE_D:  # Q_ν⁻¹ is symmetric: v @ Q_ν⁻¹ smooths every vector along the last axis
        return v @ _inverse_matrix(d, nu)
    inverse = _inverse_half_spectrum(d, nu)
    workers = 2 if v.size >= _THREADED_SIZE else 1
    spectrum = scipy.fft.rfft(v, axis=-1, workers=workers)
    np.multiply(spectrum, inverse, out=spectrum)
    return scipy.fft.irfft(spectrum, n=d, axis=-1, overwrite_x=True, workers=workers)


def eigenvalues(d: int, nu: float) -> np.ndarray:
    """The eigenvalues ``λ_k = 1 + 2ν − 2ν cos(2πk/d)`` of ``Q_ν``, k = 0 … d − 1 (all ≥ 1).

    Parameters
    ----------
    d : int
        Dimension, a whole number ≥ 1 (refused when its vectors would not fit in memory).
    nu : float
        ν, the smoothing strength, in [0, ∞).

    Returns
    -------
    numpy.ndarray
        ``λ_k``, shape ``(d,)``.
    """
    d, nu = _dimension(d), _nu(nu)
    return 1.0 + 2.0 * nu - 2.0 * nu * np.cos(2.0 * np.pi * np.arange(d) / d)


def operator_norm(d: int, nu: float) -> float:
    """``‖Q_ν‖₂ = max_k λ_k``: ``1 + 4ν`` for even d, a little less for odd d, 1 for d = 1.

    Liu et al.'s strongly convex step ``η_{t+1} = 2γ‖Q_ν‖₂/(μ(t + 1))`` (Algorithm 2) uses it.

    Parameters
    ----------
    d : int
        Dimension, a whole number ≥ 1 (refused when its vectors would not fit in memory).
    nu : float
        ν, the smoothing strength, in [0, ∞).

    Returns
    -------
    float
        ``max_k λ_k``.
    """
    return float(eigenvalues(d, nu).max())


def second_difference(d: int) -> np.ndarray:
    """The periodic second-difference matrix Δ (d × d): ``(Δx)_i = x_{i−1} − 2x_i + x_{i+1}``, indices mod d.

    Built as ``−2I + P + Pᵀ`` with P the cyclic shift, so the small cases are right too:
    d = 1 gives ``[0]`` and d = 2 gives ``[[−2, 2], [2, −2]]``.

    Parameters
    ----------
    d : int
        Dimension, a whole number ≥ 1 (refused when d × d matrices would not fit in memory).

    Returns
    -------
    numpy.ndarray
        Δ, shape ``(d, d)``.
    """
    d = _dimension(d, dense=True)
    shift = np.roll(np.eye(d), 1, axis=1)
    return -2.0 * np.eye(d) + shift + shift.T


def smoothing_matrix(d: int, nu: float) -> np.ndarray:
    """``Q_ν = I − νΔ`` as a dense d × d matrix (Liu et al. 2022, Sec. III-A).

    Parameters
    ----------
    d : int
        Dimension, a whole number ≥ 1 (refused when d × d matrices would not fit in memory).
    nu : float
        ν, the smoothing strength, in [0, ∞).

    Returns
    -------
    numpy.ndarray
        ``Q_ν``, shape ``(d, d)``.
    """
    return np.eye(_dimension(d, dense=True)) - _nu(nu) * second_difference(d)


def noise_variance(d: int, nu: float, sigma: float = 1.0) -> float:
    """Per-coordinate variance of ``Q_ν⁻¹u`` for white noise ``u ~ N(0, σ²I_d)``.

    ``Cov(Q_ν⁻¹u) = σ²Q_ν⁻²`` is circulant, so every coordinate has the same variance, the
    mean of the diagonal: ``σ² · (1/d) Σ_k λ_k⁻²``. It decreases in ν (from σ² at ν = 0) and
    tends to ``σ² (1 + 2ν)/(1 + 4ν)^{3/2}`` as d grows (:func:`variance_limit`).

    Parameters
    ----------
    d : int
        Dimension, a whole number ≥ 1 (refused when its vectors would not fit in memory).
    nu : float
        ν, the smoothing strength, in [0, ∞).
    sigma : float, default 1.0
        σ of the white noise, in [0, ∞).

    Returns
    -------
    float
        The per-coordinate variance.
    """
    sigma = check.nonnegative("sigma", sigma)
    return float(sigma**2 * np.mean(eigenvalues(d, nu) ** -2.0))


def variance_limit(nu: float, sigma: float = 1.0) -> float:
    """``lim_{d→∞}`` of :func:`noise_variance`: ``σ² (1 + 2ν)/(1 + 4ν)^{3/2}``.

    The mean of ``λ(θ)⁻²`` over ``θ ∈ [0, 2π)`` with ``λ(θ) = a − b cos θ``, ``a = 1 + 2ν``,
    ``b = 2ν``: ``(1/2π)∫ dθ/(a − b cos θ)² = a/(a² − b²)^{3/2}`` and ``a² − b² = 1 + 4ν``.

    Parameters
    ----------
    nu : float
        ν, the smoothing strength, in [0, ∞).
    sigma : float, default 1.0
        σ of the white noise, in [0, ∞).

    Returns
    -------
    float
        ``σ² (1 + 2ν)/(1 + 4ν)^{3/2}``.
    """
    nu = _nu(nu)
    sigma = check.nonnegative("sigma", sigma)
    return sigma**2 * (1 + 2 * nu) / (1 + 4 * nu) ** 1.5


def tau(d: int, nu: float) -> float:
    """The paper's ``τ = (1/d) Σ_k 1/λ_k`` (Liu et al. 2022, eq. 12 and Theorems 3–6).

    ``E‖u‖²_{Q_ν⁻¹} = τ d σ²`` for ``u ~ N(0, σ²I)``: the factor by which smoothing improves the
    noise term of the utility bounds (τ = 1 at ν = 0, τ < 1 for ν > 0).

    Parameters
    ----------
    d : int
        Dimension, a whole number ≥ 1 (refused when its vectors would not fit in memory).
    nu : float
        ν, the smoothing strength, in [0, ∞).

    Returns
    -------
    float
        τ, in (0, 1].
    """
    return float(np.mean(1.0 / eigenvalues(d, nu)))


def tau_closed_form(d: int, nu: float) -> float:
    """Remark 1 of Liu et al. (after Osher et al.): ``τ = (1 + p^d) / ((1 − p^d)√(4ν + 1))``.

    Here ``p = (1 + 2ν − √(1 + 4ν)) / (2ν) ∈ (0, 1)`` is the root of ``νp² − (1 + 2ν)p + ν = 0``
    inside the unit disc (the paper only says ``0 < p < 1``); τ → ``1/√(4ν + 1)`` as d → ∞.
    ν = 0 gives τ = 1.

    Parameters
    ----------
    d : int
        Dimension, a whole number ≥ 1 (refused when its vectors would not fit in memory).
    nu : float
        ν, the smoothing strength, in [0, ∞).

    Returns
    -------
    float
        τ (1 at ν = 0).
    """
    d, nu = _dimension(d), _nu(nu)
    if nu == 0.0:
        return 1.0
    root = math.sqrt(1 + 4 * nu)
    p = (1 + 2 * nu - root) / (2 * nu)
    pd = p**d
    return (1 + pd) / ((1 - pd) * root)
