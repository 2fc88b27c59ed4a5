"""Liu et al. (2022): DP-SADMM, DP-VRADMM and their non-private twins (dpadmm_lite/algorithms/liu2022.py).

* The algorithms against references written here from the paper's pseudo-code (Algorithms 1 and 2,
  eq. 5), with Q_ν⁻¹ as a dense solve: ν = 0 is exactly the unsmoothed algorithm, ν > 0 smooths the
  whole bracket of eq. (5); ε = ∞ is the non-private twin bit for bit.
* The non-private twins converge to the reference optimum of the section-A problems (and of the
  strongly convex ridge + ℓ1 problem); the strongly convex dual restart is biased when A is not
  of full row rank (the graph-guided A = [W; I]), as the chapter says.
* Bad inputs name the parameter.
* Privacy: the budget is met end to end; ``calibration="paper"`` draws Theorem 2's σ and Theorem 1's
  σ (written out here); Theorem 2's side conditions fail at the paper's δ = 5e-4, ε ≤ 1 on its own
  datasets; the liu2022_* functions read Theorems 1 and 2 backwards; the ledger (Poisson sampling,
  the exact replace-one pair with the per-record bound c/b) is checked against dp-accounting's
  REPLACE_ONE analysis of the sampling the algorithm uses, and the SVRG difference's per-record
  bound against worst-case records; Algorithm 1 as printed (exact snapshot gradient) gets the ε of a
  split of its noise, checked against the exact Gaussian ε where the split is exact (q = 1) and
  against the two parts' own ε (lower bounds).
* What a trace reports of the work: the expected per-example gradients (b per minibatch, n per
  snapshot), the same whatever batches were drawn; the drawn sizes only under a key that says they are
  not private. The ledger's sampling rate is the rate the minibatches are drawn at (DP-VRADMM has no
  audit at its sampling rate: this is its check), and a ledger recording a quarter of it fails.
* The exercise checks answer like a teacher.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpadmm_lite as dl
import dpadmm_book as book
from dpadmm_lite import accounting, audit, datasets, privacy, problems, smoothing
from dpadmm_lite.algorithms import liu2022 as st
from dpadmm_book.exercises import liu2022 as ex


# ---------------------------------------------------------------------- problems
@pytest.fixture(scope="module")
def fused():
    X, y, _ = datasets.make_classification(300, 6, seed=1)
    W = np.array([[1.0, -1, 0, 0, 0, 0], [0, 1, -1, 0, 0, 0], [0, 0, 0, 1, -1, 0]])
    return problems.graph_guided_fused_lasso(X, y, lam=1e-2, W=W, X_test=X[:50], y_test=y[:50])


@pytest.fixture(scope="module")
def ridge_l1():
    """Strongly convex f (ridge in every f_i) with an ℓ1 penalty: A = I has full row rank."""
    X, y, _ = datasets.make_classification(300, 6, seed=1)
    return st.RidgeProblem(X, y, 1e-2, "logistic", "l1", ridge=1e-2)


@pytest.fixture(scope="module")
def ridge_fused():
    X, y, _ = datasets.make_classification(300, 6, seed=1)
    W = np.array([[1.0, -1, 0, 0, 0, 0], [0, 1, -1, 0, 0, 0], [0, 0, 0, 1, -1, 0]])
    return st.graph_guided_logistic(X, y, lam=1e-2, ridge=1e-2, W=W)


# ---------------------------------------------------------------------- references from the paper
def _q_solve(d, nu, v):
    return v if nu == 0 else np.linalg.solve(smoothing.smoothing_matrix(d, nu), v)


def reference_sadmm(problem, *, rho, T, seed, sigma, b, nu, eta1=1.0):
    """Algorithm 2, general convex, line by line (Poisson minibatches as the library draws them)."""
    A = problem.constraint_matrix
    n, d = problem.n, problem.d
    gamma = 1 + eta1 * rho * np.linalg.norm(A, 2) ** 2
    batch_rng, noise_rng = np.random.default_rng(seed).spawn(2)
    U = sigma * noise_rng.standard_normal((T, d)) if sigma > 0 else np.zeros((T, d))
    x, lam, xs = np.zeros(d), np.zeros(A.shape[0]), []
    for t in range(T):
        B = batch_rng.choice(n, size=batch_rng.binomial(n, b / n), replace=False)
        grad = problem.per_example_gradients(x, B).sum(axis=0) / b
        y = problem.prox_g(A @ x + lam, 1 / rho)
        eta = eta1 / math.sqrt(t + 1)
        x = x - eta / gamma * _q_solve(d, nu, grad + U[t] + rho * A.T @ (A @ x - y + lam))
        lam = lam + A @ x - y
        xs.append(x)
    return np.cumsum(xs, axis=0) / np.arange(1, T + 1)[:, None]


def reference_vradmm(problem, *, rho, S, m, seed, sigma, sigma_p, b, nu, strong):
    """Algorithm 1 (SC or GC) with the book's noisy snapshot p̂, line by line."""
    A = problem.constraint_matrix
    n, d = problem.n, problem.d
    g = problem.per_example_smoothness
    eta = 1 / (2 * g)
    gamma = 1 + eta * rho * np.linalg.norm(A, 2) ** 2
    batch_rng, noise_rng = np.random.default_rng(seed).spawn(2)
    U = sigma * noise_rng.standard_normal((S, m, d)) if sigma > 0 else np.zeros((S, m, d))
    P = sigma_p * noise_rng.standard_normal((S, d)) if sigma_p > 0 else np.zeros((S, d))
    x_tilde = x_hat = np.zeros(d)
    lam = np.zeros(A.shape[0])
    snaps = []
    for s in range(S):
        p = problem.gradient(x_tilde) + P[s]
        if strong:
            x, lam = x_tilde, -np.linalg.pinv(A.T) @ p / rho
        else:
            x = x_hat
        xs = []
        for _ in range(m):
            B = batch_rng.choice(n, size=batch_rng.binomial(n, b / n), replace=False)
            loss_grads = problems.Problem.per_example_gradients  # the loss part; the ridge λ₂x is added exactly
            G = ((loss_grads(problem, x, B) - loss_grads(problem, x_tilde, B)).sum(0) / b
                 + getattr(problem, "ridge", 0.0) * (x - x_tilde) + p + U[s, _])
            y = problem.prox_g(A @ x + lam, 1 / rho)
            x = x - eta / gamma * _q_solve(d, nu, G + rho * A.T @ (A @ x - y + lam))
            lam = lam + A @ x - y
            xs.append(x)
        x_tilde, x_hat = np.mean(xs, axis=0), x
        snaps.append(x_tilde)
    snaps = np.array(snaps)
    return snaps if strong else np.cumsum(snaps, axis=0) / np.arange(1, S + 1)[:, None]


