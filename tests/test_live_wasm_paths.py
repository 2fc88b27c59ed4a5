"""The library's browser-only paths (Pyodide, ``sys.platform == "emscripten"``), run natively.

In the browser numpy has no BLAS (its matrix product is a plain loop: YᵀY on Adult's 40,000 × 104
took 6.5 s in WebAssembly, which made the Huang panel's first run, through the reference optimum's
Newton Hessians, take about a minute); :meth:`Problem.hessian` forms it with scipy's OpenBLAS
``dsyrk`` there instead. Natively the same branch must give numpy's Hessian, to rounding.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from dpadmm_lite import datasets, problems


def test_the_browsers_hessian_is_numpys(monkeypatch):
    X, y, X_test, y_test = datasets.load_adult()
    problem = problems.logistic(X[:3000], y[:3000], 1e-6, "l2", X_test=X_test, y_test=y_test)
    x = np.random.default_rng(0).normal(size=problem.d)
    native = problem.hessian(x)
    monkeypatch.setattr(sys, "platform", "emscripten")
    browser = problem.hessian(x)
    assert browser.shape == native.shape and np.array_equal(browser, browser.T)  # both triangles
    np.testing.assert_allclose(browser, native, rtol=1e-12, atol=1e-15 * np.abs(native).max())
    # and the reference optimum the panels' summaries measure their gap against is the same
    monkeypatch.setattr(sys, "platform", "linux")
    native_value = problems.logistic(X[:3000], y[:3000], 1e-6, "l2").reference_optimum().value
    monkeypatch.setattr(sys, "platform", "emscripten")
    browser_value = problems.logistic(X[:3000], y[:3000], 1e-6, "l2").reference_optimum().value
    assert abs(browser_value - native_value) <= 1e-14 * abs(native_value)


def test_the_browsers_per_agent_hessians_are_numpys(monkeypatch):
    """Zhang & Zhu's panel: the graph algorithms' per-agent Hessians (numpy's batched AᵀA natively, one
    scipy syrk per agent in the browser) agree, and so does a DVP run drawn from them."""
    from dpadmm_lite import live
    from dpadmm_lite.algorithms import graph

    rng = np.random.default_rng(1)
    for dtype, rtol in ((np.float32, 2e-5), (np.float64, 1e-12)):
        A = rng.normal(size=(5, 30, 7)).astype(dtype)
        gram = graph._gram_per_agent(A)
        assert gram.dtype == np.float64 and np.array_equal(gram, gram.transpose(0, 2, 1))
        np.testing.assert_allclose(gram, np.matmul(A.transpose(0, 2, 1), A), rtol=rtol, atol=rtol)
    settings = dict(algorithm="DVP", epsilon=2.0, iterations=6, n_agents=5, reference=False)
    native = live.zhang2017_network(**settings)["rows"]
    monkeypatch.setattr(sys, "platform", "emscripten")
    browser = live.zhang2017_network(**settings)["rows"]
    assert [r["iteration"] for r in browser] == [r["iteration"] for r in native]
    for a, b in zip(browser, native):  # the Hessians only precondition exact Newton solves
        assert a["test error"] == b["test error"] and a["empirical loss"] == pytest.approx(b["empirical loss"], rel=1e-9)
