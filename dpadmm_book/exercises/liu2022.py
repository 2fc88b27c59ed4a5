"""Checks for the exercises of the chapter "Laplacian smoothing: the ν slider" (Liu et al. 2022).

Each ``*_data()`` returns the inputs of an exercise; each ``check_*`` takes the student's answer and
returns a :class:`~dpadmm_book.exercises.Feedback` (✓ with what the answer shows, or ✗ with the
mistake it recognises and a hint), never raising and never printing the solution.
"""

from __future__ import annotations

import numpy as np

from dpadmm_lite.smoothing import eigenvalues, laplacian_smooth, noise_variance, smoothing_matrix, tau, variance_limit
from . import Feedback, check

__all__ = ["smoothing_data", "expected_smoothing", "check_smoothing", "variance_data", "expected_variance",
           "check_variance", "sensitivity_data", "expected_sensitivity", "check_sensitivity", "x_step_data",
           "expected_x_step", "check_x_step"]


# ---------------------------------------------------------------------- exercise 1: smoothing by FFT
def smoothing_data():
    """``V, nu`` of exercise 1: a batch of 3 noisy vectors of dimension 12, and ν = 1.5."""
    V = np.random.default_rng(11).standard_normal((3, 12))
    return V, 1.5


def expected_smoothing() -> np.ndarray:
    V, nu = smoothing_data()
    return laplacian_smooth(V, nu)


def check_smoothing(answer) -> Feedback:
    V, nu = smoothing_data()
    d = V.shape[-1]
    Q = smoothing_matrix(d, nu)
    open_chain = Q.copy()
    open_chain[0, -1] = open_chain[-1, 0] = 0.0  # the same tridiagonal matrix without the periodic corners
    flipped = 1 + 2 * nu + 2 * nu * np.cos(2 * np.pi * np.arange(d) / d)  # the sign of the cosine flipped
    return check(
        "Q(ν)⁻¹V, row by row", answer, expected_smoothing(), rtol=1e-9, atol=1e-12,
        praise="each row solves Q(ν)x = v: one real FFT, a division by 1 + 2ν − 2ν cos(2πk/d), and the inverse "
               "FFT — the periodic Laplacian is diagonal in the Fourier basis.",
        mistakes={
            "you multiplied by Q(ν) instead of solving Q(ν)x = v (smoothing divides by the eigenvalues)":
                lambda e: e @ Q.T @ Q.T,
            "the batch comes back unchanged: with ν > 0 every frequency k ≠ 0 must shrink":
                lambda e: e @ Q.T,
            "you divided by the eigenvalues twice (that is Q(ν)⁻², the covariance factor, not the smoother)":
                lambda e: laplacian_smooth(e, nu),
            "you solved with a tridiagonal matrix without the periodic corners: Δ wraps around (x₀ and the last coordinate "
            "are neighbours)": lambda e: np.linalg.solve(open_chain, (e @ Q.T).T).T,
            "the eigenvalues have the wrong sign of the cosine: λₖ = 1 + 2ν − 2ν cos(2πk/d)":
                lambda e: np.real(np.fft.ifft(np.fft.fft(e @ Q.T, axis=-1) / flipped, axis=-1)),
        },
        hint="Q(ν) = I − νΔ is circulant, so x = ifft(fft(v)/λ) with λₖ = 1 + 2ν − 2ν cos(2πk/d), k = 0 … d − 1, "
             "along the last axis (np.fft.rfft/irfft with n=d do the same with half the work).")


# ---------------------------------------------------------------------- exercise 2: variance of smoothed noise
def variance_data():
    """``d, nu, sigma`` of exercise 2 (a small d, where the finite-d formula and the limit differ)."""
    return 6, 2.5, 0.8


def expected_variance() -> float:
    d, nu, sigma = variance_data()
    return noise_variance(d, nu, sigma)


