"""The JupyterLite edition: every chapter as a notebook that runs in the reader's browser, offline.

``build(html)`` writes ``html/lite/``, a JupyterLite site (``jupyterlite-core`` and
``jupyterlite-pyodide-kernel`` at the pins of the ``lite`` extra, whose kernel runs on Pyodide
0.27.x), into a book site that :func:`bookbuild.live.install` already gave its Pyodide files:

* the kernel's Pyodide is the site's own (``pyodideUrl`` → ``_static/live/pyodide/pyodide.js``: one
  copy for the live panels and the notebooks), with its own lock (:data:`bookbuild.lite_packages.LITE_LOCK`,
  every package checked by sha256, :func:`bookbuild.lite_packages.install_kernel`), and the kernel never
  asks PyPI (``disablePyPIFallback``): nothing is fetched from another host;
* the chapters of ``_toc.yml`` as notebooks, without outputs and with ``FAST = True`` (small
  grids, a browser's budget); the book edition keeps its solutions (folded in the text as on the
  site), the student edition (``edition="student"``) has none (:func:`bookbuild.solutions.strip_notebook`);
* the launch buttons of the chapter pages (``site_static/_templates/layout.html``) get the number
  of bytes that opening a chapter downloads.

JupyterLite keeps a reader's edits in the browser (IndexedDB) between visits; File → Download
saves a notebook as ``.ipynb``.

    python -m bookbuild.lite --site _build/test/html            # from tools/: an already built site
    python -m bookbuild.lite --site _build/student/html --edition student

The build's work folder is ``lite-work-<edition>`` beside the site (never in it); the Vega bundle the
chart widget needs in the browser is vl-convert's, cached by the library (``viz.bundle_source``).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from . import lite_packages
from .solutions import strip_notebook
from .toc import ROOT, toc_notebooks

#: The site's folder of the Lite edition.
LITE = "lite"
#: JupyterLite's applications shipped: the one-notebook view the launch buttons open, the file
#: browser, and JupyterLab.
APPS = ("notebooks", "tree", "lab")
#: What the kernel loads while Pyodide starts, all at once and checked by the Lite lock: every package
#: it needs (it installs those not listed one after another, with micropip and piplite).
PRELOAD = ["micropip", "piplite", "ssl", "sqlite3", "ipykernel", "comm", "pyodide_kernel", "jedi", "ipython"]
#: The marker in a chapter page's launch button that this build replaces with the download size.
SIZE_MARK = re.compile(r'(<span class="dpadmm-lite-size">)[^<]*(</span>)')
EDITIONS = ("book", "student")


class LiteBuildError(RuntimeError):
    """The JupyterLite edition could not be built as it must be (offline, from the site's Pyodide)."""


def lite_notebook(nb: dict, doc: str, edition: str) -> dict:
    """A chapter as the Lite edition ships it: no outputs, ``FAST = True``; without solutions in
    the student edition."""
    if edition not in EDITIONS:
        raise ValueError(f"edition must be one of {EDITIONS}, got {edition!r}")
    if edition == "student":
        nb, _ = strip_notebook(nb, doc)
    else:
        nb = json.loads(json.dumps(nb))
    nb.get("metadata", {}).pop("papermill", None)
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            cell.pop("outputs", None)
            cell.pop("execution_count", None)
            continue
        cell["outputs"], cell["execution_count"] = [], None
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            cell["source"] = re.sub(r"^FAST\s*=\s*False\b", "FAST = True", source, flags=re.M)
    nb["metadata"]["kernelspec"] = {"name": "python", "display_name": "Python (Pyodide)", "language": "python"}
    return nb


def write_contents(target: Path, edition: str, root: Path = ROOT) -> list[Path]:
    """The chapters of ``_toc.yml`` as Lite notebooks in ``target`` (emptied first)."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    written = []
    for source in toc_notebooks(root):
        nb = lite_notebook(json.loads(source.read_text()), source.relative_to(root).with_suffix("").as_posix(), edition)
        path = target / source.name
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
        written.append(path)
    return written


def lite_config() -> dict:
    """``jupyter-lite.json`` of the Lite edition: the site's Pyodide, its Lite lock, no PyPI.
    (JupyterLite makes a ``./`` URL relative to the file; ``loadPyodideOptions``' URLs are made
    relative to the Lite root by the kernel.)"""
    pyodide = "../_static/live/pyodide/"
    return {"jupyter-lite-schema-version": 0, "jupyter-config-data": {
        "appName": "Differentially private ADMM — notebooks",
        # the application object as window.jupyterapp, as JupyterLab's own UI tests use it: the
        # book's browser tests and benchmarks/lite.py run cells through it
        "exposeAppInBrowser": True,
        "litePluginSettings": {"@jupyterlite/pyodide-kernel-extension:kernel": {
            "pyodideUrl": f"./{pyodide}pyodide.js",
            "disablePyPIFallback": True,
            "loadPyodideOptions": {"lockFileURL": f"{pyodide}{lite_packages.LITE_LOCK}", "packages": PRELOAD},
        }},
    }}


def _jupyter_lite() -> str:
    exe = Path(sys.executable).parent / "jupyter-lite"
    if not exe.exists():
        raise LiteBuildError(f"{exe} is missing: install the `lite` extra (pip install -e '.[lite]')")
    return str(exe)


def build(html: Path, edition: str = "book", *, work: Path | None = None) -> dict:
    """Write the Lite edition into ``html/lite`` (see the module docstring); ``html`` must have the
    live panels' Pyodide (``_static/live/pyodide``). Returns what was built: ``download`` (bytes a
    chapter's launch fetches at most, before the notebook's first run), ``files``, ``seconds``."""
    from dpadmm_lite.viz._widget import bundle_source

    start = time.perf_counter()
    html = Path(html).resolve()
    if not (html / "_static" / "live" / "pyodide" / "pyodide-lock.json").exists():
        raise LiteBuildError(f"{html} has no _static/live/pyodide: install the live panels' files first (live.install)")
    work = Path(work) if work is not None else html.parent / f"lite-work-{edition}"
    kernel = lite_packages.install_kernel(html, vega_bundle=bundle_source())
    contents = work / "files"
    notebooks = write_contents(contents, edition)
    lite_dir = work / "lite-dir"
    if lite_dir.exists():
        shutil.rmtree(lite_dir)
    lite_dir.mkdir(parents=True)
    (lite_dir / "jupyter-lite.json").write_text(json.dumps(lite_config(), indent=1, ensure_ascii=False))
    out = html / LITE
    if out.exists():
        shutil.rmtree(out)
    # a task database left by an earlier build makes JupyterLite skip its configuration steps
    # (the output then has no pyodideUrl): always a fresh one, in the work folder
    for db in (lite_dir / ".jupyterlite.doit.db", work / ".jupyterlite.doit.db"):
        db.unlink(missing_ok=True)
    cmd = [_jupyter_lite(), "build", "--lite-dir", str(lite_dir), "--output-dir", str(out),
           "--contents", str(contents), "--no-sourcemaps", "--no-unused-shared-packages",
           *(arg for app in APPS for arg in ("--apps", app))]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=work)
    if proc.returncode != 0:
        raise LiteBuildError(f"jupyter lite build failed:\n{(proc.stdout + proc.stderr)[-6000:]}")
    for db in out.rglob(".jupyterlite.doit.db"):
        db.unlink()
    settings = check(out)
    # the bytes a launch downloads, at most: the Pyodide core and every package of the Lite lock,
    # and JupyterLite's own files (its JavaScript, extensions, the chapter)
    app = sum(p.stat().st_size for p in out.rglob("*") if p.is_file() and "files" not in p.relative_to(out).parts[:1])
    download = kernel["download"] + app
    label = f"{download / 1e6:.0f} MB"
    for page in html.rglob("*.html"):
        if LITE in page.relative_to(html).parts[:1]:
            continue
        text = page.read_text()
        if "dpadmm-lite-size" in text:
            page.write_text(SIZE_MARK.sub(lambda m: m[1] + label + m[2], text))
    manifest = {"edition": edition, "download": download, "kernel_packages": kernel["download"], "app": app,
                "notebooks": [p.name for p in notebooks], "pyodideUrl": settings["pyodideUrl"]}
    (out / "dpadmm-lite.json").write_text(json.dumps(manifest, indent=1))
    return {**manifest, "seconds": time.perf_counter() - start}


def check(out: Path) -> dict:
    """The kernel settings of the built ``out/jupyter-lite.json``; :class:`LiteBuildError` unless
    they point at the site's own Pyodide and forbid the PyPI fallback."""
    config = json.loads((out / "jupyter-lite.json").read_text())["jupyter-config-data"]
    settings = config.get("litePluginSettings", {}).get("@jupyterlite/pyodide-kernel-extension:kernel", {})
    url = settings.get("pyodideUrl", "")
    if not url.startswith("./") or "_static/live/pyodide/pyodide.js" not in url:
        raise LiteBuildError(f"the Lite edition's pyodideUrl is {url!r}, not the site's own Pyodide")
    if settings.get("disablePyPIFallback") is not True:
        raise LiteBuildError("the Lite edition's kernel may fall back to PyPI (disablePyPIFallback is not true)")
    return settings


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, required=True, help="a built site with its live panels' files")
    parser.add_argument("--edition", choices=EDITIONS, default="book")
    args = parser.parse_args(argv)
    result = build(args.site, args.edition)
    print(f"Lite edition ({args.edition}): {len(result['notebooks'])} notebooks, a launch downloads at most "
          f"{result['download'] / 1e6:.1f} MB, {result['seconds']:.0f} s → {args.site / LITE}")
    return 0


if __name__ == "__main__":  # python -m bookbuild.lite --site <html> (from tools/)
    raise SystemExit(main())
