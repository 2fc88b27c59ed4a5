"""One small, fast test case per registered algorithm, shared by every test that loops over them.

The privacy-contract tests (budget met end to end, noise independent of the data's scale), the
privacy-bug tests (noise drawn = noise claimed, sensitivity claimed ≥ measured) and the arena
tests all take their problem and options from here, so a newly registered private algorithm
is covered by all of them as soon as it has an entry — and a test fails, naming this file, while
it has none (``test_every_registered_algorithm_has_a_case``).

``CASES[name]`` is a :class:`Case`: a function that builds the small problem from a data scale
(the tests multiply the features by 0.5 to check that noise does not follow the data), and the
options passed to :func:`dpadmm_lite.run` besides ε, δ and the seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest

from dpadmm_lite import datasets, problems


def logistic_problem(scale: float = 1.0, *, penalty: str = "l2", n: int = 240, d: int = 6, seed: int = 0):
    """Logistic regression on a seeded synthetic set with rows of norm ≤ 1 (times ``scale``)."""
    X, y, _ = datasets.make_classification(n + 80, d, seed=seed)
    return problems.logistic(scale * X[:n], y[:n], 1e-2, penalty, X_test=scale * X[n:], y_test=y[n:])


def lasso_problem(scale: float = 1.0, *, n: int = 200, p: int = 8, seed: int = 0):
    """A small Lasso (rows on the unit sphere, times ``scale``) with a test split."""
    X, y, _ = datasets.make_lasso(n + 80, p, seed=seed)
    return problems.lasso(scale * X[:n], y[:n], 1e-2, X_test=scale * X[n:], y_test=y[n:])


@dataclass(frozen=True)
class Case:
    """How to run one algorithm small: ``problem(scale)`` and the options of :func:`dpadmm_lite.run`."""

    problem: Callable[[float], problems.Problem]
    options: dict = field(default_factory=dict)


_STAR = {"rho": 0.5, "iterations": 8, "n_agents": 4}

CASES: dict[str, Case] = {
    # Xu et al. 2020 (xu2020.py)
    "admm_linearized": Case(logistic_problem, {"rho": 1.0, "iterations": 20}),
    "acc_admm": Case(logistic_problem, {"rho": 1.0, "iterations": 20}),
    "dp_admm": Case(logistic_problem, {"rho": 1.0, "iterations": 20}),
    "dp_acc_admm": Case(logistic_problem, {"rho": 1.0, "iterations": 20}),
    # Huang et al. 2019 (huang2019.py)
    "admm_star": Case(logistic_problem, _STAR),
    "pvp_star": Case(logistic_problem, _STAR),
    "dvp_star": Case(logistic_problem, _STAR),
    "dp_admm_star": Case(logistic_problem, _STAR),
    "dp_sgd_star": Case(logistic_problem, _STAR),
    # Zhang & Zhu 2017, non-private (zhang2017.py)
    "admm_graph": Case(logistic_problem, {"rho": 1.0, "iterations": 10, "n_agents": 4, "topology": "ring"}),
    # Zhang & Zhu 2017, private (zhang2017_perturbation.py)
    "dvp_graph": Case(logistic_problem, {"rho": 0.5, "iterations": 8, "n_agents": 4, "topology": "ring"}),
    "pvp_graph": Case(logistic_problem, {"rho": 0.5, "iterations": 8, "n_agents": 4, "topology": "ring"}),
    # Liu et al. 2022 (liu2022.py): DP-SADMM counts steps T, DP-VRADMM epochs S (m = 2n/b inner steps each)
    "sadmm": Case(logistic_problem, {"rho": 1.0, "iterations": 30, "nu": 2.0, "batch_size": 40}),
    "dp_sadmm": Case(logistic_problem, {"rho": 1.0, "iterations": 30, "nu": 2.0, "batch_size": 40}),
    "svrg_admm": Case(logistic_problem, {"rho": 1.0, "iterations": 3, "nu": 2.0, "batch_size": 40}),
    "dp_vradmm": Case(logistic_problem, {"rho": 1.0, "iterations": 3, "nu": 2.0, "batch_size": 40}),
    # Chen & Lee 2020 (chen2020.py): Liu et al.'s DP-ADMM baseline, steps T of a Poisson minibatch, x = y
    "sladmm": Case(lambda scale=1.0: logistic_problem(scale, penalty="l1"), {"rho": 1.0, "iterations": 30,
                                                                             "batch_size": 40}),
    "ssadmm": Case(lambda scale=1.0: logistic_problem(scale, penalty="l1"), {"rho": 1.0, "iterations": 30,
                                                                             "batch_size": 40}),
    # Cyffers et al. 2023 (cyffers2023.py): one user per record; clipped Lasso (γ = 1/ρ = 400)
    "admm_consensus": Case(lasso_problem, {"rho": 1 / 400, "iterations": 10, "relaxation": 0.5, "clip": 0.1}),
    "private_admm": Case(lasso_problem, {"rho": 1 / 400, "iterations": 10, "relaxation": 0.5, "clip": 0.1}),
    "admm_federated": Case(lasso_problem, {"rho": 1 / 400, "iterations": 10, "clip": 0.1, "sampling_rate": 0.2}),
    "private_admm_federated": Case(lasso_problem, {"rho": 1 / 400, "iterations": 10, "clip": 0.1,
                                                   "sampling_rate": 0.2}),
    "admm_walk": Case(lasso_problem, {"rho": 1 / 400, "iterations": 40, "clip": 0.1}),
    "private_admm_walk": Case(lasso_problem, {"rho": 1 / 400, "iterations": 40, "clip": 0.1}),
    "prox_sgd": Case(lasso_problem, {"iterations": 10, "clip": 0.3, "step": 0.5, "sampling_rate": 0.2}),
    "dp_prox_sgd": Case(lasso_problem, {"iterations": 10, "clip": 0.3, "step": 0.5, "sampling_rate": 0.2}),
}


def case(name: str) -> Case:
    """The case of ``name``, or an assertion that says where to add one."""
    assert name in CASES, (f"algorithm {name!r} is registered but has no entry in tests/algorithm_cases.py::CASES; "
                           "add one (a small problem and options) so that the privacy tests cover it")
    return CASES[name]



def check_record_every(run: Callable) -> None:
    """The ``record_every=k`` contract of every family, for ``run(k)``: the Trace of one seeded 23-iteration run
    recording every k-th iteration. Its iterations k, 2k, … and the last are those of the full trace (their
    scores to the last bits of BLAS's sums over one iterate or many), with the same model and ε; k = 0 is refused."""
    full = run(1)
    for k, kept in ((5, [4, 9, 14, 19, 22]), (23, [22]), (40, [22]), (1, list(range(23)))):
        some = run(k)
        for key, values in full.series().items():
            np.testing.assert_allclose(some.series()[key], values[kept], rtol=1e-13, atol=1e-15, err_msg=key)
        for key, values in full.metrics.items():
            np.testing.assert_allclose(some.metrics[key], values[kept], rtol=1e-13, atol=1e-15, err_msg=key)
        np.testing.assert_array_equal(some.model, full.model)
        assert some.privacy == full.privacy and some.iterations == len(kept)
    with pytest.raises(ValueError, match="record_every"):
        run(0)
