"""dl.tune: private hyper-parameter selection whose one (ε, δ) covers the candidate runs, the
selection and the published run (issue 36).

Its accountant is checked against dp-accounting's ``RepeatAndSelectDpEvent`` (Papernot & Steinke
2022, Theorem 2) on a grid of candidate counts, mean repetitions, η and budgets, and the fixed set
against the exact composition (μ-GDP of full-batch Gaussian runs). End to end: every noise the
tuner's runs draw is in a ledger it counted, and the total it reports is what those ledgers spend.
"""

import math

import numpy as np
import pytest
from dp_accounting import dp_event as dpe
from dp_accounting.rdp import rdp_privacy_accountant as dp_rdp

import dpadmm_lite as dl
from dpadmm_lite import accounting as A
from dpadmm_lite import audit, tuning

DELTA = 1e-5


@pytest.fixture(scope="module")
def data():
    X, y, _ = dl.datasets.make_classification(1400, 6, seed=0)
    problem = dl.problems.logistic(X[:800], y[:800], 1e-3, X_test=X[1100:], y_test=y[1100:])
    return problem, (X[800:1100], y[800:1100])


RHOS = [{"rho": r} for r in (0.1, 0.3, 1.0, 3.0, 10.0, 30.0)]


# ---------------------------------------------------------------- the number of runs
@pytest.mark.parametrize("eta", [-0.5, 0.0, 0.5, 1.0, 3.0])
def test_repetitions_follow_the_truncated_negative_binomial(eta):
    gamma = A.truncated_negative_binomial_gamma(eta, 5.0)
    assert A.truncated_negative_binomial_mean(eta, gamma) == pytest.approx(5.0, rel=1e-10)
    k = np.arange(1, 20_000)
    pmf = A.truncated_negative_binomial_pmf(eta, gamma, k)
    assert pmf.sum() == pytest.approx(1.0, rel=1e-9) and (k * pmf).sum() == pytest.approx(5.0, rel=1e-8)
    draws = A.sample_repetitions(eta, gamma, np.random.default_rng(1), size=200_000)
    assert draws.min() >= 1
    assert draws.mean() == pytest.approx(5.0, rel=0.02)
    assert (draws == 1).mean() == pytest.approx(pmf[0], abs=0.005)
    # the chance a given one of m settings is never drawn: E[(1 − 1/m)^K], against the pmf and the draws
    for m in (1, 3, 10):
        p = A.never_tried_probability(eta, gamma, m)
        assert p == pytest.approx((pmf * (1 - 1 / m) ** k).sum(), rel=1e-9, abs=1e-15)
    picks = np.random.default_rng(2).random(20_000)
    small = draws[:20_000]
    assert np.mean((1 - 1 / 4) ** small) == pytest.approx(A.never_tried_probability(eta, gamma, 4), abs=0.01)
    del picks


def test_geometric_gamma_is_one_over_the_mean():
    assert A.truncated_negative_binomial_gamma(1.0, 8.0) == 0.125
    with pytest.raises(ValueError, match="mean_repetitions"):
        A.truncated_negative_binomial_gamma(1.0, 1.0)
    with pytest.raises(ValueError, match="eta"):
        A.truncated_negative_binomial_gamma(-1.0, 3.0)


# ---------------------------------------------------------------- against dp-accounting
def _dp_accounting_epsilon(event, mean, eta, orders):
    acc = dp_rdp.RdpAccountant(orders=list(orders))
    acc.compose(dpe.RepeatAndSelectDpEvent(event, mean, eta))
    return acc.get_epsilon(DELTA)


def _theirs_formula(curve, orders, mean, eta):
    """dp-accounting's constant: λ̂ over the orders only (no λ̂ = 1)."""
    gamma = A.truncated_negative_binomial_gamma(eta, mean)
    return (1 + eta) * np.min((1 - 1 / orders) * curve - math.log(gamma) / orders)


