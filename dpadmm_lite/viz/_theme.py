"""The book's chart theme: one place for fonts, sizes and colours."""

from __future__ import annotations

import altair as alt

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
            "axis": {"labelFontSize": 11, "titleFontSize": 12, "grid": True, "gridOpacity": 0.4, "labelSeparation": 4},
            "legend": {"labelFontSize": 11, "titleFontSize": 12, "orient": "right"},
            "title": {"fontSize": 14, "anchor": "start"},
            "line": {"strokeWidth": 2},
        }
    }


def use_book_theme() -> None:
    """Enable the book theme, the book's chart renderer, and charts of any data size.

    The renderer writes each chart's Vega-Lite spec into the notebook output, so the published
    book can draw it with the Vega bundle it serves itself, and inside a kernel a chart widget
    that JupyterLab draws offline (see :mod:`dpadmm_lite._book`).
    """
    from .._book import capture_glue, chart_renderer

    capture_glue()  # glued numbers for the JupyterLab edition (make lab)
    alt.renderers.register("dpadmm", chart_renderer)
    alt.renderers.enable("dpadmm")
    alt.theme.enable("dpadmm")
    alt.data_transformers.disable_max_rows()
