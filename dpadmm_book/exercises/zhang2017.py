"""Checks for the exercises of the chapter "Private ADMM over any network" (Zhang & Zhu 2017).

Each ``*_data()`` returns the inputs of an exercise; each ``check_*`` takes the student's answer and
returns a :class:`~dpadmm_book.exercises.Feedback` that says what is right or what is wrong (with a
hint), never the solution. The expected values are computed here, with the library.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from dpadmm_lite import accounting
from . import Feedback, check, feedback, not_answered

__all__ = ["dvp_zeta_data", "expected_dvp_zeta", "check_dvp_zeta", "check_l2_laplace_sampler",
           "hidden_sensitivity_data", "expected_hidden_sensitivity", "check_hidden_sensitivity"]


# ---------------------------------------------------------------------- exercise 1: DVP's ζ for every node
def dvp_zeta_data() -> dict:
    """Four nodes of a network: their record counts, degrees, and the run's α, λ, ρ, c₁ and Δ."""
    return {"alpha": 0.1, "sizes": np.array([30, 300, 2000, 2000]), "degrees": np.array([1, 2, 2, 5]),
            "lam": 1e-4, "rho": 0.02, "c1": 0.25, "sensitivity": 2.0}


def _zeta(rule: str = "proof", degrees=None) -> np.ndarray:
    v = dvp_zeta_data()
    zeta, _ = accounting.zhang2017_dvp_zeta(v["alpha"], local_size=v["sizes"], lam=v["lam"], rho=v["rho"],
                                            n_neighbors=v["degrees"] if degrees is None else degrees, c1=v["c1"],
                                            sensitivity=v["sensitivity"], rule=rule)
    return np.asarray(zeta, float)


def expected_dvp_zeta() -> np.ndarray:
    """ζ_p of Algorithm 2 with the proof's rule ζ = α̂/Δ (and the Φ branch where α̂ ≤ 0), shape (4,)."""
    return _zeta("proof")


def check_dvp_zeta(answer) -> Feedback:
    v = dvp_zeta_data()
    a, m, lam, rho, c1 = v["alpha"], v["sizes"], v["lam"], v["rho"], v["c1"]
    jac = 2 * np.log1p(c1 / (m * (lam + 2 * rho * v["degrees"])))
    return check(
        "noise rates ζₚ of the four nodes", answer, expected_dvp_zeta(), rtol=1e-9,
        praise="the noise spends α̂ = α − ᾱ and the Jacobian the rest; where the data are too few (α̂ ≤ 0) the "
               "extra penalty Φ caps the Jacobian term at α/2, and each node still spends exactly α.",
        mistakes={
            "twice the expected rates: that is Algorithm 2 as printed (ζ = α̂). The proof needs ζ = α̂/Δ with "
            "Δ = 2, because the noise that explains a release moves by up to 2 when one record is replaced":
                lambda e: _zeta("algorithm"),
            "that is Appendix E's ζ = α/4, which ignores the Jacobian term of each node":
                lambda e: np.full(4, a / 4),
            "you left out the Jacobian term: ζ = α/Δ would make the total ζΔ + ᾱ exceed α":
                lambda e: np.full(4, a / 2),
            "you used α̂ = α − ᾱ for every node, also where it is ≤ 0 (a negative rate means no noise at all): "
            "those nodes need Algorithm 2's second branch":
                lambda e: (a - jac) / 2,
            "you used one neighbour for every node: the curvature of the penalty is 2ρNₚ, with Nₚ the degree":
                lambda e: _zeta("proof", degrees=np.ones(4)),
        },
        hint="α̂ₚ = α − 2 ln(1 + c₁/(mₚ(λ + 2ρNₚ))); if α̂ₚ ≤ 0, Algorithm 2 sets Φ so that the Jacobian "
             "term is α/2 and α̂ₚ = α/2; then ζₚ = α̂ₚ/Δ.")


