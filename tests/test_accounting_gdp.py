"""The exact Gaussian (μ-GDP) curve's two root-finds without scipy.optimize (``accounting/_gdp.py``).

A live panel in the browser calibrates its noise with :func:`_gdp_mu_for` and reports ε with
:func:`_gdp_epsilon`; both used ``scipy.optimize.brentq``, whose import costs seconds of the
panel's start in WebAssembly. The library's own ``_brentq`` takes scipy's steps: on a grid of
(ε, δ) and (μ, δ) it returns the same float as scipy's brentq for the same function, and the
accountant's guarantee holds on the curve itself — the ε reported is never below the ε at which
δ(ε) = δ, and the μ a calibration meets (ε, δ) with is never above the largest that does.
"""

from __future__ import annotations

import math

import pytest
from scipy import optimize

from dpadmm_lite.accounting import _gdp

EPSILONS = (0.01, 0.05, 0.3, 1.0, 2.5, 8.0, 30.0)
DELTAS = (1e-10, 1e-7, 1e-5, 1e-3, 0.05)
MUS = (1e-3, 0.02, 0.4, 1.0, 3.0, 12.0, 60.0)


def _mu_equation(epsilon: float, delta: float):
    log_delta = math.log(delta)
    return lambda log_mu: _gdp._log_delta_gdp(epsilon, math.exp(log_mu)) - log_delta


@pytest.mark.parametrize("delta", DELTAS)
def test_the_solver_returns_scipys_root(delta):
    for epsilon in EPSILONS:  # the calibration's equation in log μ, on _gdp_mu_for's bracket
        f = _mu_equation(epsilon, delta)
        lo, hi = -1.0, 1.0
        while f(lo) > 0:
            lo -= 2.0
        while f(hi) < 0:
            hi += 2.0
        ours = _gdp._brentq(f, lo, hi, xtol=1e-14, rtol=1e-14)
        assert ours == optimize.brentq(f, lo, hi, xtol=1e-14, rtol=1e-14), (epsilon, delta)
    log_delta = math.log(delta)
    for mu in MUS:  # the ε of a μ-GDP mechanism, on _gdp_epsilon's bracket
        g = lambda e: _gdp._log_delta_gdp(e, mu) - log_delta  # noqa: E731
        hi = mu * mu / 2 + mu * math.sqrt(2 * math.log(1 / delta))
        if g(0.0) <= 0:
            continue
        assert _gdp._brentq(g, 0.0, hi, xtol=1e-13, rtol=1e-13) == optimize.brentq(g, 0.0, hi, xtol=1e-13, rtol=1e-13)


@pytest.mark.parametrize("delta", DELTAS)
def test_the_accountant_never_reports_less_than_the_truth(delta):
    log_delta = math.log(delta)
    for epsilon in EPSILONS:
        mu = _gdp._gdp_mu_for(epsilon, delta)
        truth = math.exp(optimize.brentq(_mu_equation(epsilon, delta), -40.0, 10.0, xtol=1e-15, rtol=1e-15))
        assert _gdp._log_delta_gdp(epsilon, mu) <= log_delta  # μ-GDP meets (ε, δ) ...
        assert truth * (1 - 1e-9) < mu <= truth  # ... and is the largest such μ (to 1e-9)
    for mu in MUS:
        epsilon = _gdp._gdp_epsilon(mu, delta)
        if epsilon == 0.0:
            assert _gdp._log_delta_gdp(0.0, mu) <= log_delta
            continue
        truth = optimize.brentq(lambda e: _gdp._log_delta_gdp(e, mu) - log_delta, 0.0, 10 * mu * mu + 100.0,
                                xtol=1e-15, rtol=1e-15)
        assert _gdp._log_delta_gdp(epsilon, mu) <= log_delta  # δ(ε) ≤ δ: ε is not below the truth ...
        assert truth <= epsilon <= truth * (1 + 1e-9) + 1e-11  # ... and above it by rounding only


def test_the_solver_finds_known_roots_and_rejects_a_bad_bracket():
    assert _gdp._brentq(lambda x: x * x - 2.0, 0.0, 2.0, xtol=1e-15, rtol=1e-15) == pytest.approx(math.sqrt(2), rel=4e-15)
    assert _gdp._brentq(lambda x: math.cos(x) - x, 0.0, 1.0, xtol=1e-15, rtol=1e-15) == pytest.approx(0.7390851332151607,
                                                                                                     rel=4e-15)
    assert _gdp._brentq(lambda x: x - 1.0, 1.0, 3.0, xtol=1e-12, rtol=1e-12) == 1.0  # a root at the bracket's end
    with pytest.raises(ValueError, match="opposite signs"):
        _gdp._brentq(lambda x: x * x + 1.0, -1.0, 1.0, xtol=1e-12, rtol=1e-12)
    with pytest.raises(ValueError, match="must be numbers"):
        _gdp._brentq(lambda x: math.nan if x > 0.9 else x - 0.5, 0.0, 1.0, xtol=1e-12, rtol=1e-12)
    with pytest.raises(ValueError, match="is NaN"):
        _gdp._brentq(lambda x: math.nan if 0.2 < x < 0.8 else x - 0.5, 0.0, 1.0, xtol=1e-12, rtol=1e-12)


def test_the_gdp_inversions_return_python_floats():
    """A numpy scalar prints as ``np.float64(…)``: glued into a chapter it broke the book's build."""
    from dpadmm_lite import accounting

    assert type(accounting.gdp_epsilon(1.0, 1e-5)) is float
    assert type(_gdp._gdp_mu_for(1.0, 1e-5)) is float