@pytest.mark.parametrize("z, T", [(2.0, 1), (8.0, 20), (30.0, 100), (200.0, 100)])
@pytest.mark.parametrize("mean", [2.0, 5.0, 20.0])
@pytest.mark.parametrize("eta", [0.0, 0.5, 1.0, 2.0])
def test_random_stopping_is_never_below_dp_accounting_unless_the_theorem_allows(z, T, mean, eta):
    """Gaussian candidates (T releases at noise multiplier z): the same integer orders for both. Ours
    may only be lower where its λ̂ = 1 term, (1 + η) log(1/γ), beats every order's — Theorem 2 holds
    for every λ̂ ∈ [1, ∞), dp-accounting only tries its orders."""
    orders = np.array([o for o in A.ORDERS if o == int(o)])
    curve = T * orders / (2 * z * z)
    gamma = A.truncated_negative_binomial_gamma(eta, mean)
    ours = A.selection_epsilon(curve, DELTA, eta=eta, gamma=gamma, orders=orders)
    theirs = _dp_accounting_epsilon(dpe.SelfComposedDpEvent(dpe.GaussianDpEvent(z), T), mean, eta, orders)
    if ours < theirs * (1 - 1e-9):
        hat_one = (1 + eta) * math.log(1 / gamma)
        assert hat_one < _theirs_formula(curve, orders, mean, eta)
        # without λ̂ = 1 (dp-accounting's constant), ours is theirs
        without = A.rdp_to_epsilon(orders, np.minimum.accumulate(
            (curve + _theirs_formula(curve, orders, mean, eta) + math.log(mean) / (orders - 1))[::-1])[::-1], DELTA)
        assert without == pytest.approx(theirs, rel=1e-9)
    else:
        assert ours == pytest.approx(theirs, rel=1e-9)


@pytest.mark.parametrize("z, q, T", [(1.0, 0.01, 100), (0.8, 0.05, 50), (2.0, 0.2, 30)])
@pytest.mark.parametrize("mean, eta", [(4.0, 1.0), (10.0, 0.0), (3.0, 2.0)])
def test_sampled_candidates_agree_on_integer_orders_and_fractional_ones_are_tighter(z, q, T, mean, eta):
    """Poisson-sampled Gaussian candidates. On integer orders the two RDP curves agree (1e-9), so the
    selection's ε agrees (where λ̂ = 1 does not win). On our full grid, fractional orders included, ours
    may be lower: dp-accounting's fractional-order RDP of the sampled Gaussian is a loose series bound,
    ours a direct integral (checked against scipy's quadrature in
    tests/test_accounting.py::test_sampled_rdp_matches_dp_accounting_at_integer_orders_and_bounds_it_at_fractional)."""
    event = dpe.SelfComposedDpEvent(dpe.PoissonSampledDpEvent(q, dpe.GaussianDpEvent(z)), T)
    gamma = A.truncated_negative_binomial_gamma(eta, mean)
    integer = np.array([o for o in A.ORDERS if o == int(o)])
    ours_int = A.selection_epsilon(T * A.sampled_gaussian_rdp(z, q, integer), DELTA, eta=eta, gamma=gamma,
                                   orders=integer)
    theirs_int = _dp_accounting_epsilon(event, mean, eta, integer)
    assert ours_int >= theirs_int * (1 - 1e-3) or (1 + eta) * math.log(1 / gamma) < _theirs_formula(
        T * A.sampled_gaussian_rdp(z, q, integer), integer, mean, eta)
    full = A.ORDERS
    ours_full = A.selection_epsilon(T * A.sampled_gaussian_rdp(z, q, full), DELTA, eta=eta, gamma=gamma)
    theirs_full = _dp_accounting_epsilon(event, mean, eta, full)
    ours_curve = T * A.sampled_gaussian_rdp(z, q, full)
    theirs_curve = T * dp_rdp._compute_rdp_poisson_subsampled_gaussian(q, z, full)
    assert np.all(ours_curve <= theirs_curve * (1 + 1e-7))  # equal on integers, tighter between them
    if ours_full < theirs_full * (1 - 1e-3):  # where we are lower, our curve is: never the selection's formula
        assert np.any(ours_curve < theirs_curve * (1 - 1e-6)) or (1 + eta) * math.log(1 / gamma) < \
            _theirs_formula(ours_curve, full, mean, eta)


