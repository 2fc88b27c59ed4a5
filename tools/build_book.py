"""Build the book: execute every notebook with papermill, then run Jupyter Book on the result.

One execution engine for the tests and the published site: the notebooks listed in
``_toc.yml`` are executed by papermill (``FAST=True`` for the test suite, ``FAST=False`` for the
published book) into a staging copy of the book, and Jupyter Book builds the site from that
copy with execution switched off and warnings as errors. The site's JavaScript (Vega, MathJax)
is copied from Python packages into ``site_static/vendor`` of the staging copy (served as
``_static/vendor``), so the site needs
no other host.

    python tools/build_book.py --mode full     # what `make book` runs
    python tools/build_book.py --mode fast     # what the test suite runs
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

#: Seconds a single cell may run before the kernel is stopped (a hung widget fails fast).
CELL_TIMEOUT = {"fast": 180, "full": 600}
#: Output type of an ipywidget view (live panels, tqdm.auto progress bars).
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
#: Seconds the kernel may take to start.
KERNEL_START_TIMEOUT = 60


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
      kernel, and without the state MyST-NB does not pull widget JavaScript from a CDN.
    * Hide the ``parameters`` cell and papermill's injected one: run settings, not content.
    """
    nb = json.loads(path.read_text())
    nb.get("metadata", {}).pop("widgets", None)
    for cell in nb["cells"]:
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if {"parameters", "injected-parameters"} & set(tags) and "remove-cell" not in tags:
            tags.append("remove-cell")
        if "outputs" in cell:
            cell["outputs"] = [o for o in cell["outputs"] if WIDGET_MIME not in o.get("data", {})]
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False))


def stage_sources() -> None:
    """Copy the book's sources into the staging directory (fresh each build)."""
    if STAGE.exists():
        shutil.rmtree(STAGE)
    STAGE.mkdir(parents=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(ROOT / name, STAGE / name)
    shutil.copytree(ROOT / "book", STAGE / "book", ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    shutil.copytree(ROOT / "site_static", STAGE / "site_static")
    vendor_javascript(STAGE / "site_static" / "vendor")


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


def build_site(mode: str) -> tuple[bool, str]:
    """Jupyter Book on the staged, executed sources; warnings are errors."""
    if HTML.exists():
        shutil.rmtree(HTML)
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(STAGE), "--path-output", str(STAGE),
           "--warningiserror", "--nitpick", "--keep-going", "--all"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    log = proc.stdout + proc.stderr
    built = STAGE / "_build" / "html"
    if proc.returncode == 0 and built.exists():
        shutil.copytree(built, HTML)
        return True, log
    return False, log


def build(mode: str, *, jobs: int = 2) -> BuildResult:
    """Execute every notebook of the TOC with papermill in ``mode`` and build ``_build/html``."""
    if mode not in CELL_TIMEOUT:
        raise ValueError(f"mode must be one of {sorted(CELL_TIMEOUT)}, got {mode!r}")
    os.environ.setdefault("DPADMM_CACHE", str(BUILD / "cache" / mode))
    start = time.perf_counter()
    result = BuildResult(mode)
    notebooks = toc_notebooks()
    stage_sources()
    targets = [STAGE / nb.relative_to(ROOT) for nb in notebooks]
    with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        result.notebooks = list(pool.map(execute_notebook, notebooks, targets, [mode] * len(notebooks)))
    for run in result.notebooks:
        print(f"[{'ok' if run.ok else 'FAILED'}] {run.path} ({run.seconds:.1f} s) {run.error}", flush=True)
    if all(n.ok for n in result.notebooks):
        result.site_ok, result.site_log = build_site(mode)
    else:
        result.site_log = "site not built: a notebook failed"
    result.seconds = time.perf_counter() - start
    (BUILD / "last-build.json").write_text(json.dumps({
        "mode": mode, "ok": result.ok, "seconds": round(result.seconds, 1),
        "notebooks": [n.__dict__ for n in result.notebooks],
    }, indent=1))
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=sorted(CELL_TIMEOUT), default="full")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks executed at once")
    args = parser.parse_args(argv)
    result = build(args.mode, jobs=args.jobs)
    if not result.site_ok:
        print(result.site_log[-20000:])
    print(f"{'built' if result.ok else 'FAILED'}: {len(result.notebooks)} notebooks, {result.seconds:.0f} s"
          + (f" → {HTML}" if result.ok else ""))
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
