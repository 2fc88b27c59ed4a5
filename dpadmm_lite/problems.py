"""The optimisation problems of the five papers: losses, regularisers, constants, optimum.

A :class:`Problem` is ``min_x F(x) = (1/n) Σ_j ℓ(x; a_j, b_j) + λ r(x)`` with

* ``loss="squared"``: ``ℓ = ½ (a·x − b)²`` (Lasso, as in Cyffers et al. and scikit-learn);
* ``loss="logistic"``: ``ℓ = log(1 + exp(−b a·x))`` with labels ``b ∈ {−1, +1}``;

and ``r`` one of ``"l1"`` (‖x‖₁), ``"l2"`` (½‖x‖²) or ``"fused"`` (‖Ax‖₁ with the
graph-guided fused-lasso matrix ``A = [W; I]``). The ADMM form used by Xu et al. and Liu et al.
is ``min f(x) + g(y) s.t. Ax + By = c`` with ``B = −I``, ``c = 0`` and ``g = λ r̃`` the
regulariser applied to ``y`` (``A = I`` for "l1"/"l2").

Losses, gradients and objectives are vectorised over leading axes of ``x``: pass one model ``(d,)``, a stack of
iterates ``(T, d)`` or one model per agent ``(N, d)``.

**Counted work.** Inside :func:`counting` (which :func:`dpadmm_lite.run` opens around every run and
stores in ``Trace.work``), the products an algorithm computes with the training data are counted:
every product of a data block with a vector (``X w`` or ``Xᵀ r``, for one agent's block or all of
them) adds the rows it reads; every factorization or inversion of a ``d × d`` matrix and every
linear solve with one is counted per matrix (per agent). :meth:`Problem.gradient`,
:meth:`Problem.per_example_gradients`, :meth:`Problem.hessian`, the products of :class:`Agents` and
the star network's stacked products count themselves; evaluation (objectives, accuracy, the
reference optimum) runs under :func:`paused` and is not the algorithm's work. The counts depend on
the run's arithmetic only, never on the machine's load.
"""

from __future__ import annotations

import functools
import hashlib
import warnings
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from scipy.special import expit

from . import _products
from . import _validate as check
from ._products import models_times_rows as models_times_rows
from ._products import rows_times as rows_times
from ._products import times_rows as times_rows
from ._reference import Optimum as Optimum
from ._reference import _abs_barrier as _abs_barrier
from ._reference import _single_threaded_blas, _solve_reference
from ._reference import _solve_psd as _solve_psd
from ._work import WORK_KINDS as WORK_KINDS
from ._work import count_work, paused
from ._work import counting as counting
from ._work import work_summary as work_summary

LOSSES = ("squared", "logistic")
REGULARIZERS = ("l1", "l2", "fused")


def _models(x) -> int:
    """How many models a stack ``x`` (…, d) holds."""
    x = np.asarray(x)
    return 1 if x.ndim <= 1 else int(np.prod(x.shape[:-1]))


