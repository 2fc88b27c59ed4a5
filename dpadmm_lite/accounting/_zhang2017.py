"""Zhang & Zhu (2017), DVP and PVP: the paper's own noise rates, sensitivities and ε."""

from __future__ import annotations

import math

import numpy as np

from .. import _validate as check
from ..privacy import PrivacyEvent
from ._ledger import calibrate_ledger
from ._shared import _ret

# Zhang & Zhu (2017). Book notation throughout: ``lam`` = the paper's regulariser weight ρ, ``rho`` =
# its ADMM penalty η, ``loss_weight`` = C^R (the book's w_p = N m_p/n, 1 for equal sizes),
# ``local_size`` = B_p (m_p), ``n_neighbors`` = N_p, ``c1`` = the bound on |ℒ''|‖x‖² (¼ for the
# logistic loss on rows of norm ≤ 1). Every function is vectorised over the per-node arrays.

#: DVP's three noise rates: the proof of Thm 1 (ζ = α̂/Δ, Δ = 2 for |ℒ'| ≤ 1), Algorithm 2 as
#: printed (ζ = α̂) and Appendix E (ζ = α/4).
ZHANG2017_DVP_RULES = ("proof", "algorithm", "appendix")


def _zhang2017_nodes(name: str, value, minimum: float) -> np.ndarray:
    a = check.real_array(name, value)
    if np.any(~np.isfinite(a)) or np.any(a < minimum):
        raise ValueError(f"{name} must be whole numbers >= {minimum:g}, got {value!r}")
    return a


def _zhang2017_positive(name: str, value) -> np.ndarray:
    a = check.real_array(name, value)
    if np.any(~np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"{name} must be in (0, ∞), got {value!r}")
    return a


def _zhang2017_alpha(alpha) -> np.ndarray:
    a = check.real_array("alpha", alpha)
    if a.size == 0 or np.any(np.isnan(a)) or np.any(a <= 0):
        raise ValueError(f"alpha (per-iteration privacy α_p(t)) must be in (0, ∞], got {alpha!r}")
    return a


def zhang2017_dvp_jacobian(*, local_size, lam: float, rho: float, n_neighbors, extra=0.0, loss_weight=1.0,
                           c1: float = 0.25):
    """The Jacobian term ``ᾱ = 2 ln(1 + c₁/((B_p/C^R)(λ + Φ + 2ρN_p)))`` of DVP (Zhang & Zhu, eq. 30).

    Parameters
    ----------
    local_size : float or array_like of float
        B_p, the number of records of each node, ≥ 1 (a number or one per node).
    lam : float
        λ, the weight of the regulariser, ≥ 0 and finite.
    rho : float
        ρ, the ADMM penalty, > 0 and finite.
    n_neighbors : float or array_like of float
        N_p, the number of neighbours of each node, ≥ 0 (a number or one per node).
    extra : float or array_like of float, default 0.0
        Φ, the extra penalty, ≥ 0 (a number or one per node).
    loss_weight : float or array_like of float, default 1.0
        C^R, the weight of the loss term, ≥ 0 (a number or one per node).
    c1 : float, default 0.25
        c₁, the bound on the second derivative of the loss, > 0 and finite.

    Returns
    -------
    float or numpy.ndarray
        ᾱ, a float when every input is a scalar.

    Notes
    -----
    Objective perturbation releases the exact minimiser f of (13); the density of f is the noise
    density times ``|det ∂ε/∂f|``, and replacing one record changes that determinant by at most
    the factor ``e^ᾱ`` (a rank-2 change of the Hessian, Chaudhuri et al. 2011). ``ᾱ`` does not
    depend on the noise: it is spent whatever ζ is. (The factor is ``(1 + x)²`` as in the paper;
    ``1 + x`` would do for one replaced record, so this is conservative.)
    """
    B = _zhang2017_nodes("local_size", local_size, 1)
    Np = _zhang2017_nodes("n_neighbors", n_neighbors, 0)
    lam = check.nonnegative("lam", lam)
    rho = check.positive("rho", rho)
    Phi = _zhang2017_nodes("extra", extra, 0)
    CR = _zhang2017_nodes("loss_weight", loss_weight, 0)
    c1 = check.positive("c1", c1)
    return _ret(2 * np.log1p(c1 * CR / (B * (lam + Phi + 2 * rho * Np))))


