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

__all__ = ["PANELS", "accountants", "admm_consensus", "admm_problem", "ranges", "run_panel"]


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
