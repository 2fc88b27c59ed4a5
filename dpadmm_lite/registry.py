"""One way to run any algorithm: ``run(name, problem, *, epsilon, delta, rho, iterations, seed)``.

Algorithms register themselves with :func:`register`; chapters, widgets and sweeps only ever
call :func:`run`, so a new algorithm appears in every panel once it is registered.
"""

from __future__ import annotations

import importlib
import math
import time
from dataclasses import dataclass, replace
from typing import Callable

import pandas as pd

from . import _validate as check
from . import labels as _labels
from .trace import Trace


@dataclass(frozen=True)
class AlgorithmInfo:
    """What the registry knows about one algorithm."""

    name: str
    function: Callable[..., Trace]
    paper: str
    private: bool
    setting: str  # "centralized", "star", "graph", "federated", "random walk"
    description: str
    tasks: tuple[str, ...] = ("logistic-l2",)
    tuning: dict | None = None
    label: str = ""  # the book's name for it, e.g. "DP-AccADMM", "PVP (star)": what a reader sees

#: The problem kinds an algorithm can declare it solves (``register(..., tasks=...)``):
#: ℓ2- or ℓ1-regularised logistic regression, the Lasso, the graph-guided fused lasso.
TASKS = ("logistic-l2", "logistic-l1", "lasso", "fused")

#: The book's name of each registered algorithm (what chapters, legends and drop-downs call it),
#: used by :func:`register` when it is not given a ``label``. One name per algorithm, no two alike.
LABELS = {
    # Xu et al. 2020: linearized and accelerated ADMM
    "dp_admm": "DP-ADMM",
    "dp_acc_admm": "DP-AccADMM",
    "admm_linearized": "linearized ADMM",
    "acc_admm": "AccADMM",
    # Huang et al. 2019: ADMM over a star
    "admm_star": "ADMM (star)",
    "pvp_star": "PVP (star)",
    "dvp_star": "DVP (star)",
    "dp_admm_star": "DP-ADMM (star)",
    "dp_sgd_star": "DP-SGD (star)",
    # Zhang & Zhu 2017: ADMM over a network
    "admm_graph": "ADMM (network)",
    "dvp_graph": "DVP (network)",
    "pvp_graph": "PVP (network)",
    # Liu et al. 2022: stochastic ADMM with Laplacian smoothing
    "dp_sadmm": "DP-SADMM",
    "sadmm": "stochastic ADMM",
    "dp_vradmm": "DP-VRADMM",
    "svrg_admm": "SVRG-ADMM",
    # Cyffers et al. 2023: ADMM as a noisy fixed-point iteration
    "admm_consensus": "consensus ADMM",
    "private_admm": "private ADMM (centralized)",
    "admm_federated": "ADMM (federated)",
    "private_admm_federated": "private ADMM (federated)",
    "admm_walk": "ADMM (random walk)",
    "private_admm_walk": "private ADMM (random walk)",
    "prox_sgd": "proximal SGD",
    "dp_prox_sgd": "proximal DP-SGD",
}



_REGISTRY: dict[str, AlgorithmInfo] = {}


def register(name: str, *, paper: str, private: bool, setting: str, description: str,
             tasks: tuple[str, ...] = ("logistic-l2",), tuning: dict | None = None, label: str | None = None):
    """Decorator: add an algorithm function to the registry under ``name``.

    The function must accept ``(problem, *, epsilon, delta, rho, iterations, seed, **options)``
    and return a :class:`~dpadmm_lite.trace.Trace`.

    ``tasks`` are the problem kinds of :data:`TASKS` it solves. ``tuning`` maps each
    hyper-parameter (``"rho"`` or an option name) to the candidate values a fair comparison
    searches on a validation split (the arena chapter gives every algorithm the same budget of
    candidates); ``None``: nothing to tune.

    ``label`` is the book's name for the algorithm, what a reader sees in tables, legends and
    drop-downs (default: its entry in :data:`LABELS`); an algorithm without one, or with the
    label of another algorithm, is refused (ValueError).
    """
    tasks = tuple(tasks)
    label = _label_for(name, label)
    for task in tasks:
        check.choice("tasks", task, TASKS)

    def decorate(function):
        if name in _REGISTRY and _REGISTRY[name].function is not function:
            raise ValueError(f"algorithm {name!r} is registered twice")
        _REGISTRY[name] = AlgorithmInfo(name, function, paper, private, setting, description, tasks,
                                        None if tuning is None else {k: tuple(v) for k, v in tuning.items()},
                                        label)
        _labels.ALGORITHMS[name] = label  # what dpadmm_lite.labels.readable shows for it
        return function

    return decorate


