"""Argument checks shared by every module.

Each check raises a ``ValueError`` that names the parameter and its valid range, so a bad
slider value or a typo fails with a sentence, never with a NaN or a traceback from numpy.
:func:`fits_in_memory` refuses a size whose arrays would not fit in :data:`MEMORY_BUDGET`
before anything is allocated.
"""

from __future__ import annotations

import math
import os
from decimal import Decimal
from numbers import Integral, Real

import numpy as np


def _memory_budget() -> int:
    total = 0
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # not a POSIX system: the fixed cap alone
        pass
    return min(4 * 2**30, total // 2) if total > 0 else 4 * 2**30


#: The most memory (bytes) one call may ask for its results (a run's trace, a batch of noise,
#: a dense matrix): 4 GiB, or half of the machine's memory where that is less.
MEMORY_BUDGET: int = _memory_budget()


def positive(name: str, value, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float after checking ``0 < value`` (``< inf`` unless allowed)."""
    valid = "(0, ∞]" if allow_inf else "(0, ∞)"
    v = _real(name, value, valid)
    if not (v > 0) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name} must be in {valid}, got {value!r}")
    return v


def nonnegative(name: str, value) -> float:
    """Return ``value`` as a float after checking ``0 <= value < inf``."""
    v = _real(name, value, "[0, ∞)")
    if not (0 <= v < math.inf):
        raise ValueError(f"{name} must be in [0, ∞), got {value!r}")
    return v


def open_unit(name: str, value) -> float:
    """Return ``value`` after checking ``0 < value < 1`` (e.g. δ, μ)."""
    v = _real(name, value, "(0, 1)")
    if not (0 < v < 1):
        raise ValueError(f"{name} must be in (0, 1), got {value!r}")
    return v


def half_open_unit(name: str, value) -> float:
    """Return ``value`` after checking ``0 < value <= 1`` (e.g. a sampling rate)."""
    v = _real(name, value, "(0, 1]")
    if not (0 < v <= 1):
        raise ValueError(f"{name} must be in (0, 1], got {value!r}")
    return v


#: The largest finite ε a run or a calibration accepts. Beyond it the noise is negligible (σ/Δ
#: below 0.01) and the accountant's curves leave floating point; ``math.inf`` runs without noise.
MAX_EPSILON = 1e4


def epsilon(value, name: str = "epsilon") -> float:
    """ε of a run or a calibration: in (0, :data:`MAX_EPSILON`], or ``math.inf`` (no noise)."""
    v = positive(name, value, allow_inf=True)
    if MAX_EPSILON < v < math.inf:
        raise ValueError(f"{name} must be in (0, {MAX_EPSILON:g}] or math.inf (no noise; beyond {MAX_EPSILON:g} "
                         f"the noise is negligible), got {value!r}")
    return v


#: The window of a positive scale setting of an algorithm (ρ, a clipping bound, a step size, a
#: learning rate, a noise level …). Its reciprocal, its square and its product with two other
#: settings stay inside floating point (1e-300 … 1e300 with room to spare), while every value the
#: book, the tuning grids and the live panels use (ρ ∈ [1e-3, 1e2], clips 0.1 … 1, steps 0.5 …) is
#: far inside it. Beyond it a run would divide by an underflowed zero or return inf/NaN.
SCALE_RANGE = (1e-12, 1e12)
#: The smallest δ a run accepts: log(1/δ) = 230 keeps every calibration inside floating point
#: (at δ = 1e-310, subnormal, the Gaussian calibrations leave it); practical δ are above 1e-30.
MIN_DELTA = 1e-100
#: The smallest Poisson sampling rate a run draws with: a participation schedule draws geometric
#: gaps of mean 1/q, 16,384 at a time, as 64-bit positions; at q = 1e-9 a block spans ~1.6e13
#: positions, far below 2⁶³ ≈ 9.2e18, while q = 1e-300 overflows and the draw never ends.
MIN_SAMPLING_RATE = 1e-9


def scale(name: str, value, *, allow_zero: bool = False) -> float:
    """A positive scale setting (or 0 where ``allow_zero``) in :data:`SCALE_RANGE`, as a float."""
    lo, hi = SCALE_RANGE
    v = nonnegative(name, value) if allow_zero else positive(name, value)
    if (v != 0 or not allow_zero) and not (lo <= v <= hi):
        within = f"{{0}} ∪ [{lo:g}, {hi:g}]" if allow_zero else f"[{lo:g}, {hi:g}]"
        raise ValueError(f"{name} must be in {within} (outside it the run's arithmetic leaves floating point), "
                         f"got {value!r}")
    return v


def delta(value, name: str = "delta") -> float:
    """δ of a run: in [:data:`MIN_DELTA`, 1)."""
    v = _real(name, value, f"[{MIN_DELTA:g}, 1)")
    if not (MIN_DELTA <= v < 1):
        raise ValueError(f"{name} must be in [{MIN_DELTA:g}, 1) (below it the noise calibration leaves floating "
                         f"point), got {value!r}")
    return v


def sampling_rate(value, name: str = "sampling_rate") -> float:
    """A Poisson sampling rate a run draws with: in [:data:`MIN_SAMPLING_RATE`, 1]."""
    v = _real(name, value, f"[{MIN_SAMPLING_RATE:g}, 1]")
    if not (MIN_SAMPLING_RATE <= v <= 1):
        raise ValueError(f"{name} must be in [{MIN_SAMPLING_RATE:g}, 1] (below it the participation schedule's "
                         f"geometric draws overflow), got {value!r}")
    return v


def count(name: str, value, *, minimum: int = 1) -> int:
    """Return ``value`` as an int after checking it is a whole number ``>= minimum``."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    if not isinstance(value, (Integral, np.integer)):
        if isinstance(value, (Real, np.floating, Decimal)) and _whole(value):
            value = int(value)
        else:
            raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    return int(value)


def _whole(value) -> bool:
    try:
        v = float(value)
    except (ValueError, OverflowError):
        return False
    return math.isfinite(v) and v.is_integer() and v == value


def fits_in_memory(name: str, value, nbytes: float, *, what: str, limit: int | None = None) -> None:
    """Refuse ``value`` of parameter ``name`` when ``what`` would take ``nbytes`` > :data:`MEMORY_BUDGET`.

    ``limit`` (optional) is the largest value that fits, named in the message as the valid range.
    """
    if nbytes > MEMORY_BUDGET:
        valid = "small enough to fit in memory" if limit is None else f"a whole number in [1, {limit:,}] here"
        raise ValueError(f"{name} must be {valid}: {what} would need {nbytes / 2**30:,.3g} GiB, more than the "
                         f"{MEMORY_BUDGET / 2**30:.3g} GiB one call may use; got {_short(value)}")


def _short(value) -> str:
    """``repr(value)``, with huge whole numbers in scientific notation."""
    if isinstance(value, (Integral, np.integer)) and abs(int(value)) >= 10**15:
        return f"{float(value):.3g}"
    return repr(value)


def finite_array(name: str, value, *, ndim: int | None = None) -> np.ndarray:
    """Return ``value`` as a float array after checking shape rank and that it has no NaN/inf."""
    a = real_array(name, value)
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


def real_array(name: str, value) -> np.ndarray:
    """``value`` as a float array, or a TypeError/ValueError naming ``name`` (never numpy's own).

    A lone ``True``/``False`` is refused (a flag where a number belongs); boolean arrays pass.
    """
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a real number or an array of them, got {value!r}")
    try:
        raw = np.asarray(value)
    except ValueError:  # ragged nested lists
        raise ValueError(f"{name} must be a rectangular array of real numbers (rows of equal length)") from None
    if raw.dtype.kind not in "biuf":  # strings, complex numbers, objects, dates
        if raw.dtype.kind == "O":
            try:
                return raw.astype(float)
            except (TypeError, ValueError):
                pass
        raise TypeError(f"{name} must be an array of real numbers, got {'an array of ' + str(raw.dtype) if raw.ndim else repr(value)}")
    return raw.astype(float, copy=False)


def _real(name: str, value, valid: str = "") -> float:
    within = f" in {valid}" if valid else ""
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer, Decimal)):
        raise ValueError(f"{name} must be a real number{within}, got {value!r}")
    try:
        v = float(value)
    except (ValueError, OverflowError):  # a signalling Decimal NaN; a Fraction beyond the float range
        raise ValueError(f"{name} must be a real number{within}, got {value!r}") from None
    if math.isnan(v):
        raise ValueError(f"{name} must be a real number{within}, got NaN")
    return v
