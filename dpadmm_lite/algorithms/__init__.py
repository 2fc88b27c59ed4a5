"""The algorithms, one module per paper family; importing this package registers every one.

Each submodule decorates its algorithm functions with :func:`dpadmm_lite.registry.register`, so
:func:`dpadmm_lite.run` and :func:`dpadmm_lite.algorithm_table` see them all. Every public submodule is
imported (a new paper family needs no line here).

Paper → module → what it implements (the equations are those of the paper; each function's docstring maps
them to lines, and each paper's own privacy statement is in ``dpadmm_lite/accounting/_<paper>.py``):

===================================  ========================  ====================================================
paper                                module                    algorithms (private, then non-private twins)
===================================  ========================  ====================================================
Xu et al. 2020 (TIFS 2021)           ``xu2020``                ``dp_admm`` (Alg. 2, Thm 1: linearized ADMM with
                                                               gradient perturbation), ``dp_acc_admm`` (Alg. 3:
                                                               Nesterov extrapolation); ``admm_linearized``,
                                                               ``acc_admm``
Huang et al. 2019 (TIFS 2020)        ``huang2019``             ``dp_admm_star`` (Alg. 3: closed form (12a) of the
                                                               approximate Lagrangian (8), noise of eq. (14));
                                                               baselines ``pvp_star`` (Alg. 2), ``dvp_star``,
                                                               ``dp_sgd_star``; ``admm_star`` (Alg. 1)
Cyffers, Bellet & Basu (ICML 2023)   ``cyffers2023``           ``private_admm`` (Alg. 2/6, eqs. 5–7),
                                                               ``private_admm_federated`` (Alg. 3),
                                                               ``private_admm_walk`` (Alg. 4), ``dp_prox_sgd``
                                                               (App. E, Prop. 1); ``admm_consensus``,
                                                               ``admm_federated``, ``admm_walk``, ``prox_sgd``
Liu et al. 2022 (TIFS)               ``liu2022``               ``dp_sadmm`` (Alg. 2, Thm 2), ``dp_vradmm`` (Alg. 1,
                                                               Thm 1; SVRG epochs), both along the Laplacian-
                                                               smoothed direction of eqs. (5)/(7); ``sadmm``,
                                                               ``svrg_admm``; the smoothing operator is
                                                               :mod:`dpadmm_lite.smoothing`
Chen & Lee 2020 (Liu et al.'s        ``chen2020``              ``ssadmm`` (stochastic linearized ADMM for x = y,
baseline "DP-ADMM [15]")                                       the book's reconstruction); ``sladmm``
Zhang & Zhu 2017 (TIFS)              ``zhang2017_perturbation``  ``dvp_graph`` (Alg. 2, dual perturbation (13)–(14)),
                                                               ``pvp_graph`` (Alg. 3, primal perturbation (18))
                                     ``zhang2017``             ``admm_graph`` (Alg. 1, updates (9)–(10)) and the
                                                               exact local solvers DVP and PVP share
===================================  ========================  ====================================================
"""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
