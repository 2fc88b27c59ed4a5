"""The calibration search: the smallest noise scale whose ε meets a budget."""

from __future__ import annotations

import math

from . import _pld


def _calibrate(spent_at, target: float, start: float, *, tol: float, feasible: float | None = None,
               span: float = 60.0) -> float:
    """:func:`_search_scale` twice: on a 4× coarser PLD grid to 0.5 % (cheap steps), then with the
    accountant's own evaluation from there (two or three steps). ``spent_at(x, points)``."""
    floor = start - span
    rough = _search_scale(lambda x: spent_at(x, _pld.POINTS // 4), target, start, tol=0.005, feasible=feasible,
                          floor=floor)
    if rough < floor:
        return rough
    return _search_scale(lambda x: spent_at(x, _pld.POINTS), target, rough, tol=tol, feasible=feasible, floor=floor)


def _search_scale(spent, target: float, start: float, *, tol: float, feasible: float | None = None,
                  floor: float | None = None) -> float:
    """Smallest ``x`` (a log noise scale) with ``spent(x) ≤ target``, for ``spent`` non-increasing.

    Safeguarded secant iteration on ``g(x) = log(spent(x)/target)`` (``log ε`` is nearly linear
    in ``log σ``, so it converges in a handful of steps), each step aimed a hair past the root
    towards more noise, with bisection of the bracket when a step leaves it. Stops at a feasible
    point spending more than ``e^{−tol}·target`` (or a bracket narrower than ``tol``) and
    returns it, so ``spent(result) ≤ target`` always holds. ``feasible``: a point known to be
    feasible (no step goes beyond it). If the search reaches ``floor`` (default ``start − 60``)
    and is still feasible, that point is returned (the caller decides what it means).
    """
    floor = start - 60.0 if floor is None else floor
    cache: dict[float, float] = {}

    def g(x: float) -> float:
        if x not in cache:
            e = spent(x)
            cache[x] = math.log(e / target) if 0 < e < math.inf else (-math.inf if e <= 0 else math.inf)
        return cache[x]

    lo = hi = None  # largest infeasible, smallest feasible point seen
    x0, g0 = start, g(start)
    x1 = None
    for _ in range(200):
        for x, gx in ((x0, g0),) if x1 is None else ((x1, g(x1)),):
            if gx > 0:
                lo = x if lo is None else max(lo, x)
            elif hi is None or x < hi:
                hi = x
        if hi is not None and (-tol < g(hi) <= 0 or (lo is not None and hi - lo <= tol)):
            return hi
        if hi is not None and lo is None and hi < floor:
            return hi
        if x1 is None:  # first step: the slope of log ε against log σ is about −1 to −2
            gx = g0
            step = gx / 1.5 if math.isfinite(gx) else (4.0 if gx > 0 else -4.0)
            x_new = x0 + max(-4.0, min(4.0, step))
        else:
            g1 = g(x1)
            if math.isfinite(g0) and math.isfinite(g1) and g1 != g0 and x1 != x0:
                x_new = x1 - g1 * (x1 - x0) / (g1 - g0)
                x_new += tol / 4 if x_new > x1 else -tol / 4 if g1 < -tol else tol / 4
                x_new = x1 + max(-4.0, min(4.0, x_new - x1))
            else:
                x_new = x1 + (4.0 if g1 > 0 else -4.0)
            x0, g0 = x1, g1
        if feasible is not None:
            x_new = min(x_new, feasible)
        if lo is not None and hi is not None and not lo < x_new < hi:
            x_new = 0.5 * (lo + hi)
        if x_new in cache:  # no progress (e.g. capped at `feasible`): step by the tolerance
            x_new = (x_new + tol) if cache[x_new] > 0 else (x_new - tol)
        x1 = x_new
    raise RuntimeError("no noise scale meets the budget")  # pragma: no cover
