"""Data for the book: seeded synthetic generators, the shipped Adult copy, and splits.

* :func:`make_lasso` — the synthetic Lasso data of Cyffers et al. (2023), Appendix E.
* :func:`make_classification` — a seeded binary classification set with labels ±1 and rows of
  ℓ2-norm at most 1 (the bound every per-example sensitivity in the book relies on).
* :func:`load_adult` — the UCI Adult data preprocessed as in Huang et al. (2019), Sec. VI-A,
  shipped inside the package (``dpadmm_lite/data/adult.npz``, rebuilt by
  ``scripts/build_adult.py``). Nothing is downloaded at run time.
* :func:`split` — deal samples to agents; :func:`train_test_split` — a seeded holdout split.

All randomness comes from ``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

from importlib import resources

import numpy as np

from . import _validate as check

__all__ = ["make_lasso", "make_classification", "load_adult", "adult_columns", "rows_to_unit_ball",
           "split", "train_test_split", "public_split"]


# ---------------------------------------------------------------------- synthetic data
def _fits(n: int, d: int, columns: str) -> None:
    """Refuse a data set of n rows and d columns whose arrays (a few copies) would not fit in memory."""
    name, value, other = ("n", n, d) if n >= d else (columns, d, n)
    check.fits_in_memory(name, value, 24.0 * n * d, what=f"{n:,} rows of {d:,} features",
                         limit=max(1, check.MEMORY_BUDGET // (24 * other)))


def make_lasso(n: int, p: int, seed: int = 0, *, support: int | None = None,
               noise_std: float = 0.1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Synthetic sparse regression data of Cyffers et al. (2023), Appendix E.

    "We generate synthetic data by drawing A as random vectors from the p-dimensional unit
    sphere, and draw the ground-truth model x from a uniform distribution with support of
    size 8. Labels are then obtained by taking b = Ax + η where η ~ N(0, 0.01)."

    Parameters
    ----------
    n, p : int
        Number of samples and of features (the paper uses n = 1000, p = 64).
    seed : int, default 0
        Seed of ``numpy.random.default_rng``.
    support : int, optional
        Number of non-zero entries of the true model, in ``[1, p]`` (default: 8 as in the
        paper, or ``p`` when ``p < 8``).
    noise_std : float, default 0.1
        Standard deviation of the label noise: the paper's N(0, 0.01) read as variance 0.01,
        i.e. ``noise_std = 0.1``.

    Returns
    -------
    X : (n, p) array
        Rows uniformly distributed on the unit sphere (normalised Gaussian vectors), so
        ``‖a_j‖₂ = 1`` exactly.
    y : (n,) array
        ``X @ w_true + η``, ``η ~ N(0, noise_std²)``.
    w_true : (p,) array
        ``support`` coordinates chosen uniformly at random, with values drawn from
        ``Uniform(−1, 1)`` (the paper does not give the interval; we choose the symmetric one);
        zero elsewhere.
    """
    n = check.count("n", n)
    p = check.count("p", p)
    _fits(n, p, "p")
    support = min(8, p) if support is None else check.count("support", support)
    if support > p:
        raise ValueError(f"support must be a whole number in [1, p = {p}] (non-zeros of the true model), got {support}")
    noise_std = check.nonnegative("noise_std", noise_std)
    rng = np.random.default_rng(check.count("seed", seed, minimum=0))
    G = rng.standard_normal((n, p))
    X = G / np.linalg.norm(G, axis=1, keepdims=True)  # uniform on the unit sphere S^{p-1}
    w_true = np.zeros(p)
    idx = rng.choice(p, size=support, replace=False)
    w_true[idx] = rng.uniform(-1.0, 1.0, size=len(idx))
    y = X @ w_true + noise_std * rng.standard_normal(n)  # b = Ax + η
    return X, y, w_true


