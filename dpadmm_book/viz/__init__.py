"""Altair chart builders for the book.

* :func:`sweep_chart` — a precomputed sweep whose Vega-Lite sliders filter the grid; it keeps
  working on the static site, with no kernel.
* curve builders (:func:`convergence`, …) for traces, from :mod:`._curves`.
* :func:`use_book_theme` — the book's chart theme, called once in each chapter's preamble.
* :func:`table` — a pandas table as the book prints it: number formats, spacing, a caption.
* :func:`typeset` — ``F(x_t^DP)`` → "F(xₜᴰᴾ)": axis titles Vega can show (no MathJax in charts).
* :class:`VegaChart` — a chart drawn in JupyterLab by the Vega bundle the kernel ships (no
  CDN), updated in place when only its rows change (used by the live panels).
"""

from ._sweep import sweep_chart
from ._table import table
from ._theme import use_book_theme
from ._typeset import typeset
from ._widget import VegaChart

__all__ = ["sweep_chart", "table", "use_book_theme", "VegaChart", "typeset"]

from . import _curves
from ._curves import *  # noqa: F401,F403

__all__ += list(_curves.__all__)
