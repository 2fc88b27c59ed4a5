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


_REGISTRY: dict[str, AlgorithmInfo] = {}


def register(name: str, *, paper: str, private: bool, setting: str, description: str):
    """Decorator: add an algorithm function to the registry under ``name``.

    The function must accept ``(problem, *, epsilon, delta, rho, iterations, seed, **options)``
    and return a :class:`~dpadmm_lite.trace.Trace`.
    """

    def decorate(function):
        if name in _REGISTRY and _REGISTRY[name].function is not function:
            raise ValueError(f"algorithm {name!r} is registered twice")
        _REGISTRY[name] = AlgorithmInfo(name, function, paper, private, setting, description)
        return function

    return decorate


def algorithms() -> pd.DataFrame:
    """Every registered algorithm: name, paper, whether private, setting, description."""
    _load_all()
    rows = [
        {"name": a.name, "paper": a.paper, "private": a.private, "setting": a.setting, "description": a.description}
        for a in sorted(_REGISTRY.values(), key=lambda a: (a.paper, a.name))
    ]
    return pd.DataFrame(rows, columns=["name", "paper", "private", "setting", "description"]).set_index("name")


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
    _load_all()
    if name not in _REGISTRY:
        raise ValueError(f"algorithm must be one of {sorted(_REGISTRY)}, got {name!r}")
    epsilon = check.epsilon(epsilon)
    delta = check.open_unit("delta", delta)
    rho = check.positive("rho", rho)
    iterations = check.count("iterations", iterations)
    seed = check.count("seed", seed, minimum=0)
    start = time.perf_counter()
    trace = _REGISTRY[name].function(
        problem, epsilon=epsilon, delta=delta, rho=rho, iterations=iterations, seed=seed, **options
    )
    elapsed = time.perf_counter() - start
    params = dict(epsilon=epsilon, delta=delta, rho=rho, iterations=iterations, seed=seed, **options)
    return replace(trace, algorithm=name, wall_time=elapsed, params={**params, **trace.params})


def _load_all() -> None:
    """Import the algorithm modules so that their ``@register`` decorators have run."""
    importlib.import_module(f"{__package__}.algorithms")  # import side effect: registration
