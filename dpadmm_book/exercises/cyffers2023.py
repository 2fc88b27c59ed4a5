"""Checks for the exercises of the chapter "Private ADMM as a noisy fixed-point iteration" (Cyffers et al. 2023).

Each ``*_data()`` / ``*_SETTING`` gives the inputs of an exercise; each ``check_*`` takes the
student's answer and returns a :class:`~dpadmm_book.exercises.Feedback` that says what the answer
shows or which typical mistake it contains — never the solution. The expected values are computed
here, with the library, so the notebook does not give them away.
"""

from __future__ import annotations

import math

import numpy as np

from dpadmm_lite import datasets
from dpadmm_lite.algorithms import cyffers2023
from . import Feedback, check

__all__ = ["x_update_data", "expected_x_update", "check_x_update", "SENSITIVITY_SETTING", "expected_sensitivity",
           "check_sensitivity", "FEDERATED_SETTING", "expected_noise_multiplier", "check_noise_multiplier"]


# ---------------------------------------------------------------------- exercise 1: the x-update of Algorithm 6
def x_update_data():
    """``(a, b, w, step)`` of exercise 1: one record of the Lasso data (p = 6), the prox point
    ``w = 2z − u_i`` and the per-record prox step ``s = γ/n`` (γ = 250, n = 1000)."""
    X, y, _ = datasets.make_lasso(1, 6, seed=11)
    w = np.random.default_rng(11).normal(size=6)
    return X[0], float(y[0]), w, 250.0 / 1000


def _x_update(a, b, w, inverse_step):
    return w + a * (b - a @ w) / (inverse_step + a @ a)


def expected_x_update() -> np.ndarray:
    """``prox_{s·½(a·x − b)²}(w) = (aaᵀ + I/s)⁻¹(ab + w/s)`` (App. E's prox; Sherman–Morrison)."""
    a, b, w, step = x_update_data()
    records = cyffers2023._Records(a[None, :], np.array([b]), np.array([a @ a]), "squared", "l1", 0.0)
    return w + cyffers2023._prox_coefficient(records, np.array([0]), np.array([a @ w]), np.array([step]))[0] * a


def _alg6_literal_x_update() -> np.ndarray:
    a, b, w, step = x_update_data()
    return _x_update(a, b, w, 2.0 / step)  # Algorithm 6 prints (aaᵀ + (2n/γ)I): the step γ/(2n)


def check_x_update(answer) -> Feedback:
    a, b, w, step = x_update_data()
    return check(
        "x-update xᵢ = prox of (γ/n)ℓᵢ at 2z − uᵢ, for the squared loss", answer, expected_x_update(), rtol=1e-9,
        atol=1e-12,
        praise="the rank-one system (aaᵀ + (n/γ)I)x = ab + (n/γ)w solved without a matrix inverse — each user's "
               "x-update costs O(p), so all n users update in one vectorised pass.",
        mistakes={
            "you returned the prox point w = 2z − uᵢ unchanged: the prox must still move it along aᵢ towards the "
            "record's label": lambda e: w,
            "you used the 2n/γ printed in Algorithm 6: that is the prox with step γ/(2n), and together with Algorithm "
            "6's z-step (soft-thresholding at γκ) it solves the Lasso with κ multiplied by 2n": lambda e: _alg6_literal_x_update(),
            "you put the step s = γ/n where its inverse n/γ belongs (the identity term of the system is I/s)":
                lambda e: _x_update(a, b, w, step),
            "you applied the full matrix inverse to w only, forgetting the a·b term": lambda e: w - a * (a @ w) / (
                1.0 / step + a @ a),
        },
        hint="write the optimality condition s·a(a·x − b) + x − w = 0, take its inner product with a to find a·x, "
             "then substitute back.")


# ---------------------------------------------------------------------- exercise 2: the sensitivity of a u-block
#: The setting of exercise 2: ℓ1-logistic regression (L = 1), n = 1000 users, γ = 20, θ = 0.4, C = 0.05.
SENSITIVITY_SETTING = {"n": 1000, "gamma": 20.0, "relaxation": 0.4, "clip": 0.05, "lipschitz": 1.0}


