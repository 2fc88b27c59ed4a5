"""The arena's live panel: every algorithm that solves a task, at one ε, with the setting the chapter's
tuning chose (book/arena.ipynb, "Re-run the field")."""

from __future__ import annotations

import inspect
import json
import math
from functools import lru_cache
from importlib import resources
from typing import Any, Mapping, Sequence

from dpadmm_lite import accounting
from .. import arena
from dpadmm_lite.labels import readable
from dpadmm_lite.privacy import PrivacyEvent
from ._common import budget, epsilon_control, integer, one_of

#: The file that holds :data:`ARENA_CHOSEN`, beside this module (data, shipped in the wheels).
ARENA_CHOSEN_FILE = "arena_chosen.json"
#: The settings the arena chapter's tuning chose, per edition of the book ("fast": CI, "full": the published
#: site), as :func:`arena_settings` writes them: the site's live panel cannot tune, so it runs these, and
#: book/arena.ipynb asserts that its tuning (validation split) chose exactly them. Regenerate the file with
#: :func:`write_arena_chosen` from the chapter when the algorithms or the tuning change.
ARENA_CHOSEN: dict[str, Any] = json.loads(resources.files(__package__).joinpath(ARENA_CHOSEN_FILE).read_text())

#: The size of the site's live runs: :data:`dpadmm_book.arena.SIZES` ``["live"]`` (Adult: 500 training and
#: 500 validation rows; the Lasso as in the arena) and T = 10 iterations (a grid a tuning chose keeps its T).
ARENA_LIVE_SIZE, ARENA_LIVE_ITERATIONS = "live", 10

#: How each edition's tuning ran (book/arena.ipynb asserts these are its parameters): the ε at which every
#: candidate ran, the candidates per algorithm, the tuning seeds, the size of the splits and T. From these the
#: live panel recomputes the candidate runs' ledgers (their noise shapes, without training) and reports each
#: algorithm's ε including its tuning, as the chapter's page does.
ARENA_TUNING = {
    "fast": {"tune_at": (0.05,), "budget": 2, "seeds": 1, "size": "fast", "iterations": 20},
    "full": {"tune_at": (0.05, 0.7071067811865475, 10.0), "budget": 4, "seeds": 1, "size": "full", "iterations": 100},
}

__all__ = ["ARENA_CHOSEN", "ARENA_CHOSEN_FILE", "write_arena_chosen", "ARENA_LIVE_ITERATIONS", "ARENA_LIVE_SIZE", "ARENA_TUNING", "arena_field", "arena_settings",
           "arena_share", "candidate_ledgers", "PANELS"]


def write_arena_chosen(edition: str, settings: Mapping[str, Any]) -> None:
    """Store ``settings`` (what :func:`arena_settings` returns) as ``edition``'s entry of :data:`ARENA_CHOSEN`,
    in the file beside this module and in this process.

    Parameters
    ----------
    edition : str
        ``"fast"`` or ``"full"``: which edition's tuning chose the settings.
    settings : mapping
        ``{"epsilons": [...], "settings": {task: {algorithm: [config at each ε, …]}}}``.
    """
    one_of("edition", edition, tuple(ARENA_TUNING))
    ARENA_CHOSEN[edition] = json.loads(json.dumps(settings))
    path = resources.files(__package__).joinpath(ARENA_CHOSEN_FILE)
    path.write_text(json.dumps(ARENA_CHOSEN, indent=1, sort_keys=True) + "\n")


def arena_settings(chosen, epsilons: Sequence[float]) -> dict[str, Any]:
    """The settings :func:`dpadmm_book.arena.select` chose (its DataFrame, at ``epsilons``) in the form
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
    :func:`dpadmm_book.arena.config_for` finds it (``None``: the tuning left the algorithm no setting)."""
    found = _chosen_at(held, task, algorithm, epsilon)
    return None if found is None else found[1]


