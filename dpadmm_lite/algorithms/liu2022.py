"""Laplacian-smoothing stochastic ADMMs with differential privacy (Liu et al. 2022).

The problem is Liu et al.'s eq. (1), ``min f(x) + r(y) s.t. Ax + By = c`` with
``f = (1/n) Σ f_i``, in the splitting every :class:`~dpadmm_lite.problems.Problem` exposes:
``B = −I``, ``c = 0``, ``A = problem.constraint_matrix`` (``[W; I]`` for the graph-guided fused
lasso, ``I`` for ℓ1/ℓ2-logistic regression) and ``r = problem.g`` with its prox
``problem.prox_g``. The strongly convex experiment of the paper (Sec. V-C) adds ``(λ₂/2)‖x‖²`` to
every ``f_i``: :func:`graph_guided_logistic` builds that problem (``problem.ridge = λ₂``).

Every iteration takes one minibatch gradient, adds Gaussian noise and moves ``x`` along the
**Laplacian-smoothed** direction of eq. (5)/(7)::

    y_{t+1} = prox_{r/β}(Ax_t + λ_t)
    x_{t+1} = x_t − (η/γ) Q_ν⁻¹ [ G_t + βAᵀ(Ax_t − y_{t+1} + λ_t) ]
    λ_{t+1} = λ_t + Ax_{t+1} − y_{t+1}

with ``Q_ν = I − νΔ`` (:mod:`dpadmm_lite.smoothing`), ``G_t`` the noisy gradient estimate and
λ the scaled dual (the book calls the ADMM penalty ρ — the paper's β — and the regulariser
weight λ; in the code the dual is ``u``, as in the other modules).

=============  ========================================================  ======================
name           what                                                      paper
=============  ========================================================  ======================
``dp_sadmm``   noisy minibatch gradient, decaying step, averaged output  Alg. 2, Thm 2
``sadmm``      the same without noise (STOC-ADMM of Ouyang et al.)       Alg. 2 with σ = 0
``dp_vradmm``  SVRG-style epochs: snapshot gradient + m inner steps      Alg. 1, Thm 1
``svrg_admm``  the same without noise (SVRG-ADMM of Zheng & Kwok)        Alg. 1 with σ = 0
=============  ========================================================  ======================

ν is an argument of all four (default 2, the paper's ν ∈ {2, 3}); ``nu=0`` is exactly the
algorithm without smoothing. A private run with ``epsilon=math.inf`` is bit for bit its
non-private twin: the minibatches come from one random stream and the noise from another, both
spawned from ``numpy.random.default_rng(seed)``, and σ = 0 draws nothing.

Both algorithms come in the paper's two variants (``convexity``): **general convex** (GC) and
**strongly convex** (SC, when ``f`` is μ-strongly convex: by default when ``problem.ridge > 0``,
μ = λ₂). They differ in the step size, the dual restart and the output (docstrings below).

**What ε means.** ``epsilon``, ``delta`` are the end-to-end budget of the whole run for
replace-one neighbours. The default ``calibration="accountant"`` builds the run's ledger at unit
noise in the paper's noise shape and scales it with
:func:`dpadmm_lite.accounting.calibrate_ledger`; ``calibration="paper"`` draws Theorem 2's σ
(DP-SADMM) or Theorem 1's σ with an assumed constant (DP-VRADMM), and the trace shows what that
noise truly spends (``Trace.privacy``) next to the paper's claim (``Trace.privacy_paper``).

Where this module departs from the paper, and why:

* **Minibatches are Poisson samples** (each record independently with probability
  ``q = b/n``, the gradient sum divided by the *expected* size b), because that is the sampling
  the book's accountant analyses; the paper draws b records without replacement.
* **Replace-one neighbours under sampling.** One record contributes a vector of norm
  ≤ ``c_rec`` to the minibatch sum (``c_rec = feature_bound`` for the logistic loss, the SVRG
  difference included); a *replaced* record can move it by ``2c_rec``. The ledger records each
  sampled release as ``PrivacyEvent(neighbours="replace_one")`` with the per-record bound
  ``c_rec/b``: the accountant analyses the exact replace-one pair of Poisson sampling,
  ``((1−q)N(0, σ²) + qN(c_rec/b, σ²), (1−q)N(0, σ²) + qN(−c_rec/b, σ²))`` (checked against
  dp-accounting's REPLACE_ONE analysis in ``tests/test_liu.py``). Recording the release as
  add/remove with ``2c_rec/b``, as the library did before, is sound but asks for up to a third
  more noise at the book's settings. At ``q = 1`` both are the Gaussian with sensitivity ``2c_rec/b``.
* **The SVRG snapshot gradient** ``p̃ = ∇f(x̃^{s−1})`` enters every inner step of DP-VRADMM
  without noise in Algorithm 1 — it is computed from all the data, so no noise added later can
  protect it. Here it is released once per epoch with its own Gaussian noise
  (``p̂ = p̃ + N(0, σ_p²I)``, replace-one sensitivity ``2c/n``, recorded in the ledger), and the
  inner steps use ``p̂``. The default ``σ_p = σ/√m`` makes the snapshot's error, which is
  shared by the m inner steps of an epoch, about as large as the averaged error of their m
  fresh noises. ``private_snapshot=False`` runs Algorithm 1 as printed. That is private too —
  the m releases of an epoch show ``p̃`` with noise ``σ/√m`` — but at a larger ε than its
  minibatch ledger says, because ``p̃``'s sensitivity ``2c/n`` is not shrunk by sampling: the
  general convex trace reports the ε of a split of each release's noise between ``p̃`` and the
  minibatch term (:func:`dpadmm_lite.accounting.liu2022_printed_epsilon`); the strongly convex
  one, whose dual restart also uses the exact ``p̃``, says "not covered".
* **The strongly convex dual restart** ``λ₀^{s+1} = −(1/β)(Aᵀ)^†∇f(x̃^s)`` uses the exact full
  gradient at ``x̃^s`` — the next epoch's snapshot point, so ``p̂`` of that epoch is used: no
  extra release.
* **γ and the steps.** The analysis needs ``γ = 1 + ηβ‖AᵀA‖₂`` (eq. 9, so that ``Ĝ ⪰ I``) for
  the largest step η used; the experiments set ``γ = 1``, which breaks it. We enforce
  ``γ ≥ γ_min`` (default ``γ_min``; smaller is a ``ValueError`` naming γ). The strongly convex
  step ``2γ‖Q_ν‖₂/(μ(t+1))`` of Algorithm 2 is enormous for small μ (about 2·10⁶ at μ = 10⁻⁵)
  and makes γ circular; Lemma 5 needs ``η < 1/g``, so the step is capped at
  ``eta`` (default ``1/(2g)``, with g the public per-example smoothness).
* **Public constants.** Sensitivities use ``problem.lipschitz`` (from the declared public
  ``feature_bound``; rows beyond it are refused) or a clipping norm below it; step sizes use the
  public smoothness ``problem.per_example_smoothness`` (+ λ₂), never numbers read from the data —
  so a clipped private run on rows beyond ``feature_bound`` must be given ``eta``. The graph in
  ``A`` must be public too: a problem whose graph was estimated from the training rows
  (``problem.data_dependence``) makes every private run's privacy *not covered*.

Reference: Y. Liu, J. Geng, F. Shang, W. An, H. Liu, Q. Zhu, W. Feng, "Laplacian smoothing
stochastic ADMMs with differential privacy guarantees", IEEE TIFS 17, 2022
(``papers/liu2022_laplacian_smoothing_stochastic_admm.txt``). Equation, line and theorem numbers
in the comments are the paper's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import lru_cache
from numbers import Integral, Real

import numpy as np

from .. import _validate as check
from .._constraints import SCALE, Boolean, Interval, Options
from .. import mechanisms
from ..problems import (Optimum, Problem, _abs_barrier, _single_threaded_blas, _solve_psd, fused_constraint,
                        shipped_optimum)
from ..registry import register
from ..smoothing import operator_norm, smooth_checked, tau
from ..trace import NO_PRIVACY, PrivacyEvent, PrivacyGuarantee, Trace, from_iterates
from ._blas import single_blas_thread

__all__ = ["dp_sadmm", "sadmm", "dp_vradmm", "svrg_admm", "graph_guided_logistic", "RidgeProblem",
           "settings", "noise_scale", "CALIBRATIONS", "CONVEXITY", "REALISED_EVALUATIONS"]

#: How σ is chosen for a finite ε: the unified accountant (ε, δ end to end), or the paper's theorem.
CALIBRATIONS = ("accountant", "paper")

#: The two variants of both algorithms: general convex and strongly convex objectives.
CONVEXITY = ("general", "strong")

#: Default ν of every algorithm here (the paper's Fig. 1 compares ν = 0, 2, 3).
DEFAULT_NU = 2.0

#: The ``Trace.metrics`` key of the per-example gradients a run actually evaluated: the realised
#: Poisson batch sizes, a diagnostic that no ε covers (revealing every |B_t| weakens the amplification by
#: sampling). ``metrics["gradient_evaluations"]`` and ``metrics["passes"]`` are their expectations.
REALISED_EVALUATIONS = "realised_gradient_evaluations (not private)"


# ====================================================================== the strongly convex problem
@dataclass(eq=False)
class RidgeProblem(Problem):
    """A :class:`~dpadmm_lite.problems.Problem` whose every loss term carries ``(λ₂/2)‖x‖²``.

    Liu et al.'s strongly convex graph-guided logistic regression (Sec. V-C):
    ``min (1/n) Σ_i (f_i(x) + (λ₂/2)‖x‖²) + λ₁‖Ax‖₁``, so ``f`` is λ₂-strongly convex. The
    objective, gradient, Hessian and smoothness include the ridge term; :attr:`lipschitz` stays
    the bound on the *loss* part of one record's gradient, because the ridge gradient ``λ₂x`` is
    the same for every record and cancels from every sensitivity.

    Parameters
    ----------
    X, y, lam, loss, regularizer, A, X_test, y_test, name, feature_bound, data_dependence, _optimum
        As for :class:`~dpadmm_lite.problems.Problem`.
    ridge : float, default 0.0
        λ₂ ≥ 0, the ridge weight each loss term carries.
    """

    ridge: float = 0.0

    def __post_init__(self):
        super().__post_init__()
        self.ridge = check.nonnegative("ridge", self.ridge)

    def objective(self, x) -> np.ndarray:
        x = np.asarray(x, float)
        return super().objective(x) + 0.5 * self.ridge * (x**2).sum(axis=-1)

    def gradient(self, x) -> np.ndarray:
        return super().gradient(x) + self.ridge * np.asarray(x, float)

    def per_example_gradients(self, x, idx=None) -> np.ndarray:
        return super().per_example_gradients(x, idx) + self.ridge * np.asarray(x, float)

    def hessian(self, x, *, margins=None) -> np.ndarray:
        return super().hessian(x, margins=margins) + self.ridge * np.eye(self.d)

    @property
    def smoothness(self) -> float:  # a property here (cached_property in the base class)
        return float(np.linalg.norm(self.X, 2) ** 2 / self.n / (4 if self.loss == "logistic" else 1)) + self.ridge

    @property
    def per_example_smoothness(self) -> float:
        s = self.feature_bound**2
        return (s / 4 if self.loss == "logistic" else s) + self.ridge

    @property
    def public_smoothness(self) -> float:
        return self.per_example_smoothness

    def reference_optimum(self) -> Optimum:
        if self._optimum is None:
            self._optimum = (shipped_optimum(self) or _ridge_reference(self)) if self.ridge > 0 \
                else super().reference_optimum()
        return self._optimum

    def with_data(self, X, y) -> "RidgeProblem":
        return RidgeProblem(X, y, self.lam, self.loss, self.regularizer, self.A, self.X_test, self.y_test, self.name,
                            self.feature_bound, self.data_dependence, ridge=self.ridge)


def graph_guided_logistic(X, y, lam: float, ridge: float, *, W=None, public_features=None, sparsity: float = 0.1,
                          graph_matrix: str = "incidence", X_test=None, y_test=None,
                          feature_bound: float = 1.0) -> RidgeProblem:
    """Liu et al.'s strongly convex graph-guided logistic regression (Sec. V-C).

    ``min_x (1/n) Σ_i [log(1 + exp(−b_i a_iᵀx)) + (λ₂/2)‖x‖²] + λ₁‖Ax‖₁`` with ``A = [W; I]`` the
    graph-guided fused-lasso matrix of :func:`dpadmm_lite.problems.graph_guided_fused_lasso`
    (same feature graph, same options). ``lam`` is λ₁, ``ridge`` is λ₂ > 0 (the strong
    convexity modulus μ of ``f``). The paper's Table II uses λ₁, λ₂ ∈ {1e-5, 1e-4}.

    The graph W: ``W`` as given, or estimated from ``public_features`` (a public sample, never the
    training rows). With neither it comes from the training features (sparse inverse covariance,
    as in the paper) — read from the private data, so ``problem.data_dependence`` says so and
    every private run on the problem reports its privacy as not covered.

    Parameters
    ----------
    X : ndarray
        Training features, rows of norm at most ``feature_bound``.
    y : ndarray
        Labels ±1.
    lam : float
        λ₁ > 0, the weight of ``‖Ax‖₁``.
    ridge : float
        λ₂ > 0, the ridge weight (the strong convexity modulus of ``f``).
    W : ndarray or None, default None
        The graph matrix; None: estimated from ``public_features`` or the training rows.
    public_features : ndarray or None, default None
        A public sample to estimate the graph from.
    sparsity : float, default 0.1
        The graphical-lasso penalty.
    graph_matrix : str, default "incidence"
        ``"incidence"`` or ``"pattern"`` (see :func:`dpadmm_lite.problems.graph_guided_fused_lasso`).
    X_test : ndarray or None, default None
        Test features.
    y_test : ndarray or None, default None
        Test labels.
    feature_bound : float, default 1.0
        The public bound on a record's norm.
    """
    X = check.finite_array("X", X, ndim=2)
    A, dependence = fused_constraint(X, W=W, public_features=public_features, sparsity=sparsity, form=graph_matrix)
    ridge = check.positive("ridge", ridge)
    return RidgeProblem(X, y, check.positive("lam", lam), "logistic", "fused", A=A, X_test=X_test, y_test=y_test,
                        name="graph-guided logistic regression (strongly convex)", feature_bound=feature_bound,
                        data_dependence=dependence, ridge=ridge)


def _ridge_reference(p: RidgeProblem) -> Optimum:
    """High-precision optimum of ``f(x) + (λ₂/2)‖x‖² + λ‖Ax‖₁`` (log-barrier Newton method).

    The same method as the library's reference solver for the fused lasso
    (:func:`dpadmm_lite._reference._barrier`): the ℓ1 term in epigraph form with the barrier
    ``h_μ`` minimised over the epigraph variable in closed form, damped Newton steps on
    ``ψ_μ(x) = f(x) + (λ₂/2)‖x‖² + Σ_k h_μ((Ax)_k)`` for a fixed, finite schedule of μ down to a
    duality gap ``2mμ = 1e-13 (1 + F(0))``, the Hessian of the data term refreshed only when a
    margin has moved by more than 0.05, and a certificate ``2mμ + δ²/2`` recomputed at the end
    with an exact Hessian (RuntimeError above ``1e-8 (1 + F(0))``).
    """
    A = p.constraint_matrix
    m, d = A.shape[0], p.d
    lam, ridge = p.lam, p.ridge
    X, y, n = p.X, p.y, p.n
    eye = np.eye(d)

    def smooth(x, zd):
        value = float(p._loss_of_margin(zd, y).mean()) + 0.5 * ridge * float(x @ x)
        return value, p._dloss_of_margin(zd, y) @ X / n + ridge * x

    def data_hessian(x, zd):
        return Problem.hessian(p, x, margins=zd) + ridge * eye

    def newton(H, grad, za, mu):
        _, h1, h2 = _abs_barrier(za, lam, mu)
        g = grad + A.T @ h1
        step = _solve_psd(H + (A.T * h2) @ A, -g)
        return g, step

    with _single_threaded_blas():
        x = np.zeros(d)
        zd, za = np.zeros(n), np.zeros(m)
        value, grad = smooth(x, zd)
        H, z_hess = data_hessian(x, zd), zd.copy()
        scale = 1.0 + abs(value)
        mu_end = 1e-13 * scale / (2 * m)
        mu_start = max(value, 1e-3) / (2 * m)
        stages = max(0, int(np.ceil(np.log(mu_start / mu_end) / np.log(50.0))))
        schedule = np.append([s for s in mu_start / 50.0 ** np.arange(stages) if s > mu_end], mu_end)
        steps = hessians = 1
        for mu in schedule:
            current = value + _abs_barrier(za, lam, mu)[0].sum()
            for _ in range(100):
                steps += 1
                g, step = newton(H, grad, za, mu)
                decrement = -(g @ step)
                if not decrement > 1e-26 * max(1.0, abs(current)):
                    break
                dzd, dza, s = X @ step, A @ step, 1.0
                while True:  # Armijo backtracking
                    x_new = x + s * step
                    value_new = float(p._loss_of_margin(zd + s * dzd, y).mean()) + 0.5 * ridge * float(x_new @ x_new)
                    trial = value_new + _abs_barrier(za + s * dza, lam, mu)[0].sum()
                    if trial <= current - 0.25 * s * decrement + 4e-16 * abs(current) or s < 1e-12:
                        break
                    s *= 0.5
                if s < 1e-12:
                    break
                x, zd, za, current = x_new, zd + s * dzd, za + s * dza, trial
                value, grad = smooth(x, zd)
                if np.max(np.abs(zd - z_hess)) > 0.05:
                    H, z_hess = data_hessian(x, zd), zd.copy()
                    hessians += 1
                if decrement < 1e-20 * max(1.0, abs(current)):
                    break
            zd, za = X @ x, A @ x
            value, grad = smooth(x, zd)
        H = data_hessian(x, zd)
        g, step = newton(H, grad, za, mu)
        bound = 2 * m * mu + 0.5 * max(0.0, float(-(g @ step)))
    if not bound <= 1e-8 * scale:
        raise RuntimeError(f"the reference solver for the ridge + fused problem did not converge (suboptimality "
                           f"bound {bound:.2e} after {steps} Newton steps)")
    return Optimum(x, float(p.objective(x)), iterations=steps, residual=bound, hessians=hessians + 1)


# ====================================================================== settings and privacy
@dataclass(frozen=True)
class Settings:
    """The checked settings of one run (what :func:`settings` returns)."""

    algorithm: str
    nu: float
    batch_size: int
    sampling_rate: float
    convexity: str
    mu: float  # strong convexity modulus (0 for general convex)
    eta: float  # DP-SADMM GC: η₁ (η_{t+1} = eta/√(t+1)); SC: the cap; DP-VRADMM: the constant step
    gamma: float
    inner: int  # m (DP-VRADMM); 0 for DP-SADMM
    smoothness: float  # public per-example smoothness g (with the ridge)
    q_norm: float  # ‖Q_ν‖₂
    clip: float | None
    record_bound: float  # norm bound of one record's term in the minibatch sum
    snapshot_bound: float  # norm bound of one record's gradient in the snapshot (DP-VRADMM)


def settings(problem, *, algorithm: str = "dp_sadmm", rho: float = 1.0, nu: float = DEFAULT_NU,
             batch_size: int | None = None, convexity: str | None = None, mu: float | None = None,
             eta: float | None = None, gamma: float | None = None, inner: int | None = None,
             clip: float | None = None) -> Settings:
    """Check (or choose) every setting of a run; the errors name the parameter.

    Parameters
    ----------
    problem
        The problem of the run (its n, smoothness bounds and ``‖AᵀA‖₂``).
    algorithm
        ``"dp_sadmm"``/``"sadmm"`` or ``"dp_vradmm"``/``"svrg_admm"``.
    rho
        ADMM penalty ρ > 0 (the paper's β).
    nu
        Smoothing strength ν ≥ 0.
    batch_size
        Expected minibatch size b, ``1 ≤ b ≤ n`` (sampling rate ``q = b/n``). Default
        ``min(50, n)`` (the paper's Table II uses 10–50).
    convexity
        ``"general"`` or ``"strong"``; default ``"strong"`` when ``problem.ridge > 0``.
    mu
        Strong convexity modulus μ > 0 of ``f`` (SC only); default ``problem.ridge`` (λ₂).
    eta
        Step size: DP-SADMM GC ``η_{t+1} = eta/√(t+1)`` (default 1, the paper's); DP-SADMM SC the
        cap of ``2γ‖Q_ν‖₂/(μ(t+1))``; DP-VRADMM the constant step. Must be ``≤ 1/(2g)``
        (Lemmas 4 and 5, ``g`` the public per-example smoothness); default ``1/(2g)`` except for
        DP-SADMM GC.
    gamma
        γ ≥ γ_min = 1 + η_max ρ‖AᵀA‖₂ (default γ_min), η_max the largest step of the run.
    inner
        m, the inner iterations of one DP-VRADMM epoch; default ``⌈2n/b⌉`` (the paper's m = 2n/b).
    clip
        Per-example gradient clipping norm C > 0; required for a private run on the squared loss.
    """
    check.choice("algorithm", algorithm, ("dp_sadmm", "sadmm", "dp_vradmm", "svrg_admm"))
    rho = check.scale("rho", rho)
    try:
        nu = check.nonnegative("nu", nu)
    except ValueError:
        raise ValueError(f"nu (the smoothing strength ν) must be in [0, ∞), got {nu!r}") from None
    n, d = problem.n, problem.d
    if batch_size is None:
        batch_size = min(50, n)
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or not 1 <= batch_size <= n:
        raise ValueError(f"batch_size must be a whole number in [1, n = {n}], got {batch_size!r}")
    batch_size = int(batch_size)
    ridge = float(getattr(problem, "ridge", 0.0))
    if convexity is None:
        convexity = "strong" if ridge > 0 else "general"
    check.choice("convexity", convexity, CONVEXITY)
    if convexity == "strong":
        mu = ridge if mu is None else check.positive("mu", mu)
        if not mu > 0:
            raise ValueError("mu (the strong convexity modulus of f) must be given for convexity='strong' on a "
                             "problem without a ridge term (problem.ridge = 0)")
    else:
        mu = 0.0
    if clip is not None:
        clip = check.scale("clip", clip)
    g = float(problem.per_example_smoothness)  # public: feature_bound²/4 (logistic) or feature_bound² (+ λ₂)
    eta_limit = 1.0 / (2.0 * g)
    stochastic = algorithm in ("dp_sadmm", "sadmm")
    default_eta = 1.0 if (stochastic and convexity == "general") else eta_limit
    if eta is None:
        eta = min(default_eta, eta_limit)
    else:
        eta = check.positive("eta", eta)
        if eta > eta_limit * (1 + 1e-12):
            raise ValueError(f"eta must be in (0, 1/(2g) = {eta_limit:.6g}] (Liu et al., Lemmas 4 and 5; g = "
                             f"{g:.4g} is the public per-example smoothness), got {eta!r}")
    gamma_min = 1.0 + eta * rho * problem.norm_AtA  # eq. (9) with the largest step η of the run
    if gamma is None:
        gamma = gamma_min
    else:
        gamma = check.scale("gamma", gamma)
        if gamma < gamma_min * (1 - 1e-12):
            raise ValueError(f"gamma must be >= γ_min = 1 + ηρ‖AᵀA‖₂ = {gamma_min:.6g} (Liu et al., eq. 9, so that "
                             f"Ĝ = γQ_ν − ηρAᵀA ⪰ I), got {gamma!r}")
    if stochastic:
        inner = 0
    elif inner is None:
        inner = max(1, math.ceil(2 * n / batch_size))
    else:
        inner = check.count("inner", inner)
    if problem.loss == "logistic":
        # ℓ'(z) of one record lies in (−1, 0) or (0, 1) (its label fixes the side): ‖∇ℓ_i‖ ≤ ‖a_i‖ ≤ c,
        # and the SVRG difference ∇ℓ_i(x) − ∇ℓ_i(x̃) = (ℓ'(z) − ℓ'(z̃)) a_i has norm ≤ c as well.
        c = float(problem.lipschitz) if clip is None else min(clip, float(problem.lipschitz))
        record = c if (stochastic or clip is None) else 2 * c
    else:
        c = clip if clip is not None else math.inf
        record = c if stochastic else 2 * c
    return Settings(algorithm=algorithm, nu=nu, batch_size=batch_size, sampling_rate=batch_size / n,
                    convexity=convexity, mu=mu, eta=eta, gamma=gamma, inner=inner, smoothness=g,
                    q_norm=operator_norm(d, nu), clip=clip, record_bound=record, snapshot_bound=c)


def _check_private(problem, name: str, s: Settings, *, eta_given: bool) -> None:
    """Sensitivities and steps come from public bounds: refuse rows the bounds do not cover.

    The per-record bound c is the clip only when the clip is below the public gradient bound
    (``problem.lipschitz``, from ``feature_bound``); otherwise c is that public bound, which holds
    only for rows within ``feature_bound`` — so those are checked (a clip above the bound on wider
    rows would let a record move the sum by up to 2·clip while the ledger records 2c). The
    default step ``1/(2g)`` uses the public smoothness g, which also needs the rows within the
    bound: a clipped run on wider rows must be given ``eta`` (clipping does not make the loss
    smoother).
    """
    if s.clip is None and not math.isfinite(problem.lipschitz):
        raise ValueError(f"clip must be given for a private run of {name!r} on the {problem.loss!r} loss: its "
                         "per-example gradients are unbounded, so they must be clipped to a norm clip > 0")
    if s.clip is None or s.snapshot_bound < s.clip:  # c is the public feature-bound constant, not the clip
        problem.check_feature_bound(name)
    elif not eta_given and problem.max_row_norm > problem.feature_bound * (1 + 1e-9):
        raise ValueError(
            f"eta must be given for the private {name!r} on rows beyond feature_bound = {problem.feature_bound:g} (a "
            f"training row has norm {problem.max_row_norm:.4g}): the default step uses the public smoothness g = "
            f"{s.smoothness:.4g}, which bounds the loss's smoothness only within the declared bound (clipping does "
            f"not make the loss smoother), and a step read from the data would leak. Pass a public eta, or declare "
            f"a larger feature_bound")


@lru_cache(maxsize=256)
def _calibrated_scale(unit: tuple, epsilon: float, delta: float) -> float:
    from .. import accounting

    return accounting.calibrate_ledger(list(unit), epsilon, delta)


def noise_scale(problem, s: Settings, *, epsilon: float, delta: float, iterations: int,
                calibration: str = "accountant", theta: float = 0.5, c2: float = 80.0,
                private_snapshot: bool = True, snapshot_noise: float | None = None):
    """σ of the minibatch noise (and σ_p of DP-VRADMM's snapshot), the ledger, the paper's claim.

    Parameters
    ----------
    problem, s
        The problem and the run's :func:`settings`.
    epsilon, delta
        End-to-end budget (``math.inf``: no noise, empty ledger).
    iterations
        DP-SADMM: T noisy steps. DP-VRADMM: S epochs (``S·m`` noisy steps and S snapshots).
    calibration
        ``"accountant"`` (default): the unit ledger in the paper's noise shape, scaled by
        :func:`dpadmm_lite.accounting.calibrate_ledger` so that it spends (ε, δ).
        ``"paper"``: DP-SADMM Theorem 2, ``σ² = 20αTl²/(θεn²)``,
        ``α = log(1/δ)/((1−θ)ε) + 1``; DP-VRADMM Theorem 1,
        ``σ² = c₂l²Sm ln(1/δ)/(n²ε²)`` with the unknown constant ``c₂`` (default 80).
    theta, c2
        θ ∈ (0, 1) of Theorem 2 and c₂ > 0 of Theorem 1 (paper calibration only).
    private_snapshot, snapshot_noise
        DP-VRADMM: whether the snapshot gradient is released with noise (default; the paper does
        not) and its noise as a fraction of σ (default ``1/√m``).

    Returns
    -------
    sigma, sigma_snapshot : float
    ledger : list of PrivacyEvent
    privacy_paper : PrivacyGuarantee
    """
    from .. import accounting

    epsilon = check.epsilon(epsilon)
    delta = check.delta(delta)
    check.choice("calibration", calibration, CALIBRATIONS)
    theta = check.open_unit("theta", theta)
    c2 = check.positive("c2", c2)
    vr = s.inner > 0
    if snapshot_noise is None:
        snapshot_noise = 1.0 / math.sqrt(s.inner) if vr else 0.0
    elif vr:
        snapshot_noise = check.positive("snapshot_noise", snapshot_noise)
    if math.isinf(epsilon):
        return 0.0, 0.0, [], NO_PRIVACY
    n, b, q = problem.n, s.batch_size, s.sampling_rate
    steps = iterations * s.inner if vr else iterations
    sens = s.record_bound / b  # per-record bound C of the minibatch term: a replaced record moves it by ≤ 2C
    snap_sens = 2.0 * s.snapshot_bound / n  # replace-one, full data
    what = "noisy minibatch SVRG gradient (inner steps)" if vr else "noisy minibatch gradient"

    def ledger_at(sigma):
        events = [PrivacyEvent("gaussian", sens, sigma, count=steps, sampling_rate=q, neighbours="replace_one",
                               note=f"{what}; Poisson sampling q = b/n, exact replace-one pair (per-record bound "
                                    "C = c/b)")]
        if vr and private_snapshot:
            events.append(PrivacyEvent("gaussian", snap_sens, snapshot_noise * sigma, count=iterations,
                                       note="noisy snapshot gradient p̂ = ∇f(x̃) + N(0, σ_p²I), once per epoch"))
        return events

    l = s.snapshot_bound  # the paper's l: a bound on ‖∇f_i‖
    if calibration == "accountant":
        sigma = _calibrated_scale(tuple(ledger_at(sens)), epsilon, delta) * sens
    elif vr:
        sigma = accounting.liu2022_vradmm_sigma(epsilon, delta, lipschitz=l, n=n, epochs=iterations,
                                               inner=s.inner, c2=c2)
    else:
        sigma = accounting.liu2022_sadmm_sigma(epsilon, delta, iterations=steps, n=n, lipschitz=l, theta=theta)
    ledger = ledger_at(sigma)
    if vr:
        claimed = epsilon if calibration == "paper" else accounting.liu2022_vradmm_epsilon(
            sigma, delta, lipschitz=l, n=n, epochs=iterations, inner=s.inner, c2=c2)
        paper = PrivacyGuarantee(claimed, delta, "Liu et al. 2022, Thm 1", statement=(
            f"σ² = c₂l²Sm ln(1/δ)/(n²ε²) with c₂ = {c2:g} assumed (the paper gives neither c₁ nor c₂), l = {l:.4g}, "
            f"S = {iterations}, m = {s.inner}, n = {n}; requires ε ≤ c₁Sm/n²; the snapshot gradient is not covered"))
    else:
        claimed = epsilon if calibration == "paper" else accounting.liu2022_sadmm_epsilon(
            sigma, delta, iterations=steps, n=n, lipschitz=l)
        holds = accounting.liu2022_sadmm_conditions(claimed, delta, iterations=steps, n=n, batch_size=b, theta=theta)
        paper = PrivacyGuarantee(claimed, delta, "Liu et al. 2022, Thm 2", statement=(
            f"σ² = 20αTl²/(θεn²), α = log(1/δ)/((1−θ)ε) + 1, θ = {theta:g}, l = {l:.4g}, T = {steps}, n = {n}, "
            f"b = {b}; side conditions {'hold' if holds else 'FAIL (the theorem does not apply)'}; proved for "
            "sampling without replacement"))
    return float(sigma), float(snapshot_noise * sigma) if vr and private_snapshot else 0.0, ledger, paper


# ====================================================================== shared pieces of an iteration
def _poisson_batch(rng: np.random.Generator, n: int, rate: float) -> np.ndarray:
    """B_t: every record independently with probability ``rate`` (Poisson sampling, as the ledger records it).

    A Binomial(n, rate) size, then that many records uniformly without replacement: each record is in the
    batch with probability ``rate``, independently of the others. Every minibatch of this module and of
    :mod:`~dpadmm_lite.algorithms.chen2020` is drawn here, so that an audit sees the rate each batch is
    drawn at (:func:`dpadmm_lite.audit.intercept_sampling`).
    """
    return rng.choice(n, size=rng.binomial(n, rate), replace=False)


def _dual_from_gradient(problem, gradient, rho):
    """λ = −(1/β)(Aᵀ)^†∇f (Algorithm 1, initialisation and line 12, SC case)."""
    return -(problem.constraint_pinv_T @ gradient) / rho


class _Data:
    """The training data as the iterations read it: rows, labels, row norms, clipping."""

    def __init__(self, problem, clip):
        self.problem, self.clip = problem, clip
        self.X, self.y, self.n = problem.X, problem.y, problem.n
        self.norms = np.sqrt((self.X**2).sum(axis=1)) if clip is not None else None
        self.ridge = float(getattr(problem, "ridge", 0.0))

    def slopes(self, margins, idx=None):
        """ℓ'(a_iᵀx) per record (times the clipping factor of ‖∇ℓ_i‖ = |ℓ'|·‖a_i‖)."""
        y = self.y if idx is None else self.y[idx]
        r = self.problem._dloss_of_margin(margins, y)
        if self.clip is not None:
            norm = np.abs(r) * (self.norms if idx is None else self.norms[idx])
            r = r * np.minimum(1.0, self.clip / np.where(norm > 0, norm, 1.0))
        return r


def _smoothed_step(x, Ax, u, y, direction, *, A, rho, step, nu):
    """Eq. (5)/(7): ``x − (η/γ)Q_ν⁻¹[G + βAᵀ(Ax − y + λ)]``, then the dual update (line 9 / line 7).

    Returns ``(x_new, A x_new, u_new)``; ``Ax`` is passed in so that each step multiplies by A once.
    """
    x_new = x - step * smooth_checked(direction + rho * (A.T @ (Ax - y + u)), nu)  # ν checked by the run
    Ax_new = A @ x_new
    return x_new, Ax_new, u + Ax_new - y


# ====================================================================== DP-SADMM (Algorithm 2)
@dataclass
class _Run:
    """Everything a run produced, before evaluation."""

    released: np.ndarray  # (K, d): the model the algorithm would release after each recorded step
    released_y: np.ndarray  # (K, m)
    evaluations: np.ndarray  # (K,): per-example gradients expected so far (b per batch, n per snapshot)
    realised: np.ndarray  # (K,): per-example gradients evaluated so far (the drawn batch sizes: not private)
    steps: np.ndarray  # (K,): the noisy steps taken so far
    noise: np.ndarray | None = None  # the Gaussian draws (tests)
    extra: dict = field(default_factory=dict)


def _sadmm_iterate(problem, s: Settings, *, rho, iterations, sigma, seed, record_every=1) -> _Run:
    A = problem.constraint_products
    d, T, b, q = problem.d, iterations, s.batch_size, s.sampling_rate
    data = _Data(problem, s.clip)
    batch_rng, noise_rng = np.random.default_rng(seed).spawn(2)
    U = mechanisms.gaussian(noise_rng, sigma, (T, d))  # u_t ~ N(0, σ²I), t = 0 … T−1
    xs, ys = np.empty((T, d)), np.empty((T, A.shape[0]))
    counts = np.empty(T)
    x, u = np.zeros(d), np.zeros(A.shape[0])  # x₀ = 0, λ₀ = 0: data-independent
    Ax = A @ x
    for t in range(T):
        idx = _poisson_batch(batch_rng, data.n, q)  # B_t: Poisson, rate b/n
        X_B = data.X[idx]
        G = data.slopes(X_B @ x, idx) @ X_B / b + data.ridge * x + U[t]  # line 4 + u_t: (1/b)Σ_{B_t}∇f_i(x_t) + u_t
        y = problem.prox_g(Ax + u, 1.0 / rho)  # line 5: y_{t+1} = argmin r(y) + β/2‖Ax_t − y + λ_t‖²
        if s.convexity == "strong":  # line 8: η_{t+1} = 2γ‖Q_ν‖₂/(μ(t+1)), capped at eta (see module doc)
            eta = min(2.0 * s.gamma * s.q_norm / (s.mu * (t + 1)), s.eta)
        else:  # η_{t+1} = 1/√(t+1) (times eta)
            eta = s.eta / math.sqrt(t + 1)
        x, Ax, u = _smoothed_step(x, Ax, u, y, G, A=A, rho=rho, step=eta / s.gamma, nu=s.nu)  # lines 6–7, eq. (7)
        xs[t], ys[t], counts[t] = x, y, len(idx)
    # output: x̄ = (1/T)Σ x_t (GC) or Σ t·x_t / Σ t (SC); recorded for every prefix t = 1 … T
    weights = np.arange(1.0, T + 1) if s.convexity == "strong" else np.ones(T)
    cumulative = np.cumsum(weights)[:, None]
    keep = np.unique(np.append(np.arange(record_every - 1, T, record_every), T - 1))  # steps k, 2k, …, and T
    return _Run((np.cumsum(weights[:, None] * xs, axis=0) / cumulative)[keep],
                (np.cumsum(weights[:, None] * ys, axis=0) / cumulative)[keep], b * (keep + 1.0),
                np.cumsum(counts)[keep], keep + 1.0, U)


# ====================================================================== DP-VRADMM (Algorithm 1)
def _vradmm_iterate(problem, s: Settings, *, rho, iterations, sigma, sigma_snapshot, seed,
                    private_snapshot=True) -> _Run:
    A = problem.constraint_products
    d, S, m, b, q = problem.d, iterations, s.inner, s.batch_size, s.sampling_rate
    data = _Data(problem, s.clip)
    batch_rng, noise_rng = np.random.default_rng(seed).spawn(2)
    U = mechanisms.gaussian(noise_rng, sigma, (S, m, d))  # u_t^s ~ N(0, σ²I)
    P = mechanisms.gaussian(noise_rng, sigma_snapshot if private_snapshot else 0.0, (S, d))  # snapshot noise
    snapshots, snapshot_ys = np.empty((S, d)), np.empty((S, A.shape[0]))
    counts = np.empty(S)
    x_tilde = x_hat = np.zeros(d)  # x̃⁰ = x̂⁰ = 0
    u = np.zeros(A.shape[0])  # λ₀¹ (GC); the SC case overwrites it below
    evaluated = 0.0
    for epoch in range(S):
        margins = data.X @ x_tilde
        slopes_tilde = data.slopes(margins)  # ℓ'_i at the snapshot, kept for the inner steps
        p_hat = slopes_tilde @ data.X / data.n + data.ridge * x_tilde + P[epoch]  # line 2: p̃ = ∇f(x̃^{s−1}), + noise
        evaluated += data.n
        if s.convexity == "strong":
            x = x_tilde  # line 3 (SC): x₀^s = x̃^{s−1}
            u = _dual_from_gradient(problem, p_hat, rho)  # init / line 12 (SC): λ₀^s = −(1/β)(Aᵀ)^†∇f(x̃^{s−1})
        else:
            x = x_hat  # line 3 (GC): x₀^s = x̂^{s−1} = x_m^{s−1}; λ₀^s = λ_m^{s−1} carries over
        x_sum, y_sum = np.zeros(d), np.zeros(A.shape[0])
        Ax = A @ x
        for t in range(m):
            idx = _poisson_batch(batch_rng, data.n, q)  # line 5: B_t
            X_B = data.X[idx]
            # line 6 + u_t^s, eq. (6): (1/b)Σ_{B_t}(∇f_i(x_t) − ∇f_i(x̃)) + p̃ + u_t^s (the ridge terms cancel in the difference)
            G = (data.slopes(X_B @ x, idx) - slopes_tilde[idx]) @ X_B / b + data.ridge * (x - x_tilde) + p_hat + U[epoch, t]
            y = problem.prox_g(Ax + u, 1.0 / rho)  # line 7
            x, Ax, u = _smoothed_step(x, Ax, u, y, G, A=A, rho=rho, step=s.eta / s.gamma, nu=s.nu)  # lines 8–9, eq. (5)
            x_sum += x
            y_sum += y
            evaluated += 2 * len(idx)
        x_tilde, x_hat = x_sum / m, x  # line 11: x̃^s = (1/m)Σ x_t^s; line 12 (GC): x̂^s = x_m^s
        snapshots[epoch], snapshot_ys[epoch], counts[epoch] = x_tilde, y_sum / m, evaluated
    if s.convexity == "strong":  # output: x̃^s (SC) …
        released, released_y = snapshots, snapshot_ys
    else:  # … or (1/s)Σ_{s' ≤ s} x̃^{s'} (GC), for every prefix s = 1 … S
        k = np.arange(1.0, S + 1)[:, None]
        released, released_y = np.cumsum(snapshots, axis=0) / k, np.cumsum(snapshot_ys, axis=0) / k
    epochs = np.arange(1.0, S + 1)
    expected = epochs * (data.n + 2 * m * b)  # per epoch: the snapshot's n, and 2 per record of m batches of b
    return _Run(released, released_y, expected, counts, m * epochs, U,
                extra={"snapshot_noise": P, "snapshots": snapshots})


# ====================================================================== runs and traces
def _run(problem, name, *, epsilon, delta, rho, iterations, seed, nu, batch_size, convexity, mu, eta, gamma,
         inner=None, clip=None, calibration="accountant", theta=0.5, c2=80.0, private_snapshot=True,
         snapshot_noise=None, record_every=1, private=True) -> Trace:
    epsilon = check.epsilon(epsilon)
    delta = check.delta(delta)
    seed = check.count("seed", seed, minimum=0)
    vr = name in ("dp_vradmm", "svrg_admm")
    try:
        iterations = check.count("iterations", iterations)
    except ValueError:
        what = "the number of epochs S" if vr else "the number of steps T"
        raise ValueError(f"iterations ({what}) must be a whole number >= 1, got {iterations!r}") from None
    record_every = check.count("record_every", record_every)
    record_every = min(record_every, check.count("iterations", iterations))  # beyond T: the last iterate only
    if not isinstance(private_snapshot, (bool, np.bool_)):
        raise ValueError(f"private_snapshot must be True or False, got {private_snapshot!r}")
    s = settings(problem, algorithm=name, rho=rho, nu=nu, batch_size=batch_size, convexity=convexity, mu=mu,
                 eta=eta, gamma=gamma, inner=inner, clip=clip)
    if private and math.isfinite(epsilon):
        _check_private(problem, name, s, eta_given=eta is not None)
    sigma, sigma_snapshot, ledger, paper = noise_scale(
        problem, s, epsilon=epsilon, delta=delta, iterations=iterations, calibration=calibration, theta=theta,
        c2=c2, private_snapshot=bool(private_snapshot), snapshot_noise=snapshot_noise)
    with single_blas_thread():
        if vr:
            run = _vradmm_iterate(problem, s, rho=rho, iterations=iterations, sigma=sigma,
                                  sigma_snapshot=sigma_snapshot, seed=seed, private_snapshot=bool(private_snapshot))
        else:
            run = _sadmm_iterate(problem, s, rho=rho, iterations=iterations, sigma=sigma, seed=seed,
                                 record_every=record_every)
        A = problem.constraint_matrix
        residual = np.sqrt(((run.released @ A.T - run.released_y) ** 2).sum(axis=1))  # ‖Ax̄ − ȳ‖
        noise = {"sigma": sigma, "nu": s.nu, "tau": tau(problem.d, s.nu), "batch_size": s.batch_size,
                 "sampling_rate": s.sampling_rate}
        if vr:
            noise.update(sigma_snapshot=sigma_snapshot, inner=s.inner)
        if ledger:
            noise.update(sensitivity=ledger[0].sensitivity, noise_multiplier=ledger[0].noise_multiplier,
                         releases=sum(e.count for e in ledger), calibration=calibration)
        trace = from_iterates(
            problem, "", run.released, noise=noise, ledger=ledger, delta=delta, privacy_paper=paper,
            metrics={"constraint_residual": residual, "gradient_evaluations": run.evaluations,
                     "passes": run.evaluations / problem.n, "steps": run.steps, REALISED_EVALUATIONS: run.realised},
            params={"nu": s.nu, "batch_size": s.batch_size, "convexity": s.convexity, "mu": s.mu, "eta": s.eta,
                    "gamma": s.gamma, "calibration": calibration, "clip": s.clip, "constraint_matrix": A,
                    **({"inner": s.inner, "private_snapshot": bool(private_snapshot)} if vr
                       else {"record_every": record_every})})
    if ledger and vr and not private_snapshot:  # Algorithm 1 as printed: the snapshot gradient is exact
        trace = replace(trace, privacy=_printed_privacy(problem, s, trace.privacy, sigma=sigma, delta=delta,
                                                        epochs=iterations))
    return trace


def _printed_privacy(problem, s: Settings, ledger_privacy: PrivacyGuarantee, *, sigma, delta, epochs):
    """The guarantee of Algorithm 1 as printed (``private_snapshot=False``): the exact snapshot gradient p̃
    enters every inner release, with its sensitivity 2c/n unshrunk by sampling."""
    from ..accounting._liu2022 import liu2022_printed_epsilon

    if s.convexity == "strong":
        return ledger_privacy.not_covered(
            "Algorithm 1 as printed, strongly convex — the dual restart λ₀ = −(1/β)(Aᵀ)^†p̃ uses the exact snapshot "
            "gradient p̃ = ∇f(x̃), outside the ledger (private_snapshot=False)")
    eps = liu2022_printed_epsilon(sigma, delta, n=problem.n, batch_size=s.batch_size, epochs=epochs,
                                  inner=s.inner, lipschitz=s.snapshot_bound, difference_bound=s.record_bound)
    printed = PrivacyGuarantee(eps, delta, "unified accountant: Algorithm 1 as printed, noise split", statement=(
        f"each of the {epochs * s.inner} inner releases carries the exact snapshot gradient p̃ (sensitivity "
        f"2c/n = {2 * s.snapshot_bound / problem.n:.3g}, not shrunk by sampling) and a minibatch term (per-record "
        f"bound c/b = {s.record_bound / s.batch_size:.3g}, q = {s.sampling_rate:.4g}): the noise σ = {sigma:.4g} "
        f"split between them, best split; the minibatch ledger alone would say ε = {ledger_privacy.epsilon:.4g}"))
    if not ledger_privacy.covered:  # something else (a data-dependent graph) voids it anyway
        return printed.not_covered(ledger_privacy.reason)
    return printed


def _require_no_noise(name: str, epsilon: float, private_twin: str) -> None:
    if not math.isinf(check.epsilon(epsilon)):
        raise ValueError(f"epsilon must be ∞ (math.inf) for the non-private {name!r}, got {epsilon!r}; "
                         f"run {private_twin!r} for a private run")


_TASKS = ("logistic-l2", "logistic-l1", "fused")
# The tuning grids choose the length of a run too (the arena lets a grid set ``iterations``): a
# "step" of DP-SADMM touches b records and an "iteration" of DP-VRADMM is an epoch of m = 2n/b
# steps, so neither is comparable with 100 full-gradient iterations of the other algorithms.
_TUNING_SADMM = {"rho": (0.01, 0.1), "nu": (0.0, 2.0), "iterations": (500, 2000)}
_TUNING_VRADMM = {"rho": (0.01, 0.1), "nu": (0.0, 2.0), "iterations": (2, 4)}
# The ranges of the options of Liu et al.'s runs beyond the shared ones (nu, inner, record_every:
# registry.SHARED_CONSTRAINTS): the registry checks them, tests/test_bad_input.py reads them. The bounds
# the problem sets (η ≤ 1/(2g), γ ≥ γ_min, μ given for a problem without a ridge) are checked by settings().
_CONSTRAINTS = {
    "batch_size": [Interval(Integral, 1, "n"), None],
    "convexity": [Options(CONVEXITY), None],
    "mu": [Interval(Real, 0, None, closed="neither"), None],
    "eta": [SCALE, None],
    "gamma": [SCALE, None],
    "clip": [SCALE, None],
    "calibration": Options(CALIBRATIONS),
}
_SADMM_CONSTRAINTS = {**_CONSTRAINTS, "theta": Interval(Real, 0, 1, closed="neither")}
_VRADMM_CONSTRAINTS = {**_CONSTRAINTS, "c2": SCALE, "private_snapshot": Boolean(), "snapshot_noise": [SCALE, None]}



@register("dp_sadmm", paper="liu2022", private=True, setting="centralized", tasks=_TASKS, tuning=_TUNING_SADMM,
          constraints=_SADMM_CONSTRAINTS,
          description="DP-SADMM: stochastic ADMM with a noisy minibatch gradient and Laplacian smoothing "
                      "(Liu et al. 2022, Alg. 2)")
def dp_sadmm(problem: Problem, *, epsilon: float, delta: float, rho: float, iterations: int, seed: int,
             nu: float = DEFAULT_NU, batch_size: int | None = None, convexity: str | None = None,
             mu: float | None = None, eta: float | None = None, gamma: float | None = None, clip: float | None = None,
             calibration: str = "accountant", theta: float = 0.5, record_every: int = 1) -> Trace:
    """DP-SADMM (Liu et al. 2022, Algorithm 2): noisy minibatch gradient, Laplacian-smoothed x-step.

    Parameters
    ----------
    problem : Problem
        A :class:`~dpadmm_lite.problems.Problem` (logistic loss; the squared loss with ``clip``);
        any regulariser (the splitting ``Ax − y = 0`` is ``problem.constraint_matrix``). A
        :class:`RidgeProblem` (:func:`graph_guided_logistic`) makes ``f`` strongly convex.
    epsilon : float
        End-to-end privacy budget (replace-one); ``epsilon = math.inf`` means no noise.
    delta : float
        δ in [1e-100, 1), the δ of the budget that ``epsilon`` describes.
    rho : float
        ADMM penalty ρ > 0 (the paper's β).
    iterations : int
        DP-SADMM: the number of steps T. DP-VRADMM: the number of epochs S (outer iterations).
    seed : int
        Seed of ``numpy.random.default_rng``; minibatches and noise use two streams spawned from it.
    nu : float, default 2.0
        Laplacian smoothing strength ν ≥ 0 (default 2); ``nu=0`` is the unsmoothed algorithm.
    batch_size : int or None, default None
        Expected minibatch size b ∈ [1, n] (Poisson sampling, q = b/n); default ``min(50, n)``.
    convexity : str or None, default None
        ``"general"`` or ``"strong"`` (default: strong iff ``problem.ridge > 0``) and μ (default λ₂).
    mu : float or None, default None
        ``"general"`` or ``"strong"`` (default: strong iff ``problem.ridge > 0``) and μ (default λ₂).
    eta : float or None, default None
        Step size (see :func:`settings`) and γ ≥ 1 + η_max ρ‖AᵀA‖₂ (default that minimum).
    gamma : float or None, default None
        Step size (see :func:`settings`) and γ ≥ 1 + η_max ρ‖AᵀA‖₂ (default that minimum).
    clip : float or None, default None
        Per-example gradient clipping norm; required for a private run on the squared loss.
    calibration : str, default "accountant"
        ``"accountant"`` (default: ε, δ end to end) or ``"paper"`` (Theorem 2 / Theorem 1).
    theta : float, default 0.5
        θ of Theorem 2 (default ½) and the unknown constant c₂ of Theorem 1 (default 80).
    record_every : int, default 1
        DP-SADMM only: evaluate the released model after steps k, 2k, …, T only (default 1: every
        step). Evaluating thousands of averaged iterates on the whole dataset costs more than
        running them; a sweep that needs the final model or one point per pass sets ``k = n/b``.

    Returns
    -------
    Trace
        Per recorded step (DP-SADMM: every step t, or every k-th; DP-VRADMM: every epoch s) the
        objective, gap
        and test accuracy of the model the algorithm would release then (the paper's averaged
        output), ``metrics["constraint_residual"]`` ``‖Ax̄ − ȳ‖`` and
        ``metrics["gradient_evaluations"]`` (the per-example gradients expected so far: b per
        minibatch, and n per DP-VRADMM snapshot), ``metrics["passes"]`` (the same divided by n) and
        ``metrics["steps"]`` (noisy steps so far); ``noise`` (σ, σ_p, ν, τ, b, q, the sensitivity),
        the ``ledger``, ``privacy`` (unified accountant) and ``privacy_paper`` (Theorem 2 / Theorem 1).
        A diagnostic that no ε covers: ``metrics[REALISED_EVALUATIONS]``
        (``"realised_gradient_evaluations (not private)"``), the gradients actually evaluated, from
        the drawn batch sizes |B_t|; publishing those weakens the amplification by sampling that the
        ε counts on, so the counts a release may report are the expected ones.

    Notes
    -----
    For t = 0 … T − 1, with ``B_t`` a Poisson sample of expected size b::

        G_t     = (1/b) Σ_{i∈B_t} ∇f_i(x_t) + u_t,   u_t ~ N(0, σ²I)          # lines 3–4
        y_{t+1} = prox_{r/β}(Ax_t + λ_t)                                        # line 5
        x_{t+1} = x_t − (η_{t+1}/γ) Q_ν⁻¹[G_t + βAᵀ(Ax_t − y_{t+1} + λ_t)]       # line 6, eq. (7)
        λ_{t+1} = λ_t + Ax_{t+1} − y_{t+1}                                      # line 7

    with ``η_{t+1} = 1/√(t+1)`` (GC) or ``min(2γ‖Q_ν‖₂/(μ(t+1)), eta)`` (SC; the cap is the
    book's, see the module doc), ``x₀ = 0``, ``λ₀ = 0``. Output: ``x̄ = (1/T)Σ x_t`` (GC) or
    ``Σ t·x_t / Σ t`` (SC). Privacy: T Poisson-sampled Gaussian releases of the minibatch gradient.

    References
    ----------
    Y. Liu, J. Geng, F. Shang, W. An, H. Liu, Q. Zhu, W. Feng, "Laplacian smoothing stochastic
    ADMMs with differential privacy guarantees", IEEE TIFS 17, 2022.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("dp_sadmm", problem, epsilon=1.0, delta=1e-5, iterations=10, seed=0)
    >>> trace.privacy.epsilon <= 1.0, trace.model.shape
    (True, (5,))
    """
    return _run(problem, "dp_sadmm", epsilon=epsilon, delta=delta, rho=rho, iterations=iterations, seed=seed, nu=nu,
                batch_size=batch_size, convexity=convexity, mu=mu, eta=eta, gamma=gamma, clip=clip,
                calibration=calibration, theta=theta, record_every=record_every)


@register("sadmm", paper="liu2022", private=False, setting="centralized", tasks=_TASKS, tuning=_TUNING_SADMM,
          constraints=_SADMM_CONSTRAINTS,
          description="Stochastic ADMM with Laplacian smoothing (Liu et al. 2022, Alg. 2 without noise; STOC-ADMM "
                      "of Ouyang et al. 2013 at ν = 0)")
def sadmm(problem: Problem, *, epsilon: float = math.inf, delta: float = 1e-5, rho: float = 1.0, iterations: int = 100,
          seed: int = 0, nu: float = DEFAULT_NU, batch_size: int | None = None, convexity: str | None = None,
          mu: float | None = None, eta: float | None = None, gamma: float | None = None, clip: float | None = None,
          calibration: str = "accountant", theta: float = 0.5, record_every: int = 1) -> Trace:
    """Stochastic ADMM (Algorithm 2 with σ = 0): the non-private twin of :func:`dp_sadmm`.

    Parameters
    ----------
    problem : Problem
        A :class:`~dpadmm_lite.problems.Problem` (logistic loss; the squared loss with ``clip``);
        any regulariser (the splitting ``Ax − y = 0`` is ``problem.constraint_matrix``). A
        :class:`RidgeProblem` (:func:`graph_guided_logistic`) makes ``f`` strongly convex.
    epsilon : float, default math.inf
        End-to-end privacy budget (replace-one); ``epsilon = math.inf`` means no noise.
    delta : float, default 1e-05
        δ in [1e-100, 1), the δ of the budget that ``epsilon`` describes.
    rho : float, default 1.0
        ADMM penalty ρ > 0 (the paper's β).
    iterations : int, default 100
        DP-SADMM: the number of steps T. DP-VRADMM: the number of epochs S (outer iterations).
    seed : int, default 0
        Seed of ``numpy.random.default_rng``; minibatches and noise use two streams spawned from it.
    nu : float, default 2.0
        Laplacian smoothing strength ν ≥ 0 (default 2); ``nu=0`` is the unsmoothed algorithm.
    batch_size : int or None, default None
        Expected minibatch size b ∈ [1, n] (Poisson sampling, q = b/n); default ``min(50, n)``.
    convexity : str or None, default None
        ``"general"`` or ``"strong"`` (default: strong iff ``problem.ridge > 0``) and μ (default λ₂).
    mu : float or None, default None
        ``"general"`` or ``"strong"`` (default: strong iff ``problem.ridge > 0``) and μ (default λ₂).
    eta : float or None, default None
        Step size (see :func:`settings`) and γ ≥ 1 + η_max ρ‖AᵀA‖₂ (default that minimum).
    gamma : float or None, default None
        Step size (see :func:`settings`) and γ ≥ 1 + η_max ρ‖AᵀA‖₂ (default that minimum).
    clip : float or None, default None
        Per-example gradient clipping norm; required for a private run on the squared loss.
    calibration : str, default "accountant"
        ``"accountant"`` (default: ε, δ end to end) or ``"paper"`` (Theorem 2 / Theorem 1).
    theta : float, default 0.5
        θ of Theorem 2 (default ½) and the unknown constant c₂ of Theorem 1 (default 80).
    record_every : int, default 1
        DP-SADMM only: evaluate the released model after steps k, 2k, …, T only (default 1: every
        step). Evaluating thousands of averaged iterates on the whole dataset costs more than
        running them; a sweep that needs the final model or one point per pass sets ``k = n/b``.

    Returns
    -------
    Trace
        Per recorded step (DP-SADMM: every step t, or every k-th; DP-VRADMM: every epoch s) the
        objective, gap
        and test accuracy of the model the algorithm would release then (the paper's averaged
        output), ``metrics["constraint_residual"]`` ``‖Ax̄ − ȳ‖`` and
        ``metrics["gradient_evaluations"]`` (the per-example gradients expected so far: b per
        minibatch, and n per DP-VRADMM snapshot), ``metrics["passes"]`` (the same divided by n) and
        ``metrics["steps"]`` (noisy steps so far); ``noise`` (σ, σ_p, ν, τ, b, q, the sensitivity),
        the ``ledger``, ``privacy`` (unified accountant) and ``privacy_paper`` (Theorem 2 / Theorem 1).
        A diagnostic that no ε covers: ``metrics[REALISED_EVALUATIONS]``
        (``"realised_gradient_evaluations (not private)"``), the gradients actually evaluated, from
        the drawn batch sizes |B_t|; publishing those weakens the amplification by sampling that the
        ε counts on, so the counts a release may report are the expected ones.

    Notes
    -----
    Exactly the code of :func:`dp_sadmm` with no noise; ``epsilon`` must be ``math.inf``.

    References
    ----------
    Y. Liu, J. Geng, F. Shang, W. An, H. Liu, Q. Zhu, W. Feng, "Laplacian smoothing stochastic
    ADMMs with differential privacy guarantees", IEEE TIFS 17, 2022.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("sadmm", problem, iterations=10, seed=0)
    >>> trace.model.shape, len(trace.objective)
    ((5,), 10)
    """
    _require_no_noise("sadmm", epsilon, "dp_sadmm")
    return _run(problem, "sadmm", epsilon=math.inf, delta=delta, rho=rho, iterations=iterations, seed=seed, nu=nu,
                batch_size=batch_size, convexity=convexity, mu=mu, eta=eta, gamma=gamma, clip=clip,
                calibration=calibration, theta=theta, record_every=record_every, private=False)


@register("dp_vradmm", paper="liu2022", private=True, setting="centralized", tasks=_TASKS, tuning=_TUNING_VRADMM,
          constraints=_VRADMM_CONSTRAINTS,
          description="DP-VRADMM: variance-reduced (SVRG) stochastic ADMM with noisy gradients and Laplacian "
                      "smoothing (Liu et al. 2022, Alg. 1)")
def dp_vradmm(problem: Problem, *, epsilon: float, delta: float, rho: float, iterations: int, seed: int,
              nu: float = DEFAULT_NU, batch_size: int | None = None, inner: int | None = None,
              convexity: str | None = None, mu: float | None = None, eta: float | None = None,
              gamma: float | None = None, clip: float | None = None, calibration: str = "accountant", c2: float = 80.0,
              private_snapshot: bool = True, snapshot_noise: float | None = None) -> Trace:
    """DP-VRADMM (Liu et al. 2022, Algorithm 1): SVRG epochs with a noisy, smoothed x-step.

    Parameters
    ----------
    problem : Problem
        A :class:`~dpadmm_lite.problems.Problem` (logistic loss; the squared loss with ``clip``);
        any regulariser (the splitting ``Ax − y = 0`` is ``problem.constraint_matrix``). A
        :class:`RidgeProblem` (:func:`graph_guided_logistic`) makes ``f`` strongly convex.
    epsilon : float
        End-to-end privacy budget (replace-one); ``epsilon = math.inf`` means no noise.
    delta : float
        δ in [1e-100, 1), the δ of the budget that ``epsilon`` describes.
    rho : float
        ADMM penalty ρ > 0 (the paper's β).
    iterations : int
        DP-SADMM: the number of steps T. DP-VRADMM: the number of epochs S (outer iterations).
    seed : int
        Seed of ``numpy.random.default_rng``; minibatches and noise use two streams spawned from it.
    nu : float, default 2.0
        Laplacian smoothing strength ν ≥ 0 (default 2); ``nu=0`` is the unsmoothed algorithm.
    batch_size : int or None, default None
        Expected minibatch size b ∈ [1, n] (Poisson sampling, q = b/n); default ``min(50, n)``.
    inner : int or None, default None
        DP-VRADMM only: m inner steps per epoch (default ⌈2n/b⌉, the paper's m = 2n/b).
    convexity : str or None, default None
        ``"general"`` or ``"strong"`` (default: strong iff ``problem.ridge > 0``) and μ (default λ₂).
    mu : float or None, default None
        ``"general"`` or ``"strong"`` (default: strong iff ``problem.ridge > 0``) and μ (default λ₂).
    eta : float or None, default None
        Step size (see :func:`settings`) and γ ≥ 1 + η_max ρ‖AᵀA‖₂ (default that minimum).
    gamma : float or None, default None
        Step size (see :func:`settings`) and γ ≥ 1 + η_max ρ‖AᵀA‖₂ (default that minimum).
    clip : float or None, default None
        Per-example gradient clipping norm; required for a private run on the squared loss.
    calibration : str, default "accountant"
        ``"accountant"`` (default: ε, δ end to end) or ``"paper"`` (Theorem 2 / Theorem 1).
    c2 : float, default 80.0
        θ of Theorem 2 (default ½) and the unknown constant c₂ of Theorem 1 (default 80).
    private_snapshot : bool, default True
        DP-VRADMM only: release the snapshot gradient with noise (default True; False is
        Algorithm 1 as printed, whose ε the trace computes by splitting each release's noise —
        general convex only) and its noise as a fraction of σ (default 1/√m).
    snapshot_noise : float or None, default None
        DP-VRADMM only: release the snapshot gradient with noise (default True; False is
        Algorithm 1 as printed, whose ε the trace computes by splitting each release's noise —
        general convex only) and its noise as a fraction of σ (default 1/√m).

    Returns
    -------
    Trace
        Per recorded step (DP-SADMM: every step t, or every k-th; DP-VRADMM: every epoch s) the
        objective, gap
        and test accuracy of the model the algorithm would release then (the paper's averaged
        output), ``metrics["constraint_residual"]`` ``‖Ax̄ − ȳ‖`` and
        ``metrics["gradient_evaluations"]`` (the per-example gradients expected so far: b per
        minibatch, and n per DP-VRADMM snapshot), ``metrics["passes"]`` (the same divided by n) and
        ``metrics["steps"]`` (noisy steps so far); ``noise`` (σ, σ_p, ν, τ, b, q, the sensitivity),
        the ``ledger``, ``privacy`` (unified accountant) and ``privacy_paper`` (Theorem 2 / Theorem 1).
        A diagnostic that no ε covers: ``metrics[REALISED_EVALUATIONS]``
        (``"realised_gradient_evaluations (not private)"``), the gradients actually evaluated, from
        the drawn batch sizes |B_t|; publishing those weakens the amplification by sampling that the
        ε counts on, so the counts a release may report are the expected ones.

    Notes
    -----
    For s = 1 … S (``iterations``)::

        p̂ = ∇f(x̃^{s−1}) + N(0, σ_p²I)                                      # line 2 (+ noise: the book's)
        x₀^s = x̃^{s−1} (SC) or x_m^{s−1} (GC);  λ₀^s = −(1/β)(Aᵀ)^†p̂ (SC) or λ_m^{s−1} (GC)
        for t = 0 … m − 1:                                                  # lines 4–10
            G_t = (1/b) Σ_{i∈B_t}(∇f_i(x_t^s) − ∇f_i(x̃^{s−1})) + p̂ + u_t^s     # eq. (6)
            y_{t+1}, x_{t+1}, λ_{t+1}: the smoothed ADMM step of eq. (5), constant step η
        x̃^s = (1/m) Σ_t x_t^s                                               # line 11

    Output: ``x̃^S`` (SC) or ``(1/S) Σ_s x̃^s`` (GC). Privacy: ``S·m`` Poisson-sampled Gaussian
    releases (sensitivity from the SVRG difference, whose norm is ≤ c for the logistic loss) and
    S full-gradient releases of the snapshot (module doc: the paper releases it without noise).

    References
    ----------
    Y. Liu, J. Geng, F. Shang, W. An, H. Liu, Q. Zhu, W. Feng, "Laplacian smoothing stochastic
    ADMMs with differential privacy guarantees", IEEE TIFS 17, 2022.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("dp_vradmm", problem, epsilon=1.0, delta=1e-5, iterations=10, seed=0)
    >>> trace.privacy.epsilon <= 1.0, trace.model.shape
    (True, (5,))
    """
    return _run(problem, "dp_vradmm", epsilon=epsilon, delta=delta, rho=rho, iterations=iterations, seed=seed,
                nu=nu, batch_size=batch_size, inner=inner, convexity=convexity, mu=mu, eta=eta, gamma=gamma, clip=clip,
                calibration=calibration, c2=c2, private_snapshot=private_snapshot, snapshot_noise=snapshot_noise)


@register("svrg_admm", paper="liu2022", private=False, setting="centralized", tasks=_TASKS, tuning=_TUNING_VRADMM,
          constraints=_VRADMM_CONSTRAINTS,
          description="SVRG-ADMM with Laplacian smoothing (Liu et al. 2022, Alg. 1 without noise; Zheng & Kwok 2016 "
                      "at ν = 0)")
def svrg_admm(problem: Problem, *, epsilon: float = math.inf, delta: float = 1e-5, rho: float = 1.0,
              iterations: int = 10, seed: int = 0, nu: float = DEFAULT_NU, batch_size: int | None = None,
              inner: int | None = None, convexity: str | None = None, mu: float | None = None, eta: float | None = None,
              gamma: float | None = None, clip: float | None = None, calibration: str = "accountant", c2: float = 80.0,
              private_snapshot: bool = True, snapshot_noise: float | None = None) -> Trace:
    """SVRG-ADMM (Algorithm 1 with σ = 0): the non-private twin of :func:`dp_vradmm`.

    Parameters
    ----------
    problem : Problem
        A :class:`~dpadmm_lite.problems.Problem` (logistic loss; the squared loss with ``clip``);
        any regulariser (the splitting ``Ax − y = 0`` is ``problem.constraint_matrix``). A
        :class:`RidgeProblem` (:func:`graph_guided_logistic`) makes ``f`` strongly convex.
    epsilon : float, default math.inf
        End-to-end privacy budget (replace-one); ``epsilon = math.inf`` means no noise.
    delta : float, default 1e-05
        δ in [1e-100, 1), the δ of the budget that ``epsilon`` describes.
    rho : float, default 1.0
        ADMM penalty ρ > 0 (the paper's β).
    iterations : int, default 10
        DP-SADMM: the number of steps T. DP-VRADMM: the number of epochs S (outer iterations).
    seed : int, default 0
        Seed of ``numpy.random.default_rng``; minibatches and noise use two streams spawned from it.
    nu : float, default 2.0
        Laplacian smoothing strength ν ≥ 0 (default 2); ``nu=0`` is the unsmoothed algorithm.
    batch_size : int or None, default None
        Expected minibatch size b ∈ [1, n] (Poisson sampling, q = b/n); default ``min(50, n)``.
    inner : int or None, default None
        DP-VRADMM only: m inner steps per epoch (default ⌈2n/b⌉, the paper's m = 2n/b).
    convexity : str or None, default None
        ``"general"`` or ``"strong"`` (default: strong iff ``problem.ridge > 0``) and μ (default λ₂).
    mu : float or None, default None
        ``"general"`` or ``"strong"`` (default: strong iff ``problem.ridge > 0``) and μ (default λ₂).
    eta : float or None, default None
        Step size (see :func:`settings`) and γ ≥ 1 + η_max ρ‖AᵀA‖₂ (default that minimum).
    gamma : float or None, default None
        Step size (see :func:`settings`) and γ ≥ 1 + η_max ρ‖AᵀA‖₂ (default that minimum).
    clip : float or None, default None
        Per-example gradient clipping norm; required for a private run on the squared loss.
    calibration : str, default "accountant"
        ``"accountant"`` (default: ε, δ end to end) or ``"paper"`` (Theorem 2 / Theorem 1).
    c2 : float, default 80.0
        θ of Theorem 2 (default ½) and the unknown constant c₂ of Theorem 1 (default 80).
    private_snapshot : bool, default True
        DP-VRADMM only: release the snapshot gradient with noise (default True; False is
        Algorithm 1 as printed, whose ε the trace computes by splitting each release's noise —
        general convex only) and its noise as a fraction of σ (default 1/√m).
    snapshot_noise : float or None, default None
        DP-VRADMM only: release the snapshot gradient with noise (default True; False is
        Algorithm 1 as printed, whose ε the trace computes by splitting each release's noise —
        general convex only) and its noise as a fraction of σ (default 1/√m).

    Returns
    -------
    Trace
        Per recorded step (DP-SADMM: every step t, or every k-th; DP-VRADMM: every epoch s) the
        objective, gap
        and test accuracy of the model the algorithm would release then (the paper's averaged
        output), ``metrics["constraint_residual"]`` ``‖Ax̄ − ȳ‖`` and
        ``metrics["gradient_evaluations"]`` (the per-example gradients expected so far: b per
        minibatch, and n per DP-VRADMM snapshot), ``metrics["passes"]`` (the same divided by n) and
        ``metrics["steps"]`` (noisy steps so far); ``noise`` (σ, σ_p, ν, τ, b, q, the sensitivity),
        the ``ledger``, ``privacy`` (unified accountant) and ``privacy_paper`` (Theorem 2 / Theorem 1).
        A diagnostic that no ε covers: ``metrics[REALISED_EVALUATIONS]``
        (``"realised_gradient_evaluations (not private)"``), the gradients actually evaluated, from
        the drawn batch sizes |B_t|; publishing those weakens the amplification by sampling that the
        ε counts on, so the counts a release may report are the expected ones.

    Notes
    -----
    Exactly the code of :func:`dp_vradmm` with no noise; ``epsilon`` must be ``math.inf``.

    References
    ----------
    Y. Liu, J. Geng, F. Shang, W. An, H. Liu, Q. Zhu, W. Feng, "Laplacian smoothing stochastic
    ADMMs with differential privacy guarantees", IEEE TIFS 17, 2022.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("svrg_admm", problem, iterations=10, seed=0)
    >>> trace.model.shape, len(trace.objective)
    ((5,), 10)
    """
    _require_no_noise("svrg_admm", epsilon, "dp_vradmm")
    return _run(problem, "svrg_admm", epsilon=math.inf, delta=delta, rho=rho, iterations=iterations, seed=seed,
                nu=nu, batch_size=batch_size, inner=inner, convexity=convexity, mu=mu, eta=eta, gamma=gamma,
                clip=clip, calibration=calibration, c2=c2, private_snapshot=private_snapshot,
                snapshot_noise=snapshot_noise, private=False)
