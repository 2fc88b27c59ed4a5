"""Argument checks shared by every module.

Each check raises a ``ValueError`` that names the parameter and its valid range, so a bad
slider value or a typo fails with a sentence, never with a NaN or a traceback from numpy.
:func:`fits_in_memory` refuses a size whose arrays would not fit in :data:`MEMORY_BUDGET`
before anything is allocated.
"""

from __future__ import annotations

import math
import os
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
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
        raise ValueError(f"{name} must be a real number{within}, got {value!r}")
    v = float(value)
    if math.isnan(v):
        raise ValueError(f"{name} must be a real number{within}, got NaN")
    return v
