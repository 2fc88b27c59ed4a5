"""The "Run live" panels of Cyffers et al.'s chapter and of the arena (issue 23): the panel's set-up is the
chapter's, the options the browser runs are the ones the chapter's tuning chose, bad values name the
parameter, and a run states the ε it was asked for. (The browser tests are tests/test_live.py's generic ones.)"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

import dpadmm_lite as dl
from dpadmm_lite import datasets, problems
from dpadmm_book import arena, live
from dpadmm_book.live import arena as live_arena
from dpadmm_book.live import cyffers2023 as live_cyffers

ROOT = Path(__file__).resolve().parents[1]


def _code_cells(chapter: str) -> list[str]:
    """The chapter's code cells; a hidden cell of the build's checks and glue (``remove-cell``, right after
    the cell it checks) is read as part of that cell."""
    cells: list[str] = []
    for c in json.loads((ROOT / "book" / f"{chapter}.ipynb").read_text())["cells"]:
        if c["cell_type"] != "code":
            continue
        source = "".join(c["source"])
        hidden = "remove-cell" in c.get("metadata", {}).get("tags", [])
        if hidden and cells and re.match(r"\s*(glue\(|assert\b|for quoted_name)", source):
            cells[-1] += "\n" + source
        else:
            cells.append(source)
    return cells


# ----------------------------------------------------------------------------- Cyffers et al. (2023)
def test_the_cyffers_panel_is_the_chapters_lasso():
    """App. E's data (make_lasso(3n, 64, seed=2023): training, validation, test rows in this order) and
    LassoCV's λ on the training rows — the value the live module holds for the browser."""
    from sklearn.linear_model import LassoCV

    n = live_cyffers.CYFFERS2023_N
    assert (n, live_cyffers.CYFFERS2023_P, live_cyffers.CYFFERS2023_DELTA, live_cyffers.CYFFERS2023_Q) == (1000, 64, 1e-6, 0.1)
    X, y, _ = datasets.make_lasso(3 * n, 64, seed=2023)
    lam = float(LassoCV(fit_intercept=False, cv=5).fit(X[:n], y[:n]).alpha_)
    assert lam == pytest.approx(live_cyffers.CYFFERS2023_LAM, rel=1e-9)
    w = np.linspace(-0.2, 0.2, 64)
    for split, rows in (("test", slice(2 * n, 3 * n)), ("validation", slice(n, 2 * n))):
        mine = live_cyffers.cyffers2023_problem(split)
        chapter = problems.lasso(X[:n], y[:n], lam, X_test=X[rows], y_test=y[rows])
        assert mine.n == n and mine.objective(w) == pytest.approx(chapter.objective(w), rel=1e-12)
        assert np.array_equal(mine.X_test, X[rows]) and np.array_equal(mine.y_test, y[rows])
    # the chapter builds its problems with these functions and asserts LassoCV's choice
    cells = _code_cells("cyffers2023")
    assert any('live.cyffers2023_problem("test")' in s and "live.CYFFERS2023_LAM" in s and "LassoCV(" in s for s in cells)


def test_the_cyffers_panel_runs_the_options_the_chapters_tuning_chose():
    """The browser cannot tune: the function's defaults are the published edition's tuned options, and the
    chapter asserts (failing its build) that its tuning chose exactly the options held for its edition."""
    import inspect

    tuned = live_cyffers.CYFFERS2023_TUNED
    assert set(tuned) == {"fast", "full"}
    for held in tuned.values():
        assert set(held["ADMM"]) == {"gamma", "relaxation", "clip"} and set(held["DP-SGD"]) == {"step", "clip"}
    defaults = {k: p.default for k, p in inspect.signature(live_cyffers.cyffers2023_modes).parameters.items()}
    full = tuned["full"]
    assert (defaults["gamma"], defaults["relaxation"], defaults["clip"]) == (
        full["ADMM"]["gamma"], full["ADMM"]["relaxation"], full["ADMM"]["clip"])
    assert (defaults["sgd_step"], defaults["sgd_clip"]) == (full["DP-SGD"]["step"], full["DP-SGD"]["clip"])
    # the chapter's panel ε is the one its tuning grid has nearest ε = 1, in each edition
    assert tuned["fast"]["epsilon"] == min([0.01, 0.3, 5.0], key=lambda e: abs(math.log(e)))
    assert tuned["full"]["epsilon"] == min([float(e) for e in np.geomspace(0.01, 5, 7)], key=lambda e: abs(math.log(e)))
    (cell,) = [s for s in _code_cells("cyffers2023") if "PANEL_ADMM = chosen(" in s]
    assert 'live.CYFFERS2023_TUNED["fast" if FAST else "full"]' in cell
    assert "assert math.isclose(PANEL_EPS, TUNED[\"epsilon\"]" in cell
    assert 'PANEL_ADMM == TUNED["ADMM"]' in cell and 'PANEL_SGD == TUNED["DP-SGD"]' in cell
    # and the static chart's runs pass the tuned options (not the defaults) to the live function
    (sweep,) = [s for s in _code_cells("cyffers2023") if "live.cyffers2023_modes(" in s and "book.sweep.grid(" in s]
    assert 'gamma=PANEL_ADMM["gamma"]' in sweep and 'sgd_step=PANEL_SGD["step"]' in sweep
    # the site's panel opens on the static chart's setting: its rounds (the full edition's), its tuned clip, and a
    # rounds slider that reaches them
    (rounds,) = [c for c in live_cyffers.PANELS["cyffers2023"]["controls"] if c["name"] == "rounds"]
    assert 'LIVE_ROUNDS = 60 if FAST else 200' in sweep and rounds["value"] == 200 <= rounds["max"]
    assert '"clip": PANEL_ADMM["clip"]' in sweep
    (clip,) = [c for c in live_cyffers.PANELS["cyffers2023"]["controls"] if c["name"] == "clip"]
    assert clip["value"] == full["ADMM"]["clip"]