@pytest.mark.parametrize("nu", [0.0, 2.0])
def test_dp_sadmm_is_algorithm_2_with_the_whole_bracket_smoothed(fused, nu):
    trace = dl.run("dp_sadmm", fused, epsilon=1.0, delta=1e-5, rho=0.5, iterations=25, seed=3, nu=nu, batch_size=30)
    expected = reference_sadmm(fused, rho=0.5, T=25, seed=3, sigma=trace.noise["sigma"], b=30, nu=nu)
    np.testing.assert_allclose(fused.objective(expected), trace.objective, rtol=1e-11)
    np.testing.assert_allclose(expected[-1], trace.model, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("strong", [False, True])
@pytest.mark.parametrize("nu", [0.0, 3.0])
def test_dp_vradmm_is_algorithm_1_with_a_noisy_snapshot(fused, ridge_fused, strong, nu):
    problem = ridge_fused if strong else fused
    trace = dl.run("dp_vradmm", problem, epsilon=1.0, delta=1e-5, rho=0.5, iterations=3, seed=5, nu=nu,
                   batch_size=30, inner=7)
    assert trace.params["convexity"] == ("strong" if strong else "general")
    expected = reference_vradmm(problem, rho=0.5, S=3, m=7, seed=5, sigma=trace.noise["sigma"],
                                sigma_p=trace.noise["sigma_snapshot"], b=30, nu=nu, strong=strong)
    np.testing.assert_allclose(expected[-1], trace.model, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(problem.objective(expected), trace.objective, rtol=1e-10)


@pytest.mark.parametrize("name", ["dp_sadmm", "sadmm", "dp_vradmm", "svrg_admm"])
def test_nu_zero_never_calls_the_smoother(fused, name, monkeypatch):
    kw = dict(rho=0.5, iterations=4 if "vr" in name or "svrg" in name else 20, seed=1, nu=0.0, batch_size=30)
    if name.startswith("dp_"):
        kw.update(epsilon=2.0, delta=1e-5)
    before = dl.run(name, fused, **kw)
    monkeypatch.setattr(st, "smooth_checked", lambda v, nu: v if nu == 0 else 1 / 0)
    after = dl.run(name, fused, **kw)
    np.testing.assert_array_equal(before.objective, after.objective)
    np.testing.assert_array_equal(before.model, after.model)


@pytest.mark.parametrize("private, twin, T", [("dp_sadmm", "sadmm", 40), ("dp_vradmm", "svrg_admm", 3)])
@pytest.mark.parametrize("which", ["fused", "ridge_fused"])
def test_infinite_epsilon_is_the_non_private_twin_bit_for_bit(request, private, twin, T, which):
    problem = request.getfixturevalue(which)
    kw = dict(rho=0.3, iterations=T, seed=4, nu=2.0, batch_size=25)
    a = dl.run(private, problem, epsilon=math.inf, delta=1e-5, **kw)
    b = dl.run(twin, problem, **kw)
    np.testing.assert_array_equal(a.objective, b.objective)
    np.testing.assert_array_equal(a.model, b.model)
    np.testing.assert_array_equal(a.metrics["constraint_residual"], b.metrics["constraint_residual"])
    assert a.ledger == [] and not math.isfinite(a.privacy.epsilon)


def test_non_private_twins_refuse_a_finite_epsilon(fused):
    for twin in ("sadmm", "svrg_admm"):
        with pytest.raises(ValueError, match="epsilon must be ∞"):
            dl.run(twin, fused, epsilon=1.0, iterations=2)


# ---------------------------------------------------------------------- convergence
def _snapshots(problem, nu, S, rho=0.1):
    s = st.settings(problem, algorithm="svrg_admm", rho=rho, nu=nu)
    run = st._vradmm_iterate(problem, s, rho=rho, iterations=S, sigma=0.0, sigma_snapshot=0.0, seed=0)
    return run


@pytest.mark.parametrize("nu", [0.0, 2.0])
def test_svrg_admm_converges_to_the_reference_optimum(fused, ridge_l1, nu):
    # strongly convex, A = I: the released snapshot x̃^S converges linearly
    tr = dl.run("svrg_admm", ridge_l1, rho=0.1, iterations=400, seed=0, nu=nu)
    assert tr.params["convexity"] == "strong"
    assert abs(tr.objective_gap[-1]) < 1e-8 * (1 + abs(ridge_l1.reference_optimum().value))
    # general convex (graph-guided fused lasso): the iterates converge; the released mean of the
    # snapshots follows at the rate O(1/S)
    run = _snapshots(fused, nu, 400)
    gaps = fused.objective(run.extra["snapshots"]) - fused.reference_optimum().value
    assert abs(gaps[-1]) < 1e-8
    released = fused.objective(run.released) - fused.reference_optimum().value
    assert 0 < released[-1] < released[49] / 3


def test_sadmm_converges_to_the_reference_optimum(fused, ridge_l1):
    # strongly convex (weighted average, capped steps), full batches: O(1/T)
    tr = dl.run("sadmm", ridge_l1, rho=0.1, iterations=4000, seed=0, nu=0.0, batch_size=ridge_l1.n)
    assert tr.objective_gap[-1] < 1e-8
    tr = dl.run("sadmm", ridge_l1, rho=0.1, iterations=4000, seed=0, nu=2.0, batch_size=ridge_l1.n)
    assert tr.objective_gap[-1] < 1e-5
    # general convex: η_t = 1/√t and the uniform average, O(1/√T) — slow but on its way
    tr = dl.run("sadmm", fused, rho=0.1, iterations=6000, seed=0, nu=0.0, batch_size=fused.n, eta=2.0)
    assert tr.objective_gap[-1] < 1e-2 and tr.objective_gap[-1] < tr.objective_gap[599] / 3
    # minibatches (b = 50): still converging
    tr = dl.run("sadmm", ridge_l1, rho=0.1, iterations=3000, seed=0, nu=0.0, batch_size=50)
    assert tr.objective_gap[-1] < 1e-3


def test_strongly_convex_restart_is_biased_when_A_lacks_full_row_rank(ridge_fused):
    # Theorem 4 assumes A of full row rank; A = [W; I] has more rows than columns, so the restart
    # λ₀ = −(1/β)(Aᵀ)^†∇f(x̃) is the minimum-norm dual, not the optimal one: the iterates stall
    tr = dl.run("svrg_admm", ridge_fused, rho=0.1, iterations=150, seed=0, nu=0.0)
    assert 1e-7 < tr.objective_gap[-1] < 1e-4
    assert abs(tr.objective_gap[-1] - tr.objective_gap[99]) < 2e-2 * tr.objective_gap[-1]


def test_ridge_problem_is_consistent_and_its_optimum_certified(ridge_fused, ridge_l1):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(ridge_fused.d)
    h = 1e-6
    numeric = np.array([(ridge_fused.objective(x + h * e) - ridge_fused.objective(x - h * e)) / (2 * h)
                        for e in np.eye(ridge_fused.d)])
    smooth_part = ridge_fused.gradient(x)
    subgradient = ridge_fused.lam * ridge_fused.A.T @ np.sign(ridge_fused.A @ x)
    np.testing.assert_allclose(numeric, smooth_part + subgradient, rtol=1e-6, atol=1e-8)
    H = ridge_fused.hessian(x)
    numeric_h = np.column_stack([(ridge_fused.gradient(x + h * e) - ridge_fused.gradient(x - h * e)) / (2 * h)
                                 for e in np.eye(ridge_fused.d)])
    np.testing.assert_allclose(H, numeric_h, rtol=1e-5, atol=1e-8)
    # optimality of the ridge + ℓ1 optimum: |∇f_k + λ₂x_k| ≤ λ on zero coordinates, = −λ sign(x_k) elsewhere
    opt = ridge_l1.reference_optimum()
    g = ridge_l1.gradient(opt.x)
    nonzero = np.abs(opt.x) > 1e-7
    np.testing.assert_allclose(g[nonzero], -ridge_l1.lam * np.sign(opt.x[nonzero]), atol=1e-7)
    assert np.all(np.abs(g[~nonzero]) <= ridge_l1.lam + 1e-7)
    assert opt.residual < 1e-10
    # no point near the fused optimum does better
    best = ridge_fused.reference_optimum()
    trials = best.x + 1e-3 * rng.standard_normal((200, ridge_fused.d))
    assert np.all(ridge_fused.objective(trials) >= best.value - 1e-12)
    assert ridge_fused.with_data(ridge_fused.X, ridge_fused.y).ridge == ridge_fused.ridge


# ---------------------------------------------------------------------- bad inputs
@pytest.mark.parametrize("name", ["dp_sadmm", "sadmm", "dp_vradmm", "svrg_admm"])
def test_bad_inputs_name_the_parameter(fused, name):
    private = name.startswith("dp_")
    base = dict(rho=1.0, iterations=2, seed=0, **({"epsilon": 1.0, "delta": 1e-5} if private else {}))
    bad = [({"nu": -0.5}, r"nu \(the smoothing strength ν\)"), ({"nu": math.nan}, "nu"),
           ({"batch_size": 0}, r"batch_size must be a whole number in \[1, n = 300\]"),
           ({"batch_size": 301}, "batch_size"), ({"batch_size": 2.5}, "batch_size"),
           ({"eta": 100.0}, r"eta must be in \(0, 1/\(2g\)"), ({"eta": -1.0}, "eta"),
           ({"gamma": 0.5}, "gamma must be >= γ_min"), ({"convexity": "concave"}, "convexity must be one of"),
           ({"convexity": "strong"}, "mu"), ({"calibration": "exact"}, "calibration must be one of"),
           ({"clip": 0.0}, "clip")]
    if "vr" in name or "svrg" in name:
        bad += [({"inner": 0}, "inner must be a whole number >= 1"), ({"snapshot_noise": -1.0}, "snapshot_noise"),
                ({"private_snapshot": "yes"}, "private_snapshot")]
    for options, message in bad:
        if not private and options.keys() & {"calibration", "snapshot_noise", "private_snapshot"}:
            continue  # the twins draw no noise: those options are never read
        with pytest.raises(ValueError, match=message):
            dl.run(name, fused, **{**base, **options})
    for iterations in (0, -3, 1.5):
        with pytest.raises(ValueError, match="iterations"):
            dl.run(name, fused, **{**base, "iterations": iterations})
    # called directly, the registry's wrapper refuses it first (dpadmm_lite/registry.py, check_arguments)
    with pytest.raises(ValueError, match=r"iterations must be a whole number >= 1, got 0"):
        getattr(st, name)(fused, **{"epsilon": math.inf, "delta": 1e-5, **base, "iterations": 0})


def test_private_runs_use_public_bounds_only(fused):
    X, y = fused.X * 3.0, fused.y  # rows beyond feature_bound = 1
    big = problems.graph_guided_fused_lasso(X, y, lam=1e-2, W=fused.A[:3])
    for name, it in (("dp_sadmm", 3), ("dp_vradmm", 1)):
        with pytest.raises(ValueError, match="feature_bound"):
            dl.run(name, big, epsilon=1.0, delta=1e-5, rho=1.0, iterations=it)
        # clipping covers them, but not the default step: g bounds the smoothness only within feature_bound
        with pytest.raises(ValueError, match="eta must be given"):
            dl.run(name, big, epsilon=1.0, delta=1e-5, rho=1.0, iterations=it, clip=1.0)
        clipped = dl.run(name, big, epsilon=1.0, delta=1e-5, rho=1.0, iterations=it, clip=1.0, eta=0.5)
        # per-record bound C = clip/b (the SVRG difference of two clipped gradients: 2·clip/b); Δ = 2C
        assert clipped.ledger[0].sensitivity == pytest.approx(1.0 / 50 * (1 if name == "dp_sadmm" else 2))
        assert clipped.ledger[0].neighbours == "replace_one"
        # a clip above the public bound c = 1: the ledger's bound is c, which holds only for rows within it
        with pytest.raises(ValueError, match="feature_bound"):
            dl.run(name, big, epsilon=1.0, delta=1e-5, rho=1.0, iterations=it, clip=2.0, eta=0.5)
    lasso = problems.lasso(*datasets.make_lasso(100, 5, seed=0)[:2], 1e-2)
    with pytest.raises(ValueError, match="clip must be given"):
        dl.run("dp_sadmm", lasso, epsilon=1.0, delta=1e-5, rho=1.0, iterations=3)
    trace = dl.run("dp_sadmm", lasso, epsilon=1.0, delta=1e-5, rho=1.0, iterations=3, clip=0.5)
    assert trace.ledger[0].sensitivity == pytest.approx(0.5 / 50)
    # the noise does not follow the data's scale; the step sizes come from the public smoothness
    half = problems.graph_guided_fused_lasso(fused.X * 0.5, y, lam=1e-2, W=fused.A[:3])
    for name, it in (("dp_sadmm", 5), ("dp_vradmm", 1)):
        a = dl.run(name, fused, epsilon=1.0, delta=1e-5, rho=1.0, iterations=it)
        b = dl.run(name, half, epsilon=1.0, delta=1e-5, rho=1.0, iterations=it)
        assert a.ledger == b.ledger and a.params["eta"] == b.params["eta"] and a.params["gamma"] == b.params["gamma"]


# ---------------------------------------------------------------------- privacy: the budget and the ledger
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("name, options", [
    ("dp_sadmm", {"iterations": 60}),
    ("dp_sadmm", {"iterations": 60, "batch_size": 300}),
    ("dp_vradmm", {"iterations": 3}),
    ("dp_vradmm", {"iterations": 2, "snapshot_noise": 1.0}),
])
def test_the_budget_is_met_end_to_end(fused, epsilon, name, options):
    trace = dl.run(name, fused, epsilon=epsilon, delta=1e-5, rho=1.0, seed=0, **options)
    assert 0.97 * epsilon <= trace.privacy.epsilon <= epsilon
    assert trace.privacy.epsilon == pytest.approx(accounting.ledger_epsilon(trace.ledger, 1e-5))
    q = trace.noise["sampling_rate"]
    inner = trace.ledger[0]
    assert inner.sampling_rate == pytest.approx(q) and inner.noise == pytest.approx(trace.noise["sigma"])
    assert inner.neighbours == "replace_one"  # the exact replace-one pair, per-record bound c/b
    assert inner.sensitivity == pytest.approx(fused.feature_bound / trace.noise["batch_size"])
    if name == "dp_vradmm":
        S, m = options["iterations"], trace.noise["inner"]
        assert inner.count == S * m
        snapshot = trace.ledger[1]
        assert snapshot.count == S and snapshot.sampling_rate == 1.0
        assert snapshot.sensitivity == pytest.approx(2 * fused.feature_bound / fused.n)
        assert snapshot.noise == pytest.approx(trace.noise["sigma_snapshot"])
        ratio = options.get("snapshot_noise", 1 / math.sqrt(m))
        assert trace.noise["sigma_snapshot"] == pytest.approx(ratio * trace.noise["sigma"])
    else:
        assert inner.count == options["iterations"]


def test_the_arena_reports_sigma_over_the_replacement_shift(fused):
    """A replace-one event records the per-record bound C = c/b; the arena's σ/Δ divides by Δ = 2C."""
    trace = dl.run("dp_sadmm", fused, epsilon=1.0, delta=1e-5, rho=1.0, iterations=20, batch_size=30)
    summary = book.arena.noise_summary(trace)
    assert summary["noise_multiplier"] == pytest.approx(trace.noise["sigma"] / (2 * fused.feature_bound / 30))


def test_the_papers_snapshot_costs_more_than_its_minibatch_ledger_says(fused, ridge_fused):
    """Algorithm 1 as printed: σ calibrated to the inner ledger, but the exact p̃ in every release makes the
    run spend more — the split's ε, not the ledger's; the strongly convex restart is not covered."""
    trace = dl.run("dp_vradmm", fused, epsilon=1.0, delta=1e-5, rho=1.0, iterations=2, private_snapshot=False)
    assert len(trace.ledger) == 1 and trace.noise["sigma_snapshot"] == 0.0
    assert accounting.ledger_epsilon(trace.ledger, 1e-5) <= 1.0 < trace.privacy.epsilon < math.inf
    s = trace.noise
    assert trace.privacy.epsilon == pytest.approx(accounting.liu2022_printed_epsilon(
        s["sigma"], 1e-5, n=fused.n, batch_size=s["batch_size"], epochs=2, inner=s["inner"], lipschitz=1.0))
    assert trace.privacy.covered and "as printed" in trace.privacy.source
    private = dl.run("dp_vradmm", fused, epsilon=1.0, delta=1e-5, rho=1.0, iterations=2)
    assert private.noise["sigma"] > trace.noise["sigma"]  # privatising the snapshot costs inner noise
    strong = dl.run("dp_vradmm", ridge_fused, epsilon=1.0, delta=1e-5, rho=1.0, iterations=1, private_snapshot=False)
    assert not strong.privacy.covered and "dual restart" in strong.privacy.reason


def _gdp_epsilon(mu, delta):
    return accounting.gdp_epsilon(mu, delta)


@pytest.mark.parametrize("n, b, S, m, sigma", [(400, 400, 2, 5, 0.05), (1000, 1000, 1, 20, 0.02),
                                               (300, 300, 3, 4, 0.3)])
def test_printed_epsilon_at_q1_is_the_exact_gaussian_of_the_summed_sensitivity(n, b, S, m, sigma):
    """At q = 1 and share ½ the split is exact: S·m Gaussian releases of sensitivity 2l/n + 2l/b (the
    two parts' sensitivities add) with noise σ, i.e. μ = √(Sm)(2l/n + 2l/b)/σ; the best split is ½."""
    l, delta = 1.0, 1e-5
    exact = _gdp_epsilon(math.sqrt(S * m) * (2 * l / n + 2 * l / b) / sigma, delta)
    split = accounting.liu2022_printed_epsilon(sigma, delta, n=n, batch_size=b, epochs=S, inner=m, lipschitz=l,
                                               share=0.5)
    assert split == pytest.approx(exact, rel=1e-6)
    assert accounting.liu2022_printed_epsilon(sigma, delta, n=n, batch_size=b, epochs=S, inner=m,
                                              lipschitz=l) == pytest.approx(exact, rel=1e-4)


@pytest.mark.parametrize("n, b, S, m, sigma", [(10_000, 50, 4, 400, 0.088), (4_000, 50, 4, 160, 0.03),
                                               (2_000, 20, 2, 200, 0.2)])
def test_printed_epsilon_lies_between_its_parts_and_the_unsampled_bound(n, b, S, m, sigma):
    """Sound: never below the exact ε of the p̃ part alone (the releases with v_t ≡ 0: S·m Gaussians of
    sensitivity 2l/n at noise σ) nor below the minibatch ledger alone; tight enough: below the ε of
    ignoring the sampling (S·m Gaussians of sensitivity 2l/n + 2l/b), and the best split is no worse
    than any fixed one."""
    l, delta = 1.0, 5e-4
    ours = accounting.liu2022_printed_epsilon(sigma, delta, n=n, batch_size=b, epochs=S, inner=m, lipschitz=l)
    snapshot_only = _gdp_epsilon(math.sqrt(S * m) * 2 * l / n / sigma, delta)
    minibatch_only = accounting.ledger_epsilon([dl.PrivacyEvent("gaussian", l / b, sigma, count=S * m,
                                                                sampling_rate=b / n, neighbours="replace_one")], delta)
    unsampled = _gdp_epsilon(math.sqrt(S * m) * (2 * l / n + 2 * l / b) / sigma, delta)
    assert max(snapshot_only, minibatch_only) < ours < unsampled
    for share in (0.1, 0.3, 0.5, 0.7, 0.9):
        assert ours <= accounting.liu2022_printed_epsilon(sigma, delta, n=n, batch_size=b, epochs=S, inner=m,
                                                          lipschitz=l, share=share) * (1 + 1e-9)


def test_printed_epsilon_refuses_bad_input_by_name():
    ok = dict(n=100, batch_size=10, epochs=1, inner=5, lipschitz=1.0)
    for name, value in (("sigma", 0.0), ("delta", 1.0), ("share", 1.0), ("share", 0.0), ("lipschitz", -1.0),
                        ("difference_bound", 0.0)):
        args = {"sigma": 0.1, "delta": 1e-5, **ok, name: value}
        with pytest.raises(ValueError, match=name):
            accounting.liu2022_printed_epsilon(args.pop("sigma"), args.pop("delta"), **args)
    with pytest.raises(ValueError, match="batch_size"):
        accounting.liu2022_printed_epsilon(0.1, 1e-5, **{**ok, "batch_size": 101})


def test_paper_calibration_draws_theorem_2_and_theorem_1(fused):
    n, l, delta = fused.n, fused.feature_bound, 1e-3
    for eps, T, b in ((0.5, 40, 30), (2.0, 100, 60)):
        trace = dl.run("dp_sadmm", fused, epsilon=eps, delta=delta, rho=1.0, iterations=T, batch_size=b,
                       calibration="paper")
        theta = 0.5
        alpha = math.log(1 / delta) / ((1 - theta) * eps) + 1
        assert trace.noise["sigma"] == pytest.approx(math.sqrt(20 * alpha * T * l**2 / (theta * eps * n**2)), rel=1e-12)
        assert trace.privacy_paper.epsilon == eps and "Thm 2" in trace.privacy_paper.source
        assert "FAIL" in trace.privacy_paper.statement or "hold" in trace.privacy_paper.statement
    for eps, S, c2 in ((0.5, 2, 80.0), (1.0, 3, 10.0)):
        trace = dl.run("dp_vradmm", fused, epsilon=eps, delta=delta, rho=1.0, iterations=S, batch_size=30,
                       calibration="paper", c2=c2)
        m = trace.noise["inner"]
        assert m == 20  # 2n/b
        assert trace.noise["sigma"] == pytest.approx(math.sqrt(c2 * l**2 * S * m * math.log(1 / delta) / (n**2 * eps**2)),
                                                     rel=1e-12)
        assert "c₂" in trace.privacy_paper.statement and "Thm 1" in trace.privacy_paper.source


# the paper's Table II: (training size n, minibatch b); T = m·S with m = 2n/b and, say, S = 10 epochs
PAPER_DATASETS = {"covtype": (290_506, 50), "w8a": (24_875, 20), "bio-train": (72_876, 20), "mushrooms": (4_062, 10)}


@pytest.mark.parametrize("dataset", PAPER_DATASETS)
@pytest.mark.parametrize("epsilon", [0.05, 0.1, 0.2, 0.4, 0.8, 1.0])
def test_theorem_2_side_conditions_fail_at_the_papers_settings(dataset, epsilon):
    n, b = PAPER_DATASETS[dataset]
    T = 10 * 2 * n // b
    assert not accounting.liu2022_sadmm_conditions(epsilon, 5e-4, iterations=T, n=n, batch_size=b, theta=None)
    c = accounting.liu2022_sadmm_side_conditions(epsilon, 5e-4, iterations=T, n=n, batch_size=b)
    assert c["alpha"] > math.log(n / b) > c["alpha_bound"] and not c["first"]
    assert c["alpha"] == pytest.approx(math.log(2000) / (0.5 * epsilon) + 1)


def test_theorem_2_side_conditions_can_hold():
    # large n/b (log(n/b) beats α), large ε and δ, and T large enough for σ²/Δ² ≥ 1.5
    c = accounting.liu2022_sadmm_side_conditions(1.0, 0.1, iterations=10**9, n=10**5, batch_size=1)
    assert c["holds"] and c["alpha"] < c["alpha_bound"] and c["variance_ratio"] >= 1.5
    assert not accounting.liu2022_sadmm_conditions(1.0, 0.1, iterations=10**6, n=10**5, batch_size=1)  # σ²/Δ² < 1.5


def test_the_papers_statements_read_backwards():
    n, l, delta = 5000, 1.0, 5e-4
    for eps in (0.05, 0.3, 1.0):
        for theta in (0.2, 0.5, 0.8):
            sigma = accounting.liu2022_sadmm_sigma(eps, delta, iterations=2000, n=n, lipschitz=l, theta=theta)
            back = accounting.liu2022_sadmm_epsilon(sigma, delta, iterations=2000, n=n, lipschitz=l, theta=theta)
            assert back == pytest.approx(eps, rel=1e-10)
            assert accounting.liu2022_sadmm_epsilon(sigma, delta, iterations=2000, n=n, lipschitz=l) <= eps * (1 + 1e-9)
        sigma = accounting.liu2022_vradmm_sigma(eps, delta, lipschitz=l, n=n, epochs=10, inner=200)
        assert sigma == pytest.approx(math.sqrt(80 * 10 * 200 * math.log(1 / delta)) / (n * eps))
        assert accounting.liu2022_vradmm_epsilon(sigma, delta, lipschitz=l, n=n, epochs=10, inner=200) == pytest.approx(eps)


def test_theorem_2_against_dp_accounting_on_the_papers_sampling():
    """Theorem 2 is about b records drawn without replacement, replace-one neighbours (Lemma 2 is
    Wang et al.'s subsampled-RDP bound). dp-accounting's RDP accountant for exactly that scheme says
    what its σ spends: here less than claimed, although the side conditions fail."""
    import dp_accounting as dpa
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    n, b, T, delta, l = 5000, 50, 2000, 5e-4, 1.0
    for eps in (0.05, 0.2, 1.0):
        sigma = accounting.liu2022_sadmm_sigma(eps, delta, iterations=T, n=n, lipschitz=l)
        acc = rdp.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
        acc.compose(dpa.SampledWithoutReplacementDpEvent(n, b, dpa.GaussianDpEvent(sigma / (2 * l / b))), T)
        spent = acc.get_epsilon(delta)
        assert spent < eps
        assert not accounting.liu2022_sadmm_conditions(eps, delta, iterations=T, n=n, batch_size=b, theta=None)


def _pld_replace_one(z_record, q, steps, delta):
    """dp-accounting's PLD of the Poisson-subsampled Gaussian for replace-one neighbours (pessimistic):
    the pair ((1−q)N(0,1) + qN(−1/z, 1), (1−q)N(0,1) + qN(1/z, 1)), z = σ / (per-record bound)."""
    import dp_accounting as dpa
    from dp_accounting.pld import pld_privacy_accountant as pld

    acc = pld.PLDAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE,
                            value_discretization_interval=1e-4)
    acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(z_record)), steps)
    return acc.get_epsilon(delta)


