"""Argument checks shared by every module.

Each check raises a ``ValueError`` that names the parameter and its valid range, so a bad
slider value or a typo fails with a sentence, never with a NaN or a traceback from numpy.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np


def positive(name: str, value, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float after checking ``0 < value`` (``< inf`` unless allowed)."""
    v = _real(name, value)
    upper = "∞]" if allow_inf else "∞)"
    if not (v > 0) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name} must be in (0, {upper}, got {value!r}")
    return v


def nonnegative(name: str, value) -> float:
    """Return ``value`` as a float after checking ``0 <= value < inf``."""
    v = _real(name, value)
    if not (0 <= v < math.inf):
        raise ValueError(f"{name} must be in [0, ∞), got {value!r}")
    return v


def open_unit(name: str, value) -> float:
    """Return ``value`` after checking ``0 < value < 1`` (e.g. δ, μ)."""
    v = _real(name, value)
    if not (0 < v < 1):
        raise ValueError(f"{name} must be in (0, 1), got {value!r}")
    return v


def half_open_unit(name: str, value) -> float:
    """Return ``value`` after checking ``0 < value <= 1`` (e.g. a sampling rate)."""
    v = _real(name, value)
    if not (0 < v <= 1):
        raise ValueError(f"{name} must be in (0, 1], got {value!r}")
    return v


def epsilon(value) -> float:
    """ε of a run: a positive number, or ``math.inf`` for the non-private algorithm."""
    return positive("epsilon", value, allow_inf=True)


def count(name: str, value, *, minimum: int = 1) -> int:
    """Return ``value`` as an int after checking it is a whole number ``>= minimum``."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    if not isinstance(value, (Integral, np.integer)):
        if isinstance(value, (Real, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    return int(value)


def finite_array(name: str, value, *, ndim: int | None = None) -> np.ndarray:
    """Return ``value`` as a float array after checking shape rank and that it has no NaN/inf."""
    a = np.asarray(value, dtype=float)
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must contain only finite numbers (found NaN or inf)")
    return a


def choice(name: str, value, options) -> str:
    """Return ``value`` after checking it is one of ``options``."""
    if value not in options:
        raise ValueError(f"{name} must be one of {sorted(options)}, got {value!r}")
    return value


def _real(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    if math.isnan(v):
        raise ValueError(f"{name} must be a real number, got NaN")
    return v
