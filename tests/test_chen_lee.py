"""Chen & Lee (2020)'s ssADMM as the book reconstructs it (dpadmm_lite/algorithms/chen2020.py).

* ε = ∞ is the non-private twin ``sladmm`` bit for bit, and σ = 0 draws nothing.
* Against a slow reference written here from the update equations (one record at a time, the same
  random streams): every released model agrees, for both outputs, with clipping.
* Noise-free with the full batch (q = 1) it is linearised ADMM and converges to the library's
  independent reference optimum (log-barrier Newton) of an ℓ1-logistic problem.
* Privacy: T Poisson-subsampled Gaussian releases with the per-record bound c/b, replace-one; the
  accountant certifies the target ε end to end (not less, not more than 1 % below), σ shrinks with b.
* What a trace reports of the work: the expected per-example gradients b·t, the same at every seed; the
  drawn batch sizes only under a key that says they are not private. The ledger's sampling rate is the
  rate the minibatches are drawn at, and a ledger recording a quarter of it fails that check.
* Bad inputs name the parameter.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpadmm_lite as dl
from dpadmm_lite import accounting, audit, datasets, privacy, problems
from dpadmm_lite.algorithms import chen2020 as chen_lee, liu2022 as stochastic


@pytest.fixture(scope="module")
def l1():
    X, y, _ = datasets.make_classification(320, 6, seed=3)
    return problems.logistic(X[:240], y[:240], 1e-2, "l1", X_test=X[240:], y_test=y[240:])


def _reference(problem, *, rho, iterations, sigma, seed, batch_size, eta, clip, output):
    """ssADMM step by step, one record at a time (the module's equations; the same two random streams)."""
    n, d = problem.n, problem.d
    q = batch_size / n
    batch_rng, noise_rng = np.random.default_rng(seed).spawn(2)
    noise = sigma * noise_rng.standard_normal((iterations, d)) if sigma > 0 else np.zeros((iterations, d))
    x, z, w = np.zeros(d), np.zeros(d), np.zeros(d)
    xs = []
    for t in range(iterations):
        idx = batch_rng.choice(n, size=batch_rng.binomial(n, q), replace=False)
        g = np.zeros(d)
        for i in idx:
            a, b = problem.X[i], problem.y[i]
            grad = -b / (1.0 + math.exp(b * float(a @ x))) * a  # ∇ log(1 + exp(−b aᵀx))
            if clip is not None and np.linalg.norm(grad) > clip:
                grad = grad * clip / np.linalg.norm(grad)
            g += grad
        g = g / batch_size + noise[t]
        x = np.array([(x[k] / eta + rho * (z[k] - w[k]) - g[k]) / (1.0 / eta + rho) for k in range(d)])
        v = x + w
        z = np.sign(v) * np.maximum(np.abs(v) - problem.lam / rho, 0.0)  # soft-thresholding at λ/ρ
        w = w + x - z
        xs.append(x.copy())
    out = []
    for t in range(1, iterations + 1):
        out.append(xs[t - 1] if output == "last" else np.mean(xs[t // 2:t], axis=0))
    return np.array(out)


def test_no_noise_is_the_non_private_twin(l1):
    private = dl.run("ssadmm", l1, epsilon=math.inf, delta=1e-5, rho=0.5, iterations=40, seed=7, batch_size=30)
    twin = dl.run("sladmm", l1, rho=0.5, iterations=40, seed=7, batch_size=30)
    np.testing.assert_array_equal(private.objective, twin.objective)
    np.testing.assert_array_equal(private.model, twin.model)
    assert private.noise["sigma"] == 0.0 and not private.ledger


@pytest.mark.parametrize("output, clip, epsilon", [("tail", None, 0.5), ("last", 0.3, 2.0), ("tail", None, math.inf)])
def test_matches_a_slow_reference(l1, output, clip, epsilon):
    trace = dl.run("ssadmm", l1, epsilon=epsilon, delta=1e-5, rho=0.7, iterations=25, seed=3, batch_size=20,
                   eta=1.5, clip=clip, output=output)
    reference = _reference(l1, rho=0.7, iterations=25, sigma=trace.noise["sigma"], seed=3, batch_size=20, eta=1.5,
                           clip=clip, output=output)
    np.testing.assert_allclose(trace.model, reference[-1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(trace.objective, l1.objective(reference), rtol=1e-10)  # every released model


def test_full_batch_without_noise_converges_to_the_reference_optimum(l1):
    opt = l1.reference_optimum()
    trace = dl.run("sladmm", l1, rho=1.0, iterations=3000, seed=0, batch_size=l1.n, output="last", record_every=500)
    assert trace.objective_gap[-1] < 1e-9 * (1 + abs(opt.value))
    np.testing.assert_allclose(trace.model, opt.x, atol=1e-5)
    assert trace.metrics["passes"][-1] == pytest.approx(3000.0)  # q = 1: every record in every step


def test_privacy_end_to_end(l1):
    for epsilon in (0.1, 1.0, 4.0):
        trace = dl.run("ssadmm", l1, epsilon=epsilon, delta=1e-5, rho=1.0, iterations=60, seed=0, batch_size=24)
        assert epsilon * 0.99 <= trace.privacy.epsilon <= epsilon * (1 + 1e-9)
        (event,) = trace.ledger
        assert event.count == 60 and event.sampling_rate == pytest.approx(24 / l1.n)
        assert event.neighbours == "replace_one" and event.sensitivity == pytest.approx(l1.lipschitz / 24)
        assert accounting.ledger_epsilon(trace.ledger, 1e-5) == pytest.approx(trace.privacy.epsilon)
    small, large = (chen_lee.noise_scale(l1, epsilon=1.0, delta=1e-5, iterations=60, batch_size=b)[0] for b in (12, 48))
    assert large < small  # a larger batch needs less noise per averaged gradient


def test_released_counts_are_b_t_and_the_drawn_sizes_only_a_diagnostic(l1):
    """b·t per-example gradients after t steps (q·t passes), at every seed; the drawn |B_t|, which would weaken
    the amplification by sampling, summed under a key that says they are not private — exactly the sizes the
    sampler drew, following the seed, with the expectation b·t over 150 seeds."""
    key = stochastic.REALISED_EVALUATIONS
    assert "not private" in key
    traces = []
    for seed in range(150):
        with audit.intercept_sampling() as samples:
            traces.append(dl.run("ssadmm", l1, epsilon=1.0, delta=1e-5, rho=0.5, iterations=24, seed=seed,
                                 batch_size=20, record_every=6))
        sizes = np.cumsum([len(s.members) for s in samples])
        np.testing.assert_array_equal(traces[-1].metrics[key], sizes[[5, 11, 17, 23]])
    for t in traces:
        np.testing.assert_array_equal(t.metrics["steps"], [6, 12, 18, 24])
        np.testing.assert_array_equal(t.metrics["gradient_evaluations"], [120, 240, 360, 480])  # b·t
        np.testing.assert_array_equal(t.metrics["passes"], np.array([120, 240, 360, 480]) / l1.n)
    realised = np.array([t.metrics[key][-1] for t in traces])
    assert len(set(realised)) > 1
    assert abs(realised.mean() - 480) < 5 * realised.std(ddof=1) / math.sqrt(len(realised))


def test_the_ledger_records_the_rate_the_minibatches_are_drawn_at(l1, monkeypatch):
    options = dict(epsilon=1.0, delta=1e-5, rho=0.5, iterations=1500, batch_size=24, seed=0)
    honest = audit.sampling_rates("ssadmm", l1, **options)
    assert honest.consistent and honest.recorded == 24 / l1.n and honest.samples == 1500, honest
    real = privacy.PrivacyEvent
    monkeypatch.setattr(chen_lee, "PrivacyEvent", lambda *a, sampling_rate=1.0, **k: real(
        *a, sampling_rate=sampling_rate / 4, **k))
    planted = audit.sampling_rates("ssadmm", l1, **options)
    assert planted.recorded == pytest.approx(24 / l1.n / 4) and not planted.consistent
    q, trials = planted.recorded, planted.samples * planted.records
    assert abs(planted.realised - q) > 10 * math.sqrt(q * (1 - q) / trials)  # the members drawn alone refute it


def test_the_squared_loss_needs_a_clip_and_fused_problems_are_refused(l1):
    X, y, _ = datasets.make_lasso(100, 5, seed=0)
    lasso = problems.lasso(X, y, 1e-2)
    with pytest.raises(ValueError, match="clip"):
        dl.run("ssadmm", lasso, epsilon=1.0, delta=1e-5, rho=1.0, iterations=5, seed=0)
    trace = dl.run("ssadmm", lasso, epsilon=1.0, delta=1e-5, rho=1.0, iterations=5, seed=0, clip=0.5, eta=0.2)
    assert trace.ledger[0].sensitivity == pytest.approx(0.5 / 50)
    W = np.array([[1.0, -1, 0, 0, 0, 0]])
    fused = problems.graph_guided_fused_lasso(l1.X, l1.y, lam=1e-2, W=W)
    with pytest.raises(ValueError, match="problem must have the constraint x = y"):
        dl.run("ssadmm", fused, epsilon=1.0, delta=1e-5, rho=1.0, iterations=5, seed=0)


@pytest.mark.parametrize("options, name", [
    ({"batch_size": 0}, "batch_size"), ({"batch_size": 10_000}, "batch_size"), ({"batch_size": 2.5}, "batch_size"),
    ({"eta": -1.0}, "eta"), ({"eta": math.nan}, "eta"), ({"clip": 0.0}, "clip"), ({"output": "mean"}, "output"),
    ({"iterations": 0}, "iterations"), ({"rho": -1.0}, "rho"), ({"record_every": 0}, "record_every"),
    ({"epsilon": -1.0}, "epsilon"), ({"delta": 1.5}, "delta"), ({"seed": -3}, "seed"),
])
def test_bad_input_names_the_parameter(l1, options, name):
    arguments = {"epsilon": 1.0, "delta": 1e-5, "rho": 1.0, "iterations": 5, "seed": 0, **options}
    with pytest.raises(ValueError, match=name):
        dl.run("ssadmm", l1, **arguments)


def test_the_non_private_twin_refuses_a_finite_epsilon(l1):
    with pytest.raises(ValueError, match="epsilon"):
        dl.run("sladmm", l1, epsilon=1.0, rho=1.0, iterations=5, seed=0)
