"""sweep.grid (cache, progress, tidy output), viz.sweep_chart (widgets that filter the grid) and
the book's chart renderer / MyST-NB plugin."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd
import pytest
import vl_convert

import dpadmm_book as book
from dpadmm_book import _book

#: File the task notes its calls in (set per test): a list it appended to would be a value the
#: task reads, so part of the sweep's cache key, and every call would change the key.
CALLS_LOG: Path | None = None


def _task(epsilon, rho, seed):
    if CALLS_LOG is not None:
        with open(CALLS_LOG, "a") as log:
            log.write(f"{epsilon} {rho} {seed}\n")
    return [{"iteration": k, "gap": 1.0 / (k * epsilon * rho) + seed} for k in (1, 2)]


def _calls() -> int:
    return len(CALLS_LOG.read_text().splitlines()) if CALLS_LOG.exists() else 0


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DPADMM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(sys.modules[__name__], "CALLS_LOG", tmp_path / "calls.log")
    monkeypatch.setattr(book.sweep._hashing, "_LIBRARY_SNAPSHOT", {})  # the library as of this test (a shared tree changes)
    return tmp_path / "cache"


def test_grid_runs_every_setting_and_seed_into_a_tidy_frame(cache):
    frame = book.sweep.grid(_task, {"epsilon": [0.1, 1.0], "rho": [1.0, 2.0, 4.0]}, seeds=(0, 1), name="t", progress=False)
    assert _calls() == 2 * 3 * 2
    assert len(frame) == 2 * 3 * 2 * 2
    assert set(frame.columns) == {"iteration", "gap", "epsilon", "rho", "seed"}
    row = frame[(frame.epsilon == 0.1) & (frame.rho == 2.0) & (frame.seed == 1) & (frame.iteration == 2)]
    assert row["gap"].item() == pytest.approx(1 / (2 * 0.1 * 2.0) + 1)


def test_grid_reuses_its_cache_and_reruns_when_the_grid_changes(cache):
    first = book.sweep.grid(_task, {"epsilon": [0.1], "rho": [1.0]}, name="t", progress=False)
    again = book.sweep.grid(_task, {"epsilon": [0.1], "rho": [1.0]}, name="t", progress=False)
    assert _calls() == 1
    pd.testing.assert_frame_equal(first, again)
    book.sweep.grid(_task, {"epsilon": [0.2], "rho": [1.0]}, name="t", progress=False)
    assert _calls() == 2
    assert len(list(cache.glob("t-*.parquet"))) == 2


def test_grid_in_parallel_equals_serial(cache):
    grid = {"epsilon": [0.1, 1.0], "rho": [1.0]}
    serial = book.sweep.grid(_task, grid, seeds=(0, 1), name="s", cache=False, progress=False)
    parallel = book.sweep.grid(_task, grid, seeds=(0, 1), name="p", cache=False, progress=False, n_jobs=2)
    pd.testing.assert_frame_equal(serial, parallel)


def test_grid_rejects_bad_arguments(cache):
    with pytest.raises(ValueError, match="grid must name"):
        book.sweep.grid(_task, {}, name="t")
    with pytest.raises(ValueError, match="epsilon"):
        book.sweep.grid(_task, {"epsilon": []}, name="t")
    with pytest.raises(ValueError, match="task must return"):
        book.sweep.grid(lambda epsilon, seed: 3.0, {"epsilon": [1.0]}, name="bad", progress=False)


def _frame():
    rows = [dict(epsilon=e, rho=r, topology=t, iteration=k, gap=(1 + (t == "star")) / (k * e * r), algorithm=a)
            for e in (0.01, 0.1, 1.0) for r in (0.5, 1.0, 1.5) for t in ("ring", "star") for k in (1, 2, 3) for a in ("A", "B")]
    return pd.DataFrame(rows)


def _params(spec):
    return {p["name"]: p for p in spec.get("params", [])}


def _grid_value(spec, param):
    """The grid value a slider's position stands for (the grid literal in its filter expression)."""
    for layer in spec["layer"]:
        for t in layer.get("transform", []):
            expr = t.get("filter", "")
            if isinstance(expr, str) and f"[{param}]" in expr:
                grid = json.loads(expr[expr.index("- [") + 2:expr.index(f"][{param}]") + 1])
                return grid
    raise AssertionError(f"no filter uses {param}")


