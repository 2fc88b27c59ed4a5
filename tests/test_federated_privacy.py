"""Federated, walk and centralized private ADMM and proximal DP-SGD are sound for every n ≥ 1 and q.

``dpadmm_lite/algorithms/cyffers2023.py`` (Cyffers et al. 2023). Issue 24, item 2: federated private
ADMM used to record each round as a Poisson-subsampled Gaussian whose noise is always there, but a
user's noise is only there when it takes part; with one to three users the amplification was not
there (one round at the σ of "ε = 1", q = 0.1: exactly 2.90 for n = 1).

What is tested:

* **an exact computation, independent of the library's accountant**: the one-round ε of the
  released aggregate ``Σ_{i∈S} Δu_i`` for n = 1, 2, 3 users and q ∈ {0.1, 0.5, 1}, on a problem
  built so that the aggregate is exactly the mixture written here (p = 1, the canary's clipped
  correction ±2θC, the other users' corrections 0 in round 1): the privacy loss of the mixture
  over who takes part, integrated numerically with scipy on a fine grid. The reported ε must be at
  least that, and at most 3.5 times it — the gap is what one round of sampling and the others'
  noise give, which the ledger does not count; where the ledger's model is the truth (n = 1,
  q = 1) they agree to 10⁻³. The same for DP-SGD (the server's noise, always there: the
  subsampled Gaussian) and centralized ADMM (every user's noise, every round);
* DP-SGD draws its noise every round even when nobody takes part;
* **the audit** (:func:`dpadmm_lite.audit.audit_algorithm`, a canary record) at n = 1 no longer
  finds an ε above the reported one, and finds the old calibration's noise too small.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

import dpadmm_lite as dl
from dpadmm_lite import audit, problems
from dpadmm_lite.algorithms import cyffers2023 as fp

DELTA = 1e-5
THETA, C, GAMMA = 0.5, 0.1, 40.0
ADMM = dict(gamma=GAMMA, relaxation=THETA, clip=C)


# ====================================================================== the exact reference (scipy only)
def _hockey_stick_epsilon(P, Q, x, delta):
    """The smallest ε ≥ 0 with ``∫ (P − e^ε Q)₊ ≤ δ`` for densities P, Q on the grid x (brentq)."""
    excess = lambda eps: integrate.trapezoid(np.maximum(P - math.exp(eps) * Q, 0.0), x=x) - delta  # noqa: E731
    return 0.0 if excess(0.0) <= 0 else optimize.brentq(excess, 0.0, 60.0, xtol=1e-6)


def exact_federated_one_round(n, q, noise, shift, delta):
    """ε of one round of federated ADMM's aggregate, 1-D: every user joins with probability q; the
    canary adds ``±shift + N(0, noise²)`` (D / D′) when it joins, each of the m ~ Binomial(n − 1, q)
    others ``0 + N(0, noise²)``. When nobody joins the aggregate is exactly 0 in both worlds (an atom
    of equal mass, which adds nothing to δ for ε ≥ 0), so only the densities are integrated."""
    width = shift + 14 * noise * math.sqrt(n)
    x = np.linspace(-width, width, 60_001)
    P, Q = np.zeros_like(x), np.zeros_like(x)
    for m in range(n):  # m other users take part
        w = stats.binom.pmf(m, n - 1, q)
        if m:
            absent = (1 - q) * stats.norm.pdf(x, 0.0, noise * math.sqrt(m))
            P, Q = P + w * absent, Q + w * absent
        P += w * q * stats.norm.pdf(x, shift, noise * math.sqrt(m + 1))
        Q += w * q * stats.norm.pdf(x, -shift, noise * math.sqrt(m + 1))
    return _hockey_stick_epsilon(P, Q, x, delta)


def exact_server_noise_one_round(q, noise, shift, delta):
    """ε of one round of DP-SGD's noisy sum, 1-D: the server always adds N(0, noise²); the canary's
    clipped gradient ``±shift`` is in the sum with probability q (the others' gradients are 0)."""
    width = shift + 14 * noise
    x = np.linspace(-width, width, 60_001)
    P = (1 - q) * stats.norm.pdf(x, 0.0, noise) + q * stats.norm.pdf(x, shift, noise)
    Q = (1 - q) * stats.norm.pdf(x, 0.0, noise) + q * stats.norm.pdf(x, -shift, noise)
    return _hockey_stick_epsilon(P, Q, x, delta)


def gaussian_epsilon(mu, delta):
    """ε of the Gaussian mechanism with Δ/σ = μ (Balle & Wang 2018), written out with scipy."""
    def excess(eps):
        return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2) - delta

    return optimize.brentq(excess, 0.0, 60.0, xtol=1e-9)


