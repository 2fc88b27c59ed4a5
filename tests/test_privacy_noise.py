"""Noise drawn = noise claimed, for every private algorithm and every kind of release it makes.

For each release kind of each algorithm (``tests/privacy_harness.py``), the noise that actually
reached the release is recovered from two runs with the same seed — that noise on, then off, from
the same state — and its scale is tested against the σ (or ζ) of the ledger event that accounts
for it: chi-square and Kolmogorov–Smirnov tests over fixed seeds (deterministic: they cannot
flake). A planted bug that halves the noise, divides it by the wrong factor, or draws it at the
wrong scale makes the p-values astronomically small; the last tests plant such a bug at run time
(every draw halved) and check that the same statistics reject it.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import dpadmm_lite as dl
import privacy_harness as H
from dpadmm_lite import audit

PRIVATE = dl.algorithm_names().private
SEEDS = range(60)
P_MIN = 1e-4  # fixed seeds: the right noise gives a fixed p well above this; a wrong σ gives p < 1e-20


def _releases():
    out = []
    for name in PRIVATE:
        e = H.ENTRIES.get(name)
        out += [(name, i) for i in range(len(e.releases))] if e else [(name, 0)]
    return out


def test_every_private_algorithm_has_a_harness_entry():
    for name in PRIVATE:
        e = H.entry(name)  # fails naming tests/privacy_harness.py
        assert e.releases, f"{name}: its entry in {H.HARNESS} lists no release"


def _collect(name, index, seeds):
    release = H.entry(name).releases[index]
    got = [H.recover(name, release, seed) for seed in seeds]
    events = {(r.event.mechanism, r.event.noise) for r in got}
    assert len(events) == 1, f"{name}: the ledger's noise for this release changes with the seed: {events}"
    return got


def _verdict(name, got):
    """(p-values, a sentence): how well the recovered noise fits the ledger's σ or ζ."""
    event = got[0].event
    noise = np.array([np.ravel(r.noise) for r in got])  # (seeds, d)
    d = noise.shape[1]
    if event.mechanism == "gaussian":
        z = noise / event.noise
        chi2 = float(np.sum(z**2))
        k = z.size
        p_scale = 2 * min(stats.chi2.cdf(chi2, k), stats.chi2.sf(chi2, k))
        p_shape = stats.kstest(z.ravel(), "norm").pvalue
        ratio = float(np.sqrt(chi2 / k))
        return (p_scale, p_shape), (f"{name}: the noise that reached the release has standard deviation "
                                    f"{ratio:.4f} × the ledger's σ = {event.noise:.4g} ({k} coordinates)")
    # ℓ2-Laplace, density ∝ exp(−ζ‖x‖): ζ‖x‖ ~ Gamma(d, 1) and the direction is uniform on the sphere
    radius = event.noise * np.linalg.norm(noise, axis=1)
    p_scale = stats.kstest(radius, stats.gamma(d).cdf).pvalue
    unit = noise / np.linalg.norm(noise, axis=1, keepdims=True)
    rayleigh = len(unit) * d * float(np.sum(unit.mean(0) ** 2))  # ~ χ²_d under uniform directions
    p_shape = stats.chi2.sf(rayleigh, d)
    ratio = float(radius.mean() / d)
    return (p_scale, p_shape), (f"{name}: the ℓ2-Laplace noise that reached the release has mean radius "
                                f"{ratio:.4f} × d/ζ of the ledger's ζ = {event.noise:.4g}")


@pytest.mark.parametrize("name, index", _releases())
def test_noise_drawn_is_the_noise_claimed(name, index):
    got = _collect(name, index, SEEDS)
    # the drawn noise is what reached the release: one fixed multiple of the intercepted draw
    drawn = np.concatenate([np.ravel(r.drawn) for r in got])
    noise = np.concatenate([np.ravel(r.noise) for r in got])
    factor = float(drawn @ noise / (drawn @ drawn))
    assert np.linalg.norm(noise - factor * drawn) <= 1e-6 * np.linalg.norm(noise), (
        f"{name}: the noise in the release is not the noise drawn through dpadmm_lite.mechanisms (or the harness "
        f"entry's gain/site is wrong)")
    (p_scale, p_shape), message = _verdict(name, got)
    assert p_scale > P_MIN, f"{message}: scale test p = {p_scale:.2e}"
    assert p_shape > P_MIN, f"{message}: shape test p = {p_shape:.2e}"


@pytest.mark.parametrize("name", [n for n in PRIVATE if n in H.ENTRIES])
def test_halved_noise_is_caught(name):
    """The same statistics reject a run whose every draw is halved while the ledger keeps its σ."""
    with audit.scaled_noise(0.5):
        got = _collect(name, 0, range(20))
    (p_scale, _), message = _verdict(name, got)
    assert p_scale < 1e-8, f"halving the noise went unnoticed — {message}: p = {p_scale:.2e}"


def test_dvp_noise_setting_exercises_the_extra_penalty():
    """DVP's noise test runs where Zhang & Zhu's extra penalty Φ > 0, so a dropped Φ changes the release."""
    e = H.entry("dvp_star")
    problem, options, epsilon, delta = H.setting("dvp_star", e.options, e.problem)
    trace = dl.run("dvp_star", problem, epsilon=epsilon, delta=delta, seed=0, **options)
    assert np.all(np.asarray(trace.noise["extra_penalty"]) > 0.5 * options.get("rho", 0.5))
