"""One module per paper family; importing this package registers every algorithm.

Each submodule decorates its algorithm functions with :func:`dpadmm_lite.registry.register`,
so :func:`dpadmm_lite.run` and :func:`dpadmm_lite.algorithms` see them all.
"""

import importlib
import pkgutil

from . import stochastic  # noqa: F401  (Liu et al. 2022; the loop below imports the rest)
from . import fixed_point  # noqa: F401  (Cyffers et al. 2023)

for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
