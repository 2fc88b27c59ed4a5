"""The optimisation problems of the five papers: losses, regularisers, constants, optimum.

A :class:`Problem` is ``min_x F(x) = (1/n) Σ_j ℓ(x; a_j, b_j) + λ r(x)`` with

* ``loss="squared"``: ``ℓ = ½ (a·x − b)²`` (Lasso, as in Cyffers et al. and scikit-learn);
* ``loss="logistic"``: ``ℓ = log(1 + exp(−b a·x))`` with labels ``b ∈ {−1, +1}``;

and ``r`` one of ``"l1"`` (‖x‖₁), ``"l2"`` (½‖x‖²) or ``"fused"`` (‖Ax‖₁ with the
graph-guided fused-lasso matrix ``A = [W; I]``). The ADMM form used by Xu et al. and Liu et al.
is ``min f(x) + g(y) s.t. Ax + By = c`` with ``B = −I``, ``c = 0`` and ``g = λ r̃`` the
regulariser applied to ``y`` (``A = I`` for "l1"/"l2").

Every method is vectorised over leading axes of ``x``: pass one model ``(d,)``, a stack of
iterates ``(T, d)`` or one model per agent ``(N, d)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.optimize
import scipy.sparse
from scipy.special import expit

from . import _validate as check

LOSSES = ("squared", "logistic")
REGULARIZERS = ("l1", "l2", "fused")


@dataclass(frozen=True)
class Optimum:
    """A high-precision reference solution ``x`` with objective ``value``."""

    x: np.ndarray
    value: float


@dataclass(eq=False)
class Problem:
    """A regularised empirical-risk problem with its ADMM splitting.

    Build one with :func:`lasso`, :func:`logistic` or :func:`graph_guided_fused_lasso`.
    """

    X: np.ndarray
    y: np.ndarray
    lam: float
    loss: str
    regularizer: str
    A: np.ndarray | None = None
    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    name: str = ""
    _optimum: Optimum | None = field(default=None, repr=False)

    def __post_init__(self):
        self.X = check.finite_array("X", self.X, ndim=2)
        self.y = check.finite_array("y", self.y, ndim=1)
        if self.X.shape[0] != self.y.shape[0]:
            raise ValueError(f"X and y must have the same number of rows, got {self.X.shape[0]} and {self.y.shape[0]}")
        if self.X.shape[0] < 1:
            raise ValueError("X must have at least one row")
        self.lam = check.nonnegative("lam", self.lam)
        check.choice("loss", self.loss, LOSSES)
        check.choice("regularizer", self.regularizer, REGULARIZERS)
        if self.loss == "logistic" and not np.all(np.isin(self.y, (-1.0, 1.0))):
            raise ValueError("y must hold labels -1 and +1 for the logistic loss")
        if self.regularizer == "fused":
            if self.A is None:
                raise ValueError("A must be given for the fused regularizer")
            self.A = check.finite_array("A", self.A, ndim=2)
            if self.A.shape[1] != self.d:
                raise ValueError(f"A must have {self.d} columns (one per feature), got {self.A.shape[1]}")
        if (self.X_test is None) != (self.y_test is None):
            raise ValueError("X_test and y_test must be given together")
        if self.X_test is not None:
            self.X_test = check.finite_array("X_test", self.X_test, ndim=2)
            self.y_test = check.finite_array("y_test", self.y_test, ndim=1)
            if self.X_test.shape[1] != self.d or self.X_test.shape[0] != self.y_test.shape[0]:
                raise ValueError(f"X_test must be (n_test, {self.d}) with one label per row")

    # ------------------------------------------------------------------ sizes
    @property
    def n(self) -> int:
        """Number of training samples."""
        return self.X.shape[0]

    @property
    def d(self) -> int:
        """Number of features (model dimension)."""
        return self.X.shape[1]

    # ------------------------------------------------------------------ loss
    def _loss_of_margin(self, z, b):
        if self.loss == "squared":
            return 0.5 * (z - b) ** 2
        return np.logaddexp(0.0, -b * z)

    def _dloss_of_margin(self, z, b):
        """dℓ/dz at z = a·x, so that ∇ℓ = dℓ/dz · a."""
        if self.loss == "squared":
            return z - b
        return -b * expit(-b * z)

    def data_loss(self, x, X=None, y=None) -> np.ndarray:
        """Mean loss ``f(x) = (1/n) Σ ℓ(x; a_j, b_j)``; vectorised over leading axes of ``x``."""
        X, y = (self.X, self.y) if X is None else (X, y)
        z = np.asarray(x) @ X.T  # (..., n)
        return self._loss_of_margin(z, y).mean(axis=-1)

    def gradient(self, x) -> np.ndarray:
        """Mean gradient ``∇f(x)``, same shape as ``x``."""
        z = np.asarray(x) @ self.X.T
        return self._dloss_of_margin(z, self.y) @ self.X / self.n

    def per_example_gradients(self, x, idx=None) -> np.ndarray:
        """Gradients of single examples at one model ``x`` (d,): shape ``(len(idx), d)``."""
        X, y = (self.X, self.y) if idx is None else (self.X[idx], self.y[idx])
        return self._dloss_of_margin(X @ np.asarray(x), y)[:, None] * X

    # ------------------------------------------------------------------ regulariser
    def regularizer_value(self, x) -> np.ndarray:
        """``r(x)``; vectorised over leading axes."""
        x = np.asarray(x)
        if self.regularizer == "l1":
            return np.abs(x).sum(axis=-1)
        if self.regularizer == "l2":
            return 0.5 * (x**2).sum(axis=-1)
        return np.abs(x @ self.A.T).sum(axis=-1)

    def objective(self, x) -> np.ndarray:
        """``F(x) = f(x) + λ r(x)``; vectorised over leading axes."""
        return self.data_loss(x) + self.lam * self.regularizer_value(x)

    def prox(self, v, step: float) -> np.ndarray:
        """``prox_{step·λ·r}(v)`` in x-space ("l1", "l2"; the fused penalty has no closed form)."""
        v = np.asarray(v, float)
        t = step * self.lam
        if self.regularizer == "l1":
            return soft_threshold(v, t)
        if self.regularizer == "l2":
            return v / (1.0 + t)
        raise ValueError("prox is not available in closed form for regularizer='fused'; use prox_g on y = Ax")

    # ------------------------------------------------------------------ ADMM form Ax + By = c
    @cached_property
    def constraint_matrix(self) -> np.ndarray:
        """``A`` of the splitting ``Ax − y = 0`` (the identity unless the penalty is fused)."""
        return self.A if self.regularizer == "fused" else np.eye(self.d)

    def g(self, y) -> np.ndarray:
        """``g(y) = λ ‖y‖₁`` ("l1", "fused") or ``λ/2 ‖y‖²`` ("l2")."""
        y = np.asarray(y)
        if self.regularizer == "l2":
            return 0.5 * self.lam * (y**2).sum(axis=-1)
        return self.lam * np.abs(y).sum(axis=-1)

    def prox_g(self, v, step: float) -> np.ndarray:
        """``prox_{step·g}(v)``: soft-thresholding at ``step·λ`` (ℓ1) or shrinkage (ℓ2)."""
        v = np.asarray(v, float)
        if self.regularizer == "l2":
            return v / (1.0 + step * self.lam)
        return soft_threshold(v, step * self.lam)

    @cached_property
    def norm_AtA(self) -> float:
        """``‖AᵀA‖₂``, the largest eigenvalue, for the linearised step condition."""
        A = self.constraint_matrix
        return float(np.linalg.norm(A, 2) ** 2)

    # ------------------------------------------------------------------ constants
    @cached_property
    def max_row_norm(self) -> float:
        """``max_j ‖a_j‖₂``."""
        return float(np.sqrt((self.X**2).sum(axis=1).max()))

    @property
    def lipschitz(self) -> float:
        """Per-example gradient bound ``c ≥ ‖∇ℓ(x; a_j, b_j)‖`` for every x (logistic: max‖a_j‖).

        The squared loss has unbounded gradients; algorithms for it clip (Cyffers et al.), and
        this returns ``inf``.
        """
        return self.max_row_norm if self.loss == "logistic" else np.inf

    @cached_property
    def smoothness(self) -> float:
        """Smoothness constant of the mean loss: ``‖XᵀX‖₂ / n`` (squared) or ``/4n`` (logistic)."""
        s = np.linalg.norm(self.X, 2) ** 2 / self.n
        return float(s / 4 if self.loss == "logistic" else s)

    @property
    def per_example_smoothness(self) -> float:
        """Smoothness of one example's loss: ``max‖a_j‖²`` (squared) or ``/4`` (logistic)."""
        s = self.max_row_norm**2
        return s / 4 if self.loss == "logistic" else s

    # ------------------------------------------------------------------ evaluation
    def accuracy(self, x, X=None, y=None) -> np.ndarray | None:
        """Classification accuracy ``mean(sign(a·x) == b)`` on the test split (default)."""
        if self.loss != "logistic":
            return None
        X, y = (self.X_test, self.y_test) if X is None else (X, y)
        if X is None:
            return None
        z = np.asarray(x) @ X.T
        return (np.where(z >= 0, 1.0, -1.0) == y).mean(axis=-1)

    def reference_optimum(self) -> Optimum:
        """The high-precision non-private optimum, computed once and cached."""
        if self._optimum is None:
            self._optimum = _solve_reference(self)
        return self._optimum

    def with_data(self, X, y) -> "Problem":
        """The same problem (loss, regulariser, λ, A, test split) on other training data."""
        return Problem(X, y, self.lam, self.loss, self.regularizer, self.A, self.X_test, self.y_test, self.name)