@pytest.mark.parametrize("z_record, q, steps", [
    (1.0, 0.01, 100), (2.0, 0.01, 1000), (2.0, 0.1, 100), (5.0, 0.1, 1000), (10.0, 0.01, 10), (4.0, 0.5, 20),
    (3.0, 1.0, 50),
])
def test_the_ledger_is_the_exact_replace_one_epsilon_of_poisson_sampling(z_record, q, steps):
    """The ledger records a Poisson-sampled step with the per-record bound c_rec = c/b and
    neighbours="replace_one". Against dp-accounting's REPLACE_ONE analysis of the sampling the
    algorithms use: within 1 %, never more than 0.2 % below (discretisation). The old convention,
    add/remove with 2c_rec, is sound but looser."""
    delta = 1e-5
    c_rec = 1.0 / 50  # one record's term in (1/b)Σ∇ℓ_i, b = 50
    event = dl.PrivacyEvent("gaussian", c_rec, z_record * c_rec, count=steps, sampling_rate=q,
                            neighbours="replace_one")
    ours = accounting.ledger_epsilon([event], delta)
    exact = _pld_replace_one(z_record, q, steps, delta)
    assert exact * (1 - 2e-3) <= ours <= exact * 1.01
    old = accounting.ledger_epsilon([dl.PrivacyEvent("gaussian", 2 * c_rec, z_record * c_rec, count=steps,
                                                     sampling_rate=q)], delta)
    assert old >= ours * (1 - 1e-3)


