"""Tests of dpadmm_lite.problems against independent references (scikit-learn, scipy, loops)."""

import pathlib
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest
import scipy.optimize
from sklearn.linear_model import Lasso, LogisticRegression

from dpadmm_lite import _reference, datasets, problems


@pytest.fixture(scope="module")
def clf_data():
    return datasets.make_classification(400, 12, seed=1)


def _rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


# ---------------------------------------------------------------------- reference optimum vs independent solvers
def test_lasso_optimum_matches_sklearn():
    X, y, _ = datasets.make_lasso(300, 20, seed=2)
    for lam in (1e-3, 2e-2):
        p = problems.lasso(X, y, lam)
        opt = p.reference_optimum()
        sk = Lasso(alpha=lam, fit_intercept=False, tol=1e-14, max_iter=200_000).fit(X, y)
        F_sk = float(p.objective(sk.coef_))
        assert _rel(opt.value, F_sk) < 1e-6
        assert opt.value <= F_sk + 1e-12  # the reference is at least as good as sklearn's
        np.testing.assert_allclose(opt.x, sk.coef_, atol=1e-6)


def test_lasso_large_lambda_gives_zero():
    X, y, _ = datasets.make_lasso(100, 10, seed=0)
    lam_max = np.abs(X.T @ y).max() / len(y)  # ‖∇f(0)‖∞: above it, x* = 0
    p = problems.lasso(X, y, 1.5 * lam_max)
    opt = p.reference_optimum()
    assert abs(opt.value - p.objective(np.zeros(10))) < 1e-12
    assert np.abs(opt.x).max() < 1e-9


