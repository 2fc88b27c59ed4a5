"""The JupyterLite edition's kernel packages, beside the live panels' Pyodide (one copy of Pyodide).

:func:`install_kernel` runs after :func:`bookbuild.live.install` and adds to the site's
``_static/live/pyodide/`` what the Lite edition's kernel (``tools/bookbuild/lite.py``) loads beyond
the live panels, every file checked as the live panels' files are: the kernel's own packages and the
chapters' pandas and joblib from the same PyPI carrier, each with the sha256 of Pyodide's official
lock; pure-Python wheels Pyodide lacks, pinned by sha256 on PyPI; the library's Lite wheel. Its own
lock, :data:`LITE_LOCK`, lists them with their sha256 (Pyodide checks each file it loads); the live
panels' lock is left as it is, so their button downloads nothing more.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

from .live import (CACHE, CORE_FILES, NPM_DIR, REQUIRES, WHEEL_NAME, _EPOCH, LiveBuildError, _licence_texts,
                   carrier_wheel, closure, library_wheel, npm_core, sha256, verified_packages)
from .toc import ROOT

#: What the JupyterLite edition's kernel loads beyond the live panels (tools/bookbuild/lite.py), from
#: the same carrier and checked the same way: micropip, ssl, sqlite3, jedi and IPython (the kernel's
#: own start, with their dependencies), pandas and joblib (the chapters').
#: scikit-learn is the Lasso the cyffers2023 chapter compares with (imported by its first cell, so
#: loaded only when that chapter runs).
KERNEL_REQUIRES = ("micropip", "ssl", "sqlite3", "jedi", "ipython", "pandas", "joblib", "scikit-learn")
#: Pure-Python wheels the chapters need that Pyodide 0.27.7's lock lacks (or has at versions the
#: library cannot use: Altair 5.4), pinned by version and sha256 and fetched from PyPI with pip
#: (``--require-hashes``): name → (version, sha256, imports, depends). jsonschema stays at 4.17.3:
#: 4.18 and later need rpds-py, which has no WebAssembly wheel on PyPI.
PYPI_WHEELS = {
    "altair": ("6.3.0", "7defb6ca730676dfc99a299768e2769f51585fcb3dc960ea71aacc368929d65e", ["altair"],
               ["typing-extensions", "jinja2", "jsonschema", "packaging", "narwhals"]),
    "anywidget": ("0.11.0", "c574d9acc6503ad27b37a9acea48f957a8ba7c9c9876cfcb37898931c098ce9d", ["anywidget"],
                  ["ipywidgets", "psygnal", "typing-extensions"]),
    "attrs": ("23.2.0", "99b87a485a5820b23b879f04c2305b44b951b502fd64be915879d77a7e8fc6f1", ["attr", "attrs"], []),
    "comm": ("0.2.3", "c615d91d75f7f04f095b30d1c1711babd43bdc6419c1be9886a85f2f4e489417", ["comm"], ["traitlets"]),
    "ipywidgets": ("8.1.9", "f2b8cbcaae10252b809fbe4d7470db75c09b769a32cbf816d20e5ca6d3c5a79d", ["ipywidgets"],
                   ["comm", "ipython", "traitlets"]),
    # the reproducibility chapter's anchors (docutils.nodes.make_id, as Sphinx makes them); Pyodide's
    # own docutils 0.21.1 is not in the carrier
    "docutils": ("0.21.1", "14c8d34a55b46c88f9f714adb29cefbdd69fb82f3fef825e59c5faab935390d8", ["docutils"], []),
    "jinja2": ("3.1.6", "85ece4451f492d0c13c5dd7c13a64681a86afae63a5f347908daf103ce6d2f67", ["jinja2"], ["markupsafe"]),
    "jsonschema": ("4.17.3", "a870ad254da1a8ca84b6a2905cac29d265f805acc57af304784962a2aa6508f6", ["jsonschema"],
                   ["attrs", "pyrsistent"]),
    "narwhals": ("2.29.0", "1c69b3dc30240f6e848c5a673cafc86affa44184ecce721e25b7194663ad10dc", ["narwhals"], []),
    "psygnal": ("0.16.1", "93b96894d8c46f0a3c0bfaaf8abe73f0d6db2c20cc6d303624cf08f85abc3c92", ["psygnal"], []),
    "pyrsistent": ("0.20.0", "c55acc4733aad6560a7f5f818466631f07efc001fd023f34a6c203f8b6df0f0b", ["pyrsistent"], []),
    "tqdm": ("4.67.1", "26445eca388f82e72884e0d580d5464cd801a3ea01e63e5601bdff9ba6a48de2", ["tqdm"], []),
    "typing-extensions": ("4.16.0", "481caa481374e813c1b176ada14e97f1f67a4539ce9cfeb3f350d78d6370c2e8",
                          ["typing_extensions"], []),
}
#: The kernel's own wheels, as ``jupyterlite-pyodide-kernel`` (the ``lite`` extra's pin) ships them in
#: its lab extension (``static/pypi``): file → (sha256, imports, depends). The kernel installs them
#: one after another with micropip and piplite when it starts, unless Pyodide loaded them already;
#: listed in the Lite lock they load with Pyodide, at once and in parallel with the rest
#: (``lite.PRELOAD``), checked by sha256 as every other package.
KERNEL_WHEELS = {
    "piplite-0.6.1-py3-none-any.whl": ("0b9377aa9bcbca47ef5c285b216ab8624628a5dfec40931ff0f47a79eb18585e",
                                       ["piplite"], ["micropip"]),
    "pyodide_kernel-0.6.1-py3-none-any.whl": ("cb0e3f0fa14dedcf472fe40a3858d9eb4f717876b55f585f35c8f65e7d040be7",
                                              ["pyodide_kernel"], ["ipykernel", "comm", "ipython"]),
    "ipykernel-6.9.2-py3-none-any.whl": ("225b335e963b2db975a6ff6c1e9e592795ea1e2590b947c0a5f35d9edf5f490d",
                                         ["ipykernel"], []),
    "widgetsnbextension-4.0.999-py3-none-any.whl": (
        "3bdaf5e164a501756d36cb9526e7f56e7775eba7950784264d1e867bc1c0c416", ["widgetsnbextension"], []),
}
#: MarkupSafe (Jinja2's, which Altair imports) has no pure-Python wheel on PyPI: its source
#: distribution, pinned by sha256, gives the pure-Python package (its C speed-up left out; the
#: package falls back to ``_native.py`` itself), packed reproducibly by :func:`markupsafe_wheel`.
MARKUPSAFE = ("3.0.2", "ee55d3edf80167e48ea11a923c7386f4669df67d7994554387f84e7d8b0a2bf0")
#: The JupyterLite edition's lock (beside Pyodide's files, which it shares with the live panels).
LITE_LOCK = "pyodide-lock-lite.json"
#: What the chapters' ``import dpadmm_lite`` and ``import dpadmm_book`` need loaded in the Lite kernel: the live
#: panels' three, and what the book's package imports lazily (charts, widgets, frames, sweeps), which Pyodide
#: cannot see in a cell.
LITE_DEPENDS = [*REQUIRES, "pandas", "altair", "anywidget", "ipywidgets", "joblib", "tqdm"]
#: ``myst_nb`` in the browser: the chapters' ``from myst_nb import glue`` imports the library's
#: fallback (myst_nb itself needs Sphinx and does not run in Pyodide). In the Lite wheel only.
MYST_NB_SHIM = (b'"""The book\'s glue in the JupyterLite edition (myst_nb needs Sphinx, which Pyodide lacks): '
                b'dpadmm_book._book.glue\nshows each glued value in the notebook instead."""\n\n'
                b"from dpadmm_book._book import glue\n\n__all__ = [\"glue\"]\n")


