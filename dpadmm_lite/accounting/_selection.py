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

Public surface: :func:`truncated_negative_binomial_mean`, :func:`selection_rdp`,
:func:`selection_epsilon`, :func:`tuning_epsilon`.
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from ..privacy import PrivacyEvent
from .. import _validate as check
from ._ledger import ledger_epsilon
from ._rdp import ORDERS, _orders, rdp_to_epsilon

__all__ = ["truncated_negative_binomial_mean", "selection_rdp", "selection_epsilon", "tuning_epsilon"]


def _eta_gamma(eta: float, gamma: float) -> tuple[float, float]:
    if isinstance(eta, bool) or not isinstance(eta, (int, float, np.floating, np.integer)) or not (
            math.isfinite(eta) and eta > -1):
        raise ValueError(f"eta must be a finite number > -1 (the truncated negative binomial's shape), got {eta!r}")
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float, np.floating, np.integer)) or not (0 < gamma < 1):
        raise ValueError(f"gamma must be a number in (0, 1) (the truncated negative binomial's stopping "
                         f"parameter), got {gamma!r}")
    return float(eta), float(gamma)


def truncated_negative_binomial_mean(eta: float, gamma: float) -> float:
    """Expected number of runs ``E[K]`` under ``D_{η,γ}`` (Papernot & Steinke 2022, Sec. 2).

    ``η(1 − γ)/(γ(1 − γ^η))`` for η ≠ 0 and ``(1/γ − 1)/log(1/γ)`` for η = 0 (its limit).

    Examples
    --------
    >>> truncated_negative_binomial_mean(1.0, 0.25)   # geometric: 1/γ
    4.0
    """
    eta, gamma = _eta_gamma(eta, gamma)
    if eta == 0:
        return (1.0 / gamma - 1.0) / math.log(1.0 / gamma)
    return eta * (1.0 - gamma) / (gamma * -math.expm1(eta * math.log(gamma)))


def selection_rdp(candidate_rdp, *, eta: float, gamma: float, orders=None) -> np.ndarray:
    """RDP curve of the best of ``K ~ D_{η,γ}`` candidate runs (Papernot & Steinke 2022, Thm 2).

    Parameters
    ----------
    candidate_rdp
        RDP of one candidate run at ``orders`` (shape ``(len(orders),)``), or of several
        candidate settings (shape ``(settings, len(orders))``: the largest at each order is used,
        which covers drawing any of them at random).
    eta, gamma
        Shape (η > −1) and stopping parameter (0 < γ < 1) of the number of runs; η = 1 is the
        geometric distribution of Liu & Talwar, with ``E[K] = 1/γ``.
    orders
        The Rényi orders of ``candidate_rdp`` (> 1); :data:`ORDERS` by default.

    Returns
    -------
    numpy.ndarray
        ``ε′(λ)`` at every order λ of ``orders``, minimised over λ̂ ∈ {1} ∪ ``orders``.
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
    return r + cost + math.log(truncated_negative_binomial_mean(eta, gamma)) / (a - 1)


def selection_epsilon(candidate_rdp, delta: float, *, eta: float, gamma: float, orders=None,
                      final_rdp=None) -> float:
    """ε at ``delta`` of the random-stopping selection of :func:`selection_rdp`, plus (when
    ``final_rdp`` is given) a fresh final run with the chosen setting (RDP curves add)."""
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
