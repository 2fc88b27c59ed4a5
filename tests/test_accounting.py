"""The accountant against Google's dp-accounting, closed forms, and the papers' own statements.

Two directions are tested on a grid of noise multipliers × steps × sampling rates:

* **sound** — our ε is never below the true ε. For sampling rate 1 the truth is known in closed
  form (T Gaussian releases with multiplier z are one Gaussian with multiplier z/√T; its exact
  ε is the analytic Gaussian mechanism, which dp-accounting implements independently). For
  q < 1 there is no closed form; dp-accounting's PLD accountant with ``pessimistic_estimate=
  False`` rounds the privacy-loss distribution *down* on its grid, so its ε is (up to the tiny
  truncated tail mass) a lower bound on the truth: we require ours ≥ that value.
* **tight** — our ε is not above dp-accounting's RDP accountant by more than 2 % (it is far
  below it: exact GDP for q = 1, the privacy loss distribution for q < 1), and our own RDP
  bound (``rdp_gaussian_epsilon``) is not above dp-accounting's RDP either (denser orders).

The PLD accountant itself is tested against dp-accounting's PLD in ``tests/test_pld.py``.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from scipy import integrate, stats

import dp_accounting as dpa
from dp_accounting import gaussian_mechanism as dp_gauss
from dp_accounting.pld import privacy_loss_distribution as dp_pld
from dp_accounting.rdp import rdp_privacy_accountant as dp_rdp

from dpadmm_lite import accounting as acc
from dpadmm_lite.accounting import _rdp
from dpadmm_lite.trace import PrivacyEvent, PrivacyGuarantee

DELTA = 1e-5
GRID = [(z, T, q) for z in (0.7, 1.0, 2.0, 5.0) for T in (1, 50, 1000) for q in (1.0, 0.1, 0.01)]


def dp_rdp_epsilon(z, T, q, delta=DELTA):
    event = dpa.GaussianDpEvent(z) if q == 1 else dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(z))
    accountant = dp_rdp.RdpAccountant()
    accountant.compose(event, T)
    return accountant.get_epsilon(delta)


def dp_pld_lower(z, T, q, delta=DELTA):
    """dp-accounting's optimistic PLD: a lower bound on the true ε (see module docstring)."""
    pld = dp_pld.from_gaussian_mechanism(
        z, sampling_prob=q, value_discretization_interval=2e-3, pessimistic_estimate=False, use_connect_dots=False
    )
    return pld.self_compose(T).get_epsilon_for_delta(delta)


# ------------------------------------------------------------------ grid vs dp-accounting

@pytest.mark.parametrize("z,T,q", GRID)
def test_never_above_dp_accounting_rdp_by_more_than_two_percent(z, T, q):
    theirs = dp_rdp_epsilon(z, T, q)
    ours = acc.gaussian_epsilon(z, T, DELTA, q)
    assert ours <= 1.02 * theirs + 1e-9, (ours, theirs)
    ours_rdp = acc.rdp_gaussian_epsilon(z, T, DELTA, q)
    assert ours_rdp <= 1.02 * theirs + 1e-9, (ours_rdp, theirs)
    assert ours <= ours_rdp + 1e-9  # the unified accountant takes the smaller bound


@pytest.mark.parametrize("z,T", [(z, T) for z in (0.3, 0.7, 1.0, 2.0, 5.0, 30.0) for T in (1, 50, 1000, 10**5)])
def test_full_batch_is_the_exact_gaussian_composition(z, T):
    truth = dp_gauss.get_epsilon_gaussian(z / math.sqrt(T), DELTA)  # analytic Gaussian, Balle & Wang
    ours = acc.gaussian_epsilon(z, T, DELTA)
    assert ours >= truth - 1e-9  # never below the truth …
    assert ours == pytest.approx(truth, rel=1e-6, abs=1e-9)  # … and equal to it


@pytest.mark.parametrize("z,T,q", [(0.7, 50, 0.1), (1.0, 1000, 0.01), (2.0, 50, 0.1), (5.0, 1, 0.01), (1.0, 1, 0.1)])
def test_subsampled_never_below_pld_lower_bound(z, T, q):
    lower = dp_pld_lower(z, T, q)
    ours = acc.gaussian_epsilon(z, T, DELTA, q)
    assert ours >= lower
    assert ours <= 3.0 * lower + 0.05  # RDP is looser than PLD (up to ~2.5x here), not absurdly


