"""The live panels of the published site: what a "Run live" button re-runs in the reader's browser.

The site's "Run live" panels (``site_static/live/``) run Python in WebAssembly (Pyodide) in a
Web Worker, and the worker calls this package — the library itself, not a JavaScript port::

    from dpadmm_book import live
    live.run_panel("admm", {"rho": 0.03, "topology_name": "ring", "n_agents": 10, "iterations": 60})

Each panel is a pure function of its control values that returns the rows of the chapter's static
chart (same fields, so the page draws them with that chart's own Vega-Lite spec) and the run's
summary line (privacy included). One module per chapter (``live.admm``, ``live.huang2019``, …)
holds its panel's problem, its function and its entries of :data:`PANELS`, which describe the
controls for the page;
``tools/bookbuild/live.py`` writes it into the site. Only numpy and scipy are needed here: no
pandas, no Altair, no widgets.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from .admm import admm_consensus, admm_problem
from .huang2019 import HUANG2019_LAM, HUANG2019_RHO, huang2019_problem, huang2019_star
from .privacy import accountants
from .zhang2017 import ZHANG2017_LAM, zhang2017_network, zhang2017_problem

__all__ = ["HUANG2019_LAM", "HUANG2019_RHO", "PANELS", "ZHANG2017_LAM", "accountants", "admm_consensus",
           "admm_problem", "huang2019_problem", "huang2019_star", "ranges", "run_panel", "zhang2017_network",
           "run_share", "zhang2017_problem"]

#: The chapters' modules (every module of this package whose name has no leading underscore): each has
#: PANELS (its panels) and the functions they name. A new chapter's panel is a new module here.
_CHAPTERS = tuple(importlib.import_module(f"{__name__}.{module.name}")
                  for module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name)
                  if not module.name.startswith("_"))

#: Every live panel: the chapter (page name under book/), the title of the static chart whose
#: spec the page reuses, the library function, and its controls (name, kind, default, range or
#: options, and how the page shows it: a log slider moves by ``step`` in log₁₀ units). A control with ``idle``
#: (``{"when": {other control: [its values]}, "why": reason}``) has no effect while every named control holds one of
#: the values listed: the page disables it there and says why (no control without an effect).
PANELS: dict[str, dict[str, Any]] = {name: panel for chapter in _CHAPTERS for name, panel in chapter.PANELS.items()}
_FUNCTIONS = {name: getattr(chapter, panel["function"])
              for chapter in _CHAPTERS for name, panel in chapter.PANELS.items()}
#: The panels whose runs can be split between workers (``PANELS[name]["share"]``): name → the function that runs
#: one share and returns rows for the panel function's ``precomputed`` argument.
_SHARES = {name: getattr(chapter, panel["share"])
           for chapter in _CHAPTERS for name, panel in chapter.PANELS.items() if "share" in panel}
if len(PANELS) != sum(len(chapter.PANELS) for chapter in _CHAPTERS):
    raise RuntimeError("two modules of dpadmm_book.live define a panel of the same name")


def ranges(panel: str) -> dict[str, tuple[float, float]]:
    """The ranges of the numeric controls of the live panel ``panel`` (name → (min, max)), for
    the chapter's JupyterLab panel (``book.widgets.live(..., ranges=live.ranges("admm"))``): the
    reader moves the same controls over the same ranges in JupyterLab and on the site."""
    if panel not in PANELS:
        raise ValueError(f"panel must be one of {sorted(PANELS)}, got {panel!r}")
    return {c["name"]: (c["min"], c["max"]) for c in PANELS[panel]["controls"] if "min" in c}


def _checked(panel: str, values: dict[str, Any]) -> None:
    if panel not in PANELS:
        raise ValueError(f"panel must be one of {sorted(PANELS)}, got {panel!r}")
    names = {c["name"] for c in PANELS[panel]["controls"]}
    unknown = set(values) - names
    if unknown:
        raise ValueError(f"values has controls {sorted(unknown)} that panel {panel!r} does not have ({sorted(names)})")


def run_panel(panel: str, values: dict[str, Any], shared: list[dict] | None = None) -> dict[str, Any]:
    """Run the live panel ``panel`` (a key of :data:`PANELS`) at the control ``values``.

    ``shared``: the rows of every share of the panel's runs (:func:`run_share`, each computed by another worker);
    the panel then only assembles them — the same result as running everything here."""
    _checked(panel, values)
    if shared is None:
        return _FUNCTIONS[panel](**values)
    if panel not in _SHARES:
        raise ValueError(f"shared: panel {panel!r} does not split its runs (only {sorted(_SHARES)} do)")
    return _FUNCTIONS[panel](**values, precomputed=shared)


def run_share(panel: str, values: dict[str, Any], share: int, shares: int, costs: dict[str, float] | None = None,
              assigned: dict[str, int] | None = None) -> list[dict]:
    """Share ``share`` of ``shares`` of the runs of ``panel`` at ``values`` (a panel with ``"share"`` in
    :data:`PANELS`), split by ``costs`` (the ``costs`` of the panel's results so far) and ``assigned`` (the share
    each run had last time, ``"task:algorithm"`` → share): its rows, for :func:`run_panel`'s ``shared``.
    Workers given the same arguments split the same way."""
    _checked(panel, values)
    if panel not in _SHARES:
        raise ValueError(f"panel must be one that splits its runs, one of {sorted(_SHARES)}, got {panel!r}")
    return _SHARES[panel](share, shares, costs, assigned, **values)
