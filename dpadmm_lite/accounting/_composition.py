"""Composition theorems for per-step (ε, δ) guarantees, and the noise each analysis needs."""

from __future__ import annotations

import math

from .. import _validate as check
from ._gaussian import _gaussian_epsilon, calibrate_noise


def basic_composition(epsilon: float, delta: float, k: int) -> tuple[float, float]:
    """k-fold composition of (ε, δ)-DP mechanisms: ``(kε, kδ)`` (Dwork & Roth 2014, Thm 3.16).

    Parameters
    ----------
    epsilon : float
        ε of each mechanism, > 0 and finite.
    delta : float
        δ of each mechanism, in [0, ∞) (a total above 1 is reported as 1).
    k : int
        Number of mechanisms composed, a whole number ≥ 1.

    Returns
    -------
    epsilon_total : float
        ``k ε``.
    delta_total : float
        ``min(1, k δ)``.
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.nonnegative("delta", delta)
    k = check.count("k", k)
    return k * epsilon, min(1.0, k * delta)


def advanced_composition(epsilon: float, delta: float, k: int, delta_prime: float) -> tuple[float, float]:
    """Advanced composition (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Thm 3.20).

    k adaptive (ε, δ)-DP mechanisms are together
    ``(ε√(2k ln(1/δ')) + kε(e^ε − 1), kδ + δ')``-DP for any ``δ' ∈ (0, 1)``.

    Parameters
    ----------
    epsilon : float
        ε of each mechanism, > 0 and finite.
    delta : float
        δ of each mechanism, in [0, ∞).
    k : int
        Number of adaptive mechanisms, a whole number ≥ 1.
    delta_prime : float
        The slack δ' of the theorem, in (0, 1).

    Returns
    -------
    epsilon_total : float
        ``ε√(2k ln(1/δ')) + kε(e^ε − 1)``.
    delta_total : float
        ``min(1, kδ + δ')``.
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.nonnegative("delta", delta)
    k = check.count("k", k)
    delta_prime = check.open_unit("delta_prime", delta_prime)
    eps_total = epsilon * math.sqrt(2 * k * math.log(1 / delta_prime)) + k * epsilon * math.expm1(epsilon)
    return eps_total, min(1.0, k * delta + delta_prime)


def composition_epsilons(noise_multiplier: float, steps: int, delta: float, sampling_rate: float = 1.0) -> dict[str, float]:
    """ε after ``steps`` Gaussian releases, at the same total δ, under three analyses.

    Parameters
    ----------
    noise_multiplier : float
        σ/Δ of each Gaussian release, > 0 and finite.
    steps : int
        Number of releases T, a whole number ≥ 1.
    delta : float
        Total δ of the T releases, in (0, 1).
    sampling_rate : float, default 1.0
        Poisson sampling rate q of each release, in (0, 1].

    Returns
    -------
    dict of str to float
        ε by analysis: ``"basic"``, ``"advanced"``, ``"unified"``.

    Notes
    -----
    * ``"basic"`` — each release is (ε₀, δ/T)-DP (ε₀ exact for one release), and
      :func:`basic_composition` adds them up: ``T ε₀``;
    * ``"advanced"`` — each release is (ε₀, δ/(2T))-DP and :func:`advanced_composition` with
      δ' = δ/2;
    * ``"unified"`` — :func:`gaussian_epsilon` (exact Gaussian composition for q = 1, the
      privacy loss distribution for q < 1).

    The per-release ε₀ is the exact one in both classical rows, so the differences are due to
    the composition theorem alone.
    """
    z = check.positive("noise_multiplier", noise_multiplier)
    T = check.count("steps", steps)
    delta = check.open_unit("delta", delta)
    q = check.half_open_unit("sampling_rate", sampling_rate)
    eps_basic = T * _gaussian_epsilon(z, 1, delta / T, q)
    eps0 = _gaussian_epsilon(z, 1, delta / (2 * T), q)
    eps_adv = eps0 * math.sqrt(2 * T * math.log(2 / delta)) + T * eps0 * math.expm1(eps0) if eps0 > 0 else 0.0
    return {"basic": eps_basic, "advanced": eps_adv, "unified": _gaussian_epsilon(z, T, delta, q)}


_UNDERFLOW = ("epsilon/steps must be at least 1e-300: epsilon = {epsilon!r} over steps = {T} leaves a per-release "
              "budget that underflows")


def noise_for_budget(epsilon: float, delta: float, steps: int, sampling_rate: float = 1.0) -> dict[str, float]:
    """Noise multiplier σ/Δ that T releases need to be (ε, δ)-DP together, per analysis.

    Parameters
    ----------
    epsilon : float
        Total ε of the T releases, in (0, 1e4] (finite; ``epsilon / steps`` at least 1e-300).
    delta : float
        Total δ, in (0, 1).
    steps : int
        Number of releases T, a whole number ≥ 1.
    sampling_rate : float, default 1.0
        Poisson sampling rate q of each release, in (0, 1] (the classic row ignores it).

    Returns
    -------
    dict of str to float
        The noise multiplier by analysis: ``"classic + basic"``, ``"exact + basic"``,
        ``"exact + advanced"``, ``"unified"``.

    Notes
    -----
    * ``"classic + basic"`` — split the budget evenly, (ε/T, δ/T) per release, and use the
      classic formula ``√(2 ln(1.25 T/δ)) T/ε`` (ignores subsampling; a guarantee only when
      ε/T < 1);
    * ``"exact + basic"`` — the same split, with the exact per-release calibration;
    * ``"exact + advanced"`` — per-release (ε₀, δ/(2T)) with ε₀ solving
      ``advanced_composition(ε₀, δ/(2T), T, δ/2) = ε``;
    * ``"unified"`` — :func:`calibrate_noise` over all T releases.
    """
    epsilon = check.epsilon(epsilon)
    if math.isinf(epsilon):
        raise ValueError("epsilon must be finite here, in (0, 1e4]: the table compares the noise of finite budgets")
    delta = check.open_unit("delta", delta)
    T = check.count("steps", steps)
    q = check.half_open_unit("sampling_rate", sampling_rate)
    if epsilon / T < 1e-300:
        raise ValueError(_UNDERFLOW.format(epsilon=epsilon, T=T))
    classic = math.sqrt(2 * math.log(1.25 * T / delta)) * T / epsilon
    exact_basic = calibrate_noise(epsilon / T, delta / T, 1, q)
    d0 = delta / (2 * T)
    adv = lambda e0: e0 * math.sqrt(2 * T * math.log(2 / delta)) + T * e0 * math.expm1(e0) - epsilon
    # adv is increasing; e^700 keeps it finite; the lower end of the root keeps the split within ε
    from scipy import optimize  # here, not at the top: a live re-run without it skips its import
    eps0 = optimize.brentq(adv, 0.0, min(max(epsilon, 1.0), 700.0), xtol=max(epsilon * 1e-15, 5e-324),
                           rtol=1e-13) * (1 - 1e-12)
    if not eps0 > 0:
        raise ValueError(_UNDERFLOW.format(epsilon=epsilon, T=T))
    exact_adv = calibrate_noise(eps0, d0, 1, q)
    return {"classic + basic": classic, "exact + basic": exact_basic, "exact + advanced": exact_adv,
            "unified": calibrate_noise(epsilon, delta, T, q)}
