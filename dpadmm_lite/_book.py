"""Glue between the library's Altair charts and the two places they are read.

* :func:`chart_renderer` — the Altair renderer that ``viz.use_book_theme()`` enables. Each chart's
  output carries the Vega-Lite spec itself and, inside a kernel, a
  :class:`~dpadmm_lite.viz._widget.VegaChart` widget view. JupyterLab shows the widget, drawn
  with the Vega bundle the kernel ships (JupyterLab 4 has no Vega-Lite v6 renderer and Altair's
  HTML would load Vega from a CDN); the book build drops the widget and keeps the spec.
* :class:`VegaLiteRenderer` — a MyST-NB mime-render plugin (entry point
  ``myst_nb.mime_renderers``) that turns that spec into a ``<div>`` drawn by the Vega bundle
  the site serves itself (``_static/vendor/vega-bundle.js`` + ``_static/dpadmm-charts.js``).
  No chart reaches for a CDN, so the static site works offline.
* :func:`glued` — a glued value formatted as ``{glue:text}`` shows it, for the JupyterLab
  edition of a chapter (``make lab``), where jupyterlab-myst evaluates it inline.
"""

from __future__ import annotations

import hashlib
import html
import json

#: Vega-Lite mime types the plugin draws (Altair 6 writes v6; v5 kept for older outputs).
VEGALITE_MIMES = ("application/vnd.vegalite.v6+json", "application/vnd.vegalite.v5+json")


#: Output type of an ipywidget view.
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def chart_renderer(spec: dict, **metadata) -> dict:
    """Altair renderer: the Vega-Lite spec as its own mime type, plus a chart widget in a kernel.

    No HTML fallback: Altair's would load Vega from a CDN.
    """
    from .viz._widget import VegaChart, in_kernel

    bundle = {VEGALITE_MIMES[0]: spec, "text/plain": "<Altair chart>"}
    if in_kernel():
        view = VegaChart(spec)._repr_mimebundle_()
        view = view[0] if isinstance(view, tuple) else view
        bundle[WIDGET_MIME] = view[WIDGET_MIME]
    return bundle


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


# ----------------------------------------------------------------------------- glue in JupyterLab
#: text/plain of every value a chapter glued in this kernel, by name (filled by capture_glue()).
GLUED: dict[str, str] = {}


def capture_glue() -> None:
    """Remember the text of every ``myst_nb.glue`` call of this kernel (for :func:`glued`).

    ``glue(name, value)`` publishes the value's display data with the metadata
    ``{"scrapbook": {"name": …}}``; a wrapper around the kernel's display publisher keeps its
    ``text/plain``. Called by ``viz.use_book_theme()``; does nothing outside a kernel.
    """
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return
    shell = get_ipython()
    pub = getattr(shell, "display_pub", None)
    if pub is None or getattr(pub.publish, "_dpadmm_glue", False):
        return
    original = pub.publish

    def publish(data, metadata=None, *args, **kwargs):
        name = ((metadata or {}).get("scrapbook") or {}).get("name")
        if name:
            text = next((v for k, v in data.items() if k.endswith("text/plain")), None)
            if text is not None:
                GLUED[name] = text
        return original(data, metadata, *args, **kwargs)

    publish._dpadmm_glue = True
    pub.publish = publish


class _Inline:
    """A text shown as itself (no quotes) when jupyterlab-myst displays an inline expression."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(self.text)


def glued(name: str, fmt: str = "", site: str | None = None) -> _Inline:
    """The glued value ``name`` as ``{glue:text}`name:fmt``` shows it on the site.

    The JupyterLab edition of a chapter (``make lab``) reads ``{eval}`glued("name", "fmt")```
    where the source has the glue role; jupyterlab-myst evaluates it after the cells above ran.
    A value glued further down than the text that quotes it is not in the kernel yet: then
    ``site`` (the text/plain ``make book`` glued, which the edition carries when it has it) is
    shown, else a note until the notebook runs a second time.
    """
    text = GLUED.get(name, site)
    if text is None:  # glued by a cell further down: a second Run All fills it in
        return _Inline(f"[{name}: computed further down, run all cells once more]")
    from myst_nb.core.variables import format_plain_text

    return _Inline(format_plain_text(text, fmt))
