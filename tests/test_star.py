"""Star-network ADMM family of Huang et al. (2019): admm_star, pvp_star, dvp_star, dp_admm_star, dp_sgd_star.

Every algorithm is checked against an independent reference: a slow per-agent loop written from
the paper's equations (with the same random draws), scipy's solver for the exact local problems,
the centralized optimum, and the paper's own numeric step-size and noise formulas.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.optimize

import dpadmm_lite as dl
from dpadmm_lite import accounting, datasets, problems
from dpadmm_lite.algorithms import _huang2019_local as local_solvers
from dpadmm_lite.algorithms import huang2019 as star

from algorithm_cases import check_record_every

STAR = ["admm_star", "pvp_star", "dvp_star", "dp_admm_star", "dp_sgd_star"]


def _problem(n=240, d=6, lam=1e-2, penalty="l2", seed=0):
    X, y, _ = datasets.make_classification(n + 60, d, seed=seed)
    X_tr, y_tr, X_te, y_te = datasets.train_test_split(X, y, test_fraction=0.2, seed=seed)
    return problems.logistic(X_tr, y_tr, lam, penalty, X_test=X_te, y_test=y_te)


@pytest.fixture(scope="module")
def small():
    return {reg: _problem(penalty=reg) for reg in ("l1", "l2")}


def _owner_unequal(n, sizes, seed=3):
    owner = np.repeat(np.arange(len(sizes)), sizes)
    return np.random.default_rng(seed).permutation(owner)


# ---------------------------------------------------------------------- slow per-agent references
def _local(problem, owner):
    """Each agent's own sub-problem (its data only), in a Python list: the slow reference."""
    return [problem.with_data(problem.X[owner == i], problem.y[owner == i]) for i in range(owner.max() + 1)]


def _eta_reference(problem, eps, delta, m, k, c_w):
    """η_i^k written out from Theorems 3 and 4 (eqs. 29 and 34), one agent and one k at a time."""
    d, c1, lam = problem.d, problem.lipschitz, problem.lam
    noise = not math.isinf(eps)
    if problem.regularizer == "l1":
        extra = 8 * d * c1**2 * math.log(1.25 / delta) / (m**2 * eps**2) if noise else 0.0
        return c_w / math.sqrt(2 * k) * ((c1 + lam * math.sqrt(d)) ** 2 + extra) ** -0.5
    extra = 4 * c1 * math.sqrt(d * k * math.log(1.25 / delta)) / (m * eps * c_w) if noise else 0.0
    return 1.0 / (problem.per_example_smoothness + lam + extra)


def _dp_admm_loop(problem, owner, *, eps, delta, rho, T, seed, c_w):
    """Algorithm 3 with a Python loop over agents: eqs. (12a), (14), (10b)-(10d)."""
    locs = _local(problem, owner)
    N, d = len(locs), problem.d
    rng = np.random.default_rng(seed)
    w = np.zeros(d)
    Wt = [np.zeros(d) for _ in range(N)]
    G = [np.zeros(d) for _ in range(N)]
    glob = []
    for k in range(1, T + 1):
        W, sig = [], []
        for i, loc in enumerate(locs):
            m = loc.n
            eta = _eta_reference(problem, eps, delta, m, k, c_w)
            rprime = np.sign(Wt[i]) if problem.regularizer == "l1" else Wt[i]
            sub = loc.gradient(Wt[i]) + problem.lam * rprime
            W.append((-sub + G[i] + rho * w + Wt[i] / eta) / (rho + 1 / eta))  # (12a)
            sig.append(0.0 if math.isinf(eps) else
                       2 * problem.lipschitz * math.sqrt(2 * math.log(1.25 / delta)) / (m * eps * (rho + 1 / eta)))
        xi = rng.standard_normal((N, d)) if not math.isinf(eps) else np.zeros((N, d))
        Wt = [W[i] + sig[i] * xi[i] for i in range(N)]  # (10b)
        w_new = sum(Wt) / N - sum(G) / (N * rho)  # (10c)
        G = [G[i] - rho * (Wt[i] - w_new) for i in range(N)]  # (10d)
        w = w_new
        glob.append(w)
    return np.array(glob), Wt


def _exact_local_scipy(loc, problem, G_i, w, rho):
    """argmin f_i(v) − ⟨γ_i, v⟩ + ρ/2‖v − w‖² by scipy (L-BFGS-B; split v = a − b for ℓ1)."""
    d = problem.d
    if problem.regularizer == "l2":
        fun = lambda v: (loc.objective(v) - G_i @ v + 0.5 * rho * np.sum((v - w) ** 2),  # noqa: E731
                         loc.gradient(v) + problem.lam * v - G_i + rho * (v - w))
        res = scipy.optimize.minimize(fun, w.copy(), jac=True, method="L-BFGS-B",
                                      options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 5000})
        return res.x

    def fun(ab):
        v = ab[:d] - ab[d:]
        g = loc.gradient(v) - G_i + rho * (v - w)
        val = loc.data_loss(v) + problem.lam * ab.sum() - G_i @ v + 0.5 * rho * np.sum((v - w) ** 2)
        return val, np.concatenate([g + problem.lam, -g + problem.lam])

    x0 = np.concatenate([np.maximum(w, 0), np.maximum(-w, 0)])
    res = scipy.optimize.minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=[(0, None)] * (2 * d),
                                  options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 5000})
    return res.x[:d] - res.x[d:]


