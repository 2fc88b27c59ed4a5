"""Build the book: execute every notebook with papermill, then run Jupyter Book on the result.

One execution engine for the tests and the published site: the notebooks listed in
``_toc.yml`` are executed by papermill (``FAST=True`` for the test suite, ``FAST=False`` for the
published book) into a staging copy of the book, and Jupyter Book builds the site from that
copy with execution switched off and warnings as errors. The site's JavaScript (Vega, MathJax)
is copied from Python packages into ``site_static/vendor`` of the staging copy (served as
``_static/vendor``), so the site needs
no other host.

    python tools/build_book.py --mode full                      # what `make book` runs: _build/html
    python tools/build_book.py --mode fast --out _build/test    # what the test suite runs

A build writes ``<out>/stage`` (executed sources) and ``<out>/html`` (the site); ``out`` is
``_build`` by default. The test suite builds into ``_build/test`` so that ``make test`` never
overwrites the full book ``make book`` built in ``_build/html``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build"
STAGE = BUILD / "stage"
HTML = BUILD / "html"
#: Where the test suite's fast build goes (never over the published book in ``HTML``).
TEST_OUT = BUILD / "test"

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


@dataclass
class BuildResult:
    mode: str
    notebooks: list[NotebookRun] = field(default_factory=list)
    site_ok: bool = False
    site_log: str = ""
    seconds: float = 0.0
    stage: Path = STAGE  # executed sources of this build
    html: Path = HTML    # the site this build wrote

    @property
    def ok(self) -> bool:
        return self.site_ok and all(n.ok for n in self.notebooks)


def toc_files(root: Path = ROOT) -> list[str]:
    """Every document named in ``_toc.yml`` (without suffix), in book order."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    found = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                found.append(entry["file"])
            walk(entry.get("sections"))
            for part in entry.get("parts", []) or []:
                walk(part.get("chapters"))

    walk(toc.get("chapters"))
    for part in toc.get("parts", []) or []:
        walk(part.get("chapters"))
    return found


def toc_notebooks(root: Path = ROOT) -> list[Path]:
    """The notebooks of the book: the ``_toc.yml`` entries that are ``.ipynb`` files."""
    out = []
    for entry in toc_files(root):
        path = root / f"{entry}.ipynb"
        if path.exists():
            out.append(path)
        elif not any((root / f"{entry}{s}").exists() for s in (".md", ".rst")):
            raise FileNotFoundError(f"_toc.yml names {entry!r} but no .ipynb/.md file exists")
    return out


def execute_notebook(source: Path, target: Path, mode: str) -> NotebookRun:
    """Run one notebook with papermill (``FAST`` set by the mode) into ``target``."""
    import papermill

    start = time.perf_counter()
    rel = source.relative_to(ROOT).as_posix()
    try:
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
        )
        _prepare_for_site(target)
        return NotebookRun(rel, True, time.perf_counter() - start)
    except Exception as exc:  # the report names the notebook, the cell and the error
        return NotebookRun(rel, False, time.perf_counter() - start, f"{type(exc).__name__}: {exc}"[-4000:])


