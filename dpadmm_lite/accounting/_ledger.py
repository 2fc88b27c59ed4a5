"""The unified ledger: ε of every release a run recorded, and calibration of its noise."""

from __future__ import annotations

import functools
import math
from dataclasses import replace
from typing import Iterable

import numpy as np

from .. import _validate as check
from ..privacy import PrivacyEvent, PrivacyGuarantee
from . import _pld
from ._bounds import GAUSSIAN_Z_FLOOR, GDP, PURE_EPSILON_CAP, SAMPLING_RATE_FLOOR, _bounds, _check_events, _composition, _reduce, _scaled
from ._gdp import _gdp_mu_for
from ._rdp import ORDERS, _orders
from ._search import _calibrate


def ledger_rdp(events: Iterable[PrivacyEvent], orders=None) -> np.ndarray:
    """Composed RDP curve of a ledger (sum over events × counts), on :data:`ORDERS` by default.

    Parameters
    ----------
    events : iterable of PrivacyEvent
        The run's ledger.
    orders : array_like of float, optional
        Rényi orders, each in (1, ∞); :data:`ORDERS` by default.

    Returns
    -------
    numpy.ndarray
        The composed Rényi divergence at each order.
    """
    a = ORDERS if orders is None else _orders(orders)
    return _composition(_check_events(events)).rdp(a)


def ledger_bounds(events: Iterable[PrivacyEvent], delta: float) -> dict[str, float]:
    """Every sound bound on the ledger's ε at δ, by name; the accountant reports the smallest.

    Parameters
    ----------
    events : iterable of PrivacyEvent
        The run's ledger.
    delta : float
        Target δ, in (0, 1).

    Returns
    -------
    dict of str to float
        ε at ``delta`` by the name of the bound (``{}`` for an empty ledger).

    Notes
    -----
    Keys (the module constants): :data:`GDP` — the exact value, when every release is a Gaussian
    on the full data (then it is the only entry); :data:`PLD` — the privacy loss distribution;
    :data:`RDP` — Rényi DP (refined orders); :data:`FULL_BATCH` — μ-GDP of the same Gaussian
    noise as if nothing were sampled (sampling only helps); :data:`PURE` — plain summation, for
    ledgers of pure-DP releases only. An empty ledger gives ``{}``.
    """
    events = _check_events(events)
    delta = check.open_unit("delta", delta)
    if not events:
        return {}
    events, edge = _at_the_edge(events, delta)
    if edge is not None:
        return {edge[1]: edge[0]}
    return _bounds(*_reduce(events), delta, refine_rdp=True)


#: How an answer at the edge of floating point is named among the bounds (:func:`ledger_bounds`).
EDGE = "edge of floating point (sound bound)"


def _amplified(e0: float, q: float) -> float:
    """log(1 + q(e^ε₀ − 1)), the pure ε of a Poisson-sampled ε₀-DP release, without overflowing e^ε₀."""
    if q == 1.0:
        return e0
    if e0 <= PURE_EPSILON_CAP:
        return math.log1p(q * math.expm1(e0))
    return e0 + math.log(q + (1.0 - q) * math.exp(-e0))


def _at_the_edge(events: list[PrivacyEvent], delta: float):
    """``(events, None)`` with sampling rates below :data:`SAMPLING_RATE_FLOOR` raised to it, or
    ``(events, (ε, bound name, statement))`` when a release leaves floating point: a Gaussian noise
    multiplier below :data:`GAUSSIAN_Z_FLOOR` (or 1/z² summed to ∞) gives ε = ∞; pure releases with
    ε₀ above :data:`PURE_EPSILON_CAP` are summed (basic composition, sound) and added to the ε of the
    rest at δ."""
    events = [e if e.sampling_rate >= SAMPLING_RATE_FLOOR else replace(e, sampling_rate=SAMPLING_RATE_FLOOR)
              for e in events]
    gaussians = [e for e in events if e.mechanism == "gaussian"]
    inv_z2 = 0.0
    for e in gaussians:
        z = float(e.noise) / float(e.sensitivity)
        inv_z2 += e.count * 4.0 / (z * z) if z >= GAUSSIAN_Z_FLOOR else math.inf
        if not math.isfinite(inv_z2):
            return events, (math.inf, EDGE, f"a Gaussian release with noise multiplier σ/Δ = {z:.3g} (below "
                                            f"{GAUSSIAN_Z_FLOOR:g}, or too many of them): ε leaves floating point, "
                                            "reported as ∞")
    loud = [e for e in events if e.mechanism != "gaussian" and float(e.noise) * float(e.sensitivity) > PURE_EPSILON_CAP]
    if not loud:
        return events, None
    pure = 0.0
    for e in loud:
        e0 = float(e.noise) * float(e.sensitivity)
        e0 = 2.0 * e0 if e.neighbours == "replace_one" else e0  # the replace-one pair moves by 2Δ at most
        pure += e.count * _amplified(e0, e.sampling_rate)
    rest = [e for e in events if e not in loud]
    eps = pure + (_ledger_of(tuple(rest), float(delta))[0] if rest else 0.0)
    return events, (eps, EDGE, f"{sum(e.count for e in loud)} pure releases with ε₀ above {PURE_EPSILON_CAP:g} "
                               f"summed (ε = {pure:.4g}), plus the rest at δ")


