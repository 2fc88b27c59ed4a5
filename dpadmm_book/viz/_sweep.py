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

from dpadmm_lite.labels import book_names
from ._typeset import axis_title, typeset

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
        :func:`dpadmm_book.sweep.grid`, averaged over seeds).
    x, y, color
        Columns for the axes and the colour (one line per colour value).
    sliders
        Numeric setting columns to choose with a slider. The slider moves over the grid's
        positions (every value is reachable, whatever the spacing) and its readout shows the
        value itself. A column with one value gets no slider, only the caption.
    selects
        Setting columns to choose with a drop-down (categorical ones such as topology).
    defaults
        Initial value of each slider or drop-down (default: the smallest value).

        The drop-downs, the legend and the tooltips show the book's names: an internal value of
        a ``selects`` or ``color`` column (``"dp_acc_admm"``, ``"small_world"``, ``"l1"``) is
        shown as :func:`dpadmm_lite.labels.readable` names it ("DP-AccADMM", "small world",
        "ℓ1"); a default may be given either way.
    band
        ``(low, high)`` columns drawn as a shaded band around each line (spread over seeds).
    log_x, log_y
        Log scales (rows with a value ≤ 0 on a log axis are left out: it never includes zero).
    titles
        Axis and widget titles per column; the book's notation is used where none is given,
        else the column name typeset (``test_accuracy`` → "test accuracy"; ``x_t^DP`` → "xₜᴰᴾ").

    Returns
    -------
    altair.LayerChart
        The chart, with a caption line that shows the chosen setting.
    """
    missing = [c for c in [x, y, color, *sliders, *selects, *(band or ())] if c and c not in frame.columns]
    if missing:
        raise ValueError(f"columns {missing} are not in the frame (it has {list(frame.columns)})")
    titles = {c: typeset(t) for c, t in {**NOTATION, **(titles or {})}.items()}
    titles.update({c: axis_title(c) for c in [x, y, color, *sliders, *selects] if c and c not in titles})
    defaults = dict(defaults or {})
    data = frame.copy()
    # A log axis never includes zero: rows it cannot draw are left out (as convergence() does).
    for column, is_log in ((x, log_x), (y, log_y)):
        if is_log:
            data = data[np.isfinite(data[column].astype(float)) & (data[column].astype(float) > 0)]
    data, defaults = _book_names(data, [*selects, *([color] if color else [])], defaults)
    data, selects = _joint_selects(data, list(selects), titles, defaults)
    _check_complete(data, sliders, selects)
    params, filters, captions = [], [], []

    for column in sliders:
        values = np.sort(pd.unique(data[column].astype(float)))
        values = values[np.isfinite(values)]
        if not len(values):
            raise ValueError(f"sliders[{column!r}] has no finite value to slide over")
        name = _param_name(column)
        label = titles.get(column, column)
        labels = [format_value(v) for v in values]
        if len(values) == 1:  # nothing to choose: the caption says which value it is
            captions.append(repr(f"{label} = {labels[0]}"))
            continue
        index = _grid_index(values, defaults.get(column, values[0]), column)
        # The slider moves over the grid's index (integer steps reach every value, whatever the
        # grid: no float step can overshoot the last one); the value is looked up in the grid.
        grid = "[" + ",".join(repr(float(v)) for v in values) + "]"
        chosen = f"{grid}[{name}]"
        params.append(alt.param(name=name, value=index,
                                bind=alt.binding_range(min=0, max=len(values) - 1, step=1, name=f"{label} ")))
        params.append(alt.param(name=f"{name}__labels", value=labels))  # the readout shows these
        filters.append(f"abs(datum[{column!r}] - {chosen}) <= 1e-9 * abs({chosen}) + 1e-12")
        captions.append(f"{label!r} + ' = ' + {name}__labels[{name}]")

    for column in selects:
        options = list(pd.unique(data[column]))
        options = [o.item() if hasattr(o, "item") else o for o in options]
        name = _param_name(column)
        label = titles.get(column, column)
        param = alt.param(name=name, value=defaults.get(column, options[0]),
                          bind=alt.binding_select(options=options, name=f"{label} "))
        params.append(param)
        filters.append(f"datum[{column!r}] == {name}")
        captions.append(f"{label!r} + ' = ' + {name}")

    # A band's lower edge on a log axis is clipped to the smallest value the line itself draws.
    if band and log_y and len(data):
        floor = float(data[y].min())
        data = data.assign(**{band[0]: data[band[0]].where(data[band[0]] > 0, floor)})
    x_enc = alt.X(f"{x}:Q", title=titles.get(x, x), scale=alt.Scale(type="log" if log_x else "linear"))
    y_scale = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
    y_enc = alt.Y(f"{y}:Q", title=titles.get(y, y), scale=y_scale)
    color_enc = alt.Color(f"{color}:N", title=titles.get(color, color)) if color else alt.Undefined
    tooltip = [c for c in [x, y, color, *sliders, *selects] if c]

    base = alt.Chart(data, width=width, height=height)
    for expression in filters:
        base = base.transform_filter(expression)
    layers = []
    if band:
        band_color = alt.Color(f"{color}:N", legend=None) if color else alt.Undefined  # the lines carry the legend
        # the band's y carries the line's title: the axis, and the chart's description for screen readers, read
        # "objective gap", not the band's column name
        band_y = alt.Y(f"{band[0]}:Q", title=titles.get(y, y), scale=y_scale)
        layers.append(base.mark_area(opacity=0.18).encode(x=x_enc, y=band_y, y2=f"{band[1]}:Q", color=band_color))
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
        chart = chart.properties(title=typeset(title) if isinstance(title, str) else title)
    return chart


def _book_names(data: pd.DataFrame, columns: Sequence[str], defaults: dict):
    """``data`` and ``defaults`` with the internal names in ``columns`` replaced by the book's names."""
    names = book_names()
    data = data.copy()
    for column in dict.fromkeys(columns):
        data[column] = data[column].map(lambda v: names.get(v, v) if isinstance(v, str) else v)
        if isinstance(defaults.get(column), str):
            defaults[column] = names.get(defaults[column], defaults[column])
    return data, defaults


