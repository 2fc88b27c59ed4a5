"""Bad input gets a named error — never another exception, a NaN result or a hang (issue 24, item 7).

Generated with Hypothesis: every registered algorithm (through :func:`dpadmm_lite.run` and called
directly) and the public helpers of accounting, mechanisms, topology, datasets, widgets, smoothing
and the problem constructors get one bad argument at a time — negative, zero, NaN, ±inf, huge,
wrong type, strings, None, arrays of the wrong shape or with NaN — the others valid. Each call must
raise ``ValueError`` or ``TypeError`` whose message names that argument, within
:data:`CALL_SECONDS` (a ``SIGALRM`` guard; Hypothesis' deadline as well). A huge ``iterations``
must be refused before anything is allocated, naming the maximum that fits.

Values at the edge of floating point (issue 38) go to every numeric parameter of every registered
algorithm: subnormal (5e-324, 1e-310), tiny (1e-300), near overflow (1e308, 1.7e308), and the valid
value as a ``Fraction`` and a ``Decimal``. Each call must refuse with a named ``ValueError``/``TypeError``
or return a finite model — no hang, no other exception, no NaN or ∞. The accountant answers soundly
(possibly ε = ∞, never an exception) for finite releases at the edge: a noise multiplier of 1e-600,
a sampling rate of 5e-324, 10³⁰ releases, ``Fraction`` sensitivities.

The declared ranges (``register(..., constraints=...)`` and ``registry.SHARED_CONSTRAINTS``, see
:mod:`dpadmm_lite._constraints`) drive a test of their own: for every registered algorithm and every
declared parameter, each value the declaration refuses (just outside each finite end, NaN, ±∞, wrong
types, ``None`` unless allowed) gets a ValueError/TypeError naming the parameter, and each boundary
value it accepts runs to a finite model. Every parameter of every signature has a declaration, or
an entry in ``registry.NOT_RANGES`` saying why no range describes it.

Valid extremes are tested too: the ε and ρ sliders' ends (ε = 0.01, ρ = 1e-3) on every
algorithm's small case (tests/algorithm_cases.py) give a finite result, and the accountant's
calibration at a tiny ε or a huge number of steps returns a sound finite noise or a named error.
"""

from __future__ import annotations

import contextlib
import inspect
from decimal import Decimal
from fractions import Fraction
import math
import re
import resource
import signal
import sys
import time
import tracemalloc
import warnings
from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache
from typing import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpadmm_lite as dl
from dpadmm_lite import accounting as acc
from dpadmm_lite import _constraints, datasets, mechanisms, problems, registry, smoothing, topology
from dpadmm_book import widgets
from dpadmm_lite.privacy import PrivacyEvent

sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
from algorithm_cases import case  # noqa: E402

#: The longest one bad call may take before it counts as a hang.
CALL_SECONDS = 20

SETTINGS = settings(max_examples=8, derandomize=True, deadline=timedelta(seconds=CALL_SECONDS),
                    suppress_health_check=list(HealthCheck), database=None)

NAN, INF = math.nan, math.inf


# ============================================================================ bad values, by kind
def _no_number(none_ok: bool = False, array_ok: bool = False):
    """Values of the wrong type for a number (None too, unless None means "the default"; lists and
    arrays too, unless the parameter takes one value per agent or per step)."""
    wrong = [st.text(max_size=4), st.booleans(), st.sampled_from([{}, object()]),
             st.complex_numbers(min_magnitude=0.5, max_magnitude=2.0, allow_nan=False, allow_infinity=False)]
    if not array_ok:
        wrong += [st.lists(st.floats(0.1, 1.0), min_size=1, max_size=3), st.just(np.array([0.5, 0.5]))]
    return st.one_of(*wrong, *([] if none_ok else [st.none()]))


def positive(*, inf_ok: bool = False, none_ok: bool = False, array_ok: bool = False):
    bad = [st.floats(max_value=0.0), st.just(NAN), _no_number(none_ok, array_ok)]
    return st.one_of(*bad, *([] if inf_ok else [st.just(INF)]))


def budget():
    """Not an ε budget in (0, 1e4] ∪ {∞}: what positive() rejects, and finite values above 1e4."""
    return st.one_of(positive(inf_ok=True), st.floats(min_value=1e4, exclude_min=True, allow_infinity=False))


def nonnegative(*, none_ok: bool = False, array_ok: bool = False):
    return st.one_of(st.floats(max_value=-5e-324), st.sampled_from([NAN, INF]), _no_number(none_ok, array_ok))


def open_unit():
    return st.one_of(st.floats(max_value=0.0), st.floats(min_value=1.0), st.just(NAN), _no_number())


def half_open_unit(*, none_ok: bool = False):
    return st.one_of(st.floats(max_value=0.0), st.floats(min_value=1.0, exclude_min=True), st.just(NAN),
                     _no_number(none_ok))


def count(minimum: int = 1, *, cap: int | None = None, none_ok: bool = False):
    """Whole numbers below ``minimum``, non-integers, wrong types; above ``cap`` when given (too big
    for memory: must be refused, naming the parameter, before anything is allocated)."""
    bad = [st.integers(min_value=-10**9, max_value=minimum - 1),
           st.floats().filter(lambda x: not (math.isfinite(x) and x.is_integer() and x >= minimum)),
           _no_number(none_ok)]
    if cap is not None:
        bad += [st.integers(min_value=cap + 1, max_value=10**40), st.sampled_from([1e12, 1e300, 2**63])]
    return st.one_of(*bad)


def at_least(minimum: float):
    """Not a number (or array of numbers) >= ``minimum``: sizes that may be fractional (effective sizes)."""
    return st.one_of(st.floats(max_value=minimum, exclude_max=True), st.sampled_from([NAN, INF]),
                     _no_number(array_ok=True))


def choice(options):
    return st.one_of(st.text(max_size=8).filter(lambda s: s not in options), st.none(), st.integers(-3, 3))


def matrix(rows: int, cols: int, *, none_ok: bool = False, any_rows: bool = False):
    """Not a finite (rows, cols) array: wrong rank, wrong shape, NaN/inf entries, strings, ragged
    (``any_rows``: any number of rows ≥ 1 is valid)."""
    good = np.linspace(-0.5, 0.5, rows * cols).reshape(rows, cols)

    def with_bad_entry(args):
        (i, j), value = args
        a = good.copy()
        a[i, j] = value
        return a

    fixed = [np.zeros(rows), np.zeros((rows, cols, 2)), np.full((rows, cols), "a"), "X", 3.0,
             [[0.1, 0.2], [0.3]], np.zeros((0, cols)), good.astype(complex) + 1j]
    if rows > 1 and not any_rows:
        fixed.append(good[:-1])
    bad = [st.sampled_from(fixed),
           st.tuples(st.tuples(st.integers(0, rows - 1), st.integers(0, cols - 1)),
                     st.sampled_from([NAN, INF, -INF])).map(with_bad_entry)]
    return st.one_of(*bad, *([] if none_ok else [st.none()]))


