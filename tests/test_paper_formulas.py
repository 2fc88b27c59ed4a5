"""Each paper's guarantee and noise formula against values derived independently of the library.

Nothing here re-types the library's code. Each test either follows the paper's own derivation
step by step (the RDP of the Gaussian mechanism, the composition, the conversion the paper uses)
and checks that the library's number satisfies every step, or computes the quantity by a different
route (numerical integration of the privacy loss, a brute-force search, Google's dp-accounting,
the Rényi divergence of two Bernoulli distributions). The last group checks the ledgers the
algorithms write against the same derivations, reading the noise the run actually drew
(``dpadmm_lite.audit.intercept_noise``), not the noise the code says it drew.

Bugs a review planted that these tests catch (issue 17): the subsampled ℓ2-Laplace RDP with q·ε₀
instead of log(1 + q(e^ε₀ − 1)); PVP's ℓ1 sensitivity with ρ + λ; DVP's ledger recording Δ = c₁;
DVP's extra penalty Φ dropped; dp_sgd_star's ledger claiming half the sensitivity; noise halved in
dvp_star.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

import dp_accounting as dpa
from dp_accounting.rdp import rdp_privacy_accountant as dp_rdp

import dpadmm_lite as dl
from dpadmm_lite import accounting, audit, datasets, problems
from dpadmm_lite.privacy import PrivacyEvent


# ====================================================================== independent references
def exact_gaussian_delta(epsilon: float, mu: float) -> float:
    """δ(ε) of one Gaussian release with Δ/σ = μ, by integrating the definition
    ``δ(ε) = ∫ max(0, p(x) − e^ε q(x)) dx`` with p = N(μ, 1), q = N(0, 1) (no closed form used)."""
    # p(x) > e^ε q(x) exactly for x > x0 = ε/μ + μ/2 (the log-likelihood ratio μx − μ²/2 is increasing)
    x0 = epsilon / mu + mu / 2
    f = lambda x: stats.norm.pdf(x, loc=mu) - math.exp(epsilon) * stats.norm.pdf(x)  # noqa: E731
    value, _ = integrate.quad(f, x0, x0 + 40, epsabs=1e-15, epsrel=1e-12, limit=200)
    return value


def exact_gaussian_epsilon(mu: float, delta: float) -> float:
    """The true ε at δ of a Gaussian mechanism with Δ/σ = μ (root of :func:`exact_gaussian_delta`)."""
    return optimize.brentq(lambda e: exact_gaussian_delta(e, mu) - delta, 0.0, 60.0, xtol=1e-12)


def bernoulli_renyi(alpha: float, epsilon: float) -> float:
    """D_α(P‖Q) for randomized response with ε: P = (e^ε, 1)/(1 + e^ε), Q = (1, e^ε)/(1 + e^ε)."""
    p = np.array([math.exp(epsilon), 1.0]) / (1 + math.exp(epsilon))
    q = p[::-1]
    return math.log(np.sum(p**alpha * q ** (1 - alpha))) / (alpha - 1)


def dp_accounting_rdp_epsilon(z: float, steps: int, delta: float, q: float = 1.0) -> float:
    event = dpa.GaussianDpEvent(z) if q == 1 else dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(z))
    acc = dp_rdp.RdpAccountant()
    acc.compose(event, steps)
    return acc.get_epsilon(delta)


def test_the_independent_gaussian_reference_is_right():
    """Sanity of the reference itself: Δ/σ = 1 at δ = 1e-5 is ε ≈ 4.377 (Balle & Wang 2018, Fig. 1 regime)."""
    assert abs(exact_gaussian_epsilon(1.0, 1e-5) - 4.3772) < 1e-3
    assert exact_gaussian_delta(1.0, 0.5) < exact_gaussian_delta(0.5, 0.5)


# ====================================================================== Xu et al. 2020, Theorem 1
XU_CASES = [(1.0, 1e-3, 100, 1000, 1.0, 0.5), (0.1, 1e-5, 20, 40_000, 1.0, 0.3), (5.0, 1e-6, 500, 250, 0.5, 0.8)]


@pytest.mark.parametrize("eps, delta, T, n, c, mu", XU_CASES)
def test_xu2020_sigma_satisfies_every_step_of_the_proof_of_theorem_1(eps, delta, T, n, c, mu):
    sigma = accounting.xu2020_sigma(eps, delta, iterations=T, n=n, lipschitz=c, mu=mu)
    # (13): the conversion term log(1/δ)/(α − 1) takes the share (1 − μ)ε of the budget
    alpha = math.log(1 / delta) / ((1 - mu) * eps) + 1
    # Lemma (Gaussian mechanism): one x-update with sensitivity c/n is (α, α(c/n)²/(2σ²))-RDP;
    # T of them compose to β = Tα(c/n)²/(2σ²), which the proof sets to με
    beta = T * alpha * (c / n) ** 2 / (2 * sigma**2)
    assert beta == pytest.approx(mu * eps, rel=1e-12)
    # (12): RDP → DP (Mironov 2017, Prop. 3): β + log(1/δ)/(α − 1) = ε
    assert beta + math.log(1 / delta) / (alpha - 1) == pytest.approx(eps, rel=1e-12)


def test_the_papers_default_constants_are_the_papers():
    """μ = ½ in Xu et al.'s experiments, θ = ½ for Liu et al.'s σ (and c₂ = 80 from it), C^R = 1 for Zhang & Zhu."""
    common = dict(iterations=50, n=1000, lipschitz=1.0)
    assert accounting.xu2020_sigma(1.0, 1e-5, **common) == accounting.xu2020_sigma(1.0, 1e-5, mu=0.5, **common)
    assert accounting.liu2022_sadmm_sigma(1.0, 1e-5, **common) == accounting.liu2022_sadmm_sigma(1.0, 1e-5, theta=0.5,
                                                                                                 **common)
    assert accounting.zhang2017_pvp_zeta(0.3, local_size=50, lam=0.1) == accounting.zhang2017_pvp_zeta(
        0.3, local_size=50, lam=0.1, loss_weight=1.0)


@pytest.mark.parametrize("sigma, delta, T, n, c", [(0.01, 1e-5, 100, 1000, 1.0), (0.3, 1e-3, 10, 50, 0.7)])
def test_xu2020_epsilon_is_the_proof_read_backwards_with_the_best_order(sigma, delta, T, n, c):
    claimed = accounting.xu2020_epsilon(sigma, delta, iterations=T, n=n, lipschitz=c)
    best = optimize.minimize_scalar(lambda a: T * a * c**2 / (2 * n**2 * sigma**2) + math.log(1 / delta) / (a - 1),
                                    bounds=(1 + 1e-9, 1e7), method="bounded", options={"xatol": 1e-12})
    assert claimed == pytest.approx(best.fun, rel=1e-7)


# ====================================================================== Huang et al. 2019, eq. (14), Thm 2
def test_huang2019_sigma_is_the_gaussian_mechanism_for_lemma_1s_sensitivity():
    eps, delta, c1, m, rho, eta = 0.5, 1e-4, 0.8, 400, 0.1, 2.5  # c₁ = 0.8: records of norm 0.8
    sigma = accounting.huang2019_sigma(eps, delta, lipschitz=c1, local_size=m, rho=rho, eta=eta)
    # Lemma 1, measured: (12a) reads the data only through (1/m)Σ ℓ'(a_j·w) a_j, so replacing record j moves
    # it by (ℓ'_j a_j − ℓ'_j' a_j')/(m(ρ + 1/η)); two records at the bound, nearly orthogonal to a huge w and
    # on its wrong side (|ℓ'| → 1), with opposite gradients, approach 2c₁/(m(ρ + 1/η))
    s_ = 1e-3
    a_j, a_j2 = np.array([-s_, 1.0, 0.0]), np.array([-s_, -1.0, 0.0])
    a_j, a_j2 = c1 * a_j / np.linalg.norm(a_j), c1 * a_j2 / np.linalg.norm(a_j2)
    w = np.array([1e7, 0.0, 0.0])
    X = np.vstack([a_j, np.full((m - 1, 3), 0.1)])
    y = np.ones(m)

    def update(record):
        XX = X.copy()
        XX[0] = record
        slope = -y / (1 + np.exp(np.clip(y * (XX @ w), -700, 700)))
        return -(slope @ XX) / m / (rho + 1 / eta)

    measured = np.linalg.norm(update(a_j) - update(a_j2))
    lemma = 2 * c1 / (m * (rho + 1 / eta))
    assert lemma * (1 - 1e-5) <= measured <= lemma
    # Dwork & Roth (2014), Thm A.1: σ = Δ √(2 ln(1.25/δ))/ε
    assert sigma == pytest.approx(lemma * math.sqrt(2 * math.log(1.25 / delta)) / eps, rel=1e-12)
    # and for ε ≤ 1 that σ really is (ε, δ)-DP: the exact δ(ε) of Δ/σ is below δ
    assert exact_gaussian_delta(eps, lemma / sigma) <= delta
    assert isinstance(sigma, float)  # a number in, a number out; arrays broadcast (one σ per agent and step)
    grid = accounting.huang2019_sigma(eps, delta, lipschitz=c1, local_size=np.array([1, 400]), rho=rho,
                                      eta=np.array([[eta], [2 * eta]]))
    assert grid.shape == (2, 2) and grid[0, 1] == pytest.approx(sigma, rel=1e-12)
    assert grid[1, 0] == pytest.approx(2 * c1 * math.sqrt(2 * math.log(1.25 / delta)) / (eps * (rho + 1 / (2 * eta))))
    for bad in (dict(local_size=0.5), dict(local_size=np.nan), dict(eta=0.0), dict(eta=np.nan), dict(eta=-1.0)):
        args = dict(lipschitz=c1, local_size=m, rho=rho, eta=eta) | bad
        with pytest.raises(ValueError, match="local_size|eta"):
            accounting.huang2019_sigma(eps, delta, **args)


@pytest.mark.parametrize("eps, delta, t", [(0.1, 1e-3, 100), (1.0, 1e-5, 10), (0.01, 1e-6, 400), (1.0, 0.1, 100)])
def test_huang2019_total_epsilon_is_the_moments_accountant_by_brute_force(eps, delta, t):
    z = math.sqrt(2 * math.log(1.25 / delta)) / eps  # σ/Δ of eq. (14)
    lam = np.arange(1, 200_001, dtype=float)  # Abadi et al. 2016, Thm 2: integer moments λ
    brute = float(np.min((t * lam * (lam + 1) / (2 * z * z) + math.log(1 / delta)) / lam))
    assert accounting.huang2019_total_epsilon(eps, delta, t) == pytest.approx(brute, rel=1e-12)


# ====================================================================== Cyffers et al. 2023
def test_cyffers2023_rdp_bounds_follow_from_the_u_update_sensitivity():
    K, L, gamma, sigma, n, relax = 30, 1.3, 0.7, 1.7, 500, 0.5  # no constant equal to 1 or 2: every factor shows
    alphas = np.array([1.5, 2.0, 8.0, 32.0])
    gaussian = lambda a, sens, noise: a * sens**2 / (2 * noise**2)  # noqa: E731  Gaussian mechanism RDP
    # Thm 2 (App. C.3): each u-update moves by ≤ 4λLγ/n against noise λσ; K releases compose
    central = K * gaussian(alphas, 4 * relax * L * gamma / n, relax * sigma)
    np.testing.assert_allclose(accounting.cyffers2023_centralized_rdp(alphas, iterations=K, lipschitz=L, gamma=gamma,
                                                                      sigma=sigma, n=n), central, rtol=1e-12)
    # Thm 3, local: one user's update moves by ≤ 4λLγ (per-record step γ); K_i participations
    local = K * gaussian(alphas, 4 * relax * L * gamma, relax * sigma)
    np.testing.assert_allclose(accounting.cyffers2023_federated_local_rdp(alphas, participations=K, lipschitz=L,
                                                                          gamma=gamma, sigma=sigma), local, rtol=1e-12)
    # Thm 4: the local loss times ln(n)/n, valid only where σ > 2Lγ√(α(α − 1))
    network = accounting.cyffers2023_network_rdp(alphas, participations=K, lipschitz=L, gamma=gamma, sigma=sigma, n=n)
    valid = sigma > 2 * L * gamma * np.sqrt(alphas * (alphas - 1))
    np.testing.assert_allclose(network[valid], (local * math.log(n) / n)[valid], rtol=1e-12)
    assert np.all(np.isinf(network[~valid])) and valid.any() and (~valid).any()


def test_cyffers2023_epsilons_use_the_papers_conversion_at_the_best_order():
    K, L, gamma, sigma, n, delta = 30, 1.3, 0.7, 1.7, 500, 1e-6
    slope = 8 * K * L**2 * gamma**2 / (sigma**2 * n**2)
    best = optimize.minimize_scalar(lambda a: slope * a + math.log(1 / delta) / (a - 1), bounds=(1 + 1e-9, 1e9),
                                    method="bounded", options={"xatol": 1e-10})
    got = accounting.cyffers2023_centralized_epsilon(delta, iterations=K, lipschitz=L, gamma=gamma, sigma=sigma, n=n)
    assert got == pytest.approx(best.fun, rel=1e-6)


def test_cyffers2023_federated_central_numerical_is_the_subsampled_gaussian_of_the_proof():
    K, L, gamma, sigma, n, m, delta = 50, 1.0, 0.5, 1.0, 1000, 100, 1e-6
    z = m * sigma / (4 * L * gamma)  # App. C.4: the aggregate of m users, as the proof reads it
    theirs = dp_accounting_rdp_epsilon(z, K, delta, q=m / n)
    ours = accounting.cyffers2023_federated_central_epsilon(delta, iterations=K, lipschitz=L, gamma=gamma,
                                                            sigma=sigma, n=n, m=m, method="numerical")
    assert 0.8 * theirs <= ours <= 1.02 * theirs


# ====================================================================== Liu et al. 2022
@pytest.mark.parametrize("eps, delta, T, n, l, theta", [(1.0, 5e-4, 200, 10_000, 1.0, 0.5), (0.2, 1e-5, 50, 500, 2.0, 0.3)])
def test_liu2022_sadmm_sigma_satisfies_the_steps_of_theorem_2(eps, delta, T, n, l, theta):
    sigma = accounting.liu2022_sadmm_sigma(eps, delta, iterations=T, n=n, lipschitz=l, theta=theta)
    alpha = math.log(1 / delta) / ((1 - theta) * eps) + 1
    b = 37  # any batch size: it cancels
    # Lemma 2: sampling rate ς = b/n, sensitivity of the minibatch mean 2l/b: 5ς²αΔ²/σ² per step
    per_step = 5 * (b / n) ** 2 * alpha * (2 * l / b) ** 2 / sigma**2
    assert T * per_step == pytest.approx(theta * eps, rel=1e-12)  # T steps spend θε in RDP
    assert theta * eps + math.log(1 / delta) / (alpha - 1) == pytest.approx(eps, rel=1e-12)  # conversion


def test_liu2022_vradmm_default_constant_is_the_sadmm_argument_for_S_times_m_steps():
    eps, delta, n, S, m, l = 0.5, 5e-4, 2000, 4, 25, 1.7
    vr = accounting.liu2022_vradmm_sigma(eps, delta, lipschitz=l, n=n, epochs=S, inner=m)
    sadmm = accounting.liu2022_sadmm_sigma(eps, delta, iterations=S * m, n=n, lipschitz=l, theta=0.5)
    alpha = math.log(1 / delta) / (0.5 * eps) + 1
    # Thm 2 at θ = ½ with α − 1 in place of α: σ² = 80 l² T ln(1/δ)/(n² ε²) — Thm 1's form with c₂ = 80
    assert vr**2 == pytest.approx(sadmm**2 * (alpha - 1) / alpha, rel=1e-12)


# ====================================================================== Zhang & Zhu 2017
def jacobian_term(*, c1, B, CR, lam, Phi, rho, Np):
    """Eq. (30): the Jacobian ratio of objective perturbation is at most (1 + c₁/((B/C^R)(λ + Φ + 2ρN_p)))²."""
    return 2 * math.log(1 + c1 / ((B / CR) * (lam + Phi + 2 * rho * Np)))


@pytest.mark.parametrize("alpha", [0.002, 0.02, 0.2, 2.0])
@pytest.mark.parametrize("B, CR", [(5, 1.0), (60, 2.5), (1000, 1.0)])
def test_zhang2017_dvp_noise_and_extra_penalty_spend_exactly_alpha(alpha, B, CR):
    c1, lam, rho, Np = 0.25, 1e-2, 0.05, 3
    zeta, Phi = accounting.zhang2017_dvp_zeta(alpha, local_size=B, lam=lam, rho=rho, n_neighbors=Np, c1=c1,
                                              loss_weight=CR)
    assert Phi >= 0
    # proof of Thm 1: the noise density ratio is ≤ e^{ζ‖ε' − ε‖} with ‖ε' − ε‖ ≤ 2 (|ℒ'| ≤ 1, ‖x‖ ≤ 1), eq. (31),
    # times the Jacobian ratio (30) at the Φ actually used: the two together must be ≤ e^α
    spent = 2 * zeta + jacobian_term(c1=c1, B=B, CR=CR, lam=lam, Phi=Phi, rho=rho, Np=Np)
    assert spent <= alpha * (1 + 1e-12)
    assert spent >= alpha * (1 - 1e-9), "the proof's choice spends α exactly (no wasted noise)"
    # Alg. 2: Φ is needed exactly when the Jacobian term alone (Φ = 0) would not leave any budget
    needs_phi = jacobian_term(c1=c1, B=B, CR=CR, lam=lam, Phi=0.0, rho=rho, Np=Np) >= alpha
    assert (Phi > 0) == needs_phi
    if needs_phi:  # then Φ makes the Jacobian term exactly α/2 and ζ = α/4
        assert jacobian_term(c1=c1, B=B, CR=CR, lam=lam, Phi=Phi, rho=rho, Np=Np) == pytest.approx(alpha / 2, rel=1e-9)


def test_zhang2017_dvp_rates_the_paper_prints_elsewhere():
    """Alg. 2 prints ζ = α̂ (spends 2α̂ + ᾱ > α); App. E uses ζ = α/4: the book can show both, computed as printed."""
    alpha, B, lam, rho, Np = np.array([0.01, 0.5, 3.0]), 40, 1e-2, 0.05, 2
    proof, Phi = accounting.zhang2017_dvp_zeta(alpha, local_size=B, lam=lam, rho=rho, n_neighbors=Np)
    printed, Phi2 = accounting.zhang2017_dvp_zeta(alpha, local_size=B, lam=lam, rho=rho, n_neighbors=Np, rule="algorithm")
    appendix, _ = accounting.zhang2017_dvp_zeta(alpha, local_size=B, lam=lam, rho=rho, n_neighbors=Np, rule="appendix")
    np.testing.assert_allclose(printed, 2 * proof, rtol=1e-12)  # α̂ itself, where the proof takes α̂/2
    np.testing.assert_allclose(appendix, alpha / 4, rtol=1e-12)
    np.testing.assert_array_equal(Phi, Phi2)


def test_zhang2017_jacobian_term_is_equation_30():
    B, lam, rho, Np, Phi, CR = np.array([7, 300]), 0.02, 0.3, 2, 0.4, 1.5
    expected = [jacobian_term(c1=0.25, B=b, CR=1.0, lam=lam, Phi=0.0, rho=rho, Np=Np) for b in B]  # the defaults
    np.testing.assert_allclose(accounting.zhang2017_dvp_jacobian(local_size=B, lam=lam, rho=rho, n_neighbors=Np),
                               expected, rtol=1e-12)
    expected = [jacobian_term(c1=0.6, B=b, CR=CR, lam=lam, Phi=Phi, rho=rho, Np=Np) for b in B]
    got = accounting.zhang2017_dvp_jacobian(local_size=B, lam=lam, rho=rho, n_neighbors=Np, extra=Phi, loss_weight=CR,
                                            c1=0.6)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_zhang2017_pvp_rate_makes_each_broadcast_alpha_dp():
    alpha, B, lam, CR = np.array([0.1, 1.0]), np.array([50, 700]), 0.02, 2.5
    # App. B, eq. (33): the minimiser of the λ-strongly convex (18) moves by ≤ ‖∇G‖/λ ≤ 2C^R/(λB_p)
    sensitivity = 2 * CR / (lam * B)
    zeta = accounting.zhang2017_pvp_zeta(alpha, local_size=B, lam=lam, loss_weight=CR)
    np.testing.assert_allclose(zeta * sensitivity, alpha, rtol=1e-12)  # pure ζΔ = α per broadcast
    np.testing.assert_allclose(accounting.zhang2017_pvp_sensitivity(local_size=B, lam=lam, loss_weight=CR), sensitivity)
    # basic composition: node p's data is Σ_t α_p(t)-DP; the worst node counts
    assert accounting.zhang2017_total_epsilon(np.array([[0.1, 0.2], [0.3, 0.1]])) == pytest.approx(0.4)
    assert accounting.zhang2017_total_epsilon(np.array([0.1, 0.2, 0.3])) == pytest.approx(0.6)
    for bad in ([], [0.1, np.nan], [0.1, 0.0], [[0.1, -1.0]], [0.1, np.inf]):
        with pytest.raises(ValueError, match="alpha"):
            accounting.zhang2017_total_epsilon(np.array(bad, dtype=float))


# ====================================================================== subsampled ℓ2-Laplace (pure DP)
@pytest.mark.parametrize("e0, q", [(2.0, 0.1), (0.5, 0.01), (5.0, 0.5)])
def test_subsampled_pure_dp_rdp_is_randomized_response_at_the_amplified_epsilon(e0, q):
    # Poisson sampling at rate q turns ε₀-DP into log(1 + q(e^ε₀ − 1))-DP (Li, Qardaji & Su 2012;
    # Balle, Barthe & Gaboardi 2018), and randomized response dominates every pure-DP mechanism
    amplified = math.log(1 + q * (math.exp(e0) - 1))
    orders = np.array([1.5, 2.0, 4.0, 16.0, 64.0])
    expected = np.array([bernoulli_renyi(a, amplified) for a in orders])
    got = accounting.laplace_rdp(e0, orders, sampling_rate=q)
    np.testing.assert_allclose(got, expected, rtol=1e-9)
    # a q·ε₀ shortcut would be far below: the test would see it
    assert bernoulli_renyi(4.0, q * e0) < 0.8 * bernoulli_renyi(4.0, amplified)


def test_a_sampled_laplace_ledger_spends_the_amplified_epsilon():
    e0, q, delta = 2.0, 0.1, 1e-9
    amplified = math.log(1 + q * (math.exp(e0) - 1))
    # randomized response with ε' has δ(ε) = (e^ε' − e^ε)/(1 + e^ε'): its exact ε at δ
    rr_exact = math.log(math.exp(amplified) - delta * (1 + math.exp(amplified)))
    eps = accounting.ledger_epsilon([PrivacyEvent("laplace_l2", 1.0, e0, sampling_rate=q)], delta)
    assert rr_exact - 1e-9 <= eps <= amplified + 1e-9
    # twenty of them: never below the exact composition of twenty randomized responses' RDP lower envelope
    twenty = accounting.ledger_epsilon([PrivacyEvent("laplace_l2", 1.0, e0, count=20, sampling_rate=q)], delta)
    assert twenty <= 20 * amplified + 1e-9 and twenty > 20 * q * e0


# ====================================================================== the algorithms' ledgers
def _logistic(penalty="l2", lam=1e-2, n=240, d=5, seed=0):
    X, y, _ = datasets.make_classification(n, d, seed=seed)
    return problems.logistic(X, y, lam, penalty)


def _run(name, problem, **kwargs):
    with audit.intercept_noise() as draws:
        trace = dl.run(name, problem, **kwargs)
    return trace, draws


def test_dp_admm_ledger_is_replace_one_gradient_perturbation_counted_T_plus_1_times():
    problem = _logistic()
    T, eps, delta = 12, 1.0, 1e-5
    trace, draws = _run("dp_admm", problem, epsilon=eps, delta=delta, rho=1.0, iterations=T, seed=0)
    [event] = trace.ledger
    # one record replaced moves the mean gradient by (∇f_j − ∇f_j')/n, ‖·‖ ≤ 2c/n with c = feature_bound
    assert event.sensitivity == pytest.approx(2 * problem.feature_bound / problem.n, rel=1e-12)
    assert event.count == T + 1  # T x-updates and the gradient inside u₀
    assert event.noise == pytest.approx(float(np.unique(draws[0].noise)[0]), rel=1e-12)  # the σ drawn
    # the end-to-end ε of T + 1 Gaussian releases is the exact ε of μ = √(T+1)·Δ/σ (Dong et al. 2022)
    truth = exact_gaussian_epsilon(math.sqrt(T + 1) * event.sensitivity / event.noise, delta)
    assert truth <= trace.privacy.epsilon <= truth * (1 + 1e-6) + 1e-9
    assert 0.97 * eps <= trace.privacy.epsilon <= eps
    # what the paper's own argument (Δ = c/n, T releases, best order) claims for the σ drawn
    paper = optimize.minimize_scalar(
        lambda a: T * a * (problem.feature_bound / problem.n) ** 2 / (2 * event.noise**2) + math.log(1 / delta) / (a - 1),
        bounds=(1 + 1e-9, 1e9), method="bounded", options={"xatol": 1e-10})
    assert trace.privacy_paper.epsilon == pytest.approx(paper.fun, rel=1e-6) and trace.privacy_paper.delta == delta


@pytest.mark.parametrize("mu", [None, 0.3])
def test_dp_admm_paper_calibration_draws_theorem_1s_sigma(mu):
    problem = _logistic()
    T, eps, delta = 12, 0.8, 1e-4
    options = {} if mu is None else {"mu": mu}
    trace, draws = _run("dp_admm", problem, epsilon=eps, delta=delta, rho=1.0, iterations=T, seed=0,
                        calibration="paper", **options)
    mu = 0.5 if mu is None else mu  # μ = ½ by default (the paper's experiments)
    sigma = float(np.unique(draws[0].noise)[0])
    c, n = problem.feature_bound, problem.n
    alpha = math.log(1 / delta) / ((1 - mu) * eps) + 1  # (13)
    assert T * alpha * (c / n) ** 2 / (2 * sigma**2) == pytest.approx(mu * eps, rel=1e-12)  # the proof's β = με
    assert trace.privacy_paper.epsilon == eps and trace.privacy_paper.delta == delta
    [event] = trace.ledger  # the ledger keeps the honest replace-one Δ = 2c/n and the T + 1 releases
    assert event.sensitivity == pytest.approx(2 * c / n) and event.count == T + 1 and event.noise == sigma


def test_an_infinite_budget_draws_no_noise():
    problem = _logistic()
    for name, options in [("dp_admm", {"rho": 1.0}), ("dp_admm", {"rho": 1.0, "calibration": "paper"}),
                          ("dp_sgd_star", {"n_agents": 4}), ("pvp_star", {"rho": 0.5, "n_agents": 4})]:
        trace, draws = _run(name, problem, epsilon=math.inf, delta=1e-5, iterations=3, seed=0, **options)
        assert trace.ledger == [] and all(not np.any(d.value) for d in draws), name


@pytest.mark.parametrize("penalty", ["l1", "l2"])
def test_pvp_star_ledger_uses_the_strong_convexity_its_subproblem_has(penalty):
    problem = _logistic(penalty, lam=0.3)  # λ comparable to ρ, so that Λ = ρ vs ρ + λ matters
    rho, N, T, delta = 0.5, 4, 3, 1e-5
    trace, draws = _run("pvp_star", problem, epsilon=1.0, delta=delta, rho=rho, iterations=T, seed=0, n_agents=N)
    # T broadcasts of the most exposed agent, at the σ drawn: the exact ε of μ = √T·Δ/σ
    assert sum(e.count for e in trace.ledger) == T == len(draws)
    mu = math.sqrt(sum(e.count * (e.sensitivity / e.noise) ** 2 for e in trace.ledger))
    assert exact_gaussian_epsilon(mu, delta) <= trace.privacy.epsilon <= exact_gaussian_epsilon(mu, delta) * (1 + 1e-6)
    assert {e.noise for e in trace.ledger} == {float(np.unique(d.noise)[0]) for d in draws}
    m = problem.n // N
    # Appendix A (Huang et al.): the exact minimiser of a Λ-strongly convex subproblem moves by ≤ 2c₁/(mΛ);
    # the ρ-term gives Λ = ρ, and ½λ‖w‖² adds λ only for ℓ2 (ℓ1 adds no strong convexity)
    strong = rho + (problem.lam if penalty == "l2" else 0.0)
    bound = 2 * problem.lipschitz / (m * strong)
    for event in trace.ledger:
        assert bound <= event.sensitivity <= bound * (1 + 1e-6), (penalty, event)


def test_dp_sgd_star_ledger_sensitivity_is_twice_the_clip_over_m():
    problem = _logistic()
    N, clip = 4, 0.3
    T = 4
    trace, draws = _run("dp_sgd_star", problem, epsilon=1.0, delta=1e-5, iterations=T, seed=0, n_agents=N, clip=clip)
    m = problem.n // N
    assert sum(e.count for e in trace.ledger) == T == len(draws)  # one noisy gradient per iteration
    mu = math.sqrt(T) * 2 * clip / m / float(np.unique(draws[0].noise)[0])
    assert exact_gaussian_epsilon(mu, 1e-5) <= trace.privacy.epsilon <= exact_gaussian_epsilon(mu, 1e-5) * (1 + 1e-6)
    # replacing one record changes the mean of m clipped gradients by ≤ 2C/m
    for event in trace.ledger:
        assert event.sensitivity == pytest.approx(2 * clip / m, rel=1e-12)
        assert event.noise == pytest.approx(float(np.unique(draws[0].noise)[0]), rel=1e-12)


def test_dp_admm_star_ledger_is_lemma_1_at_the_step_sizes_used():
    problem = _logistic()
    rho, N, T = 0.1, 4, 5
    trace, draws = _run("dp_admm_star", problem, epsilon=1.0, delta=1e-5, rho=rho, iterations=T, seed=0, n_agents=N)
    m = problem.n // N
    eta = np.asarray(trace.noise["eta"])  # (T, N): the η_i^k the run used
    expected = 2 * problem.lipschitz / (m * (rho + 1 / eta[:, 0]))  # Lemma 1, eq. (11)
    claimed = np.array([e.sensitivity for e in trace.ledger for _ in range(e.count)])
    np.testing.assert_allclose(claimed, expected, rtol=1e-12)
    noise = np.array([e.noise for e in trace.ledger for _ in range(e.count)])
    # the run draws a block of iterations' noise per call: σ_{i,k} of agent 0, row k of the blocks
    drawn = np.concatenate([np.asarray(d.noise).reshape(-1, N)[:, 0] for d in draws])
    np.testing.assert_allclose(noise, drawn, rtol=1e-12)


@pytest.mark.parametrize("bound", [1.0, 2.0])
@pytest.mark.parametrize("eps", [0.02, 1.0])
def test_dvp_star_ledger_pays_for_its_noise_and_its_jacobian(eps, bound):
    base = _logistic(n=48, d=4)  # few records per agent: at the small ε the extra penalty Φ is needed
    problem = problems.logistic(bound * base.X, base.y, base.lam, "l2", feature_bound=bound)
    rho, N, T = 0.5, 2, 3
    trace, draws = _run("dvp_star", problem, epsilon=eps, delta=1e-5, rho=rho, iterations=T, seed=0, n_agents=N,
                        calibration="paper")
    m = problem.n // N
    alpha = eps  # calibration="paper": each iteration α = ε (Zhang & Zhu's per-iteration guarantee)
    Phi = float(np.max(trace.noise["extra_penalty"]))
    zeta_drawn = float(np.unique(np.concatenate([d.noise.ravel() for d in draws]))[0])
    # one record replaced changes the linear term by ‖ℓ'_j a_j − ℓ'_j' a_j'‖ ≤ 2c₁ (sum-loss units, c₁ = the
    # public gradient bound): noise density ratio ≤ e^{2c₁ζ}; Jacobian ratio (30) with the star's curvature
    # ρ + λ + Φ and c = the public curvature bound of one example, feature_bound²/4
    jac = jacobian_term(c1=bound**2 / 4, B=m, CR=1.0, lam=problem.lam, Phi=Phi, rho=rho / 2, Np=1)
    spent = 2 * bound * zeta_drawn + jac
    [event] = trace.ledger
    assert event.count == T
    assert event.noise * event.sensitivity >= spent * (1 - 1e-9), (event, spent)
    assert event.noise * event.sensitivity == pytest.approx(alpha, rel=1e-9)
    assert spent == pytest.approx(alpha, rel=1e-9), "the noise drawn is more than the guarantee needs"
    if eps < 0.1:
        assert Phi > 0  # this setting exercises the extra penalty


def test_dvp_star_without_noise_draws_nothing_and_adds_no_penalty():
    from dpadmm_lite.algorithms import huang2019 as star

    zeta, extra, effective = star.dvp_noise(_logistic(), epsilon=math.inf, rho=0.5, sizes=np.array([60, 60, 70]))
    assert zeta.shape == extra.shape == effective.shape == (3,)
    assert np.all(np.isinf(zeta)) and np.all(extra == 0) and np.all(np.isnan(effective))
