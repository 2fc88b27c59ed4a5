"""One module per paper family; importing this package registers every algorithm.

Each submodule decorates its algorithm functions with :func:`dpadmm_lite.registry.register`,
so :func:`dpadmm_lite.run` and :func:`dpadmm_lite.algorithms` see them all. Every public
submodule is imported (a new paper family needs no line here): ``linearized`` (Xu et al.),
``star`` (Huang et al.), ``fixed_point`` (Cyffers et al.), ``stochastic`` (Liu et al.), ``chen_lee``
(Chen & Lee's ssADMM, Liu et al.'s DP-ADMM baseline),
``graph`` and ``network`` (Zhang & Zhu).
"""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
