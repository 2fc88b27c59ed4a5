"""Huang et al. (2019)'s live panel: DP-ADMM on a star of agents that split Adult (book/huang2019.ipynb)."""

from __future__ import annotations

import functools
from typing import Any

from dpadmm_lite import datasets, problems
from dpadmm_lite.registry import run
from ._common import (agents_control, budget, delta_control, epsilon_control, first_then_every_fifth, integer,
                      iterations_control, one_of, real, run_line)

#: λ/n of Huang et al. (2019), Sec. VI-C, and their ρ (book/huang2019.ipynb).
HUANG2019_LAM, HUANG2019_RHO = 1e-6, 0.1


@functools.lru_cache(maxsize=1)
def _adult():
    """Adult, read once for both regularisers (reading it is slow in the browser)."""
    return datasets.load_adult()


@functools.lru_cache(maxsize=2)
def huang2019_problem(regularizer: str = "l2") -> problems.Problem:
    """Logistic regression on all 40,000 Adult training records with the paper's λ (book/huang2019.ipynb)."""
    one_of("regularizer", regularizer, ("l1", "l2"))
    X_train, y_train, X_test, y_test = _adult()
    return problems.logistic(X_train, y_train, HUANG2019_LAM, regularizer, X_test=X_test, y_test=y_test)


#: The methods of the chapter's chart and their registered algorithms.
METHODS = {"DP-ADMM": "dp_admm_star", "DP-SGD": "dp_sgd_star"}


def huang2019_star(epsilon: float = 1.0, delta: float = 1e-3, regularizer: str = "l2", iterations: int = 40,
                   n_agents: int = 100, calibration: str = "accountant", seed: int = 0, method: str = "DP-ADMM",
                   rho: float = HUANG2019_RHO) -> dict[str, Any]:
    """DP-ADMM (or the DP-SGD baseline) on a star of ``n_agents`` agents that split Adult (Huang et al.
    2019; book/huang2019.ipynb): the test error of the global model along the run, as the rows of the
    chapter's chart "DP-ADMM and DP-SGD on Adult, 100 agents" — the chapter's sweep for that chart
    and its JupyterLab panel call this function, and the site's "Run live" re-runs it.

    Parameters
    ----------
    epsilon : float
        End-to-end ε in [0.01, 10] (``calibration="paper"``: the paper's reading).
    delta : float
        δ in [1e-8, 1e-2].
    regularizer : str
        "l1" or "l2".
    iterations : int
        In [1, 100].
    n_agents : int
        In [2, 100].
    calibration : str
        "accountant" or "paper".
    seed : int
        ≥ 0.
    method : str
        "DP-ADMM" (``dp_admm_star``) or "DP-SGD" (``dp_sgd_star``).
    rho : float
        ADMM penalty ρ in [1e-4, 100] (default: the paper's, Sec. VI-C).

    Returns
    -------
    dict
        ``rows`` at iterations 1–9, then every fifth and the last (iteration, test error, lo = hi =
        test error, augmented objective, empirical loss, method, regularizer, epsilon, delta, and
        ε spent: the unified accountant's ε of the run) and ``summary`` (privacy included).
    """
    one_of("method", method, METHODS)
    one_of("calibration", calibration, ("accountant", "paper"))
    epsilon, delta = budget(epsilon), real("delta", delta, 1e-8, 1e-2)
    iterations = integer("iterations", iterations, 1, 100)
    problem = huang2019_problem(regularizer)
    trace = run(METHODS[method], problem, epsilon=epsilon, delta=delta, rho=real("rho", rho, 1e-4, 1e2),
                iterations=iterations, n_agents=integer("n_agents", n_agents, 2, 100),
                seed=integer("seed", seed, 0, 2 ** 32 - 1), calibration=calibration)
    error, objective = trace.metrics["test_error"], trace.metrics["augmented_objective"]
    loss, spent = trace.metrics["empirical_loss"], float(trace.privacy.epsilon)
    rows = [{"iteration": int(k), "test error": float(error[k - 1]), "lo": float(error[k - 1]),
             "hi": float(error[k - 1]), "augmented objective": float(objective[k - 1]),
             "empirical loss": float(loss[k - 1]), "method": method, "regularizer": regularizer,
             "epsilon": epsilon, "delta": delta, "ε spent": spent} for k in first_then_every_fifth(iterations)]
    return {"rows": rows, "summary": run_line(trace, name=method, metric="accuracy", paper=True)}


PANELS = {
    "huang2019": {
        "page": "book/huang2019",
        "chart": "DP-ADMM and DP-SGD on Adult, 100 agents",
        "function": "huang2019_star",
        "controls": [
            epsilon_control(1.0), delta_control(1e-3),
            {"name": "regularizer", "label": "regulariser", "kind": "select", "value": "l2",
             "options": [["ℓ1", "l1"], ["ℓ2", "l2"]]},
            agents_control(100, 100), iterations_control(40, 100),
        ],
    },
}