def _joint_selects(data: pd.DataFrame, selects: list[str], titles: dict, defaults: dict):
    """Drop-downs whose choices do not all combine (an algorithm that does not play a task) become
    one drop-down of the combinations the grid has, so that no choice empties the chart."""
    if len(selects) < 2:
        return data, selects
    present = data[selects].drop_duplicates()
    if len(present) == int(np.prod([data[c].nunique() for c in selects])):
        return data, selects
    joint = " · ".join(selects)
    data = data.assign(**{joint: data[selects].astype(str).agg(" · ".join, axis=1)})
    titles[joint] = " · ".join(titles.get(c, c) for c in selects)
    if all(c in defaults for c in selects):
        defaults[joint] = " · ".join(str(defaults.pop(c)) for c in selects)
    return data, [joint]


def _check_complete(data: pd.DataFrame, sliders: Sequence[str], selects: Sequence[str]) -> None:
    """Every slider position must draw something for every drop-down choice (else a move empties the chart)."""
    for column in sliders:
        grid = set(pd.unique(data[column].astype(float)))
        for choice, rows in (data.groupby(list(selects)) if selects else [((), data)]):
            missing = grid - set(pd.unique(rows[column].astype(float)))
            if missing:
                raise ValueError(f"sliders[{column!r}]: no rows at {column} = {sorted(float(v) for v in missing)} for "
                                 f"{dict(zip(selects, choice if isinstance(choice, tuple) else (choice,)))}: "
                                 "that slider position would show an empty chart")


def _grid_index(values: np.ndarray, start, column: str) -> int:
    """Position of the default ``start`` in the grid (it must be one of the grid's values)."""
    i = int(np.argmin(np.abs(values - float(start))))
    if not np.isclose(values[i], float(start), rtol=1e-9, atol=1e-12):
        raise ValueError(f"defaults[{column!r}] must be one of the grid values {values.tolist()}, got {start!r}")
    return i


def format_value(value: float) -> str:
    """A grid value as a reader reads it: 3 significant digits, ``1e-5`` rather than ``1e-05``."""
    text = f"{float(value):.3g}"
    return re.sub(r"e([+-])0*(\d)", lambda m: "e" + ("-" if m.group(1) == "-" else "") + m.group(2), text)


def _param_name(column: str) -> str:
    return "p_" + re.sub(r"\W", "_", column)
