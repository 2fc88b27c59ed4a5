"""The book's names for the library's internal values: what a reader sees instead of ``dp_acc_admm``.

Code says ``"dp_acc_admm"``, ``"small_world"``, ``"logistic-l1"``, ``"l1"``; a reader sees
"DP-AccADMM", "small world", "ℓ1 logistic regression", "ℓ1". Each name has one source: the
algorithm registry (the ``label`` that :func:`dpadmm_lite.registry.register` records, by default
from :data:`dpadmm_lite.registry.LABELS`; ``register`` enters it in :data:`ALGORITHMS`), the
topologies (:data:`dpadmm_lite.topology.LABELS`), and the problem kinds, regularisers and papers
below. :func:`readable` is what
the charts' drop-downs and legends (:func:`dpadmm_book.viz.sweep_chart`), JupyterLab's
drop-downs (:mod:`dpadmm_book.widgets`) and the chapters' tables use.

    >>> from dpadmm_lite.labels import readable
    >>> readable("dp_acc_admm"), readable("small_world"), readable("l1"), readable("ADMM")
    ('DP-AccADMM', 'small world', 'ℓ1', 'ADMM')
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["ALGORITHMS", "PROBLEM_LABELS", "REGULARIZER_LABELS", "PAPER_LABELS", "PARAMETER_LABELS", "readable", "readable_all", "book_names",
           "internal_names", "parameter", "setting_text"]

#: Registered algorithm → its book's name, entered by :func:`dpadmm_lite.registry.register` (which
#: imports this module, never the other way round: :class:`~dpadmm_lite.trace.Trace` reads it too).
ALGORITHMS: dict[str, str] = {}

#: The book's name of each problem kind an algorithm declares (``registry.TASKS``). ("lasso" is left
#: out of :func:`readable`: a word of the prose, not only a name of the library.)
PROBLEM_LABELS = {"logistic-l2": "ℓ2 logistic regression", "logistic-l1": "ℓ1 logistic regression",
                  "lasso": "Lasso", "fused": "graph-guided fused lasso"}

#: The book's name of each regulariser a problem or a panel names (``problems.logistic(..., "l1")``).
REGULARIZER_LABELS = {"l1": "ℓ1", "l2": "ℓ2"}

#: The papers of the registry's ``paper`` field, as the book cites them.
PAPER_LABELS = {"xu2020": "Xu et al. 2020", "huang2019": "Huang et al. 2019", "zhang2017": "Zhang & Zhu 2017",
                "liu2022": "Liu et al. 2022", "cyffers2023": "Cyffers et al. 2023", "chen2020": "Chen & Lee 2020"}

#: Hyper-parameters and options by their book's notation (the notation tables of the chapters):
#: what a tuning grid, a chosen setting or a control of a panel shows.
PARAMETER_LABELS = {"rho": "ρ", "nu": "ν", "lam": "λ", "eta": "η", "gamma": "γ", "sigma": "σ", "mu": "μ",
                    "epsilon": "ε", "delta": "δ", "sampling_rate": "q", "iterations": "T", "n_agents": "N",
                    "batch_size": "b", "noise_multiplier": "σ/Δ", "relaxation": "θ", "clip": "clip",
                    "learning_rate": "learning rate", "step": "step size", "c_w": "bound on ‖w*‖"}


_CACHE: dict[tuple, dict[str, str]] = {}


def book_names() -> dict[str, str]:
    """Every internal name the library has a book's name for: internal name → book's name (a copy).

    The algorithms are those registered so far (``import dpadmm_lite`` registers the library's own).
    """
    from . import topology

    key = tuple(ALGORITHMS.items())
    if key not in _CACHE:  # recomputed when an algorithm is registered
        names = dict(key)
        problems = {name: label for name, label in PROBLEM_LABELS.items() if name != "lasso"}
        for table in (topology.LABELS, problems, REGULARIZER_LABELS, PAPER_LABELS):
            for name, label in table.items():
                if names.setdefault(name, label) != label:  # one internal name, one book's name
                    raise RuntimeError(f"{name!r} has two book's names: {names[name]!r} and {label!r}")
        _CACHE.clear()
        _CACHE[key] = names
    return dict(_CACHE[key])


def internal_names() -> set[str]:
    """The internal names a reader must never see: those whose book's name differs from them."""
    return {name for name, label in book_names().items() if name != label}


def readable(value):
    """The book's name of ``value`` if it is an internal name the library knows, else ``value`` itself.

    Anything that is not such a name (a number, a label already readable, ``"ADMM"``) comes back
    unchanged, so a whole column can be mapped: ``frame["algorithm"].map(readable)``.

    Parameters
    ----------
    value : object
        Any value; a string is looked up among the library's internal names.

    Returns
    -------
    object
        The book's name, or ``value`` unchanged.
    """
    if not isinstance(value, str):
        return value
    return book_names().get(value, value)


def readable_all(values: Iterable) -> list:
    """:func:`readable` of each value.

    Parameters
    ----------
    values : iterable
        Any values.

    Returns
    -------
    list
        :func:`readable` of each, in order.
    """
    names = book_names()
    return [names.get(v, v) if isinstance(v, str) else v for v in values]


def parameter(name: str) -> str:
    """The book's notation for a hyper-parameter or option (``"rho"`` → "ρ", ``"sampling_rate"`` → "q");
    any other name with its underscores as spaces.

    Parameters
    ----------
    name : str
        A hyper-parameter or option name.

    Returns
    -------
    str
        Its label.
    """
    return PARAMETER_LABELS.get(name, name.replace("_", " "))


def setting_text(config) -> str:
    """A setting of hyper-parameters as a reader reads it: ``{"rho": 1.0, "clip": 0.3}`` → "ρ = 1, clip = 0.3"
    (numbers with 3 significant digits); "defaults" for an empty one.

    Parameters
    ----------
    config : mapping
        Hyper-parameter name to value (anything ``dict()`` accepts).

    Returns
    -------
    str
        The setting in words.
    """
    parts = []
    for name, value in dict(config).items():
        shown = f"{value:.3g}" if isinstance(value, float) else str(readable(value))
        parts.append(f"{parameter(name)} = {shown}")
    return ", ".join(parts) or "defaults"