def expected_sensitivity() -> float:
    """``Δ = 2θ · min(2C, 2Lγ/n)``: how far one user's u-update moves when its record is replaced."""
    s = SENSITIVITY_SETTING
    return 2 * s["relaxation"] * min(2 * s["clip"], 2 * s["lipschitz"] * s["gamma"] / s["n"])


def check_sensitivity(answer) -> Feedback:
    s = SENSITIVITY_SETTING
    theta, C = s["relaxation"], s["clip"]
    return check(
        "sensitivity Δ of one user's u-update (replace-one)", answer, expected_sensitivity(), rtol=1e-9,
        praise="the prox moves xᵢ by at most 2Lγ/n when the record is replaced (here less than the clipping bound "
               "2C), and the u-update multiplies that difference by 2θ.",
        mistakes={
            "half the expected value: that is the add/remove-one sensitivity (one record added or removed moves "
            "Clip(x − z) by at most min(C, Lγ/n)); replacing a record can move it twice as far": lambda e: e / 2,
            "you left out the factor 2θ by which the u-update (7) multiplies Clip(x − z, C)":
                lambda e: e / (2 * theta),
            "you used the clipping bound 2C, but with the per-record prox step γ/n the prox itself moves xᵢ by at "
            "most 2Lγ/n, which is smaller here (clipping is a projection: it never increases a difference)":
                lambda e: 2 * theta * 2 * C,
        },
        hint="bound ‖xᵢ − xᵢ'‖ for the two records from the prox's optimality condition x = w − (γ/n)∇ℓ(x); "
             "then remember that clipping never increases a distance.")


# ---------------------------------------------------------------------- exercise 3: the federated noise multiplier
#: The setting of exercise 3: σ = 6, C = 0.1, θ = 0.5, m = 100 users per round (q = 0.1, n = 1000).
FEDERATED_SETTING = {"sigma": 6.0, "clip": 0.1, "relaxation": 0.5, "m": 100, "n": 1000}


def expected_noise_multiplier() -> float:
    """Noise / sensitivity of the federated ledger: ``θσ / (2θ · 2C) = σ/(4C)`` (θ cancels)."""
    s = FEDERATED_SETTING
    return s["relaxation"] * s["sigma"] / (2 * s["relaxation"] * 2 * s["clip"])


def check_noise_multiplier(answer) -> Feedback:
    s = FEDERATED_SETTING
    return check(
        "noise multiplier of one round's release in the federated ledger", answer, expected_noise_multiplier(),
        rtol=1e-9,
        praise="each sampled user's own noise θσ hides its own contribution, whose replace-one change is at most "
               "2θ·2C; θ cancels, and the other users' noise is not counted.",
        mistakes={
            "you counted the other users' noise: with secure aggregation the sum of m independent noises has standard "
            "deviation θσ√m, but the algorithm's users keep their noise in uᵢ, and the ledger credits only each "
            "user's own draw (no √m aggregation gain)": lambda e: e * math.sqrt(s["m"]),
            "you used the proof of Theorem 3's gain of m (a loss divided by m²): that treats the aggregate's noise "
            "as one N(0, σ²) draw, while m users add m draws": lambda e: e * s["m"],
            "you scaled the noise by θ but not the sensitivity (or the reverse): the u-update multiplies both the "
            "clipped difference and the noise by θ, so θ cancels": lambda e: e * s["relaxation"],
            "twice the expected value: you used a user's contribution bound 2θC; the ledger records replace-one "
            "neighbours, for which one user's message can change by 2θ·2C": lambda e: 2 * e,
        },
        hint="write one sampled user's message Δuᵢ = 2θ(Clip(xᵢ − z, C) + ½σξᵢ): what multiplies ξ, and how far can "
             "the rest move when the user's record is replaced?")
