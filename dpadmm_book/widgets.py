"""The standard control panel and the live re-run loop of the book.

One call builds the panel of a chapter's live cell::

    def compute(v):
        trace = dl.run("admm_graph", problem, rho=v["rho"], iterations=v["iterations"],
                       topology=v["topology"], n_agents=v["n_agents"])
        return book.viz.objective_gap([trace]), trace.summary()

    book.widgets.live(compute, rho=1.0, topology="ring", n_agents=10, iterations=50)

Only the controls you pass appear, each starting at the value you pass. When a control moves,
``compute`` re-runs (changes that arrive meanwhile are coalesced into one more run) and its chart
is updated in place: when the new chart has the same structure as the one shown, only its rows go
to the page and are swapped into the live Vega view (no re-embedding). The chart is drawn by the
Vega bundle the kernel ships (:class:`dpadmm_book.viz.VegaChart`), so JupyterLab needs no
network. Under the chart: the run time in ms and the text ``compute`` returned (e.g. the privacy
spent), or "computing …" while a run takes long. ``compute`` should be a pure function of the
values: results are cached per setting.

Executed headless (papermill, nbclient: no browser, nobody moves a slider) the cell computes
once with the defaults, renders that chart into the panel and returns; no thread is started until
a control actually changes.
"""

from __future__ import annotations

import html
import math
import sys
import threading
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import anywidget
import ipywidgets as w
import numpy as np

from dpadmm_lite import _validate as check
from dpadmm_lite import topology

#: In Pyodide (the JupyterLite edition) a thread cannot start: a panel re-runs in the kernel's own
#: turn, when the control's message arrives (the kernel handles one message at a time anyway).
_NO_THREADS = sys.platform == "emscripten"

__all__ = ["live", "LivePanel", "TOPOLOGIES", "EPSILON_STEP", "epsilon_values"]

#: The topology names offered by the drop-down (those of :func:`dpadmm_lite.topology.make`).
TOPOLOGIES = topology.NAMES

#: Slider ranges: (min, max) of the value (log sliders: of the value itself, not its log).
RANGES = {
    "epsilon": (0.01, 10.0),
    "delta": (1e-8, 1e-2),
    "rho": (1e-3, 1e2),
    "nu": (0.0, 5.0),
    "n_agents": (2, 100),
    "iterations": (1, 500),
}

#: Step of the ε slider in log₁₀ units: ε moves by a factor 10^0.05 ≈ 1.12 per step.
EPSILON_STEP = 0.05


def epsilon_values(lo: float = RANGES["epsilon"][0], hi: float = RANGES["epsilon"][1],
                   step: float = EPSILON_STEP) -> np.ndarray:
    """Every value the ε slider of :func:`live` over ``[lo, hi]`` can take (by default 61 values
    from 0.01 to 10; ``step`` in decades, as :func:`live`'s ``epsilon_step``), e.g. to precompute
    a panel's results for all of them."""
    lo, hi = math.log10(check.positive("lo", lo)), math.log10(check.positive("hi", hi))
    step = _epsilon_step(step, "step")
    if hi < lo:
        raise ValueError(f"hi must be in [lo, ∞) = [{10.0 ** lo:g}, ∞) (the top of the ε range), got {10.0 ** hi:g}")
    steps = round((hi - lo) / step)
    return 10.0 ** (lo + step * np.arange(steps + 1))


def _epsilon_step(step: float, name: str = "epsilon_step") -> float:
    """A step of the ε slider in decades: in [0.01, 1] (``name``: the caller's parameter)."""
    step = check.positive(name, step)
    if not 0.01 <= step <= 1.0:
        raise ValueError(f"{name} must be in [0.01, 1] (decades of ε per slider step), got {step!r}")
    return step


_STYLE = {"description_width": "110px"}
_LAYOUT = {"width": "420px"}


def _log_slider(description: str, value: float, lo: float, hi: float, step: float, fmt: str) -> w.FloatLogSlider:
    value = float(value)
    lo, hi = min(lo, value), max(hi, value)
    return w.FloatLogSlider(
        value=value, base=10, min=math.log10(lo), max=math.log10(hi), step=step, description=description,
        readout_format=fmt, continuous_update=True, style=_STYLE, layout=_LAYOUT,
    )