def test_dp_sadmm_ledger_against_dp_accounting_for_its_own_run(fused):
    trace = dl.run("dp_sadmm", fused, epsilon=1.0, delta=1e-5, rho=1.0, iterations=200, batch_size=30)
    event = trace.ledger[0]
    assert event.neighbours == "replace_one"
    exact = _pld_replace_one(event.noise / event.sensitivity, event.sampling_rate, event.count, 1e-5)
    assert exact * (1 - 2e-3) <= trace.privacy.epsilon <= 1.0 and trace.privacy.epsilon <= exact * 1.01


def test_svrg_difference_and_snapshot_sensitivities_hold_for_worst_case_records():
    """One record's SVRG term is (ℓ'(a·x) − ℓ'(a·x̃))a = D(a)a with |D(a)| < 1 (a record's ℓ' keeps its
    sign), so two records' terms differ by < 2c: Δ = 2c/b, twice the ledger's per-record bound c/b. The supremum is approached by
    x̃ ≈ −x far out and two records near the equator {a·x = 0} on either side; likewise the snapshot
    term ℓ'(a·x̃)a (Δ = 2c/n). Random candidates at the public bound stay below both."""
    d, b, n = 8, 20, 60
    X, y, _ = datasets.make_classification(n, d, seed=2)
    problem = problems.logistic(X, y, 1e-3, "l2")
    trace = dl.run("dp_vradmm", problem, epsilon=1.0, delta=1e-5, rho=1.0, iterations=1, batch_size=b)
    assert trace.ledger[0].neighbours == "replace_one" and trace.ledger[1].neighbours == "add_remove"
    delta_inner, delta_snapshot = 2 * trace.ledger[0].sensitivity, trace.ledger[1].sensitivity
    assert delta_inner == pytest.approx(2 * problem.feature_bound / b)
    assert delta_snapshot == pytest.approx(2 * problem.feature_bound / n)
    slope = problem._dloss_of_margin

    def inner_term(a, label, x, x_tilde):
        return (slope(np.array([a @ x]), np.array([label]))[0] - slope(np.array([a @ x_tilde]), np.array([label]))[0]) * a

    def snapshot_term(a, label, x_tilde):
        return slope(np.array([a @ x_tilde]), np.array([label]))[0] * a

    e1, e2 = np.eye(d)[0], np.eye(d)[1]
    phi = np.deg2rad(87.0)
    a, a_prime = math.cos(phi) * e1 + math.sin(phi) * e2, math.cos(phi) * e1 - math.sin(phi) * e2
    x = 2000.0 * e1
    worst_inner = np.linalg.norm(inner_term(a, 1.0, x, -x) - inner_term(a_prime, -1.0, x, -x)) / b
    worst_snapshot = np.linalg.norm(snapshot_term(-a, 1.0, x) - snapshot_term(-a_prime, 1.0, x)) / n
    assert 0.99 * delta_inner < worst_inner <= delta_inner * (1 + 1e-12)
    assert 0.99 * delta_snapshot < worst_snapshot <= delta_snapshot * (1 + 1e-12)
    rng = np.random.default_rng(0)
    for _ in range(300):
        x, x_tilde = 10 * rng.standard_normal((2, d))
        cands = rng.standard_normal((6, d))
        cands /= np.linalg.norm(cands, axis=1, keepdims=True)
        terms = [(inner_term(c, lab, x, x_tilde), snapshot_term(c, lab, x_tilde)) for c in cands for lab in (1.0, -1.0)]
        for s in terms:
            for t in terms:
                assert np.linalg.norm(s[0] - t[0]) / b <= delta_inner * (1 + 1e-12)
                assert np.linalg.norm(s[1] - t[1]) / n <= delta_snapshot * (1 + 1e-12)


