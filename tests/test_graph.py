"""Consensus ADMM over a network (Zhang & Zhu 2017, Alg. 1): against the centralised optimum and
against a slow per-node loop written straight from eqs. (9)–(11)."""

import math

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse

import dpadmm_lite as dl
import dpadmm_book as book
from dpadmm_lite import datasets, problems, topology
from dpadmm_lite.algorithms import zhang2017 as graph


@pytest.fixture(scope="module")
def logistic_l2():
    X, y, _ = datasets.make_classification(240, 5, seed=1)
    return problems.logistic(X, y, lam=1e-2, penalty="l2")


@pytest.fixture(scope="module")
def lasso():
    X, y, _ = datasets.make_lasso(200, 16, seed=2)
    return problems.lasso(X, y, lam=2e-2)


# ---------------------------------------------------------------------- convergence
@pytest.mark.parametrize("name", ["ring", "grid", "complete"])
def test_converges_to_the_centralised_optimum_logistic(logistic_l2, name):
    trace = dl.run("admm_graph", logistic_l2, rho=0.01, iterations=250, topology=name, n_agents=8)
    star = logistic_l2.reference_optimum()
    assert trace.objective_gap[-1] < 1e-10
    assert np.max(np.abs(trace.model - star.x)) < 1e-5
    assert trace.consensus_violation[-1] < 1e-6
    assert trace.consensus_violation[0] > 1e-3  # it did start away from consensus
    assert trace.params["topology"] == name and trace.params["n_agents"] == 8


@pytest.mark.parametrize("name", ["ring", "grid", "complete"])
def test_converges_to_the_centralised_optimum_lasso(lasso, name):
    trace = dl.run("admm_graph", lasso, rho=0.03, iterations=200, topology=name, n_agents=6)
    assert trace.objective_gap[-1] < 1e-9
    assert np.max(np.abs(trace.model - lasso.reference_optimum().x)) < 1e-5
    zeros = np.abs(lasso.reference_optimum().x) < 1e-9
    assert zeros.sum() >= 2 and np.all(trace.model[zeros] == 0.0)  # every agent soft-thresholds to exact 0


def test_unequal_sizes_still_solve_the_centralised_problem(logistic_l2):
    trace = dl.run("admm_graph", logistic_l2, rho=0.01, iterations=300, topology="ring", n_agents=6,
                   sizes="unequal", seed=3)
    assert trace.objective_gap[-1] < 1e-9


def test_logistic_l1_converges():
    X, y, _ = datasets.make_classification(200, 5, seed=4)
    p = problems.logistic(X, y, lam=3e-2, penalty="l1")
    trace = dl.run("admm_graph", p, rho=0.02, iterations=300, topology="ring", n_agents=5)
    assert trace.objective_gap[-1] < 1e-8


# ---------------------------------------------------------------------- slow reference
def _loss(loss, margins, labels):
    if loss == "squared":
        return 0.5 * (margins - labels) ** 2, margins - labels
    return np.logaddexp(0.0, -labels * margins), -labels / (1.0 + np.exp(labels * margins))


def _slow_reference(problem, adjacency, owner, rho, iterations):
    """Algorithm 1 node by node: a scipy solve of (10) per node, neighbour sums as Python loops."""
    N, d, n = adjacency.shape[0], problem.d, problem.n
    neighbours = [list(np.flatnonzero(adjacency[p])) for p in range(N)]
    f = np.zeros((N, d))
    lam_dual = np.zeros((N, d))
    averages, violations = [], []
    for _ in range(iterations):
        f_old = f.copy()
        for p in range(N):
            Xp, yp = problem.X[owner == p], problem.y[owner == p]
            weight = N * len(yp) / n  # Σ_p Z_p = N·F (module notes)

            def smooth(x, p=p, Xp=Xp, yp=yp, weight=weight):  # L_p^N without the ℓ1 term, eq. (9)
                ell, dell = _loss(problem.loss, Xp @ x, yp)
                value = weight * ell.mean() + 2 * lam_dual[p] @ x
                grad = weight * dell @ Xp / len(yp) + 2 * lam_dual[p]
                for j in neighbours[p]:
                    diff = x - 0.5 * (f_old[p] + f_old[j])
                    value += rho * diff @ diff
                    grad = grad + 2 * rho * diff
                if problem.regularizer == "l2":
                    value += 0.5 * problem.lam * x @ x
                    grad = grad + problem.lam * x
                return value, grad

            opts = {"maxiter": 10000, "ftol": 1e-16, "gtol": 1e-13, "maxcor": 50}
            if problem.regularizer == "l2":
                res = scipy.optimize.minimize(smooth, f_old[p], jac=True, method="L-BFGS-B", options=opts)
                f[p] = res.x
            else:  # x = u − v, u, v ≥ 0, λ‖x‖₁ = λ Σ(u + v)
                def split(uv, smooth=smooth):
                    v, g = smooth(uv[:d] - uv[d:])
                    return v + problem.lam * uv.sum(), np.concatenate([g + problem.lam, -g + problem.lam])

                start = np.concatenate([np.maximum(f_old[p], 0), np.maximum(-f_old[p], 0)])
                res = scipy.optimize.minimize(split, start, jac=True, method="L-BFGS-B", bounds=[(0, None)] * (2 * d),
                                              options=opts)
                f[p] = res.x[:d] - res.x[d:]
        for p in range(N):  # (11)
            lam_dual[p] = lam_dual[p] + rho / 2 * sum(f[p] - f[j] for j in neighbours[p])
        averages.append(f.mean(axis=0))
        violations.append(np.sqrt(np.mean(np.sum((f - f.mean(axis=0)) ** 2, axis=1))))
    return np.array(averages), np.array(violations)