def test_the_reference_is_the_gaussian_mechanism_where_it_must_be():
    for mu in (0.3, 1.0, 2.5):
        gaussian = gaussian_epsilon(mu, DELTA)
        assert exact_federated_one_round(1, 1.0, 1.0, mu / 2, DELTA) == pytest.approx(gaussian, rel=1e-3)
        assert exact_server_noise_one_round(1.0, 1.0, mu / 2, DELTA) == pytest.approx(gaussian, rel=1e-3)
    # n = 1, q < 1: nothing or the canary's Gaussian, so exactly the Gaussian at δ/q
    assert exact_federated_one_round(1, 0.1, 1.0, 0.5, DELTA) == pytest.approx(gaussian_epsilon(1.0, DELTA / 0.1),
                                                                               rel=1e-3)


# ====================================================================== a problem whose round 1 is that mixture
def canary_problem(n, label, regularizer="l1"):
    """p = 1: user 0 holds (1, label) — its clipped correction is ±C for label ±1 — and every other user
    (1, 0), whose correction in round 1 (u = 0, z = 0) is exactly 0. The Lasso, or ridge (``"l2"``: z is
    linear in ū, so the audit can read the release as an affine function of the noise)."""
    X = np.ones((n, 1))
    y = np.zeros(n)
    y[0] = label
    return problems.Problem(X, y, 1e-3, "squared", regularizer)


def test_round_one_of_the_canary_problem_is_the_reference_mixture():
    for n in (1, 3):
        for label, sign in ((1.0, 1.0), (-1.0, -1.0)):
            records = fp._records(canary_problem(n, label), "test")
            s = fp._Settings(np.array([GAMMA]), np.array([THETA]), np.array([C]), np.zeros(1))
            dU, _ = fp._admm_block_update(records, np.zeros((n, 1)), np.zeros((n, 1)), np.arange(n),
                                          np.zeros(n, int), s, None)
            expected = np.zeros((n, 1))
            expected[0] = sign * 2 * THETA * C
            np.testing.assert_allclose(dU, expected, atol=1e-15)


# ====================================================================== reported ε against the exact one
@pytest.mark.parametrize("q", [0.1, 0.5, 1.0])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_federated_reports_at_least_the_exact_epsilon_for_small_cohorts(n, q):
    trace = dl.run("private_admm_federated", canary_problem(n, 1.0), epsilon=1.0, delta=DELTA, iterations=1,
                   sampling_rate=q, seed=0, **ADMM)
    reported = trace.privacy.epsilon
    (event,) = trace.ledger
    assert event.noise == pytest.approx(THETA * trace.noise["sigma"])
    assert event.sensitivity == pytest.approx(4 * THETA * C) and event.sampling_rate == 1.0
    exact = exact_federated_one_round(n, q, THETA * trace.noise["sigma"], 2 * THETA * C, DELTA)
    assert exact <= reported * (1 + 1e-6) and reported <= 3.5 * exact, (n, q, reported, exact)
    if n == 1 and q == 1.0:  # the ledger's model is the truth: one Gaussian release
        assert reported == pytest.approx(exact, rel=1e-3)