def test_sampled_rdp_matches_dp_accounting_at_integer_orders_and_bounds_it_at_fractional():
    orders = np.array([2, 3, 5, 8, 13, 32, 64, 256], dtype=float)
    for z, q in [(0.8, 0.1), (1.5, 0.01), (4.0, 0.3)]:
        ours = acc.sampled_gaussian_rdp(z, q, orders)
        theirs = dp_rdp._compute_rdp_poisson_subsampled_gaussian(q, z, orders)
        np.testing.assert_allclose(ours, theirs, rtol=1e-9)
    # fractional orders: against an independent adaptive quadrature of A_α (scipy.integrate.quad)
    frac = np.array([1.3, 1.75, 2.5, 4.2, 9.9])
    for z, q in [(1.0, 0.05), (2.0, 0.01), (0.6, 0.2)]:
        ours = acc.sampled_gaussian_rdp(z, q, frac)
        ref = []
        for a in frac:
            shift = max(0.0, (a * a - a) / (2 * z * z) + a * math.log(q))  # keeps the integrand finite
            f = lambda x: math.exp(stats.norm.logpdf(x, 0, z) - shift
                                   + a * np.logaddexp(math.log1p(-q), math.log(q) + (2 * x - 1) / (2 * z * z)))
            A, _ = integrate.quad(f, -30 * z, a + 30 * z, epsabs=0, epsrel=1e-13, limit=500, points=[0.0, a])
            ref.append((math.log(A) + shift) / (a - 1))
        assert np.all(ours >= np.array(ref) * (1 - 1e-10))  # an upper bound …
        np.testing.assert_allclose(ours, ref, rtol=1e-7)  # … that is essentially exact
        # dp-accounting's series sums |terms| for fractional α: it over-estimates, never under
        theirs = dp_rdp._compute_rdp_poisson_subsampled_gaussian(q, z, frac)
        assert np.all(ours <= theirs * (1 + 1e-7))


def test_fractional_quadrature_agrees_with_exact_integer_sum():
    for z, q in [(0.4, 0.5), (1.0, 0.01), (7.0, 0.001)]:
        a = np.array([2.0, 3.0, 10.0])
        quad = _rdp._log_a_fractional(q, z, a)
        exact = _rdp._log_a_integer(q, z, (2, 3, 10))
        assert np.all(quad >= exact)
        np.testing.assert_allclose(quad, exact, rtol=1e-6)


def test_rdp_to_epsilon_is_dp_accountings_conversion():
    orders = np.array([1.5, 2, 4, 8, 16, 64])
    rdp = orders * 0.01 + 0.002
    ours = acc.rdp_to_epsilon(orders, rdp, 1e-6)
    theirs, _ = dp_rdp.compute_epsilon(orders, rdp, 1e-6)
    assert ours == pytest.approx(theirs, rel=1e-12)
    classic = np.min(rdp + np.log(1e6) / (orders - 1))
    assert ours < classic


# ------------------------------------------------------------------ closed forms

def test_single_gaussian_and_classic_calibration():
    s = acc.classic_gaussian_sigma(2.0, 0.5, 1e-5)
    assert s == pytest.approx(2.0 * math.sqrt(2 * math.log(1.25e5)) / 0.5)
    # the classic mechanism is valid (ε < 1) but loose: the exact ε of that noise is smaller
    exact = acc.gaussian_epsilon(s / 2.0, 1, 1e-5)
    assert exact < 0.5
    assert exact == pytest.approx(dp_gauss.get_epsilon_gaussian(s / 2.0, 1e-5), rel=1e-6)


def test_gaussian_rdp_closed_form_and_q1_sampled():
    a = np.array([1.5, 2.0, 10.0])
    np.testing.assert_allclose(acc.gaussian_rdp(2.0, a), a / 8)
    np.testing.assert_allclose(acc.sampled_gaussian_rdp(2.0, 1.0, a), a / 8)
    assert np.all(acc.sampled_gaussian_rdp(2.0, 0.5, a) < a / 8)


