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

A check not answered yet (:func:`not_answered`) asks the student to replace the ``...`` and run
the cell again. The static site has no kernel, so its output carries a second text for the site
("not answered here — open this chapter in JupyterLab to try it"): the book build shows that one
(``tools/bookbuild/stage.py``), and no page asks a reader to run a cell.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

__all__ = ["Feedback", "check", "feedback", "not_answered", "SITE_MIME_KEY"]

#: Key of an output's metadata under which it carries what the static site shows instead:
#: ``{"dpadmm": {"site": {mime type: text}}}`` (read by the book build, ``tools/bookbuild/stage.py``).
SITE_MIME_KEY = "site"


@dataclass(frozen=True)
class Feedback:
    """The outcome of a check: ``ok`` and the teacher's ``message`` (shown as the cell's output).

    ``site_message``, if given, is what the static site shows instead of ``message``: a message
    that asks for something only a kernel can do (run the cell again) has a version for a page
    that cannot run anything. It travels in the output's metadata (:data:`SITE_MIME_KEY`).
    """

    ok: bool
    message: str
    site_message: str | None = None

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return self.message

    def _repr_markdown_(self) -> str:
        return self.message

    def _repr_mimebundle_(self, include=None, exclude=None):
        data = {"text/markdown": self.message, "text/plain": self.message}
        if self.site_message is None:
            return data
        site = {"text/markdown": self.site_message, "text/plain": self.site_message}
        return data, {"dpadmm": {SITE_MIME_KEY: site}}


def not_answered(what: str, todo: str = "replace the `...`") -> Feedback:
    """The Feedback of a check whose answer is still ``...``: in JupyterLab "◻ what: not answered yet —
    ``todo`` and run the cell again"; on the static site, where no cell runs, "◻ what: not answered
    here — open this chapter in JupyterLab to try it"."""
    return Feedback(False, f"◻ {what}: not answered yet — {todo} and run the cell again.",
                    site_message=f"◻ {what}: not answered here — open this chapter in JupyterLab to try it.")


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
        return not_answered(what)
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
