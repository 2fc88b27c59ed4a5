"""A precomputed sweep as an Altair chart whose Vega-Lite widgets filter the grid.

The static site has no kernel, so the chapters precompute a grid of settings (ε, δ, ρ, ν,
topology, …) and let Vega-Lite pick the slice to draw: each slider or drop-down is a Vega-Lite
parameter bound to an HTML input, and a filter keeps the rows whose setting equals it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd

#: Pretty names for the book's notation, used in titles and widget labels.
NOTATION = {
    "epsilon": "ε", "delta": "δ", "rho": "ρ", "nu": "ν", "lam": "λ", "eta": "η", "sigma": "σ",
    "mu": "μ", "gamma": "γ", "iterations": "T", "n_agents": "N", "sampling_rate": "q", "topology": "G",
}


def sweep_chart(
    frame: pd.DataFrame,
    *,
    x: str,
    y: str,
    color: str | None = None,
    sliders: Sequence[str] = (),
    selects: Sequence[str] = (),
    defaults: Mapping[str, object] | None = None,
    band: tuple[str, str] | None = None,
    log_x: bool = False,
    log_y: bool = False,
    titles: Mapping[str, str] | None = None,
    title: str | None = None,
    width: int = 420,
    height: int = 260,
) -> alt.LayerChart:
    """Chart ``y`` against ``x`` for the grid point chosen with sliders and drop-downs.

    Parameters
    ----------
    frame
        Tidy sweep: one row per (setting, x) with the settings as columns (e.g. from
        :func:`dpadmm_lite.sweep.grid`, averaged over seeds).
    x, y, color
        Columns for the axes and the colour (one line per colour value).
    sliders
        Numeric setting columns to choose with a slider. A grid that is evenly spaced on a
        linear scale gets a slider over the values; one evenly spaced on a log scale gets a
        slider over log₁₀ of the values; any other grid gets a drop-down.
    selects
        Setting columns to choose with a drop-down (categorical ones such as topology).
    defaults
        Initial value of each slider or drop-down (default: the smallest value).
    band
        ``(low, high)`` columns drawn as a shaded band around each line (spread over seeds).
    log_x, log_y
        Log scales.
    titles
        Axis and widget titles per column; the book's notation is used where none is given.

    Returns
    -------
    altair.LayerChart
        The chart, with a caption line that shows the chosen setting.
    """
    missing = [c for c in [x, y, color, *sliders, *selects, *(band or ())] if c and c not in frame.columns]
    if missing:
        raise ValueError(f"columns {missing} are not in the frame (it has {list(frame.columns)})")
    titles = {**NOTATION, **(titles or {})}
    defaults = dict(defaults or {})
    data = frame.copy()
    params, filters, captions = [], [], []

    for column in sliders:
        values = np.sort(pd.unique(data[column].astype(float)))
        start = float(defaults.get(column, values[0]))
        name = _param_name(column)
        label = titles.get(column, column)
        if len(values) > 1 and _evenly_spaced(values):
            binding = alt.binding_range(min=values[0], max=values[-1], step=float(np.diff(values).mean()), name=f"{label} ")
            param = alt.param(name=name, value=start, bind=binding)
            filters.append(f"abs(datum[{column!r}] - {name}) <= 1e-9 * abs({name}) + 1e-12")
            captions.append(f"'{label} = ' + format({name}, '.3~g')")
        elif len(values) > 1 and np.all(values > 0) and _evenly_spaced(np.log10(values)):
            logs = np.log10(values)
            log_column = f"log10_{column}"
            data[log_column] = np.round(np.log10(data[column].astype(float)), 9)
            binding = alt.binding_range(min=logs[0], max=logs[-1], step=float(np.diff(logs).mean()),
                                        name=f"log₁₀ {label} ")
            param = alt.param(name=name, value=float(np.round(np.log10(start), 9)), bind=binding)
            filters.append(f"abs(datum[{log_column!r}] - {name}) <= 1e-6")
            captions.append(f"'{label} = ' + format(pow(10, {name}), '.3~g')")
        else:
            param = alt.param(name=name, value=start, bind=alt.binding_select(options=list(values), name=f"{label} "))
            filters.append(f"abs(datum[{column!r}] - {name}) <= 1e-9 * abs({name}) + 1e-12")
            captions.append(f"'{label} = ' + format({name}, '.3~g')")
        params.append(param)

    for column in selects:
        options = list(pd.unique(data[column]))
        options = [o.item() if hasattr(o, "item") else o for o in options]
        name = _param_name(column)
        label = titles.get(column, column)
        param = alt.param(name=name, value=defaults.get(column, options[0]),
                          bind=alt.binding_select(options=options, name=f"{label} "))
        params.append(param)
        filters.append(f"datum[{column!r}] == {name}")
        captions.append(f"'{label} = ' + {name}")

    x_enc = alt.X(f"{x}:Q", title=titles.get(x, x), scale=alt.Scale(type="log" if log_x else "linear"))
    y_enc = alt.Y(f"{y}:Q", title=titles.get(y, y), scale=alt.Scale(type="log") if log_y else alt.Scale(zero=False))
    color_enc = alt.Color(f"{color}:N", title=titles.get(color, color)) if color else alt.Undefined
    tooltip = [c for c in [x, y, color, *sliders, *selects] if c]

    base = alt.Chart(data, width=width, height=height)
    for expression in filters:
        base = base.transform_filter(expression)
    layers = []
    if band:
        band_color = alt.Color(f"{color}:N", legend=None) if color else alt.Undefined  # the lines carry the legend
        layers.append(base.mark_area(opacity=0.18).encode(x=x_enc, y=f"{band[0]}:Q", y2=f"{band[1]}:Q", color=band_color))
    layers.append(base.mark_line(point=True).encode(x=x_enc, y=y_enc, color=color_enc, tooltip=tooltip))
    if captions:
        caption = (
            alt.Chart(pd.DataFrame({"_": [0]}))
            .transform_calculate(caption=" + ' · ' + ".join(captions))
            .mark_text(align="left", baseline="top", dx=0, dy=-18, fontSize=12, fontWeight="bold")
            .encode(text="caption:N", x=alt.value(0), y=alt.value(0))
        )
        layers.append(caption)
    chart = alt.layer(*layers).add_params(*params)
    if band and color:  # one legend, drawn from the lines (not the pale bands)
        chart = chart.resolve_legend(color="independent")
    if title:
        chart = chart.properties(title=title)
    return chart


def _evenly_spaced(values: np.ndarray) -> bool:
    steps = np.diff(values)
    return bool(np.allclose(steps, steps.mean(), rtol=1e-6, atol=1e-12))


def _param_name(column: str) -> str:
    return "p_" + re.sub(r"\W", "_", column)