def test_sweep_chart_slides_over_grid_positions_and_shows_values():
    spec = book.viz.sweep_chart(_frame(), x="iteration", y="gap", color="algorithm",
                              sliders=["epsilon", "rho"], selects=["topology"], log_y=True).to_dict()
    params = _params(spec)
    eps, rho, top = params["p_epsilon"], params["p_rho"], params["p_topology"]
    # integer steps over the positions 0 … n − 1: every value is reachable, whatever the grid
    assert eps["bind"]["input"] == "range" and (eps["bind"]["min"], eps["bind"]["max"], eps["bind"]["step"]) == (0, 2, 1)
    assert eps["bind"]["name"] == "ε " and eps["value"] == 0
    assert params["p_epsilon__labels"]["value"] == ["0.01", "0.1", "1"]  # the readout shows the value, not its log
    assert _grid_value(spec, "p_epsilon") == [0.01, 0.1, 1.0]
    assert (rho["bind"]["min"], rho["bind"]["max"], rho["bind"]["step"]) == (0, 2, 1)
    assert top["bind"]["input"] == "select" and top["bind"]["options"] == ["ring", "star"]


@pytest.mark.parametrize("grid", [[0.05, 0.2], [0.1, 0.2, 0.3], [1e-6, 1e-5, 1e-3], [0.5, 7.0, 8.0]])
def test_every_grid_value_is_reachable_by_the_slider(grid):
    """The bug this replaces: a step of 0.15000000000000002 over [0.05, 0.2] could not reach 0.2."""
    frame = pd.DataFrame([dict(nu=v, iteration=k, gap=v * k) for v in grid for k in (1, 2)])
    spec = book.viz.sweep_chart(frame, x="iteration", y="gap", sliders=["nu"]).to_dict()
    bind = _params(spec)["p_nu"]["bind"]
    positions = range(bind["min"], bind["max"] + 1, bind["step"])
    assert [_grid_value(spec, "p_nu")[i] for i in positions] == grid


def test_sweep_chart_filters_select_exactly_one_grid_point_per_line():
    frame = _frame()
    chart = book.viz.sweep_chart(frame, x="iteration", y="gap", color="algorithm", sliders=["epsilon", "rho"],
                               selects=["topology"], defaults={"epsilon": 0.1, "rho": 1.0, "topology": "star"})
    spec = chart.to_dict()
    params = _params(spec)
    assert params["p_epsilon"]["value"] == 1 and params["p_rho"]["value"] == 1 and params["p_topology"]["value"] == "star"
    # Evaluate the layer's filter expressions in Python for the default values.
    filters = [t["filter"] for t in spec["layer"][0]["transform"] if "filter" in t]
    env = {"p_epsilon": 1, "p_rho": 1, "p_topology": "star"}
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
    assert {s["name"] for s in vg["signals"]} >= {"p_epsilon", "p_rho", "p_topology", "p_epsilon__labels"}


def test_sweep_chart_checks_defaults_and_names_missing_columns():
    with pytest.raises(ValueError, match=r"defaults\['rho'\] must be one of the grid values"):
        book.viz.sweep_chart(_frame(), x="iteration", y="gap", sliders=["rho"], defaults={"rho": 0.7})
    with pytest.raises(ValueError, match=r"columns \['nope'\]"):
        book.viz.sweep_chart(_frame(), x="iteration", y="nope")
    one = book.viz.sweep_chart(_frame()[_frame().rho == 1.0], x="iteration", y="gap", sliders=["rho"]).to_dict()
    assert "p_rho" not in _params(one)  # one value: no slider, the caption names it


