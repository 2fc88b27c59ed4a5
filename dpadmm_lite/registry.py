"""One way to run any algorithm: ``run(name, problem, *, epsilon, delta, rho, iterations, seed)``.

Algorithms register themselves with :func:`register`; chapters, widgets and sweeps only ever
call :func:`run`, so a new algorithm appears in every panel once it is registered.

:func:`register` also wraps the function (users call it directly too) so that every argument is
checked against its declared range before it starts: the algorithm's own declarations
(``register(..., constraints=...)``, :mod:`dpadmm_lite._constraints`) and those of the parameters
every algorithm shares (:data:`SHARED_CONSTRAINTS`: ε, δ, ρ, the seed, ν, ``iterations`` …).
``problem`` must be a :class:`~dpadmm_lite.problems.Problem` (TypeError), and ``iterations`` a
whole number whose trace fits in memory (:func:`max_iterations`): a run that would not fit is
refused before anything is allocated, with a ValueError naming ``iterations`` and its maximum.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import math
import secrets
import time
from dataclasses import dataclass, field, replace
from numbers import Integral, Real
from typing import TYPE_CHECKING, Callable

from . import _constraints
from . import _validate as check
from ._constraints import SCALE, SCALE_NOTE, Interval, Options
from . import labels as _labels
from .privacy import SECRET_SEED
from .problems import counting, work_summary
from .trace import Trace

if TYPE_CHECKING:  # pandas only for algorithm_table(), imported there (a live re-run needs none)
    import pandas as pd


@dataclass(frozen=True)
class AlgorithmInfo:
    """What the registry knows about one algorithm.

    Parameters
    ----------
    name : str
        The registered name.
    function : callable
        The algorithm, wrapped in the shared argument checks; returns a :class:`~dpadmm_lite.trace.Trace`.
    paper : str
        The paper it comes from.
    private : bool
        Whether it is differentially private.
    setting : {"centralized", "star", "graph", "federated", "random walk"}
        Where the data and the computation live.
    description : str
        One sentence for tables.
    tasks : tuple of str, default ("logistic-l2",)
        The problem kinds of :data:`TASKS` it solves.
    tuning : dict, optional
        Hyper-parameter name to the tuple of candidate values; ``None``: nothing to tune.
    label : str, default ""
        The book's name for it, e.g. "DP-AccADMM", "PVP (star)": what a reader sees.
    constraints : dict, default {}
        The ranges of its own options (:mod:`dpadmm_lite._constraints`); the shared parameters'
        are :data:`SHARED_CONSTRAINTS` (:func:`parameter_constraints` merges the two).
    """

    name: str
    function: Callable[..., Trace]
    paper: str
    private: bool
    setting: str  # "centralized", "star", "graph", "federated", "random walk"
    description: str
    tasks: tuple[str, ...] = ("logistic-l2",)
    tuning: dict | None = None
    label: str = ""  # the book's name for it, e.g. "DP-AccADMM", "PVP (star)": what a reader sees
    constraints: dict = field(default_factory=dict)  # option name -> declared range (dpadmm_lite._constraints)

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
    # Chen & Lee 2020: Liu et al.'s DP-ADMM baseline for x = y (algorithms/chen2020.py)
    "ssadmm": "ssADMM (Chen & Lee)",
    "sladmm": "stochastic linearised ADMM",
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

#: The ranges of the parameters every algorithm shares, wherever an algorithm takes them (an
#: algorithm's own declaration of the same name replaces it). Problem sizes bound some of them
#: (``"n_samples"``: the problem's n); ``iterations`` and ``inner`` must also fit in memory.
SHARED_CONSTRAINTS: dict = {
    "epsilon": [Interval(Real, 0, check.MAX_EPSILON, closed="right"),
                Options([math.inf], note=f"no noise; beyond {check.MAX_EPSILON:g} the noise is negligible")],
    "delta": Interval(Real, check.MIN_DELTA, 1, closed="left", note="below it the noise calibration leaves "
                      "floating point"),
    "rho": SCALE,
    "iterations": Interval(Integral, 1, None),
    "seed": [None, Interval(Integral, 0, None)],  # dl.run: None is fresh entropy; an algorithm needs a number
    "nu": [Options([0]), Interval(Real, *check.SCALE_RANGE, note=SCALE_NOTE, meaning="the smoothing strength ν")],
    "sampling_rate": Interval(Real, check.MIN_SAMPLING_RATE, 1, note="below it the participation schedule's "
                              "geometric draws overflow"),
    "n_agents": [Interval(Integral, 1, "n_samples", note="every agent holds at least one record"), None],
    "inner": [Interval(Integral, 1, None), None],
    "inner_tol": Interval(Real, 0, 1, closed="right", note="the gradient norm at which a local solve stops; above "
                          "1 it stops at once and its certified distance leaves floating point"),
    "record_every": Interval(Integral, 1, None),
}

#: The parameters no range can describe, and who checks them: a registered algorithm's signature
#: holds no other parameter without a declaration (tests/test_bad_input.py checks it).
NOT_RANGES = {
    "problem": "a Problem instance (a type: the registry's TypeError)",
    "topology": "a topology name or a Topology instance whose agents must match (the algorithm)",
    "sizes": "a sizes rule name or one size per agent summing to n (dpadmm_lite.datasets.split)",
    "owner": "an array with one agent index per record (dpadmm_lite.problems.make_agents)",
    "alpha_schedule": "an array of one positive value per iteration (the algorithm)",
}


def register(name: str, *, paper: str, private: bool, setting: str, description: str,
             tasks: tuple[str, ...] = ("logistic-l2",), tuning: dict | None = None, label: str | None = None,
             constraints: dict | None = None):
    """Decorator: add an algorithm function to the registry under ``name``.

    Parameters
    ----------
    name : str
        The name the algorithm is registered (and run) under.
    paper : str
        The paper it comes from.
    private : bool
        Whether it is differentially private.
    setting : {"centralized", "star", "graph", "federated", "random walk"}
        Where the data and the computation live.
    description : str
        One sentence for tables.
    tasks : tuple of str, default ("logistic-l2",)
        The problem kinds of :data:`TASKS` it solves.
    tuning : dict, optional
        Hyper-parameter name to its candidate values; ``None``: nothing to tune.
    label : str, optional
        The book's name for the algorithm; ``None``: its entry in :data:`LABELS`.
    constraints : dict, optional
        Option name to its declared range (:mod:`dpadmm_lite._constraints`: an ``Interval``, ``Options``,
        ``Boolean``, or a list of them with ``None`` for "None allowed"); replaces the shared
        declaration (:data:`SHARED_CONSTRAINTS`) of the same name.

    Returns
    -------
    callable
        The decorator.

    Notes
    -----
    The function must accept ``(problem, *, epsilon, delta, rho, iterations, seed, **options)``
    and return a :class:`~dpadmm_lite.trace.Trace`. The decorator returns it wrapped in the
    shared argument checks (:func:`check_arguments`); ``__wrapped__`` is the function itself.
    Every argument is checked against ``constraints`` and :data:`SHARED_CONSTRAINTS`; a declaration
    of a parameter the signature does not have is refused (ValueError).

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
        function = getattr(function, "_unchecked", function)  # registered under a second name
        registered = _REGISTRY[name].function if name in _REGISTRY else None
        if registered is not None and getattr(registered, "_unchecked", registered) is not function:
            raise ValueError(f"algorithm {name!r} is registered twice")
        own = dict(constraints or {})
        unknown = sorted(set(own) - set(inspect.signature(function).parameters))
        if unknown:
            raise ValueError(f"constraints of algorithm {name!r} must name its parameters, got {unknown}")
        checked = _with_checks(function, setting, own)
        _REGISTRY[name] = AlgorithmInfo(name, checked, paper, private, setting, description, tasks,
                                        None if tuning is None else {k: tuple(v) for k, v in tuning.items()},
                                        label, own)
        _labels.ALGORITHMS[name] = label  # what dpadmm_lite.labels.readable shows for it
        return checked

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

    Parameters
    ----------
    name : str
        A registered algorithm name.

    Returns
    -------
    str
        The book's name of the algorithm.
    """
    return info(name).label


def parameter_constraints(name: str) -> dict:
    """The declared range of each parameter of algorithm ``name``: its own, else the shared one.

    Parameters
    ----------
    name : str
        A registered algorithm name.

    Returns
    -------
    dict
        Parameter name to its declaration, for the parameters of its signature that have one (the
        others are in :data:`NOT_RANGES`).
    """
    algorithm = info(name)
    declared = {**SHARED_CONSTRAINTS, **algorithm.constraints}
    return {p: declared[p] for p in inspect.signature(algorithm.function).parameters if p in declared}


def _with_checks(function, setting: str, constraints: dict):
    """``function`` behind :func:`check_arguments` (same name, docstring and signature).

    A keyword the signature does not take is refused (TypeError, as Python refuses it) with a message that names
    the algorithm, the unknown keyword(s) and the parameters it accepts.
    """
    signature = inspect.signature(function)
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values())
    accepted = [p.name for p in signature.parameters.values()
                if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]

    @functools.wraps(function)
    def checked(*args, **kwargs):
        unknown = [] if takes_any else sorted(set(kwargs) - set(accepted))
        if unknown:
            raise TypeError(f"{function.__name__} got unknown parameter{'s' if len(unknown) > 1 else ''} "
                            f"{', '.join(map(repr, unknown))}; its parameters are {', '.join(accepted)}")
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        for p in signature.parameters.values():  # **options: checked alongside the named arguments
            if p.kind is inspect.Parameter.VAR_KEYWORD:
                arguments.update(arguments.pop(p.name))
        arguments.update(check_arguments(setting, arguments, constraints))
        positional = [arguments.pop(p.name) for p in signature.parameters.values()
                      if p.kind is inspect.Parameter.POSITIONAL_ONLY]
        trace = function(*positional, **arguments)
        check_finite(function.__name__, trace, arguments)
        return trace

    checked._unchecked = function
    return checked


class NonFiniteModel(FloatingPointError):
    """A private run's released model holds NaN or ±∞ while its ε is finite: raised instead of returning it.

    A model of NaNs "at ε = 1" would be a privacy statement about nothing (and a NaN release is not
    what the noise calibration covered), so :func:`check_finite` refuses it, naming the settings.
    """


def check_finite(name: str, trace, settings: dict) -> None:
    """Raise :class:`NonFiniteModel` when ``trace`` releases a non-finite model under a finite ε.

    Parameters
    ----------
    name : str
        The algorithm's name, for the message.
    trace : Trace
        The run's result.
    settings : dict
        The run's arguments; the numbers, strings and ``None`` among them are quoted in the message.
    """
    import numpy as np

    model = getattr(trace, "model", None)
    privacy = getattr(trace, "privacy", None)
    if model is None or privacy is None or not math.isfinite(getattr(privacy, "epsilon", math.inf)):
        return
    model = np.asarray(model, dtype=float)
    if np.all(np.isfinite(model)):
        return
    shown = ", ".join(f"{k}={v!r}" for k, v in settings.items()
                      if k != "problem" and (v is None or isinstance(v, (int, float, str))))
    raise NonFiniteModel(f"{name} released a model with {int(np.sum(~np.isfinite(model)))} NaN or infinite entries "
                         f"while reporting ε = {privacy.epsilon:.4g}; the run left floating point at these settings "
                         f"({shown}): move rho, the step sizes or the clipping bound towards the middle of their "
                         "ranges")


#: What a run keeps per iteration besides its iterates, in 8-byte numbers per agent: the local
#: loss, regulariser, distance, step size, noise scale and sensitivity of each agent.
_PER_AGENT = 8
#: Copies of the per-iteration arrays alive at once (the record, and its evaluation into the Trace).
_COPIES = 2
#: Bookkeeping per iteration besides the arrays above: ledger events (one PrivacyEvent with its
#: note per iteration for some algorithms), participation records, noise drawn in chunks. Measured
#: with tracemalloc on the small test cases (tests/algorithm_cases.py): at most 6.5 KiB.
_BOOKKEEPING = 8 * 1024


def trace_bytes_per_iteration(setting: str, problem, options: dict) -> int:
    """Estimated bytes a run keeps per iteration: its iterates, per-agent records and ledger.

    Parameters
    ----------
    setting : {"centralized", "star", "graph", "federated", "random walk"}
        The algorithm's setting (:attr:`AlgorithmInfo.setting`); a graph keeps per-edge records.
    problem : Problem
        The problem a run would solve.
    options : dict
        The run's options: ``n_agents`` (a whole number ≥ 1), ``topology``, ``inner`` (a whole number
        ≥ 1, or ``None``: ⌈2n/b⌉), ``batch_size``.

    Returns
    -------
    int
        Estimated bytes per iteration.

    Notes
    -----
    From the problem's dimension d, the rows m of its constraint matrix A, the agents
    (``n_agents``; a graph keeps every agent's released model and one distance per edge), and the
    inner steps of an epoch (``inner``, default ⌈2n/b⌉: DP-VRADMM draws their noise up front).
    Every algorithm stores the iterate, its noise and the splitting variables y, u of each step.
    The evaluation of the iterates (margins of the training rows) works in blocks of bounded
    size, so it adds a constant, not a per-iteration cost.
    """
    d = problem.d
    m = problem.A.shape[0] if problem.regularizer == "fused" and problem.A is not None else d
    agents = options.get("n_agents")
    topology = options.get("topology")
    if agents is None:
        agents = getattr(topology, "n_agents", 10 if setting == "graph" else 1)
    agents = check.count("n_agents", agents)
    inner = 1
    if "inner" in options:  # epochs of inner steps (SVRG-style)
        if options["inner"] is not None:
            inner = check.count("inner", options["inner"])
        else:
            b = options.get("batch_size")
            b = b if isinstance(b, int) and not isinstance(b, bool) and 1 <= b <= problem.n else min(50, problem.n)
            inner = max(1, math.ceil(2 * problem.n / b))
    numbers = inner * (2 * d + 2 * m) + _PER_AGENT * agents
    if setting == "graph":
        edges = agents * (agents - 1) // 2 if topology in ("complete", "erdos_renyi") else \
            getattr(topology, "n_edges", 4 * agents)
        numbers += agents * d + edges
    return 8 * numbers * _COPIES + _BOOKKEEPING


def max_iterations(setting: str, problem, options: dict) -> int:
    """The most iterations whose trace fits in :data:`dpadmm_lite._validate.MEMORY_BUDGET`.

    Parameters
    ----------
    setting : {"centralized", "star", "graph", "federated", "random walk"}
        The algorithm's setting (:attr:`AlgorithmInfo.setting`); a graph keeps per-edge records.
    problem : Problem
        The problem a run would solve.
    options : dict
        The run's options (``n_agents``, ``topology``, ``inner``, ``batch_size`` are read).

    Returns
    -------
    int
        The largest number of iterations, at least 1.
    """
    return max(1, int(check.MEMORY_BUDGET // trace_bytes_per_iteration(setting, problem, options)))


def problem_sizes(problem) -> dict:
    """The sizes of ``problem`` that a declared range may name as an end: ``n`` and ``n_samples``, its records.

    Parameters
    ----------
    problem : Problem
        The problem a run solves.

    Returns
    -------
    dict
        Size name to value, for :func:`dpadmm_lite._constraints.check`.
    """
    return {"n": problem.n, "n_samples": problem.n}


def check_arguments(setting: str, arguments: dict, constraints: dict | None = None) -> dict:
    """Check every declared argument against its range; return them converted (``iterations=3.0`` → 3).

    Parameters
    ----------
    setting : {"centralized", "star", "graph", "federated", "random walk"}
        The algorithm's setting (:attr:`AlgorithmInfo.setting`); a graph keeps per-edge records.
    arguments : dict
        Argument name to value, as a run receives them.
    constraints : dict, optional
        The algorithm's own declarations (:attr:`AlgorithmInfo.constraints`); they replace the
        shared ones (:data:`SHARED_CONSTRAINTS`) of the same name.

    Returns
    -------
    dict
        The checked arguments, converted (only those ``arguments`` holds and a declaration covers).

    Notes
    -----
    ``problem`` must be a :class:`~dpadmm_lite.problems.Problem` (TypeError). Each other argument
    with a declaration must lie in its range (a ValueError naming the parameter, the range and the
    value: ``relaxation must be in (0, 1] (the paper's λ), got 2.0``); ranges bounded by the
    problem's size (``n_agents`` ≤ n) are read from ``problem``. ``iterations`` (and the ``inner``
    steps of an epoch) must fit in memory (:func:`max_iterations`). Arguments absent from
    ``arguments`` are not checked; what no declaration covers (arrays, topologies, bounds that
    depend on the data such as η ≤ 1/L) is left to the algorithm.
    """
    from .problems import Problem

    problem = arguments.get("problem")
    if "problem" in arguments and not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpadmm_lite.problems.Problem (from problems.logistic, lasso or "
                        f"graph_guided_fused_lasso), got {type(problem).__name__}")
    sizes = problem_sizes(problem) if isinstance(problem, Problem) else None
    declared = {**SHARED_CONSTRAINTS, **(constraints or {})}
    out = {name: _constraints.check(name, value, declared[name], sizes)
           for name, value in arguments.items() if name in declared}
    if isinstance(problem, Problem) and out.get("inner") is not None:  # one epoch of inner steps must fit
        inner = out["inner"]
        per_step = 8 * 2 * (problem.d + (problem.A.shape[0] if problem.regularizer == "fused"
                                        and problem.A is not None else problem.d)) * _COPIES
        check.fits_in_memory("inner", arguments["inner"], inner * per_step,
                             what=f"one epoch of {check._short(inner)} inner steps",
                             limit=max(1, int(check.MEMORY_BUDGET // per_step)))
    if "iterations" in out and isinstance(problem, Problem):
        iterations = out["iterations"]
        options = {k: out.get(k, v) for k, v in arguments.items() if k in ("n_agents", "topology", "inner",
                                                                           "batch_size")}
        per_iteration = trace_bytes_per_iteration(setting, problem, options)
        limit = max(1, int(check.MEMORY_BUDGET // per_iteration))
        if iterations > limit:
            check.fits_in_memory("iterations", arguments["iterations"], iterations * per_iteration,
                                 what=f"the trace of {check._short(iterations)} iterations", limit=limit)
    return out


class AlgorithmNames(tuple):
    """The names of the registered algorithms: a tuple (``in``, iteration, ``len``, indexing).

    ``.private`` are the names of the private ones; ``.table()`` is :func:`algorithm_table`.

    Parameters
    ----------
    iterable : iterable of str, default ()
        The registered names.
    """

    @property
    def private(self) -> tuple[str, ...]:
        return tuple(name for name in self if _REGISTRY[name].private)

    def table(self) -> pd.DataFrame:
        return algorithm_table()


def algorithm_names() -> AlgorithmNames:
    """The names of every registered algorithm, sorted: ``"dp_admm" in dl.algorithm_names()``.

    The descriptive table (paper, private, setting, description) is :func:`algorithm_table`.
    """
    _load_all()
    return AlgorithmNames(sorted(_REGISTRY))


def algorithm_table() -> pd.DataFrame:
    """Every registered algorithm as a table indexed by name: paper, private, setting, tasks, description."""
    import pandas as pd  # lazily: a live re-run in the browser needs no pandas

    _load_all()
    columns = ["name", "paper", "private", "setting", "tasks", "description"]
    rows = [
        {"name": a.name, "paper": a.paper, "private": a.private, "setting": a.setting, "tasks": ", ".join(a.tasks),
         "description": a.description}
        for a in sorted(_REGISTRY.values(), key=lambda a: (a.paper, a.name))
    ]
    return pd.DataFrame(rows, columns=columns).set_index("name")


def info(name: str) -> AlgorithmInfo:
    """What the registry knows about algorithm ``name`` (ValueError naming the valid names).

    Parameters
    ----------
    name : str
        A registered algorithm name.

    Returns
    -------
    AlgorithmInfo
        Its registry entry.
    """
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
    seed: int | None = None,
    **options,
) -> Trace:
    """Run the registered algorithm ``name`` and return its :class:`Trace`.

    Parameters
    ----------
    name : str
        A registered algorithm name (:func:`dpadmm_lite.algorithm_names`).
    problem : Problem
        The :class:`~dpadmm_lite.problems.Problem` to solve.
    epsilon : float, default math.inf
        End-to-end ε of the run, in (0, 1e4], or ``math.inf`` (no noise).
    delta : float, default 1e-5
        End-to-end δ, in [1e-100, 1).
    rho : float, default 1.0
        The ADMM penalty ρ, in [1e-12, 1e12].
    iterations : int, default 100
        Number of iterations, a whole number in [1, :func:`max_iterations`].
    seed : int, optional
        A whole number ≥ 0 for a reproducible run; ``None``: fresh entropy for a private run, 0
        without noise.

    Returns
    -------
    Trace
        The run: its objective per iteration, released model, ledger and guarantee.

    Notes
    -----
    ``epsilon=math.inf`` runs without noise. Every argument with a declared range is checked here
    (:func:`check_arguments`), with errors that name the parameter; what no declaration covers is
    checked by the algorithm. ``Trace.wall_time``, ``Trace.work`` (the counted data
    passes, factorizations and solves: :func:`dpadmm_lite.problems.counting`) and ``Trace.params``
    are filled in.

    ``seed=None`` (the default): a private run draws its randomness from fresh OS entropy and keeps
    no seed (``params["seed"]`` is None), so nobody can reproduce its noise; a run without noise
    uses seed 0 (only the deal of rows to agents is random there). A whole number seeds the run
    reproducibly; a private run's guarantee then assumes the seed stays secret
    (``privacy.assumes`` is :data:`~dpadmm_lite.privacy.SECRET_SEED`).
    """
    algorithm = info(name)
    common = check_arguments(algorithm.setting, dict(problem=problem, epsilon=epsilon, delta=delta, rho=rho,
                                                     iterations=iterations, seed=seed, **options),
                             algorithm.constraints)
    epsilon, delta, rho, iterations, seed = (common[k] for k in ("epsilon", "delta", "rho", "iterations", "seed"))
    fresh = seed is None and math.isfinite(epsilon)
    if seed is None:
        seed = secrets.randbits(63) if fresh else 0
    with counting() as counts:
        start = time.perf_counter()
        trace = algorithm.function(
            problem, epsilon=epsilon, delta=delta, rho=rho, iterations=iterations, seed=seed, **options
        )
        elapsed = time.perf_counter() - start
    params = dict(epsilon=epsilon, delta=delta, rho=rho, iterations=iterations, seed=None if fresh else seed,
                  **options)
    n = getattr(problem, "n", 0)
    work = (work_summary(counts, n) if n else dict(counts)) if any(counts.values()) else {}
    trace = replace(trace, algorithm=name, wall_time=elapsed, params={**params, **trace.params, "seed": params["seed"]},
                    work=work)
    if not fresh and math.isfinite(epsilon) and trace.privacy.covered and math.isfinite(trace.privacy.epsilon):
        trace = replace(trace, privacy=replace(trace.privacy, assumes=SECRET_SEED))
    return trace


def _load_all() -> None:
    """Import the algorithm modules so that their ``@register`` decorators have run."""
    importlib.import_module(f"{__package__}.algorithms")  # import side effect: registration
