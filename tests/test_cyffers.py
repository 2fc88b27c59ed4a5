"""Private ADMM as a noisy fixed-point iteration (Cyffers et al. 2023): dpadmm_lite/algorithms/cyffers2023.py.

What is tested, and the exact property each test checks:

* the vectorised engine equals a slow per-user loop written from the paper's Algorithms 2, 3, 4
  and the proximal DP-SGD baseline (same random streams, noise on);
* a batch of runs (:func:`fixed_point.run_many`) gives the runs one by one;
* noise off, centralized ADMM reaches scikit-learn's Lasso solution;
* federated with q = 1 is *bit for bit* centralized (same seed); the walk on the complete graph
  is centralized *in expectation*: from any state, one walk step at user i changes block i
  exactly as the centralized round does and no other block, so with the visited user uniform
  (the walk's stationary law on the complete graph, checked too) ``E[u_{k+1} | u_k] = u_k +
  (T(u_k) − u_k)/n``, T the centralized operator — checked exactly by averaging over all i;
* ε: the ledger matches dp-accounting (exact Gaussian composition; federated: one release per
  participation of the most exposed user, counted from the run's own schedule; DP-SGD:
  Poisson-subsampled Gaussian, by default the exact replace-one pair against dp-accounting's
  REPLACE_ONE, and on request add/remove-one with the doubled bound, which upper-bounds it); the
  paper's statements (closed forms,
  validity conditions, calibration="paper"); the federated and DP-SGD ε against an exact
  computation for n ≤ 3 users are in ``tests/test_federated_privacy.py``;
* privacy bugs: the noise actually added (same seed, noise on/off) has the ledger's σ; replacing
  one record by worst-case candidates moves a u-block update by at most the ledger's Δ;
* bad inputs raise a ValueError naming the parameter; extreme slider values stay finite;
* the exercise checks accept the reference answers and name typical mistakes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpadmm_lite as dl
from dpadmm_lite import accounting, datasets, problems, topology
from dpadmm_lite.algorithms import cyffers2023 as fp

from algorithm_cases import check_record_every

ADMM = ("private_admm", "private_admm_federated", "private_admm_walk")
TWINS = {"private_admm": "admm_consensus", "private_admm_federated": "admm_federated",
         "private_admm_walk": "admm_walk", "dp_prox_sgd": "prox_sgd"}


def lasso(n=60, p=5, lam=1e-2, seed=0):
    X, y, _ = datasets.make_lasso(n + 40, p, seed=seed)
    return problems.lasso(X[:n], y[:n], lam, X_test=X[n:], y_test=y[n:])


def ridge(n=60, p=5, lam=1e-2, seed=0):
    X, y, _ = datasets.make_lasso(n, p, seed=seed)
    return problems.Problem(X, y, lam, "squared", "l2", name="ridge")


def logistic(n=60, d=4, penalty="l1", seed=0):
    X, y, _ = datasets.make_classification(n + 40, d, seed=seed)
    return problems.logistic(X[:n], y[:n], 1e-2, penalty, X_test=X[n:], y_test=y[n:])


OPTIONS = dict(gamma=40.0, relaxation=0.6, clip=0.3)


# ====================================================================== the slow reference: the paper, user by user
def prox_record(problem, i, w, step):
    """prox_{step·ℓ_i}(w) by a generic solver (Newton on the margin for the logistic loss)."""
    a, b = problem.X[i], problem.y[i]
    if problem.loss == "squared":  # (a aᵀ + I/s)⁻¹ (a b + w/s), solved densely
        return np.linalg.solve(np.outer(a, a) + np.eye(len(w)) / step, a * b + w / step)
    t = a @ w
    for _ in range(100):  # t + s‖a‖² ℓ'(t) = a·w
        sig = 1 / (1 + np.exp(b * t))
        phi = t - a @ w - step * (a @ a) * b * sig
        t -= phi / (1 + step * (a @ a) * sig * (1 - sig))
    return w + step * b / (1 + np.exp(b * t)) * a


def prox_r(problem, v, step):
    t = step * problem.lam
    return np.sign(v) * np.maximum(np.abs(v) - t, 0) if problem.regularizer == "l1" else v / (1 + t)


def clip(v, C):
    norm = np.linalg.norm(v)
    return v if norm <= C else v * (C / norm)


def poisson_masks(sample_rng, q, n, K):
    """Who takes part in each of K rounds, the way the library's schedule draws it, one trial at a time:
    the (round, user) pairs in order are Bernoulli(q) trials whose gaps are Geometric(q), drawn in blocks."""
    masks = np.zeros(K * n, dtype=bool)
    position = -1
    while position < K * n:
        for gap in sample_rng.geometric(q, fp._GAP_BLOCK):
            position += int(gap)
            if position < K * n:
                masks[position] = True
    return masks.reshape(K, n)


def slow_admm(problem, *, mode, K, seed, gamma, relaxation, clip_C, sigma, q=None, path=None, diagnostics=None):
    """Algorithms 2, 3 and 4 with a Python loop over users; the engine's random streams. ``diagnostics``
    (a list) receives per round the RMS of ‖x_i − z‖ over the users that took part and the share clipped."""
    n, p = problem.X.shape
    sample_rng, noise_rng = np.random.default_rng(seed).spawn(2)
    masks = poisson_masks(sample_rng, q, n, K) if mode == "federated" else None
    u = np.zeros((n, p))
    ubar = np.zeros(p)
    z = prox_r(problem, ubar, gamma / n)
    zs = []
    for k in range(K):
        if mode == "centralized":
            users = list(range(n))
        elif mode == "federated":
            users = list(np.flatnonzero(masks[k]))
        else:
            users = [path[k]]
        xi = noise_rng.standard_normal((len(users), p)) if sigma > 0 else np.zeros((len(users), p))
        distances = []
        for row, i in enumerate(users):
            x = prox_record(problem, i, 2 * z - u[i], gamma / n)  # (6)
            distances.append(np.linalg.norm(x - z))
            du = 2 * relaxation * (clip(x - z, clip_C) + 0.5 * sigma * xi[row])  # (7)
            u[i] += du
            ubar += du / n  # the server's running mean
        z = prox_r(problem, ubar, gamma / n)  # (5), for the next round
        zs.append(z.copy())
        if diagnostics is not None and distances:
            diagnostics.append((math.sqrt(np.mean(np.square(distances))), np.mean(np.array(distances) > clip_C)))
    return np.array(zs)


def slow_prox_sgd(problem, *, K, seed, step, clip_C, sigma, q):
    n, p = problem.X.shape
    sample_rng, noise_rng = np.random.default_rng(seed).spawn(2)
    masks = poisson_masks(sample_rng, q, n, K)
    xi = noise_rng.standard_normal((K, p)) if sigma > 0 else np.zeros((K, p))
    z = np.zeros(p)
    zs = []
    for k in range(K):
        g = np.zeros(p)
        for i in np.flatnonzero(masks[k]):
            a, b = problem.X[i], problem.y[i]
            slope = a @ z - b if problem.loss == "squared" else -b / (1 + np.exp(b * (a @ z)))
            g += clip(slope * a, clip_C)
        g = (g + sigma * xi[k]) / (q * n)
        z = prox_r(problem, z - step * g, step)
        zs.append(z)
    return np.array(zs)


@pytest.mark.parametrize("make", [lasso, lambda: logistic(penalty="l1"), lambda: logistic(penalty="l2")],
                         ids=["lasso", "logistic-l1", "logistic-l2"])
@pytest.mark.parametrize("name, mode", [("private_admm", "centralized"), ("private_admm_federated", "federated"),
                                        ("private_admm_walk", "walk")])
def test_vectorised_updates_equal_the_per_user_loop(make, name, mode):
    problem = make()
    extra = {"sampling_rate": 0.3} if mode == "federated" else {}
    K = 40 if mode == "walk" else 8
    trace = dl.run(name, problem, epsilon=2.0, delta=1e-5, iterations=K, seed=7, **OPTIONS, **extra)
    path = fp._walk_paths(None, problem.n, K, [7])[0] if mode == "walk" else None
    reference = slow_admm(problem, mode=mode, K=K, seed=7, gamma=OPTIONS["gamma"], relaxation=OPTIONS["relaxation"],
                          clip_C=OPTIONS["clip"], sigma=trace.noise["sigma"], q=extra.get("sampling_rate"), path=path)
    np.testing.assert_allclose(trace.objective, problem.objective(reference), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(trace.model, reference[-1], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name, mode", [("private_admm", "centralized"), ("private_admm_federated", "federated")])
def test_clipped_share_and_distance_per_round_are_the_per_user_loops(name, mode):
    """The chapter's diagnostics: per round, the share of the users taking part whose x_i − z is clipped and
    the RMS of ‖x_i − z‖ over them (``metrics["clipped_fraction"]``, ``consensus_violation``)."""
    problem = lasso()
    extra = {"sampling_rate": 0.5} if mode == "federated" else {}
    options = {**OPTIONS, "clip": 0.05}  # some users clipped, some not
    trace = dl.run(name, problem, epsilon=2.0, delta=1e-5, iterations=10, seed=4, **options, **extra)
    rows = []
    slow_admm(problem, mode=mode, K=10, seed=4, gamma=options["gamma"], relaxation=options["relaxation"],
              clip_C=options["clip"], sigma=trace.noise["sigma"], q=extra.get("sampling_rate"), diagnostics=rows)
    rms, share = np.array(rows).T
    assert 0 < share.min() and share.max() == 1  # the check sees both cases
    np.testing.assert_allclose(trace.consensus_violation, rms, rtol=1e-9)
    np.testing.assert_array_equal(trace.metrics["clipped_fraction"], share)


@pytest.mark.parametrize("make", [lasso, logistic], ids=["lasso", "logistic"])
def test_dp_prox_sgd_equals_the_per_record_loop(make):
    problem = make()
    trace = dl.run("dp_prox_sgd", problem, epsilon=2.0, delta=1e-5, iterations=12, seed=3, step=0.7, clip=0.4,
                   sampling_rate=0.25)
    reference = slow_prox_sgd(problem, K=12, seed=3, step=0.7, clip_C=0.4, sigma=trace.noise["sigma"], q=0.25)
    np.testing.assert_allclose(trace.model, reference[-1], rtol=1e-9, atol=1e-12)


def test_walk_path_on_the_complete_graph_is_the_same_as_on_its_topology():
    problem = lasso(n=30)
    fast = dl.run("private_admm_walk", problem, epsilon=1.0, delta=1e-5, iterations=50, seed=2, **OPTIONS)
    slow = dl.run("private_admm_walk", problem, epsilon=1.0, delta=1e-5, iterations=50, seed=2,
                  topology=topology.make("complete", 30), **OPTIONS)
    np.testing.assert_array_equal(fast.objective, slow.objective)


def test_a_batch_of_runs_gives_the_runs_one_by_one():
    problem = lasso()
    runs = [dict(epsilon=e, seed=s, **OPTIONS, sampling_rate=0.4) for e in (0.5, 3.0) for s in (0, 5)]
    runs.append(dict(epsilon=math.inf, seed=1, gamma=10.0, relaxation=1.0, clip=1.0, sampling_rate=0.2))
    batch = fp.run_many("private_admm_federated", problem, runs, delta=1e-5, iterations=15)
    models, info = fp.released_models("private_admm_federated", problem, runs, delta=1e-5, iterations=15)
    for r, trace, model, meta in zip(runs, batch, models, info):
        single = dl.run("private_admm_federated", problem, delta=1e-5, iterations=15, **r)
        np.testing.assert_array_equal(single.objective, trace.objective)
        np.testing.assert_array_equal(single.model, model)
        assert meta["epsilon_unified"] == pytest.approx(single.privacy.epsilon)
    sgd_runs = [dict(epsilon=e, seed=s, step=0.5, clip=0.3) for e in (0.5, math.inf) for s in (0, 1)]
    for r, trace in zip(sgd_runs, fp.run_many("dp_prox_sgd", problem, sgd_runs, delta=1e-5, iterations=10)):
        np.testing.assert_array_equal(dl.run("dp_prox_sgd", problem, delta=1e-5, iterations=10, **r).model, trace.model)


@pytest.mark.parametrize("name, extra", [("private_admm_walk", {}), ("private_admm", {}),
                                         ("dp_prox_sgd", {"step": 0.5, "clip": 0.3})])
def test_recording_every_kth_round_keeps_the_run_and_scores_those_rounds(name, extra):
    problem = lasso(n=30)
    options = {**(OPTIONS if not extra else {}), **extra}
    check_record_every(lambda k: dl.run(name, problem, epsilon=1.0, delta=1e-5, iterations=23, seed=4,
                                        record_every=k, **options))


def test_poisson_schedule_has_independent_bernoulli_rounds():
    """Each user takes part in each round with probability q, independently: the share of trials, the
    spread of the per-round count (Binomial(n, q)) and the correlation of consecutive trials."""
    n, K, q = 50, 4000, 0.3
    positions = fp._Schedule(np.random.default_rng(11), q, n).take(K * n)
    masks = np.zeros(K * n)
    masks[positions] = 1.0
    N = masks.size
    assert abs(masks.mean() - q) < 4 * math.sqrt(q * (1 - q) / N)
    counts = masks.reshape(K, n).sum(axis=1)
    assert counts.var() == pytest.approx(n * q * (1 - q), rel=0.1)
    centred = masks - q
    assert abs((centred[1:] * centred[:-1]).mean() / (q * (1 - q))) < 4 / math.sqrt(N)
    # the same stream gives the same schedule whatever the chunks it is taken in
    schedule = fp._Schedule(np.random.default_rng(11), q, n)
    pieces = np.concatenate([schedule.take(end) for end in (7, 7, 1000, 123_457, K * n)])
    np.testing.assert_array_equal(pieces, positions)


@pytest.mark.parametrize("make", [lasso, logistic], ids=["lasso", "logistic"])
@pytest.mark.parametrize("name", ["private_admm_federated", "private_admm", "dp_prox_sgd"])
def test_results_do_not_depend_on_threads_or_chunks(name, make, monkeypatch):
    """Same seeds, bit-identical models whatever the thread count (the batch is split into fixed groups of
    runs, here small so that several threads really run; each run draws from its own streams), chunking of
    the rounds or blocks of the schedule's gaps, and a run repeated gives the same model."""
    problem = make()
    monkeypatch.setattr(fp, "_GROUP_PAIRS", 40)  # groups of 2 runs (q n = 18) or 1 (centralized): 3–6 groups
    monkeypatch.setattr(fp, "_SGD_GROUP_PAIRS", 40)  # DP-SGD's groups too
    extra = {"sampling_rate": 0.3} if name != "private_admm" else {}
    options = dict(step=0.5, clip=0.3) if name == "dp_prox_sgd" else OPTIONS
    runs = [dict(epsilon=e, seed=s, **options, **extra) for e in (0.5, math.inf) for s in (0, 3, 8)]
    plan, _ = fp._plan(name, problem, runs, delta=1e-5, iterations=12)
    assert len(fp._groups(plan, problem.n)) >= 3
    one, _ = fp.released_models(name, problem, runs, delta=1e-5, iterations=12, threads=1)
    for threads in (2, 3, 4, 2):
        many, _ = fp.released_models(name, problem, runs, delta=1e-5, iterations=12, threads=threads)
        np.testing.assert_array_equal(many, one)
    monkeypatch.setattr(fp, "_CHUNK_ELEMENTS", 64)  # a chunk of one round
    monkeypatch.setattr(fp, "_GAP_BLOCK", 3)  # gaps drawn three at a time
    small, _ = fp.released_models(name, problem, runs, delta=1e-5, iterations=12, threads=2)
    np.testing.assert_array_equal(small, one)
    traces = fp.run_many(name, problem, runs, delta=1e-5, iterations=12, threads=3)
    np.testing.assert_array_equal(np.array([t.model for t in traces]), one)


