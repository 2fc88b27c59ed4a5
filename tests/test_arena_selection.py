"""Tuning enters the budget: private hyper-parameter selection (accounting._selection) and the
arena's ε including its tuning (arena.selection_cost)."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from dpadmm_lite import accounting as A
from dpadmm_book import arena
from dpadmm_lite.privacy import PrivacyEvent

ORDERS = A.ORDERS


# ---------------------------------------------------------------- the number of runs
def test_tnb_mean_closed_forms_and_pmf():
    # geometric (η = 1): E[K] = 1/γ; logarithmic (η = 0): (1/γ − 1)/log(1/γ), by hand at γ = 0.1
    assert A.truncated_negative_binomial_mean(1.0, 0.25) == pytest.approx(4.0, rel=1e-14)
    assert A.truncated_negative_binomial_mean(0.0, 0.1) == pytest.approx(9.0 / math.log(10.0), rel=1e-14)
    # continuous at η → 0, and equal to Σ k P[K = k] of the pmf of Papernot & Steinke (2022, Sec. 2)
    assert A.truncated_negative_binomial_mean(1e-9, 0.1) == pytest.approx(9.0 / math.log(10.0), rel=1e-7)
    for eta, gamma in ((0.5, 0.2), (2.0, 0.3), (-0.5, 0.1)):
        k = np.arange(1, 4000)
        pmf = np.cumprod((k - 1 + eta) / k * (1 - gamma)) / (gamma ** -eta - 1)  # signs cancel for η < 0
        assert pmf.sum() == pytest.approx(1.0, rel=1e-9)
        assert A.truncated_negative_binomial_mean(eta, gamma) == pytest.approx((k * pmf).sum(), rel=1e-9)


@pytest.mark.parametrize("bad", [{"eta": -1.0, "gamma": 0.5}, {"eta": math.nan, "gamma": 0.5},
                                 {"eta": 1.0, "gamma": 1.0}, {"eta": 1.0, "gamma": 0.0}, {"eta": True, "gamma": 0.5}])
def test_bad_parameters_are_named(bad):
    name = "eta" if bad["gamma"] == 0.5 else "gamma"
    with pytest.raises(ValueError, match=name):
        A.truncated_negative_binomial_mean(**bad)
    with pytest.raises(ValueError, match=name):
        A.selection_rdp(ORDERS / 8, **bad)


# ---------------------------------------------------------------- Papernot & Steinke, Theorem 2
@pytest.mark.parametrize("eta, gamma, hat", [(1.0, 0.25, 4), (0.0, 0.1, 8), (2.0, 0.05, 3)])
def test_selection_rdp_matches_the_theorem_for_gaussian_candidates(eta, gamma, hat):
    """Candidates with RDP ρα (a Gaussian run): min over λ̂ of (1+η)[(1−1/λ̂)ρλ̂ + L/λ̂], L = log(1/γ),
    is (1+η)(2√(ρL) − ρ) at λ̂ = √(L/ρ); ρ is chosen so that λ̂ is one of the orders. At each order the
    bound of any larger order holds too (RDP is non-decreasing in the order): the smallest is kept."""
    L = math.log(1 / gamma)
    rho = L / hat ** 2
    assert hat in ORDERS
    got = A.selection_rdp(rho * ORDERS, eta=eta, gamma=gamma)
    expected = (rho * ORDERS + (1 + eta) * (2 * math.sqrt(rho * L) - rho)
                + math.log(A.truncated_negative_binomial_mean(eta, gamma)) / (ORDERS - 1))
    expected = np.array([expected[i:].min() for i in range(len(ORDERS))])  # ORDERS ascend
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert np.all(np.diff(got) >= 0)


def test_pure_candidates_approach_liu_talwar_three_epsilon():
    """(ε, 0)-DP candidates (RDP ε at every order), geometric K: at λ = λ̂ = the largest order the
    bound is ε + 2(1 − 1/λ)ε + 2 log(1/γ)/λ + log(1/γ)/(λ − 1) → 3ε (Liu & Talwar 2019)."""
    eps, gamma = 0.5, 0.01
    lam = ORDERS[-1]
    got = A.selection_rdp(np.full(ORDERS.shape, eps), eta=1.0, gamma=gamma)
    L = math.log(1 / gamma)
    assert got[-1] == pytest.approx(eps + 2 * (1 - 1 / lam) * eps + 2 * L / lam + L / (lam - 1), rel=1e-12)
    assert 3 * eps < got[-1] < 3 * eps + 0.02


def test_worst_candidate_counts_and_bounds_grow_monotonically():
    low, high = ORDERS / (2 * 4.0 ** 2), ORDERS / (2 * 2.0 ** 2)  # noise multipliers 4 and 2
    both = A.selection_rdp(np.vstack([low, high]), eta=1.0, gamma=0.25)
    np.testing.assert_array_equal(both, A.selection_rdp(high, eta=1.0, gamma=0.25))
    eps = [A.selection_epsilon(ORDERS / (2 * z ** 2), 1e-6, eta=1.0, gamma=0.25) for z in (8.0, 4.0, 2.0, 1.0)]
    assert np.all(np.diff(eps) > 0)  # less noise per candidate: more ε
    runs = [A.selection_epsilon(low, 1e-6, eta=1.0, gamma=g) for g in (0.5, 0.25, 0.1, 0.01)]
    assert np.all(np.diff(runs) > 0)  # more runs expected: more ε
    alone = A.selection_epsilon(low, 1e-6, eta=1.0, gamma=0.25)
    with_final = A.selection_epsilon(low, 1e-6, eta=1.0, gamma=0.25, final_rdp=low)
    assert with_final > alone > A.rdp_to_epsilon(ORDERS, low, 1e-6)


# ---------------------------------------------------------------- composition, for a fixed number of candidates
def _run(z, T=100, n=1000):
    return [PrivacyEvent("gaussian", 2.0 / n, z * 2.0 / n, count=T, neighbours="add_remove")]


def test_tuning_epsilon_is_the_exact_composition_of_all_runs():
    z, T, K, delta = 20.0, 100, 4, 1e-6
    got = A.tuning_epsilon([_run(z, T)] * K, _run(z, T), delta)
    # full-batch Gaussian releases compose exactly (μ-GDP): K + 1 runs = (K + 1)T releases
    assert got == pytest.approx(A.gaussian_epsilon(z, (K + 1) * T, delta), rel=1e-9)
    one = A.ledger_epsilon(_run(z, T), delta)
    grows = [A.tuning_epsilon([_run(z, T)] * k, _run(z, T), delta) for k in range(0, 6)]
    assert grows[0] == pytest.approx(one, rel=1e-12)
    assert np.all(np.diff(grows) > 0)
    assert grows[K] < (K + 1) * one  # better than basic composition
    assert A.tuning_epsilon([_run(z, T), None], _run(z, T), delta) == math.inf  # a run we cannot count
    with pytest.raises(TypeError, match="final_ledger"):
        A.tuning_epsilon([_run(z, T)], [], delta)
    with pytest.raises(TypeError, match="final_ledger"):
        A.tuning_epsilon([_run(z, T)], None, delta)
    with pytest.raises(TypeError, match="candidate_ledgers"):
        A.tuning_epsilon(5, _run(z, T), delta)
    with pytest.raises(TypeError, match=r"candidate_ledgers\[1\]"):
        A.tuning_epsilon([_run(z, T), ["not an event"]], _run(z, T), delta)
    with pytest.raises(ValueError, match="delta"):
        A.tuning_epsilon([_run(z, T)], _run(z, T), 0.0)
    with pytest.raises(ValueError, match="candidate_rdp"):
        A.selection_rdp(ORDERS[:3], eta=1.0, gamma=0.5)
    with pytest.raises(ValueError, match="final_rdp"):
        A.selection_epsilon(ORDERS / 8, 1e-6, eta=1.0, gamma=0.5, final_rdp=[1.0])


# ---------------------------------------------------------------- the arena's report
def _frames(z_candidates, z_final, tuned_at=1.0, epsilon=2.0):
    configs = [json.dumps({"rho": r}) for r in (0.1, 1.0, 10.0)][:len(z_candidates)]
    tuning = pd.DataFrame({"task": "adult", "algorithm": "dp_admm", "config": configs, "epsilon": tuned_at,
                           "final": True, "error": "", "utility": 0.2, "seed": 0,
                           "ledger": [arena.ledger_json(_run(z)) for z in z_candidates]})
    chosen = pd.DataFrame({"task": ["adult"], "algorithm": ["dp_admm"], "epsilon": [epsilon], "tuned_at": [tuned_at],
                           "config": [configs[0]]})
    final = pd.DataFrame({"task": "adult", "algorithm": "dp_admm", "epsilon": epsilon, "final": True, "error": "",
                          "seed": [100, 101], "spent_epsilon": [1.9, 1.95],
                          "ledger": [arena.ledger_json(_run(z)) for z in z_final]})
    return tuning, chosen, final


def test_selection_cost_composes_every_candidate_run_with_the_final_run():
    tuning, chosen, final = _frames([20.0, 25.0, 30.0], [15.0, 12.0])
    cost = arena.selection_cost(tuning, chosen, final)
    assert len(cost) == 1
    row = cost.iloc[0]
    delta = arena.TASKS["adult"].delta
    worst = max(A.tuning_epsilon([_run(z) for z in (20.0, 25.0, 30.0)], _run(zf), delta) for zf in (15.0, 12.0))
    assert row["with_tuning"] == pytest.approx(worst, rel=1e-12)
    assert row["with_tuning"] > A.ledger_epsilon(_run(12.0), delta)  # never below the final run alone
    assert row["final_epsilon"] == 1.95 and row["candidate_runs"] == 3 and row["tuned_at"] == 1.0
    # the random-stopping comparison: geometric K with E[K] = 3 settings, worst candidate (z = 20)
    expected = max(A.selection_epsilon(A.ledger_rdp(_run(20.0)), delta, eta=1.0, gamma=1 / 3,
                                       final_rdp=A.ledger_rdp(_run(zf))) for zf in (15.0, 12.0))
    assert row["random_stopping"] == pytest.approx(expected, rel=1e-12)
    # a failed candidate run cannot be counted: ε including tuning is unknown, reported as inf
    tuning.loc[1, ["error", "ledger"]] = ["RuntimeError: boom", ""]
    assert arena.selection_cost(tuning, chosen, final)["with_tuning"].iloc[0] == math.inf


def test_ledger_json_round_trip():
    ledger = [PrivacyEvent("gaussian", 0.1, 2.0, count=3, sampling_rate=0.5, neighbours="replace_one", note="x"),
              PrivacyEvent("laplace_l2", 0.2, 4.0)]
    back = arena.ledger_from_json(arena.ledger_json(ledger))
    assert [(e.mechanism, e.sensitivity, e.noise, e.count, e.sampling_rate, e.neighbours) for e in back] == \
        [(e.mechanism, e.sensitivity, e.noise, e.count, e.sampling_rate, e.neighbours) for e in ledger]


def test_the_arena_reports_its_tuning_cost_end_to_end(monkeypatch, tmp_path):
    """Real runs (Lasso, fast size, a few iterations): every published result's ε including its
    tuning is at least the final run's and at least each candidate run's; on two processes the
    sweeps give the same rows."""
    monkeypatch.setenv("DPADMM_CACHE", str(tmp_path / "one"))
    plan = arena.candidates(["lasso"], budget=2)
    tuning = arena.tune(plan, epsilons=[1.0], seeds=(0,), size="fast", iterations=5)
    chosen = arena.select(tuning, epsilons=[0.5, 1.0])
    final = arena.final(chosen, seeds=(7, 8), size="fast", iterations=5)
    cost = arena.selection_cost(tuning, chosen, final)
    assert len(cost) == 2 * len(arena.applicable("lasso"))
    assert (cost["with_tuning"] > cost["final_epsilon"]).all()
    assert (cost["with_tuning"] > 1.0).all()  # more than any one candidate run at the tuned ε = 1
    assert (cost["candidate_runs"] >= 1).all()
    several = cost[cost["candidate_runs"] > 1]
    assert len(several) and (several["random_stopping"] > several["final_epsilon"]).all()
    monkeypatch.setenv("DPADMM_CACHE", str(tmp_path / "two"))  # nothing cached: run again, on two processes
    again = arena.final(chosen, seeds=(7, 8), size="fast", iterations=5, n_jobs=2)
    same = [c for c in final.columns if c != "seconds"]  # wall-clock time is measured, not computed
    pd.testing.assert_frame_equal(final[same], again[same])


# ---------------------------------------------------------------- the live panel's ε including tuning
@pytest.mark.parametrize("task", ["lasso", "adult"])
def test_the_live_panels_candidate_ledgers_are_the_tuning_runs(task):
    """The live panel reads each candidate's ledger from its noise shape, without training: it is the ledger
    the chapter's tuning run records (fast edition: every candidate at ε = 0.05, T = 20, the fast split), so
    the ε including tuning it reports is the page's composition of those runs with the live run."""
    from dpadmm_book.live import arena as live_arena

    spec = live_arena.ARENA_TUNING["fast"]
    (tuned_at,) = spec["tune_at"]
    for algorithm in arena.applicable(task)[:4]:
        probed = live_arena.candidate_ledgers("fast", task, algorithm, tuned_at)
        runs = [row for entry in arena.candidates([task], budget=spec["budget"])
                if json.loads(entry)["algorithm"] == algorithm
                for row in arena.evaluate(entry, 0, "validation", spec["size"], spec["iterations"], epsilon=tuned_at,
                                          final_only=True)]
        recorded = [arena.ledger_from_json(r["ledger"]) for r in runs]
        assert len(probed) == len(recorded) == len(arena._configs(algorithm, spec["budget"])) * spec["seeds"]
        final = recorded[0]
        assert A.tuning_epsilon(probed, final, 1e-6) == pytest.approx(A.tuning_epsilon(recorded, final, 1e-6),
                                                                      rel=1e-6)