def vector(length: int, *, finite: bool = True):
    """Not a finite vector of ``length``: wrong length or rank, NaN entries, strings, None."""
    good = np.linspace(0.1, 0.9, length)

    def with_nan(i):
        a = good.copy()
        a[i] = NAN
        return a

    fixed = [np.zeros(length + 1), np.zeros((length, 2)), np.full(length, "a"), None, "v"]
    return st.one_of(st.sampled_from(fixed), st.integers(0, length - 1).map(with_nan))


def problem_value():
    return st.one_of(st.sampled_from([None, "problem", 3, 1.5, np.zeros((4, 3)), {"X": np.zeros((2, 2))}, [1, 2]]),
                     st.text(max_size=6))


def generator():
    return st.sampled_from([None, 0, 7, 1.5, "rng", np.random.RandomState(0)])


def shape(cap: int):
    return st.one_of(st.integers(max_value=-1), st.tuples(st.integers(1, 3), st.integers(max_value=-1)),
                     st.sampled_from([(), "shape", None, 2.5, (2.5, 3), (cap + 1,), (10**6, 10**6)]))


def events(*, empty_ok: bool = True):
    """Not a list of PrivacyEvent records (an empty ledger is valid where it means "nothing released")."""
    good = PrivacyEvent("gaussian", 1.0, 2.0, count=3)
    return st.sampled_from([None, 3, "events", [1.0], [good, "x"], [None], *([] if empty_ok else [[]])])


# ============================================================================ what is called
@dataclass(frozen=True)
class Target:
    """A callable, valid keyword arguments for it, and a bad-value strategy per argument."""

    label: str
    call: Callable
    valid: dict
    bad: dict

    def __repr__(self) -> str:
        return self.label


@lru_cache(maxsize=None)
def _problem(name: str):
    return case(name).problem(1.0)


#: Bad values of the options the small cases pass (None is excluded: it means "the default").
OPTION_KINDS = {
    "n_agents": lambda: count(1, none_ok=True),
    "batch_size": lambda: count(1, none_ok=True),
    "clip": lambda: positive(none_ok=True),
    "sampling_rate": lambda: half_open_unit(none_ok=True),
    "relaxation": lambda: positive(none_ok=True),
    "step": lambda: positive(none_ok=True),
    "topology": lambda: choice(topology.NAMES),
}


def _algorithm_target(name: str, direct: bool) -> Target:
    info = registry.info(name)
    options = dict(case(name).options)
    problem = _problem(name)
    valid = dict(problem=problem, epsilon=1.0 if info.private else INF, delta=1e-5, rho=options.pop("rho", 1.0),
                 iterations=options.pop("iterations"), seed=0, **options)
    cap = registry.max_iterations(info.setting, problem, {**_defaults(info.function), **options})
    bad = dict(problem=problem_value(), epsilon=budget(), delta=open_unit(), rho=positive(),
               iterations=count(1, cap=cap), seed=count(0, none_ok=not direct))  # dl.run: None is fresh entropy
    if "nu" in inspect.signature(info.function).parameters:
        bad["nu"] = nonnegative()
    bad.update({k: OPTION_KINDS[k]() for k in options if k in OPTION_KINDS})
    call = info.function if direct else (lambda **kw: dl.run(name, **kw))
    return Target(f"{name}{'' if direct else ' (run)'}", call, valid, bad)


def _defaults(function) -> dict:
    return {k: p.default for k, p in inspect.signature(function).parameters.items()
            if p.default is not inspect.Parameter.empty}


