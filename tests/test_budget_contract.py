"""One meaning of ε everywhere: the budget contract that every private algorithm keeps.

Generic over ``dl.algorithm_names().private`` with the small cases of ``tests/algorithm_cases.py``, so
an algorithm registered later is covered as soon as it has a case:

* ``epsilon``, ``delta`` are the end-to-end budget: under the default calibration the unified
  accountant's ε for the run's ledger is in ``[0.97ε, ε]`` (nothing overspent, nothing wasted);
* the noise comes from public bounds only: halving every feature leaves every noise scale of the
  ledger (and ``trace.noise``) unchanged;
* rows beyond the declared ``feature_bound`` are refused (``ValueError`` naming it) or clipped
  (then the ledger is the one of data within the bound).

Then, for the two papers whose formulas the library keeps under ``calibration="paper"``, the σ of
each paper written out here independently of the library: Xu et al. (2020), Theorem 1, eq. (8),
and Huang et al. (2019), eq. (14) (with the step sizes of Theorem 4, eq. 34, and PVP's and
DP-SGD's σ of the same per-iteration form).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from algorithm_cases import case

import dpadmm_lite as dl
from dpadmm_lite import accounting

PRIVATE = list(dl.algorithm_names().private)
DELTA = 1e-5


def _run(name, scale=1.0, **extra):
    c = case(name)
    options = {"seed": 0, "delta": DELTA, **c.options, **extra}
    return dl.run(name, c.problem(scale), **options)


def _noise_scales(trace) -> dict:
    """Every number that says how much noise was drawn: the ledger, and trace.noise's σ/ζ entries."""
    scales = {f"ledger[{i}]": (e.mechanism, e.sensitivity, e.noise, e.count, e.sampling_rate)
              for i, e in enumerate(trace.ledger)}
    for key, value in trace.noise.items():
        if key in ("sigma", "zeta", "noise_multiplier", "sensitivity", "per_iteration_epsilon"):
            scales[f"noise[{key}]"] = np.asarray(value, float)
    return scales


def _assert_same_noise(trace, other, why):
    a, b = _noise_scales(trace), _noise_scales(other)
    assert a.keys() == b.keys() and any(k.startswith("ledger") for k in a), why
    for key in a:
        if key.startswith("ledger"):
            assert a[key][0] == b[key][0] and a[key][3:] == b[key][3:], f"{why}: {key}"
            np.testing.assert_allclose(a[key][1:3], b[key][1:3], rtol=1e-9, err_msg=f"{why}: {key}")
        else:
            np.testing.assert_allclose(a[key], b[key], rtol=1e-9, err_msg=f"{why}: {key}")


def test_there_are_private_algorithms_to_check():
    assert {"dp_admm", "dp_acc_admm", "dp_admm_star", "pvp_star", "dvp_star", "dp_sgd_star"} <= set(PRIVATE)


# ---------------------------------------------------------------------- ε is the end-to-end budget
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("name", PRIVATE)
def test_default_calibration_spends_the_end_to_end_budget(name, epsilon):
    trace = _run(name, epsilon=epsilon)
    assert trace.ledger, f"{name}: a private run must record its noisy releases"
    spent = trace.privacy.epsilon
    assert spent <= epsilon, f"{name} overspends: asked for ε = {epsilon}, the accountant says {spent}"
    assert spent >= 0.97 * epsilon, f"{name} wastes budget: asked for ε = {epsilon}, spent only {spent}"
    assert spent == pytest.approx(accounting.ledger_epsilon(trace.ledger, DELTA), rel=1e-12)
    assert trace.privacy.delta == DELTA


# ---------------------------------------------------------------------- sensitivity from public bounds only
@pytest.mark.parametrize("name", PRIVATE)
def test_noise_does_not_follow_the_data_scale(name):
    full, half = _run(name, 1.0, epsilon=1.0), _run(name, 0.5, epsilon=1.0)
    _assert_same_noise(full, half, f"{name}: the noise reads the data (features × 0.5 changed it)")


