"""Altair chart builders for the book.

* :func:`sweep_chart` — a precomputed sweep whose Vega-Lite sliders filter the grid; it keeps
  working on the static site, with no kernel.
* curve builders (:func:`convergence`, …) for traces, from :mod:`._curves`.
* :func:`use_book_theme` — the book's chart theme, called once in each chapter's preamble.
"""

from ._sweep import sweep_chart
from ._theme import use_book_theme

__all__ = ["sweep_chart", "use_book_theme"]

from . import _curves
from ._curves import *  # noqa: F401,F403

__all__ += list(_curves.__all__)