@dataclass(eq=False)
class Problem:
    """A regularised empirical-risk problem with its ADMM splitting.

    Parameters
    ----------
    X : array_like of float
        The training records, shape ``(n, d)``, finite, n ≥ 1.
    y : array_like of float
        The training labels, shape ``(n,)``, finite; −1 and +1 for the logistic loss.
    lam : float
        λ, the weight of the regulariser, ≥ 0 and finite.
    loss : {"squared", "logistic"}
        The data loss.
    regularizer : {"l1", "l2", "fused"}
        ``‖x‖₁``, ``½‖x‖²`` or ``‖Ax‖₁``.
    A : array_like of float, optional
        The constraint matrix of the fused regularizer, ``(m, d)``, finite; required for ``"fused"``.
    X_test : array_like of float, optional
        Test records, shape ``(n_test, d)``; given together with ``y_test``.
    y_test : array_like of float, optional
        Test labels, shape ``(n_test,)``.
    name : str, default ""
        The problem's name.
    feature_bound : float, default 1.0
        The public bound on one record's norm ‖a_j‖ that private algorithms use for their
        sensitivities, > 0 and finite.
    data_dependence : str, default ""
        What was computed from the training rows beyond the ledger (``""``: nothing).
    _optimum : Optimum, optional
        A known reference optimum (internal: the cache of :meth:`reference_optimum`).

    Notes
    -----
    Build one with :func:`lasso`, :func:`logistic` or :func:`graph_guided_fused_lasso`.

    Everything but the training rows ``X, y`` is public: λ, ``A``, the test split and the
    declared ``feature_bound``. ``data_dependence`` says what, if anything, was nevertheless
    computed from the training rows (``""``: nothing) — e.g. the fused-lasso graph of
    :func:`graph_guided_fused_lasso` without a public ``W``. No ledger records that, so every
    private run on such a problem reports its privacy as *not covered* (ε = ∞, the reason given).
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
    feature_bound: float = 1.0
    data_dependence: str = ""
    _optimum: Optimum | None = field(default=None, repr=False)

    def __post_init__(self):
        self.X = check.finite_array("X", self.X, ndim=2)
        self.y = check.finite_array("y", self.y, ndim=1)
        if self.X.shape[0] != self.y.shape[0]:
            raise ValueError(f"X and y must have the same number of rows, got {self.X.shape[0]} and {self.y.shape[0]}")
        if self.X.shape[0] < 1:
            raise ValueError("X must have at least one row")
        self.lam = check.nonnegative("lam", self.lam)
        self.feature_bound = check.positive("feature_bound", self.feature_bound)
        if not isinstance(self.data_dependence, str):
            raise TypeError(f"data_dependence must be a string (what was read from the training rows, '' for "
                            f"nothing), got {self.data_dependence!r}")
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
        # log(1 + e^{−u}) = log1p(e^{−|u|}) − min(u, 0): stable, faster than logaddexp, and computed in place
        # (two temporary arrays instead of seven, the same bits)
        u = np.asarray(np.multiply(b, z, dtype=float))  # an array even for one margin (0-d)
        ell = np.abs(u, out=np.empty_like(u))
        np.negative(ell, out=ell)
        np.exp(ell, out=ell)
        np.log1p(ell, out=ell)
        np.minimum(u, 0.0, out=u)
        ell -= u
        return ell

    def _dloss_of_margin(self, z, b):
        """dℓ/dz at z = a·x, so that ∇ℓ = dℓ/dz · a."""
        if self.loss == "squared":
            return z - b
        return -b * expit(-b * z)

    def data_loss(self, x, X=None, y=None) -> np.ndarray:
        """Mean loss ``f(x) = (1/n) Σ ℓ(x; a_j, b_j)``; vectorised over leading axes of ``x``."""
        X, y = (self.X, self.y) if X is None else (X, y)
        x = np.asarray(x)
        if self.loss == "squared" and _products.squared_loss_by_moments_pays(x, X):
            return _products.squared_loss_by_moments(x, X, y)
        return _per_model(x, X, lambda z: self._loss_of_margin(z, y).mean(axis=-1))

    def gradient(self, x) -> np.ndarray:
        """Mean gradient ``∇f(x)``, same shape as ``x`` (two passes over the data per model: ``Xx``, ``Xᵀr``)."""
        count_work(rows=2 * self.n * _models(x))
        z = np.asarray(x) @ self.X.T
        return self._dloss_of_margin(z, self.y) @ self.X / self.n

    def per_example_gradients(self, x, idx=None) -> np.ndarray:
        """Gradients of single examples at one model ``x`` (d,): shape ``(len(idx), d)``."""
        X, y = (self.X, self.y) if idx is None else (self.X[idx], self.y[idx])
        count_work(rows=2 * X.shape[0])  # the margins, then every row scaled
        return self._dloss_of_margin(X @ np.asarray(x), y)[:, None] * X

    def _curvature_of_margin(self, z):
        """d²ℓ/dz² at z = a·x: 1 (squared) or σ(z)σ(−z) (logistic, for either label)."""
        if self.loss == "squared":
            return np.ones_like(z)
        return expit(z) * expit(-z)

    def hessian(self, x, *, margins=None) -> np.ndarray:
        """Hessian ``∇²f(x) = (1/n) Xᵀ diag(ℓ''(a_j·x)) X`` of the mean loss at one model: (d, d).

        The squared loss's Hessian ``XᵀX/n`` does not depend on ``x`` and is computed once.
        """
        if self.loss == "squared":
            return self._gram  # formed once per problem: no pass of this run's
        count_work(rows=self.n * (1 if margins is not None else 2))
        z = rows_times(self.X, np.asarray(x, float)) if margins is None else margins
        return _products.weighted_gram(self.X, self._curvature_of_margin(z) / self.n)

    @cached_property
    def _gram(self) -> np.ndarray:
        return self.X.T @ self.X / self.n

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
    def constraint_products(self):
        """``A`` for the iterations' products ``A @ x`` and ``A.T @ v`` (one vector each): the matrix
        itself, except in the browser, where numpy's dense product has no BLAS and a sparse ``A`` (the
        fused lasso's ``[W; I]``, the identity) is multiplied by its non-zeros
        (:func:`dpadmm_lite._products.constraint_products`)."""
        return _products.constraint_products(self.constraint_matrix)

    @cached_property
    def constraint_pinv_T(self) -> np.ndarray:
        """``(Aᵀ)^†``, the Moore–Penrose pseudo-inverse of ``Aᵀ``, computed once per problem: the
        linearized ADMMs start their dual at ``u₀ = −(1/ρ)(Aᵀ)^†∇f(x₀)`` (Xu et al., Liu et al.)."""
        return np.linalg.pinv(self.constraint_matrix.T)

    @cached_property
    def norm_AtA(self) -> float:
        """``‖AᵀA‖₂``, the largest eigenvalue, for the linearised step condition."""
        A = self.constraint_matrix
        return float(np.linalg.norm(A, 2) ** 2)

    # ------------------------------------------------------------------ constants
    @cached_property
    def max_row_norm(self) -> float:
        """``max_j ‖a_j‖₂`` of the training rows: read from the data, so never a privacy constant
        (it only checks the rows against the public :attr:`feature_bound`)."""
        return float(np.sqrt((self.X**2).sum(axis=1).max()))

    def check_feature_bound(self, algorithm: str) -> None:
        """Refuse a private run on rows beyond the declared public bound on one record's norm.

        Every sensitivity in the library is computed from :attr:`feature_bound` (a public
        number, 1 for every dataset the book ships: rows scaled to ‖a_j‖ ≤ 1), never from the
        data. A record beyond it would not be covered by the guarantee, so a private algorithm
        calls this first (or clips per example, where the paper clips).
        """
        if self.max_row_norm > self.feature_bound * (1 + 1e-9):
            raise ValueError(
                f"feature_bound: the private {algorithm!r} assumes every record has ‖a_j‖ ≤ feature_bound = "
                f"{self.feature_bound:g} (a public bound that its sensitivity uses), but a training row has norm "
                f"{self.max_row_norm:.4g}; scale or clip the rows (dl.datasets.rows_to_unit_ball) or declare a larger "
                f"public feature_bound")

    @property
    def lipschitz(self) -> float:
        """Public per-example gradient bound ``c ≥ ‖∇ℓ(x; a_j, b_j)‖`` for every x and every record.

        Logistic loss: ``|ℓ'| ≤ 1`` and ``‖a_j‖ ≤ feature_bound``, so ``c = feature_bound`` — from
        the declared public bound, never from the data. The squared loss has unbounded gradients;
        algorithms for it clip (Cyffers et al.), and this returns ``inf``.
        """
        return self.feature_bound if self.loss == "logistic" else np.inf

    @cached_property
    def smoothness(self) -> float:
        """Smoothness constant of the mean loss: ``‖XᵀX‖₂ / n`` (squared) or ``/4n`` (logistic).

        Read from the training data (tight, for the non-private step sizes). A step size that
        enters a privacy argument uses :attr:`per_example_smoothness` or :attr:`public_smoothness`.
        """
        s = np.linalg.norm(self.X, 2) ** 2 / self.n
        return float(s / 4 if self.loss == "logistic" else s)

    @property
    def public_smoothness(self) -> float:
        """Public bound on the smoothness of the mean loss: ``feature_bound²`` (squared) or ``/4``
        (logistic), since ``‖XᵀX‖₂/n ≤ max_j ‖a_j‖²``."""
        return self.per_example_smoothness

    @property
    def per_example_smoothness(self) -> float:
        """Public smoothness of one example's loss: ``feature_bound²`` (squared) or ``/4`` (logistic)."""
        s = self.feature_bound**2
        return s / 4 if self.loss == "logistic" else s

    # ------------------------------------------------------------------ evaluation
    def accuracy(self, x, X=None, y=None) -> np.ndarray | None:
        """Classification accuracy ``mean(sign(a·x) == b)`` on the test split (default)."""
        if self.loss != "logistic":
            return None
        X, y = (self.X_test, self.y_test) if X is None else (X, y)
        if X is None:
            return None
        return _per_model(x, X, lambda z: (np.where(z >= 0, 1.0, -1.0) == y).mean(axis=-1))

    def test_loss(self, x) -> np.ndarray | None:
        """Mean loss on the test split (Cyffers et al.'s "test objective" without the penalty)."""
        if self.X_test is None:
            return None
        return self.data_loss(x, self.X_test, self.y_test)

    def reference_optimum(self) -> Optimum:
        """The high-precision non-private optimum, computed once and cached (in the browser, read from
        :data:`SHIPPED_OPTIMA` when the problem is one of the live panels')."""
        if self._optimum is None:
            with paused():  # measuring, not an algorithm's work
                self._optimum = shipped_optimum(self) or _solve_reference(self)
        return self._optimum

    def with_data(self, X, y) -> "Problem":
        """The same problem (loss, regulariser, λ, A, test split, ``data_dependence``) on other training data.

        ``A`` is kept as it is: a graph estimated from the original rows stays marked as read from
        private data (``data_dependence``), whatever rows it is now paired with."""
        return Problem(X, y, self.lam, self.loss, self.regularizer, self.A, self.X_test, self.y_test, self.name,
                       self.feature_bound, self.data_dependence)