def _helper_targets() -> list[Target]:
    X = np.linspace(-0.5, 0.5, 40).reshape(20, 2)
    y = np.where(np.arange(20) % 2 == 0, 1.0, -1.0)
    problem = problems.logistic(X, y, 0.1)
    event = PrivacyEvent("gaussian", 1.0, 2.0, count=5)
    orders = np.array([2.0, 4.0, 8.0])
    T = lambda label, call, valid, **bad: Target(label, call, valid, bad)  # noqa: E731
    eps_delta = dict(epsilon=positive(), delta=open_unit())
    gaussian_args = dict(noise_multiplier=positive(inf_ok=True), steps=count(1), delta=open_unit(),
                         sampling_rate=half_open_unit(), neighbours=choice(("add_remove", "replace_one")))
    gaussian_valid = dict(noise_multiplier=1.0, steps=10, delta=1e-5, sampling_rate=0.1)
    cyffers = dict(lipschitz=positive(), gamma=positive(), sigma=positive())
    cyffers_valid = dict(lipschitz=1.0, gamma=1.0, sigma=1.0)
    zhang = dict(local_size=at_least(1), lam=nonnegative(), rho=positive(), n_neighbors=at_least(0))
    zhang_valid = dict(local_size=50, lam=0.1, rho=1.0, n_neighbors=2)
    return [
        # accounting: the accountant
        T("classic_gaussian_sigma", acc.classic_gaussian_sigma, dict(sensitivity=1.0, epsilon=0.5, delta=1e-5),
          sensitivity=positive(), **eps_delta),
        T("gaussian_epsilon", acc.gaussian_epsilon, gaussian_valid, **gaussian_args),
        T("rdp_gaussian_epsilon", acc.rdp_gaussian_epsilon, gaussian_valid, **gaussian_args),
        T("pld_gaussian_epsilon", acc.pld_gaussian_epsilon, gaussian_valid, points=count(64), **gaussian_args),
        T("privacy_loss_distribution", acc.privacy_loss_distribution,
          dict(noise_multiplier=1.0, steps=10, sampling_rate=0.1), noise_multiplier=positive(), steps=count(1),
          sampling_rate=half_open_unit(), direction=choice(("remove", "add")), delta=open_unit(), points=count(64)),
        T("calibrate_noise", acc.calibrate_noise, dict(epsilon=1.0, delta=1e-5, steps=10, sampling_rate=0.1),
          epsilon=budget(), delta=open_unit(), steps=count(1), sampling_rate=half_open_unit(),
          neighbours=choice(("add_remove", "replace_one"))),
        T("gaussian_delta", acc.gaussian_delta, dict(epsilon=1.0, mu=1.0), epsilon=nonnegative(), mu=positive()),
        T("gdp_epsilon", acc.gdp_epsilon, dict(mu=1.0, delta=1e-5), mu=positive(inf_ok=True), delta=open_unit()),
        T("basic_composition", acc.basic_composition, dict(epsilon=0.1, delta=1e-6, k=10),
          epsilon=positive(), delta=nonnegative(), k=count(1)),
        T("advanced_composition", acc.advanced_composition, dict(epsilon=0.1, delta=1e-6, k=10, delta_prime=1e-6),
          epsilon=positive(), delta=nonnegative(), k=count(1), delta_prime=open_unit()),
        T("composition_epsilons", acc.composition_epsilons, dict(noise_multiplier=2.0, steps=10, delta=1e-5),
          noise_multiplier=positive(), steps=count(1), delta=open_unit(), sampling_rate=half_open_unit()),
        T("noise_for_budget", acc.noise_for_budget, dict(epsilon=1.0, delta=1e-5, steps=10), steps=count(1),
          sampling_rate=half_open_unit(), epsilon=budget(), delta=open_unit()),
        T("gaussian_rdp", acc.gaussian_rdp, dict(noise_multiplier=1.0), noise_multiplier=positive(inf_ok=True),
          orders=st.one_of(vector(3), st.sampled_from([[0.5, 2.0], [1.0], []]))),
        T("sampled_gaussian_rdp", acc.sampled_gaussian_rdp, dict(noise_multiplier=1.0, sampling_rate=0.1),
          noise_multiplier=positive(inf_ok=True), sampling_rate=half_open_unit(),
          orders=st.sampled_from([[0.5, 2.0], [1.0], [], [NAN], "orders", [[2.0, 3.0]]])),
        T("laplace_rdp", acc.laplace_rdp, dict(epsilon0=0.5), epsilon0=positive(), sampling_rate=half_open_unit(),
          orders=st.sampled_from([[0.5, 2.0], [], [INF], "orders"])),
        T("rdp_to_epsilon", acc.rdp_to_epsilon, dict(orders=orders, rdp=np.array([0.1, 0.2, 0.4]), delta=1e-5),
          orders=st.sampled_from([[0.5, 2.0, 3.0], [2.0, NAN, 3.0], "orders", None, [2.0]]),
          rdp=st.one_of(vector(3), st.sampled_from([[-0.1, 0.2, 0.3], [0.1, 0.2]])), delta=open_unit()),
        T("ledger_rdp", acc.ledger_rdp, dict(events=[event]), events=events(),
          orders=st.sampled_from([[0.5, 2.0], [], "orders"])),
        T("ledger_bounds", acc.ledger_bounds, dict(events=[event], delta=1e-5), events=events(), delta=open_unit()),
        T("ledger_epsilon", acc.ledger_epsilon, dict(events=[event], delta=1e-5), events=events(), delta=open_unit()),
        T("ledger_guarantee", acc.ledger_guarantee, dict(events=[event], delta=1e-5), events=events(),
          delta=open_unit()),
        T("calibrate_ledger", acc.calibrate_ledger, dict(events=[event], epsilon=1.0, delta=1e-5),
          events=events(empty_ok=False),
          epsilon=budget(), delta=open_unit(), rtol=open_unit()),
        # accounting: the papers' own statements
        T("xu2020_sigma", acc.xu2020_sigma, dict(epsilon=1.0, delta=1e-5, iterations=50, n=1000, lipschitz=1.0),
          iterations=count(1), n=count(1), lipschitz=positive(), mu=open_unit(), **eps_delta),
        T("xu2020_epsilon", acc.xu2020_epsilon, dict(sigma=0.01, delta=1e-5, iterations=50, n=1000, lipschitz=1.0),
          sigma=positive(), delta=open_unit(), iterations=count(1), n=count(1), lipschitz=positive()),
        T("huang2019_sigma", acc.huang2019_sigma,
          dict(epsilon=1.0, delta=1e-5, lipschitz=1.0, local_size=100, rho=1.0, eta=0.5),
          lipschitz=positive(), local_size=at_least(1), rho=positive(), eta=positive(inf_ok=True, array_ok=True),
          **eps_delta),
        T("huang2019_noise_multiplier", acc.huang2019_noise_multiplier, dict(epsilon=1.0, delta=1e-5), **eps_delta),
        T("huang2019_total_epsilon", acc.huang2019_total_epsilon, dict(epsilon=1.0, delta=1e-5, iterations=10),
          iterations=count(1), **eps_delta),
        T("huang2019_c0", acc.huang2019_c0, dict(epsilon=1.0, delta=1e-5, iterations=10), iterations=count(1),
          **eps_delta),
        T("cyffers2023_centralized_epsilon", acc.cyffers2023_centralized_epsilon,
          dict(delta=1e-5, iterations=10, n=100, **cyffers_valid), delta=open_unit(), iterations=count(1),
          n=count(1), **cyffers),
        T("cyffers2023_centralized_rdp", acc.cyffers2023_centralized_rdp,
          dict(alpha=2.0, iterations=10, n=100, **cyffers_valid),
          alpha=st.one_of(st.floats(max_value=1.0), st.sampled_from([NAN, "a", None])), iterations=count(1),
          n=count(1), **cyffers),
        T("cyffers2023_federated_local_epsilon", acc.cyffers2023_federated_local_epsilon,
          dict(delta=1e-5, participations=3, **cyffers_valid), delta=open_unit(), participations=count(1), **cyffers),
        T("cyffers2023_federated_central_epsilon", acc.cyffers2023_federated_central_epsilon,
          dict(delta=1e-5, iterations=10, n=100, m=10, **cyffers_valid), delta=open_unit(), iterations=count(1),
          n=count(1), m=count(1), method=choice(("closed form", "accountant")), **cyffers),
        T("cyffers2023_network_epsilon", acc.cyffers2023_network_epsilon,
          dict(delta=1e-5, participations=3, n=100, **cyffers_valid), delta=open_unit(), participations=count(1),
          n=count(1), **cyffers),
        T("liu2022_sadmm_sigma", acc.liu2022_sadmm_sigma,
          dict(epsilon=1.0, delta=1e-5, iterations=100, n=1000, lipschitz=1.0), iterations=count(1), n=count(1),
          lipschitz=positive(), theta=open_unit(), **eps_delta),
        T("liu2022_vradmm_sigma", acc.liu2022_vradmm_sigma,
          dict(epsilon=1.0, delta=1e-5, lipschitz=1.0, n=1000, epochs=5, inner=40), lipschitz=positive(),
          n=count(1), epochs=count(1), inner=count(1), c2=positive(), **eps_delta),
        T("liu2022_sadmm_epsilon", acc.liu2022_sadmm_epsilon,
          dict(sigma=0.05, delta=1e-5, iterations=100, n=1000, lipschitz=1.0), sigma=positive(), delta=open_unit(),
          iterations=count(1), n=count(1), lipschitz=positive()),
        T("liu2022_vradmm_epsilon", acc.liu2022_vradmm_epsilon,
          dict(sigma=0.05, delta=1e-5, lipschitz=1.0, n=1000, epochs=5, inner=40), sigma=positive(),
          delta=open_unit(), lipschitz=positive(), n=count(1), epochs=count(1), inner=count(1)),
        T("zhang2017_total_epsilon", acc.zhang2017_total_epsilon, dict(alpha=[0.1, 0.2]),
          alpha=st.sampled_from([[-0.1, 0.2], [NAN], "alpha", None, [INF]])),
        T("zhang2017_alpha_for_budget", acc.zhang2017_alpha_for_budget, dict(epsilon=1.0, delta=1e-5, iterations=10),
          iterations=count(1), **eps_delta),
        T("zhang2017_pvp_sensitivity", acc.zhang2017_pvp_sensitivity, dict(local_size=50, lam=0.1),
          local_size=at_least(1), lam=positive()),
        T("zhang2017_dvp_jacobian", acc.zhang2017_dvp_jacobian, zhang_valid, **zhang),
        # mechanisms
        T("mechanisms.gaussian", mechanisms.gaussian, dict(rng=np.random.default_rng(0), sigma=1.0, shape=(3, 2)),
          rng=generator(), sigma=nonnegative(array_ok=True), shape=shape(2**40)),
        T("mechanisms.l2_laplace", mechanisms.l2_laplace, dict(rng=np.random.default_rng(0), zeta=1.0, shape=(3, 2)),
          rng=generator(), zeta=positive(inf_ok=True, array_ok=True), shape=shape(2**40)),
        T("mechanisms.l2_laplace_radius_mean", mechanisms.l2_laplace_radius_mean, dict(zeta=1.0, d=3),
          zeta=positive(), d=count(1)),
        T("mechanisms.clip", mechanisms.clip, dict(v=np.ones((3, 2)), C=1.0), v=st.sampled_from([3.0, "v", None]),
          C=positive(inf_ok=True, array_ok=True)),
        # topology
        T("topology.make", topology.make, dict(name="ring", n_agents=5), name=choice(topology.NAMES),
          n_agents=count(2, cap=10**9), seed=count(0)),
        T("topology.from_adjacency", topology.from_adjacency, dict(adjacency=np.ones((3, 3)) - np.eye(3)),
          adjacency=st.one_of(matrix(3, 3), st.sampled_from([np.ones((3, 3)), 2 * (np.ones((3, 3)) - np.eye(3))]))),
        # datasets
        T("datasets.make_lasso", datasets.make_lasso, dict(n=20, p=5), n=count(1, cap=10**12),
          p=count(1, cap=10**12), seed=count(0), support=st.one_of(count(1, none_ok=True), st.integers(6, 100)),
          noise_std=nonnegative()),
        T("datasets.make_classification", datasets.make_classification, dict(n=20, d=3), n=count(1, cap=10**12),
          d=count(1, cap=10**12), seed=count(0), signal=nonnegative()),
        T("datasets.rows_to_unit_ball", datasets.rows_to_unit_ball, dict(X=X), X=matrix(20, 2, any_rows=True)),
        T("datasets.split", datasets.split, dict(n_samples=20, n_agents=4), n_samples=count(1, cap=10**12),
          n_agents=st.one_of(count(1), st.integers(21, 100)), seed=count(0)),
        T("datasets.train_test_split", datasets.train_test_split, dict(X=X, y=y), X=matrix(20, 2), y=vector(20),
          test_fraction=open_unit(), seed=count(0)),
        # widgets
        T("widgets.epsilon_values", widgets.epsilon_values, dict(lo=0.01, hi=10.0), lo=positive(),
          hi=st.one_of(positive(), st.floats(1e-6, 0.0099)),
          step=st.one_of(positive(), st.floats(1e-6, 0.0099), st.floats(1.01, 1e6))),
        # smoothing
        T("smoothing.laplacian_smooth", smoothing.laplacian_smooth, dict(v=np.ones((2, 4)), nu=1.0),
          v=st.sampled_from([3.0, np.zeros((2, 0)), "v", None, np.full((2, 4), "a")]), nu=nonnegative()),
        T("smoothing.eigenvalues", smoothing.eigenvalues, dict(d=5, nu=1.0), d=count(1, cap=2**40), nu=nonnegative()),
        T("smoothing.operator_norm", smoothing.operator_norm, dict(d=5, nu=1.0), d=count(1, cap=2**40),
          nu=nonnegative()),
        T("smoothing.second_difference", smoothing.second_difference, dict(d=5), d=count(1, cap=2**40)),
        T("smoothing.smoothing_matrix", smoothing.smoothing_matrix, dict(d=5, nu=1.0), d=count(1, cap=2**40),
          nu=nonnegative()),
        T("smoothing.noise_variance", smoothing.noise_variance, dict(d=5, nu=1.0), d=count(1, cap=2**40),
          nu=nonnegative(), sigma=nonnegative()),
        T("smoothing.variance_limit", smoothing.variance_limit, dict(nu=1.0), nu=nonnegative(), sigma=nonnegative()),
        T("smoothing.tau", smoothing.tau, dict(d=5, nu=1.0), d=count(1, cap=2**40), nu=nonnegative()),
        T("smoothing.tau_closed_form", smoothing.tau_closed_form, dict(d=5, nu=1.0), d=count(1),
          nu=nonnegative()),
        # problem constructors
        T("problems.lasso", problems.lasso, dict(X=X, y=y, lam=0.1), X=matrix(20, 2), y=vector(20), lam=positive(),
          feature_bound=positive()),
        T("problems.logistic", problems.logistic, dict(X=X, y=y, lam=0.1), X=matrix(20, 2),
          y=st.one_of(vector(20), st.just(np.linspace(-1, 1, 20))), lam=positive(), penalty=choice(("l1", "l2")),
          feature_bound=positive()),
        T("problems.graph_guided_fused_lasso", problems.graph_guided_fused_lasso,
          dict(X=X, y=y, lam=0.1, W=np.array([[1.0, -1.0]])), X=matrix(20, 2), y=vector(20), lam=positive(),
          W=st.one_of(matrix(1, 2, none_ok=True), st.just(np.ones((1, 3)))), feature_bound=positive()),
        T("problems.feature_graph", problems.feature_graph, dict(X=X), X=matrix(20, 2), sparsity=positive(),
          threshold=nonnegative(), form=choice(("incidence", "pattern"))),
        # private tuning: every numeric argument range-checked before any work (tests/test_tuning.py has the cases)
        T("tune", _tune_call, dict(epsilon=1.0, delta=1e-5, eta=1.0, mean_repetitions=2.0, seed=0),
          epsilon=st.one_of(budget(), st.floats(min_value=5e-324, max_value=1e-2, exclude_max=True)),
          delta=st.one_of(open_unit(), st.floats(min_value=0.3, max_value=1.0, exclude_max=True)),
          eta=st.one_of(st.floats(max_value=-1.0), st.floats(min_value=1e3, exclude_min=True),
                        st.floats(min_value=5e-324, max_value=1e-6, exclude_max=True), st.sampled_from([NAN, INF]),
                        _no_number()),
          mean_repetitions=st.one_of(st.floats(max_value=1.0), st.floats(min_value=1e4, exclude_min=True),
                                     st.sampled_from([NAN, 10**30, 2**63]), _no_number(none_ok=True)),
          seed=count(0, none_ok=True)),
        T("problems.make_agents", problems.make_agents, dict(problem=problem, owner=np.arange(20) % 4),
          problem=problem_value(), owner=st.sampled_from([None, "owner", np.arange(19) % 4, np.full(20, -1),
                                                          np.full(20, 0.5), np.arange(20)[:, None] % 4])),
    ]