@pytest.mark.parametrize("n_candidates", [2, 6])
@pytest.mark.parametrize("mean, eta", [(3.0, 1.0), (8.0, 0.0), (4.0, 2.0), (6.0, 0.25)])  # dp-accounting: η ≥ 0
@pytest.mark.parametrize("epsilon", [0.3, 2.0])
def test_the_tuners_total_is_not_below_dp_accountings_for_its_own_runs(data, n_candidates, mean, eta, epsilon):
    """dl.tune with random stopping on DP-ADMM (full-batch Gaussian releases): dp-accounting's
    RepeatAndSelect of the same runs (their noise multiplier and count) gives no larger ε — up to
    the λ̂ = 1 order dp-accounting does not try — and the tuner meets the budget, spending most of it."""
    problem, val = data
    r = dl.tune("dp_admm", problem, RHOS[:n_candidates], epsilon=epsilon, delta=DELTA, validation=val,
                method="random_stopping", mean_repetitions=mean, eta=eta, iterations=15, seed=3)
    assert epsilon * 0.99 <= r.privacy.epsilon <= epsilon
    (event,) = {(e.noise_multiplier, e.count) for e in r.trace.ledger}
    z, T = event
    orders = np.array([o for o in A.ORDERS if o == int(o)])
    theirs = _dp_accounting_epsilon(dpe.SelfComposedDpEvent(dpe.GaussianDpEvent(z), T), mean, eta, orders)
    if r.privacy.epsilon < theirs * (1 - 2e-3):
        gamma = A.truncated_negative_binomial_gamma(eta, mean)
        assert (1 + eta) * math.log(1 / gamma) < _theirs_formula(T * orders / (2 * z * z), orders, mean, eta)


@pytest.mark.parametrize("n_candidates, refit", [(1, False), (3, False), (3, True), (6, True)])
def test_the_fixed_set_is_the_exact_composition(data, n_candidates, refit):
    """Every candidate once (and the final run): K full-batch Gaussian runs compose exactly to
    μ = √(Σ μᵢ²) (μ-GDP); the tuner's ε is that exact value and meets the budget."""
    problem, val = data
    r = dl.tune("dp_admm", problem, RHOS[:n_candidates], epsilon=1.0, delta=DELTA, validation=val, method="fixed",
                refit=refit, iterations=15, seed=0)
    assert r.diagnostics().repetitions == n_candidates and all(not math.isnan(s) for s in r.diagnostics().scores)
    ledgers = [list(r.trace.ledger)] * (n_candidates + refit)  # every run draws the same noise shape
    mu = math.sqrt(sum(sum(e.count / e.noise_multiplier ** 2 for e in ledger) for ledger in ledgers))
    assert r.privacy.epsilon == pytest.approx(A.gdp_epsilon(mu, DELTA), rel=1e-6)
    assert 0.99 <= r.privacy.epsilon <= 1.0
    assert r.run_epsilon < 1.0 / math.sqrt(n_candidates + refit) * 1.3  # each run gets a share of the budget


# ---------------------------------------------------------------- end to end
@pytest.mark.parametrize("method", ["fixed", "random_stopping"])
def test_every_noise_drawn_is_in_a_ledger_the_tuner_counted(data, method):
    """The tuner spends what it reports: the Gaussian draws of all its runs are exactly the releases
    of the ledgers it composed (count and σ), and the total of those ledgers is its ε."""
    problem, val = data
    with audit.intercept_noise() as draws:
        r = dl.tune("dp_admm", problem, RHOS[:4], epsilon=1.0, delta=DELTA, validation=val, method=method,
                    refit=True, iterations=10, seed=5)  # random stopping: mean 4 (the number of candidates)
    runs = r.diagnostics().repetitions + 1
    ledger = list(r.trace.ledger)
    per_run = sum(e.count for e in ledger)
    sigmas = np.concatenate([np.ravel(d.noise) for d in draws])  # one σ per drawn vector
    assert {d.mechanism for d in draws} == {"gaussian"} and len(draws) == runs
    assert sigmas.size == runs * per_run
    np.testing.assert_allclose(sigmas, ledger[0].noise, rtol=1e-12)
    if method == "fixed":
        assert r.privacy.epsilon == pytest.approx(A.ledger_epsilon(ledger * runs, DELTA), rel=1e-12)
    else:
        curve = A.ledger_rdp(ledger)
        assert r.privacy.epsilon == pytest.approx(
            A.selection_epsilon(curve, DELTA, eta=1.0, gamma=0.25, final_rdp=curve), rel=1e-12)
    assert r.privacy.epsilon <= 1.0