def test_the_live_panel_reports_the_epsilon_including_tuning():
    """Next to each run's ε, the summary gives its ε including the tuning that chose its setting: the
    candidate runs at the tuned ε nearest the chapter's ε whose choice applies, composed with the live run
    (4 candidates at ε ≈ 0.71 and a run at ε = 1 in the full edition: about 1.85, never the run's 1.0)."""
    from dpadmm_book.live import arena as live_arena

    result = live_arena.arena_field(epsilon=1.0, task="lasso", iterations=3)
    assert set(result["with_tuning"]) == set(result["spent_epsilon"])
    for name, alone in result["spent_epsilon"].items():
        assert result["with_tuning"][name] > alone * 1.5
        assert f"{name} {alone:.4g} / {result['with_tuning'][name]:.3g}" in result["summary"]
    assert "including the tuning" in result["summary"]
    # the two workers' shares carry the ledgers, so that the merged field reports the same
    shares = [row for k in range(2) for row in live_arena.arena_share(k, 2, task="lasso", iterations=3)]
    merged = live_arena.arena_field(epsilon=1.0, task="lasso", iterations=3, precomputed=shares)
    assert merged["with_tuning"] == result["with_tuning"]
    assert "no privacy to count" in live_arena.arena_field(epsilon=math.inf, task="lasso", iterations=3)["summary"]