def _ledger(events, delta) -> tuple[float, str, str]:
    events = _check_events(events)
    delta = check.open_unit("delta", delta)
    if not events:
        return math.inf, "nothing", "no noisy release recorded: nothing is guaranteed"
    events, edge = _at_the_edge(events, delta)
    if edge is not None:
        return edge
    return _ledger_of(tuple(events), float(delta))


#: Ledgers and calibrations already computed. Events are frozen and hold numbers and strings only, so a
#: ledger is its own key: a live panel's move of N, the topology or T often asks for the same budget
#: again, and calibrating the same ε is a noticeable part of a re-run in the browser.
_memo = functools.lru_cache(maxsize=256)


def forget_ledgers() -> None:
    """Empty the memo of ledgers and calibrations (for a benchmark that times the computation, not a look-up)."""
    _ledger_of.cache_clear()
    _calibrated.cache_clear()


@_memo
def _ledger_of(events: tuple[PrivacyEvent, ...], delta: float) -> tuple[float, str, str]:
    comp, releases = _reduce(events)
    bounds = _bounds(comp, releases, delta)
    best = min(bounds, key=bounds.get)
    n = sum(e.count for e in events)
    statement = f"{n} noisy releases in {len(events)} ledger entries; smallest bound: {best}"
    if best == GDP:
        statement += f", μ = {math.sqrt(releases.gaussian_mu2):.4g} (the exact ε)"
    others = [f"{name} ε = {value:.4g}" for name, value in bounds.items() if name != best]
    if others:
        statement += "; also " + ", ".join(others)
    if releases.grouped:
        statement += f" ({releases.grouped})"
    return bounds[best], best, statement


def ledger_epsilon(events: Iterable[PrivacyEvent], delta: float) -> float:
    """End-to-end ε at δ of every release in ``events``, under the unified accountant.

    Parameters
    ----------
    events : iterable of PrivacyEvent
        The run's ledger.
    delta : float
        Target δ, in (0, 1).

    Returns
    -------
    float
        ε at ``delta`` (``math.inf`` for an empty ledger).

    Notes
    -----
    The smallest of the *sound* upper bounds of :func:`ledger_bounds`: the exact μ-GDP value
    when every event is an unsampled Gaussian (then it is the true ε); otherwise the privacy
    loss distribution (within 10⁻³ of the true ε, never below it), Rényi DP, and for pure
    ledgers plain summation. An empty ledger gives ``math.inf`` (nothing noisy was recorded,
    so nothing is guaranteed).
    """
    return _ledger(events, delta)[0]


def ledger_guarantee(events: Iterable[PrivacyEvent], delta: float) -> PrivacyGuarantee:
    """:func:`ledger_epsilon` as a :class:`~dpadmm_lite.trace.PrivacyGuarantee`.

    ``source`` is ``"unified accountant: "`` and the name of the bound that won (e.g.
    ``"unified accountant: privacy loss distribution (PLD)"``); ``statement`` counts the
    releases and lists the other bounds.

    Parameters
    ----------
    events : iterable of PrivacyEvent
        The run's ledger.
    delta : float
        Target δ, in (0, 1).

    Returns
    -------
    PrivacyGuarantee
        ε, δ, the bound that won and a statement of the releases.
    """
    eps, best, statement = _ledger(events, delta)
    return PrivacyGuarantee(eps, float(delta), f"unified accountant: {best}", statement)