@pytest.mark.parametrize("penalty", ["l2", "l1"])
@pytest.mark.parametrize("lam", [1e-3, 3e-2])
def test_logistic_optimum_matches_sklearn(clf_data, penalty, lam):
    X, y, _ = clf_data
    n = len(y)
    p = problems.logistic(X, y, lam, penalty)
    opt = p.reference_optimum()
    # sklearn minimises ½‖w‖² + C Σ ℓ (l2) or ‖w‖₁ + C Σ ℓ (l1): divide by C·n, so C = 1/(n λ)
    kwargs = dict(C=1 / (n * lam), fit_intercept=False, tol=1e-12, max_iter=100_000)
    if penalty == "l2":
        sk = LogisticRegression(solver="newton-cg", **kwargs)
    else:
        sk = LogisticRegression(solver="liblinear", l1_ratio=1.0, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk.fit(X, y)
    F_sk = float(p.objective(sk.coef_.ravel()))
    assert _rel(opt.value, F_sk) < 1e-6
    assert opt.value <= F_sk + 1e-12


def test_smooth_optimum_is_stationary_to_machine_precision(clf_data):
    X, y, _ = clf_data
    p = problems.logistic(X, y, 1e-3, "l2")
    opt = p.reference_optimum()
    assert np.linalg.norm(p.gradient(opt.x) + 1e-3 * opt.x) < 1e-13
    assert opt.iterations < 30


def _kkt_l1(p, x, tol):
    g = p.gradient(x)
    on = np.abs(x) > 1e-9
    assert np.all(np.abs(g[on] + p.lam * np.sign(x[on])) < tol)  # ∇f + λ sign(x) = 0 on the support
    assert np.all(np.abs(g[~on]) <= p.lam + tol)  # |∇f| ≤ λ off it


def test_l1_optimum_satisfies_kkt(clf_data):
    X, y, _ = clf_data
    p = problems.logistic(X, y, 2e-2, "l1")
    opt = p.reference_optimum()
    _kkt_l1(p, opt.x, 1e-9)
    assert 0 < np.sum(np.abs(opt.x) > 1e-9) < 12  # genuinely sparse, not trivial
    assert opt.residual <= 1e-12


@pytest.mark.parametrize("lam", [0.005, 0.02])
def test_fused_optimum_matches_slsqp_on_the_epigraph_form(lam):
    X, _, _ = datasets.make_classification(200, 5, seed=3)
    w = np.array([6, 6, -4, 5, 5.0])  # features 0–1 and 3–4 share a weight: the fusion edges
    y = np.where(np.random.default_rng(0).uniform(size=200) < 1 / (1 + np.exp(-X @ w)), 1.0, -1.0)
    W = np.array([[1.0, -1, 0, 0, 0], [0, 1, -1, 0, 0], [0, 0, 0, 1, -1]])
    p = problems.graph_guided_fused_lasso(X, y, lam, W=W)
    A = p.constraint_matrix
    assert A.shape == (8, 5)
    np.testing.assert_array_equal(A[3:], np.eye(5))
    opt = p.reference_optimum()

    # independent: SLSQP on  min f(x) + λ Σ t  s.t.  t − Ax ≥ 0,  t + Ax ≥ 0  over (x, t)
    m = A.shape[0]

    def fun(v):
        return float(p.data_loss(v[:5])) + lam * v[5:].sum()

    def jac(v):
        return np.concatenate([p.gradient(v[:5]), lam * np.ones(m)])

    cons = [{"type": "ineq", "fun": lambda v: v[5:] - A @ v[:5], "jac": lambda v: np.hstack([-A, np.eye(m)])},
            {"type": "ineq", "fun": lambda v: v[5:] + A @ v[:5], "jac": lambda v: np.hstack([A, np.eye(m)])}]
    v0 = np.concatenate([np.zeros(5), np.ones(m)])
    res = scipy.optimize.minimize(fun, v0, jac=jac, constraints=cons, method="SLSQP",
                                  options={"ftol": 1e-15, "maxiter": 2000})
    F_ref = float(p.objective(res.x[:5]))
    assert _rel(opt.value, F_ref) < 1e-6
    assert opt.value <= F_ref + 1e-10
    np.testing.assert_allclose(opt.x, res.x[:5], atol=1e-5)
    # the penalty fuses: edge (3, 4) always, edge (0, 1) too at the larger λ, at non-zero weights
    fused = np.abs(W @ opt.x) < 1e-9
    assert fused.tolist() == [lam > 0.01, False, True]
    assert np.all(np.abs(opt.x) > 0.1)


def test_reference_optimum_is_cached_and_fast_on_small_problems(clf_data):
    X, y, _ = clf_data
    p = problems.logistic(X, y, 1e-2, "l1")
    t = time.perf_counter()
    a = p.reference_optimum()
    elapsed = time.perf_counter() - t
    assert p.reference_optimum() is a
    assert elapsed < 2.0  # typically ~20 ms: fine for live widgets


def test_adult_l1_reference_satisfies_kkt():
    X, y, Xt, yt = datasets.load_adult()
    p = problems.logistic(X, y, 1e-3, "l1", X_test=Xt, y_test=yt)
    opt = p.reference_optimum()
    _kkt_l1(p, opt.x, 1e-8)
    assert 0.80 < p.accuracy(opt.x) < 0.86


# ---------------------------------------------------------------------- derivatives
@pytest.mark.parametrize("make", [
    lambda X, y: problems.logistic(X, y, 0.1, "l2"),
    lambda X, y: problems.lasso(X, y + 0.3, 0.1),
])
def test_gradient_hessian_and_per_example_gradients(clf_data, make):
    X, y, _ = clf_data
    p = make(X, y)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(p.d)
    h = 1e-6
    E = np.eye(p.d)
    fd = np.array([(p.data_loss(x + h * e) - p.data_loss(x - h * e)) / (2 * h) for e in E])
    np.testing.assert_allclose(p.gradient(x), fd, atol=1e-8)
    fd_h = np.array([(p.gradient(x + h * e) - p.gradient(x - h * e)) / (2 * h) for e in E])
    np.testing.assert_allclose(p.hessian(x), fd_h, atol=1e-7)
    np.testing.assert_allclose(p.per_example_gradients(x).mean(axis=0), p.gradient(x), atol=1e-14)
    idx = np.array([3, 7, 11])
    slow = np.array([(p.data_loss(x + h * E, X[[j]], p.y[[j]]) - p.data_loss(x - h * E, X[[j]], p.y[[j]])) / (2 * h)
                     for j in idx])
    np.testing.assert_allclose(p.per_example_gradients(x, idx), slow, atol=1e-7)
    # vectorised over a stack of models
    Xs = rng.standard_normal((4, p.d))
    np.testing.assert_allclose(p.objective(Xs), [p.objective(v) for v in Xs])
    np.testing.assert_allclose(p.gradient(Xs), [p.gradient(v) for v in Xs])


def test_constants_bound_what_they_claim(clf_data):
    X, y, _ = clf_data
    p = problems.logistic(X, y, 0.1, "l2")
    rng = np.random.default_rng(1)
    worst = max(np.linalg.norm(p.per_example_gradients(100 * rng.standard_normal(p.d)), axis=1).max()
                for _ in range(20))
    assert worst <= p.lipschitz + 1e-12
    assert worst > 0.5 * p.lipschitz  # and it is not a loose bound
    assert p.lipschitz <= 1 + 1e-12  # rows of norm ≤ 1
    for _ in range(20):
        a, b = rng.standard_normal((2, p.d)) * 3
        assert np.linalg.norm(p.gradient(a) - p.gradient(b)) <= p.smoothness * np.linalg.norm(a - b) + 1e-12
        ga, gb = p.per_example_gradients(a), p.per_example_gradients(b)
        assert np.linalg.norm(ga - gb, axis=1).max() <= p.per_example_smoothness * np.linalg.norm(a - b) + 1e-12
    np.testing.assert_allclose(p.smoothness, np.linalg.eigvalsh(X.T @ X / len(y)).max() / 4)
    q = problems.lasso(X, y, 0.1)
    assert q.lipschitz == np.inf
    np.testing.assert_allclose(q.smoothness, np.linalg.eigvalsh(X.T @ X / len(y)).max())
    f = problems.graph_guided_fused_lasso(X, y, 0.1, W=np.array([[1.0, -1] + [0] * 10]))
    np.testing.assert_allclose(f.norm_AtA, np.linalg.eigvalsh(f.A.T @ f.A).max())
    assert p.norm_AtA == 1.0


# ---------------------------------------------------------------------- proximal operators
def _brute_prox(fun, v, step):
    return scipy.optimize.minimize_scalar(lambda u: step * fun(u) + 0.5 * (u - v) ** 2, bounds=(-10, 10),
                                          method="bounded", options={"xatol": 1e-12}).x


@pytest.mark.parametrize("penalty", ["l1", "l2"])
def test_prox_matches_brute_force(clf_data, penalty):
    X, y, _ = clf_data
    lam = 0.3
    p = problems.logistic(X, y, lam, penalty)
    r = (lambda u: lam * abs(u)) if penalty == "l1" else (lambda u: lam * 0.5 * u * u)
    v = np.array([-2.0, -0.5, -0.1, 0.0, 0.05, 0.4, 1.7])
    for step in (0.5, 2.0):
        expected = np.array([_brute_prox(r, vi, step) for vi in v])
        np.testing.assert_allclose(p.prox(v, step), expected, atol=1e-7)
        np.testing.assert_allclose(p.prox_g(v, step), expected, atol=1e-7)
    # g(y) is λ r(y) in the ADMM splitting
    np.testing.assert_allclose(p.g(v), lam * (np.abs(v).sum() if penalty == "l1" else 0.5 * v @ v))


def test_fused_prox_in_x_space_is_refused(clf_data):
    X, y, _ = clf_data
    p = problems.graph_guided_fused_lasso(X, y, 0.1, W=np.array([[1.0, -1] + [0] * 10]))
    with pytest.raises(ValueError, match="prox_g"):
        p.prox(np.zeros(12), 1.0)
    np.testing.assert_allclose(p.prox_g(np.array([0.3, -0.05]), 1.0), [0.2, 0.0])


# ---------------------------------------------------------------------- feature graph
def test_feature_graph_recovers_a_chain():
    rng = np.random.default_rng(0)
    d = 6
    precision = np.eye(d) + np.diag(np.full(d - 1, -0.45), 1) + np.diag(np.full(d - 1, -0.45), -1)
    X = rng.multivariate_normal(np.zeros(d), np.linalg.inv(precision), size=5000)
    W = problems.feature_graph(X, sparsity=0.3)
    edges = sorted((int(np.flatnonzero(r == 1)[0]), int(np.flatnonzero(r == -1)[0])) for r in W)
    assert edges == [(i, i + 1) for i in range(d - 1)]
    np.testing.assert_array_equal(np.abs(W).sum(axis=1), 2)
    P = problems.feature_graph(X, sparsity=0.3, form="pattern")
    np.testing.assert_array_equal(P, P.T)
    np.testing.assert_array_equal(P, (np.abs(np.diag(np.ones(d - 1), 1)) + np.diag(np.ones(d - 1), -1)))
    W[0, 0] = 99.0  # the cache hands out copies
    assert problems.feature_graph(X, sparsity=0.3)[0, 0] == 1.0
    p = problems.graph_guided_fused_lasso(X, np.where(X[:, 0] > 0, 1.0, -1.0), 0.1, sparsity=0.3)
    assert p.A.shape == (d - 1 + d, d)
    assert p.regularizer == "fused" and p.loss == "logistic"


def test_feature_graph_ignores_constant_columns():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((200, 4))
    X[:, 2] = 0.5
    W = problems.feature_graph(X, sparsity=0.01, form="pattern")
    assert not W[2].any() and not W[:, 2].any()


# ---------------------------------------------------------------------- agents
def test_agents_match_a_per_agent_loop():
    X, y, _ = datasets.make_classification(97, 6, seed=4)
    p = problems.logistic(X, y, 0.01, "l2")
    owner = datasets.split(97, 7, sizes="unequal", seed=2)
    agents = problems.make_agents(p, owner)
    assert agents.n_agents == 7 and agents.sizes.sum() == 97 and agents.sizes.min() != agents.sizes.max()
    W = np.random.default_rng(3).standard_normal((7, 6))
    for i in range(7):  # the slow reference: each agent's own data, one at a time
        mine = owner == i
        local = problems.logistic(X[mine], y[mine], 0.01, "l2")
        assert agents.loss(W)[i] == pytest.approx(local.data_loss(W[i]), abs=1e-14)
        np.testing.assert_allclose(agents.gradient(W)[i], local.gradient(W[i]), atol=1e-14)
        np.testing.assert_allclose(agents.hessian(W)[i], local.hessian(W[i]), atol=1e-14)
        G = agents.per_example_gradients(W)[i]
        np.testing.assert_allclose(G[: mine.sum()], local.per_example_gradients(W[i]), atol=1e-14)
        assert not G[mine.sum():].any()
    # the sample-weighted mean of local losses is the global loss at a common model
    common = np.tile(W[0], (7, 1))
    assert (agents.loss(common) * agents.sizes).sum() / 97 == pytest.approx(p.data_loss(W[0]), abs=1e-14)


def test_make_agents_errors(clf_data):
    X, y, _ = clf_data
    p = problems.logistic(X, y, 0.1)
    with pytest.raises(ValueError, match="owner must have one entry per sample"):
        problems.make_agents(p, np.zeros(3, int))
    with pytest.raises(ValueError, match="every agent must hold at least one sample"):
        problems.make_agents(p, np.where(np.arange(400) < 200, 0, 2))
    with pytest.raises(ValueError, match="owner must hold agent indices"):
        problems.make_agents(p, np.full(400, -1))
    with pytest.raises(ValueError, match="owner must hold whole agent indices"):
        problems.make_agents(p, np.full(400, 0.5))


# ---------------------------------------------------------------------- bad input
@pytest.mark.parametrize("build, match", [
    (lambda X, y: problems.logistic(np.where(np.eye(*X.shape) > 0, np.nan, X), y, 0.1), "X must contain only finite"),
    (lambda X, y: problems.logistic(X, y[:-1], 0.1), "X and y must have the same number of rows"),
    (lambda X, y: problems.logistic(X[0], y, 0.1), "X must be a 2-D array"),
    (lambda X, y: problems.logistic(X, (y + 1) / 2, 0.1), "y must hold labels -1 and \\+1"),
    (lambda X, y: problems.logistic(X, y, -0.1), "lam must be in \\(0, ∞\\)"),
    (lambda X, y: problems.lasso(X, y, 0.0), "lam must be in \\(0, ∞\\)"),
    (lambda X, y: problems.logistic(X, y, 0.1, penalty="l3"), "penalty must be one of"),
    (lambda X, y: problems.logistic(X, y, 0.1, X_test=X[:, :3], y_test=y), "X_test must be"),
    (lambda X, y: problems.logistic(X, y, 0.1, X_test=X), "X_test and y_test must be given together"),
    (lambda X, y: problems.graph_guided_fused_lasso(X, y, 0.1, W=np.ones((2, 3))), "W must have 12 columns"),
    (lambda X, y: problems.graph_guided_fused_lasso(X, y, 0.1, sparsity=0.0), "sparsity must be in"),
    (lambda X, y: problems.graph_guided_fused_lasso(X, y, 0.1, graph_matrix="dense"), "form must be one of"),
    (lambda X, y: problems.Problem(X, y, -1.0, "logistic", "l2"), "lam must be in \\[0, ∞\\)"),
    (lambda X, y: problems.Problem(X, y, 1.0, "hinge", "l2"), "loss must be one of"),
    (lambda X, y: problems.Problem(X, y, 1.0, "logistic", "fused"), "A must be given"),
])
def test_bad_inputs_name_the_parameter(clf_data, build, match):
    X, y, _ = clf_data
    with pytest.raises(ValueError, match=match):
        build(X, y)


def test_test_split_metrics(clf_data):
    X, y, w = clf_data
    p = problems.logistic(X[:300], y[:300], 0.01, X_test=X[300:], y_test=y[300:])
    assert p.accuracy(w) == pytest.approx(np.mean(np.sign(X[300:] @ w) == y[300:]))
    assert p.test_loss(w) == pytest.approx(p.data_loss(w, X[300:], y[300:]))
    assert problems.lasso(X, y, 0.1).test_loss(w) is None
    np.testing.assert_allclose(p.accuracy(np.stack([w, -w])), [p.accuracy(w), 1 - p.accuracy(w)])


# ---------------------------------------------------------------------- regression: the interior-point loop must end
_HANG_SCRIPT = """
import sys, numpy as np
from dpadmm_lite import datasets, problems
X, y, _ = datasets.make_classification(300, 20, seed=1)
i, j = np.triu_indices(20, 1)
pick = np.random.default_rng(0).choice(len(i), 121, replace=False)
W = np.zeros((121, 20)); W[np.arange(121), i[pick]] = 1.0; W[np.arange(121), j[pick]] = -1.0
p = problems.graph_guided_fused_lasso(X, y, 1e-3, W=W)
opt = p.reference_optimum()
np.savez(sys.argv[1], X=X, y=y, W=W, x=opt.x, value=opt.value, residual=opt.residual, iterations=opt.iterations)
"""


def _fused_kkt_violation(p, x, tol=1e-9):
    """Smallest ‖∇f(x) + Aᵀν‖ over dual points with ν = λ sign(Ax) where Ax ≠ 0 and |ν| ≤ λ elsewhere."""
    A, z = p.constraint_matrix, p.constraint_matrix @ x
    on = np.abs(z) > tol
    lo = np.where(on, p.lam * np.sign(z) - 1e-15, -p.lam)
    hi = np.where(on, p.lam * np.sign(z) + 1e-15, p.lam)
    res = scipy.optimize.lsq_linear(A.T, -p.gradient(x), bounds=(lo, hi), tol=1e-14, lsmr_tol="auto")
    return float(np.linalg.norm(A.T @ res.x + p.gradient(x)))


def test_fused_optimum_terminates_for_every_constraint_count(tmp_path):
    """m = 141 constraints made ``2m·(target/2m)`` round above ``target``: the old barrier loop re-centred
    at the floor μ forever (the 10,000-row Adult hang). Run in a subprocess so a regression fails, not hangs."""
    out = tmp_path / "opt.npz"
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", _HANG_SCRIPT, str(out)], check=True, timeout=90,
                   cwd=pathlib.Path(__file__).resolve().parents[1])
    assert time.perf_counter() - t < 60
    r = np.load(out)
    p = problems.graph_guided_fused_lasso(r["X"], r["y"], 1e-3, W=r["W"])
    assert p.constraint_matrix.shape == (141, 20)
    x = r["x"]
    assert float(r["value"]) == pytest.approx(float(p.objective(x)), rel=1e-14)
    assert float(r["residual"]) < 1e-12 and int(r["iterations"]) < 200
    assert 0 < np.sum(np.abs(p.constraint_matrix @ x) < 1e-9) < 141  # genuinely fused, not trivial
    assert _fused_kkt_violation(p, x) < 1e-8
    # independent: SLSQP on the epigraph form from a generic start
    A, m, d = p.constraint_matrix, 141, 20

    def fun(v):
        return float(p.data_loss(v[:d])) + 1e-3 * v[d:].sum()

    def jac(v):
        return np.concatenate([p.gradient(v[:d]), 1e-3 * np.ones(m)])

    cons = [{"type": "ineq", "fun": lambda v: v[d:] - A @ v[:d], "jac": lambda v: np.hstack([-A, np.eye(m)])},
            {"type": "ineq", "fun": lambda v: v[d:] + A @ v[:d], "jac": lambda v: np.hstack([A, np.eye(m)])}]
    res = scipy.optimize.minimize(fun, np.concatenate([np.zeros(d), np.ones(m)]), jac=jac, constraints=cons,
                                  method="SLSQP", options={"ftol": 1e-12, "maxiter": 2000})
    F_ref = float(p.objective(res.x[:d]))
    assert res.success and _rel(float(r["value"]), F_ref) < 1e-6
    assert float(r["value"]) <= F_ref + 1e-10


