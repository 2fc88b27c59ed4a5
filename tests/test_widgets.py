"""The standard control panel: which controls appear, coalesced re-runs, in-place chart updates,
caching, progress, headless execution; the chart widget that draws offline in JupyterLab."""

import math
import time

import altair as alt
import ipywidgets as w
import nbformat
import numpy as np
import pandas as pd
import pytest
from nbclient import NotebookClient

from dpadmm_book import widgets
from dpadmm_book.viz import _widget as vizw


def _chart(values):
    frame = pd.DataFrame({"k": [1, 2, 3], "v": [values.get("rho", 1.0)] * 3})
    return alt.Chart(frame).mark_line().encode(x="k:Q", y="v:Q")


class Counter:
    def __init__(self, result=None):
        self.calls = []
        self.result = result

    def __call__(self, values):
        self.calls.append(dict(values))
        return self.result(values) if self.result else (_chart(values), f"ρ = {values.get('rho')}")


def test_only_the_given_controls_appear_with_their_defaults():
    compute = Counter()
    panel = widgets.live(compute, rho=0.5, topology="grid", iterations=40)
    assert set(panel.controls) == {"rho", "topology", "iterations"}
    assert panel.values() == {"rho": pytest.approx(0.5), "topology": "grid", "iterations": 40}
    assert isinstance(panel.controls["rho"], w.FloatLogSlider)
    assert panel.controls["rho"].min == pytest.approx(-3) and panel.controls["rho"].max == pytest.approx(2)
    assert isinstance(panel.controls["topology"], w.Dropdown)
    assert dict(panel.controls["topology"].options) == {"star": "star", "ring": "ring", "grid": "grid",
                                                        "complete": "complete", "Erdős–Rényi": "erdos_renyi",
                                                        "small world": "small_world"}  # book's name → value
    assert len(compute.calls) == 1 and panel.runs == 1  # rendered once, synchronously, with the defaults
    assert compute.calls[0]["rho"] == pytest.approx(0.5)


def test_every_standard_control_and_its_range():
    panel = widgets.live(Counter(), epsilon=1.0, delta=1e-5, rho=1.0, nu=2.0, topology="ring", n_agents=10,
                         iterations=50, seed=3, regularizer="l1")
    c = panel.controls
    assert list(c) == ["epsilon", "delta", "rho", "nu", "topology", "n_agents", "iterations", "seed", "regularizer"]
    assert (c["epsilon"].slider.min, c["epsilon"].slider.max) == pytest.approx((-2, 1))
    assert (c["delta"].min, c["delta"].max) == pytest.approx((-8, -2))
    assert (c["nu"].min, c["nu"].max) == (0, 5)
    assert isinstance(c["n_agents"], w.IntSlider) and isinstance(c["iterations"], w.IntSlider)
    assert c["seed"].value == 3 and c["regularizer"].options == (("ℓ1", "l1"), ("ℓ2", "l2"))
    v = panel.values()
    assert v["epsilon"] == pytest.approx(1.0) and v["delta"] == pytest.approx(1e-5) and v["nu"] == 2.0


def test_a_panel_can_narrow_or_widen_a_standard_range():
    panel = widgets.live(Counter(), epsilon=1.0, iterations=30, n_agents=20,
                         ranges={"iterations": (1, 200), "epsilon": (0.1, 10), "n_agents": (2, 50)})
    c = panel.controls
    assert (c["iterations"].min, c["iterations"].max) == (1, 200) and (c["n_agents"].min, c["n_agents"].max) == (2, 50)
    assert (c["epsilon"].slider.min, c["epsilon"].slider.max) == pytest.approx((-1, 1))
    assert len(widgets.epsilon_values(0.1, 10)) == 41
    assert widgets.RANGES["iterations"] == (1, 500)  # the standard ranges are untouched
    for bad in ({"iterations": (200, 1)}, {"rho": (0.0, 1.0)}, {"speed": (1, 2)}, {"iterations": 200},
                {"iterations": (1, 2, 3)}):
        with pytest.raises(ValueError, match="ranges"):
            widgets.live(Counter(), iterations=30, rho=1.0, ranges=bad)


