"""The Gaussian mechanism: ε of T (Poisson-subsampled) releases, and its calibration."""

from __future__ import annotations

import math

import numpy as np

from .. import _validate as check
from ..privacy import NEIGHBOURS
from . import _pld
from ._bounds import GAUSSIAN_Z_FLOOR, SAMPLING_RATE_FLOOR, _bounds, _window_hint
from ._gdp import _gdp_epsilon, _gdp_mu_for
from ._rdp import _Composition
from ._search import _calibrate


def classic_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """The classic Gaussian mechanism: ``σ = Δ √(2 ln(1.25/δ)) / ε`` gives (ε, δ)-DP.

    Dwork & Roth (2014), Thm A.1 — proved for ``ε < 1``; for ε ≥ 1 the formula is still
    returned (the papers use it that way) but it is *not* a guarantee: use
    :func:`calibrate_noise` (exact) instead.

    Parameters
    ----------
    sensitivity : float
        ℓ2-sensitivity Δ of the released quantity, > 0 and finite.
    epsilon : float
        ε of the one release, > 0 and finite (a guarantee only below 1).
    delta : float
        δ of the one release, in (0, 1).

    Returns
    -------
    float
        The noise standard deviation σ.
    """
    sensitivity = check.positive("sensitivity", sensitivity)
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit("delta", delta)
    return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def gaussian_epsilon(noise_multiplier: float, steps: int, delta: float, sampling_rate: float = 1.0, *,
                     neighbours: str = "add_remove") -> float:
    """End-to-end ε of ``steps`` releases of the (Poisson-subsampled) Gaussian mechanism.

    Parameters
    ----------
    noise_multiplier : float
        ``z = σ/Δ`` (σ the noise standard deviation, Δ the ℓ2-sensitivity); ``math.inf`` → 0.
        With ``neighbours="replace_one"``, ``z = σ/C`` for the per-record bound C.
    steps : int
        Number of releases T ≥ 1 (composed adaptively).
    delta : float
        Target δ ∈ (0, 1).
    sampling_rate : float, default 1.0
        Poisson sampling probability q ∈ (0, 1] of each record in each release
        (add/remove-one neighbours, both directions).
    neighbours : {"add_remove", "replace_one"}, default "add_remove"
        ``"add_remove"`` or ``"replace_one"`` (the exact replace-one pair ``q·N(+C, σ²) +
        (1 − q)·N(0, σ²)`` against ``q·N(−C, σ²) + (1 − q)·N(0, σ²)``; a Gaussian with sensitivity
        2C when q = 1), as :attr:`~dpadmm_lite.privacy.PrivacyEvent.neighbours`.

    Returns
    -------
    float
        For ``q = 1`` the exact ε (μ-GDP with ``μ = √T/z``, analytic Gaussian curve). For
        ``q < 1`` the privacy-loss-distribution value (within 10⁻³ of the true ε and never
        below it), or the RDP bound if smaller; never more than the ``q = 1`` value.
        :func:`rdp_gaussian_epsilon` and :func:`pld_gaussian_epsilon` give the two bounds alone.

    Examples
    --------
    >>> from dpadmm_lite.accounting import gaussian_epsilon
    >>> round(gaussian_epsilon(1.0, 1, 1e-5), 4)
    4.3772
    >>> round(gaussian_epsilon(1.0, 100, 1e-5, sampling_rate=0.01), 3)  # PLD; RDP says 1.214
    0.718
    >>> round(gaussian_epsilon(2.0, 1000, 1e-6, 0.01, neighbours="replace_one"), 2)  # 2.12 as add/remove, 2C
    1.37
    """
    z = check.positive("noise_multiplier", noise_multiplier, allow_inf=True)
    steps = check.count("steps", steps)
    delta = check.open_unit("delta", delta)
    q = check.half_open_unit("sampling_rate", sampling_rate)
    replace_one = _replace_one(neighbours)
    return _gaussian_epsilon(z, steps, delta, q, replace_one)


