"""The scikit-learn estimators (dpadmm_lite.estimators): scikit-learn's own checks, the reduction to the
library's runs, labels, agents, clipping, the ecosystem (clone, Pipeline, cross-validation) and the receipt."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

pytest.importorskip("sklearn")  # the [sklearn] extra: the estimators' module needs it

from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import dpadmm_lite as dl  # noqa: E402
from dpadmm_lite import problems  # noqa: E402
from dpadmm_lite.estimators import Lasso, LogisticRegression, load  # noqa: E402

#: The checks a private estimator cannot pass, and why.
PRIVATE_FAILURES = {
    "check_regressors_train": "the check's 200 rows have norms up to 5.2: clipped to the public bound 1, then "
                              "100 iterations of DP-ADMM, the Lasso stays below the check's R² of 0.5 even at "
                              "ε = ∞ (R² −1.9; at ε = 1, −11.9)",
}


def expected_failed_checks(estimator):
    """The checks of :data:`PRIVATE_FAILURES` that apply to ``estimator``, with their reasons."""
    return {name: why for name, why in PRIVATE_FAILURES.items()
            if (name == "check_classifiers_train") == isinstance(estimator, LogisticRegression)}


@parametrize_with_checks([LogisticRegression(epsilon=1.0, delta=1e-5, random_state=0),
                          Lasso(epsilon=1.0, delta=1e-5, random_state=0)],
                         expected_failed_checks=expected_failed_checks, xfail_strict=True)
def test_scikit_learn_checks(estimator, check, monkeypatch):
    # the array API check runs on NumPy input only for estimators without array API support, and reads this
    # variable when it runs: set, it runs instead of skipping
    monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    check(estimator)


def _data(n=300, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / 2
    w = np.array([2.0, -1.0, 0.5, 0.0])[:d]
    return X, np.where(X @ w + 0.3 > 0, 1.0, -1.0), X @ w + 0.1 * rng.normal(size=n)


def _clipped_with_constant(X, bound=1.0):
    return np.column_stack([dl.mechanisms.clip(X, bound), np.full(len(X), bound)])


def test_epsilon_infinity_is_the_non_private_twin_bit_for_bit():
    X, y, _ = _data()
    est = LogisticRegression(epsilon=math.inf, alpha=0.01, iterations=60).fit(X, y)
    problem = problems.logistic(_clipped_with_constant(X), y, 0.01, feature_bound=math.sqrt(2))
    twin = dl.run("admm_linearized", problem, rho=0.1, iterations=60, seed=0).model
    assert np.array_equal(est.coef_[0], twin[:-1]) and est.intercept_[0] == twin[-1] * 1.0
    assert not math.isfinite(est.privacy_.epsilon) and est.ledger_ == []


def test_lasso_at_epsilon_infinity_is_dp_admm_without_noise():
    X, _, t = _data()
    est = Lasso(epsilon=math.inf, alpha=0.01, iterations=40).fit(X, t)
    problem = problems.lasso(_clipped_with_constant(X), t, 0.01, feature_bound=math.sqrt(2))
    run = dl.run("dp_admm", problem, epsilon=math.inf, rho=0.1, iterations=40, seed=0, clip=1.0).model
    assert np.array_equal(est.coef_, run[:-1]) and est.intercept_ == run[-1]
    assert np.allclose(est.predict(X), X @ est.coef_ + est.intercept_)


def test_string_labels_and_the_sorted_classes():
    X, y, _ = _data()
    labels = np.where(y > 0, "sick", "healthy")
    est = LogisticRegression(epsilon=math.inf).fit(X, labels)
    assert est.classes_.tolist() == ["healthy", "sick"]
    assert set(est.predict(X)) <= {"healthy", "sick"} and est.score(X, labels) > 0.9
    proba = est.predict_proba(X)
    assert proba.shape == (len(X), 2) and np.allclose(proba.sum(axis=1), 1.0)
    assert np.array_equal(est.predict(X) == "sick", proba[:, 1] >= 0.5)
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        LogisticRegression(epsilon=math.inf).fit(X, np.arange(len(X)) % 3)


def test_groups_are_the_star_algorithms_owner():
    X, y, _ = _data(n=250)
    groups = np.array(["A", "B", "C", "D", "E"])[np.arange(250) % 5]
    est = LogisticRegression(epsilon=1.0, delta=1e-5, random_state=3, iterations=30).fit(X, y, groups=groups)
    assert est.algorithm_ == "dp_admm_star"
    problem = problems.logistic(_clipped_with_constant(X), y, 0.01, feature_bound=math.sqrt(2))
    run = dl.run("dp_admm_star", problem, epsilon=1.0, delta=1e-5, rho=0.1, iterations=30, seed=3,
                 owner=np.arange(250) % 5)
    assert np.array_equal(est.coef_[0], run.model[:-1]) and est.privacy_ == run.privacy
    with pytest.raises(ValueError, match="groups must name one agent per row"):
        LogisticRegression(epsilon=1.0, delta=1e-5).fit(X, y, groups=groups[:-1])
    with pytest.raises(ValueError, match="groups: algorithm 'dp_admm'"):
        LogisticRegression(epsilon=1.0, delta=1e-5, algorithm="dp_admm").fit(X, y, groups=groups)


def test_a_topology_chooses_the_network_algorithm():
    X, y, _ = _data(n=200)
    est = LogisticRegression(epsilon=1.0, delta=1e-5, random_state=0, iterations=10,
                             options={"topology": "ring"}).fit(X, y, groups=np.arange(200) % 4)
    assert est.algorithm_ == "dvp_graph" and math.isfinite(est.privacy_.epsilon)


def test_rows_beyond_the_bound_are_clipped_not_refused():
    X, y, _ = _data()
    X[:10] *= 20  # far beyond the public bound 1
    pre_clipped = dl.mechanisms.clip(X, 1.0)
    a = LogisticRegression(epsilon=1.0, delta=1e-5, random_state=1).fit(X, y)
    b = LogisticRegression(epsilon=1.0, delta=1e-5, random_state=1, clip_rows=False).fit(pre_clipped, y)
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)
    with pytest.raises(ValueError, match="feature_bound"):
        LogisticRegression(epsilon=1.0, delta=1e-5, clip_rows=False).fit(X, y)


def test_clone_pipeline_and_cross_validation_run():
    X, y, _ = _data()
    est = LogisticRegression(epsilon=1.0, delta=1e-5, options={"calibration": "accountant"})
    twin = clone(est)
    assert twin.get_params() == est.get_params() and twin.options is not est.options
    pipe = make_pipeline(StandardScaler(), LogisticRegression(epsilon=1.0, delta=1e-5, feature_bound=3.0))
    assert pipe.fit(X, y).score(X, y) > 0.6
    scores = cross_val_score(LogisticRegression(epsilon=2.0, delta=1e-5), X, y, cv=3)
    assert scores.shape == (3,) and np.all(scores > 0.5)


def test_bad_input_is_refused_naming_the_parameter_before_any_noise():
    X, y, _ = _data(n=50)
    with pytest.raises(ValueError, match="epsilon must be given"):
        LogisticRegression().fit(X, y)
    with pytest.raises(ValueError, match="epsilon must be in"):
        LogisticRegression(epsilon=0.0, delta=1e-5).fit(X, y)
    with pytest.raises(ValueError, match="delta must be given"):
        LogisticRegression(epsilon=1.0).fit(X, y)
    with pytest.raises(ValueError, match="delta must be in"):
        LogisticRegression(epsilon=1.0, delta=1.5).fit(X, y)
    with pytest.raises(ValueError, match="does not solve 'lasso'"):
        Lasso(epsilon=1.0, delta=1e-5, algorithm="dp_admm_star").fit(X, y)
    with pytest.raises(ValueError, match="not private, so epsilon must be math.inf"):
        LogisticRegression(epsilon=1.0, delta=1e-5, algorithm="admm_linearized").fit(X, y)
    with pytest.raises(ValueError, match="no registered private algorithm solves 'lasso'"):
        Lasso(epsilon=1.0, delta=1e-5).fit(X, y, groups=np.arange(50) % 5)
    with pytest.raises(ValueError, match="options must not hold"):
        LogisticRegression(epsilon=1.0, delta=1e-5, options={"owner": np.zeros(50)}).fit(X, y)
    with pytest.raises(ValueError, match="random_state"):
        LogisticRegression(epsilon=1.0, delta=1e-5, random_state=-1).fit(X, y)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        LogisticRegression(epsilon=1.0, delta=1e-5).fit(bad, y)


def test_random_state_none_keeps_no_seed_and_an_int_assumes_it_secret():
    X, y, _ = _data()
    fresh = LogisticRegression(epsilon=1.0, delta=1e-5).fit(X, y)
    seeded = LogisticRegression(epsilon=1.0, delta=1e-5, random_state=5).fit(X, y)
    assert not fresh.privacy_.assumes and seeded.privacy_.assumes
    assert "seed" not in fresh.released_["params"] and "seed" not in seeded.released_["params"]
    assert fresh.diagnostics_["objective"] is not None  # the diagnostics are kept apart from the release


def test_the_receipt_round_trips_and_refuses_a_silent_refit(tmp_path):
    X, y, _ = _data()
    labels = np.where(y > 0, "yes", "no")
    for est, target in ((LogisticRegression(epsilon=1.0, delta=1e-5, random_state=2), labels),
                        (Lasso(epsilon=1.0, delta=1e-5, random_state=2), y)):
        est.fit(X, target)
        path = est.save(tmp_path / f"{type(est).__name__}.json")
        text = path.read_text()
        document = json.loads(text)  # plain JSON: no pickle, no NaN or Infinity literals
        assert "pickle" not in text and "Infinity" not in text and "NaN" not in text
        assert document["version"] == dl.__version__
        assert document["released"]["privacy"]["epsilon"] == pytest.approx(est.privacy_.epsilon)
        assert len(document["released"]["ledger"]) == len(est.ledger_) > 0
        assert document["diagnostics"]["saved"] is False and "objective" in document["diagnostics"]["fields"]
        again = load(path)
        assert type(again) is type(est) and np.array_equal(again.predict(X), est.predict(X))
        if isinstance(est, LogisticRegression):
            assert np.array_equal(again.predict_proba(X), est.predict_proba(X))
            assert again.classes_.tolist() == ["no", "yes"]
        assert again.privacy_ == est.privacy_ and again.ledger_ == est.ledger_
        with pytest.raises(ValueError, match="refit"):
            again.fit(X, target)
        assert np.array_equal(again.fit(X, target, refit=True).coef_, est.coef_)  # same seed, same fit
        assert clone(load(path)).fit(X, target).receipt_ is None


def test_a_non_private_fit_says_so_in_its_receipt(tmp_path):
    X, y, _ = _data()
    est = LogisticRegression(epsilon=math.inf).fit(X, y)
    document = json.loads(est.save(tmp_path / "r.json").read_text())
    assert document["released"]["privacy"]["epsilon"] == "inf" and document["parameters"]["epsilon"] == "inf"
    assert math.isinf(load(tmp_path / "r.json").privacy_.epsilon)


def test_the_library_core_loads_no_scikit_learn():
    import subprocess
    import sys

    code = "import sys, dpadmm_lite as dl; dl.run; print('sklearn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
