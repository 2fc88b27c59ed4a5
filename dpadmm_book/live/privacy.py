"""The privacy chapter's live panel: one noise, two accountants (book/privacy.ipynb)."""

from __future__ import annotations

import math
from typing import Any

from ._common import delta_control, integer, log_spaced, real


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
    from dpadmm_lite import accounting as acc

    z = real("noise_multiplier", noise_multiplier, 0.3, 20.0)
    q = real("sampling_rate", sampling_rate, 1e-3, 1.0)
    delta = real("delta", delta, 1e-8, 1e-2)
    iterations, points = integer("iterations", iterations, 1, 1000), integer("points", points, 2, 50)
    q = 1.0 if q > 0.999 else q
    rows = []
    for k in (int(k) for k in log_spaced(iterations, points)):
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


PANELS = {
    "privacy": {
        "page": "book/privacy",
        "chart": "The same noise, two accountants",
        "function": "accountants",
        "controls": [
            {"name": "noise_multiplier", "label": "σ/Δ", "kind": "log", "value": 1.0, "min": 0.3, "max": 20.0,
             "step": 0.05},
            {"name": "sampling_rate", "label": "q", "kind": "log", "value": 0.01, "min": 1e-3, "max": 1.0, "step": 0.1},
            delta_control(1e-5),
            {"name": "iterations", "label": "T", "kind": "int", "value": 100, "min": 1, "max": 1000},
        ],
    },
}
