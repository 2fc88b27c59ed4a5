"""Chart builders: the Vega-Lite spec (encodings, scales, data rows), not pixels."""

from types import SimpleNamespace

import numpy as np
import pytest

from dpadmm_book import viz
from dpadmm_lite.trace import Trace


def _trace(name, gap, *, accuracy=None, consensus=None, wall_time=0.5):
    gap = np.asarray(gap, float)
    return Trace(algorithm=name, objective=gap + 1.0, objective_gap=gap, model=np.zeros(2),
                 test_accuracy=None if accuracy is None else np.asarray(accuracy, float),
                 consensus_violation=None if consensus is None else np.asarray(consensus, float),
                 wall_time=wall_time)


def _values(spec):
    datasets = spec["datasets"]
    assert len(datasets) == 1
    return next(iter(datasets.values()))


def test_convergence_draws_one_line_per_run_on_a_log_scale():
    a = _trace("admm", [1.0, 0.1, 0.01])
    b = _trace("admm_graph", [2.0, 0.5, 0.0, 0.1])  # a zero gap cannot sit on a log axis
    spec = viz.convergence([a, b]).to_dict()
    assert spec["mark"]["type"] == "line"
    enc = spec["encoding"]
    assert enc["x"]["field"] == "iteration" and enc["x"]["title"] == "iteration k"
    assert enc["y"]["field"] == "value" and enc["y"]["scale"]["type"] == "log"
    assert "F(xₖ) − F(x*)" in enc["y"]["title"]
    assert enc["color"]["field"] == "run"
    assert {t["field"] for t in enc["tooltip"]} >= {"run", "iteration", "value"}
    rows = _values(spec)
    assert len(rows) == 3 + 3
    assert sorted({r["run"] for r in rows}) == ["ADMM (network)", "admm"]  # the book's name of admm_graph
    assert [r["value"] for r in rows if r["run"] == "ADMM (network)"] == [2.0, 0.5, 0.1]


def test_labels_from_a_dict_and_repeated_names_are_numbered():
    a, b = _trace("admm", [1, 0.5]), _trace("admm", [1, 0.2])
    rows = _values(viz.objective_gap({"ρ = 0.1": a, "ρ = 1": b}).to_dict())
    assert sorted({r["run"] for r in rows}) == ["ρ = 0.1", "ρ = 1"]
    rows = _values(viz.objective_gap([a, b]).to_dict())
    assert sorted({r["run"] for r in rows}) == ["admm (1)", "admm (2)"]


def test_time_axis_spreads_wall_time_over_iterations():
    spec = viz.convergence(_trace("admm", [1, 0.5, 0.25, 0.125], wall_time=2.0), x="time").to_dict()
    assert spec["encoding"]["x"]["field"] == "time"
    assert [r["time"] for r in _values(spec)] == pytest.approx([0.5, 1.0, 1.5, 2.0])


def test_accuracy_and_consensus_charts():
    t = _trace("admm_graph", [1, 0.1], accuracy=[0.7, 0.8], consensus=[0.3, 0.03])
    acc = viz.accuracy(t).to_dict()
    assert acc["encoding"]["y"]["scale"].get("type", "linear") == "linear" and acc["encoding"]["y"]["title"] == "test accuracy"
    assert [r["value"] for r in _values(acc)] == [0.7, 0.8]
    cons = viz.consensus(t).to_dict()
    assert cons["encoding"]["y"]["scale"]["type"] == "log" and "consensus" in cons["encoding"]["y"]["title"]
    assert [r["value"] for r in _values(cons)] == [0.3, 0.03]


def test_a_missing_metric_names_the_choices():
    with pytest.raises(ValueError, match="metric"):
        viz.consensus(_trace("admm", [1, 0.1]))
    with pytest.raises(ValueError, match="traces"):
        viz.convergence([])
    with pytest.raises(ValueError, match="x must be"):
        viz.convergence(_trace("admm", [1.0]), x="seconds")


def test_topology_chart_has_one_segment_per_edge_and_one_dot_per_agent():
    n = 5
    angles = 2 * np.pi * np.arange(n) / n
    ring = SimpleNamespace(layout=np.c_[np.cos(angles), np.sin(angles)],
                           edges=np.array([[i, (i + 1) % n] for i in range(n)]),
                           degrees=np.full(n, 2))
    spec = viz.topology_chart(ring, values=np.arange(n) / 10, value_title="distance").to_dict()
    edges_layer, nodes_layer = spec["layer"]
    assert edges_layer["mark"]["type"] == "rule" and nodes_layer["mark"]["type"] == "circle"
    assert {"x", "y", "x2", "y2"} <= set(edges_layer["encoding"])
    assert nodes_layer["encoding"]["color"]["field"] == "distance"
    data = spec["datasets"]
    sizes = sorted(len(v) for v in data.values())
    assert sizes == [n, n]  # five edges, five agents
    edge_rows = data[edges_layer["data"]["name"]]
    assert edge_rows[0]["x"] == pytest.approx(1.0) and edge_rows[0]["x2"] == pytest.approx(np.cos(angles[1]))
    with pytest.raises(ValueError, match="values"):
        viz.topology_chart(ring, values=[1, 2])


def test_topology_chart_of_a_real_grid():
    from dpadmm_lite import topology

    g = topology.make("grid", 9)
    spec = viz.topology_chart(g).to_dict()
    edges_layer, nodes_layer = spec["layer"]
    edge_rows = spec["datasets"][edges_layer["data"]["name"]]
    node_rows = spec["datasets"][nodes_layer["data"]["name"]]
    assert len(edge_rows) == g.n_edges == 12 and len(node_rows) == 9
    assert sorted(r["degree"] for r in node_rows) == sorted(g.degrees.tolist())


@pytest.mark.parametrize("raw, shown", [
    ("F(x_t^DP) – F(x_t)", "F(xₜᴰᴾ) – F(xₜ)"),
    ("test_accuracy", "test accuracy"),
    ("n_agents", "n agents"),
    (r"$\sigma_{i,k}$", "σᵢ,ₖ"),
    ("test objective F_test(z_k)", "test objective Fₜₑₛₜ(zₖ)"),
    (r"A^{\top}A", "AᵀA"),
    ("small_world", "small world"),
])
def test_typeset_turns_tex_like_titles_into_unicode(raw, shown):
    assert viz.typeset(raw) == shown


def test_chart_titles_are_typeset():
    spec = viz.convergence(_trace("admm", [1.0, 0.1]), metric="objective_gap", title="gap of x_t^DP").to_dict()
    assert spec["title"] == "gap of xₜᴰᴾ"
    from dpadmm_lite import topology

    spec = viz.topology_chart(topology.make("ring", 4), title=["small_world", "λ₂ = 1"]).to_dict()
    assert spec["title"] == ["small world", "λ₂ = 1"]
