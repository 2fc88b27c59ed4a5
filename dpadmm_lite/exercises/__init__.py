"""Automatic checks for the chapter exercises, answering like a teacher.

A check never raises on a wrong or missing answer: it returns a :class:`Feedback` whose text
says what is right or wrong and, when wrong, gives a hint — never a bare ``False``. ``Feedback``
is truthy exactly when the answer is right, and a notebook cell that ends with the check shows
its message (nothing else), so a student's notebook keeps running.

A check function is usually one :func:`check` call with the typical mistakes of that exercise::

    def check_sigma(answer):
        return check("σ of the Gaussian mechanism", answer, expected_sigma(),
                     praise="you calibrated the classic Gaussian mechanism to its replace-one sensitivity.",
                     mistakes={
                         "half the expected value: you used the add/remove sensitivity Δ = c/n; one record "
                         "*replaced* moves the mean gradient by up to 2c/n": lambda e: e / 2,
                     },
                     hint="σ = Δ·√(2 ln(1.25/δ))/ε with Δ the sensitivity of what is released.")

Mistakes are recognised by recomputing each typical wrong answer from the expected one, so the
message names the mistake the student actually made; the expected value is never printed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

__all__ = ["Feedback", "check", "feedback"]


@dataclass(frozen=True)
class Feedback:
    """The outcome of a check: ``ok`` and the teacher's ``message`` (shown as the cell's output)."""

    ok: bool
    message: str

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return self.message

    def _repr_markdown_(self) -> str:
        return self.message


def feedback(what: str, ok: bool, detail: str, *, hint: str = "") -> Feedback:
    """A :class:`Feedback` with the book's ✓ / ✗ wording: ``detail`` says what was shown or what is wrong."""
    if ok:
        return Feedback(True, f"✓ {what}: correct — {detail}")
    text = f"✗ {what}: {detail}"
    if hint:
        text += f" Hint: {hint}"
    return Feedback(False, text)


def check(what: str, answer, expected, *, rtol: float = 1e-6, atol: float = 0.0, praise: str = "",
          mistakes: Mapping[str, Callable] | None = None, hint: str = "") -> Feedback:
    """Compare a student's ``answer`` with ``expected`` (numbers or arrays) and say how it went.

    Parameters
    ----------
    what
        The quantity asked for, as the exercise names it.
    answer, expected
        The student's answer and the right one (same shape).
    rtol, atol
        Tolerances of the comparison.
    praise
        What a right answer shows (completes "✓ what: correct — …").
    mistakes
        Typical mistakes: description → function of ``expected`` giving that wrong answer. A
        wrong answer that matches one is told its description.
    hint
        Said after any wrong answer (never the solution itself).
    """
    if answer is None or answer is Ellipsis:
        return Feedback(False, f"◻ {what}: not answered yet — replace the `...` and run the cell again.")
    try:
        a = np.asarray(answer, dtype=float)
        e = np.asarray(expected, dtype=float)
    except (TypeError, ValueError):
        return feedback(what, False, f"expected a number or an array, got {type(answer).__name__}.", hint=hint)
    if a.shape != e.shape:
        if a.size == e.size:
            detail = f"expected shape {e.shape}, got {a.shape} — the right numbers, maybe, but arranged differently."
        else:
            detail = f"expected shape {e.shape}, got {a.shape}."
        return feedback(what, False, detail, hint=hint)
    if not np.all(np.isfinite(a)):
        return feedback(what, False, "your answer contains NaN or infinity.", hint=hint)
    if np.allclose(a, e, rtol=rtol, atol=atol):
        return feedback(what, True, praise or "well done.")
    for description, wrong in (mistakes or {}).items():
        try:
            w = np.asarray(wrong(e), dtype=float)
        except Exception:  # a mistake that cannot be formed for this answer is simply not it
            continue
        if w.shape == a.shape and np.allclose(a, w, rtol=max(rtol, 1e-9), atol=atol):
            return feedback(what, False, f"{description}.", hint=hint)
    scale = float(np.max(np.abs(e))) or 1.0
    off = float(np.max(np.abs(a - e)))
    ratio = ""
    if e.size == 1 and float(e) != 0 and float(a) != 0:
        ratio = f" (your value is {float(a) / float(e):.3g} times the expected one)"
    return feedback(what, False, f"not quite — off by {off / scale:.2g} relative{ratio}.", hint=hint)
