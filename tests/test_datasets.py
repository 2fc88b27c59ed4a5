"""Tests of dpadmm_lite.datasets: synthetic generators, splits, the shipped Adult copy."""

import numpy as np
import pytest

from dpadmm_lite import datasets


# ---------------------------------------------------------------------- make_lasso
def test_make_lasso_follows_cyffers_appendix():
    X, y, w = datasets.make_lasso(1000, 64, seed=3)
    assert X.shape == (1000, 64) and y.shape == (1000,) and w.shape == (64,)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0, atol=1e-12)  # unit sphere
    assert np.count_nonzero(w) == 8
    assert np.all(np.abs(w) <= 1)
    resid = y - X @ w
    assert abs(resid.std() - 0.1) < 0.01  # η ~ N(0, 0.01): variance 0.01
    assert abs(resid.mean()) < 0.01
    # rows are isotropic: E[a aᵀ] = I/p
    np.testing.assert_allclose(X.T @ X / 1000, np.eye(64) / 64, atol=0.01)


def test_make_lasso_is_seeded():
    a = datasets.make_lasso(50, 10, seed=1)
    b = datasets.make_lasso(50, 10, seed=1)
    c = datasets.make_lasso(50, 10, seed=2)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a[0], c[0])


def test_make_lasso_small_p_caps_support():
    X, y, w = datasets.make_lasso(5, 3)
    assert np.count_nonzero(w) == 3


# ---------------------------------------------------------------------- make_classification
def test_make_classification_labels_norms_and_signal():
    X, y, w = datasets.make_classification(4000, 20, seed=0)
    assert X.shape == (4000, 20) and y.shape == (4000,) and w.shape == (20,)
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert np.linalg.norm(X, axis=1).max() <= 1 + 1e-12
    acc = np.mean(np.sign(X @ w) == y)
    assert 0.83 < acc < 0.91  # Bayes accuracy ≈ 0.87 for signal = 4
    assert abs(y.mean()) < 0.1
    a = datasets.make_classification(30, 4, seed=5)
    b = datasets.make_classification(30, 4, seed=5)
    np.testing.assert_array_equal(a[1], b[1])


# ---------------------------------------------------------------------- split
def test_split_equal_sizes():
    owner = datasets.split(103, 10, seed=0)
    assert owner.shape == (103,)
    sizes = np.bincount(owner, minlength=10)
    assert sizes.sum() == 103 and sizes.max() - sizes.min() <= 1 and sizes.min() >= 10
    assert not np.array_equal(owner, np.sort(owner))  # shuffled
    np.testing.assert_array_equal(owner, datasets.split(103, 10, seed=0))


def test_split_unequal_and_explicit():
    owner = datasets.split(1000, 20, sizes="unequal", seed=1)
    sizes = np.bincount(owner, minlength=20)
    assert sizes.sum() == 1000 and sizes.min() >= 1 and sizes.max() > 2 * sizes.min()
    owner = datasets.split(10, 3, sizes=[1, 2, 7], seed=0)
    np.testing.assert_array_equal(np.bincount(owner), [1, 2, 7])
    owner = datasets.split(5, 5, sizes="unequal")
    np.testing.assert_array_equal(np.bincount(owner), np.ones(5))


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_samples=5, n_agents=6), "n_agents must be in \\[1, n_samples=5\\]"),
    (dict(n_samples=5, n_agents=0), "n_agents must be a whole number >= 1"),
    (dict(n_samples=10, n_agents=3, sizes=[1, 2, 3]), "sizes must sum to n_samples=10"),
    (dict(n_samples=10, n_agents=3, sizes=[0, 3, 7]), "sizes must be positive"),
    (dict(n_samples=10, n_agents=3, sizes=[5, 5]), "sizes must be None, 'unequal', or 3"),
    (dict(n_samples=10, n_agents=3, sizes="equal"), "sizes must be one of"),
])
def test_split_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        datasets.split(**kwargs)


# ---------------------------------------------------------------------- train_test_split
def test_train_test_split_partitions_rows():
    X = np.arange(20.0).reshape(10, 2)
    y = np.arange(10.0)
    Xtr, ytr, Xte, yte = datasets.train_test_split(X, y, test_fraction=0.3, seed=4)
    assert Xtr.shape == (7, 2) and Xte.shape == (3, 2)
    np.testing.assert_array_equal(np.sort(np.concatenate([ytr, yte])), y)
    np.testing.assert_array_equal(Xtr[:, 0], 2 * ytr)  # rows stay with their labels
    with pytest.raises(ValueError, match="test_fraction must be in \\(0, 1\\)"):
        datasets.train_test_split(X, y, test_fraction=1.0, seed=0)
    with pytest.raises(ValueError, match="same number of rows"):
        datasets.train_test_split(X, y[:5], test_fraction=0.5, seed=0)
