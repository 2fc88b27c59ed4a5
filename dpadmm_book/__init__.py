"""dpadmm_book — the book's instruments around the library :mod:`dpadmm_lite`.

A chapter imports both and each line says which it uses::

    import dpadmm_lite as dl      # the algorithms, their privacy and accounting
    import dpadmm_book as book    # the book's instruments

    frame = book.sweep.grid(task, {"epsilon": [0.1, 1.0]}, seeds=range(10), name="demo")
    book.viz.objective_gap([trace])

Submodules (``book.sweep``: cached parameter sweeps; ``book.claims``: the claim records and their
statistics; ``book.viz``: charts; ``book.widgets``: JupyterLab's sliders; ``book.live``: the site's
"Run live" panels; ``book.exercises``: the exercises' checks; ``book.arena``: the arena's fields) load on
first use. The Sphinx and pybtex plugins are ``dpadmm_book._book`` and ``dpadmm_book._bibstyle``.

Importing this package first installs the sweep cache's record of every module's import-time state
(:mod:`dpadmm_book._state`), then imports the library.
"""

import importlib

from . import _state

_state.install()  # the import-time state of every module, for the sweep cache's key (dpadmm_book.sweep)

import dpadmm_lite  # noqa: E402  (after the hook: the library's modules are recorded as their import left them)

__version__ = dpadmm_lite.__version__

_SUBMODULES = {"sweep", "claims", "viz", "widgets", "live", "exercises", "arena"}

__all__ = sorted(_SUBMODULES)


def __getattr__(name):
    if name in _SUBMODULES:
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:  # a dependency of the book that a library-only install lacks
            if (exc.name or "").partition(".")[0] in _state._OURS:
                raise
            raise ModuleNotFoundError(f"dpadmm_book.{name} needs {exc.name!r}, a dependency of the book's instruments "
                                      "that the library alone does not install: pip install 'dpadmm-lite[book]'",
                                      name=exc.name) from exc
    raise AttributeError(f"module 'dpadmm_book' has no attribute {name!r}")


_state.record_loaded()  # the library and this package as imported: the state the sweep cache compares against
