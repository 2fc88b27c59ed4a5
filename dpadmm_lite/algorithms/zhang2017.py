"""Consensus ADMM over a general undirected connected network (Zhang & Zhu 2017, Algorithm 1).

``N`` agents (the paper's nodes ``p ∈ 𝒫``) sit on a connected graph ``G``; agent ``p`` holds
``m_p`` samples and talks only to its neighbours ``𝒩_p``. There is no aggregator. The problem
is the consensus reformulation (2) of the centralised ERM (1)::

    min_{f_1 … f_N}  Σ_p Z_p(f_p)   s.t.  f_p = f_j  for every edge (p, j),

and Zhang & Zhu reduce the edge-wise ADMM iterations (5)–(8) to two updates per agent
(their Lemma 2 of Forero et al. 2010), with the augmented Lagrangian (9)::

    L_p^N(f) = Z_p(f) + 2 λ_p(t)ᵀ f + ρ Σ_{j∈𝒩_p} ‖f − ½ (f_p(t) + f_j(t))‖²          (9)
    f_p(t+1) = argmin_f L_p^N(f)                                                       (10)
    λ_p(t+1) = λ_p(t) + (ρ/2) Σ_{j∈𝒩_p} (f_p(t+1) − f_j(t+1))                         (11)

**Notation.** The paper calls the ADMM penalty η and the regulariser weight ρ; the book calls
them ρ and λ. The paper's λ_p (the dual) is ``Lam`` in the code, the paper's ``f_p`` is the row
``F[p]`` of the stacked ``(N, d)`` array of local models.

**Local objectives.** The paper's ``Z_p = (C^R/B_p) Σ_{i∈D_p} ℓ + ρ R`` (3) is agent ``p``'s mean
loss plus the full regulariser. We use ``Z_p(f) = w_p h_p(f) + λ r(f)`` with ``h_p`` the mean
loss over ``D_p`` and the weight ``w_p = N m_p / n`` (so ``C^R = 1`` and ``w_p = 1`` for equal
sizes, which is the paper's (3) exactly). Then ``Σ_p Z_p = N · F`` for any sizes, so the
consensus solution is the centralised optimum ``problem.reference_optimum()``. (With unequal
sizes, the paper's unweighted (2) would solve an agent-weighted problem instead.)

**Vectorised form.** Expanding the sum of squares in (9), with ``D_p = |𝒩_p|`` (degree),
``A`` the adjacency and ``L = D − A`` the graph Laplacian (both sparse)::

    L_p^N(f) = w_p h_p(f) + λ r(f) + ρ D_p ‖f‖² + b_pᵀ f + const,
    b_p = 2 λ_p(t) − ρ (D_p f_p(t) + Σ_{j∈𝒩_p} f_j(t)),   i.e.  b = 2 Λ − ρ (D F + A F),
    Λ ← Λ + (ρ/2) L F                                                                  (11)

so an iteration is one sparse product for the neighbour sums, N independent local problems
solved together, and one sparse product for the duals. No Python loop over agents or samples.

**The local problems (10)** are solved exactly (to ``inner_tol``), all agents at once, warm-started
at the previous solution ``F(t)``. There the new objective's value and gradient are known without a
pass over the data: only the linear term ``b`` changed (and the solver kept ``w_p h_p`` and
``w_p ∇h_p`` at ``F(t)``), so the first Newton step of every iteration is free:

* ℓ2, logistic loss: batched damped quasi-Newton with a *lagged* Hessian. The inverses of
  ``P_p = w_p X_pᵀ S_p X_p/m_p + (λ + c_p) I`` (``S_p`` the logistic curvatures ``ℓ''`` at some
  anchor point) are formed in one batched single-precision product and one batched inversion,
  then improved by a BFGS update with the curvature each step measured (the step and the exact
  change of the gradient), across ADMM iterations too — after every step that leaves some
  agent above ``inner_tol`` (a solve that ends in one step teaches the inverses little and its
  update would cost as much as the step). They are formed anew
  only when a step shrinks some agent's gradient by less than the factor :data:`REFRESH`. Every
  step is followed by Armijo backtracking per agent, so it decreases every agent's ``L_p^N``
  whatever the lag. The gradients are exact (double precision), so the answer is exact to
  ``inner_tol`` however stale the inverses are; the lag only costs steps. ADMM moves the local
  models less and less, so one Hessian formed at the start usually lasts the whole run: on Adult
  (20 agents, 100 iterations) about 3 passes over the data per iteration without noise and 4–6
  with DVP's or PVP's noise (``benchmarks/admm.py``, ``benchmarks/zhang2017.py``). (The previous
  version used Böhning & Lindsay's fixed bound ``S ⪯ ¼ I``, started each iteration at the
  extrapolation ``2F(t) − F(t−1)`` and took 6 passes per iteration on Adult without noise.)
* ℓ2, squared loss: the Hessian ``X_pᵀX_p/m_p`` is constant; one Newton step from its cached
  eigen-decomposition is exact (any ρ reuses it).
* ℓ1 (``r = ‖f‖₁``): accelerated proximal gradient (FISTA with the constant momentum of the
  ``c_p``-strongly convex problem), step ``1/L_p`` with ``L_p = w_p·λ_max(∇²h_p) + c_p``,
  prox = soft-thresholding at ``λ/L_p``.

Every product with the data goes through :class:`LocalData`: batched ``matmul`` on the padded
``(N, m_max, d)`` stack for dense features, and one block-diagonal sparse matrix for sparse ones
(Adult's one-hot columns: 12 % non-zeros, 4–6× fewer operations). Both solvers stop when every
agent's (proximal-)gradient max-norm is at most ``inner_tol`` (or after ``max_inner`` steps);
:class:`LocalSolution` reports the steps and a certified bound on the distance to the exact
minimisers (strong convexity: ``‖f − f*‖ ≤ ‖∇L_p^N(f)‖/(λ + c_p)``).

**Initialisation.** Algorithm 1 starts from random ``f_p`` and ``λ_p = 0``; we start from
``f_p = 0`` (deterministic; the limit does not depend on it).

The private versions, dual and primal variable perturbation (Zhang & Zhu's Algorithms 2 and 3),
are :func:`dpadmm_lite.algorithms.zhang2017_perturbation.dvp_graph` and ``pvp_graph``; they share this module's
data, solver and network set-up, so that without noise they are this algorithm exactly.

Reference: T. Zhang, Q. Zhu, "Dynamic differential privacy for ADMM-based distributed
classification learning", IEEE TIFS 12(1), 2017 (``papers/zhang2017_…``), Sec. II-A; the
reduction to (10)–(11) is Lemma 2 of Forero, Cano & Giannakis, JMLR 2010.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import weakref
from dataclasses import dataclass
from functools import cached_property
from numbers import Integral
from typing import NamedTuple, Sequence

import numpy as np
import scipy.sparse

from .. import _products
from .. import _validate as check
from .._constraints import Interval
from .. import datasets, topology as topologies
from ..problems import Agents, Problem, make_agents, soft_threshold
from ..registry import register
from ..trace import Trace, from_iterates
from ._blas import one_blas_thread, single_blas_thread

__all__ = ["admm_graph", "LocalData", "local_data", "LocalSolver", "LocalSolution", "consensus_violation",
           "neighbour_distances", "network", "Network", "Record", "finish", "solved_loss", "parallel_runs", "free_cores"]

#: Below this fraction of non-zero features the products run on one block-diagonal sparse matrix.
SPARSE_BELOW = 0.3

#: The ℓ2-logistic solver recomputes its Hessians when a step shrinks some agent's gradient by less.
REFRESH = 0.25

#: BFGS corrections kept as low-rank factors before they are folded into the dense inverses.
BFGS_BATCH = 8


# ---------------------------------------------------------------------- per-agent data, cached
@dataclass(eq=False)
class LocalData:
    """A problem's data dealt to the agents, with the products every local solve needs.

    Parameters
    ----------
    agents : Agents
        The stacked ``(N, m_max, d)`` data.
    weights : ndarray
        ``w_p = N m_p / n`` per agent.
    block : scipy.sparse.csr_matrix or None, default None
        The block-diagonal matrix of the agents' sparse features; None for dense features.

    Attributes
    ----------
    agents
        The stacked ``(N, m_max, d)`` data (:func:`~dpadmm_lite.problems.make_agents`).
    weights
        ``w_p = N m_p / n``, so that ``Σ_p w_p h_p = N f``.
    block
        For sparse features: the block-diagonal CSR matrix ``(N·m_max, N·d)`` whose block ``p`` is
        ``X_p`` (padded), so that ``margins`` and ``rmatvec`` of all agents are one sparse product
        each; ``None`` for dense features (batched ``matmul`` on ``agents.X``).

    The Gram-matrix quantities (``curvature``, its eigen-decomposition, ``linear``) are computed
    on first use: only the squared loss and the ℓ1 solver need them.
    """

    agents: Agents
    weights: np.ndarray
    block: scipy.sparse.csr_matrix | None = None

    @property
    def n_agents(self) -> int:
        return self.agents.n_agents

    @property
    def sizes(self) -> np.ndarray:
        return self.agents.sizes

    # ------------------------------------------------------------------ products
    def margins(self, F) -> np.ndarray:
        """``a_pj · f_p`` for every sample j of every agent p: (N, m_max), zero on padding."""
        if self.block is not None:
            return (self.block @ np.ascontiguousarray(F).ravel()).reshape(self.agents.mask.shape)
        return np.matmul(self.agents.X, F[:, :, None])[:, :, 0]

    def rmatvec(self, R) -> np.ndarray:
        """``Σ_j R_pj a_pj`` for every agent: (N, d)."""
        if self.block is not None:
            return (self._block_t @ np.ascontiguousarray(R).ravel()).reshape(self.n_agents, -1)
        return np.matmul(R[:, None, :], self.agents.X)[:, 0, :]

    @cached_property
    def _block_t(self) -> scipy.sparse.csr_matrix:
        return self.block.T.tocsr()

    def loss_slope(self, Z) -> tuple[np.ndarray, np.ndarray]:
        """Mean local losses ``h_p`` (N,) and slopes ``ℓ'(z_pj)`` (N, m_max, zero on padding) at margins ``Z``.

        The values of :meth:`Problem._loss_of_margin` / ``_dloss_of_margin`` (to an ulp) from one
        ``exp``: ``ℓ = log1p(e^{−|u|}) + max(−u, 0)``, ``ℓ' = −b σ(−u)``, ``u = b z``.
        """
        y, mask = self.agents.y, self.agents.mask
        if self.agents.problem.loss == "squared":
            slope = np.where(mask, Z - y, 0.0)
            ell = 0.5 * slope**2
        else:
            u = y * Z
            e = np.abs(u)
            np.negative(e, out=e)
            np.exp(e, out=e)  # e^{−|u|}
            ell = np.log1p(e)
            ell -= np.minimum(u, 0.0)  # + max(−u, 0)
            slope = np.where(u >= 0, e, 1.0)
            e += 1.0
            slope /= e
            slope *= -y  # −b σ(−u), stable on both sides
            if not self._full:
                ell = np.where(mask, ell, 0.0)
                slope = np.where(mask, slope, 0.0)
        return ell.sum(axis=1) / self.sizes, slope

    def loss(self, Z) -> np.ndarray:
        """Mean local loss ``h_p`` of every agent from its margins ``Z``: (N,)."""
        return self.loss_slope(Z)[0]

    def gradient(self, F) -> np.ndarray:
        """``∇h_p(F[p])`` for every agent: (N, d). Squared loss: from the Gram matrices, no data pass."""
        if self.agents.problem.loss == "squared":
            return np.matmul(self.curvature, F[:, :, None])[:, :, 0] - self.linear
        return self.rmatvec(self.loss_slope(self.margins(F))[1]) / self.sizes[:, None]

    def hessians(self, Z) -> np.ndarray:
        """``w_p ∇²h_p`` at margins ``Z`` for every agent, (N, d, d), formed in single precision.

        A batched ``AᵀA`` on the padded stack runs at BLAS-3 speed (faster than a sparse product);
        the result only preconditions Newton steps whose gradients are exact.
        """
        p = self.agents.problem
        s = self.weights[:, None] / self.sizes[:, None] * np.where(self.agents.mask, p._curvature_of_margin(Z), 0.0)
        A = self._X32 * np.sqrt(s).astype(np.float32)[:, :, None]
        return _products.gram_per_agent(A)

    @cached_property
    def _X32(self) -> np.ndarray:
        return self.agents.X.astype(np.float32)

    @cached_property
    def _full(self) -> bool:
        return bool(self.agents.mask.all())

    # ------------------------------------------------------------------ Gram quantities (lazy)
    @cached_property
    def curvature(self) -> np.ndarray:
        """``κ X_pᵀX_p/m_p`` per agent, ``(N, d, d)`` (κ = 1 squared loss: the Hessian of ``h_p``;
        κ = ¼ logistic: Böhning's bound on it)."""
        X = self.agents.X
        kappa = 1.0 if self.agents.problem.loss == "squared" else 0.25
        return kappa * np.matmul(X.transpose(0, 2, 1), X) / self.sizes[:, None, None]

    @cached_property
    def _eigen(self) -> tuple[np.ndarray, np.ndarray]:
        e, V = np.linalg.eigh(self.curvature)
        return np.maximum(e, 0.0), V

    @property
    def curvature_values(self) -> np.ndarray:
        return self._eigen[0]

    @property
    def curvature_vectors(self) -> np.ndarray:
        return self._eigen[1]

    @cached_property
    def linear(self) -> np.ndarray | None:
        """Squared loss only: ``X_pᵀ y_p / m_p``, so that ``∇h_p(f) = X_pᵀX_p f/m_p − linear``."""
        if self.agents.problem.loss != "squared":
            return None
        a = self.agents
        return np.matmul((a.y * a.mask)[:, None, :], a.X)[:, 0, :] / self.sizes[:, None]

    def inverse(self, shift) -> np.ndarray:
        """``(w_p · curvature_p + shift_p I)⁻¹`` for every agent, ``(N, d, d)``."""
        V = self.curvature_vectors
        scale = 1.0 / (self.weights[:, None] * self.curvature_values + np.asarray(shift)[:, None])
        return np.matmul(V * scale[:, None, :], V.transpose(0, 2, 1))


_CACHE: "weakref.WeakKeyDictionary[Problem, dict]" = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()  # runs on several threads (parallel_runs) share the cache


def local_data(problem: Problem, owner) -> LocalData:
    """Stack ``problem``'s data by ``owner`` (cached per problem and split; safe to call from threads).

    Parameters
    ----------
    problem : Problem
        The problem whose rows are dealt.
    owner : ndarray
        The agent of each training record.
    """
    owner = np.asarray(owner)
    key = (owner.shape, owner.tobytes(), id(problem.X))
    with _CACHE_LOCK:
        cached = _CACHE.setdefault(problem, {}).get(key)
    if cached is not None:
        return cached
    agents = make_agents(problem, owner)
    block = None
    nonzero = np.count_nonzero(problem.X)
    if nonzero < SPARSE_BELOW * problem.X.size:
        N, m_max, d = agents.X.shape
        flat = scipy.sparse.csr_matrix(agents.X.reshape(N * m_max, d))
        agent = np.repeat(np.arange(N * m_max) // m_max, np.diff(flat.indptr))  # agent of each non-zero
        block = scipy.sparse.csr_matrix((flat.data, flat.indices + agent * d, flat.indptr), shape=(N * m_max, N * d))
    data = LocalData(agents, agents.n_agents * agents.sizes / problem.n, block)
    with _CACHE_LOCK:
        per_problem = _CACHE.setdefault(problem, {})
        if key in per_problem:  # another thread stacked the same split meanwhile: share its copy
            return per_problem[key]
        if len(per_problem) >= 4:  # a handful of splits per problem is plenty (live panels, sweeps)
            per_problem.pop(next(iter(per_problem)))
        per_problem[key] = data
    return data


def free_cores() -> int:
    """The cores the machine's 1-minute load average leaves free: at least 1, at most ``os.cpu_count()``."""
    cores = os.cpu_count() or 1
    return max(1, min(cores, math.floor(cores - os.getloadavg()[0] + 0.5)))


@contextlib.contextmanager
def parallel_runs(n_jobs: int | None = None):
    """Run the :func:`dpadmm_book.sweep.grid` calls inside the block on ``n_jobs`` threads of this process.

    ``n_jobs=None`` (default): :func:`free_cores` when the block starts — one thread on a busy
    machine, where a second one only contends for the cores and the GIL.

    A graph run spends much of its time in sparse products and array operations that release the
    GIL, so runs on two threads overlap on two free cores (on a loaded machine there is no free
    core and nothing is gained: ``benchmarks/zhang2017.py``, part 5, prints both with the load); the
    threads share the problems (and their reference optima) and the stacked data of this
    process, so nothing is pickled or rebuilt, as it would be for worker processes. BLAS is held at one thread for the
    whole block (each run limits it on entry and restores it on exit, which on concurrent threads
    would otherwise restore the default under a run still going). Every run is seeded and shares
    no mutable state with the others, so the rows are the same for every ``n_jobs``
    (``tests/test_graph.py`` checks it bit for bit).

    >>> with parallel_runs(2):  # doctest: +SKIP
    ...     frame = book.sweep.grid(task, {"epsilon": [1.0, 4.0]}, seeds=range(10), name="runs")

    Parameters
    ----------
    n_jobs : int or None, default None
        Threads ≥ 1; None: :func:`free_cores` when the block starts.
    """
    import joblib

    if n_jobs is None:
        n_jobs = free_cores()
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1:
        raise ValueError(f"n_jobs must be None (the free cores) or a whole number >= 1 (threads), got {n_jobs!r}")
    with single_blas_thread(), joblib.parallel_config(backend="threading", n_jobs=n_jobs):
        yield


# ---------------------------------------------------------------------- the local problems (10)
class LocalSolution(NamedTuple):
    """What :class:`LocalSolver` returns for one batch of local problems.

    ``F`` the minimisers (N, d); ``margins`` their margins ``X_p f_p`` (N, m_max), or ``None``
    (squared loss); ``steps`` the inner steps taken; ``residual`` the certified bound
    ``max_p ‖F_p − argmin_p‖₂`` from strong convexity; ``converged`` whether every agent met
    ``inner_tol`` (False: stopped at ``max_inner``); ``loss`` the mean local losses ``h_p(F_p)`` when
    the solver has them (ℓ2-logistic), else ``None``.

    Parameters
    ----------
    F : ndarray
        The minimisers, (N, d).
    margins : ndarray or None
        Their margins ``X_p f_p`` (N, m_max), or None (squared loss).
    steps : int
        The inner steps taken.
    residual : float
        The certified bound ``max_p ‖F_p − argmin_p‖₂``.
    converged : bool
        Whether every agent met ``inner_tol``.
    loss : ndarray or None, default None
        The mean local losses ``h_p(F_p)`` when the solver has them.
    """

    F: np.ndarray
    margins: np.ndarray | None
    steps: int
    residual: float
    converged: bool
    loss: np.ndarray | None = None


class LocalSolver:
    """Solve ``min_f w_p h_p(f) + λ r(f) + b_pᵀ f + (c_p/2)‖f‖²`` for every agent ``p`` at once.

    With ``c_p = 2ρD_p`` and ``b_p`` as in the module notes this is (10), ``argmin L_p^N``; the
    private versions add their extra penalty Φ to ``c_p`` (per call: ``extra``). What depends
    only on ``c`` (the FISTA step and momentum) is computed once, here; the ℓ2-logistic
    quasi-Newton inverses and the last solution are kept across calls (see the module notes).
    Each call takes the linear terms ``b`` ``(N, d)`` and optionally a start ``F0`` (default: the
    last solution, 0 at the first call) with its margins ``Z0``, and returns a
    :class:`LocalSolution`.

    Parameters
    ----------
    data
        :func:`local_data` of the problem.
    lam, regularizer
        λ and ``"l1"`` or ``"l2"``.
    c
        Quadratic weights ``(N,)``, all > 0.
    inner_tol, max_inner
        Stop when every agent's (proximal-)gradient norm (max-norm) is ≤ ``inner_tol``, or after
        ``max_inner`` steps.
    """

    def __init__(self, data: LocalData, lam: float, regularizer: str, c, *, inner_tol: float = 1e-9,
                 max_inner: int = 100):
        self.data, self.lam, self.regularizer = data, lam, regularizer
        self.c = np.asarray(c, dtype=float)
        self.inner_tol, self.max_inner = inner_tol, max_inner
        self.hessian_refreshes = 0  # how many times the Newton matrices were formed
        self.passes = 0  # passes over the data: one margins product + one gradient product each
        self._hessian = None  # w_p ∇²h_p at the anchor, (N, d, d)
        self._inverse = None  # (hessian + shift I)⁻¹ for self._shift
        self._shift = None
        self._buffers = None  # work arrays of the BFGS updates: correction factors, product
        self._pending = 0  # columns of BFGS correction factors not yet folded into the inverses
        self._last = None  # the last solution: F, its margins, w_p h_p and w_p ∇h_p there
        self.squared = data.agents.problem.loss == "squared"
        if regularizer == "l1":
            w = data.weights
            self.L = w * data.curvature_values[:, -1] + self.c  # smoothness of the smooth part
            mu = np.maximum(self.c, 1e-12 * self.L)  # its strong convexity (the ρ-term)
            self.momentum = ((np.sqrt(self.L) - np.sqrt(mu)) / (np.sqrt(self.L) + np.sqrt(mu)))[:, None]

    def __call__(self, b, F0=None, Z0=None, *, extra=None) -> LocalSolution:
        """Solve for linear terms ``b`` (N, d) from ``F0`` (default: the last solution, or 0 at first).

        ``Z0`` are the margins of ``F0`` if known; ``extra`` (N,) is added to ``c`` for this call.
        """
        shift = self.lam + self.c if extra is None else self.lam + self.c + np.asarray(extra, float)
        if self.regularizer == "l1":
            sol = self._fista(b, self._start(F0))
        elif self.squared:  # the Hessian is constant: one Newton step from the cached eigen-decomposition
            F0 = self._start(F0)
            F = F0 - np.matmul(self.data.inverse(shift), self._gradient_squared(b, F0, shift)[:, :, None])[:, :, 0]
            g = self._gradient_squared(b, F, shift)
            sol = LocalSolution(F, None, 1, float(np.max(np.linalg.norm(g, axis=1) / shift)), True)
        else:
            return self._newton(b, shift, F0, Z0)
        self._last = (sol.F, None, None, None)
        return sol

    def _start(self, F0):
        if F0 is not None:
            return np.asarray(F0, float)
        if self._last is not None:
            return self._last[0]
        return np.zeros((self.data.n_agents, self.data.agents.X.shape[-1]))

    def _gradient_squared(self, b, F, shift):
        return self.data.weights[:, None] * self.data.gradient(F) + shift[:, None] * F + b

    def _apply(self, v):
        """``H v`` for every agent, ``H`` = the lagged Newton inverse plus the BFGS corrections not yet
        folded into it (the Newton direction is ``H grad``)."""
        v32 = v.astype(np.float32)  # the inverses are single precision (:meth:`_newton`), so is their product
        out = _products.matrices_times_vectors(self._inverse, v32).astype(float)  # the corrections, the step: double
        k = self._pending
        if k:
            left, right, _ = self._buffers
            out += np.matmul(left[:, :, :k], np.matmul(right[:, :k], v[:, :, None]))[:, :, 0]
        return out

    def _remember(self, step, change, direction, grad_new) -> np.ndarray:
        """BFGS update of every agent's inverse with the curvature the step has just measured, and
        the next Newton direction ``H⁺ grad_new``.

        ``H⁺ = H + (sᵀy + yᵀHy) ssᵀ/(sᵀy)² − (Hy sᵀ + s yᵀH)/(sᵀy)`` (Nocedal & Wright 2006,
        eq. 6.17), so that ``H⁺y = s`` while ``H⁺`` stays symmetric positive definite: the local
        problems are strongly convex, so ``sᵀy > 0`` whenever the agent moved (an agent that did
        not keeps its ``H``). Written as ``H += [s, −Hy/sᵀy] [u, s]ᵀ`` with
        ``u = (sᵀy + yᵀHy)/(sᵀy)² s − Hy/sᵀy``, a rank-2 correction. The corrections are kept
        as factors and folded into the dense ``(N, d, d)`` inverses :data:`BFGS_BATCH` at a time
        (one batched product), since every pass over the dense inverses costs as much as the
        update itself (100 agents: 9 MB per pass); :meth:`_apply` uses the factors meanwhile.

        One product with ``H`` per step: ``direction`` is ``H grad`` (the step just taken), so
        ``Hy = H grad_new − direction``, and the next direction is ``H grad_new`` plus the new
        rank-2 term applied to ``grad_new``.
        """
        sy = np.einsum("ij,ij->i", step, change)
        inv_sy = np.divide(1.0, sy, out=np.zeros_like(sy), where=sy > 0)
        H_grad = self._apply(grad_new)
        Hy = H_grad - direction
        yHy = np.einsum("ij,ij->i", change, Hy)
        if self._buffers is None or self._buffers[0].shape[0] != len(sy):
            N, d = step.shape
            self._buffers = (np.empty((N, d, 2 * BFGS_BATCH)), np.empty((N, 2 * BFGS_BATCH, d)), np.empty((N, d, d)))
        left, right, product = self._buffers
        k = self._pending
        left[:, :, k] = step
        np.multiply(-inv_sy[:, None], Hy, out=left[:, :, k + 1])
        np.multiply(((sy + yHy) * inv_sy**2)[:, None], step, out=right[:, k])
        right[:, k] += left[:, :, k + 1]
        right[:, k + 1] = step
        H_grad += left[:, :, k] * np.einsum("ij,ij->i", right[:, k], grad_new)[:, None]
        H_grad += left[:, :, k + 1] * np.einsum("ij,ij->i", step, grad_new)[:, None]
        self._pending = k + 2
        if self._pending == 2 * BFGS_BATCH:
            _products.add_products_per_agent(left, right, self._inverse, work=product)
            self._pending = 0
        return H_grad

    def _data_parts(self, Z):
        """``w_p h_p`` (N,) and ``w_p ∇h_p`` (N, d) at margins ``Z``: one gradient product."""
        data = self.data
        loss, slope = data.loss_slope(Z)
        self.passes += 1
        return data.weights * loss, (data.weights / data.sizes)[:, None] * data.rmatvec(slope)

    # ------------------------------------------------------------------ ℓ2, logistic: lagged Newton
    def _newton(self, b, shift, F0, Z0) -> LocalSolution:
        """Damped Newton with lagged Hessians (module notes), from ``F0`` or from the last solution.

        From the last solution the first step is free: only ``b`` (and the shift) changed, so the
        new objective's value and gradient there follow from the stored data parts without a pass.
        """
        data, tol = self.data, self.inner_tol
        s = shift[:, None]
        if F0 is None and self._last is not None and self._last[1] is not None:
            F, Z, data_value, data_grad = self._last
        else:
            F = self._start(F0)
            Z = data.margins(F) if Z0 is None else Z0
            data_value, data_grad = self._data_parts(Z)
        value = data_value + np.einsum("ij,ij->i", 0.5 * s * F + b, F)  # L_p^N up to a constant
        grad = data_grad + s * F + b
        norm = np.sqrt(np.einsum("ij,ij->i", grad, grad))
        steps, fresh, direction = 0, False, None
        while np.abs(grad).max() > tol and steps < self.max_inner:
            if self._inverse is None or not np.array_equal(self._shift, shift):
                direction = None
                if self._hessian is None or self._inverse is None:  # no matrices yet, or marked stale
                    self._hessian, fresh = data.hessians(Z), True
                    self.hessian_refreshes += 1
                d = self._hessian.shape[-1]
                # inverted in double, kept in single precision: every step reads all of them (Adult, 20 agents:
                # 1.7 MB in double, pushed out of the cache by each pass over the data); they only precondition
                self._inverse = np.linalg.inv(self._hessian + shift[:, None, None] * np.eye(d)).astype(np.float32)
                self._pending = 0
                self._shift = shift.copy()
            if direction is None:
                direction = self._apply(grad)
            decrease = np.einsum("ij,ij->i", grad, direction)
            t = np.ones(len(F))
            for _ in range(60):  # Armijo backtracking, per agent
                F_new = F - t[:, None] * direction
                Z_new = data.margins(F_new)
                data_value_new, data_grad_new = self._data_parts(Z_new)
                value_new = data_value_new + np.einsum("ij,ij->i", 0.5 * s * F_new + b, F_new)
                bad = value_new > value - 1e-4 * t * decrease + 1e-13 * (1.0 + np.abs(value))
                if not bad.any():
                    break
                t = np.where(bad, 0.5 * t, t)
            grad_new = data_grad_new + s * F_new + b
            norm_new = np.sqrt(np.einsum("ij,ij->i", grad_new, grad_new))
            if not fresh and np.any((norm_new > REFRESH * norm) & (np.abs(grad_new).max(axis=1) > tol)):
                self._inverse = None  # the lagged Hessian does not contract any more: form it anew next step
                self._hessian = None
                direction = None
            elif np.abs(grad_new).max() > tol:  # BFGS: fold the curvature the step measured into the inverses
                direction = self._remember(F_new - F, grad_new - grad, direction, grad_new)
            else:
                direction = None
            fresh = False
            F, Z, value, grad, norm = F_new, Z_new, value_new, grad_new, norm_new
            data_value, data_grad = data_value_new, data_grad_new
            steps += 1
        self._last = (F, Z, data_value, data_grad)
        converged = bool(np.abs(grad).max() <= tol)
        return LocalSolution(F, Z, steps, float(np.max(norm / shift)), converged, data_value / data.weights)

    # ------------------------------------------------------------------ ℓ1: FISTA
    def _fista(self, b, F0) -> LocalSolution:
        data, lam, c, w = self.data, self.lam, self.c, self.data.weights
        L = self.L[:, None]
        X, Y = F0.copy(), F0.copy()
        residual = math.inf
        for step in range(1, self.max_inner + 1):
            grad = w[:, None] * data.gradient(Y) + c[:, None] * Y + b
            X_new = soft_threshold(Y - grad / L, lam / L)
            moved = np.abs(L * (Y - X_new))  # gradient mapping at Y
            Y = X_new + self.momentum * (X_new - X)
            X = X_new
            residual = float(np.max(np.linalg.norm(moved, axis=1) * 2.0 / c))  # ‖y − x*‖ ≤ 2‖G(y)‖/μ
            if moved.max() <= self.inner_tol:
                return LocalSolution(X, None, step, residual, True)
        return LocalSolution(X, None, self.max_inner, residual, False)


def consensus_violation(F) -> np.ndarray:
    """``sqrt(mean_p ‖f_p − f̄‖²)`` of stacked local models ``F`` (..., N, d).

    Parameters
    ----------
    F : ndarray
        Stacked local models, shape (..., N, d).
    """
    F = np.asarray(F)
    return np.sqrt(((F - F.mean(axis=-2, keepdims=True)) ** 2).sum(axis=-1).mean(axis=-1))


def neighbour_distances(F, edges) -> np.ndarray:
    """``‖f_p − f_j‖`` for every edge ``(p, j)`` of ``edges`` (E, 2): shape (..., E).

    Parameters
    ----------
    F : ndarray
        Stacked local models, shape (..., N, d).
    edges : ndarray
        The graph's edges ``(p, j)``, shape (E, 2).
    """
    F = np.asarray(F)
    edges = np.asarray(edges, int).reshape(-1, 2)
    return np.linalg.norm(F[..., edges[:, 0], :] - F[..., edges[:, 1], :], axis=-1)


# ---------------------------------------------------------------------- the network and its data
@dataclass(eq=False)
class Network:
    """A run's graph and how the records are dealt to its agents (shared by every graph algorithm).

    Parameters
    ----------
    graph : Topology
        The connected topology.
    owner : ndarray
        The agent of each record.
    data : LocalData
        The records stacked by agent.
    """

    graph: topologies.Topology
    owner: np.ndarray
    data: LocalData

    @property
    def n_agents(self) -> int:
        return self.graph.n_agents

    @property
    def degrees(self) -> np.ndarray:
        return self.graph.degrees.astype(float)


def network(problem: Problem, *, topology="ring", n_agents: int | None = None, sizes=None, owner=None,
            seed: int = 0, min_local_size: int = 1) -> Network:
    """Build a connected topology, deal the records to its agents and stack their data.

    ``topology`` is a name of :func:`dpadmm_lite.topology.make` (drawn with ``seed`` when random)
    or a :class:`~dpadmm_lite.topology.Topology`; it must be connected. ``owner`` (one agent per
    record) or ``sizes`` (see :func:`dpadmm_lite.datasets.split`) say who holds what; every agent
    must hold at least ``min_local_size`` records (ValueError naming ``n_agents``, ``sizes`` or
    ``owner`` otherwise).

    Parameters
    ----------
    problem : Problem
        The problem whose records are dealt.
    topology : str or Topology, default "ring"
        A name of :data:`dpadmm_lite.topology.NAMES` or a connected Topology.
    n_agents : int or None, default None
        Agents N ∈ [1, n]; None: the topology's, else 10.
    sizes : str, sequence of int or None, default None
        Local sizes (see :func:`dpadmm_lite.datasets.split`).
    owner : ndarray or None, default None
        The agent of each record (overrides ``n_agents`` and ``sizes``).
    seed : int, default 0
        Seeds the deal of the records and a random topology.
    min_local_size : int, default 1
        Every agent must hold at least this many records.
    """
    if isinstance(topology, topologies.Topology):
        if n_agents is not None and check.count("n_agents", n_agents) != topology.n_agents:
            raise ValueError(f"n_agents must equal the topology's {topology.n_agents} agents, got {n_agents}")
        graph = topology
    else:
        check.choice("topology", topology, topologies.NAMES)
        graph = topologies.make(topology, check.count("n_agents", 10 if n_agents is None else n_agents, minimum=2),
                                seed=seed)
    graph.check_connected()
    N = graph.n_agents
    min_local_size = check.count("min_local_size", min_local_size)
    if min_local_size > problem.n:
        raise ValueError(f"min_local_size must be a whole number in [1, n_samples = {problem.n}], got "
                         f"{check._short(min_local_size)}")
    if owner is None:
        if N * min_local_size > problem.n:
            raise ValueError(f"n_agents must be in [2, {problem.n // min_local_size}] so that each agent holds at "
                             f"least {min_local_size} of the {problem.n} samples, got {N}")
        owner = datasets.split(problem.n, N, sizes=sizes, seed=seed)
        where = "sizes"
    else:
        owner = np.asarray(owner)
        if owner.shape != (problem.n,) or not np.array_equal(np.unique(owner), np.arange(N)):
            raise ValueError(f"owner must give each of the {problem.n} samples an agent in 0 … {N - 1}, "
                             "every agent at least one sample")
        where = "owner"
    held = np.bincount(owner, minlength=N)
    if held.min() < min_local_size:
        raise ValueError(f"{where} gives agent {int(held.argmin())} only {int(held.min())} samples; every agent must "
                         f"hold at least min_local_size = {min_local_size}")
    return Network(graph, owner, local_data(problem, owner))


# ---------------------------------------------------------------------- what every graph run records
class Record:
    """Per-iteration quantities of a run on a graph, filled in the loop and evaluated at the end.

    ``released[t]`` holds the models the agents broadcast at iteration ``t + 1`` (``f_p`` for
    ADMM and DVP, ``V_p = f_p + ε_p`` for PVP), ``loss[t]`` each agent's mean local loss at its
    released model; ``noise[t]`` the mean norm of the noise the agents drew.

    Parameters
    ----------
    T : int
        Iterations of the run.
    N : int
        Agents.
    d : int
        Dimension of a model.
    """

    def __init__(self, T: int, N: int, d: int):
        self.released = np.empty((T, N, d))
        self.loss = np.empty((T, N))
        self.noise = np.zeros(T)
        self.inner_steps = np.zeros(T)
        self.residual = np.zeros(T)
        self.converged = True

    def store(self, t: int, released, loss, solution: LocalSolution | None = None, noise: float = 0.0) -> None:
        self.released[t] = released
        self.loss[t] = loss
        self.noise[t] = noise
        if solution is not None:
            self.inner_steps[t] = solution.steps
            self.residual[t] = solution.residual
            self.converged &= solution.converged


def finish(problem: Problem, name: str, net: Network, record: Record, *, rho: float, noise=None, ledger=(),
           delta=None, privacy_paper=None, params=None, not_covered: str | None = None) -> Trace:
    """Turn a graph run's :class:`Record` into the shared :class:`Trace`, in one vectorised pass.

    The trace's iterates are the network averages ``f̄(t) = mean_p`` of the released models (what
    anyone who hears every broadcast can compute; ``model`` is the last one). Metrics, per
    iteration: ``empirical_loss`` (the agents' local losses at their released models, weighted
    by their sizes, i.e. the training loss when every agent classifies its own records),
    ``test_error`` of ``f̄(t)``, ``neighbour_distance_max`` / ``_mean`` (``‖x_p − x_j‖`` over the
    edges), ``noise_norm``, ``inner_steps``, ``solve_residual`` (certified ``‖f_p − argmin‖``) and
    ``model_change`` (``ρ sqrt(mean_p ‖x_p(t) − x_p(t−1)‖²)``), ``model_norm`` (``‖f̄(t)‖``, to read
    the distances relative to the model). ``params["node_loss"]`` and
    ``params["node_disagreement"]`` (T, N) hold each agent's local loss and mean distance to its
    neighbours, ``params["node_test_error"]`` (N,) the test error of each agent's last released
    model, ``params["graph"]`` the topology (for drawing). ``not_covered``: why no guarantee
    covers the run (:func:`~dpadmm_lite.trace.from_iterates`).

    Parameters
    ----------
    problem : Problem
        The problem the run solved.
    name : str
        The algorithm.
    net : Network
        The run's graph and data.
    record : Record
        What the run recorded per iteration.
    rho : float
        The ADMM penalty (for ``model_change``).
    noise : dict or None, default None
        The trace's ``noise`` entries.
    ledger : sequence of PrivacyEvent, default ()
        The run's privacy ledger.
    delta : float or None, default None
        δ of the run's guarantee.
    privacy_paper : PrivacyGuarantee or None, default None
        The paper's own statement.
    params : dict or None, default None
        Settings added to ``params``.
    not_covered : str or None, default None
        Why no guarantee covers the run (None: covered).
    """
    graph, data = net.graph, net.data
    R = record.released
    averages = R.mean(axis=1)
    distances = neighbour_distances(R, graph.edges)  # (T, E)
    edges = graph.edges
    incidence = scipy.sparse.csr_matrix((np.ones(2 * len(edges)), (edges.T.ravel(), np.tile(np.arange(len(edges)), 2))),
                                        shape=(graph.n_agents, len(edges)))  # agent p ~ edges that touch it
    node_sum = (incidence @ distances.T).T  # (T, N): Σ over p's edges of ‖x_p − x_j‖
    node_disagreement = node_sum / np.maximum(graph.degrees, 1)
    change = np.sqrt(((np.diff(R, axis=0, prepend=np.zeros((1,) + R.shape[1:]))) ** 2).sum(-1).mean(-1)) * rho
    metrics = {
        "empirical_loss": (data.weights * record.loss).mean(axis=1),
        "neighbour_distance_max": distances.max(axis=1) if distances.size else np.zeros(len(R)),
        "neighbour_distance_mean": distances.mean(axis=1) if distances.size else np.zeros(len(R)),
        "noise_norm": record.noise,
        "inner_steps": record.inner_steps,
        "solve_residual": record.residual,
        "model_change": change,
        "model_norm": np.linalg.norm(averages, axis=1),
    }
    trace = from_iterates(problem, name, averages, consensus_violation=consensus_violation(R), noise=noise,
                          ledger=ledger, delta=delta, privacy_paper=privacy_paper, metrics=metrics,
                          not_covered=not_covered,
                          params={"topology": graph.name, "n_agents": graph.n_agents, "graph": graph,
                                  "algebraic_connectivity": graph.algebraic_connectivity,
                                  "node_loss": record.loss, "node_disagreement": node_disagreement,
                                  **(params or {})})
    if trace.test_accuracy is not None:
        trace.metrics["test_error"] = 1.0 - trace.test_accuracy
        trace.params["node_test_error"] = _node_test_error(problem, R[-1:])[0]  # each agent's final model
    return trace


def _node_test_error(problem: Problem, R) -> np.ndarray:
    """Test error of every released model ``R`` (T, N, d): (T, N). Single precision (only signs are
    needed), in chunks of iterations so that the (models × test records) margins stay small."""
    cached = problem.__dict__.get("_graph_test32")
    if cached is None or cached[0] is not problem.X_test:
        cached = (problem.X_test, np.ascontiguousarray(problem.X_test.T, dtype=np.float32), problem.y_test > 0)
        problem.__dict__["_graph_test32"] = cached
    _, XT, positive = cached
    T, N, d = R.shape
    errors = np.empty((T, N))
    chunk = max(1, 2_000_000 // max(N * XT.shape[1], 1))
    for start in range(0, T, chunk):  # chunks of iterations (memory), not a loop over agents
        models = R[start:start + chunk].reshape(-1, d).astype(np.float32)
        block = _products.float32_product(models, XT)
        errors[start:start + chunk] = ((block >= 0) != positive).mean(axis=1).reshape(-1, N)
    return errors


def solved_loss(data: LocalData, solution: LocalSolution) -> np.ndarray:
    """Mean local losses at a solution's models: from the solver when it has them, else one data pass.

    Parameters
    ----------
    data : LocalData
        The agents' data.
    solution : LocalSolution
        A solve's result.
    """
    if solution.loss is not None:
        return solution.loss
    return data.loss(data.margins(solution.F) if solution.margins is None else solution.margins)


# ---------------------------------------------------------------------- Algorithm 1
#: Agents of a network run: at least two (a graph with an edge), each holding a record. The registry
#: checks it (tests/test_bad_input.py reads it); a Topology given instead fixes them.
GRAPH_AGENTS = [Interval(Integral, 2, "n_samples", note="a network of at least two agents, each holding a record"),
                None]


@register("admm_graph", paper="zhang2017", private=False, setting="graph",
          description="consensus ADMM over a connected network, exact local updates (Zhang & Zhu 2017, Alg. 1)",
          tasks=("logistic-l2", "logistic-l1", "lasso"), tuning={"rho": (0.003, 0.01, 0.03, 0.1, 0.3, 1.0)},
          constraints={"n_agents": GRAPH_AGENTS, "max_inner": [Interval(Integral, 1, None), None]})
@one_blas_thread
def admm_graph(problem: Problem, *, epsilon: float = math.inf, delta: float = 1e-5, rho: float = 1.0,
               iterations: int = 100, seed: int = 0, topology: str | topologies.Topology = "ring",
               n_agents: int | None = None, sizes: str | Sequence[int] | None = None, owner: np.ndarray | None = None,
               inner_tol: float = 1e-9, max_inner: int | None = None) -> Trace:
    """Consensus ADMM over a network: Zhang & Zhu (2017), Algorithm 1, eqs. (9)–(11).

    Parameters
    ----------
    problem : Problem
        A :class:`~dpadmm_lite.problems.Problem` with ``regularizer`` ``"l1"`` or ``"l2"``.
    epsilon : float, default math.inf
        Must be ``math.inf``: the algorithm adds no noise (``dvp_graph``/``pvp_graph`` are its
        private versions).
    delta : float, default 1e-05
        Unused (no noise); kept for the common :func:`dpadmm_lite.run` signature.
    rho : float, default 1.0
        The ADMM penalty (the paper's η).
    iterations : int, default 100
        Number of ADMM iterations ``T``.
    seed : int, default 0
        Seeds the random data split and random topologies (the updates are deterministic).
    topology : str or Topology, default "ring"
        A name of :func:`dpadmm_lite.topology.make` or a :class:`~dpadmm_lite.topology.Topology`;
        it must be connected.
    n_agents : int or None, default None
        ``N`` (default 10, or the topology's); at most the number of samples.
    sizes : str, sequence of int or None, default None
        How the samples are dealt: ``owner[j]`` = agent of sample ``j``, or ``sizes`` for
        :func:`dpadmm_lite.datasets.split` (None = equal sizes, ``"unequal"``, or explicit).
    owner : ndarray or None, default None
        How the samples are dealt: ``owner[j]`` = agent of sample ``j``, or ``sizes`` for
        :func:`dpadmm_lite.datasets.split` (None = equal sizes, ``"unequal"``, or explicit).
    inner_tol : float, default 1e-9
        Stop the local solver when every agent's (proximal-)gradient norm is ≤ ``inner_tol``
        or after ``max_inner`` steps (default 100 for ℓ2, 500 for ℓ1).
    max_inner : int or None, default None
        Stop the local solver when every agent's (proximal-)gradient norm is ≤ ``inner_tol``
        or after ``max_inner`` steps (default 100 for ℓ2, 500 for ℓ1).

    Returns
    -------
    Trace
        Per iteration: objective and gap of the network average ``f̄(t) = mean_p f_p(t)`` (the
        released model), test accuracy, ``consensus_violation = sqrt(mean_p ‖f_p − f̄‖²)``, and
        the metrics of :func:`finish` (empirical loss, test errors, distances between
        neighbours, inner steps, …). ``privacy`` is "not private".

    Notes
    -----
    Every iteration costs two sparse products with the graph and one batched local solve (two
    passes over the data per inner step for the logistic loss; none for the squared loss,
    which works from the cached Gram matrices). See the module notes for the mapping to the
    paper's notation and the local solvers.

    References
    ----------
    T. Zhang, Q. Zhu, "Dynamic differential privacy for ADMM-based distributed classification
    learning", IEEE TIFS 12(1), 2017, Sec. II-A.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    >>> problem = dl.problems.logistic(X, np.where(X.sum(axis=1) > 0, 1.0, -1.0), 1e-2)
    >>> trace = dl.run("admm_graph", problem, iterations=10, seed=0)
    >>> trace.model.shape, len(trace.objective)
    ((5,), 10)
    """
    if not math.isinf(check.epsilon(epsilon)):
        raise ValueError(f"epsilon must be ∞ (math.inf) for the non-private 'admm_graph', got {epsilon!r}")
    check.delta(delta)
    rho = check.scale("rho", rho)
    T = check.count("iterations", iterations)
    seed = check.count("seed", seed, minimum=0)
    if problem.regularizer not in ("l1", "l2"):
        raise ValueError(f"regularizer must be 'l1' or 'l2' for admm_graph, got {problem.regularizer!r} "
                         "(the fused penalty needs the Ax + By = c form: use 'admm_linearized')")
    inner_tol = check.positive("inner_tol", inner_tol)
    max_inner = check.count("max_inner", max_inner if max_inner is not None else
                            (100 if problem.regularizer == "l2" else 500))
    net = network(problem, topology=topology, n_agents=n_agents, sizes=sizes, owner=owner, seed=seed)
    N, d = net.n_agents, problem.d
    Adj, Lap, D = net.graph.adjacency, net.graph.laplacian, net.degrees
    solve = LocalSolver(net.data, problem.lam, problem.regularizer, 2.0 * rho * D,  # ρ D_p‖f‖² of (9) as (c_p/2)‖f‖²
                        inner_tol=inner_tol, max_inner=max_inner)
    record = Record(T, N, d)
    F = np.zeros((N, d))  # f_p(0) (the paper: random; see the module notes)
    Lam = np.zeros((N, d))  # λ_p(0) = 0
    for t in range(T):
        b = 2.0 * Lam - rho * (D[:, None] * F + Adj @ F)  # (9): 2λ_p + the ρ-term's linear part
        sol = solve(b)  # (10), warm-started at f_p(t)
        F = sol.F
        Lam = Lam + 0.5 * rho * (Lap @ F)  # (11)
        record.store(t, F, solved_loss(net.data, sol), sol)

    return finish(problem, "admm_graph", net, record, rho=rho,
                  params={"inner_tol": inner_tol, "max_inner": max_inner,
                          "hessians": solve.hessian_refreshes, "passes": solve.passes})