def test_the_cyffers_lab_panel_offers_no_control_without_effect():
    """The walk's graph is part of the mode (a separate topology menu did nothing outside the walk)."""
    (cell,) = [s for s in _code_cells("cyffers2023") if "book.widgets.live(panel" in s]
    assert "topology=" not in cell and '"mode": list(live.MODES)' in cell
    assert live_cyffers.MODES["walk, star"] == ("private_admm_walk", "star")
    problem = live_cyffers.cyffers2023_problem("test")
    models = [dl.run("private_admm_walk", problem, epsilon=math.inf, iterations=300, gamma=300.0, relaxation=1.0,
                     clip=0.1, topology=graph, seed=0).model for graph in ("star", "ring")]
    assert np.abs(models[0]).max() > 0 and not np.allclose(models[0], models[1])


def test_a_cyffers_run_states_the_epsilon_asked_for_and_keeps_the_charts_fields():
    result = live_cyffers.cyffers2023_modes(epsilon=0.5, rounds=10)
    assert result["summary"].startswith("ADMM (federated) and DP-SGD, 10 rounds: test objective ")
    assert all(0.97 * 0.5 <= e <= 0.5 * (1 + 1e-6) for e in result["epsilon_spent"].values())
    spent = result["epsilon_spent"]  # what each run spent, by the accountant, as the line reads it
    assert (f"ε={spent['ADMM']:.3g} and {spent['DP-SGD']:.3g}, δ=1e-06 end to end" in result["summary"]
            or f"ε={spent['ADMM']:.3g} each, δ=1e-06 end to end" in result["summary"]), result["summary"]
    assert "Thm 3 reads ε=" in result["summary"] and len(result["summary"]) <= 160
    rows = result["rows"]
    assert {tuple(sorted(r)) for r in rows} == {("clip", "epsilon", "mode", "round", "run", "test_objective")}
    assert [r["round"] for r in rows if r["run"] == "ADMM"] == [1, 5, 9, 10]  # every 4th round and the last
    assert {r["run"] for r in rows} == {"ADMM", "DP-SGD"} and {r["epsilon"] for r in rows} == {0.5}
    walk = live_cyffers.cyffers2023_modes(epsilon=2.0, mode="walk, ring", rounds=3, every=1, sampling_rate=0.01)
    assert walk["summary"].startswith("ADMM (walk, ring) and DP-SGD, 3 rounds") and "δ=1e-06 end to end" in walk["summary"]
    assert [r["round"] for r in walk["rows"] if r["run"] == "ADMM"] == [1, 2, 3]
    assert {r["mode"] for r in walk["rows"]} == {"walk, ring"}


@pytest.mark.parametrize("values, name", [
    ({"epsilon": 20.0}, "epsilon"), ({"epsilon": 0.0}, "epsilon"), ({"mode": "torus"}, "mode"),
    ({"clip": 0.0}, "clip"), ({"rounds": 0}, "rounds"), ({"rounds": 2.5}, "rounds")])
def test_bad_cyffers_control_values_name_the_parameter(values, name):
    with pytest.raises(ValueError, match=name):
        live.run_panel("cyffers2023", values)