#: Margins formed at once when many models are evaluated (a run's T iterates on n records): a
#: block of at most this many keeps the temporaries small (8 MB) instead of T·n at once, which
#: for T = 500 on Adult's 40,000 records cost seconds of fresh memory on every redraw.
_MARGIN_BLOCK = 1 << 20


def _per_model(x, X, reduce):
    """``reduce(x @ Xᵀ)`` over the last axis, for one model (d,) or a stack (..., d), in blocks
    of models whose margins hold at most ``_MARGIN_BLOCK`` numbers."""
    x = np.asarray(x)
    if x.ndim < 2:
        return reduce(_products.model_times_rows(x, X))
    flat = x.reshape(-1, x.shape[-1])
    rows = max(1, _MARGIN_BLOCK // max(X.shape[0], 1))
    if len(flat) <= rows:
        return reduce(models_times_rows(flat, X)).reshape(x.shape[:-1])
    out = np.empty(len(flat))
    for start in range(0, len(flat), rows):  # blocks of iterates (never of agents or records)
        out[start:start + rows] = reduce(models_times_rows(flat[start:start + rows], X))
    return out.reshape(x.shape[:-1])


def soft_threshold(v, t):
    """``sign(v) · max(|v| − t, 0)``, the prox of ``t‖·‖₁``.

    Parameters
    ----------
    v : array_like of float
        The point.
    t : float or array_like of float
        The threshold, ≥ 0.

    Returns
    -------
    numpy.ndarray
        ``sign(v) · max(|v| − t, 0)``.
    """
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)


