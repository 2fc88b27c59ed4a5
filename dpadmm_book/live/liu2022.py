"""Liu et al. (2022)'s live panel: DP-VRADMM and DP-SADMM with Laplacian smoothing (book/liu2022.ipynb)."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from dpadmm_lite import problems
from dpadmm_lite.registry import run
from ._common import budget, delta_control, epsilon_control, integer, one_of, real, run_line
from ._feature_graph import fused_lasso_problem

#: λ₁ of the fused lasso (in the range of Liu et al.'s Table II), their δ (Sec. V-B), and the live rows
#: (book/liu2022.ipynb).
LIU2022_LAM, LIU2022_DELTA, LIU2022_LIVE_ROWS = 1e-4, 5e-4, 4_000
#: Each private algorithm (the book's name → registry name) and its noise-free twin.
_PAIRS = {"DP-VRADMM": ("dp_vradmm", "SVRG-ADMM", "svrg_admm"), "DP-SADMM": ("dp_sadmm", "SADMM", "sadmm")}
_CHOICES = {"both": tuple(_PAIRS), "DP-VRADMM": ("DP-VRADMM",), "DP-SADMM": ("DP-SADMM",)}


@functools.lru_cache(maxsize=1)
def liu2022_problem() -> problems.Problem:
    """The graph-guided fused lasso of the chapter's live panels: a seeded random 4,000 of the Adult
    training rows left once the public sample (2,000 rows, seed 2022) is set aside, λ₁ = 1e-4, and
    A = [W; I] with W the feature graph of the public sample (shipped, see
    :mod:`dpadmm_book.live._feature_graph`): no training row enters the graph."""
    return fused_lasso_problem("liu2022", LIU2022_LIVE_ROWS, LIU2022_LAM)


def run_options(name: str, n: int, batch_size: int, epochs: int) -> dict[str, int]:
    """``S`` epochs of DP-VRADMM (SVRG-ADMM), or the same number of noisy steps ``S·m``, ``m = ⌈2n/b⌉``,
    of DP-SADMM (SADMM), recorded once per pass over the data."""
    if name in ("dp_vradmm", "svrg_admm"):
        return dict(iterations=epochs, batch_size=batch_size)
    return dict(iterations=epochs * math.ceil(2 * n / batch_size), batch_size=batch_size,
                record_every=math.ceil(n / batch_size))


@functools.lru_cache(maxsize=32)
def _twin(name: str, rho: float, nu: float, batch_size: int, epochs: int, seed: int):
    """A noise-free run: it does not depend on ε or δ, so a move of those re-runs the private ones alone."""
    problem = liu2022_problem()
    return run(name, problem, rho=rho, seed=seed, nu=nu, **run_options(name, problem.n, batch_size, epochs))


def liu2022_curves(epsilon: float = 0.4, nu: float = 2.0, rho: float = 0.01, algorithm: str = "both",
                   delta: float = LIU2022_DELTA, batch_size: int = 50, epochs: int = 4, seed: int = 0,
                   references: bool = False) -> dict[str, Any]:
    """DP-VRADMM and DP-SADMM (Liu et al. 2022, Algorithms 1 and 2) with Laplacian smoothing ν on the
    chapter's live problem (:func:`liu2022_problem`): the objective gap and the test accuracy against
    the passes over the data, as the rows of the chapter's figure "DP-VRADMM and DP-SADMM on 4,000
    Adult rows: objective gap and test accuracy" (both of its charts).

    Parameters
    ----------
    epsilon : float
        End-to-end ε in [0.01, 10].
    nu : float
        Laplacian smoothing ν in [0, 5] (0: no smoothing).
    rho : float
        ADMM penalty ρ in [1e-3, 1].
    algorithm : str
        "both", "DP-VRADMM" or "DP-SADMM".
    delta : float
        δ in [1e-8, 1e-2].
    batch_size : int
        Minibatch size b in [10, 500].
    epochs : int
        S in [1, 10]: DP-VRADMM's epochs; DP-SADMM takes the same number of noisy steps.
    seed : int
        Seed of the minibatches and the noise, ≥ 0.
    references : bool
        Also run each chosen algorithm at ν = 0 (same seed: the same minibatches and noise draws) and its
        noise-free twin (the chapter's JupyterLab panel).

    Returns
    -------
    dict
        ``rows`` (algorithm, passes, objective_gap, test_accuracy, nu, epsilon, one per recorded point),
        ``summary`` (the first chosen algorithm's run, privacy included, and its σ) and ``epsilon_spent``
        (algorithm → the unified accountant's ε).
    """
    epsilon, nu = budget(epsilon), real("nu", nu, 0.0, 5.0)
    rho, delta = real("rho", rho, 1e-3, 1.0), real("delta", delta, 1e-8, 1e-2)
    chosen = _CHOICES[one_of("algorithm", algorithm, _CHOICES)]
    batch_size, epochs = integer("batch_size", batch_size, 10, 500), integer("epochs", epochs, 1, 10)
    seed = integer("seed", seed, 0, 2 ** 32 - 1)
    one_of("references", references, (False, True))
    problem = liu2022_problem()
    runs = {}
    for label in chosen:
        private, twin_label, twin = _PAIRS[label]
        settings = dict(epsilon=epsilon, delta=delta, rho=rho, seed=seed,
                        **run_options(private, problem.n, batch_size, epochs))
        runs[label] = run(private, problem, nu=nu, **settings)
        if references:
            runs[f"{label}, ν = 0"] = run(private, problem, nu=0.0, **settings)
            runs[f"{twin_label} (no noise)"] = _twin(twin, rho, nu, batch_size, epochs, seed)
    rows = [{"algorithm": label, "passes": float(passes), "objective_gap": float(gap),
             "test_accuracy": float(accuracy), "nu": nu, "epsilon": epsilon}
            for label, trace in runs.items()
            for passes, gap, accuracy in zip(np.round(trace.metrics["passes"], 3), trace.objective_gap,
                                             trace.test_accuracy)]
    first = runs[chosen[0]]
    summary = run_line(first, name=chosen[0], count=round(float(first.metrics["passes"][-1]), 1), unit="passes",
                       metric="gap", paper=True)  # the chart's axis counts passes over the data
    return {"rows": rows, "summary": f"{summary}; σ = {first.noise['sigma']:.3g}",
            "epsilon_spent": {label: float(runs[label].privacy.epsilon) for label in chosen}}


PANELS = {
    "liu2022": {
        "page": "book/liu2022",
        "chart": f"DP-VRADMM and DP-SADMM on {LIU2022_LIVE_ROWS:,} Adult rows: objective gap and test accuracy",
        "function": "liu2022_curves",
        "controls": [
            epsilon_control(0.4),
            {"name": "nu", "label": "ν", "kind": "int", "value": 2.0, "min": 0, "max": 5},
            {"name": "rho", "label": "ρ", "kind": "log", "value": 0.01, "min": 1e-3, "max": 1.0, "step": 0.25},
            {"name": "algorithm", "label": "algorithm", "kind": "select", "value": "both",
             "options": [["DP-VRADMM and DP-SADMM", "both"], ["DP-VRADMM", "DP-VRADMM"], ["DP-SADMM", "DP-SADMM"]]},
            delta_control(LIU2022_DELTA),
        ],
    },
}