def _label_for(name: str, label: str | None) -> str:
    """The label ``name`` registers with: ``label``, else :data:`LABELS`; refused when missing or taken."""
    label = LABELS.get(name) if label is None else label
    if not isinstance(label, str) or not label.strip():
        raise ValueError(f"label of algorithm {name!r} must be a non-empty string (the book's name for it, e.g. "
                         f"'DP-AccADMM'), got {label!r}")
    taken = [other.name for other in _REGISTRY.values() if other.label == label and other.name != name]
    if taken:
        raise ValueError(f"label of algorithm {name!r} must differ from every other algorithm's, got {label!r} "
                         f"(the label of {taken[0]!r})")
    return label


def label(name: str) -> str:
    """The book's name of registered algorithm ``name`` (``"dp_acc_admm"`` → ``"DP-AccADMM"``).

    ValueError naming the valid names for an unknown one.
    """
    return info(name).label


class AlgorithmNames(tuple):
    """The names of the registered algorithms: a tuple (``in``, iteration, ``len``, indexing).

    ``.private`` are the names of the private ones; ``.table()`` is :func:`algorithm_table`.
    """

    @property
    def private(self) -> tuple[str, ...]:
        return tuple(name for name in self if _REGISTRY[name].private)

    def table(self) -> pd.DataFrame:
        return algorithm_table()


def algorithms() -> AlgorithmNames:
    """The names of every registered algorithm, sorted: ``"dp_admm" in dl.algorithms()``.

    The descriptive table (paper, private, setting, description) is :func:`algorithm_table`.
    """
    _load_all()
    return AlgorithmNames(sorted(_REGISTRY))


def algorithm_table() -> pd.DataFrame:
    """Every registered algorithm as a table indexed by name: paper, private, setting, tasks, description."""
    _load_all()
    columns = ["name", "paper", "private", "setting", "tasks", "description"]
    rows = [
        {"name": a.name, "paper": a.paper, "private": a.private, "setting": a.setting, "tasks": ", ".join(a.tasks),
         "description": a.description}
        for a in sorted(_REGISTRY.values(), key=lambda a: (a.paper, a.name))
    ]
    return pd.DataFrame(rows, columns=columns).set_index("name")


def info(name: str) -> AlgorithmInfo:
    """What the registry knows about algorithm ``name`` (ValueError naming the valid names)."""
    _load_all()
    if name not in _REGISTRY:
        raise ValueError(f"algorithm must be one of {sorted(_REGISTRY)}, got {name!r}")
    return _REGISTRY[name]


def run(
    name: str,
    problem,
    *,
    epsilon: float = math.inf,
    delta: float = 1e-5,
    rho: float = 1.0,
    iterations: int = 100,
    seed: int = 0,
    **options,
) -> Trace:
    """Run the registered algorithm ``name`` and return its :class:`Trace`.

    ``epsilon=math.inf`` runs without noise. The common arguments are checked here, with
    errors that name the parameter; algorithm-specific ``options`` are checked by the
    algorithm. ``Trace.wall_time`` and ``Trace.params`` are filled in.
    """
    algorithm = info(name)
    epsilon = check.epsilon(epsilon)
    delta = check.open_unit("delta", delta)
    rho = check.positive("rho", rho)
    iterations = check.count("iterations", iterations)
    seed = check.count("seed", seed, minimum=0)
    start = time.perf_counter()
    trace = algorithm.function(
        problem, epsilon=epsilon, delta=delta, rho=rho, iterations=iterations, seed=seed, **options
    )
    elapsed = time.perf_counter() - start
    params = dict(epsilon=epsilon, delta=delta, rho=rho, iterations=iterations, seed=seed, **options)
    return replace(trace, algorithm=name, wall_time=elapsed, params={**params, **trace.params})


def _load_all() -> None:
    """Import the algorithm modules so that their ``@register`` decorators have run."""
    importlib.import_module(f"{__package__}.algorithms")  # import side effect: registration