def test_log_axes_never_include_zero_and_titles_are_typeset():
    frame = _frame()
    frame.loc[frame.iteration == 3, "gap"] = 0.0  # a gap at the optimum to rounding
    frame["lo"], frame["hi"] = frame["gap"] - 1.0, frame["gap"] + 1.0
    frame["test_accuracy"] = 0.5
    spec = book.viz.sweep_chart(frame, x="iteration", y="gap", color="algorithm", sliders=["epsilon"], band=("lo", "hi"),
                              log_y=True, titles={"gap": "F(x_t^DP) − F(x_t)"}).to_dict()
    rows = spec["datasets"][spec["layer"][1]["data"]["name"]] if "data" in spec["layer"][1] else next(iter(spec["datasets"].values()))
    assert min(r["gap"] for r in rows) > 0 and min(r["lo"] for r in rows) > 0
    line = spec["layer"][1]
    assert line["encoding"]["y"]["title"] == "F(xₜᴰᴾ) − F(xₜ)"
    acc = book.viz.sweep_chart(frame, x="iteration", y="test_accuracy", sliders=["epsilon"]).to_dict()
    assert acc["layer"][0]["encoding"]["y"]["title"] == "test accuracy"


def test_sweep_chart_draws_with_vega():
    svg = vl_convert.vegalite_to_svg(book.viz.sweep_chart(_frame(), x="iteration", y="gap", color="algorithm",
                                                       sliders=["epsilon"], band=("gap", "gap")).to_json())
    assert svg.count("<path") > 3 and "ε = 0.01" in svg


def test_book_renderer_puts_the_spec_in_the_output_and_the_plugin_draws_it():
    book.viz.use_book_theme()
    chart = alt.Chart(pd.DataFrame({"a": [1, 2]})).mark_point().encode(x="a")
    bundle = chart._repr_mimebundle_()
    bundle = bundle[0] if isinstance(bundle, tuple) else bundle
    spec = bundle[_book.VEGALITE_MIMES[0]]
    assert spec["mark"]["type"] == "point"
    # no HTML (Altair's loads Vega from a CDN); outside a kernel no chart widget either
    assert set(bundle) == {_book.VEGALITE_MIMES[0], "text/plain"}

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


def test_drop_downs_that_do_not_all_combine_become_one_of_the_combinations_the_grid_has():
    rows = [{"task": task, "algorithm": alg, "epsilon": e, "utility": u}
            for task, algs in {"lasso": ["a", "b"], "logistic": ["a", "b", "c"]}.items()
            for alg in algs for e, u in ((0.1, 1.0), (1.0, 0.5))]
    spec = book.viz.sweep_chart(pd.DataFrame(rows), x="epsilon", y="utility", selects=["task", "algorithm"],
                              defaults={"task": "lasso", "algorithm": "b"}).to_dict()
    binds = [p for p in spec["params"] if "bind" in p]
    assert len(binds) == 1, "one drop-down of the combinations, not two that can pick lasso · c"
    assert binds[0]["bind"]["options"] == ["lasso · a", "lasso · b", "logistic · a", "logistic · b", "logistic · c"]
    assert binds[0]["value"] == "lasso · b"
    full = [dict(r, task=t) for r in rows if r["task"] == "logistic" for t in ("lasso", "logistic")]
    spec = book.viz.sweep_chart(pd.DataFrame(full), x="epsilon", y="utility", selects=["task", "algorithm"]).to_dict()
    assert len([p for p in spec["params"] if "bind" in p]) == 2  # every pair exists: two drop-downs


def test_a_slider_position_without_rows_for_some_choice_is_refused():
    rows = [{"task": t, "epsilon": e, "rho": r, "utility": 1.0} for t in ("a", "b") for e in (0.1, 1.0)
            for r in (0.1, 1.0) if not (t == "b" and e == 1.0)]
    with pytest.raises(ValueError, match="epsilon = \\[1.0\\].*'task': 'b'"):
        book.viz.sweep_chart(pd.DataFrame(rows), x="rho", y="utility", sliders=["epsilon"], selects=["task"])