def _replace_one(neighbours) -> bool:
    return check.choice("neighbours", neighbours, NEIGHBOURS) == "replace_one"


def _gaussian_epsilon(z: float, steps: int, delta: float, q: float, replace_one: bool = False) -> float:
    if math.isinf(z):
        return 0.0
    if z < GAUSSIAN_Z_FLOOR or not math.isfinite(steps * 4.0 / (z * z)):
        return math.inf  # ε ≈ T/(2z²) leaves floating point (sound: never smaller than the truth)
    q = max(q, SAMPLING_RATE_FLOOR)  # ε grows with q: sound, and inside floating point
    if q == 1.0:
        return _gdp_epsilon(math.sqrt(steps) / z * (2.0 if replace_one else 1.0), delta)
    return min(_bounds(*_single(z, q, steps, replace_one), delta).values())


def _single(z: float, q: float, steps: int, replace_one: bool = False):
    comp = _Composition()
    if q == 1.0:
        comp.full_inv_z2 = steps * (4.0 if replace_one else 1.0) / (z * z)
        return comp, _pld.Releases(comp.full_inv_z2)
    if replace_one:
        comp.replaced[(z, q)] = steps
        return comp, _pld.Releases(0.0, replaced=((z, q, steps),))
    comp.sampled[(z, q)] = steps
    return comp, _pld.Releases(0.0, ((z, q, steps),))


def rdp_gaussian_epsilon(noise_multiplier: float, steps: int, delta: float, sampling_rate: float = 1.0, *,
                         neighbours: str = "add_remove") -> float:
    """The Rényi-DP bound alone for :func:`gaussian_epsilon`'s setting (what DP-SGD libraries report).

    The RDP curve of the (sampled) Gaussian on :data:`ORDERS`, refined around the best order,
    converted with the tight conversion — sound, but looser than the PLD (by 2–70 %; for
    ``neighbours="replace_one"`` a sound bound on the replace-one pair, looser still).

    Parameters
    ----------
    noise_multiplier : float
        ``z = σ/Δ`` of each release, > 0 (``math.inf``: no privacy loss).
    steps : int
        Number of releases T, a whole number ≥ 1.
    delta : float
        Target δ, in (0, 1).
    sampling_rate : float, default 1.0
        Poisson sampling rate q of each release, in (0, 1].
    neighbours : {"add_remove", "replace_one"}, default "add_remove"
        The neighbouring relation: one record added or removed, or one record replaced.

    Returns
    -------
    float
        ε at ``delta`` (0 for ``z = ∞``).
    """
    z = check.positive("noise_multiplier", noise_multiplier, allow_inf=True)
    steps = check.count("steps", steps)
    delta = check.open_unit("delta", delta)
    q = check.half_open_unit("sampling_rate", sampling_rate)
    replace_one = _replace_one(neighbours)
    if math.isinf(z):
        return 0.0
    return _single(z, q, steps, replace_one)[0].epsilon(delta)


def pld_gaussian_epsilon(noise_multiplier: float, steps: int, delta: float, sampling_rate: float = 1.0,
                         *, points: int = _pld.POINTS, neighbours: str = "add_remove") -> float:
    """The privacy-loss-distribution bound alone for :func:`gaussian_epsilon`'s setting.

    Parameters
    ----------
    noise_multiplier : float
        ``z = σ/Δ`` of each release, > 0 (``math.inf``: no privacy loss).
    steps : int
        Number of releases T, a whole number ≥ 1.
    delta : float
        Target δ, in (0, 1).
    sampling_rate : float, default 1.0
        Poisson sampling rate q of each release, in (0, 1].
    points : int, default 16384
        Grid points across the composed loss window, a whole number ≥ 64 (the discretisation error
        shrinks like ``points⁻²``).
    neighbours : {"add_remove", "replace_one"}, default "add_remove"
        The neighbouring relation: one record added or removed, or one record replaced.

    Returns
    -------
    float
        ε at ``delta`` (0 for ``z = ∞``; ``math.inf`` when the PLD is not computable).

    Notes
    -----
    Also for ``q = 1``, where it is within discretisation error of the exact μ-GDP value
    (a check of the PLD machinery). ``points``: grid points across the composed loss window
    (the error shrinks like ``points⁻²``). ``math.inf`` if the PLD is not computable (losses
    spread over more than 10⁴ nats).
    """
    z = check.positive("noise_multiplier", noise_multiplier, allow_inf=True)
    steps = check.count("steps", steps)
    delta = check.open_unit("delta", delta)
    q = check.half_open_unit("sampling_rate", sampling_rate)
    points = check.count("points", points, minimum=64)
    replace_one = _replace_one(neighbours)
    if math.isinf(z):
        return 0.0
    comp, releases = _single(z, q, steps, replace_one)
    value = _pld.epsilon(releases, delta, upper=_window_hint(comp, delta), points=points)
    return math.inf if value is None else value


