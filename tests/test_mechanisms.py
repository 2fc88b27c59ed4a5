"""Statistical and exactness tests of the noise primitives in :mod:`dpadmm_lite.mechanisms`."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpadmm_lite import mechanisms as mech


# ----------------------------------------------------------------------------- gaussian

def test_gaussian_moments_and_per_row_sigma():
    rng = np.random.default_rng(0)
    sigma = np.array([0.5, 2.0])
    x = mech.gaussian(rng, sigma, (2, 200_000))
    assert x.shape == (2, 200_000)
    np.testing.assert_allclose(x.std(axis=1), sigma, rtol=0.01)
    np.testing.assert_allclose(x.mean(axis=1), 0.0, atol=0.02)
    # normality of one coordinate
    assert stats.kstest(x[1] / 2.0, "norm").pvalue > 1e-3


def test_gaussian_zero_sigma_is_exact_zero_and_noise_free_run_is_bit_for_bit():
    rng = np.random.default_rng(1)
    z = mech.gaussian(rng, 0.0, (3, 4))
    assert np.array_equal(z, np.zeros((3, 4))) and not np.any(np.signbit(z))
    mixed = mech.gaussian(rng, np.array([0.0, 1.0, 0.0]), (3, 4))
    assert np.array_equal(mixed[[0, 2]], np.zeros((2, 4))) and not np.any(np.signbit(mixed[[0, 2]]))
    w = np.random.default_rng(2).standard_normal((3, 4))
    assert np.array_equal(w + z, w)


def test_gaussian_reproducible_from_seed():
    a = mech.gaussian(np.random.default_rng(7), 1.3, (5, 3))
    b = mech.gaussian(np.random.default_rng(7), 1.3, (5, 3))
    assert np.array_equal(a, b)


@pytest.mark.parametrize("sigma", [-1.0, math.nan, math.inf, [1.0, -0.1]])
def test_gaussian_rejects_bad_sigma(sigma):
    with pytest.raises(ValueError, match="sigma"):
        mech.gaussian(np.random.default_rng(0), sigma, (2, 3))


def test_gaussian_rejects_sigma_of_wrong_shape():
    with pytest.raises(ValueError, match="sigma"):
        mech.gaussian(np.random.default_rng(0), np.ones(3), (2, 3))


# ----------------------------------------------------------------------------- ℓ2-Laplace

@pytest.mark.parametrize("d,zeta", [(1, 2.0), (5, 0.7), (50, 10.0)])
def test_l2_laplace_radius_is_gamma_d_over_zeta(d, zeta):
    rng = np.random.default_rng(d)
    x = mech.l2_laplace(rng, zeta, (40_000, d))
    r = np.linalg.norm(x, axis=1)
    assert abs(r.mean() - d / zeta) < 5 * math.sqrt(d) / zeta / math.sqrt(40_000)  # 5 standard errors
    assert r.mean() == pytest.approx(mech.l2_laplace_radius_mean(zeta, d), rel=0.02)
    ks = stats.kstest(r, stats.gamma(a=d, scale=1 / zeta).cdf)
    assert ks.pvalue > 1e-3
    # and it is *not* a Gamma with the wrong shape (the test can fail)
    assert stats.kstest(r, stats.gamma(a=d + 1, scale=1 / zeta).cdf).pvalue < 1e-6


def test_l2_laplace_is_isotropic():
    rng = np.random.default_rng(3)
    d = 4
    x = mech.l2_laplace(rng, 1.0, (60_000, d))
    u = x / np.linalg.norm(x, axis=1, keepdims=True)
    np.testing.assert_allclose(u.mean(axis=0), 0.0, atol=0.015)
    np.testing.assert_allclose(np.cov(u.T), np.eye(d) / d, atol=0.01)
    # each coordinate of a uniform direction on S^{d-1}: u₁² ~ Beta(1/2, (d−1)/2)
    assert stats.kstest(u[:, 0] ** 2, stats.beta(0.5, (d - 1) / 2).cdf).pvalue > 1e-3


def test_l2_laplace_density_in_one_dimension_is_laplace():
    x = mech.l2_laplace(np.random.default_rng(4), 3.0, (50_000, 1))[:, 0]
    assert stats.kstest(x, stats.laplace(scale=1 / 3.0).cdf).pvalue > 1e-3


def test_l2_laplace_per_row_zeta_and_infinite_zeta():
    rng = np.random.default_rng(5)
    x = mech.l2_laplace(rng, np.array([1.0, 100.0, math.inf]), (3, 2))
    assert x.shape == (3, 2) and np.array_equal(x[2], np.zeros(2))
    big = mech.l2_laplace(rng, np.array([[1.0], [100.0]]), (2, 30_000, 3))
    r = np.linalg.norm(big, axis=-1).mean(axis=1)
    np.testing.assert_allclose(r, [3.0, 0.03], rtol=0.03)
    assert np.array_equal(mech.l2_laplace(rng, math.inf, (4, 3)), np.zeros((4, 3)))


@pytest.mark.parametrize("zeta", [0.0, -1.0, math.nan])
def test_l2_laplace_rejects_bad_zeta(zeta):
    with pytest.raises(ValueError, match="zeta"):
        mech.l2_laplace(np.random.default_rng(0), zeta, (2, 3))


def test_l2_laplace_privacy_loss_is_bounded_by_zeta_delta():
    """The log density ratio of x+a vs x is ζ(‖x−a‖−‖x‖) ≤ ζ‖a‖: pure ε = ζΔ."""
    rng = np.random.default_rng(6)
    zeta, a = 2.5, np.array([0.3, -0.4, 0.0])  # ‖a‖ = 0.5
    x = mech.l2_laplace(rng, zeta, (100_000, 3))
    loss = zeta * (np.linalg.norm(x - a, axis=1) - np.linalg.norm(x, axis=1))
    assert loss.max() <= zeta * 0.5 + 1e-12
    assert loss.max() > 0.99 * zeta * 0.5  # the bound is attained (tight)


# ----------------------------------------------------------------------------- clipping

def test_clip_rowwise():
    v = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    out = mech.clip(v, 1.0)
    np.testing.assert_allclose(out[0], [0.6, 0.8])
    assert np.array_equal(out[1], v[1]) and np.array_equal(out[2], v[2])  # bit-for-bit inside the ball
    batch = np.random.default_rng(0).standard_normal((4, 5, 3)) * 3
    c = mech.clip(batch, 2.0)
    assert np.all(np.linalg.norm(c, axis=-1) <= 2.0 + 1e-12)
    # direction kept
    cos = np.sum(c * batch, axis=-1) / (np.linalg.norm(c, axis=-1) * np.linalg.norm(batch, axis=-1))
    np.testing.assert_allclose(cos, 1.0)
    assert np.array_equal(mech.clip(batch, math.inf), batch)


def test_clip_per_row_threshold_and_errors():
    v = np.array([[3.0, 4.0], [3.0, 4.0]])
    np.testing.assert_allclose(np.linalg.norm(mech.clip(v, np.array([1.0, 10.0])), axis=1), [1.0, 5.0])
    for bad in (0.0, -1.0, math.nan):
        with pytest.raises(ValueError, match="C"):
            mech.clip(v, bad)
    with pytest.raises(ValueError):
        mech.clip(3.0, 1.0)