def test_gdp_epsilon_and_delta_are_inverse():
    for mu in (0.1, 1.0, 3.0):
        e = acc.gdp_epsilon(mu, 1e-6)
        assert acc.gaussian_delta(e, mu) <= 1e-6
        assert acc.gaussian_delta(e * 0.999, mu) > 1e-6


def test_laplace_rdp_bound():
    a = np.array([1.1, 2.0, 5.0, 50.0, 1000.0])
    for e0 in (0.05, 0.5, 2.0):
        r = acc.laplace_rdp(e0, a)
        assert np.all(r <= e0 + 1e-12) and np.all(r <= a * e0**2 / 2 + 1e-12)
        # randomized response dominates the 1-D Laplace mechanism with the same ε₀
        lap = np.array([dp_rdp._laplace_rdp(e0, x) for x in a])
        assert np.all(r >= lap - 1e-12)
        assert 0.98 * e0 < r[-1] <= e0  # → ε₀ as α → ∞
    # subsampling amplifies
    assert np.all(acc.laplace_rdp(1.0, a, sampling_rate=0.1) < acc.laplace_rdp(1.0, a))


def test_basic_and_advanced_composition():
    assert acc.basic_composition(0.1, 1e-6, 10) == pytest.approx((1.0, 1e-5))
    e, d = acc.advanced_composition(0.1, 1e-6, 100, 1e-5)
    assert e == pytest.approx(0.1 * math.sqrt(200 * math.log(1e5)) + 100 * 0.1 * math.expm1(0.1))
    assert d == pytest.approx(100 * 1e-6 + 1e-5)
    # advanced beats basic for many small steps, loses for few large ones
    assert acc.advanced_composition(0.01, 0, 10_000, 1e-6)[0] < 0.01 * 10_000
    assert acc.advanced_composition(1.0, 0, 2, 1e-6)[0] > 2.0


# ------------------------------------------------------------------ calibration

@pytest.mark.parametrize("eps,delta,T,q", [
    (1.0, 1e-5, 100, 1.0), (0.1, 1e-6, 1, 1.0), (8.0, 1e-5, 10_000, 1.0),
    (1.0, 1e-5, 1000, 0.01), (0.5, 1e-6, 200, 0.1), (3.0, 1e-5, 5000, 0.004), (0.05, 1e-5, 100, 0.01),
])
def test_calibration_round_trip_and_minimality(eps, delta, T, q):
    z = acc.calibrate_noise(eps, delta, T, q)
    assert acc.gaussian_epsilon(z, T, delta, q) <= eps
    # smallest: 0.01 % less is not enough for q = 1 (closed form); 0.05 % less for q < 1 (a search to 1e-4 in ε)
    assert acc.gaussian_epsilon(z * (1 - (1e-4 if q == 1.0 else 5e-4)), T, delta, q) > eps
    if q == 1.0:
        assert z == pytest.approx(math.sqrt(T) * dp_gauss.get_sigma_gaussian(eps, delta), rel=1e-6)


def test_calibration_infinite_epsilon_is_no_noise():
    assert acc.calibrate_noise(math.inf, 1e-5, 10) == 0.0
    assert acc.gaussian_epsilon(math.inf, 10, 1e-5) == 0.0


# ------------------------------------------------------------------ monotonicity

def test_monotone_in_every_argument():
    zs = [0.5, 0.8, 1.2, 2.0, 4.0, 10.0]
    for q in (1.0, 0.05):
        e = [acc.gaussian_epsilon(z, 100, 1e-5, q) for z in zs]
        assert all(a > b for a, b in zip(e, e[1:])), e
    Ts = [1, 2, 10, 100, 1000]
    for q in (1.0, 0.05):
        e = [acc.gaussian_epsilon(1.0, T, 1e-5, q) for T in Ts]
        assert all(a < b for a, b in zip(e, e[1:])), e
    ds = [1e-8, 1e-6, 1e-4, 1e-2]
    e = [acc.gaussian_epsilon(1.0, 100, d, 0.05) for d in ds]
    assert all(a > b for a, b in zip(e, e[1:])), e
    qs = [0.001, 0.01, 0.1, 0.5, 1.0]
    e = [acc.gaussian_epsilon(1.0, 100, 1e-5, q) for q in qs]
    assert all(a < b for a, b in zip(e, e[1:])), e
    # calibration: more noise for more steps, smaller ε, smaller δ, larger q
    c = [acc.calibrate_noise(1.0, 1e-5, T, 0.05) for T in (10, 100, 1000)]
    assert c[0] < c[1] < c[2]
    c = [acc.calibrate_noise(eps, 1e-5, 100, 0.05) for eps in (0.2, 1.0, 5.0)]
    assert c[0] > c[1] > c[2]
    c = [acc.calibrate_noise(1.0, d, 100, 0.05) for d in (1e-8, 1e-5, 1e-3)]
    assert c[0] > c[1] > c[2]
    c = [acc.calibrate_noise(1.0, 1e-5, 100, q) for q in (0.01, 0.1, 1.0)]
    assert c[0] < c[1] < c[2]