def zhang2017_dvp_zeta(alpha, *, local_size, lam: float, rho: float, n_neighbors, loss_weight=1.0, c1: float = 0.25,
                       sensitivity: float = 2.0, rule: str = "proof"):
    """Noise rate ζ_p(t) and extra penalty Φ of DVP, Zhang & Zhu (2017), Algorithm 2.

    Parameters
    ----------
    alpha : float or array_like of float
        The per-iteration privacy α_p(t), each in (0, ∞] (∞: no noise).
    local_size : float or array_like of float
        B_p, the number of records of each node, ≥ 1 (a number or one per node).
    lam : float
        λ, the weight of the regulariser, ≥ 0 and finite.
    rho : float
        ρ, the ADMM penalty, > 0 and finite.
    n_neighbors : float or array_like of float
        N_p, the number of neighbours of each node, ≥ 0 (a number or one per node).
    loss_weight : float or array_like of float, default 1.0
        C^R, the weight of the loss term, ≥ 0 (a number or one per node).
    c1 : float, default 0.25
        c₁, the bound on the second derivative of the loss, > 0 and finite.
    sensitivity : float or array_like of float, default 2.0
        Δ, the ℓ2-sensitivity of the update, > 0 and finite (a number or one per node).
    rule : {"proof", "algorithm", "appendix"}, default "proof"
        Which of the paper's three ζ (see the Notes).

    Returns
    -------
    zeta : float or numpy.ndarray
        The noise rate ζ_p(t).
    Phi : float or numpy.ndarray
        The extra penalty Φ.

    Notes
    -----
    For a target per-iteration privacy α_p(t) (pure DP of the broadcast f_p(t+1))::

        α̂ = α_p(t) − ln(1 + c₁/((B_p/C^R)(ρ + 2ηN_p)))²   (paper's symbols: ρ = λ here, η = ρ here)
        if α̂ > 0:  Φ = 0
        else:      Φ = c₁/((B_p/C^R)(e^{α_p(t)/4} − 1)) − ρ − 2ηN_p,  α̂ = α_p(t)/2

    (in the second branch Φ makes the Jacobian term exactly α_p(t)/2). The noise ε_p of (14) has
    density ∝ exp(−ζ‖ε‖); the paper gives three different ζ (``rule``):

    * ``"proof"`` (default): ``ζ = α̂/Δ`` — Appendix A bounds the change of the noise that
      explains a given f_p(t+1) by ``Δ = 2`` (``|ℒ'| ≤ 1``, ``‖x‖ ≤ 1``, one record replaced),
      and "by selecting ζ_p(t) = α̂_p/2" the noise spends ``ζΔ = α̂``, the Jacobian ``ᾱ = α − α̂``:
      α in total. ``sensitivity`` is that Δ (``2·problem.lipschitz`` in general; larger in PVP's
      final step, where an unreleased state enters; a number or one per node).
    * ``"algorithm"``: ``ζ = α̂``, as printed in Algorithm 2 — spends ``2α̂ + ᾱ = α + α̂ > α``.
    * ``"appendix"``: ``ζ = α/4``, as in the proof of Theorem 4 (Appendix E) — spends
      ``α/2 + ᾱ``, which is ≤ α only when ``ᾱ ≤ α/2`` (the Φ branch, where it equals the proof's).

    :func:`zhang2017_dvp_spent` gives what any ζ truly spends. Vectorised over α (e.g.
    ``(T, N)``), ``local_size``, ``loss_weight`` and ``n_neighbors`` (``(N,)``); ``α = ∞`` gives
    ζ = ∞ (no noise) and Φ = 0.
    """
    a = _zhang2017_alpha(alpha)
    check.choice("rule", rule, ZHANG2017_DVP_RULES)
    sensitivity = _zhang2017_positive("sensitivity", sensitivity)
    jac = np.asarray(zhang2017_dvp_jacobian(local_size=local_size, lam=lam, rho=rho, n_neighbors=n_neighbors,
                                            loss_weight=loss_weight, c1=c1))
    B = np.asarray(local_size, float)
    CR = np.asarray(loss_weight, float)
    Np = np.asarray(n_neighbors, float)
    alpha_hat = a - jac
    ok = alpha_hat > 0
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        phi_needed = c1 * CR / (B * np.expm1(a / 4)) - lam - 2 * rho * Np
    phi = np.where(ok, 0.0, np.maximum(phi_needed, 0.0))
    alpha_hat = np.where(ok, alpha_hat, a / 2)
    if rule == "proof":
        zeta = alpha_hat / sensitivity  # Appendix A: ζ_p(t) = α̂_p / 2 for Δ = 2
    elif rule == "algorithm":
        zeta = alpha_hat  # Algorithm 2 as printed
    else:
        zeta = a / 4  # Appendix E
    return _ret(zeta), _ret(phi)