def _chosen_at(held: Mapping[str, Any], task: str, algorithm: str, epsilon: float) -> tuple[float, dict] | None:
    """(the chapter's ε whose choice applies at ``epsilon``, the setting chosen there), or ``None``."""
    configs = held["settings"].get(task, {}).get(algorithm)
    present = [(e, c) for e, c in zip(held["epsilons"], configs or []) if c is not None]
    if not present:
        return None
    if math.isinf(epsilon):  # no noise: the setting chosen at the largest ε, as arena.config_for
        return present[-1]
    distances = [abs(math.log(e) - math.log(epsilon)) for e, _ in present]
    return present[distances.index(min(distances))]


@lru_cache(maxsize=256)
def candidate_ledgers(edition: str, task: str, algorithm: str, tuned_at: float) -> tuple[tuple[PrivacyEvent, ...], ...]:
    """The ledgers of ``algorithm``'s candidate runs in the chapter's tuning (edition ``edition``) at ``tuned_at``:
    every candidate setting (:func:`dpadmm_book.arena.candidates`) on every tuning seed, on the edition's
    training rows. Read from each setting's noise shape (:func:`dpadmm_lite.tuning.tune`'s probe: the run stops
    at its call to the accountant, before it trains) and scaled as its calibration scales it."""
    from dpadmm_lite import tuning

    spec = ARENA_TUNING[one_of("edition", edition, tuple(ARENA_TUNING))]
    delta = arena.TASKS[task].delta
    problem = arena.problem(task, "validation", spec["size"])
    ledgers = []
    for config in arena._configs(algorithm, spec["budget"]):
        config = dict(config)
        iterations = config.pop("iterations", spec["iterations"])
        options = {"iterations": iterations, **arena._options(algorithm, task, config)}
        unit = tuning._unit_ledger(algorithm, problem, options, delta)
        ledgers += [tuning._scaled(unit, float(tuned_at), delta)] * spec["seeds"]
    return tuple(ledgers)


