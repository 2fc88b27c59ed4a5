"""dpadmm_lite — differentially private ADMM, small and vectorised.

    import dpadmm_lite as dl
    problem = dl.problems.logistic(X, y, lam=1e-3)
    trace = dl.run("dp_admm", problem, epsilon=1.0, delta=1e-5, rho=1.0, iterations=100)
    dl.algorithm_names()     # the names of every registered algorithm ("dp_admm" in dl.algorithm_names())
    dl.algorithm_table()     # the same as a table: paper, private, setting, description
    best = dl.tune("dp_admm", problem, [{"rho": 0.1}, {"rho": 1.0}], epsilon=1.0, delta=1e-5,
                   validation=(X_val, y_val))   # private tuning: one ε for candidates + choice + model

Submodules (``dl.problems``, ``dl.datasets``, ``dl.topology``, ``dl.accounting``, ``dl.mechanisms``,
``dl.smoothing``, ``dl.tuning``, ``dl.audit``, …) load on first use, so ``import dpadmm_lite`` stays
fast and needs numpy, scipy and threadpoolctl only. The book's instruments (sweeps, charts, widgets,
claim records, the live panels and exercises) are the separate package :mod:`dpadmm_book`.
"""

import importlib

from . import algorithms  # noqa: F401  (the subpackage: importing it registers every algorithm)
from .registry import algorithm_names, algorithm_table, run
from .privacy import PrivacyEvent, PrivacyGuarantee
from .trace import Trace

__version__ = "0.1.0"

_SUBMODULES = {
    "problems", "datasets", "topology", "accounting", "mechanisms", "smoothing", "trace", "registry", "privacy",
    "audit", "tuning", "labels",
}

__all__ = ["run", "tune", "algorithm_names", "algorithm_table", "Trace", "PrivacyEvent", "PrivacyGuarantee",
           *sorted(_SUBMODULES)]


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name == "tune":  # dpadmm_lite.tuning.tune, loaded on first use
        return importlib.import_module(f"{__name__}.tuning").tune
    raise AttributeError(f"module 'dpadmm_lite' has no attribute {name!r}")
