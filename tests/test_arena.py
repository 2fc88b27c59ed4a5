"""The arena: every registered private algorithm at one budget, tuned on validation, tested once.

Generic over the registry: the arena's own tests never name an algorithm. Runs use the small
problems of ``tests/algorithm_cases.py`` (patched in for the arena's data), so that they stay fast
and an algorithm registered later is covered as soon as it declares a task of the arena.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from algorithm_cases import lasso_problem, logistic_problem

import build_book
import dpadmm_lite as dl
import dpadmm_book as book
from dpadmm_lite import registry
from dpadmm_book import arena
from dpadmm_book.exercises import arena as ex

ROOT = build_book.ROOT


@pytest.fixture
def small(monkeypatch, tmp_path):
    """The arena on small problems (validation and test splits of the algorithm cases) and a
    private cache directory."""
    monkeypatch.setenv("DPADMM_CACHE", str(tmp_path))
    problems = {("adult", "validation"): logistic_problem(n=300), ("adult", "test"): logistic_problem(n=300, seed=1),
                ("lasso", "validation"): lasso_problem(n=300), ("lasso", "test"): lasso_problem(n=300, seed=1)}
    monkeypatch.setattr(arena, "problem", lambda task, split="validation", size="full": problems[task, split])
    return problems


def _kinds():
    return {name: set(registry.info(name).tasks) for name in dl.algorithm_names().private}


# ---------------------------------------------------------------------- who plays
def test_every_private_algorithm_that_declares_a_task_plays_it():
    for task, spec in arena.TASKS.items():
        expected = {name for name, kinds in _kinds().items() if spec.kind in kinds}
        assert set(arena.applicable(task)) == expected
        assert all(name in dl.algorithm_names().private for name in arena.applicable(task))
    playing = set(arena.applicable("adult")) | set(arena.applicable("lasso"))
    assert playing, "no private algorithm declares a task of the arena"


def test_a_newly_registered_algorithm_joins_without_an_edit(monkeypatch):
    base = registry.info(arena.applicable("adult")[0])
    monkeypatch.setitem(registry._REGISTRY, "zz_new", replace(base, name="zz_new", tasks=("lasso",), label="ZZ-ADMM",
                                                              tuning={"rho": (0.1, 1.0, 10.0), "clip": (0.1, 1.0)}))
    assert "zz_new" in arena.applicable("lasso") and "zz_new" not in arena.applicable("adult")
    plan = [json.loads(c) for c in arena.candidates(["adult", "lasso"], budget=4)]
    mine = [c["config"] for c in plan if c["algorithm"] == "zz_new"]
    assert len(mine) == 4 and len({json.dumps(c, sort_keys=True) for c in mine}) == 4  # a budget of 4 of its 6
    assert all(c["task"] == "lasso" for c in plan if c["algorithm"] == "zz_new")
    assert arena.grid_table(["lasso"], budget=4).loc["ZZ-ADMM", "tried"] == 4  # the table shows its book's name


def test_every_algorithm_gets_the_same_budget_and_the_same_candidates_each_time():
    for budget in (1, 2, 4):
        plan = [json.loads(c) for c in arena.candidates(list(arena.TASKS), budget=budget)]
        for (algorithm, task) in {(c["algorithm"], c["task"]) for c in plan}:
            configs = [c["config"] for c in plan if (c["algorithm"], c["task"]) == (algorithm, task)]
            tuning = registry.info(algorithm).tuning or {}
            assert 1 <= len(configs) <= budget
            assert len(configs) == min(budget, math.prod(len(v) for v in tuning.values()) if tuning else 1)
            for config in configs:
                assert set(config) == set(tuning) and all(config[k] in tuning[k] for k in config)
        assert plan == [json.loads(c) for c in arena.candidates(list(arena.TASKS), budget=budget)]
    with pytest.raises(ValueError, match="budget"):
        arena.candidates(["adult"], budget=0)
    with pytest.raises(ValueError, match="task"):
        arena.applicable("mnist")


def test_splits_are_disjoint_and_seeded():
    for task in arena.TASKS:
        X, y, X_val, y_val, X_test, y_test = arena._splits(task, "fast")
        assert (len(X), len(X_val)) == arena.SIZES["fast"][task]
        if task == "lasso":  # continuous rows: a shared row would be a shared record (Adult has duplicate records)
            rows = {tuple(r) for r in X}
            assert not rows & {tuple(r) for r in X_val} and not rows & {tuple(r) for r in X_test}
            assert not {tuple(r) for r in X_val} & {tuple(r) for r in X_test}
        assert np.all(np.linalg.norm(np.vstack([X, X_val, X_test]), axis=1) <= 1 + 1e-9)  # the public bound holds
        again = arena._splits.__wrapped__(task, "fast")
        np.testing.assert_array_equal(X_val, again[2])
    p_val, p_test = arena.problem("lasso", "validation", "fast"), arena.problem("lasso", "test", "fast")
    assert p_val.n == 1000 and p_val.d == 64 and p_test.X_test.shape == (1000, 64)
    assert p_test.reference_optimum() is p_val.reference_optimum()


def test_the_settings_the_cached_data_read_are_read_only():
    """problem() and _splits() are cached on (task, size) alone: a size or task changed in a kernel would be
    served the old data, and a sweep keyed on the new setting would store old numbers. Both are read-only."""
    with pytest.raises(TypeError):
        arena.SIZES["fast"] = {"adult": (100, 100), "lasso": (100, 100)}
    with pytest.raises(TypeError):
        arena.SIZES["fast"]["lasso"] = (500, 1000)  # in place, one level down
    with pytest.raises(TypeError):
        arena.TASKS["lasso"] = replace(arena.TASKS["lasso"], lam=1.0)
    with pytest.raises(AttributeError):  # a frozen dataclass
        arena.TASKS["lasso"].lam = 1.0
    assert arena.SIZES["fast"]["lasso"] == (1_000, 1_000) and arena.TASKS["lasso"].lam == 5e-4
    assert all(isinstance(rows, tuple) for sizes in arena.SIZES.values() for rows in sizes.values())


# ---------------------------------------------------------------------- one run at one budget
def _one(task):
    return [c for c in arena.candidates([task], budget=1)]


@pytest.mark.parametrize("task", list(arena.TASKS))
def test_every_candidate_runs_at_the_budget_on_a_small_problem(small, task):
    for candidate in _one(task):
        rows = arena.evaluate(candidate, seed=0, split="validation", size="fast", iterations=8, epsilon=1.0)
        last = rows[-1]
        name = json.loads(candidate)["algorithm"]
        assert last["error"] == "", f"{name} on {task}: {last['error']}"
        assert last["final"] and last["iteration"] == json.loads(candidate)["config"].get("iterations", 8)  # a grid may set T
        assert 0.97 <= last["spent_epsilon"] <= 1.0, f"{name}: spent {last['spent_epsilon']} for ε = 1"
        assert math.isfinite(last["utility"]) and last["releases"] >= 1
        assert [r["iteration"] for r in rows] == sorted({r["iteration"] for r in rows})


@pytest.mark.parametrize("task", list(arena.TASKS))
def test_the_final_row_alone_is_the_final_row(small, task):
    """``final_only``: one row, the last row of the full evaluation (the walk and DP-SADMM then score only their
    last iterate: the same model, so the same utility and ε; the objective of one iterate may differ from that
    of a block of them in the last bit of BLAS's sums); only the wall-clock time differs."""
    for candidate in _one(task):
        full = arena.evaluate(candidate, seed=3, split="validation", size="fast", iterations=8, epsilon=0.7)
        (last,) = arena.evaluate(candidate, seed=3, split="validation", size="fast", iterations=8, epsilon=0.7,
                                 final_only=True)
        assert len(full) > 1 and last.keys() == full[-1].keys(), candidate
        for key, value in full[-1].items():
            if key == "objective_gap":
                assert last[key] == pytest.approx(value, rel=1e-12), candidate
            elif key != "seconds":
                assert last[key] == value or (value != value and last[key] != last[key]), (candidate, key)


def test_a_run_that_fails_or_overspends_is_reported_not_dropped(small, monkeypatch):
    name = arena.applicable("adult")[0]
    bad = json.dumps({"algorithm": name, "task": "adult", "config": {"rho": -1.0}})
    (row,) = arena.evaluate(bad, seed=0, split="validation", size="fast", iterations=5, epsilon=1.0)
    assert "rho" in row["error"] and math.isnan(row["utility"])

    real = registry.info(name).function

    def overspending(problem, **kw):
        trace = real(problem, **kw)
        return replace(trace, privacy=replace(trace.privacy, epsilon=2 * kw["epsilon"]))

    monkeypatch.setitem(registry._REGISTRY, name, replace(registry.info(name), function=overspending))
    (row,) = arena.evaluate(json.dumps({"algorithm": name, "task": "adult", "config": {}}),
                            seed=0, split="validation", size="fast", iterations=5, epsilon=1.0)
    assert "spent" in row["error"] and "budget" in row["error"]


def test_noise_summary_reads_the_ledger():
    from dpadmm_lite.privacy import PrivacyEvent

    class T:
        ledger = [PrivacyEvent("gaussian", 0.1, 0.5, count=3), PrivacyEvent("gaussian", 0.2, 2.0, count=1, sampling_rate=0.1),
                  PrivacyEvent("laplace_l2", 0.5, 4.0, count=2)]

    s = arena.noise_summary(T)
    assert s["releases"] == 6 and s["mechanism"] == "gaussian+laplace_l2"
    assert s["noise_multiplier"] == pytest.approx(5.0) and s["sigma"] == pytest.approx(0.5)
    assert s["laplace_epsilon0"] == pytest.approx(2.0) and s["sampling_rate"] == pytest.approx(0.1)


# ---------------------------------------------------------------------- tune, select, test once
def _tuning_frame():
    rows = []
    for eps in (0.1, 10.0):
        for config, base in (('{"rho": 0.1}', 0.30), ('{"rho": 1.0}', 0.20), ('{"rho": 10.0}', 0.10)):
            for seed in (0, 1):
                error = "ValueError: x" if (config == '{"rho": 10.0}' and seed == 1) else ""
                utility = base + (0.5 if (eps == 0.1 and config == '{"rho": 1.0}') else 0) + 0.01 * seed
                rows.append({"task": "adult", "algorithm": "a", "config": config, "epsilon": eps, "seed": seed,
                             "final": True, "error": error, "utility": np.nan if error else utility})
    return pd.DataFrame(rows)


def test_select_ranks_by_mean_validation_utility_and_uses_the_nearest_tuned_epsilon():
    chosen = arena.select(_tuning_frame(), epsilons=[0.05, 0.1, 0.5, 2.0, 10.0])
    by_eps = dict(zip(chosen["epsilon"], chosen["config"]))
    # rho = 10 failed on one seed: out. At ε = 0.1, rho = 0.1 (0.305) beats rho = 1 (0.705); at 10, rho = 1 wins.
    assert by_eps == {0.05: '{"rho": 0.1}', 0.1: '{"rho": 0.1}', 0.5: '{"rho": 0.1}', 2.0: '{"rho": 1.0}',
                      10.0: '{"rho": 1.0}'}
    assert dict(zip(chosen["epsilon"], chosen["tuned_at"]))[2.0] == 10.0
    assert set(chosen["candidates"]) == {2}
    entry = json.loads(chosen.iloc[0]["candidate"])
    assert entry == {"algorithm": "a", "task": "adult", "config": {"rho": 0.1}, "epsilon": 0.05}
    assert arena.config_for(chosen, "adult", "a", 3.0) == {"rho": 1.0}
    with pytest.raises(ValueError, match="no setting"):
        arena.config_for(chosen, "lasso", "a", 1.0)


def test_tune_select_final_end_to_end(small):
    plan = arena.candidates(["lasso"], budget=2)
    tuning = arena.tune(plan, epsilons=[1.0], seeds=(0,), size="fast", iterations=6)
    assert set(tuning["split"]) == {"validation"} and (tuning[tuning["final"]]["error"] == "").all()
    chosen = arena.select(tuning, epsilons=[0.5, 2.0])
    assert set(chosen["algorithm"]) == set(arena.applicable("lasso"))
    final = arena.final(chosen, seeds=(7, 8), size="fast", iterations=6)
    assert set(final["split"]) == {"test"} and set(final["seed"]) == {7, 8}
    summary = arena.summarize(final)
    assert len(summary) == 2 * len(arena.applicable("lasso"))
    assert (summary["lo"] <= summary["mean"]).all() and (summary["mean"] <= summary["hi"]).all()
    assert (summary["spent_epsilon"] <= summary["epsilon"]).all()
    again = arena.final(chosen, seeds=(7, 8), size="fast", iterations=6)  # cached, identical
    pd.testing.assert_frame_equal(final, again)


def test_the_panel_field_looks_up_exactly_what_a_live_run_computes(small):
    plan = arena.candidates(["lasso"], budget=1)
    chosen = arena.select(arena.tune(plan, epsilons=[1.0], seeds=(0,), size="fast", iterations=5), epsilons=[1.0])
    grid = book.widgets.epsilon_values()[38:41]  # three neighbouring values of the ε slider around 1
    field = arena.field(chosen, ["lasso"], epsilons=grid, seeds=(0,), size="fast", iterations=5)
    assert len(field) == 3 * len(arena.applicable("lasso")) and field["final"].all()
    for epsilon in grid:
        looked_up = arena.field_at(chosen, "lasso", epsilon * (1 + 1e-13), seed=0, iterations=5, precomputed=field)
        live = arena.field_at(chosen, "lasso", epsilon, seed=0, iterations=5)
        assert looked_up["epsilon"].to_numpy() == pytest.approx(epsilon, rel=1e-12)  # the row of this ε, not another's
        for column in ("algorithm", "utility", "spent_epsilon", "config"):
            assert looked_up[column].tolist() == live[column].tolist(), column
        assert (looked_up["spent_epsilon"] <= epsilon * (1 + 1e-6)).all()
    other_seed = arena.field_at(chosen, "lasso", grid[1], seed=5, iterations=5, precomputed=field)
    assert set(other_seed["seed"]) == {5}  # not in the sweep: run live
    off_grid = arena.field_at(chosen, "lasso", 1.05, seed=0, iterations=5, precomputed=field)
    assert set(off_grid["epsilon"]) == {1.05}


def test_the_epsilon_slider_takes_exactly_the_values_a_panel_can_precompute():
    values = book.widgets.epsilon_values()
    slider = book.widgets._EpsilonControl(1.0).slider
    positions = np.arange(slider.min, slider.max + slider.step / 2, slider.step)
    assert np.allclose(values, slider.base ** positions, rtol=1e-12) and len(values) == 61
    assert values[0] == pytest.approx(0.01) and values[-1] == pytest.approx(10.0) and 1.0 in np.round(values, 12)


# ---------------------------------------------------------------------- the chapter
def _cells(name):
    return json.loads((ROOT / "book" / f"{name}.ipynb").read_text())["cells"]


def test_the_chapter_names_no_algorithm_in_its_code():
    code = "\n".join("".join(c["source"]) for c in _cells("arena") if c["cell_type"] == "code")
    named = [name for name in dl.algorithm_names() if f'"{name}"' in code or f"'{name}'" in code]
    assert not named, f"the arena chapter must take its algorithms from the registry, not name them: {named}"


def test_the_chapter_has_exercises_with_checks():
    text = "\n".join("".join(c["source"]) for c in _cells("arena"))
    labels = [line.split(":label:")[1].strip() for line in text.splitlines() if ":label: arena_ex_" in line]
    assert len(labels) >= 3
    assert text.count("ex.check_") >= 2


def test_exercise_checks_answer_like_a_teacher():
    assert not ex.check_choice(...) and "not answered" in repr(ex.check_choice(...))
    assert ex.check_choice(ex.expected_choice())
    data = ex.tuning_data()
    assert "test" in repr(ex.check_choice(data.groupby("config")["test_error"].mean().idxmin()))
    assert "single" in repr(ex.check_choice(data.groupby("config")["validation_error"].min().idxmin()))
    sigma = ex.expected_sigma()
    assert ex.check_sigma(sigma) and "2c/n" in repr(ex.check_sigma(sigma / 2))
    assert "basic composition" in repr(ex.check_sigma(
        dl.accounting.classic_gaussian_sigma(2 / 10_000, 1.0 / 200, 1e-6 / 200)))
    eps = ex.expected_tuning_epsilon()
    assert 1.0 < eps < 4.0 and ex.check_tuning_epsilon(eps)
    assert "basic composition" in repr(ex.check_tuning_epsilon(4.0))
    assert "one" in repr(ex.check_tuning_epsilon(1.0))
    for check in (ex.check_choice, ex.check_sigma, ex.check_tuning_epsilon):
        assert repr(check("nonsense")).startswith("✗")


def test_the_static_page_lets_the_reader_pick_task_epsilon_and_algorithm(site_dir):
    """The built arena page: its charts carry a task drop-down, an ε slider and an algorithm
    drop-down, bound to Vega-Lite parameters (they work with no kernel)."""
    import re

    page = (site_dir / "book" / "arena.html").read_text()
    specs = re.findall(r'<script type="application/json" class="dpadmm-vega-spec"[^>]*>(.*?)</script>', page, re.S)
    assert specs, "the arena page has no chart"
    params = [p for s in specs for p in json.loads(s.replace("<\\/", "</")).get("params", [])]
    binds = {(p["name"], p["bind"]["input"]) for p in params if "bind" in p}
    # the tuning chart's task and algorithm do not all combine: one drop-down of the pairs the grid has
    assert ("p_task", "select") in binds and ({("p_algorithm", "select"), ("p_task___algorithm", "select")} & binds)
    assert ("p_epsilon", "range") in binds
