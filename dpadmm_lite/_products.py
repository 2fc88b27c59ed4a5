"""The products with the data whose fastest form depends on where the library runs: the one place that asks.

Natively numpy's products call BLAS. In the reader's browser (Pyodide, ``sys.platform == "emscripten"``)
numpy has no BLAS and its matrix product is a plain loop, so there a mostly-zero matrix (Adult's one-hot
rows, the fused lasso's ``A = [W; I]``) is multiplied by its non-zeros and a dense one by scipy's OpenBLAS
(``gemm``, ``syrk``). Every function here holds both paths and reads :data:`BROWSER`, set once at import;
the numerics (:mod:`dpadmm_lite.problems`, :mod:`dpadmm_lite.algorithms.zhang2017`) call these functions and
never test the platform themselves. Tests emulate the browser natively by setting :data:`BROWSER`.
"""

from __future__ import annotations

import sys
import weakref

import numpy as np
import scipy.linalg.blas

#: Whether the library runs in the browser (Pyodide), where numpy has no BLAS.
BROWSER = sys.platform == "emscripten"


# ---------------------------------------------------------------------- per-array caches
_MADE: dict[tuple, tuple] = {}  # (what, id(X)) → (a weak reference to X, what was made of it)


def made_once(what: str, X: np.ndarray, make):
    """``make(X)``, made once per array (and ``what``) while the array lives: the browser's per-data caches."""
    hit = _MADE.get((what, id(X)))
    if hit is not None and hit[0]() is X:
        return hit[1]
    if len(_MADE) > 64:  # forget the arrays that are gone
        for key in [k for k, (ref, _) in _MADE.items() if ref() is None]:
            del _MADE[key]
    made = make(X)
    _MADE[(what, id(X))] = (weakref.ref(X), made)
    return made


def _sparse_pair(X: np.ndarray):
    if X.ndim != 2 or np.count_nonzero(X) > 0.3 * X.size:
        return None
    import scipy.sparse

    csr = scipy.sparse.csr_matrix(X)
    return csr, csr.T.tocsr()


def sparse_rows(X: np.ndarray):
    """``(X, Xᵀ)`` as CSR matrices when at most 30 % of ``X`` is non-zero (Adult: 12 %), else None;
    made once per array while it lives."""
    return made_once("sparse", X, _sparse_pair)


# ---------------------------------------------------------------------- a mostly-zero matrix
class SparseProducts:
    """A mostly-zero dense matrix's products with vectors, by its non-zeros: ``self @ x`` and
    ``self.T @ v`` sum the same terms as the dense product, in row order. In the browser
    numpy has no BLAS, and a small mostly-zero matrix such as Liu et al.'s ``A = [W; I]`` (370 × 104,
    6 % non-zero) is several times faster this way; natively the dense product is used. The identity
    (ℓ1/ℓ2 problems) is ``x + 0.0``: the same doubles as its one-term sums (−0.0 becomes +0.0 there
    too), at a fraction of the cost."""

    def __init__(self, M: np.ndarray, _transpose: "SparseProducts | None" = None):
        self.shape = M.shape
        rows, cols = np.nonzero(M)
        self._rows, self._cols, self._values = rows.astype(np.intp), cols.astype(np.intp), M[rows, cols]
        self._identity = (M.shape[0] == M.shape[1] == len(rows) and np.array_equal(rows, cols)
                          and bool(np.all(self._values == 1.0)))
        self._transpose = _transpose
        self._M = M

    @property
    def T(self) -> "SparseProducts":
        if self._transpose is None:
            self._transpose = SparseProducts(self._M.T, _transpose=self)
        return self._transpose

    def __matmul__(self, x):
        x = np.asarray(x)
        if x.ndim != 1:
            return self._M @ x
        if self._identity:
            return x + 0.0
        return np.bincount(self._rows, weights=self._values * x[self._cols], minlength=self.shape[0])


def constraint_products(A: np.ndarray):
    """``A`` for products ``A @ x`` and ``A.T @ v`` with one vector each: the matrix itself, except in the
    browser, where a mostly-zero ``A`` (at most a quarter non-zero) becomes a :class:`SparseProducts`."""
    if BROWSER and np.count_nonzero(A) <= A.size // 4:
        return SparseProducts(A)
    return A


