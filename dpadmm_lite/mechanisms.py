"""Noise and clipping: the three primitives every private algorithm in the book is built from.

* :func:`gaussian` — ``N(0, σ² I)`` noise (Xu et al. 2020, Huang et al. 2019, Cyffers et al.
  2023, Liu et al. 2022);
* :func:`l2_laplace` — the ℓ2-Laplace noise with density ``∝ exp(−ζ‖x‖₂)`` on ``R^d`` used by
  Zhang & Zhu (2017, Algorithms 2 and 3);
* :func:`clip` — row-wise ℓ2 clipping ``v · min(1, C/‖v‖)`` (Cyffers et al. 2023, Alg. 1–6).

All three are vectorised: the *last* axis is the vector (dimension ``d``), every leading axis
(agents, samples, iterations) is a batch. A noise scale may be one number or one number per
vector (an array broadcastable to ``shape[:-1]``), e.g. one σ per agent. Randomness comes only
from the ``numpy.random.Generator`` passed in.

What each release guarantees is computed in :mod:`dpadmm_lite.accounting`: the Gaussian
mechanism through its Rényi divergence, the ℓ2-Laplace mechanism as pure ``ε = ζΔ`` DP per
release (for ℓ2-sensitivity Δ, because ``ζ(‖x − a‖ − ‖x‖) ≤ ζ‖a‖`` by the triangle inequality).
"""

from __future__ import annotations

import math

import numpy as np

from . import _validate as check

__all__ = ["gaussian", "l2_laplace", "clip", "l2_laplace_radius_mean"]


def _shape(shape) -> tuple[int, ...]:
    valid = "a non-empty tuple of whole numbers >= 0 (last axis = d)"
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    if not isinstance(shape, (tuple, list)) or any(
            isinstance(s, bool) or not isinstance(s, (int, np.integer)) for s in shape):
        raise TypeError(f"shape must be {valid}, got {shape!r}")
    shape = tuple(int(s) for s in shape)
    if len(shape) == 0 or any(s < 0 for s in shape):
        raise ValueError(f"shape must be {valid}, got {shape!r}")
    size = math.prod(shape)
    check.fits_in_memory("shape", shape, 16.0 * size, what=f"noise of {size:,} numbers")
    return shape


