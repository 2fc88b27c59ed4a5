"""The staging copy of the book, and its execution with papermill.

A build copies the book's sources into a staging directory (with the site's own JavaScript and
the generated part of the instructor page), then papermill executes every notebook of
``_toc.yml`` into that copy (``FAST=True`` for the test suite, ``FAST=False`` for the published
book) and makes each executed notebook fit for the static site.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .instructor import write_instructor_notes
from .reuse import write_atomic
from .toc import BUILD, ROOT, STAGE

#: Seconds a single cell may run before the kernel is stopped (a hung widget fails fast).
CELL_TIMEOUT = {"fast": 180, "full": 600}
#: Output type of an ipywidget view (live panels, tqdm.auto progress bars).
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
#: Seconds the kernel may take to start.
KERNEL_START_TIMEOUT = 60


def results_dir(out: Path = BUILD) -> Path:
    """Where the notebooks of the build into ``out`` write their results (claim records):
    ``DPADMM_RESULTS_DIR`` of that build, emptied when it starts, so the test build
    (``TEST_OUT``) and the published one (``BUILD``) never mix."""
    return Path(out) / "results"


def execution_stage(path: Path) -> int:
    """When a notebook runs: ``metadata.dpadmm.execution_stage`` (default 0). Every notebook of a
    stage starts after all notebooks of lower stages have finished (the reproducibility table
    reads the claim records the chapters wrote)."""
    stage = json.loads(path.read_text()).get("metadata", {}).get("dpadmm", {}).get("execution_stage", 0)
    if isinstance(stage, bool) or not isinstance(stage, int) or stage < 0:
        raise ValueError(f"{path.name}: metadata.dpadmm.execution_stage must be an integer ≥ 0, got {stage!r}")
    return stage


@dataclass
class NotebookRun:
    """What happened to one notebook."""

    path: str
    ok: bool
    seconds: float
    error: str = ""
    reused: bool = False  # a kept execution was reused (:mod:`.reuse`); ``seconds`` is the one it took


def execute_notebook(source: Path, target: Path, mode: str, progress=None, log: Path | None = None) -> NotebookRun:
    """Run one notebook with papermill (``FAST`` set by the mode) into ``target``.

    ``progress``: a queue that receives ``(path, "start")``, ``(path, "cell", done, total)`` and
    ``(path, "end", ok)`` (:mod:`.progress`). ``log``: a file that takes the kernel's own
    messages (its warnings on stderr) instead of the terminal.
    """
    import papermill

    from .progress import ENGINE

    start = time.perf_counter()
    rel = source.relative_to(ROOT).as_posix()
    if progress is not None:
        progress.put((rel, "start"))
    try:
        with _stderr_to(log):
            papermill.execute_notebook(
                str(source),
                str(target),
                parameters={"FAST": mode == "fast"},
                cwd=str(source.parent),
                kernel_name="python3",
                execution_timeout=CELL_TIMEOUT[mode],
                start_timeout=KERNEL_START_TIMEOUT,
                progress_bar=False,
                request_save_on_cell_execute=False,
                engine_name=ENGINE,
                progress=progress,
                progress_name=rel,
            )
        _prepare_for_site(target)
        run = NotebookRun(rel, True, time.perf_counter() - start)
    except Exception as exc:  # the report names the notebook, the cell and the error
        run = NotebookRun(rel, False, time.perf_counter() - start, f"{type(exc).__name__}: {exc}"[-4000:])
    if progress is not None:
        progress.put((rel, "end", run.ok))
    return run


@contextlib.contextmanager
def _stderr_to(log: Path | None):
    """Send this process's stderr (file descriptor 2, inherited by the kernel it starts) to ``log``."""
    if log is None:
        yield
        return
    log.parent.mkdir(parents=True, exist_ok=True)
    sys.stderr.flush()
    saved = os.dup(2)
    with open(log, "ab") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