def _pypi_files(cache: Path, specs: list[tuple[str, str, str]], binary: bool) -> dict[str, Path]:
    """The files ``specs`` ((name, version, sha256)) from PyPI, by pip with their hashes pinned,
    kept in ``cache/pypi``; each checked again here."""
    folder = cache / "pypi"
    folder.mkdir(parents=True, exist_ok=True)

    def found() -> dict[str, Path]:
        have = {sha256(p.read_bytes()): p for p in folder.iterdir() if p.suffix in (".whl", ".gz")}
        return {name: have[digest] for name, _, digest in specs if digest in have}

    files = found()
    missing = [spec for spec in specs if spec[0] not in files]
    if missing:
        req = folder / ("requirements-binary.txt" if binary else "requirements-source.txt")
        req.write_text("".join(f"{name}=={version} --hash=sha256:{digest}\n" for name, version, digest in missing))
        kind = ["--only-binary", ":all:", "--platform", "any", "--python-version", "3.12", "--implementation", "py"] \
            if binary else ["--no-binary", ":all:"]
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--require-hashes", *kind,
                        "-r", str(req), "-d", str(folder)], check=True)
        files = found()
    for name, version, digest in specs:
        if name not in files:
            raise LiveBuildError(f"{name} {version} with sha256 {digest} could not be fetched from PyPI")
    return files


