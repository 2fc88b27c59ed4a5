"""sweep.grid (cache, progress, tidy output), viz.sweep_chart (widgets that filter the grid) and
the book's chart renderer / MyST-NB plugin."""

from __future__ import annotations

import json

import altair as alt
import numpy as np
import pandas as pd
import pytest
import vl_convert

import dpadmm_lite as dl
from dpadmm_lite import _book

CALLS = []


def _task(epsilon, rho, seed):
    CALLS.append((epsilon, rho, seed))
    return [{"iteration": k, "gap": 1.0 / (k * epsilon * rho) + seed} for k in (1, 2)]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DPADMM_CACHE", str(tmp_path))
    CALLS.clear()
    return tmp_path


def test_grid_runs_every_setting_and_seed_into_a_tidy_frame(cache):
    frame = dl.sweep.grid(_task, {"epsilon": [0.1, 1.0], "rho": [1.0, 2.0, 4.0]}, seeds=(0, 1), name="t", progress=False)
    assert len(CALLS) == 2 * 3 * 2
    assert len(frame) == 2 * 3 * 2 * 2
    assert set(frame.columns) == {"iteration", "gap", "epsilon", "rho", "seed"}
    row = frame[(frame.epsilon == 0.1) & (frame.rho == 2.0) & (frame.seed == 1) & (frame.iteration == 2)]
    assert row["gap"].item() == pytest.approx(1 / (2 * 0.1 * 2.0) + 1)


def test_grid_reuses_its_cache_and_reruns_when_the_grid_changes(cache):
    first = dl.sweep.grid(_task, {"epsilon": [0.1], "rho": [1.0]}, name="t", progress=False)
    again = dl.sweep.grid(_task, {"epsilon": [0.1], "rho": [1.0]}, name="t", progress=False)
    assert len(CALLS) == 1
    pd.testing.assert_frame_equal(first, again)
    dl.sweep.grid(_task, {"epsilon": [0.2], "rho": [1.0]}, name="t", progress=False)
    assert len(CALLS) == 2
    assert len(list(cache.glob("t-*.pkl"))) == 2


def test_grid_in_parallel_equals_serial(cache):
    grid = {"epsilon": [0.1, 1.0], "rho": [1.0]}
    serial = dl.sweep.grid(_task, grid, seeds=(0, 1), name="s", cache=False, progress=False)
    parallel = dl.sweep.grid(_task, grid, seeds=(0, 1), name="p", cache=False, progress=False, n_jobs=2)
    pd.testing.assert_frame_equal(serial, parallel)


def test_grid_rejects_bad_arguments(cache):
    with pytest.raises(ValueError, match="grid must name"):
        dl.sweep.grid(_task, {}, name="t")
    with pytest.raises(ValueError, match="epsilon"):
        dl.sweep.grid(_task, {"epsilon": []}, name="t")
    with pytest.raises(ValueError, match="task must return"):
        dl.sweep.grid(lambda epsilon, seed: 3.0, {"epsilon": [1.0]}, name="bad", progress=False)


def _frame():
    rows = [dict(epsilon=e, rho=r, topology=t, iteration=k, gap=(1 + (t == "star")) / (k * e * r), algorithm=a)
            for e in (0.01, 0.1, 1.0) for r in (0.5, 1.0, 1.5) for t in ("ring", "star") for k in (1, 2, 3) for a in ("A", "B")]
    return pd.DataFrame(rows)


def _params(spec):
    return {p["name"]: p for p in spec.get("params", [])}


def test_sweep_chart_binds_log_slider_linear_slider_and_select():
    spec = dl.viz.sweep_chart(_frame(), x="iteration", y="gap", color="algorithm",
                              sliders=["epsilon", "rho"], selects=["topology"], log_y=True).to_dict()
    params = _params(spec)
    eps, rho, top = params["p_epsilon"], params["p_rho"], params["p_topology"]
    assert eps["bind"]["input"] == "range" and (eps["bind"]["min"], eps["bind"]["max"], eps["bind"]["step"]) == (-2, 0, 1)
    assert "log₁₀ ε" in eps["bind"]["name"] and eps["value"] == -2
    assert rho["bind"]["input"] == "range" and (rho["bind"]["min"], rho["bind"]["max"]) == (0.5, 1.5)
    assert top["bind"]["input"] == "select" and top["bind"]["options"] == ["ring", "star"]