def zhang2017_dvp_spent(zeta, *, local_size, lam: float, rho: float, n_neighbors, extra=0.0, loss_weight=1.0,
                        c1: float = 0.25, sensitivity: float = 2.0):
    """Pure ε that one DVP update with noise rate ``zeta`` and extra penalty ``extra`` (Φ) spends.

    ``ζΔ + ᾱ`` (proof of Theorem 1: the noise density ratio ``e^{ζΔ}``, eq. 31, times the
    Jacobian ratio ``e^ᾱ`` of :func:`zhang2017_dvp_jacobian`), ``Δ = sensitivity``.

    Parameters
    ----------
    zeta : float or array_like of float
        The noise rate ζ, each in (0, ∞].
    local_size : float or array_like of float
        B_p, the number of records of each node, ≥ 1 (a number or one per node).
    lam : float
        λ, the weight of the regulariser, ≥ 0 and finite.
    rho : float
        ρ, the ADMM penalty, > 0 and finite.
    n_neighbors : float or array_like of float
        N_p, the number of neighbours of each node, ≥ 0 (a number or one per node).
    extra : float or array_like of float, default 0.0
        Φ, the extra penalty, ≥ 0 (a number or one per node).
    loss_weight : float or array_like of float, default 1.0
        C^R, the weight of the loss term, ≥ 0 (a number or one per node).
    c1 : float, default 0.25
        c₁, the bound on the second derivative of the loss, > 0 and finite.
    sensitivity : float or array_like of float, default 2.0
        Δ, the ℓ2-sensitivity of the update, > 0 and finite (a number or one per node).

    Returns
    -------
    float or numpy.ndarray
        The pure ε spent, ``ζΔ + ᾱ``.
    """
    z = np.asarray(zeta, dtype=float)
    if np.any(np.isnan(z)) or np.any(z <= 0):
        raise ValueError(f"zeta must be in (0, ∞], got {zeta!r}")
    sensitivity = _zhang2017_positive("sensitivity", sensitivity)
    jac = zhang2017_dvp_jacobian(local_size=local_size, lam=lam, rho=rho, n_neighbors=n_neighbors, extra=extra,
                                 loss_weight=loss_weight, c1=c1)
    return _ret(z * sensitivity + np.asarray(jac))


def zhang2017_pvp_sensitivity(*, local_size, lam: float, loss_weight=1.0):
    """ℓ2-sensitivity of the PVP primal update (18): ``2C^R/(λB_p)`` (Zhang & Zhu, App. B, eq. 33).

    Parameters
    ----------
    local_size : float or array_like of float
        B_p, the number of records of each node, ≥ 1 (a number or one per node).
    lam : float
        λ, the weight of the regulariser, > 0 and finite.
    loss_weight : float or array_like of float, default 1.0
        C^R, the weight of the loss term, ≥ 0 (a number or one per node).

    Returns
    -------
    float or numpy.ndarray
        ``2C^R/(λB_p)``.

    Notes
    -----
    The paper's bound: one replaced record moves the minimiser of the λ-strongly convex (18) by at
    most ``2C^R/(λB_p)`` — with the state ``f_p(t)`` held fixed. See
    :func:`zhang2017_pvp_hidden_sensitivity` for what it is when ``f_p(t)``, never released,
    is allowed to differ too.
    """
    B = _zhang2017_nodes("local_size", local_size, 1)
    lam = check.positive("lam", lam)
    CR = _zhang2017_nodes("loss_weight", loss_weight, 0)
    return _ret(2 * CR / (lam * B))


