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
at the extrapolation ``2F(t) − F(t−1)`` (the exact minimiser does not depend on the start; the
extrapolated one saves about a quarter of the inner steps):

* ℓ2 (``r = ½‖f‖²``, smooth): Newton's method with a fixed curvature bound. For the squared loss
  ``∇²h_p = X_pᵀX_p/m_p`` is constant and one Newton step is exact. For the logistic loss the
  Hessian ``X_pᵀ S X_p/m_p`` changes with ``f``; forming it costs ``d/2`` passes over the data, so
  we use Böhning & Lindsay's bound ``S ⪯ ¼ I``: the step ``f ← f − P_p⁻¹ ∇L_p^N(f)`` with
  ``P_p = w_p X_pᵀX_p/(4m_p) + (λ + 2ρD_p) I`` majorises, decreases ``L_p^N`` monotonically and
  converges linearly to the exact minimiser, at two passes over the data per step. ``P_p`` is
  diagonalised once per problem and split (cached), so any ρ reuses it.
* ℓ1 (``r = ‖f‖₁``): accelerated proximal gradient (FISTA with the constant momentum of the
  ``2ρD_p``-strongly convex problem), step ``1/L_p`` with ``L_p = w_p·λ_max(∇²h_p) + 2ρD_p``,
  prox = soft-thresholding at ``λ/L_p``.

Both stop when every agent's (proximal-)gradient norm is at most ``inner_tol`` (or after
``max_inner`` steps; ``Trace.metrics["inner_steps"]`` records how many were needed).

**Initialisation.** Algorithm 1 starts from random ``f_p`` and ``λ_p = 0``; we start from
``f_p = 0`` (deterministic; the limit does not depend on it).

Reference: T. Zhang, Q. Zhu, "Dynamic differential privacy for ADMM-based distributed
classification learning", IEEE TIFS 12(1), 2017 (``papers/zhang2017_…``), Sec. II-A; the
reduction to (10)–(11) is Lemma 2 of Forero, Cano & Giannakis, JMLR 2010.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import numpy as np

from .. import _validate as check
from .. import datasets, topology as topologies
from ..problems import Agents, Problem, make_agents, soft_threshold
from ..registry import register
from ..trace import Trace, from_iterates

__all__ = ["admm_graph", "LocalData", "local_data", "LocalSolver", "consensus_violation"]


# ---------------------------------------------------------------------- per-agent data, cached
@dataclass(eq=False)
class LocalData:
    """A problem's data dealt to the agents, with what every local solve reuses.

    Attributes
    ----------
    agents
        The stacked ``(N, m_max, d)`` data (:func:`~dpadmm_lite.problems.make_agents`).
    weights
        ``w_p = N m_p / n``, so that ``Σ_p w_p h_p = N f``.
    curvature
        ``κ X_pᵀX_p/m_p`` per agent, ``(N, d, d)`` (κ = 1 squared loss: the Hessian of ``h_p``;
        κ = ¼ logistic: Böhning's bound on it).
    curvature_values, curvature_vectors
        Its eigen-decomposition ``V_p diag(e_p) V_pᵀ``, so that ``(w_p κ X_pᵀX_p/m_p + s I)⁻¹``
        costs one batched product for any shift ``s`` (any ρ).
    linear
        Squared loss only: ``X_pᵀ y_p / m_p``, so that ``∇h_p(f) = X_pᵀX_p f/m_p − linear``.
    """

    agents: Agents
    weights: np.ndarray
    curvature: np.ndarray
    curvature_values: np.ndarray
    curvature_vectors: np.ndarray
    linear: np.ndarray | None

    @property
    def n_agents(self) -> int:
        return self.agents.n_agents

    def gradient(self, F) -> np.ndarray:
        """``∇h_p(F[p])`` for every agent: (N, d). Squared loss: from the Gram matrices, no data pass."""
        if self.linear is not None:
            return np.matmul(self.curvature, F[:, :, None])[:, :, 0] - self.linear
        return self.agents.gradient(F)

    def inverse(self, shift) -> np.ndarray:
        """``(w_p · curvature_p + shift_p I)⁻¹`` for every agent, ``(N, d, d)``."""
        V = self.curvature_vectors
        scale = 1.0 / (self.weights[:, None] * self.curvature_values + np.asarray(shift)[:, None])
        return np.matmul(V * scale[:, None, :], V.transpose(0, 2, 1))


_CACHE: "weakref.WeakKeyDictionary[Problem, dict]" = weakref.WeakKeyDictionary()


