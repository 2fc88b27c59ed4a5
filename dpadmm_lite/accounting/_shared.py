"""Small helpers the papers' modules share."""

from __future__ import annotations

import numpy as np

from .. import _validate as check


def _alpha_array(alpha) -> np.ndarray:
    a = check.real_array("alpha", alpha)
    if np.any(np.isnan(a)) or np.any(a <= 1):
        raise ValueError(f"alpha (Rényi order) must be in (1, ∞), got {alpha!r}")
    return a


def _ret(x):
    return float(x) if np.ndim(x) == 0 else x