def test_the_noise_actually_added_has_the_ledgers_sigma(fused):
    """Same seed, noise on and off: one DP-SADMM step moves x₁ by −(η₁/γ)Q_ν⁻¹u₀; recovered u₀ over
    many seeds has the ledger's σ (chi-square, fixed seeds)."""
    from scipy import stats

    recovered = []
    for seed in range(150):
        on = dl.run("dp_sadmm", fused, epsilon=1.0, delta=1e-5, rho=1.0, iterations=1, seed=seed, nu=2.0)
        off = dl.run("sadmm", fused, rho=1.0, iterations=1, seed=seed, nu=2.0)
        step = on.params["eta"] / on.params["gamma"]
        recovered.append(-smoothing.smoothing_matrix(fused.d, 2.0) @ (on.model - off.model) / step)
    z = np.array(recovered) / on.ledger[0].noise
    chi2 = float((z**2).sum())
    p = 2 * min(stats.chi2.cdf(chi2, z.size), stats.chi2.sf(chi2, z.size))
    assert p > 1e-3 and abs(math.sqrt(chi2 / z.size) - 1) < 0.1


# ---------------------------------------------------------------------- counted work and sampling rates
_RUNS = {
    "dp_sadmm": dict(iterations=20, record_every=5, batch_size=30),
    "dp_vradmm": dict(iterations=3, batch_size=30, inner=7),
}