@pytest.mark.parametrize("case", ["logistic-l2", "lasso", "ridge", "logistic-l1"])
def test_vectorised_iterations_equal_the_slow_per_node_loop(case):
    X, y, _ = datasets.make_classification(90, 4, seed=5)
    if case == "logistic-l2":
        p = problems.logistic(X, y, lam=2e-2, penalty="l2")
    elif case == "logistic-l1":
        p = problems.logistic(X, y, lam=2e-2, penalty="l1")
    else:
        Xl, yl, _ = datasets.make_lasso(90, 4, seed=5)
        p = problems.lasso(Xl, yl, lam=2e-2) if case == "lasso" else problems.Problem(Xl, yl, 0.1, "squared", "l2")
    g = topology.make("erdos_renyi", 6, seed=1, p=0.5)
    owner = datasets.split(p.n, 6, sizes="unequal", seed=2)
    rho, T = 0.2, 6
    trace = dl.run("admm_graph", p, rho=rho, iterations=T, topology=g, owner=owner, inner_tol=1e-13, max_inner=5000)
    averages, violations = _slow_reference(p, g.adjacency.toarray(), owner, rho, T)
    assert np.allclose(trace.objective, p.objective(averages), rtol=0, atol=1e-9)
    assert np.allclose(trace.consensus_violation, violations, rtol=0, atol=1e-7)
    assert np.allclose(trace.model, averages[-1], rtol=0, atol=1e-7)
    assert violations[0] > 1e-3  # the comparison is not between two zeros


def test_squared_loss_l2_needs_one_newton_step_per_iteration():
    X, y, _ = datasets.make_lasso(100, 5, seed=0)
    p = problems.Problem(X, y, 0.1, "squared", "l2")
    trace = dl.run("admm_graph", p, rho=0.05, iterations=150, topology="ring", n_agents=5)
    assert np.all(trace.metrics["inner_steps"] <= 1) and trace.metrics["inner_steps"][0] == 1
    ridge = np.linalg.solve(X.T @ X / p.n + 0.1 * np.eye(5), X.T @ y / p.n)  # closed form
    assert np.max(np.abs(trace.model - ridge)) < 1e-8


# ---------------------------------------------------------------------- inputs and extremes
def test_bad_inputs_raise_value_errors_naming_the_parameter(logistic_l2):
    two_components = scipy.sparse.csr_matrix(np.kron(np.eye(2), np.ones((2, 2)) - np.eye(2)))
    disconnected = topology.from_adjacency(two_components)
    with pytest.raises(ValueError, match="disconnected"):
        dl.run("admm_graph", logistic_l2, topology=disconnected)
    with pytest.raises(ValueError, match="n_agents"):
        dl.run("admm_graph", logistic_l2, n_agents=logistic_l2.n + 1, topology="ring")
    with pytest.raises(ValueError, match="topology"):
        dl.run("admm_graph", logistic_l2, topology="torus")
    with pytest.raises(ValueError, match="epsilon"):
        dl.run("admm_graph", logistic_l2, epsilon=1.0)
    with pytest.raises(ValueError, match="rho"):
        dl.run("admm_graph", logistic_l2, rho=0.0)
    with pytest.raises(ValueError, match="n_agents"):
        dl.run("admm_graph", logistic_l2, topology=topology.make("ring", 5), n_agents=6)
    with pytest.raises(ValueError, match="owner"):
        dl.run("admm_graph", logistic_l2, topology="ring", n_agents=4, owner=np.zeros(logistic_l2.n, int))
    X, y, _ = datasets.make_classification(50, 3, seed=0)
    fused = problems.graph_guided_fused_lasso(X, y, 0.1, W=np.array([[1.0, -1.0, 0.0]]))
    with pytest.raises(ValueError, match="regularizer"):
        dl.run("admm_graph", fused)


