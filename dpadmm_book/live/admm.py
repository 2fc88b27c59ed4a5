"""The ADMM chapter's live panel: consensus ADMM on a graph (book/admm.ipynb, "Consensus on a graph")."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from dpadmm_lite import datasets, problems, topology
from dpadmm_lite.registry import run
from ._common import agents_control, integer, iterations_control, log_spaced, one_of, real, run_line, topology_control


@functools.lru_cache(maxsize=1)
def admm_problem() -> problems.Problem:
    """The ADMM chapter's ℓ2-logistic problem (book/admm.ipynb, "Consensus on a graph"): 2,500
    synthetic samples with 20 features, 80 % for training, λ = 1e-3. The chapter's static charts,
    its JupyterLab panel and the site's live panel all run on this one problem."""
    X, y, _ = datasets.make_classification(2500, 20, seed=0)
    X_train, y_train, X_test, y_test = datasets.train_test_split(X, y, test_fraction=0.2, seed=0)
    return problems.logistic(X_train, y_train, lam=1e-3, penalty="l2", X_test=X_test, y_test=y_test)


#: The panel's first draw: the setting the chapter's static chart "pick ρ and the network" opens on (ρ = 0.01,
#: the ring, ten agents, the published book's 100 iterations).
DEFAULTS = {"rho": 0.01, "topology_name": "ring", "n_agents": 10, "iterations": 100}


def admm_consensus(rho: float = 0.01, topology_name: str = "ring", n_agents: int = 10,
                   iterations: int = 100, seed: int = 0) -> dict[str, Any]:
    """Consensus ADMM on a graph (book/admm.ipynb, Explore): the objective gap and the consensus
    violation at log-spaced iterations, as the rows of the chapter's "pick ρ and the network" chart.

    Parameters
    ----------
    rho : float
        ADMM penalty ρ in [1e-4, 1e2].
    topology_name : str
        One of :data:`dpadmm_lite.topology.NAMES`.
    n_agents : int
        Number of agents in [2, 30].
    iterations : int
        Number of iterations in [1, 200].
    seed : int
        Seed of the run (random graphs), ≥ 0.

    Returns
    -------
    dict
        ``rows`` (iteration, metric, value, rho, topology), ``summary`` (one short line: the final
        objective gap and consensus violation)
        and ``iterations_to_gap`` (the first iteration whose objective gap is below 1e-6, or
        ``None`` when the run never gets there).
    """
    rho = real("rho", rho, 1e-4, 1e2)
    one_of("topology_name", topology_name, topology.NAMES)
    n_agents, iterations = integer("n_agents", n_agents, 2, 30), integer("iterations", iterations, 1, 200)
    trace = run("admm_graph", admm_problem(), rho=rho, iterations=iterations, topology=topology_name,
                n_agents=n_agents, seed=integer("seed", seed, 0))
    keep = log_spaced(iterations)
    rows = [{"iteration": int(k), "metric": metric, "value": max(float(series[k - 1]), 1e-16),
             "rho": rho, "topology": topology_name}
            for metric, series in (("objective gap", trace.objective_gap),
                                   ("consensus violation", trace.consensus_violation))
            for k in keep]
    below = np.flatnonzero(np.asarray(trace.objective_gap) < 1e-6)
    summary = run_line(trace, name=f"Consensus ADMM on the {topology.label(topology_name)}", metric="gap")
    summary = summary.replace(";", f", consensus violation {trace.consensus_violation[-1]:.3g};", 1)
    return {"rows": rows, "summary": summary,
            "iterations_to_gap": int(below[0]) + 1 if len(below) else None}


PANELS = {
    "admm": {
        "page": "book/admm",
        "chart": "Consensus ADMM: pick ρ and the network",
        "function": "admm_consensus",
        "controls": [
            {"name": "rho", "label": "ρ", "kind": "log", "value": DEFAULTS["rho"], "min": 1e-4, "max": 1e2, "step": 0.1},
            topology_control(DEFAULTS["topology_name"]), agents_control(DEFAULTS["n_agents"], 30),
            iterations_control(DEFAULTS["iterations"], 200),
        ],
    },
}
