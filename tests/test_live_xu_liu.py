"""The live panels of Xu et al. (2020) and Liu et al. (2022) (issue 23): the chapters' set-ups, run
without scikit-learn on the public feature graphs shipped with the library.

The browser tests of every panel (the button, native rows at the defaults, a moved control) are the
generic ones of tests/test_live.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpadmm_lite import accounting, datasets, problems
from dpadmm_book import live
from dpadmm_book.live import _feature_graph
from dpadmm_book.live.liu2022 import liu2022_curves, liu2022_problem
from dpadmm_book.live.xu2020 import xu2020_curves, xu2020_problem


def _chapter_training_rows(seed):
    """Adult's training rows once the chapter's public sample is set aside (book/xu2020, book/liu2022, cell 4)."""
    X, y, X_test, y_test = datasets.load_adult()
    X_public, X, y = datasets.public_split(X, y, public_rows=2_000, seed=seed)
    return X_public, X, y, X_test, y_test


def test_the_shipped_feature_graphs_are_the_public_samples_graphs():
    """Recomputed from the public rows with problems.feature_graph (scikit-learn's graphical lasso),
    each chapter's graph is exactly the shipped one: the file cannot drift from the chapters."""
    for chapter, seed in (("xu2020", 2020), ("liu2022", 2022)):
        X, y, _, _ = datasets.load_adult()
        X_public, _, _ = datasets.public_split(X, y, public_rows=2_000, seed=seed)
        shipped = _feature_graph.public_feature_graph(chapter)
        assert shipped.shape[1] == 104 and len(shipped) > 200
        np.testing.assert_array_equal(shipped, problems.feature_graph(X_public))
    assert _feature_graph.PUBLIC_SEEDS == {"xu2020": 2020, "liu2022": 2022}
    with pytest.raises(ValueError, match="chapter"):
        _feature_graph.public_feature_graph("zhang2017")


def test_the_xu_panel_is_the_chapters_set_up():
    """4,000 seeded training rows left by the public sample, λ = 1e-5, the public graph (book/xu2020.ipynb:
    the chapter's `adult` estimates it from `public_features`, its live problem takes `W=adult.A[:-adult.d]`)."""
    X_public, X, y, X_test, y_test = _chapter_training_rows(2020)
    adult = problems.graph_guided_fused_lasso(X[:50], y[:50], lam=1e-5, public_features=X_public)
    keep = np.random.default_rng(0).choice(len(y), 4_000, replace=False)
    chapter = problems.graph_guided_fused_lasso(X[keep], y[keep], lam=1e-5, W=adult.A[:-adult.d], X_test=X_test,
                                                y_test=y_test)
    mine = xu2020_problem()
    np.testing.assert_array_equal(mine.A, chapter.A)
    np.testing.assert_array_equal(mine.X, chapter.X)
    w = np.linspace(-0.3, 0.3, chapter.d)
    assert mine.n == 4_000 and mine.objective(w) == pytest.approx(chapter.objective(w), rel=1e-14)
    result = xu2020_curves(epsilon=0.5, rho=0.3, iterations=10)
    assert result["summary"].startswith("DP-ADMM, 10 iterations: objective gap ") and "; ε=0.5, δ=" in result["summary"]
    assert 0.499 <= result["epsilon_spent"] <= 0.5
    assert {r["algorithm"] for r in result["rows"]} == {"ADMM", "AccADMM", "DP-ADMM", "DP-AccADMM"}
    assert sorted({r["iteration"] for r in result["rows"]}) == [1, 5, 9, 10]
    assert {frozenset(r) for r in result["rows"]} == {frozenset({"algorithm", "iteration", "objective_gap",
                                                                 "epsilon", "rho"})}
    assert {(r["epsilon"], r["rho"]) for r in result["rows"]} == {(0.5, 0.3)}
    paper = xu2020_curves(epsilon=0.5, iterations=10, calibration="paper")
    assert "the paper's Thm 1 reads ε=" in paper["summary"] and paper["rows"] != result["rows"]


def test_the_liu_panel_is_the_chapters_set_up():
    """4,000 seeded training rows left by the public sample, λ₁ = 1e-4, the public graph (book/liu2022.ipynb,
    `adult(LIVE_ROWS, 0, "fused")`); DP-SADMM takes S·⌈2n/b⌉ steps, recorded once per pass."""
    X_public, X, y, X_test, y_test = _chapter_training_rows(2022)
    keep = np.random.default_rng(0).choice(len(y), 4_000, replace=False)
    chapter = problems.graph_guided_fused_lasso(X[keep], y[keep], lam=1e-4, W=problems.feature_graph(X_public),
                                                X_test=X_test, y_test=y_test)
    mine = liu2022_problem()
    np.testing.assert_array_equal(mine.A, chapter.A)
    np.testing.assert_array_equal(mine.X, chapter.X)
    w = np.linspace(-0.3, 0.3, chapter.d)
    assert mine.n == 4_000 and mine.objective(w) == pytest.approx(chapter.objective(w), rel=1e-14)
    result = liu2022_curves(epsilon=0.3, epochs=1)
    assert result["summary"].startswith("DP-VRADMM, 5 passes: objective gap ") and "; ε=0.3, δ=" in result["summary"], \
        result["summary"]  # the chart's axis counts passes over the data, and so does the line
    assert all(0.299 <= spent <= 0.3 for spent in result["epsilon_spent"].values())
    by = {a: [r["passes"] for r in result["rows"] if r["algorithm"] == a] for a in ("DP-VRADMM", "DP-SADMM")}
    assert len(by["DP-VRADMM"]) == 1 and len(by["DP-SADMM"]) == 2  # 1 epoch; 160 steps of b = 50, a point per 80
    assert {frozenset(r) for r in result["rows"]} == {frozenset({"algorithm", "passes", "objective_gap",
                                                                 "test_accuracy", "nu", "epsilon"})}
    alone = liu2022_curves(epsilon=0.3, epochs=1, algorithm="DP-SADMM", references=True)
    assert {r["algorithm"] for r in alone["rows"]} == {"DP-SADMM", "DP-SADMM, ν = 0", "SADMM (no noise)"}
    gaps = lambda out, label: [r["objective_gap"] for r in out["rows"] if r["algorithm"] == label]  # noqa: E731
    assert gaps(alone, "DP-SADMM") == gaps(result, "DP-SADMM")
    unsmoothed = liu2022_curves(epsilon=0.3, epochs=1, algorithm="DP-SADMM", nu=0)  # same seed: same draws
    assert gaps(alone, "DP-SADMM, ν = 0") == gaps(unsmoothed, "DP-SADMM") != gaps(alone, "DP-SADMM")


@pytest.mark.parametrize("function, values, name", [
    (xu2020_curves, {"epsilon": 0.0}, "epsilon"), (xu2020_curves, {"rho": 100.0}, "rho"),
    (xu2020_curves, {"iterations": 201}, "iterations"), (xu2020_curves, {"delta": 0.5}, "delta"),
    (xu2020_curves, {"calibration": "rdp"}, "calibration"), (xu2020_curves, {"mu": 1.0}, "mu"),
    (xu2020_curves, {"step_scale": 3.0}, "step_scale"), (xu2020_curves, {"seed": -1}, "seed"),
    (liu2022_curves, {"epsilon": 20.0}, "epsilon"), (liu2022_curves, {"nu": 6}, "nu"),
    (liu2022_curves, {"rho": 2.0}, "rho"), (liu2022_curves, {"algorithm": "DP-ADMM"}, "algorithm"),
    (liu2022_curves, {"batch_size": 5}, "batch_size"), (liu2022_curves, {"epochs": 2.5}, "epochs"),
    (liu2022_curves, {"delta": 0.0}, "delta"), (liu2022_curves, {"references": "yes"}, "references")])
def test_bad_values_name_the_parameter(function, values, name):
    with pytest.raises(ValueError, match=name):
        function(**values)


def test_the_panels_controls_move_within_the_functions_ranges():
    """Every control's range end runs (the site's sliders reach them), via the panel's entry."""
    for panel in ("xu2020", "liu2022"):
        for control in live.PANELS[panel]["controls"]:
            ends = [o[1] for o in control["options"]] if control["kind"] == "select" else [control["min"], control["max"]]
            for value in ends:
                rows = live.run_panel(panel, {control["name"]: value})["rows"]
                assert rows and all(math.isfinite(r["objective_gap"]) for r in rows), (panel, control["name"], value)


def test_theorem_2_best_theta_in_closed_form_is_the_minimum_over_theta():
    """ε(θ) of Liu et al.'s Theorem 2 read backwards, minimised over θ: the closed form is the grid minimum."""
    theta = np.linspace(1e-4, 1 - 1e-4, 20_001)
    for sigma, T, n, delta in ((0.05, 640, 4_000, 5e-4), (2.0, 20_000, 290_506, 1e-8), (30.0, 10, 1_000, 1e-3)):
        best = accounting.liu2022_sadmm_epsilon(sigma, delta, iterations=T, n=n, lipschitz=1.0)
        each = np.array([accounting.liu2022_sadmm_epsilon(sigma, delta, iterations=T, n=n, lipschitz=1.0, theta=t)
                         for t in theta])
        assert best <= each.min() * (1 + 1e-12)
        assert best == pytest.approx(each.min(), rel=1e-6)