@pytest.mark.parametrize("rho,iterations", [(1e-3, 1), (1e-3, 30), (100.0, 30)])
@pytest.mark.parametrize("penalty", ["l1", "l2"])
def test_extreme_settings_stay_finite(logistic_l2, rho, iterations, penalty):
    p = logistic_l2 if penalty == "l2" else problems.logistic(logistic_l2.X, logistic_l2.y, 1e-2, penalty="l1")
    trace = dl.run("admm_graph", p, rho=rho, iterations=iterations, topology="star", n_agents=12)
    assert trace.iterations == iterations
    assert np.all(np.isfinite(trace.objective)) and np.all(np.isfinite(trace.consensus_violation))
    assert np.all(trace.objective_gap > -1e-9)


def test_registered_and_not_private(logistic_l2):
    info = dl.algorithm_table().loc["admm_graph"]
    assert info["setting"] == "graph" and not info["private"]
    trace = dl.run("admm_graph", logistic_l2, iterations=3, topology="ring", n_agents=4)
    assert math.isinf(trace.privacy.epsilon) and trace.ledger == []
    assert trace.wall_time > 0


def test_the_cache_returns_the_same_local_data_for_the_same_split(logistic_l2):
    owner = datasets.split(logistic_l2.n, 4, seed=0)
    assert graph.local_data(logistic_l2, owner) is graph.local_data(logistic_l2, owner.copy())
    other = datasets.split(logistic_l2.n, 4, seed=1)
    assert graph.local_data(logistic_l2, other) is not graph.local_data(logistic_l2, owner)


# ---------------------------------------------------------------------- the chapter's exercises
def test_the_chapter_solutions_pass_their_checks():
    from dpadmm_book.exercises import admm as ex

    x, u, lam, rho = ex.y_update_data()
    assert ex.check_y_update(np.sign(x + u) * np.maximum(np.abs(x + u) - lam / rho, 0.0))  # solution 1
    assert np.sum(ex.expected_y_update() == 0) >= 1 and np.sum(ex.expected_y_update() != 0) >= 1
    assert not ex.check_y_update(x + u)
    G, F, V, rho = ex.dual_update_data()
    loop = V.copy()
    for i in range(6):  # (11) agent by agent
        loop[i] += rho / 2 * sum(F[i] - F[j] for j in G.neighbors(i))
    assert ex.check_dual_update(V + rho / 2 * (G.laplacian @ F)) and np.allclose(ex.expected_dual_update(), loop)
    G = topology.make("grid", 16)
    assert ex.check_algebraic_connectivity(np.linalg.eigvalsh(G.laplacian.toarray())[1])
    assert ex.expected_algebraic_connectivity("ring", 16) == pytest.approx(2 - 2 * np.cos(2 * np.pi / 16))
    missing = ex.check_algebraic_connectivity(...)
    assert not missing and "not answered yet" in missing.message


def test_bfgs_corrections_kept_as_factors_satisfy_the_secant_equation(logistic_l2):
    """H⁺y = s after every update, whether the correction is still a factor or folded into the
    dense inverses (after ``BFGS_BATCH`` updates), H stays symmetric, and the next direction the
    update returns is H⁺ applied to the new gradient. The dense inverses are kept in single
    precision, so the secant equation and the symmetry hold to its rounding (1e-7, relative)."""
    owner = datasets.split(logistic_l2.n, 4, seed=0)
    data = graph.local_data(logistic_l2, owner)
    solver = graph.LocalSolver(data, logistic_l2.lam, "l2", np.full(4, 0.3))
    solver(np.zeros((4, logistic_l2.d)))  # forms the inverses (and may already update them)
    done = solver._pending // 2
    rng = np.random.default_rng(0)
    for update in range(graph.BFGS_BATCH + 3):
        s = rng.standard_normal((4, logistic_l2.d))
        y = s * rng.uniform(0.5, 2.0, size=s.shape)  # sᵀy > 0, as for a strongly convex function
        grad = rng.standard_normal((4, logistic_l2.d))
        direction = solver._remember(s, y, solver._apply(grad), grad + y)
        assert np.allclose(solver._apply(y), s, rtol=1e-5, atol=1e-6), f"update {update}"
        assert np.allclose(direction, solver._apply(grad + y), rtol=1e-5, atol=1e-6)
        assert solver._pending == 2 * ((done + update + 1) % graph.BFGS_BATCH)
        dense = np.stack([solver._apply(e) for e in np.eye(logistic_l2.d)[:, None, :].repeat(4, axis=1)], axis=-1)
        assert np.allclose(dense, dense.transpose(0, 2, 1), atol=1e-6)


