"""Tests of dpadmm_lite.algorithms.xu2020: Xu et al. (2020) DP-ADMM and DP-AccADMM.

Each test can fail on a real number: iterates against a slow textbook re-implementation,
ε = ∞ against the non-private twins bit for bit, convergence against the reference optimum,
the noise actually added against the variance the calibration claims.
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest
from scipy import stats

import dpadmm_lite as dl
from dpadmm_lite import accounting, datasets, problems

from algorithm_cases import check_record_every

lin = importlib.import_module("dpadmm_lite.algorithms.xu2020")

COMMON = dict(delta=1e-3, rho=1.0, seed=3)


# ---------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def logistic_l1():
    X, y, _ = datasets.make_classification(300, 6, seed=1)
    Xte, yte, _ = datasets.make_classification(200, 6, seed=2)
    return problems.logistic(X, y, lam=1e-2, penalty="l1", X_test=Xte, y_test=yte)


@pytest.fixture(scope="module")
def fused():
    """A small graph-guided fused lasso with a fixed feature graph (a path 0-1-2-3-4-5)."""
    X, y, _ = datasets.make_classification(240, 6, seed=4)
    W = np.zeros((5, 6))
    W[np.arange(5), np.arange(5)] = 1.0
    W[np.arange(5), np.arange(1, 6)] = -1.0
    return problems.graph_guided_fused_lasso(X, y, lam=1e-2, W=W)


@pytest.fixture(scope="module")
def lasso():
    X, y, _ = datasets.make_lasso(200, 8, seed=5)
    return problems.lasso(X, y, lam=1e-2)


# ---------------------------------------------------------------------- slow textbook reference
def _reference_run(problem, *, rho, iterations, eta, gamma, noise, accelerated):
    """Algorithms 2 and 3 written out with loops and general B, c: no code shared with the library.

    The gradient is a loop over samples; the y-update is coordinate-wise soft-thresholding;
    the x-update solves the optimality condition (16) of the proximal problem (7) as a linear
    system (not the closed form); u₀ uses numpy's pseudo-inverse.
    """
    X, labels, n, d = problem.X, problem.y, problem.n, problem.d
    A = problem.constraint_matrix
    m = A.shape[0]
    B, c = -np.eye(m), np.zeros(m)
    G = gamma * np.eye(d) - eta * rho * A.T @ A

    def grad(x):
        total = np.zeros(d)
        for j in range(n):
            z = X[j] @ x
            if problem.loss == "logistic":
                total += -labels[j] / (1.0 + math.exp(labels[j] * z)) * X[j]
            else:
                total += (z - labels[j]) * X[j]
        return total / n

    def y_update(x, u):  # argmin g(y) + ρ/2‖Ax + By − c + u‖² with B = −I: soft-threshold Ax − c + u
        v = A @ x - c + u
        t = problem.lam / rho
        if problem.regularizer == "l2":
            return v / (1 + t)
        return np.array([math.copysign(max(abs(vi) - t, 0.0), vi) for vi in v])

    def x_update(x_prev, y, u, P):  # (16): ∇f + P + ρAᵀ(Ax + By − c + u) + G(x − x_prev)/η = 0
        lhs = rho * A.T @ A + G / eta
        rhs = G @ x_prev / eta - grad(x_prev) - P - rho * A.T @ (B @ y - c + u)
        return np.linalg.solve(lhs, rhs)

    x = np.zeros(d)
    u = -np.linalg.pinv(A.T) @ (grad(x) + noise[0]) / rho
    xs = []
    x_hat, u_hat, theta = x.copy(), u.copy(), 1.0
    for t in range(1, iterations + 1):
        if not accelerated:
            y = y_update(x, u)
            x = x_update(x, y, u, noise[t])
            u = u + A @ x + B @ y - c
        else:
            y = y_update(x_hat, u_hat)
            x_new = x_update(x_hat, y, u_hat, noise[t])
            u_new = u_hat + A @ x_new + B @ y - c
            theta_next = (1 + math.sqrt(1 + 4 * theta * theta)) / 2
            x_hat = x_new + (theta - 1) / theta_next * (x_new - x)
            u_hat = u_new + (theta - 1) / theta_next * (u_new - u)
            x, u, theta = x_new, u_new, theta_next
        xs.append(x.copy())
    return np.array(xs)


@pytest.mark.parametrize("accelerated", [False, True])
@pytest.mark.parametrize("which", ["logistic_l1", "fused"])
def test_iterates_match_slow_reference(request, which, accelerated):
    problem = request.getfixturevalue(which)
    rho, T = 0.7, 25
    eta, gamma = lin.step_settings(problem, rho=rho)
    gamma *= 1.3  # any γ ≥ γ_min
    sigma = 0.05
    it = lin._iterate(problem, rho=rho, iterations=T, eta=eta, gamma=gamma, sigma=sigma,
                      rng=np.random.default_rng(11), accelerated=accelerated)
    ref = _reference_run(problem, rho=rho, iterations=T, eta=eta, gamma=gamma, noise=it.noise,
                         accelerated=accelerated)
    assert np.abs(it.noise).max() > 0.01  # the comparison includes the noise path
    np.testing.assert_allclose(it.x, ref, rtol=0, atol=1e-11 * max(1.0, np.abs(ref).max()))


def test_noise_is_a_seeded_gaussian_draw(fused):
    """The noise used is exactly mechanisms.gaussian(default_rng(seed), σ, (T + 1, d))."""
    it = lin._iterate(fused, rho=1.0, iterations=7, eta=1.0, gamma=fused.norm_AtA + 1, sigma=0.3,
                      rng=np.random.default_rng(5), accelerated=False)
    replay = dl.mechanisms.gaussian(np.random.default_rng(5), 0.3, (8, fused.d))
    np.testing.assert_array_equal(it.noise, replay)


# ---------------------------------------------------------------------- ε = ∞ is the non-private twin
@pytest.mark.parametrize("private, twin", [("dp_admm", "admm_linearized"), ("dp_acc_admm", "acc_admm")])
def test_infinite_epsilon_is_the_non_private_twin_bit_for_bit(fused, private, twin):
    a = dl.run(private, fused, epsilon=math.inf, iterations=40, **COMMON)
    b = dl.run(twin, fused, iterations=40, **COMMON)
    np.testing.assert_array_equal(a.objective, b.objective)
    np.testing.assert_array_equal(a.model, b.model)
    assert a.noise["sigma"] == 0.0 and a.ledger == [] and math.isinf(a.privacy.epsilon)
    c = dl.run(private, fused, epsilon=1.0, iterations=40, **COMMON)  # and noise does change the run
    assert np.abs(c.model - b.model).max() > 1e-6


def test_non_private_twins_refuse_a_finite_epsilon(fused):
    for name in ("admm_linearized", "acc_admm"):
        with pytest.raises(ValueError, match="epsilon must be ∞"):
            dl.run(name, fused, epsilon=1.0, iterations=5)


# ---------------------------------------------------------------------- convergence
@pytest.mark.parametrize("which", ["logistic_l1", "fused", "lasso"])
def test_non_private_runs_converge_to_the_reference_optimum(request, which):
    problem = request.getfixturevalue(which)
    optimum = problem.reference_optimum().value
    eta = 1 / problem.smoothness  # no privacy here: the tight step read from the data (the default is public)
    plain = dl.run("admm_linearized", problem, rho=0.3, iterations=3000, eta=eta)
    acc = dl.run("acc_admm", problem, rho=0.3, iterations=800, restart=True, eta=eta)
    for trace in (plain, acc):
        assert np.all(np.isfinite(trace.objective))
        assert abs(trace.objective_gap[-1]) < 1e-8 * max(1.0, abs(optimum)), trace.summary()
        assert trace.metrics["constraint_residual"][-1] < 1e-6
    # acceleration pays: after 150 iterations AccADMM (with restart) is far closer than ADMM
    assert acc.objective_gap[149] < 0.1 * plain.objective_gap[149]


def test_momentum_without_restart_stalls_on_the_fused_lasso(fused):
    """Algorithm 3 as published (no restart) circles the optimum of this weakly convex problem."""
    eta = 1 / fused.smoothness
    published = dl.run("acc_admm", fused, rho=1.0, iterations=2000, eta=eta)
    restarted = dl.run("acc_admm", fused, rho=1.0, iterations=2000, restart=True, eta=eta)
    plain = dl.run("admm_linearized", fused, rho=1.0, iterations=2000, eta=eta)
    assert published.objective_gap[99] < 0.05 * plain.objective_gap[99]  # fast at first …
    assert published.objective_gap[-1000:].min() > 1e-6  # … then stuck
    assert restarted.objective_gap[-1] < 1e-9 and plain.objective_gap[-1] < 1e-5


# ---------------------------------------------------------------------- noise calibration
def test_paper_calibration_is_theorem_1(fused):
    eps, delta, T, mu = 0.5, 1e-3, 30, 0.3
    trace = dl.run("dp_admm", fused, epsilon=eps, delta=delta, rho=1.0, iterations=T, seed=0, mu=mu,
                   calibration="paper")
    c, n = fused.lipschitz, fused.n
    alpha = math.log(1 / delta) / ((1 - mu) * eps) + 1  # (13)
    assert trace.noise["sigma"] == pytest.approx(math.sqrt(c**2 * alpha * T / (2 * n**2 * eps * mu)), rel=1e-12)
    (event,) = trace.ledger
    assert event.mechanism == "gaussian" and event.count == T + 1  # T x-updates + u₀
    assert event.sensitivity == pytest.approx(2 * c / n)  # replace-one neighbours
    assert trace.privacy_paper.epsilon == eps and "Xu" in trace.privacy_paper.source
    assert trace.privacy.epsilon == pytest.approx(accounting.ledger_epsilon(trace.ledger, delta), rel=1e-9)


def test_accountant_calibration_is_the_default_and_meets_the_end_to_end_target(fused):
    eps, delta, T = 0.5, 1e-3, 30
    trace = dl.run("dp_acc_admm", fused, epsilon=eps, delta=delta, rho=1.0, iterations=T, seed=0)
    assert trace.params["calibration"] == "accountant"
    spent = accounting.ledger_epsilon(trace.ledger, delta)
    assert 0.97 * eps < spent <= eps  # tight, and never above the target
    (event,) = trace.ledger
    assert event.count == T + 1 and event.sensitivity == pytest.approx(2 * fused.lipschitz / fused.n)
    # the same noise multiplier as the exact Gaussian calibration of T + 1 releases (to calibrate_ledger's 0.5 %)
    z = accounting.calibrate_noise(eps, delta, steps=T + 1)
    assert trace.noise["sigma"] == pytest.approx(z * event.sensitivity, rel=5e-3)
    assert trace.noise["sigma"] >= z * event.sensitivity * (1 - 1e-9)
    assert trace.privacy.epsilon == pytest.approx(spent)
    # the paper's Theorem 1 read backwards says something else about the same σ
    assert trace.privacy_paper.epsilon == pytest.approx(
        accounting.xu2020_epsilon(trace.noise["sigma"], delta, iterations=T, n=fused.n, lipschitz=fused.lipschitz))


def test_default_step_is_public_and_sensitivity_ignores_the_data(fused):
    """η = 1/public_smoothness, c = feature_bound: halving the rows changes neither step nor noise."""
    half = fused.with_data(0.5 * fused.X, fused.y)
    runs = [dl.run("dp_admm", p, epsilon=1.0, delta=1e-3, rho=1.0, iterations=10, seed=0) for p in (fused, half)]
    assert runs[0].params["eta"] == runs[1].params["eta"] == pytest.approx(1 / fused.public_smoothness)
    assert runs[0].noise["sigma"] == runs[1].noise["sigma"]
    assert 1 / fused.public_smoothness <= 1 / fused.smoothness  # Lemma 5's η ≤ 1/L_f holds
    wide = fused.with_data(3.0 * fused.X, fused.y)
    with pytest.raises(ValueError, match="feature_bound"):
        dl.run("dp_admm", wide, epsilon=1.0, delta=1e-3, rho=1.0, iterations=5, seed=0)
    # clipping bounds the gradients but not the smoothness: on rows beyond the bound no public step exists …
    for name in ("dp_admm", "dp_acc_admm"):
        with pytest.raises(ValueError, match="eta must be given"):
            dl.run(name, wide, epsilon=1.0, delta=1e-3, rho=1.0, iterations=5, seed=0, clip=1.0)
    # … so the caller gives one, used as given (Lemma 5's check can only refuse it)
    clipped = dl.run("dp_admm", wide, epsilon=1.0, delta=1e-3, rho=1.0, iterations=5, seed=0, clip=1.0, eta=0.5)
    assert clipped.ledger[0].sensitivity == pytest.approx(2 * 1.0 / fused.n)  # c = clip on any data
    assert clipped.params["eta"] == 0.5 and clipped.params["gamma"] == pytest.approx(0.5 * wide.norm_AtA + 1)
    assert dl.run("admm_linearized", wide, rho=1.0, iterations=5).params["eta"] == pytest.approx(1 / wide.smoothness)
    with pytest.raises(ValueError, match="1/L_f"):  # without noise the tight, data-read Lemma 5 bound is checked
        dl.run("admm_linearized", fused, rho=1.0, iterations=5, eta=1.01 / fused.smoothness)


@pytest.mark.parametrize("accelerated", [False, True])
def test_recovered_noise_has_the_calibrated_variance(fused, accelerated):
    """Read the noise back out of the iterates of a public run and test its variance (χ² test)."""
    name = "dp_acc_admm" if accelerated else "dp_admm"
    T, rho, seed = 200, 1.0, 8
    trace = dl.run(name, fused, epsilon=2.0, delta=1e-3, rho=rho, iterations=T, seed=seed)
    sigma, eta, gamma = trace.noise["sigma"], trace.params["eta"], trace.params["gamma"]
    it = lin._iterate(fused, rho=rho, iterations=T, eta=eta, gamma=gamma, sigma=sigma,
                      rng=np.random.default_rng(seed), accelerated=accelerated)
    np.testing.assert_array_equal(it.x[-1], trace.model)  # the same run as the public one
    A = fused.constraint_matrix
    # the point each x-update started from: x_{t−1} (Alg. 2) or x̂_{t−1} (Alg. 3)
    x_prev = np.vstack([it.x0, it.x[:-1]])
    u_prev = np.vstack([it.u0, it.u[:-1]])
    if accelerated:
        theta = [1.0]
        for _ in range(T):
            theta.append((1 + math.sqrt(1 + 4 * theta[-1] ** 2)) / 2)
        w = np.array([(theta[k] - 1) / theta[k + 1] for k in range(T)])  # weight used after step k + 1
        x_before = np.vstack([it.x0, it.x0, it.x[:-2]])
        u_before = np.vstack([it.u0, it.u0, it.u[:-2]])
        wk = np.concatenate([[0.0], w[:-1]])[:, None]
        x_prev = x_prev + wk * (x_prev - x_before)
        u_prev = u_prev + wk * (u_prev - u_before)
    residual = x_prev @ A.T - it.y + u_prev
    recovered = (x_prev - it.x) * gamma / eta - fused.gradient(x_prev) - rho * residual @ A
    np.testing.assert_allclose(recovered, it.noise[1:], atol=1e-8 * max(1, sigma))
    # the recovered noise is N(0, σ²): χ² test of the sum of squares with T·d degrees of freedom
    k = recovered.size
    statistic = (recovered**2).sum() / sigma**2
    assert stats.chi2.ppf(1e-4, k) < statistic < stats.chi2.ppf(1 - 1e-4, k)
    assert abs(recovered.mean()) < 5 * sigma / math.sqrt(k)


def test_sigma_scales_like_sqrt_T_over_n(fused):
    """Theorem 1: σ ∝ √T / n at fixed (ε, δ, μ)."""
    s = lambda T, p: dl.run("dp_admm", p, epsilon=0.3, delta=1e-3, rho=1.0, iterations=T, seed=0,  # noqa: E731
                            calibration="paper").noise["sigma"]
    half = fused.with_data(fused.X[: fused.n // 2], fused.y[: fused.n // 2])
    assert s(40, fused) / s(10, fused) == pytest.approx(2.0, rel=1e-12)
    assert s(10, half) / s(10, fused) == pytest.approx(2.0, rel=1e-12)


# ---------------------------------------------------------------------- bad and extreme inputs
@pytest.mark.parametrize("options, match", [
    (dict(mu=1.0), "mu must be in \\(0, 1\\)"),
    (dict(mu=0.0), "mu must be in \\(0, 1\\)"),
    (dict(eta=0.0), "eta must be in \\(0"),
    (dict(eta=-1.0), "eta must be in \\(0"),
    (dict(eta=1e6), "eta must be in \\(0, 1/L_f"),
    (dict(gamma=1.0), "gamma must be >= γ_min"),  # the paper's γ = 1 violates its own condition
    (dict(gamma="one"), "gamma must be a number >= γ_min .* or 'paper'"),
    (dict(calibration="tight"), "calibration must be one of"),
    (dict(clip=0.0), "clip must be in \\(0"),
])
def test_bad_options_raise_clear_errors(fused, options, match):
    with pytest.raises(ValueError, match=match):
        dl.run("dp_admm", fused, epsilon=1.0, iterations=5, **COMMON, **options)


def test_paper_gamma_runs_gamma_one_and_matches_the_reference(fused):
    """gamma="paper" is the paper's γ = 1 (Sec. V-B): the update with step η/1 against the slow reference, with
    the same noise and ledger as the default γ_min (γ is post-processing)."""
    rho, T, eta = 1.0, 6, 0.5
    trace = dl.run("dp_admm", fused, epsilon=1.0, iterations=T, eta=eta, gamma="paper", **COMMON)
    default = dl.run("dp_admm", fused, epsilon=1.0, iterations=T, eta=eta, **COMMON)
    assert trace.params["gamma"] == 1.0 and default.params["gamma"] == pytest.approx(eta * rho * fused.norm_AtA + 1)
    assert trace.noise["sigma"] == default.noise["sigma"] and trace.privacy == default.privacy
    it = lin._iterate(fused, rho=rho, iterations=T, eta=eta, gamma=1.0, sigma=trace.noise["sigma"],
                      rng=np.random.default_rng(COMMON["seed"]), accelerated=False)
    ref = _reference_run(fused, rho=rho, iterations=T, eta=eta, gamma=1.0, noise=it.noise, accelerated=False)
    np.testing.assert_allclose(it.x, ref, rtol=0, atol=1e-11 * max(1.0, np.abs(ref).max()))
    np.testing.assert_array_equal(trace.model, it.x[-1])


def test_squared_loss_needs_clipping_for_privacy(lasso):
    with pytest.raises(ValueError, match="clip must be given"):
        dl.run("dp_admm", lasso, epsilon=1.0, iterations=5, **COMMON)
    trace = dl.run("dp_admm", lasso, epsilon=1.0, iterations=50, clip=0.5, **COMMON)
    assert trace.ledger[0].sensitivity == pytest.approx(2 * 0.5 / lasso.n)
    assert np.all(np.isfinite(trace.objective))


def test_clipped_gradient_matches_per_example_clipping(lasso):
    x = np.random.default_rng(0).standard_normal(lasso.d)
    clipped = dl.mechanisms.clip(lasso.per_example_gradients(x), 0.2).mean(axis=0)
    np.testing.assert_allclose(lin._gradient_oracle(lasso, 0.2)(x), clipped, rtol=1e-12, atol=1e-15)


def test_sparse_features_take_the_csr_path_with_the_same_gradients(fused):
    """Features with few non-zeros (Adult's one-hot columns) use a CSR copy; the gradients are the same."""
    X = np.where(np.abs(fused.X) > 0.6, fused.X, 0.0)
    sparse = fused.with_data(X, fused.y)
    assert np.count_nonzero(X) < lin.SPARSE_BELOW * X.size
    x = np.random.default_rng(1).standard_normal(sparse.d)
    assert lin.scipy.sparse.issparse(lin._data_matrix(sparse))
    np.testing.assert_allclose(lin._gradient_oracle(sparse, None)(x), sparse.gradient(x), rtol=1e-12, atol=1e-15)
    clipped = dl.mechanisms.clip(sparse.per_example_gradients(x), 0.1).mean(axis=0)
    np.testing.assert_allclose(lin._gradient_oracle(sparse, 0.1)(x), clipped, rtol=1e-12, atol=1e-15)
    a = dl.run("dp_admm", sparse, epsilon=math.inf, iterations=30, **COMMON)
    b = dl.run("admm_linearized", sparse, iterations=30, **COMMON)
    np.testing.assert_array_equal(a.model, b.model)


@pytest.mark.parametrize("name", ["dp_admm", "dp_acc_admm"])
@pytest.mark.parametrize("settings", [dict(epsilon=0.01, rho=1.0, iterations=60),
                                      dict(epsilon=1.0, rho=1e-3, iterations=60),
                                      dict(epsilon=0.01, rho=100.0, iterations=1),
                                      dict(epsilon=10.0, rho=1e-3, iterations=1)])
def test_extreme_settings_stay_finite(fused, name, settings):
    trace = dl.run(name, fused, delta=1e-3, seed=0, **settings)
    assert np.all(np.isfinite(trace.objective)) and np.all(np.isfinite(trace.model))
    assert trace.objective.shape == (settings["iterations"],)
    assert math.isfinite(trace.privacy.epsilon) and trace.privacy.epsilon > 0


def test_registered_and_described():
    table = dl.algorithm_table()
    for name in ("dp_admm", "dp_acc_admm", "admm_linearized", "acc_admm"):
        assert name in table.index
    assert table.loc["dp_admm", "private"] and not table.loc["acc_admm", "private"]


# ---------------------------------------------------------------------- chapter exercises
def test_exercise_checks_accept_the_solutions_and_reject_wrong_answers():
    from dpadmm_book.exercises import xu2020 as ex

    problem, rho, eta, gamma = ex.x_update_data()
    A = problem.constraint_matrix
    x0 = np.zeros(problem.d)
    u0 = -np.linalg.pinv(A.T) @ problem.gradient(x0) / rho  # the solution printed in the chapter
    y1 = problem.prox_g(A @ x0 + u0, 1 / rho)
    x1 = x0 - eta / gamma * (problem.gradient(x0) + rho * A.T @ (A @ x0 - y1 + u0))
    assert ex.check_x_update(x1) and not ex.check_x_update(1.01 * x1)
    assert ex.check_sigma_ratio(1.5) and not ex.check_sigma_ratio(3.0)
    missing = ex.check_x_update(...)
    assert not missing and "not answered yet" in missing.message


@pytest.mark.parametrize("name, options", [("dp_admm", {}), ("dp_acc_admm", {"restart": True}),
                                           ("admm_linearized", {})])
def test_recording_every_kth_step_keeps_the_run_and_scores_those_steps(fused, name, options):
    private = {"epsilon": 1.0, "delta": 1e-5} if name.startswith("dp_") else {}
    check_record_every(lambda k: dl.run(name, fused, rho=0.5, iterations=23, seed=4, record_every=k, **private,
                                        **options))