def make_classification(n: int, d: int, seed: int = 0, *,
                        signal: float = 4.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A seeded binary classification set drawn from a logistic model, rows in the unit ball.

    Features are ``N(0, I/d)`` vectors (norm ≈ 1), and rows longer than 1 are scaled back to
    norm 1, as in the row normalisation of Huang et al. (2019); so ``‖a_j‖₂ ≤ 1`` and the
    logistic loss has per-example gradients of norm at most 1. The true model ``w_true`` is a
    random direction of length ``signal·√d``, so the margins ``a·w_true`` have standard
    deviation about ``signal``; labels are ``+1`` with probability ``sigmoid(a·w_true)``.

    Parameters
    ----------
    n, d : int
        Number of samples and features.
    seed : int, default 0
        Seed of ``numpy.random.default_rng``.
    signal : float, default 4.0
        Typical size of the true margins; larger means cleaner labels (Bayes accuracy ≈ 0.87
        for 4, ≈ 0.95 for 10).

    Returns
    -------
    X : (n, d) array with row norms ``≤ 1``; y : (n,) array of ±1; w_true : (d,) array.
    """
    n = check.count("n", n)
    d = check.count("d", d)
    _fits(n, d, "d")
    signal = check.nonnegative("signal", signal)
    rng = np.random.default_rng(check.count("seed", seed, minimum=0))
    X = rng.standard_normal((n, d)) / np.sqrt(d)
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)  # rows to ℓ2-norm ≤ 1
    w_true = rng.standard_normal(d)
    w_true *= signal * np.sqrt(d) / np.linalg.norm(w_true)
    prob = 1.0 / (1.0 + np.exp(-(X @ w_true)))
    y = np.where(rng.uniform(size=n) < prob, 1.0, -1.0)
    return X, y, w_true


# ---------------------------------------------------------------------- Adult
_ADULT: tuple[np.ndarray, ...] | None = None


def rows_to_unit_ball(X) -> np.ndarray:
    """Scale every row longer than 1 back to ℓ2-norm 1: ``x ← x / max(‖x‖₂, 1)``.

    The row normalisation of Huang et al. (2019), Sec. VI-A; it makes the per-example gradient
    of the logistic loss at most 1 in norm.

    Parameters
    ----------
    X : array_like of float
        The records, shape ``(n, d)`` with n ≥ 1, finite.

    Returns
    -------
    numpy.ndarray
        A new array, every row of ℓ2-norm at most 1.
    """
    X = np.ascontiguousarray(check.finite_array("X", X, ndim=2))
    if X.shape[0] < 1:
        raise ValueError("X must have at least one row")
    return X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)


def load_adult() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The UCI Adult data, preprocessed as in Huang et al. (2019), Sec. VI-A.

    45,222 rows without missing values, 104 features (6 numeric attributes and one binary
    column per category of the 8 categorical ones, every column scaled to maximum 1, every
    row to ℓ2-norm ≤ 1 — in fact exactly 1), labels ``+1`` (income > 50K) / ``−1``, split
    once with a fixed seed into 40,000 training and 5,222 test rows.

    The processed copy ships inside the package (``dpadmm_lite/data/adult.npz``, 0.75 MB;
    ``scripts/build_adult.py`` documents and reproduces every step; licence CC BY 4.0, Becker
    & Kohavi 1996, see ``dpadmm_lite/data/README.md``). It stores the column-scaled matrix in
    float64; the last step, rows to the unit ball, is applied here in float64 (it would make
    the file 5× larger). Loaded once per process; each call returns fresh float64 copies, so
    callers may modify them. Nothing is downloaded.

    Returns
    -------
    X_train : (40000, 104), y_train : (40000,), X_test : (5222, 104), y_test : (5222,)
        The feature names are in :func:`adult_columns`.

    Examples
    --------
    >>> from dpadmm_lite.datasets import load_adult
    >>> X, y, X_test, y_test = load_adult()
    >>> X.shape, X_test.shape, sorted(set(y.tolist()))
    ((40000, 104), (5222, 104), [-1.0, 1.0])
    >>> bool(np.allclose(np.linalg.norm(X, axis=1), 1.0))
    True
    """
    global _ADULT
    if _ADULT is None:
        with resources.files(__package__).joinpath("data/adult.npz").open("rb") as fh:
            with np.load(fh, allow_pickle=False) as z:
                arrays = (rows_to_unit_ball(z["Z_train"]), z["y_train"].astype(np.float64),
                          rows_to_unit_ball(z["Z_test"]), z["y_test"].astype(np.float64),
                          z["columns"].astype(str))
        for a in arrays:
            a.setflags(write=False)
        _ADULT = arrays
    return tuple(a.copy() for a in _ADULT[:4])


def adult_columns() -> list[str]:
    """Names of the 104 Adult features (numeric attributes, then ``"attribute=category"``)."""
    load_adult()
    return [str(c) for c in _ADULT[4]]


# ---------------------------------------------------------------------- splits
def split(n_samples: int, n_agents: int, *, sizes=None, seed: int = 0) -> np.ndarray:
    """Deal ``n_samples`` samples at random to ``n_agents`` agents.

    Parameters
    ----------
    n_samples, n_agents : int
        Every agent receives at least one sample, so ``1 ≤ n_agents ≤ n_samples``.
    sizes : array_like of int, optional
        ``None``: sizes as equal as possible (they differ by at most one, as Huang et al.'s
        ``m_i = 40000/n``); ``"unequal"``: random sizes from a Dirichlet(1, …, 1) share of the
        samples (each agent still holds at least one); or a sequence of ``n_agents`` positive
        integers summing to ``n_samples``.
    seed : int, default 0
        Seed of ``numpy.random.default_rng``; the samples are shuffled before they are dealt.

    Returns
    -------
    owner : (n_samples,) int array
        ``owner[j]`` is the agent holding sample ``j``; pass it to
        :func:`dpadmm_lite.problems.make_agents`.
    """
    n_samples = check.count("n_samples", n_samples)
    check.fits_in_memory("n_samples", n_samples, 32.0 * n_samples, what=f"an owner per sample for {n_samples:,} samples",
                         limit=check.MEMORY_BUDGET // 32)
    n_agents = check.count("n_agents", n_agents)
    if n_agents > n_samples:
        raise ValueError(f"n_agents must be in [1, n_samples={n_samples}] so that every agent holds "
                         f"at least one sample, got {n_agents}")
    rng = np.random.default_rng(check.count("seed", seed, minimum=0))
    if sizes is None:
        sizes = np.full(n_agents, n_samples // n_agents)
        sizes[: n_samples % n_agents] += 1
    elif isinstance(sizes, str):
        check.choice("sizes", sizes, ("unequal",))
        extra = n_samples - n_agents  # one sample each, the rest by Dirichlet shares
        share = rng.dirichlet(np.ones(n_agents))
        sizes = 1 + np.floor(share * extra).astype(int)
        left = n_samples - sizes.sum()
        sizes[np.argsort(-(share * extra % 1), kind="stable")[:left]] += 1  # largest remainders
    else:
        sizes = np.asarray(sizes)
        if sizes.shape != (n_agents,) or not np.issubdtype(sizes.dtype, np.number):
            raise ValueError(f"sizes must be None, 'unequal', or {n_agents} positive integers, got {sizes!r}")
        if np.any(sizes < 1) or np.any(sizes != np.round(sizes)):
            raise ValueError(f"sizes must be positive whole numbers (every agent holds ≥ 1 sample), got {sizes!r}")
        sizes = sizes.astype(int)
        if sizes.sum() != n_samples:
            raise ValueError(f"sizes must sum to n_samples={n_samples}, got sum {sizes.sum()}")
    owner = np.repeat(np.arange(n_agents), sizes)
    return owner[rng.permutation(n_samples)]


def train_test_split(X, y, *, test_fraction: float = 0.2, seed: int = 0):
    """Seeded random holdout split.

    ``round(test_fraction · n)`` rows (at least one, at most ``n − 1``) go to the test set.

    Parameters
    ----------
    X : array_like of float
        The records, shape ``(n, d)`` with n ≥ 2, finite.
    y : array_like of float
        The labels, shape ``(n,)``, finite.
    test_fraction : float, default 0.2
        The share of rows in the test set, in (0, 1).
    seed : int, default 0
        Seed of ``numpy.random.default_rng``, a whole number ≥ 0.

    Returns
    -------
    X_train, y_train, X_test, y_test : numpy.ndarray
        In the same order as :func:`load_adult`.
    """
    X = check.finite_array("X", X, ndim=2)
    y = check.finite_array("y", y, ndim=1)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X and y must have the same number of rows, got {X.shape[0]} and {y.shape[0]}")
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"X must have at least 2 rows to split, got {n}")
    test_fraction = check.open_unit("test_fraction", test_fraction)
    n_test = int(min(max(round(test_fraction * n), 1), n - 1))
    rng = np.random.default_rng(check.count("seed", seed, minimum=0))
    perm = rng.permutation(n)
    test, train = perm[:n_test], perm[n_test:]
    return X[train], y[train], X[test], y[test]


def public_split(X, y, *, public_rows: int, seed: int = 0):
    """Set ``public_rows`` seeded random rows aside as a *public* sample, never trained on.

    What a private run may read beyond its declared bounds (e.g. the feature graph of the
    graph-guided fused lasso, :func:`~dpadmm_lite.problems.feature_graph`) is estimated on the
    public rows; the private algorithm trains on the others only.

    Parameters
    ----------
    X : array_like of float
        The records, shape ``(n, d)``, finite.
    y : array_like of float
        The labels, shape ``(n,)``, finite.
    public_rows : int
        Number of public rows, a whole number in [1, n − 1].
    seed : int, default 0
        Seed of ``numpy.random.default_rng``, a whole number ≥ 0.

    Returns
    -------
    X_public : numpy.ndarray
        The public rows.
    X_private, y_private : numpy.ndarray
        The other rows and their labels.
    """
    X = check.finite_array("X", X, ndim=2)
    y = check.finite_array("y", y, ndim=1)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X and y must have the same number of rows, got {X.shape[0]} and {y.shape[0]}")
    n = X.shape[0]
    public_rows = check.count("public_rows", public_rows)
    if public_rows >= n:
        raise ValueError(f"public_rows must be in [1, {n - 1}] (X has {n} rows), got {public_rows}")
    public = np.zeros(n, bool)
    public[np.random.default_rng(check.count("seed", seed, minimum=0)).choice(n, public_rows, replace=False)] = True
    return X[public], X[~public], y[~public]