def test_barrier_budget_exhaustion_raises_instead_of_hanging(clf_data, monkeypatch):
    X, y, _ = clf_data
    monkeypatch.setattr(_reference, "_NEWTON_BUDGET", 4)
    with pytest.raises(RuntimeError, match="did not converge"):
        problems.logistic(X, y, 2e-2, "l1").reference_optimum()


def test_newton_solve_is_well_scaled():
    """A barrier-like system with a diagonal over 16 orders of magnitude: solved without warnings, exactly."""
    rng = np.random.default_rng(0)
    B = rng.normal(size=(30, 8))
    H = B.T @ B / 30 + np.diag(10.0 ** rng.uniform(-9, 7, size=8))
    v = rng.normal(size=8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sol = problems._solve_psd(H, H @ v)
    np.testing.assert_allclose(sol, v, rtol=1e-8)


def test_many_models_are_evaluated_in_blocks_with_the_same_values(clf_data, monkeypatch):
    """A stack of iterates larger than one block of margins gives, model by model, the loss and the
    accuracy of a direct evaluation (and the same shapes, including a stack of stacks)."""
    X, y, _ = clf_data
    p = problems.logistic(X, y, 1e-2, "l2", X_test=X[:50], y_test=y[:50])
    models = np.random.default_rng(0).standard_normal((2, 35, p.d))  # 70 = 23 blocks of 3 and one of 1
    monkeypatch.setattr(problems, "_MARGIN_BLOCK", 3 * p.n + 1)  # 3 models per block
    loss, accuracy = p.data_loss(models), p.accuracy(models)
    assert loss.shape == accuracy.shape == (2, 35)
    direct = np.array([[np.mean(np.logaddexp(0.0, -y * (X @ w))) for w in stack] for stack in models])
    assert np.allclose(loss, direct, rtol=1e-12)
    assert np.array_equal(accuracy, [[np.mean(np.where(X[:50] @ w >= 0, 1, -1) == y[:50]) for w in stack]
                                     for stack in models])
    assert np.isclose(p.data_loss(models[0, 5]), direct[0, 5], rtol=1e-12)  # one model: a scalar


def test_the_fused_graph_is_public_or_marked():
    """W given or estimated on public features: a public A; estimated from the training rows: marked."""
    X, y, _ = datasets.make_classification(120, 6, seed=4)
    public = datasets.make_classification(300, 6, seed=5)[0]
    rows = problems.graph_guided_fused_lasso(X, y, 0.1)
    assert rows.data_dependence == problems.GRAPH_FROM_TRAINING_ROWS
    np.testing.assert_array_equal(rows.A[:-6], problems.feature_graph(X))
    from_public = problems.graph_guided_fused_lasso(X, y, 0.1, public_features=public)
    assert from_public.data_dependence == ""
    np.testing.assert_array_equal(from_public.A, np.vstack([problems.feature_graph(public), np.eye(6)]))
    given = problems.graph_guided_fused_lasso(X, y, 0.1, W=np.array([[1.0, -1, 0, 0, 0, 0]]))
    assert given.data_dependence == "" and given.A.shape == (7, 6)
    assert rows.with_data(0.5 * X, y).data_dependence == rows.data_dependence  # the graph still came from X
    with pytest.raises(ValueError, match="W and public_features"):
        problems.graph_guided_fused_lasso(X, y, 0.1, W=given.A[:1], public_features=public)
    with pytest.raises(ValueError, match="public_features must have 6 columns"):
        problems.graph_guided_fused_lasso(X, y, 0.1, public_features=public[:, :4])
    with pytest.raises(TypeError, match="data_dependence"):
        problems.Problem(X, y, 0.1, "logistic", "l2", data_dependence=None)


def test_logistic_loss_of_margins_is_the_stable_formula_bit_for_bit_in_place():
    """``ℓ(z) = log(1 + e^{−bz})``, computed in place: the same bits as ``max(−u, 0) + log1p(e^{−|u|})``
    (``u = bz``), the value of ``logaddexp(0, −u)`` to an ulp, finite at |u| = 800, and for one margin (0-d)."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 3))
    p = problems.logistic(X / np.linalg.norm(X, axis=1, keepdims=True), np.sign(rng.standard_normal(40)), 1e-3, "l2")
    margins = np.concatenate([rng.standard_normal((5, 40)) * 6, np.tile([0.0, -800.0, 800.0, 1e-300], 10)[None]])
    u, before = p.y * margins, margins.copy()
    loss = p._loss_of_margin(margins, p.y)
    np.testing.assert_array_equal(margins, before)  # the margins given are not written
    np.testing.assert_array_equal(loss, np.maximum(-u, 0.0) + np.log1p(np.exp(-np.abs(u))))
    np.testing.assert_allclose(loss, np.logaddexp(0.0, -u), rtol=4e-16, atol=0)
    assert np.isfinite(loss).all() and loss.shape == margins.shape
    assert float(p._loss_of_margin(np.array(2.0), np.array(-1.0))) == 2.0 + np.log1p(np.exp(-2.0))