def _prepare_for_site(path: Path) -> None:
    """Make an executed notebook fit for the static site.

    * Drop saved ipywidget state and every widget output (live panels, tqdm bars): they need a
      kernel, and without the state MyST-NB does not pull widget JavaScript from a CDN. A chart
      keeps its output: it carries the Vega-Lite spec next to its JupyterLab chart widget, and
      only the widget view is dropped (the site draws the spec).
    * Hide the ``parameters`` cell and papermill's injected one: run settings, not content.
    * Show the site's version of an output that has one (:func:`_site_version`): an exercise check
      not answered yet asks the reader to run the cell, which no one can do on a static page.
    """
    nb = json.loads(path.read_text())
    nb.get("metadata", {}).pop("widgets", None)
    for cell in nb["cells"]:
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if {"parameters", "injected-parameters"} & set(tags) and "remove-cell" not in tags:
            tags.append("remove-cell")
        if "outputs" in cell:
            cell["outputs"] = [_without_widget(_site_version(o)) for o in cell["outputs"]]
            cell["outputs"] = [o for o in cell["outputs"] if o is not None]
    write_atomic(path, json.dumps(nb, indent=1, ensure_ascii=False))  # whole or not at all


def _site_version(output: dict) -> dict:
    """``output`` as the static site shows it: its data replaced by the version for the site it
    carries in ``metadata["dpadmm"]["site"]`` (mime type → text, written by
    ``dpadmm_book.exercises.Feedback``), if any; else unchanged."""
    metadata = output.get("metadata") or {}
    site = (metadata.get("dpadmm") or {}).get("site")  # dpadmm_book.exercises.SITE_MIME_KEY
    if not site:
        return output
    return {**output, "data": dict(site), "metadata": {k: v for k, v in metadata.items() if k != "dpadmm"}}


def _without_widget(output: dict) -> dict | None:
    """An output without its widget view: ``None`` if nothing but the widget (and its text) is left."""
    data = output.get("data", {})
    if WIDGET_MIME not in data:
        return output
    rest = {k: v for k, v in data.items() if k not in (WIDGET_MIME, "text/plain")}
    if not rest:  # a live panel, a progress bar: nothing the site can show
        return None
    return {**output, "data": {k: v for k, v in data.items() if k != WIDGET_MIME}}


def stage_sources(stage: Path = STAGE) -> None:
    """Copy the book's sources into the staging directory (fresh each build: whatever a killed
    build left there is deleted first)."""
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(ROOT / name, stage / name)
    shutil.copytree(ROOT / "book", stage / "book", ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    shutil.copytree(ROOT / "site_static", stage / "site_static")
    vendor_javascript(stage / "site_static" / "vendor")
    write_instructor_notes(stage)  # generated from the staged chapters


#: The parts of MathJax's es5 directory the site serves: the loader, the core, TeX input with its
#: extensions (each loaded only by a page that uses it), HTML-CSS output with the TeX font, and
#: the hidden MathML that screen readers read.
MATHJAX_PARTS = ("startup.js", "core.js", "input/tex-base.js", "input/tex/extensions", "output/chtml.js",
                 "output/chtml/fonts/tex.js", "output/chtml/fonts/woff-v2", "a11y/assistive-mml.js")


def vendor_javascript(target: Path) -> None:
    """Put Vega (+Vega-Lite, vega-embed) and MathJax into the site's own static files."""
    import altair
    import mathjax
    import vl_convert

    target.mkdir(parents=True, exist_ok=True)
    vl_version = "v" + ".".join(altair.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    # The site's vegaEmbed always draws with ``ast: true``: Vega's expression interpreter (which
    # vega-embed carries) instead of compiling each expression with ``Function``, so the live
    # pages' Content-Security-Policy needs no 'unsafe-eval' (tools/bookbuild/csp.py).
    bundle = vl_convert.javascript_bundle(
        "window.vegaEmbed = function (el, spec, opts) {"
        " return vegaEmbed(el, spec, Object.assign({}, opts, { ast: true })); };"
        " window.vega = vega; window.vegaLite = vegaLite;", vl_version=vl_version
    )
    # An IIFE keeps the bundle's top-level names out of the page's global scope.
    write_atomic(target / "vega-bundle.js", f"/* Vega, Vega-Lite {vl_version}, vega-embed (via vl-convert) */\n"
                                            f"(function () {{\n{bundle}\n}})();\n")
    # MathJax as components (the loader loads what _config.yml's mathjax3_config names, autoload
    # any other TeX package on the page that uses it): no combined build, no menu.
    es5 = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    mj = target / "mathjax"
    for part in MATHJAX_PARTS:
        source, copy = es5 / part, mj / part
        copy.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, copy, dirs_exist_ok=True)
        else:
            shutil.copy2(source, copy)
    # Slider readouts that show grid values: one file for the site and the JupyterLab chart widget.
    shutil.copy2(ROOT / "dpadmm_book" / "viz" / "js" / "readouts.js", target / "dpadmm-readouts.js")