def _expected(name, problem, steps):
    """b per minibatch (DP-SADMM), or per epoch n for the snapshot and 2 per record of m minibatches (DP-VRADMM)."""
    if name == "dp_sadmm":
        return 30 * steps
    return (steps / 7) * (problem.n + 2 * 7 * 30)


@pytest.mark.parametrize("name", sorted(_RUNS))
def test_released_counts_are_expectations_and_the_drawn_sizes_only_a_diagnostic(fused, name):
    """The work a trace reports is the expectation of the sampled count, the same at every seed; the drawn batch
    sizes, which would show each |B_t| (and weaken the amplification by sampling), are under a key that says they
    are not private, and are exactly the sizes the sampler drew; over 150 seeds their mean is the expectation."""
    realised_key = st.REALISED_EVALUATIONS
    assert "not private" in realised_key
    traces = []
    for seed in range(150):
        with audit.intercept_sampling() as samples:
            traces.append(dl.run(name, fused, epsilon=1.0, delta=1e-5, rho=0.5, seed=seed, **_RUNS[name]))
        sizes = np.array([len(s.members) for s in samples], float)
        t = traces[-1]
        if name == "dp_sadmm":
            drawn = np.cumsum(sizes)[t.metrics["steps"].astype(int) - 1]
        else:
            drawn = np.cumsum(fused.n + 2 * sizes.reshape(-1, 7).sum(axis=1))
        np.testing.assert_array_equal(t.metrics[realised_key], drawn)
    first = traces[0]
    np.testing.assert_array_equal(first.metrics["gradient_evaluations"], _expected(name, fused, first.metrics["steps"]))
    np.testing.assert_array_equal(first.metrics["passes"], first.metrics["gradient_evaluations"] / fused.n)
    assert all(np.array_equal(t.metrics["gradient_evaluations"], first.metrics["gradient_evaluations"]) for t in traces)
    realised = np.array([t.metrics[realised_key][-1] for t in traces])
    assert len(set(realised)) > 1  # the drawn sizes follow the seed: that is what must not be released
    spread = realised.std(ddof=1) / math.sqrt(len(realised))
    assert abs(realised.mean() - first.metrics["gradient_evaluations"][-1]) < 5 * spread