def _with_tuning(edition: str, task: str, algorithm: str, epsilon: float, final_ledger: str) -> float:
    """ε of ``algorithm``'s live result including the chapter's tuning that chose its setting: the candidate runs
    at the tuned ε the choice came from (the one nearest, on a log scale, to the chapter's ε whose choice applies)
    and the live run, composed by the unified accountant (:func:`dpadmm_lite.accounting.tuning_epsilon`)."""
    found = _chosen_at(ARENA_CHOSEN[edition], task, algorithm, epsilon)
    if found is None or not final_ledger:
        return math.nan
    tune_at = ARENA_TUNING[edition]["tune_at"]
    distances = [abs(math.log(t) - math.log(found[0])) for t in tune_at]
    tuned_at = tune_at[distances.index(min(distances))]
    final = arena.ledger_from_json(final_ledger)
    return float(accounting.tuning_epsilon(candidate_ledgers(edition, task, algorithm, tuned_at), final,
                                           arena.TASKS[task].delta))


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
        "adult" or "lasso" (:data:`dpadmm_book.arena.TASKS`).
    seed : int
        ≥ 0.
    iterations : int
        T in [1, 200] (an algorithm whose chosen setting fixes T keeps it).
    size : str
        A key of :data:`dpadmm_book.arena.SIZES`: "live" for the site, "fast" as the chapter's JupyterLab panel.
    edition : str
        "full" (the published book's tuning) or "fast" (CI's).
    precomputed : sequence of dict, optional
        Final rows of :func:`dpadmm_book.arena.field` or of :func:`arena_share` (as records); used when they
        hold this task, ε, seed, size and T for every algorithm, as :func:`dpadmm_book.arena.field_at` does — the
        same rows either way.

    Returns
    -------
    dict
        ``rows`` (algorithm by its book's name, utility, epsilon, task by its label; the runs that failed are
        left out), ``summary`` (the privacy each run spent, alone and including the chapter's tuning that chose
        its setting; the failures), ``seconds``, ``spent_epsilon`` and ``with_tuning`` (algorithm → the run's
        wall-clock time, its ε, and its ε including the tuning: every candidate run at the tuned ε and this
        run, composed by the unified accountant — the chapter's settings were chosen on training rows that
        include these), ``failed`` (algorithm → error) and ``costs``
        (``"task:algorithm"`` → seconds, by the registry's names: how the site's two workers split the next move).
    """
    epsilon, seed, iterations, plan = _plan(epsilon, task, seed, iterations, size, edition)
    finals = None
    if precomputed is not None:
        at = [r for r in precomputed if r["task"] == task and r["seed"] == seed and r["size"] == size
              and r["iterations"] == iterations and math.isclose(r["epsilon"], epsilon, rel_tol=1e-9)]
        order = [name for name, _ in plan]
        if sorted(r["algorithm"] for r in at) == sorted(order):
            finals = sorted(at, key=lambda r: order.index(r["algorithm"]))  # in the plan's order, as computed here
    if finals is None:
        finals = _finals(plan, epsilon, task, seed, iterations, size)
    done = [r for r in finals if r["error"] == ""]
    failed = {readable(r["algorithm"]): r["error"] for r in finals if r["error"] != ""}
    label = arena.TASKS[task].label
    rows = [{"algorithm": readable(r["algorithm"]), "utility": float(r["utility"]), "epsilon": epsilon, "task": label}
            for r in done]
    spent = {readable(r["algorithm"]): float(r["spent_epsilon"]) for r in done}
    asked = "ε=∞ (no noise: not private)" if math.isinf(epsilon) else f"ε = {epsilon:g}"
    if math.isinf(epsilon):
        with_tuning = {name: math.inf for name in spent}
        summary = (f"{label}, {asked}, {len(done)} algorithms; no privacy to count, with or without the tuning"
                   + (f"; failed: {', '.join(failed)}" if failed else ""))
    else:
        with_tuning = {readable(r["algorithm"]): _with_tuning(edition, task, r["algorithm"], epsilon, r.get("ledger", ""))
                       for r in done}
        summary = (f"{label}, {asked}, {len(done)} algorithms; privacy spent (unified ε), the run alone / including "
                   "the tuning that chose its setting: "
                   + "; ".join(f"{name} {e:.4g} / {with_tuning[name]:.3g}" for name, e in spent.items())
                   + (f"; failed: {', '.join(failed)}" if failed else ""))
    return {"rows": rows, "summary": summary, "spent_epsilon": spent, "with_tuning": with_tuning, "failed": failed,
            "seconds": {readable(r["algorithm"]): float(r["seconds"]) for r in done},
            "costs": {f"{task}:{r['algorithm']}": float(r["seconds"]) for r in done}}


def _plan(epsilon, task, seed, iterations, size, edition):
    """The checked arguments and the field's runs: (algorithm, its chosen setting) for every algorithm of ``task``."""
    epsilon = budget(epsilon)
    one_of("task", task, tuple(arena.TASKS))
    one_of("size", size, tuple(arena.SIZES))
    one_of("edition", edition, tuple(ARENA_CHOSEN))
    iterations, seed = integer("iterations", iterations, 1, 200), integer("seed", seed, 0, 2 ** 32 - 1)
    held = ARENA_CHOSEN[edition]
    plan = [(name, config) for name in arena.applicable(task)
            if (config := _config_at(held, task, name, epsilon)) is not None]
    return epsilon, seed, iterations, plan


def _finals(plan, epsilon, task, seed, iterations, size) -> list[dict]:
    """The final row of every run of ``plan`` (only the last iterate is scored: the field reads nothing else)."""
    return [{**row, "size": size, "iterations": iterations} for name, config in plan
            for row in arena.evaluate(arena._key(name, task, config, epsilon), seed, "validation", size, iterations,
                                      epsilon=epsilon, final_only=True)]


#: What a run of the site's field costs in WebAssembly before the panel has timed it (ms, in Node, at T = 10, the
#: median over four ε): only the first split of a task uses these, so that it already puts the runs where the
#: timed costs will (a worker's first run of an algorithm on a problem builds that problem's caches).
_FIRST_COSTS = {"adult": {"dp_sadmm": 163, "dvp_graph": 50, "pvp_star": 49, "private_admm_walk": 41, "dvp_star": 39,
                          "pvp_graph": 36, "dp_vradmm": 33, "private_admm": 20, "private_admm_federated": 7,
                          "dp_prox_sgd": 6, "dp_sgd_star": 5, "dp_admm_star": 4, "dp_acc_admm": 3, "dp_admm": 3},
                "lasso": {"private_admm_walk": 39, "dp_prox_sgd": 26, "private_admm": 22, "private_admm_federated": 7,
                          "dp_acc_admm": 4, "dp_admm": 3}}

