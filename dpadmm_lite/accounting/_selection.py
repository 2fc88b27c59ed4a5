"""Private hyper-parameter selection: what choosing the best of several private runs costs.

Tuning reads the training records: every candidate run is trained on them, and the setting
that is published (with the model trained with it) depends on all of them. Two sound answers
to "what is ε of the whole pipeline", both for the *training* records (the validation records
score the candidates and are not protected by either; that is the setting of both papers):

1. **Composition** (:func:`tuning_epsilon`): the candidate runs and the final run are releases
   like any others; the unified accountant composes their ledgers. Sound for *any* selection
   rule and any number of candidates, fixed or not — in particular for the arena's, which
   tries a fixed ``K`` settings and keeps the best validation score.

2. **Random stopping** (:func:`selection_rdp`, :func:`selection_epsilon`): Papernot & Steinke
   (2022, ICLR), Theorem 2, which improves and extends Liu & Talwar (2019, STOC).

   *Statement.* Let ``Q`` be a randomized algorithm (here: draw a setting at random from the
   grid, train with it, score it on the validation split; output setting, model and score) that
   satisfies (λ, ε)-RDP and (λ̂, ε̂)-RDP for some ε, ε̂ ≥ 0, λ ∈ (1, ∞), λ̂ ∈ [1, ∞), with a
   totally ordered output (by score). Let η ∈ (−1, ∞), γ ∈ (0, 1) and ``K`` drawn from the
   truncated negative binomial distribution ``D_{η,γ}``,
   ``P[K = k] = (1 − γ)^k / (γ^{−η} − 1) · Π_{ℓ=0}^{k−1} (ℓ + η)/(ℓ + 1)`` for k = 1, 2, …
   (η = 0: the logarithmic distribution ``P[K = k] = (1 − γ)^k / (k log(1/γ))``; η = 1: the
   geometric ``P[K = k] = γ(1 − γ)^{k−1}``). The algorithm that runs ``Q`` independently ``K``
   times and outputs the best run satisfies (λ, ε′)-RDP with

   ``ε′ = ε + (1 + η)(1 − 1/λ̂) ε̂ + (1 + η) log(1/γ)/λ̂ + log(E[K])/(λ − 1)``,

   ``E[K] = η(1 − γ)/(γ(1 − γ^η))`` (η ≠ 0), ``(1/γ − 1)/log(1/γ)`` (η = 0).

   The bound holds for every λ̂ at which ``Q`` has an RDP bound; we take the smallest over the
   orders given (and λ̂ = 1, where the ε̂ term vanishes). ``Q``'s RDP is the largest RDP of
   the settings it may draw (a data-independent mixture is no less private than its worst
   component: Rényi divergence is jointly quasi-convex). For pure ε-DP candidates (RDP = ε at
   every order) and η = 1, ε′ → 3ε as λ, λ̂ → ∞: Liu & Talwar's 3ε for their random stopping
   with a geometric number of runs and (ε, 0)-DP candidates.

   *Conditions that matter.* The number of runs must be **random**, drawn as above, and every
   run's output must be the best of those drawn (a fixed ``K`` is not covered: with ``K``
   fixed, use composition). A fresh final run with the chosen setting is another release and
   composes (RDP curves add: :func:`selection_epsilon` ``final_rdp=``).

Public surface: :func:`truncated_negative_binomial_mean`, :func:`truncated_negative_binomial_gamma` (γ for a
mean), :func:`truncated_negative_binomial_pmf`, :func:`sample_repetitions`, :func:`never_tried_probability`,
:func:`selection_rdp`, :func:`selection_epsilon`, :func:`tuning_epsilon`. The tuner that runs either procedure
end to end, calibrated to a total budget, is :func:`dpadmm_lite.tuning.tune`.

Everything here needs only numpy and ``math`` (the live panel of the privacy chapter runs it in the
reader's browser).
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from ..privacy import PrivacyEvent
from .. import _validate as check
from ._ledger import ledger_epsilon
from ._rdp import ORDERS, _orders, rdp_to_epsilon

__all__ = ["truncated_negative_binomial_mean", "truncated_negative_binomial_gamma", "truncated_negative_binomial_pmf",
           "sample_repetitions", "repetitions_tail", "never_tried_probability", "selection_rdp", "selection_epsilon", "tuning_epsilon"]


#: The largest shape η the tuner accepts: far beyond any useful η (0 … 3 in Papernot & Steinke), and small enough
#: that Γ(k + η) and γ^{−η} stay inside floating point.
MAX_ETA = 1e3
#: The largest expected number of candidate runs: each is a full training run.
MAX_MEAN_REPETITIONS = 1e4
#: :func:`sample_repetitions` tabulates the CDF of K up to this many runs; the tuner refuses a law whose mass
#: beyond it (:func:`repetitions_tail`) would not be covered by δ.
SAMPLER_LIMIT = 10_000_000


def _eta_gamma(eta: float, gamma: float) -> tuple[float, float]:
    if isinstance(eta, bool) or not isinstance(eta, (int, float, np.floating, np.integer)) or not (
            math.isfinite(eta) and -1 < eta <= MAX_ETA):
        raise ValueError(f"eta must be a number in (-1, {MAX_ETA:g}] (the truncated negative binomial's shape), "
                         f"got {eta!r}")
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float, np.floating, np.integer)) or not (0 < gamma < 1):
        raise ValueError(f"gamma must be a number in (0, 1) (the truncated negative binomial's stopping "
                         f"parameter), got {gamma!r}")
    return float(eta), float(gamma)


def truncated_negative_binomial_mean(eta: float, gamma: float) -> float:
    """Expected number of runs ``E[K]`` under ``D_{η,γ}`` (Papernot & Steinke 2022, Sec. 2).

    ``η(1 − γ)/(γ(1 − γ^η))`` for η ≠ 0 and ``(1/γ − 1)/log(1/γ)`` for η = 0 (its limit).

    Parameters
    ----------
    eta : float
        Shape η of ``D_{η,γ}``, in (−1, 1000].
    gamma : float
        Stopping parameter γ of ``D_{η,γ}``, in (0, 1).

    Returns
    -------
    float
        ``E[K]``.

    Examples
    --------
    >>> from dpadmm_lite.accounting import truncated_negative_binomial_mean
    >>> truncated_negative_binomial_mean(1.0, 0.25)   # geometric: 1/γ
    4.0
    """
    eta, gamma = _eta_gamma(eta, gamma)
    if eta == 0:
        return (1.0 / gamma - 1.0) / math.log(1.0 / gamma)
    return eta * (1.0 - gamma) / (gamma * -math.expm1(eta * math.log(gamma)))


def _mean(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) or not (
            math.isfinite(value) and 1 < value <= MAX_MEAN_REPETITIONS):
        raise ValueError(f"mean_repetitions must be a number in (1, {MAX_MEAN_REPETITIONS:g}] (the expected number of "
                         f"candidate runs, each a full training run; K ≥ 1 always, so its mean exceeds 1), got {value!r}")
    return float(value)


def truncated_negative_binomial_gamma(eta: float, mean: float) -> float:
    """The γ ∈ (0, 1) at which ``D_{η,γ}`` has expected value ``mean`` (> 1).

    Parameters
    ----------
    eta : float
        Shape η of ``D_{η,γ}``, in (−1, 1000].
    mean : float
        The expected number of runs, in (1, 1e4].

    Returns
    -------
    float
        γ in (0, 1).

    Notes
    -----
    :func:`truncated_negative_binomial_mean` falls from ∞ (γ → 0) to 1 (γ → 1), so the root is
    unique; found by bisection on log γ to relative 1e-13 (numpy and ``math`` only). η = 1 gives
    γ = 1/mean exactly.

    Examples
    --------
    >>> from dpadmm_lite.accounting import truncated_negative_binomial_gamma
    >>> truncated_negative_binomial_gamma(1.0, 4.0)
    0.25
    """
    eta, _ = _eta_gamma(eta, 0.5)
    mean = _mean(mean)
    if eta == 1.0:
        return 1.0 / mean
    lo, hi = -700.0, -1e-12  # log γ: the mean at lo is astronomically large, at hi it is 1 + O(1e-12)
    if truncated_negative_binomial_mean(eta, math.exp(lo)) < mean:
        raise ValueError(f"mean_repetitions must be reachable by D_(η={eta:g}) with γ ≥ e^-700, got {mean:g}")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if truncated_negative_binomial_mean(eta, math.exp(mid)) > mean:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * max(1.0, abs(hi)):
            break
    return math.exp(0.5 * (lo + hi))


def truncated_negative_binomial_pmf(eta: float, gamma: float, k) -> np.ndarray:
    """``P[K = k]`` under ``D_{η,γ}`` at the whole numbers ``k`` ≥ 1 (0 elsewhere), vectorised.

    ``(1 − γ)^k / (γ^{−η} − 1) · Π_{ℓ<k} (ℓ + η)/(ℓ + 1)``, i.e. ``(1−γ)^k Γ(k+η)/(Γ(η) k! (γ^{−η}−1))``
    (η ≠ 0), and ``(1 − γ)^k / (k log(1/γ))`` at η = 0.

    Parameters
    ----------
    eta : float
        Shape η of ``D_{η,γ}``, in (−1, 1000].
    gamma : float
        Stopping parameter γ of ``D_{η,γ}``, in (0, 1).
    k : array_like of float
        The values at which the pmf is evaluated.

    Returns
    -------
    numpy.ndarray
        ``P[K = k]``, the shape of ``k``.
    """
    eta, gamma = _eta_gamma(eta, gamma)
    k = np.asarray(k, float)
    valid = (k >= 1) & (k == np.round(k))
    kk = np.where(valid, k, 1.0)
    if eta == 0:
        logp = kk * math.log1p(-gamma) - np.log(kk) - math.log(-math.log(gamma))
        return np.where(valid, np.exp(logp), 0.0)
    from scipy.special import gammaln

    # Γ(k+η)/Γ(η) = η Γ(k+η)/Γ(η+1): positive for η > −1 and k ≥ 1 once the sign of η is taken out
    log_ratio = gammaln(kk + eta) - math.lgamma(eta + 1.0) + math.log(abs(eta)) - gammaln(kk + 1.0)
    log_norm = math.log(abs(math.expm1(-eta * math.log(gamma))))
    logp = kk * math.log1p(-gamma) + log_ratio - log_norm
    return np.where(valid, np.exp(logp), 0.0)


def sample_repetitions(eta: float, gamma: float, rng: np.random.Generator, size=None):
    """Draws of K ~ ``D_{η,γ}`` (the number of candidate runs of random stopping), by inverting its CDF.

    ``rng`` a :class:`numpy.random.Generator` (``numpy.random.default_rng(seed)``); ``size`` as numpy's
    (``None``: one int). The CDF is tabulated in blocks until it covers every uniform drawn, at most up to
    :data:`SAMPLER_LIMIT` runs (a draw beyond is that limit: probability at most :func:`repetitions_tail`).

    Parameters
    ----------
    eta : float
        Shape η of ``D_{η,γ}``, in (−1, 1000].
    gamma : float
        Stopping parameter γ of ``D_{η,γ}``, in (0, 1).
    rng : numpy.random.Generator
        The source of randomness (``numpy.random.default_rng(seed)``).
    size : int or tuple of int, optional
        Shape of the draws, as numpy's; ``None`` draws one int.

    Returns
    -------
    int or numpy.ndarray
        The draws of K, each in [1, :data:`SAMPLER_LIMIT`].
    """
    eta, gamma = _eta_gamma(eta, gamma)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (numpy.random.default_rng(seed)), got {type(rng).__name__}")
    u = rng.random(size)
    top = float(np.max(u))
    block, start, cdf = 4096, 0, np.zeros(0)
    while True:
        k = np.arange(start + 1, min(start + block, SAMPLER_LIMIT) + 1)
        cdf = np.concatenate([cdf, (cdf[-1] if cdf.size else 0.0) + np.cumsum(truncated_negative_binomial_pmf(
            eta, gamma, k))])
        if cdf[-1] >= top or cdf.size >= SAMPLER_LIMIT:
            break
        start += block
    draws = np.minimum(np.searchsorted(cdf, u, side="left") + 1, cdf.size)
    return int(draws) if size is None else draws.astype(int)


def repetitions_tail(eta: float, gamma: float, limit: int = SAMPLER_LIMIT) -> float:
    """An upper bound on ``P[K > limit]`` under ``D_{η,γ}``: ``P[K = N+1]·S`` with ``N = limit``.

    Parameters
    ----------
    eta : float
        Shape η of ``D_{η,γ}``, in (−1, 1000].
    gamma : float
        Stopping parameter γ of ``D_{η,γ}``, in (0, 1).
    limit : int, default 10000000
        The number N of runs beyond which the tail is bounded, a whole number ≥ 1
        (:data:`SAMPLER_LIMIT` by default).

    Returns
    -------
    float
        The bound, at most 1.

    Notes
    -----
    For k > N the pmf falls by ``(1 − γ)(k + η)/(k + 1)`` from k to k + 1. With η > 1 that ratio is at
    most ``r = (1 − γ)(N + 1 + η)/(N + 2)`` and ``S = 1/(1 − r)``; with 0 ≤ η ≤ 1 it is at most
    ``1 − γ`` and ``S = 1/γ``; with η < 0 also ``(k + η)/(k + 1) ≤ (k/(k + 1))^{1−η}`` (Bernoulli's
    inequality), so the pmf is at most ``P[K = N+1]·((N+1)/k)^{1−η}`` and
    ``S = min(1/γ, 1 + (N + 1)/(−η))``. Returns at most 1.
    """
    eta, gamma = _eta_gamma(eta, gamma)
    limit = check.count("limit", limit)
    if eta > 1:
        r = (1.0 - gamma) * (limit + 1 + eta) / (limit + 2)
        series = math.inf if r >= 1 else 1.0 / (1.0 - r)
    elif eta >= 0:
        series = 1.0 / gamma
    else:
        series = min(1.0 / gamma, 1.0 + (limit + 1) / -eta)
    head = float(truncated_negative_binomial_pmf(eta, gamma, limit + 1))
    return 1.0 if head > 0 and math.isinf(series) else min(1.0, head * series)


def never_tried_probability(eta: float, gamma: float, candidates: int) -> float:
    """Chance that random stopping never draws a given one of ``candidates`` settings (e.g. the best).

    Each of the K runs draws a setting uniformly, so this is ``E[(1 − 1/m)^K]``, the probability
    generating function of ``D_{η,γ}`` at ``s = 1 − 1/m``: ``((1 − (1−γ)s)^{−η} − 1)/(γ^{−η} − 1)``
    (η ≠ 0), ``log(1 − (1−γ)s)/log γ`` (η = 0). One candidate: 0.

    Parameters
    ----------
    eta : float
        Shape η of ``D_{η,γ}``, in (−1, 1000].
    gamma : float
        Stopping parameter γ of ``D_{η,γ}``, in (0, 1).
    candidates : int
        Number m of candidate settings, a whole number ≥ 1.

    Returns
    -------
    float
        The probability (0 for one candidate).
    """
    eta, gamma = _eta_gamma(eta, gamma)
    m = check.count("candidates", candidates)
    s = 1.0 - 1.0 / m
    if s == 0.0:
        return 0.0
    x = math.log1p(-(1.0 - gamma) * s)  # log(1 − (1−γ)s) < 0
    if eta == 0:
        return x / math.log(gamma)
    return math.expm1(-eta * x) / math.expm1(-eta * math.log(gamma))


def selection_rdp(candidate_rdp, *, eta: float, gamma: float, orders=None) -> np.ndarray:
    """RDP curve of the best of ``K ~ D_{η,γ}`` candidate runs (Papernot & Steinke 2022, Thm 2).

    Parameters
    ----------
    candidate_rdp : array_like of float
        RDP of one candidate run at ``orders`` (shape ``(len(orders),)``), or of several
        candidate settings (shape ``(settings, len(orders))``: the largest at each order is used,
        which covers drawing any of them at random).
    eta, gamma : float
        Shape (η > −1) and stopping parameter (0 < γ < 1) of the number of runs; η = 1 is the
        geometric distribution of Liu & Talwar, with ``E[K] = 1/γ``.
    orders : array_like of float, optional
        The Rényi orders of ``candidate_rdp`` (> 1); :data:`ORDERS` by default.

    Returns
    -------
    numpy.ndarray
        ``ε′(λ)`` at every order λ of ``orders``, minimised over λ̂ ∈ {1} ∪ ``orders``, and at
        each order the smallest bound of any order ≥ it (RDP is non-decreasing in the order;
        dp-accounting's ``RepeatAndSelectDpEvent`` does the same).
    """
    eta, gamma = _eta_gamma(eta, gamma)
    a = ORDERS if orders is None else _orders(orders)
    r = np.asarray(check.real_array("candidate_rdp", candidate_rdp), float)
    if r.ndim == 2:
        if r.shape[0] == 0:
            raise ValueError("candidate_rdp must hold at least one candidate's curve")
        r = r.max(axis=0)
    if r.shape != a.shape:
        raise ValueError(f"candidate_rdp must have one value per order ({a.size}), got shape {r.shape}")
    if np.any(np.isnan(r)) or np.any(r < 0):
        raise ValueError(f"candidate_rdp must hold Rényi divergences in [0, ∞] (no NaN), got {candidate_rdp!r}")
    log_inv_gamma = -math.log(gamma)
    # (1 + η)(1 − 1/λ̂) ε̂ + (1 + η) log(1/γ)/λ̂, smallest over λ̂; λ̂ = 1 leaves (1 + η) log(1/γ)
    with np.errstate(invalid="ignore"):
        hat = (1 + eta) * ((1 - 1 / a) * r + log_inv_gamma / a)
    hat = np.where(np.isnan(hat), np.inf, hat)
    cost = min(float(np.min(hat)), (1 + eta) * log_inv_gamma)
    out = r + cost + math.log(truncated_negative_binomial_mean(eta, gamma)) / (a - 1)
    # RDP is non-decreasing in the order: a bound at a larger order holds at every smaller one
    order = np.argsort(a)
    tightened = np.minimum.accumulate(out[order][::-1])[::-1]
    result = np.empty_like(out)
    result[order] = tightened
    return result


def selection_epsilon(candidate_rdp, delta: float, *, eta: float, gamma: float, orders=None,
                      final_rdp=None) -> float:
    """ε at ``delta`` of the random-stopping selection of :func:`selection_rdp`, plus (when
    ``final_rdp`` is given) a fresh final run with the chosen setting (RDP curves add).

    Parameters
    ----------
    candidate_rdp : array_like of float
        RDP of one candidate run at ``orders``, or of several settings (shape
        ``(settings, len(orders))``), as for :func:`selection_rdp`.
    delta : float
        Target δ, in (0, 1).
    eta : float
        Shape η of ``D_{η,γ}``, in (−1, 1000].
    gamma : float
        Stopping parameter γ of ``D_{η,γ}``, in (0, 1).
    orders : array_like of float, optional
        Rényi orders, each in (1, ∞); :data:`ORDERS` by default.
    final_rdp : array_like of float, optional
        RDP of a fresh final run at ``orders``, in [0, ∞] per order; ``None``: no final run.

    Returns
    -------
    float
        ε at ``delta``.
    """
    a = ORDERS if orders is None else _orders(orders)
    curve = selection_rdp(candidate_rdp, eta=eta, gamma=gamma, orders=a)
    if final_rdp is not None:
        final = np.asarray(check.real_array("final_rdp", final_rdp), float)
        if final.shape != a.shape or np.any(np.isnan(final)) or np.any(final < 0):
            raise ValueError(f"final_rdp must hold one Rényi divergence in [0, ∞] per order ({a.size}), "
                             f"got shape {final.shape}")
        curve = curve + final
    return rdp_to_epsilon(a, curve, delta)


def tuning_epsilon(candidate_ledgers: Iterable[Iterable[PrivacyEvent]], final_ledger: Iterable[PrivacyEvent],
                   delta: float) -> float:
    """ε at ``delta`` of tuning over the candidate runs and then publishing ``final_ledger``'s run,
    by composition under the unified accountant (:func:`~dpadmm_lite.accounting.ledger_epsilon`
    of all their releases together).

    Parameters
    ----------
    candidate_ledgers : iterable of iterable of PrivacyEvent
        One ledger per candidate run (each non-empty), or ``None`` for a run whose ledger is
        unknown.
    final_ledger : iterable of PrivacyEvent
        The published run's ledger, non-empty.
    delta : float
        Target δ, in (0, 1).

    Returns
    -------
    float
        ε at ``delta`` (``math.inf`` when a candidate's ledger is ``None``).

    Notes
    -----
    Sound whatever chose the setting and however many candidates there were (a fixed number,
    the best validation score): every release that touched the training records is counted.
    With no candidates it is the final run's ε. A candidate run whose ledger is unknown (it
    failed) cannot be counted: pass ``None`` for it and the answer is ``math.inf``.
    """
    def events_of(name, ledger) -> list[PrivacyEvent]:
        try:
            ledger = list(ledger)
        except TypeError:
            ledger = None
        if not ledger or not all(isinstance(e, PrivacyEvent) for e in ledger):
            raise TypeError(f"{name} must be a non-empty sequence of PrivacyEvent (a run's ledger), got {ledger!r:.80}")
        return ledger

    final = events_of("final_ledger", final_ledger)
    try:
        candidates = list(candidate_ledgers)
    except TypeError:
        raise TypeError(f"candidate_ledgers must be a sequence of ledgers (or None), got {candidate_ledgers!r:.80}") from None
    if any(ledger is None for ledger in candidates):
        return math.inf
    events = [e for i, ledger in enumerate(candidates) for e in events_of(f"candidate_ledgers[{i}]", ledger)]
    return ledger_epsilon(events + final, delta)