def _wheel_bytes(entries: list[tuple[str, bytes]]) -> bytes:
    """A wheel of ``entries`` (its RECORD added), reproducibly: same entries, same bytes."""
    dist = next(name.split("/")[0] for name, _ in entries if name.endswith(".dist-info/METADATA"))
    record = "".join(
        f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}\n"
        for name, data in entries) + f"{dist}/RECORD,,\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in [*entries, (f"{dist}/RECORD", record.encode())]:
            info = zipfile.ZipInfo(name, _EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, data)
    return buf.getvalue()


def markupsafe_wheel(sdist: Path) -> tuple[str, bytes]:
    """MarkupSafe's pure-Python wheel from its pinned source distribution (:data:`MARKUPSAFE`)."""
    import tarfile

    version = MARKUPSAFE[0]
    top = f"markupsafe-{version}/"
    entries = []
    with tarfile.open(sdist) as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            name = member.name
            if name.startswith(top + "src/markupsafe/") and member.isfile() and not name.endswith((".c", ".pyi")):
                entries.append((name[len(top + "src/"):], tar.extractfile(member).read()))
            elif name == top + "LICENSE.txt":
                licence = tar.extractfile(member).read()
    dist = f"markupsafe-{version}.dist-info"
    entries += [(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: MarkupSafe\nVersion: {version}\n".encode()),
                (f"{dist}/WHEEL", b"Wheel-Version: 1.0\nGenerator: dpadmm-book\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
                (f"{dist}/LICENSE.txt", licence)]
    return f"markupsafe-{version}-py3-none-any.whl", _wheel_bytes(entries)


def kernel_wheels_dir() -> Path:
    """The folder of the kernel's own wheels in the installed ``jupyterlite-pyodide-kernel``."""
    folder = Path(sys.prefix) / "share/jupyter/labextensions/@jupyterlite/pyodide-kernel-extension/static/pypi"
    if not folder.is_dir():
        raise LiveBuildError(f"{folder} is missing: install the `lite` extra (pip install -e '.[lite]')")
    return folder


def _lock_entry(name: str, version: str, file_name: str, data: bytes, imports, depends) -> dict:
    return {"name": name, "version": version, "file_name": file_name, "install_dir": "site", "sha256": sha256(data),
            "package_type": "package", "imports": list(imports), "depends": list(depends),
            "unvendored_tests": False, "shared_library": False}


def install_kernel(html: Path, *, vega_bundle: str, npm_dir: Path = NPM_DIR, cache: Path = CACHE) -> dict:
    """Add the JupyterLite kernel's packages to the site's Pyodide folder (one copy of Pyodide for the
    live panels and the Lite edition) and write its lock, :data:`LITE_LOCK`.

    After :func:`install` (the live panels' files and lock). Adds: the packages of
    :data:`KERNEL_REQUIRES` with their dependencies, from the carrier, each with the sha256 of
    Pyodide's official lock; the pure-Python wheels of :data:`PYPI_WHEELS` and MarkupSafe, pinned by
    sha256; the library's Lite wheel (``<version>+lite``: the library, the chart widget's scripts,
    ``vega_bundle`` — Vega, Vega-Lite and vega-embed, which ``VegaChart`` sends to the page — and the
    ``myst_nb`` stand-in). Every entry of the Lite lock carries the sha256 of its file, which Pyodide
    checks when it loads it. Returns ``{"files": {file: bytes}, "download": bytes of every package
    in the Lite lock and the core}``."""
    out = html / "_static" / "live" / "pyodide"
    site_lock = json.loads((out / "pyodide-lock.json").read_text())
    official = json.loads((npm_core(npm_dir) / "pyodide-lock.json").read_text())
    lock = {"info": site_lock["info"], "packages": {k: dict(v) for k, v in site_lock["packages"].items()}}
    names = [n for n in closure(official, KERNEL_REQUIRES) if n not in lock["packages"]]
    files = verified_packages(official, names, carrier_wheel(cache))
    for name in names:
        lock["packages"][name] = dict(official["packages"][name])
    wheels = _pypi_files(cache, [(n, v, d) for n, (v, d, _, _) in PYPI_WHEELS.items()], binary=True)
    for name, (version, digest, imports, depends) in PYPI_WHEELS.items():
        data = wheels[name].read_bytes()
        files[wheels[name].name] = data
        lock["packages"][name] = _lock_entry(name, version, wheels[name].name, data, imports, depends)
    sdist = _pypi_files(cache, [("markupsafe", *MARKUPSAFE)], binary=False)["markupsafe"]
    ms_name, ms_data = markupsafe_wheel(sdist)
    files[ms_name] = ms_data
    lock["packages"]["markupsafe"] = _lock_entry("markupsafe", MARKUPSAFE[0], ms_name, ms_data, ["markupsafe"], [])
    kernel_pypi = kernel_wheels_dir()
    for file_name, (digest, imports, depends) in KERNEL_WHEELS.items():
        data = (kernel_pypi / file_name).read_bytes()
        if sha256(data) != digest:
            raise LiveBuildError(f"{kernel_pypi / file_name} is not the file of the pinned jupyterlite-pyodide-kernel "
                                 f"(sha256 {sha256(data)}, expected {digest})")
        files[file_name] = data
        name, version = file_name.split("-")[:2]
        name = name.replace("_", "-")
        lock["packages"][name] = _lock_entry(name, version, file_name, data, imports, depends)
    js = ROOT / "dpadmm_book" / "viz" / "js"
    extra = {f"dpadmm_book/viz/js/{p.name}": p.read_bytes() for p in sorted(js.glob("*.js"))}
    extra["dpadmm_book/viz/js/vega-bundle.js"] = vega_bundle.encode()
    extra["myst_nb/__init__.py"] = MYST_NB_SHIM
    wheel_name, wheel, version = library_wheel(local="lite", extra=extra)
    files[wheel_name] = wheel
    lock["packages"][WHEEL_NAME] = _lock_entry(WHEEL_NAME, version, wheel_name, wheel, ["dpadmm_lite", "dpadmm_book", "myst_nb"],
                                               LITE_DEPENDS)
    closure(lock, lock["packages"])  # every dependency is in the lock (LiveBuildError otherwise)
    for file_name, data in files.items():
        (out / file_name).write_bytes(data)
    (out / LITE_LOCK).write_text(json.dumps(lock, indent=1, sort_keys=True))
    head = "\n\nThe JupyterLite edition's packages (pyodide-lock-lite.json): "
    notices = (out / "LICENSES.txt").read_text().split(head)[0]  # once, however often this runs
    (out / "LICENSES.txt").write_text(
        notices + head + "IPython, jedi, parso, pandas, joblib, Altair,\nipywidgets, anywidget, Jinja2, "
        "MarkupSafe (its pure-Python part, from its source distribution) and the\nothers below; their licence "
        "texts as each wheel ships them.\n\n" + _licence_texts(files))
    loaded = [*CORE_FILES, LITE_LOCK, *(entry["file_name"] for entry in lock["packages"].values())]
    return {"files": {name: len(data) for name, data in files.items()}, "lock": lock,
            "download": sum((out / name).stat().st_size for name in loaded)}