def zhang2017_pvp_zeta(alpha, *, local_size, lam: float, loss_weight=1.0):
    """Noise rate of PVP, Zhang & Zhu (2017), Algorithm 3: ``ζ_p(t) = λB_pα_p(t)/(2C^R)``.

    (Paper: ``ρB_pα_p(t)/(2C^R)`` with ρ its regulariser weight = the book's λ.) Then
    ``ζ · sensitivity = α_p(t)``: each broadcast V_p(t) is pure α_p(t)-DP (App. B).
    Vectorised over α and ``local_size``.

    Parameters
    ----------
    alpha : float or array_like of float
        The per-iteration privacy α_p(t), each in (0, ∞] (∞: no noise).
    local_size : float or array_like of float
        B_p, the number of records of each node, ≥ 1 (a number or one per node).
    lam : float
        λ, the weight of the regulariser, > 0 and finite.
    loss_weight : float or array_like of float, default 1.0
        C^R, the weight of the loss term, ≥ 0 (a number or one per node).

    Returns
    -------
    float or numpy.ndarray
        ζ_p(t).
    """
    a = _zhang2017_alpha(alpha)
    return _ret(a / np.asarray(zhang2017_pvp_sensitivity(local_size=local_size, lam=lam, loss_weight=loss_weight)))


def zhang2017_pvp_hidden_sensitivity(iterations: int, *, local_size, lam: float, rho: float, n_neighbors,
                                     loss_weight=1.0, lipschitz: float = 1.0, form: str = "text",
                                     residual=0.0) -> np.ndarray:
    """Sensitivity of PVP's broadcasts ``V_p(t) = f_p(t) + ε_p(t)``, t = 1 … T, with ``f_p(t)`` unreleased.

    Parameters
    ----------
    iterations : int
        Number of iterations T, a whole number ≥ 1.
    local_size : float or array_like of float
        B_p, the number of records of each node, ≥ 1 (a number or one per node).
    lam : float
        λ, the weight of the regulariser, ≥ 0 and finite.
    rho : float
        ρ, the ADMM penalty, > 0 and finite.
    n_neighbors : float or array_like of float
        N_p, the number of neighbours of each node, ≥ 0 (a number or one per node).
    loss_weight : float or array_like of float, default 1.0
        C^R, the weight of the loss term, ≥ 0 (a number or one per node).
    lipschitz : float, default 1.0
        c, the bound on ``|ℒ'|‖x‖``, > 0 and finite.
    form : {"text", "eq18"}, default "text"
        Where (18) is centred: the text's (9) (κ = 1) or the printed (18) (κ = 2).
    residual : float or array_like of float, default 0.0
        r, a certified bound on the distance of the computed to the exact minimiser, ≥ 0.

    Returns
    -------
    numpy.ndarray
        ``E_1 … E_T``, shape ``(T,)`` (or ``(T, N)`` for per-node arrays).

    Notes
    -----
    Appendix B compares the minimisers of (18) for D and D′ *with the same* ``f_p(t)``. But
    ``f_p(t)`` is never released: an observer of the broadcasts sees the same transcript under D
    and D′ while the two runs' hidden ``f_p(t)`` differ. Both hidden states are functions of the
    data and the transcript (the update is deterministic given them), so the release of step t
    is an ℓ2-Laplace mechanism with sensitivity ``E_t``, the largest possible distance of the two
    runs' ``f_p(t)`` given the same transcript. Strong convexity of (18) in f (modulus
    ``μ = λ + 2ρN_p``, the ADMM penalty included) gives the recursion

        E_0 = 0,   E_t = (2C^R c/B_p + κ ρ N_p E_{t−1}) / μ + 2r,

    with ``c = lipschitz`` (``|ℒ'|‖x‖ ≤ c``), ``κ = 1`` when (18) is centred at
    ``½(f_p(t) + V_j(t))`` (``form="text"``, the text's (9) with the neighbours' broadcasts) and
    ``κ = 2`` for the printed ``½(f_p(t) + V_j(t) − ε_p(t))`` (``form="eq18"``: ``ε_p(t) = V_p(t) − f_p(t)``
    doubles the weight of the hidden state), and ``r`` a certified bound on the distance of the
    computed to the exact minimiser (``residual``). The fixed point ``2C^Rc/(B_p(λ + (2−κ)ρN_p))``
    (plus the residual terms) is at most the paper's ``2C^Rc/(λB_p)``: the paper's noise is safe
    despite the hidden state, and much larger than needed when ``ρN_p ≫ λ``.
    """
    T = check.count("iterations", iterations)
    check.choice("form", form, ("text", "eq18"))
    B = _zhang2017_nodes("local_size", local_size, 1)
    Np = _zhang2017_nodes("n_neighbors", n_neighbors, 0)
    lam = check.nonnegative("lam", lam)
    rho = check.positive("rho", rho)
    CR = _zhang2017_nodes("loss_weight", loss_weight, 0)
    c = check.positive("lipschitz", lipschitz)
    r = _zhang2017_nodes("residual", residual, 0)
    kappa = 1.0 if form == "text" else 2.0
    mu = lam + 2 * rho * Np
    g = 2 * CR * c / B
    E = np.zeros(np.broadcast(B, Np, CR, r).shape)
    out = []
    for _ in range(T):  # the recursion over iterations (vectorised over nodes)
        E = (g + kappa * rho * Np * E) / mu + 2 * r
        out.append(E)
    return np.array(out)


