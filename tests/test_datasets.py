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


# ---------------------------------------------------------------------- Adult
def test_load_adult_shapes_labels_norms():
    X_train, y_train, X_test, y_test = datasets.load_adult()
    assert X_train.shape == (40000, 104) and X_test.shape == (5222, 104)
    assert y_train.shape == (40000,) and y_test.shape == (5222,)
    for a in (X_train, y_train, X_test, y_test):
        assert a.dtype == np.float64 and a.flags.c_contiguous
    assert set(np.unique(y_train)) == set(np.unique(y_test)) == {-1.0, 1.0}
    assert (y_train > 0).sum() + (y_test > 0).sum() == 11208  # incomes > 50K without missing values
    X = np.vstack([X_train, X_test])
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0, atol=1e-12)  # rows to norm ≤ 1 (all = 1)
    assert X.min() >= 0
    # the one-hot structure survives: within each categorical attribute, exactly one non-zero per row
    cols = np.array(datasets.adult_columns())
    assert len(cols) == 104 and len(set(cols)) == 104
    attrs = [c.split("=")[0] for c in cols if "=" in c]
    assert [a for a in dict.fromkeys(attrs)] == ["workclass", "education", "marital-status", "occupation",
                                                 "relationship", "race", "sex", "native-country"]
    for a in dict.fromkeys(attrs):
        block = X[:, [c.startswith(a + "=") for c in cols]]
        np.testing.assert_array_equal((block > 0).sum(axis=1), 1)
    assert sum(1 for c in cols if "=" not in c) == 6


def test_shipped_adult_file_is_column_scaled():
    from importlib import resources

    with resources.files("dpadmm_lite").joinpath("data/adult.npz").open("rb") as fh, np.load(fh) as z:
        Z = np.vstack([z["Z_train"], z["Z_test"]])
        assert z["y_train"].dtype == np.int8
    np.testing.assert_array_equal(Z.max(axis=0), 1.0)  # step 3: every column has maximum exactly 1
    assert np.all(np.linalg.norm(Z, axis=1) >= np.sqrt(8))  # 8 one-hot ones per row before step 4


def test_load_adult_returns_fresh_copies():
    a = datasets.load_adult()
    a[0][0, 0] = 123.0
    assert datasets.load_adult()[0][0, 0] != 123.0


def test_rows_to_unit_ball():
    X = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    np.testing.assert_allclose(datasets.rows_to_unit_ball(X), [[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]])


# ---------------------------------------------------------------------- build script on a fake raw table
def _build_script():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scripts" / "build_adult.py"
    spec = importlib.util.spec_from_file_location("build_adult", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FAKE_DATA = """\
39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K
50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Male, 0, 0, 13, United-States, >50K
38, Private, 215646, HS-grad, 9, Divorced, ?, Not-in-family, White, Male, 0, 0, 40, United-States, <=50K
"""
FAKE_TEST = """\
|1x3 Cross validator
25, Private, 226802, 11th, 7, Never-married, Machine-op-inspct, Own-child, Black, Female, 0, 0, 40, ?, <=50K.
20, Private, 100000, HS-grad, 9, Never-married, Adm-clerical, Own-child, Black, Female, 0, 1000, 20, Cuba, >50K.
"""


def test_build_script_preprocessing_on_fake_table(tmp_path):
    build = _build_script()
    raw = build.read_raw(FAKE_DATA, FAKE_TEST)
    assert len(raw) == 5 and list(raw.columns) == build.COLUMNS
    assert set(raw["income"]) == {"<=50K", ">50K"}  # trailing "." of adult.test removed
    Z, y, names = build.preprocess(raw)
    # rows 3 (occupation ?) and 4 (native-country ?) are dropped
    np.testing.assert_array_equal(y, [-1, 1, 1])
    expected_names = (["age", "workclass=Private", "workclass=Self-emp-not-inc", "workclass=State-gov", "fnlwgt",
                       "education=Bachelors", "education=HS-grad", "education-num",
                       "marital-status=Married-civ-spouse", "marital-status=Never-married",
                       "occupation=Adm-clerical", "occupation=Exec-managerial",
                       "relationship=Husband", "relationship=Not-in-family", "relationship=Own-child",
                       "race=Black", "race=White", "sex=Female", "sex=Male",
                       "capital-gain", "capital-loss", "hours-per-week",
                       "native-country=Cuba", "native-country=United-States"])
    assert names == expected_names
    assert Z.shape == (3, 24)
    np.testing.assert_allclose(Z[:, 0], [39 / 50, 1.0, 20 / 50])  # age scaled by its maximum
    np.testing.assert_allclose(Z[:, names.index("capital-loss")], [0, 0, 1])
    np.testing.assert_allclose(Z.max(axis=0), 1.0)  # every column reaches exactly 1 here
    np.testing.assert_array_equal(Z[0, [names.index("workclass=State-gov"), names.index("sex=Male")]], [1, 1])
    X, y2, _ = build.features(raw)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    np.testing.assert_allclose(X, Z / np.linalg.norm(Z, axis=1, keepdims=True))
    train, test = build.split_rows(10, n_test=3, seed=0)
    assert len(train) == 7 and len(test) == 3
    np.testing.assert_array_equal(np.sort(np.concatenate([train, test])), np.arange(10))
    # the writer is deterministic and loadable
    out1, out2 = tmp_path / "a.npz", tmp_path / "b.npz"
    build.save_npz(out1, Z=Z, y=y)
    build.save_npz(out2, Z=Z, y=y)
    assert out1.read_bytes() == out2.read_bytes()
    with np.load(out1) as z:
        np.testing.assert_array_equal(z["Z"], Z)


def test_build_script_rejects_unknown_labels():
    build = _build_script()
    raw = build.read_raw(FAKE_DATA.replace("<=50K\n", "maybe\n", 1), FAKE_TEST)
    with pytest.raises(ValueError, match="income must be"):
        build.preprocess(raw)


def test_public_split_sets_seeded_rows_aside_that_the_private_rows_never_contain():
    X = np.arange(40, dtype=float).reshape(20, 2)
    y = np.arange(20, dtype=float)
    X_public, X_private, y_private = datasets.public_split(X, y, public_rows=5, seed=3)
    assert X_public.shape == (5, 2) and X_private.shape == (15, 2) and y_private.shape == (15,)
    assert not set(X_public[:, 0]) & set(X_private[:, 0])
    assert set(X_public[:, 0]) | set(X_private[:, 0]) == set(X[:, 0])
    np.testing.assert_array_equal(X_private[:, 0] / 2, y_private)  # rows keep their labels
    again = datasets.public_split(X, y, public_rows=5, seed=3)
    np.testing.assert_array_equal(again[0], X_public)
    assert not np.array_equal(datasets.public_split(X, y, public_rows=5, seed=4)[0], X_public)
    with pytest.raises(ValueError, match="public_rows"):
        datasets.public_split(X, y, public_rows=20)
    with pytest.raises(ValueError, match="public_rows"):
        datasets.public_split(X, y, public_rows=0)
