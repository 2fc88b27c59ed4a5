"""The star algorithms' local solvers: every agent's data, losses and exact local update, batched.

Huang et al.'s Algorithms 1 and 2 (and Zhang & Zhu's DVP) need ``argmin_v f_i(v) − ⟨G_i, v⟩ + ρ/2‖v − w‖²``
for every agent i at every iteration; the papers do not say how it is solved. This module holds that
solver library for :mod:`dpadmm_lite.algorithms.huang2019`, which imports it and keeps the papers' algorithms:

* :class:`_Stack`: the agents' stacked data and the only products the updates need (batched ``matmul``
  on the padded stack, or one block-diagonal sparse matrix for sparse features), and the
  single-precision preconditioners of the Newton steps;
* :func:`_loss_slope`, :func:`_local_loss`, :func:`_local_grad`: local mean losses, slopes and
  (optionally clipped) gradients from the margins;
* :func:`_exact_update`: batched damped (chord-)Newton for ℓ2 (:func:`_newton`, with
  :func:`_hessian_inverse`), batched FISTA for ℓ1 (:func:`_fista`), and the certified distance to the
  exact minimiser once the tolerance is reached (:func:`_tolerance_bound`).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse
from scipy.special import expit

from ..problems import Agents, count_work, paused


# ====================================================================== data, losses, gradients
#: Below this fraction of non-zero features the products run on sparse matrices (Adult: 12 %).
SPARSE_BELOW = 0.3


class _Stack:
    """The agents' stacked data and the only products the updates need, for all agents at once.

    ``margins(W)`` (N, m_max) = ``a_ij · w_i``; ``rmatvec(R)`` (N, d) = ``Σ_j R_ij a_ij``;
    ``hessians(S)`` (N, d, d) = ``Σ_j S_ij a_ij a_ijᵀ``. Dense data use batched ``matmul`` on the
    padded (N, m_max, d) array of :func:`~dpadmm_lite.problems.make_agents`; sparse data (one-hot
    features, as Adult) use one block-diagonal sparse matrix ``P`` of shape (N·m_max, N·d), so a
    product with all agents' models is one sparse mat-vec — never a loop over agents.
    """

    def __init__(self, problem, agents: Agents, owner, *, sparse: bool | None = None):
        self.problem, self.agents = problem, agents
        self.y, self.mask, self.sizes = agents.y, agents.mask, agents.sizes
        self.neg_y = -agents.y  # ℓ'(z) = −b σ(−bz): the −b of every slope, formed once
        self.full = bool(agents.mask.all())
        self.n_agents, self.m_max, self.d = agents.X.shape
        csr = _csr(problem)
        if sparse is None:
            sparse = csr.nnz < SPARSE_BELOW * problem.n * problem.d
        self.sparse = bool(sparse)
        if self.sparse:
            owner = np.asarray(owner)
            order = np.argsort(owner, kind="stable")  # the padded layout of make_agents
            agent = owner[order]
            starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]])
            slot = np.arange(problem.n) - np.repeat(starts, self.sizes)
            rows = csr[order]
            counts = np.zeros(self.n_agents * self.m_max, dtype=np.int64)
            counts[agent * self.m_max + slot] = np.diff(rows.indptr)
            indptr = np.concatenate([[0], np.cumsum(counts)])
            shape = (self.n_agents * self.m_max, self.d)
            self.flat = scipy.sparse.csr_matrix((rows.data, rows.indices, indptr), shape=shape)
            block_cols = rows.indices + np.repeat(agent, np.diff(rows.indptr)) * self.d
            self.P = scipy.sparse.csr_matrix((rows.data, block_cols, indptr),
                                             shape=(shape[0], self.n_agents * self.d))
            self.P_T = self.P.T  # a CSC view, made once: ``P.T`` builds a new matrix object on every call
            self._PT = None
        else:
            self.flat = agents.X.reshape(-1, self.d)

    def margins(self, W):
        """``a_ij · w_i`` for every sample of every agent: (N, m_max)."""
        count_work(rows=self.problem.n)
        if self.sparse:
            return (self.P @ np.ascontiguousarray(W).ravel()).reshape(self.n_agents, self.m_max)
        return np.matmul(self.agents.X, W[:, :, None])[:, :, 0]

    def margins_at(self, w):
        """``a_ij · w`` for one model broadcast to every agent: (N, m_max)."""
        count_work(rows=self.problem.n)
        return (self.flat @ w).reshape(self.n_agents, self.m_max)

    def rmatvec(self, R):
        """``Σ_j R_ij a_ij`` for every agent: (N, d)."""
        count_work(rows=self.problem.n)
        if self.sparse:
            return (self.P_T @ R.ravel()).reshape(self.n_agents, self.d)
        return np.matmul(R[:, None, :], self.agents.X)[:, 0, :]

    def hessians(self, S):
        """``Σ_j S_ij a_ij a_ijᵀ`` for every agent: (N, d, d)."""
        count_work(rows=self.problem.n)
        if self.sparse:
            if self._PT is None:
                self._PT = self.P.T.tocsr()
            f = self.flat
            scaled = scipy.sparse.csr_matrix((f.data * np.repeat(S.ravel(), np.diff(f.indptr)), f.indices, f.indptr),
                                             shape=f.shape)
            return (self._PT @ scaled).toarray().reshape(self.n_agents, self.d, self.d)
        A = self.agents.X * np.sqrt(S)[:, :, None]
        return np.matmul(A.transpose(0, 2, 1), A)

    def preconditioners(self, S, mu, agents=None):
        """Inverses of ``Σ_j S_ij a_ij a_ijᵀ + μ_i I`` for every agent, (N, d, d); with ``agents`` (indices),
        for those agents only (``S``, ``mu`` then have their rows), each the same numbers as in the full batch.

        The sum is formed in single precision on the padded dense data (a batched ``AᵀA`` runs
        at BLAS speed, faster than the sparse product) and inverted in one batched LAPACK call,
        so that a Newton direction is one batched product (``scipy.linalg.cho_solve`` on a stack
        loops over the agents in Python: 100 agents cost 100 calls per step). The inverses only
        precondition the Newton steps, whose gradients stay exact, so the solution keeps double
        precision. So the inverses are kept in single precision too (inverted in double, then
        rounded): the direction's product reads all of them at every step (Adult, 100 agents:
        8.7 MB in double), and half the bytes make it faster.
        """
        if not hasattr(self, "_X32"):
            self._X32 = self.agents.X.astype(np.float32)
        X32 = self._X32 if agents is None else self._X32[agents]
        count_work(rows=self.problem.n if agents is None else int(self.sizes[agents].sum()),
                   factorizations=self.n_agents if agents is None else len(agents))
        A = X32 * np.sqrt(S).astype(np.float32)[:, :, None]
        H = np.matmul(A.transpose(0, 2, 1), A).astype(float) + mu[:, :, None] * np.eye(self.d)
        return np.linalg.inv(H).astype(np.float32)

    def row_norms(self):
        """``‖a_ij‖`` (N, m_max), zero on padding."""
        if not hasattr(self, "_row_norms"):
            sq = self.flat.multiply(self.flat).sum(axis=1) if self.sparse else (self.flat**2).sum(axis=1)
            self._row_norms = np.sqrt(np.asarray(sq, float).reshape(self.n_agents, self.m_max))
        return self._row_norms

    def gram_top_eigenvalue(self):
        """``λ_max(X_iᵀX_i)/m_i`` for every agent (computed once per deal of the records and kept, like the
        row norms: not counted as any run's work)."""
        if not hasattr(self, "_gram_top"):
            with paused():
                gram = self.hessians(self.mask.astype(float))
            self._gram_top = np.linalg.eigvalsh(gram)[:, -1] / self.sizes
        return self._gram_top


def _csr(problem):
    """The problem's training features as CSR, computed once per problem."""
    return _cached_csr(problem, "X")


def _sparse(problem) -> bool:
    return _csr(problem).nnz < SPARSE_BELOW * problem.n * problem.d


def _cached_csr(problem, name):
    """``problem.<name>`` as CSR, made once per problem (and again if the array is replaced)."""
    key = f"_star_csr_{name}"
    array = getattr(problem, name)
    cached = problem.__dict__.get(key)
    if cached is None or cached[0] is not array:
        cached = (array, scipy.sparse.csr_matrix(array))
        problem.__dict__[key] = cached
    return cached[1]


def _curvature(problem, Z, Y):
    """ℓ''(z) of the loss at the margins (the Hessian of one example is ℓ''·a aᵀ)."""
    if problem.loss == "squared":
        return np.ones_like(Z)
    p = expit(Z * Y)
    return p * (1.0 - p)


def _loss_slope(stack: _Stack, Z):
    """Local mean losses ``(1/m_i) Σ_j ℓ(z_ij)`` (N,) and slopes ``ℓ'(z_ij)`` (N, m_max) at margins Z.

    The same values as :meth:`Problem._loss_of_margin` / ``_dloss_of_margin``, from one ``exp``
    (``ℓ = log(1 + e^u)``, ``ℓ' = −b σ(u)``, ``u = −b z``, written stably), which is several times
    faster than ``np.logaddexp`` + ``expit``; padded rows are masked out.
    """
    if stack.problem.loss == "logistic":
        u = stack.y * Z  # ℓ = log(1 + e^{−u}) = log1p(e^{−|u|}) − min(u, 0);  ℓ' = −b σ(−u)
        e = np.abs(u)
        np.negative(e, out=e)
        np.exp(e, out=e)
        ell = np.log1p(e)
        # σ(−u) = e^{−|u|}/(1 + e^{−|u|}) for u ≥ 0, 1/(1 + e^{−|u|}) below; as e ≤ 1 the numerator is
        # max(e, [u < 0]) (a maximum with the comparison costs half a np.where)
        slope = np.maximum(e, u < 0)
        np.minimum(u, 0.0, out=u)  # u is not needed after this
        ell -= u
        e += 1.0
        slope /= e
        slope *= stack.neg_y
    else:
        slope = Z - stack.y
        ell = 0.5 * slope**2
    if not stack.full:
        ell = np.where(stack.mask, ell, 0.0)
        slope = np.where(stack.mask, slope, 0.0)
    return ell.sum(axis=1) / stack.sizes, slope


def _local_loss(stack: _Stack, Z):
    """(1/m_i) Σ_j ℓ(a_ij·w_i) for every agent from its margins Z (N, m_max): shape (N,)."""
    return _loss_slope(stack, Z)[0]


def _local_grad(stack: _Stack, slope, *, clip: float | None = None):
    """(1/m_i) Σ_j ∇ℓ(a_ij·w_i) from the slopes ℓ'(z_ij); with ``clip``, each example's gradient is clipped.

    ``∇ℓ_j = ℓ'(z_j) a_j`` has norm ``|ℓ'(z_j)|·‖a_j‖``, so clipping to C scales ``ℓ'(z_j)`` by
    ``min(1, C/(|ℓ'(z_j)|‖a_j‖))`` — the same as :func:`dpadmm_lite.mechanisms.clip` on the
    per-example gradients, without forming the (N, m_max, d) array.
    """
    r = slope
    if clip is not None and math.isfinite(clip):
        norms = np.abs(r) * stack.row_norms()
        r = np.where(norms > clip, r * (clip / np.where(norms > 0, norms, 1.0)), r)
    return stack.rmatvec(r) / stack.sizes[:, None]


# ====================================================================== exact local minimisation
def _exact_update(stack: _Stack, G, w, rho, W, Z, *, extra=0.0, tol=1e-9, max_inner=50, cache=None,
                  refresh="all"):
    """``argmin_v f_i(v) − ⟨G_i, v⟩ + ρ/2‖v − w‖² + extra_i/2‖v‖²`` for every agent i at once.

    Alg. 1, line 4 with ``L_{ρ,i}`` of eq. (6) (``G`` = the duals γ^{k−1}, or DVP's perturbed ones,
    ``extra`` = DVP's additional penalty Φ). Warm start ``W`` with margins ``Z``; ``cache`` (a dict
    kept across iterations) holds the Hessian inverses the ℓ2 solver reuses. Returns the
    minimisers, their margins, a certified bound on the largest distance ``‖W_i − argmin_i‖``
    left by stopping (gradient norm/μ for ℓ2, by μ-strong convexity; 3·(gradient-mapping
    norm)/ρ for ℓ1, since ``‖y − x*‖ ≤ 2‖G_L(y)‖/μ`` for a μ-strongly convex composite
    objective), and whether every agent reached ``tol`` within ``max_inner`` steps (then the
    bound is at most :func:`_tolerance_bound`). ``refresh``: how the ℓ2 solver renews its Hessians
    (:func:`_newton`).
    """
    if stack.problem.regularizer == "l2":
        return _newton(stack, G, w, rho, W, Z, extra=extra, tol=tol, max_inner=max_inner,
                       cache={} if cache is None else cache, refresh=refresh)
    return _fista(stack, G, w, rho, W, Z, tol=tol, max_inner=max_inner)


def _newton(stack, G, w, rho, W, Z, *, extra, tol, max_inner, cache, refresh="all"):
    """Batched damped (chord-)Newton on the ℓ2 subproblems (smooth, (ρ + λ/n + Φ)-strongly convex).

    The inverses of the Hessians (one ``(N, d, d)`` batch) are kept in ``cache`` and
    reused across inner steps and outer iterations while they still contract the gradient by a
    factor ``REFRESH`` per step; otherwise they are recomputed at the current point (a full
    Newton step). Each
    step is followed by Armijo backtracking per agent, so every step decreases every agent's
    objective and the iteration converges whatever the stale Hessian.

    ``refresh="all"`` renews every agent's inverse when one agent's step contracts too slowly
    (noise-free ADMM: about twice a run, and the renewal helps every agent). ``refresh="agents"``
    renews only the inverses of the agents whose own step contracted too slowly while still above
    ``tol`` (one batched call over those agents): PVP's and DVP's noise moves every subproblem at
    every iteration, and the batch rule then renewed all 100 inverses for a median of 1-4 slow
    agents, 100-150 times a run (on Adult, 100 agents, most of a PVP run went to the renewals).
    Either way the
    gradients are exact and the solve stops at ``tol``: the answer and its certificate hold to ``tol``.
    """
    p = stack.problem
    mu = (rho + p.lam + np.broadcast_to(np.asarray(extra, float), (stack.n_agents,)))[:, None]

    def value(W, loss):
        return loss + 0.5 * (mu[:, 0] - rho) * (W**2).sum(1) - (G * W).sum(1) + 0.5 * rho * ((W - w) ** 2).sum(1)

    def gradient(W, slope):
        return _local_grad(stack, slope) + mu * W - G - rho * w

    loss, slope = _loss_slope(stack, Z)
    h, grad = value(W, loss), gradient(W, slope)
    norm = np.sqrt((grad**2).sum(1))
    per_agent = refresh == "agents"
    fresh = np.zeros(stack.n_agents, bool) if per_agent else False
    for _ in range(max_inner):
        if norm.max() <= tol:
            break
        if "inverse" not in cache or cache.get("mu") is None or not np.array_equal(cache["mu"], mu):
            cache["inverse"], cache["mu"], fresh = _hessian_inverse(stack, Z, mu), mu, True
            if per_agent:
                cache["stale"], fresh = np.zeros(stack.n_agents, bool), np.ones(stack.n_agents, bool)
        elif per_agent and cache.get("stale", fresh).any():  # renew the slow agents' inverses only, at the current point
            fresh, cache["stale"] = cache["stale"], np.zeros(stack.n_agents, bool)
            agents = np.flatnonzero(fresh)
            cache["inverse"][agents] = _hessian_inverse(stack, Z, mu, agents)
        # the kept inverses are single precision (:meth:`_Stack.preconditioners`): so is the product, then the
        # step is double again; the gradients stay exact, so the solve still stops at ``tol``
        step = np.matmul(cache["inverse"], grad.astype(np.float32)[:, :, None])[:, :, 0].astype(float)
        count_work(solves=stack.n_agents)  # one Newton system per agent, by its (kept) inverse
        decrease = (grad * step).sum(1)
        t = np.ones(stack.n_agents)
        for _ in range(60):  # Armijo backtracking, per agent
            W_new = W - t[:, None] * step
            Z_new = stack.margins(W_new)
            loss, slope = _loss_slope(stack, Z_new)
            h_new = value(W_new, loss)
            bad = h_new > h - 1e-4 * t * decrease + 1e-13 * (1.0 + np.abs(h))
            if not bad.any():
                break
            t = np.where(bad, 0.5 * t, t)
        W, Z, h = W_new, Z_new, h_new
        grad = gradient(W, slope)
        norm_new = np.sqrt((grad**2).sum(1))
        if per_agent:  # an agent's stale Hessian contracts too slowly: renew it at the next step
            cache["stale"] = ~fresh & (norm_new > REFRESH * norm) & (norm_new > tol)
            fresh = np.zeros(stack.n_agents, bool)
        else:
            if not fresh and np.any(norm_new > REFRESH * norm):  # stale Hessian contracts too slowly
                cache.pop("inverse")
            fresh = False
        norm = norm_new
    return W, Z, float(np.max(norm / mu[:, 0])), bool(norm.max() <= tol)


#: The ℓ2 solver recomputes the Hessians when a step with stale ones shrinks a gradient by less.
REFRESH = 0.25


def _hessian_inverse(stack, Z, mu, agents=None):
    """Inverses of ``X_iᵀ diag(ℓ''/m_i) X_i + μ_i I`` for every agent: (N, d, d); with ``agents``
    (indices), for those agents only."""
    if agents is None:
        s = np.where(stack.mask, _curvature(stack.problem, Z, stack.y), 0.0) / stack.sizes[:, None]
        return stack.preconditioners(s, mu)
    s = (np.where(stack.mask[agents], _curvature(stack.problem, Z[agents], stack.y[agents]), 0.0)
         / stack.sizes[agents, None])
    return stack.preconditioners(s, mu[agents], agents)


def _fista(stack, G, w, rho, W, Z, *, tol, max_inner):
    """Batched accelerated proximal gradient on the ℓ1 subproblems (ρ-strongly convex).

    Smooth part ``ℓ̄_i(v) − ⟨G_i, v⟩ + ρ/2‖v − w‖²`` with gradient Lipschitz constant
    ``L_i = c·λ_max(X_iᵀX_i)/m_i + ρ`` (c = max ℓ''); prox of ``(λ/n)‖·‖₁`` is soft-thresholding.
    """
    p = stack.problem
    L = (stack.gram_top_eigenvalue() * (0.25 if p.loss == "logistic" else 1.0) + rho)[:, None]
    beta = (np.sqrt(L) - math.sqrt(rho)) / (np.sqrt(L) + math.sqrt(rho))  # strong-convexity momentum
    W_prev = W
    Zy = Z
    Y = W
    for it in range(max_inner):
        grad = _local_grad(stack, _loss_slope(stack, Zy)[1]) - G + rho * (Y - w)
        V = Y - grad / L
        W_new = np.sign(V) * np.maximum(np.abs(V) - p.lam / L, 0.0)
        moved = np.sqrt(((W_new - Y) ** 2).sum(1)) * L[:, 0]  # norm of the prox-gradient mapping at Y
        W_prev, W = W, W_new
        if np.max(moved) <= tol:
            break
        Y = W + beta * (W - W_prev)
        Zy = stack.margins(Y)
    return W, stack.margins(W), 3.0 * float(np.max(moved)) / rho, bool(np.max(moved) <= tol)


def _tolerance_bound(problem, rho, tol, extra=0.0) -> float:
    """Certified distance to the exact local minimiser once the solver has reached ``tol``.

    Known before the run and the same for every dataset (it uses only ρ, λ and Φ): ℓ2 stops at
    gradient norm ≤ tol of a (ρ + λ + Φ)-strongly convex objective, so ``‖w − w*‖ ≤ tol/(ρ + λ + Φ)``;
    ℓ1 (FISTA) at gradient-mapping norm ≤ tol, so ``‖w − w*‖ ≤ 3·tol/ρ`` (see :func:`_exact_update`).
    """
    if problem.regularizer == "l2":
        return tol / (rho + problem.lam + float(np.min(extra)))
    return 3.0 * tol / rho