@pytest.mark.parametrize("values, name", [
    ({"delta": 0.5}, "delta"), ({"gamma": 1.0}, "gamma"), ({"relaxation": 0.0}, "relaxation"),
    ({"sampling_rate": 2.0}, "sampling_rate"), ({"sgd_clip": 5.0}, "sgd_clip"), ({"sgd_step": 0.0}, "sgd_step"),
    ({"every": 0}, "every"), ({"seed": -1}, "seed")])
def test_bad_cyffers_options_name_the_parameter(values, name):
    with pytest.raises(ValueError, match=name):
        live_cyffers.cyffers2023_modes(**values)


# ----------------------------------------------------------------------------- the arena
@pytest.fixture(scope="module")
def fast_chosen():
    """The arena chapter's tuning in its fast edition (book/arena.ipynb with FAST = True)."""
    epsilons = [float(e) for e in np.geomspace(0.05, 10, 2)]
    tasks = list(arena.TASKS)
    tuning = arena.tune(arena.candidates(tasks, budget=2), epsilons=epsilons[:1], seeds=(0,), size="fast",
                        iterations=20)
    return arena.select(tuning, epsilons=epsilons), epsilons


def test_the_chosen_settings_are_data_the_writer_reproduces(tmp_path, monkeypatch):
    """ARENA_CHOSEN is a JSON file beside the module (data, never code), in the format write_arena_chosen writes;
    the writer replaces one edition's entry, in the file and in the process."""
    shipped = (Path(live_arena.__file__).parent / live_arena.ARENA_CHOSEN_FILE).read_text()
    assert json.loads(shipped) == live_arena.ARENA_CHOSEN
    monkeypatch.setattr(live_arena.resources, "files", lambda package: tmp_path)
    monkeypatch.setattr(live_arena, "ARENA_CHOSEN", json.loads(shipped))
    live_arena.write_arena_chosen("fast", live_arena.ARENA_CHOSEN["fast"])
    assert (tmp_path / live_arena.ARENA_CHOSEN_FILE).read_text() == shipped, "the file is what the writer writes"
    changed = {"epsilons": [1.0], "settings": {"adult": {"dp_admm": [{"rho": 2.0}]}}}
    live_arena.write_arena_chosen("full", changed)
    written = json.loads((tmp_path / live_arena.ARENA_CHOSEN_FILE).read_text())
    assert written["full"] == changed == live_arena.ARENA_CHOSEN["full"] and written["fast"] == json.loads(shipped)["fast"]
    with pytest.raises(ValueError, match="edition"):
        live_arena.write_arena_chosen("draft", changed)


def test_the_arena_panel_holds_the_settings_the_chapters_tuning_chose(fast_chosen):
    """What the browser runs is what the fast edition's tuning (validation split) chooses, and the
    nearest-ε rule is :func:`arena.config_for`'s; the chapter asserts the same for its edition."""
    chosen, epsilons = fast_chosen
    assert live_arena.arena_settings(chosen, epsilons) == live_arena.ARENA_CHOSEN["fast"]
    for task in arena.TASKS:
        for name in arena.applicable(task):
            for epsilon in (0.01, 0.05, 0.3, 0.7, 2.0, 10.0):
                assert live_arena._config_at(live_arena.ARENA_CHOSEN["fast"], task, name, epsilon) == \
                    arena.config_for(chosen, task, name, epsilon), (task, name, epsilon)
    (cell,) = [s for s in _code_cells("arena") if "book.widgets.live(" in s]
    assert "assert live.arena_settings(chosen, EPSILONS) == live.ARENA_CHOSEN[EDITION]" in cell
    assert 'EDITION = "fast" if FAST else "full"' in cell
    # the published edition: seven values of ε, every task and applicable algorithm, and the nearest-ε rule
    # of arena.config_for on the frame these settings come from (three tuned ε: the choice changes with ε)
    import pandas as pd

    full = live_arena.ARENA_CHOSEN["full"]
    assert full["epsilons"] == [float(e) for e in np.geomspace(0.05, 10, 7)]
    assert {t: set(a) for t, a in full["settings"].items()} == {t: set(arena.applicable(t)) for t in arena.TASKS}
    frame = pd.DataFrame([{"task": t, "algorithm": a, "epsilon": e, "config": json.dumps(c, sort_keys=True)}
                          for t, algorithms in full["settings"].items() for a, configs in algorithms.items()
                          for e, c in zip(full["epsilons"], configs) if c is not None])
    assert live_arena.arena_settings(frame, full["epsilons"]) == full
    changes = 0
    for task, algorithms in full["settings"].items():
        for name, configs in algorithms.items():
            changes += len({json.dumps(c, sort_keys=True) for c in configs}) > 1
            for epsilon in (0.01, 0.06, 0.2, 0.5, 1.0, 3.0, 9.0, 10.0):
                assert live_arena._config_at(full, task, name, epsilon) == arena.config_for(frame, task, name, epsilon)
    assert changes > 0


