"""Glue between the library's Altair charts and the two places they are read.

* :class:`VegaLiteRenderer` — a MyST-NB mime-render plugin (entry point
  ``myst_nb.mime_renderers``) that turns a chart's Vega-Lite spec into a ``<div>`` drawn by the
  Vega bundle the site serves itself (``_static/vendor/vega-bundle.js`` +
  ``_static/dpadmm-charts.js``). No chart reaches for a CDN, so the static site works offline.
* :func:`glued` — a glued value formatted as ``{glue:text}`` shows it, for the JupyterLab
  edition of a chapter (``make lab``), where jupyterlab-myst evaluates it inline.

The kernel's side lives below this module, which only reads it: the Altair renderer that
``viz.use_book_theme()`` enables (:func:`dpadmm_lite.viz._theme.chart_renderer`: each chart's
output carries the spec itself and, inside a kernel, a :class:`~dpadmm_lite.viz._widget.VegaChart`
widget view that JupyterLab draws with the Vega bundle the kernel ships; the book build drops the
widget and keeps the spec), and the output types and glue capture (:mod:`dpadmm_lite._outputs`).
Their names stay importable from here. ``viz`` never imports this module
(``tests/test_layout.py``).
"""

from __future__ import annotations

import hashlib
import html
import json

from ._outputs import GLUED, VEGALITE_MIMES, WIDGET_MIME, capture_glue, glued

__all__ = ["VegaLiteRenderer", "chart_html", "glued", "GLUED", "VEGALITE_MIMES", "WIDGET_MIME", "capture_glue"]


def __getattr__(name: str):
    """``chart_renderer`` from :mod:`dpadmm_lite.viz`, loaded on first use: the site build imports this
    module for its plugin and needs no Altair."""
    if name == "chart_renderer":
        from .viz._theme import chart_renderer

        return chart_renderer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def chart_html(spec: dict, where: str = "") -> str:
    """The HTML the site gets for one chart: an empty div and its spec as inert JSON.

    ``where`` (cell and output index) keeps ids unique when a page shows one chart twice.
    """
    text = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    chart_id = "vega-" + hashlib.sha1((where + text).encode()).hexdigest()[:12]
    payload = text.replace("</", "<\\/")  # a spec can never close the script element
    return (
        f'<div class="dpadmm-vega" id="{html.escape(chart_id)}"></div>\n'
        f'<script type="application/json" class="dpadmm-vega-spec" data-target="{html.escape(chart_id)}">'
        f"{payload}</script>\n"
    )


class VegaLiteRenderer:
    """MyST-NB plugin: render Vega-Lite outputs with the site's own Vega bundle."""

    mime_priority_overrides = [(builder, mime, 1) for builder in ("html", "dirhtml", "singlehtml") for mime in VEGALITE_MIMES]

    @staticmethod
    def handle_mime(renderer, data, inline):
        if inline or data.mime_type not in VEGALITE_MIMES:
            return None
        from docutils import nodes

        spec = data.content if isinstance(data.content, dict) else json.loads(data.string)
        return [nodes.raw("", chart_html(spec), format="html", classes=["output", "vega-lite"])]