# ---------------------------------------------------------------------- constructors
def lasso(X, y, lam: float, *, X_test=None, y_test=None, feature_bound: float = 1.0) -> Problem:
    """Lasso: ``(1/2n)‖Xx − y‖² + λ‖x‖₁`` (scikit-learn's ``Lasso(alpha=lam)`` objective).

    ``feature_bound`` is the public bound on one record's norm ‖a_j‖ that private algorithms
    use for their sensitivities (1: every dataset the book ships has rows of norm ≤ 1).

    Parameters
    ----------
    X : array_like of float
        The training records, shape ``(n, d)``, finite, n ≥ 1.
    y : array_like of float
        The training labels, shape ``(n,)``, finite.
    lam : float
        λ, > 0 and finite.
    X_test : array_like of float, optional
        Test records, shape ``(n_test, d)``; given together with ``y_test``.
    y_test : array_like of float, optional
        Test labels, shape ``(n_test,)``.
    feature_bound : float, default 1.0
        The public bound on one record's norm ‖a_j‖ that private algorithms use for their
        sensitivities, > 0 and finite.

    Returns
    -------
    Problem
        The problem (``loss="squared"``, ``regularizer="l1"``).

    Examples
    --------
    >>> from dpadmm_lite import problems
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 3)) / 2
    >>> p = problems.lasso(X, X @ np.array([1.0, 0.0, -2.0]), 0.1)
    >>> x = p.reference_optimum().x
    >>> round(float(x[0]), 2), round(float(x[2]), 2), bool(abs(x[1]) < 1e-8)  # the zero weight stays zero
    (0.63, -1.45, True)
    """
    return Problem(X, y, check.positive("lam", lam), "squared", "l1", X_test=X_test, y_test=y_test, name="lasso",
                   feature_bound=feature_bound)


def logistic(X, y, lam: float, penalty: str = "l2", *, X_test=None, y_test=None,
             feature_bound: float = 1.0) -> Problem:
    """Logistic regression ``(1/n)Σ log(1+exp(−b a·x)) + λ r(x)``, ``r = ‖x‖₁`` or ``½‖x‖²``.

    ``feature_bound`` is the public bound on one record's norm ‖a_j‖ (see :func:`lasso`).

    Parameters
    ----------
    X : array_like of float
        The training records, shape ``(n, d)``, finite, n ≥ 1.
    y : array_like of float
        The training labels, shape ``(n,)``, finite: −1 and +1.
    lam : float
        λ, > 0 and finite.
    penalty : {"l2", "l1"}, default "l2"
        ``½‖x‖²`` or ``‖x‖₁``.
    X_test : array_like of float, optional
        Test records, shape ``(n_test, d)``; given together with ``y_test``.
    y_test : array_like of float, optional
        Test labels, shape ``(n_test,)``.
    feature_bound : float, default 1.0
        The public bound on one record's norm ‖a_j‖ that private algorithms use for their
        sensitivities, > 0 and finite.

    Returns
    -------
    Problem
        The problem, named ``"logistic-l2"`` or ``"logistic-l1"``.

    Examples
    --------
    >>> from dpadmm_lite import problems
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 3)) / 2
    >>> y = np.where(X @ np.array([1.0, -1.0, 0.5]) > 0, 1.0, -1.0)
    >>> p = problems.logistic(X, y, 0.01)
    >>> p.n, p.d, p.name
    (50, 3, 'logistic-l2')
    >>> round(float(p.objective(np.zeros(3))), 6)  # log 2 at the zero model
    0.693147
    >>> bool(p.reference_optimum().value < p.objective(np.zeros(3)))
    True
    """
    check.choice("penalty", penalty, ("l1", "l2"))
    return Problem(X, y, check.positive("lam", lam), "logistic", penalty, X_test=X_test, y_test=y_test,
                   name=f"logistic-{penalty}", feature_bound=feature_bound)