# ------------------------------------------------------------------ errors and extremes

@pytest.mark.parametrize("call,name", [
    (lambda: acc.gaussian_epsilon(0.0, 10, 1e-5), "noise_multiplier"),
    (lambda: acc.gaussian_epsilon(-1.0, 10, 1e-5), "noise_multiplier"),
    (lambda: acc.gaussian_epsilon(1.0, 0, 1e-5), "steps"),
    (lambda: acc.gaussian_epsilon(1.0, 2.5, 1e-5), "steps"),
    (lambda: acc.gaussian_epsilon(1.0, 10, 0.0), "delta"),
    (lambda: acc.gaussian_epsilon(1.0, 10, 1.0), "delta"),
    (lambda: acc.gaussian_epsilon(1.0, 10, 1e-5, 0.0), "sampling_rate"),
    (lambda: acc.gaussian_epsilon(1.0, 10, 1e-5, 1.5), "sampling_rate"),
    (lambda: acc.calibrate_noise(0.0, 1e-5, 10), "epsilon"),
    (lambda: acc.calibrate_noise(-1.0, 1e-5, 10), "epsilon"),
    (lambda: acc.calibrate_noise(1.0, 2.0, 10), "delta"),
    (lambda: acc.calibrate_noise(1.0, 1e-5, 0), "steps"),
    (lambda: acc.calibrate_noise(1.0, 1e-5, 10, -0.1), "sampling_rate"),
    (lambda: acc.classic_gaussian_sigma(1.0, 0.0, 1e-5), "epsilon"),
    (lambda: acc.classic_gaussian_sigma(0.0, 1.0, 1e-5), "sensitivity"),
    (lambda: acc.advanced_composition(0.1, 1e-6, 0, 1e-5), "k"),
    (lambda: acc.ledger_epsilon([PrivacyEvent("gaussian", 1.0, 1.0)], 0.0), "delta"),
    (lambda: acc.ledger_epsilon(["not an event"], 1e-5), "events"),
    (lambda: acc.rdp_to_epsilon([0.5, 2.0], [0.1, 0.2], 1e-5), "orders"),
])
def test_bad_input_raises_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("eps,delta,T,q", [
    (0.01, 1e-5, 1, 1.0), (0.01, 1e-10, 10**6, 1.0), (0.01, 1e-6, 1000, 1e-4), (50.0, 0.5, 1, 1e-6), (0.01, 1e-5, 1, 0.9999),
])
def test_extreme_values_do_not_crash_hang_or_nan(eps, delta, T, q):
    start = time.perf_counter()
    z = acc.calibrate_noise(eps, delta, T, q)
    e = acc.gaussian_epsilon(z, T, delta, q)
    assert math.isfinite(z) and z > 0 and math.isfinite(e) and e <= eps
    assert math.isfinite(acc.gaussian_epsilon(1e-3, T, delta, q))
    assert time.perf_counter() - start < 2.0


# ------------------------------------------------------------------ ledger

def test_ledger_of_time_varying_gaussians_is_the_manual_composition():
    sigmas = np.linspace(0.5, 3.0, 40)
    events = [PrivacyEvent("gaussian", 0.2, 0.2 * s, note=f"step {k}") for k, s in enumerate(sigmas)]
    mu = math.sqrt(np.sum(1 / sigmas**2))
    truth = dp_gauss.get_epsilon_gaussian(1 / mu, 1e-6)
    g = acc.ledger_guarantee(events, 1e-6)
    assert isinstance(g, PrivacyGuarantee) and g.source == f"unified accountant: {acc.GDP}" and g.delta == 1e-6
    assert g.epsilon >= truth - 1e-9 and g.epsilon == pytest.approx(truth, rel=1e-6)
    assert "μ-GDP" in g.statement