def test_the_arena_panel_is_the_chapters_set_up():
    """The live size draws from the arena's own splits: Adult's first rows of the same fixed permutation
    (a subset of the fast and full training rows), the Lasso exactly as in the arena; the task's λ and δ."""
    live_problem, fast_problem = arena.problem("adult", "validation", "live"), arena.problem("adult", "validation", "fast")
    n_train, n_val = arena.SIZES[live_arena.ARENA_LIVE_SIZE]["adult"]
    assert (live_problem.n, live_problem.X_test.shape[0]) == (n_train, n_val)
    assert np.array_equal(live_problem.X, fast_problem.X[:n_train]) and live_problem.lam == arena.TASKS["adult"].lam
    lasso_live, lasso_full = arena.problem("lasso", "validation", "live"), arena.problem("lasso", "validation", "full")
    assert np.array_equal(lasso_live.X, lasso_full.X) and np.array_equal(lasso_live.X_test, lasso_full.X_test)
    result = live_arena.arena_field(epsilon=0.5, task="lasso", iterations=5)
    names = {r["algorithm"] for r in result["rows"]} | set(result["failed"])
    from dpadmm_lite.labels import readable

    assert names == {readable(n) for n in arena.applicable("lasso")}
    assert {tuple(sorted(r)) for r in result["rows"]} == {("algorithm", "epsilon", "task", "utility")}
    assert {r["task"] for r in result["rows"]} == {"Lasso"} and {r["epsilon"] for r in result["rows"]} == {0.5}


def test_an_arena_run_states_the_epsilon_asked_for():
    result = live_arena.arena_field(epsilon=0.5, task="lasso", iterations=5)
    assert result["summary"].startswith("Lasso, ε = 0.5, ")
    assert result["spent_epsilon"] and all(0.97 * 0.5 <= e <= 0.5 * (1 + 1e-6) for e in result["spent_epsilon"].values())
    for name, spent in result["spent_epsilon"].items():
        assert f"{name} {spent:.4g}" in result["summary"]


def test_the_arena_panel_reads_a_precomputed_field_as_it_would_run_it():
    """The chapter's JupyterLab panel passes the precomputed field (seed 0): the rows are the ones a run gives."""
    settings = live_arena.ARENA_CHOSEN["full"]
    plan = [arena._key(name, "lasso", live_arena._config_at(settings, "lasso", name, 2.0), 2.0)
            for name in arena.applicable("lasso")]
    records = [row for entry in plan for row in arena.evaluate(entry, 0, "validation", "live", 4) if row["final"]]
    for row in records:
        row["size"], row["iterations"] = "live", 4
    ran = live_arena.arena_field(epsilon=2.0, task="lasso", iterations=4)
    looked_up = live_arena.arena_field(epsilon=2.0, task="lasso", iterations=4,
                                 precomputed=[{**r, "utility": r["utility"] + 1.0} for r in records])
    assert [r["utility"] + 1.0 for r in ran["rows"]] == [r["utility"] for r in looked_up["rows"]]  # it was read
    other_seed = live_arena.arena_field(epsilon=2.0, task="lasso", iterations=4, seed=0,
                                  precomputed=[{**r, "seed": 5} for r in records])
    assert other_seed["rows"] == ran["rows"]  # not this seed: run


@pytest.mark.parametrize("values", [{"task": "lasso", "epsilon": 0.7, "iterations": 3},
                                    {"task": "adult", "epsilon": 3.0, "iterations": 2}])
def test_the_arena_field_split_between_two_workers_is_the_field(values):
    """The site splits the field's runs between two workers (``live.run_share``) and one of them assembles them
    (``run_panel(..., shared=...)``): the same rows and summary as one worker running all, each run in exactly one
    share, the split the same in every worker and balanced by the last run's costs, and rows JSON can carry."""
    whole = live.run_panel("arena", values)
    for costs in (None, whole["costs"], {f"{values['task']}:dp_admm": 50.0}):
        shares = [live.run_share("arena", values, i, 2, costs) for i in range(2)]
        names = [[r["algorithm"] for r in share] for share in shares]
        assert names == [[r["algorithm"] for r in live.run_share("arena", values, i, 2, costs)] for i in range(2)]
        assert sorted(names[0] + names[1]) == sorted(k.split(":")[1] for k in whole["costs"])
        assert all(names), "both workers get runs"
        rows = json.loads(json.dumps(shares[0] + shares[1], allow_nan=False))
        merged = live.run_panel("arena", values, shared=rows)
        assert merged["rows"] == whole["rows"] and merged["summary"] == whole["summary"]
    lone = next(k.split(":")[1] for k in whole["costs"])
    costs = {**{k: 1.0 for k in whole["costs"]}, f"{values['task']}:{lone}": 1e6}
    heavy = [r["algorithm"] for r in live.run_share("arena", values, 0, 2, costs)]
    assert heavy == [lone], "a run that costs more than all others together gets a worker to itself"