def soft_threshold(v, t):
    """``sign(v) · max(|v| − t, 0)``, the prox of ``t‖·‖₁``."""
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)


# ---------------------------------------------------------------------- constructors
def lasso(X, y, lam: float, *, X_test=None, y_test=None) -> Problem:
    """Lasso: ``(1/2n)‖Xx − y‖² + λ‖x‖₁`` (scikit-learn's ``Lasso(alpha=lam)`` objective)."""
    return Problem(X, y, check.positive("lam", lam), "squared", "l1", X_test=X_test, y_test=y_test, name="lasso")


def logistic(X, y, lam: float, penalty: str = "l2", *, X_test=None, y_test=None) -> Problem:
    """Logistic regression ``(1/n)Σ log(1+exp(−b a·x)) + λ r(x)``, ``r = ‖x‖₁`` or ``½‖x‖²``."""
    check.choice("penalty", penalty, ("l1", "l2"))
    return Problem(X, y, check.positive("lam", lam), "logistic", penalty, X_test=X_test, y_test=y_test,
                   name=f"logistic-{penalty}")


def graph_guided_fused_lasso(X, y, lam: float, *, W=None, graph_threshold: float = 0.1,
                             sparsity: float = 0.05, X_test=None, y_test=None) -> Problem:
    """Graph-guided fused lasso with logistic loss: ``f(x) + λ‖Ax‖₁``, ``A = [W; I]``.

    ``W`` encodes a feature graph: one row per edge (i, j) with ``+1`` at i and ``−1`` at j,
    so ``‖Wx‖₁ = Σ_edges |x_i − x_j|``. As in the experiments of Xu et al. and Liu et al., the
    graph is the support of a sparse inverse-covariance estimate of the features
    (:class:`sklearn.covariance.GraphicalLasso` with penalty ``sparsity``), keeping the edges
    whose partial correlation exceeds ``graph_threshold`` in absolute value. Pass ``W`` to use
    your own graph.
    """
    X = check.finite_array("X", X, ndim=2)
    if W is None:
        W = feature_graph(X, sparsity=sparsity, threshold=graph_threshold)
    W = check.finite_array("W", W, ndim=2)
    A = np.vstack([W, np.eye(X.shape[1])])
    return Problem(X, y, check.positive("lam", lam), "logistic", "fused", A=A, X_test=X_test, y_test=y_test,
                   name="graph-guided fused lasso")