def test_epsilon_no_noise_toggle():
    panel = widgets.live(Counter(), epsilon=math.inf, debounce=0.0)
    assert panel.values()["epsilon"] == math.inf and panel.controls["epsilon"].slider.disabled
    panel.controls["epsilon"].toggle.value = False
    assert panel.values()["epsilon"] == pytest.approx(1.0)
    assert not panel.controls["epsilon"].slider.disabled


def test_advanced_controls_are_in_a_collapsed_accordion():
    custom = w.IntSlider(value=7, min=0, max=10)
    panel = widgets.live(Counter(), rho=1.0, advanced={"inner": 5, "tol": 1e-8, "exact": True, "solver": ["a", "b"],
                                                       "widget": custom})
    accordion = [c for c in panel.children if isinstance(c, w.Accordion)]
    assert len(accordion) == 1 and accordion[0].selected_index is None
    v = panel.values()
    assert v["inner"] == 5 and v["tol"] == 1e-8 and v["exact"] is True and v["solver"] == "a" and v["widget"] == 7
    with pytest.raises(ValueError, match="advanced"):
        widgets.live(Counter(), rho=1.0, advanced={"rho": 2.0})


def test_bad_defaults_name_the_parameter():
    with pytest.raises(ValueError, match="rho"):
        widgets.live(Counter(), rho=-1.0)
    with pytest.raises(ValueError, match="delta"):
        widgets.live(Counter(), delta=2.0)
    with pytest.raises(ValueError, match="topology"):
        widgets.live(Counter(), topology="torus")
    with pytest.raises(ValueError, match="compute"):
        widgets.live(None, rho=1.0)


def test_a_burst_of_changes_triggers_exactly_one_recompute_after_the_debounce():
    compute = Counter()
    panel = widgets.live(compute, rho=1.0, iterations=10, debounce=0.15)
    for value in (0.1, 0.2, 0.3):
        panel.controls["rho"].value = value
        time.sleep(0.02)
    panel.controls["iterations"].value = 20
    assert len(compute.calls) == 1  # nothing yet: still inside the quiet period
    time.sleep(0.05)
    assert len(compute.calls) == 1
    panel.wait()
    assert len(compute.calls) == 2
    assert compute.calls[-1]["rho"] == pytest.approx(0.3) and compute.calls[-1]["iterations"] == 20
    # the chart is updated in place: same structure, so only its rows were sent
    assert panel.area.children == (panel.chart,) and panel.last_update == "data"
    assert [r["v"] for r in next(iter(panel.chart.datasets.values()))] == [0.3] * 3
    assert "ρ = 0.3" in panel.status.value and "ms" in panel.status.value


def test_changes_during_a_run_coalesce_into_one_more_run_with_the_newest_values():
    def slow(values):
        time.sleep(0.3)
        return _chart(values)

    compute = Counter(slow)
    panel = widgets.live(compute, rho=1.0, debounce=0.0)
    panel.controls["rho"].value = 2.0
    time.sleep(0.1)  # the run for 2.0 is under way
    for value in (3.0, 4.0, 5.0):
        panel.controls["rho"].value = value
    panel.wait()
    assert [c["rho"] for c in compute.calls] == pytest.approx([1.0, 2.0, 5.0])
    assert panel.runs == 3 and next(iter(panel.chart.datasets.values()))[0]["v"] == pytest.approx(5.0)


