"""Glue between the library's Altair charts and the published book.

Two pieces, one per side of the pipeline:

* :func:`chart_renderer` — an Altair renderer (enabled by ``viz.use_book_theme()``) that puts
  the Vega-Lite spec itself in the notebook output, next to Altair's usual HTML. JupyterLab
  shows the HTML (or the spec, if it has a Vega-Lite renderer); the book build uses the spec.
* :class:`VegaLiteRenderer` — a MyST-NB mime-render plugin (entry point
  ``myst_nb.mime_renderers``) that turns that spec into a ``<div>`` drawn by the Vega bundle
  the site serves itself (``_static/vendor/vega-bundle.js`` + ``_static/dpadmm-charts.js``).
  No chart reaches for a CDN, so the static site works offline.
"""

from __future__ import annotations

import hashlib
import html
import json

#: Vega-Lite mime types the plugin draws (Altair 6 writes v6; v5 kept for older outputs).
VEGALITE_MIMES = ("application/vnd.vegalite.v6+json", "application/vnd.vegalite.v5+json")


def chart_renderer(spec: dict, **metadata) -> dict:
    """Altair renderer: the Vega-Lite spec as its own mime type plus Altair's HTML fallback."""
    from altair.vegalite.v6.display import html_renderer

    bundle = html_renderer(spec, **metadata)
    bundle = bundle[0] if isinstance(bundle, tuple) else bundle
    return {VEGALITE_MIMES[0]: spec, "text/html": bundle["text/html"], "text/plain": "<Altair chart>"}


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