# ---------------------------------------------------------------------- exercise 2: an ℓ2-Laplace sampler
def check_l2_laplace_sampler(sample, *, zeta: float = 2.0, d: int = 5, n: int = 20_000, seed: int = 0) -> Feedback:
    """Test ``sample(rng, zeta, n, d) -> (n, d)`` against the density ∝ exp(−ζ‖x‖) on R^d.

    Draws ``n`` vectors, then tests the radius law (Kolmogorov–Smirnov against Gamma(d, 1/ζ)) and the
    direction (mean and second moments of x/‖x‖ of a uniform direction), and says which typical
    mistake the draws look like.
    """
    what = f"sampler of the ℓ2-Laplace density ∝ exp(−ζ‖x‖) (ζ = {zeta:g}, d = {d})"
    if sample is None or sample is Ellipsis:
        return not_answered(what, "replace the `...` with your function")
    try:
        x = sample(np.random.default_rng(seed), zeta, n, d)
        if x is None or x is Ellipsis:
            return not_answered(what, "your function returns nothing; complete its body")
        x = np.asarray(x, dtype=float)
    except Exception as error:  # the student's code: say what went wrong, never raise
        return feedback(what, False, f"calling sample(rng, zeta, n, d) raised {type(error).__name__}: {error}.",
                        hint="the function takes a numpy Generator, the rate ζ, the number of draws and the dimension.")
    hint = ("the density depends on x only through r = ‖x‖, so draw a direction uniformly on the sphere "
            "and, independently, a radius with density ∝ rᵈ⁻¹ exp(−ζr).")
    if x.shape != (n, d):
        return feedback(what, False, f"expected an array of shape ({n}, {d}), got {x.shape}.", hint=hint)
    if not np.all(np.isfinite(x)):
        return feedback(what, False, "some draws are NaN or infinite.", hint=hint)
    r = np.linalg.norm(x, axis=1)
    mean_ratio = r.mean() / (d / zeta)  # E‖x‖ = d/ζ
    radius_ok = stats.kstest(r, stats.gamma(a=d, scale=1 / zeta).cdf).pvalue > 1e-3
    u = x / np.where(r > 0, r, 1.0)[:, None]
    spread = 5 / math.sqrt(n)
    direction_ok = np.abs(u.mean(axis=0)).max() < spread and np.abs((u**2).mean(axis=0) - 1 / d).max() < 5 * spread
    if radius_ok and direction_ok:
        return feedback(what, True, "the radius follows Gamma(d, 1/ζ) and the direction is uniform: you sampled the "
                                    "density through its polar form, rᵈ⁻¹ exp(−ζr) dr × the uniform measure on the "
                                    "sphere.")
    coordinate_laplace = stats.kstest(zeta * np.abs(x).sum(axis=1), stats.gamma(a=d).cdf).pvalue > 1e-3
    if not direction_ok and radius_ok:
        detail = ("the radius is right but the directions are not uniform on the sphere (the mean or the second "
                  "moments of x/‖x‖ are off): normalise a standard Gaussian vector, whose direction is uniform; "
                  "taking |·| of coordinates or normalising uniform [0, 1] coordinates is not")
    elif abs(mean_ratio * d - 1) < 0.05:
        detail = (f"the radius has mean ≈ 1/ζ instead of d/ζ: you drew it from an exponential law, Gamma(1, 1/ζ). "
                  f"In d = {d} dimensions the surface of the sphere of radius r grows like rᵈ⁻¹, which the radius "
                  "law must carry")
    elif abs(r.mean() / (d * zeta) - 1) < 0.05:
        detail = "the radius has mean ≈ dζ instead of d/ζ: ζ is a rate, the Gamma law's scale is 1/ζ"
    elif coordinate_laplace:
        detail = ("the draws look like independent Laplace coordinates: that density is ∝ exp(−ζ‖x‖₁), the ℓ1 norm — "
                  "it is not rotation invariant, and its privacy is calibrated to ℓ1-sensitivity")
    else:
        detail = (f"the radius does not follow Gamma(d, 1/ζ): its mean is {mean_ratio:.3g} times d/ζ"
                  + ("" if direction_ok else ", and the directions are not uniform either"))
    return feedback(what, False, detail + ".", hint=hint)


# ---------------------------------------------------------------------- exercise 3: PVP's hidden-state sensitivity
def hidden_sensitivity_data() -> dict:
    """One node of a PVP run: its records, degree, λ, ρ, c, and the number of broadcasts T."""
    return {"m": 400, "degree": 3, "lam": 1e-3, "rho": 0.05, "lipschitz": 1.0, "T": 8}


def expected_hidden_sensitivity() -> np.ndarray:
    """E_1 … E_T of the recursion (text form of (18), exact minimisers), shape (T,)."""
    v = hidden_sensitivity_data()
    return np.asarray(accounting.zhang2017_pvp_hidden_sensitivity(
        v["T"], local_size=v["m"], lam=v["lam"], rho=v["rho"], n_neighbors=v["degree"], lipschitz=v["lipschitz"]),
        float).reshape(-1)


def check_hidden_sensitivity(answer) -> Feedback:
    v = hidden_sensitivity_data()
    m, D, lam, rho, c, T = v["m"], v["degree"], v["lam"], v["rho"], v["lipschitz"], v["T"]
    mu = lam + 2 * rho * D
    eq18 = accounting.zhang2017_pvp_hidden_sensitivity(T, local_size=m, lam=lam, rho=rho, n_neighbors=D,
                                                       lipschitz=c, form="eq18")

    def recursion(curvature):
        E, out = 0.0, []
        for _ in range(T):
            E = (2 * c / m + rho * D * E) / curvature
            out.append(E)
        return np.array(out)

    return check(
        "sensitivities Eₜ, t = 1 … T, of the eight broadcasts", answer, expected_hidden_sensitivity(), rtol=1e-9,
        praise="the hidden fₚ(t) can drift apart by more each iteration, but the ρ-term pulls it back: Eₜ grows "
               "towards 2c/(m(λ + ρNₚ)), still far below the paper's 2c/(mλ).",
        mistakes={
            "every entry equals the first: you held fₚ(t) fixed, as Appendix B does — but fₚ(t) is never released, "
            "so under D′ it may differ too, by Eₜ₋₁":
                lambda e: np.full(T, 2 * c / (m * mu)),
            "that is the paper's constant 2c/(mλ): it uses only the regulariser's curvature λ, not the ρ-term's 2ρNₚ":
                lambda e: np.full(T, 2 * c / (m * lam)),
            "that is the recursion for the displayed (18), where −εₚ(t) = fₚ(t) − Vₚ(t) doubles the weight of the "
            "hidden state (κ = 2); the exercise uses the text's centre ½(fₚ(t) + Vⱼ(t)) (κ = 1)":
                lambda e: np.asarray(eq18, float).reshape(-1),
            "you divided by λ alone in every step; the strong convexity of (18) is λ + 2ρNₚ":
                lambda e: recursion(lam),
        },
        hint="E₀ = 0 and Eₜ = (2c/m + ρNₚ·Eₜ₋₁) / (λ + 2ρNₚ): the data term moves the minimiser by at most "
             "2c/m over the curvature, and the hidden fₚ(t−1) enters the linear term with weight ρNₚ.")
