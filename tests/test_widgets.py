"""The standard control panel: which controls appear, debounced re-runs, headless execution."""

import math
import threading
import time

import altair as alt
import ipywidgets as w
import nbformat
import pandas as pd
import pytest
from nbclient import NotebookClient

from dpadmm_lite import widgets


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
    assert {"star", "ring", "grid", "complete", "erdos_renyi", "small_world"} <= set(panel.controls["topology"].options)
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
    assert c["seed"].value == 3 and c["regularizer"].options == ("l1", "l2")
    v = panel.values()
    assert v["epsilon"] == pytest.approx(1.0) and v["delta"] == pytest.approx(1e-5) and v["nu"] == 2.0


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
    time.sleep(0.05)
    assert len(compute.calls) == 2
    assert compute.calls[-1]["rho"] == pytest.approx(0.3) and compute.calls[-1]["iterations"] == 20
    # the chart is replaced in place: the output holds exactly one chart, the new one
    assert len(panel.output.outputs) == 1
    assert "ρ = 0.3" in panel.status.value and "ms" in panel.status.value


def test_errors_are_shown_in_the_panel_and_the_old_chart_stays():
    def compute(values):
        if values["rho"] > 10:
            raise ValueError("rho too large for this demo")
        return _chart(values)

    panel = widgets.live(compute, rho=1.0, debounce=0.0)
    first = panel.output.outputs
    panel.controls["rho"].value = 50.0
    panel.wait()
    time.sleep(0.02)
    assert panel.last_error is not None and "rho too large" in panel.last_error
    assert "rho too large" in panel.status.value and "Traceback" not in panel.status.value
    assert panel.output.outputs == first
    panel.controls["rho"].value = 2.0  # and it recovers
    panel.wait()
    time.sleep(0.02)
    assert panel.last_error is None and panel.output.outputs != first


def test_headless_execution_renders_once_and_returns():
    """A notebook with a live cell executes under nbclient (as papermill does) without hanging."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import threading, altair as alt, pandas as pd\n"
            "from dpadmm_lite import widgets\n"
            "calls = []\n"
            "def compute(v):\n"
            "    calls.append(v)\n"
            "    return alt.Chart(pd.DataFrame({'x': [1, 2]})).mark_point().encode(x='x:Q'), 'privacy: none'\n"
            "panel = widgets.live(compute, rho=1.0, topology='ring', iterations=20)\n"
            "panel"
        ),
        nbformat.v4.new_code_cell("print(len(calls), threading.active_count() == threads_before_live)"),
    ]
    nb.cells.insert(0, nbformat.v4.new_code_cell("import threading\nthreads_before_live = threading.active_count()"))
    start = time.perf_counter()
    NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    assert time.perf_counter() - start < 60
    printed = "".join(o.get("text", "") for o in nb.cells[2].outputs)
    assert printed.strip() == "1 True"
    # the panel itself was displayed as a widget view
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in nb.cells[1].outputs)
    assert threading.active_count() >= 1