def check_variance(answer) -> Feedback:
    d, nu, sigma = variance_data()
    lam = eigenvalues(d, nu)
    return check(
        "per-coordinate variance of Q(ν)⁻¹u, u ~ N(0, σ²I)", answer, expected_variance(), rtol=1e-6,
        praise="Cov(Q(ν)⁻¹u) = σ²Q(ν)⁻² is circulant, so each coordinate has variance σ²·meanₖ λₖ⁻².",
        mistakes={
            "that is σ²τ with the paper's τ = mean 1/λₖ — the average of E[uᵀQ(ν)⁻¹u]/d, not the variance of "
            "Q(ν)⁻¹u, whose covariance has Q(ν)⁻¹ twice": lambda e: sigma**2 * tau(d, nu),
            "you scaled by σ, not σ² (a variance scales with the square of the noise level)": lambda e: e / sigma,
            "that is the limit (1 + 2ν)/((1 + 4ν)√(1 + 4ν)) for d → ∞; here d is small and the sum over the d "
            "eigenvalues differs": lambda e: variance_limit(nu, sigma),
            "you squared the mean eigenvalue: the variance averages 1/λₖ², not 1/mean(λ)²":
                lambda e: sigma**2 / np.mean(lam) ** 2,
        },
        hint="write u in the Fourier basis: each frequency k is multiplied by 1/λₖ, so its variance by 1/λₖ²; "
             "a coordinate sees the average over k.")


# ---------------------------------------------------------------------- exercise 3: the ledger's sensitivity
def sensitivity_data():
    """``n, b, c`` of exercise 3: records, expected minibatch size, public feature bound."""
    return 4000, 40, 1.0


def expected_sensitivity() -> float:
    """Δ the ledger records for one DP-VRADMM inner release on the logistic loss: 2c/b."""
    n, b, c = sensitivity_data()
    return 2 * c / b


def check_sensitivity(answer) -> Feedback:
    n, b, c = sensitivity_data()
    return check(
        "Δ of one DP-VRADMM inner release (logistic loss)", answer, expected_sensitivity(), rtol=1e-9,
        praise="one record's SVRG term (ℓ'(a·x) − ℓ'(a·x̃))a has norm ≤ c because a record's ℓ' keeps its sign; a "
               "replaced record moves the sum by ≤ 2c, and the sum is divided by b.",
        mistakes={
            "c/b is the change when one record is added or removed; the book's neighbours differ by a *replaced* "
            "record, which can move the sum by twice that": lambda e: e / 2,
            "2c/n is the sensitivity of the full-data mean (the snapshot gradient); an inner release divides a "
            "minibatch sum by the expected batch size b": lambda e: e * b / n,
            "you bounded the SVRG difference by 2c and then doubled it again for the replacement — twice too "
            "much: for the logistic loss ℓ'(a·x) and ℓ'(a·x̃) of one record lie on the same side of 0":
                lambda e: 2 * e,
        },
        hint="bound the norm of one record's term in (1/b)Σ(∇fᵢ(x) − ∇fᵢ(x̃)), then ask what replacing that "
             "record can do to the sum.")


# ---------------------------------------------------------------------- exercise 5: ssADMM's closed-form x-step
def x_step_data():
    """``x, y, u, g, rho, eta`` of exercise 5: ssADMM's state (x_t, y_t, scaled dual u_t), a noisy gradient g_t,
    the penalty ρ and the step η (dimension 5)."""
    rng = np.random.default_rng(5)
    x, y, u, g = rng.standard_normal((4, 5))
    return x, y, u, g, 0.5, 2.0


def expected_x_step() -> np.ndarray:
    """argmin_x ⟨g, x⟩ + (ρ/2)‖x − y + u‖² + (1/(2η))‖x − x_t‖² = (x_t/η + ρ(y − u) − g)/(1/η + ρ)."""
    x, y, u, g, rho, eta = x_step_data()
    return (x / eta + rho * (y - u) - g) / (1 / eta + rho)


def check_x_step(answer) -> Feedback:
    x, y, u, g, rho, eta = x_step_data()
    return check(
        "ssADMM's x-step x_{t+1}", answer, expected_x_step(), rtol=1e-9, atol=1e-12,
        praise="setting the gradient of ⟨g, x⟩ + (ρ/2)‖x − y + u‖² + (1/(2η))‖x − x_t‖² to zero gives "
               "(1/η + ρ)x = x_t/η + ρ(y − u) − g: one division per coordinate, no solve.",
        mistakes={
            "you added the gradient: the step goes against g": lambda e: e + 2 * g / (1 / eta + rho),
            "the dual enters as y − u (the term is ‖x − y + u‖²), not y + u":
                lambda e: e + 2 * rho * u / (1 / eta + rho),
            "that is a plain gradient step x_t − ηg: the augmented term (ρ/2)‖x − y + u‖² is part of the minimised "
            "function": lambda e: x - eta * g,
            "you divided by 1/η only: ρx from the augmented term belongs on the left-hand side too":
                lambda e: e * (1 / eta + rho) * eta,
        },
        hint="differentiate: g + ρ(x − y + u) + (x − x_t)/η = 0, then solve for x.")