def _generator(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (numpy.random.default_rng(seed)), got {rng!r}")
    return rng


def _per_vector_scale(name: str, value, shape, *, allow_inf: bool) -> np.ndarray:
    """Check a noise scale and return it with a trailing axis, broadcastable to ``shape``."""
    a = check.real_array(name, value)
    if a.dtype == bool:
        raise TypeError(f"{name} must be a number or an array of numbers in [0, ∞], got {value!r}")
    if np.any(np.isnan(a)) or np.any(a < 0) or (not allow_inf and np.any(np.isinf(a))):
        valid = "[0, ∞]" if allow_inf else "[0, ∞)"
        raise ValueError(f"{name} must be in {valid}, got {value!r}")
    try:
        np.broadcast_shapes(a.shape, shape[:-1])
    except ValueError:
        raise ValueError(
            f"{name} must be a number or one value per vector (shape broadcastable to "
            f"{shape[:-1]}), got shape {a.shape}"
        ) from None
    return a[..., None]


def gaussian(rng: np.random.Generator, sigma, shape) -> np.ndarray:
    """Gaussian noise ``N(0, σ² I)`` of the given shape.

    Parameters
    ----------
    rng : numpy.random.Generator
        The run's generator, ``np.random.default_rng(seed)``.
    sigma : float or array_like of float
        Standard deviation σ ≥ 0: a number, or one σ per vector (array broadcastable to
        ``shape[:-1]``, e.g. shape ``(N,)`` for time-varying per-agent noise as in Huang et al.
        2019, eq. 14). ``σ = 0`` returns exact zeros, so a noise-free run is bit-for-bit the
        non-private algorithm.
    shape : int or tuple of int
        Output shape; the last axis is the vector dimension ``d``.

    Returns
    -------
    numpy.ndarray
        Array of ``shape``.

    Examples
    --------
    >>> from dpadmm_lite.mechanisms import gaussian
    >>> rng = np.random.default_rng(0)
    >>> gaussian(rng, np.array([0.0, 1.0]), (2, 3))[0]
    array([0., 0., 0.])
    """
    rng = _generator(rng)
    shape = _shape(shape)
    s = _per_vector_scale("sigma", sigma, shape, allow_inf=False)
    if not np.any(s):
        return np.zeros(shape)
    if np.broadcast_shapes(s.shape, shape) != shape:  # a σ array wider than shape: the broadcast shape
        return s * rng.standard_normal(shape) + 0.0
    out = rng.standard_normal(shape)
    out *= s  # in place: no full-size temporary (the same numbers as s * draw)
    if not np.all(s):
        out += 0.0  # turns σ = 0 rows (−0.0 where the draw was negative) into exact +0
    return out


def l2_laplace(rng: np.random.Generator, zeta, shape) -> np.ndarray:
    """ℓ2-Laplace noise: density ``∝ exp(−ζ‖x‖₂)`` on ``R^d`` (Zhang & Zhu 2017, Alg. 2–3).

    Sampled exactly in polar form: the density depends on ``x`` only through ``r = ‖x‖``, so
    the direction is uniform on the sphere ``S^{d−1}`` and the radius has density
    ``∝ r^{d−1} e^{−ζ r}``, i.e. ``r ~ Gamma(shape=d, scale=1/ζ)`` (mean ``d/ζ``).

    Parameters
    ----------
    rng : numpy.random.Generator
        The run's generator.
    zeta : float or array_like of float
        Rate ζ > 0 (``math.inf`` means no noise): a number or one ζ per vector (broadcastable
        to ``shape[:-1]``, e.g. ζ_p per node).
    shape : int or tuple of int
        Output shape; the last axis is the dimension ``d``.

    Returns
    -------
    numpy.ndarray
        Array of ``shape``; each vector along the last axis is one independent draw.

    Notes
    -----
    One release ``q(D) + noise`` with ℓ2-sensitivity Δ is ``ε = ζΔ`` differentially private
    (pure DP), whatever ``d`` is: the log density ratio at any point is
    ``ζ(‖x − q(D')‖ − ‖x − q(D)‖) ≤ ζ‖q(D) − q(D')‖ ≤ ζΔ``.
    """
    rng = _generator(rng)
    shape = _shape(shape)
    z = _per_vector_scale("zeta", zeta, shape, allow_inf=True)
    if np.any(z == 0):
        raise ValueError(f"zeta must be in (0, ∞], got {zeta!r}")
    if np.all(np.isinf(z)):
        return np.zeros(shape)
    d = shape[-1]
    direction = rng.standard_normal(shape)
    norm = np.linalg.norm(direction, axis=-1, keepdims=True)
    norm = np.where(norm > 0, norm, 1.0)  # probability-zero event, keeps the output finite
    radius = rng.gamma(shape=max(d, 1), scale=1.0, size=shape[:-1] + (1,))
    with np.errstate(divide="ignore"):
        scale = np.where(np.isinf(z), 0.0, 1.0 / z)  # Gamma(d, 1/ζ) = Gamma(d, 1) / ζ
    return (radius * scale) * (direction / norm)


def l2_laplace_radius_mean(zeta, d: int) -> float:
    """``E‖x‖ = d/ζ`` for ℓ2-Laplace noise in dimension ``d`` (radius ~ Gamma(d, 1/ζ)).

    Parameters
    ----------
    zeta : float
        ζ, the rate of the noise density ``∝ exp(−ζ‖x‖)``, > 0 and finite.
    d : int
        Dimension, a whole number ≥ 1.

    Returns
    -------
    float
        ``d/ζ``.
    """
    zeta = check.positive("zeta", zeta)
    d = check.count("d", d)
    return d / zeta


def clip(v, C) -> np.ndarray:
    """Row-wise ℓ2 clipping ``Clip(v, C) = v · min(1, C/‖v‖₂)`` along the last axis.

    Parameters
    ----------
    v : array_like of float
        Array ``(..., d)``; each vector along the last axis is clipped separately (per agent,
        per sample).
    C : float or array_like of float
        Clipping threshold C > 0 (``math.inf`` leaves ``v`` unchanged): a number or one per
        vector (broadcastable to ``v.shape[:-1]``).

    Returns
    -------
    numpy.ndarray
        Array of the same shape with every row of norm ≤ C. Rows already inside the ball are
        returned bit-for-bit unchanged.

    Notes
    -----
    Cyffers et al. (2023), Alg. 1: ``u_{k+1,i} = u_{k,i} + 2λ(Clip(x_{k+1,i} − z_{k+1}, C) + …)``;
    clipping bounds the sensitivity of the clipped term by ``2C`` (replace-one) or ``C``.
    """
    v = check.real_array("v", v)
    if v.ndim == 0:
        raise ValueError("v must have at least one axis (the vector dimension)")
    c = _per_vector_scale("C", C, v.shape, allow_inf=True)
    if np.any(c == 0):
        raise ValueError(f"C must be in (0, ∞], got {C!r}")
    norm = np.linalg.norm(v, axis=-1, keepdims=True)
    factor = np.where(norm > c, c / np.where(norm > 0, norm, 1.0), 1.0)
    return np.where(norm > c, v * factor, v)