def graph_guided_fused_lasso(X, y, lam: float, *, W=None, public_features=None, graph_threshold: float = 0.0,
                             sparsity: float = 0.1, graph_matrix: str = "incidence", X_test=None,
                             y_test=None, feature_bound: float = 1.0) -> Problem:
    """Graph-guided fused lasso with logistic loss: ``f(x) + λ‖Ax‖₁``, ``A = [W; I]``.

    Parameters
    ----------
    X : array_like of float
        The training records, shape ``(n, d)``, finite, n ≥ 1.
    y : array_like of float
        The training labels, shape ``(n,)``, finite: −1 and +1.
    lam : float
        λ, > 0 and finite.
    W : array_like of float, optional
        A public graph matrix ``(rows, d)``; not together with ``public_features``.
    public_features : array_like of float, optional
        The features of a public sample with the columns of ``X``, to estimate the graph from.
    graph_threshold : float, default 0.0
        Keep only edges whose partial correlation exceeds this in absolute value, ≥ 0.
    sparsity : float, default 0.1
        The graphical lasso's ℓ1 penalty, > 0 and finite.
    graph_matrix : {"incidence", "pattern"}, default "incidence"
        How the graph becomes the matrix W.
    X_test : array_like of float, optional
        Test records, shape ``(n_test, d)``; given together with ``y_test``.
    y_test : array_like of float, optional
        Test labels, shape ``(n_test,)``.
    feature_bound : float, default 1.0
        The public bound on one record's norm ‖a_j‖ that private algorithms use for their
        sensitivities, > 0 and finite.

    Returns
    -------
    Problem
        The problem, with ``data_dependence`` set when the graph came from ``X``.

    Notes
    -----
    Xu et al. (2020), Sec. V-A, eq. (11), and Liu et al. (2022), Sec. V-A: "We set A = [W; I]
    …, where W is the sparsity pattern of the graph obtained by sparse inverse covariance
    selection [Banerjee, El Ghaoui & d'Aspremont 2008]". Neither paper gives the estimator's
    penalty or how the pattern becomes a matrix, so this is what we chose:

    * the graph: the support (exact non-zeros) of the graphical-lasso estimate of the
      precision matrix of the standardised features — the ℓ1-penalised maximum-likelihood
      "sparse inverse covariance selection" of the cited paper — with penalty ``sparsity``
      (default 0.1: about two edges per feature on Adult). ``graph_threshold > 0`` further
      keeps only edges whose partial correlation exceeds it in absolute value;
    * the matrix (``graph_matrix="incidence"``, default): one row per edge (i, j) with ``+1``
      at i and ``−1`` at j, so ``‖Wx‖₁ = Σ_edges |x_i − x_j|``, the fusion penalty of the
      graph-guided fused lasso (Kim, Sohn & Xing 2009) that gives the problem its name;
    * ``graph_matrix="pattern"`` is the literal reading: W is the 0/1 ``d × d`` adjacency of the
      graph, so ``‖Wx‖₁ = Σ_i |Σ_{j ~ i} x_j|``.

    **Where the graph comes from.** A enters every update and γ of the private algorithms, so it
    must not depend on the records they protect: one replaced training row can add or remove
    edges. Pass ``W`` (any ``(rows, d)`` matrix, e.g. from domain knowledge) or
    ``public_features`` (the features of a *public* sample of the same kind, never the training
    rows: the graph is estimated there). With neither, the graph is estimated from the training
    rows ``X``, as the papers do; the problem then says so in ``data_dependence`` and every
    private run on it reports its privacy as not covered (ε = ∞). The feature graph of the same
    features is cached, so rebuilding the problem (e.g. for a new λ) is cheap.
    """
    X = check.finite_array("X", X, ndim=2)
    A, dependence = fused_constraint(X, W=W, public_features=public_features, sparsity=sparsity,
                                     threshold=graph_threshold, form=graph_matrix)
    return Problem(X, y, check.positive("lam", lam), "logistic", "fused", A=A, X_test=X_test, y_test=y_test,
                   name="graph-guided fused lasso", feature_bound=feature_bound, data_dependence=dependence)


