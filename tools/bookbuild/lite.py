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
#: The JupyterLab extensions of the Lite edition, and only these (the build ignores what else the
#: environment has: the JupyterLab edition's Jupytext and ipylab, built for a newer JupyterLab, logged
#: an error and 20 warnings at every launch). From the environment: the kernel's own, and
#: anywidget's (the chart widget). Pinned wheels (name → version, sha256) where the environment's
#: version was built for a newer JupyterLab than JupyterLite 0.6.4's 4.4.5 (each logged a warning
#: per shared module it could not match): ipywidgets' front end 3.0.15 (3.0.17 wants 4.6.2)
#: and jupyterlab-myst 2.4.2 (2.6 and 2.7 want 4.5).
ENV_EXTENSIONS = ("@jupyterlite/pyodide-kernel-extension", "anywidget")
EXTENSION_WHEELS = {
    "jupyterlab_widgets": ("3.0.15", "d59023d7d7ef71400d51e6fee9a88867f6e65e10a4201605d2d7f3e8f012a31c"),
    "jupyterlab_myst": ("2.4.2", "2aa406d4754dcd2ec4fe749b6a2e15f0bc8a6c5c8f6b549419583715d8146230"),
}
#: The marker in a chapter page's launch button that this build replaces with the download size.
SIZE_MARK = re.compile(r'(<span class="dpadmm-lite-size">)[^<]*(</span>)')
EDITIONS = ("book", "student")


#: Pyodide loads the packages a cell imports, and no others: a package the library imports inside a
#: function is not loaded for it. A chapter whose code calls such a function gets the import in its
#: first code cell: (what its code calls, the line added).
LAZY_IMPORTS = [
    (re.compile(r"\b(feature_graph|graph_guided_\w+)\("),
     "import sklearn.covariance  # the Lite edition: scikit-learn for problems.feature_graph's graphical lasso"),
]


class LiteBuildError(RuntimeError):
    """The JupyterLite edition could not be built as it must be (offline, from the site's Pyodide)."""


def lite_markdown(source: str, here: str, book: "Book") -> str:
    """One markdown cell as the Lite edition shows it. jupyterlab-myst knows no Sphinx: it resolves a
    reference only to a target of the same notebook it has already rendered (else it logs "Cross
    reference target was not found"), has no bibliography and no MyST-NB glue; and the Pyodide
    kernel evaluates no inline expressions (the JupyterLab edition's ``{eval}`` for glued numbers).
    So, at build time: citations become the site's author–year text, references to another
    chapter links to its notebook and to the same chapter its name in plain text (as ``make lab``
    writes them, ``tools/lab.py``), and a glued number its name in code font — the cell that
    computes it shows ``name = value`` (``dpadmm_book._outputs.glue``)."""
    import lab

    source = lab.GLUE_ROLE.sub(lambda m: f"`{m.group(1)}`", source)
    return lab.lab_markdown(source, book.cites, book.labels, here)


class Book:
    """What rewriting a chapter's markdown needs from the whole book: the citations' text and the
    labels of every chapter (``tools/lab.py``)."""

    def __init__(self, notebooks: dict[str, dict], root: Path = ROOT):
        import lab
        from references import bibliography

        self.cites = bibliography(root / "book" / "references.bib")
        self.labels = lab.label_index(notebooks)


def lite_notebook(nb: dict, doc: str, edition: str, book: Book | None = None) -> dict:
    """A chapter as the Lite edition ships it: no outputs, ``FAST = True``, its markdown as
    :func:`lite_markdown` writes it (given ``book``); without solutions in the student edition."""
    if edition not in EDITIONS:
        raise ValueError(f"edition must be one of {EDITIONS}, got {edition!r}")
    if edition == "student":
        nb, _ = strip_notebook(nb, doc)
    else:
        nb = json.loads(json.dumps(nb))
    nb.get("metadata", {}).pop("papermill", None)
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown" and book is not None:
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            cell["source"] = lite_markdown(source, f"{Path(doc).name}.ipynb", book).splitlines(keepends=True)
        if cell["cell_type"] != "code":
            cell.pop("outputs", None)
            cell.pop("execution_count", None)
            continue
        cell["outputs"], cell["execution_count"] = [], None
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            cell["source"] = re.sub(r"^FAST\s*=\s*False\b", "FAST = True", source, flags=re.M)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    text = "\n".join("".join(c["source"]) for c in code)
    for uses, line in LAZY_IMPORTS:
        if code and uses.search(text):
            first = "".join(code[0]["source"]).rstrip("\n")
            code[0]["source"] = (first + "\n" + line + "\n").splitlines(keepends=True)
    nb["metadata"]["kernelspec"] = {"name": "python", "display_name": "Python (Pyodide)", "language": "python"}
    return nb