def test_candidates_with_different_noise_shapes_charge_the_worst(data):
    """Settings with different iteration counts record different ledgers: random stopping charges the
    largest RDP curve whether or not its setting was drawn."""
    problem, val = data
    cands = [{"rho": 1.0, "iterations": 5}, {"rho": 1.0, "iterations": 40}]
    r = dl.tune("dp_admm", problem, cands, epsilon=1.0, delta=DELTA, validation=val, mean_repetitions=3.0, seed=0)
    units = [tuning._scaled(tuning._unit_ledger("dp_admm", problem, c, DELTA), r.run_epsilon, DELTA) for c in cands]
    curves = np.array([A.ledger_rdp(list(u)) for u in units])
    assert r.privacy.epsilon == pytest.approx(A.selection_epsilon(curves, DELTA, eta=1.0, gamma=1 / 3), rel=1e-12)


def test_scores_are_validation_scores_and_the_best_is_chosen(data):
    problem, val = data
    r = dl.tune("dp_admm", problem, RHOS[:4], epsilon=2.0, delta=DELTA, validation=val, method="fixed",
                iterations=15, seed=1)
    scores = r.diagnostics().scores
    assert r.chosen == RHOS[r.chosen_index] and scores[r.chosen_index] == min(scores) == r.score
    assert r.score == pytest.approx(tuning.validation_score(problem, r.trace.model, *val))
    again = dl.tune("dp_admm", problem, RHOS[:4], epsilon=2.0, delta=DELTA, validation=val, method="fixed",
                    iterations=15, seed=1)
    assert again.diagnostics().scores == scores and np.array_equal(again.trace.model, r.trace.model)  # seeded


def test_without_noise_it_is_the_non_private_choice(data):
    problem, val = data
    r = dl.tune("dp_admm", problem, RHOS[:3], epsilon=math.inf, delta=DELTA, validation=val, method="fixed",
                iterations=15, seed=0)
    assert math.isinf(r.privacy.epsilon) and math.isinf(r.run_epsilon)
    plain = [tuning.validation_score(problem, dl.run("dp_admm", problem, epsilon=math.inf, iterations=15,
                                                     **c).model, *val) for c in RHOS[:3]]
    assert list(r.diagnostics().scores) == pytest.approx(plain)


def test_lasso_candidates_are_scored_by_the_validation_objective():
    X, y, _ = dl.datasets.make_lasso(600, 8, seed=0)
    problem = dl.problems.lasso(X[:400], y[:400], 1e-2)
    r = dl.tune("private_admm", problem, [{"rho": 0.1}, {"rho": 1.0}], epsilon=2.0, delta=DELTA, clip=1.0,
                validation=(X[400:], y[400:]), iterations=10, seed=0, mean_repetitions=3.0)
    model = r.trace.model
    expected = problem.data_loss(model, X[400:], y[400:]) + problem.lam * np.abs(model).sum()
    assert r.score == pytest.approx(float(expected))
    assert r.privacy.epsilon <= 2.0


# ---------------------------------------------------------------- bad input
def _tune(data, **overrides):
    problem, val = data
    kwargs = dict(epsilon=1.0, delta=DELTA, validation=val, iterations=5, seed=0)
    kwargs.update(overrides)
    candidates = kwargs.pop("candidates", RHOS[:2])
    return dl.tune(kwargs.pop("algorithm", "dp_admm"), problem, candidates, **kwargs)


@pytest.mark.parametrize("overrides, error, name", [
    ({"candidates": []}, ValueError, "candidates"),
    ({"candidates": [{"rho": 1.0}, "rho"]}, TypeError, r"candidates\[1\]"),
    ({"candidates": [{"rho": 1.0}, {"rho": -1.0}]}, ValueError, r"candidates\[1\] = \{'rho': -1.0\}.*rho"),
    ({"candidates": [{"rho": 1.0, "epsilon": 2.0}]}, ValueError, "epsilon"),
    ({"eta": -1.0}, ValueError, "eta"),
    ({"eta": math.inf}, ValueError, "eta"),
    ({"mean_repetitions": 0.5}, ValueError, "mean_repetitions"),
    ({"mean_repetitions": 1.0}, ValueError, "mean_repetitions"),
    ({"method": "fixed", "mean_repetitions": 3.0}, ValueError, "mean_repetitions"),
    ({"method": "grid"}, ValueError, "method"),
    ({"epsilon": 0.0}, ValueError, "epsilon"),
    ({"delta": 1.0}, ValueError, "delta"),
    ({"validation": None}, TypeError, "validation"),
    ({"algorithm": "admm_linearized"}, ValueError, "algorithm"),
])
def test_bad_input_names_the_parameter(data, overrides, error, name):
    with pytest.raises(error, match=name):
        _tune(data, **overrides)