#: ``Problem.data_dependence`` of a fused-lasso problem whose graph was estimated from its training rows.
GRAPH_FROM_TRAINING_ROWS = ("the fused-lasso graph W (A = [W; I]) was estimated from the private training rows; "
                            "pass W or public_features to build it from public data")


def fused_constraint(X, *, W=None, public_features=None, sparsity: float = 0.1, threshold: float = 0.0,
                     form: str = "incidence") -> tuple[np.ndarray, str]:
    """``A = [W; I]`` of the graph-guided fused lasso on the features of ``X``, and its data dependence.

    Parameters
    ----------
    X : array_like of float
        The training records, shape ``(n, d)``.
    W : array_like of float, optional
        A public graph matrix with d columns, finite; not together with ``public_features``.
    public_features : array_like of float, optional
        A public sample with the columns of ``X`` to estimate the graph from.
    sparsity : float, default 0.1
        The graphical lasso's ℓ1 penalty on the off-diagonal precision entries, > 0 and finite.
    threshold : float, default 0.0
        Keep only edges whose partial correlation exceeds this in absolute value, ≥ 0 (0 keeps the
        whole sparsity pattern).
    form : {"incidence", "pattern"}, default "incidence"
        ``"incidence"``: one row ``e_i − e_j`` per edge; ``"pattern"``: the 0/1 ``d × d`` adjacency.

    Returns
    -------
    A : numpy.ndarray
        ``[W; I]``, shape ``(rows + d, d)``.
    data_dependence : str
        :data:`GRAPH_FROM_TRAINING_ROWS` when W was estimated from ``X``, else ``""``.

    Notes
    -----
    ``W`` given: used as it is (public). ``public_features`` given (a public sample with the same
    columns as ``X``): W is :func:`feature_graph` of it. Neither: W is the feature graph of the
    training rows ``X`` themselves, and the second value is :data:`GRAPH_FROM_TRAINING_ROWS`
    (``""`` otherwise), for ``Problem.data_dependence``.
    """
    if W is not None and public_features is not None:
        raise ValueError("W and public_features must not both be given: W is the graph, public_features the public "
                         "sample to estimate it from")
    dependence = ""
    if W is None:
        if public_features is None:
            source, dependence = X, GRAPH_FROM_TRAINING_ROWS
        else:
            source = check.finite_array("public_features", public_features, ndim=2)
            if source.shape[1] != X.shape[1]:
                raise ValueError(f"public_features must have {X.shape[1]} columns (one per feature), got shape "
                                 f"{source.shape}")
        W = feature_graph(source, sparsity=sparsity, threshold=threshold, form=form)
    W = check.finite_array("W", W, ndim=2)
    if W.shape[1] != X.shape[1]:
        raise ValueError(f"W must have {X.shape[1]} columns (one per feature), got shape {W.shape}")
    return np.vstack([W, np.eye(X.shape[1])]), dependence


_GRAPH_CACHE: dict = {}


def feature_graph(X, *, sparsity: float = 0.1, threshold: float = 0.0, form: str = "incidence") -> np.ndarray:
    """The sparse inverse-covariance graph of the columns of ``X``, as a matrix W.

    Parameters
    ----------
    X : array_like of float
        The records whose columns are the graph's nodes, shape ``(n, d)``, finite.
    sparsity : float, default 0.1
        The graphical lasso's ℓ1 penalty on the off-diagonal precision entries, > 0 and finite.
    threshold : float, default 0.0
        Keep only edges whose partial correlation exceeds this in absolute value, ≥ 0 (0 keeps the
        whole sparsity pattern).
    form : {"incidence", "pattern"}, default "incidence"
        ``"incidence"``: one row ``e_i − e_j`` per edge; ``"pattern"``: the 0/1 ``d × d`` adjacency.

    Returns
    -------
    W : ndarray
        ``form="incidence"``: ``(E, d)`` with rows ``e_i − e_j``, one per edge;
        ``form="pattern"``: ``(d, d)`` symmetric 0/1 adjacency.

    Notes
    -----
    Steps: standardise the non-constant columns; estimate the precision matrix by the
    graphical lasso (:func:`sklearn.covariance.graphical_lasso`, ℓ1 penalty ``sparsity`` on the
    off-diagonal entries, i.e. Banerjee et al.'s sparse inverse covariance selection); edges are
    the pairs (i < j) with a non-zero entry whose partial correlation
    ``|−Θ_ij / √(Θ_ii Θ_jj)|`` exceeds ``threshold`` (0 keeps the whole sparsity pattern).
    """
    from sklearn.covariance import graphical_lasso

    X = check.finite_array("X", X, ndim=2)
    sparsity = check.positive("sparsity", sparsity)
    threshold = check.nonnegative("threshold", threshold)
    check.choice("form", form, ("incidence", "pattern"))
    key = (hashlib.sha1(np.ascontiguousarray(X).view(np.uint8)).hexdigest(), X.shape, sparsity, threshold, form)
    if key in _GRAPH_CACHE:
        return _GRAPH_CACHE[key].copy()
    d = X.shape[1]
    scale = X.std(axis=0)
    keep = np.flatnonzero(scale > 1e-12 * max(1.0, float(np.abs(X).max())))
    Z = (X[:, keep] - X[:, keep].mean(axis=0)) / scale[keep]
    corr = Z.T @ Z / X.shape[0]
    edges_i = edges_j = np.zeros(0, int)
    if len(keep) > 1:
        try:
            with warnings.catch_warnings(), _single_threaded_blas():
                warnings.simplefilter("ignore")  # sklearn's convergence chatter; the pattern is what we use
                _, precision = graphical_lasso(corr, alpha=sparsity, max_iter=500)
        except FloatingPointError as err:
            raise ValueError(f"sparsity={sparsity:g} is too small for these features (the graphical lasso "
                             f"failed: {err}); increase it") from err
        dinv = 1.0 / np.sqrt(np.diag(precision))
        partial = -precision * dinv[:, None] * dinv[None, :]
        i, j = np.nonzero(np.triu((precision != 0) & (np.abs(partial) > threshold), k=1))
        edges_i, edges_j = keep[i], keep[j]
    if form == "pattern":
        W = np.zeros((d, d))
        W[edges_i, edges_j] = W[edges_j, edges_i] = 1.0
    else:
        W = np.zeros((len(edges_i), d))
        rows = np.arange(len(edges_i))
        W[rows, edges_i] = 1.0
        W[rows, edges_j] = -1.0
    if len(_GRAPH_CACHE) > 16:
        _GRAPH_CACHE.clear()
    _GRAPH_CACHE[key] = W
    return W.copy()