def _int_slider(description: str, value: int, lo: int, hi: int) -> w.IntSlider:
    value = int(value)
    return w.IntSlider(value=value, min=min(lo, value), max=max(hi, value), description=description,
                       continuous_update=True, style=_STYLE, layout=_LAYOUT)


def _options(values) -> list[tuple[str, Any]]:
    """Drop-down options as (what the reader sees, what ``compute`` receives) pairs.

    An internal name is shown by its book's name (:func:`dpadmm_lite.labels.readable`: the
    reader sees "small world", ``compute`` still gets ``"small_world"``); pairs given as
    ``(label, value)`` are kept; anything else shows as ``str(value)``.
    """
    from dpadmm_lite.labels import book_names

    names = book_names()
    values = list(values)
    if values and all(isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str) for v in values):
        return values
    return [(names.get(v, v) if isinstance(v, str) else str(v), v) for v in values]


def _as_widget(name: str, value) -> w.Widget:
    """A widget for an ``advanced`` entry: passed through if it is one, else chosen by type."""
    if isinstance(value, w.ValueWidget):
        return value
    from dpadmm_lite.labels import parameter

    desc = parameter(name)  # a parameter's name in the book's notation ("sampling_rate" → "q")
    if isinstance(value, bool):
        return w.Checkbox(value=value, description=desc, indent=False)
    if isinstance(value, int):
        return w.IntText(value=value, description=desc, style=_STYLE)
    if isinstance(value, float):
        return w.FloatText(value=value, description=desc, style=_STYLE)
    if isinstance(value, (list, tuple)) and value:
        options = _options(value)
        return w.Dropdown(options=options, value=options[0][1], description=desc, style=_STYLE)
    if isinstance(value, str):
        return w.Text(value=value, description=desc, style=_STYLE)
    raise ValueError(f"advanced[{name!r}] must be a bool, int, float, str, a non-empty list of options "
                     f"or an ipywidget, got {value!r}")


class _EpsilonControl(w.HBox):
    """ε log slider [0.01, 10] with an "∞ (no noise)" toggle; ``value`` is ``math.inf`` when on."""

    def __init__(self, value: float, lo: float = RANGES["epsilon"][0], hi: float = RANGES["epsilon"][1],
                 step: float = EPSILON_STEP):
        no_noise = math.isinf(value)
        self.slider = _log_slider("ε", 1.0 if no_noise else value, lo, hi, step, ".3g")
        self.toggle = w.ToggleButton(value=no_noise, description="∞ (no noise)", tooltip="run without noise",
                                     layout={"width": "110px"})
        self.slider.disabled = no_noise
        self.toggle.observe(lambda change: setattr(self.slider, "disabled", change["new"] or self.toggle.disabled),
                            names="value")
        super().__init__([self.slider, self.toggle])

    @property
    def disabled(self) -> bool:
        """Both parts off (the control has no effect at the other controls' values)."""
        return self.toggle.disabled

    @disabled.setter
    def disabled(self, off: bool) -> None:
        self.toggle.disabled = bool(off)
        self.slider.disabled = bool(off) or self.toggle.value

    @property
    def description(self) -> str:
        return self.slider.description

    @property
    def value(self) -> float:
        return math.inf if self.toggle.value else float(self.slider.value)

    def observe_value(self, handler) -> None:
        self.slider.observe(handler, names="value")
        self.toggle.observe(handler, names="value")


class _SliderValueText(anywidget.AnyWidget):
    """No view of its own: makes every slider of its panel announce the value its readout shows.

    A slider's handle tells assistive technology its *position* (``aria-valuetext``, noUiSlider's
    two decimals): for a log slider that is log₁₀ of the value (ε = 4 read "0.60"), for an integer
    slider "30.00". This sets ``aria-valuetext`` to the readout's text ("4", "30") whenever a
    slider moves, and names a handle that has no name by its slider's label ("ε").
    """

    _esm = """
function render({ el }) {
  el.style.display = "none";
  let observer = null, tries = 0;
  const sync = (panel) => {
    for (const slider of panel.querySelectorAll(".widget-slider")) {
      const readout = slider.querySelector(".widget-readout");
      const handle = slider.querySelector(".noUi-handle");
      if (!readout || !handle) continue;
      const text = readout.textContent.trim();
      if (text && handle.getAttribute("aria-valuetext") !== text) handle.setAttribute("aria-valuetext", text);
      const label = slider.querySelector(".widget-label");
      const name = label ? label.textContent.trim() : "";
      if (name && !handle.hasAttribute("aria-label") && !handle.hasAttribute("aria-labelledby")) {
        handle.setAttribute("aria-label", name);
      }
    }
  };
  const attach = () => {
    const panel = el.closest(".dpadmm-live");
    if (!panel) { // not in the page yet
      if (tries++ < 600) requestAnimationFrame(attach);
      return;
    }
    observer = new MutationObserver(() => sync(panel));
    observer.observe(panel, { subtree: true, childList: true, characterData: true,
                              attributes: true, attributeFilter: ["aria-valuenow", "aria-valuetext"] });
    sync(panel);
  };
  attach();
  return () => observer && observer.disconnect();
}
export default { render };
"""


