"""The book's chart theme: one place for fonts, sizes and colours, and the renderer that writes
each chart into the notebook."""

from __future__ import annotations

import altair as alt

from .._outputs import VEGALITE_MIMES, WIDGET_MIME, capture_glue
from ._widget import VegaChart, in_kernel

#: Colour-blind-safe categorical palette (Okabe–Ito), used for algorithms across chapters.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]


@alt.theme.register("dpadmm", enable=False)
def _dpadmm_theme() -> alt.theme.ThemeConfig:
    return {
        "config": {
            "view": {"continuousWidth": 420, "continuousHeight": 260, "stroke": None},
            "range": {"category": PALETTE},
            # labelSeparation: Vega drops a tick label closer than this to its neighbour (with 0,
            # abutting labels read as one: "0.000.05" on the arena's bar chart)
            # Text sizes: at least 12 px in the spec, so that a chart the site draws a little smaller to fit its
            # column (dpadmm-charts.js: never below 11 px on a desktop, 10 px on a phone) stays readable.
            "axis": {"labelFontSize": 12, "titleFontSize": 13, "grid": True, "gridOpacity": 0.4, "labelSeparation": 4},
            "legend": {"labelFontSize": 12, "titleFontSize": 13, "orient": "right", "labelLimit": 320},
            "header": {"labelFontSize": 12, "titleFontSize": 13},
            "text": {"fontSize": 12},
            "title": {"fontSize": 14, "anchor": "start", "subtitleFontSize": 12},
            "line": {"strokeWidth": 2},
        }
    }


def use_book_theme() -> None:
    """Enable the book theme, the book's chart renderer, and charts of any data size.

    The renderer writes each chart's Vega-Lite spec into the notebook output, so the published
    book can draw it with the Vega bundle it serves itself, and inside a kernel a chart widget
    that JupyterLab draws offline (:func:`chart_renderer`; the site's side is :mod:`dpadmm_book._book`).
    """
    capture_glue()  # glued numbers for the JupyterLab edition (make lab)
    alt.renderers.register("dpadmm", chart_renderer)
    alt.renderers.enable("dpadmm")
    alt.theme.enable("dpadmm")
    alt.data_transformers.disable_max_rows()


def chart_renderer(spec: dict, **metadata) -> dict:
    """Altair renderer: the Vega-Lite spec as its own mime type, plus a chart widget in a kernel.

    JupyterLab shows the widget, drawn with the Vega bundle the kernel ships (JupyterLab 4 has no
    Vega-Lite v6 renderer); the book build drops the widget and keeps the spec, which the site
    draws (:class:`dpadmm_book._book.VegaLiteRenderer`). No HTML fallback: Altair's would load
    Vega from a CDN.
    """
    bundle = {VEGALITE_MIMES[0]: spec, "text/plain": "<Altair chart>"}
    if in_kernel():
        view = VegaChart(spec)._repr_mimebundle_()
        view = view[0] if isinstance(view, tuple) else view
        bundle[WIDGET_MIME] = view[WIDGET_MIME]
    return bundle