def _prepare_for_site(path: Path) -> None:
    """Make an executed notebook fit for the static site.

    * Drop saved ipywidget state and every widget output (live panels, tqdm bars): they need a
      kernel, and without the state MyST-NB does not pull widget JavaScript from a CDN. A chart
      keeps its output: it carries the Vega-Lite spec next to its JupyterLab chart widget, and
      only the widget view is dropped (the site draws the spec).
    * Hide the ``parameters`` cell and papermill's injected one: run settings, not content.
    """
    nb = json.loads(path.read_text())
    nb.get("metadata", {}).pop("widgets", None)
    for cell in nb["cells"]:
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if {"parameters", "injected-parameters"} & set(tags) and "remove-cell" not in tags:
            tags.append("remove-cell")
        if "outputs" in cell:
            cell["outputs"] = [_without_widget(o) for o in cell["outputs"]]
            cell["outputs"] = [o for o in cell["outputs"] if o is not None]
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False))


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
    """Copy the book's sources into the staging directory (fresh each build)."""
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(ROOT / name, stage / name)
    shutil.copytree(ROOT / "book", stage / "book", ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    shutil.copytree(ROOT / "site_static", stage / "site_static")
    vendor_javascript(stage / "site_static" / "vendor")
    import build_student  # the instructor notes are generated from the staged chapters (tools/build_student.py)

    build_student.write_instructor_notes(stage)


def vendor_javascript(target: Path) -> None:
    """Put Vega (+Vega-Lite, vega-embed) and MathJax into the site's own static files."""
    import altair
    import mathjax
    import vl_convert

    target.mkdir(parents=True, exist_ok=True)
    vl_version = "v" + ".".join(altair.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    bundle = vl_convert.javascript_bundle(
        "window.vegaEmbed = vegaEmbed; window.vega = vega; window.vegaLite = vegaLite;", vl_version=vl_version
    )
    # An IIFE keeps the bundle's top-level names out of the page's global scope.
    (target / "vega-bundle.js").write_text(f"/* Vega, Vega-Lite {vl_version}, vega-embed (via vl-convert) */\n(function () {{\n{bundle}\n}})();\n")
    es5 = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    mj = target / "mathjax"
    mj.mkdir(exist_ok=True)
    shutil.copy2(es5 / "tex-chtml-full.js", mj / "tex-chtml-full.js")
    shutil.copytree(es5 / "output" / "chtml" / "fonts", mj / "output" / "chtml" / "fonts", dirs_exist_ok=True)
    # Slider readouts that show grid values: one file for the site and the JupyterLab chart widget.
    shutil.copy2(ROOT / "dpadmm_lite" / "viz" / "js" / "readouts.js", target / "dpadmm-readouts.js")


def build_site(mode: str, stage: Path = STAGE, html: Path = HTML) -> tuple[bool, str]:
    """Jupyter Book on the staged, executed sources into ``html``; warnings are errors."""
    if html.exists():
        shutil.rmtree(html)
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(stage), "--path-output", str(stage),
           "--warningiserror", "--nitpick", "--keep-going", "--all"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    log = proc.stdout + proc.stderr
    built = stage / "_build" / "html"
    if proc.returncode == 0 and built.exists():
        shutil.copytree(built, html)
        return True, log
    return False, log


def build(mode: str, *, jobs: int = 2, out: Path | None = None) -> BuildResult:
    """Execute every notebook of the TOC with papermill in ``mode`` and build ``<out>/html``.

    ``out`` defaults to ``_build`` (the published book, ``_build/html``); the test suite passes
    ``TEST_OUT``.
    """
    if mode not in CELL_TIMEOUT:
        raise ValueError(f"mode must be one of {sorted(CELL_TIMEOUT)}, got {mode!r}")
    os.environ.setdefault("DPADMM_CACHE", str(BUILD / "cache" / mode))
    out = Path(out) if out is not None else BUILD
    results = results_dir(out)
    shutil.rmtree(results, ignore_errors=True)
    results.mkdir(parents=True)
    previous_results = os.environ.get("DPADMM_RESULTS_DIR")
    os.environ["DPADMM_RESULTS_DIR"] = str(results)  # inherited by the workers and their kernels
    start = time.perf_counter()
    result = BuildResult(mode, stage=out / "stage", html=out / "html")
    notebooks = toc_notebooks()
    stages = [execution_stage(nb) for nb in notebooks]
    stage_sources(result.stage)
    targets = [result.stage / nb.relative_to(ROOT) for nb in notebooks]
    runs: dict[int, NotebookRun] = {}
    try:
        with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
            for stage in sorted(set(stages)):
                batch = [i for i, s in enumerate(stages) if s == stage]
                done = pool.map(execute_notebook, [notebooks[i] for i in batch], [targets[i] for i in batch],
                                [mode] * len(batch))
                runs.update(zip(batch, done))
    finally:
        if previous_results is None:
            os.environ.pop("DPADMM_RESULTS_DIR", None)
        else:
            os.environ["DPADMM_RESULTS_DIR"] = previous_results
    result.notebooks = [runs[i] for i in range(len(notebooks))]
    for run in result.notebooks:
        print(f"[{'ok' if run.ok else 'FAILED'}] {run.path} ({run.seconds:.1f} s) {run.error}", flush=True)
    if all(n.ok for n in result.notebooks):
        result.site_ok, result.site_log = build_site(mode, result.stage, result.html)
    else:
        result.site_log = "site not built: a notebook failed"
    result.seconds = time.perf_counter() - start
    out.mkdir(parents=True, exist_ok=True)
    (out / "last-build.json").write_text(json.dumps({
        "mode": mode, "ok": result.ok, "seconds": round(result.seconds, 1),
        "notebooks": [n.__dict__ for n in result.notebooks],
    }, indent=1))
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=sorted(CELL_TIMEOUT), default="full")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks executed at once")
    parser.add_argument("--out", type=Path, default=BUILD, help="build into OUT/stage and OUT/html (default _build)")
    args = parser.parse_args(argv)
    result = build(args.mode, jobs=args.jobs, out=args.out)
    if not result.site_ok:
        print(result.site_log[-20000:])
    print(f"{'built' if result.ok else 'FAILED'}: {len(result.notebooks)} notebooks, {result.seconds:.0f} s"
          + (f" → {result.html}" if result.ok else ""))
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