def feature_graph(X, *, sparsity: float = 0.05, threshold: float = 0.1) -> np.ndarray:
    """Edge-incidence matrix W of the sparse inverse-covariance graph of the columns of ``X``."""
    from sklearn.covariance import GraphicalLasso

    check.positive("sparsity", sparsity)
    check.nonnegative("threshold", threshold)
    Z = X - X.mean(axis=0)
    scale = Z.std(axis=0)
    Z = Z[:, scale > 0] / scale[scale > 0]
    keep = np.flatnonzero(scale > 0)
    precision = GraphicalLasso(alpha=sparsity, max_iter=200).fit(Z).precision_
    dinv = 1.0 / np.sqrt(np.diag(precision))
    partial = -precision * dinv[:, None] * dinv[None, :]
    i, j = np.nonzero(np.triu(np.abs(partial) > threshold, k=1))
    W = np.zeros((len(i), X.shape[1]))
    rows = np.arange(len(i))
    W[rows, keep[i]] = 1.0
    W[rows, keep[j]] = -1.0
    return W


# ---------------------------------------------------------------------- reference solver
def _solve_reference(p: Problem) -> Optimum:
    """High-precision optimum. Smooth problems: L-BFGS; ℓ1: L-BFGS-B on x = u − v, u, v ≥ 0;
    fused: the same split on the epigraph ``Ax = s − t``, solved as a smooth bound-constrained
    problem in the dual-free variables ``(x, s, t)`` by an augmented-Lagrangian loop."""
    d = p.d
    opts = {"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-12, "maxcor": 30}
    if p.regularizer == "l2":
        res = scipy.optimize.minimize(
            lambda x: (p.objective(x), p.gradient(x) + p.lam * x), np.zeros(d), jac=True, method="L-BFGS-B",
            options=opts)
        return Optimum(res.x, float(p.objective(res.x)))
    if p.regularizer == "l1":
        def fun(uv):
            x = uv[:d] - uv[d:]
            g = p.gradient(x)
            return p.data_loss(x) + p.lam * uv.sum(), np.concatenate([g + p.lam, -g + p.lam])

        res = scipy.optimize.minimize(fun, np.zeros(2 * d), jac=True, method="L-BFGS-B",
                                      bounds=[(0, None)] * (2 * d), options=opts)
        x = res.x[:d] - res.x[d:]
        return Optimum(x, float(p.objective(x)))
    return _solve_fused(p)


def _solve_fused(p: Problem) -> Optimum:
    """Fused penalty: ADMM with exact (Newton) x-updates run to machine precision.

    ``min f(x) + λ‖y‖₁ s.t. Ax = y``. The x-subproblem ``f(x) + ρ/2‖Ax − y + u‖²`` is smooth and
    strongly convex; each is solved by Newton's method. The loop stops when primal and dual
    residuals fall below 1e-11.
    """
    A = p.constraint_matrix
    AtA = A.T @ A
    rho = 1.0
    x = np.zeros(p.d)
    y = A @ x
    u = np.zeros(A.shape[0])
    for _ in range(20000):
        for _ in range(50):  # Newton on f(x) + ρ/2‖Ax − y + u‖²
            g = p.gradient(x) + rho * A.T @ (A @ x - y + u)
            z = p.X @ x
            s = expit(z) * expit(-z)
            H = (p.X.T * s) @ p.X / p.n + rho * AtA
            step = np.linalg.solve(H, g)
            x = x - step
            if np.linalg.norm(step) < 1e-14 * (1 + np.linalg.norm(x)):
                break
        y_old = y
        y = soft_threshold(A @ x + u, p.lam / rho)
        u = u + A @ x - y
        r, s_ = np.linalg.norm(A @ x - y), rho * np.linalg.norm(A.T @ (y - y_old))
        if r < 1e-11 and s_ < 1e-11:
            break
    return Optimum(x, float(p.objective(x)))


# ---------------------------------------------------------------------- agents
@dataclass(eq=False)
class Agents:
    """A problem's training data dealt to ``N`` agents, stacked for vectorised updates.

    Agent ``i`` holds ``sizes[i]`` samples, stored in ``X[i, :sizes[i]]`` (rows past that are
    zero padding, ``mask`` is False there). Local losses are means over each agent's own data.
    """

    problem: Problem
    X: np.ndarray  # (N, m_max, d)
    y: np.ndarray  # (N, m_max)
    mask: np.ndarray  # (N, m_max) bool
    sizes: np.ndarray  # (N,)

    @property
    def n_agents(self) -> int:
        return self.X.shape[0]

    def margins(self, W) -> np.ndarray:
        """``a_j · w_i`` for every sample j of every agent i: shape (N, m_max)."""
        return np.matmul(self.X, np.asarray(W)[:, :, None])[:, :, 0]

    def loss(self, W) -> np.ndarray:
        """Mean local loss of each agent at its own model ``W[i]``: shape (N,)."""
        ell = self.problem._loss_of_margin(self.margins(W), self.y)
        return (ell * self.mask).sum(axis=1) / self.sizes

    def gradient(self, W) -> np.ndarray:
        """Mean local gradient of each agent at its own model ``W[i]``: shape (N, d)."""
        r = self.problem._dloss_of_margin(self.margins(W), self.y) * self.mask
        return np.matmul(r[:, None, :], self.X)[:, 0, :] / self.sizes[:, None]


def make_agents(problem: Problem, owner) -> Agents:
    """Stack a problem's training data by agent; ``owner[j]`` is the agent that holds sample j."""
    owner = np.asarray(owner)
    if owner.shape != (problem.n,):
        raise ValueError(f"owner must have one entry per sample ({problem.n}), got shape {owner.shape}")
    n_agents = int(owner.max()) + 1
    sizes = np.bincount(owner, minlength=n_agents)
    if np.any(sizes == 0):
        raise ValueError("every agent must hold at least one sample")
    order = np.argsort(owner, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    slot = np.arange(problem.n) - np.repeat(starts, sizes)  # position of each sorted sample in its block
    m_max = int(sizes.max())
    X = np.zeros((n_agents, m_max, problem.d))
    y = np.zeros((n_agents, m_max))
    mask = np.zeros((n_agents, m_max), bool)
    agent = owner[order]
    X[agent, slot] = problem.X[order]
    y[agent, slot] = problem.y[order]
    mask[agent, slot] = True
    return Agents(problem, X, y, mask, sizes)