# ---------------------------------------------------------------------- products with the records
def rows_times(X: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``X @ v`` for one vector ``v``.

    Parameters
    ----------
    X : numpy.ndarray
        The records, shape ``(n, d)``.
    v : numpy.ndarray
        One vector of length ``d``.

    Returns
    -------
    numpy.ndarray
        ``X @ v``, length ``n``.

    Notes
    -----
    Natively numpy's product. In the browser numpy has no BLAS, so a mostly-zero float64 ``X`` (such
    as Adult's one-hot rows) is multiplied as a sparse matrix.
    """
    if BROWSER and X.dtype == np.float64:
        pair = sparse_rows(X)
        if pair is not None:
            return pair[0] @ np.asarray(v, float)
    return X @ v


def times_rows(r: np.ndarray, X: np.ndarray) -> np.ndarray:
    """``r @ X`` (``Xᵀr``) for one vector ``r``.

    Parameters
    ----------
    r : numpy.ndarray
        One vector of length ``n``.
    X : numpy.ndarray
        The records, shape ``(n, d)``.

    Returns
    -------
    numpy.ndarray
        ``r @ X``, length ``d``.

    Notes
    -----
    Natively numpy's product. In the browser numpy has no BLAS, so a mostly-zero float64 ``X`` is
    multiplied through its transposed CSR.
    """
    if BROWSER and X.dtype == np.float64:
        pair = sparse_rows(X)
        if pair is not None:
            return pair[1] @ np.asarray(r, float)
    return r @ X


def models_times_rows(M: np.ndarray, X: np.ndarray) -> np.ndarray:
    """``M @ Xᵀ``: the margins of a stack of models on a set of records.

    Parameters
    ----------
    M : numpy.ndarray
        The models, shape ``(k, d)`` (or any stack whose last axis is ``d``).
    X : numpy.ndarray
        The records, shape ``(n, d)``.

    Returns
    -------
    numpy.ndarray
        ``M @ X.T``, shape ``(k, n)``.

    Notes
    -----
    Natively numpy's product. In the browser numpy has no BLAS: a mostly-zero ``X`` is multiplied as
    a sparse matrix, any other two-dimensional stack by scipy's OpenBLAS ``gemm``; both are several
    times faster there than numpy's own product.
    """
    if BROWSER and M.ndim == 2 and X.dtype == np.float64:
        pair = sparse_rows(X)
        if pair is not None:
            return (pair[0] @ np.asarray(M, float).T).T
        return scipy.linalg.blas.dgemm(1.0, np.asarray(M, float), X, trans_b=True)
    return M @ X.T


def model_times_rows(x: np.ndarray, X: np.ndarray) -> np.ndarray:
    """``x @ Xᵀ``, the margins of one model ``x`` (d,) (or a 0-d one) on the records ``X``; in the browser
    by :func:`rows_times`."""
    if BROWSER and x.ndim == 1:
        return rows_times(X, x)
    return x @ X.T


def weighted_gram(X: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``Xᵀ diag(weights) X`` for non-negative ``weights`` (n,): a loss's ``d × d`` Hessian.

    Natively ``YᵀY`` with ``Y = diag(√weights) X``. In the browser numpy has no BLAS, so ``YᵀY``
    is a sparse product (a mostly-zero ``X``) or scipy's OpenBLAS ``dsyrk`` (its upper triangle,
    mirrored).
    """
    if BROWSER:
        pair = sparse_rows(X)
        if pair is not None:
            H = (pair[1] @ pair[0].multiply(weights[:, None]).tocsr()).toarray()
        else:
            Y = X * np.sqrt(weights)[:, None]
            H = scipy.linalg.blas.dsyrk(1.0, Y.T)  # (the upper triangle)
        return np.triu(H) + np.triu(H, 1).T
    Y = X * np.sqrt(weights)[:, None]
    return Y.T @ Y


def squared_loss_by_moments_pays(x: np.ndarray, X: np.ndarray) -> bool:
    """Whether the squared loss of the models ``x`` (…, d) on ``X`` (n, d) is cheaper from the data's
    moments (:func:`squared_loss_by_moments`) than from every margin: in the browser, for more than
    ``4d²`` numbers of models and more records than features."""
    return BROWSER and x.ndim >= 2 and x.size > 4 * X.shape[1] ** 2 and X.shape[0] > X.shape[1]


def squared_loss_by_moments(x: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``(1/2n)‖Xx − y‖²`` for many models at once from the moments of the data: ``½(xᵀGx − 2xᵀc + yᵀy/n)``
    with ``G = XᵀX/n`` (cached per array) and ``c = Xᵀy/n``. In the browser, where numpy has no BLAS, this
    is d/n of the work of forming every margin: the Cyffers et al. panel's walk scores its 6,000
    models (p = 64) on 1,000 records each for the train and the test objective. The difference of
    nearly equal terms costs a few digits: 1e-14 relative on that panel's objectives (the test holds it to 1e-11)."""
    n = X.shape[0]
    G = made_once("gram", X, lambda X: X.T @ X / n)  # the d × d part, n·d² work; Xᵀy is n·d
    c, yy = y @ X / n, float(y @ y) / n
    flat = x.reshape(-1, x.shape[-1])
    quadratic = np.einsum("ij,ij->i", flat @ G, flat)
    return (0.5 * (quadratic - 2.0 * (flat @ c) + yy)).reshape(x.shape[:-1])


# ---------------------------------------------------------------------- stacks of agents
def gram_per_agent(A: np.ndarray) -> np.ndarray:
    """``A_pᵀA_p`` in double precision for every agent p of a stack ``A`` (N, m, d): numpy's batched
    product natively, one scipy BLAS ``syrk`` per agent in the browser, where numpy's batched
    product is a plain loop."""
    if BROWSER:
        syrk = scipy.linalg.blas.ssyrk if A.dtype == np.float32 else scipy.linalg.blas.dsyrk
        out = np.empty((A.shape[0], A.shape[2], A.shape[2]))
        for p in range(A.shape[0]):  # N BLAS calls
            upper = syrk(1.0, A[p].T)
            out[p] = np.triu(upper) + np.triu(upper, 1).T
        return out
    return np.matmul(A.transpose(0, 2, 1), A).astype(float)


def matrices_times_vectors(M: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``M_p v_p`` for every agent p of a stack of matrices ``M`` (N, a, b) and vectors ``v`` (N, b):
    numpy's batched product natively, ``einsum`` in the browser (faster there than numpy's batched
    product without BLAS, on the Zhang & Zhu panel's (20, 104, 104) inverses)."""
    if BROWSER:
        return np.einsum("pij,pj->pi", M, v)
    return np.matmul(M, v[:, :, None])[:, :, 0]


def add_products_per_agent(L: np.ndarray, R: np.ndarray, out: np.ndarray, work: np.ndarray | None = None) -> None:
    """``out_p += L_p R_p`` for every agent p of stacks ``L`` (N, a, k), ``R`` (N, k, b) and ``out`` (N, a, b).

    Natively one batched product (into ``work``, an (N, a, b) buffer, when given), then one sum. In the
    browser, for a C-ordered ``out``, one BLAS ``gemm`` per agent written in place (as the transposed
    product, so that no array is copied): numpy's batched product is a plain loop there, and a BLAS
    ``gemm`` per agent is faster on the Zhang & Zhu panel's BFGS factors.
    """
    if not BROWSER or not out.flags.c_contiguous:  # (gemm would write into a copy of a strided out)
        if work is None:
            out += np.matmul(L, R)
        else:
            np.matmul(L, R, out=work)
            out += work
        return
    gemm = scipy.linalg.blas.sgemm if out.dtype == np.float32 else scipy.linalg.blas.dgemm
    L, R = L.astype(out.dtype, copy=False), R.astype(out.dtype, copy=False)
    for p in range(L.shape[0]):  # N BLAS calls, as in gram_per_agent
        gemm(1.0, R[p].T, L[p].T, beta=1.0, c=out[p].T, overwrite_c=True)


def float32_product(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``A @ B`` of two float32 matrices: numpy's natively, scipy's OpenBLAS ``sgemm`` in the browser
    (the same float32 product)."""
    if BROWSER:
        return scipy.linalg.blas.sgemm(1.0, A, B)
    return A @ B