def test_sweep_chart_filters_select_exactly_one_grid_point_per_line():
    frame = _frame()
    chart = dl.viz.sweep_chart(frame, x="iteration", y="gap", color="algorithm", sliders=["epsilon", "rho"],
                               selects=["topology"], defaults={"epsilon": 0.1, "rho": 1.0, "topology": "star"})
    spec = chart.to_dict()
    params = _params(spec)
    assert params["p_epsilon"]["value"] == pytest.approx(-1) and params["p_topology"]["value"] == "star"
    # Evaluate the layer's filter expressions in Python for the default values.
    filters = [t["filter"] for t in spec["layer"][0]["transform"] if "filter" in t]
    env = {"p_epsilon": -1.0, "p_rho": 1.0, "p_topology": "star"}
    data = pd.DataFrame(spec["datasets"][spec["layer"][0]["data"]["name"]])
    keep = np.ones(len(data), bool)
    for expr in filters:
        py = expr.replace("datum[", "data[").replace("abs(", "np.abs(")
        keep &= np.asarray(eval(py, {"np": np, "data": data, **env}))
    chosen = data[keep]
    assert len(chosen) == 3 * 2  # 3 iterations x 2 algorithms
    assert set(chosen.epsilon) == {0.1} and set(chosen.rho) == {1.0} and set(chosen.topology) == {"star"}
    # and Vega accepts the spec
    vg = vl_convert.vegalite_to_vega(json.dumps(spec))
    assert {s["name"] for s in vg["signals"]} >= {"p_epsilon", "p_rho", "p_topology"}


def test_sweep_chart_uses_a_select_for_an_uneven_grid_and_names_missing_columns():
    frame = _frame()
    frame = frame[frame.rho != 1.0].copy()
    frame.loc[frame.rho == 1.5, "rho"] = 7.0  # 0.5, 7.0: evenly spaced; add a third uneven value
    extra = frame[frame.rho == 7.0].assign(rho=8.0)
    spec = dl.viz.sweep_chart(pd.concat([frame, extra]), x="iteration", y="gap", sliders=["rho"]).to_dict()
    assert _params(spec)["p_rho"]["bind"]["input"] == "select"
    with pytest.raises(ValueError, match=r"columns \['nope'\]"):
        dl.viz.sweep_chart(frame, x="iteration", y="nope")


def test_sweep_chart_draws_with_vega():
    svg = vl_convert.vegalite_to_svg(dl.viz.sweep_chart(_frame(), x="iteration", y="gap", color="algorithm",
                                                       sliders=["epsilon"], band=("gap", "gap")).to_json())
    assert svg.count("<path") > 3 and "ε = 0.01" in svg


def test_book_renderer_puts_the_spec_in_the_output_and_the_plugin_draws_it():
    dl.viz.use_book_theme()
    chart = alt.Chart(pd.DataFrame({"a": [1, 2]})).mark_point().encode(x="a")
    bundle = chart._repr_mimebundle_()
    bundle = bundle[0] if isinstance(bundle, tuple) else bundle
    spec = bundle[_book.VEGALITE_MIMES[0]]
    assert spec["mark"]["type"] == "point" and "text/html" in bundle

    class Data:
        mime_type = _book.VEGALITE_MIMES[0]
        content = spec
        cell_index, output_index = 3, 0

    (node,) = _book.VegaLiteRenderer.handle_mime(None, Data, inline=False)
    html = node.astext()
    assert 'class="dpadmm-vega"' in html and "dpadmm-vega-spec" in html and "http" not in html.split("<script")[0]
    payload = html.split('">', 2)[2].rsplit("</script>", 1)[0]
    assert json.loads(payload.replace("<\\/", "</")) == spec
    assert _book.VegaLiteRenderer.handle_mime(None, Data, inline=True) is None


def test_chart_html_cannot_be_broken_out_of_by_data():
    html = _book.chart_html({"data": {"values": [{"s": "</script><script>alert(1)</script>"}]}})
    assert html.count("</script>") == 1