def test_the_test_split_is_refused_as_validation(data):
    problem, _ = data
    with pytest.raises(ValueError, match="validation must not hold rows of the problem's test split"):
        _tune(data, validation=(problem.X_test, problem.y_test))


def test_a_candidate_that_raises_is_named(data):
    with pytest.raises(TypeError, match=r"candidates\[1\] = \{.rho.: 1.0, .unknown_option.: 3\}"):
        _tune(data, candidates=[{"rho": 1.0}, {"rho": 1.0, "unknown_option": 3}])


@pytest.mark.parametrize("bad", [math.nan, math.inf, "low"])
def test_a_non_finite_score_is_named(data, bad):
    with pytest.raises(ValueError, match=r"validation score of candidates\[0\]"):
        _tune(data, method="fixed", score=lambda model, X, y: bad)


# ---------------------------------------------------------------- the privacy chapter's live panel
def test_the_tuning_panel_is_registered_and_imports_only_what_the_browser_has():
    import json
    import subprocess
    import sys
    from pathlib import Path

    from dpadmm_book import live

    root = Path(__file__).resolve().parents[1]
    assert live.PANELS["tuning"]["page"] == "book/privacy" and live.PANELS["tuning"]["function"] == "tuning_cost"
    code = ("import sys; from dpadmm_book import live; live.run_panel('tuning', {}); "
            "print(sorted(m for m in ('pandas', 'sklearn', 'scipy.stats', 'scipy.optimize', 'altair', 'ipywidgets') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert out.stdout.strip() == "[]"
    # the chapter's JupyterLab panel and the sweep of the static chart both call the live function, and the
    # static chart carries the title the site looks for
    cells = ["".join(c["source"]) for c in json.loads((root / "book" / "privacy.ipynb").read_text())["cells"]
             if c["cell_type"] == "code"]
    assert [s for s in cells if "book.widgets.live(" in s and "live.tuning.tuning_cost(" in s]
    sweep = [s for s in cells if "book.sweep.grid(" in s and "live.tuning.tuning_cost(" in s]
    assert sweep and f'title="{live.PANELS["tuning"]["chart"]}"' in sweep[0]


def test_the_tuning_panels_controls_start_at_its_defaults_and_bad_values_are_named():
    import inspect

    from dpadmm_book import live

    parameters = inspect.signature(live.tuning.tuning_cost).parameters
    for control in live.PANELS["tuning"]["controls"]:
        assert parameters[control["name"]].default == control["value"]
        if "min" in control:
            assert control["min"] <= control["value"] <= control["max"]
    for values, name in (({"epsilon": 0.0}, "epsilon"), ({"mean_repetitions": 1.0}, "mean_repetitions"),
                         ({"eta": -1}, "eta"), ({"candidates": 0}, "candidates")):
        with pytest.raises(ValueError, match=name):
            live.run_panel("tuning", values)
    with pytest.raises(ValueError, match="delta"):
        live.tuning.tuning_cost(delta=0.5)
    # one control of each name on the page (the site's control ids are "dpadmm-live-" + name)
    on_page = [c["name"] for p in live.PANELS.values() if p["page"] == "book/privacy" for c in p["controls"]]
    assert len(on_page) == len(set(on_page))


def test_the_tuning_panels_rows_are_the_accountants():
    """K candidates + the final run, each calibrated to ε: μ√(K+1) composed exactly; random stopping is
    selection_epsilon of the run's RDP with the final run's added, flat in K; the chance of never trying a
    setting is the pmf's E[(1 − 1/K)^K]; at ε = ∞ nothing is counted."""
    from dpadmm_book import live

    result = live.run_panel("tuning", {"epsilon": 1.0, "mean_repetitions": 4.0, "eta": 1, "candidates": 5})
    rows = result["rows"]
    assert {r["candidates"] for r in rows} == set(live.tuning.CANDIDATES) | {5}
    mu = A._gdp._gdp_mu_for(1.0, 1e-6)
    assert A.gdp_epsilon(mu, 1e-6) == pytest.approx(1.0, rel=1e-9)
    for r in rows:
        if r["what"] == live.tuning.SERIES[1]:
            assert r["epsilon"] == pytest.approx(A.gdp_epsilon(mu * math.sqrt(r["candidates"] + 1), 1e-6), rel=1e-12)
    stopping = {r["epsilon"] for r in rows if r["what"] == live.tuning.SERIES[2]}
    assert len(stopping) == 1
    curve = A.ORDERS * mu * mu / 2
    assert stopping.pop() == pytest.approx(A.selection_epsilon(curve, 1e-6, eta=1.0, gamma=0.25, final_rdp=curve))
    at5 = next(r for r in rows if r["candidates"] == 5)
    k = np.arange(1, 5000)
    assert at5["never_tried"] == pytest.approx((A.truncated_negative_binomial_pmf(1.0, 0.25, k) * 0.8 ** k).sum())
    assert "K = 5" in result["summary"] and "probability" in result["summary"]
    free = live.run_panel("tuning", {"epsilon": math.inf})
    assert free["rows"] and "ε=∞" in free["summary"]


def test_the_static_grid_is_the_live_rows():
    from dpadmm_book import live

    grid = live.tuning.tuning_grid([1.0], [4.0], [1.0])
    assert grid == live.tuning.tuning_cost(epsilon=1.0, mean_repetitions=4.0, eta=1.0)["rows"]


# ---------------------------------------------------------------- every private algorithm (tests/privacy_harness.py)
@pytest.mark.parametrize("name", sorted(dl.algorithm_names().private))
@pytest.mark.parametrize("method", ["fixed", "random_stopping"])
def test_the_tuner_spends_what_it_reports_for_every_private_algorithm(name, method):
    """The tuner's runs are plain runs of the algorithm (whose noise, sensitivity and audit the privacy tests
    check through tests/privacy_harness.py): each is bit-for-bit ``dl.run`` at the tuner's ε₀ and seed, with the
    same ledger and the same noise draws; the total it reports is the composition of those ledgers (fixed) or the
    selection bound of its candidates' (random stopping), within the budget."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import privacy_harness as H

    result, draws = H.tune(name, method=method, seed=2)
    problem, options, _, _ = H.setting(name)
    assert result.privacy.epsilon <= 1.0 and result.privacy.covered
    plain_draws = 0
    ledgers = []
    for run in result.diagnostics().runs:
        with audit.intercept_noise() as plain:
            trace = dl.run(name, problem, epsilon=result.run_epsilon, delta=DELTA, seed=run["seed"], **options)
        plain_draws += len(plain)
        ledgers.append(list(trace.ledger))
        assert trace.privacy.epsilon == pytest.approx(run["epsilon"], rel=1e-12)
    assert len(draws) == plain_draws  # no noise drawn that no ledger counts
    if method == "fixed":
        assert result.privacy.epsilon == pytest.approx(A.ledger_epsilon([e for l in ledgers for e in l], DELTA),
                                                       rel=1e-9)
    else:
        curve = A.ledger_rdp(ledgers[0])
        assert result.privacy.epsilon >= A.selection_epsilon(curve, DELTA, eta=1.0, gamma=1 / 2.5) * (1 - 1e-9)
    assert result.privacy.epsilon >= 0.98


def test_a_candidate_that_raises_in_its_run_is_named(data, monkeypatch):
    """A candidate whose run fails after its noise shape was read (e.g. it diverges) stops the tuning with an
    error naming it, before anything is published."""
    real = tuning.registry.run

    def failing(name, problem, *, epsilon, **kwargs):
        if kwargs.get("rho") == 0.3 and epsilon != 1.0:  # the probe runs at ε = 1.0; the real run does not
            raise FloatingPointError("overflow in the dual update")
        return real(name, problem, epsilon=epsilon, **kwargs)

    monkeypatch.setattr(tuning.registry, "run", failing)
    with pytest.raises(RuntimeError, match=r"candidates\[1\] = \{'rho': 0.3\} failed: FloatingPointError"):
        _tune(data, method="fixed", candidates=RHOS[:3], epsilon=2.0)


def test_the_default_score_is_vectorised_over_models(data):
    problem, (X_val, y_val) = data
    models = np.random.default_rng(0).standard_normal((5, problem.d))
    together = tuning.validation_score(problem, models, X_val, y_val)
    assert together.shape == (5,)
    assert list(together) == [tuning.validation_score(problem, m, X_val, y_val) for m in models]