def calibrate_ledger(events: Iterable[PrivacyEvent], epsilon: float, delta: float, *, rtol: float = 5e-3) -> float:
    """Factor ``s`` by which to scale every release's noise so that the ledger spends (ε, δ).

    Parameters
    ----------
    events : iterable of PrivacyEvent
        The run's ledger at unit scale, at least one release.
    epsilon : float
        Target ε, in (0, 1e4], or ``math.inf`` (no noise: returns 0).
    delta : float
        Target δ, in (0, 1).
    rtol : float, default 5e-3
        Relative tolerance of the search on ``s``, in (0, 1).

    Returns
    -------
    float
        The factor ``s`` (0 for ``epsilon = math.inf``).

    Notes
    -----
    ``events`` is the run's ledger at *unit scale*: the noise shape an algorithm wants (Huang et
    al.'s σ_{i,k} ∝ 1/(ρ + 1/η_i^k), one σ for all of DP-ADMM's releases, …) with an arbitrary
    overall size. The answer is the smallest ``s`` (to relative ``rtol``) with
    ``ledger_epsilon([e.scaled(s) for e in events], delta) ≤ epsilon``; the run then draws
    ``s`` times its unit noise. The spent ε is within a fraction of ``rtol`` below the budget:
    nothing is wasted and nothing is overspent (both checked). ``epsilon = math.inf`` returns
    0 (no noise).

    The ledger is grouped once and the search runs on the grouped form: a ledger of full-batch
    Gaussians (Huang et al.: one event per iteration, each its own σ) is solved in closed form
    through μ-GDP (``s = μ_unit/μ(ε, δ)``), any other by a secant search on ``log s`` against
    the PLD (a few milliseconds per step).

    Every algorithm's default ``calibration="accountant"`` goes through this function, so that
    ``epsilon``, ``delta`` mean the end-to-end budget of the whole run in every algorithm.

    Examples
    --------
    >>> from dpadmm_lite.accounting import PrivacyEvent, calibrate_ledger, ledger_epsilon
    >>> unit = [PrivacyEvent("gaussian", 0.01, 1.0, count=100)]
    >>> s = calibrate_ledger(unit, 1.0, 1e-5)
    >>> 0.97 <= ledger_epsilon([e.scaled(s) for e in unit], 1e-5) <= 1.0
    True
    """
    events = _check_events(events)
    epsilon = check.epsilon(epsilon)
    delta = check.open_unit("delta", delta)
    rtol = check.open_unit("rtol", rtol)
    if not events:
        raise ValueError("events must hold at least one release to calibrate")
    if math.isinf(epsilon):
        return 0.0
    return _calibrated(tuple(events), float(epsilon), float(delta), float(rtol))


@_memo
def _calibrated(events: tuple[PrivacyEvent, ...], epsilon: float, delta: float, rtol: float) -> float:
    comp, releases = _reduce(events)
    if releases.only_gaussian:  # μ(s) = μ_unit/s: closed form
        s = math.sqrt(releases.gaussian_mu2) / _gdp_mu_for(epsilon, delta)
        log_s = math.log(s)
    else:
        # the coarse phase of the search may group releases more coarsely (it only finds a start)
        rough = _pld.group(comp.full_inv_z2, comp.sampled, comp.laplace, max_pieces=16, replaced=comp.replaced,
                           pure_replaced=comp.laplace_replaced)

        def spent_at(x: float, points: int) -> float:
            grouped = releases if points >= _pld.POINTS else rough
            return min(_bounds(*_scaled(comp, grouped, math.exp(x)), delta, points=points).values())

        log_s = _calibrate(spent_at, epsilon, 0.0, tol=rtol / 4, span=200.0)
        if log_s < -150:  # the budget is met without noise
            raise ValueError("calibrate_ledger: the unit ledger spends almost nothing; give it a larger unit noise")
    # the check the caller will make, on the scaled events themselves (nudge up on rounding)
    for _ in range(20):
        if ledger_epsilon([e.scaled(math.exp(log_s)) for e in events], delta) <= epsilon:
            return math.exp(log_s)
        log_s += rtol / 50
    raise RuntimeError("calibrate_ledger did not converge")  # pragma: no cover
