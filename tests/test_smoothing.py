"""Laplacian smoothing ``Q_ν⁻¹ v`` (dpadmm_lite.smoothing): exact, batched, and what it does to noise.

* the FFT solve equals a dense solve of ``Q_ν x = v`` with ``Q_ν = I − νΔ`` (Δ built here, independently,
  as the periodic second-difference matrix: −2 on the diagonal, 1 on the two cyclic off-diagonals), on
  random batches, for odd and even d and for d = 1 and 2;
* ν = 0 returns the input unchanged; bad ν is a ValueError naming ν;
* the spectrum, ‖Q_ν‖₂, the paper's properties 1 and 3 and its τ (with Remark 1's closed form);
* the per-coordinate variance of smoothed white noise, measured, against its closed form.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpadmm_lite import smoothing


def dense_q(d: int, nu: float) -> np.ndarray:
    """``Q_ν = I − νΔ``, Δ the periodic second difference, written entry by entry (no library code)."""
    delta = np.zeros((d, d))
    for i in range(d):
        delta[i, i] += -2.0
        delta[i, (i - 1) % d] += 1.0
        delta[i, (i + 1) % d] += 1.0
    return np.eye(d) - nu * delta


@pytest.mark.parametrize("d", [1, 2, 3, 4, 7, 8, 64, 65, 101, 512, 513, 1000])  # the dense inverse to 512, FFT above
@pytest.mark.parametrize("nu", [0.05, 1.0, 3.7])
def test_fft_solve_equals_a_dense_solve_on_random_batches(d, nu):
    rng = np.random.default_rng(d * 100 + int(10 * nu))
    for shape in [(d,), (5, d), (2, 3, d)]:
        v = rng.standard_normal(shape)
        expected = np.linalg.solve(dense_q(d, nu), v.reshape(-1, d).T).T.reshape(shape)
        got = smoothing.laplacian_smooth(v, nu)
        assert got.shape == shape
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got @ dense_q(d, nu).T, v, rtol=1e-12, atol=1e-12)  # Q_ν x = v


def test_small_dimensions_are_the_obvious_matrices():
    # d = 1: Δ = [0] (the neighbour on either side is the coordinate itself), so Q_ν = 1
    assert smoothing.laplacian_smooth(np.array([2.5]), 4.0)[0] == pytest.approx(2.5, rel=1e-15)
    np.testing.assert_array_equal(smoothing.second_difference(1), [[0.0]])
    # d = 2: Δ = [[−2, 2], [2, −2]]: both neighbours of coordinate 0 are coordinate 1
    np.testing.assert_array_equal(smoothing.second_difference(2), [[-2.0, 2.0], [2.0, -2.0]])
    np.testing.assert_allclose(smoothing.smoothing_matrix(2, 0.5), [[2.0, -1.0], [-1.0, 2.0]])
    for d in (1, 2, 3, 9):
        np.testing.assert_allclose(smoothing.smoothing_matrix(d, 1.3), dense_q(d, 1.3), atol=1e-15)


def test_nu_zero_returns_the_input_unchanged():
    v = np.random.default_rng(0).standard_normal((4, 10))
    out = smoothing.laplacian_smooth(v, 0.0)
    assert out is v  # the very same array: an algorithm with ν = 0 is exactly the unsmoothed one
    np.testing.assert_array_equal(smoothing.laplacian_smooth([1, 2, 3], 0), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("bad", [-0.1, -1e-12, math.nan, math.inf, "2", None])
def test_bad_nu_is_a_value_error_naming_nu(bad):
    with pytest.raises(ValueError, match=r"nu \(the smoothing strength ν\) must be in \[0, ∞\)"):
        smoothing.laplacian_smooth(np.ones(4), bad)


def test_a_vector_needs_a_last_axis_of_length_at_least_one():
    with pytest.raises(ValueError, match="last axis"):
        smoothing.laplacian_smooth(np.float64(1.0), 1.0)
    with pytest.raises(ValueError, match="last axis"):
        smoothing.laplacian_smooth(np.ones((3, 0)), 1.0)


def test_smoothing_is_linear_symmetric_and_keeps_the_mean():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 33))
    nu = 2.0
    np.testing.assert_allclose(smoothing.laplacian_smooth(2 * a - 3 * b, nu),
                               2 * smoothing.laplacian_smooth(a, nu) - 3 * smoothing.laplacian_smooth(b, nu), atol=1e-13)
    assert smoothing.laplacian_smooth(a, nu) @ b == pytest.approx(a @ smoothing.laplacian_smooth(b, nu), rel=1e-12)
    assert smoothing.laplacian_smooth(a, nu).sum() == pytest.approx(a.sum(), rel=1e-12)  # λ₀ = 1


@pytest.mark.parametrize("d", [1, 2, 5, 6, 31])
def test_spectrum_norm_and_the_papers_properties(d):
    nu = 1.7
    Q = dense_q(d, nu)
    np.testing.assert_allclose(np.sort(smoothing.eigenvalues(d, nu)), np.linalg.eigvalsh(Q), atol=1e-12)
    assert smoothing.operator_norm(d, nu) == pytest.approx(np.linalg.norm(Q, 2), rel=1e-12)
    if d % 2 == 0:
        assert smoothing.operator_norm(d, nu) == pytest.approx(1 + 4 * nu, rel=1e-12)
    Qinv = np.linalg.inv(Q)
    assert np.linalg.eigvalsh(np.eye(d) - Qinv).min() >= -1e-12  # Property 1: Q_ν⁻¹ ⪯ I
    assert np.linalg.eigvalsh(Qinv - Qinv @ Qinv).min() >= -1e-12  # Property 3: (Q_ν⁻¹)² ⪯ Q_ν⁻¹


@pytest.mark.parametrize("d", [1, 2, 3, 10, 104, 1000])
@pytest.mark.parametrize("nu", [0.0, 0.5, 2.0, 3.0])
def test_tau_is_the_mean_inverse_eigenvalue_and_matches_remark_1(d, nu):
    expected = np.mean(1 / np.linalg.eigvalsh(dense_q(d, nu))) if d <= 104 else np.mean(1 / smoothing.eigenvalues(d, nu))
    assert smoothing.tau(d, nu) == pytest.approx(expected, rel=1e-12)
    assert smoothing.tau_closed_form(d, nu) == pytest.approx(expected, rel=1e-10)
    if d == 1000:
        assert smoothing.tau(d, nu) == pytest.approx(1 / math.sqrt(1 + 4 * nu), rel=1e-9)  # d → ∞


@pytest.mark.parametrize("nu", [0.0, 1.0, 3.0])
def test_variance_of_smoothed_white_noise_matches_the_closed_form(nu):
    d, samples, sigma = 64, 20_000, 0.7
    rng = np.random.default_rng(7)
    smoothed = smoothing.laplacian_smooth(sigma * rng.standard_normal((samples, d)), nu)
    measured = smoothed.var(axis=0)  # one variance per coordinate, over independent draws
    closed = smoothing.noise_variance(d, nu, sigma)
    # the closed form: the diagonal of σ²Q_ν⁻², written with the dense matrix
    Qinv = np.linalg.inv(dense_q(d, nu))
    assert closed == pytest.approx(sigma**2 * np.mean(np.diag(Qinv @ Qinv)), rel=1e-12)
    # each coordinate's sample variance has relative sd √(2/samples) ≈ 1 %; the mean over coordinates less
    assert np.abs(measured / closed - 1).max() < 0.05
    assert measured.mean() / closed == pytest.approx(1.0, abs=0.01)
    # E‖u‖²_{Q_ν⁻¹} = τ d σ² (the paper's eq. 12)
    u = sigma * rng.standard_normal((samples, d))
    quad = np.einsum("ij,ij->i", u, smoothing.laplacian_smooth(u, nu)).mean()
    assert quad / (smoothing.tau(d, nu) * d * sigma**2) == pytest.approx(1.0, abs=0.01)


def test_variance_falls_with_nu_towards_its_limit():
    variances = [smoothing.noise_variance(256, nu) for nu in (0.0, 0.5, 1.0, 2.0, 3.0)]
    assert variances[0] == pytest.approx(1.0)
    assert all(a > b for a, b in zip(variances, variances[1:]))
    for nu in (0.5, 2.0, 3.0):
        assert smoothing.noise_variance(4096, nu) == pytest.approx(smoothing.variance_limit(nu), rel=1e-9)
    assert smoothing.variance_limit(2.0) == pytest.approx(5 / 27)  # (1 + 2ν)/(1 + 4ν)^{3/2} at ν = 2
