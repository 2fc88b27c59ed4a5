"""Xu et al. (2020)'s live panel: DP-ADMM and DP-AccADMM next to their noise-free twins (book/xu2020.ipynb)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from dpadmm_lite import problems
from dpadmm_lite.registry import run
from ._common import budget, delta_control, epsilon_control, integer, iterations_control, one_of, real, run_line
from ._feature_graph import fused_lasso_problem

#: λ of Xu et al.'s Table I, their δ and μ (Sec. V-B), and the live panel's training rows (book/xu2020.ipynb).
XU2020_LAM, XU2020_DELTA, XU2020_MU, XU2020_LIVE_ROWS = 1e-5, 1e-3, 0.5, 4_000
#: Each private algorithm (the book's name → registry name) and its noise-free twin.
_PAIRS = {"DP-ADMM": ("dp_admm", "ADMM", "admm_linearized"), "DP-AccADMM": ("dp_acc_admm", "AccADMM", "acc_admm")}


@functools.lru_cache(maxsize=1)
def xu2020_problem() -> problems.Problem:
    """The graph-guided fused lasso of the chapter's live panel and its curves chart: a seeded random
    4,000 of the Adult training rows left once the public sample (2,000 rows, seed 2020) is set aside,
    λ = 1e-5, and A = [W; I] with W the feature graph of the public sample (shipped, see
    :mod:`dpadmm_book.live._feature_graph`): no training row enters the graph."""
    return fused_lasso_problem("xu2020", XU2020_LIVE_ROWS, XU2020_LAM)


@functools.lru_cache(maxsize=32)
def _twin(name: str, rho: float, iterations: int, eta: float):
    """A noise-free run: it does not depend on ε, δ, μ, the calibration or the seed, so a move of those
    re-runs the private algorithms alone."""
    return run(name, xu2020_problem(), rho=rho, iterations=iterations, eta=eta)


def every_fourth(iterations: int) -> np.ndarray:
    """The iterations the chart keeps: 1, 5, 9, … and the last."""
    k = np.arange(1, iterations + 1)
    return k[(k % 4 == 1) | (k == iterations)]


def xu2020_curves(epsilon: float = 0.1, rho: float = 0.1, delta: float = XU2020_DELTA, iterations: int = 100,
                  seed: int = 0, mu: float = XU2020_MU, step_scale: float = 1.0,
                  calibration: str = "accountant") -> dict[str, Any]:
    """DP-ADMM and DP-AccADMM (Xu et al. 2020, Algorithms 2 and 3) and their noise-free twins on the
    chapter's live problem (:func:`xu2020_problem`): the objective gap along the run, as the rows of
    the chapter's chart "ADMM, AccADMM and their private versions on 4,000 Adult rows".

    Parameters
    ----------
    epsilon : float
        End-to-end ε in [0.01, 10] (``calibration="paper"``: Theorem 1's ε).
    rho : float
        ADMM penalty ρ in [1e-3, 10].
    delta : float
        δ in [1e-8, 1e-2].
    iterations : int
        T in [1, 200].
    seed : int
        Seed of the noise, ≥ 0.
    mu : float
        μ of Theorem 1 in (0, 1) (the paper's calibration only).
    step_scale : float
        The step η as a multiple of 1/L (L the public smoothness bound), in [0.1, 2].
    calibration : str
        "accountant" (ε end to end) or "paper" (Theorem 1).

    Returns
    -------
    dict
        ``rows`` (algorithm, iteration, objective_gap, epsilon, rho at iterations 1, 5, 9, … and T),
        ``test_accuracy`` (algorithm, iteration, test_accuracy at the same iterations), ``summary``
        (DP-ADMM's run, privacy included, with σ and the calibration), ``sigma`` and ``epsilon_spent``
        (the unified accountant's ε of the private runs, which share σ).
    """
    epsilon, rho, delta = budget(epsilon), real("rho", rho, 1e-3, 10.0), real("delta", delta, 1e-8, 1e-2)
    iterations, seed = integer("iterations", iterations, 1, 200), integer("seed", seed, 0, 2 ** 32 - 1)
    mu, step_scale = real("mu", mu, 1e-3, 0.999), real("step_scale", step_scale, 0.1, 2.0)
    one_of("calibration", calibration, ("accountant", "paper"))
    problem = xu2020_problem()
    eta = step_scale / problem.public_smoothness
    runs = {}
    for label, (private, twin_label, twin) in _PAIRS.items():
        runs[twin_label] = _twin(twin, rho, iterations, eta)
        runs[label] = run(private, problem, epsilon=epsilon, delta=delta, rho=rho, iterations=iterations, seed=seed,
                          mu=mu, eta=eta, calibration=calibration)
    keep = every_fourth(iterations)
    rows = [{"algorithm": label, "iteration": int(k), "objective_gap": float(trace.objective_gap[k - 1]),
             "epsilon": epsilon, "rho": rho} for label, trace in runs.items() for k in keep]
    accuracy = [{"algorithm": label, "iteration": int(k), "test_accuracy": float(trace.test_accuracy[k - 1])}
                for label, trace in runs.items() for k in keep]
    private = runs["DP-ADMM"]
    sigma = float(private.noise["sigma"])
    summary = f"{run_line(private, name='DP-ADMM', metric='gap', paper=True)}; σ = {sigma:.3g} (both private runs)"
    return {"rows": rows, "test_accuracy": accuracy, "summary": summary, "sigma": sigma,
            "epsilon_spent": float(private.privacy.epsilon)}


PANELS = {
    "xu2020": {
        "page": "book/xu2020",
        "chart": f"ADMM, AccADMM and their private versions on {XU2020_LIVE_ROWS:,} Adult rows",
        "function": "xu2020_curves",
        "controls": [
            epsilon_control(0.1),
            {"name": "rho", "label": "ρ", "kind": "log", "value": 0.1, "min": 1e-3, "max": 10.0, "step": 0.25},
            delta_control(XU2020_DELTA), iterations_control(100, 200),
        ],
    },
}