def test_a_new_chart_structure_is_drawn_anew_and_rows_alone_are_swapped():
    def compute(values):
        frame = pd.DataFrame({"k": [1, 2, 3], "v": [values["rho"]] * 3})
        mark = alt.Chart(frame).mark_point() if values["topology"] == "star" else alt.Chart(frame).mark_line()
        return mark.encode(x="k:Q", y="v:Q")

    panel = widgets.live(compute, rho=1.0, topology="ring", debounce=0.0)
    assert panel.last_update == "spec" and panel.chart.spec["mark"]["type"] == "line"
    assert panel.chart.spec["data"] == {"name": "dpadmm_d0"} and "datasets" not in panel.chart.spec
    panel.controls["rho"].value = 2.0
    panel.wait()
    assert panel.last_update == "data"
    panel.controls["topology"].value = "star"
    panel.wait()
    assert panel.last_update == "spec" and panel.chart.spec["mark"]["type"] == "point"


def test_results_are_cached_per_setting():
    compute = Counter()
    panel = widgets.live(compute, rho=1.0, topology="ring", debounce=0.0)
    panel.controls["topology"].value = "star"
    panel.wait()
    panel.controls["topology"].value = "ring"  # back to a setting already computed
    panel.wait()
    assert len(compute.calls) == 2 and panel.runs == 2
    assert "cached" in panel.status.value and panel.chart.datasets == {"dpadmm_d0": [{"k": k, "v": 1.0} for k in (1, 2, 3)]}


def test_a_long_run_shows_progress_and_then_its_result():
    def slow(values):
        if values["rho"] > 1.5:
            time.sleep(0.6)
        return _chart(values), "done"

    panel = widgets.live(Counter(slow), rho=1.0, debounce=0.0)
    panel.controls["rho"].value = 2.0
    time.sleep(0.45)
    assert "computing" in panel.status.value
    panel.wait()
    assert "computing" not in panel.status.value and "done" in panel.status.value


def test_errors_are_shown_in_the_panel_and_the_old_chart_stays():
    def compute(values):
        if values["rho"] > 10:
            raise ValueError("rho too large for this demo")
        return _chart(values)

    panel = widgets.live(compute, rho=1.0, debounce=0.0)
    first = dict(panel.chart.datasets)
    panel.controls["rho"].value = 50.0
    panel.wait()
    assert panel.last_error is not None and "rho too large" in panel.last_error
    assert "rho too large" in panel.status.value and "Traceback" not in panel.status.value
    assert panel.chart.datasets == first
    panel.controls["rho"].value = 2.0  # and it recovers
    panel.wait()
    assert panel.last_error is None and panel.chart.datasets != first


def test_a_result_that_is_not_an_altair_chart_goes_to_an_output():
    panel = widgets.live(lambda v: (pd.DataFrame({"rho": [v["rho"]]}), "table"), rho=1.0, debounce=0.0)
    assert panel.chart is None and panel.area.children == (panel.output,) and panel.last_update == "output"
    assert len(panel.output.outputs) == 1 and "text/plain" in panel.output.outputs[0]["data"]


def test_split_datasets_names_rows_by_use_so_equal_structures_compare_equal():
    frame = pd.DataFrame({"k": [1, 2], "v": [3.0, 4.0]})
    a = alt.layer(alt.Chart(frame).mark_line().encode(x="k:Q", y="v:Q"),
                  alt.Chart(frame.assign(v=[5.0, 6.0])).mark_point().encode(x="k:Q", y="v:Q")).to_dict()
    b = alt.layer(alt.Chart(frame.assign(v=[7.0, 8.0])).mark_line().encode(x="k:Q", y="v:Q"),
                  alt.Chart(frame).mark_point().encode(x="k:Q", y="v:Q")).to_dict()
    sa, da = vizw.split_datasets(a)
    sb, db = vizw.split_datasets(b)
    assert sa == sb and set(da) == set(db) == {"dpadmm_d0", "dpadmm_d1"}
    assert [r["v"] for r in db["dpadmm_d0"]] == [7.0, 8.0] and [r["v"] for r in da["dpadmm_d1"]] == [5.0, 6.0]
    assert "datasets" in a  # the input is left as it was


