"""The run contract every algorithm shares: argument checks, registry, Trace."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import dpadmm_lite as dl
from dpadmm_lite import _validate as check
from dpadmm_lite.trace import NO_PRIVACY, PrivacyEvent, from_iterates


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4)) / 2
    y = np.where(X @ np.array([1.0, -1.0, 0.5, 0.0]) + 0.1 * rng.normal(size=60) > 0, 1.0, -1.0)
    return dl.problems.logistic(X, y, 0.05, "l2", X_test=X, y_test=y)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: check.positive("rho", 0), r"rho must be in \(0, ∞\)"),
        (lambda: check.positive("rho", -1e-3), "rho"),
        (lambda: check.positive("rho", math.inf), "rho"),
        (lambda: check.epsilon(0.0), r"epsilon must be in \(0, ∞\]"),
        (lambda: check.open_unit("delta", 1.0), r"delta must be in \(0, 1\)"),
        (lambda: check.open_unit("delta", 0.0), "delta"),
        (lambda: check.open_unit("delta", float("nan")), r"delta must be a real number in \(0, 1\), got NaN"),
        (lambda: check.half_open_unit("sampling_rate", 1.5), r"sampling_rate must be in \(0, 1\]"),
        (lambda: check.count("iterations", 0), "iterations must be a whole number >= 1"),
        (lambda: check.count("iterations", 2.5), "iterations"),
        (lambda: check.count("iterations", True), "iterations"),
        (lambda: check.finite_array("X", [[1.0, np.nan]]), "X must contain only finite numbers"),
        (lambda: check.choice("loss", "hinge", ("squared", "logistic")), "loss must be one of"),
        (lambda: check.nonnegative("nu", -1), r"nu must be in \[0, ∞\)"),
    ],
)
def test_bad_arguments_name_the_parameter_and_its_range(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_checks_pass_good_values_through():
    assert check.epsilon(math.inf) == math.inf
    assert check.count("iterations", 3.0) == 3 and isinstance(check.count("iterations", np.int64(3)), int)
    assert check.open_unit("delta", 1e-5) == 1e-5


def test_run_rejects_bad_common_arguments_before_the_algorithm_runs(problem):
    name = dl.algorithm_names()[0]
    for kwargs, word in [({"rho": 0}, "rho"), ({"iterations": 0}, "iterations"), ({"delta": 2}, "delta"),
                         ({"epsilon": -1}, "epsilon"), ({"seed": -1}, "seed")]:
        with pytest.raises(ValueError, match=word):
            dl.run(name, problem, **kwargs)
    with pytest.raises(ValueError, match="algorithm must be one of"):
        dl.run("no_such_algorithm", problem)


def test_registry_lists_algorithms_with_their_paper_and_setting():
    table = dl.algorithm_table()
    assert list(table.columns) == ["paper", "private", "setting", "tasks", "description"]
    assert len(table) >= 1 and table.index.is_unique
    assert table["description"].str.len().min() > 10


def test_register_refuses_a_second_function_under_the_same_name():
    from dpadmm_lite.registry import register

    name = dl.algorithm_names()[0]
    with pytest.raises(ValueError, match="registered twice"):
        register(name, paper="x", private=False, setting="centralized", description="a clash")(lambda p, **k: None)


def test_from_iterates_evaluates_every_iterate_against_the_reference_optimum(problem):
    opt = problem.reference_optimum()
    iterates = np.stack([np.zeros(problem.d), opt.x / 2, opt.x])
    trace = from_iterates(problem, "demo", iterates)
    expected = [problem.objective(w) for w in iterates]
    np.testing.assert_allclose(trace.objective, expected, rtol=1e-12)
    np.testing.assert_allclose(trace.objective_gap, np.array(expected) - opt.value, rtol=1e-12)
    assert abs(trace.objective_gap[-1]) < 1e-10 and trace.objective_gap[0] > 1e-3
    np.testing.assert_array_equal(trace.model, opt.x)
    assert trace.test_accuracy.shape == (3,) and trace.privacy is NO_PRIVACY
    frame = trace.to_frame()
    assert set(frame["metric"]) == {"objective", "objective_gap", "test_accuracy"} and len(frame) == 9


def test_from_iterates_needs_delta_for_a_ledger_and_checks_shapes(problem):
    event = PrivacyEvent("gaussian", sensitivity=0.1, noise=1.0, count=10)
    with pytest.raises(ValueError, match="delta"):
        from_iterates(problem, "demo", np.zeros((2, problem.d)), ledger=[event])
    with pytest.raises(ValueError, match="iterates must have shape"):
        from_iterates(problem, "demo", np.zeros((2, problem.d + 1)))


def test_privacy_events_validate_their_fields():
    with pytest.raises(ValueError, match="mechanism"):
        PrivacyEvent("laplace", 1.0, 1.0)
    with pytest.raises(ValueError, match="noise"):
        PrivacyEvent("gaussian", 1.0, 0.0)
    with pytest.raises(ValueError, match="sampling_rate"):
        PrivacyEvent("gaussian", 1.0, 1.0, sampling_rate=0.0)
    assert PrivacyEvent("gaussian", 0.5, 2.0).noise_multiplier == 4.0


def test_algorithms_behaves_like_the_collection_of_names():
    names = dl.algorithm_names()
    assert "dp_admm" in names and "no_such_algorithm" not in names
    assert len(names) == len(list(names)) == len(dl.algorithm_table())
    assert list(names) == sorted(dl.algorithm_table().index)
    assert set(names.private) == set(dl.algorithm_table().query("private").index)


def test_privacy_records_have_one_home_that_trace_and_accounting_share():
    from dpadmm_lite import accounting, privacy, trace

    assert trace.PrivacyEvent is privacy.PrivacyEvent is accounting.PrivacyEvent
    for module in Path(accounting.__file__).parent.glob("*.py"):  # every module of the package
        assert "import dpadmm_lite.trace" not in module.read_text(), module
        assert "from ..trace" not in module.read_text(), module


def test_every_registered_algorithm_has_a_case():
    from algorithm_cases import case

    for name in dl.algorithm_names():
        c = case(name)
        assert isinstance(c.problem(1.0), dl.problems.Problem)