# ---------------------------------------------------------------------- reference optima
#: The reference optima of the site's live panels' problems, solved natively by :func:`_solve_reference` (or the
#: strongly convex problem's solver) and shipped with the library (``python -m dpadmm_book.live._optima`` rewrites
#: it). In the browser solving one would take most of a panel's first run (Huang et al.'s 40,000 Adult rows, the
#: fused lasso of Xu et al. and Liu et al.), and most of the first switch to ℓ1 on Huang et al.'s panel.
SHIPPED_OPTIMA = "data/reference_optima.npz"


def fingerprint(p: Problem) -> tuple[dict, np.ndarray]:
    """What identifies a problem's optimum: its kind, sizes and λ exactly, its data by sums — the column sums of
    the training rows, ``yᵀX`` and the column sums of ``A``, as one vector (compared to a relative 1e-10).

    Parameters
    ----------
    p : Problem
        The problem.

    Returns
    -------
    exact : dict
        Kind, loss, regularizer, λ, ridge, n, d and the shape of ``A``.
    sums : numpy.ndarray
        The column sums of ``X``, ``yᵀX`` and the column sums of ``A``, as one vector.
    """
    X, y, A = np.asarray(p.X, float), np.asarray(p.y, float), np.asarray(p.constraint_matrix, float)
    exact = {"kind": type(p).__name__, "loss": p.loss, "regularizer": p.regularizer, "lam": float(p.lam),
             "ridge": float(getattr(p, "ridge", 0.0)), "n": int(p.n), "d": int(p.d), "A": list(A.shape)}
    return exact, np.concatenate([X.sum(axis=0), y @ X, A.sum(axis=0)])


@functools.lru_cache(maxsize=1)
def _shipped_optima() -> list[tuple[dict, np.ndarray, Optimum]]:
    import json
    from importlib import resources

    with resources.files("dpadmm_lite").joinpath(SHIPPED_OPTIMA).open("rb") as fh, np.load(fh) as z:
        out = []
        for i, entry in enumerate(json.loads(str(z["entries"]))):
            optimum = Optimum(z[f"x{i}"].copy(), entry["value"], entry["iterations"], entry["residual"], entry["hessians"])
            out.append((entry["problem"], z[f"sums{i}"].copy(), optimum))
        return out


def shipped_optimum(p: Problem, browser: bool = _products.BROWSER) -> Optimum | None:
    """The optimum of ``p`` from :data:`SHIPPED_OPTIMA` when it holds ``p`` (by :func:`fingerprint`) and we run in
    the browser (natively the solver runs); otherwise None.

    Parameters
    ----------
    p : Problem
        The problem.
    browser : bool, default whether the library runs in the browser
        Whether we run in the browser (``dpadmm_lite._products.BROWSER`` at import); natively the
        answer is None.

    Returns
    -------
    Optimum or None
        A fresh copy of the shipped optimum, or None.
    """
    if not browser:
        return None
    exact, sums = fingerprint(p)
    for problem, shipped_sums, optimum in _shipped_optima():
        if problem == exact and np.allclose(sums, shipped_sums, rtol=1e-10, atol=1e-12):
            return Optimum(optimum.x.copy(), optimum.value, optimum.iterations, optimum.residual, optimum.hessians)
    return None


