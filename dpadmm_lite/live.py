"""The live panels of the published site: what a "Run live" button re-runs in the reader's browser.

The site's "Run live" panels (``site_static/live/``) run Python in WebAssembly (Pyodide) in a
Web Worker, and the worker calls this module — the library itself, not a JavaScript port::

    from dpadmm_lite import live
    live.run_panel("admm", {"rho": 0.03, "topology": "ring", "n_agents": 10, "iterations": 60})

Each panel is a pure function of its control values that returns the rows of the chapter's static
chart (same fields, so the page draws them with that chart's own Vega-Lite spec) and the run's
summary line (privacy included). :data:`PANELS` describes each panel's controls for the page;
``tools/bookbuild/live.py`` writes it into the site. Only numpy and scipy are needed here: no
pandas, no Altair, no widgets.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from . import datasets, problems, topology
from .registry import run

__all__ = ["PANELS", "ZHANG2017_LAM", "accountants", "admm_consensus", "admm_problem", "ranges", "run_panel",
           "zhang2017_network", "zhang2017_problem", "huang2019_problem", "huang2019_star"]


@functools.lru_cache(maxsize=1)
def admm_problem() -> problems.Problem:
    """The ADMM chapter's ℓ2-logistic problem (book/admm.ipynb, "Consensus on a graph"): 2,500
    synthetic samples with 20 features, 80 % for training, λ = 1e-3. The chapter's static charts,
    its JupyterLab panel and the site's live panel all run on this one problem."""
    X, y, _ = datasets.make_classification(2500, 20, seed=0)
    X_train, y_train, X_test, y_test = datasets.train_test_split(X, y, test_fraction=0.2, seed=0)
    return problems.logistic(X_train, y_train, lam=1e-3, penalty="l2", X_test=X_test, y_test=y_test)


def _shown_at(iterations: int, points: int = 20) -> np.ndarray:
    """The iterations a chart keeps (log-spaced, as the chapter's sweep keeps them)."""
    return np.unique(np.round(np.logspace(0, math.log10(iterations), points)).astype(int))


