"""The library's browser-only paths (Pyodide, ``sys.platform == "emscripten"``), run natively by setting
``dpadmm_lite._products.BROWSER``, the one flag they read.

In the browser numpy has no BLAS (its matrix product is a plain loop: YᵀY on Adult's 40,000 × 104
took 6.5 s in WebAssembly, which made the Huang panel's first run, through the reference optimum's
Newton Hessians, take about a minute); :meth:`Problem.hessian` forms it with scipy's OpenBLAS
``dsyrk`` there instead (:func:`dpadmm_lite._products.weighted_gram`). Natively the same branch must give numpy's Hessian, to rounding.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpadmm_lite import _products, datasets, problems


def test_the_browsers_hessian_is_numpys(monkeypatch):
    X, y, X_test, y_test = datasets.load_adult()
    problem = problems.logistic(X[:3000], y[:3000], 1e-6, "l2", X_test=X_test, y_test=y_test)
    x = np.random.default_rng(0).normal(size=problem.d)
    native = problem.hessian(x)
    monkeypatch.setattr(_products, "BROWSER", True)
    browser = problem.hessian(x)
    assert browser.shape == native.shape and np.array_equal(browser, browser.T)  # both triangles
    np.testing.assert_allclose(browser, native, rtol=1e-12, atol=1e-15 * np.abs(native).max())
    # and the reference optimum the panels' summaries measure their gap against is the same
    monkeypatch.setattr(_products, "BROWSER", False)
    native_value = problems.logistic(X[:3000], y[:3000], 1e-6, "l2").reference_optimum().value
    monkeypatch.setattr(_products, "BROWSER", True)
    browser_value = problems.logistic(X[:3000], y[:3000], 1e-6, "l2").reference_optimum().value
    assert abs(browser_value - native_value) <= 1e-14 * abs(native_value)
    # the ℓ1 optimum (the log-barrier method: margins, gradients and Hessians by sparse products there)
    monkeypatch.setattr(_products, "BROWSER", False)
    native_l1 = problems.logistic(X[:3000], y[:3000], 1e-3, "l1").reference_optimum()
    monkeypatch.setattr(_products, "BROWSER", True)
    browser_l1 = problems.logistic(X[:3000], y[:3000], 1e-3, "l1").reference_optimum()
    assert abs(browser_l1.value - native_l1.value) <= 1e-12 * abs(native_l1.value)
    np.testing.assert_allclose(browser_l1.x, native_l1.x, atol=1e-6)


def test_the_browsers_per_agent_hessians_are_numpys(monkeypatch):
    """Zhang & Zhu's panel: the graph algorithms' per-agent Hessians (numpy's batched AᵀA natively, one
    scipy syrk per agent in the browser) agree, and so does a DVP run drawn from them."""
    from dpadmm_book import live

    rng = np.random.default_rng(1)
    monkeypatch.setattr(_products, "BROWSER", True)
    for dtype, rtol in ((np.float32, 2e-5), (np.float64, 1e-12)):
        A = rng.normal(size=(5, 30, 7)).astype(dtype)
        gram = _products.gram_per_agent(A)
        assert gram.dtype == np.float64 and np.array_equal(gram, gram.transpose(0, 2, 1))
        np.testing.assert_allclose(gram, np.matmul(A.transpose(0, 2, 1), A), rtol=rtol, atol=rtol)
    # the BFGS fold: one gemm per agent, written in place into the inverses
    L, R = rng.normal(size=(5, 7, 4)), rng.normal(size=(5, 4, 7))
    for out in (np.linalg.inv(rng.normal(size=(5, 7, 7)) + 9 * np.eye(7)), np.zeros((7, 5, 7)).transpose(1, 0, 2)):
        expected = out + np.matmul(L, R)
        _products.add_products_per_agent(L, R, out)
        np.testing.assert_allclose(out, expected, rtol=1e-13, atol=1e-13)
    monkeypatch.setattr(_products, "BROWSER", False)
    settings = dict(algorithm="DVP", epsilon=2.0, iterations=6, n_agents=5, reference=False)
    native = live.zhang2017_network(**settings)["rows"]
    monkeypatch.setattr(_products, "BROWSER", True)
    browser = live.zhang2017_network(**settings)["rows"]
    assert [r["iteration"] for r in browser] == [r["iteration"] for r in native]
    for a, b in zip(browser, native):  # the Hessians only precondition exact Newton solves
        assert a["test error"] == b["test error"] and a["empirical loss"] == pytest.approx(b["empirical loss"], rel=1e-9)


def test_the_browsers_smoothing_is_the_fft(monkeypatch):
    """Liu et al.'s panel: in the browser ``Q_ν⁻¹ v`` is a product with the dense inverse (scipy.fft's
    dispatch cost more than the transform there); it is the FFT's result, for one vector and a batch,
    even and odd d, and ν = 0 still returns v itself."""
    from dpadmm_lite import smoothing

    rng = np.random.default_rng(2)
    for d, nu in ((104, 2.0), (7, 0.5), (1, 3.0), (2, 1.0)):
        v = rng.normal(size=(3, d))
        native = smoothing.smooth_checked(v, nu)
        monkeypatch.setattr(_products, "BROWSER", True)
        browser = [smoothing.smooth_checked(v, nu), smoothing.smooth_checked(v[0], nu)]
        monkeypatch.setattr(_products, "BROWSER", False)
        np.testing.assert_allclose(browser[0], native, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(browser[1], native[0], rtol=1e-12, atol=1e-14)
        # and it solves Q_ν x = v (the matrix printed in Liu et al., Sec. III-A)
        np.testing.assert_allclose(browser[0] @ smoothing.smoothing_matrix(d, nu).T, v, atol=1e-12)
    monkeypatch.setattr(_products, "BROWSER", True)
    v = rng.normal(size=5)
    assert smoothing.smooth_checked(v, 0.0) is v


def test_the_browsers_sparse_products_are_the_dense_ones():
    """``_products.SparseProducts`` (the browser's ``A @ x`` and ``Aᵀ v`` for a mostly-zero ``A``) equals
    numpy's dense products, and a matrix argument falls back to the dense product."""
    rng = np.random.default_rng(3)
    A = rng.normal(size=(40, 12)) * (rng.random((40, 12)) < 0.1)
    A[5] = 0.0  # a row with no non-zero: its product is 0
    sparse = _products.SparseProducts(A)
    x, v = rng.normal(size=12), rng.normal(size=40)
    assert sparse.shape == (40, 12) and sparse.T.shape == (12, 40) and sparse.T.T is sparse
    np.testing.assert_allclose(sparse @ x, A @ x, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(sparse.T @ v, A.T @ v, rtol=1e-13, atol=1e-15)
    assert (sparse @ x)[5] == 0.0
    M = rng.normal(size=(12, 3))
    np.testing.assert_array_equal(sparse @ M, A @ M)


def test_the_browsers_identity_products_are_its_sums():
    """The identity's products (ℓ1/ℓ2 problems) skip the sums: the same doubles as summing the one
    non-zero term per row, −0.0 included (it becomes +0.0 either way); a near-identity is summed."""
    x = np.array([1.5, -0.0, 0.0, -2.25, 1e-300, np.pi])
    eye = _products.SparseProducts(np.eye(6))
    near = np.eye(6)
    near[2, 2] = 1.0 + 2.0 ** -52
    summed = _products.SparseProducts(near)
    assert eye._identity and eye.T._identity and not summed._identity
    general = np.bincount(eye._rows, weights=eye._values * x[eye._cols], minlength=6)  # the general path
    for product in (eye @ x, eye.T @ x):
        assert product.tobytes() == general.tobytes() and product is not x
    assert np.signbit(general[1]) == np.signbit((eye @ x)[1]) == False  # noqa: E712
    np.testing.assert_array_equal(summed @ x, near @ x)


def test_the_browsers_margins_are_numpys(monkeypatch):
    """``problems.models_times_rows``: in the browser a mostly-zero X (Adult) is multiplied as a sparse
    matrix and a dense one by BLAS gemm; both equal numpy's ``M @ Xᵀ``, and so do the scores built on it."""
    X, y, X_test, y_test = datasets.load_adult()
    rng = np.random.default_rng(4)
    M = rng.normal(size=(7, X.shape[1]))
    dense = rng.normal(size=(300, X.shape[1]))
    v, r = M[0], rng.normal(size=2000)
    for rows in (X[:2000], dense[:2000]):
        native = problems.models_times_rows(M, rows), problems.rows_times(rows, v), problems.times_rows(r[:len(rows)], rows)
        monkeypatch.setattr(_products, "BROWSER", True)
        browser = problems.models_times_rows(M, rows), problems.rows_times(rows, v), problems.times_rows(r[:len(rows)], rows)
        monkeypatch.setattr(_products, "BROWSER", False)
        for b, n in zip(browser, native):
            assert b.shape == n.shape
            np.testing.assert_allclose(b, n, rtol=1e-12, atol=1e-12)
    sparse_pair = _products.sparse_rows(X[:2000])  # (X, Xᵀ) as CSR: Adult is 12 % non-zero
    assert sparse_pair[0].shape == (2000, X.shape[1]) and sparse_pair[1].shape == (X.shape[1], 2000)
    assert _products.sparse_rows(dense) is None
    problem = problems.logistic(X[:2000], y[:2000], 1e-4, "l2", X_test=X_test, y_test=y_test)
    native = (problem.data_loss(M), problem.accuracy(M))
    monkeypatch.setattr(_products, "BROWSER", True)
    np.testing.assert_allclose(problem.data_loss(M), native[0], rtol=1e-12)
    np.testing.assert_array_equal(problem.accuracy(M), native[1])


@pytest.mark.parametrize("panel", ["liu2022", "xu2020"])
def test_the_browsers_fused_lasso_runs_are_native(panel, monkeypatch):
    """Liu et al.'s and Xu et al.'s panels with the browser's products (sparse ``A``, dense ``Q_ν⁻¹``,
    sparse margins) give native CPython's rows (to 1e-9, the browser test's tolerance)."""
    from dpadmm_book import live

    module = getattr(live, panel)
    problem_of = getattr(module, f"{panel}_problem")
    settings = {"epsilon": 0.7, "rho": 0.05}
    native = live.run_panel(panel, settings)["rows"]
    problem_of.cache_clear()  # the problem caches its products: make a fresh one on the browser's paths
    monkeypatch.setattr(_products, "BROWSER", True)
    try:
        assert isinstance(problem_of().constraint_products, _products.SparseProducts)
        browser = live.run_panel(panel, settings)["rows"]
    finally:
        monkeypatch.setattr(_products, "BROWSER", False)
        problem_of.cache_clear()
    assert len(browser) == len(native)
    for a, b in zip(browser, native):
        assert set(a) == set(b)
        for key, value in b.items():
            assert a[key] == (pytest.approx(value, rel=1e-9, abs=1e-12) if isinstance(value, float) else value), key


def test_the_browsers_squared_loss_of_many_models_is_numpys(monkeypatch):
    """In the browser the squared loss of many models comes from the data's moments (XᵀX/n, Xᵀy/n,
    yᵀy/n) instead of every margin; on the Cyffers et al. panel's Lasso it agrees with numpy's to
    1e-11, and the panel's walk gives native CPython's rows."""
    from dpadmm_book import live

    problem = live.cyffers2023.cyffers2023_problem("test")
    rng = np.random.default_rng(5)
    Z = problem.reference_optimum().x + 0.01 * rng.normal(size=(3, 400, problem.d))
    native = problem.data_loss(Z), problem.data_loss(Z, problem.X_test, problem.y_test)
    monkeypatch.setattr(_products, "BROWSER", True)
    browser = problem.data_loss(Z), problem.data_loss(Z, problem.X_test, problem.y_test)
    for b, n in zip(browser, native):
        assert b.shape == n.shape == (3, 400)
        np.testing.assert_allclose(b, n, rtol=1e-11)
    assert problem.data_loss(Z[0, 0]) == pytest.approx(native[0][0, 0], rel=1e-15)  # one model: its margins
    settings = {"mode": "walk, ring", "epsilon": 0.5}
    monkeypatch.setattr(_products, "BROWSER", False)
    native_rows = live.run_panel("cyffers2023", settings)["rows"]
    monkeypatch.setattr(_products, "BROWSER", True)
    assert live.run_panel("cyffers2023", settings)["rows"] == native_rows


def assert_is_the_optimum(p, shipped, fresh) -> None:
    """``shipped`` is an optimum of ``p`` as well determined as the reference solver makes one: its objective
    equals the one solved here within the two solvers' certified suboptimality bounds (``residual``: the
    gradient norm for smooth problems, a bound on F(x) − F* for ℓ1 and fused) plus the rounding of evaluating F
    (a relative 1e-13: sums over up to 40,000 rows in another order), and its stored value is F at its x.
    Coordinates are not compared: along the nearly flat directions of Adult's one-hot columns (λ = 1e-6) two
    kernels' solves differ by 7e-6 in x at the same objective to 1e-16."""
    F_shipped, F_fresh = float(p.objective(shipped.x)), float(p.objective(fresh.x))
    rounding = 1e-13 * (1.0 + abs(F_fresh))
    assert shipped.value == pytest.approx(F_shipped, rel=1e-13, abs=1e-15), "stored value is not F at the stored x"
    if p.regularizer == "l2" or p.lam == 0:
        ridge = p.lam if p.regularizer == "l2" else 0.0
        gradient = np.linalg.norm(p.gradient(shipped.x) + ridge * shipped.x)
        assert gradient <= 1e-8, f"the shipped optimum's gradient norm is {gradient:.3g}"
        bound = rounding  # Newton's method ended at a gradient norm ≤ 1e-8: F is then exact to second order
    else:
        bound = shipped.residual + fresh.residual + rounding
    assert abs(F_shipped - F_fresh) <= bound, f"F(shipped) − F(fresh) = {F_shipped - F_fresh:.3g} > {bound:.3g}"


def test_the_shipped_optima_are_the_live_panels_problems_solved_now():
    """``SHIPPED_OPTIMA`` holds the optimum of every problem a live panel asks for (at its defaults and at each
    drop-down option), and each is an optimum of that problem on this machine, whatever BLAS kernel wrote it
    (:func:`assert_is_the_optimum`); natively the solver still runs."""
    from dpadmm_book.live import _optima

    panel_problems = _optima.panel_problems()
    assert len(panel_problems) >= 8
    for p in panel_problems:
        shipped = problems.shipped_optimum(p, browser=True)
        assert shipped is not None, problems.fingerprint(p)[0]
        assert_is_the_optimum(p, shipped, problems._solve_reference(p))
        assert problems.shipped_optimum(p) is None  # not in the browser


@pytest.mark.parametrize("plant", ["moved", "value"])
def test_a_wrong_shipped_optimum_is_caught(plant):
    """The check above fails when the shipped data are wrong: an optimum moved by 1e-3, or a stored value
    changed in its fourth digit (on the ℓ1 and the smooth problem of Huang et al.'s panel)."""
    from dpadmm_book.live import huang2019

    for regularizer in ("l1", "l2"):
        p = huang2019.huang2019_problem(regularizer)
        shipped, fresh = problems.shipped_optimum(p, browser=True), problems._solve_reference(p)
        assert_is_the_optimum(p, shipped, fresh)
        if plant == "moved":
            wrong = problems.Optimum(shipped.x + 1e-3, float(p.objective(shipped.x + 1e-3)), shipped.iterations,
                                     shipped.residual, shipped.hessians)
        else:
            wrong = problems.Optimum(shipped.x, shipped.value * (1 + 1e-4), shipped.iterations, shipped.residual,
                                     shipped.hessians)
        with pytest.raises(AssertionError):
            assert_is_the_optimum(p, wrong, fresh)


def test_a_problem_the_panels_do_not_build_gets_no_shipped_optimum():
    from dpadmm_book.live import huang2019

    p = huang2019.huang2019_problem("l2")
    assert problems.shipped_optimum(p, browser=True) is not None
    for other in (problems.logistic(p.X, p.y, 2 * p.lam, "l2"),  # another λ
                  problems.logistic(p.X, -p.y, p.lam, "l2"),  # other labels
                  problems.logistic(p.X[:-1], p.y[:-1], p.lam, "l2")):  # a record less
        assert problems.shipped_optimum(other, browser=True) is None