# ---------------------------------------------------------------------- agents
@dataclass(eq=False)
class Agents:
    """A problem's training data dealt to ``N`` agents, stacked for vectorised updates.

    Agent ``i`` holds ``sizes[i]`` samples, stored in ``X[i, :sizes[i]]`` (rows past that are
    zero padding, ``mask`` is False there). Local losses are means over each agent's own data.

    Parameters
    ----------
    problem : Problem
        The problem whose training data is dealt.
    X : numpy.ndarray
        The agents' records, shape ``(N, m_max, d)``, zero past each agent's ``sizes[i]`` rows.
    y : numpy.ndarray
        The agents' labels, shape ``(N, m_max)``.
    mask : numpy.ndarray
        Which rows are records (True) and which padding, shape ``(N, m_max)``, bool.
    sizes : numpy.ndarray
        Number of records of each agent, shape ``(N,)``.
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
        count_work(rows=self.problem.n)
        return np.matmul(self.X, np.asarray(W)[:, :, None])[:, :, 0]

    def loss(self, W) -> np.ndarray:
        """Mean local loss of each agent at its own model ``W[i]``: shape (N,)."""
        ell = self.problem._loss_of_margin(self.margins(W), self.y)
        return (ell * self.mask).sum(axis=1) / self.sizes

    def gradient(self, W) -> np.ndarray:
        """Mean local gradient of each agent at its own model ``W[i]``: shape (N, d)."""
        r = self.problem._dloss_of_margin(self.margins(W), self.y) * self.mask
        count_work(rows=self.problem.n)
        return np.matmul(r[:, None, :], self.X)[:, 0, :] / self.sizes[:, None]

    def per_example_gradients(self, W) -> np.ndarray:
        """Gradient of every local example at its agent's model: shape (N, m_max, d), zero on padding."""
        r = self.problem._dloss_of_margin(self.margins(W), self.y) * self.mask
        count_work(rows=self.problem.n)
        return r[:, :, None] * self.X

    def hessian(self, W) -> np.ndarray:
        """Hessian of each agent's mean local loss at ``W[i]``: shape (N, d, d).

        For a vectorised Newton step on all agents at once, e.g.
        ``np.linalg.solve(agents.hessian(W) + c·I, g[..., None])``.
        """
        c = self.problem._curvature_of_margin(self.margins(W)) * self.mask / self.sizes[:, None]
        count_work(rows=self.problem.n)
        return np.matmul(np.swapaxes(self.X, 1, 2) * c[:, None, :], self.X)


def make_agents(problem: Problem, owner) -> Agents:
    """Stack a problem's training data by agent; ``owner[j]`` is the agent that holds sample j.

    Parameters
    ----------
    problem : Problem
        The problem whose training data is dealt.
    owner : array_like of int
        The agent (0 … N − 1) that holds each sample, shape ``(n,)``; every agent holds at least
        one sample.

    Returns
    -------
    Agents
        The stacked data.
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpadmm_lite.problems.Problem, got {type(problem).__name__}")
    owner = np.asarray(owner)
    if owner.shape != (problem.n,):
        raise ValueError(f"owner must have one entry per sample ({problem.n}), got shape {owner.shape}")
    if not np.issubdtype(owner.dtype, np.integer):
        if not (np.issubdtype(owner.dtype, np.floating) and np.all(owner == np.round(owner))):
            raise ValueError(f"owner must hold whole agent indices 0 … N−1, got dtype {owner.dtype}")
        owner = owner.astype(int)
    if owner.min() < 0:
        raise ValueError(f"owner must hold agent indices in [0, N−1], got {owner.min()}")
    n_agents = int(owner.max()) + 1
    sizes = np.bincount(owner, minlength=n_agents)
    if np.any(sizes == 0):
        raise ValueError("every agent must hold at least one sample")
    order = np.argsort(owner, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    m_max = int(sizes.max())
    # row of each sample in the flat (N·m_max) stack: its agent's block, in its order within the agent
    row = np.empty(problem.n, dtype=np.intp)
    row[order] = np.arange(problem.n) - np.repeat(starts, sizes) + np.repeat(np.arange(n_agents) * m_max, sizes)
    X = np.zeros((n_agents * m_max, problem.d))
    X[row] = problem.X  # one scatter, no sorted copy of the data (a fresh copy of Adult is tens of MB)
    y = np.zeros(n_agents * m_max)
    y[row] = problem.y
    mask = np.zeros(n_agents * m_max, bool)
    mask[row] = True
    return Agents(problem, X.reshape(n_agents, m_max, problem.d), y.reshape(n_agents, m_max),
                  mask.reshape(n_agents, m_max), sizes)