# ---------------------------------------------------------------------- the chapter's runs: pinned, and on threads
@pytest.fixture(scope="module")
def adult_small():
    """The chapter's data path: Adult's sparse one-hot rows (the block-diagonal sparse products)."""
    X, y, X_test, y_test = datasets.load_adult()
    return problems.logistic(X[:2000], y[:2000], 1e-4, "l2", X_test=X_test[:2000], y_test=y_test[:2000])


#: Numbers of the implementation before issue 26 (commit 5a8f2ac) for the run below: the first three
#: weights of the network's average model, the empirical loss and the test error after the last iteration.
PINNED = {
    "admm_graph": ([-0.21905469817700457, 0.004326669215046966, -0.1031206278644494], 0.5028686258092588, 0.253),
    "dvp_graph": ([-0.1065735124619612, -0.5582564792969384, -0.8712739287261402], 0.5929095123957728, 0.256),
    "pvp_graph": ([-0.897777616916058, -0.3357863019977632, -0.18333942499877126], 0.8135635492460367, 0.2555),
}


@pytest.mark.parametrize("name", list(PINNED))
def test_adult_runs_match_the_previous_implementation(adult_small, name):
    """A speed-up must leave the chapter's numbers where they were (to the solver's tolerance: the
    single-precision Hessians that precondition the solves may round differently on another CPU)."""
    extra = {} if name == "admm_graph" else {"epsilon": 4.0, "delta": 1e-5}
    trace = dl.run(name, adult_small, rho=0.1, iterations=12, topology="ring", n_agents=10, seed=3, **extra)
    model, loss, error = PINNED[name]
    np.testing.assert_allclose(trace.model[:3], model, rtol=1e-7, atol=1e-10)
    assert trace.metrics["empirical_loss"][-1] == pytest.approx(loss, rel=1e-9)
    assert trace.metrics["test_error"][-1] == pytest.approx(error, abs=1e-12)


def test_parallel_runs_give_the_same_rows_on_one_or_two_threads(adult_small):
    import threading

    import pandas as pd

    def task(algorithm, seed):
        trace = dl.run(algorithm, adult_small, epsilon=2.0, delta=1e-5, rho=0.1, iterations=6, topology="ring",
                       n_agents=10, seed=seed)
        return {"loss": trace.metrics["empirical_loss"][-1], "error": trace.metrics["test_error"][-1],
                "models": trace.params["local_models"].tobytes(), "thread": threading.get_ident()}

    grid = {"algorithm": ["dvp_graph", "pvp_graph"]}
    serial = book.sweep.grid(task, grid, seeds=range(4), name="threads", cache=False, progress=False)
    with graph.parallel_runs(2):
        threaded = book.sweep.grid(task, grid, seeds=range(4), name="threads", cache=False, progress=False)
    assert threaded["thread"].nunique() == 2 and serial["thread"].nunique() == 1  # it did run on two threads
    pd.testing.assert_frame_equal(serial.drop(columns="thread"), threaded.drop(columns="thread"), check_exact=True)
    with pytest.raises(ValueError, match="n_jobs"):
        with graph.parallel_runs(0):
            pass


def test_parallel_runs_uses_the_free_cores_by_default(monkeypatch):
    import joblib

    seen = []
    for load, expected in ((0.1, 2), (0.9, 1), (1.2, 1), (7.5, 1)):
        monkeypatch.setattr(graph.os, "cpu_count", lambda: 2)
        monkeypatch.setattr(graph.os, "getloadavg", lambda load=load: (load, load, load))
        with graph.parallel_runs():
            seen.append(joblib.parallel.get_active_backend()[1])
        assert seen[-1] == expected, (load, seen)
    monkeypatch.setattr(graph.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(graph.os, "getloadavg", lambda: (1.4, 1.0, 1.0))
    assert graph.free_cores() == 3
