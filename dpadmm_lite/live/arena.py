"""The arena's live panel: every algorithm that solves a task, at one ε, with the setting the chapter's
tuning chose (book/arena.ipynb, "Re-run the field")."""

from __future__ import annotations

import json
import math
from typing import Any, Mapping, Sequence

from .. import arena
from ..labels import readable
from ._arena_chosen import ARENA_CHOSEN
from ._common import budget, epsilon_control, integer, one_of

#: The size of the site's live runs: :data:`dpadmm_lite.arena.SIZES` ``["live"]`` (Adult: 500 training and
#: 500 validation rows; the Lasso as in the arena) and T = 10 iterations (a grid a tuning chose keeps its T).
ARENA_LIVE_SIZE, ARENA_LIVE_ITERATIONS = "live", 10

__all__ = ["ARENA_CHOSEN", "ARENA_LIVE_ITERATIONS", "ARENA_LIVE_SIZE", "arena_field", "arena_settings", "PANELS"]


def arena_settings(chosen, epsilons: Sequence[float]) -> dict[str, Any]:
    """The settings :func:`dpadmm_lite.arena.select` chose (its DataFrame, at ``epsilons``) in the form
    :data:`ARENA_CHOSEN` holds them: ``{"epsilons": [...], "settings": {task: {algorithm: [config at each ε,
    or None]}}}``. The chapter asserts that its tuning's settings are the ones the live panel holds."""
    epsilons = [float(e) for e in epsilons]
    settings: dict[str, dict[str, list]] = {}
    for row in chosen.itertuples():
        configs = settings.setdefault(row.task, {}).setdefault(row.algorithm, [None] * len(epsilons))
        at = [i for i, e in enumerate(epsilons) if math.isclose(e, float(row.epsilon), rel_tol=1e-12)]
        if len(at) != 1:
            raise ValueError(f"epsilons must hold each ε of chosen once, got {epsilons} for ε = {row.epsilon}")
        configs[at[0]] = json.loads(row.config)
    return {"epsilons": epsilons, "settings": settings}


def _config_at(held: Mapping[str, Any], task: str, algorithm: str, epsilon: float) -> dict | None:
    """The setting chosen at the ε of the chapter's grid nearest ``epsilon`` on a log scale, as
    :func:`dpadmm_lite.arena.config_for` finds it (``None``: the tuning left the algorithm no setting)."""
    configs = held["settings"].get(task, {}).get(algorithm)
    present = [(e, c) for e, c in zip(held["epsilons"], configs or []) if c is not None]
    if not present:
        return None
    if math.isinf(epsilon):  # no noise: the setting chosen at the largest ε, as arena.config_for
        return present[-1][1]
    distances = [abs(math.log(e) - math.log(epsilon)) for e, _ in present]
    return present[distances.index(min(distances))][1]


def arena_field(epsilon: float = 1.0, task: str = "lasso", seed: int = 0,
                iterations: int = ARENA_LIVE_ITERATIONS, size: str = ARENA_LIVE_SIZE, edition: str = "full",
                precomputed: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Every private algorithm that solves ``task``, with the setting the chapter's tuning chose
    (:data:`ARENA_CHOSEN` of ``edition``), at end-to-end ``epsilon`` on the validation split: the rows of
    the chapter's chart "Re-run the field: validation utility of each algorithm at one ε".

    Parameters
    ----------
    epsilon : float
        End-to-end ε in [0.01, 10] (every run is calibrated by the unified accountant at the task's δ), or
        ``math.inf``: no noise.
    task : str
        "adult" or "lasso" (:data:`dpadmm_lite.arena.TASKS`).
    seed : int
        ≥ 0.
    iterations : int
        T in [1, 200] (an algorithm whose chosen setting fixes T keeps it).
    size : str
        A key of :data:`dpadmm_lite.arena.SIZES`: "live" for the site, "fast" as the chapter's JupyterLab panel.
    edition : str
        "full" (the published book's tuning) or "fast" (CI's).
    precomputed : sequence of dict, optional
        Final rows of :func:`dpadmm_lite.arena.field` (as records); used when they hold this task, ε, seed,
        size and T for every algorithm, as :func:`dpadmm_lite.arena.field_at` does — the same rows either way.

    Returns
    -------
    dict
        ``rows`` (algorithm by its book's name, utility, epsilon, task by its label; the runs that failed are
        left out), ``summary`` (the privacy each run spent, the failures), ``seconds`` and ``spent_epsilon``
        (algorithm → the run's wall-clock time and ε) and ``failed`` (algorithm → error).
    """
    epsilon = budget(epsilon)
    one_of("task", task, tuple(arena.TASKS))
    one_of("size", size, tuple(arena.SIZES))
    one_of("edition", edition, tuple(ARENA_CHOSEN))
    iterations, seed = integer("iterations", iterations, 1, 200), integer("seed", seed, 0, 2 ** 32 - 1)
    held = ARENA_CHOSEN[edition]
    plan = [(name, config) for name in arena.applicable(task)
            if (config := _config_at(held, task, name, epsilon)) is not None]
    finals = None
    if precomputed is not None:
        at = [r for r in precomputed if r["task"] == task and r["seed"] == seed and r["size"] == size
              and r["iterations"] == iterations and math.isclose(r["epsilon"], epsilon, rel_tol=1e-9)]
        if sorted(r["algorithm"] for r in at) == sorted(name for name, _ in plan):
            finals = at
    if finals is None:
        finals = [row for name, config in plan
                  for row in arena.evaluate(arena._key(name, task, config, epsilon), seed, "validation", size,
                                            iterations, epsilon=epsilon) if row["final"]]
    done = [r for r in finals if r["error"] == ""]
    failed = {readable(r["algorithm"]): r["error"] for r in finals if r["error"] != ""}
    label = arena.TASKS[task].label
    rows = [{"algorithm": readable(r["algorithm"]), "utility": float(r["utility"]), "epsilon": epsilon, "task": label}
            for r in done]
    spent = {readable(r["algorithm"]): float(r["spent_epsilon"]) for r in done}
    asked = "ε=∞ (no noise: not private)" if math.isinf(epsilon) else f"ε = {epsilon:g}"
    summary = (f"{label}, {asked}, {len(done)} algorithms; privacy spent (unified ε): "
               + "; ".join(f"{name} {e:.4g}" for name, e in spent.items())
               + (f"; failed: {', '.join(failed)}" if failed else ""))
    return {"rows": rows, "summary": summary, "spent_epsilon": spent, "failed": failed,
            "seconds": {readable(r["algorithm"]): float(r["seconds"]) for r in done}}


PANELS = {
    "arena": {
        "page": "book/arena",
        "chart": "Re-run the field: validation utility of each algorithm at one ε",
        "function": "arena_field",
        "controls": [
            epsilon_control(1.0),
            {"name": "task", "label": "task", "kind": "select", "value": "lasso",
             "options": [[t.label, name] for name, t in sorted(arena.TASKS.items(), key=lambda kv: kv[0] != "lasso")]},
            {"name": "iterations", "label": "T", "kind": "int", "value": ARENA_LIVE_ITERATIONS, "min": 1, "max": 20},
        ],
    },
}
