"""Jupyter Book on an executed staging copy: the static site, with warnings as errors."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from . import csp, live
from .toc import HTML, ROOT, STAGE


def build_site(mode: str, stage: Path = STAGE, html: Path = HTML, *, live_files: bool = True) -> tuple[bool, str]:
    """Jupyter Book on the staged, executed sources into ``html``; warnings are errors.

    ``live_files=False``: the "Run live" panels' files (``_static/live``, :func:`live.install`) are left to
    the caller, who built them apart (:func:`bookbuild.book.build` does, beside Jupyter Book)."""
    if html.exists():
        shutil.rmtree(html)
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(stage), "--path-output", str(stage),
           "--warningiserror", "--nitpick", "--keep-going", "--all"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    log = proc.stdout + proc.stderr
    built = stage / "_build" / "html"
    if proc.returncode == 0 and built.exists():
        shutil.copytree(built, html)
        try:  # the "Run live" panels' Python in WebAssembly, verified against Pyodide's lock (live.py)
            if live_files:
                live.install(html)
        except (live.LiveBuildError, subprocess.CalledProcessError) as err:
            return False, log + f"\nthe live panels' files could not be installed: {err}"
        try:  # the live pages' Content-Security-Policy: the sha256 of each inline script (csp.py)
            csp.install(html)
        except csp.CspError as err:
            return False, log + f"\nthe live pages' Content-Security-Policy could not be completed: {err}"
        return True, log
    return False, log