@lru_cache(maxsize=1)
def _tune_data():
    X, y, _ = datasets.make_classification(300, 4, seed=0)
    return problems.logistic(X[:200], y[:200], 1e-2), (X[200:], y[200:])


def _tune_call(**kwargs):
    problem, validation = _tune_data()
    return dl.tune("dp_admm", problem, [{"rho": 0.3}, {"rho": 3.0}], validation=validation, iterations=2, **kwargs)


TARGETS: list[Target] = [*(_algorithm_target(n, direct) for n in dl.algorithm_names() for direct in (False, True)),
                         *_helper_targets()]
PAIRS = [(t, name) for t in TARGETS for name in t.bad]

#: How many bad calls were made and how many of them were refused cleanly (printed at the end).
STATS = {"calls": 0}


# ============================================================================ the guard
class Hang(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: int):
    """Raise :class:`Hang` in the main thread if the block runs longer than ``seconds``."""
    def alarm(signum, frame):
        raise Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def memory_limit(extra: int):
    """Let the block allocate at most ``extra`` bytes more address space (a MemoryError past it), so
    that a call that would try to allocate too much fails here instead of exhausting the machine."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    try:
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * resource.getpagesize()
    except OSError:  # not Linux: no guard
        yield
        return
    limit = used + extra if hard == resource.RLIM_INFINITY else min(hard, used + extra)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _names(message: str, parameter: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(parameter)}(?!\w)", message) is not None


def assert_refused(target: Target, parameter: str, value) -> None:
    """``target`` with ``parameter=value`` raises ValueError/TypeError naming ``parameter`` and saying
    what is valid ("must"), in time, and never returns (a NaN or anything else)."""
    kwargs = {**target.valid, parameter: value}
    STATS["calls"] += 1
    failure = None
    try:
        with time_limit(CALL_SECONDS), memory_limit(dl._validate.MEMORY_BUDGET + 2**30), np.errstate(all="ignore"):
            result = target.call(**kwargs)
    except (ValueError, TypeError) as err:
        message = str(err)
        if not (_names(message, parameter) and "must" in message):
            failure = (f"{target.label}({parameter}={value!r}) raised {type(err).__name__} without naming "
                       f"{parameter!r} and its valid range: {message}")
    except Hang:
        failure = f"{target.label}({parameter}={value!r}) hung (> {CALL_SECONDS} s)"
    except Exception as err:  # noqa: BLE001 - the point of the test
        failure = f"{target.label}({parameter}={value!r}) raised {type(err).__name__}: {err}"
    else:
        failure = f"{target.label}({parameter}={value!r}) returned {_short(result)} instead of refusing"
        del result
    # failing outside the except blocks: the traceback (and the arrays in its frames) is freed
    if failure:
        pytest.fail(failure)


def _short(result) -> str:
    text = repr(result)
    return text if len(text) < 200 else text[:200] + "…"


# ============================================================================ the tests
def test_every_registered_algorithm_and_helper_is_driven():
    names = {t.label for t in TARGETS}
    for name in dl.algorithm_names():
        assert name in names and f"{name} (run)" in names, name
        assert {"problem", "epsilon", "delta", "rho", "iterations", "seed"} <= set(
            next(t for t in TARGETS if t.label == name).bad)
    assert len(PAIRS) >= 400


@pytest.mark.parametrize("target", [t for t in TARGETS if " (run)" not in t.label and "." in t.label
                                    or t.label in {f.__name__ for f in vars(acc).values() if callable(f)}],
                         ids=repr)
def test_the_valid_arguments_of_each_helper_are_valid(target):
    with time_limit(CALL_SECONDS):
        target.call(**target.valid)


@pytest.mark.parametrize("target, parameter", PAIRS, ids=[f"{t.label}-{p}" for t, p in PAIRS])
@SETTINGS
@given(data=st.data())
def test_a_bad_argument_gets_a_named_error(target, parameter, data):
    value = data.draw(target.bad[parameter], label=parameter)
    assert_refused(target, parameter, value)


def test_a_run_too_long_for_memory_is_refused_before_allocating():
    problem = _problem("dvp_graph")
    options = dict(case("dvp_graph").options, epsilon=1.0, delta=1e-5, seed=0)
    options.pop("iterations")
    cap = registry.max_iterations("graph", problem, options)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        with pytest.raises(ValueError, match=rf"iterations must be a whole number in \[1, {cap:,}\]"):
            dl.run("dvp_graph", problem, iterations=cap + 1, **options)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert peak < 2**20, f"the refusal allocated {peak} bytes"
    per_iteration = registry.trace_bytes_per_iteration("graph", problem, options)
    assert per_iteration * cap <= dl._validate.MEMORY_BUDGET < per_iteration * (cap + 1)
    # more agents, a complete graph: more per iteration, so a lower cap
    wide = registry.max_iterations("graph", problem, dict(options, n_agents=40, topology="complete"))
    assert wide < cap / 2


# ============================================================================ valid extremes
@pytest.mark.parametrize("name", dl.algorithm_names())
def test_the_sliders_extreme_values_give_a_finite_result_in_time(name):
    """ε = 0.01 and ρ = 1e-3 (the ends of the live panel's sliders) on the algorithm's small case."""
    assert widgets.RANGES["epsilon"][0] == 0.01 and widgets.RANGES["rho"][0] == 1e-3
    info = registry.info(name)
    options = dict(case(name).options)
    options.pop("rho", None)
    start = time.perf_counter()
    with time_limit(CALL_SECONDS), np.errstate(all="ignore"):
        trace = dl.run(name, _problem(name), epsilon=0.01 if info.private else INF, delta=1e-5, rho=1e-3, seed=0,
                       **options)
    elapsed = time.perf_counter() - start
    assert elapsed < CALL_SECONDS
    assert np.all(np.isfinite(trace.model)), f"{name}: model {trace.model}"
    assert np.all(np.isfinite(trace.objective)), f"{name}: objective {trace.objective}"
    if info.private:
        assert trace.privacy.epsilon <= 0.01 * (1 + 1e-9) or not trace.privacy.covered


@pytest.mark.parametrize("epsilon, steps, q", [(1e-9, 100, 1.0), (1e-9, 100, 0.01), (1e-12, 10**6, 0.01),
                                               (1e-300, 1, 1.0), (1.0, 10**12, 1.0), (1.0, 10**9, 0.001)])
def test_calibration_at_a_tiny_budget_or_many_steps_is_finite_and_sound(epsilon, steps, q):
    with time_limit(CALL_SECONDS):
        z = acc.calibrate_noise(epsilon, 1e-5, steps, q)
        assert 0 < z < INF
        assert acc.gaussian_epsilon(z, steps, 1e-5, q) <= epsilon


@pytest.mark.parametrize("steps", [10**6, 10**9, 10**12])
def test_noise_for_budget_answers_for_many_steps(steps):
    with time_limit(CALL_SECONDS):
        noise = acc.noise_for_budget(1.0, 1e-5, steps)
    assert all(0 < v < INF for v in noise.values()), noise
    assert acc.gaussian_epsilon(noise["unified"], steps, 1e-5) <= 1.0


@pytest.fixture(scope="module", autouse=True)
def _report_counts():
    yield
    print(f"\ntest_bad_input: {STATS['calls']} bad calls over {len(PAIRS)} (callable, parameter) pairs, "
          f"{len({p for _, p in PAIRS})} distinct parameter names, {len(TARGETS)} callables")


@settings(SETTINGS, max_examples=40)
@given(log_epsilon=st.floats(-12, 4), log_steps=st.integers(0, 12), q=st.sampled_from([1.0, 0.1, 1e-3]))
def test_calibration_over_the_whole_valid_range_is_finite_and_sound_or_named(log_epsilon, log_steps, q):
    """Any ε in [1e-12, 1e4] and 1 … 1e12 steps: a finite noise whose ε is within budget, or a named
    ValueError — never another exception, a NaN or a hang."""
    epsilon, steps = 10.0**log_epsilon, 10**log_steps
    try:
        with time_limit(CALL_SECONDS), np.errstate(all="ignore"):
            z = acc.calibrate_noise(epsilon, 1e-5, steps, q)
            spent = acc.gaussian_epsilon(z, steps, 1e-5, q)
    except ValueError as err:
        assert re.search(r"\b(epsilon|steps)\b", str(err)), str(err)
        return
    assert 0 < z < INF and spent <= epsilon, (z, spent)


# ============================================================================ the edge of floating point
#: Finite numbers at the edge of floating point: subnormal, tiny, near overflow.
EDGE_VALUES = (5e-324, 1e-310, 1e-300, 1e308, 1.7e308)
#: At most this many iterations per edge call (the small cases run 3 – 40): the checks come before any work.
EDGE_ITERATIONS = 3


def _numeric_parameters(name: str) -> list[str]:
    """The parameters whose declared range holds numbers (an Interval, or numeric options such as ε = ∞)."""
    return [k for k, spec in registry.parameter_constraints(name).items()
            if any(isinstance(c, _constraints.Interval) for c in _constraints.members(spec)[0])]


def _edge_valid(name: str) -> dict:
    info = registry.info(name)
    options = dict(case(name).options)
    return dict(problem=_problem(name), epsilon=1.0 if info.private else INF, delta=1e-5,
                rho=options.pop("rho", 1.0), iterations=min(options.pop("iterations"), EDGE_ITERATIONS), seed=0,
                **options)


def _exact(value):
    """``value`` (a valid setting) as a Fraction and a Decimal; a default (None) as those of 1."""
    value = 1 if value is None or isinstance(value, str) or not math.isfinite(value) else value
    return Fraction(value), Decimal(repr(value))


EDGE_PAIRS = [(name, parameter) for name in dl.algorithm_names() for parameter in _numeric_parameters(name)]


@pytest.mark.parametrize("name, parameter", EDGE_PAIRS, ids=[f"{n}-{p}" for n, p in EDGE_PAIRS])
def test_a_value_at_the_edge_of_floating_point_is_refused_by_name_or_runs_finite(name, parameter):
    valid = _edge_valid(name)
    default = valid.get(parameter, inspect.signature(registry.info(name).function).parameters.get(parameter))
    default = getattr(default, "default", default)
    failures = []
    for value in (*EDGE_VALUES, *_exact(default if not isinstance(default, type) else None)):
        STATS["calls"] += 1
        try:
            with time_limit(CALL_SECONDS), np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # e.g. "stopped at max_inner": documented, ε = ∞
                trace = dl.run(name, **{**valid, parameter: value})
        except (ValueError, TypeError) as err:
            if not _names(str(err), parameter):
                failures.append(f"{parameter}={value!r}: {type(err).__name__} without naming {parameter!r}: {err}")
        except Hang:
            failures.append(f"{parameter}={value!r}: hung (> {CALL_SECONDS} s)")
        except Exception as err:  # noqa: BLE001 - the point of the test
            failures.append(f"{parameter}={value!r}: {type(err).__name__}: {err}")
        else:
            if not np.all(np.isfinite(trace.model)):
                failures.append(f"{parameter}={value!r}: a non-finite model (ε = {trace.privacy.epsilon:.4g})")
    assert not failures, f"{name}: " + "; ".join(failures)


def test_the_edge_fuzzer_drives_every_numeric_parameter():
    for name in dl.algorithm_names():
        assert {"epsilon", "delta", "rho", "iterations", "seed"} <= set(_numeric_parameters(name)), name
    assert len(EDGE_PAIRS) >= 200


# ============================================================================ the declared ranges
DECLARED_PAIRS = [(name, parameter) for name in dl.algorithm_names() for parameter in registry.parameter_constraints(name)]


def test_every_parameter_of_every_algorithm_has_a_declared_range():
    """A new option is tested the day it is added: its range is declared (``register(..., constraints=...)``
    or ``registry.SHARED_CONSTRAINTS``), or ``registry.NOT_RANGES`` says why no range describes it."""
    undeclared, used = [], set()
    for name in dl.algorithm_names():
        declared = registry.parameter_constraints(name)
        for parameter in inspect.signature(registry.info(name).function).parameters:
            if parameter in registry.NOT_RANGES:
                used.add(parameter)
            elif parameter not in declared:
                undeclared.append(f"{name}: {parameter}")
    assert not undeclared, f"parameters without a declared range: {undeclared}"
    assert used == set(registry.NOT_RANGES), f"NOT_RANGES names no parameter of any algorithm: {set(registry.NOT_RANGES) - used}"
    assert len(registry.NOT_RANGES) <= 6 and len(DECLARED_PAIRS) >= 250


def test_a_declaration_of_a_parameter_the_signature_lacks_is_refused():
    with pytest.raises(ValueError, match=r"constraints of algorithm 'zz_typo' must name its parameters, got \['relaxatoin'\]"):
        registry.register("zz_typo", paper="x", private=False, setting="centralized", description="a typo",
                          label="zz typo",
                          constraints={"relaxatoin": registry.SHARED_CONSTRAINTS["rho"]})(
            lambda problem, *, relaxation=0.5: None)
    assert "zz_typo" not in registry._REGISTRY


@pytest.mark.parametrize("name, parameter", DECLARED_PAIRS, ids=[f"{n}-{p}" for n, p in DECLARED_PAIRS])
def test_each_value_outside_a_declared_range_is_refused_by_name(name, parameter):
    spec = registry.parameter_constraints(name)[parameter]
    valid = _edge_valid(name)
    sizes = registry.problem_sizes(valid["problem"])
    values = _constraints.invalid(spec, sizes)
    assert values, f"{name}: the declaration of {parameter} refuses nothing"
    info = registry.info(name)
    for direct in (False, True):
        call = info.function if direct else (lambda name=name, **kw: dl.run(name, **kw))
        target = Target(f"{name}{'' if direct else ' (run)'}", call, valid, {})
        for value in values:
            assert_refused(target, parameter, value)


@pytest.mark.parametrize("name, parameter", DECLARED_PAIRS, ids=[f"{n}-{p}" for n, p in DECLARED_PAIRS])
def test_each_boundary_value_of_a_declared_range_runs(name, parameter):
    """The ends of the range (just inside an open end), every option, and None where declared: each passes
    the declared check and runs to a finite model, or meets a bound the data or another option sets (η ≤ 1/L,
    γ ≥ γ_min, a finite ε on a non-private run, zeta_rule with calibration) — a ValueError naming a parameter
    of the run. At least one value of each declaration runs."""
    spec = registry.parameter_constraints(name)[parameter]
    valid = _edge_valid(name)
    sizes = registry.problem_sizes(valid["problem"])
    parameters = set(inspect.signature(registry.info(name).function).parameters)
    failures, ran = [], 0
    for value in _constraints.boundary(spec, sizes):
        _constraints.check(parameter, value, spec, sizes)  # the declaration accepts its own boundary
        STATS["calls"] += 1
        try:
            with time_limit(CALL_SECONDS), np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                trace = dl.run(name, **{**valid, parameter: value})
        except ValueError as err:
            if not any(_names(str(err), p) for p in parameters):
                failures.append(f"{parameter}={value!r}: refused without naming a parameter: {err}")
        except Exception as err:  # noqa: BLE001 - the point of the test
            failures.append(f"{parameter}={value!r}: {type(err).__name__}: {err}")
        else:
            ran += 1
            if not np.all(np.isfinite(trace.model)):
                failures.append(f"{parameter}={value!r}: a non-finite model")
    assert not failures, f"{name}: " + "; ".join(failures)
    assert ran, f"{name}: no boundary value of {parameter} runs"


@pytest.mark.parametrize("parameter, value, match", [
    ("delta", 5e-324, r"delta must be in \[1e-100, 1\)"),
    ("rho", 1e-300, r"rho must be in \[1e-12, 1e\+12\]"),
    ("rho", 5e-324, r"rho must be in \[1e-12, 1e\+12\]"),
    ("clip", 1e308, r"clip must be in \[1e-12, 1e\+12\]"),
    ("clip", 1e-300, r"clip must be in \[1e-12, 1e\+12\]"),
    ("sampling_rate", 1e-300, r"sampling_rate must be in \[1e-09, 1\]"),
])
def test_the_issues_edge_cases_name_their_parameter(parameter, value, match):
    name = "private_admm_federated" if parameter == "sampling_rate" else "dp_admm"
    valid = _edge_valid(name)
    if parameter == "clip":
        valid["clip"] = 0.1
    with time_limit(CALL_SECONDS), pytest.raises(ValueError, match=match):
        dl.run(name, **{**valid, parameter: value})


def test_n_agents_near_overflow_names_n_agents_not_iterations():
    with pytest.raises(ValueError, match=r"n_agents must be a whole number in \[1, n_samples = 240\]"):
        dl.run("dvp_star", **{**_edge_valid("dvp_star"), "n_agents": 1e308})


def test_a_nan_model_under_a_finite_epsilon_is_refused(monkeypatch):
    """The shared run path never returns a non-finite model with a finite ε: a NaN in the noise (forced
    here) surfaces as NonFiniteModel naming the settings, not as a model of NaNs "at ε = 1"."""
    from dpadmm_lite import mechanisms

    original = mechanisms.gaussian
    monkeypatch.setattr(mechanisms, "gaussian", lambda rng, sigma, shape: original(rng, sigma, shape) * NAN)
    monkeypatch.setattr(sys.modules["dpadmm_lite.algorithms.xu2020"], "gaussian", mechanisms.gaussian,
                        raising=False)
    valid = _edge_valid("dp_admm")
    with pytest.raises(registry.NonFiniteModel, match=r"dp_admm released a model with .* NaN .*rho=1\.0"):
        dl.run("dp_admm", **valid)
    assert issubclass(registry.NonFiniteModel, FloatingPointError)
    # without a privacy claim (ε = ∞) a diverging run is the caller's to see: no error
    with np.errstate(all="ignore"):
        dl.run("admm_linearized", **{**_edge_valid("admm_linearized")})


def _mu2_lower(count: int, z: float) -> float:
    """μ²/2 of ``count`` Gaussian releases at noise multiplier z: a lower bound on their true ε at any δ < ½."""
    return count / (2 * z * z) if z > 0 else INF


@pytest.mark.parametrize("events, least", [
    ([PrivacyEvent("gaussian", 1e300, 1e-300)], INF),                       # z = 1e-600: ε = ∞
    ([PrivacyEvent("gaussian", 1.0, 1e-300)], INF),
    ([PrivacyEvent("gaussian", 1e300, 1.0)], INF),
    ([PrivacyEvent("gaussian", 1.0, 1e-300), PrivacyEvent("gaussian", 1.0, 1.0, count=5, sampling_rate=0.1)], INF),
    ([PrivacyEvent("gaussian", 1.0, 1e-100)], _mu2_lower(1, 1e-100)),       # finite, huge: not below μ²/2
    ([PrivacyEvent("gaussian", 1.0, 1.0, count=10**30)], _mu2_lower(10**30, 1.0)),
    ([PrivacyEvent("gaussian", 1.0, 1.0, count=10, sampling_rate=5e-324)], 0.0),
    ([PrivacyEvent("gaussian", 1.0, 0.1, count=10, sampling_rate=1e-310, neighbours="replace_one")], 0.0),
    ([PrivacyEvent("laplace_l2", 1.0, 1e10, count=5)], 5e10),               # pure ε₀ = 1e10 each: summed
    ([PrivacyEvent("laplace_l2", 1.0, 1e10, count=5, sampling_rate=0.1)], 5 * (1e10 + math.log(0.1))),
])
def test_the_accountant_answers_soundly_at_the_edge_of_floating_point(events, least):
    with time_limit(CALL_SECONDS):
        eps = acc.ledger_epsilon(events, 1e-5)
        bounds = acc.ledger_bounds(events, 1e-5)
        guarantee = acc.ledger_guarantee(events, 1e-5)
    assert eps >= least * (1 - 1e-9) and not math.isnan(eps), (eps, least)
    assert guarantee.epsilon == eps and min(bounds.values()) == eps


def test_a_tiny_sampling_rate_is_accounted_soundly_as_the_floor():
    """ε grows with q, so a rate below the floor is accounted at the floor: never less than the truth."""
    tiny = PrivacyEvent("gaussian", 1.0, 0.5, count=10, sampling_rate=5e-324)
    floor = PrivacyEvent("gaussian", 1.0, 0.5, count=10, sampling_rate=acc._bounds.SAMPLING_RATE_FLOOR)
    assert acc.ledger_epsilon([tiny], 1e-5) == acc.ledger_epsilon([floor], 1e-5)
    assert acc.gaussian_epsilon(0.5, 10, 1e-5, 5e-324) == acc.gaussian_epsilon(0.5, 10, 1e-5, 1e-300)


@pytest.mark.parametrize("z, q", [(1e-300, 1.0), (1e-300, 0.1), (1e-160, 1.0)])
def test_gaussian_epsilon_of_a_vanishing_noise_is_infinite(z, q):
    with time_limit(CALL_SECONDS):
        assert acc.gaussian_epsilon(z, 10, 1e-5, q) == INF


def test_exact_numbers_are_accounted_as_their_floats():
    third = PrivacyEvent("gaussian", Fraction(1, 3), 1.0, count=3)
    assert acc.ledger_epsilon([third], 1e-5) == acc.ledger_epsilon([PrivacyEvent("gaussian", 1 / 3, 1.0, count=3)], 1e-5)
    assert acc.gaussian_epsilon(Fraction(3, 2), Fraction(10), Fraction(1, 10**5)) == acc.gaussian_epsilon(1.5, 10, 1e-5)
    assert acc.gaussian_epsilon(Decimal("1.5"), Decimal("10"), Decimal("0.00001")) == acc.gaussian_epsilon(1.5, 10, 1e-5)


def test_a_batch_of_cyffers_runs_refuses_a_nan_model_too(monkeypatch):
    """fixed_point.run_many (the sweeps' batched entry point, outside the registry's wrapper) checks each trace."""
    from dpadmm_lite.algorithms import cyffers2023 as fixed_point

    fill = fixed_point._Noise.fill

    def nan_noise(self, j, out, within):
        fill(self, j, out, within)
        out[...] = NAN
        return True

    options = dict(case("private_admm").options)
    options.pop("iterations")
    runs = [dict(epsilon=1.0, seed=0, **options)]
    problem = _problem("private_admm")
    assert np.all(np.isfinite(fixed_point.run_many("private_admm", problem, runs, iterations=3)[0].model))
    monkeypatch.setattr(fixed_point._Noise, "fill", nan_noise)
    with pytest.raises(registry.NonFiniteModel, match=r"private_admm released a model with .* NaN"):
        fixed_point.run_many("private_admm", problem, runs, iterations=3)


@pytest.mark.parametrize("mechanism", ["gaussian", "laplace_l2"])
def test_exact_numbers_in_a_privacy_event_are_accounted_as_floats(mechanism):
    """A Fraction or Decimal sensitivity, noise, count or sampling rate is stored as its float (int): the
    same ε as the floats, where a Decimal used to raise TypeError inside the accountant."""
    plain = PrivacyEvent(mechanism, 0.5, 2.0, count=3, sampling_rate=0.1)
    for exact in (PrivacyEvent(mechanism, Fraction(1, 2), Fraction(2), count=Fraction(3), sampling_rate=Fraction(1, 10)),
                  PrivacyEvent(mechanism, Decimal("0.5"), Decimal("2"), count=Decimal("3"), sampling_rate=Decimal("0.1"))):
        assert type(exact.sensitivity) is float and type(exact.count) is int and exact == plain
        assert acc.ledger_epsilon([exact], 1e-5) == acc.ledger_epsilon([plain], 1e-5)