@pytest.mark.parametrize("name, mode", [("private_admm_federated", "federated"), ("private_admm", "centralized"),
                                        ("dp_prox_sgd", None)])
def test_a_threaded_batch_equals_the_slow_loop_run_by_run(name, mode, monkeypatch):
    """A batch of noisy and noise-free runs, split into several groups over two threads, gives each run the
    iterates of the per-user loop (the paper's algorithm, one user at a time) from that run's own streams."""
    problem = lasso(n=40)
    monkeypatch.setattr(fp, "_GROUP_PAIRS", 30)  # several groups of runs
    monkeypatch.setattr(fp, "_SGD_GROUP_PAIRS", 30)
    q = 0.3 if mode != "centralized" else None
    options = dict(step=0.7, clip=0.4) if mode is None else OPTIONS
    runs = [dict(epsilon=e, seed=s, **options, **({"sampling_rate": q} if q else {}))
            for e, s in ((2.0, 1), (math.inf, 2), (0.5, 3), (2.0, 4), (math.inf, 5))]
    traces = fp.run_many(name, problem, runs, delta=1e-5, iterations=9, threads=2)
    for r, trace in zip(runs, traces):
        sigma = trace.noise["sigma"]
        assert (sigma > 0) == math.isfinite(r["epsilon"])
        if mode is None:
            reference = slow_prox_sgd(problem, K=9, seed=r["seed"], step=0.7, clip_C=0.4, sigma=sigma, q=q)
        else:
            reference = slow_admm(problem, mode=mode, K=9, seed=r["seed"], gamma=OPTIONS["gamma"],
                                  relaxation=OPTIONS["relaxation"], clip_C=OPTIONS["clip"], sigma=sigma, q=q)
        np.testing.assert_allclose(trace.objective, problem.objective(reference), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(trace.model, reference[-1], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["private_admm_federated", "private_admm", "dp_prox_sgd"])
def test_noise_drawn_in_place_is_the_mechanisms_noise(name):
    """The engine draws each run's noise straight into its rows (``standard_normal(out=…)``, scaled in
    place); an audit sees instead one ``mechanisms.gaussian`` call per run and chunk. Both give the same
    numbers, and the calls the audit sees carry the ledger's scale."""
    problem = lasso()
    extra = {"sampling_rate": 0.3} if name != "private_admm" else {}
    options = dict(step=0.5, clip=0.3) if name == "dp_prox_sgd" else OPTIONS
    runs = [dict(epsilon=e, seed=s, **options, **extra) for e, s in ((0.5, 0), (math.inf, 1), (3.0, 2))]
    direct, _ = fp.released_models(name, problem, runs, delta=1e-5, iterations=10, threads=1)
    with dl.audit.intercept_noise() as draws:
        seen, info = fp.released_models(name, problem, runs, delta=1e-5, iterations=10)
    np.testing.assert_array_equal(seen, direct)
    scale = [1.0 if name == "dp_prox_sgd" else OPTIONS["relaxation"]] * 2
    assert [float(d.noise.flat[0]) for d in draws] == pytest.approx([s * i["sigma"] for s, i in
                                                                     zip(scale, (info[0], info[2]))])
    with dl.audit.intercept_noise(lambda i, draw: np.zeros_like(draw.raw)):  # every draw replaced by zeros
        silent, _ = fp.released_models(name, problem, runs, delta=1e-5, iterations=10)
    np.testing.assert_array_equal(silent[1], direct[1])  # the noise-free run is untouched …
    noiseless, _ = fp.released_models(name, problem, [dict(r, epsilon=math.inf) for r in runs], delta=1e-5,
                                      iterations=10)
    np.testing.assert_array_equal(silent, noiseless)  # … and the others are their noise-free twins


# ====================================================================== non-private behaviour
def test_noise_off_reaches_the_scikit_learn_lasso_solution():
    from sklearn.linear_model import Lasso

    X, y, _ = datasets.make_lasso(200, 8, seed=4)
    problem = problems.lasso(X, y, 5e-3)
    reference = Lasso(alpha=5e-3, fit_intercept=False, tol=1e-14, max_iter=1_000_000).fit(X, y).coef_
    trace = dl.run("admm_consensus", problem, iterations=1500, gamma=400.0)
    np.testing.assert_allclose(trace.model, reference, atol=1e-8)
    assert trace.objective_gap[-1] < 1e-12


@pytest.mark.parametrize("penalty", ["l1", "l2"])
def test_noise_off_solves_logistic_regression(penalty):
    problem = logistic(n=120, penalty=penalty)
    trace = dl.run("admm_consensus", problem, iterations=400, gamma=600.0)
    assert abs(trace.objective_gap[-1]) < 1e-10
    sgd = dl.run("prox_sgd", problem, iterations=800, step=2.0, sampling_rate=1.0)
    assert sgd.objective_gap[-1] < 1e-6


@pytest.mark.parametrize("private, twin", sorted(TWINS.items()))
def test_infinite_epsilon_is_the_non_private_twin(private, twin):
    problem = lasso()
    options = dict(OPTIONS) if private != "dp_prox_sgd" else {"step": 0.5, "clip": 0.3}
    a = dl.run(private, problem, epsilon=math.inf, iterations=25, seed=4, **options)
    b = dl.run(twin, problem, iterations=25, seed=4, **options)
    np.testing.assert_array_equal(a.objective, b.objective)
    np.testing.assert_array_equal(a.model, b.model)
    assert a.ledger == [] and not math.isfinite(a.privacy.epsilon)


def test_federated_with_q_1_is_centralized_bit_for_bit():
    problem = lasso()
    central = dl.run("private_admm", problem, epsilon=1.0, delta=1e-5, iterations=20, seed=9, **OPTIONS)
    federated = dl.run("private_admm_federated", problem, epsilon=1.0, delta=1e-5, iterations=20, seed=9,
                       sampling_rate=1.0, **OPTIONS)
    np.testing.assert_array_equal(central.objective, federated.objective)
    assert central.privacy.epsilon == federated.privacy.epsilon


def test_walk_on_the_complete_graph_is_centralized_in_expectation():
    """E over a uniform visited user of one walk step = u + (T(u) − u)/n, exactly (noise off)."""
    problem = lasso(n=25)
    records = fp._records(problem, "test")
    n, p = problem.X.shape
    rng = np.random.default_rng(0)
    U = rng.normal(size=(n, p))
    Z = fp._prox_regularizer(records, U.mean(0, keepdims=True), np.array([[OPTIONS["gamma"] / n]]))
    s = fp._Settings(np.array([OPTIONS["gamma"]]), np.array([OPTIONS["relaxation"]]), np.array([OPTIONS["clip"]]),
                     np.zeros(1))
    runs, users = np.zeros(n, int), np.arange(n)
    dU_all, _ = fp._admm_block_update(records, U, np.repeat(Z, n, 0), users, runs, s, None)  # T(u) − u
    expected = np.zeros((n, p))
    for i in range(n):  # the walk at user i: only block i moves, by the centralized block update
        dU_i, _ = fp._admm_block_update(records, U[[i]], Z, np.array([i]), np.zeros(1, int), s, None)
        after = U.copy()
        after[i] += dU_i[0]
        expected += after / n
    np.testing.assert_allclose(expected, U + dU_all / n, rtol=1e-12, atol=1e-14)
    # the visited user: never the same twice in a row, and uniform over the users in the long run
    path = fp._walk_paths(None, n, 50_000, [3])[0]
    assert np.all(path[1:] != path[:-1])
    counts = np.bincount(path, minlength=n)
    chi2 = ((counts - len(path) / n) ** 2 / (len(path) / n)).sum()
    assert chi2 < 60  # χ²(24): 99.999th percentile ≈ 60


def test_walk_on_other_topologies_moves_along_edges():
    problem = lasso(n=30)
    ring = topology.make("ring", 30)
    path = fp._walk_paths(ring, 30, 300, [1])[0]
    steps = np.abs(np.diff(path))
    assert np.all((steps == 1) | (steps == 29))
    trace = dl.run("private_admm_walk", problem, epsilon=1.0, delta=1e-5, iterations=200, topology="ring", **OPTIONS)
    assert trace.params["topology"] == "ring" and "Thm 3 (local)" in trace.privacy_paper.source
    complete = dl.run("private_admm_walk", problem, epsilon=1.0, delta=1e-5, iterations=200, **OPTIONS)
    assert "Thm 4" in complete.privacy_paper.source


# ====================================================================== privacy accounting
def _dp_accounting_epsilon(noise_multiplier, count, delta, q=1.0, relation="add_remove"):
    import dp_accounting as dpa
    from dp_accounting.pld import pld_privacy_accountant

    rel = {"add_remove": dpa.NeighboringRelation.ADD_OR_REMOVE_ONE,
           "replace": dpa.NeighboringRelation.REPLACE_ONE}[relation]
    acc = pld_privacy_accountant.PLDAccountant(neighboring_relation=rel, value_discretization_interval=1e-4)
    event = dpa.GaussianDpEvent(noise_multiplier)
    if q < 1:
        event = dpa.PoissonSampledDpEvent(q, event)
    acc.compose(event, count)
    return acc.get_epsilon(delta)


def test_centralized_epsilon_matches_dp_accounting():
    problem = lasso()
    trace = dl.run("private_admm", problem, epsilon=1.0, delta=1e-5, iterations=30, **OPTIONS)
    (event,) = trace.ledger
    # one user's u-block moves by 2θ·2C when its record is replaced; the noise on it is θσ
    assert event.sensitivity == pytest.approx(2 * OPTIONS["relaxation"] * 2 * OPTIONS["clip"])
    assert event.noise == pytest.approx(OPTIONS["relaxation"] * trace.noise["sigma"])
    assert event.count == 30 and event.sampling_rate == 1.0
    # replace-one with q = 1 is the Gaussian mechanism with that sensitivity: dp-accounting's (ε, δ)
    reference = _dp_accounting_epsilon(event.noise / event.sensitivity, 30, 1e-5)
    assert trace.privacy.epsilon == pytest.approx(reference, rel=2e-3)


def test_federated_ledger_counts_the_participations_of_the_most_exposed_user():
    """No amplification by sampling: each participation of the most exposed user is a full Gaussian release."""
    problem = lasso(n=100)
    trace = dl.run("private_admm_federated", problem, epsilon=2.0, delta=1e-5, iterations=50, sampling_rate=0.1,
                   seed=3, **OPTIONS)
    (event,) = trace.ledger
    # the schedule the run drew (its own sampling stream, replayed here): rounds each user took part in
    rng = np.random.default_rng(3).spawn(2)[0]
    most = int(poisson_masks(rng, 0.1, 100, 50).sum(axis=0).max())
    assert event.count == most == trace.noise["participations_of_most_exposed_user"] and 1 < most < 50
    assert event.sampling_rate == 1.0
    theta, C = OPTIONS["relaxation"], OPTIONS["clip"]
    assert event.sensitivity == pytest.approx(4 * theta * C)
    assert event.noise == pytest.approx(theta * trace.noise["sigma"])
    reference = _dp_accounting_epsilon(event.noise / event.sensitivity, most, 1e-5)
    assert trace.privacy.epsilon == pytest.approx(reference, rel=2e-3)


@pytest.mark.parametrize("q, z, count", [(0.01, 1.0, 100), (0.1, 2.0, 100), (0.1, 5.0, 1000), (0.5, 3.0, 20)])
def test_doubled_add_remove_bound_dominates_replace_one(q, z, count):
    """The convention the federated and DP-SGD ledgers rely on (noise multiplier z per contribution bound)."""
    replace = _dp_accounting_epsilon(z, count, 1e-6, q=q, relation="replace")
    doubled = _dp_accounting_epsilon(z / 2, count, 1e-6, q=q)
    assert doubled >= replace


def test_walk_ledger_counts_the_visits_of_the_most_visited_user():
    problem = lasso(n=20)
    trace = dl.run("private_admm_walk", problem, epsilon=1.0, delta=1e-5, iterations=100, seed=5, **OPTIONS)
    path = fp._walk_paths(None, 20, 100, [5])[0]
    (event,) = trace.ledger
    assert event.count == np.bincount(path).max() == trace.noise["visits_of_most_visited_user"]
    assert event.sampling_rate == 1.0
    reference = _dp_accounting_epsilon(event.noise / event.sensitivity, event.count, 1e-5)
    assert trace.privacy.epsilon == pytest.approx(reference, rel=2e-3)


def test_dp_prox_sgd_ledger():
    """Default: the exact replace-one pair (per-record bound C = 0.3) against dp-accounting's REPLACE_ONE, and
    less noise than the add/remove analysis with 2C for the same budget, which stays available and sound."""
    problem = lasso(n=100)
    common = dict(epsilon=1.0, delta=1e-5, iterations=40, clip=0.3, step=0.5)
    trace = dl.run("dp_prox_sgd", problem, **common)
    (event,) = trace.ledger
    assert event.neighbours == "replace_one" and trace.params["neighbours"] == "replace_one"
    assert event.sensitivity == pytest.approx(0.3) and event.noise == trace.noise["sigma"]
    assert event.sampling_rate == 0.1 and event.count == 40
    reference = _dp_accounting_epsilon(event.noise / 0.3, 40, 1e-5, q=0.1, relation="replace")
    assert reference * 0.98 <= trace.privacy.epsilon <= 1.0
    assert trace.privacy.epsilon == pytest.approx(reference, rel=0.02)
    old = dl.run("dp_prox_sgd", problem, **common, neighbours="add_remove")
    (old_event,) = old.ledger
    assert old_event.neighbours == "add_remove" and old_event.sensitivity == pytest.approx(0.6)
    assert old.privacy.epsilon == pytest.approx(_dp_accounting_epsilon(old_event.noise / 0.6, 40, 1e-5, q=0.1),
                                                rel=0.02)
    assert event.noise < old_event.noise
    # the add/remove noise, accounted exactly as replace-one, spends less than the budget
    assert _dp_accounting_epsilon(old_event.noise / 0.3, 40, 1e-5, q=0.1, relation="replace") < 0.99
    with pytest.raises(ValueError, match="neighbours"):
        dl.run("dp_prox_sgd", problem, **common, neighbours="swap")


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("name", ADMM + ("dp_prox_sgd",))
def test_default_calibration_spends_the_budget(name, epsilon):
    options = dict(OPTIONS) if name != "dp_prox_sgd" else {"clip": 0.3}
    trace = dl.run(name, lasso(n=50), epsilon=epsilon, delta=1e-5, iterations=20, **options)
    assert 0.97 * epsilon <= trace.privacy.epsilon <= epsilon


def test_noise_scale_comes_from_public_bounds():
    """Halving every feature changes no noise scale (clipped: the bound is C; logistic: L = feature_bound)."""
    for name, make, options in [("private_admm", lasso, OPTIONS), ("private_admm", logistic, {"gamma": 40.0}),
                                ("dp_prox_sgd", lasso, {"clip": 0.3})]:
        base = make()
        half = base.with_data(0.5 * base.X, base.y)
        a = dl.run(name, base, epsilon=1.0, delta=1e-5, iterations=10, **options)
        b = dl.run(name, half, epsilon=1.0, delta=1e-5, iterations=10, **options)
        assert a.ledger == b.ledger and a.noise["sigma"] == b.noise["sigma"]


def test_lipschitz_loss_without_clipping_has_the_theorem_2_sensitivity():
    problem = logistic(n=80)
    trace = dl.run("private_admm", problem, epsilon=1.0, delta=1e-5, iterations=10, gamma=20.0, relaxation=0.5)
    (event,) = trace.ledger
    L, n = problem.lipschitz, problem.n
    assert event.sensitivity == pytest.approx(4 * 0.5 * L * 20.0 / n)  # (25): 4λLγ/n


# ---------------------------------------------------------------------- the paper's statements
def test_theorem_2_closed_form_and_conversion():
    K, L, g, s, n, delta = 200, 1.0, 3.0, 2.0, 500, 1e-6
    c = 8 * K * L**2 * g**2 / (s**2 * n**2)
    assert accounting.cyffers2023_centralized_rdp(4.0, iterations=K, lipschitz=L, gamma=g, sigma=s, n=n) == \
        pytest.approx(4 * c)
    eps = accounting.cyffers2023_centralized_epsilon(delta, iterations=K, lipschitz=L, gamma=g, sigma=s, n=n)
    alphas = 1 + np.logspace(-4, 4, 200_001)
    assert eps == pytest.approx(np.min(c * alphas + math.log(1 / delta) / (alphas - 1)), rel=1e-6)
    # the same noise, as the exact Gaussian composition of K releases with Δ/σ = 4Lγ/(nσ) (θ cancels)
    exact = accounting.gaussian_epsilon(s * n / (4 * L * g), K, delta)
    assert exact < eps  # Mironov's conversion is loose


def test_theorem_3_central_as_stated_and_its_validity_conditions():
    kwargs = dict(iterations=100, lipschitz=1.0, gamma=1.0, n=1000, m=100)
    rdp = accounting.cyffers2023_federated_central_rdp(np.array([2.0, 8.0, 1e4]), sigma=1.0, **kwargs)
    assert rdp[0] == pytest.approx(16 * 2 * 100 / 1000**2) and rdp[1] == pytest.approx(16 * 8 * 100 / 1000**2)
    assert math.isinf(rdp[2])  # beyond Lemma C.1's bound on α
    # the lemma needs m < n/5 and a noise multiplier mσ/(4Lγ) ≥ 4
    assert np.all(np.isinf(accounting.cyffers2023_federated_central_rdp([2.0, 3.0], sigma=1.0, **{**kwargs, "m": 300})))
    assert np.all(np.isinf(accounting.cyffers2023_federated_central_rdp([2.0, 3.0], sigma=0.1, **kwargs)))
    eps = accounting.cyffers2023_federated_central_epsilon(1e-6, sigma=1.0, **kwargs)
    numerical = accounting.cyffers2023_federated_central_epsilon(1e-6, sigma=1.0, method="numerical", **kwargs)
    assert 0 < numerical < eps < math.inf


def test_theorem_4_holds_only_where_sigma_is_large_enough():
    rdp = accounting.cyffers2023_network_rdp(np.array([2.0, 100.0]), participations=3, lipschitz=1.0, gamma=1.0,
                                             sigma=10.0, n=100)
    assert rdp[0] == pytest.approx(8 * 2 * 3 * math.log(100) / (100 * 100))
    assert math.isinf(rdp[1])  # σ = 10 < 2Lγ√(α(α−1)) at α = 100


@pytest.mark.parametrize("name, extra, theorem", [("private_admm", {}, "Thm 2"),
                                                  ("private_admm_federated", {"sampling_rate": 0.1}, "Thm 3 (central)"),
                                                  ("private_admm_walk", {}, "Thm 4")])
def test_paper_calibration_meets_the_theorem(name, extra, theorem):
    problem = lasso(n=200)
    trace = dl.run(name, problem, epsilon=1.0, delta=1e-6, iterations=100, calibration="paper", **OPTIONS, **extra)
    assert theorem in trace.privacy_paper.source
    assert 0.98 <= trace.privacy_paper.epsilon <= 1.0  # (the theorem's ε on a grid of orders: piecewise in σ)
    accountant = dl.run(name, problem, epsilon=1.0, delta=1e-6, iterations=100, **OPTIONS, **extra)
    if name == "private_admm_federated":  # the m² aggregation gain: the theorem asks for much less noise
        assert trace.noise["sigma"] < 0.5 * accountant.noise["sigma"]
        assert trace.privacy.epsilon > 2.0  # … and that noise is not 1-DP for the unified accountant
    if name == "private_admm":  # Theorem 2 is the Gaussian curve with a looser conversion: more noise
        assert trace.noise["sigma"] > accountant.noise["sigma"] and trace.privacy.epsilon < 1.0


# ====================================================================== privacy bugs
def test_recovered_noise_has_the_ledgers_sigma():
    """Same seeds, noise on and off, one round from u = 0 on ridge (linear prox): the difference of the
    released z is the mean of the users' θσξ_i; its spread must be the ledger's σ/√n (statistically)."""
    problem = ridge(n=50, p=4, lam=1e-3)
    gamma, theta = 30.0, 0.7
    runs = [dict(epsilon=1.0, seed=s, gamma=gamma, relaxation=theta, clip=0.3) for s in range(150)]
    on = fp.run_many("private_admm", problem, runs, delta=1e-5, iterations=1)
    off = fp.run_many("private_admm", problem, [dict(r, epsilon=math.inf) for r in runs], delta=1e-5, iterations=1)
    shrink = 1 + gamma / problem.n * problem.lam
    diff = np.array([(a.model - b.model) * shrink for a, b in zip(on, off)]).ravel()
    (event,) = on[0].ledger
    expected = event.noise / math.sqrt(problem.n)  # mean over n users of θσξ_i
    assert abs(diff.mean()) < 4 * expected / math.sqrt(diff.size)
    assert diff.std() == pytest.approx(expected, rel=0.1)


def test_recovered_dp_sgd_noise_has_the_ledgers_sigma():
    problem = ridge(n=50, p=4, lam=1e-3)
    runs = [dict(epsilon=1.0, seed=s, step=0.5, clip=0.3, sampling_rate=0.2) for s in range(150)]
    on = fp.run_many("dp_prox_sgd", problem, runs, delta=1e-5, iterations=1)
    off = fp.run_many("dp_prox_sgd", problem, [dict(r, epsilon=math.inf) for r in runs], delta=1e-5, iterations=1)
    # z₁ = (z₀ − η(G + σξ)/(qn))/(1 + ηλ): the difference is −ησξ/(qn(1 + ηλ))
    factor = -0.5 / (0.2 * problem.n * (1 + 0.5 * problem.lam))
    diff = np.array([(a.model - b.model) / factor for a, b in zip(on, off)]).ravel()
    assert diff.std() == pytest.approx(on[0].ledger[0].noise, rel=0.1)


def _worst_records(problem, rng, count=200):
    """Candidate records at the public bound: unit directions (and their negatives), extreme labels."""
    p = problem.d
    directions = rng.normal(size=(count, p))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    directions *= problem.feature_bound
    if problem.loss == "logistic":
        labels = rng.choice([-1.0, 1.0], size=count)
    else:
        labels = rng.choice([-1.0, 1.0], size=count) * rng.uniform(0, 20, size=count)
    return directions, labels


@pytest.mark.parametrize("make, options", [(lasso, OPTIONS), (logistic, {"gamma": 40.0, "relaxation": 0.6}),
                                           (logistic, {"gamma": 4000.0, "relaxation": 1.0, "clip": 0.2})],
                         ids=["lasso-clipped", "logistic-lipschitz", "logistic-clipped"])
def test_replacing_one_record_moves_a_u_block_by_at_most_the_ledgers_sensitivity(make, options):
    problem = make()
    trace = dl.run("private_admm", problem, epsilon=1.0, delta=1e-5, iterations=1, **options)
    (event,) = trace.ledger
    records = fp._records(problem, "test")
    n, p = problem.X.shape
    s = fp._Settings(np.array([options["gamma"]]), np.array([options["relaxation"]]),
                     np.array([options.get("clip", math.inf)]), np.zeros(1))
    rng = np.random.default_rng(1)
    worst = 0.0
    for trial in range(20):  # random states u_i, z
        u_i = rng.normal(scale=3.0, size=(1, p))
        z = rng.normal(size=(1, p))
        base, _ = fp._admm_block_update(records, u_i, z, np.array([0]), np.zeros(1, int), s, None)
        A, b = _worst_records(problem, rng)
        X2 = problem.X.copy()
        y2 = problem.y.copy()
        for a_new, b_new in zip(A, b):
            X2[0], y2[0] = a_new, b_new
            other = fp._records(problem.with_data(X2, y2), "test")
            moved, _ = fp._admm_block_update(other, u_i, z, np.array([0]), np.zeros(1, int), s, None)
            worst = max(worst, float(np.linalg.norm(moved - base)))
    assert worst <= event.sensitivity * (1 + 1e-9)
    assert worst >= 0.3 * event.sensitivity  # the bound is not vacuous here


def test_dp_sgd_sensitivity_is_twice_the_clip():
    problem = lasso()
    C = 0.3
    trace = dl.run("dp_prox_sgd", problem, epsilon=1.0, delta=1e-5, iterations=1, clip=C)
    rng = np.random.default_rng(0)
    z = rng.normal(size=problem.d)
    A, b = _worst_records(problem, rng)
    slopes = A @ z - b
    grads = slopes[:, None] * A
    norms = np.linalg.norm(grads, axis=1)
    clipped = grads * np.minimum(1, C / norms)[:, None]
    worst = max(np.linalg.norm(clipped[i] - clipped[j]) for i in range(50) for j in range(50))
    (event,) = trace.ledger
    # replace-one: the event holds the per-record bound C; replacing the record moves the sum by up to 2C
    assert event.neighbours == "replace_one" and np.linalg.norm(clipped, axis=1).max() <= event.sensitivity * (1 + 1e-12)
    assert worst <= 2 * event.sensitivity * (1 + 1e-12)
    assert worst >= 0.9 * 2 * event.sensitivity


def test_rows_beyond_the_feature_bound_are_refused_unless_clipped():
    problem = logistic()
    big = problem.with_data(2.0 * problem.X, problem.y)
    with pytest.raises(ValueError, match="feature_bound"):
        dl.run("private_admm", big, epsilon=1.0, delta=1e-5, iterations=2, gamma=40.0)
    dl.run("private_admm", big, epsilon=1.0, delta=1e-5, iterations=2, gamma=40.0, clip=0.1)  # clipped: fine


def test_clip_factor_matches_the_mechanism():
    from dpadmm_lite import mechanisms

    rng = np.random.default_rng(0)
    V = rng.normal(size=(30, 5)) * rng.uniform(0, 3, size=(30, 1))
    C = rng.uniform(0.1, 2, size=30)
    factor = fp._clip_factor(np.linalg.norm(V, axis=1), C)
    np.testing.assert_allclose(factor[:, None] * V, mechanisms.clip(V, C), rtol=1e-14)


# ====================================================================== bad inputs, extreme values
@pytest.mark.parametrize("name, options, word", [
    ("private_admm_federated", {"sampling_rate": 0.0}, "sampling_rate"),
    ("private_admm_federated", {"sampling_rate": 1.5}, "sampling_rate"),
    ("dp_prox_sgd", {"sampling_rate": -0.1, "clip": 0.1}, "sampling_rate"),
    ("private_admm", {"relaxation": 0.0}, "relaxation"),
    ("private_admm", {"relaxation": 1.2}, "relaxation"),
    ("private_admm", {"gamma": 0.0}, "gamma"),
    ("private_admm", {"gamma": -2.0}, "gamma"),
    ("private_admm_walk", {"topology": "hypercube"}, "topology"),
    ("private_admm", {"clip": None}, "clip"),
    ("private_admm", {"clip": -1.0}, "clip"),
    ("dp_prox_sgd", {"step": 0.0, "clip": 0.1}, "step"),
    ("private_admm", {"calibration": "loose"}, "calibration"),
    ("dp_prox_sgd", {"calibration": "paper", "clip": 0.1}, "calibration"),
])
def test_bad_inputs_name_the_parameter(name, options, word):
    merged = {**OPTIONS, **options} if name != "dp_prox_sgd" else options
    with pytest.raises(ValueError, match=word):
        dl.run(name, lasso(), epsilon=1.0, delta=1e-5, iterations=2, **merged)


def test_a_parameter_of_another_mode_is_refused_by_name():
    # private_admm has no user sampling: the keyword is unknown to its signature, and the message lists the valid ones
    with pytest.raises(TypeError, match=r"private_admm got unknown parameter 'sampling_rate'; its parameters are "
                                        r"problem, .*relaxation, clip, calibration"):
        dl.run("private_admm", lasso(), epsilon=1.0, delta=1e-5, iterations=2, sampling_rate=0.5, **OPTIONS)


def test_disconnected_topology_is_refused():
    problem = lasso(n=10)
    adjacency = np.zeros((10, 10))
    adjacency[0, 1] = adjacency[1, 0] = 1
    graph = topology.from_adjacency(adjacency)
    with pytest.raises(ValueError, match="disconnected"):
        dl.run("private_admm_walk", problem, epsilon=1.0, delta=1e-5, iterations=5, topology=graph, **OPTIONS)
    with pytest.raises(ValueError, match="topology must have one node per user"):
        dl.run("private_admm_walk", problem, epsilon=1.0, delta=1e-5, iterations=5,
               topology=topology.make("ring", 12), **OPTIONS)


def test_other_problems_and_finite_epsilon_for_twins_are_refused():
    X, y, _ = datasets.make_classification(40, 4, seed=0)
    fused = problems.graph_guided_fused_lasso(X, y, 1e-2, W=np.array([[1.0, -1.0, 0, 0]]))
    with pytest.raises(ValueError, match="problem"):
        dl.run("private_admm", fused, epsilon=1.0, delta=1e-5, iterations=2, gamma=10.0)
    with pytest.raises(ValueError, match="epsilon"):
        dl.run("admm_consensus", lasso(), epsilon=1.0, iterations=2)
    with pytest.raises(ValueError, match="clip"):  # the squared loss has no Lipschitz constant
        dl.run("private_admm_federated", lasso(), epsilon=1.0, delta=1e-5, iterations=2, gamma=10.0)
    # the logistic loss is: a federated run needs no clip, its Δ is the prox bound 2θ·2Lγ/n
    trace = dl.run("private_admm_federated", logistic(), epsilon=1.0, delta=1e-5, iterations=2, gamma=10.0)
    assert trace.ledger[0].sensitivity == pytest.approx(2 * 0.5 * 2 * 10.0 / 60)
    with pytest.raises(ValueError, match="at least 2 users"):  # the walk passes the model on: n = 1 has nowhere to go
        dl.run("private_admm_walk", lasso(n=1), epsilon=1.0, delta=1e-5, iterations=2, **OPTIONS)


@pytest.mark.parametrize("name", ADMM + ("dp_prox_sgd",))
def test_extreme_slider_values_stay_finite(name):
    problem = lasso(n=40)
    options = {"gamma": 1000.0, "relaxation": 1.0, "clip": 0.05} if name != "dp_prox_sgd" else {"clip": 0.05, "step": 3.0}
    for epsilon in (0.01, 10.0):
        trace = dl.run(name, problem, epsilon=epsilon, delta=1e-8, iterations=30, rho=1e-3, **options)
        assert np.all(np.isfinite(trace.objective)) and np.all(np.isfinite(trace.model))
    small = dl.run(name, problem, epsilon=0.01, delta=1e-5, iterations=5, rho=1e-3,
                   **({k: v for k, v in options.items() if k != "gamma"}))
    assert np.all(np.isfinite(small.model))


def test_registered_with_tasks_and_tuning():
    table = dl.algorithm_table()
    for name in ("admm_consensus", "private_admm", "admm_federated", "private_admm_federated", "admm_walk",
                 "private_admm_walk", "prox_sgd", "dp_prox_sgd"):
        assert table.loc[name, "paper"] == "cyffers2023"
        info = dl.registry.info(name)
        assert set(info.tasks) == {"lasso", "logistic-l1", "logistic-l2"} and info.tuning
    assert set(dl.algorithm_names().private) >= {"private_admm", "private_admm_federated", "private_admm_walk",
                                            "dp_prox_sgd"}


# ====================================================================== exercises
def test_exercise_checks_accept_the_answers_and_name_the_mistakes():
    from dpadmm_book.exercises import cyffers2023 as ex

    # 1. the Sherman–Morrison x-update
    a, b, w, step = ex.x_update_data()
    right = ex.expected_x_update()
    assert ex.check_x_update(right)
    assert "2n/γ" in ex.check_x_update(ex._alg6_literal_x_update()).message
    assert "unchanged" in ex.check_x_update(w).message
    assert "shape" in ex.check_x_update(right[:-1]).message
    # 2. the sensitivity of one u-block update
    assert ex.check_sensitivity(ex.expected_sensitivity())
    wrong_half = ex.check_sensitivity(ex.expected_sensitivity() / 2)
    assert not wrong_half and "add/remove" in wrong_half.message
    wrong_theta = ex.check_sensitivity(ex.expected_sensitivity() / (2 * ex.SENSITIVITY_SETTING["relaxation"]))
    assert not wrong_theta and "2θ" in wrong_theta.message
    # 3. the noise multiplier of the federated ledger
    assert ex.check_noise_multiplier(ex.expected_noise_multiplier())
    root_m = ex.check_noise_multiplier(ex.expected_noise_multiplier() * math.sqrt(ex.FEDERATED_SETTING["m"]))
    assert not root_m and "√m" in root_m.message
    theta_wrong = ex.check_noise_multiplier(ex.expected_noise_multiplier() * ex.FEDERATED_SETTING["relaxation"])
    assert not theta_wrong and "θ" in theta_wrong.message
    assert "not answered" in ex.check_noise_multiplier(...).message


def test_noise_scale_is_what_a_run_uses_and_the_federated_schedule_is_checked(monkeypatch):
    problem = lasso(n=80)
    options = dict(epsilon=1.0, delta=1e-5, iterations=30, seed=4, sampling_rate=0.25, **OPTIONS)
    sigma, ledger, claim = fp.noise_scale("private_admm_federated", problem, **options)
    trace = dl.run("private_admm_federated", problem, **options)
    assert sigma == trace.noise["sigma"] and ledger == trace.ledger and claim == trace.privacy_paper
    most = trace.noise["participations_of_most_exposed_user"]
    assert 1 <= most <= 30 and ledger[0].count == most
    # the count is drawn before the run; a ledger that does not match the run's schedule is refused
    monkeypatch.setattr(fp, "_most_participations", lambda *args: most - 1)
    with pytest.raises(RuntimeError, match="does not describe this run"):
        dl.run("private_admm_federated", problem, **options)


def test_the_walks_one_pair_prox_is_the_vectorised_one():
    """A walk step solves one prox on Python floats (:func:`fixed_point._walk_coefficient`); it gives
    the same doubles as the vectorised solve of one pair (a batch iterates until all its entries
    converge, so its last bits may differ), for both losses, at margins from
    0 to far beyond e's range, and without noise in ``h``."""
    rng = np.random.default_rng(3)
    aw = np.concatenate([rng.normal(scale=3.0, size=2000), [0.0, 40.0, -40.0, 800.0, -800.0, 1e6]])
    b = np.where(rng.random(aw.size) < 0.5, -1.0, 1.0)
    a2 = np.concatenate([rng.uniform(0.0, 30.0, aw.size - 3), [0.0, 1e4, 1e-12]])
    step = rng.uniform(1e-4, 2.0, aw.size)
    for loss in ("logistic", "squared"):
        vectorised = np.concatenate([fp._coefficient(loss, aw[i:i + 1], b[i:i + 1], a2[i:i + 1], step[i:i + 1])
                                     for i in range(aw.size)])  # one pair at a time, as the walk asks
        one_by_one = np.array([fp._walk_coefficient(loss, float(w), float(bb), float(q), float(st))
                               for w, bb, q, st in zip(aw, b, a2, step)])
        assert np.isfinite(one_by_one).all()
        np.testing.assert_array_equal(one_by_one, vectorised)


def test_groups_are_even_in_number_equal_in_size_and_do_not_change_a_model(monkeypatch):
    """A batch is split into an even number of groups of consecutive runs whose sizes differ by at most one
    (two threads finish together), each at most about :data:`fixed_point._GROUP_PAIRS` pairs a round, or
    :data:`fixed_point._SGD_GROUP_PAIRS` for DP-SGD (its round is a few passes and many small operations);
    the grouping does not change a model."""
    problem = lasso(n=400)
    per_run = 0.3 * problem.n
    sgd = [dict(epsilon=e, seed=s, step=0.5, clip=0.3, sampling_rate=0.3) for e in (0.5, 2.0) for s in range(35)]
    admm = [{**OPTIONS, "epsilon": 1.0, "seed": s, "sampling_rate": 0.3} for s in range(70)]
    for name, runs, target in (("dp_prox_sgd", sgd, fp._SGD_GROUP_PAIRS), ("private_admm_federated", admm, fp._GROUP_PAIRS)):
        plan, _ = fp._plan(name, problem, runs, delta=1e-5, iterations=5)
        groups = fp._groups(plan, problem.n)
        np.testing.assert_array_equal(np.concatenate(groups), np.arange(70))
        sizes = [len(g) for g in groups]
        assert len(sizes) % 2 == 0 and max(sizes) - min(sizes) <= 1 and max(sizes) <= target // per_run, (name, sizes)
    assert len(fp._groups(fp._plan("dp_prox_sgd", problem, sgd, delta=1e-5, iterations=5)[0], problem.n)) < \
        len(fp._groups(fp._plan("private_admm_federated", problem, admm, delta=1e-5, iterations=5)[0], problem.n))
    large, _ = fp.released_models("dp_prox_sgd", problem, sgd[:12], delta=1e-5, iterations=10, threads=2)
    monkeypatch.setattr(fp, "_SGD_GROUP_PAIRS", 250)  # groups of 2 runs
    assert len(fp._groups(fp._plan("dp_prox_sgd", problem, sgd[:12], delta=1e-5, iterations=10)[0], problem.n)) == 6
    small, _ = fp.released_models("dp_prox_sgd", problem, sgd[:12], delta=1e-5, iterations=10, threads=2)
    np.testing.assert_array_equal(large, small)