def admm_consensus(rho: float = 0.03, topology_name: str = "ring", n_agents: int = 10,
                   iterations: int = 60, seed: int = 0) -> dict[str, Any]:
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
        ``rows`` (iteration, metric, value, rho, topology), ``summary`` (the run's summary line)
        and ``iterations_to_gap`` (the first iteration whose objective gap is below 1e-6, or
        ``None`` when the run never gets there).
    """
    if isinstance(rho, bool) or not isinstance(rho, (int, float, np.floating)) or not 1e-4 <= rho <= 1e2:
        raise ValueError(f"rho must be in [0.0001, 100], got {rho!r}")
    if topology_name not in topology.NAMES:
        raise ValueError(f"topology_name must be one of {list(topology.NAMES)}, got {topology_name!r}")
    for name, value, lo, hi in (("n_agents", n_agents, 2, 30), ("iterations", iterations, 1, 200)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
            raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer in [0, ∞), got {seed!r}")
    trace = run("admm_graph", admm_problem(), rho=rho, iterations=int(iterations), topology=topology_name,
                n_agents=int(n_agents), seed=int(seed))
    rho = float(rho)
    keep = _shown_at(int(iterations))
    rows = [{"iteration": int(k), "metric": metric, "value": max(float(series[k - 1]), 1e-16),
             "rho": rho, "topology": topology_name}
            for metric, series in (("objective gap", trace.objective_gap),
                                   ("consensus violation", trace.consensus_violation))
            for k in keep]
    below = np.flatnonzero(np.asarray(trace.objective_gap) < 1e-6)
    return {"rows": rows, "summary": trace.summary(),
            "iterations_to_gap": int(below[0]) + 1 if len(below) else None}


def accountants(noise_multiplier: float = 1.0, sampling_rate: float = 0.01, delta: float = 1e-5,
                iterations: int = 100, points: int = 12) -> dict[str, Any]:
    """ε after T releases of the (subsampled) Gaussian mechanism by two accountants, Rényi DP and
    the privacy loss distribution, plus the exact μ-GDP value without sampling (book/privacy.ipynb,
    "The same noise, two accountants"), as the rows of that chapter's chart.

    Parameters
    ----------
    noise_multiplier : float
        σ/Δ in [0.3, 20].
    sampling_rate : float
        q in [0.001, 1] (values above 0.999 count as 1: no sampling).
    delta : float
        δ in [1e-8, 1e-2].
    iterations : int
        The last T shown, in [1, 1000].
    points : int
        How many log-spaced T in [1, ``iterations``] (fewer where they round to the same T), in [2, 50].
    """
    from . import accounting as acc

    for name, value, lo, hi in (("noise_multiplier", noise_multiplier, 0.3, 20.0),
                                ("sampling_rate", sampling_rate, 1e-3, 1.0), ("delta", delta, 1e-8, 1e-2)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not lo <= value <= hi:
            raise ValueError(f"{name} must be in [{lo:g}, {hi:g}], got {value!r}")
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or not 1 <= iterations <= 1000:
        raise ValueError(f"iterations must be an integer in [1, 1000], got {iterations!r}")
    if isinstance(points, bool) or not isinstance(points, (int, np.integer)) or not 2 <= points <= 50:
        raise ValueError(f"points must be an integer in [2, 50], got {points!r}")
    z, delta = float(noise_multiplier), float(delta)
    q = 1.0 if sampling_rate > 0.999 else float(sampling_rate)
    rows = []
    for k in (int(k) for k in _shown_at(int(iterations), int(points))):
        found = {"Rényi DP": acc.rdp_gaussian_epsilon(z, k, delta, q),
                 "privacy loss distribution": acc.pld_gaussian_epsilon(z, k, delta, q)}
        if q == 1.0:
            found["μ-GDP (exact)"] = acc.gdp_epsilon(math.sqrt(k) / z, delta)
        rows += [{"T": k, "accountant": name, "epsilon": float(eps), "noise_multiplier": z,
                  "sampling_rate": q, "delta": delta} for name, eps in found.items()]
    last = {r["accountant"]: r["epsilon"] for r in rows if r["T"] == rows[-1]["T"]}
    summary = (f"after T = {rows[-1]['T']} releases: RDP ε = {last['Rényi DP']:.4g}, "
               f"PLD ε = {last['privacy loss distribution']:.4g} (RDP over-reports by "
               f"{last['Rényi DP'] / last['privacy loss distribution'] - 1:.1%})")
    if q == 1.0:
        summary += f", exact ε = {last['μ-GDP (exact)']:.4g}"
    return {"rows": rows, "summary": summary}


#: λ of Zhang & Zhu (2017), Sec. V, in the book's scale (the paper's regulariser weight over its C^R): DVP
#: 10^-2.5/1750, PVP 10^-1/146; the non-private reference runs on DVP's problem (book/zhang2017.ipynb).
ZHANG2017_LAM = {"dvp_graph": 10 ** -2.5 / 1750, "pvp_graph": 0.1 / 146, "admm_graph": 10 ** -2.5 / 1750}
_ZHANG2017_NAMES = {"DVP": "dvp_graph", "PVP": "pvp_graph", "non-private": "admm_graph"}


@functools.lru_cache(maxsize=8)
def zhang2017_problem(lam: float, rows: int = 8_000) -> problems.Problem:
    """ℓ2-logistic regression on the first ``rows`` records of Adult, with its reference optimum
    (book/zhang2017.ipynb: the chapter's experiments and its live panel, which uses 8,000 rows)."""
    X_train, y_train, X_test, y_test = datasets.load_adult()
    problem = problems.logistic(X_train[:rows], y_train[:rows], lam, "l2", X_test=X_test, y_test=y_test)
    problem.reference_optimum()
    return problem


@functools.lru_cache(maxsize=32)
def _zhang2017_reference(problem: problems.Problem, **settings) -> Any:
    """The non-private run next to the private one, kept: it does not depend on ε, δ or the algorithm,
    so a move of those re-runs the private algorithm alone (as the chapter's panel does)."""
    return run("admm_graph", problem, **settings)


def zhang2017_network(algorithm: str = "DVP", epsilon: float = 4.0, topology_name: str = "ring",
                      n_agents: int = 20, iterations: int = 30, rho: float = 0.1, delta: float = 1e-5,
                      lam: float | None = None, calibration: str = "accountant", rows: int = 8_000,
                      seed: int = 0) -> dict[str, Any]:
    """DVP or PVP (Zhang & Zhu 2017) on a network of ``n_agents`` nodes that split Adult, next to
    the non-private ADMM on the same graph (book/zhang2017.ipynb, Explore): the test error of the
    network's average model along the run, as the rows of the chapter's chart "Adult, 20 nodes, …".

    Parameters
    ----------
    algorithm : str
        "DVP", "PVP" or "non-private".
    epsilon : float
        End-to-end ε in [0.01, 10] (with ``calibration="paper"``: the paper's α per iteration).
    topology_name : str
        One of :data:`dpadmm_lite.topology.NAMES`.
    n_agents : int
        Nodes in [2, 40].
    iterations : int
        In [1, 200].
    rho, delta : float
        ADMM penalty in [1e-3, 1e2]; δ in [1e-8, 1e-2].
    lam : float or None
        λ in [1e-8, 1]; ``None``: the paper's λ for ``algorithm`` (:data:`ZHANG2017_LAM`).
    calibration : str
        "accountant" (ε end to end) or "paper".
    rows : int
        Adult's first ``rows`` training records, in [1000, 40000].
    seed : int
        ≥ 0.

    Returns
    -------
    dict
        ``rows`` (iteration, test error, empirical loss, lo = hi = test error, algorithm, epsilon,
        topology), ``summary`` (the private run's summary line, privacy included), ``node_loss``
        and ``node_disagreement`` (per node, at the last iteration).
    """
    if algorithm not in _ZHANG2017_NAMES:
        raise ValueError(f"algorithm must be one of {list(_ZHANG2017_NAMES)}, got {algorithm!r}")
    if topology_name not in topology.NAMES:
        raise ValueError(f"topology_name must be one of {list(topology.NAMES)}, got {topology_name!r}")
    if calibration not in ("accountant", "paper"):
        raise ValueError(f"calibration must be 'accountant' or 'paper', got {calibration!r}")
    for name, value, lo, hi in (("epsilon", epsilon, 0.01, 10.0), ("rho", rho, 1e-3, 1e2), ("delta", delta, 1e-8, 1e-2),
                                ("lam", 1e-3 if lam is None else lam, 1e-8, 1.0)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not lo <= value <= hi:
            raise ValueError(f"{name} must be in [{lo:g}, {hi:g}], got {value!r}")
    for name, value, lo, hi in (("n_agents", n_agents, 2, 40), ("iterations", iterations, 1, 200),
                                ("rows", rows, 1000, 40_000), ("seed", seed, 0, 2 ** 32 - 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
            raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
    name = _ZHANG2017_NAMES[algorithm]
    problem = zhang2017_problem(float(ZHANG2017_LAM[name] if lam is None else lam), int(rows))
    settings = dict(rho=float(rho), iterations=int(iterations), topology=topology_name, n_agents=int(n_agents),
                    seed=int(seed))
    runs = {"non-private": _zhang2017_reference(problem, **settings)}
    if name != "admm_graph":
        runs[algorithm] = run(name, problem, epsilon=float(epsilon), delta=float(delta), calibration=calibration,
                              **settings)
    shown = np.unique(np.r_[1:10, 10:iterations + 1:5, iterations])
    shown = shown[shown <= iterations]
    out = []
    for label, trace in runs.items():
        error, loss = trace.metrics["test_error"], trace.metrics["empirical_loss"]
        out += [{"iteration": int(k), "test error": float(error[k - 1]), "empirical loss": float(loss[k - 1]),
                 "lo": float(error[k - 1]), "hi": float(error[k - 1]), "algorithm": label,
                 "epsilon": float(epsilon), "topology": topology_name} for k in shown]
    last = runs[algorithm] if algorithm in runs else runs["non-private"]
    return {"rows": out, "summary": last.summary(),
            "node_loss": [float(v) for v in np.asarray(last.params["node_loss"][-1])],
            "node_disagreement": [float(v) for v in np.asarray(last.params["node_disagreement"][-1])]}


#: λ/n of Huang et al. (2019), Sec. VI-C, and their ρ (book/huang2019.ipynb).
HUANG2019_LAM, HUANG2019_RHO = 1e-6, 0.1


@functools.lru_cache(maxsize=2)
def huang2019_problem(regularizer: str = "l2") -> problems.Problem:
    """Logistic regression on all 40,000 Adult training records with the paper's λ (book/huang2019.ipynb)."""
    if regularizer not in ("l1", "l2"):
        raise ValueError(f"regularizer must be 'l1' or 'l2', got {regularizer!r}")
    X_train, y_train, X_test, y_test = datasets.load_adult()
    return problems.logistic(X_train, y_train, HUANG2019_LAM, regularizer, X_test=X_test, y_test=y_test)


def huang2019_star(epsilon: float = 1.0, delta: float = 1e-3, regularizer: str = "l2", iterations: int = 40,
                   n_agents: int = 100, calibration: str = "accountant", seed: int = 0) -> dict[str, Any]:
    """DP-ADMM on a star of ``n_agents`` agents that split Adult (Huang et al. 2019; book/huang2019.ipynb,
    Explore): the test error of the global model along the run, as the rows of the chapter's chart
    "DP-ADMM and DP-SGD on Adult, 100 agents".

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

    Returns
    -------
    dict
        ``rows`` (iteration, test error, lo = hi = test error, method, regularizer, epsilon, delta)
        and ``summary`` (privacy included).
    """
    if calibration not in ("accountant", "paper"):
        raise ValueError(f"calibration must be 'accountant' or 'paper', got {calibration!r}")
    for name, value, lo, hi in (("epsilon", epsilon, 0.01, 10.0), ("delta", delta, 1e-8, 1e-2)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not lo <= value <= hi:
            raise ValueError(f"{name} must be in [{lo:g}, {hi:g}], got {value!r}")
    for name, value, lo, hi in (("iterations", iterations, 1, 100), ("n_agents", n_agents, 2, 100),
                                ("seed", seed, 0, 2 ** 32 - 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
            raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
    problem = huang2019_problem(regularizer)
    trace = run("dp_admm_star", problem, epsilon=float(epsilon), delta=float(delta), rho=HUANG2019_RHO,
                iterations=int(iterations), n_agents=int(n_agents), seed=int(seed), calibration=calibration)
    shown = np.unique(np.r_[1:10, 10:iterations + 1:5, iterations])
    shown = shown[shown <= iterations]
    error = trace.metrics["test_error"]
    rows = [{"iteration": int(k), "test error": float(error[k - 1]), "lo": float(error[k - 1]),
             "hi": float(error[k - 1]), "method": "DP-ADMM", "regularizer": regularizer, "epsilon": float(epsilon),
             "delta": float(delta)} for k in shown]
    return {"rows": rows, "summary": trace.summary()}


#: Every live panel: the chapter (page name under book/), the title of the static chart whose
#: spec the page reuses, the library function, and its controls (name, kind, default, range or
#: options, and how the page shows it: a log slider moves by ``step`` in log₁₀ units).
PANELS: dict[str, dict[str, Any]] = {
    "admm": {
        "page": "book/admm",
        "chart": "Consensus ADMM: pick ρ and the network",
        "function": "admm_consensus",
        "controls": [
            {"name": "rho", "label": "ρ", "kind": "log", "value": 0.03, "min": 1e-4, "max": 1e2, "step": 0.1},
            {"name": "topology_name", "label": "G", "kind": "select", "value": "ring",
             "options": [[topology.label(n), n] for n in topology.NAMES]},
            {"name": "n_agents", "label": "N", "kind": "int", "value": 10, "min": 2, "max": 30},
            {"name": "iterations", "label": "T", "kind": "int", "value": 60, "min": 5, "max": 200},
        ],
    },
    "privacy": {
        "page": "book/privacy",
        "chart": "The same noise, two accountants",
        "function": "accountants",
        "controls": [
            {"name": "noise_multiplier", "label": "σ/Δ", "kind": "log", "value": 1.0, "min": 0.3, "max": 20.0,
             "step": 0.05},
            {"name": "sampling_rate", "label": "q", "kind": "log", "value": 0.01, "min": 1e-3, "max": 1.0, "step": 0.1},
            {"name": "delta", "label": "δ", "kind": "log", "value": 1e-5, "min": 1e-8, "max": 1e-2, "step": 1.0},
            {"name": "iterations", "label": "T", "kind": "int", "value": 100, "min": 1, "max": 1000},
        ],
    },
    "zhang2017": {
        "page": "book/zhang2017",
        "chart": "Adult, 20 nodes, ρ = 0.1, δ = 1e-05",
        "function": "zhang2017_network",
        "controls": [
            {"name": "epsilon", "label": "ε", "kind": "log", "value": 4.0, "min": 0.01, "max": 10.0, "step": 0.05},
            {"name": "algorithm", "label": "algorithm", "kind": "select", "value": "DVP",
             "options": [[a, a] for a in _ZHANG2017_NAMES]},
            {"name": "topology_name", "label": "G", "kind": "select", "value": "ring",
             "options": [[topology.label(n), n] for n in topology.NAMES]},
            {"name": "n_agents", "label": "N", "kind": "int", "value": 20, "min": 2, "max": 40},
            {"name": "iterations", "label": "T", "kind": "int", "value": 30, "min": 5, "max": 60},
        ],
    },
    "huang2019": {
        "page": "book/huang2019",
        "chart": "DP-ADMM and DP-SGD on Adult, 100 agents",
        "function": "huang2019_star",
        "controls": [
            {"name": "epsilon", "label": "ε", "kind": "log", "value": 1.0, "min": 0.01, "max": 10.0, "step": 0.05},
            {"name": "delta", "label": "δ", "kind": "log", "value": 1e-3, "min": 1e-8, "max": 1e-2, "step": 1.0},
            {"name": "regularizer", "label": "regulariser", "kind": "select", "value": "l2",
             "options": [["ℓ1", "l1"], ["ℓ2", "l2"]]},
            {"name": "n_agents", "label": "N", "kind": "int", "value": 100, "min": 2, "max": 100},
            {"name": "iterations", "label": "T", "kind": "int", "value": 40, "min": 5, "max": 100},
        ],
    },
}


def ranges(panel: str) -> dict[str, tuple[float, float]]:
    """The ranges of the numeric controls of the live panel ``panel`` (name → (min, max)), for
    the chapter's JupyterLab panel (``dl.widgets.live(..., ranges=live.ranges("admm"))``): the
    reader moves the same controls over the same ranges in JupyterLab and on the site."""
    if panel not in PANELS:
        raise ValueError(f"panel must be one of {sorted(PANELS)}, got {panel!r}")
    return {c["name"]: (c["min"], c["max"]) for c in PANELS[panel]["controls"] if "min" in c}


def run_panel(panel: str, values: dict[str, Any]) -> dict[str, Any]:
    """Run the live panel ``panel`` (a key of :data:`PANELS`) at the control ``values``."""
    if panel not in PANELS:
        raise ValueError(f"panel must be one of {sorted(PANELS)}, got {panel!r}")
    names = {c["name"] for c in PANELS[panel]["controls"]}
    unknown = set(values) - names
    if unknown:
        raise ValueError(f"values has controls {sorted(unknown)} that panel {panel!r} does not have ({sorted(names)})")
    return globals()[PANELS[panel]["function"]](**values)