# ---------------------------------------------------------------------- DP-ADMM (Algorithm 3)
@pytest.mark.parametrize("reg", ["l1", "l2"])
@pytest.mark.parametrize("eps, calibration", [(math.inf, "paper"), (0.5, "paper"), (3.0, "accountant")])
def test_dp_admm_matches_per_agent_loop_with_unequal_sizes(small, reg, eps, calibration):
    """The loop is eq. (14) at a per-iteration ε; the accountant's run is that loop at its ε₀."""
    problem = small[reg]
    owner = _owner_unequal(problem.n, [20, 35, 50, 65, 70])
    T, rho, delta, c_w = 12, 0.3, 1e-4, 5.0
    tr = dl.run("dp_admm_star", problem, epsilon=eps, delta=delta, rho=rho, iterations=T, seed=7, owner=owner,
                c_w=c_w, calibration=calibration)
    eps0 = tr.noise["per_iteration_epsilon"]
    assert eps0 == eps if calibration == "paper" else eps0 < eps  # end to end, each iteration gets a share
    glob, _ = _dp_admm_loop(problem, owner, eps=eps0, delta=delta, rho=rho, T=T, seed=7, c_w=c_w)
    np.testing.assert_allclose(tr.model, glob[-1], rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(tr.objective, problem.objective(glob), rtol=1e-11)
    assert np.abs(glob[-1]).max() > 1e-3  # the run moved: the comparison is not between two zeros


@pytest.fixture(scope="module")
def adult_small():
    """The first 5,000 Adult records: sparse (one-hot) features, so the runs take the sparse paths."""
    X, y, X_test, y_test = datasets.load_adult()
    return problems.logistic(X[:5000], y[:5000], 1e-4, "l2", X_test=X_test[:1000], y_test=y_test[:1000])


def test_dp_admm_on_sparse_data_matches_per_agent_loop_across_noise_blocks(adult_small):
    """The sparse stack, the noise drawn a block of iterations at a time and the scoring of the
    iterates from one sparse product give the per-agent loop's numbers (Adult's 104 features, 20
    agents: 63 iterations per noise block, so T = 70 crosses a block)."""
    problem = adult_small
    owner = datasets.split(problem.n, 20, seed=4)
    T, rho, delta, c_w, eps = 70, 0.1, 1e-3, 30.0, 0.5
    assert star._stack_for(problem, owner).sparse and T > star._NOISE_BLOCK // (20 * problem.d)
    tr = dl.run("dp_admm_star", problem, epsilon=eps, delta=delta, rho=rho, iterations=T, seed=5, owner=owner,
                c_w=c_w, calibration="paper")
    glob, _ = _dp_admm_loop(problem, owner, eps=eps, delta=delta, rho=rho, T=T, seed=5, c_w=c_w)
    np.testing.assert_allclose(tr.model, glob[-1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tr.objective, problem.objective(glob), rtol=1e-12)
    np.testing.assert_allclose(tr.metrics["test_error"], 1 - problem.accuracy(glob), atol=0)
    assert np.abs(glob[-1]).max() > 1e-2  # the run moved


@pytest.mark.parametrize("reg", ["l1", "l2"])
def test_scoring_the_iterates_at_once_equals_scoring_each_iterate(adult_small, reg):
    """F and the test accuracy of a run's iterates, scored together (one sparse product per block of
    records with the iterates as columns), equal each iterate scored on its own: at the zero model
    (every loss factor 1 + e^0 = 2, the largest a block's product can meet), small, ordinary and
    huge margins (where ℓ ≈ |u| or ≈ e^{−u}), across more than one block of records."""
    problem = adult_small if reg == "l2" else problems.logistic(adult_small.X, adult_small.y, 1e-4, "l1",
                                                                X_test=adult_small.X_test, y_test=adult_small.y_test)
    assert problem.n > 2 * star._SCORE_BLOCK and star._sparse(problem)
    rng = np.random.default_rng(0)
    iterates = rng.standard_normal((30, problem.d)) * np.geomspace(1e-4, 3e3, 30)[:, None]
    iterates[0] = 0.0
    one_by_one = np.array([problem.objective(w) for w in iterates])
    np.testing.assert_allclose(star._objective_of_iterates(problem, iterates), one_by_one, rtol=1e-12)
    accuracy = np.array([problem.accuracy(w) for w in iterates])
    np.testing.assert_array_equal(star._accuracy_of_iterates(problem, iterates), accuracy)
    assert len(np.unique(accuracy)) > 5  # the iterates differ in what they classify right
    dense = problems.logistic(rng.uniform(0.1, 0.2, (300, 8)), np.sign(rng.standard_normal(300)), 1e-3, reg)
    x = rng.standard_normal((4, 8))
    np.testing.assert_array_equal(star._objective_of_iterates(dense, x), dense.objective(x))  # dense: the problem's


def test_dp_admm_noise_off_is_the_linearized_iteration(small):
    """ε = ∞: no noise is drawn, and the run is the deterministic linearised ADMM (12a)-(10d)."""
    problem = small["l2"]
    owner = datasets.split(problem.n, 4, seed=1)
    a = dl.run("dp_admm_star", problem, epsilon=math.inf, delta=1e-5, rho=0.5, iterations=30, seed=0, owner=owner,
               c_w=3.0)
    b = dl.run("dp_admm_star", problem, epsilon=math.inf, delta=1e-5, rho=0.5, iterations=30, seed=99, owner=owner,
               c_w=3.0)
    glob, _ = _dp_admm_loop(problem, owner, eps=math.inf, delta=1e-5, rho=0.5, T=30, seed=0, c_w=3.0)
    assert np.array_equal(a.objective, b.objective)  # seed only draws noise, and there is none
    np.testing.assert_allclose(a.model, glob[-1], rtol=1e-12, atol=1e-13)
    assert not np.any(a.noise["sigma"])
    assert a.ledger == [] and math.isinf(a.privacy.epsilon)


def test_sigma_and_step_sizes_are_the_papers_numbers():
    """Sec. VI-E/F print η_i^k for Adult (c₁ = 1, c₃ = 0.25, d = 104, λ/n = 1e-6); eq. (14) gives σ."""
    X, y, _ = datasets.make_classification(2000, 104, seed=0)
    X[0] /= np.linalg.norm(X[0])  # one row of norm 1: c₁ = max‖a‖ = 1, c₃ = 0.25 as on Adult
    eps, delta, rho, m, T = 0.05, 1e-4, 0.1, 400, 100
    k = np.arange(1, T + 1)
    owner = np.repeat(np.arange(5), m)
    # ℓ2, Sec. VI-F: η = (0.25 + 1e-6 + 2√(416 k ln(1.25/δ))/(89 m ε))⁻¹, c_w = 89
    p2 = problems.logistic(X, y, 1e-6, "l2")
    tr = dl.run("dp_admm_star", p2, epsilon=eps, delta=delta, rho=rho, iterations=T, seed=0, owner=owner, c_w=89.0,
                calibration="paper")
    eta_paper = 1.0 / (0.25 + 1e-6 + 2 * np.sqrt(416 * k * math.log(1.25 / delta)) / (89 * m * eps))
    np.testing.assert_allclose(tr.noise["eta"], np.tile(eta_paper[:, None], (1, 5)), rtol=1e-12)
    sigma_14 = 2 * 1.0 * math.sqrt(2 * math.log(1.25 / delta)) / (m * eps * (rho + 1 / eta_paper))  # eq. (14)
    np.testing.assert_allclose(tr.noise["sigma"], np.tile(sigma_14[:, None], (1, 5)), rtol=1e-12)
    assert np.all(np.diff(tr.noise["sigma"][:, 0]) < 0)  # time-varying: the noise shrinks
    # ℓ1, Sec. VI-E: η = 23 (2k(1 + 1e-6√104)² + 1664 k ln(1.25/δ)/(m² ε²))^(−1/2), c_w = 23
    p1 = problems.logistic(X, y, 1e-6, "l1")
    eta1 = star.step_sizes(p1, epsilon=eps, delta=delta, sizes=[m], iterations=T, c_w=23.0)[:, 0]
    eta1_paper = 23 * (2 * k * (1 + 1e-6 * math.sqrt(104)) ** 2 + 1664 * k * math.log(1.25 / delta) / (m**2 * eps**2)) ** -0.5
    np.testing.assert_allclose(eta1, eta1_paper, rtol=1e-12)


def test_dp_admm_ledger_and_the_three_privacy_statements(small):
    problem = small["l2"]
    eps, delta, T = 0.3, 1e-5, 25
    tr = dl.run("dp_admm_star", problem, epsilon=eps, delta=delta, rho=0.2, iterations=T, seed=0, n_agents=6,
                sizes="unequal", calibration="paper")
    assert len(tr.ledger) == T and all(e.mechanism == "gaussian" for e in tr.ledger)
    z = math.sqrt(2 * math.log(1.25 / delta)) / eps  # σ_{i,k}/Δ_{i,k}, the same every iteration and agent
    np.testing.assert_allclose([e.noise_multiplier for e in tr.ledger], z, rtol=1e-12)
    np.testing.assert_allclose(tr.noise["sigma"] / tr.noise["sensitivity"], z, rtol=1e-12)
    assert tr.privacy.epsilon == pytest.approx(accounting.ledger_epsilon(tr.ledger, delta))
    assert tr.privacy_paper.epsilon == pytest.approx(accounting.huang2019_total_epsilon(eps, delta, T))
    assert eps < tr.privacy.epsilon < T * eps  # composition costs, but less than adding up
    assert "each iteration" in tr.privacy_paper.statement


def test_dp_admm_accountant_keeps_the_time_varying_shape_and_meets_the_end_to_end_budget(small):
    problem = small["l1"]
    eps, delta, T = 1.0, 1e-5, 25
    tr = dl.run("dp_admm_star", problem, epsilon=eps, delta=delta, rho=0.2, iterations=T, seed=0, n_agents=6,
                sizes="unequal")
    assert tr.params["calibration"] == "accountant" and len(tr.ledger) == T
    assert 0.97 * eps <= tr.privacy.epsilon <= eps
    z = tr.noise["noise_multiplier"]
    np.testing.assert_allclose(tr.noise["sigma"] / tr.noise["sensitivity"], z, rtol=1e-12)
    assert np.all(np.diff(tr.noise["sigma"], axis=0) < 0)  # still time-varying: σ_{i,k} falls with k
    # the step sizes are eq. (29) at the per-iteration ε₀ that the calibrated noise corresponds to
    eps0 = tr.noise["per_iteration_epsilon"]
    assert eps0 == pytest.approx(math.sqrt(2 * math.log(1.25 / delta)) / z)
    sizes = np.bincount(datasets.split(problem.n, 6, sizes="unequal", seed=0))
    eta = star.step_sizes(problem, epsilon=eps0, delta=delta, sizes=sizes, iterations=T, c_w=tr.params["c_w"])
    np.testing.assert_allclose(tr.noise["eta"], eta, rtol=1e-12)
    assert tr.privacy_paper.epsilon == pytest.approx(accounting.huang2019_total_epsilon(eps0, delta, T))


def test_c_w_is_public_by_default_and_the_papers_choice_on_request(small):
    for reg, problem in small.items():
        half = problem.with_data(0.5 * problem.X, problem.y)
        a, b = (dl.run("dp_admm_star", p, epsilon=1.0, delta=1e-5, rho=0.5, iterations=5, seed=0, n_agents=4)
                for p in (problem, half))
        assert a.params["c_w"] == b.params["c_w"] == pytest.approx(star.public_c_w(problem))
        np.testing.assert_array_equal(a.noise["sigma"], b.noise["sigma"])  # the noise does not read the data
        w_star = np.linalg.norm(problem.reference_optimum().x)
        assert star.public_c_w(problem) >= w_star  # a true bound on ‖w*‖
        paper = dl.run("dp_admm_star", problem, epsilon=1.0, delta=1e-5, rho=0.5, iterations=5, seed=0, n_agents=4,
                       c_w="optimum")
        assert paper.params["c_w"] == pytest.approx(w_star)
        # ‖w*‖ reads every record: the run says that no guarantee covers it, and never reports the ledger's ε
        assert not paper.privacy.covered and math.isinf(paper.privacy.epsilon)
        assert "c_w='optimum' reads the private data" in paper.privacy.reason and "NOT COVERED" in paper.summary()
        assert a.privacy.covered and a.privacy.epsilon <= 1.0
        given = dl.run("dp_admm_star", problem, epsilon=1.0, delta=1e-5, rho=0.5, iterations=5, seed=0, n_agents=4,
                       c_w=float(w_star))  # the same number given by the caller is public: covered
        assert given.privacy.covered and given.privacy.epsilon <= 1.0
    assert star.public_c_w(small["l2"]) == pytest.approx(math.sqrt(2 * math.log(2) / small["l2"].lam))
    assert star.public_c_w(small["l1"]) == pytest.approx(math.log(2) / small["l1"].lam)
    with pytest.raises(ValueError, match="c_w"):
        dl.run("dp_admm_star", small["l2"], epsilon=1.0, rho=1.0, iterations=2, n_agents=3, c_w="pretrained")


# ---------------------------------------------------------------------- exact-update ADMM (Algorithm 1)
@pytest.mark.parametrize("reg", ["l1", "l2"])
def test_admm_star_converges_to_the_centralized_optimum(small, reg):
    problem = small[reg]
    tr = dl.run("admm_star", problem, rho=0.05, iterations=300, seed=0, n_agents=6)  # 240/6: equal sizes
    opt = problem.reference_optimum()
    np.testing.assert_allclose(tr.model, opt.x, atol=1e-8)
    assert tr.objective_gap[-1] < 1e-9 * max(1.0, abs(opt.value))
    assert tr.consensus_violation[-1] < 1e-6


@pytest.mark.parametrize("reg", ["l1", "l2"])
def test_admm_star_exact_updates_match_scipy_per_agent(small, reg):
    """Vectorised batched Newton/FISTA == one scipy solve per agent, on unequal local sizes."""
    problem = small[reg]
    owner = _owner_unequal(problem.n, [15, 45, 60, 120])
    rho, T = 0.5, 4
    tr = dl.run("admm_star", problem, rho=rho, iterations=T, seed=0, owner=owner, inner_tol=1e-11)
    locs = _local(problem, owner)
    w, G = np.zeros(problem.d), [np.zeros(problem.d) for _ in locs]
    for _ in range(T):
        W = [_exact_local_scipy(loc, problem, G[i], w, rho) for i, loc in enumerate(locs)]  # Alg. 1, line 4
        w_new = sum(W) / len(W) - sum(G) / (len(W) * rho)  # line 6
        G = [G[i] - rho * (W[i] - w_new) for i in range(len(W))]  # line 8
        w = w_new
    np.testing.assert_allclose(tr.model, w, atol=1e-6)
    assert np.abs(w).max() > 1e-2


def test_renewing_only_the_slow_agents_hessians_solves_the_same_subproblems(small, monkeypatch):
    """PVP's and DVP's noise moves every agent's subproblem each iteration; the ℓ2 solver then renews
    only the inverses of the agents whose step contracted too slowly (``refresh="agents"``). The
    solves agree with renewing all of them to the tolerance, a subset's inverses are the same
    numbers as those rows of the full batch, and fewer inverses are formed."""
    problem = small["l2"]
    owner = _owner_unequal(problem.n, [15, 45, 60, 120])
    stack = star._stack_for(problem, owner)
    N, d = 4, problem.d
    Z0 = stack.margins(np.random.default_rng(5).normal(size=(N, d)))
    mu = np.full((N, 1), 0.7)
    full, part = local_solvers._hessian_inverse(stack, Z0, mu), local_solvers._hessian_inverse(stack, Z0, mu, np.array([1, 3]))
    assert np.array_equal(part, full[[1, 3]])
    formed = {"all": 0, "agents": 0}
    real = local_solvers._hessian_inverse

    def counting(stack, Z, mu, agents=None):
        out = real(stack, Z, mu, agents)
        formed[mode] += len(out)
        return out

    monkeypatch.setattr(local_solvers, "_hessian_inverse", counting)
    solutions = {}
    for mode in ("all", "agents"):
        cache, W, w = {}, np.zeros((N, d)), np.zeros(d)
        Z, noise = stack.margins(W), np.random.default_rng(1)
        solutions[mode] = []
        for _ in range(12):  # a noisy dual every iteration, as PVP's and DVP's
            G = noise.normal(scale=2.0, size=(N, d))
            W, Z, error, converged = star._exact_update(stack, G, w, 0.05, W, Z, tol=1e-10, cache=cache, refresh=mode)
            assert converged and error <= 1e-8
            solutions[mode].append(W)
    np.testing.assert_allclose(solutions["agents"], solutions["all"], atol=1e-8)
    assert N <= formed["agents"] < formed["all"], formed


# ---------------------------------------------------------------------- private twins, PVP, DVP, DP-SGD
@pytest.mark.parametrize("name", ["pvp_star", "dvp_star"])
def test_exact_update_baselines_without_noise_are_admm_bit_for_bit(small, name):
    problem = small["l2"]
    kw = dict(delta=1e-5, rho=0.4, iterations=15, seed=4, n_agents=5, sizes="unequal")
    base = dl.run("admm_star", problem, epsilon=math.inf, **kw)
    twin = dl.run(name, problem, epsilon=math.inf, **kw)
    assert np.array_equal(base.objective, twin.objective)
    assert np.array_equal(base.model, twin.model)
    for key in base.metrics:
        assert np.array_equal(base.metrics[key], twin.metrics[key])


def test_pvp_noise_is_huangs_sigma_and_only_on_the_broadcast(small):
    problem = small["l2"]
    owner = _owner_unequal(problem.n, [40, 60, 140])
    eps, delta, rho = 0.8, 1e-4, 0.3
    tr = dl.run("pvp_star", problem, epsilon=eps, delta=delta, rho=rho, iterations=5, seed=2, owner=owner,
                calibration="paper")
    m = np.array([40, 60, 140])
    sigma = 2 * problem.lipschitz * math.sqrt(2 * math.log(1.25 / delta)) / ((problem.lam + rho) * m * eps)  # Sec. III-A
    np.testing.assert_allclose(tr.noise["sigma"], sigma, rtol=1e-12)
    assert tr.noise["solve_error"] < 1e-8
    (event,) = tr.ledger  # the same release at each of the 5 iterations
    assert event.count == 5
    # the ledger's sensitivity covers the inner solver's certified tolerance, so privacy is never overstated
    z = math.sqrt(2 * math.log(1.25 / delta)) / eps
    assert z * (1 - 1e-6) < event.noise_multiplier < z
    assert event.sensitivity == pytest.approx(tr.noise["sensitivity"].min() + 2e-9 / (rho + problem.lam), rel=1e-12)
    # slow reference: Alg. 2 with scipy local solves and the same Gaussian draws
    locs, rng = _local(problem, owner), np.random.default_rng(2)
    w, G = np.zeros(problem.d), [np.zeros(problem.d) for _ in locs]
    for _ in range(5):
        W = [_exact_local_scipy(loc, problem, G[i], w, rho) for i, loc in enumerate(locs)]
        xi = rng.standard_normal((3, problem.d))
        Wt = [W[i] + sigma[i] * xi[i] for i in range(3)]  # line 5
        w_new = sum(Wt) / 3 - sum(G) / (3 * rho)
        G = [G[i] - rho * (Wt[i] - w_new) for i in range(3)]
        w = w_new
    np.testing.assert_allclose(tr.model, w, atol=1e-6)


def test_dvp_calibration_follows_zhang_and_chaudhuri(small):
    base = small["l2"]  # rows within a declared public bound 0.5: c₁ = 0.5, c = 0.0625
    problem = problems.logistic(0.5 * base.X, base.y, base.lam, "l2", feature_bound=0.5)
    assert problem.lipschitz == pytest.approx(0.5)
    rho = 0.2
    sizes = np.array([3, 50, 400])
    phis = {}
    for eps in (0.05, 1.0):
        zeta, phi, eff = star.dvp_noise(problem, epsilon=eps, rho=rho, sizes=sizes)
        c, lam_c = problem.per_example_smoothness, rho + problem.lam
        alpha_hat = eps - 2 * np.log(1 + c / (sizes * lam_c))
        expect_phi = np.where(alpha_hat > 0, 0.0, np.maximum(c / (sizes * (math.exp(eps / 4) - 1)) - lam_c, 0.0))
        expect_zeta = np.where(alpha_hat > 0, alpha_hat, eps / 2) / (2 * problem.lipschitz)
        np.testing.assert_allclose(phi, expect_phi, rtol=1e-12)
        np.testing.assert_allclose(zeta, expect_zeta, rtol=1e-12)
        np.testing.assert_allclose(eff * zeta, eps, rtol=1e-12)  # ledger: ζΔ = ε per iteration
        phis[eps] = phi
    assert phis[0.05][0] > 0 and phis[0.05][-1] == 0  # at small ε the 3-sample agent needs the extra penalty Φ
    assert not np.any(phis[1.0])
    tr = dl.run("dvp_star", problem, epsilon=0.5, delta=1e-5, rho=rho, iterations=10, seed=0, n_agents=4,
                calibration="paper")
    assert tr.ledger[0].mechanism == "laplace_l2" and tr.ledger[0].count == 10
    assert tr.privacy.epsilon <= 10 * 0.5 + 1e-9 and tr.privacy_paper.epsilon == pytest.approx(5.0)
    assert "certified within" in tr.ledger[0].note


def test_dvp_accountant_calibrates_alpha_to_the_end_to_end_budget(small):
    problem = small["l2"]
    eps, delta, T = 1.0, 1e-5, 12
    tr = dl.run("dvp_star", problem, epsilon=eps, delta=delta, rho=0.2, iterations=T, seed=0, n_agents=4)
    (event,) = tr.ledger
    alpha = tr.noise["per_iteration_epsilon"]
    assert event.count == T and event.noise * event.sensitivity == pytest.approx(alpha, rel=1e-12)
    assert 0.97 * eps <= tr.privacy.epsilon <= eps
    assert tr.privacy_paper.epsilon == pytest.approx(T * alpha)  # Zhang & Zhu: basic composition of T α-DP steps
    assert alpha > eps / T  # the accountant composes pure releases more tightly than adding them up
    zeta, phi, _ = star.dvp_noise(problem, epsilon=alpha, rho=0.2, sizes=np.full(4, problem.n // 4))
    np.testing.assert_allclose(tr.noise["zeta"], zeta, rtol=1e-12)  # ζ, Φ: Alg. 2 at the calibrated α
    np.testing.assert_allclose(tr.noise["extra_penalty"], phi, rtol=1e-12)


@pytest.mark.parametrize("name", ["dvp_star", "pvp_star"])
def test_an_inner_solve_that_stops_early_warns_and_says_so_in_the_ledger(small, name):
    problem = small["l2"]
    kw = dict(epsilon=1.0, delta=1e-5, rho=0.2, iterations=4, seed=0, n_agents=4)
    with pytest.warns(RuntimeWarning, match="stopped at max_inner = 1"):
        tr = dl.run(name, problem, max_inner=1, inner_tol=1e-14, **kw)
    assert all("stopped early" in e.note for e in tr.ledger)
    assert tr.noise["solve_error"] > tr.noise["solve_bound"]
    # no certified distance for D′: neither the exact-solve budget nor an ε raised by the distance measured on D
    assert not tr.privacy.covered and math.isinf(tr.privacy.epsilon) and "max_inner = 1" in tr.privacy.reason
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a converged run is silent, and its ledger note certifies the solve
        ok = dl.run(name, problem, **kw)
    assert not any("stopped early" in e.note for e in ok.ledger) and ok.noise["solve_error"] <= ok.noise["solve_bound"]
    assert ok.privacy.covered and ok.privacy.epsilon <= 1.0
    # the ledger itself never follows the data: the stopped run records the planned (certified) releases
    if name == "dvp_star":
        assert [(e.sensitivity, e.noise, e.count) for e in tr.ledger] == [(e.sensitivity, e.noise, e.count)
                                                                          for e in ok.ledger]
    else:  # Δ_i + 2b with b the tolerance's certified distance, not the distance measured on this data
        assert tr.ledger[0].sensitivity == pytest.approx(np.max(tr.noise["sensitivity"]) + 2 * tr.noise["solve_bound"],
                                                         rel=1e-12)


def test_dp_sgd_matches_per_agent_loop_and_clipping(small):
    problem = small["l2"]
    owner = _owner_unequal(problem.n, [30, 90, 120])
    eps, delta, lr, C, T = 0.7, 1e-5, 0.5, 0.3, 6
    tr = dl.run("dp_sgd_star", problem, epsilon=eps, delta=delta, rho=1.0, iterations=T, seed=5, owner=owner,
                learning_rate=lr, clip=C, calibration="paper")
    rng = np.random.default_rng(5)
    m = np.array([30, 90, 120])
    sigma = 2 * C / m * math.sqrt(2 * math.log(1.25 / delta)) / eps
    np.testing.assert_allclose(tr.noise["sigma"], sigma, rtol=1e-12)
    w = np.zeros(problem.d)
    for _ in range(T):
        xi = rng.standard_normal((3, problem.d))
        W = []
        for i in range(3):
            Xi, yi = problem.X[owner == i], problem.y[owner == i]
            grads = problem.with_data(Xi, yi).per_example_gradients(w)
            g = dl.mechanisms.clip(grads, C).mean(0) + sigma[i] * xi[i]
            W.append(w - lr * (g + problem.lam * w))
        w = sum(W) / 3
    np.testing.assert_allclose(tr.model, w, rtol=1e-11, atol=1e-13)


# ---------------------------------------------------------------------- internals
def test_loss_slope_equals_the_problem_loss_even_at_huge_margins(small):
    problem = small["l2"]
    owner = datasets.split(problem.n, 3, sizes="unequal", seed=0)
    stack = star._Stack(problem, problems.make_agents(problem, owner), owner)
    Z = np.random.default_rng(0).standard_normal(stack.y.shape) * np.array([1e-3, 10, 800])[:, None]
    loss, slope = star._loss_slope(stack, Z)
    ell = np.where(stack.mask, problem._loss_of_margin(Z, stack.y), 0).sum(1) / stack.sizes
    np.testing.assert_allclose(loss, ell, rtol=1e-14)
    np.testing.assert_allclose(slope, np.where(stack.mask, problem._dloss_of_margin(Z, stack.y), 0), rtol=1e-14,
                               atol=1e-300)


def test_sparse_and_dense_stacks_agree(small):
    problem = small["l2"]
    problem_sparse = problem.with_data(np.where(np.abs(problem.X) > 0.2, problem.X, 0.0), problem.y)
    owner = datasets.split(problem.n, 5, sizes="unequal", seed=2)
    agents = problems.make_agents(problem_sparse, owner)
    dense = star._Stack(problem_sparse, agents, owner, sparse=False)
    sparse = star._Stack(problem_sparse, agents, owner, sparse=True)
    rng = np.random.default_rng(0)
    W, R = rng.standard_normal((5, problem.d)), rng.standard_normal(agents.y.shape) * agents.mask
    np.testing.assert_allclose(sparse.margins(W), dense.margins(W), atol=1e-14)
    np.testing.assert_allclose(sparse.margins_at(W[0]), dense.margins_at(W[0]), atol=1e-14)
    np.testing.assert_allclose(sparse.rmatvec(R), dense.rmatvec(R), atol=1e-13)
    np.testing.assert_allclose(sparse.hessians(np.abs(R)), dense.hessians(np.abs(R)), atol=1e-13)
    np.testing.assert_allclose(sparse.row_norms(), dense.row_norms(), atol=1e-15)
    z = np.einsum("jd,jd->j", problem_sparse.X, W[owner])  # sample j against its own agent's model
    np.testing.assert_allclose(dense.margins(W)[agents.mask], z[np.argsort(owner, kind="stable")], atol=1e-14)


@pytest.mark.parametrize("name,reg", [(n, r) for n in STAR for r in ("l1", "l2") if (n, r) != ("dvp_star", "l1")])
def test_recording_every_kth_iteration_keeps_the_run_and_scores_those_iterations(small, name, reg):
    private = {} if name == "admm_star" else {"epsilon": 2.0, "delta": 1e-5}
    check_record_every(lambda k: dl.run(name, small[reg], rho=0.5, iterations=23, n_agents=4, seed=3, record_every=k,
                                        **private))


# ---------------------------------------------------------------------- bad input, extreme values
@pytest.mark.parametrize("name", STAR)
def test_bad_inputs_name_the_parameter(small, name):
    problem = small["l2"]
    eps = math.inf if name == "admm_star" else 1.0
    with pytest.raises(ValueError, match="n_agents"):
        dl.run(name, problem, epsilon=eps, rho=1.0, iterations=2, n_agents=problem.n + 1)
    with pytest.raises(ValueError, match="rho"):
        dl.run(name, problem, epsilon=eps, rho=0.0, iterations=2, n_agents=3)
    with pytest.raises(ValueError, match="iterations"):
        dl.run(name, problem, epsilon=eps, rho=1.0, iterations=0, n_agents=3)
    with pytest.raises(ValueError, match="delta"):
        dl.run(name, problem, epsilon=eps, delta=1.0, rho=1.0, iterations=2, n_agents=3)
    with pytest.raises(ValueError, match="owner"):
        dl.run(name, problem, epsilon=eps, rho=1.0, iterations=2, owner=np.zeros(3, int))
    X, y, _ = datasets.make_lasso(50, 4, seed=0)
    if name == "admm_star":
        with pytest.raises(ValueError, match="epsilon"):
            dl.run(name, problem, epsilon=1.0, rho=1.0, iterations=2, n_agents=3)
        dl.run(name, problems.lasso(X, y, 0.01), rho=1.0, iterations=2, n_agents=3)  # exact ADMM runs Lasso too
    else:
        with pytest.raises(ValueError, match="loss|regularizer"):  # Lasso: squared loss (and ℓ1, which DVP refuses)
            dl.run(name, problems.lasso(X, y, 0.01), epsilon=1.0, rho=1.0, iterations=2, n_agents=3)


def test_bad_options_name_the_parameter(small):
    p1, p2 = small["l1"], small["l2"]
    with pytest.raises(ValueError, match="regularizer"):
        dl.run("dvp_star", p1, epsilon=1.0, rho=1.0, iterations=2, n_agents=3)
    with pytest.raises(ValueError, match="c_w"):
        dl.run("dp_admm_star", p2, epsilon=1.0, rho=1.0, iterations=2, n_agents=3, c_w=-1.0)
    with pytest.raises(ValueError, match="learning_rate"):
        dl.run("dp_sgd_star", p2, epsilon=1.0, rho=1.0, iterations=2, n_agents=3, learning_rate=0)
    with pytest.raises(ValueError, match="sizes"):
        dl.run("dp_admm_star", p2, epsilon=1.0, rho=1.0, iterations=2, n_agents=3, sizes="random")
    fused = problems.graph_guided_fused_lasso(p2.X, p2.y, 0.01, W=np.zeros((0, p2.d)))
    with pytest.raises(ValueError, match="regularizer"):
        dl.run("dp_admm_star", fused, epsilon=1.0, rho=1.0, iterations=2, n_agents=3)


@pytest.mark.parametrize("name,reg", [(n, r) for n in STAR for r in ("l1", "l2") if (n, r) != ("dvp_star", "l1")])
def test_extreme_slider_values_stay_finite(small, name, reg):
    problem = small[reg]
    eps = math.inf if name == "admm_star" else 0.01
    for rho, T in ((1e-3, 1), (1e-3, 15), (1e3, 15)):
        with warnings.catch_warnings():  # at ρ = 1e-3 an exact local solve may stop early: it warns, and must not crash
            warnings.filterwarnings("ignore", "(pvp|dvp)_star: the local solve stopped", RuntimeWarning)
            tr = dl.run(name, problem, epsilon=eps, delta=1e-6, rho=rho, iterations=T, seed=0, n_agents=40)
        for key, series in tr.series().items():
            assert np.all(np.isfinite(series)), f"{name} ρ={rho} T={T}: {key} has NaN/inf"
        assert np.all(np.isfinite(tr.model))


def test_chapter_exercise_checks_accept_the_answer_and_nothing_else():
    from dpadmm_book.exercises import huang2019 as ex

    assert ex.check_agent_update(ex.expected_agent_update())
    assert not ex.check_agent_update(ex.expected_agent_update() + 1e-3)
    assert ex.check_sigma(ex.expected_sigma()) and not ex.check_sigma(...)
    v = ex.sigma_data()  # eq. (14) written out
    sigma = 2 * v["lipschitz"] * np.sqrt(2 * np.log(1.25 / v["delta"])) / (v["sizes"] * v["epsilon"] * (v["rho"] + 1 / v["eta"]))
    assert ex.check_sigma(sigma)
    t = ex.expected_max_iterations()
    z = accounting.huang2019_noise_multiplier(0.1, 1e-5)
    assert accounting.gaussian_epsilon(z, t, 1e-5) <= 1.0 < accounting.gaussian_epsilon(z, t + 1, 1e-5)
    assert ex.check_max_iterations(t) and not ex.check_max_iterations(t + 1)
    missing = ex.check_max_iterations(None)
    assert not missing and "not answered yet" in missing.message