@pytest.fixture
def quarter_rate_ledger(monkeypatch):
    """The module's ledger events record a quarter of the sampling rate they are given (σ calibrated to them)."""
    real = privacy.PrivacyEvent
    monkeypatch.setattr(st, "PrivacyEvent", lambda *a, sampling_rate=1.0, **k: real(*a, sampling_rate=sampling_rate / 4,
                                                                                    **k))


@pytest.mark.parametrize("name", sorted(_RUNS))
def test_the_ledger_records_the_rate_the_minibatches_are_drawn_at(fused, name, request):
    """DP-VRADMM's check in place of an audit at its sampling rate (dpadmm_lite.audit.NOT_AUDITED), and DP-SADMM's
    beside its audit: the ledger's rate is the rate every minibatch was drawn at, and the members drawn (900 and
    3,000 minibatches of 30 of 300) agree with it; a ledger recording a quarter of it fails both ways."""
    steps = dict(iterations=900) if name == "dp_sadmm" else dict(iterations=3, inner=300)
    options = dict(epsilon=1.0, delta=1e-5, rho=0.5, batch_size=30, seed=0, **steps)
    honest = audit.sampling_rates(name, fused, **options)
    assert honest.consistent, honest
    assert honest.recorded == 30 / fused.n and honest.samples == 900 and honest.records == fused.n
    request.getfixturevalue("quarter_rate_ledger")
    planted = audit.sampling_rates(name, fused, **options)
    assert planted.recorded == pytest.approx(30 / fused.n / 4) and planted.drawn == (30 / fused.n,)
    assert not planted.consistent
    # the members drawn alone refute it: the realised rate is far (over 10 standard deviations) from the record
    q, trials = planted.recorded, planted.samples * planted.records
    assert abs(planted.realised - q) > 10 * math.sqrt(q * (1 - q) / trials)


