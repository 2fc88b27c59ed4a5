"""Glue between the library's Altair charts and the two places they are read.

* :class:`VegaLiteRenderer` — a MyST-NB mime-render plugin (entry point
  ``myst_nb.mime_renderers``) that turns a chart's Vega-Lite spec into a ``<div>`` drawn by the
  Vega bundle the site serves itself (``_static/vendor/vega-bundle.js`` +
  ``_static/dpadmm-charts.js``). No chart reaches for a CDN, so the static site works offline.
* :func:`glued` — a glued value formatted as ``{glue:text}`` shows it, for the JupyterLab
  edition of a chapter (``make lab``), where jupyterlab-myst evaluates it inline.
* :func:`glue` — ``myst_nb.glue`` in the JupyterLite edition (Pyodide has no MyST-NB): it shows
  every glued value, its name beside it (``tools/bookbuild/lite.py`` makes ``from myst_nb import
  glue`` import it there).

The kernel's side lives below this module, which only reads it: the Altair renderer that
``viz.use_book_theme()`` enables (:func:`dpadmm_book.viz._theme.chart_renderer`: each chart's
output carries the spec itself and, inside a kernel, a :class:`~dpadmm_book.viz._widget.VegaChart`
widget view that JupyterLab draws with the Vega bundle the kernel ships; the book build drops the
widget and keeps the spec), and the output types and glue capture (:mod:`dpadmm_book._outputs`).
Their names stay importable from here. ``viz`` never imports this module
(``tests/test_layout.py``).

It is also a Sphinx extension (``_config.yml``, :func:`setup`): a page loads the chart scripts
(Vega, the readouts, the drawing script) only if it has a chart, and the theme's CSS keeps the
rules of the icons the site uses only (the icon font draws them; the theme's 1.5 MB Font
Awesome script is left out by ``site_static/_templates/layout.html``), and the icon fonts keep only
the glyphs the stylesheets name (156 KB → a few KB on every page).
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import re
from pathlib import Path

from ._outputs import GLUED, VEGALITE_MIMES, WIDGET_MIME, capture_glue, glue, glued

__all__ = ["VegaLiteRenderer", "chart_html", "chart_name", "chart_description", "compact_datasets", "setup",
           "glue", "glued", "GLUED", "VEGALITE_MIMES", "WIDGET_MIME", "capture_glue"]


def __getattr__(name: str):
    """``chart_renderer`` from :mod:`dpadmm_book.viz`, loaded on first use: the site build imports this
    module for its plugin and needs no Altair."""
    if name == "chart_renderer":
        from .viz._theme import chart_renderer

        return chart_renderer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def chart_html(spec: dict, where: str = "") -> str:
    """The HTML the site gets for one chart: an empty div, its spec as inert JSON, and a short
    description of what it shows for screen readers.

    The div carries the chart's name (``data-name``: Vega-Lite's ``description``, which Vega makes
    the chart's accessible name when ``site_static/dpadmm-charts.js`` draws it) and points at the
    description (``aria-describedby``). ``where`` (cell and output index) keeps ids unique when a
    page shows one chart twice.
    """
    text = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    chart_id = "vega-" + hashlib.sha1((where + text).encode()).hexdigest()[:12]
    compact = json.dumps(compact_datasets(spec), sort_keys=True, separators=(",", ":"))
    payload = compact.replace("</", "<\\/")  # a spec can never close the script element
    chart_id = html.escape(chart_id)
    return (
        f'<div class="dpadmm-vega" id="{chart_id}" data-name="{html.escape(chart_name(spec))}" '
        f'aria-describedby="{chart_id}-description"></div>\n'
        f'<script type="application/json" class="dpadmm-vega-spec" data-target="{chart_id}">'
        f"{payload}</script>\n"
        f'<p class="dpadmm-vega-description" id="{chart_id}-description">{html.escape(chart_description(spec))}</p>\n'
    )


# ------------------------------------------------------------------ chart data, written compactly
#: The least rows a dataset needs before :func:`compact_datasets` writes it by columns.
COMPACT_ROWS = 20


def _columns(rows: list) -> dict | None:
    """``rows`` (dicts with the same keys) by column: ``{"dpadmm_rows": n, "dpadmm_columns": [...]}``,
    each column ``[key, values]``, or ``[key, codes, strings]`` when it holds strings only (each
    row's string is ``strings[code]``). ``None`` if the rows are not all flat dicts with one set of keys."""
    if not rows or not all(isinstance(r, dict) for r in rows):
        return None
    keys = list(rows[0])
    if any(list(r) != keys for r in rows) or any(isinstance(v, (dict, list)) for r in rows for v in r.values()):
        return None
    columns = []
    for key in keys:
        values = [r[key] for r in rows]
        if all(isinstance(v, str) for v in values):
            strings = list(dict.fromkeys(values))
            code = {text: i for i, text in enumerate(strings)}
            columns.append([key, [code[v] for v in values], strings])
        else:
            columns.append([key, values])
    return {"dpadmm_rows": len(rows), "dpadmm_columns": columns}


#: Significant digits a chart's drawn numbers keep on the site (tooltips show at most 4; a pixel
#: of a 400-pixel axis is 1 part in 400 of its range): the rest of a float64 is page weight.
DRAWN_DIGITS = 6


def _named_outside_encodings(node, out: list) -> list:
    """Every key and string of a spec outside its ``encoding`` blocks and its data: where a filter,
    a slider, a calculation or a grouping names a field."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key not in ("encoding", "datasets", "data"):
                out.append(key)
                _named_outside_encodings(value, out)
    elif isinstance(node, list):
        for value in node:
            _named_outside_encodings(value, out)
    elif isinstance(node, str):
        out.append(node)
    return out


def _drawn(values: list) -> list:
    """A column's floats to :data:`DRAWN_DIGITS` significant digits (other values as they are)."""
    return [float(f"{v:.{DRAWN_DIGITS}g}") if isinstance(v, float) and math.isfinite(v) else v for v in values]


def compact_datasets(spec: dict) -> dict:
    """The spec with each large named dataset (Altair's ``datasets``) written by columns, its
    repeated keys and strings once (a page's charts shrink to about a third); the site's
    ``dpadmm-charts.js`` turns it back into the same rows before Vega-Lite sees it.

    A column that only encodings draw keeps its floats to :data:`DRAWN_DIGITS` significant digits;
    a column whose name appears anywhere else in the spec (a filter, a slider's comparison, a
    calculation, a grouping) keeps them exactly, so every comparison finds the rows it found
    before. A dataset that would not come back as those rows stays as it is."""
    datasets = spec.get("datasets")
    if not isinstance(datasets, dict):
        return spec
    named = "\n".join(_named_outside_encodings(spec, []))
    out = {}
    for name, rows in datasets.items():
        columns = _columns(rows) if isinstance(rows, list) and len(rows) >= COMPACT_ROWS else None
        if columns is not None:
            exact = _rows(columns) == rows
            for column in columns["dpadmm_columns"]:
                if len(column) == 2 and column[0] not in named:
                    column[1] = _drawn(column[1])
            expected = [{k: (_drawn([v])[0] if k not in named else v) for k, v in r.items()} for r in rows]
            columns = columns if exact and _rows(columns) == expected else None
        out[name] = columns if columns is not None else rows
    return {**spec, "datasets": out}


def _rows(columns: dict) -> list[dict]:
    """What ``dpadmm-charts.js`` makes of :func:`_columns`' output: the rows again."""
    n, cols = columns["dpadmm_rows"], columns["dpadmm_columns"]
    return [{c[0]: (c[2][c[1][i]] if len(c) == 3 else c[1][i]) for c in cols} for i in range(n)]


# ------------------------------------------------------------------- what a chart shows, in words
def _text(title) -> str:
    """A Vega-Lite title (a string, lines, or ``{"text": …}``) as one line."""
    if isinstance(title, dict):
        title = title.get("text")
    if isinstance(title, (list, tuple)):
        return " ".join(_text(t) for t in title if t).strip()
    return str(title).strip() if title else ""


def _views(spec: dict, encoding: dict | None = None):
    """Every view of a spec, depth first, with the encoding it inherits from the layers above:
    ``(view, encoding)``."""
    encoding = {**(encoding or {}), **spec.get("encoding", {})}
    yield spec, encoding
    for key in ("layer", "hconcat", "vconcat", "concat"):
        for child in spec.get(key, []):
            yield from _views(child, encoding if key == "layer" else None)
    if isinstance(spec.get("spec"), dict):
        yield from _views(spec["spec"], None)


def _title(channel) -> str:
    """A channel's own title (its ``title`` or its axis's), or ""."""
    if not isinstance(channel, dict):
        return ""
    axis = channel.get("axis") if isinstance(channel.get("axis"), dict) else {}
    return _text(channel.get("title")) or _text(axis.get("title"))


def _channel(encoding: dict, name: str, views=()) -> str:
    """What an encoding channel shows, as its axis reads: its title, else the title another view of the
    chart gives the same channel (a band layer ``y="lo"`` under a line titled "test error": Vega-Lite
    shows that title on the shared axis), and only then its field; with "(log scale)"."""
    channel = encoding.get(name)
    if not isinstance(channel, dict):
        return ""
    label = _title(channel)
    if not label:
        others = [enc.get(name) for _, enc in views]
        same = [c for c in others if isinstance(c, dict) and c.get("field") == channel.get("field")]
        label = next((t for t in map(_title, same + others) if t), "")
    label = label or str(channel.get("field") or "")
    scale = channel.get("scale") if isinstance(channel.get("scale"), dict) else {}
    return f"{label} (log scale)" if label and scale.get("type") == "log" else label


def chart_name(spec: dict) -> str:
    """The chart's name for screen readers: its title, else its panels' titles, else "y against x"."""
    titles = [_text(view.get("title")) for view, _ in _views(spec)]
    titles = list(dict.fromkeys(t for t in titles if t))
    if titles:
        return titles[0] if _text(spec.get("title")) else " / ".join(titles[:3])
    views = list(_views(spec))
    for _, encoding in views:
        x, y = _channel(encoding, "x", views), _channel(encoding, "y", views)
        if x and y:
            return f"{y} against {x}"
    return "Chart"


#: How the description names each kind of mark (text marks are labels, not data).
_MARKS = {"line": "lines", "area": "shaded bands", "point": "points", "circle": "points", "square": "points",
          "bar": "bars", "rule": "reference lines", "tick": "ticks", "rect": "cells", "trail": "lines"}


def chart_description(spec: dict) -> str:
    """One or two sentences on what a chart shows: its marks, axes, colours, panels and controls,
    e.g. "Lines and shaded bands: final objective (log scale) against ρ (log scale), one colour per
    algorithm, in 2 panels. Controls: slider ρ, drop-down calibration." """
    views = list(_views(spec))
    marks = []
    for view, _ in views:
        mark = view.get("mark")
        mark = mark.get("type") if isinstance(mark, dict) else mark
        if mark in _MARKS and _MARKS[mark] not in marks:
            marks.append(_MARKS[mark])
    kind = " and ".join(marks[:3]).capitalize() if marks else "Chart"
    words = []
    for _, encoding in views:
        x, y = _channel(encoding, "x", views), _channel(encoding, "y", views)
        if x and y:
            words.append(f"{y} against {x}")
            colour = _channel(encoding, "color", views) or _channel(encoding, "strokeDash", views)
            if colour:
                words.append(f"one colour per {colour}")
            break
    panels = sum(len(view.get(key, [])) for view, _ in views[:1] for key in ("hconcat", "vconcat", "concat"))
    facet = spec.get("facet")
    if isinstance(facet, dict):
        by = next((facet[k] for k in ("column", "row") if isinstance(facet.get(k), dict)), facet)
        words.append(f"one panel per {_text(by.get('title')) or by.get('field', 'value')}")
    elif panels > 1:
        words.append(f"in {panels} panels")
    controls = []
    for param in spec.get("params", []):
        bind = param.get("bind")
        if isinstance(bind, dict) and bind.get("input"):
            kind_of = {"range": "slider", "select": "drop-down", "radio": "choice", "checkbox": "switch"}.get(
                bind["input"], bind["input"])
            controls.append(f"{kind_of} {bind.get('name') or param.get('name')}".strip())
    text = f"{kind}: {', '.join(words)}." if words else f"{kind}."
    return text + (f" Controls: {', '.join(controls)}." if controls else "")


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


# ----------------------------------------------------------------------------- Sphinx extension
#: What a page with a chart loads (site_static/, served as _static/): Vega with Vega-Lite and
#: vega-embed, the slider readouts, and the script that draws the charts. Other pages load none.
CHART_SCRIPTS = ("vendor/vega-bundle.js", "vendor/dpadmm-readouts.js", "dpadmm-charts.js")


def _page_context(app, pagename, templatename, context, doctree) -> None:
    """html-page-context: the chart scripts, on this page only, if it has a chart; the
    bibliography's entries as list items of its list (sphinxcontrib-bibtex gives them the
    deprecated role doc-biblioentry, which leaves its role="list" without items for screen readers)."""
    body = context.get("body") or ""
    if 'class="dpadmm-vega-spec"' in body:
        for name in CHART_SCRIPTS:
            app.builder.add_js_file(name, defer="defer")
    if 'role="doc-biblioentry"' in body:
        context["body"] = body.replace('role="doc-biblioentry"', 'role="listitem"')


#: One icon rule of Font Awesome's CSS (``.fa-bars:before,.fa-navicon:before{content:"\\f0c9"}``).
_ICON_RULE = re.compile(r'(?:\.fa-[a-z0-9-]+:before,?)+\{content:"[^"]*"\}')
#: A Font Awesome class name in a page or a script.
_ICON_CLASS = re.compile(r"\bfa-[a-z0-9-]+")


def icons_used(outdir: Path) -> set[str]:
    """The Font Awesome class names (``fa-bars``) the built pages and the theme's scripts use
    (not Font Awesome's own script, which names them all)."""
    used: set[str] = set()
    pages = [p for p in outdir.rglob("*.html") if "_static" not in p.relative_to(outdir).parts]
    scripts = [p for p in outdir.glob("_static/**/*.js") if p.name != "fontawesome.js"]
    for path in [*pages, *scripts]:
        used.update(_ICON_CLASS.findall(path.read_text(errors="replace")))
    return used


def trim_icon_css(css: str, used: set[str]) -> str:
    """Font Awesome's CSS with only the icon rules whose class names are ``used`` (it has ~1,900)."""

    def keep(rule: re.Match) -> str:
        names = set(re.findall(r"\.(fa-[a-z0-9-]+):before", rule.group(0)))
        return rule.group(0) if names & used else ""

    return _ICON_RULE.sub(keep, css)


#: A private-use codepoint in a stylesheet string (``content:"\\f0c9"``, ``--pst-icon-x:"\\f104"``).
_CSS_CODEPOINT = re.compile(r'"\\(f[0-9a-f]{3})"')


def icon_codepoints(static: Path) -> set[int]:
    """The icon codepoints (U+F000–U+FFFF, Font Awesome's) that the site's stylesheets name: the
    trimmed icon rules, the theme's icon variables and the other themes' own icons."""
    sheets = [p for p in Path(static).rglob("*.css") if "live" not in p.relative_to(static).parts]
    return {int(code, 16) for sheet in sheets for code in _CSS_CODEPOINT.findall(sheet.read_text(errors="replace"))}


def subset_icon_fonts(static: Path, codepoints: set[int]) -> dict[str, tuple[int, int]]:
    """Keep only the glyphs of ``codepoints`` in the icon fonts under ``static/vendor/fontawesome``
    (WOFF2 and TrueType, in place): {file name: (bytes before, bytes after)}."""
    from fontTools import subset

    sizes = {}
    for path in sorted(Path(static).glob("vendor/fontawesome/**/*")):
        if path.suffix not in (".woff2", ".ttf"):
            continue
        options = subset.Options()
        options.flavor = "woff2" if path.suffix == ".woff2" else None
        options.layout_features = ["*"]
        options.name_IDs = ["*"]  # the licence and copyright notices stay in the font
        font = subset.load_font(str(path), options)
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=sorted(codepoints))
        subsetter.subset(font)
        before = path.stat().st_size
        subset.save_font(font, str(path), options)
        sizes[path.name] = (before, path.stat().st_size)
    return sizes


def _only_the_icons_used(app, exception) -> None:
    """build-finished: the theme's CSS keeps only the icon rules of the icons the pages use (its
    Font Awesome script, which would draw them as SVG, is left out of the page by the site's
    ``site_static/_templates/layout.html``; the icon font draws them), and the icon fonts only the
    glyphs the stylesheets then name."""
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    css = outdir / "_static" / "styles" / "pydata-sphinx-theme.css"
    if css.exists():
        css.write_text(trim_icon_css(css.read_text(), icons_used(outdir)))
        subset_icon_fonts(outdir / "_static", icon_codepoints(outdir / "_static"))


def setup(app) -> dict:
    """Sphinx extension (listed in ``_config.yml``): chart scripts only where there are charts,
    only the icons the site uses, bibliography entries as list items."""
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _only_the_icons_used)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
