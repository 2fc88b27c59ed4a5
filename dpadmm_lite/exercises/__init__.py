"""Automatic checks for the chapter exercises.

A check never raises on a wrong or missing answer: it prints what is right or wrong in one
sentence and returns ``True``/``False``, so a student's notebook keeps running.
"""

from __future__ import annotations

import numpy as np


def check(what: str, answer, expected, *, rtol: float = 1e-6, atol: float = 0.0) -> bool:
    """Compare a student's ``answer`` with ``expected`` (numbers or arrays) and say how it went."""
    if answer is None or answer is Ellipsis:
        print(f"◻ {what}: not answered yet — replace the `...` and run the cell again.")
        return False
    try:
        a = np.asarray(answer, dtype=float)
        e = np.asarray(expected, dtype=float)
        ok = a.shape == e.shape and bool(np.allclose(a, e, rtol=rtol, atol=atol))
    except (TypeError, ValueError):
        print(f"✗ {what}: expected a number or an array, got {type(answer).__name__}.")
        return False
    if ok:
        print(f"✓ {what}: correct.")
    elif a.shape != e.shape:
        print(f"✗ {what}: expected shape {e.shape}, got {a.shape}.")
    else:
        print(f"✗ {what}: not quite — off by {np.max(np.abs(a - e)):.3g} (tolerance {rtol:g} relative).")
    return ok
