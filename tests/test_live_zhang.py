"""The Zhang & Zhu live panel's shipped non-private reference curves (``data/zhang2017_reference.npz``).

The table must be what the library computes: a sample of it is re-run here (the non-private ADMM is
deterministic, and a run's first T iterations do not depend on its length), the panel's rows are the same
whether the reference is read or re-run, and a setting outside the table runs it live.

"The same" is to the precision the computation determines, not bit for bit: every local problem is solved
to a gradient max-norm of ``inner_tol`` (1e-9) by Newton steps whose inverse Hessians are kept in single
precision, so a machine whose BLAS kernel sums in another order ends each local solve at another point
within that tolerance (between OpenBLAS's Haswell and SkylakeX kernels the losses differ by up to 3.8e-12
relative). The losses are compared to a relative ``inner_tol``; the test errors are counts of correctly
classified test records and are compared exactly (a count changes only for a test margin within about
``inner_tol`` of zero).
"""

from __future__ import annotations

import numpy as np
import pytest

from dpadmm_lite import topology
from dpadmm_book.live import zhang2017 as panel

#: The local solvers' stopping tolerance (``admm_graph``'s ``inner_tol``): the relative precision to which two
#: machines' runs of the same setting agree on the loss.
LOSS_RTOL = 1e-9


def assert_same_curves(shipped, computed) -> None:
    """``(test error, loss)`` curves that are the same run: errors exactly, losses to :data:`LOSS_RTOL`."""
    np.testing.assert_array_equal(shipped[0], computed[0])
    np.testing.assert_allclose(shipped[1], computed[1], rtol=LOSS_RTOL, atol=0)


def test_the_table_covers_every_setting_of_the_panel():
    table = panel._shipped_references()
    lo, hi = panel.REFERENCE["agents"]
    assert list(table["topologies"]) == list(topology.NAMES)
    assert tuple(table["lams"]) == panel.REFERENCE["lams"]
    assert table["correct"].shape == table["loss"].shape == (2, len(topology.NAMES), hi - lo + 1, panel.REFERENCE["iterations"])
    assert np.isfinite(table["loss"]).all() and (table["correct"] > 0).all()
    # the panel's controls stay inside the table: nodes 2 … 40, at most REFERENCE["iterations"], every topology
    controls = {c["name"]: c for c in panel.PANELS["zhang2017"]["controls"]}
    assert (controls["n_agents"]["min"], controls["n_agents"]["max"]) == (lo, hi)
    assert controls["iterations"]["max"] == panel.REFERENCE["iterations"]
    assert {o[1] for o in controls["topology_name"]["options"]} == set(topology.NAMES)


@pytest.mark.parametrize("lam_index, topology_name, n_agents", [(0, "ring", 20), (1, "star", 7), (0, "erdos_renyi", 33)])
def test_a_sample_of_the_table_is_what_the_library_computes(lam_index, topology_name, n_agents):
    lam = panel.REFERENCE["lams"][lam_index]
    error, loss = panel.reference_curve(lam, topology_name, n_agents)
    shipped = panel.shipped_reference(lam, topology_name, n_agents, panel.REFERENCE["iterations"], 8_000, 0.1, 0)
    assert_same_curves(shipped, (error, loss))
    # a shorter run is the table's prefix
    short = panel.reference_curve(lam, topology_name, n_agents, iterations=17)
    assert_same_curves(panel.shipped_reference(lam, topology_name, n_agents, 17, 8_000, 0.1, 0), short)


@pytest.mark.parametrize("plant", ["loss", "count"])
def test_a_wrong_table_entry_is_caught(monkeypatch, plant):
    """The comparison above fails when the table is wrong: a loss changed in its fourth digit, or one test
    record's count moved."""
    lam, topology_name, n_agents = panel.REFERENCE["lams"][0], "ring", 20
    computed = panel.reference_curve(lam, topology_name, n_agents, iterations=30)
    table = {k: v.copy() for k, v in panel._shipped_references().items()}
    j = list(table["topologies"]).index(topology_name)
    if plant == "loss":
        table["loss"][0, j, n_agents - panel.REFERENCE["agents"][0], 29] *= 1 + 1e-4
    else:
        table["correct"][0, j, n_agents - panel.REFERENCE["agents"][0], 29] += 1
    assert_same_curves(panel.shipped_reference(lam, topology_name, n_agents, 30, 8_000, 0.1, 0), computed)
    monkeypatch.setattr(panel, "_shipped_references", lambda: table)
    with pytest.raises(AssertionError):
        assert_same_curves(panel.shipped_reference(lam, topology_name, n_agents, 30, 8_000, 0.1, 0), computed)


def test_the_panel_reads_the_table_and_draws_what_a_live_reference_draws(monkeypatch):
    settings = dict(algorithm="DVP", epsilon=3.0, topology_name="small_world", n_agents=12, iterations=23)
    calls = []
    original = panel._reference
    monkeypatch.setattr(panel, "_reference", lambda *a, **k: calls.append(k) or original(*a, **k))
    read = panel.zhang2017_network(**settings)["rows"]
    assert calls == []  # a move of ε, the topology, the nodes or T re-runs the private algorithm alone
    assert {r["algorithm"] for r in read} == {"non-private", "DVP"}
    monkeypatch.setattr(panel, "shipped_reference", lambda *a, **k: None)
    live = panel.zhang2017_network(**settings)["rows"]
    assert len(calls) == 1
    assert [r["iteration"] for r in read] == [r["iteration"] for r in live]
    for a, b in zip(read, live):
        assert a["algorithm"] == b["algorithm"] and a["test error"] == b["test error"]
        assert a["empirical loss"] == pytest.approx(b["empirical loss"], rel=LOSS_RTOL, abs=0)


def test_settings_outside_the_table_run_the_reference_live():
    assert panel.shipped_reference(panel.REFERENCE["lams"][0], "ring", 20, panel.REFERENCE["iterations"] + 1, 8_000, 0.1, 0) is None
    assert panel.shipped_reference(panel.REFERENCE["lams"][0], "ring", 20, 30, 5_000, 0.1, 0) is None
    assert panel.shipped_reference(panel.REFERENCE["lams"][0], "ring", 20, 30, 8_000, 0.2, 0) is None
    assert panel.shipped_reference(panel.REFERENCE["lams"][0], "ring", 20, 30, 8_000, 0.1, 1) is None
    assert panel.shipped_reference(1e-3, "ring", 20, 30, 8_000, 0.1, 0) is None
    rows = panel.zhang2017_network(algorithm="DVP", iterations=8, n_agents=6, rho=0.2)["rows"]
    assert {r["algorithm"] for r in rows} == {"non-private", "DVP"}