def test_ledger_counts_equal_repeated_events_and_match_gaussian_epsilon():
    one = [PrivacyEvent("gaussian", 1.0, 1.3, count=200, sampling_rate=0.02)]
    many = [PrivacyEvent("gaussian", 1.0, 1.3, sampling_rate=0.02)] * 200
    e1, e2 = acc.ledger_epsilon(one, 1e-5), acc.ledger_epsilon(many, 1e-5)
    assert e1 == pytest.approx(e2, rel=1e-12)
    assert e1 == pytest.approx(acc.gaussian_epsilon(1.3, 200, 1e-5, 0.02), rel=1e-9)
    # sensitivity only enters through σ/Δ
    scaled = [PrivacyEvent("gaussian", 5.0, 6.5, count=200, sampling_rate=0.02)]
    assert acc.ledger_epsilon(scaled, 1e-5) == pytest.approx(e1, rel=1e-12)


def test_mixed_ledger_composes_rdp_and_is_between_its_parts():
    events = [
        PrivacyEvent("gaussian", 1.0, 4.0, count=50),
        PrivacyEvent("gaussian", 1.0, 1.0, count=300, sampling_rate=0.01),
        PrivacyEvent("laplace_l2", 0.5, 0.1, count=20),  # pure ε₀ = 0.05 each
    ]
    a = acc.ORDERS
    manual = 50 * acc.gaussian_rdp(4.0, a) + 300 * acc.sampled_gaussian_rdp(1.0, 0.01, a) + 20 * acc.laplace_rdp(0.05, a)
    np.testing.assert_allclose(acc.ledger_rdp(events), manual, rtol=1e-12)
    total = acc.ledger_epsilon(events, 1e-5)
    assert total <= acc.rdp_to_epsilon(a, manual, 1e-5) + 1e-12
    parts = [acc.ledger_epsilon([e], 1e-5) for e in events]
    assert max(parts) < total < sum(parts)
    # and against dp-accounting's RDP accountant on the Gaussian part
    accountant = dp_rdp.RdpAccountant()
    accountant.compose(dpa.GaussianDpEvent(4.0), 50)
    accountant.compose(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0)), 300)
    gauss_only = acc.ledger_epsilon(events[:2], 1e-5)
    assert gauss_only <= 1.02 * accountant.get_epsilon(1e-5)


def test_laplace_ledger_uses_pure_composition_when_it_is_smaller():
    few_big = [PrivacyEvent("laplace_l2", 1.0, 2.0, count=2)]  # ε₀ = 2: pure sum 4 beats RDP, PLD a hair better
    assert acc.ledger_epsilon(few_big, 1e-5) == pytest.approx(4.0, rel=1e-4)
    assert acc.ledger_epsilon(few_big, 1e-5) <= 4.0
    many_small = [PrivacyEvent("laplace_l2", 1.0, 0.01, count=1000)]  # RDP beats the sum of 10
    assert acc.ledger_epsilon(many_small, 1e-5) < 10.0 / 2


def test_empty_ledger_guarantees_nothing():
    assert acc.ledger_epsilon([], 1e-5) == math.inf
    assert math.isinf(acc.ledger_guarantee([], 1e-5).epsilon)


# ------------------------------------------------------------------ the papers' own statements

def test_xu2020_theorem1():
    eps, delta, T, n, c, mu = 0.5, 1e-3, 200, 5000, 1.0, 0.5
    sigma = acc.xu2020_sigma(eps, delta, iterations=T, n=n, lipschitz=c, mu=mu)
    alpha = math.log(1 / delta) / ((1 - mu) * eps) + 1
    assert sigma**2 == pytest.approx(c**2 * alpha * T / (2 * n**2 * eps * mu))
    # its own proof: RDP β = αTΔ²/(2σ²) = με, classic conversion gives ε exactly
    beta = alpha * T * (c / n) ** 2 / (2 * sigma**2)
    assert beta == pytest.approx(mu * eps)
    assert beta + math.log(1 / delta) / (alpha - 1) == pytest.approx(eps)
    # sound, and the unified accountant is tighter for the same noise
    unified = acc.gaussian_epsilon(sigma / (c / n), T, delta)
    assert unified < eps
    assert acc.xu2020_epsilon(sigma, delta, iterations=T, n=n, lipschitz=c) <= eps + 1e-12


