"""What every live panel shares: argument checks that name the parameter and its range, the
iterations a chart keeps, and the controls several panels have (ε, δ, the network)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpadmm_lite import topology


def real(name: str, value: Any, lo: float, hi: float) -> float:
    """``value`` as a float, or a ValueError naming ``name`` and the range [lo, hi]."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not lo <= value <= hi:
        raise ValueError(f"{name} must be in [{lo:g}, {hi:g}], got {value!r}")
    return float(value)


def budget(value: Any, lo: float = 0.01, hi: float = 10.0, name: str = "epsilon") -> float:
    """An end-to-end ε in [lo, hi], or ``math.inf``: no noise (the JupyterLab panel's "∞ (no noise)"
    toggle; the site's slider stops at ``hi``). Else a ValueError naming ``name`` and the range."""
    if isinstance(value, (float, np.floating)) and math.isinf(value) and value > 0:
        return math.inf
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not lo <= value <= hi:
        raise ValueError(f"{name} must be in [{lo:g}, {hi:g}] or math.inf (no noise), got {value!r}")
    return float(value)


def integer(name: str, value: Any, lo: int, hi: float = math.inf) -> int:
    """``value`` as an int, or a ValueError naming ``name`` and the range [lo, hi]."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
        shown = "∞)" if math.isinf(hi) else f"{hi}]"
        raise ValueError(f"{name} must be an integer in [{lo}, {shown}, got {value!r}")
    return int(value)


def one_of(name: str, value: Any, options) -> Any:
    """``value`` if it is one of ``options``, or a ValueError naming ``name`` and the options."""
    if value not in options:
        raise ValueError(f"{name} must be one of {list(options)}, got {value!r}")
    return value


def log_spaced(iterations: int, points: int = 20) -> np.ndarray:
    """The iterations a chart keeps, log-spaced (as the ADMM and privacy chapters' sweeps keep them)."""
    return np.unique(np.round(np.logspace(0, math.log10(iterations), points)).astype(int))


def first_then_every_fifth(iterations: int) -> np.ndarray:
    """Iterations 1–9, then every fifth, then the last (the Huang and Zhang & Zhu charts' points)."""
    shown = np.unique(np.r_[1:10, 10:iterations + 1:5, iterations])
    return shown[shown <= iterations]


def epsilon_control(value: float, lo: float = 0.01, hi: float = 10.0) -> dict[str, Any]:
    """The ε slider (end to end, log scale)."""
    return {"name": "epsilon", "label": "ε", "kind": "log", "value": value, "min": lo, "max": hi, "step": 0.05}


def delta_control(value: float, lo: float = 1e-8, hi: float = 1e-2, name: str = "delta") -> dict[str, Any]:
    """The δ slider (log scale, one decade a step)."""
    return {"name": name, "label": "δ", "kind": "log", "value": value, "min": lo, "max": hi, "step": 1.0}


def topology_control(value: str = "ring") -> dict[str, Any]:
    """The network drop-down (every graph of :data:`dpadmm_lite.topology.NAMES`)."""
    return {"name": "topology_name", "label": "G", "kind": "select", "value": value,
            "options": [[topology.label(n), n] for n in topology.NAMES]}


def agents_control(value: int, hi: int, lo: int = 2) -> dict[str, Any]:
    """The number of agents N."""
    return {"name": "n_agents", "label": "N", "kind": "int", "value": value, "min": lo, "max": hi}


def iterations_control(value: int, hi: int, lo: int = 5) -> dict[str, Any]:
    """The number of iterations T."""
    return {"name": "iterations", "label": "T", "kind": "int", "value": value, "min": lo, "max": hi}


def paper_theorem(guarantee) -> str:
    """The theorem a paper's guarantee comes from, as a chapter names it ("Thm 2" of "Huang et al. 2019, Thm 2
    (ε̄ = c₀√t ε)"): the chapter is the paper's, so its name need not be repeated."""
    source = guarantee.source.split(" (")[0]
    return source.split(", ")[-1] if ", " in source else source


def run_line(trace, name: str | None = None, count: int | float | None = None, unit: str = "iterations",
             metric: str | None = None, paper: bool = False) -> str:
    """A live panel's summary line, short and true: what ran, how long (``count`` ``unit``: iterations, or
    passes over the data where the chart's axis counts those), where it ended, and the privacy it spent end
    to end. No run time: the panel says how long the redraw took, and a cached run took no time at all.

    ``metric``: "accuracy" (test accuracy, when the trace has one), "gap" (final objective gap) or None
    (accuracy if there is one, else the gap). ``paper``: add what the paper's own analysis reads for this
    noise (``trace.privacy_paper``), when it differs from the accountant's ε."""
    from dpadmm_lite.labels import readable

    name = name or readable(trace.algorithm)
    count = trace.iterations if count is None else count
    if metric is None:
        metric = "accuracy" if trace.test_accuracy is not None else "gap"
    end = (f"test accuracy {trace.test_accuracy[-1]:.3f}" if metric == "accuracy"
           else f"objective gap {trace.objective_gap[-1]:.3g}")
    privacy = trace.privacy
    if math.isinf(privacy.epsilon) and privacy.covered and privacy.delta == 0:
        spent = "ε=∞: no noise, not private"
    else:
        eps = "∞" if math.isinf(privacy.epsilon) else f"{privacy.epsilon:.3g}"
        spent = f"ε={eps}, δ={privacy.delta:.0e} end to end"
        if not privacy.covered:
            spent += f" — not covered: {privacy.reason}"
    claimed = getattr(trace, "privacy_paper", None) if paper else None
    if claimed is not None and math.isfinite(claimed.epsilon) and f"{claimed.epsilon:.3g}" != eps:
        spent += f" (the paper's {paper_theorem(claimed)} reads ε={claimed.epsilon:.3g})"
    return f"{name}, {count:g} {unit}: {end}; {spent}"