@pytest.mark.parametrize("q", [0.1, 0.5, 1.0])
def test_dp_prox_sgd_reports_at_least_the_exact_epsilon_for_small_cohorts(q):
    """The server's noise hides whether the canary took part, whoever else does: the subsampled Gaussian."""
    for n in (1, 2, 3):
        trace = dl.run("dp_prox_sgd", canary_problem(n, 1.0), epsilon=1.0, delta=DELTA, iterations=1,
                       sampling_rate=q, seed=0, clip=C, step=0.5)
        exact = exact_server_noise_one_round(q, trace.noise["sigma"], C, DELTA)
        reported = trace.privacy.epsilon
        assert exact <= reported * (1 + 1e-6) and reported <= 3.5 * exact, (n, q, reported, exact)
    assert q < 1 or trace.privacy.epsilon == pytest.approx(exact, rel=1e-3)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_centralized_reports_at_least_the_exact_epsilon(n):
    """Every user, every round: the aggregate is ±2θC plus n users' noise, a Gaussian."""
    trace = dl.run("private_admm", canary_problem(n, 1.0), epsilon=1.0, delta=DELTA, iterations=1, **ADMM)
    exact = gaussian_epsilon(4 * THETA * C / (THETA * trace.noise["sigma"] * math.sqrt(n)), DELTA)
    assert exact <= trace.privacy.epsilon * (1 + 1e-6)
    if n == 1:
        assert trace.privacy.epsilon == pytest.approx(exact, rel=1e-3)


def test_dp_prox_sgd_draws_its_noise_every_round_whoever_takes_part():
    problem = canary_problem(1, 1.0)
    with audit.intercept_noise() as draws:
        trace = dl.run("dp_prox_sgd", problem, epsilon=1.0, delta=DELTA, iterations=40, sampling_rate=0.1, seed=2,
                       clip=C, step=0.5)
    assert sum(d.raw.size for d in draws) == 40 * problem.d  # one vector per round, 40 rounds
    assert trace.metrics["clipped_fraction"].size == 40


# ====================================================================== the audit, n = 1
def _takes_part(seed, q):
    """Whether the only user takes part in round 1 of the run with this seed (its sampling stream)."""
    return fp._Schedule(fp._streams([seed])[0][0], q, 1).take(1).size == 1


def test_audit_at_one_user_stays_below_the_reported_epsilon():
    """The canary alone (n = 1), one round at q = 0.1. The ledger holds given the schedule (who takes part
    when, drawn from the seed), and the affine audit keeps the schedule of its seed: at seed 9068 the user
    takes part, and so it does at the seeds the audit uses to check its affine map (10⁶ + 9068 + 0, 1, 2),
    so the audit sees the canary's Gaussian message 200,000 times. The amplified ledger asked for 0.34
    times this noise and reported ε = 1."""
    q, seed = 0.1, 9068
    assert all(_takes_part(s, q) for s in (seed, seed + 10**6, seed + 10**6 + 1, seed + 10**6 + 2))
    D, D_prime = audit.canary_neighbours(canary_problem(1, 0.0, "l2"))
    options = dict(epsilon=1.0, delta=DELTA, runs=200_000, seed=seed, iterations=1, sampling_rate=q, **ADMM)
    result = audit.audit_algorithm("private_admm_federated", D, D_prime, method="affine", **options)
    assert result.epsilon_reported == pytest.approx(1.0, abs=0.03)
    assert result.epsilon_lower <= result.epsilon_reported, str(result)
    assert result.epsilon_lower > 0.3  # the attack sees the canary (0.597 measured at seed 9068): the audit is not blind
    # the noise the amplified ledger asked for (its σ/Δ over ours) is caught
    old = fp._noise_multiplier(1.0, DELTA, 1, q) / fp._noise_multiplier(1.0, DELTA, 1, 1.0)
    weakened = audit.audit_algorithm("private_admm_federated", D, D_prime, method="affine", noise_factor=old,
                                     **options)
    assert weakened.epsilon_lower > weakened.epsilon_reported, str(weakened)