def test_a_run_stays_in_its_worker_unless_moving_it_balances_the_two_much_better():
    """Moving a run to the other worker costs that worker the run's first-time set-up, so the last split is kept
    while its slower share is within 15 % of a fresh split's; a first split of Adult already puts DP-SADMM alone
    with the small runs (the first-split costs), as the timed costs will."""
    plan = [(name, {}) for name in arena.applicable("adult")]
    first = live_arena._shares(plan, 2, {}, "adult")
    costs = {f"adult:{name}": ms / 1000 for name, ms in live_arena._FIRST_COSTS["adult"].items()}
    loads = [sum(costs[f"adult:{name}"] for name, _ in part) for part in first]
    assert max(loads) <= 1.05 * min(loads) and first == live_arena._shares(plan, 2, costs, "adult")
    assigned = {f"adult:{name}": i for i, part in enumerate(first) for name, _ in part}
    nudged = {**costs, "adult:dvp_star": costs["adult:dvp_star"] * 1.3}  # a run's time wobbles: nothing moves
    assert live_arena._shares(plan, 2, nudged, "adult", assigned) == first
    moved = {key: 1 - i for key, i in assigned.items()}  # the mirror image is as balanced: kept
    assert live_arena._shares(plan, 2, costs, "adult", moved) == first[::-1]
    lopsided = {**assigned, "adult:dp_sadmm": 0, "adult:pvp_star": 0, "adult:dvp_graph": 0}  # far worse: re-split
    fresh = live_arena._shares(plan, 2, costs, "adult", lopsided)
    assert fresh == live_arena._shares(plan, 2, costs, "adult") and fresh != [
        [e for e in plan if lopsided[f"adult:{e[0]}"] == k] for k in range(2)]


def test_a_failed_run_crosses_between_workers_as_json(monkeypatch):
    """A run that fails gives a row with its error and no numbers (None, not NaN: JSON cannot carry NaN)."""
    name = arena.applicable("lasso")[0]
    monkeypatch.setitem(live_arena.ARENA_CHOSEN["full"]["settings"]["lasso"], name,
                        [{"rho": -1.0}] * len(live_arena.ARENA_CHOSEN["full"]["epsilons"]))
    rows = [r for i in range(2) for r in live.run_share("arena", {"epsilon": 1.0, "iterations": 2}, i, 2)]
    (bad,) = [r for r in rows if r["algorithm"] == name]
    assert "rho" in bad["error"] and bad["utility"] is None and bad["spent_epsilon"] is None
    merged = live.run_panel("arena", {"epsilon": 1.0, "iterations": 2}, shared=json.loads(json.dumps(rows)))
    assert list(merged["failed"]) == [live_arena.readable(name)] and len(merged["rows"]) == len(rows) - 1


def test_only_a_panel_that_splits_its_runs_takes_shares():
    with pytest.raises(ValueError, match="panel"):
        live.run_share("admm", {}, 0, 2)
    with pytest.raises(ValueError, match="shared"):
        live.run_panel("admm", {}, shared=[])
    for share, shares in ((2, 2), (-1, 2), (0, 0)):
        with pytest.raises(ValueError, match="share"):
            live.run_share("arena", {}, share, shares)


@pytest.mark.parametrize("values, name", [
    ({"epsilon": 0.0}, "epsilon"), ({"epsilon": 11.0}, "epsilon"), ({"task": "mnist"}, "task"),
    ({"iterations": 0}, "iterations"), ({"iterations": 201}, "iterations")])
def test_bad_arena_control_values_name_the_parameter(values, name):
    with pytest.raises(ValueError, match=name):
        live.run_panel("arena", values)


@pytest.mark.parametrize("values, name", [({"size": "huge"}, "size"), ({"edition": "draft"}, "edition"),
                                          ({"seed": -1}, "seed")])
def test_bad_arena_options_name_the_parameter(values, name):
    with pytest.raises(ValueError, match=name):
        live_arena.arena_field(**values)