# ---------------------------------------------------------------------- the exercises
def test_exercise_checks_accept_the_reference_and_explain_typical_mistakes():
    V, nu = ex.smoothing_data()
    right = ex.expected_smoothing()
    assert ex.check_smoothing(right)
    Q = smoothing.smoothing_matrix(V.shape[-1], nu)
    for wrong, word in [(right @ Q.T @ Q.T, "multiplied by Q"), (V, "unchanged"),
                        (smoothing.laplacian_smooth(right, nu), "twice"), (right.T, "shape")]:
        feedback = ex.check_smoothing(wrong)
        assert not feedback and word in feedback.message, feedback.message
    assert "not answered" in ex.check_smoothing(...).message

    right = ex.expected_variance()
    assert ex.check_variance(right)
    d, nu, sigma = ex.variance_data()
    for wrong, word in [(sigma**2 * smoothing.tau(d, nu), "τ"), (sigma * smoothing.noise_variance(d, nu), "σ²"),
                        (smoothing.variance_limit(nu, sigma), "limit")]:
        feedback = ex.check_variance(wrong)
        assert not feedback and word in feedback.message, feedback.message

    right = ex.expected_sensitivity()
    assert ex.check_sensitivity(right)
    n, b, c = ex.sensitivity_data()
    for wrong, word in [(c / b, "added or removed"), (2 * c / n, "full"), (4 * c / b, "twice")]:
        feedback = ex.check_sensitivity(wrong)
        assert not feedback and word in feedback.message, feedback.message
