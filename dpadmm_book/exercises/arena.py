"""Checks for the exercises of the chapter "One budget, every algorithm" (the arena).

Each ``*_data()`` returns the inputs of an exercise; each ``check_*`` takes the student's
answer and returns a :class:`~dpadmm_book.exercises.Feedback` (✓ with what the answer shows,
or ✗ with the mistake it recognises and a hint), never raising. The expected values are computed
here with the library, so the notebook does not give them away.
"""

from __future__ import annotations

import pandas as pd

from dpadmm_lite import accounting
from . import Feedback, check, feedback, not_answered

__all__ = ["tuning_data", "expected_choice", "check_choice", "noise_data", "expected_sigma", "check_sigma",
           "tuning_cost_data", "expected_tuning_epsilon", "check_tuning_epsilon"]


# ---------------------------------------------------------------------- exercise 1: choose on validation
def tuning_data() -> pd.DataFrame:
    """A small tuning sweep: four candidate settings of one algorithm, three seeds each, with the
    validation error *and* (recorded by a careless colleague) the test error of every run."""
    rows = {
        # config:            validation errors (3 seeds)     test errors (3 seeds)
        '{"rho": 0.01}': ((0.205, 0.210, 0.208), (0.186, 0.190, 0.189)),  # best on the test split
        '{"rho": 0.1}': ((0.201, 0.203, 0.202), (0.199, 0.205, 0.204)),   # best mean on validation
        '{"rho": 1.0}': ((0.185, 0.250, 0.240), (0.210, 0.212, 0.215)),   # the luckiest single seed
        '{"rho": 10.0}': ((0.260, 0.262, 0.258), (0.251, 0.262, 0.259)),  # the worst
    }
    return pd.DataFrame([
        {"config": config, "seed": seed, "validation_error": val[seed], "test_error": test[seed]}
        for config, (val, test) in rows.items() for seed in range(3)
    ])


def expected_choice() -> str:
    """The setting with the lowest mean validation error over the seeds."""
    return str(tuning_data().groupby("config")["validation_error"].mean().idxmin())


def check_choice(answer) -> Feedback:
    what = "the setting chosen on the validation split"
    if answer is None or answer is Ellipsis:
        return not_answered(what)
    data = tuning_data()
    answer = str(answer)
    if answer not in set(data["config"]):
        return feedback(what, False, f"{answer!r} is not one of the settings in the `config` column.",
                        hint="group the rows by `config` and return one of its values.")
    if answer == expected_choice():
        return feedback(what, True, "you ranked the settings by their mean validation error over the seeds, and "
                                    "left the test split alone: it can still give an honest estimate of the winner.")
    by = data.groupby("config")
    if answer == by["test_error"].mean().idxmin():
        return feedback(what, False, "this is the best setting on the *test* split. A setting chosen by its test "
                                     "error makes that test error an optimistic estimate: the test split is used "
                                     "once, after the choice.", hint="use only the `validation_error` column.")
    if answer == by["validation_error"].min().idxmin():
        return feedback(what, False, "this setting has the best *single* seed, not the best on average: ranking by "
                                     "the minimum rewards the luckiest draw of the noise.",
                        hint="average over the seeds before you compare.")
    if answer == by["validation_error"].mean().idxmax():
        return feedback(what, False, "this is the *worst* setting: an error is better when it is lower.",
                        hint="idxmin, not idxmax.")
    return feedback(what, False, "not the setting with the lowest mean validation error.",
                    hint="data.groupby('config')['validation_error'].mean() gives one number per setting.")


# ---------------------------------------------------------------------- exercise 2: the noise T releases need
def noise_data() -> dict:
    """A centralized algorithm releasing T noisy mean gradients of the logistic loss (‖∇ℓ‖ ≤ c)."""
    return {"epsilon": 1.0, "delta": 1e-6, "iterations": 200, "n": 10_000, "lipschitz": 1.0}


def expected_sigma() -> float:
    """σ of every release: the accountant's noise multiplier for T releases times the replace-one
    sensitivity 2c/n of a mean gradient."""
    v = noise_data()
    z = accounting.calibrate_noise(v["epsilon"], v["delta"], v["iterations"])
    return z * 2 * v["lipschitz"] / v["n"]


def check_sigma(answer) -> Feedback:
    v = noise_data()
    eps, delta, T, n, c = v["epsilon"], v["delta"], v["iterations"], v["n"], v["lipschitz"]
    return check(
        "σ of each of the T releases", answer, expected_sigma(), rtol=1e-3,
        praise="T releases of a mean gradient, each with replace-one sensitivity 2c/n, composed by the accountant "
               "to (ε, δ) end to end: exactly what `calibration=\"accountant\"` does inside every algorithm.",
        mistakes={
            "half the expected value: Δ = c/n is the add/remove sensitivity; one record *replaced* moves the mean "
            "gradient by up to 2c/n": lambda e: e / 2,
            "this is the noise for *one* release: the budget must cover all T of them":
                lambda e: accounting.calibrate_noise(eps, delta, 1) * 2 * c / n,
            "this is basic composition (ε/T and δ/T per release with the classic Gaussian mechanism): valid, but "
            "far more noise than the accountant needs":
                lambda e: accounting.classic_gaussian_sigma(2 * c / n, eps / T, delta / T),
            "you found the noise multiplier z = σ/Δ; multiply it by the sensitivity Δ = 2c/n":
                lambda e: accounting.calibrate_noise(eps, delta, T),
        },
        hint="accounting.calibrate_noise(ε, δ, T) is the multiplier z = σ/Δ for T releases.")


# ---------------------------------------------------------------------- exercise 3: what private tuning costs
def tuning_cost_data() -> dict:
    """K candidate settings, each trained on the same data with the noise that makes one run (1, 10⁻⁶)-DP."""
    delta, T = 1e-6, 100
    return {"candidates": 4, "iterations": T, "delta": delta,
            "noise_multiplier": accounting.calibrate_noise(1.0, delta, T), "epsilon_per_run": 1.0}


def expected_tuning_epsilon() -> float:
    """ε of releasing all K runs: K·T Gaussian releases of the same multiplier, composed by the accountant."""
    v = tuning_cost_data()
    return accounting.gaussian_epsilon(v["noise_multiplier"], v["candidates"] * v["iterations"], v["delta"])


def check_tuning_epsilon(answer) -> Feedback:
    v = tuning_cost_data()
    K = v["candidates"]
    return check(
        "ε of the K tuning runs together", answer, expected_tuning_epsilon(), rtol=1e-3,
        praise="the K runs read the same records, so their releases compose: about √K times the ε of one run "
               "under the accountant, not K times. This is the cost the arena's reported ε leaves out: its "
               "candidate runs read the same training records as the final one.",
        mistakes={
            "this is the ε of *one* run: the other K − 1 runs read the same records and also leak":
                lambda e: v["epsilon_per_run"],
            "this is basic composition (K·ε): a valid bound, but the accountant composes the K·T Gaussian releases "
            "much more tightly": lambda e: K * v["epsilon_per_run"],
        },
        hint="all K·T releases have the same noise multiplier: accounting.gaussian_epsilon(z, steps, δ).")