@pytest.mark.parametrize("name", PRIVATE)
def test_rows_beyond_the_declared_bound_are_refused_or_clipped(name):
    wide = case(name).problem(3.0)
    assert wide.max_row_norm > wide.feature_bound  # the data break the public bound
    try:
        trace = _run(name, 3.0, epsilon=1.0)
    except ValueError as error:
        assert "feature_bound" in str(error), f"{name} refused the rows without naming feature_bound: {error}"
        return
    # accepted: the algorithm clips, so its noise is that of data within the bound, and the budget holds
    _assert_same_noise(trace, _run(name, 1.0, epsilon=1.0), f"{name} accepted rows beyond feature_bound, but "
                       "its noise is not that of data within the bound (does it clip?)")
    assert trace.privacy.epsilon <= 1.0


# ---------------------------------------------------------------------- calibration="paper" = each paper's formula
def test_xu_paper_calibration_is_theorem_1_eq_8():
    """σ² = c²αT/(2n²εμ), α = log(1/δ)/((1 − μ)ε) + 1, with c = 1 (rows of norm ≤ 1)."""
    for name in ("dp_admm", "dp_acc_admm"):
        problem = case(name).problem(1.0)
        for eps, delta, T, mu in ((0.1, 1e-3, 20, 0.5), (2.0, 1e-6, 7, 0.3)):
            trace = dl.run(name, problem, epsilon=eps, delta=delta, rho=1.0, iterations=T, seed=0, mu=mu,
                           calibration="paper")
            alpha = math.log(1 / delta) / ((1 - mu) * eps) + 1
            sigma = math.sqrt(1.0**2 * alpha * T / (2 * problem.n**2 * eps * mu))
            assert trace.noise["sigma"] == pytest.approx(sigma, rel=1e-12)
            assert trace.privacy_paper.epsilon == eps  # the paper's claim, next to …
            assert trace.privacy.epsilon == pytest.approx(accounting.ledger_epsilon(trace.ledger, delta))  # … the truth


def test_huang_paper_calibration_is_eq_14_with_the_steps_of_theorem_4():
    """σ_{i,k} = 2c₁√(2 ln(1.25/δ))/(m_i ε (ρ + 1/η_i^k)), η_i^k = (c₃ + λ + 4c₁√(dk ln(1.25/δ))/(m_i ε c_w))⁻¹."""
    problem = case("dp_admm_star").problem(1.0)
    eps, delta, rho, T, N, c_w = 0.3, 1e-4, 0.5, 6, 4, 7.0
    trace = dl.run("dp_admm_star", problem, epsilon=eps, delta=delta, rho=rho, iterations=T, seed=0, n_agents=N,
                   c_w=c_w, calibration="paper")
    m = problem.n / N  # equal deal
    k = np.arange(1, T + 1)[:, None]
    c1, c3, d = 1.0, 0.25, problem.d
    eta = 1 / (c3 + problem.lam + 4 * c1 * np.sqrt(d * k * math.log(1.25 / delta)) / (m * eps * c_w))
    sigma = 2 * c1 * math.sqrt(2 * math.log(1.25 / delta)) / (m * eps * (rho + 1 / eta))
    np.testing.assert_allclose(trace.noise["sigma"], np.tile(sigma, (1, N)), rtol=1e-12)
    # per iteration (ε, δ): end to end the run spends more, and the trace says how much
    assert trace.privacy.epsilon > eps
    assert trace.privacy_paper.epsilon == pytest.approx(accounting.huang2019_total_epsilon(eps, delta, T))


@pytest.mark.parametrize("name, strong", [("pvp_star", "lam + rho"), ("dp_sgd_star", None)])
def test_huang_paper_calibration_of_the_baselines(name, strong):
    """PVP: σ_i = 2c₁√(2 ln(1.25/δ))/((λ + ρ) m_i ε); DP-SGD: σ_i = (2C/m_i)√(2 ln(1.25/δ))/ε, C = 1."""
    problem = case(name).problem(1.0)
    eps, delta, rho, N = 0.4, 1e-4, 0.5, 4
    trace = dl.run(name, problem, epsilon=eps, delta=delta, rho=rho, iterations=3, seed=0, n_agents=N,
                   calibration="paper")
    m = problem.n / N
    factor = math.sqrt(2 * math.log(1.25 / delta)) / eps
    expected = 2 * factor / ((problem.lam + rho) * m) if strong else 2 * factor / m
    np.testing.assert_allclose(trace.noise["sigma"], expected, rtol=1e-12)