def privacy_loss_distribution(noise_multiplier: float, steps: int, sampling_rate: float = 1.0, *,
                              direction: str = "remove", delta: float = 1e-5,
                              points: int = _pld.POINTS, neighbours: str = "add_remove",
                              ) -> tuple[np.ndarray, np.ndarray, float]:
    """The privacy loss distribution of ``steps`` (sampled) Gaussian releases, as the accountant has it.

    Parameters
    ----------
    noise_multiplier : float
        ``z = σ/Δ`` of each release, > 0 and finite.
    steps : int
        Number of releases T, a whole number ≥ 1.
    sampling_rate : float, default 1.0
        Poisson sampling rate q of each release, in (0, 1].
    direction : {"remove", "add"}, default "remove"
        ``"remove"``: P is the output with the record; ``"add"``: without it.
    delta : float, default 1e-5
        In (0, 1); only sets how much tail may be cut.
    points : int, default 16384
        Grid points across the composed loss window, a whole number ≥ 64 (the discretisation error
        shrinks like ``points⁻²``).
    neighbours : {"add_remove", "replace_one"}, default "add_remove"
        The neighbouring relation: one record added or removed, or one record replaced.

    Returns
    -------
    losses : numpy.ndarray
        The composed loss ``L = log(P/Q)`` on a uniform grid.
    probabilities : numpy.ndarray
        The probability of each grid value.
    at_infinity : float
        The mass counted as an infinite loss.

    Notes
    -----
    Returns ``(losses, probabilities, at_infinity)``: the composed loss ``L = log(P/Q)`` on a
    uniform grid (connect-the-dots, pessimistic), the probability of each grid value, and the
    mass counted as an infinite loss (tails beyond the grid, at most ~1e-4·δ). Then
    ``δ(ε) = at_infinity + Σ p·(1 − e^{ε − L})₊`` is what :func:`pld_gaussian_epsilon` solves.
    ``direction``: ``"remove"`` (P = output with the record) or ``"add"``; equal when q = 1, and
    for ``neighbours="replace_one"`` (the replace-one pair is symmetric).
    ``delta`` only sets how much tail may be cut.
    """
    z = check.positive("noise_multiplier", noise_multiplier)
    steps = check.count("steps", steps)
    q = check.half_open_unit("sampling_rate", sampling_rate)
    direction = check.choice("direction", direction, ("remove", "add"))
    delta = check.open_unit("delta", delta)
    points = check.count("points", points, minimum=64)
    comp, releases = _single(z, q, steps, _replace_one(neighbours))
    result = _pld.distribution(releases, delta, direction, upper=_window_hint(comp, delta), points=points)
    if result is None:
        raise ValueError(f"the losses of noise_multiplier={z:g} spread over more than 1e4 nats: no PLD grid at this size")
    return result


