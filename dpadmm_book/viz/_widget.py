"""Charts in JupyterLab, offline: one small widget per chart, one Vega bundle per kernel.

JupyterLab 4 has no renderer for Vega-Lite v6 (what Altair 6 writes), and Altair's HTML output
loads Vega from a CDN. :class:`VegaChart` draws a chart with the Vega + Vega-Lite + vega-embed
bundle of ``vl-convert-python`` instead, which :class:`VegaBundle` sends to the page once per
kernel (a model without a view; every chart widget refers to it). Nothing is fetched from
another host.

A chart's rows travel apart from its structure: ``spec`` is the Vega-Lite spec with its
datasets renamed ``dpadmm_d0``, ``dpadmm_d1``, … in order of use, ``datasets`` the rows. When a
live panel's new chart has the same structure as the one shown, :meth:`VegaChart.update` only
sends the rows and the page swaps them into the live Vega view (no compile, no re-embed).

A chart wider than its output area is drawn anew to fit it (``js/fit.js``): its legends under the
plots, then a row of charts wrapped into shorter rows; one that fits no way scrolls inside its box.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anywidget
import ipywidgets as w
import traitlets

__all__ = ["VegaChart", "VegaBundle", "bundle_widget", "split_datasets", "in_kernel"]

_JS = Path(__file__).with_name("js")
_PREFIX = "dpadmm_d"
#: The snippet vl-convert bundles: the libraries as one global the chart module picks up.
_SNIPPET = "globalThis.__dpadmmVegaLibs = { vegaEmbed, vega, vegaLite };"
_CSS = """
.dpadmm-vega-lab { margin: 0.25rem 0; max-width: 100%; overflow-x: auto; }
.dpadmm-vega-lab .vega-bindings { display: flex; flex-wrap: wrap; gap: 0.25rem 1.5rem; margin-top: 0.5rem;
  font-size: 0.9rem; }
.dpadmm-vega-lab .vega-bind-name { font-weight: 600; margin-right: 0.25rem; }
"""


def vega_lite_version() -> str:
    """``"v6.4"``: the Vega-Lite version Altair writes, as vl-convert names it."""
    import altair

    return "v" + ".".join(altair.SCHEMA_VERSION.lstrip("v").split(".")[:2])


_SOURCE: dict[str, str] = {}


#: The bundle the JupyterLite edition's wheel of the library carries (``tools/bookbuild/lite.py``):
#: in the browser there is no vl-convert (a native package) to build it.
SHIPPED_BUNDLE = _JS / "vega-bundle.js"


def bundle_source() -> str:
    """Vega, Vega-Lite and vega-embed as one script (built by vl-convert once, then cached on disk).

    In Pyodide (the JupyterLite edition) the script is the one shipped with the package,
    :data:`SHIPPED_BUNDLE`, built by vl-convert when the site was built."""
    if sys.platform == "emscripten":
        try:
            return SHIPPED_BUNDLE.read_text()
        except OSError as err:
            raise RuntimeError(f"{SHIPPED_BUNDLE} is missing: in the browser the charts draw with the Vega bundle "
                               "that the JupyterLite edition's wheel of dpadmm_lite ships") from err
    import vl_convert

    version = vega_lite_version()
    key = f"{version}-{getattr(vl_convert, '__version__', 'x')}"
    if key not in _SOURCE:
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dpadmm_lite"
        path = cache / f"vega-bundle-{key}.js"
        try:
            _SOURCE[key] = path.read_text()
        except OSError:
            _SOURCE[key] = vl_convert.javascript_bundle(_SNIPPET, vl_version=version)
            try:
                cache.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(_SOURCE[key])
                tmp.replace(path)
            except OSError:  # a read-only home: build it again next time
                pass
    return _SOURCE[key]


class VegaBundle(w.Widget):
    """The Vega JavaScript as a widget model (no view): sent once, shared by every chart."""

    source = traitlets.Unicode("").tag(sync=True)
    version = traitlets.Unicode("").tag(sync=True)


_BUNDLE: VegaBundle | None = None


def bundle_widget() -> VegaBundle:
    """The kernel's one :class:`VegaBundle` (created, with the bundle, on first use)."""
    global _BUNDLE
    if _BUNDLE is None or _BUNDLE.comm is None:
        _BUNDLE = VegaBundle(source=bundle_source(), version=vega_lite_version())
    return _BUNDLE


def split_datasets(spec: dict) -> tuple[dict, dict]:
    """``(structure, datasets)``: the spec without rows, and the rows by stable name.

    Altair names a dataset by the hash of its rows, so new data means new names. Here every
    ``{"data": {"name": …}}`` reference to a top-level dataset is renamed ``dpadmm_d<i>`` in the
    order the spec first uses it: two charts that differ only in their rows have equal
    structures. Unused datasets are dropped.
    """
    spec = dict(spec)
    rows = spec.pop("datasets", None) or {}
    names: dict[str, str] = {}

    def walk(node):
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if key == "data" and isinstance(value, dict) and value.get("name") in rows:
                    names.setdefault(value["name"], f"{_PREFIX}{len(names)}")
                    out[key] = {**value, "name": names[value["name"]]}
                else:
                    out[key] = walk(value)
            return out
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    structure = walk(spec)
    return structure, {new: rows[old] for old, new in names.items()}


class VegaChart(anywidget.AnyWidget):
    """A Vega-Lite chart drawn in JupyterLab with the kernel's own Vega bundle.

    Parameters
    ----------
    chart
        An Altair chart or a Vega-Lite spec (dict); may be set later with :meth:`update`.
    """

    _esm = "\n".join((_JS / name).read_text() for name in ("readouts.js", "fit.js", "chart_widget.js"))
    _css = _CSS
    spec = traitlets.Dict().tag(sync=True)
    datasets = traitlets.Dict().tag(sync=True)
    bundle = traitlets.Instance(VegaBundle, allow_none=True).tag(sync=True, **w.widget_serialization)
    bundle_version = traitlets.Unicode("").tag(sync=True)
    #: Bumped when an update leaves the chart as it is, so the page still reports a redraw.
    revision = traitlets.Int(0).tag(sync=True)

    def __init__(self, chart: Any = None, **kwargs):
        kwargs.setdefault("bundle", bundle_widget())
        kwargs.setdefault("bundle_version", kwargs["bundle"].version)
        super().__init__(**kwargs)
        if chart is not None:
            self.update(chart)

    def update(self, chart: Any) -> str:
        """Show ``chart``: ``"same"`` if nothing changed, ``"data"`` if only its rows changed
        (swapped in place), else ``"spec"`` (drawn anew)."""
        spec = to_spec(chart)
        structure, datasets = split_datasets(spec)
        if self.spec and structure == self.spec:
            if datasets == self.datasets:
                self.revision += 1
                return "same"
            self.datasets = datasets
            return "data"
        with self.hold_sync():
            self.spec = structure
            self.datasets = datasets
        return "spec"


def to_spec(chart: Any) -> dict:
    """The Vega-Lite dict of an Altair chart (without the slow schema validation) or a dict."""
    if isinstance(chart, dict):  # used as is: split_datasets never changes it
        return chart
    to_dict = getattr(chart, "to_dict", None)
    if to_dict is None:
        raise ValueError(f"chart must be an Altair chart or a Vega-Lite dict, got {type(chart).__name__}")
    # The book's chart builders are tested; validating the schema would be half of a redraw.
    return to_dict(validate=False)


def in_kernel() -> bool:
    """True inside a Jupyter kernel (where a widget can reach a front end)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None