class LivePanel(w.VBox):
    """The panel :func:`live` returns: controls, a chart area and a status line.

    Attributes
    ----------
    controls
        Control widget per name (``"rho"``, ``"topology"``, advanced names, …).
    chart
        The :class:`~dpadmm_book.viz.VegaChart` showing an Altair result (``None`` until one
        came). A new chart with the same structure only sends its rows, swapped in place.
    output
        The ``ipywidgets.Output`` that shows a result that is not an Altair chart.
    status
        One line under the chart: run time in ms and the text ``compute`` returned, or the error;
        "computing …" while a run takes longer than ``BUSY_AFTER`` seconds.
    runs
        How many times ``compute`` has run (initial render included; cache hits not counted).
    last_chart, last_text, last_error, last_update
        What the most recent run produced; ``last_update`` is ``"same"`` (the chart did not
        change), ``"data"`` (rows swapped in place), ``"spec"`` (chart drawn anew) or ``"output"``.
    """

    #: Seconds a run may take before the status line says "computing …".
    BUSY_AFTER = 0.25
    #: Results kept per panel (moving a control back to a value already seen redraws at once).
    CACHE_SIZE = 32

    def __init__(self, compute: Callable[[dict], Any], controls: dict[str, w.Widget],
                 advanced: dict[str, w.Widget], debounce: float,
                 idle: Mapping[str, Callable[[dict], str | None]] | None = None):
        self.compute = compute
        self.idle = dict(idle or {})
        #: One line above the chart: the controls that have no effect at the current values, and why.
        self.idle_note = w.HTML(value="")
        self.controls = {**controls, **advanced}
        self.debounce = float(debounce)
        self.chart = None
        self.output = w.Output(layout={"min_height": "120px"})
        self.area = w.Box([self.output], layout={"min_height": "120px"})
        self.status = w.HTML(value="")
        self.runs = 0
        self.last_chart = None
        self.last_text = ""
        self.last_error: str | None = None
        self.last_update = ""
        self.last_exception: Exception | None = None
        self._cache: OrderedDict = OrderedDict()
        self._cond = threading.Condition()
        self._worker: threading.Thread | None = None
        self._generation = 0  # bumped by every change
        self._started = 0     # generation of the newest run started
        self._due = 0.0       # monotonic time the quiet period ends
        self._busy_token = None
        children: list[w.Widget] = list(controls.values())
        if advanced:
            box = w.Accordion(children=[w.VBox(list(advanced.values()))], selected_index=None)
            box.set_title(0, "advanced")
            children.append(box)
        children += [self.idle_note, self.area, self.status, _SliderValueText()]
        super().__init__(children)
        self.add_class("dpadmm-live")
        for widget in self.controls.values():
            if isinstance(widget, _EpsilonControl):
                widget.observe_value(self._changed)
            else:
                widget.observe(self._changed, names="value")
        self._settle()

    def idle_controls(self) -> dict[str, str]:
        """The controls that have no effect at the current values: name → why."""
        values = self.values()
        found = {name: rule(values) for name, rule in self.idle.items()}
        return {name: why for name, why in found.items() if why}

    def _settle(self) -> None:
        """Disable the controls that have no effect at the current values (enable the others) and say why."""
        off = self.idle_controls()
        for name in self.idle:
            self.controls[name].disabled = name in off
        self.idle_note.value = "" if not off else (
            "<span style='font-size:12px;color:#595959'>" + "; ".join(
                f"{html.escape(_label(self.controls[name], name))} has no effect: {html.escape(why)}"
                for name, why in off.items()) + "</span>")

    # ------------------------------------------------------------------ values and runs
    def values(self) -> dict[str, Any]:
        """Current value of every control, by name (ε is ``math.inf`` when "no noise" is on)."""
        return {name: widget.value for name, widget in self.controls.items()}

    def refresh(self) -> None:
        """Run ``compute`` now with the current values and show its chart (synchronously)."""
        with self._cond:
            self._generation += 1
            self._started = self._generation
        self._render(progress=False)

    def _changed(self, _change=None) -> None:
        """A control moved: run once the quiet period (``debounce``) has passed.

        One worker thread runs ``compute``; changes that arrive while it runs are coalesced
        into one more run with the newest values (a drag never queues a run per value).
        """
        self._settle()
        if _NO_THREADS:  # Pyodide (the JupyterLite edition): no threads; the kernel runs it now
            self.refresh()
            return
        with self._cond:
            self._generation += 1
            self._due = time.monotonic() + self.debounce
            if self._worker is None:
                self._worker = threading.Thread(target=self._work, name="dpadmm-live", daemon=True)
                self._worker.start()
            self._cond.notify_all()

    def _work(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._started == self._generation:  # nothing new: the worker ends
                        self._worker = None
                        self._cond.notify_all()
                        return
                    delay = self._due - time.monotonic()
                    if delay <= 0:
                        break
                    self._cond.wait(delay)
                self._started = self._generation
            self._render(progress=True)

    def wait(self, timeout: float = 10.0) -> None:
        """Block until every pending re-run has finished (tests, scripts)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._worker is not None and time.monotonic() < deadline:
                self._cond.wait(max(0.0, min(0.05, deadline - time.monotonic())))

    def _key(self, values: dict):
        try:
            key = tuple(sorted(values.items()))
            hash(key)
            return key
        except TypeError:  # a control with an unhashable value: no caching
            return None

    def _render(self, progress: bool) -> None:
        """One run of ``compute`` and its chart; ``progress``: say "computing …" if it takes long."""
        values = self.values()
        key = self._key(values)
        start = time.perf_counter()
        token = object()
        self._busy_token = token
        busy = threading.Timer(self.BUSY_AFTER, self._show_busy, args=(token,))
        busy.daemon = True
        cached = self._cache.get(key) if key is not None else None
        try:
            if cached is not None:
                self._cache.move_to_end(key)
                chart, text = cached
            else:
                if progress and not _NO_THREADS:
                    busy.start()
                result = self.compute(values)
                chart, text = result if isinstance(result, tuple) else (result, "")
                chart = _as_spec(chart)
            error = None
        except Exception as exc:  # shown in the panel: one line, not a traceback storm
            chart, text = None, ""
            where = traceback.extract_tb(exc.__traceback__)[-1]
            error = f"{type(exc).__name__}: {exc} (at {where.name}, line {where.lineno})"
            self.last_exception = exc
        finally:
            busy.cancel()
        elapsed = 1000 * (time.perf_counter() - start)
        with self._cond:
            self._busy_token = None
            if cached is None:
                self.runs += 1
            if error is not None:
                self.last_error = error
                self.status.value = (f"<span style='color:#D55E00'>⚠ could not compute with these settings — "
                                     f"{html.escape(error)}</span>")
                return
            if key is not None and cached is None:
                self._cache[key] = (chart, text)
                while len(self._cache) > self.CACHE_SIZE:
                    self._cache.popitem(last=False)
            self.last_error, self.last_chart, self.last_text = None, chart, str(text)
            self.last_exception = None
            self.last_update = self._show(chart)
            line = "cached result" if cached is not None else f"computed in {elapsed:.0f} ms"
            if text:
                line += " · " + html.escape(str(text))
            self.status.value = f"<span style='font-family:monospace;font-size:12px'>{line}</span>"

    def _show(self, chart) -> str:
        """Put ``chart`` in the chart area: rows swapped in place when only they changed."""
        if isinstance(chart, dict):
            if self.chart is None:
                from .viz import VegaChart

                self.chart = VegaChart()
            kind = self.chart.update(chart)
            if self.area.children != (self.chart,):
                self.area.children = (self.chart,)
            return kind
        self.output.outputs = (_display_data(chart),)  # one trait change: replaced in place
        if self.area.children != (self.output,):
            self.area.children = (self.output,)
        return "output"

    def _show_busy(self, token) -> None:
        with self._cond:
            if token is not self._busy_token:  # the run has finished meanwhile
                return
            self.status.value = ("<span style='font-family:monospace;font-size:12px;color:#0072B2'>"
                                 "⏳ computing … (the chart shows the previous settings)</span>")


def _label(widget, name: str) -> str:
    """What the reader sees as a control's name: its description, else its name."""
    return str(getattr(widget, "description", "") or name)


def _as_spec(chart):
    """An Altair chart as its Vega-Lite dict (computed in the worker); anything else as is."""
    import altair as alt

    if isinstance(chart, alt.TopLevelMixin):
        from .viz._widget import to_spec

        return to_spec(chart)
    return chart


def _display_data(obj) -> dict:
    """The ``display_data`` output of ``obj`` (as IPython would show it)."""
    from IPython.core.interactiveshell import InteractiveShell

    data, metadata = InteractiveShell.instance().display_formatter.format(obj)
    return {"output_type": "display_data", "data": data, "metadata": metadata}


def live(
    compute: Callable[[dict], Any],
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    rho: float | None = None,
    nu: float | None = None,
    topology: str | None = None,
    n_agents: int | None = None,
    iterations: int | None = None,
    seed: int | None = None,
    regularizer: str | None = None,
    advanced: Mapping[str, Any] | None = None,
    ranges: Mapping[str, tuple[float, float]] | None = None,
    epsilon_step: float = EPSILON_STEP,
    idle: Mapping[str, Callable[[dict], str | None]] | None = None,
    debounce: float = 0.0,
) -> LivePanel:
    """The standard control panel with a chart that re-runs ``compute`` when a control moves.

    Parameters
    ----------
    compute
        ``compute(values) -> chart`` or ``-> (chart, text)``; ``values`` maps each control's
        name (``"epsilon"``, ``"rho"``, …, and the ``advanced`` names) to its current value.
        ``text`` (e.g. ``trace.summary()``, the privacy spent) is shown under the chart.
    epsilon, delta, rho
        Log sliders: ε ∈ [0.01, 10] with an "∞ (no noise)" toggle (pass ``math.inf`` to start
        with no noise), δ ∈ [1e-8, 1e-2], ρ ∈ [1e-3, 100].
    nu
        Slider over [0, 5] (Laplacian smoothing strength).
    topology
        Drop-down over the names of :func:`dpadmm_lite.topology.make`, shown by their book's
        names ("small world"; ``values["topology"]`` is still ``"small_world"``).
    n_agents, iterations
        Integer sliders over [2, 100] and [1, 500] (widened to include the default).
    seed
        Integer box (≥ 0).
    regularizer
        Drop-down ``"l1"`` / ``"l2"`` (shown as ℓ1 / ℓ2).
    advanced
        Name → default value (bool, int, float, str, list of options) or a ready ipywidget,
        shown in a collapsed "advanced" section. A list of options is a drop-down starting at
        its first entry: internal names are shown by their book's names, and ``(label, value)``
        pairs show the label; ``compute`` receives the value either way. A name the library
        uses for a parameter is shown in the book's notation (``"sampling_rate"`` → "q",
        :func:`dpadmm_lite.labels.parameter`).
    ranges
        Slider name → ``(min, max)`` replacing its standard range in :data:`RANGES` for this
        panel, e.g. ``{"iterations": (1, 200)}`` where longer runs would redraw too slowly.
    epsilon_step
        The ε slider's step in decades (default :data:`EPSILON_STEP`, 0.05: 61 values from 0.01
        to 10). A panel that precomputes its results for every value of its slider
        (:func:`epsilon_values` with the same ``step``) may take a coarser one.
    idle
        Control name → ``rule(values)``: why the control has no effect at these values (e.g. "the
        non-private run adds no noise"), or ``None`` when it has one. While a rule gives a reason its
        control is disabled and a line above the chart says why (no control without an effect). With
        an ε control and a δ slider, δ has no effect at ε = ∞ (no noise) unless ``idle`` says otherwise.
    debounce
        Quiet period in seconds before a re-run starts (a burst of changes runs once). While
        ``compute`` runs, further changes are coalesced into one more run with the newest
        values; results are cached per setting, so moving back to a value redraws at once.

    Any control argument may also be an ipywidget, used as is. A control left at ``None`` does
    not appear. An exception inside ``compute`` is shown as one line in the panel and the
    previous chart stays — except at the defaults: a panel that cannot compute its first chart
    raises, so that running the notebook (papermill, the tests) fails instead of hiding it.

    Returns
    -------
    LivePanel
        The panel (an ``ipywidgets.VBox``); make it the last expression of the cell. It has
        already rendered once with the defaults, synchronously — which is all that happens when
        the notebook runs headless.
    """
    if not callable(compute):
        raise ValueError(f"compute must be a callable taking a dict of values, got {compute!r}")
    debounce = check.nonnegative("debounce", debounce)
    epsilon_step = _epsilon_step(epsilon_step)

    def given(value):
        return isinstance(value, w.Widget)

    limits = dict(RANGES)
    for name, bounds in (ranges or {}).items():
        check.choice("a key of ranges", name, tuple(RANGES))
        try:
            lo, hi = (float(b) for b in bounds)
        except (TypeError, ValueError):
            lo = hi = math.nan  # refused just below, with the parameter named
        if not lo < hi or (name in ("epsilon", "delta", "rho") and lo <= 0):
            raise ValueError(f"ranges[{name!r}] must be (min, max) with min < max (and min > 0 on a log slider), "
                             f"got {bounds!r}")
        limits[name] = (lo, hi)

    controls: dict[str, w.Widget] = {}
    if epsilon is not None:
        controls["epsilon"] = epsilon if given(epsilon) else _EpsilonControl(check.epsilon(epsilon), *limits["epsilon"], epsilon_step)
    if delta is not None:
        controls["delta"] = delta if given(delta) else _log_slider("δ", check.open_unit("delta", delta), *limits["delta"], 0.25, ".0e")
    if rho is not None:
        controls["rho"] = rho if given(rho) else _log_slider("ρ", check.positive("rho", rho), *limits["rho"], 0.1, ".3g")
    if nu is not None:
        if given(nu):
            controls["nu"] = nu
        else:
            lo, hi = limits["nu"]
            value = check.nonnegative("nu", nu)
            controls["nu"] = w.FloatSlider(value=value, min=lo, max=max(hi, value), step=0.1, description="ν",
                                           style=_STYLE, layout=_LAYOUT)
    if topology is not None:
        if given(topology):
            controls["topology"] = topology
        else:
            names = TOPOLOGIES
            check.choice("topology", topology, names)
            controls["topology"] = w.Dropdown(options=_options(names), value=topology, description="topology G",
                                              style=_STYLE)
    if n_agents is not None:
        controls["n_agents"] = n_agents if given(n_agents) else _int_slider("agents N", check.count("n_agents", n_agents), *(int(b) for b in limits["n_agents"]))
    if iterations is not None:
        controls["iterations"] = iterations if given(iterations) else _int_slider("iterations T", check.count("iterations", iterations), *(int(b) for b in limits["iterations"]))
    if seed is not None:
        controls["seed"] = seed if given(seed) else w.BoundedIntText(value=check.count("seed", seed, minimum=0), min=0, max=2**31 - 1,
                                                                       description="seed", style=_STYLE)
    if regularizer is not None:
        if given(regularizer):
            controls["regularizer"] = regularizer
        else:
            options = ["l1", "l2"]
            check.choice("regularizer", regularizer, options)
            controls["regularizer"] = w.Dropdown(options=_options(options), value=regularizer,
                                                 description="regulariser", style=_STYLE)
    extra = {name: _as_widget(name, value) for name, value in (advanced or {}).items()}
    clash = set(extra) & set(controls)
    if clash:
        raise ValueError(f"advanced must not repeat a standard control, got {sorted(clash)}")
    rules = dict(idle or {})
    for name, rule in rules.items():
        if name not in controls and name not in extra:
            raise ValueError(f"idle names a control the panel does not have: {name!r} "
                             f"(controls: {sorted([*controls, *extra])})")
        if not callable(rule):
            raise ValueError(f"idle[{name!r}] must be a callable taking the dict of values, got {rule!r}")
    if isinstance(controls.get("epsilon"), _EpsilonControl) and "delta" in controls:
        rules.setdefault("delta", lambda v: "ε = ∞ adds no noise" if math.isinf(v["epsilon"]) else None)
    panel = LivePanel(compute, controls, extra, debounce, idle=rules)
    panel.refresh()  # the first render, with the defaults (the only one when headless)
    if panel.last_exception is not None:  # a panel broken at its defaults must fail the notebook run
        raise panel.last_exception
    return panel

