"""One budget, every algorithm: the arena behind the chapter of that name.

Every registered private algorithm that solves a task (``registry`` ``tasks``) runs on the same
data at the same end-to-end (ε, δ), calibrated by the unified accountant. Its hyper-parameters
(``registry`` ``tuning``) are tuned on a validation split with the same budget of candidates
for every algorithm; the test split is used once, at the end, for the chosen settings. A newly
registered algorithm joins the arena with no change to the chapter.

The steps, each a :func:`dpadmm_book.sweep.grid` (so it shows a progress bar, is cached, and
runs on a Dask cluster under ``joblib.parallel_config(backend="dask")``)::

    plan = arena.candidates(["adult", "lasso"], budget=4)       # what each algorithm may try
    tuning = arena.tune(plan, epsilons=[0.1, 1, 10], seeds=(0, 1), size="full", iterations=100)
    chosen = arena.select(tuning, epsilons=[0.05, 0.1, …, 10])   # best on validation, per ε
    final = arena.final(chosen, seeds=(100, 101, 102), size="full", iterations=100)
    cost = arena.selection_cost(tuning, chosen, final)          # ε including the tuning

A task of the sweep is :func:`evaluate`: it receives a few strings and numbers, builds its data
itself (:func:`problem`, cached per process) and returns tidy rows, so that only those small
arguments travel to the workers of a cluster. The steps take ``n_jobs`` (as
:func:`dpadmm_book.sweep.grid`): ``n_jobs=2`` runs them on two local processes, with the same rows.

**Tuning is not free.** Every candidate run reads the training records, and the chosen setting
depends on them all. :func:`selection_cost` reports, next to the ε of the final run alone, the ε
of the whole pipeline — the candidate runs at the tuned ε and the final run, composed by the
unified accountant from the ledgers the runs recorded (``ledger`` column;
:func:`dpadmm_lite.accounting.tuning_epsilon`), sound for the arena's fixed number of candidates
and its best-score rule — and, for comparison, what Papernot & Steinke's random-stopping selection
(:func:`dpadmm_lite.accounting.selection_epsilon`) would guarantee with the same expected number
of candidate runs (a procedure the arena does not run; :func:`dpadmm_lite.tuning.tune` runs it end to end,
calibrated so that candidates, selection and published model meet one budget). The arena's live panel
(:mod:`dpadmm_book.live.arena`) reports each run's ε including the tuning that chose its setting.
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import json
import math
import types
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np

from dpadmm_lite import _validate as check
from dpadmm_lite import accounting, datasets, problems, registry
from dpadmm_lite.privacy import PrivacyEvent
from dpadmm_lite.labels import parameter

if TYPE_CHECKING:  # pandas and the sweeps are imported where they are used: a live re-run of a field
    import pandas as pd  # (dpadmm_book.live.arena, in the reader's browser) has neither pandas nor joblib

__all__ = ["Task", "TASKS", "SIZES", "N_AGENTS", "problem", "held_out_utility", "nonprivate_utility", "applicable",
           "candidates", "grid_table", "run", "noise_summary", "ledger_json", "ledger_from_json", "evaluate", "tune",
           "select", "config_for", "summarize", "final", "selection_cost", "field", "field_at"]


@dataclass(frozen=True)
class Task:
    """One task of the arena: which data, which problem kind, which utility."""

    name: str
    kind: str  # a problem kind of registry.TASKS: which algorithms apply
    label: str  # short name, for legends and drop-downs
    title: str
    utility: str  # what is measured on the held-out split (lower is better)
    delta: float
    lam: float


#: The arena's tasks. δ is the same for both (below 1/n² for the Lasso's n = 1000 records). Read-only
#: (a ``MappingProxyType`` of frozen :class:`Task`), as :data:`SIZES`: the cached :func:`problem` reads it.
TASKS: types.MappingProxyType[str, Task] = types.MappingProxyType({
    "adult": Task("adult", "logistic-l2", "Adult", "Adult: logistic regression with ℓ2", "test error", 1e-6, 1e-4),
    # λ ≈ what LassoCV picks on an independent sample of the same distribution (Cyffers et al. choose
    # their κ by cross-validation on the non-private problem)
    "lasso": Task("lasso", "lasso", "Lasso", "Synthetic Lasso (n = 1000, p = 64)", "test objective", 1e-6, 5e-4),
})

#: Rows of each split: ``size`` → task → (train, validation); the test split is fixed per task
#: (Adult: its 5,222 shipped test rows; Lasso: 1,000 fresh rows of the same model). The full
#: arena trains on 8,000 of Adult's 40,000 training rows so that every algorithm, the slowest
#: included, runs its whole tuning and test sweep within the book's build time.
#: Read-only, at both levels (``MappingProxyType`` of tuples): :func:`problem` and :func:`_splits` are
#: cached on ``(task, size)`` alone, so a size changed in a kernel after they ran would be served their
#: old data (and a sweep keyed on the new sizes would store old numbers). To try other sizes, build the
#: problem yourself (``problems.logistic`` / ``problems.lasso`` on rows of your choice).
SIZES: types.MappingProxyType[str, types.MappingProxyType[str, tuple[int, int]]] = types.MappingProxyType({
    size: types.MappingProxyType(rows) for size, rows in {
        "fast": {"adult": (2_000, 500), "lasso": (1_000, 1_000)},
        "full": {"adult": (8_000, 2_000), "lasso": (1_000, 1_000)},
        "live": {"adult": (500, 500), "lasso": (1_000, 1_000)},  # the site's "Run live" panel (dpadmm_book.live.arena)
    }.items()
})

#: Agents of every distributed algorithm (star, graph, federated, random walk): the same for all.
N_AGENTS = 10


def _task(name: str) -> Task:
    check.choice("task", name, tuple(TASKS))
    return TASKS[name]


# ---------------------------------------------------------------------- data
@lru_cache(maxsize=16)
def _splits(task: str, size: str):
    """(X_train, y_train, X_validation, y_validation, X_test, y_test) of a task, seeded."""
    check.choice("size", size, tuple(SIZES))
    n_train, n_val = SIZES[size][task]
    if task == "adult":
        X, y, X_test, y_test = datasets.load_adult()
        order = np.random.default_rng(0).permutation(len(y))  # one fixed split of the 40,000 training rows
        train, val = order[:n_train], order[n_train:n_train + n_val]
        return X[train], y[train], X[val], y[val], X_test, y_test
    # Cyffers et al.'s Lasso (n = 1000, p = 64), and fresh rows of the same model for validation and test
    X, y, w_true = datasets.make_lasso(n_train, 64, seed=0)
    fresh, _, _ = datasets.make_lasso(n_val + 1_000, 64, seed=1)  # rows on the unit sphere
    noise = 0.1 * np.random.default_rng(2).standard_normal(len(fresh))
    y_fresh = fresh @ w_true + noise
    return X, y, fresh[:n_val], y_fresh[:n_val], fresh[n_val:], y_fresh[n_val:]


@lru_cache(maxsize=16)
def problem(task: str, split: str = "validation", size: str = "full") -> problems.Problem:
    """The training problem of ``task`` whose held-out split is ``split`` (``"validation"`` or ``"test"``).

    Built from the task's name alone (and cached per process), so a worker of a cluster builds
    its own copy instead of receiving the data. Both splits share the training data and its
    reference optimum.
    """
    t = _task(task)
    check.choice("split", split, ("validation", "test"))
    X, y, X_val, y_val, X_test, y_test = _splits(task, size)
    X_out, y_out = (X_val, y_val) if split == "validation" else (X_test, y_test)
    if t.kind == "lasso":
        p = problems.lasso(X, y, t.lam, X_test=X_out, y_test=y_out)
    else:
        p = problems.logistic(X, y, t.lam, "l2", X_test=X_out, y_test=y_out)
    if split == "test":  # same training data: reuse the validation problem's reference optimum
        p._optimum = problem(task, "validation", size).reference_optimum()
    return p


def held_out_utility(task: str, p: problems.Problem, model) -> float:
    """The task's utility of ``model`` on ``p``'s held-out split: test error, or the Lasso's
    objective on the held-out rows (Cyffers et al.'s "test objective"). Lower is better."""
    model = np.asarray(model, float)
    if _task(task).kind == "lasso":
        return float(p.test_loss(model) + p.lam * np.abs(model).sum())
    return float(1.0 - p.accuracy(model))


def nonprivate_utility(task: str, split: str = "test", size: str = "full") -> float:
    """Utility of the non-private optimum of the training problem (the floor of every chart)."""
    p = problem(task, split, size)
    return held_out_utility(task, p, p.reference_optimum().x)


# ---------------------------------------------------------------------- who plays, with what
def applicable(task: str) -> tuple[str, ...]:
    """The registered private algorithms that declare ``task``'s problem kind."""
    kind = _task(task).kind
    return tuple(name for name in registry.algorithm_names().private if kind in registry.info(name).tasks)


def _stable_seed(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("/".join(parts).encode()).digest()[:4], "little")


def _configs(name: str, budget: int) -> list[dict]:
    """At most ``budget`` settings from the algorithm's tuning grid (all of them when they fit,
    else a seeded random subset, the same on every run); ``[{}]`` (its defaults) when it has none."""
    tuning = registry.info(name).tuning or {}
    if not tuning:
        return [{}]
    keys = sorted(tuning)
    combos = [dict(zip(keys, values)) for values in itertools.product(*(tuning[k] for k in keys))]
    if len(combos) <= budget:
        return combos
    rng = np.random.default_rng(_stable_seed("arena", name))
    return [combos[i] for i in sorted(rng.choice(len(combos), size=budget, replace=False))]


def _key(algorithm: str, task: str, config: dict, epsilon: float | None = None) -> str:
    entry = {"algorithm": algorithm, "task": task, "config": {k: config[k] for k in sorted(config)}}
    if epsilon is not None:
        entry["epsilon"] = float(epsilon)
    return json.dumps(entry, sort_keys=True)


def candidates(tasks: Sequence[str], *, budget: int) -> list[str]:
    """Every (algorithm, task, candidate setting) to try on the validation split.

    Each applicable private algorithm gets at most ``budget`` candidates from its declared
    tuning grid (the same budget for all), or only its defaults when it declares none. The
    entries are JSON strings (the ``candidate`` axis of the tuning sweep).
    """
    budget = check.count("budget", budget)
    return [_key(name, task, config) for task in tasks for name in applicable(task) for config in _configs(name, budget)]


def grid_table(tasks: Sequence[str], *, budget: int) -> pd.DataFrame:
    """The tuning grids, as reported in the chapter: per algorithm (by its book's name,
    ``registry.label``), what it declares and what the budget let it try."""
    import pandas as pd

    rows = []
    for name in sorted({n for t in tasks for n in applicable(t)}):
        info = registry.info(name)
        tuning = info.tuning or {}
        declared = math.prod(len(v) for v in tuning.values()) if tuning else 1
        rows.append({
            "algorithm": info.label, "tasks": ", ".join(TASKS[t].label for t in tasks if name in applicable(t)),
            "tuning grid": "; ".join(f"{parameter(k)} ∈ {{{', '.join(f'{v:g}' if isinstance(v, float) else str(v) for v in tuning[k])}}}"
                                     for k in sorted(tuning)) or "none declared: its defaults",
            "in grid": declared, "tried": len(_configs(name, budget)),
        })
    return pd.DataFrame(rows).set_index("algorithm")


# ---------------------------------------------------------------------- one run
def _options(name: str, task: str, config: dict) -> dict:
    """Keyword arguments of :func:`dpadmm_lite.run` besides ε, δ, iterations and seed."""
    info = registry.info(name)
    accepted = inspect.signature(info.function).parameters
    options = {}
    if "calibration" in accepted:
        options["calibration"] = "accountant"  # the unified accountant meets (ε, δ) end to end
    if "n_agents" in accepted and info.setting != "centralized":
        options["n_agents"] = N_AGENTS
    options.update(config)
    return options


def run(algorithm: str, task: str, epsilon: float, *, seed: int = 0, split: str = "validation", size: str = "full",
        iterations: int = 100, config: dict | None = None, final_only: bool = False):
    """One run of ``algorithm`` on ``task`` at the task's δ and end-to-end ``epsilon``; returns its Trace.

    ``final_only``: the caller reads only the released model, so an algorithm that can record fewer iterates
    (``record_every``) records only the last one and the trace skips scoring the others (same model, same ε)."""
    if algorithm not in applicable(task):
        raise ValueError(f"algorithm must be a private algorithm that solves {task!r}: one of {applicable(task)}, "
                         f"got {algorithm!r}")
    t = _task(task)
    config = dict(config or {})
    iterations = config.pop("iterations", iterations)  # a tuning grid may choose T too
    options = _options(algorithm, task, config)
    if final_only and "record_every" in inspect.signature(registry.info(algorithm).function).parameters:
        options["record_every"] = iterations
    return registry.run(algorithm, problem(task, split, size), epsilon=epsilon, delta=t.delta, iterations=iterations,
                        seed=seed, **options)


def noise_summary(trace) -> dict:
    """The noise a run drew for its budget, from its ledger: the number of releases, the noise
    multiplier σ/Δ (Gaussian releases; count-weighted median) and σ itself, and for ℓ2-Laplace
    releases their per-release ε₀ = ζΔ."""
    def median(values, weights):
        if not values:
            return math.nan
        order = np.argsort(values)
        cum = np.cumsum(np.asarray(weights, float)[order])
        return float(np.asarray(values, float)[order][np.searchsorted(cum, cum[-1] / 2)])

    gauss = [e for e in trace.ledger if e.mechanism == "gaussian"]
    laplace = [e for e in trace.ledger if e.mechanism == "laplace_l2"]

    def moved(e):  # Δ: a replace-one event records the per-record bound C, and a replacement moves the release by 2C
        return e.sensitivity * (2.0 if e.neighbours == "replace_one" else 1.0)

    return {
        "releases": int(sum(e.count for e in trace.ledger)),
        "mechanism": "+".join(sorted({e.mechanism for e in trace.ledger})) or "none",
        "noise_multiplier": median([e.noise / moved(e) for e in gauss], [e.count for e in gauss]),
        "sigma": median([e.noise for e in gauss], [e.count for e in gauss]),
        "laplace_epsilon0": median([e.noise * moved(e) for e in laplace], [e.count for e in laplace]),
        "sampling_rate": float(min((e.sampling_rate for e in trace.ledger), default=1.0)),
    }


def ledger_json(ledger) -> str:
    """A run's ledger (its :class:`~dpadmm_lite.privacy.PrivacyEvent` list) as a JSON string, for a
    sweep's rows (the notes, which the accountant does not read, are left out)."""
    return json.dumps([{**asdict(e), "note": ""} for e in ledger], sort_keys=True)


def ledger_from_json(text: str) -> list[PrivacyEvent]:
    """The ledger :func:`ledger_json` wrote."""
    return [PrivacyEvent(**event) for event in json.loads(text)]


def _checkpoints(iterations: int, count: int = 12) -> np.ndarray:
    return np.unique(np.round(np.geomspace(1, iterations, count)).astype(int))


_NO_RESULT = {"seconds": math.nan, "objective_gap": math.nan, "utility": math.nan, "spent_epsilon": math.nan,
              "releases": 0, "mechanism": "", "noise_multiplier": math.nan, "sigma": math.nan,
              "laplace_epsilon0": math.nan, "sampling_rate": math.nan, "ledger": ""}


def evaluate(candidate: str, seed: int, split: str, size: str, iterations: int,
             epsilon: float | None = None, final_only: bool = False) -> list[dict]:
    """The sweep task of the arena: one run, as tidy rows (a few iterations and the last one).

    ``candidate`` is an entry of :func:`candidates` (or of :func:`select`, which carries its ε).
    A run that raises, or that spends more than its budget, gives one row with ``error`` set and
    no utility, so that a failing candidate is reported instead of stopping the sweep. The last
    row carries the run's ledger (``ledger``, :func:`ledger_json`; ``""`` on the other rows).
    ``final_only``: only the last row (the same row; the run skips scoring iterates no row reads).
    """
    spec = json.loads(candidate)
    algorithm, task, config = spec["algorithm"], spec["task"], spec["config"]
    epsilon = float(spec["epsilon"] if epsilon is None else epsilon)
    info = registry.info(algorithm)
    base = {"task": task, "algorithm": algorithm, "paper": info.paper, "setting": info.setting,
            "config": json.dumps(config, sort_keys=True), "epsilon": epsilon, "delta": _task(task).delta,
            "seed": seed, "split": split}
    try:
        trace = run(algorithm, task, epsilon, seed=seed, split=split, size=size, iterations=iterations, config=config,
                    final_only=final_only)
        spent = trace.privacy.epsilon
        if not spent <= epsilon * (1 + 1e-6):
            raise ValueError(f"spent ε = {spent:.4g} > budget {epsilon:g} (not calibrated by the accountant)")
    except Exception as exc:  # reported in the chapter, never silently dropped
        return [{**base, "iteration": iterations, "final": True, "error": f"{type(exc).__name__}: {exc}"[:300],
                 **_NO_RESULT}]
    p = problem(task, split, size)
    noise = noise_summary(trace)
    ledger = ledger_json(trace.ledger)
    T = trace.iterations
    steps = int(config.get("iterations", iterations)) if final_only else T  # a run that recorded only its last iterate
    rows = []
    for k in [T] if final_only else _checkpoints(T):
        final = k == T
        if final:
            utility = held_out_utility(task, p, trace.model)
        elif trace.test_accuracy is not None and _task(task).kind != "lasso":
            utility = float(1.0 - trace.test_accuracy[k - 1])
        else:
            utility = math.nan
        rows.append({**base, "iteration": steps if final else int(k), "final": bool(final), "error": "",
                     "seconds": trace.wall_time * k / T, "objective_gap": float(trace.objective_gap[k - 1]),
                     "utility": utility, "spent_epsilon": float(spent), **noise, "ledger": ledger if final else ""})
    return rows


# ---------------------------------------------------------------------- the three steps
def tune(plan: Sequence[str], *, epsilons: Iterable[float], seeds: Sequence[int], size: str, iterations: int,
         name: str = "arena: tuning on the validation split", n_jobs: int | None = None) -> pd.DataFrame:
    """Run every candidate of ``plan`` at every ε on the validation split (one sweep; ``n_jobs`` as
    :func:`dpadmm_book.sweep.grid`)."""
    from . import sweep

    grid = {"candidate": list(plan), "epsilon": [float(e) for e in epsilons], "split": ["validation"], "size": [size],
            "iterations": [check.count("iterations", iterations)]}
    return sweep.grid(evaluate, grid, seeds=seeds, name=name, n_jobs=n_jobs)


def select(tuning: pd.DataFrame, *, epsilons: Iterable[float]) -> pd.DataFrame:
    """The best candidate of each (task, algorithm) for each ε of ``epsilons``.

    Candidates are ranked by their mean validation utility over the tuning seeds at the last
    iteration; a candidate that failed on any seed is out. Each ε uses the choice made at the
    tuned ε nearest to it on a log scale (all of them, when every ε was tuned).

    Returns
    -------
    pandas.DataFrame
        One row per (task, algorithm, ε): ``config``, ``tuned_at``, ``validation`` (its mean
        validation utility), ``candidates`` (how many were valid) and ``candidate`` (the entry
        for :func:`final`).
    """
    import pandas as pd

    last = tuning[tuning["final"]]
    failed = last.groupby(["task", "algorithm", "config", "epsilon"])["error"].apply(lambda e: (e != "").any())
    score = last[last["error"] == ""].groupby(["task", "algorithm", "config", "epsilon"])["utility"].mean()
    score = score[~failed.reindex(score.index, fill_value=True)].reset_index()
    tuned = np.sort(score["epsilon"].unique())
    rows = []
    for (task, algorithm), group in score.groupby(["task", "algorithm"], sort=True):
        for epsilon in epsilons:
            anchor = tuned[np.argmin(np.abs(np.log(tuned) - np.log(float(epsilon))))]
            at = group[group["epsilon"] == anchor]
            if at.empty:
                continue
            best = at.sort_values(["utility", "config"], kind="stable").iloc[0]
            rows.append({"task": task, "algorithm": algorithm, "epsilon": float(epsilon), "tuned_at": float(anchor),
                         "config": best["config"], "validation": float(best["utility"]), "candidates": len(at),
                         "candidate": _key(algorithm, task, json.loads(best["config"]), epsilon)})
    return pd.DataFrame(rows, columns=["task", "algorithm", "epsilon", "tuned_at", "config", "validation",
                                       "candidates", "candidate"])


def config_for(chosen: pd.DataFrame, task: str, algorithm: str, epsilon: float) -> dict:
    """The setting :func:`select` chose for ``algorithm`` on ``task`` at the ε nearest ``epsilon`` (log scale)."""
    rows = chosen[(chosen["task"] == task) & (chosen["algorithm"] == algorithm)]
    if rows.empty:
        raise ValueError(f"no setting was chosen for algorithm {algorithm!r} on task {task!r}")
    if math.isinf(epsilon):
        return json.loads(rows.iloc[-1]["config"])
    nearest = np.argmin(np.abs(np.log(rows["epsilon"].to_numpy(float)) - math.log(check.positive("epsilon", epsilon))))
    return json.loads(rows.iloc[nearest]["config"])


def summarize(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (task, algorithm, ε): the final utility over seeds (``mean``, ``lo``, ``hi`` = min, max),
    the wall-clock seconds (median), the privacy spent (max over seeds) and the noise drawn."""
    last = frame[frame["final"] & (frame["error"] == "")]
    keys = ["task", "algorithm", "setting", "epsilon"]
    grouped = last.groupby(keys, sort=True)
    out = grouped["utility"].agg(mean="mean", lo="min", hi="max", seeds="count")
    out["seconds"] = grouped["seconds"].median()
    out["spent_epsilon"] = grouped["spent_epsilon"].max()
    for column in ("releases", "noise_multiplier", "sigma", "laplace_epsilon0", "sampling_rate"):
        out[column] = grouped[column].median()
    out["config"] = grouped["config"].first()
    return out.reset_index()


def final(chosen: pd.DataFrame, *, seeds: Sequence[int], size: str, iterations: int,
          name: str = "arena: the test split, once", n_jobs: int | None = None) -> pd.DataFrame:
    """Run each chosen setting of :func:`select` on the test split (one sweep, once; ``n_jobs`` as
    :func:`dpadmm_book.sweep.grid`)."""
    from . import sweep

    grid = {"candidate": list(chosen["candidate"]), "split": ["test"], "size": [size],
            "iterations": [check.count("iterations", iterations)]}
    return sweep.grid(evaluate, grid, seeds=seeds, name=name, n_jobs=n_jobs)


# ---------------------------------------------------------------------- what the tuning cost
def selection_cost(tuning: pd.DataFrame, chosen: pd.DataFrame, final: pd.DataFrame) -> pd.DataFrame:
    """ε of each published result including its hyper-parameter selection, next to the final run's.

    For each (task, algorithm, ε) of ``final`` (the test runs of :func:`final`): the candidate
    runs of ``tuning`` at the tuned ε the choice came from (``chosen``'s ``tuned_at``: every
    candidate setting and tuning seed) and the final run are composed by the unified accountant
    (:func:`dpadmm_lite.accounting.tuning_epsilon` of their ledgers). That is sound for what the
    arena does — a fixed number of candidates, the best mean validation score, every candidate's
    score published in the chapter — and it is the only one of the two numbers below that is.
    A failed candidate run (no ledger) makes it ``inf``.

    Returns
    -------
    pandas.DataFrame
        One row per (task, algorithm, ε): ``epsilon`` (the budget of the final run, what it
        spent at most), ``final_epsilon`` (the largest ε the final runs spent, over the test
        seeds), ``tuned_at``, ``candidate_runs``, ``with_tuning`` (the composed ε, largest over
        the test seeds) and ``random_stopping``: the ε Papernot & Steinke's Theorem 2 would give
        a selection that draws a *geometric* number of candidate runs with the same mean (η = 1,
        γ = 1/settings, the worst candidate's RDP) plus the final run — not what the arena runs,
        shown to compare; ``nan`` with a single setting (nothing is selected).
    """
    import pandas as pd

    rows = []
    delta_of = {name: task.delta for name, task in TASKS.items()}
    last_tuning = tuning[tuning["final"]]
    last_final = final[final["final"] & (final["error"] == "")]
    for (task, algorithm, epsilon), group in last_final.groupby(["task", "algorithm", "epsilon"], sort=True):
        pick = chosen[(chosen["task"] == task) & (chosen["algorithm"] == algorithm)
                      & np.isclose(chosen["epsilon"], epsilon, rtol=1e-12, atol=0)]
        if pick.empty:
            continue
        tuned_at = float(pick["tuned_at"].iloc[0])
        runs = last_tuning[(last_tuning["task"] == task) & (last_tuning["algorithm"] == algorithm)
                           & np.isclose(last_tuning["epsilon"], tuned_at, rtol=1e-12, atol=0)]
        candidate_ledgers = [ledger_from_json(text) if text else None for text in runs["ledger"]]
        delta = delta_of[task]
        final_ledgers = [ledger_from_json(text) for text in group["ledger"]]
        with_tuning = max(accounting.tuning_epsilon(candidate_ledgers, ledger, delta) for ledger in final_ledgers)
        settings = runs["config"].nunique()
        stopping = math.nan
        if settings > 1 and all(ledger is not None for ledger in candidate_ledgers):
            candidate_rdp = np.array([accounting.ledger_rdp(ledger) for ledger in candidate_ledgers])
            stopping = max(accounting.selection_epsilon(candidate_rdp, delta, eta=1.0, gamma=1.0 / settings,
                                                        final_rdp=accounting.ledger_rdp(ledger))
                           for ledger in final_ledgers)
        rows.append({"task": task, "algorithm": algorithm, "epsilon": float(epsilon),
                     "final_epsilon": float(group["spent_epsilon"].max()), "tuned_at": tuned_at,
                     "candidate_runs": len(runs), "with_tuning": float(with_tuning), "random_stopping": float(stopping)})
    return pd.DataFrame(rows, columns=["task", "algorithm", "epsilon", "final_epsilon", "tuned_at", "candidate_runs",
                                       "with_tuning", "random_stopping"])


# ---------------------------------------------------------------------- the live panel
def _field_plan(chosen: pd.DataFrame, task: str, epsilon: float) -> list[str]:
    """The candidate entry of every algorithm that has a chosen setting for ``task``, at ``epsilon``."""
    plan = []
    for name in applicable(task):
        try:
            config = config_for(chosen, task, name, epsilon)
        except ValueError:  # tuning left it no valid setting
            continue
        plan.append(_key(name, task, config, epsilon))
    return plan


def field(chosen: pd.DataFrame, tasks: Sequence[str], *, epsilons: Iterable[float], seeds: Sequence[int] = (0,),
          size: str = "fast", iterations: int,
          name: str = "arena: the live panel, every algorithm at every ε of its slider",
          n_jobs: int | None = None) -> pd.DataFrame:
    """Every algorithm of every task, with the setting :func:`select` chose, at every ε of
    ``epsilons`` on the validation split: the final rows of one sweep (cached as data).

    The live panel of the chapter looks its charts up here (a slider move is a lookup, not
    twenty runs); :func:`field_at` runs what is not here, e.g. another seed.
    """
    from . import sweep

    plan = [entry for task in tasks for epsilon in epsilons for entry in _field_plan(chosen, task, float(epsilon))]
    grid = {"candidate": plan, "split": ["validation"], "size": [size], "iterations": [check.count("iterations", iterations)]}
    frame = sweep.grid(evaluate, grid, seeds=seeds, name=name, n_jobs=n_jobs)
    return frame[frame["final"]].reset_index(drop=True)


def field_at(chosen: pd.DataFrame, task: str, epsilon: float, *, seed: int = 0, size: str = "fast", iterations: int,
             precomputed: pd.DataFrame | None = None) -> pd.DataFrame:
    """The final rows of every algorithm of ``task`` at one ε (one row each, ``error`` set for a
    run that failed): taken from ``precomputed`` (a :func:`field`) when it holds this task, ε
    and seed, else computed now with :func:`evaluate` — the same rows either way."""
    import pandas as pd

    epsilon = float(epsilon)
    plan = _field_plan(chosen, task, epsilon)
    if precomputed is not None and math.isfinite(epsilon):
        at = precomputed[(precomputed["task"] == task) & (precomputed["seed"] == seed)
                         & np.isclose(precomputed["epsilon"], epsilon, rtol=1e-9, atol=0)]
        if len(at) == len(plan) and at["size"].eq(size).all() and at["iterations"].eq(iterations).all():
            return at.reset_index(drop=True)
    rows = [row for entry in plan
            for row in evaluate(entry, seed, "validation", size, iterations, epsilon=epsilon) if row["final"]]
    return pd.DataFrame(rows)
