"""ADMM over a star network and its private versions (Huang et al. 2019, with Zhang & Zhu 2017).

``N`` agents hold private datasets ``D_i`` of ``m_i`` samples; an aggregator in the middle holds
nothing. The consensus problem is Huang et al.'s eq. (4)::

    min Σ_i f_i(w_i)   s.t.  w_i = w,   f_i(w) = (1/m_i) Σ_j ℓ(a_ij, b_ij, w) + (λ/n) R(w).

The book's :class:`~dpadmm_lite.problems.Problem` has ``F(w) = mean loss + lam·r(w)``, so the
paper's ``λ/n`` (n = number of agents) is ``problem.lam`` (the paper's experiments use
``λ/n = 1e-6``) and ``R = r`` (``‖w‖₁`` or ``½‖w‖²``). With equal ``m_i`` the consensus problem is
exactly ``N·F``; with unequal ``m_i`` it is the paper's agent-weighted problem (1), whose optimum
is not the sample-weighted ``problem.reference_optimum()`` (the trace still measures ``F``).

Every agent is a row of a stacked array: local models ``W`` and duals ``G`` are ``(N, d)``, the
data are :func:`~dpadmm_lite.problems.make_agents`' zero-padded ``(N, m_max, d)`` (products with
batched ``matmul``; for sparse features such as Adult's one-hot columns, with one block-diagonal
sparse matrix), and no update loops over agents or samples (only over iterations). The stacked
data of the last deal are kept on the problem, so a live panel that re-runs with the same agents
does not restack them.

==================  ==========================================================  ===================
name                update of agent i at iteration k                            noise
==================  ==========================================================  ===================
``admm_star``       exact ``argmin L_{ρ,i}`` (Alg. 1, line 4)                    none
``pvp_star``        exact, then ``w̃_i = w_i + N(0, σ_i²I)`` (Alg. 2, line 5)     Gaussian, constant
``dvp_star``        exact with a perturbed dual (Zhang & Zhu 2017, Alg. 2)       ℓ2-Laplace
``dp_admm_star``    closed form (12a) of the approximate Lagrangian (8),         Gaussian, σ_{i,k}
                    then ``w̃_i = w_i + N(0, σ_{i,k}²I)`` (Alg. 3)                of eq. (14)
``dp_sgd_star``     one clipped noisy gradient step from ``w^{k−1}``             Gaussian, constant
==================  ==========================================================  ===================

All of them share the aggregator step (Alg. 1–3)::

    w^k   = mean_i w̃_i^k − mean_i γ_i^{k−1}/ρ          (10c)
    γ_i^k = γ_i^{k−1} − ρ (w̃_i^k − w^k)                 (10d)

(``dp_sgd_star`` has no duals: the aggregator averages the agents' models). ``ε = ∞`` draws no
noise, and every private algorithm is then bit-for-bit its non-private twin.

**What ε means.** ``epsilon``, ``delta`` are the end-to-end budget of the whole run for one record
of one agent (replace-one neighbours), as everywhere in the book: the default
``calibration="accountant"`` keeps each paper's noise *shape* (Huang et al.'s time-varying
``σ_{i,k} ∝ 1/(m_i(ρ + 1/η_i^k))``, PVP's and DP-SGD's constant σ_i ∝ 1/m_i) and scales it until
the unified accountant's ε for the most exposed agent's ledger is the target
(:func:`dpadmm_lite.accounting.calibrate_ledger`); DVP calibrates its per-iteration α instead.
``calibration="paper"`` keeps the papers' formulas and their meaning of ε — **per iteration**, as
in Huang et al.'s experiments (Sec. VI-C) — for reproducing them; the trace's ``privacy`` then
shows what the run truly spends end to end, and ``privacy_paper`` what the paper claims.

**Public constants only.** Every sensitivity uses ``c₁ = problem.lipschitz`` (gradient bound) and
``problem.per_example_smoothness`` (curvature bound), which come from the declared public
``problem.feature_bound``; private runs refuse rows beyond it (``ValueError`` naming
``feature_bound``), except ``dp_sgd_star``, which clips per example. Theorems 3/4's ``c_w`` (a bound
on ``‖w*‖``) is by default a public bound from λ (:func:`public_c_w`); the paper's ``‖w*‖`` of a
pre-trained model reads the private data and is available, labelled, as ``c_w="optimum"`` — the
steps and the noise then depend on every record, and the trace's ``privacy`` is *not covered*.

References: Z. Huang, R. Hu, Y. Guo, E. Chan-Tin, Y. Gong, "DP-ADMM: ADMM-based distributed
learning with differential privacy", IEEE TIFS 2019 (``papers/huang2019_…``); T. Zhang, Q. Zhu,
"Dynamic differential privacy for ADMM-based distributed classification learning", IEEE TIFS
2017 (``papers/zhang2017_…``). Equation numbers in comments are Huang et al.'s unless marked.

Where this module departs from, or has to read into, the papers (each is said again in the
docstrings):

* **Exact local minimisation** (Alg. 1/2, line 4; the solvers are in
  :mod:`dpadmm_lite.algorithms._huang2019_local`). The paper does not say how it is solved. For
  ℓ2 we run batched damped (chord-)Newton on the stacked smooth subproblems: one ``(N, d, d)``
  batch of Hessians, formed in single precision and inverted in one batched call, preconditions the steps
  and is reused while it still contracts the gradients; Armijo backtracking per agent; the
  gradients are exact, so the solution keeps double precision. For ℓ1, batched accelerated
  proximal gradient (FISTA with the strong-convexity momentum of the ρ-term, step ``1/L_i`` from
  each agent's Gram matrix). Both are warm-started at the agent's previous model and stop when
  every agent's (proximal-)gradient norm is below ``inner_tol``, which certifies the distance to
  the exact minimiser by strong convexity (:func:`_tolerance_bound`): PVP's ledger adds it to the
  sensitivity, DVP's ledger note states it. A solve that stops early at ``max_inner`` has no
  certified distance for the neighbouring dataset (its solve may stop even farther off), so no
  sound ε follows from the measured one: the run warns (``RuntimeWarning``), its ledger note says
  so, and its ``privacy`` is *not covered* (ε = ∞) — never the exact-solve budget.
* **Step sizes under an end-to-end ε.** Theorems 3/4's η_i^k contain the per-iteration ε; they
  depend on (ε, δ) only through eq. (14)'s noise multiplier, so under the accountant they are
  evaluated at the calibrated multiplier (see :func:`dp_admm_star`).
* **Theorem 3's step** (eq. 29) has ``(c₁ + λc₂/n)²``; Sec. VI-E writes ``(1 + 10⁻⁶√104/n)²``
  with an extra ``/n``. We follow the theorem (the difference is below 1e-7).
* **Augmented objective** of Sec. VI-D, ``Σ_i (f_i(w̃_i^k) + ρ‖w̃_i^k − w̄^k‖)``: the paper does
  not define ``w̄^k`` there; we use the aggregator's ``w^k``.
* **PVP for ℓ1.** Huang et al. run PVP/DVP on ℓ2 only. The output-perturbation sensitivity
  ``2c₁/(m_i Λ)`` only needs the subproblem to be Λ-strongly convex, which the ρ-term gives
  (Λ = ρ for ℓ1, ρ + λ/n for ℓ2), so ``pvp_star`` runs on both. DVP (objective perturbation)
  needs a twice-differentiable objective and refuses ℓ1.
* **DVP's noise rate.** Zhang & Zhu's Alg. 2 sets ``ζ = α̂`` (their appendix uses ``α/4``).
  With one record *replaced* the linear perturbation term has sensitivity ``2c₁`` (Chaudhuri et
  al. 2011, Alg. 2, which they follow), so ``ζ = α̂/(2c₁)`` is what certifies ``α``; we draw that
  (more noise, never less privacy than stated).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from numbers import Integral
from typing import Sequence

import numpy as np

from .. import _validate as check
from .._constraints import SCALE, Interval, Options
from .. import datasets, mechanisms
from ..problems import Agents, Problem, make_agents, paused
from ..registry import register
from ..trace import PrivacyEvent, PrivacyGuarantee, Trace, from_iterates
from ._blas import one_blas_thread
from ._huang2019_local import (_cached_csr, _csr, _exact_update, _local_grad, _local_loss, _loss_slope, _sparse, _Stack,
                     _tolerance_bound)

__all__ = ["admm_star", "pvp_star", "dvp_star", "dp_admm_star", "dp_sgd_star", "step_sizes", "public_c_w",
           "stack_agents", "CALIBRATIONS"]

REGULARIZERS = ("l1", "l2")


# ====================================================================== agents and regulariser
def stack_agents(problem, *, n_agents: int = 100, sizes=None, owner=None, seed: int = 0) -> Agents:
    """Deal the training data of ``problem`` to ``n_agents`` agents and stack it.

    Parameters
    ----------
    problem
        The :class:`~dpadmm_lite.problems.Problem`.
    n_agents
        ``1 ≤ N ≤ n`` (each agent holds at least one sample).
    sizes
        ``None`` (as equal as possible, Huang et al.'s ``m_i = n/N``), ``"unequal"``, or explicit
        sizes; see :func:`dpadmm_lite.datasets.split`.
    owner
        Explicit ``owner[j]`` = agent of sample j (overrides ``n_agents`` and ``sizes``).
    seed
        Seed of the random deal (Sec. VI-A: "we divide the training data into n groups randomly").
    """
    if owner is None:
        owner = datasets.split(problem.n, n_agents, sizes=sizes, seed=seed)
    return make_agents(problem, owner)


def _check_problem(problem, *, private: bool, name: str) -> None:
    check.choice("problem.regularizer", problem.regularizer, REGULARIZERS)
    if private and not math.isfinite(problem.lipschitz):
        raise ValueError(
            f"problem.loss must be 'logistic' for the private {name!r}: its noise is calibrated to a "
            f"per-example gradient bound c₁ (Huang et al., Lemma 1), and the {problem.loss!r} loss has none")


def _reg_value(problem, W):
    return np.abs(W).sum(axis=-1) if problem.regularizer == "l1" else 0.5 * (W**2).sum(axis=-1)


def _reg_subgradient(problem, W):
    """R'(w): ``sgn(w)`` for ℓ1 (eq. 38a, sgn(0) = 0), ``w`` for ½‖w‖² (eq. 39a)."""
    return np.sign(W) if problem.regularizer == "l1" else W


# ====================================================================== the shared run
@dataclass
class _Record:
    """Per-iteration quantities of a star run, filled inside the loop and evaluated at the end."""

    glob: np.ndarray  # (T, d) aggregator's w^k
    loss: np.ndarray  # (T, N) local loss (1/m_i) Σ ℓ at the released local model w̃_i^k
    reg: np.ndarray  # (T, N) R(w̃_i^k)
    dist: np.ndarray  # (T, N) ‖w̃_i^k − w^k‖
    solve_error: float = 0.0  # exact updates: largest certified ‖w_i^k − argmin‖ left by the inner solver
    stopped_early: list = field(default_factory=list)  # iterations (1-based) whose inner solve missed inner_tol

    @classmethod
    def empty(cls, T, N, d):
        return cls(np.zeros((T, d)), np.zeros((T, N)), np.zeros((T, N)), np.zeros((T, N)))

    def store(self, k, problem, w, W_released, loss_released):
        self.glob[k] = w
        self.loss[k] = loss_released
        self.reg[k] = _reg_value(problem, W_released)
        self.dist[k] = np.sqrt(((W_released - w) ** 2).sum(1))


def _objective_of_iterates(problem, iterates):
    """``F(w^k)`` for all T iterates of a run at once, shape (T,).

    For the logistic loss on sparse features (Adult: 12 % non-zeros) the iterates are stacked as
    the columns of one ``d × T`` matrix and scored block by block of records: each block's margins
    of every iterate are one sparse product ``X_block W`` (``_SCORE_BLOCK × T``, in cache, from the
    problem's CSR row blocks made once), never T products and never the whole ``n × T`` array.
    With ``u = b a·w``, ``ℓ = log(1 + e^{−|u|}) + (|u| − u)/2``, and the two sums over records are
    formed without a pass of their own: ``Σ_j b_j a_j·w = (Σ_j b_j a_j)·w`` is one d-vector
    product, and ``Σ_j log(1 + e_j)`` is the log of the product of the factors ``1 + e_j ∈ (1, 2]``
    down each column of the block (a vectorised row-by-row product, ≤ 2^512, instead of a
    ``log1p`` per margin). The same numbers as ``problem.objective(iterates)`` up to rounding
    (relative 1e-14; ``tests/test_star.py``).
    """
    if problem.loss != "logistic" or not _sparse(problem):
        return problem.objective(iterates)
    blocks, signed_sum = _score_blocks(problem)
    columns = np.ascontiguousarray(np.asarray(iterates, float).T)  # d × T: iterate k is column k
    log_sum = np.zeros(columns.shape[1])
    abs_sum = np.zeros(columns.shape[1])
    for block in blocks:  # blocks of records, not iterates: one product per block
        z = block @ columns  # (records, T) margins a_j·w^k; |u| = |z| as b = ±1
        np.abs(z, out=z)
        abs_sum += z.sum(axis=0)
        np.negative(z, out=z)
        np.exp(z, out=z)
        z += 1.0
        log_sum += np.log(np.multiply.reduce(z, axis=0))  # Σ_j log(1 + e^{−|u_j|})
    loss = log_sum + 0.5 * (abs_sum - signed_sum @ columns)  # + Σ_j max(−u_j, 0) = (Σ|u| − Σu)/2
    return loss / problem.n + problem.lam * problem.regularizer_value(iterates)


def _accuracy_of_iterates(problem, iterates):
    """Test accuracy of all T iterates at once (``problem.accuracy(iterates)``, the same numbers):
    for sparse test features one sparse product ``X_test W`` with the iterates as columns."""
    if problem.loss != "logistic" or problem.X_test is None or not _sparse(problem):
        return problem.accuracy(iterates)
    test = _cached_csr(problem, "X_test")
    margins = test @ np.ascontiguousarray(np.asarray(iterates, float).T)  # (n_test, T)
    return ((margins >= 0) == (problem.y_test > 0)[:, None]).mean(axis=0)  # sign(a·w) = b, sign(0) = +1


def _score_blocks(problem):
    """The training rows as CSR blocks of :data:`_SCORE_BLOCK` records and ``Σ_j b_j a_j`` (d,),
    made once per problem."""
    csr = _csr(problem)
    cached = problem.__dict__.get("_star_score_blocks")
    if cached is None or cached[0] is not csr:
        blocks = [csr[start:start + _SCORE_BLOCK] for start in range(0, problem.n, _SCORE_BLOCK)]
        cached = (csr, blocks, np.asarray(csr.T @ problem.y, float))
        problem.__dict__["_star_score_blocks"] = cached
    return cached[1], cached[2]


#: Numbers of noise drawn per call in :func:`dp_admm_star` (1 MB): one call per block of iterations
#: instead of one per iteration, the same numbers in the same order.
_NOISE_BLOCK = 1 << 17

#: Records per block when a run's iterates are scored (:func:`_objective_of_iterates`): with T = 100
#: iterates a block's margins are 800 kB (in cache), and a column's product of 1024 factors ≤ 2 stays
#: below the largest double (2^1024) — the reason it must not be larger.
_SCORE_BLOCK = 1023


class _Scored:
    """The problem as :func:`~dpadmm_lite.trace.from_iterates` reads it, with ``F`` and the test
    accuracy of this run's iterates already computed (:func:`_objective_of_iterates`,
    :func:`_accuracy_of_iterates`); everything else is the problem's."""

    def __init__(self, problem, iterates):
        self._problem, self._iterates = problem, iterates
        self._objective = _objective_of_iterates(problem, iterates)
        self._accuracy = _accuracy_of_iterates(problem, iterates)

    def objective(self, x):
        return self._objective if x is self._iterates else self._problem.objective(x)

    def accuracy(self, x, *args):
        return self._accuracy if x is self._iterates and not args else self._problem.accuracy(x, *args)

    def __getattr__(self, name):
        return getattr(self._problem, name)


def _finish(problem, record: _Record, *, rho, noise, ledger, delta, privacy_paper, params,
            not_covered: str | None = None, record_every: int = 1) -> Trace:
    """Turn a run's record into the shared :class:`Trace` (one vectorised evaluation pass).

    ``not_covered``: why no guarantee covers the run (an option read the private data).
    ``record_every=k``: only the iterations k, 2k, …, T are scored (the record holds every one)."""
    T = len(record.glob)
    record_every = min(check.count("record_every", record_every), T)  # beyond T: the last iterate only
    if record_every > 1:
        keep = np.unique(np.append(np.arange(record_every - 1, T, record_every), T - 1))
        record = _Record(record.glob[keep], record.loss[keep], record.reg[keep], record.dist[keep],
                         record.solve_error, record.stopped_early)
    f_local = record.loss + problem.lam * record.reg  # f_i(w̃_i^k)
    metrics = {
        # Sec. VI-D: Σ_i (f_i(w̃_i^k) + ρ‖w̃_i^k − w̄^k‖), with w̄^k read as the aggregator's w^k
        "augmented_objective": (f_local + rho * record.dist).sum(1),
        # Sec. VI-D: (1/n) Σ_i (1/m_i) Σ_j ℓ(a_ij, b_ij, w̃_i^k)
        "empirical_loss": record.loss.mean(1),
    }
    iterates = np.ascontiguousarray(record.glob, dtype=float)
    scored = _Scored(problem, iterates)
    trace = from_iterates(
        scored, "", iterates, model=iterates[-1].copy(),
        consensus_violation=np.sqrt((record.dist**2).mean(1)),
        noise=noise, ledger=ledger, delta=delta, privacy_paper=privacy_paper, metrics=metrics,
        params={**params, "record_every": record_every}, not_covered=not_covered)
    if trace.test_accuracy is not None:  # classification error of the global model w^k on the test split
        trace.metrics["test_error"] = 1.0 - trace.test_accuracy
    return trace


def _common(problem, name, *, epsilon, delta, rho, iterations, seed, n_agents, sizes, owner, private, record_every=1):
    _check_problem(problem, private=private, name=name)
    check.count("record_every", record_every)  # before the run (:func:`_finish` applies it)
    epsilon = check.epsilon(epsilon)
    delta = check.delta(delta)
    rho = check.scale("rho", rho)
    iterations = check.count("iterations", iterations)
    seed = check.count("seed", seed, minimum=0)
    if owner is None:
        n_agents = check.count("n_agents", n_agents)
        if n_agents > problem.n:
            raise ValueError(f"n_agents must be in [1, n_samples={problem.n}] so that every agent holds at least "
                             f"one sample, got {n_agents}")
    if owner is None:
        owner = datasets.split(problem.n, n_agents, sizes=sizes, seed=seed)
    return epsilon, delta, rho, iterations, seed, _stack_for(problem, owner)


def _stack_for(problem, owner) -> _Stack:
    """The stacked data of this deal of the records, reused while the deal stays the same.

    A live panel re-runs with the same agents at every move of ε, δ or ρ; restacking 40,000
    records costs tens of milliseconds. The last stack is kept on the problem (like its cached
    reference optimum) and only returned for an identical ``owner`` array and training data.
    """
    owner = np.asarray(owner)
    cached = problem.__dict__.get("_star_stack")
    if cached is not None and cached[0] is problem.X and np.array_equal(cached[1], owner):
        return cached[2]
    stack = _Stack(problem, make_agents(problem, owner), owner)
    problem.__dict__["_star_stack"] = (problem.X, owner.copy(), stack)
    return stack


def _exact_admm(stack, *, rho, iterations, rng, primal_sigma=None, dual_zeta=None, extra=0.0,
                inner_tol=1e-9, max_inner=50) -> _Record:
    """Algorithm 1 (no noise), Algorithm 2 (``primal_sigma``: PVP) or DVP (``dual_zeta``, ``extra``).

    With noise the ℓ2 solver renews its Hessians agent by agent (``refresh="agents"`` of :func:`dpadmm_lite.algorithms._huang2019_local._newton`)."""
    p = stack.problem
    N, d = stack.n_agents, p.d
    rec = _Record.empty(iterations, N, d)
    w = np.zeros(d)  # line 1: w^0 = 0, w_i^0 = 0, γ_i^0 = 0
    W = np.zeros((N, d))
    G = np.zeros((N, d))
    Z = stack.margins(W)
    cache = {}  # inverse Hessians reused by the ℓ2 solver across iterations
    noisy = primal_sigma is not None or dual_zeta is not None or np.any(np.asarray(extra) != 0.0)
    for k in range(iterations):
        G_used = G
        if dual_zeta is not None:  # Zhang & Zhu (14): μ_i = γ_i + ξ_i/m_i, ξ_i ∝ exp(−ζ_i‖ξ‖)
            G_used = G + mechanisms.l2_laplace(rng, dual_zeta, (N, d)) / stack.sizes[:, None]
        W, Z, error, converged = _exact_update(stack, G_used, w, rho, W, Z, extra=extra, tol=inner_tol,
                                               max_inner=max_inner, cache=cache, refresh="agents" if noisy else "all")
        rec.solve_error = max(rec.solve_error, error)  # line 4: w_i^k = argmin L_{ρ,i}(w_i, w^{k−1}, γ_i^{k−1})
        if not converged:
            rec.stopped_early.append(k + 1)
        W_tilde, Z_tilde = W, Z
        if primal_sigma is not None:  # Alg. 2, line 5: w̃_i^k = w_i^k + N(0, σ_i² I)
            W_tilde = W + mechanisms.gaussian(rng, primal_sigma, (N, d))
            if np.any(primal_sigma):
                with paused():  # the released models' margins only score them (the record's loss)
                    Z_tilde = stack.margins(W_tilde)
        w = W_tilde.mean(0) - G.mean(0) / rho  # line 6/7: w^k = mean w̃_i^k − mean γ_i^{k−1}/ρ
        G = G - rho * (W_tilde - w)  # line 8/9: γ_i^k = γ_i^{k−1} − ρ(w̃_i^k − w^k)
        rec.store(k, p, w, W_tilde, _local_loss(stack, Z_tilde))
    return rec


def _params(stack, **extra):
    return {"n_agents": stack.n_agents, "min_local_size": int(stack.sizes.min()),
            "max_local_size": int(stack.sizes.max()), **extra}


def _worst_agent_events(sensitivity, sigma, note):
    """Gaussian ledger events of the most exposed agent: per release, the least noise per unit sensitivity.

    ``sensitivity`` and ``sigma`` are ``(T, N)``, one row per iteration. When every iteration
    releases the same (constant noise), the ledger is one event with ``count = T``.
    """
    sensitivity = np.atleast_2d(sensitivity)
    sigma = np.atleast_2d(sigma)
    worst = np.argmin(sigma / sensitivity, axis=1)
    rows = np.arange(len(worst))
    sens, noise = sensitivity[rows, worst], sigma[rows, worst]
    if np.all(sens == sens[0]) and np.all(noise == noise[0]):  # one release, repeated T times
        return [PrivacyEvent("gaussian", float(sens[0]), float(noise[0]), count=len(rows),
                             note=f"{note}, iterations 1–{len(rows)}")]
    return [PrivacyEvent("gaussian", float(sens[k]), float(noise[k]), note=f"{note}, iteration {k + 1}") for k in rows]


# ====================================================================== registered algorithms


#: How the noise is chosen for a finite ε: the unified accountant (default; ε, δ end to end) or the
#: papers' own per-iteration formulas (eq. 14 and Sec. III-A; Zhang & Zhu's Alg. 2 for DVP).
CALIBRATIONS = ("accountant", "paper")


#: The ranges of the options of Huang et al.'s runs beyond the shared ones (n_agents, inner_tol,
#: record_every: registry.SHARED_CONSTRAINTS); the registry checks them, tests/test_bad_input.py reads them.
_CONSTRAINTS = {"max_inner": Interval(Integral, 1, None)}
_PRIVATE_CONSTRAINTS = {**_CONSTRAINTS, "calibration": Options(CALIBRATIONS)}


@register("admm_star", paper="huang2019", private=False, setting="star",
          description="Consensus ADMM over a star, exact local minimisation (Huang et al. 2019, Alg. 1)",
          constraints=_CONSTRAINTS)
@one_blas_thread
def admm_star(problem: Problem, *, epsilon: float = math.inf, delta: float = 1e-5, rho: float = 1.0,
              iterations: int = 100, seed: int = 0, n_agents: int = 100, sizes: str | Sequence[int] | None = None,
              owner: np.ndarray | None = None, inner_tol: float = 1e-9, max_inner: int = 50,
              record_every: int = 1) -> Trace:
    """Non-private ADMM over a star network (Huang et al. 2019, Algorithm 1).

    Parameters
    ----------
    problem : Problem
        A :class:`~dpadmm_lite.problems.Problem` with regulariser ``"l1"`` or ``"l2"``; the private
        algorithms need the logistic loss (bounded per-example gradients c₁ = ``problem.lipschitz``,
        from the public ``problem.feature_bound``).
    epsilon : float, default math.inf
        The privacy budget of one record of one agent, ``math.inf`` for no noise. With the
        default ``calibration="accountant"``: the **end-to-end** budget of the whole run
        (replace-one neighbours), as everywhere in the book. With ``calibration="paper"``: the
        budget **per iteration**, as in Huang et al.'s experiments (Sec. VI-C: "privacy budget
        per iteration ε"); the trace's ``privacy`` then shows what the run spends end to end.
    delta : float, default 1e-05
        δ in [1e-100, 1), the δ of the budget that ``epsilon`` describes.
    rho : float, default 1.0
        ADMM penalty ρ > 0 (the paper's experiments: 0.1).
    iterations : int, default 100
        t ≥ 1 (the paper: 100).
    seed : int, default 0
        Seeds both the random deal of the samples to agents and the noise.
    n_agents : int, default 100
        How the training data are dealt to the agents; see :func:`stack_agents`.
    sizes : str, sequence of int or None, default None
        How the training data are dealt to the agents; see :func:`stack_agents`.
    owner : ndarray or None, default None
        How the training data are dealt to the agents; see :func:`stack_agents`.
    inner_tol : float, default 1e-9
        Tolerance > 0 of the local solves: an agent's inner iteration stops once its
        (proximal-)gradient norm is at most ``inner_tol``.
    max_inner : int, default 50
        A whole number ≥ 1: at most this many inner steps per local solve.
    record_every : int, default 1
        Score the iterates after iterations k, 2k, …, t only (default 1: every iteration), as the
        other families do: a sweep that reads the final model or objective sets ``k = t``. The run,
        its noise and its released model are the same for every k.

    Returns
    -------
    Trace
        The aggregator's model of each recorded iteration and the released model; ``noise``,
        the ``ledger``, ``privacy`` (the unified accountant on what was drawn) and
        ``privacy_paper`` (the paper's own statement; ε = ∞ and no ledger without noise).

    Notes
    -----
    Each agent minimises its augmented Lagrangian (6) exactly; the aggregator averages. This is
    also the book's consensus ADMM over a star (Boyd et al. 2011, Sec. 7.1): with equal local
    sizes it converges to ``problem.reference_optimum()``. ``epsilon`` must be ``math.inf``.

    The local problems are solved for all agents at once: batched damped (chord-)Newton for ℓ2,
    batched FISTA for ℓ1, warm-started, until every agent's (proximal-)gradient norm is
    ≤ ``inner_tol`` or ``max_inner`` inner steps (``Trace.noise`` is empty: no noise).

    References
    ----------
    Z. Huang, R. Hu, Y. Guo, E. Chan-Tin, Y. Gong, "DP-ADMM: ADMM-based distributed learning with
    differential privacy", IEEE TIFS 2019.
    T. Zhang, Q. Zhu, "Dynamic differential privacy for ADMM-based distributed classification
    learning", IEEE TIFS 12(1), 2017.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("admm_star", problem, iterations=10, seed=0)
    >>> trace.model.shape, len(trace.objective)
    ((5,), 10)
    """
    if not math.isinf(check.epsilon(epsilon)):
        raise ValueError(f"epsilon must be ∞ (math.inf) for the non-private 'admm_star', got {epsilon!r}; "
                         "run 'dp_admm_star', 'pvp_star', 'dvp_star' or 'dp_sgd_star' for a private run")
    _, delta, rho, T, seed, stack = _common(problem, "admm_star", epsilon=epsilon, delta=delta, rho=rho,
                                             iterations=iterations, seed=seed, n_agents=n_agents, sizes=sizes,
                                             owner=owner, private=False, record_every=record_every)
    inner_tol = check.positive("inner_tol", inner_tol)
    max_inner = check.count("max_inner", max_inner)
    rec = _exact_admm(stack, rho=rho, iterations=T, rng=np.random.default_rng(seed), inner_tol=inner_tol,
                      max_inner=max_inner)
    return _finish(problem, rec, rho=rho, record_every=record_every, noise={}, ledger=[], delta=delta,
                   privacy_paper=None,
                   params=_params(stack, inner_tol=inner_tol, max_inner=max_inner))


@register("pvp_star", paper="huang2019", private=True, setting="star",
          description="ADMM with primal variable perturbation over a star (Huang et al. 2019, Alg. 2)",
          tasks=("logistic-l2", "logistic-l1"), tuning={"rho": (0.1, 1.0, 10.0)}, constraints=_PRIVATE_CONSTRAINTS)
@one_blas_thread
def pvp_star(problem: Problem, *, epsilon: float, delta: float, rho: float, iterations: int, seed: int,
             n_agents: int = 100, sizes: str | Sequence[int] | None = None, owner: np.ndarray | None = None,
             inner_tol: float = 1e-9, max_inner: int = 50, calibration: str = "accountant",
             record_every: int = 1) -> Trace:
    """ADMM with primal variable perturbation, PVP (Huang et al. 2019, Alg. 2; Zhang & Zhu 2017).

    Parameters
    ----------
    problem : Problem
        A :class:`~dpadmm_lite.problems.Problem` with regulariser ``"l1"`` or ``"l2"``; the private
        algorithms need the logistic loss (bounded per-example gradients c₁ = ``problem.lipschitz``,
        from the public ``problem.feature_bound``).
    epsilon : float
        The privacy budget of one record of one agent, ``math.inf`` for no noise. With the
        default ``calibration="accountant"``: the **end-to-end** budget of the whole run
        (replace-one neighbours), as everywhere in the book. With ``calibration="paper"``: the
        budget **per iteration**, as in Huang et al.'s experiments (Sec. VI-C: "privacy budget
        per iteration ε"); the trace's ``privacy`` then shows what the run spends end to end.
    delta : float
        δ in [1e-100, 1), the δ of the budget that ``epsilon`` describes.
    rho : float
        ADMM penalty ρ > 0 (the paper's experiments: 0.1).
    iterations : int
        t ≥ 1 (the paper: 100).
    seed : int
        Seeds both the random deal of the samples to agents and the noise.
    n_agents : int, default 100
        How the training data are dealt to the agents; see :func:`stack_agents`.
    sizes : str, sequence of int or None, default None
        How the training data are dealt to the agents; see :func:`stack_agents`.
    owner : ndarray or None, default None
        How the training data are dealt to the agents; see :func:`stack_agents`.
    inner_tol : float, default 1e-9
        Tolerance > 0 of the local solves: an agent's inner iteration stops once its
        (proximal-)gradient norm is at most ``inner_tol``.
    max_inner : int, default 50
        A whole number ≥ 1: at most this many inner steps per local solve.
    calibration : str, default "accountant"
        ``"accountant"`` (default) keeps the paper's noise shape and scales it until the unified
        accountant's ε for the most exposed agent's ledger is the end-to-end target (within
        3 %, never above); ``"paper"`` uses the paper's own per-iteration formula.
    record_every : int, default 1
        Score the iterates after iterations k, 2k, …, t only (default 1: every iteration), as the
        other families do: a sweep that reads the final model or objective sets ``k = t``. The run,
        its noise and its released model are the same for every k.

    Returns
    -------
    Trace
        The aggregator's model of each recorded iteration and the released model; ``noise``,
        the ``ledger``, ``privacy`` (the unified accountant on what was drawn) and
        ``privacy_paper`` (the paper's own statement; ε = ∞ and no ledger without noise).

    Notes
    -----
    Exact local update as in :func:`admm_star`, then each agent broadcasts
    ``w̃_i^k = w_i^k + N(0, σ_i² I)`` with a constant σ_i proportional to the sensitivity
    ``Δ_i = 2c₁/(m_i Λ)`` of the exact minimiser of a Λ-strongly convex subproblem (Huang et al.,
    Appendix A), ``Λ = λ/n + ρ`` (ℓ2), ``Λ = ρ`` (ℓ1). The paper's σ (Sec. III-A,
    ``calibration="paper"``, ε per iteration) is the classic Gaussian mechanism::

        σ_i = 2c₁ √(2 ln(1.25/δ)) / (Λ m_i ε);

    by default ``σ_i = s·Δ_i`` with the factor s that makes the T releases spend the end-to-end
    (ε, δ). Huang et al. follow Zhang & Zhu's PVP but with Gaussian noise; Zhang & Zhu's own PVP
    uses ℓ2-Laplace noise and ends with one DVP step, which we do not reproduce. Huang et al. run
    PVP on ℓ2 only; the sensitivity argument needs only the ρ-term's strong convexity, so ℓ1 runs
    too (Λ = ρ).

    The inner solver stops at ``inner_tol``, so the released minimiser is within the certified
    distance b = :func:`_tolerance_bound` (``inner_tol/Λ`` for ℓ2, ``3·inner_tol/ρ`` for ℓ1) of the
    exact one, for D and for D' alike: the ledger's sensitivity is ``Δ_i + 2b`` (a negligible
    1e-8 relative at the default tolerance, but never less than the truth), and the calibration
    uses it. A run whose inner solve misses ``inner_tol`` within ``max_inner`` steps has no such
    certificate — the distance measured on D says nothing about the neighbouring D′, so no
    sensitivity, hence no ε, follows from it: it warns (``RuntimeWarning``), says so in the ledger
    note, and its ``privacy`` is *not covered* (ε = ∞).

    Privacy: ``privacy_paper`` is Huang et al.'s end-to-end reading of the per-iteration
    (ε₀, δ) the noise corresponds to (Sec. VI-C and the moments accountant,
    ``accounting.huang2019_total_epsilon``); ``privacy`` is the unified accountant on the T
    Gaussian releases of the most exposed agent.

    References
    ----------
    Z. Huang, R. Hu, Y. Guo, E. Chan-Tin, Y. Gong, "DP-ADMM: ADMM-based distributed learning with
    differential privacy", IEEE TIFS 2019.
    T. Zhang, Q. Zhu, "Dynamic differential privacy for ADMM-based distributed classification
    learning", IEEE TIFS 12(1), 2017.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("pvp_star", problem, epsilon=1.0, delta=1e-5, iterations=10, seed=0)
    >>> trace.privacy.epsilon <= 1.0, trace.model.shape
    (True, (5,))
    """
    epsilon, delta, rho, T, seed, stack = _common(problem, "pvp_star", epsilon=epsilon, delta=delta, rho=rho,
                                                   iterations=iterations, seed=seed, n_agents=n_agents,
                                                   sizes=sizes, owner=owner, private=True, record_every=record_every)
    inner_tol = check.positive("inner_tol", inner_tol)
    max_inner = check.count("max_inner", max_inner)
    check.choice("calibration", calibration, CALIBRATIONS)
    _check_records(problem, "pvp_star", epsilon)
    strong = rho + (problem.lam if problem.regularizer == "l2" else 0.0)
    sensitivity = 2.0 * problem.lipschitz / (stack.sizes * strong)  # Appendix A: 2c₁/(m_i(λ/n + ρ))
    bound = _tolerance_bound(problem, rho, inner_tol)  # ‖released − exact minimiser‖, certified in advance
    covered = np.tile(sensitivity + 2.0 * bound, (T, 1))  # what one record can move the released w_i^k
    if math.isinf(epsilon):
        scale, eps0 = 0.0, math.inf
    elif calibration == "paper":  # Sec. III-A: the classic Gaussian mechanism at per-iteration ε
        scale, eps0 = _classic_multiplier(epsilon, delta), epsilon
    else:  # the paper's shape σ_i ∝ Δ_i, scaled so that the worst agent's T releases spend (ε, δ)
        scale = _calibrated_scale(_worst_agent_events(covered, np.tile(sensitivity, (T, 1)), "PVP broadcast w̃_i"),
                                  epsilon, delta)
        eps0 = _per_iteration_epsilon(scale, delta)
    sigma = scale * sensitivity
    rec = _exact_admm(stack, rho=rho, iterations=T, rng=np.random.default_rng(seed), primal_sigma=sigma,
                      inner_tol=inner_tol, max_inner=max_inner)
    ledger, uncovered = [], None
    if not math.isinf(epsilon):
        note = "PVP broadcast w̃_i"
        if rec.stopped_early:  # the certified bound does not hold, for D′ neither: no guarantee, and say so
            extra, uncovered = _stopped_early("pvp_star", rec, T, max_inner, inner_tol)
            note += extra
        ledger = _worst_agent_events(covered, np.tile(sigma, (T, 1)), note)
    return _finish(problem, rec, rho=rho, record_every=record_every, not_covered=uncovered,
                   noise={"sigma": sigma, "sensitivity": sensitivity, "solve_error": rec.solve_error,
                          "solve_bound": bound, "noise_multiplier": scale, "per_iteration_epsilon": eps0,
                          "calibration": calibration},
                   ledger=ledger, delta=delta, privacy_paper=_huang_claim(eps0, delta, T, "PVP (Sec. III-A)",
                                                                          calibration),
                   params=_params(stack, inner_tol=inner_tol, max_inner=max_inner, calibration=calibration))


@register("dvp_star", paper="huang2019", private=True, setting="star",
          description="ADMM with dual variable perturbation over a star (Zhang & Zhu 2017, Alg. 2; "
                      "baseline of Huang et al. 2019)",
          tasks=("logistic-l2",), tuning={"rho": (0.1, 1.0, 10.0)}, constraints=_PRIVATE_CONSTRAINTS)
@one_blas_thread
def dvp_star(problem: Problem, *, epsilon: float, delta: float, rho: float, iterations: int, seed: int,
             n_agents: int = 100, sizes: str | Sequence[int] | None = None, owner: np.ndarray | None = None,
             inner_tol: float = 1e-9, max_inner: int = 50, calibration: str = "accountant",
             record_every: int = 1) -> Trace:
    """ADMM with dual variable perturbation, DVP (Zhang & Zhu 2017, Alg. 2), in the star setting.

    Parameters
    ----------
    problem : Problem
        A :class:`~dpadmm_lite.problems.Problem` with regulariser ``"l1"`` or ``"l2"``; the private
        algorithms need the logistic loss (bounded per-example gradients c₁ = ``problem.lipschitz``,
        from the public ``problem.feature_bound``).
    epsilon : float
        The privacy budget of one record of one agent, ``math.inf`` for no noise. With the
        default ``calibration="accountant"``: the **end-to-end** budget of the whole run
        (replace-one neighbours), as everywhere in the book. With ``calibration="paper"``: the
        budget **per iteration**, as in Huang et al.'s experiments (Sec. VI-C: "privacy budget
        per iteration ε"); the trace's ``privacy`` then shows what the run spends end to end.
    delta : float
        δ in [1e-100, 1), the δ of the budget that ``epsilon`` describes.
    rho : float
        ADMM penalty ρ > 0 (the paper's experiments: 0.1).
    iterations : int
        t ≥ 1 (the paper: 100).
    seed : int
        Seeds both the random deal of the samples to agents and the noise.
    n_agents : int, default 100
        How the training data are dealt to the agents; see :func:`stack_agents`.
    sizes : str, sequence of int or None, default None
        How the training data are dealt to the agents; see :func:`stack_agents`.
    owner : ndarray or None, default None
        How the training data are dealt to the agents; see :func:`stack_agents`.
    inner_tol : float, default 1e-9
        Tolerance > 0 of the local solves: an agent's inner iteration stops once its
        (proximal-)gradient norm is at most ``inner_tol``.
    max_inner : int, default 50
        A whole number ≥ 1: at most this many inner steps per local solve.
    calibration : str, default "accountant"
        ``"accountant"`` (default) keeps the paper's noise shape and scales it until the unified
        accountant's ε for the most exposed agent's ledger is the end-to-end target (within
        3 %, never above); ``"paper"`` uses the paper's own per-iteration formula.
    record_every : int, default 1
        Score the iterates after iterations k, 2k, …, t only (default 1: every iteration), as the
        other families do: a sweep that reads the final model or objective sets ``k = t``. The run,
        its noise and its released model are the same for every k.

    Returns
    -------
    Trace
        The aggregator's model of each recorded iteration and the released model; ``noise``,
        the ``ledger``, ``privacy`` (the unified accountant on what was drawn) and
        ``privacy_paper`` (the paper's own statement; ε = ∞ and no ledger without noise).

    Notes
    -----
    Before its exact local update each agent perturbs its dual (Zhang & Zhu eq. 14, in the star's
    sign convention and the book's scaling of the loss by ``1/m_i``)::

        μ_i = γ_i^{k−1} + ξ_i/m_i,   density(ξ_i) ∝ exp(−ζ_i ‖ξ_i‖),
        w_i^k = argmin f_i(v) − ⟨μ_i, v⟩ + ρ/2‖v − w^{k−1}‖² + Φ_i/2‖v‖²     (Zhang & Zhu 13, 15)

    which is Chaudhuri et al.'s objective perturbation of a Λ-strongly convex problem,
    Λ = ρ + λ/n. For a per-iteration pure privacy α, with c = ``problem.per_example_smoothness``
    (bound on ℓ''‖a‖²) and c₁ = ``problem.lipschitz`` (Zhang & Zhu, Alg. 2), both from the public
    ``feature_bound``::

        α̂_i = α − 2 ln(1 + c/(m_i Λ));  Φ_i = 0 if α̂_i > 0,
        else Φ_i = c/(m_i(e^{α/4} − 1)) − Λ and α̂_i = α/2;   ζ_i = α̂_i/(2c₁).

    Zhang & Zhu print ``ζ = α̂``; the factor ``1/(2c₁)`` is the sensitivity of the linear term
    when one record is replaced (Chaudhuri et al. 2011, Alg. 2), so this ζ certifies α and the
    printed one would not. The released ``w_i^k`` is the unperturbed minimiser (its randomness
    comes from μ). Needs ℓ2 (objective perturbation needs a twice-differentiable objective), as in
    both papers.

    **Which α.** ``calibration="paper"``: α = ε, each iteration ε-DP (pure), as in Zhang & Zhu.
    ``calibration="accountant"`` (default): Φ and ζ depend on α non-linearly, so the noise is not
    scaled but α itself is calibrated (bisection, :func:`dpadmm_lite.accounting.calibrate_ledger`
    on T pure releases of unit ε₀) so that the T releases of the most exposed agent spend the
    end-to-end (ε, δ) under the unified accountant; ζ and Φ are then Alg. 2's for that α.

    **The exact minimiser.** Objective perturbation is private for the *exact* minimiser. Each
    f-step is solved until the gradient norm is ≤ ``inner_tol``; by (Λ + Φ)-strong convexity the
    released model is then certified within ``inner_tol/(Λ + Φ)`` of the exact one
    (``noise["solve_bound"]``, and in the ledger note). A run whose inner solve stops early
    (``max_inner`` steps) releases a point that is not the minimiser of the perturbed objective:
    the density argument says nothing about it, and without output noise there is no sound ε to
    raise the budget to. It emits a ``RuntimeWarning``, its ledger note says which iterations, and
    its ``privacy`` is *not covered* (ε = ∞) — never the exact-solve budget.

    Privacy: ``privacy_paper`` is the per-iteration α-DP of Zhang & Zhu's Theorem 1 composed
    over T iterations (basic composition, δ = 0); ``privacy`` is the unified accountant on the
    ledger, whose ℓ2-Laplace events carry the effective sensitivity ``α/ζ_i`` (so that
    ``ζΔ = α`` includes the Jacobian term of objective perturbation).

    References
    ----------
    Z. Huang, R. Hu, Y. Guo, E. Chan-Tin, Y. Gong, "DP-ADMM: ADMM-based distributed learning with
    differential privacy", IEEE TIFS 2019.
    T. Zhang, Q. Zhu, "Dynamic differential privacy for ADMM-based distributed classification
    learning", IEEE TIFS 12(1), 2017.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("dvp_star", problem, epsilon=1.0, delta=1e-5, iterations=10, seed=0)
    >>> trace.privacy.epsilon <= 1.0, trace.model.shape
    (True, (5,))
    """
    if problem.regularizer != "l2":
        raise ValueError("problem.regularizer must be 'l2' for 'dvp_star': dual variable perturbation is objective "
                         "perturbation and needs a twice-differentiable objective (Zhang & Zhu 2017, Assumption 2)")
    epsilon, delta, rho, T, seed, stack = _common(problem, "dvp_star", epsilon=epsilon, delta=delta, rho=rho,
                                                   iterations=iterations, seed=seed, n_agents=n_agents,
                                                   sizes=sizes, owner=owner, private=True, record_every=record_every)
    inner_tol = check.positive("inner_tol", inner_tol)
    max_inner = check.count("max_inner", max_inner)
    check.choice("calibration", calibration, CALIBRATIONS)
    _check_records(problem, "dvp_star", epsilon)
    if math.isinf(epsilon) or calibration == "paper":
        alpha = epsilon  # Zhang & Zhu: each iteration α = ε-DP
    else:  # T pure α-DP releases (ζΔ = α), α calibrated so that they compose to (ε, δ)
        unit = [PrivacyEvent("laplace_l2", 1.0, 1.0, count=T, note="unit scale: α = 1 per iteration")]
        alpha = 1.0 / _calibrated_scale(unit, epsilon, delta)
    zeta, extra, effective = dvp_noise(problem, epsilon=alpha, rho=rho, sizes=stack.sizes)
    rec = _exact_admm(stack, rho=rho, iterations=T, rng=np.random.default_rng(seed),
                      dual_zeta=None if math.isinf(epsilon) else zeta, extra=extra,
                      inner_tol=inner_tol, max_inner=max_inner)
    bound = _tolerance_bound(problem, rho, inner_tol, extra)
    uncovered = None
    if math.isinf(epsilon):
        ledger, paper = [], None
    else:
        worst = int(np.argmax(effective * zeta))  # every agent spends α; take the first of the worst
        note = (f"DVP: objective perturbation of the local update (effective sensitivity α/ζ, α = {alpha:.4g} per "
                f"iteration); released minimiser certified within {bound:.1e} of the exact one")
        if rec.stopped_early:  # not the exact minimiser: the proof does not apply, and no output noise covers it
            extra_note, uncovered = _stopped_early("dvp_star", rec, T, max_inner, inner_tol)
            note += extra_note
        ledger = [PrivacyEvent("laplace_l2", float(effective[worst]), float(zeta[worst]), count=T, note=note)]
        paper = PrivacyGuarantee(T * alpha, 0.0, "Zhang & Zhu 2017, Thm 1, composed over T iterations",
                                 f"each iteration α = {alpha:.4g}-DP (pure) for every agent; basic composition "
                                 f"over T = {T} iterations")
    return _finish(problem, rec, rho=rho, record_every=record_every,
                   noise={"zeta": zeta, "extra_penalty": extra, "per_iteration_epsilon": alpha,
                          "solve_error": rec.solve_error, "solve_bound": bound, "calibration": calibration},
                   ledger=ledger, delta=delta, privacy_paper=paper, not_covered=uncovered,
                   params=_params(stack, inner_tol=inner_tol, max_inner=max_inner, calibration=calibration))


def dvp_noise(problem, *, epsilon: float, rho: float, sizes):
    """DVP's noise rate ζ_i, extra penalty Φ_i and effective sensitivity α/ζ_i for every agent.

    ``epsilon`` is the per-iteration pure privacy α. :func:`dpadmm_lite.accounting.zhang2017_dvp_zeta`
    with the star's local penalty ``ρ/2‖v − w^{k−1}‖²`` written as Zhang & Zhu's
    ``η Σ_{j∈N_p}‖v − ·‖²`` with ``η = ρ/2``, ``N_p = 1`` (both have curvature ρ), regulariser
    weight λ/n, ``C^R = 1`` and ``c₁`` = the public curvature bound
    ``problem.per_example_smoothness``. That function's ζ assumes gradients of norm ≤ 1; we divide
    by the public ``problem.lipschitz`` for the general bound. See :func:`dvp_star`.
    ``ε = ∞``: ζ = ∞, Φ = 0.
    """
    sizes = np.asarray(sizes, float)
    if math.isinf(epsilon):
        return np.full(sizes.shape, np.inf), np.zeros(sizes.shape), np.full(sizes.shape, np.nan)
    from ..accounting import zhang2017_dvp_zeta

    zeta, extra = zhang2017_dvp_zeta(np.full(sizes.shape, epsilon), local_size=sizes, lam=problem.lam, rho=rho / 2,
                                     n_neighbors=1, c1=problem.per_example_smoothness)
    zeta = np.asarray(zeta, float) / problem.lipschitz
    return zeta, np.asarray(extra, float), epsilon / zeta


@register("dp_admm_star", paper="huang2019", private=True, setting="star",
          description="DP-ADMM: approximate augmented Lagrangian + time-varying Gaussian noise (Huang et al. 2019, "
                      "Alg. 3)",
          tasks=("logistic-l2", "logistic-l1"), tuning={"rho": (0.01, 0.1, 1.0)},
          constraints={"c_w": [SCALE, Options(["optimum"], note="‖w*‖ of the training rows: reads the private data"),
                               None],
                       "calibration": Options(CALIBRATIONS)})
@one_blas_thread
def dp_admm_star(problem: Problem, *, epsilon: float, delta: float, rho: float, iterations: int, seed: int,
                 n_agents: int = 100, sizes: str | Sequence[int] | None = None, owner: np.ndarray | None = None,
                 c_w: float | None = None, calibration: str = "accountant", record_every: int = 1) -> Trace:
    """DP-ADMM of Huang et al. (2019), Algorithm 3.

    Parameters
    ----------
    problem : Problem
        A :class:`~dpadmm_lite.problems.Problem` with regulariser ``"l1"`` or ``"l2"``; the private
        algorithms need the logistic loss (bounded per-example gradients c₁ = ``problem.lipschitz``,
        from the public ``problem.feature_bound``).
    epsilon : float
        The privacy budget of one record of one agent, ``math.inf`` for no noise. With the
        default ``calibration="accountant"``: the **end-to-end** budget of the whole run
        (replace-one neighbours), as everywhere in the book. With ``calibration="paper"``: the
        budget **per iteration**, as in Huang et al.'s experiments (Sec. VI-C: "privacy budget
        per iteration ε"); the trace's ``privacy`` then shows what the run spends end to end.
    delta : float
        δ in [1e-100, 1), the δ of the budget that ``epsilon`` describes.
    rho : float
        ADMM penalty ρ > 0 (the paper's experiments: 0.1).
    iterations : int
        t ≥ 1 (the paper: 100).
    seed : int
        Seeds both the random deal of the samples to agents and the noise.
    n_agents : int, default 100
        How the training data are dealt to the agents; see :func:`stack_agents`.
    sizes : str, sequence of int or None, default None
        How the training data are dealt to the agents; see :func:`stack_agents`.
    owner : ndarray or None, default None
        How the training data are dealt to the agents; see :func:`stack_agents`.
    c_w : float or None, default None
        The bound on ``‖w*‖`` in η_i^k. ``None`` (default): a **public** bound, from the loss and λ
        alone — the logistic loss is ≥ 0 and equals ln 2 at w = 0, so ``λ R(w*) ≤ F(0) = ln 2``:
        ``c_w = min(c₁/λ, √(2 ln 2/λ))`` for ℓ2 (also ``λw* = −∇loss``), ``ln 2/λ`` for ℓ1
        (‖w*‖₂ ≤ ‖w*‖₁). ``"optimum"``: the paper's choice, ``‖w*‖`` of a pre-trained model
        (c_w = 23 for ℓ1, 89 for ℓ2 on Adult) — here ``‖problem.reference_optimum().x‖``, which
        **reads the private data** and is not privatised (like the paper's): every η_i^k, Δ_{i,k}
        and σ_{i,k} then depend on every record, and the trace's ``privacy`` is *not covered*
        (ε = ∞; ``privacy.reason`` says why). Or a positive number (public: the caller's).
    calibration : str, default "accountant"
        ``"accountant"`` (default) keeps the paper's noise shape and scales it until the unified
        accountant's ε for the most exposed agent's ledger is the end-to-end target (within
        3 %, never above); ``"paper"`` uses the paper's own per-iteration formula.
    record_every : int, default 1
        Score the iterates after iterations k, 2k, …, t only (default 1: every iteration), as the
        other families do: a sweep that reads the final model or objective sets ``k = t``. The run,
        its noise and its released model are the same for every k.

    Returns
    -------
    Trace
        The aggregator's model of each recorded iteration and the released model; ``noise``,
        the ``ledger``, ``privacy`` (the unified accountant on what was drawn) and
        ``privacy_paper`` (the paper's own statement; ε = ∞ and no ledger without noise).

    Notes
    -----
    Agent i at iteration k, in closed form (eq. 12a; 38a for ℓ1, 39a for ℓ2)::

        w_i^k = (−ℓ̄'_i(w̃_i^{k−1}) − (λ/n)R'(w̃_i^{k−1}) + γ_i^{k−1} + ρw^{k−1} + w̃_i^{k−1}/η_i^k)
                / (ρ + 1/η_i^k)
        w̃_i^k = w_i^k + N(0, σ_{i,k}² I),   σ_{i,k} = z · Δ_{i,k},   Δ_{i,k} = 2c₁/(m_i(ρ + 1/η_i^k))

    with the step sizes η_i^k of Theorem 3 (ℓ1, eq. 29) or Theorem 4 (ℓ2, eq. 34), see
    :func:`step_sizes`; then the aggregator step (10c) and the dual step (10d) on the noisy
    ``w̃_i^k``. Initialisation: ``w^0 = w̃_i^0 = γ_i^0 = 0``.

    The sensitivity of (12a) to one record of agent i is ``Δ_{i,k}`` (Lemma 1) — bounded without
    smoothness or strong convexity, because the loss enters (12a) only through one gradient. As
    η_i^k shrinks with k, Δ_{i,k} and σ_{i,k} shrink too (time-varying noise); the noise
    *multiplier* z = σ_{i,k}/Δ_{i,k} is the same at every iteration and for every agent.

    **Calibration.** ``"paper"``: eq. (14), ``z = √(2 ln(1.25/δ))/ε`` with ε per iteration
    (Theorem 1, proved for ε ≤ 1). ``"accountant"`` (default): z is the noise multiplier whose T
    releases (the paper's shape: one multiplier for every release) spend the end-to-end (ε, δ) —
    :func:`dpadmm_lite.accounting.calibrate_ledger` on the unit-scale ledger. The step sizes of
    Theorems 3/4 contain (ε, δ) only through ``ln(1.25/δ)/ε² = z²/2``, so they are evaluated at
    the calibrated z: the run *is* Algorithm 3 at the per-iteration budget
    ``ε₀ = √(2 ln(1.25/δ))/z`` (``noise["per_iteration_epsilon"]``) whose T-fold composition is
    exactly (ε, δ), and the sensitivities Δ_{i,k} in the ledger use exactly the η_i^k that the
    updates used.

    Privacy: ``privacy_paper`` is the paper's end-to-end ``ε̄ = c₀√t ε₀`` (Theorem 2,
    ``accounting.huang2019_total_epsilon``); ``privacy`` is the unified accountant on T Gaussian
    events (each iteration's Δ_{i,k} and σ_{i,k} for the most exposed agent).

    References
    ----------
    Z. Huang, R. Hu, Y. Guo, E. Chan-Tin, Y. Gong, "DP-ADMM: ADMM-based distributed learning with
    differential privacy", IEEE TIFS 2019.
    T. Zhang, Q. Zhu, "Dynamic differential privacy for ADMM-based distributed classification
    learning", IEEE TIFS 12(1), 2017.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("dp_admm_star", problem, epsilon=1.0, delta=1e-5, iterations=10, seed=0)
    >>> trace.privacy.epsilon <= 1.0, trace.model.shape
    (True, (5,))
    """
    epsilon, delta, rho, T, seed, stack = _common(problem, "dp_admm_star", epsilon=epsilon, delta=delta, rho=rho,
                                                   iterations=iterations, seed=seed, n_agents=n_agents,
                                                   sizes=sizes, owner=owner, private=True, record_every=record_every)
    check.choice("calibration", calibration, CALIBRATIONS)
    _check_records(problem, "dp_admm_star", epsilon)
    reads_data = isinstance(c_w, str)
    c_w = _c_w(problem, c_w)
    if math.isinf(epsilon):
        z, eps0 = 0.0, math.inf
    elif calibration == "paper":  # eq. (14): classic Gaussian mechanism at per-iteration ε
        z, eps0 = _classic_multiplier(epsilon, delta), epsilon
    else:  # the paper's shape (one multiplier z = σ_{i,k}/Δ_{i,k} for all T releases), scaled to (ε, δ)
        unit = [PrivacyEvent("gaussian", 1.0, 1.0, count=T, note="unit scale: σ_{i,k} = Δ_{i,k}")]
        z = _calibrated_scale(unit, epsilon, delta)
        eps0 = _per_iteration_epsilon(z, delta)
    eta = step_sizes(problem, sizes=stack.sizes, iterations=T, c_w=c_w, noise_multiplier=z)  # (29)/(34), (T, N)
    sensitivity = 2.0 * problem.lipschitz / (stack.sizes * (rho + 1.0 / eta))  # Lemma 1, eq. (11)
    sigma = z * sensitivity  # eq. (14): σ_{i,k} = 2c₁√(2 ln(1.25/δ))/(m_i ε (ρ + 1/η_i^k)) for z of eq. (14)

    rng = np.random.default_rng(seed)
    N, d = stack.n_agents, problem.d
    rec = _Record.empty(T, N, d)
    w = np.zeros(d)  # line 1: w^0, w̃_i^0, γ_i^0 = 0
    W_tilde = np.zeros((N, d))
    G = np.zeros((N, d))
    _, slope = _loss_slope(stack, stack.margins(W_tilde))
    block = max(1, _NOISE_BLOCK // (N * d))  # iterations whose noise is drawn in one call
    for k in range(T):
        if k % block == 0:  # ξ_i^k for the next iterations, in the order one draw per iteration would give
            xi = mechanisms.gaussian(rng, sigma[k:k + block], (min(block, T - k), N, d))
        inv_eta = 1.0 / eta[k][:, None]
        subgrad = _local_grad(stack, slope) + problem.lam * _reg_subgradient(problem, W_tilde)  # f_i'(w̃_i^{k−1})
        W = (-subgrad + G + rho * w + W_tilde * inv_eta) / (rho + inv_eta)  # (12a) = (38a)/(39a)
        W_tilde = W + xi[k % block]  # (10b): w̃_i^k = w_i^k + ξ_i^k,  ξ_i^k ~ N(0, σ_{i,k}² I)
        w_new = W_tilde.mean(0) - G.mean(0) / rho  # (10c)
        G = G - rho * (W_tilde - w_new)  # (10d)
        w = w_new
        loss, slope = _loss_slope(stack, stack.margins(W_tilde))  # at w̃_i^k: this loss, next gradient
        rec.store(k, problem, w, W_tilde, loss)

    ledger = [] if math.isinf(epsilon) else _worst_agent_events(sensitivity, sigma, "DP-ADMM broadcast w̃_i^k")
    return _finish(problem, rec, rho=rho, record_every=record_every,
                   noise={"sigma": sigma, "eta": eta, "sensitivity": sensitivity, "noise_multiplier": z,
                          "per_iteration_epsilon": eps0, "calibration": calibration},
                   ledger=ledger, delta=delta,
                   privacy_paper=_huang_claim(eps0, delta, T, "DP-ADMM (Thm 1, Thm 2)", calibration),
                   params=_params(stack, c_w=c_w, calibration=calibration),
                   not_covered=C_W_READS_DATA if reads_data else None)


@register("dp_sgd_star", paper="huang2019", private=True, setting="star",
          description="Distributed DP-SGD over a star: clipped noisy gradient steps, averaged (baseline of Huang et al. "
                      "2019, after Abadi et al. 2016)",
          tasks=("logistic-l2", "logistic-l1"), tuning={"learning_rate": (1.0, 3.0, 10.0)},
          constraints={"learning_rate": SCALE, "clip": [SCALE, None], "calibration": Options(CALIBRATIONS)})
@one_blas_thread
def dp_sgd_star(problem: Problem, *, epsilon: float, delta: float, rho: float = 1.0, iterations: int, seed: int,
                n_agents: int = 100, sizes: str | Sequence[int] | None = None, owner: np.ndarray | None = None,
                learning_rate: float = 0.1, clip: float | None = None, calibration: str = "accountant",
                record_every: int = 1) -> Trace:
    """Distributed DP-SGD over a star: the baseline "DPSGD [Abadi et al.] for distributed settings".

    Parameters
    ----------
    problem : Problem
        A :class:`~dpadmm_lite.problems.Problem` with regulariser ``"l1"`` or ``"l2"``; the private
        algorithms need the logistic loss (bounded per-example gradients c₁ = ``problem.lipschitz``,
        from the public ``problem.feature_bound``).
    epsilon : float
        The privacy budget of one record of one agent, ``math.inf`` for no noise. With the
        default ``calibration="accountant"``: the **end-to-end** budget of the whole run
        (replace-one neighbours), as everywhere in the book. With ``calibration="paper"``: the
        budget **per iteration**, as in Huang et al.'s experiments (Sec. VI-C: "privacy budget
        per iteration ε"); the trace's ``privacy`` then shows what the run spends end to end.
    delta : float
        δ in [1e-100, 1), the δ of the budget that ``epsilon`` describes.
    rho : float, default 1.0
        ADMM penalty ρ > 0 (the paper's experiments: 0.1).
    iterations : int
        t ≥ 1 (the paper: 100).
    seed : int
        Seeds both the random deal of the samples to agents and the noise.
    n_agents : int, default 100
        How the training data are dealt to the agents; see :func:`stack_agents`.
    sizes : str, sequence of int or None, default None
        How the training data are dealt to the agents; see :func:`stack_agents`.
    owner : ndarray or None, default None
        How the training data are dealt to the agents; see :func:`stack_agents`.
    learning_rate : float, default 0.1
        η > 0 (the paper: 0.1).
    clip : float or None, default None
        C > 0; default ``problem.lipschitz`` (the public ``feature_bound``: then clipping changes
        nothing for the logistic loss on rows within the bound).
    calibration : str, default "accountant"
        ``"accountant"`` (default) keeps the paper's noise shape and scales it until the unified
        accountant's ε for the most exposed agent's ledger is the end-to-end target (within
        3 %, never above); ``"paper"`` uses the paper's own per-iteration formula.
    record_every : int, default 1
        Score the iterates after iterations k, 2k, …, t only (default 1: every iteration), as the
        other families do: a sweep that reads the final model or objective sets ``k = t``. The run,
        its noise and its released model are the same for every k.

    Returns
    -------
    Trace
        The aggregator's model of each recorded iteration and the released model; ``noise``,
        the ``ledger``, ``privacy`` (the unified accountant on what was drawn) and
        ``privacy_paper`` (the paper's own statement; ε = ∞ and no ledger without noise).

    Notes
    -----
    At iteration k every agent takes one full-batch (sampling ratio 1, Sec. VI-C) gradient step
    from the aggregator's ``w^{k−1}`` with clipped per-example gradients and Gaussian noise::

        g̃_i = (1/m_i) Σ_j Clip(∇ℓ(a_ij·w^{k−1}), C) + N(0, σ_i² I),   σ_i = z · 2C/m_i,
        w_i^k = w^{k−1} − η (g̃_i + (λ/n) R'(w^{k−1})),      w^k = mean_i w_i^k,

    i.e. the Gaussian mechanism for the replace-one sensitivity ``2C/m_i`` of the mean clipped
    gradient. ``calibration="paper"``: ``z = √(2 ln(1.25/δ))/ε`` at the same per-iteration (ε, δ)
    as the other algorithms of the paper's Sec. VI; ``"accountant"`` (default): z such that the T
    releases spend the end-to-end (ε, δ). Clipping makes the sensitivity hold on any data, so rows
    beyond ``problem.feature_bound`` are accepted (and clipped). After averaging every agent holds
    ``w^k``, so the loss metrics are evaluated at ``w^k``; the consensus violation is the spread
    of the agents' noisy steps ``w_i^k`` around it. ``rho`` is not used by the algorithm (only by
    the augmented-objective metric, where the spread enters).

    References
    ----------
    Z. Huang, R. Hu, Y. Guo, E. Chan-Tin, Y. Gong, "DP-ADMM: ADMM-based distributed learning with
    differential privacy", IEEE TIFS 2019.
    T. Zhang, Q. Zhu, "Dynamic differential privacy for ADMM-based distributed classification
    learning", IEEE TIFS 12(1), 2017.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("dp_sgd_star", problem, epsilon=1.0, delta=1e-5, iterations=10, seed=0)
    >>> trace.privacy.epsilon <= 1.0, trace.model.shape
    (True, (5,))
    """
    epsilon, delta, rho, T, seed, stack = _common(problem, "dp_sgd_star", epsilon=epsilon, delta=delta, rho=rho,
                                                   iterations=iterations, seed=seed, n_agents=n_agents,
                                                   sizes=sizes, owner=owner, private=True, record_every=record_every)
    learning_rate = check.positive("learning_rate", learning_rate)
    clip = float(problem.lipschitz) if clip is None else check.scale("clip", clip)
    check.choice("calibration", calibration, CALIBRATIONS)
    sensitivity = 2.0 * clip / stack.sizes
    if math.isinf(epsilon):
        z, eps0 = 0.0, math.inf
    elif calibration == "paper":
        z, eps0 = _classic_multiplier(epsilon, delta), epsilon
    else:
        unit = _worst_agent_events(np.tile(sensitivity, (T, 1)), np.tile(sensitivity, (T, 1)), "DP-SGD noisy gradient")
        z = _calibrated_scale(unit, epsilon, delta)
        eps0 = _per_iteration_epsilon(z, delta)
    sigma = z * sensitivity
    rng = np.random.default_rng(seed)
    N, d = stack.n_agents, problem.d
    rec = _Record.empty(T, N, d)
    w = np.zeros(d)
    _, slope = _loss_slope(stack, stack.margins_at(w))  # every sample at the broadcast w^0
    for k in range(T):
        noisy = _local_grad(stack, slope, clip=clip) + mechanisms.gaussian(rng, sigma, (N, d))  # g̃_i
        W = w - learning_rate * (noisy + problem.lam * _reg_subgradient(problem, w))  # agent step from w^{k−1}
        w = W.mean(0)  # aggregator: w^k = mean_i w_i^k, which every agent then holds
        loss, slope = _loss_slope(stack, stack.margins_at(w))  # at w^k: this loss, next gradient
        rec.store(k, problem, w, np.broadcast_to(w, (N, d)), loss)
        rec.dist[k] = np.sqrt(((W - w) ** 2).sum(1))  # spread of the agents' noisy steps
    ledger = [] if math.isinf(epsilon) else _worst_agent_events(
        np.tile(sensitivity, (T, 1)), np.tile(sigma, (T, 1)), "DP-SGD noisy gradient")
    return _finish(problem, rec, rho=rho, record_every=record_every,
                   noise={"sigma": sigma, "sensitivity": sensitivity, "noise_multiplier": z,
                          "per_iteration_epsilon": eps0, "calibration": calibration},
                   ledger=ledger, delta=delta,
                   privacy_paper=_huang_claim(eps0, delta, T, "DPSGD baseline (Sec. VI-B)", calibration),
                   params=_params(stack, learning_rate=learning_rate, clip=clip, calibration=calibration))



# ====================================================================== step sizes and privacy helpers
def step_sizes(problem, *, sizes, iterations: int, c_w: float, epsilon: float | None = None,
               delta: float | None = None, noise_multiplier: float | None = None) -> np.ndarray:
    """The time-varying step sizes η_i^k of Huang et al., shape ``(iterations, N)``.

    ℓ1 (non-smooth), Theorem 3, eq. (29)::

        η_i^k = c_w/√(2k) · ((c₁ + (λ/n)c₂)² + 8dp c₁² ln(1.25/δ)/(m_i² ε²))^{−1/2},   c₂ = √(dp)

    ℓ2 (smooth), Theorem 4, eq. (34)::

        η_i^k = (c₃ + (λ/n)c₄ + 4c₁√(dpk ln(1.25/δ))/(m_i ε c_w))^{−1},   c₄ = 1

    with c₁ = ``problem.lipschitz`` (‖ℓ'‖ ≤ c₁), c₃ = ``problem.per_example_smoothness``
    (‖∇²ℓ‖ ≤ c₃) — both from the public ``feature_bound`` — p = 1 (binary labels),
    d = ``problem.d``, λ/n = ``problem.lam``. On Adult (c₁ = 1, c₃ = 0.25, d = 104) these are
    exactly Sec. VI-E's and VI-F's formulas.

    Both contain the per-iteration (ε, δ) only through ``ln(1.25/δ)/ε² = z²/2``, where
    ``z = √(2 ln(1.25/δ))/ε`` is eq. (14)'s noise multiplier σ_{i,k}/Δ_{i,k}: the noise terms are
    ``4dp c₁² z²/m_i²`` (ℓ1) and ``2√2 c₁ z √(dpk)/(m_i c_w)`` (ℓ2). Give either ``epsilon`` and
    ``delta`` (the paper's per-iteration budget; ``epsilon = ∞`` drops the noise terms) or the
    multiplier ``noise_multiplier = z`` directly (what ``dp_admm_star`` does with the multiplier
    the accountant calibrated; ``0`` = no noise).

    Parameters
    ----------
    problem : Problem
        The problem (its public constants c₁, c₃, d and λ/n).
    sizes : ndarray
        The local sizes m_i of the N agents.
    iterations : int
        Iterations ≥ 1.
    c_w : float
        The bound on ``‖w*‖`` of Theorems 3/4 (:func:`public_c_w`).
    epsilon : float or None, default None
        ε of the paper's formula (per iteration); None: no noise term.
    delta : float or None, default None
        δ of the paper's formula.
    noise_multiplier : float or None, default None
        A calibrated noise multiplier used in place of the paper's noise term.
    """
    iterations = check.count("iterations", iterations)
    c_w = check.positive("c_w", c_w)
    if noise_multiplier is None:
        epsilon = check.epsilon(epsilon)
        delta = check.delta(delta)
        z = 0.0 if math.isinf(epsilon) else math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    else:
        z = check.nonnegative("noise_multiplier", noise_multiplier)
    m = np.asarray(sizes, float)[None, :]
    k = np.arange(1, iterations + 1, dtype=float)[:, None]
    d, p, c1, lam = problem.d, 1, float(problem.lipschitz), problem.lam
    if problem.regularizer == "l1":  # Theorem 3, eq. (29)
        c2 = math.sqrt(d * p)
        noise = 4 * d * p * c1**2 * z**2 / m**2  # = 8dp c₁² ln(1.25/δ)/(m² ε²)
        return c_w / np.sqrt(2 * k) / np.sqrt((c1 + lam * c2) ** 2 + noise) * np.ones_like(m)
    c3, c4 = problem.per_example_smoothness, 1.0  # Theorem 4, eq. (34)
    noise = 2 * math.sqrt(2) * c1 * z * np.sqrt(d * p * k) / (m * c_w)  # = 4c₁√(dpk ln(1.25/δ))/(m ε c_w)
    return 1.0 / (c3 + lam * c4 + noise) * np.ones((iterations, m.shape[1]))


def public_c_w(problem) -> float:
    """A public bound on ``‖w*‖`` for Theorems 3/4 — from the loss and λ, never from the data.

    The logistic loss is ≥ 0 and equals ln 2 at w = 0 (labels ±1), so the optimum of
    ``F = loss + λR`` (and of the agent-weighted consensus problem) has ``λ R(w*) ≤ F(0) = ln 2``:
    ``‖w*‖ ≤ √(2 ln 2/λ)`` for ``R = ½‖w‖²`` — and ``‖w*‖ = ‖∇loss(w*)‖/λ ≤ c₁/λ``, the smaller of
    the two is used — and ``‖w*‖₂ ≤ ‖w*‖₁ ≤ ln 2/λ`` for ``R = ‖w‖₁``.

    Parameters
    ----------
    problem : Problem
        The logistic problem (its λ, regulariser and public ``lipschitz``).
    """
    if problem.loss != "logistic" or problem.lam <= 0:
        raise ValueError("c_w must be given (a public bound on ‖w*‖) unless the problem is logistic with lam > 0, "
                         f"got loss {problem.loss!r}, lam = {problem.lam:g}")
    if problem.regularizer == "l2":
        return min(float(problem.lipschitz) / problem.lam, math.sqrt(2 * math.log(2) / problem.lam))
    return math.log(2) / problem.lam


#: ``privacy.reason`` of a ``dp_admm_star`` run with ``c_w="optimum"``.
C_W_READS_DATA = ("c_w='optimum' reads the private data: c_w = ‖w*‖ of the training rows sets every step size "
                  "η_i^k, sensitivity and noise σ_i,k, and no ledger records it")


def _c_w(problem, c_w):
    if c_w is None:
        return public_c_w(problem)
    if isinstance(c_w, str):
        check.choice("c_w", c_w, ("optimum",))
        norm = float(np.linalg.norm(problem.reference_optimum().x))  # the paper's choice: reads the private data
        return max(norm, 1e-8)  # w* = 0 (huge λ) would make η = 0
    return check.positive("c_w", c_w)


def _check_records(problem, name, epsilon) -> None:
    """A private run's sensitivities use the public feature_bound: refuse rows beyond it."""
    if not math.isinf(epsilon):
        problem.check_feature_bound(name)


def _classic_multiplier(epsilon, delta) -> float:
    """σ/Δ of the classic Gaussian mechanism, ``√(2 ln(1.25/δ))/ε`` (Dwork & Roth Thm A.1; eq. 14)."""
    from ..accounting import huang2019_noise_multiplier

    return huang2019_noise_multiplier(epsilon, delta)


def _per_iteration_epsilon(multiplier, delta) -> float:
    """The per-iteration ε of eq. (14) whose noise multiplier is ``multiplier``: ``√(2 ln(1.25/δ))/z``."""
    return math.sqrt(2 * math.log(1.25 / delta)) / multiplier


#: Relative margin added to a calibrated scale, so that rounding in the final ledger (σ = s·Δ
#: recomputed per release) can never push the spent ε above the budget.
_ROUNDING_MARGIN = 1e-9


def _calibrated_scale(unit_ledger, epsilon, delta) -> float:
    """``accounting.calibrate_ledger`` of the unit-scale ledger, rounded up by a relative 1e-9."""
    from ..accounting import calibrate_ledger

    return calibrate_ledger(unit_ledger, epsilon, delta) * (1.0 + _ROUNDING_MARGIN)


def _stopped_early(name, rec, T, max_inner, inner_tol) -> tuple[str, str]:
    """Warn that an exact-update run's inner solve stopped early; the text for its ledger note, and
    the reason its privacy is not covered (the certified tolerance, which the privacy argument
    needs for D and for every neighbour D′, was not reached)."""
    k = rec.stopped_early
    where = ", ".join(map(str, k[:5])) + (" …" if len(k) > 5 else "")
    message = (f"{name}: the local solve stopped at max_inner = {max_inner} steps before reaching inner_tol = "
               f"{inner_tol:g} at {len(k)} of {T} iterations ({where}); the released models are only within "
               f"{rec.solve_error:.2g} of the exact minimisers, which the privacy argument assumes, so no guarantee "
               f"covers the run (privacy: not covered, ε = ∞) — raise max_inner")
    warnings.warn(message, RuntimeWarning, stacklevel=4)
    note = (f"; WARNING: inner solve stopped early at {len(k)} of {T} iterations, released models within "
            f"{rec.solve_error:.2g} of the exact minimisers (not certified)")
    reason = (f"the local solve stopped at max_inner = {max_inner} before inner_tol = {inner_tol:g} at {len(k)} of {T} "
              f"iterations: the released models are not the certified minimisers the privacy argument needs")
    return note, reason


def _huang_claim(epsilon, delta, iterations, what, calibration="paper"):
    """The paper's end-to-end claim for T Gaussian releases at per-iteration (ε, δ)."""
    if math.isinf(epsilon):
        return None
    from ..accounting import huang2019_total_epsilon

    total = float(huang2019_total_epsilon(epsilon, delta, iterations))
    caveat = "" if epsilon <= 1 else " (Theorem 1 is proved for ε ≤ 1 only: above it this is not a theorem)"
    origin = ("" if calibration == "paper" else
              " (the accountant's noise for the end-to-end budget is eq. (14)'s at this per-iteration ε)")
    return PrivacyGuarantee(total, delta, "Huang et al. 2019, Thm 2 (ε̄ = c₀√t ε)",
                            f"{what}: each iteration ({epsilon:.4g}, {delta:g})-DP for every agent{origin}{caveat}; "
                            f"end-to-end over t = {iterations} iterations by the paper's moments-accountant claim")