def test_huang2019_eq14_and_total():
    s = acc.huang2019_sigma(0.1, 1e-3, lipschitz=1.0, local_size=400, rho=0.1, eta=0.5)
    assert s == pytest.approx(acc.classic_gaussian_sigma(2 / (400 * (0.1 + 2.0)), 0.1, 1e-3))
    arr = acc.huang2019_sigma(0.1, 1e-3, lipschitz=1.0, local_size=np.array([300, 400, 500]),
                              rho=0.1, eta=np.linspace(0.1, 1, 20)[:, None])
    assert arr.shape == (20, 3) and np.all(np.diff(arr, axis=1) < 0)
    # moments accountant: brute force over integer λ
    eps, delta, t = 0.1, 1e-4, 100
    z = math.sqrt(2 * math.log(1.25 / delta)) / eps
    lam = np.arange(1, 20_000)
    brute = np.min((t * lam * (lam + 1) / (2 * z * z) + math.log(1 / delta)) / lam)
    total = acc.huang2019_total_epsilon(eps, delta, t)
    assert total == pytest.approx(brute, rel=1e-12)
    assert total >= acc.gaussian_epsilon(z, t, delta)  # the exact composition is tighter
    assert acc.huang2019_c0(0.01, delta, 100) == pytest.approx(
        math.sqrt(math.log(1 / delta) / math.log(1.25 / delta)), rel=0.02)


def test_cyffers2023_theorems():
    K, L, g, s, n = 100, 1.0, 0.5, 2.0, 1000
    r = acc.cyffers2023_centralized_rdp(np.array([2.0, 10.0]), iterations=K, lipschitz=L, gamma=g, sigma=s, n=n)
    np.testing.assert_allclose(r, 8 * np.array([2.0, 10.0]) * K * L**2 * g**2 / (s**2 * n**2))
    # it is the RDP of K Gaussians with Δ/σ = 4Lγ/(nσ), converted as the paper does (ε + ln(1/δ)/(α − 1),
    # closed form for a linear curve): ≥ the exact value
    z = s * n / (4 * L * g)
    e = acc.cyffers2023_centralized_epsilon(1e-6, iterations=K, lipschitz=L, gamma=g, sigma=s, n=n)
    slope = 8 * K * L**2 * g**2 / (s**2 * n**2)
    assert e == pytest.approx(slope + 2 * math.sqrt(slope * math.log(1e6)))
    assert acc.gaussian_epsilon(z, K, 1e-6) <= e
    loc = acc.cyffers2023_federated_local_rdp(3.0, participations=10, lipschitz=L, gamma=g, sigma=s)
    assert loc == pytest.approx(8 * 3 * 10 * L**2 * g**2 / s**2)
    fed = acc.cyffers2023_federated_central_epsilon(1e-6, iterations=K, lipschitz=L, gamma=g, sigma=5.0, n=n, m=100,
                                                    method="numerical")
    assert fed == pytest.approx(acc.gaussian_epsilon(100 * 5.0 / (4 * L * g), K, 1e-6, 0.1))
    closed = acc.cyffers2023_federated_central_rdp(np.array([2.0, 1e6]), iterations=K, lipschitz=L, gamma=g, sigma=5.0, n=n, m=100)
    assert math.isfinite(closed[0]) and math.isinf(closed[1])  # the theorem's α-range
    net = acc.cyffers2023_network_rdp(np.array([2.0, 50.0]), participations=5, lipschitz=L, gamma=g, sigma=10.0, n=100)
    assert net[0] == pytest.approx(8 * 2 * 5 * L**2 * g**2 * math.log(100) / (100 * 100))
    assert math.isinf(net[1])  # σ > 2Lγ√(α(α−1)) fails at α = 50
    assert math.isfinite(acc.cyffers2023_network_epsilon(1e-6, participations=5, lipschitz=L, gamma=g, sigma=10.0, n=100))


