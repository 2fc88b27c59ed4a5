"""The privacy chapter's tuning panel: what choosing among candidate runs costs (book/privacy.ipynb,
"Tuning is a release too")."""

from __future__ import annotations

import math
from typing import Any


from ._common import budget, epsilon_control, integer, real

#: The series of the chart, in the order of its legend.
SERIES = ("final run alone", "every candidate once + final run", "random stopping + final run")
#: The numbers of candidates the chart's x axis shows (the site's static grid has the same).
CANDIDATES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)


def tuning_cost(epsilon: float = 1.0, mean_repetitions: float = 4.0, eta: float = 1, candidates: int = 4,
                delta: float = 1e-6) -> dict[str, Any]:
    """ε of a tuned result, counted three ways, against the number of candidate settings.

    Every run — each candidate's and the final one — is a run of the same private algorithm
    calibrated to (``epsilon``, ``delta``) on its own, modelled as Gaussian releases on the full data
    (μ-GDP with the μ of that budget; the unified accountant's exact case). The rows draw, for
    K = 1 … 32 candidates: the final run's ε alone (what a paper reports); every candidate once and
    the final run, composed exactly (μ√(K + 1)); and Papernot & Steinke's random stopping (a
    number of runs drawn from the truncated negative binomial with mean ``mean_repetitions`` and
    shape ``eta``, each a setting drawn uniformly from the K) and the final run — flat in K. Each
    row also carries the chance that random stopping never tries a given setting (the best one).

    Parameters
    ----------
    epsilon : float
        ε of each run, the final run's, in [0.01, 10] (``math.inf``: no noise, nothing to count).
    mean_repetitions : float
        Expected number of candidate runs of random stopping, in [1.5, 50].
    eta : float
        Shape η of their distribution, in [−0.5, 3] (1: geometric, 0: logarithmic; the site's slider
        moves over 0, 1, 2, 3).
    candidates : int
        K, in [1, 32]: the summary line's numbers are at this K.
    delta : float
        δ in [1e-8, 1e-2] (of every run and of the total).
    """
    from dpadmm_lite import accounting as acc

    epsilon = budget(epsilon)
    mean = real("mean_repetitions", mean_repetitions, 1.5, 50.0)
    eta = real("eta", eta, -0.5, 3.0)
    k_chosen = integer("candidates", candidates, 1, 32)
    delta = real("delta", delta, 1e-8, 1e-2)
    gamma = acc.truncated_negative_binomial_gamma(eta, mean)
    ks = sorted(set(CANDIDATES) | {k_chosen})
    never = {k: acc.never_tried_probability(eta, gamma, k) for k in ks}
    if math.isinf(epsilon):
        rows = [{"candidates": k, "what": name, "epsilon": math.inf, "never_tried": never[k], "run_epsilon": epsilon,
                 "mean_repetitions": mean, "eta": eta, "delta": delta} for k in ks for name in SERIES]
        return {"rows": rows, "summary": "ε=∞ (no noise: not private): nothing to count, with or without tuning; "
                                         f"random stopping never tries the best of K = {k_chosen} settings with "
                                         f"probability {never[k_chosen]:.2f}"}
    mu = acc._gdp._gdp_mu_for(epsilon, delta)
    curve = acc.ORDERS * mu * mu / 2  # one run's RDP (μ-GDP: α μ²/2)
    stopping = acc.selection_epsilon(curve, delta, eta=eta, gamma=gamma, final_rdp=curve)
    rows = []
    for k in ks:
        found = {SERIES[0]: epsilon, SERIES[1]: acc.gdp_epsilon(mu * math.sqrt(k + 1), delta), SERIES[2]: stopping}
        rows += [{"candidates": k, "what": name, "epsilon": float(value), "never_tried": float(never[k]),
                  "run_epsilon": epsilon, "mean_repetitions": mean, "eta": eta, "delta": delta}
                 for name, value in found.items()]
    at = {r["what"]: r["epsilon"] for r in rows if r["candidates"] == k_chosen}
    summary = (f"every run at ε = {epsilon:.3g}, δ = {delta:.0e}; with K = {k_chosen} candidates: each once + the "
               f"final run ε = {at[SERIES[1]]:.3g}, random stopping (mean {mean:.3g} runs, η = {eta:.3g}) + the final "
               f"run ε = {at[SERIES[2]]:.3g}, which never tries the best setting with probability "
               f"{never[k_chosen]:.2f}")
    return {"rows": rows, "summary": summary}


def tuning_grid(epsilons, means, etas, delta: float = 1e-6) -> list[dict]:
    """The rows of :func:`tuning_cost` at every (ε, mean, η) of the grid: the static chart's data."""
    return [row for e in epsilons for m in means for h in etas
            for row in tuning_cost(epsilon=float(e), mean_repetitions=float(m), eta=float(h), delta=delta)["rows"]]


PANELS = {
    "tuning": {
        "page": "book/privacy",
        "chart": "Tuning is a release too",
        "function": "tuning_cost",
        "controls": [
            epsilon_control(1.0),
            {"name": "mean_repetitions", "label": "E[K]", "kind": "log", "value": 4.0, "min": 1.5, "max": 50.0,
             "step": 0.05},
            {"name": "eta", "label": "η", "kind": "int", "value": 1, "min": 0, "max": 3},
            {"name": "candidates", "label": "K", "kind": "int", "value": 4, "min": 1, "max": 32},
        ],  # δ stays at the chart's 1e-6 (and the page's other panel has a δ slider: one control of each name)
    },
}

__all__ = ["CANDIDATES", "SERIES", "PANELS", "tuning_cost", "tuning_grid"]
