"""The work counter: data passes, factorizations and solves of a run, counted exactly and the same
on every machine (issue 34: Huang et al.'s cost claim is decided on these counts)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dpadmm_lite as dl
from dpadmm_lite import problems
from dpadmm_lite.algorithms import _huang2019_local as local_solvers
from dpadmm_lite.algorithms import huang2019 as star


def _tiny(regularizer="l2", n=12, d=3):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1).max()  # rows within the declared feature bound 1
    y = np.where(rng.normal(size=n) >= 0, 1.0, -1.0)
    return problems.logistic(X, y, 1e-2, regularizer)


def test_problem_products_count_the_rows_they_read():
    p = _tiny()
    x = np.ones(p.d)
    with problems.counting() as counts:
        p.gradient(x)  # X x and Xᵀ r: two passes over 12 rows
        assert counts == {"rows": 24, "factorizations": 0, "solves": 0}
        p.gradient(np.ones((3, p.d)))  # three models: three times that
        assert counts["rows"] == 24 + 72
        p.per_example_gradients(x, idx=[0, 5])  # two rows, read twice
        assert counts["rows"] == 96 + 4
        p.hessian(x)  # margins and XᵀSX
        assert counts["rows"] == 100 + 24
        with problems.paused():  # evaluation is not counted
            p.objective(np.ones((5, p.d)))
            p.gradient(x)
        assert counts["rows"] == 124
    p.gradient(x)  # outside a counting block nothing is counted (and nothing fails)
    assert counts["rows"] == 124


@pytest.mark.parametrize("regularizer", ["l1", "l2"])
@pytest.mark.parametrize("sparse", [False, True])
def test_dp_admm_counts_one_gradient_per_iteration_by_hand(regularizer, sparse, monkeypatch):
    """Algorithm 3 reads the data only through f_i'(w̃_i^{k−1}): the margins at w̃^0 = 0 once, then per
    iteration one Xᵀr (the gradient) and one X w̃ (the next margins) — 1 + 2T passes, no
    factorization, no solve. T = 3 on 12 records: 7 passes."""
    monkeypatch.setattr(local_solvers, "SPARSE_BELOW", 2.0 if sparse else 0.0)  # the sparse and the dense products
    p = _tiny(regularizer)
    trace = dl.run("dp_admm_star", p, epsilon=1.0, delta=1e-3, rho=0.1, iterations=3, n_agents=2, seed=0)
    assert trace.work == {"data_passes": 7.0, "factorizations": 0, "solves": 0}
    sgd = dl.run("dp_sgd_star", p, epsilon=1.0, delta=1e-3, iterations=3, n_agents=2, seed=0)
    assert sgd.work == {"data_passes": 7.0, "factorizations": 0, "solves": 0}  # the same, from the broadcast w


def test_exact_admm_counts_its_newton_systems(monkeypatch):
    """Exact-update ADMM (ℓ2): every Newton step solves one d × d system per agent with a kept
    inverse; every inverse is one factorization per agent. Counted independently here by
    wrapping the two places that do them."""
    p = _tiny("l2")
    seen = {"inverses": 0, "steps": 0}
    preconditioners = star._Stack.preconditioners

    def spy(self, S, mu, agents=None):
        seen["inverses"] += self.n_agents if agents is None else len(agents)
        return preconditioners(self, S, mu, agents)

    monkeypatch.setattr(star._Stack, "preconditioners", spy)
    matmul = np.matmul

    def counting_matmul(a, b, *args, **kwargs):  # the Newton step: inverse (N, d, d) @ gradient (N, d, 1)
        if np.ndim(a) == 3 and np.ndim(b) == 3 and np.shape(b)[-1] == 1 and np.shape(a)[-1] == np.shape(a)[-2]:
            seen["steps"] += np.shape(a)[0]
        return matmul(a, b, *args, **kwargs)

    monkeypatch.setattr(star.np, "matmul", counting_matmul)
    trace = dl.run("admm_star", p, rho=0.1, iterations=3, n_agents=2, seed=0)
    assert trace.work["factorizations"] == seen["inverses"] > 0
    assert trace.work["solves"] == seen["steps"] > 0
    assert trace.work["data_passes"] > 7.0  # more than DP-ADMM's 1 + 2T


def test_counts_are_deterministic_and_exclude_evaluation():
    """The first run on a problem also solves its reference optimum and builds caches; the counts
    are the same as for a second run, and the same for a fresh copy of the problem."""
    runs = []
    for _ in range(2):
        p = _tiny("l2")
        runs += [dl.run("admm_star", p, rho=0.1, iterations=4, n_agents=3, seed=1).work for _ in range(2)]
    assert all(w == runs[0] for w in runs)


def test_counting_is_per_thread():
    p = _tiny()
    out = {}

    def work(name, k):
        with problems.counting() as counts:
            for _ in range(k):
                p.gradient(np.ones(p.d))
        out[name] = counts["rows"]

    threads = [threading.Thread(target=work, args=(f"t{k}", k)) for k in (1, 2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == {"t1": 24, "t2": 48, "t3": 72}