def calibrate_noise(epsilon: float, delta: float, steps: int, sampling_rate: float = 1.0, *,
                    neighbours: str = "add_remove") -> float:
    """Smallest noise multiplier ``z = σ/Δ`` whose ``steps`` releases are (ε, δ)-DP.

    Parameters
    ----------
    epsilon : float
        Target ε, in (0, 1e4], or ``math.inf`` (no noise: returns 0).
    delta : float
        Target δ, in (0, 1).
    steps : int
        Number of releases T, a whole number ≥ 1.
    sampling_rate : float, default 1.0
        Poisson sampling rate q of each release, in (0, 1].
    neighbours : {"add_remove", "replace_one"}, default "add_remove"
        The neighbouring relation: one record added or removed, or one record replaced.

    Returns
    -------
    float
        The noise multiplier ``z = σ/Δ`` (``σ/C`` for ``"replace_one"``).

    Notes
    -----
    For ``q = 1`` solved in closed form through the exact Gaussian curve (``z = √T/μ`` with
    ``δ_μ(ε) = δ``); otherwise a secant search on ``log z`` of :func:`gaussian_epsilon` (PLD),
    started from the central-limit approximation ``μ ≈ q√(T(e^{1/z²} − 1))`` (Bu et al. 2020).
    ``neighbours="replace_one"``: ``z = σ/C`` for the per-record bound C, against the exact
    replace-one pair (twice the noise of add/remove when q = 1; the central-limit start is
    ``μ ≈ q√(4T sinh(1/z²))``).
    The result always satisfies ``gaussian_epsilon(z, steps, delta, q) ≤ epsilon`` (it is the
    feasible end of the final bracket) and is minimal to ~1e-4 (relative).
    ``epsilon = math.inf`` returns 0 (no noise).

    Examples
    --------
    >>> from dpadmm_lite.accounting import calibrate_noise, gaussian_epsilon
    >>> z = calibrate_noise(1.0, 1e-5, 100)
    >>> gaussian_epsilon(z, 100, 1e-5) <= 1.0
    True
    """
    epsilon = check.epsilon(epsilon)
    delta = check.open_unit("delta", delta)
    steps = check.count("steps", steps)
    q = check.half_open_unit("sampling_rate", sampling_rate)
    replace_one = _replace_one(neighbours)
    if math.isinf(epsilon):
        return 0.0
    mu = _gdp_mu_for(epsilon, delta)
    z_full = math.sqrt(steps) / mu * (2.0 if replace_one else 1.0)  # exact for q = 1, feasible for every q
    if q == 1.0:
        return _round_up(z_full, steps, delta, q, epsilon, replace_one=replace_one)
    ratio = (mu / q) ** 2 / steps  # central-limit guess: e^{1/z²} − 1 = μ²/(q²T) (4 sinh(1/z²) replace-one)
    inv_z2 = math.asinh(ratio / 4) if replace_one else math.log1p(ratio)
    z_clt = 1.0 / math.sqrt(inv_z2) if ratio > 0 else z_full
    start = math.log(min(z_full, max(z_clt, 1e-3 * z_full)))

    def spent_at(log_z: float, points: int) -> float:
        return min(_bounds(*_single(math.exp(log_z), q, steps, replace_one), delta, points=points).values())

    log_z = _calibrate(spent_at, epsilon, start, tol=1e-4, feasible=math.log(z_full) + 1e-6)
    return math.exp(log_z)  # feasible: the search's last feasible point, by this very evaluation




def _round_up(z: float, steps: int, delta: float, q: float, epsilon: float, fallback: float | None = None, *,
              replace_one: bool = False) -> float:
    """Nudge ``z`` up until the guarantee provably holds (never return an infeasible z).

    The nudges double from 1e-9 (relative): the exact curve's ε is rounded up by an absolute
    1e-12, which for a tiny ε (say 1e-9) is a relative 1e-3 that a fixed nudge never crosses.
    """
    for k in range(64):
        if _gaussian_epsilon(z, steps, delta, q, replace_one) <= epsilon:
            return z
        z *= 1 + 1e-9 * 2.0**k
    if fallback is not None and _gaussian_epsilon(fallback, steps, delta, q, replace_one) <= epsilon:
        return fallback
    raise ValueError(f"epsilon = {epsilon!r} is too small to calibrate at delta = {delta!r} "  # pragma: no cover
                     f"and {steps} steps: no finite noise multiplier was found")
