"""Linearized and accelerated ADMM, and their differentially private versions (Xu et al. 2020).

The problem is Xu et al.'s eq. (2), ``min f(x) + g(y) s.t. Ax + By = c`` with ``f = (1/n) Σ f_j``
smooth, in the splitting every :class:`~dpadmm_lite.problems.Problem` exposes: ``B = −I``,
``c = 0``, ``A = problem.constraint_matrix`` (``I`` for Lasso and ℓ1/ℓ2-logistic, ``[W; I]`` for
the graph-guided fused lasso) and ``g = problem.g`` with its prox ``problem.prox_g``.

Four registered algorithms, two iteration bodies:

=====================  ========================================  ===================
name                   what                                      paper
=====================  ========================================  ===================
``admm_linearized``    linearized ADMM, no noise (ε = ∞ only)    Alg. 2 with σ = 0
``dp_admm``            DP-ADMM: gradient perturbation            Alg. 2, Thm 1
``acc_admm``           accelerated linearized ADMM (ε = ∞ only)  Alg. 3 with σ = 0
``dp_acc_admm``        DP-AccADMM: Nesterov step on x and u      Alg. 3
=====================  ========================================  ===================

A private run with ``epsilon=math.inf`` draws σ = 0 and is bit-for-bit its non-private twin: the
twins are the same code with zero noise.

Reference: T. Xu, F. Shang, Y. Liu, H. Liu, L. Shen, M. Gong, "Differentially private ADMM
algorithms for machine learning", 2020 (``papers/xu2020_dp_admm_centralized_accelerated.txt``).
Equation and line numbers in the comments are the paper's.

**What ε means.** ``epsilon``, ``delta`` are the end-to-end budget of the whole run for
replace-one neighbours, as everywhere in the book. The default ``calibration="accountant"``
keeps Theorem 1's noise *shape* (one σ for every release) and asks the unified accountant
(:func:`dpadmm_lite.accounting.calibrate_ledger`) for the σ whose ledger spends exactly (ε, δ);
``calibration="paper"`` draws Theorem 1's σ, eq. (8), for reproducing the paper, and the trace
then shows what that noise truly spends (``Trace.privacy``) next to the paper's claim
(``Trace.privacy_paper``).

**Public constants only.** The per-example gradient bound ``c`` is ``problem.lipschitz``, which
comes from the declared public bound ``problem.feature_bound`` on a record's norm (never from a
maximum over the data); a private run on rows beyond it is refused (``ValueError`` naming
``feature_bound``) unless the gradients are clipped (``clip=C``, then ``c = C``). The step of a
private run never reads the data either: the default ``η = 1/L`` uses the public smoothness bound
``L = problem.public_smoothness`` (``feature_bound²/4`` for the logistic loss), not
``L_f = ‖XᵀX‖₂/4n``, and a given ``eta`` is the caller's (checked against Lemma 5's ``1/L_f``,
which can refuse it but never changes it) — a step chosen from the data would leak through every
iterate (one replaced row of norm 50 among 240 moves a data-read step
1/L_f from 4 to 0.38, with the same σ and the same reported ε). ``L`` bounds ``L_f`` only when
the rows respect ``feature_bound``; clipping the gradients does not make the loss smoother (the
clipped per-example gradient map is as Lipschitz as the unclipped one, ``‖a_j‖²/4``), so a
clipped private run on rows beyond the bound has no public smoothness bound and is refused unless
``eta`` is given (``ValueError`` naming ``eta``). A non-private run may read the data: its default
is ``1/max(L, L_f)``.

Where this module departs from the paper, and why (each is said again in the docstrings):

* **Sensitivity.** The paper's neighbouring datasets differ in one element (Def. 1, "differ in
  a single entry": one record *replaced*). Replacing record j changes the mean gradient by
  ``(∇f_j − ∇f_j')/n``, of norm up to ``2c/n``; the proof of Theorem 1 uses ``Δ = c/n``, the
  value for adding or removing a record. The ledger records the honest ``Δ = 2c/n``, so the
  unified accountant (``Trace.privacy``) never reports less than the truth, and the default
  calibration meets the budget for that Δ; ``calibration="paper"`` still draws the paper's σ (so
  the paper's experiment is reproduced as published) and ``Trace.privacy_paper`` states the
  paper's claim.
* **The initial dual.** ``u₀ = −(1/ρ)(Aᵀ)^†∇f(x₀)`` (Alg. 2, input line) reads the data; the
  paper does not privatise it. A private run perturbs that gradient like every other one, so
  the run makes ``T + 1`` Gaussian releases, and the ledger counts ``T + 1``.
* **γ.** Sec. IV-A requires ``γ ≥ γ_min = ηρ‖AᵀA‖₂ + 1`` (so that ``G = γI − ηρAᵀA ⪰ I``);
  Sec. V-B sets ``γ = 1``, which violates it for every η > 0. We enforce the theorem's condition
  (default ``γ = γ_min``) and raise a ``ValueError`` naming γ below it.
* **Assumption 2** asks ``A`` to have full *row* rank; ``A = [W; I]`` has full *column* rank
  instead. ``(Aᵀ)^†`` is the Moore–Penrose pseudo-inverse either way, and we use it.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from numbers import Real

import numpy as np
import scipy.sparse

from .. import _validate as check
from .._constraints import SCALE, Boolean, Interval, Options, Scale
from .. import mechanisms
from ..problems import Problem
from ..registry import register
from ..trace import NO_PRIVACY, PrivacyEvent, PrivacyGuarantee, Trace, from_iterates
from ._blas import single_blas_thread

__all__ = ["admm_linearized", "acc_admm", "dp_admm", "dp_acc_admm", "step_settings", "default_smoothness",
           "noise_scale", "CALIBRATIONS"]

#: How σ is chosen for a finite ε: the book's unified accountant (default: ε, δ end to end), or
#: Xu et al.'s Theorem 1, eq. (8) (the paper's own formula and meaning of ε).
CALIBRATIONS = ("accountant", "paper")

#: Goldstein et al. (2014), Alg. 8: keep the momentum while the combined residual falls by this factor.
RESTART_FACTOR = 0.999


# ---------------------------------------------------------------------- settings
def step_settings(problem, *, rho: float, eta: float | None = None, gamma: float | None = None,
                  private: bool = False, name: str = "dp_admm") -> tuple[float, float]:
    """Check (or choose) the step size η and the proximal weight γ of the linearized x-update.

    Parameters
    ----------
    problem
        The :class:`~dpadmm_lite.problems.Problem`; its smoothness bound and ``‖AᵀA‖₂`` are used.
    rho
        ADMM penalty ρ > 0.
    eta
        Step size, ``0 < η ≤ 1/L_f`` (Lemma 5 of Xu et al.; a given η is the caller's public choice,
        and the check against ``L_f`` can only refuse it). Default: for a private run
        (``private=True``) ``1/L`` with the *public* bound ``L = problem.public_smoothness ≥ L_f``,
        never read from the data; for a non-private run ``1/max(L, L_f)``
        (see :func:`default_smoothness`).
    gamma
        Proximal weight, ``γ ≥ γ_min = ηρ‖AᵀA‖₂ + 1`` (Sec. IV-A, so that ``G = γI − ηρAᵀA ⪰ I``).
        Default ``γ_min``. The paper's experiments state ``γ = 1`` (Sec. V-B), which is below
        ``γ_min`` for every η > 0; a number below ``γ_min`` is refused, and ``gamma="paper"`` runs the
        paper's ``γ = 1`` on request (outside the convergence analysis; privacy does not depend on γ, which
        only scales a step computed from noisy releases).
    private
        Whether the run draws noise: then η and γ come from public numbers only (``A`` is part of
        the problem, public unless ``problem.data_dependence`` says otherwise).
    name
        The algorithm, for the messages.

    Returns
    -------
    (eta, gamma)
        The x-update moves by ``η/γ`` times the (noisy) gradient of the augmented Lagrangian.
    """
    rho = check.scale("rho", rho)
    if eta is None:
        eta = 1.0 / default_smoothness(problem, private=private, name=name)
    else:  # the caller's step, public; Lemma 5 is checked, which reads the data only to refuse, never to choose
        eta = check.positive("eta", eta)
        eta_max = 1.0 / problem.smoothness
        if eta > eta_max * (1 + 1e-12):
            raise ValueError(f"eta must be in (0, 1/L_f = {eta_max:.6g}] (Xu et al., Lemma 5), got {eta!r}")
    gamma_min = eta * rho * problem.norm_AtA + 1.0
    if gamma is None:
        gamma = gamma_min
    elif isinstance(gamma, str):
        if gamma != "paper":
            raise ValueError(f"gamma must be a number >= γ_min = {gamma_min:.6g} or 'paper' (γ = 1, Xu et al., "
                             f"Sec. V-B), got {gamma!r}")
        gamma = 1.0  # the experiments' γ = 1: below γ_min, outside the analysis, but the paper's setting
    else:
        gamma = check.scale("gamma", gamma)
        if gamma < gamma_min * (1 - 1e-12):
            raise ValueError(
                f"gamma must be >= γ_min = ηρ‖AᵀA‖₂ + 1 = {gamma_min:.6g} (Xu et al., Sec. IV-A, so that "
                f"G = γI − ηρAᵀA ⪰ I), got {gamma!r}")
    return eta, gamma


def default_smoothness(problem, *, private: bool = False, name: str = "dp_admm") -> float:
    """The smoothness ``L`` behind the default step ``η = 1/L``.

    Private runs: ``problem.public_smoothness`` (``feature_bound²/4`` for the logistic loss,
    ``feature_bound²`` for the squared loss), a step chosen before seeing the data. It bounds
    ``L_f = ‖XᵀX‖₂/(4n)`` only for rows within the declared ``feature_bound``; a private run
    without clipping refuses other rows anyway, and a clipped one on such rows has no public
    smoothness bound (clipping the gradients does not make the loss smoother), so it must be given
    ``eta`` (``ValueError`` naming ``eta``) — never a step read from the data.

    Non-private runs may read the data: ``max(public_smoothness, L_f)``, so that Lemma 5's
    ``η ≤ 1/L_f`` holds on any rows.

    Parameters
    ----------
    problem : Problem
        The problem (its ``public_smoothness``, and ``smoothness`` for non-private runs).
    private : bool, default False
        Whether the run draws noise (then only public numbers are used).
    name : str, default "dp_admm"
        The algorithm, for the message.
    """
    public = float(problem.public_smoothness)
    if not private:
        return max(public, float(problem.smoothness))
    if problem.max_row_norm > problem.feature_bound * (1 + 1e-9):
        raise ValueError(
            f"eta must be given for the private {name!r} on rows beyond feature_bound = {problem.feature_bound:g} (a "
            f"training row has norm {problem.max_row_norm:.4g}): the default step 1/public_smoothness assumes every "
            f"row within the declared bound, clipping the gradients does not make the loss smoother, and a step read "
            f"from the data would leak. Pass a public eta, or declare a larger feature_bound")
    return public


def _gradient_bound(problem, clip, name: str) -> float:
    """The per-example gradient bound c of Theorem 1 (``‖∇f_j(x)‖ ≤ c`` for every record and x).

    From public constants only: for the logistic loss ``‖∇f_j‖ ≤ ‖a_j‖ ≤ feature_bound``, so
    ``c = problem.lipschitz`` (= the declared ``feature_bound``), and the rows are checked against
    it (:meth:`~dpadmm_lite.problems.Problem.check_feature_bound`: a record beyond the bound
    would not be covered). With per-example clipping to ``clip``, ``c = clip`` on any data.
    """
    if clip is not None:
        return clip
    c = problem.lipschitz
    if not math.isfinite(c):
        raise ValueError(
            f"clip must be given for a private run on the {problem.loss!r} loss: its per-example gradients "
            "are unbounded, so Theorem 1 needs them clipped to a norm clip > 0")
    problem.check_feature_bound(name)
    return float(c)


def noise_scale(problem, *, epsilon: float, delta: float, iterations: int, mu: float = 0.5,
                calibration: str = "accountant", clip: float | None = None, name: str = "dp_admm"):
    """σ of the gradient noise ``P_t ~ N(0, σ²I)``, the ledger, and the paper's statement.

    Parameters
    ----------
    problem
        The problem (its ``n`` and public per-example gradient bound ``c = problem.lipschitz``,
        i.e. ``feature_bound``; rows beyond it are refused unless ``clip`` is given).
    epsilon, delta
        Budget; ``epsilon = math.inf`` gives σ = 0 and an empty ledger.
    iterations
        T, the number of x-updates.
    mu
        Theorem 1's split of ε between the RDP term (με) and the conversion term ((1−μ)ε),
        ``0 < μ < 1`` (used by ``calibration="paper"`` only).
    calibration
        ``"accountant"`` (default): (ε, δ) is the end-to-end budget of the run. The ledger at
        unit scale — ``T + 1`` Gaussian releases of the mean gradient, sensitivity
        ``Δ = 2c/n`` (replace-one), noise Δ — is scaled by the factor ``s`` that
        :func:`dpadmm_lite.accounting.calibrate_ledger` finds, so ``σ = sΔ`` and the unified
        accountant reports ``0.97ε ≤ ε_spent ≤ ε``.
        ``"paper"``: σ from Theorem 1, eq. (8), ``σ² = c²αT/(2n²εμ)`` with
        ``α = log(1/δ)/((1−μ)ε) + 1`` — the paper's meaning of ε (Δ = c/n, T releases).
    clip
        Per-example gradient clipping norm; replaces c (required for the squared loss).
    name
        The algorithm, for the message when the rows exceed ``feature_bound``.

    Returns
    -------
    sigma : float
    ledger : list of PrivacyEvent
        One Gaussian event: sensitivity ``Δ = 2c/n`` (replace-one neighbours), noise σ,
        count ``T + 1`` (the T x-updates and the gradient inside u₀).
    privacy_paper : PrivacyGuarantee
        What Theorem 1 claims for this σ: the target ε for ``"paper"``; for ``"accountant"``,
        :func:`dpadmm_lite.accounting.xu2020_epsilon` (the paper's argument read backwards).

    Examples
    --------
    >>> import math
    >>> from dpadmm_lite import accounting, datasets, problems
    >>> from dpadmm_lite.algorithms.xu2020 import noise_scale
    >>> X, y, _ = datasets.make_classification(500, 5, seed=0)
    >>> sigma, ledger, _ = noise_scale(problems.logistic(X, y, 1e-2), epsilon=1.0, delta=1e-5, iterations=50)
    >>> 0.97 <= accounting.ledger_epsilon(ledger, 1e-5) <= 1.0
    True
    """
    epsilon = check.epsilon(epsilon)
    delta = check.delta(delta)
    iterations = check.count("iterations", iterations)
    mu = check.open_unit("mu", mu)
    check.choice("calibration", calibration, CALIBRATIONS)
    if math.isinf(epsilon):
        return 0.0, [], NO_PRIVACY
    from .. import accounting

    c = _gradient_bound(problem, clip, name)
    n = problem.n
    sensitivity = 2.0 * c / n  # replace one record: ‖(∇f_j − ∇f_j')/n‖ ≤ 2c/n (the proof of Thm 1 uses c/n)
    releases = iterations + 1  # T noisy gradients in the x-updates + the one inside u₀
    note = "noisy mean gradient ∇f + P_t (T x-updates and u₀)"
    if calibration == "paper":
        sigma = float(accounting.xu2020_sigma(epsilon, delta, iterations=iterations, n=n, lipschitz=c, mu=mu))  # (8)
        claimed = epsilon
    else:  # the paper's shape (one σ for all T + 1 releases), scaled to spend (ε, δ) end to end
        unit = [PrivacyEvent("gaussian", sensitivity, sensitivity, count=releases, note=note)]
        sigma = accounting.calibrate_ledger(unit, epsilon, delta) * sensitivity
        # what the paper's own argument (Δ = c/n, T releases, best μ) claims for this σ
        claimed = float(accounting.xu2020_epsilon(sigma, delta, iterations=iterations, n=n, lipschitz=c))
    paper = PrivacyGuarantee(
        claimed, delta, "Xu et al. 2020, Thm 1",
        statement=(f"σ² = c²αT/(2n²εμ), α = log(1/δ)/((1−μ)ε) + 1, with c = {c:.4g}, n = {n}, "
                   f"T = {iterations}; the proof takes Δ = c/n and counts T releases"))
    ledger = [PrivacyEvent("gaussian", sensitivity, sigma, count=releases, note=note)]
    return sigma, ledger, paper


# ---------------------------------------------------------------------- iteration bodies


@dataclass
class _Iterates:
    """Everything a run produced: x_t, y_t, u_t for t = 1 … T, the noise, and x₀, u₀."""

    x: np.ndarray  # (T, d)
    y: np.ndarray  # (T, m)
    u: np.ndarray  # (T, m)
    noise: np.ndarray  # (T + 1, d): P_0 (inside u₀), P_1 … P_T
    x0: np.ndarray
    u0: np.ndarray


#: Below this fraction of non-zero features the gradient runs on a CSR copy of X (Adult: 12 %).
SPARSE_BELOW = 0.3
_DATA: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # problem → (X, X or its CSR copy)


def _data_matrix(problem):
    """The training features as the gradient uses them: a CSR copy when sparse enough (one per problem).

    The two products of a gradient, ``X x`` and ``Xᵀ r``, then cost O(nnz) instead of O(nd): on
    Adult's one-hot features (12 % non-zero) the 100 iterations of a full-data run take about a
    quarter of the time.
    """
    cached = _DATA.get(problem)
    if cached is None or cached[0] is not problem.X:
        X = problem.X
        cached = (X, scipy.sparse.csr_matrix(X) if np.count_nonzero(X) < SPARSE_BELOW * X.size else X)
        _DATA[problem] = cached
    return cached[1]


def _gradient_oracle(problem, clip):
    """∇f, or the mean of per-example gradients clipped to norm ``clip`` (one pass over X)."""
    X, labels, n = _data_matrix(problem), problem.y, problem.n
    if clip is None:
        if not scipy.sparse.issparse(X):
            return problem.gradient

        def gradient(x):  # ∇f(x) = (1/n) Σ_j ℓ'(a_j·x) a_j
            return X.T @ problem._dloss_of_margin(X @ x, labels) / n

        return gradient
    row_norm = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel() if scipy.sparse.issparse(X)
                       else (X**2).sum(axis=1))

    def clipped_gradient(x):
        r = problem._dloss_of_margin(X @ x, labels)  # ∇f_j(x) = r_j a_j, so ‖∇f_j‖ = |r_j|·‖a_j‖
        norm = np.abs(r) * row_norm
        scale = np.where(norm > clip, clip / np.where(norm > 0, norm, 1.0), 1.0)
        return X.T @ (r * scale) / n

    return clipped_gradient


def _initial_dual(problem, gradient0, rho):
    """u₀ = −(1/ρ)(Aᵀ)^† ∇f(x₀) (Alg. 2, input); (Aᵀ)^† is computed once per problem."""
    return -(problem.constraint_pinv_T @ gradient0) / rho


def _linearized_step(x, u, gradient, noise, *, A, rho, step, prox_g):
    """Lines 2–4 of Algorithm 2 from the point ``(x, u)`` (``(x̂, û)`` in Algorithm 3).

    Returns ``(y_t, x_t, u_t)``. With ``B = −I`` and ``c = 0``, ``Ax + By − c = Ax − y``.
    """
    Ax = A @ x
    y = prox_g(Ax + u, 1.0 / rho)  # (3) y_t = argmin_y g(y) + ρ/2‖Ax_{t−1} + By − c + u_{t−1}‖²
    # (7) closed form: x_t = x_{t−1} − (η/γ)[∇f(x_{t−1}) + P_t + ρAᵀ(Ax_{t−1} + By_t − c + u_{t−1})]
    x_new = x - step * (gradient + noise + rho * (A.T @ (Ax - y + u)))
    u_new = u + A @ x_new - y  # (5) u_t = u_{t−1} + Ax_t + By_t − c
    return y, x_new, u_new


def _iterate(problem, *, rho, iterations, eta, gamma, sigma, rng, accelerated, clip=None,
             restart=False) -> _Iterates:
    """Run Algorithm 2 (``accelerated=False``) or Algorithm 3 (with Goldstein's restart if asked)."""
    A = problem.constraint_products
    d, m, T = problem.d, A.shape[0], iterations
    grad = _gradient_oracle(problem, clip)
    step = eta / gamma
    P = mechanisms.gaussian(rng, sigma, (T + 1, d))  # P_0 (for u₀), P_1 … P_T ~ N(0, σ²I)
    xs, ys, us = np.empty((T, d)), np.empty((T, m)), np.empty((T, m))

    x0 = np.zeros(d)  # x₀ = 0: data-independent
    u0 = _initial_dual(problem, grad(x0) + P[0], rho)  # Alg. 2/3 input: u₀ = −(1/ρ)(Aᵀ)^†∇f(x₀), perturbed
    x, u = x0, u0
    if not accelerated:  # Algorithm 2 (DP-ADMM)
        for t in range(T):
            y, x, u = _linearized_step(x, u, grad(x), P[t + 1], A=A, rho=rho, step=step, prox_g=problem.prox_g)
            xs[t], ys[t], us[t] = x, y, u
    else:  # Algorithm 3 (DP-AccADMM): x̂₀ = x₀, û₀ = u₀, θ₁ = 1
        x_hat, u_hat, theta, combined = x0, u0, 1.0, math.inf
        for t in range(T):
            # lines 2–4 from (x̂_{t−1}, û_{t−1}); the gradient is taken at x̂_{t−1}
            y, x_new, u_new = _linearized_step(x_hat, u_hat, grad(x_hat), P[t + 1], A=A, rho=rho, step=step,
                                               prox_g=problem.prox_g)
            if restart:  # Goldstein et al. (2014), Alg. 8: combined residual ρ‖u_t − û‖² + ρ‖A(x_t − x̂)‖²
                previous = combined
                combined = rho * (np.sum((u_new - u_hat) ** 2) + np.sum((A @ (x_new - x_hat)) ** 2))
            if restart and not combined < RESTART_FACTOR * previous:
                theta_next = 1.0  # restart: θ ← 1, (x̂, û) ← (x_{t−1}, u_{t−1})
                x_hat, u_hat = x, u
                combined = previous / RESTART_FACTOR
            else:
                theta_next = (1.0 + math.sqrt(1.0 + 4.0 * theta**2)) / 2.0  # line 5
                momentum = (theta - 1.0) / theta_next
                x_hat = x_new + momentum * (x_new - x)  # line 6, eq. (10)
                u_hat = u_new + momentum * (u_new - u)  # line 7
            x, u, theta = x_new, u_new, theta_next
            xs[t], ys[t], us[t] = x, y, u
    return _Iterates(xs, ys, us, P, x0, u0)


def _run(problem, *, name, epsilon, delta, rho, iterations, seed, accelerated, eta, gamma, mu, calibration, clip,
         restart=None, record_every=1) -> Trace:
    epsilon = check.epsilon(epsilon)
    delta = check.delta(delta)
    iterations = check.count("iterations", iterations)
    seed = check.count("seed", seed, minimum=0)
    record_every = min(check.count("record_every", record_every), iterations)  # beyond T: the last iterate only
    if clip is not None:
        clip = check.scale("clip", clip)
    if restart is not None and not isinstance(restart, (bool, np.bool_)):
        raise ValueError(f"restart must be True or False, got {restart!r}")
    sigma, ledger, paper = noise_scale(problem, epsilon=epsilon, delta=delta, iterations=iterations, mu=mu,
                                       calibration=calibration, clip=clip, name=name)  # refuses rows first
    eta, gamma = step_settings(problem, rho=rho, eta=eta, gamma=gamma, private=not math.isinf(epsilon), name=name)
    rng = np.random.default_rng(seed)
    with single_blas_thread():
        it = _iterate(problem, rho=rho, iterations=iterations, eta=eta, gamma=gamma, sigma=sigma, rng=rng,
                      accelerated=accelerated, clip=clip, restart=bool(restart))
        return _trace(problem, it, sigma=sigma, ledger=ledger, paper=paper, delta=delta, eta=eta, gamma=gamma,
                      mu=mu, calibration=calibration, clip=clip, restart=restart, record_every=record_every)


def _trace(problem, it, *, sigma, ledger, paper, delta, eta, gamma, mu, calibration, clip, restart,
           record_every=1) -> Trace:
    """Evaluate the stacked iterates once (objective, gap, accuracy) and attach noise and privacy; with
    ``record_every=k`` only the iterates after steps k, 2k, …, T (the same run, the same released model)."""
    A = problem.constraint_matrix
    T = len(it.x)
    keep = np.unique(np.append(np.arange(record_every - 1, T, record_every), T - 1))
    x, y = it.x[keep], it.y[keep]
    residual = np.sqrt(((x @ A.T - y) ** 2).sum(axis=1))  # ‖Ax_t + By_t − c‖
    noise = {"sigma": sigma, "step": eta / gamma}
    if ledger:
        event = ledger[0]
        noise.update(sensitivity=event.sensitivity, noise_multiplier=event.noise_multiplier,
                     releases=event.count, calibration=calibration)
    return from_iterates(
        problem, "", x, model=it.x[-1].copy(),  # released model: x_T (Alg. 2/3 output)
        noise=noise, ledger=ledger, delta=delta, privacy_paper=paper,
        metrics={"constraint_residual": residual},
        params={"eta": eta, "gamma": gamma, "mu": mu, "calibration": calibration, "clip": clip,
                "constraint_matrix": A, "record_every": record_every,
                **({} if restart is None else {"restart": bool(restart)})},
    )


def _require_no_noise(name: str, epsilon: float, private_twin: str) -> None:
    if not math.isinf(check.epsilon(epsilon)):
        raise ValueError(f"epsilon must be ∞ (math.inf) for the non-private {name!r}, got {epsilon!r}; "
                         f"run {private_twin!r} for a private run")


# ---------------------------------------------------------------------- registered algorithms
#: The ranges of the options of Xu et al.'s runs (the registry checks them, tests/test_bad_input.py
#: reads them); the bounds the problem sets, η ≤ 1/L_f and γ ≥ γ_min, are checked by :func:`step_settings`.
_CONSTRAINTS = {
    "eta": [SCALE, None],
    "gamma": [Scale(words="a number >= γ_min = ηρ‖AᵀA‖₂ + 1"), Options(["paper"], note="γ = 1, Xu et al., Sec. V-B"),
              None],
    "mu": Interval(Real, 0, 1, closed="neither"),
    "calibration": Options(CALIBRATIONS),
    "clip": [SCALE, None],
}
#: The accelerated runs' options: those of ``_CONSTRAINTS`` and Goldstein et al.'s restart switch.
_ACCELERATED_CONSTRAINTS = {**_CONSTRAINTS, "restart": Boolean()}



@register("dp_admm", paper="xu2020", private=True, setting="centralized",
          description="DP-ADMM: linearized ADMM with Gaussian gradient perturbation (Xu et al. 2020, Alg. 2)",
          tasks=("logistic-l2", "logistic-l1", "fused", "lasso"), tuning={"rho": (0.1, 1.0), "clip": (0.1, 0.3)},
          constraints=_CONSTRAINTS)
def dp_admm(problem: Problem, *, epsilon: float, delta: float, rho: float, iterations: int, seed: int,
            eta: float | None = None, gamma: float | str | None = None, mu: float = 0.5,
            calibration: str = "accountant", clip: float | None = None, record_every: int = 1) -> Trace:
    """DP-ADMM (Xu et al. 2020, Algorithm 2): linearized ADMM with gradient perturbation.

    Parameters
    ----------
    problem : Problem
        A :class:`~dpadmm_lite.problems.Problem` (logistic or squared loss; any regulariser: the
        splitting ``Ax − y = 0`` is ``problem.constraint_matrix``).
    epsilon : float
        End-to-end privacy budget of the run (replace-one neighbours) under the default
        calibration; ``epsilon = math.inf`` means no noise.
    delta : float
        δ in [1e-100, 1), the δ of the budget that ``epsilon`` describes.
    rho : float
        ADMM penalty ρ > 0.
    iterations : int
        T ≥ 1.
    seed : int
        Seed of ``numpy.random.default_rng`` (the only source of randomness).
    eta : float or None, default None
        Step size η ∈ (0, 1/L_f]; private runs default to ``1/L`` with the public
        ``L = problem.public_smoothness`` (the step does not read the data; ``eta`` is required when
        ``clip`` lets rows beyond ``feature_bound`` in, see :func:`default_smoothness`).
    gamma : float, str or None, default None
        γ ≥ ηρ‖AᵀA‖₂ + 1 (default: that minimum). The x-update moves by ``η/γ``.
    mu : float, default 0.5
        μ ∈ (0, 1) of Theorem 1 (default 0.5, as in the paper's experiments); used by
        ``calibration="paper"`` only.
    calibration : str, default "accountant"
        ``"accountant"`` (default: σ such that the unified accountant's ε for the ledger — Δ = 2c/n,
        T + 1 releases — is the end-to-end target, within 3 %) or ``"paper"`` (Theorem 1, eq. 8,
        the paper's meaning of ε); see :func:`noise_scale`.
    clip : float or None, default None
        Optional per-example gradient clipping norm C; needed for a private run on the squared
        loss, or on rows beyond ``problem.feature_bound`` (it then replaces the gradient bound c;
        on such rows ``eta`` must be given too, since no public smoothness bound holds there).
        ``None``: no clipping, c = ``problem.lipschitz`` from the public ``feature_bound``.
    record_every : int, default 1
        Score the iterates after steps k, 2k, …, T only (default 1: every step), as the other
        families do: a sweep that reads the final model or objective sets ``k = T``. The run, its
        noise and its released model ``x_T`` are the same for every k.

    Returns
    -------
    Trace
        ``objective``/``objective_gap``/``test_accuracy`` of ``x_t`` for t = 1 … T, the released
        model ``x_T``, ``noise["sigma"]``, the ``ledger`` (one Gaussian event, Δ = 2c/n,
        ``T + 1`` releases), ``privacy`` (unified accountant) and ``privacy_paper`` (Theorem 1),
        and ``metrics["constraint_residual"]`` = ``‖Ax_t − y_t‖``. ``params`` holds η, γ, the clip
        and the constraint matrix A used; a problem whose graph was read from the training rows
        (``problem.data_dependence``) makes ``privacy`` *not covered* (ε = ∞).

    Notes
    -----
    For t = 1 … T::

        y_t = prox_{g/ρ}(Ax_{t−1} + u_{t−1})                                     # (3)
        x_t = x_{t−1} − (η/γ)[∇f(x_{t−1}) + P_t + ρAᵀ(Ax_{t−1} − y_t + u_{t−1})]   # (7)
        u_t = u_{t−1} + Ax_t − y_t                                                # (5)

    with ``P_t ~ N(0, σ²I)``, ``x₀ = 0`` and ``u₀ = −(1/ρ)(Aᵀ)^†(∇f(x₀) + P₀)``. The x-update is
    the minimiser of the linearised augmented Lagrangian plus ``‖x − x_{t−1}‖²_G/(2η)``,
    ``G = γI − ηρAᵀA``: the data enter only through one mean gradient per iteration, whose
    sensitivity is bounded by the per-example gradient bound c — that is what linearisation buys.
    Released model: ``x_T`` (the paper outputs ``x_T, y_T``; its utility theorem is about the
    averages, which we do not release).

    Privacy: by default σ is calibrated so that the whole run spends the end-to-end (ε, δ)
    under the unified accountant (``calibration="accountant"``); ``calibration="paper"`` draws
    Theorem 1's σ instead. Departures from the paper (module docstring): Δ = 2c/n in the ledger
    (the proof uses c/n), u₀'s gradient is perturbed and counted (T + 1 releases), γ ≥ γ_min is
    enforced, and the default step 1/L uses the public smoothness bound.

    References
    ----------
    T. Xu, F. Shang, Y. Liu, H. Liu, L. Shen, M. Gong, "Differentially private ADMM algorithms for
    machine learning", 2020.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("dp_admm", problem, epsilon=1.0, delta=1e-5, iterations=10, seed=0)
    >>> trace.privacy.epsilon <= 1.0, trace.model.shape
    (True, (5,))
    """
    return _run(problem, name="dp_admm", epsilon=epsilon, delta=delta, rho=rho, iterations=iterations, seed=seed,
                accelerated=False, eta=eta, gamma=gamma, mu=mu, calibration=calibration, clip=clip,
                record_every=record_every)


@register("dp_acc_admm", paper="xu2020", private=True, setting="centralized",
          description="DP-AccADMM: DP-ADMM with Nesterov extrapolation of x and u (Xu et al. 2020, Alg. 3)",
          tasks=("logistic-l2", "logistic-l1", "fused", "lasso"), tuning={"rho": (0.1, 1.0), "clip": (0.1, 0.3)},
          constraints=_ACCELERATED_CONSTRAINTS)
def dp_acc_admm(problem: Problem, *, epsilon: float, delta: float, rho: float, iterations: int, seed: int,
                eta: float | None = None, gamma: float | str | None = None, mu: float = 0.5,
                calibration: str = "accountant", clip: float | None = None, restart: bool = False,
                record_every: int = 1) -> Trace:
    """DP-AccADMM (Xu et al. 2020, Algorithm 3): DP-ADMM with a Nesterov step on x and u.

    Parameters
    ----------
    problem : Problem
        A :class:`~dpadmm_lite.problems.Problem` (logistic or squared loss; any regulariser: the
        splitting ``Ax − y = 0`` is ``problem.constraint_matrix``).
    epsilon : float
        End-to-end privacy budget of the run (replace-one neighbours) under the default
        calibration; ``epsilon = math.inf`` means no noise.
    delta : float
        δ in [1e-100, 1), the δ of the budget that ``epsilon`` describes.
    rho : float
        ADMM penalty ρ > 0.
    iterations : int
        T ≥ 1.
    seed : int
        Seed of ``numpy.random.default_rng`` (the only source of randomness).
    eta : float or None, default None
        Step size η ∈ (0, 1/L_f]; private runs default to ``1/L`` with the public
        ``L = problem.public_smoothness`` (the step does not read the data; ``eta`` is required when
        ``clip`` lets rows beyond ``feature_bound`` in, see :func:`default_smoothness`).
    gamma : float, str or None, default None
        γ ≥ ηρ‖AᵀA‖₂ + 1 (default: that minimum). The x-update moves by ``η/γ``.
    mu : float, default 0.5
        μ ∈ (0, 1) of Theorem 1 (default 0.5, as in the paper's experiments); used by
        ``calibration="paper"`` only.
    calibration : str, default "accountant"
        ``"accountant"`` (default: σ such that the unified accountant's ε for the ledger — Δ = 2c/n,
        T + 1 releases — is the end-to-end target, within 3 %) or ``"paper"`` (Theorem 1, eq. 8,
        the paper's meaning of ε); see :func:`noise_scale`.
    clip : float or None, default None
        Optional per-example gradient clipping norm C; needed for a private run on the squared
        loss, or on rows beyond ``problem.feature_bound`` (it then replaces the gradient bound c;
        on such rows ``eta`` must be given too, since no public smoothness bound holds there).
        ``None``: no clipping, c = ``problem.lipschitz`` from the public ``feature_bound``.
    restart : bool, default False
        Accelerated versions only: Goldstein et al.'s restart rule (default ``False``, as in the
        paper).
    record_every : int, default 1
        Score the iterates after steps k, 2k, …, T only (default 1: every step), as the other
        families do: a sweep that reads the final model or objective sets ``k = T``. The run, its
        noise and its released model ``x_T`` are the same for every k.

    Returns
    -------
    Trace
        ``objective``/``objective_gap``/``test_accuracy`` of ``x_t`` for t = 1 … T, the released
        model ``x_T``, ``noise["sigma"]``, the ``ledger`` (one Gaussian event, Δ = 2c/n,
        ``T + 1`` releases), ``privacy`` (unified accountant) and ``privacy_paper`` (Theorem 1),
        and ``metrics["constraint_residual"]`` = ``‖Ax_t − y_t‖``. ``params`` holds η, γ, the clip
        and the constraint matrix A used; a problem whose graph was read from the training rows
        (``problem.data_dependence``) makes ``privacy`` *not covered* (ε = ∞).

    Notes
    -----
    With ``x̂₀ = x₀``, ``û₀ = u₀`` and ``θ₁ = 1``, for t = 1 … T: lines 2–4 of Algorithm 2 taken
    from ``(x̂_{t−1}, û_{t−1})`` (the noisy gradient is evaluated at ``x̂_{t−1}``), then::

        θ_{t+1} = (1 + √(1 + 4θ_t²)) / 2                     # line 5
        x̂_t = x_t + (θ_t − 1)/θ_{t+1} · (x_t − x_{t−1})      # line 6, eq. (10)
        û_t = u_t + (θ_t − 1)/θ_{t+1} · (u_t − u_{t−1})      # line 7

    The noise is the same as DP-ADMM's (same σ, Theorem 1: the privacy analysis only sees the T
    noisy gradients, whatever point they are taken at). The momentum weight
    ``(θ_t − 1)/θ_{t+1}`` tends to 1, so each noise draw keeps being re-applied in the following
    steps: acceleration amplifies the injected noise, which is why DP-AccADMM can lose to DP-ADMM
    at small ε (large σ) and win at large ε.

    Relation to Goldstein et al. (2014), "Fast alternating direction optimization methods",
    Algorithm 7 (fast ADMM) for ``min H(u) + G(v) s.t. Au + Bv = b``: they solve for the first
    block from ``(v̂_k, λ̂_k)``, then the second block, update the dual, and extrapolate the
    *second* block ``v`` and the dual ``λ`` with the same θ sequence. Algorithm 3 is that scheme
    with the blocks' roles swapped in name — Xu's y (exact prox, updated first) is Goldstein's
    u, Xu's x (updated second) is Goldstein's v, and ``ρu`` is Goldstein's λ — with two
    differences: the x-block is not minimised exactly but by one linearised (gradient) step,
    and there is no restart. Goldstein et al. prove O(1/k²) only for strongly convex H and G
    (quadratic G) and add a restart rule (their Algorithm 8) for the weakly convex case; Xu et
    al. give no convergence analysis for Algorithm 3 (Sec. IV-C).

    That matters: on the (weakly convex) graph-guided fused lasso the momentum without restart
    makes the iterates circle the optimum — the objective gap of ``acc_admm`` stalls around
    1e-4 while ``admm_linearized`` goes to machine precision (``tests/test_linearized.py``).
    ``restart=True`` adds Goldstein et al.'s Algorithm 8: with the combined residual
    ``c_t = ρ‖u_t − û_{t−1}‖² + ρ‖A(x_t − x̂_{t−1})‖²``, keep the momentum while
    ``c_t < 0.999 c_{t−1}``, else set ``θ_{t+1} = 1``, ``(x̂_t, û_t) = (x_{t−1}, u_{t−1})`` and
    ``c_t = c_{t−1}/0.999``. The restart test reads only iterates, i.e. post-processes the noisy
    releases, so it costs no privacy. Default ``False``: Algorithm 3 as published.

    References
    ----------
    T. Xu, F. Shang, Y. Liu, H. Liu, L. Shen, M. Gong, "Differentially private ADMM algorithms for
    machine learning", 2020.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("dp_acc_admm", problem, epsilon=1.0, delta=1e-5, iterations=10, seed=0)
    >>> trace.privacy.epsilon <= 1.0, trace.model.shape
    (True, (5,))
    """
    return _run(problem, name="dp_acc_admm", epsilon=epsilon, delta=delta, rho=rho, iterations=iterations,
                seed=seed, accelerated=True, eta=eta, gamma=gamma, mu=mu, calibration=calibration, clip=clip,
                restart=restart, record_every=record_every)


@register("admm_linearized", paper="xu2020", private=False, setting="centralized",
          description="Linearized ADMM for Ax + By = c (Xu et al. 2020, Alg. 2 without noise)",
          constraints=_CONSTRAINTS)
def admm_linearized(problem: Problem, *, epsilon: float = math.inf, delta: float = 1e-5, rho: float = 1.0,
                    iterations: int = 100, seed: int = 0, eta: float | None = None, gamma: float | str | None = None,
                    mu: float = 0.5, calibration: str = "accountant", clip: float | None = None,
                    record_every: int = 1) -> Trace:
    """Linearized ADMM (Xu et al. 2020, Algorithm 2 with σ = 0): the non-private twin of ``dp_admm``.

    Parameters
    ----------
    problem : Problem
        A :class:`~dpadmm_lite.problems.Problem` (logistic or squared loss; any regulariser: the
        splitting ``Ax − y = 0`` is ``problem.constraint_matrix``).
    epsilon : float, default math.inf
        End-to-end privacy budget of the run (replace-one neighbours) under the default
        calibration; ``epsilon = math.inf`` means no noise.
    delta : float, default 1e-05
        δ in [1e-100, 1), the δ of the budget that ``epsilon`` describes.
    rho : float, default 1.0
        ADMM penalty ρ > 0.
    iterations : int, default 100
        T ≥ 1.
    seed : int, default 0
        Seed of ``numpy.random.default_rng`` (the only source of randomness).
    eta : float or None, default None
        Step size η ∈ (0, 1/L_f]; private runs default to ``1/L`` with the public
        ``L = problem.public_smoothness`` (the step does not read the data; ``eta`` is required when
        ``clip`` lets rows beyond ``feature_bound`` in, see :func:`default_smoothness`).
    gamma : float, str or None, default None
        γ ≥ ηρ‖AᵀA‖₂ + 1 (default: that minimum). The x-update moves by ``η/γ``.
    mu : float, default 0.5
        μ ∈ (0, 1) of Theorem 1 (default 0.5, as in the paper's experiments); used by
        ``calibration="paper"`` only.
    calibration : str, default "accountant"
        ``"accountant"`` (default: σ such that the unified accountant's ε for the ledger — Δ = 2c/n,
        T + 1 releases — is the end-to-end target, within 3 %) or ``"paper"`` (Theorem 1, eq. 8,
        the paper's meaning of ε); see :func:`noise_scale`.
    clip : float or None, default None
        Optional per-example gradient clipping norm C; needed for a private run on the squared
        loss, or on rows beyond ``problem.feature_bound`` (it then replaces the gradient bound c;
        on such rows ``eta`` must be given too, since no public smoothness bound holds there).
        ``None``: no clipping, c = ``problem.lipschitz`` from the public ``feature_bound``.
    record_every : int, default 1
        Score the iterates after steps k, 2k, …, T only (default 1: every step), as the other
        families do: a sweep that reads the final model or objective sets ``k = T``. The run, its
        noise and its released model ``x_T`` are the same for every k.

    Returns
    -------
    Trace
        ``objective``/``objective_gap``/``test_accuracy`` of ``x_t`` for t = 1 … T, the released
        model ``x_T``, ``noise["sigma"]``, the ``ledger`` (one Gaussian event, Δ = 2c/n,
        ``T + 1`` releases), ``privacy`` (unified accountant) and ``privacy_paper`` (Theorem 1),
        and ``metrics["constraint_residual"]`` = ``‖Ax_t − y_t‖``. ``params`` holds η, γ, the clip
        and the constraint matrix A used; a problem whose graph was read from the training rows
        (``problem.data_dependence``) makes ``privacy`` *not covered* (ε = ∞).

    Notes
    -----
    Exactly the code of :func:`dp_admm` with no noise; ``epsilon`` must be ``math.inf``.
    ``mu`` and ``calibration`` are accepted so that one set of options runs all four
    algorithms of this module; they have no effect without noise.

    References
    ----------
    T. Xu, F. Shang, Y. Liu, H. Liu, L. Shen, M. Gong, "Differentially private ADMM algorithms for
    machine learning", 2020.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("admm_linearized", problem, iterations=10, seed=0)
    >>> trace.model.shape, len(trace.objective)
    ((5,), 10)
    """
    _require_no_noise("admm_linearized", epsilon, "dp_admm")
    return _run(problem, name="admm_linearized", epsilon=math.inf, delta=delta, rho=rho, iterations=iterations,
                seed=seed, accelerated=False, eta=eta, gamma=gamma, mu=mu, calibration=calibration, clip=clip,
                record_every=record_every)


@register("acc_admm", paper="xu2020", private=False, setting="centralized",
          description="Accelerated linearized ADMM, Nesterov step on x and u (Xu et al. 2020, Alg. 3 without "
                      "noise; cf. Goldstein et al. 2014)",
          constraints=_ACCELERATED_CONSTRAINTS)
def acc_admm(problem: Problem, *, epsilon: float = math.inf, delta: float = 1e-5, rho: float = 1.0,
             iterations: int = 100, seed: int = 0, eta: float | None = None, gamma: float | str | None = None,
             mu: float = 0.5, calibration: str = "accountant", clip: float | None = None, restart: bool = False,
             record_every: int = 1) -> Trace:
    """Accelerated linearized ADMM (Xu et al. 2020, Algorithm 3 with σ = 0): twin of ``dp_acc_admm``.

    Parameters
    ----------
    problem : Problem
        A :class:`~dpadmm_lite.problems.Problem` (logistic or squared loss; any regulariser: the
        splitting ``Ax − y = 0`` is ``problem.constraint_matrix``).
    epsilon : float, default math.inf
        End-to-end privacy budget of the run (replace-one neighbours) under the default
        calibration; ``epsilon = math.inf`` means no noise.
    delta : float, default 1e-05
        δ in [1e-100, 1), the δ of the budget that ``epsilon`` describes.
    rho : float, default 1.0
        ADMM penalty ρ > 0.
    iterations : int, default 100
        T ≥ 1.
    seed : int, default 0
        Seed of ``numpy.random.default_rng`` (the only source of randomness).
    eta : float or None, default None
        Step size η ∈ (0, 1/L_f]; private runs default to ``1/L`` with the public
        ``L = problem.public_smoothness`` (the step does not read the data; ``eta`` is required when
        ``clip`` lets rows beyond ``feature_bound`` in, see :func:`default_smoothness`).
    gamma : float, str or None, default None
        γ ≥ ηρ‖AᵀA‖₂ + 1 (default: that minimum). The x-update moves by ``η/γ``.
    mu : float, default 0.5
        μ ∈ (0, 1) of Theorem 1 (default 0.5, as in the paper's experiments); used by
        ``calibration="paper"`` only.
    calibration : str, default "accountant"
        ``"accountant"`` (default: σ such that the unified accountant's ε for the ledger — Δ = 2c/n,
        T + 1 releases — is the end-to-end target, within 3 %) or ``"paper"`` (Theorem 1, eq. 8,
        the paper's meaning of ε); see :func:`noise_scale`.
    clip : float or None, default None
        Optional per-example gradient clipping norm C; needed for a private run on the squared
        loss, or on rows beyond ``problem.feature_bound`` (it then replaces the gradient bound c;
        on such rows ``eta`` must be given too, since no public smoothness bound holds there).
        ``None``: no clipping, c = ``problem.lipschitz`` from the public ``feature_bound``.
    restart : bool, default False
        Accelerated versions only: Goldstein et al.'s restart rule (default ``False``, as in the
        paper).
    record_every : int, default 1
        Score the iterates after steps k, 2k, …, T only (default 1: every step), as the other
        families do: a sweep that reads the final model or objective sets ``k = T``. The run, its
        noise and its released model ``x_T`` are the same for every k.

    Returns
    -------
    Trace
        ``objective``/``objective_gap``/``test_accuracy`` of ``x_t`` for t = 1 … T, the released
        model ``x_T``, ``noise["sigma"]``, the ``ledger`` (one Gaussian event, Δ = 2c/n,
        ``T + 1`` releases), ``privacy`` (unified accountant) and ``privacy_paper`` (Theorem 1),
        and ``metrics["constraint_residual"]`` = ``‖Ax_t − y_t‖``. ``params`` holds η, γ, the clip
        and the constraint matrix A used; a problem whose graph was read from the training rows
        (``problem.data_dependence``) makes ``privacy`` *not covered* (ε = ∞).

    Notes
    -----
    Exactly the code of :func:`dp_acc_admm` with no noise; ``epsilon`` must be ``math.inf``. See
    :func:`dp_acc_admm` for how it relates to Goldstein et al.'s fast ADMM and for ``restart``
    (their Algorithm 8), which it needs to converge on weakly convex problems.

    References
    ----------
    T. Xu, F. Shang, Y. Liu, H. Liu, L. Shen, M. Gong, "Differentially private ADMM algorithms for
    machine learning", 2020.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("acc_admm", problem, iterations=10, seed=0)
    >>> trace.model.shape, len(trace.objective)
    ((5,), 10)
    """
    _require_no_noise("acc_admm", epsilon, "dp_acc_admm")
    return _run(problem, name="acc_admm", epsilon=math.inf, delta=delta, rho=rho, iterations=iterations,
                seed=seed, accelerated=True, eta=eta, gamma=gamma, mu=mu, calibration=calibration, clip=clip,
                restart=restart, record_every=record_every)
