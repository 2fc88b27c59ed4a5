"""What a chapter's kernel leaves in its notebook: the output types of the book's charts, and the
values it glued.

Below everything that writes or reads those outputs: :mod:`dpadmm_book.viz` writes the charts and
starts the glue capture (``viz.use_book_theme()``), :mod:`dpadmm_book._book` draws the charts on the
site, and the JupyterLab edition of a chapter (``make lab``) shows glued values with :func:`glued`.
It imports nothing from the library.
"""

from __future__ import annotations

#: Vega-Lite mime types the plugin draws (Altair 6 writes v6; v5 kept for older outputs).
VEGALITE_MIMES = ("application/vnd.vegalite.v6+json", "application/vnd.vegalite.v5+json")

#: Output type of an ipywidget view.
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


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


def glue(name: str, variable, display: bool = True) -> None:
    """``myst_nb.glue`` where MyST-NB does not run (the JupyterLite edition: Pyodide has no Sphinx).

    The value is published as ``myst_nb.glue`` publishes it (its display data with the metadata
    ``{"scrapbook": {"name": name}}``, so :func:`capture_glue` keeps it), but always shown: in a
    notebook no ``{glue:text}`` role fills it into the text, so a value glued with
    ``display=False`` is shown as ``name = value`` instead of nowhere.
    """
    from IPython.core.formatters import format_display_data
    from IPython.display import publish_display_data

    data, _ = format_display_data(variable)
    if not display:
        data = {"text/plain": f"{name} = {data.get('text/plain', repr(variable))}"}
    publish_display_data(data, metadata={"scrapbook": {"name": name, "mime_prefix": ""}})


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