def test_liu2022_theorems():
    eps, delta, T, n, l, b, theta = 0.5, 5e-4, 2000, 50_000, 1.0, 20, 0.5
    s = acc.liu2022_sadmm_sigma(eps, delta, iterations=T, n=n, lipschitz=l, theta=theta)
    alpha = math.log(1 / delta) / ((1 - theta) * eps) + 1
    # Lemma 2 with ς = b/n and Δ = 2l/b, composed T times, equals θε
    assert T * 5 * (b / n) ** 2 * alpha * (2 * l / b) ** 2 / s**2 == pytest.approx(theta * eps)
    assert isinstance(acc.liu2022_sadmm_conditions(eps, delta, iterations=T, n=n, batch_size=b), bool)
    assert not acc.liu2022_sadmm_conditions(eps, delta, iterations=1, n=n, batch_size=1)  # σ²/Δ² < 1.5
    v = acc.liu2022_vradmm_sigma(eps, delta, lipschitz=l, n=n, epochs=10, inner=2 * n // b, c2=80.0)
    assert v**2 == pytest.approx(80 * l**2 * 10 * (2 * n // b) * math.log(1 / delta) / (n**2 * eps**2))


def test_zhang2017_dvp_and_pvp():
    B, lam, rho, Np, CR = 400, 1e-2, 0.5, 3, 1.0
    zeta = acc.zhang2017_pvp_zeta(0.2, local_size=B, lam=lam, loss_weight=CR)
    assert zeta == pytest.approx(lam * B * 0.2 / (2 * CR))
    assert zeta * acc.zhang2017_pvp_sensitivity(local_size=B, lam=lam) == pytest.approx(0.2)  # pure α per release
    # DVP, α̂ > 0 branch: Φ = 0, ζ = α̂/2
    z, phi = acc.zhang2017_dvp_zeta(1.0, local_size=B, lam=lam, rho=rho, n_neighbors=Np)
    a_hat = 1.0 - 2 * math.log1p(0.25 / ((B / CR) * (lam + 2 * rho * Np)))
    assert phi == 0.0 and z == pytest.approx(a_hat / 2)
    # α̂ ≤ 0 branch (tiny α, tiny data): extra penalty Φ > 0 and ζ = α/4
    z, phi = acc.zhang2017_dvp_zeta(1e-4, local_size=1, lam=lam, rho=1e-3, n_neighbors=1)
    assert phi == pytest.approx(0.25 / (1 * math.expm1(1e-4 / 4)) - lam - 2e-3) and z == pytest.approx(1e-4 / 4)
    zs, phis = acc.zhang2017_dvp_zeta(np.full((5, 3), 0.5), local_size=np.array([100, 200, 400]), lam=lam, rho=rho,
                                      n_neighbors=np.array([1, 2, 3]))
    assert zs.shape == phis.shape == (5, 3)
    assert acc.zhang2017_total_epsilon(np.full((10, 4), 0.1)) == pytest.approx(1.0)


# ------------------------------------------------------------------ chapter helpers

def test_composition_epsilons_orders_the_analyses():
    many = acc.composition_epsilons(5.0, 100, 1e-5)
    assert many["unified"] == pytest.approx(acc.gaussian_epsilon(5.0, 100, 1e-5))
    assert many["unified"] < many["basic"] < many["advanced"]  # large per-step ε₀: advanced loses
    small_steps = acc.composition_epsilons(200.0, 10_000, 1e-5)
    assert small_steps["unified"] < small_steps["advanced"] < small_steps["basic"]  # tiny ε₀: advanced wins
    one = acc.composition_epsilons(2.0, 1, 1e-5)
    assert one["basic"] == pytest.approx(one["unified"])
    sub = acc.composition_epsilons(1.0, 100, 1e-5, 0.01)
    assert sub["unified"] == pytest.approx(acc.gaussian_epsilon(1.0, 100, 1e-5, 0.01))


def test_noise_for_budget_meets_the_budget_under_each_analysis():
    eps, delta, T = 1.0, 1e-5, 50
    need = acc.noise_for_budget(eps, delta, T)
    assert need["unified"] < need["exact + advanced"] < need["exact + basic"] < need["classic + basic"]
    assert acc.gaussian_epsilon(need["unified"], T, delta) <= eps
    assert T * acc.gaussian_epsilon(need["exact + basic"], 1, delta / T) <= eps * (1 + 1e-9)
    assert acc.composition_epsilons(need["exact + advanced"], T, delta)["advanced"] <= eps * (1 + 1e-9)
    assert need["classic + basic"] == pytest.approx(acc.classic_gaussian_sigma(1.0, eps / T, delta / T))


def test_privacy_exercise_checks():
    from dpadmm_book.exercises import privacy as ex

    assert ex.check_classic_sigma(0.1 * math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5)
    assert not ex.check_classic_sigma(0.5)
    assert not ex.check_classic_sigma(...)
    assert ex.check_mean_sensitivity(2 / 1000) and not ex.check_mean_sensitivity(1 / 1000)
    T = ex.expected_max_steps()
    assert acc.gaussian_epsilon(10.0, T, 1e-5) <= 1.0 < acc.gaussian_epsilon(10.0, T + 1, 1e-5)
    assert ex.check_max_steps(T) and not ex.check_max_steps(T + 1)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 10.0])
def test_calibrate_ledger_spends_the_budget_and_keeps_the_noise_shape(epsilon):
    from dpadmm_lite.privacy import PrivacyEvent

    # a time-varying shape (σ_k ∝ 1/k) with mixed sampling, as a heterogeneous ledger
    unit = [PrivacyEvent("gaussian", 1.0, 1.0 / k, note=f"step {k}") for k in range(1, 21)]
    unit += [PrivacyEvent("gaussian", 1.0, 0.5, count=30, sampling_rate=0.1)]
    s = acc.calibrate_ledger(unit, epsilon, 1e-5)
    scaled = [e.scaled(s) for e in unit]
    spent = acc.ledger_epsilon(scaled, 1e-5)
    assert 0.97 * epsilon <= spent <= epsilon
    ratios = [e.noise / u.noise for e, u in zip(scaled, unit)]
    assert np.allclose(ratios, s)  # one factor for every release: the shape is kept


def test_the_ledgers_memo_gives_what_a_fresh_computation_gives():
    """Ledgers and calibrations are memoised (a live panel asks for the same budget again): a memoised
    answer is the fresh one, and each argument is part of the key."""
    from dpadmm_lite.accounting import _ledger
    from dpadmm_lite.privacy import PrivacyEvent

    unit = [PrivacyEvent("laplace_l2", 1.0, 1.0, count=7), PrivacyEvent("gaussian", 1.0, 2.0, count=5, sampling_rate=0.2)]
    for epsilon, delta in ((1.0, 1e-6), (2.0, 1e-6), (1.0, 1e-3)):
        s = acc.calibrate_ledger(unit, epsilon, delta)
        assert s == acc.calibrate_ledger(list(unit), epsilon, delta)  # from the memo
        assert s == _ledger._calibrated.__wrapped__(tuple(unit), epsilon, delta, 5e-3)  # computed afresh
        scaled = [e.scaled(s) for e in unit]
        assert acc.ledger_epsilon(scaled, delta) == _ledger._ledger_of.__wrapped__(tuple(scaled), delta)[0]
    assert len({acc.calibrate_ledger(unit, e, d) for e, d in ((1.0, 1e-6), (2.0, 1e-6), (1.0, 1e-3))}) == 3


def test_calibrate_ledger_scales_laplace_rates_down():
    from dpadmm_lite.privacy import PrivacyEvent

    unit = [PrivacyEvent("laplace_l2", 1.0, 1.0, count=10)]  # pure 10-DP at unit scale
    s = acc.calibrate_ledger(unit, 1.0, 1e-6)
    assert unit[0].scaled(s).noise == pytest.approx(1.0 / s)
    assert 0.97 <= acc.ledger_epsilon([unit[0].scaled(s)], 1e-6) <= 1.0
    with pytest.raises(ValueError, match="epsilon"):
        acc.calibrate_ledger(unit, 0.0, 1e-6)
    with pytest.raises(ValueError, match="delta"):
        acc.calibrate_ledger(unit, 1.0, 1.5)