#: A split that keeps every run in the worker that ran it last is kept while its slowest share is at most this
#: much slower than a fresh split's (moving a run to the other worker costs that worker the run's first-time set-up).
_KEEP = 1.15


def _shares(plan, shares: int, costs: Mapping[str, float], task: str,
            assigned: Mapping[str, int] | None = None) -> list[list]:
    """``plan`` split into ``shares`` lists of about equal cost. ``costs``: the seconds each run took last time
    (``"task:algorithm"`` → s; before that :data:`_FIRST_COSTS`); ``assigned``: the share each run had last time.
    The last split is kept while it is within :data:`_KEEP` of a fresh one (longest run first, each to the least
    loaded share). Deterministic, so that every worker given the same arguments computes the same split."""
    first = {name: ms / 1000.0 for name, ms in _FIRST_COSTS.get(task, {}).items()}
    known = [float(costs[f"{task}:{name}"]) for name, _ in plan if f"{task}:{name}" in costs]
    default = sum(known) / len(known) if known else 0.01
    weight = {name: float(costs.get(f"{task}:{name}", first.get(name, default))) for name, _ in plan}
    loads, out = [0.0] * shares, [[] for _ in range(shares)]
    for entry in sorted(plan, key=lambda e: -weight[e[0]]):  # sorted() is stable: ties keep the plan's order
        least = loads.index(min(loads))
        out[least].append(entry)
        loads[least] += weight[entry[0]]
    out = [[entry for entry in plan if entry in part] for part in out]  # each share runs in the plan's order
    before = [(assigned or {}).get(f"{task}:{name}") for name, _ in plan]
    if all(isinstance(i, int) and 0 <= i < shares for i in before):
        kept = [[entry for entry, i in zip(plan, before) if i == k] for k in range(shares)]
        if max(sum(weight[name] for name, _ in part) for part in kept) <= _KEEP * max(loads):
            return kept
    return out


def arena_share(share: int, shares: int, costs: Mapping[str, float] | None = None,
                assigned: Mapping[str, int] | None = None, **values) -> list[dict]:
    """The runs of :func:`arena_field` at ``values`` that fall to share ``share`` of ``shares`` (:func:`_shares`,
    from ``costs`` and ``assigned``), as final rows for its ``precomputed`` argument: the site runs the arena's
    field in two Web Workers (on two cores, about twice as fast) and merges their rows with
    ``arena_field(**values, precomputed=rows)``. The rows are JSON-safe (a failed run's missing numbers are
    ``None``)."""
    shares = integer("shares", shares, 1, 16)
    share = integer("share", share, 0, shares - 1)
    call = inspect.signature(arena_field).bind(**values)
    call.apply_defaults()
    args = {k: v for k, v in call.arguments.items() if k != "precomputed"}
    epsilon, seed, iterations, plan = _plan(**args)
    mine = _shares(plan, shares, costs or {}, args["task"], assigned)[share]
    keep = ("algorithm", "task", "seed", "size", "iterations", "epsilon", "error", "utility", "spent_epsilon", "seconds",
            "ledger")
    return [{k: None if k != "epsilon" and isinstance(r[k], float) and not math.isfinite(r[k]) else r[k] for k in keep}
            for r in _finals(mine, epsilon, args["task"], seed, iterations, args["size"])]


PANELS = {
    "arena": {
        "page": "book/arena",
        "chart": "Re-run the field: validation utility of each algorithm at one ε",
        "function": "arena_field",
        "share": "arena_share",
        "controls": [
            epsilon_control(1.0),
            {"name": "task", "label": "task", "kind": "select", "value": "lasso",
             "options": [[t.label, name] for name, t in sorted(arena.TASKS.items(), key=lambda kv: kv[0] != "lasso")]},
            {"name": "iterations", "label": "T", "kind": "int", "value": ARENA_LIVE_ITERATIONS, "min": 1, "max": 20},
        ],
    },
}