def local_data(problem: Problem, owner) -> LocalData:
    """Stack ``problem``'s data by ``owner`` and precompute the local curvature (cached per problem)."""
    owner = np.asarray(owner)
    key = (owner.shape, owner.tobytes())
    per_problem = _CACHE.setdefault(problem, {})
    if key in per_problem:
        return per_problem[key]
    agents = make_agents(problem, owner)
    X = agents.X
    kappa = 1.0 if problem.loss == "squared" else 0.25  # Hessian (squared), Böhning bound (logistic)
    curvature = kappa * np.matmul(X.transpose(0, 2, 1), X) / agents.sizes[:, None, None]  # κ X_pᵀX_p/m_p
    e, V = np.linalg.eigh(curvature)
    linear = None
    if problem.loss == "squared":
        linear = np.matmul((agents.y * agents.mask)[:, None, :], X)[:, 0, :] / agents.sizes[:, None]
    data = LocalData(agents, agents.n_agents * agents.sizes / problem.n, curvature, np.maximum(e, 0.0), V, linear)
    if len(per_problem) >= 4:  # a handful of splits per problem is plenty (live panels, sweeps)
        per_problem.pop(next(iter(per_problem)))
    per_problem[key] = data
    return data


# ---------------------------------------------------------------------- the local problems (10)
class LocalSolver:
    """Solve ``min_f w_p h_p(f) + λ r(f) + b_pᵀ f + (c_p/2)‖f‖²`` for every agent ``p`` at once.

    With ``c_p = 2ρD_p`` and ``b_p`` as in the module notes this is (10), ``argmin L_p^N``.
    What depends only on ``c`` (the Newton matrix, the FISTA step and momentum) is computed once,
    here; each call takes the linear terms ``b`` ``(N, d)`` and a warm start ``F0`` ``(N, d)`` and
    returns the minimisers and the number of inner steps.

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
        w = data.weights
        if regularizer == "l2":
            # Newton matrix P_p = w_p κ X_pᵀX_p/m_p + (λ + c_p) I (the Hessian for the squared loss)
            self.newton_inverse = data.inverse(lam + self.c)
        else:
            self.L = w * data.curvature_values[:, -1] + self.c  # smoothness of the smooth part
            mu = np.maximum(self.c, 1e-12 * self.L)  # its strong convexity (the ρ-term)
            self.momentum = ((np.sqrt(self.L) - np.sqrt(mu)) / (np.sqrt(self.L) + np.sqrt(mu)))[:, None]

    def __call__(self, b, F0) -> tuple[np.ndarray, int]:
        data, lam, c, w = self.data, self.lam, self.c, self.data.weights
        if self.regularizer == "l2":
            F = F0.copy()
            for step in range(self.max_inner + 1):
                g = w[:, None] * data.gradient(F) + (lam + c)[:, None] * F + b  # ∇L_p^N(f)
                if step == self.max_inner or np.abs(g).max() <= self.inner_tol:
                    return F, step
                F = F - np.matmul(self.newton_inverse, g[:, :, None])[:, :, 0]  # Newton step
                if data.linear is not None:  # squared loss: the Newton step is exact
                    return F, step + 1
        # ℓ1: FISTA on the (c_p)-strongly convex smooth part, prox = soft-thresholding
        L = self.L[:, None]
        X, Y = F0.copy(), F0.copy()
        for step in range(1, self.max_inner + 1):
            grad = w[:, None] * data.gradient(Y) + c[:, None] * Y + b
            X_new = soft_threshold(Y - grad / L, lam / L)
            residual = np.abs(L * (Y - X_new)).max()  # gradient-mapping norm at Y
            Y = X_new + self.momentum * (X_new - X)
            X = X_new
            if residual <= self.inner_tol:
                return X, step
        return X, self.max_inner


def consensus_violation(F) -> np.ndarray:
    """``sqrt(mean_p ‖f_p − f̄‖²)`` of stacked local models ``F`` (..., N, d)."""
    F = np.asarray(F)
    return np.sqrt(((F - F.mean(axis=-2, keepdims=True)) ** 2).sum(axis=-1).mean(axis=-1))


# ---------------------------------------------------------------------- Algorithm 1
def _graph(topology, n_agents, seed) -> topologies.Topology:
    if isinstance(topology, topologies.Topology):
        if n_agents is not None and check.count("n_agents", n_agents) != topology.n_agents:
            raise ValueError(f"n_agents must equal the topology's {topology.n_agents} agents, got {n_agents}")
        graph = topology
    else:
        check.choice("topology", topology, topologies.NAMES)
        graph = topologies.make(topology, check.count("n_agents", 10 if n_agents is None else n_agents, minimum=2),
                                seed=seed)
    return graph.check_connected()


@register("admm_graph", paper="zhang2017", private=False, setting="graph",
          description="consensus ADMM over a connected network, exact local updates (Zhang & Zhu 2017, Alg. 1)")
def admm_graph(problem: Problem, *, epsilon: float = math.inf, delta: float = 1e-5, rho: float = 1.0,
               iterations: int = 100, seed: int = 0, topology="ring", n_agents: int | None = None,
               sizes=None, owner=None, inner_tol: float = 1e-9, max_inner: int | None = None) -> Trace:
    """Consensus ADMM over a network: Zhang & Zhu (2017), Algorithm 1, eqs. (9)–(11).

    Parameters
    ----------
    problem
        A :class:`~dpadmm_lite.problems.Problem` with ``regularizer`` ``"l1"`` or ``"l2"``.
    epsilon
        Must be ``math.inf``: the algorithm adds no noise (``dvp``/``pvp`` are its private
        versions).
    delta
        Unused (no noise); kept for the common :func:`dpadmm_lite.run` signature.
    rho
        The ADMM penalty (the paper's η).
    iterations
        Number of ADMM iterations ``T``.
    seed
        Seeds the random data split and random topologies (the updates are deterministic).
    topology
        A name of :func:`dpadmm_lite.topology.make` or a :class:`~dpadmm_lite.topology.Topology`;
        it must be connected.
    n_agents
        ``N`` (default 10, or the topology's); at most the number of samples.
    sizes, owner
        How the samples are dealt: ``owner[j]`` = agent of sample ``j``, or ``sizes`` for
        :func:`dpadmm_lite.datasets.split` (None = equal sizes, ``"unequal"``, or explicit).
    inner_tol, max_inner
        Stop the local solver when every agent's (proximal-)gradient norm is ≤ ``inner_tol``
        or after ``max_inner`` steps (default 100 for ℓ2, 500 for ℓ1).

    Returns
    -------
    Trace
        Per iteration: objective and gap of the network average ``f̄(t) = mean_p f_p(t)`` (the
        released model), test accuracy, ``consensus_violation = sqrt(mean_p ‖f_p − f̄‖²)``;
        ``metrics["inner_steps"]`` (local solver steps) and ``metrics["model_change"]``
        (``ρ sqrt(mean_p ‖f_p(t) − f_p(t−1)‖²)``, a dual-residual proxy). ``privacy`` is
        "not private".

    Notes
    -----
    Every iteration costs two sparse products with the graph and one batched local solve (two
    passes over the data per inner step for the logistic loss; none for the squared loss,
    which works from the cached Gram matrices). See the module notes for the mapping to the
    paper's notation and the local solvers.
    """
    if not math.isinf(check.epsilon(epsilon)):
        raise ValueError(f"epsilon must be ∞ (math.inf) for the non-private 'admm_graph', got {epsilon!r}")
    check.open_unit("delta", delta)
    rho = check.positive("rho", rho)
    T = check.count("iterations", iterations)
    seed = check.count("seed", seed, minimum=0)
    if problem.regularizer not in ("l1", "l2"):
        raise ValueError(f"regularizer must be 'l1' or 'l2' for admm_graph, got {problem.regularizer!r} "
                         "(the fused penalty needs the Ax + By = c form: use 'admm_linearized')")
    inner_tol = check.positive("inner_tol", inner_tol)
    max_inner = check.count("max_inner", max_inner if max_inner is not None else
                            (100 if problem.regularizer == "l2" else 500))
    graph = _graph(topology, n_agents, seed)
    N = graph.n_agents
    if owner is None:
        if N > problem.n:
            raise ValueError(f"n_agents must be in [2, n_samples={problem.n}], got {N}")
        owner = datasets.split(problem.n, N, sizes=sizes, seed=seed)
    else:
        owner = np.asarray(owner)
        if owner.shape != (problem.n,) or not np.array_equal(np.unique(owner), np.arange(N)):
            raise ValueError(f"owner must give each of the {problem.n} samples an agent in 0 … {N - 1}, "
                             "every agent at least one sample")
    data = local_data(problem, owner)

    Adj, Lap = graph.adjacency, graph.laplacian
    D = graph.degrees.astype(float)
    c = 2.0 * rho * D  # the ρ D_p ‖f‖² term of (9), as (c_p/2)‖f‖²
    solve = LocalSolver(data, problem.lam, problem.regularizer, c, inner_tol=inner_tol, max_inner=max_inner)
    F = np.zeros((N, problem.d))  # f_p(0) (the paper: random; see the module notes)
    F_previous = F
    Lam = np.zeros((N, problem.d))  # λ_p(0) = 0
    averages = np.empty((T, problem.d))
    violation = np.empty(T)
    inner_steps = np.empty(T)
    change = np.empty(T)
    for t in range(T):
        b = 2.0 * Lam - rho * (D[:, None] * F + Adj @ F)  # (9): 2λ_p + ρ-term's linear part
        F_new, steps = solve(b, 2.0 * F - F_previous)  # (10), warm-started by extrapolation
        F_previous = F
        Lam = Lam + 0.5 * rho * (Lap @ F_new)  # (11)
        change[t] = rho * np.sqrt(((F_new - F) ** 2).sum(axis=1).mean())
        F = F_new
        averages[t] = F.mean(axis=0)
        violation[t] = consensus_violation(F)
        inner_steps[t] = steps

    return from_iterates(
        problem, "admm_graph", averages, consensus_violation=violation,
        metrics={"inner_steps": inner_steps, "model_change": change},
        params={"topology": graph.name, "n_agents": N, "inner_tol": inner_tol, "max_inner": max_inner},
    )