def write_contents(target: Path, edition: str, root: Path = ROOT) -> list[Path]:
    """The chapters of ``_toc.yml`` as Lite notebooks in ``target`` (emptied first)."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    written = []
    sources = {source.name: json.loads(source.read_text()) for source in toc_notebooks(root)}
    book = Book(sources, root)
    for source in toc_notebooks(root):
        nb = lite_notebook(sources[source.name], source.relative_to(root).with_suffix("").as_posix(), edition, book)
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


def lab_extensions() -> list[Path]:
    """The folders and wheels of the Lite edition's JupyterLab extensions (:data:`ENV_EXTENSIONS`,
    :data:`EXTENSION_WHEELS`, each wheel checked by its sha256)."""
    share = Path(sys.prefix) / "share" / "jupyter" / "labextensions"
    folders = [share / name for name in ENV_EXTENSIONS]
    for folder in folders:
        if not (folder / "package.json").exists():
            raise LiteBuildError(f"{folder} is missing: install the `lite` extra (pip install -e '.[lite]')")
    wheels = lite_packages._pypi_files(lite_packages.CACHE, [(n, v, d) for n, (v, d) in EXTENSION_WHEELS.items()],
                                       binary=True)
    return [*folders, *(wheels[name] for name in EXTENSION_WHEELS)]


def _jupyter_lite() -> str:
    exe = Path(sys.executable).parent / "jupyter-lite"
    if not exe.exists():
        raise LiteBuildError(f"{exe} is missing: install the `lite` extra (pip install -e '.[lite]')")
    return str(exe)


def build(html: Path, edition: str = "book", *, work: Path | None = None) -> dict:
    """Write the Lite edition into ``html/lite`` (see the module docstring); ``html`` must have the
    live panels' Pyodide (``_static/live/pyodide``). Returns what was built: ``download`` (bytes a
    chapter's launch fetches at most, before the notebook's first run), ``files``, ``seconds``."""
    from dpadmm_book.viz._widget import bundle_source

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
           "--contents", str(contents), "--no-sourcemaps", "--no-unused-shared-packages", "--ignore-sys-prefix",
           *(f"--LiteBuildConfig.federated_extensions={path}" for path in lab_extensions()),
           *(arg for app in APPS for arg in ("--apps", app))]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=work)
    if proc.returncode != 0:
        raise LiteBuildError(f"jupyter lite build failed:\n{(proc.stdout + proc.stderr)[-6000:]}")
    for db in out.rglob(".jupyterlite.doit.db"):
        db.unlink()
    # the tab's icons (idle, busy), which the build copies from jupyter_server only when it reads the
    # environment (--ignore-sys-prefix: each was a 404 and a console error while the kernel ran)
    import jupyter_server

    shutil.copytree(Path(jupyter_server.__file__).parent / "static" / "favicons", out / "static" / "favicons",
                    dirs_exist_ok=True)
    # and named in each application's page: without one the browser asks for /favicon.ico at the
    # server's root (a 404 and a console error on every reload), before JupyterLab sets its own
    for app in APPS:
        page = out / app / "index.html"
        page.write_text(page.read_text().replace(
            '<link rel="manifest"', '<link rel="icon" href="../static/favicons/favicon.ico" />\n    <link rel="manifest"', 1))
    settings = check(out)
    # the bytes a launch downloads, at most: the Pyodide core and every package of the Lite lock,
    # and JupyterLite's own files (its JavaScript, extensions, the chapter)
    app = sum(p.stat().st_size for p in out.rglob("*") if p.is_file() and "files" not in p.relative_to(out).parts[:1])
    download = kernel["download"] + app
    label_pages(html, download)
    manifest = {"edition": edition, "download": download, "kernel_packages": kernel["download"], "app": app,
                "notebooks": [p.name for p in notebooks], "pyodideUrl": settings["pyodideUrl"]}
    (out / "dpadmm-lite.json").write_text(json.dumps(manifest, indent=1))
    return {**manifest, "seconds": time.perf_counter() - start}


def label_pages(html: Path, download: int) -> None:
    """Write the bytes a launch downloads (``download``, in MB) into every page's "Open in JupyterLite" label."""
    label = f"{download / 1e6:.0f} MB"
    for page in Path(html).rglob("*.html"):
        if LITE in page.relative_to(html).parts[:1]:
            continue
        text = page.read_text()
        if "dpadmm-lite-size" in text:
            page.write_text(SIZE_MARK.sub(lambda m: m[1] + label + m[2], text))


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
