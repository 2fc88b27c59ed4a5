"""An empirical privacy audit of every private algorithm (Jagielski et al. 2020; Nasr et al. 2021).

On a tiny problem with a canary record (``dpadmm_lite.audit.canary_neighbours``), many runs on the two
neighbouring datasets, a threshold test on the released model, Clopper–Pearson bounds on its error
rates: a lower bound on the true ε (``dpadmm_lite.audit``). It must never exceed the ε the library
reports. It has teeth: with every draw deliberately halved (the algorithm still reporting its own ε),
the same audit proves the report wrong for the Gaussian mechanism, DP-ADMM and DP-SGD. Seeded
throughout, so the outcome is fixed; the settings come from ``tests/privacy_harness.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import dpadmm_lite as dl
import privacy_harness as H
from dpadmm_lite import audit

PRIVATE = dl.algorithms().private


def _audit(name, noise_factor=1.0):
    setting = H.entry(name).audit
    assert setting is not None, f"{name}: its entry in {H.HARNESS} has no Audit setting"
    D, D_prime = audit.canary_neighbours(setting.problem())
    return audit.audit_algorithm(name, D, D_prime, epsilon=setting.epsilon, delta=setting.delta, runs=setting.runs,
                                 seed=0, noise_factor=noise_factor, method=setting.method, **setting.options)


def test_the_gaussian_mechanism_passes_its_audit_and_fails_it_with_halved_noise():
    honest = audit.audit_gaussian_mechanism(epsilon=1.0, delta=1e-5, runs=1_000_000, seed=0)
    assert honest.passed, str(honest)
    assert honest.epsilon_lower > 0.6, f"the audit is too weak to mean anything: {honest}"
    halved = audit.audit_gaussian_mechanism(epsilon=1.0, delta=1e-5, runs=1_000_000, seed=0, noise_factor=0.5)
    assert not halved.passed, f"halved noise went unnoticed: {halved}"


@pytest.mark.parametrize("name", PRIVATE)
def test_audited_epsilon_never_exceeds_the_reported_one(name):
    result = _audit(name)
    assert result.passed, str(result)
    assert np.isfinite(result.epsilon_reported) and result.epsilon_reported > 0


TEETH = [name for name in PRIVATE if name in H.ENTRIES and H.ENTRIES[name].audit and H.ENTRIES[name].audit.teeth]


@pytest.mark.parametrize("name", TEETH)
def test_the_audit_proves_halved_noise_wrong(name):
    result = _audit(name, noise_factor=0.5)
    assert not result.passed, f"halved noise went unnoticed: {result}"


def test_the_audit_has_teeth_for_at_least_one_admm_algorithm():
    admm = {name for name in TEETH if "admm" in name}
    assert admm, f"no ADMM algorithm's audit setting in {H.HARNESS} is tight enough to catch halved noise"


def test_clopper_pearson_is_the_exact_binomial_interval():
    from scipy import stats

    lo, hi = audit.clopper_pearson(3, 50, 0.9)
    # the defining property: P(X ≥ 3 | p = lo) = 5 % and P(X ≤ 3 | p = hi) = 5 %
    assert abs(stats.binom.sf(2, 50, lo) - 0.05) < 1e-9
    assert abs(stats.binom.cdf(3, 50, hi) - 0.05) < 1e-9
    assert audit.clopper_pearson(0, 50, 0.9)[0] == 0.0 and audit.clopper_pearson(50, 50, 0.9)[1] == 1.0


def test_epsilon_lower_bound_of_known_error_rates():
    """Two point masses that the threshold separates perfectly: the bound is what the error counts allow."""
    runs = 4000
    bound = audit.epsilon_lower_bound(np.zeros(runs), np.ones(runs), 1e-5, confidence=0.95, seed=0)
    # no error on the 2,000 evaluation runs of each side: FPR, FNR ≤ 1 − 0.025^(1/2000)
    upper = 1 - 0.025 ** (1 / 2000)
    assert abs(bound["epsilon"] - np.log((1 - 1e-5 - upper) / upper)) < 1e-9


def test_canary_neighbours_differ_in_one_record_at_the_public_bound():
    p = H.tiny_logistic()
    D, D_prime = audit.canary_neighbours(p, record=3)
    assert np.array_equal(D.X, D_prime.X) and np.sum(D.y != D_prime.y) == 1 and D.y[3] == -D_prime.y[3]
    assert np.isclose(np.linalg.norm(D.X[3]), p.feature_bound)
    assert np.array_equal(np.delete(D.X, 3, 0), np.delete(p.X, 3, 0))


def test_intercepted_runs_are_the_library_runs_and_edits_nest():
    problem, options, epsilon, delta = H.setting("dp_admm")
    plain = dl.run("dp_admm", problem, epsilon=epsilon, delta=delta, seed=5, **options)
    with audit.intercept_noise() as draws:
        seen = dl.run("dp_admm", problem, epsilon=epsilon, delta=delta, seed=5, **options)
    assert np.array_equal(plain.model, seen.model) and len(draws) == 1
    with audit.scaled_noise(0.0), audit.intercept_noise() as inner:
        off = dl.run("dp_admm", problem, epsilon=epsilon, delta=delta, seed=5, **options)
    assert not np.any(inner[0].raw)  # the inner block sees the outer block's (zeroed) draw
    with audit.intercept_noise(lambda i, draw: np.zeros_like(draw.raw)):
        zero = dl.run("dp_admm", problem, epsilon=epsilon, delta=delta, seed=5, **options)
    assert np.array_equal(off.model, zero.model)
    assert dl.mechanisms.gaussian is audit._ORIGINAL["gaussian"]  # restored