def zhang2017_alpha_for_budget(epsilon: float, delta: float, iterations: int, *, schedule=None) -> np.ndarray:
    """Per-iteration privacy α_p(t), t = 1 … T, whose T pure-DP iterations spend exactly (ε, δ) end to end.

    Parameters
    ----------
    epsilon : float
        End-to-end ε, > 0 (``math.inf``: α = ∞, no noise).
    delta : float
        Target δ, in (0, 1).
    iterations : int
        Number of iterations T, a whole number ≥ 1.
    schedule : array_like of float, optional
        The shape of α_p(t), T positive finite numbers; ``None``: constant.

    Returns
    -------
    numpy.ndarray
        α_p(t), shape ``(T,)``.

    Notes
    -----
    Zhang & Zhu state privacy per iteration ("dynamic" α_p(t)-DP, Definition 1); the book's ε is
    the end-to-end budget. ``schedule`` (default constant) is the shape of α_p(t); it is scaled so
    that the unified accountant (:func:`ledger_epsilon` of T pure α_p(t)-DP releases, each
    dominated by randomized response with that ε₀) gives ε at δ, within 0.5 % below
    (:func:`calibrate_ledger`).
    ``epsilon = ∞`` gives α = ∞ (no noise).
    """
    epsilon = check.positive("epsilon", epsilon, allow_inf=True)
    delta = check.open_unit("delta", delta)
    T = check.count("iterations", iterations)
    shape = np.ones(T) if schedule is None else np.asarray(schedule, dtype=float)
    if shape.shape != (T,) or np.any(~np.isfinite(shape)) or np.any(shape <= 0):
        raise ValueError(f"schedule must hold {T} positive numbers (the shape of α_p(t)), got {schedule!r}")
    if math.isinf(epsilon):
        return np.full(T, np.inf)
    values, counts = np.unique(shape, return_counts=True)
    unit = [PrivacyEvent("laplace_l2", float(v), 1.0, count=int(c), note="unit α shape") for v, c in zip(values, counts)]
    s = calibrate_ledger(unit, epsilon, delta)
    return shape / s * (1 - 1e-9)  # pure ε₀ = ζΔ = shape/s per iteration (the 1e-9: rounding of ζ·Δ later)


def zhang2017_total_epsilon(alpha) -> float:
    """End-to-end pure ε of a schedule α_p(t) by basic composition: the worst node's sum over iterations.

    Zhang & Zhu state only the per-iteration ("dynamic") guarantee α_p(t) (Theorems 1–2);
    composed over the iterations by basic composition, node p's data is
    ``Σ_t α_p(t)``-DP. ``alpha`` of shape ``(T,)`` or ``(T, N)``.

    Parameters
    ----------
    alpha : array_like of float
        The schedule α_p(t), shape ``(T,)`` or ``(T, N)``, non-empty, each in (0, ∞).

    Returns
    -------
    float
        The worst node's ``Σ_t α_p(t)``.
    """
    a = check.real_array("alpha", alpha)
    if a.size == 0 or np.any(~np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"alpha must be a non-empty array of values in (0, ∞), got {alpha!r}")
    a = a.reshape(a.shape[0], -1)
    return float(np.max(a.sum(axis=0)))