def test_the_chart_widget_ships_its_javascript_and_refers_to_one_vega_bundle():
    one, two = vizw.VegaChart(), vizw.VegaChart()
    assert one.bundle is two.bundle and "vegaEmbed" in one.bundle.source and len(one.bundle.source) > 100_000
    assert "https://" not in vizw.VegaChart._esm and "http://" not in vizw.VegaChart._esm
    assert "import(" in vizw.VegaChart._esm and "dpadmmReadouts" in vizw.VegaChart._esm
    assert one.bundle_version == alt.SCHEMA_VERSION.rsplit(".", 1)[0]


def test_headless_execution_renders_once_and_returns():
    """A notebook with a live cell executes under nbclient (as papermill does) without hanging."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import threading, altair as alt, pandas as pd\n"
            "from dpadmm_book import widgets\n"
            "calls = []\n"
            "def compute(v):\n"
            "    calls.append(v)\n"
            "    return alt.Chart(pd.DataFrame({'x': [1, 2]})).mark_point().encode(x='x:Q'), 'privacy: none'\n"
            "panel = widgets.live(compute, rho=1.0, topology='ring', iterations=20)\n"
            "panel"
        ),
        # no thread of ours (zmq's garbage collector may start when a large message is sent)
        nbformat.v4.new_code_cell("print(len(calls), [t.name for t in threading.enumerate() if t.ident not in "
                                  "threads_before_live and type(t).__name__ != 'GarbageCollectorThread'])"),
        nbformat.v4.new_code_cell("import dpadmm_book as book\nbook.viz.use_book_theme()\n"
                                  "alt.Chart(pd.DataFrame({'x': [1, 2]})).mark_point().encode(x='x:Q')"),
    ]
    nb.cells.insert(0, nbformat.v4.new_code_cell("import threading\nthreads_before_live = {t.ident for t in threading.enumerate()}"))
    start = time.perf_counter()
    NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    assert time.perf_counter() - start < 60
    printed = "".join(o.get("text", "") for o in nb.cells[2].outputs)
    assert printed.strip() == "1 []"
    # the panel itself was displayed as a widget view
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in nb.cells[1].outputs)
    # a static chart under the book's renderer: a chart widget for JupyterLab and the spec for the site
    (chart_output,) = nb.cells[3].outputs
    assert {"application/vnd.jupyter.widget-view+json", "application/vnd.vegalite.v6+json", "text/plain"} == set(chart_output["data"])
    assert "text/html" not in chart_output["data"]  # Altair's HTML would load Vega from a CDN


def test_a_panel_that_fails_at_its_defaults_raises_so_the_notebook_run_fails():
    def broken(values):
        raise TypeError("non_private() got an unexpected keyword argument 'seed'")

    with pytest.raises(TypeError, match="unexpected keyword"):
        widgets.live(broken, rho=1.0)


def test_a_control_that_changes_nothing_still_reports_a_redraw():
    panel = widgets.live(lambda v: _chart({"rho": 1.0}), rho=1.0, topology="ring", debounce=0.0)
    revision = panel.chart.revision
    panel.controls["topology"].value = "star"  # this compute ignores the topology
    panel.wait()
    assert panel.last_update == "same" and panel.chart.revision == revision + 1


def test_a_panel_that_precomputes_its_field_can_take_a_coarser_epsilon_slider():
    panel = widgets.live(Counter(), epsilon=1.0, epsilon_step=0.2)
    slider = panel.controls["epsilon"].slider
    positions = np.arange(slider.min, slider.max + slider.step / 2, slider.step)
    values = widgets.epsilon_values(step=0.2)
    assert len(values) == 16 and np.allclose(values, 10.0 ** positions, rtol=1e-12)  # exactly the slider's values
    assert 1.0 in np.round(values, 12) and len(widgets.epsilon_values()) == 61  # the standard slider is unchanged
    for bad in (0.0, 2.0, -0.1):
        with pytest.raises(ValueError, match="epsilon_step"):
            widgets.live(Counter(), epsilon=1.0, epsilon_step=bad)
        with pytest.raises(ValueError, match="step must be in"):
            widgets.epsilon_values(step=bad)
